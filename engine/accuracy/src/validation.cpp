#include "stepcast/accuracy/validation.h"

#include <fmt/format.h>

#include <regex>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include "stepcast/estimate.h"

namespace stepcast::accuracy {

// ---------------------------------------------------------------------------------------------
// CSV

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string CsvTable::cell(size_t r, std::string_view name) const {
  const int c = column(name);
  if (c < 0 || r >= rows.size() || static_cast<size_t>(c) >= rows[r].size()) return {};
  return rows[r][static_cast<size_t>(c)];
}

Result<CsvTable> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  size_t line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) records.push_back(std::move(record));
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (ch == ',') {
      end_field();
    } else if (ch == '\n') {
      end_record();
      ++line;
    } else if (ch == '\r') {
      // CRLF line ends
    } else {
      field += ch;
      field_started = true;
    }
  }
  if (quoted)
    return Error{ErrorCode::parse_error, "", fmt::format("CSV: unterminated quote at line {}", line)};
  if (!field.empty() || !record.empty()) end_record();
  if (records.empty()) return Error{ErrorCode::parse_error, "", "CSV: no header row"};
  CsvTable t;
  t.header = std::move(records.front());
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size())
      return Error{ErrorCode::parse_error, "",
                   fmt::format("CSV: record {} has {} fields, the header has {}", r + 1,
                               records[r].size(), t.header.size())};
    t.rows.push_back(std::move(records[r]));
  }
  return t;
}

std::string source_of(std::string_view id) {
  const size_t dash = id.find('-');
  return std::string(dash == std::string_view::npos ? id : id.substr(0, dash));
}

bool is_megatron_source(std::string_view s) { return s == "SC21" || s == "KORTH" || s == "MCORE"; }

// ---------------------------------------------------------------------------------------------
// Row -> scenario

namespace {

bool contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

bool contains_nocase(std::string_view text, std::string_view what) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return lower(text).find(lower(what)) != std::string::npos;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// A cell that states nothing: empty, "not stated", "not in table", "n/a".
bool unstated(std::string_view cell) {
  const std::string t = trim(cell);
  return t.empty() || t.rfind("not", 0) == 0 || t.rfind("n/a", 0) == 0;
}

// The leading integer of a cell ("8192 (assumed 4h)" -> 8192, "~50257" -> 50257).
std::optional<int64_t> leading_integer(std::string_view cell) {
  std::string t = trim(cell);
  if (unstated(t)) return std::nullopt;
  size_t i = 0;
  if (i < t.size() && t[i] == '~') ++i;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(t.data() + i, t.data() + t.size(), v);
  if (ec != std::errc() || ptr == t.data() + i) return std::nullopt;
  return v;
}

std::optional<double> leading_number(std::string_view cell) {
  std::string t = trim(cell);
  if (unstated(t)) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Configuration facts per source that the CSV rows do not repeat (see tests/validation/README.md
// for the evidence behind each).
struct SourceFacts {
  bool known = false;
  bool flash_attention = true;       // fused attention available to the framework of the time
  bool overlap_p2p = true;           // pipeline send/recv overlapped (Megatron-Core, 2023 on)
  bool tp_comm_overlap = false;      // TE userbuffers, when tp > 1
  bool sequence_parallel = false;    // SP on whenever tp > 1 (Megatron-Core recipes)
  bool distributed_optimizer = false;
  int zero_stage = 0;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  bool pp_scatter_gather = false;    // 1/tp activation shards between stages (Megatron 2.x)
  bool embedding_in_split = false;   // the pipeline split counts each embedding as a layer
  std::optional<int64_t> default_micro_batch;  // when the row says "not stated"
  std::string default_recompute;               // when the row says "not stated"
  std::optional<bool> tied_embeddings;         // overrides the architecture default
};

SourceFacts facts_for(const std::string& source) {
  SourceFacts f;
  f.known = true;
  if (source == "SC21" || source == "KORTH") {
    // Megatron-LM of 2021-22: no FlashAttention (unfused softmax), blocking p2p, and the
    // scatter/gather of pipeline messages across the TP group (SC21 sec. 4.1, on by default
    // via --scatter-gather-tensors-in-pipeline in Megatron-LM 2.x).
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
  } else if (source == "MCORE") {
    // Megatron-LM README: --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap, the
    // distributed optimizer (param gather implies it); parameter counts in the table imply
    // untied input and output embeddings (e.g. 1.7B = 24 x 12 x 2048^2 + 2 x 131072 x 2048).
    f.tp_comm_overlap = true;
    f.sequence_parallel = true;
    f.distributed_optimizer = true;
    f.default_micro_batch = 1;
    f.default_recompute = "none";
    f.tied_embeddings = false;
  } else if (source == "NEMO2407" || source.rfind("MBRIDGE", 0) == 0) {
    // NeMo / Megatron-Bridge performance recipes: distributed optimizer, SP and TP comm
    // overlap with TP > 1, no activation recompute unless the table says so.
    f.tp_comm_overlap = true;
    f.sequence_parallel = true;
    f.distributed_optimizer = true;
    f.default_recompute = "none";
  } else if (source == "BLOOM" || source == "MTNLG") {
    // Megatron-DeepSpeed 2021-22: ZeRO-1, no FlashAttention, DeepSpeed's pipeline engine
    // reduces gradients after the last micro-batch and gathers parameters after the step.
    // DeepSpeed's pipeline engine partitions activations over the model-parallel group before
    // sending and gathers them after (PipelineEngine.is_pipe_partitioned).
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
    f.zero_stage = 1;
    f.overlap_grad_reduce = false;
    f.overlap_param_gather = false;
    // BLOOM: --pp-partition-method 'type:transformer|embedding' (bigscience train/tr11-176B-ml
    // README, the row's own source): the tied embeddings count as layers in the split.
    f.embedding_in_split = source == "BLOOM";
  } else if (source == "LLMFOUNDRY") {
    // Composer + PyTorch FSDP FULL_SHARD (ZeRO-3), FlashAttention (triton / flash-attn).
    f.zero_stage = 3;
  } else if (source == "DTFM") {
    // Megatron-LM baseline on V100 (2022): no FlashAttention (needs Ampere), local DDP,
    // Megatron 2.x pipeline scatter/gather.
    f.flash_attention = false;
    f.overlap_p2p = false;
    f.pp_scatter_gather = true;
    f.overlap_grad_reduce = false;
  } else {
    f.known = false;
  }
  return f;
}

struct ClusterChoice {
  Json json;
  std::string note;
};

// GPU preset id from the `gpu` column.
std::optional<std::string> gpu_preset(std::string_view gpu) {
  if (contains(gpu, "A100-SXM4-80GB")) return "a100-sxm4-80gb";
  if (contains(gpu, "A100-SXM4-40GB")) return "a100-sxm4-40gb";
  if (contains(gpu, "H100-SXM5-80GB")) return "h100-sxm5-80gb";
  if (contains(gpu, "V100") && contains(gpu, "16GB")) return "v100-sxm2-16gb";
  if (contains(gpu, "V100") && contains(gpu, "32GB")) return "v100-sxm2-32gb";
  return std::nullopt;
}

// The node's network from the `inter_node_link` column: link preset and ports per node.
// DT-FM's network-heterogeneous cases describe their clusters in prose; read the two forms it
// uses. Links are TCP Ethernet of the stated rate, scaled from the eth-10g preset (its ratio of
// achievable to line rate, its latency and half-peak fill time). Megatron places ranks in order,
// so with tp = 1 and dp = 8 the first half of the 8 pipeline stages runs on the first group.
struct HeteroNetwork {
  Json cluster;
  int64_t first_gpus_per_node = 1;
  int first_group_gpus = 0;
  std::string note;
};

Json ethernet_link(double gbps, const Catalog& catalog) {
  const LinkSpec* base = catalog.find_link("eth-10g");
  const double line = gbps / 8;  // GB/s per direction
  const double ratio = base ? base->busbw_Bps / base->bandwidth_Bps_per_dir : 0.8;
  const double fill_s = base && base->busbw_Bps > 0 ? base->half_peak_bytes / base->busbw_Bps : 0;
  return Json{{"id", fmt::format("tcp-{}g", gbps)},
              {"name", fmt::format("{} Gb/s TCP (DT-FM, tc-shaped)", gbps)},
              {"scope", "inter_node"},
              {"bandwidth_GBps_per_dir", line},
              {"busbw_GBps", line * ratio},
              {"half_peak_bytes", fill_s * line * ratio * 1e9},
              {"latency_us", base ? base->latency_s * 1e6 : 50}};
}

std::optional<HeteroNetwork> hetero_network(std::string_view text, const std::string& gpu,
                                            const Catalog& catalog) {
  auto group = [&](int64_t nodes, int64_t per_node, const Json& link) {
    return Json{{"gpu", gpu},           {"gpus_per_node", per_node}, {"nodes", nodes},
                {"intra_node_link", "nvlink2"}, {"inter_node_link", link}, {"nics_per_node", 1}};
  };
  std::smatch m;
  const std::string s(text);
  // "8x p3.8xlarge (4 V100) + 32x p3.2xlarge (1 V100); 100 Gbps intra / 10 Gbps inter-instance"
  static const std::regex instances(
      R"((\d+)x p3\.\w+ \((\d+) V100\) \+ (\d+)x p3\.\w+ \((\d+) V100\);.*?(\d+(?:\.\d+)?) Gbps inter-instance)");
  if (std::regex_search(s, m, instances)) {
    const Json link = ethernet_link(std::stod(m[5]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(std::stoll(m[1]), std::stoll(m[2]), link),
                                 group(std::stoll(m[3]), std::stoll(m[4]), link)}},
                     {"inter_group_link", link}};
    h.first_gpus_per_node = std::stoll(m[2]);
    h.first_group_gpus = static_cast<int>(std::stoll(m[1]) * std::stoll(m[2]));
    h.note = fmt::format("cluster read from '{}': two instance groups, every instance on a "
                         "{} Gb/s TCP link; pipeline stages in rank order (first half on the "
                         "first group)",
                         s, m[5].str());
    return h;
  }
  // "2 universities x 32 V100; 5 Gbps within, 1.2 Gbps between (tc-emulated)"
  static const std::regex sites(
      R"((\d+) \w+ x (\d+) V100; (\d+(?:\.\d+)?) Gbps within, (\d+(?:\.\d+)?) Gbps between)");
  if (std::regex_search(s, m, sites) && std::stoll(m[1]) == 2) {
    const Json within = ethernet_link(std::stod(m[3]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(std::stoll(m[2]), 1, within),
                                 group(std::stoll(m[2]), 1, within)}},
                     {"inter_group_link", ethernet_link(std::stod(m[4]), catalog)}};
    h.first_gpus_per_node = 1;
    h.first_group_gpus = static_cast<int>(std::stoll(m[2]));
    h.note = fmt::format("cluster read from '{}': two sites of one-GPU VMs; pipeline stages in "
                         "rank order (first half at the first site)",
                         s);
    return h;
  }
  return std::nullopt;
}

struct Network {
  std::string link;
  int nics = 0;
  std::string note;
};

std::optional<Network> network_for(std::string_view inter, const std::string& gpu, int per_node) {
  const bool unsure = contains(inter, "not stated") || contains(inter, "likely");
  const std::string note =
      unsure ? fmt::format("inter-node network '{}': 8 ports per node", trim(inter)) : "";
  if (contains(inter, "HDR")) return Network{"ib-hdr", 8, note};
  if (contains(inter, "NDR")) return Network{"ib-ndr", 8, note};
  if (contains(inter, "Omni-Path")) {
    // "Omni-Path (4 links per node)": 4 x 100 Gb/s ports.
    return Network{"omni-path", 4, ""};
  }
  if (contains(inter, "1600 Gbps per node RoCE"))
    return Network{"roce-200g", 8, "1600 Gbps per node RoCE = 8 x RoCE 200GbE ports"};
  if (contains(inter, "25 Gbps inter-instance") || contains(inter, "same as above"))
    return Network{"eth-25g", 1, "p3.16xlarge: one 25 Gbps ENA port per instance"};
  if (gpu == "h100-sxm5-80gb" && per_node == 8)
    return Network{"ib-ndr", 8,
                   fmt::format("inter-node network '{}': DGX H100 reference (8 x NDR 400G)",
                               trim(inter))};
  return std::nullopt;
}

struct Built {
  std::optional<Case> c;
  std::string skip;
};

Built skip(std::string reason) { return Built{std::nullopt, std::move(reason)}; }

Built convert_row(const CsvTable& t, size_t r, const Catalog& catalog) {
  auto cell = [&](std::string_view name) { return t.cell(r, name); };
  Case c;
  c.id = cell("id");
  c.source = source_of(c.id);
  c.citation = cell("source");
  c.locator = cell("source_locator");
  const SourceFacts facts = facts_for(c.source);

  // What the engine does not model.
  if (!trim(cell("moe_experts")).empty())
    return skip("mixture-of-experts model (the engine models dense transformers only)");
  const std::string hetero = trim(cell("heterogeneous"));
  const bool network_hetero = !hetero.empty() && hetero != "no";

  // The model.
  const auto layers = leading_integer(cell("layers"));
  const auto hidden = leading_integer(cell("hidden"));
  auto heads = leading_integer(cell("heads"));
  auto kv_heads = leading_integer(cell("kv_heads"));
  const auto ffn = leading_integer(cell("ffn_hidden"));
  const auto vocab = leading_integer(cell("vocab"));
  const auto seq = leading_integer(cell("seq_len"));
  if (!layers || !hidden || !ffn || !vocab || !seq)
    return skip("model shape incomplete (layers, hidden, ffn_hidden, vocab or seq_len not stated)");
  const std::string arch = cell("arch");
  const std::string model_name = cell("model");
  if (!heads) {
    // DT-FM's GPT-3 XL-like model: the file gives no head count. GPT-3's d_head = 128 gives
    // 16 heads for h = 2048 (GPT-3's own "24 heads" does not divide 2048, which Megatron needs).
    if (c.source == "DTFM" && *hidden == 2048) {
      heads = 16;
      c.assumptions.push_back("heads not stated: 16 (GPT-3 d_head = 128; 24 does not divide 2048)");
    } else {
      return skip("attention heads not stated");
    }
  }
  if (!kv_heads) kv_heads = heads;

  Json model = Json::object();
  model["name"] = model_name;
  model["layers"] = *layers;
  model["hidden"] = *hidden;
  model["heads"] = *heads;
  model["kv_heads"] = *kv_heads;
  model["ffn_hidden"] = *ffn;
  model["vocab"] = *vocab;
  model["seq_len"] = *seq;
  std::string ffn_type = "gelu";
  if (contains_nocase(arch, "swiglu")) ffn_type = "swiglu";
  else if (contains_nocase(arch, "squared-relu")) ffn_type = "squared_relu";
  model["ffn_type"] = ffn_type;
  const bool llama = contains_nocase(model_name, "llama");
  const bool nemotron = contains_nocase(model_name, "nemotron");
  const bool modern = llama || nemotron || contains(arch, "GQA") || contains(arch, "RoPE");
  const bool alibi = contains(arch, "ALiBi");
  model["position"] = (modern || alibi) ? "rope" : "learned";  // ALiBi has no parameters
  model["norm"] = llama ? "rmsnorm" : "layernorm";
  model["bias"] = !(modern || contains_nocase(arch, "no bias"));
  bool tied = !modern;
  if (facts.tied_embeddings) tied = *facts.tied_embeddings;
  model["tied_embeddings"] = tied;
  if (contains(cell("ffn_hidden"), "assumed"))
    c.assumptions.push_back(fmt::format("ffn_hidden {} (the row says: {})", *ffn, cell("ffn_hidden")));
  if (contains(cell("vocab"), "~"))
    c.assumptions.push_back(fmt::format("vocab {} (the row says: {})", *vocab, cell("vocab")));

  // The measured iteration time, or one derived from a measured rate.
  const auto gpus = leading_integer(cell("gpu_count"));
  if (!gpus) return skip("gpu_count not stated");
  const std::string derived = cell("derived_fields");
  auto iter = leading_number(cell("iter_time_s"));
  if (iter) {
    c.iter_time = contains(derived, "iter_time_s") ? "derived by the data file: " + derived
                                                   : "measured";
  } else if (!(c.source == "MCORE" && leading_number(cell("tflops_per_gpu")) &&
                 leading_integer(cell("tp")) && leading_integer(cell("pp")))) {
    std::string what = "no iteration time: the row reports only a rate (";
    std::string rates;
    for (const char* k : {"tflops_per_gpu", "mfu_pct", "tokens_per_s_per_gpu"})
      if (leading_number(cell(k))) rates += (rates.empty() ? "" : ", ") + std::string(k);
    what += rates.empty() ? "none" : rates;
    what += ")";
    std::string missing;
    for (const char* k : {"tp", "pp", "micro_batch", "global_batch"})
      if (!leading_integer(cell(k))) missing += (missing.empty() ? "" : ", ") + std::string(k);
    if (!missing.empty()) what += "; not stated: " + missing;
    const auto l = leading_integer(cell("layers"));
    const auto pp = leading_integer(cell("pp"));
    if (l && pp && *pp > 0 && *l % *pp != 0)
      what += fmt::format("; {} layers do not split evenly over pp={}", *l, *pp);
    if (c.source == "MEGATRON2019")
      what += "; the 2019 blog's FLOP count (recompute included or not) is not stated";
    return skip(what);
  }

  // The cluster.
  const auto gpu = gpu_preset(cell("gpu"));
  if (!gpu) return skip(fmt::format("GPU '{}' has no preset", cell("gpu")));
  std::optional<HeteroNetwork> split;
  if (network_hetero) {
    split = hetero_network(cell("inter_node_link"), *gpu, catalog);
    if (!split)
      return skip(fmt::format("heterogeneous network '{}' is not one the conversion reads",
                              trim(cell("inter_node_link"))));
    c.assumptions.push_back(split->note);
  }
  const auto per_node =
      split ? std::optional<int64_t>(split->first_gpus_per_node) : leading_integer(cell("gpus_per_node"));
  if (!per_node) return skip("gpus_per_node not stated");
  if (*gpus % *per_node != 0 && *gpus > *per_node)
    return skip(fmt::format("{} GPUs are not whole nodes of {}", *gpus, *per_node));
  const int nodes = static_cast<int>(std::max<int64_t>(1, *gpus / *per_node));
  Json cluster = Json::object();
  if (*gpus < *per_node) {
    // A part of one node (e.g. one GPU of a DGX-2H).
    return skip(fmt::format("{} GPU(s) of a {}-GPU node: partial nodes are not modelled", *gpus,
                            *per_node));
  }
  const auto net = split ? std::optional<Network>(Network{"", 1, ""})
                         : network_for(cell("inter_node_link"), *gpu, static_cast<int>(*per_node));
  if (!net) return skip(fmt::format("inter-node network '{}' has no preset", cell("inter_node_link")));
  if (!net->note.empty()) c.assumptions.push_back(net->note);
  const NodePreset* preset = nullptr;
  if (split) {
    cluster = split->cluster;
  } else
  for (const auto& n : catalog.nodes)
    if (n.gpu == *gpu && n.gpus_per_node == *per_node && n.inter_node_link == net->link &&
        n.nics_per_node == net->nics)
      preset = &n;
  if (split) {
    // the groups are set above
  } else if (preset) {
    cluster["node"] = preset->id;
    cluster["nodes"] = nodes;
  } else {
    std::string intra = "nvlink3";
    if (*gpu == "h100-sxm5-80gb") intra = "nvlink4";
    if (gpu->rfind("v100", 0) == 0) intra = "nvlink2";
    cluster["gpu"] = *gpu;
    cluster["gpus_per_node"] = *per_node;
    cluster["nodes"] = nodes;
    cluster["intra_node_link"] = intra;
    cluster["inter_node_link"] = net->link;
    cluster["nics_per_node"] = net->nics;
  }

  // The plan.
  const auto tp = leading_integer(cell("tp"));
  const auto pp = leading_integer(cell("pp"));
  if (!tp || !pp) return skip("tensor/pipeline parallel sizes not stated");
  const int64_t cp = leading_integer(cell("cp")).value_or(1);
  const auto dp_cell = leading_integer(cell("dp"));
  const int64_t dp = dp_cell.value_or(*gpus / (*tp * *pp * cp));
  if (*tp * *pp * cp * dp != *gpus)
    return skip(fmt::format("tp*pp*cp*dp = {}*{}*{}*{} != {} GPUs", *tp, *pp, cp, dp, *gpus));
  int64_t vpp = 1;
  if (auto v = leading_integer(cell("vp"))) vpp = std::max<int64_t>(1, *v);
  else if (*pp > 1 && contains(cell("vp"), "interleaved"))
    return skip("pipeline interleaving used but its degree is not stated");
  else if (*pp > 1)
    c.assumptions.push_back("vp not stated: 1 (non-interleaved 1F1B)");
  // Counting the first and last stage's embedding as one layer each splits layers + 2 evenly.
  const bool embedding_split =
      facts.embedding_in_split && vpp == 1 && *layers % *pp != 0 && (*layers + 2) % *pp == 0;
  if (*layers % (*pp * vpp) != 0 && !embedding_split)
    return skip(fmt::format("{} layers over pp*vp = {}*{}: uneven pipeline split (the recipe "
                            "balances the embedding and loss stages) is not modelled",
                            *layers, *pp, vpp));
  auto micro = leading_integer(cell("micro_batch"));
  if (!micro) {
    if (!facts.default_micro_batch) return skip("micro_batch not stated");
    micro = facts.default_micro_batch;
    c.assumptions.push_back(fmt::format("micro_batch not stated: {} (source default)", *micro));
  } else if (contains(cell("micro_batch"), "not confirmed")) {
    c.assumptions.push_back(fmt::format("micro_batch {} (not confirmed by the source)", *micro));
  }
  const auto gbs = leading_integer(cell("global_batch"));
  if (!gbs) return skip("global_batch not stated");

  // Recompute, precision and the options the source fixes.
  const std::string rc = trim(cell("recompute"));
  std::string recompute;
  if (rc.rfind("full", 0) == 0 || (c.source == "DTFM" && rc.rfind("yes", 0) == 0)) recompute = "full";
  else if (contains(rc, "selective")) recompute = "selective";
  else if (rc.rfind("none", 0) == 0) recompute = "none";
  else if (!facts.default_recompute.empty()) {
    recompute = facts.default_recompute;
    c.assumptions.push_back(
        fmt::format("recompute not stated: {} (source default)", facts.default_recompute));
  } else {
    return skip("activation recompute not stated");
  }
  if (contains(rc, "not confirmed"))
    c.assumptions.push_back(fmt::format("recompute {} (not confirmed by the source)", recompute));
  const std::string prec = cell("precision");
  std::string precision;
  if (contains_nocase(prec, "fp8")) precision = "fp8";
  else if (contains_nocase(prec, "bf16")) precision = "bf16";
  else if (contains_nocase(prec, "fp16") || contains_nocase(prec, "16-bit")) precision = "fp16";
  else if (contains_nocase(prec, "mixed")) {
    precision = "bf16";
    c.assumptions.push_back(
        fmt::format("precision '{}': bf16 (fp16 has the same peak; only gradient bytes differ)",
                    prec));
  } else {
    return skip(fmt::format("precision '{}' not recognised", prec));
  }
  if (contains(prec, "fp16/bf16 not confirmed"))
    c.assumptions.push_back("precision: bf16 (fp16/bf16 not confirmed; same peak on A100)");

  Json plan = Json::object();
  plan["tp"] = *tp;
  plan["pp"] = *pp;
  plan["dp"] = dp;
  plan["cp"] = cp;
  plan["vpp"] = vpp;
  plan["micro_batch"] = *micro;
  plan["global_batch"] = *gbs;
  plan["recompute"] = recompute;
  plan["precision"] = precision;
  const bool sp = *tp > 1 && (recompute == "selective" || facts.sequence_parallel);
  plan["sequence_parallel"] = sp;
  const std::string sharding = cell("sharding");
  int zero = facts.zero_stage;
  bool distributed_optimizer = facts.distributed_optimizer;
  if (contains(sharding, "FSDP")) {
    zero = 3;
    distributed_optimizer = false;
  }
  if (zero > 0) plan["zero_stage"] = zero;
  if (distributed_optimizer) plan["distributed_optimizer"] = true;
  plan["flash_attention"] = facts.flash_attention;
  bool overlap_grad = facts.overlap_grad_reduce;
  if (c.source == "SC21") {
    // run_table_1.sh: torch DDP (overlapped all-reduce) up to 18B, Megatron's local DDP from 39B.
    const auto params_b = leading_number(cell("params_b"));
    overlap_grad = params_b && *params_b < 39;
  }
  plan["overlap_grad_reduce"] = overlap_grad;
  plan["overlap_param_gather"] = facts.overlap_param_gather;
  plan["tp_comm_overlap"] = facts.tp_comm_overlap && *tp > 1;
  plan["overlap_p2p"] = facts.overlap_p2p;
  if (facts.pp_scatter_gather) plan["pp_scatter_gather"] = true;
  if (embedding_split) {
    const int64_t per_stage = (*layers + 2) / *pp;
    Json stages = Json::array();
    for (int64_t i = 0; i < *pp; ++i)
      stages.push_back(Json{{"layers", i == 0 || i + 1 == *pp ? per_stage - 1 : per_stage}});
    plan["stages"] = std::move(stages);
    c.assumptions.push_back(fmt::format("pipeline split counts the two embeddings as layers: "
                                        "{} + 2 over {} stages, {} transformer layers on the "
                                        "first and last, {} elsewhere",
                                        *layers, *pp, per_stage - 1, per_stage));
  }
  if (split) {  // stages in rank order: as many on the first group as its GPUs hold
    const int64_t per_stage = *tp * cp * dp;
    const int64_t first = split->first_group_gpus / per_stage;
    if (first * per_stage != split->first_group_gpus || first <= 0 || first >= *pp)
      return skip("the first group does not hold whole pipeline stages");
    Json stages = Json::array();
    for (int64_t i = 0; i < *pp; ++i)
      stages.push_back(Json{{"group", i < first ? 0 : 1}, {"layers", *layers / *pp}});
    plan["stages"] = std::move(stages);
  }
  if (!facts.known)
    c.assumptions.push_back("no source facts recorded: Megatron-Core defaults for the options");

  Json scenario = Json::object();
  scenario["name"] = c.id;
  scenario["model"] = std::move(model);
  scenario["cluster"] = std::move(cluster);
  scenario["plan"] = std::move(plan);
  auto parsed = scenario_from_json(scenario, catalog);
  if (!parsed) return skip("the engine rejects the scenario: " + parsed.error().message);

  if (!iter) {
    // Iteration time from a measured TFLOP/s per GPU (the Megatron-Core table reports true model
    // FLOPs): model FLOPs of the step with the engine's MFU formula (3 x forward, full s x s
    // attention, logits) over rate x GPUs.
    const auto tflops = leading_number(cell("tflops_per_gpu"));
    if (c.source == "MCORE" && tflops && *tflops > 0) {
      const double flops = model_flops_per_sample(parsed->model, static_cast<double>(*seq)) *
                           static_cast<double>(*gbs);
      iter = flops / (*tflops * 1e12 * static_cast<double>(*gpus));
      c.iter_time = fmt::format(
          "derived: model FLOPs per step (3 x forward incl. s x s attention and logits, as "
          "model_flops_per_sample) / ({} TFLOP/s x {} GPUs)",
          *tflops, *gpus);
    } else {
      return skip("no measured or derived iteration time");
    }
  }
  c.measured_iter_time_s = *iter;
  c.scenario = std::move(scenario);
  return Built{std::move(c), {}};
}

}  // namespace

Conversion convert_runs(const CsvTable& table, const Catalog& catalog) {
  Conversion out;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    Built b = convert_row(table, r, catalog);
    if (b.c) {
      out.cases.push_back(std::move(*b.c));
    } else {
      const std::string id = table.cell(r, "id");
      out.skipped.push_back(Skipped{id, source_of(id), b.skip});
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cases as JSON

Json to_json(const Case& c) {
  Json j = Json::object();
  j["id"] = c.id;
  j["source"] = c.source;
  j["citation"] = c.citation;
  j["locator"] = c.locator;
  j["measured_iter_time_s"] = c.measured_iter_time_s;
  j["iter_time"] = c.iter_time;
  j["assumptions"] = c.assumptions;
  j["scenario"] = c.scenario;
  return j;
}

Result<Case> case_from_json(const Json& j) {
  if (!j.is_object()) return Error{ErrorCode::type_error, "", "a case must be a JSON object"};
  auto str = [&](const char* key, std::string& into) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    into = it->get<std::string>();
    return true;
  };
  Case c;
  if (!str("id", c.id))
    return Error{ErrorCode::missing_key, "id", "a case needs a string \"id\""};
  if (!str("source", c.source)) c.source = source_of(c.id);
  str("citation", c.citation);
  str("locator", c.locator);
  str("iter_time", c.iter_time);
  auto t = j.find("measured_iter_time_s");
  if (t == j.end() || !t->is_number() || t->get<double>() <= 0)
    return Error{ErrorCode::missing_key, c.id + ".measured_iter_time_s",
                 c.id + ": measured_iter_time_s must be a positive number"};
  c.measured_iter_time_s = t->get<double>();
  auto a = j.find("assumptions");
  if (a != j.end() && a->is_array())
    for (const auto& s : *a)
      if (s.is_string()) c.assumptions.push_back(s.get<std::string>());
  auto s = j.find("scenario");
  if (s == j.end() || !s->is_object())
    return Error{ErrorCode::missing_key, c.id + ".scenario", c.id + ": scenario object missing"};
  c.scenario = *s;
  return c;
}

Result<std::vector<Case>> parse_cases_jsonl(std::string_view text) {
  std::vector<Case> cases;
  size_t start = 0, line = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    const std::string_view l = text.substr(start, end - start);
    start = end + 1;
    if (trim(l).empty()) {
      if (end == text.size()) break;
      continue;
    }
    Json j = Json::parse(l, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded())
      return Error{ErrorCode::parse_error, "", fmt::format("cases line {}: not valid JSON", line)};
    auto c = case_from_json(j);
    if (!c) return Error{c.error().code, c.error().path,
                         fmt::format("cases line {}: {}", line, c.error().message)};
    cases.push_back(std::move(c).value());
    if (end == text.size()) break;
  }
  return cases;
}

std::string to_jsonl(const std::vector<Case>& cases) {
  // Key order for people reading the file: identity, the measurement, its provenance, then the
  // scenario (name, model, cluster, plan).
  using Ordered = nlohmann::ordered_json;
  std::string out;
  for (const auto& c : cases) {
    Ordered scenario = Ordered::object();
    for (const char* k : {"name", "model", "cluster", "plan", "seq_len"})
      if (c.scenario.is_object() && c.scenario.contains(k))
        scenario[k] = Ordered::parse(c.scenario[k].dump(), nullptr, false);
    Ordered j = Ordered::object();
    j["id"] = c.id;
    j["source"] = c.source;
    j["measured_iter_time_s"] = c.measured_iter_time_s;
    j["iter_time"] = c.iter_time;
    j["citation"] = c.citation;
    j["locator"] = c.locator;
    j["assumptions"] = c.assumptions;
    j["scenario"] = std::move(scenario);
    out += j.dump() + "\n";
  }
  return out;
}

Result<std::vector<PreparedCase>> prepare(const std::vector<Case>& cases, const Catalog& catalog) {
  std::vector<PreparedCase> out;
  for (const auto& c : cases) {
    auto s = scenario_from_json(c.scenario, catalog);
    if (!s) return Error{s.error().code, c.id + ": " + s.error().path,
                         c.id + ": " + s.error().message};
    out.push_back(PreparedCase{c, std::move(s).value()});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Accuracy

Prediction predict(const PreparedCase& c, const Calibration& calibration) {
  Scenario s = c.scenario;
  s.calibration = calibration;
  const Report r = estimate(s);
  Prediction p;
  p.id = c.data.id;
  p.source = c.data.source;
  p.measured_s = c.data.measured_iter_time_s;
  p.predicted_s = r.iteration_time_s;
  p.error_pct = (p.predicted_s - p.measured_s) / p.measured_s * 100;
  if (!std::isfinite(p.error_pct)) p.error_pct = 1e9;
  return p;
}

namespace {

SourceAccuracy accumulate(const std::string& name, const std::vector<const Prediction*>& rows) {
  SourceAccuracy a;
  a.source = name;
  a.rows = static_cast<int>(rows.size());
  double sum = 0;
  for (const Prediction* p : rows) {
    sum += std::fabs(p->error_pct);
    if (a.worst_id.empty() || std::fabs(p->error_pct) > std::fabs(a.worst_pct)) {
      a.worst_pct = p->error_pct;
      a.worst_id = p->id;
    }
  }
  a.mape_pct = rows.empty() ? 0 : sum / static_cast<double>(rows.size());
  return a;
}

}  // namespace

Accuracy summarise(std::vector<Prediction> rows) {
  Accuracy acc;
  acc.rows = std::move(rows);
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Prediction*>> by_source;
  std::vector<const Prediction*> all, megatron;
  for (const auto& p : acc.rows) {
    if (!by_source.count(p.source)) order.push_back(p.source);
    by_source[p.source].push_back(&p);
    all.push_back(&p);
    if (is_megatron_source(p.source)) megatron.push_back(&p);
  }
  for (const auto& s : order) acc.sources.push_back(accumulate(s, by_source[s]));
  acc.megatron = accumulate("Megatron-LM (SC21+KORTH+MCORE)", megatron);
  acc.overall = accumulate("overall", all);
  return acc;
}

Accuracy evaluate(const std::vector<PreparedCase>& cases, const Calibration& calibration) {
  std::vector<Prediction> rows;
  rows.reserve(cases.size());
  for (const auto& c : cases) rows.push_back(predict(c, calibration));
  return summarise(std::move(rows));
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    ma += ra[i];
    mb += rb[i];
  }
  ma /= n;
  mb /= n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va <= 0 || vb <= 0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

std::vector<RankGroup> rank_correlations(const std::vector<PreparedCase>& cases,
                                         const Accuracy& accuracy) {
  std::map<std::string, const Prediction*> by_id;
  for (const auto& p : accuracy.rows) by_id[p.id] = &p;
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  auto add = [&](const std::string& name, const Prediction* p) {
    if (!groups.count(name)) order.push_back(name);
    groups[name].first.push_back(p->measured_s);
    groups[name].second.push_back(p->predicted_s);
  };
  for (const auto& c : cases) {
    auto it = by_id.find(c.data.id);
    if (it == by_id.end()) continue;
    add(c.data.source, it->second);
    add(c.data.source + " " + c.scenario.model.name, it->second);
  }
  std::vector<RankGroup> out;
  for (const auto& name : order) {
    const auto& [measured, predicted] = groups[name];
    const bool per_source = name.find(' ') == std::string::npos;
    // A source with several rows, or one model the source measures several ways.
    if (measured.size() < (per_source ? 3u : 2u)) continue;
    if (!per_source && groups[source_of(name.substr(0, name.find(' ')))].first.size() ==
                           measured.size())
      continue;  // the whole source is this one model: already reported
    if (auto rho = spearman(measured, predicted))
      out.push_back(RankGroup{name, static_cast<int>(measured.size()), *rho});
  }
  return out;
}

Json to_json(const Accuracy& a) {
  auto src = [](const SourceAccuracy& s) {
    return Json{{"source", s.source},     {"rows", s.rows},          {"mape_pct", s.mape_pct},
                {"worst_pct", s.worst_pct}, {"worst_id", s.worst_id}};
  };
  Json rows = Json::array();
  for (const auto& p : a.rows)
    rows.push_back(Json{{"id", p.id},
                        {"source", p.source},
                        {"measured_s", p.measured_s},
                        {"predicted_s", p.predicted_s},
                        {"error_pct", p.error_pct}});
  Json sources = Json::array();
  for (const auto& s : a.sources) sources.push_back(src(s));
  return Json{{"rows", rows},
              {"sources", sources},
              {"megatron", src(a.megatron)},
              {"overall", src(a.overall)}};
}

std::string to_text(const Accuracy& a) {
  std::string out = fmt::format("{:<44} {:>10} {:>10} {:>8}\n", "id", "measured s",
                                "predicted s", "error %");
  for (const auto& p : a.rows)
    out += fmt::format("{:<44} {:>10.3f} {:>10.3f} {:>+8.1f}\n", p.id, p.measured_s,
                       p.predicted_s, p.error_pct);
  out += fmt::format("\n{:<32} {:>5} {:>8} {:>9}  {}\n", "source", "rows", "MAPE %", "worst %",
                     "worst row");
  auto line = [&](const SourceAccuracy& s) {
    out += fmt::format("{:<32} {:>5} {:>8.1f} {:>+9.1f}  {}\n", s.source, s.rows, s.mape_pct,
                       s.worst_pct, s.worst_id);
  };
  for (const auto& s : a.sources) line(s);
  line(a.megatron);
  line(a.overall);
  return out;
}

}  // namespace stepcast::accuracy
