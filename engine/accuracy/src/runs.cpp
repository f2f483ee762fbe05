#include "stepcast/accuracy/runs.h"

#include <fmt/format.h>

#include <algorithm>

#include "cell_text.h"
#include "conversion.h"
#include "stepcast/accuracy/hardware_map.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/model.h"
#include "stepcast/scenario.h"

namespace stepcast::accuracy {

namespace {

using detail::contains;
using detail::contains_nocase;
using detail::leading_integer;
using detail::leading_number;
using detail::trim;

// The cells of one row of the table, by column name: cell("layers").
struct Row {
  const CsvTable& table;
  size_t index;
  std::string operator()(std::string_view column) const { return table.cell(index, column); }
};

using detail::Skip;
using detail::Step;

// A MoE row's cells under modern-runs.csv's column names: experts and top-k from moe_experts and
// moe_topk, the expert FFN width from ffn_hidden ("2880 (expert)"), Megatron FSDP from the
// sharding column; etp, dispatcher and moe_layer_freq are not columns here and read empty.
struct MoeCells : detail::CellReader {
  explicit MoeCells(const Row& r) : row(r) {}
  const Row& row;
  std::string operator()(std::string_view column) const override {
    if (column == "experts") return row("moe_experts");
    if (column == "topk") return row("moe_topk");
    if (column == "moe_ffn_hidden") return row("ffn_hidden");
    if (column == "dp" && contains(row("sharding"), "FSDP")) return "FSDP=" + row("dp");
    return row(column);
  }
};

// ---------------------------------------------------------------------------------------------
// The model: its shape from the cells, its architecture from the `arch` and `model` prose.

struct ModelPart {
  Json json;
  int64_t layers = 0;
  int64_t seq_len = 0;
};

Step<ModelPart> model_of(const Row& cell, const SourceFacts& facts, Case& c) {
  const auto layers = leading_integer(cell("layers"));
  const auto hidden = leading_integer(cell("hidden"));
  auto heads = leading_integer(cell("heads"));
  auto kv_heads = leading_integer(cell("kv_heads"));
  const auto ffn = leading_integer(cell("ffn_hidden"));
  const auto vocab = leading_integer(cell("vocab"));
  const auto seq = leading_integer(cell("seq_len"));
  if (!layers || !hidden || !ffn || !vocab || !seq)
    return Skip{"model shape incomplete (layers, hidden, ffn_hidden, vocab or seq_len not stated)"};
  const std::string arch = cell("arch");
  const std::string model_name = cell("model");
  if (!heads) {
    // The head count the source's model implies (DT-FM's GPT-3 XL-like model: sources.json).
    const auto& implied = facts.heads_when_unstated;
    if (implied && *hidden == implied->hidden) {
      heads = implied->heads;
      c.assumptions.push_back(fmt::format("heads not stated: {} ({})", *heads, implied->because));
    } else {
      return Skip{"attention heads not stated"};
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
  return ModelPart{std::move(model), *layers, *seq};
}

// ---------------------------------------------------------------------------------------------
// The measured iteration time

// Why a row with no iteration time has none: the rates it reports instead and what else it
// leaves unstated.
std::string rate_only_reason(const Row& cell, const std::string& source) {
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
  if (source == "MEGATRON2019")
    what += "; the 2019 blog's FLOP count (recompute included or not) is not stated";
  return what;
}

// ---------------------------------------------------------------------------------------------
// The cluster: a node preset where one matches, else the node spelled out; DT-FM's
// network-heterogeneous rows as two groups.

struct ClusterPart {
  Json json;
  std::optional<HeteroNetwork> split;  // the two groups of a network-heterogeneous row
};

Step<ClusterPart> cluster_of(const Row& cell, int64_t gpus, const HardwareMap& hardware,
                             const Catalog& catalog, Case& c) {
  const std::string hetero = trim(cell("heterogeneous"));
  const bool network_hetero = !hetero.empty() && hetero != "no";
  const GpuRule* gpu_rule = hardware.gpu_for(cell("gpu"));
  if (!gpu_rule) return Skip{fmt::format("GPU '{}' has no preset", cell("gpu"))};
  const std::string& gpu = gpu_rule->preset;
  std::optional<HeteroNetwork> split;
  if (network_hetero) {
    split = hetero_network(cell("inter_node_link"), gpu, catalog);
    if (!split)
      return Skip{fmt::format("heterogeneous network '{}' is not one the conversion reads",
                              trim(cell("inter_node_link")))};
    c.assumptions.push_back(split->note);
  }
  const auto per_node =
      split ? std::optional<int64_t>(split->first_gpus_per_node) : leading_integer(cell("gpus_per_node"));
  if (!per_node) return Skip{"gpus_per_node not stated"};
  if (gpus % *per_node != 0 && gpus > *per_node)
    return Skip{fmt::format("{} GPUs are not whole nodes of {}", gpus, *per_node)};
  const int nodes = static_cast<int>(std::max<int64_t>(1, gpus / *per_node));
  if (gpus < *per_node) {
    // A part of one node (e.g. one GPU of a DGX-2H).
    return Skip{fmt::format("{} GPU(s) of a {}-GPU node: partial nodes are not modelled", gpus,
                            *per_node)};
  }
  const auto net = split ? std::optional<Network>(Network{"", 1, ""})
                         : hardware.network_for(cell("inter_node_link"), gpu,
                                                static_cast<int>(*per_node));
  if (!net) return Skip{fmt::format("inter-node network '{}' has no preset", cell("inter_node_link"))};
  if (!net->note.empty()) c.assumptions.push_back(net->note);
  if (split) return ClusterPart{split->cluster, split};

  Json cluster = Json::object();
  const NodePreset* preset = nullptr;
  for (const auto& n : catalog.nodes)
    if (n.gpu == gpu && n.gpus_per_node == *per_node && n.inter_node_link == net->link &&
        n.nics_per_node == net->nics)
      preset = &n;
  if (preset) {
    cluster["node"] = preset->id;
    cluster["nodes"] = nodes;
  } else {
    cluster["gpu"] = gpu;
    cluster["gpus_per_node"] = *per_node;
    cluster["nodes"] = nodes;
    cluster["intra_node_link"] = gpu_rule->intra_node_link;
    cluster["inter_node_link"] = net->link;
    cluster["nics_per_node"] = net->nics;
  }
  return ClusterPart{std::move(cluster), std::nullopt};
}

// ---------------------------------------------------------------------------------------------
// The plan: parallel sizes and batch from the cells, recompute and precision from their prose,
// the options from the source's facts.

Step<std::string> recompute_of(const Row& cell, const SourceFacts& facts, Case& c) {
  const std::string rc = trim(cell("recompute"));
  std::string recompute;
  if (rc.rfind("full", 0) == 0) recompute = "full";
  else if (!facts.recompute_yes_means.empty() && rc.rfind("yes", 0) == 0)
    recompute = facts.recompute_yes_means;
  else if (contains(rc, "selective")) recompute = "selective";
  else if (rc.rfind("none", 0) == 0) recompute = "none";
  else if (!facts.default_recompute.empty()) {
    recompute = facts.default_recompute;
    c.assumptions.push_back(
        fmt::format("recompute not stated: {} (source default)", facts.default_recompute));
  } else {
    return Skip{"activation recompute not stated"};
  }
  if (contains(rc, "not confirmed"))
    c.assumptions.push_back(fmt::format("recompute {} (not confirmed by the source)", recompute));
  return recompute;
}

Step<std::string> precision_of(const Row& cell, Case& c) {
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
    return Skip{fmt::format("precision '{}' not recognised", prec)};
  }
  if (contains(prec, "fp16/bf16 not confirmed"))
    c.assumptions.push_back("precision: bf16 (fp16/bf16 not confirmed; same peak on A100)");
  return precision;
}

struct PlanPart {
  Json json;
  int64_t global_batch = 0;
};

}  // namespace

Json layout_flags(const SourceFacts& facts, std::string_view model) {
  Json flags = Json::object();
  for (const auto& l : facts.layout)
    if (detail::contains(model, l.model_contains)) {
      if (l.embedding_in_split) flags["embedding_in_split"] = true;
      if (l.loss_in_split) flags["loss_in_split"] = true;
    }
  return flags;
}

Json source_plan(const SourceFacts& facts, int64_t tp, int64_t pp, int64_t dp, int64_t cp,
                 int64_t vpp, int64_t micro_batch, int64_t global_batch,
                 const std::string& recompute, const std::string& precision) {
  Json plan = Json::object();
  plan["framework"] = facts.framework;
  plan["tp"] = tp;
  plan["pp"] = pp;
  plan["dp"] = dp;
  plan["cp"] = cp;
  plan["vpp"] = vpp;
  plan["micro_batch"] = micro_batch;
  plan["global_batch"] = global_batch;
  plan["recompute"] = recompute;
  plan["precision"] = precision;
  for (auto it = facts.plan.begin(); it != facts.plan.end(); ++it) plan[it.key()] = *it;
  if (facts.sequence_parallel_with_selective)
    plan["sequence_parallel"] = tp > 1 && recompute == "selective";
  return plan;
}

namespace {

Step<PlanPart> plan_of(const Row& cell, const SourceFacts& facts, int64_t layers, int64_t gpus,
                       const std::optional<HeteroNetwork>& split, Case& c) {
  const auto tp = leading_integer(cell("tp"));
  const auto pp = leading_integer(cell("pp"));
  if (!tp || !pp) return Skip{"tensor/pipeline parallel sizes not stated"};
  const int64_t cp = leading_integer(cell("cp")).value_or(1);
  const auto dp_cell = leading_integer(cell("dp"));
  const int64_t dp = dp_cell.value_or(gpus / (*tp * *pp * cp));
  if (*tp * *pp * cp * dp != gpus)
    return Skip{fmt::format("tp*pp*cp*dp = {}*{}*{}*{} != {} GPUs", *tp, *pp, cp, dp, gpus)};
  int64_t vpp = 1;
  if (auto v = leading_integer(cell("vp"))) vpp = std::max<int64_t>(1, *v);
  else if (*pp > 1 && contains(cell("vp"), "interleaved"))
    return Skip{"pipeline interleaving used but its degree is not stated"};
  else if (*pp > 1)
    c.assumptions.push_back("vp not stated: 1 (non-interleaved 1F1B)");
  // The source's software may count the embedding and the loss as layers in the split.
  Json given = facts.plan;
  const Json layout = layout_flags(facts, cell("model"));
  for (auto it = layout.begin(); it != layout.end(); ++it) given[it.key()] = *it;
  const bool accounted = given.value("embedding_in_split", false) || given.value("loss_in_split", false);
  const int64_t counted = given.value("embedding_in_split", false) + given.value("loss_in_split", false);
  if (layers % (*pp * vpp) != 0 && !(accounted && (layers + counted) % (*pp * vpp) == 0))
    return Skip{fmt::format("{} layers over pp*vp = {}*{} do not split evenly, and the source "
                            "states no uneven split",
                            layers, *pp, vpp)};
  auto micro = leading_integer(cell("micro_batch"));
  if (!micro) {
    if (!facts.default_micro_batch) return Skip{"micro_batch not stated"};
    micro = facts.default_micro_batch;
    c.assumptions.push_back(fmt::format("micro_batch not stated: {} (source default)", *micro));
  } else if (contains(cell("micro_batch"), "not confirmed")) {
    c.assumptions.push_back(fmt::format("micro_batch {} (not confirmed by the source)", *micro));
  }
  const auto gbs = leading_integer(cell("global_batch"));
  if (!gbs) return Skip{"global_batch not stated"};

  // Recompute, precision and the options the source fixes.
  const auto recompute_step = recompute_of(cell, facts, c);
  if (!recompute_step.value) return Skip{recompute_step.skip};
  const std::string& recompute = *recompute_step.value;
  const auto precision = precision_of(cell, c);
  if (!precision.value) return Skip{precision.skip};

  Json plan = source_plan(facts, *tp, *pp, dp, cp, vpp, *micro, *gbs, recompute,
                          *precision.value);
  for (auto it = layout.begin(); it != layout.end(); ++it) plan[it.key()] = *it;
  // The optimizer state its model's recipe keeps, where it differs from the source's plan
  // (sources.json model_recipes: NeMo 24.07's Nemotron-4 340B steps Adam in bf16).
  if (const auto* recipe =
          facts.recipe_for(cell("model"), source_of(cell("id")), cell("gpu"), cell("precision"));
      recipe && (recipe->bf16_moments || !recipe->master_weights.empty())) {
    if (recipe->bf16_moments) plan["bf16_moments"] = *recipe->bf16_moments;
    if (!recipe->master_weights.empty()) plan["master_weights"] = recipe->master_weights;
    c.assumptions.push_back(fmt::format(
        "optimizer state of the source's {} recipe: moments {}, master {} (sources.json)",
        recipe->model_contains, plan.value("bf16_moments", false) ? "bf16" : "fp32",
        plan.value("master_weights", std::string("fp32"))));
  }
  if (contains(cell("sharding"), "FSDP")) plan["zero_stage"] = 3;
  if (const auto& below = facts.overlap_grad_reduce_below_params_b) {
    // Overlapped only for smaller models (SC21's run_table_1.sh: torch DDP up to 18B, Megatron's
    // local DDP from 39B).
    const auto params_b = leading_number(cell("params_b"));
    if (!(params_b && *params_b < *below)) plan["overlap_grad_reduce"] = false;
  }
  if (split) {  // stages in rank order: as many on the first group as its GPUs hold
    const int64_t per_stage = *tp * cp * dp;
    const int64_t first = split->first_group_gpus / per_stage;
    if (first * per_stage != split->first_group_gpus || first <= 0 || first >= *pp)
      return Skip{"the first group does not hold whole pipeline stages"};
    Json stages = Json::array();
    for (int64_t i = 0; i < *pp; ++i)
      stages.push_back(Json{{"group", i < first ? 0 : 1}, {"layers", layers / *pp}});
    plan["stages"] = std::move(stages);
  }
  return PlanPart{std::move(plan), *gbs};
}

// ---------------------------------------------------------------------------------------------
// A row -> a case

Step<Case> convert_row(const CsvTable& t, size_t r, const SourceTable& sources,
                       const HardwareMap& hardware, const Catalog& catalog) {
  const Row cell{t, r};
  Case c;
  c.id = cell("id");
  c.source = source_of(c.id);
  c.citation = cell("source");
  c.locator = cell("source_locator");
  const SourceFacts& facts = sources.facts_for(c.source);

  // A mixture-of-experts row: converted as modern-runs.csv's MoE rows are (the model from its
  // preset, the expert plan from its source's recipes), its cells read in that table's names.
  if (!trim(cell("moe_experts")).empty()) {
    auto moe = detail::convert_modern_row(MoeCells{cell}, sources, hardware, catalog);
    const std::string derived = cell("derived_fields");
    if (moe.value && contains(derived, "iter_time_s"))
      moe.value->iter_time = "derived by the data file: " + derived;
    return moe;
  }

  const auto model = model_of(cell, facts, c);
  if (!model.value) return Skip{model.skip};

  // The measured iteration time, or one derived from a measured rate.
  const auto gpus = leading_integer(cell("gpu_count"));
  if (!gpus) return Skip{"gpu_count not stated"};
  const std::string derived = cell("derived_fields");
  auto iter = leading_number(cell("iter_time_s"));
  if (iter) {
    c.iter_time = contains(derived, "iter_time_s") ? "derived by the data file: " + derived
                                                   : "measured";
  } else if (!(facts.iter_time_from_tflops && leading_number(cell("tflops_per_gpu")) &&
                 leading_integer(cell("tp")) && leading_integer(cell("pp")))) {
    return Skip{rate_only_reason(cell, c.source)};
  }

  const auto cluster = cluster_of(cell, *gpus, hardware, catalog, c);
  if (!cluster.value) return Skip{cluster.skip};
  const auto plan = plan_of(cell, facts, model.value->layers, *gpus, cluster.value->split, c);
  if (!plan.value) return Skip{plan.skip};
  if (!facts.listed)
    c.assumptions.push_back("no source facts recorded: the megatron-core profile");

  Json scenario = Json::object();
  scenario["name"] = c.id;
  scenario["model"] = model.value->json;
  scenario["cluster"] = cluster.value->json;
  scenario["plan"] = plan.value->json;
  auto parsed = scenario_from_json(scenario, catalog);
  if (!parsed) return Skip{"the engine rejects the scenario: " + parsed.error().message};

  if (!iter) {
    // Iteration time from a measured TFLOP/s per GPU, where the source reports true model FLOPs
    // (the Megatron-Core table): model FLOPs of the step with the formula of its time (3 x
    // forward, full s x s attention, logits: published_model_flops_per_sample) over rate x GPUs.
    const auto tflops = leading_number(cell("tflops_per_gpu"));
    if (facts.iter_time_from_tflops && tflops && *tflops > 0) {
      const double flops = published_model_flops_per_sample(
                               parsed->model, static_cast<double>(model.value->seq_len)) *
                           static_cast<double>(plan.value->global_batch);
      iter = flops / (*tflops * 1e12 * static_cast<double>(*gpus));
      c.iter_time = fmt::format(
          "derived: model FLOPs per step (3 x forward incl. s x s attention and logits, as "
          "published_model_flops_per_sample) / ({} TFLOP/s x {} GPUs)",
          *tflops, *gpus);
    } else {
      return Skip{"no measured or derived iteration time"};
    }
  }
  c.measured_iter_time_s = *iter;
  c.scenario = std::move(scenario);
  return c;
}

}  // namespace

Conversion convert_runs(const CsvTable& table, const Catalog& catalog) {
  if (is_memory_table(table)) return convert_memory_runs(table, catalog);
  if (is_modern_table(table)) return convert_modern_runs(table, catalog);
  return detail::convert_each(table, [&](size_t r, const SourceTable& sources,
                                         const HardwareMap& hardware) {
    return convert_row(table, r, sources, hardware, catalog);
  });
}

namespace {
// scenario[object][key], or null where the case's scenario has no such member.
Json member(const Case& c, const char* object, const char* key) {
  const Json& s = c.scenario;
  if (!s.is_object() || !s.contains(object) || !s[object].is_object()) return nullptr;
  const Json& o = s[object];
  return key ? (o.contains(key) ? o[key] : Json()) : o;
}

// One run reported twice carries the same numbers in both rows.
bool same_run(const Case& a, const Case& b) {
  return a.source == b.source && a.measured_iter_time_s == b.measured_iter_time_s &&
         member(a, "model", "name") == member(b, "model", "name") &&
         member(a, "cluster", nullptr) == member(b, "cluster", nullptr) &&
         member(a, "plan", "precision") == member(b, "plan", "precision");
}
}  // namespace

void add_table(Conversion& all, Conversion table) {
  std::vector<Case> kept;
  for (auto& c : all.cases) {
    const auto again = std::find_if(table.cases.begin(), table.cases.end(),
                                    [&](const Case& t) { return same_run(c, t); });
    if (again == table.cases.end()) {
      kept.push_back(std::move(c));
    } else {
      all.skipped.push_back(Skipped{c.id, c.source,
                                    fmt::format("the same run as {} (counted once, from that row)",
                                                again->id)});
    }
  }
  all.cases = std::move(kept);
  for (auto& c : table.cases) all.cases.push_back(std::move(c));
  for (auto& s : table.skipped) all.skipped.push_back(std::move(s));
}

}  // namespace stepcast::accuracy
