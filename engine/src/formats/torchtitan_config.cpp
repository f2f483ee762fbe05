// A torchtitan job config in and out (torchtitan_config.h). Fields and defaults: pytorch/
// torchtitan 4a950eaa, torchtitan/config/job_config.py; the models' flavors: torchtitan/models/
// */__init__.py at the same commit.
#include "stepcast/torchtitan_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

// toml++ header-only and without exceptions: the engine is exception-free (Debian's shared
// library is built with them, a different ABI).
#define TOML_HEADER_ONLY 1
#define TOML_EXCEPTIONS 0
#include <toml++/toml.h>

#include "stepcast/catalog.h"
#include "stepcast/scenario.h"

namespace stepcast {

namespace {

// torchtitan's model names and flavors that a preset holds (torchtitan/models/<name>/__init__.py:
// llama3_args, qwen3_args, deepseekv3_args, gpt_oss_args). DeepSeek "16B" and "236B" are
// DeepSeek-V2-Lite's and DeepSeek-V2's shapes (27 layers of dim 2048 with 64 experts, top 6;
// 60 layers of 5120 with 160).
struct Flavor {
  std::string_view name, flavor, preset;
};
constexpr Flavor kFlavors[] = {
    {"llama3", "8B", "llama3-8b"},
    {"llama3", "70B", "llama3-70b"},
    {"llama3", "405B", "llama3.1-405b"},
    {"qwen3", "8B", "qwen3-8b"},
    {"qwen3", "32B", "qwen3-32b"},
    {"qwen3", "30B-A3B", "qwen3-30b-a3b"},
    {"qwen3", "235B-A22B", "qwen3-235b-a22b"},
    {"deepseek_v3", "16B", "deepseek-v2-lite"},
    {"deepseek_v3", "236B", "deepseek-v2"},
    {"deepseek_v3", "671B", "deepseek-v3"},
    {"gpt_oss", "20b", "gpt-oss-20b"},
    {"gpt_oss", "120b", "gpt-oss-120b"},
};

// torchtitan's pipeline schedules (torch.distributed.pipelining's names, looked up without
// case) that the engine runs: single-stage 1F1B, the looped Interleaved1F1B (Megatron's
// interleaved order), ZBVZeroBubble and DualPipeV on the V; the others are errors that say the
// engine does not run them (not 1F1B instead).
struct ScheduleName {
  std::string_view torchtitan;
  std::string_view schedule;  // plan.schedule, or "" where the engine has none
  bool looped;
};
constexpr ScheduleName kSchedules[] = {
    {"1F1B", "1f1b", false},           {"GPipe", "", false},
    {"Interleaved1F1B", "interleaved", true}, {"LoopedBFS", "", true},
    {"InterleavedZeroBubble", "", true},      {"ZBVZeroBubble", "zbv", true},
    {"DualPipeV", "dualpipev", true},
};

bool same_nocase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Reads the table's keys, remembering which it read: the rest are listed as ignored.
class Reader {
 public:
  explicit Reader(const toml::table& root) : root_(root) {}

  template <class T>
  std::optional<T> get(std::string_view section, std::string_view key) {
    read_.push_back(fmt::format("{}.{}", section, key));
    const toml::node* n = root_[section][key].node();
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<T>()) return v;
    if constexpr (std::is_same_v<T, double>)
      if (auto i = n->value_exact<int64_t>()) return static_cast<double>(*i);
    if (!error_)
      error_ = Error{ErrorCode::type_error, fmt::format("{}.{}", section, key),
                     fmt::format("{}.{} = {} must be {}", section, key, text_of(*n),
                                 std::is_same_v<T, std::string> ? "a string"
                                 : std::is_same_v<T, bool>      ? "true or false"
                                                                : "a number")};
    return std::nullopt;
  }

  // Every key of the file the import did not read, as "section.key = value".
  std::vector<std::string> unread() const {
    std::vector<std::string> out;
    for (const auto& [section, node] : root_) {
      const toml::table* t = node.as_table();
      if (!t) {
        out.push_back(fmt::format("{} = {}", section.str(), text_of(node)));
        continue;
      }
      for (const auto& [key, value] : *t) {
        const std::string name = fmt::format("{}.{}", section.str(), key.str());
        if (std::find(read_.begin(), read_.end(), name) == read_.end())
          out.push_back(fmt::format("{} = {}", name, text_of(value)));
      }
    }
    return out;
  }

  void mark_read(std::string_view section, std::string_view key) {
    read_.push_back(fmt::format("{}.{}", section, key));
  }

  const std::optional<Error>& error() const { return error_; }

 private:
  static std::string text_of(const toml::node& n) {
    if (auto s = n.value_exact<std::string>()) return fmt::format("\"{}\"", printable(*s, 60));
    if (auto i = n.value_exact<int64_t>()) return fmt::format("{}", *i);
    if (auto d = n.value_exact<double>()) return fmt::format("{}", *d);
    if (auto b = n.value_exact<bool>()) return *b ? "true" : "false";
    return n.is_array() ? "[...]" : "{...}";
  }
  const toml::table& root_;
  std::vector<std::string> read_;
  std::optional<Error> error_;
};

// Debian's toml++ 3.3.0 reaches __builtin_unreachable (undefined behaviour, found by
// tests/fuzz/fuzz_import.cpp) when its whitespace test, is_non_ascii_horizontal_whitespace()
// in toml++/impl/unicode_autogenerated.h, meets a code point its lookup table's bitmask lets
// through but its switch has no case for: U+00A1..U+0499, U+2C5E..U+2FFF, U+3001..U+3057 and
// U+FB26..U+FEFE (the mask 0x7FFFFFFFFFFFF75E leaves chunks 0, 11 and 63 of 0x3FA code points
// unhandled). The test runs where whitespace may stand: after a value, after a multi-line
// string's line-ending backslash, while it records a value's text (marzer/tomlplusplus issues
// 190 and 295, fixed upstream by pull request 305, after 3.3.0).
constexpr std::pair<char32_t, char32_t> kTomlParserTraps[] = {
    {0x00A1, 0x0499}, {0x2C5E, 0x2FFF}, {0x3001, 0x3057}, {0xFB26, 0xFEFE}};

// Those code points become U+FFFD (the replacement character, outside the table) before the
// parse: legal TOML wherever the original was (strings and comments) and an error wherever it
// was not. Only string values change, and the import matches ASCII names and flavors only; an
// unknown flavor is echoed with U+FFFD in its place. Malformed UTF-8 is left for toml++ to refuse.
std::string without_toml_parser_traps(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0u) == 0x80u; };
  for (size_t i = 0; i < text.size();) {
    // Two- and three-byte sequences hold every trap (all below U+10000).
    char32_t code_point = 0;
    size_t length = 1;
    if (byte(i) >= 0xC2 && byte(i) <= 0xDF && continuation(i + 1)) {
      code_point = ((byte(i) & 0x1Fu) << 6) | (byte(i + 1) & 0x3Fu);
      length = 2;
    } else if ((byte(i) & 0xF0u) == 0xE0u && continuation(i + 1) && continuation(i + 2)) {
      code_point = ((byte(i) & 0x0Fu) << 12) | ((byte(i + 1) & 0x3Fu) << 6) | (byte(i + 2) & 0x3Fu);
      length = code_point >= 0x800 ? 3 : 1;  // an overlong form stays malformed
    }
    const bool trap = length > 1 && std::any_of(std::begin(kTomlParserTraps),
                                                std::end(kTomlParserTraps), [&](const auto& r) {
                                                  return r.first <= code_point && code_point <= r.second;
                                                });
    out += trap ? std::string_view("\xEF\xBF\xBD") : text.substr(i, length);
    i += length;
  }
  return out;
}

Error out_of_range(std::string path, std::string message) {
  return Error{ErrorCode::out_of_range, std::move(path), std::move(message)};
}

}  // namespace

Result<TorchtitanImport> scenario_from_torchtitan_toml(std::string_view toml_text,
                                                       const Catalog& catalog,
                                                       const TorchtitanImportOptions& options) {
  const std::string safe_text = without_toml_parser_traps(toml_text);
  toml::parse_result parsed = toml::parse(safe_text);
  if (!parsed) {
    const auto& e = parsed.error();
    return Error{ErrorCode::parse_error, "",
                 fmt::format("not a TOML job config: line {}: {}", e.source().begin.line,
                             printable(std::string(e.description()), 200))};
  }
  Reader r(parsed.table());
  TorchtitanImport out;

  // The model: a preset by torchtitan's name and flavor (job_config.py Model: "llama3",
  // "debugmodel" by default: a test model no preset holds).
  const std::string name = r.get<std::string>("model", "name").value_or("llama3");
  const std::optional<std::string> flavor = r.get<std::string>("model", "flavor");
  if (r.error()) return *r.error();
  if (!flavor)
    return Error{ErrorCode::missing_key, "model.flavor",
                 "model.flavor is required (torchtitan's default is its debug model)"};
  const Flavor* model = nullptr;
  std::string known;
  for (const Flavor& f : kFlavors) {
    if (f.name == name && f.flavor == *flavor) model = &f;
    known += fmt::format("{}{} {}", known.empty() ? "" : ", ", f.name, f.flavor);
  }
  if (!model)
    return out_of_range("model.flavor",
                        fmt::format("model {} flavor {} has no preset (the flavors with one: {})",
                                    printable(name, 40), printable(*flavor, 40), known));

  // The degrees (Parallelism): each 1 when absent; data_parallel_shard_degree -1 takes the ranks
  // the others leave.
  const auto degree = [&](std::string_view key, int64_t fallback) {
    return r.get<int64_t>("parallelism", key).value_or(fallback);
  };
  const int64_t tp = degree("tensor_parallel_degree", 1), pp = degree("pipeline_parallel_degree", 1);
  const int64_t cp = degree("context_parallel_degree", 1), ep = degree("expert_parallel_degree", 1);
  const int64_t etp = degree("expert_tensor_parallel_degree", 1);
  const int64_t replicate = degree("data_parallel_replicate_degree", 1);
  int64_t shard = degree("data_parallel_shard_degree", -1);
  if (r.error()) return *r.error();
  for (const auto& [key, v] : {std::pair{"tensor_parallel_degree", tp},
                               std::pair{"pipeline_parallel_degree", pp},
                               std::pair{"context_parallel_degree", cp},
                               std::pair{"expert_parallel_degree", ep},
                               std::pair{"expert_tensor_parallel_degree", etp},
                               std::pair{"data_parallel_replicate_degree", replicate}})
    if (v < 1 || v > (int64_t{1} << 20))
      return out_of_range(fmt::format("parallelism.{}", key),
                          fmt::format("parallelism.{} = {} must be at least 1", key, v));
  if (shard == 0 || shard < -1 || shard > (int64_t{1} << 20))
    return out_of_range("parallelism.data_parallel_shard_degree",
                        fmt::format("parallelism.data_parallel_shard_degree = {} must be -1 (the "
                                    "ranks left) or at least 1",
                                    shard));

  // The cluster: the node preset, and its count given or implied by the degrees.
  const NodePreset* node = catalog.find_node(options.node);
  if (!node)
    return out_of_range("cluster.node", fmt::format("node {} is not a node preset",
                                                    printable(options.node, 40)));
  const int64_t others = tp * pp * cp * replicate;
  int64_t nodes = options.nodes;
  if (nodes == 0) {
    if (shard < 0)
      return out_of_range("parallelism.data_parallel_shard_degree",
                          "parallelism.data_parallel_shard_degree = -1 takes the ranks the other "
                          "degrees leave: give the node count (--nodes)");
    const int64_t world = others * shard;
    if (world % node->gpus_per_node != 0)
      return out_of_range("parallelism",
                          fmt::format("the degrees make {} ranks, not whole {} nodes of {} GPUs",
                                      world, node->id, node->gpus_per_node));
    nodes = world / node->gpus_per_node;
  }
  const int64_t world = nodes * node->gpus_per_node;
  if (shard < 0) shard = world / others;
  if (others * shard != world)
    return out_of_range("parallelism",
                        fmt::format("the degrees (tp {} x pp {} x cp {} x replicate {} x shard {}) "
                                    "make {} ranks where {} nodes hold {} GPUs",
                                    tp, pp, cp, replicate, shard, others * shard, nodes, world));
  const int64_t dp = replicate * shard;

  Json plan = {{"framework", "torchtitan"}, {"tp", tp}, {"pp", pp}, {"cp", cp}, {"dp", dp}};
  if (ep > 1) plan["ep"] = ep;
  if (ep > 1 || etp > 1) plan["etp"] = etp;
  // FSDP2 shards over data_parallel_shard_degree; with shard 1 the replicas run DDP. HSDP (both
  // above 1) shards within each group of `shard` ranks: the engine shards over all of DP.
  if (shard == 1) {
    plan["zero_stage"] = 0;
    out.notes.push_back("data_parallel_shard_degree = 1: DDP over the replicas (zero_stage 0)");
  } else if (replicate > 1) {
    out.notes.push_back(fmt::format(
        "HSDP (replicate {} x shard {}): the engine shards parameters, gradients and optimizer "
        "state over all {} data-parallel ranks, not within groups of {} (memory per GPU is "
        "lower than torchtitan's)",
        replicate, shard, dp, shard));
  }
  if (r.get<bool>("parallelism", "enable_async_tensor_parallel").value_or(false))
    plan["tp_comm_overlap"] = true;
  if (r.get<std::string>("parallelism", "expert_parallel_comm_backend").value_or("standard") ==
      "deepep")
    plan["moe_dispatcher"] = "flex";

  // The batch (Training): local_batch_size per data-parallel rank, split into pipeline
  // micro-batches of pipeline_parallel_microbatch_size; global_batch_size -1 is one local batch
  // per rank (no gradient accumulation).
  const int64_t local = r.get<int64_t>("training", "local_batch_size").value_or(8);
  const int64_t global = r.get<int64_t>("training", "global_batch_size").value_or(-1);
  const int64_t seq = r.get<int64_t>("training", "seq_len").value_or(2048);
  const int64_t pp_micro = r.get<int64_t>("parallelism", "pipeline_parallel_microbatch_size").value_or(1);
  if (r.error()) return *r.error();
  if (local < 1 || pp_micro < 1 || seq < 1)
    return out_of_range("training", "training.local_batch_size, training.seq_len and "
                                    "parallelism.pipeline_parallel_microbatch_size must be at "
                                    "least 1");
  plan["global_batch"] = global > 0 ? global : local * dp;
  plan["micro_batch"] = pp > 1 ? pp_micro : local;

  // The pipeline: its schedule and virtual stages (pipeline_parallel.py: layers_per_stage, else
  // 2 stages a rank for a looped schedule), the embedding and the output counted as layers
  // (first/last_stage_less_layers, default 1 each: Megatron's account-for-embedding/loss).
  const std::string schedule =
      r.get<std::string>("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  const auto layers_per_stage = r.get<int64_t>("parallelism", "pipeline_parallel_layers_per_stage");
  const int64_t first_less = r.get<int64_t>("parallelism", "pipeline_parallel_first_stage_less_layers").value_or(1);
  const int64_t last_less = r.get<int64_t>("parallelism", "pipeline_parallel_last_stage_less_layers").value_or(1);
  if (r.error()) return *r.error();
  if (pp > 1) {
    const ScheduleName* s = nullptr;
    for (const auto& k : kSchedules)
      if (same_nocase(k.torchtitan, schedule)) s = &k;
    if (!s)
      return out_of_range("parallelism.pipeline_parallel_schedule",
                          fmt::format("parallelism.pipeline_parallel_schedule = \"{}\" is not a "
                                      "torchtitan schedule",
                                      printable(schedule, 40)));
    if (s->schedule.empty())
      return Error{ErrorCode::unsupported, "parallelism.pipeline_parallel_schedule",
                   fmt::format("parallelism.pipeline_parallel_schedule = \"{}\": the engine "
                               "runs 1F1B, Interleaved1F1B, ZBVZeroBubble and DualPipeV, not "
                               "this schedule yet",
                               s->torchtitan)};
    plan["schedule"] = s->schedule;
    const ModelSpec* spec = catalog.find_model(model->preset);
    const int64_t layers = spec ? spec->layers : 0;
    int64_t vpp = s->looped ? 2 : 1;
    if (layers_per_stage && *layers_per_stage > 0 && layers > 0) {
      // As torchtitan checks them (pipeline_parallel.py): whole stages per rank, one for a
      // single-stage schedule, two or more for a looped one.
      const int64_t stages =
          (layers + first_less + last_less + *layers_per_stage - 1) / *layers_per_stage;
      vpp = stages / pp;
      if (stages % pp != 0 || (s->looped ? vpp < 2 : vpp != 1))
        return out_of_range(
            "parallelism.pipeline_parallel_layers_per_stage",
            fmt::format("parallelism.pipeline_parallel_layers_per_stage = {} makes {} stages of "
                        "{} layers (and the embedding and output) over {} ranks: {} needs {}",
                        *layers_per_stage, stages, layers, pp, s->torchtitan,
                        s->looped ? "a whole number of 2 or more a rank" : "one a rank"));
    }
    if (vpp > 1) plan["vpp"] = vpp;
    if (first_less == 1 && last_less == 1) {
      plan["embedding_in_split"] = true;
      plan["loss_in_split"] = true;
    } else if (first_less != 0 || last_less != 0) {
      out.notes.push_back(fmt::format(
          "first/last stage {} and {} layers lighter: the engine counts the embedding and the "
          "output as one layer each or none; the layers split evenly",
          first_less, last_less));
    }
  }

  // Activation checkpointing: "full" every layer; "selective" with an integer n checkpoints every
  // n-th layer whole (of each stage's layers, the engine's `block` method over a chunk's share);
  // "op" saves the matmuls' outputs and recomputes the rest: Megatron's selective recompute of
  // the attention core is the nearest the engine has.
  const std::string ac = r.get<std::string>("activation_checkpoint", "mode").value_or("selective");
  const std::string option =
      r.get<std::string>("activation_checkpoint", "selective_ac_option").value_or("2");
  if (r.error()) return *r.error();
  if (ac == "none") {
    plan["recompute"] = "none";
  } else if (ac == "full") {
    plan["recompute"] = "full";
  } else if (ac == "selective" && option == "op") {
    plan["recompute"] = "selective";
    out.notes.push_back("activation_checkpoint selective_ac_option = \"op\": per-op selective "
                        "checkpointing priced as recomputing the attention core");
  } else if (ac == "selective") {
    char* end = nullptr;
    const long every = std::strtol(option.c_str(), &end, 10);
    if (option.empty() || *end != '\0' || every < 1)
      return out_of_range("activation_checkpoint.selective_ac_option",
                          fmt::format("activation_checkpoint.selective_ac_option = \"{}\" must be "
                                      "\"op\" or a whole number (every n-th layer)",
                                      printable(option, 40)));
    const ModelSpec* spec = catalog.find_model(model->preset);
    const int64_t per_rank = spec ? spec->layers / (pp * plan.value("vpp", int64_t{1})) : 0;
    plan["recompute"] = "full";
    plan["recompute_method"] = "block";
    plan["recompute_num_layers"] = std::max<int64_t>(1, per_rank / every);
    out.notes.push_back(fmt::format(
        "activation_checkpoint selective every {} layers: full recompute of {} of each model "
        "chunk's {} layers (recompute_method block)",
        every, plan["recompute_num_layers"].get<int64_t>(), per_rank));
  } else {
    return Error{ErrorCode::unsupported, "activation_checkpoint.mode",
                 fmt::format("activation_checkpoint.mode = \"{}\": the engine models none, full "
                             "and selective",
                             printable(ac, 40))};
  }

  // Precision: bf16 mixed precision, float8 or MX linears by converter (Model.converters).
  plan["precision"] = "bf16";
  if (const toml::array* conv = parsed.table()["model"]["converters"].as_array()) {
    for (const auto& c : *conv) {
      const std::string s = c.value_or(std::string());
      if (s == "float8" || s == "quantize.linear.float8") plan["precision"] = "fp8";
      else if (s == "mx" || s == "quantize.linear.mx") plan["precision"] = "mxfp8";
      else out.notes.push_back(fmt::format("model converter \"{}\" not modelled", printable(s, 40)));
    }
  }
  r.mark_read("model", "converters");
  if (r.get<bool>("compile", "enable").value_or(false))
    out.notes.push_back("compile.enable = true: the torchtitan profile prices eager kernels "
                        "(torch.compile's fusion is not modelled)");
  // The optimizer (job_config.py Optimizer: name "AdamW" by default): torchtitan builds Adam and
  // AdamW only (torchtitan/components/optimizer/optimizer.py _resolve_optimizer_factory, "Optimizer
  // {name} not added", at pytorch/torchtitan b5bcd76c), both the engine's adam.
  const std::string optimizer = r.get<std::string>("optimizer", "name").value_or("AdamW");
  if (r.error()) return *r.error();
  if (optimizer != "AdamW" && optimizer != "Adam")
    return out_of_range("optimizer.name",
                        fmt::format("optimizer.name = \"{}\": torchtitan builds Adam and AdamW "
                                    "only",
                                    printable(optimizer, 40)));
  if (r.get<bool>("training", "enable_cpu_offload").value_or(false))
    out.notes.push_back("training.enable_cpu_offload = true: FSDP2's parameter, gradient and "
                        "optimizer offload is not modelled (memory and time as if on the GPU)");
  if (r.error()) return *r.error();

  out.scenario = {{"model", std::string(model->preset)},
                  {"cluster", {{"node", node->id}, {"nodes", nodes}}},
                  {"plan", std::move(plan)},
                  {"seq_len", seq}};
  for (auto& line : r.unread()) out.ignored.push_back(std::move(line));
  return out;
}

Json to_json(const TorchtitanImport& imported) {
  return Json{{"scenario", imported.scenario},
              {"ignored", imported.ignored},
              {"notes", imported.notes}};
}

std::string export_torchtitan_toml(const Scenario& sc) {
  const Plan p = sc.plan.effective();
  std::string out = "# torchtitan job config (pytorch/torchtitan 4a950eaa, "
                    "torchtitan/config/job_config.py), written by stepcast\n";
  const Flavor* flavor = nullptr;
  for (const Flavor& f : kFlavors)
    if (f.preset == sc.model.id) flavor = &f;
  out += "\n[model]\n";
  if (flavor)
    out += fmt::format("name = \"{}\"\nflavor = \"{}\"\n", flavor->name, flavor->flavor);
  else
    out += fmt::format("# {}: no torchtitan flavor has this model's shape; add one to "
                       "torchtitan/models/<name>/__init__.py\n",
                       printable(sc.model.name, 80));
  if (p.precision == Precision::fp8) out += "converters = [\"quantize.linear.float8\"]\n";
  if (p.precision == Precision::mxfp8) out += "converters = [\"quantize.linear.mx\"]\n";
  if (p.precision != Precision::bf16 && p.precision != Precision::fp8 &&
      p.precision != Precision::mxfp8)
    out += fmt::format("# precision {}: torchtitan trains bf16, float8 or MX linears\n",
                       to_string(p.precision));

  out += fmt::format("# run on {} GPUs: torchrun --nnodes {} --nproc-per-node {}\n",
                     sc.cluster.gpus(), sc.cluster.groups.front().nodes,
                     sc.cluster.gpus() / std::max(1, sc.cluster.groups.front().nodes));
  const int64_t per_replica = p.global_batch / p.dp;
  out += fmt::format("\n[training]\nlocal_batch_size = {}\nglobal_batch_size = {}\nseq_len = {}\n",
                     p.pp > 1 ? per_replica : p.micro_batch, p.global_batch, sc.model.seq_len);

  const bool sharded = p.effective_zero_stage() >= 3;
  out += fmt::format(
      "\n[parallelism]\ndata_parallel_replicate_degree = {}\ndata_parallel_shard_degree = {}\n"
      "tensor_parallel_degree = {}\npipeline_parallel_degree = {}\ncontext_parallel_degree = {}\n",
      sharded ? 1 : p.dp, sharded ? p.dp : 1, p.tp, p.pp, p.cp);
  if (!sharded && p.effective_zero_stage() > 0)
    out += fmt::format("# zero_stage {}: torchtitan has DDP (shard 1) or FSDP2 (ZeRO-3)\n",
                       p.effective_zero_stage());
  if (sc.model.moe.enabled())
    out += fmt::format("expert_parallel_degree = {}\nexpert_tensor_parallel_degree = {}\n", p.ep,
                       p.etp);
  if (p.moe_dispatcher == MoeDispatcher::flex) out += "expert_parallel_comm_backend = \"deepep\"\n";
  if (p.tp_comm_overlap && p.tp > 1)
    out += "enable_async_tensor_parallel = true  # needs [compile] enable = true\n";
  if (p.pp > 1) {
    // The table's torchtitan name for the plan's schedule (ZB-H1 has none: 1F1B and a note).
    std::string_view schedule = p.vpp > 1 ? "Interleaved1F1B" : "1F1B";
    for (const ScheduleName& k : kSchedules)
      if (k.schedule == name_of(p.effective_schedule())) schedule = k.torchtitan;
    out += fmt::format("pipeline_parallel_schedule = \"{}\"\npipeline_parallel_microbatch_size = {}\n",
                       schedule, p.micro_batch);
    if (p.vpp > 1)
      out += fmt::format("pipeline_parallel_layers_per_stage = {}\n",
                         std::max<int64_t>(1, (sc.model.layers + 2) / (int64_t{p.pp} * p.vpp)));
    if (p.effective_schedule() == PipelineSchedule::zero_bubble)
      out += "# schedule zero_bubble (ZB-H1): torchtitan's nearest is InterleavedZeroBubble\n";
    if (p.effective_schedule() == PipelineSchedule::dualpipe)
      out += "# schedule dualpipe (bidirectional DualPipe): torchtitan runs DualPipeV, the same "
             "order on half the ranks with two stages each\n";
  }

  // plan.optimizer is adam here: the profile refuses the others (presets/frameworks/torchtitan.json).
  out += "\n[optimizer]\nname = \"AdamW\"\n";

  out += "\n[activation_checkpoint]\n";
  switch (p.recompute) {
    case Recompute::none: out += "mode = \"none\"\n"; break;
    case Recompute::selective: out += "mode = \"selective\"\nselective_ac_option = \"op\"\n"; break;
    case Recompute::full: out += "mode = \"full\"\n"; break;
  }
  return out;
}

}  // namespace stepcast
