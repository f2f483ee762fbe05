// Modern runs -> cases: the rows of tests/validation/modern-runs.csv (2025-26 stacks: Megatron-Bridge
// releases on H100 to GB300, dense and MoE) in their own schema. What a row does not state comes
// from its source's facts (sources.json) and is listed in the case's assumptions.
#include <fmt/format.h>

#include <algorithm>

#include "cell_text.h"
#include "moe_rows.h"
#include "stepcast/accuracy/hardware_map.h"
#include "stepcast/accuracy/runs.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/memory.h"
#include "stepcast/scenario.h"

namespace stepcast::accuracy {

namespace {

using detail::contains;
using detail::contains_nocase;
using detail::leading_integer;
using detail::leading_number;
using detail::trim;

struct Row : detail::CellReader {
  Row(const CsvTable& t, size_t i) : table(t), index(i) {}
  const CsvTable& table;
  size_t index;
  std::string operator()(std::string_view column) const override {
    return table.cell(index, column);
  }
};

using detail::Skip;
using detail::Step;

// The model: its shape from the cells, its architecture from its family's published config.
Step<Json> model_of(const detail::CellReader& cell) {
  const std::string name = cell("model");
  const auto layers = leading_integer(cell("layers"));
  const auto hidden = leading_integer(cell("hidden"));
  const auto heads = leading_integer(cell("heads"));
  const auto kv_heads = leading_integer(cell("kv_heads"));
  const auto ffn = leading_integer(cell("ffn_hidden"));
  const auto vocab = leading_integer(cell("vocab"));
  const auto seq = leading_integer(cell("seq_len"));
  if (!layers || !hidden || !heads || !ffn || !vocab || !seq)
    return Skip{"model shape not stated in the data (layers, hidden, heads, ffn_hidden, vocab "
                "or seq_len)"};
  // Llama 3 / 3.1: SwiGLU, RoPE, RMSNorm, no biases, untied embeddings (Meta's config.json).
  if (!contains_nocase(name, "llama"))
    return Skip{fmt::format("the architecture of '{}' is not one the conversion knows",
                            trim(name))};
  Json m = Json::object();
  m["name"] = name;
  m["layers"] = *layers;
  m["hidden"] = *hidden;
  m["heads"] = *heads;
  m["kv_heads"] = kv_heads.value_or(*heads);
  m["ffn_hidden"] = *ffn;
  m["vocab"] = *vocab;
  m["seq_len"] = *seq;
  m["ffn_type"] = "swiglu";
  m["position"] = "rope";
  m["norm"] = "rmsnorm";
  m["bias"] = false;
  m["tied_embeddings"] = false;
  return m;
}

// The cluster: DGX nodes of 8 GPUs by their node preset; NVL72 racks as one NVLink domain of
// the GPUs the run used (up to 72, else the source's GPUs per domain).
Step<Json> cluster_of(const detail::CellReader& cell, int64_t gpus, const SourceFacts& facts,
                      const HardwareMap& hardware, const Catalog& catalog, Case& c) {
  const GpuRule* rule = hardware.gpu_for(cell("gpu"));
  if (!rule) return Skip{fmt::format("GPU '{}' has no preset", cell("gpu"))};
  const bool nvl72 = contains(cell("gpus_per_node"), "72");
  const NodePreset* node = nullptr;
  for (const auto& n : catalog.nodes)
    if (n.gpu == rule->preset && (nvl72 ? n.gpus_per_node == 72 : n.gpus_per_node == 8))
      node = &n;
  if (!node) return Skip{fmt::format("no node preset of {} for '{}'", rule->preset, cell("gpus_per_node"))};
  if (!nvl72) {
    if (gpus % 8 != 0) return Skip{fmt::format("{} GPUs are not whole nodes of 8", gpus)};
    return Json{{"node", node->id}, {"nodes", gpus / 8}};
  }
  int64_t per_domain = gpus;
  if (gpus > 72) {
    if (!facts.nvl72_gpus_per_domain || gpus % *facts.nvl72_gpus_per_domain != 0)
      return Skip{fmt::format("{} GPUs on NVL72 racks: how many GPUs of each NVLink domain the "
                              "run used is not stated",
                              gpus)};
    per_domain = *facts.nvl72_gpus_per_domain;
    c.assumptions.push_back(fmt::format("{} GPUs of NVL72 racks: {} per NVLink domain (the "
                                        "source's recipes, sources.json)",
                                        gpus, per_domain));
  }
  Json cluster = {{"gpu", node->gpu},
                  {"gpus_per_node", per_domain},
                  {"nodes", gpus / per_domain},
                  {"intra_node_link", node->intra_node_link},
                  {"inter_node_link", node->inter_node_link},
                  {"nics_per_node", per_domain}};
  // The rack's host link (NVLink-C2C), which its recipes' activation offloading crosses.
  if (node->host_link_Bps_per_dir > 0)
    cluster["host_link_GBps_per_dir"] = node->host_link_Bps_per_dir / 1e9;
  return cluster;
}

Step<std::string> precision_of(const detail::CellReader& cell, Case& c) {
  const std::string p = cell("precision");
  if (contains_nocase(p, "nvfp4")) return std::string("nvfp4");
  if (contains_nocase(p, "mxfp8") || contains_nocase(p, "fp8-mx")) return std::string("mxfp8");
  if (contains_nocase(p, "blockwise")) {
    c.assumptions.push_back(
        "precision FP8 with 128x128 / 1x128 blockwise scales: costed as per-tensor fp8");
    return std::string("fp8");
  }
  if (contains_nocase(p, "fp8")) return std::string("fp8");
  if (contains_nocase(p, "bf16")) return std::string("bf16");
  if (contains(p, "not stated")) {
    // Megatron-Bridge 25.09's table gives FP8 as its main numbers and MXFP8 in parentheses on
    // Blackwell (the release's performance summary); its model TFLOP/s (725 on H100 for
    // Llama 3 8B, 73 % of the bf16 peak) are fp8 numbers.
    c.assumptions.push_back("precision not stated in the table: fp8 (the release's main numbers)");
    return std::string("fp8");
  }
  return Skip{fmt::format("precision '{}' not recognised", p)};
}

// A row's measured peak: peak_allocated_gib and peak_reserved_gib (GiB, PyTorch's allocator
// statistics), or a peak in other units (peak_other_value, peak_other_unit): "GB" as the
// Megatron-Bridge skills write their "Peak Mem (GB)" column, 10^9 bytes of allocated memory (the
// skill's Moonlight peak is the engine's allocated bytes read so: validation_test.cpp,
// MoonlightPeakMemoryIsTheRecipesWithBf16Moments); a peak whose metric is not named is not read.
Step<MeasuredPeak> peak_of(const detail::CellReader& cell, Case& c) {
  MeasuredPeak peak;
  peak.metric = trim(cell("memory_metric_notes"));
  if (auto a = leading_number(cell("peak_allocated_gib"))) peak.allocated_gib = *a;
  if (auto r = leading_number(cell("peak_reserved_gib"))) peak.reserved_gib = *r;
  if (peak.allocated_gib || peak.reserved_gib) return peak;
  const auto other = leading_number(cell("peak_other_value"));
  const std::string unit = trim(cell("peak_other_unit"));
  if (!other) return Skip{"no measured peak"};
  if (unit.rfind("GB", 0) == 0) {
    peak.allocated_gib = *other * 1e9 / kGiB;
    c.assumptions.push_back(fmt::format(
        "peak {} GB ('{}'): allocated bytes, GB = 10^9 bytes (the skills' convention)", *other,
        unit));
    return peak;
  }
  return Skip{fmt::format("peak {} {}: whether it is allocated or reserved memory is not stated",
                          *other, unit)};
}

}  // namespace

namespace detail {

Step<Case> convert_modern_row(const CellReader& cell, const SourceTable& sources,
                              const HardwareMap& hardware, const Catalog& catalog,
                              Measured measured) {
  Case c;
  c.id = cell("id");
  c.source = source_of(c.id);
  c.citation = cell("source");
  c.locator = cell("source_locator");
  const SourceFacts& facts = sources.facts_for(c.source);
  const bool memory = measured == Measured::peak_memory;
  // A model mapped to a preset by name is expressible, whatever family name it also carries.
  const ModelByName* named = sources.model_by_name_for(cell("model"));
  if (memory && !named)
    if (const NotExpressible* n = sources.not_expressible_for(cell("model")))
      return Skip{"the engine cannot express the model yet: " + n->why};
  const bool moe = !trim(cell("experts")).empty() || named;
  Step<Json> model =
      moe ? detail::moe_model_of(cell, catalog, named, c.assumptions) : model_of(cell);
  if (!model.value) return Skip{model.skip};
  // The recipe's token drop (a capacity factor with padded experts), where the row's dispatcher
  // cell states no capacity factor of its own.
  if (const auto* recipe = detail::recipe_of(cell, facts);
      moe && recipe && recipe->moe_capacity_factor &&
      !(*model.value)["moe"].contains("capacity_factor")) {
    (*model.value)["moe"]["capacity_factor"] = *recipe->moe_capacity_factor;
    c.assumptions.push_back(fmt::format(
        "expert capacity factor not stated: {}, experts padded to it (the source's {} recipe's "
        "token drop, sources.json)",
        *recipe->moe_capacity_factor, cell("model")));
  }

  const auto gpus = leading_integer(cell("gpu_count"));
  if (!gpus) return Skip{"gpu_count not stated"};
  std::optional<double> iter;
  if (memory) {
    auto peak = peak_of(cell, c);
    if (!peak.value) return Skip{peak.skip};
    c.peak = std::move(*peak.value);
  } else {
    iter = leading_number(cell("iter_time_s"));
    if (!iter) return Skip{"no iteration time"};
    c.iter_time = contains(cell("notes"), "iter_time_s =")
                      ? "derived by the data file: iter_time_s = GBS*seq/(tokens_s_gpu*GPUs)"
                      : "measured";
  }
  auto cluster = cluster_of(cell, *gpus, facts, hardware, catalog, c);
  if (!cluster.value) return Skip{cluster.skip};

  auto tp = leading_integer(cell("tp"));
  auto pp = leading_integer(cell("pp"));
  if (!tp || !pp) return Skip{"tensor/pipeline parallel sizes not stated"};
  int64_t cp = 1;
  if (auto v = leading_integer(cell("cp"))) cp = *v;
  else c.assumptions.push_back("cp not stated: 1");
  const auto vp = leading_integer(cell("vp"));
  int64_t vpp = vp ? std::max<int64_t>(1, *vp) : 1;
  auto micro = leading_integer(cell("micro_batch"));
  const auto gbs = leading_integer(cell("global_batch"));
  if (!micro || !gbs) return Skip{"micro_batch or global_batch not stated"};
  // A row whose table states a plan its own release's recipe does not run (sources.json
  // recipe_plan, with the evidence): the recipe's plan, the table's said in the assumptions.
  if (const auto* recipe = detail::recipe_of(cell, facts); recipe && recipe->recipe_plan) {
    const auto& r = *recipe->recipe_plan;
    c.assumptions.push_back(fmt::format(
        "the table's plan (TP {}, PP {}, VP {}, micro-batch {}) is not what its recipe runs: the "
        "source's {} recipe's (TP {}, PP {}, VP {}, micro-batch {}; sources.json)",
        *tp, *pp, vpp, *micro, cell("model"), r.tp, r.pp, r.vpp, r.micro_batch));
    tp = r.tp;
    pp = r.pp;
    vpp = r.vpp;
    micro = r.micro_batch;
  }
  auto precision = precision_of(cell, c);
  if (!precision.value) return Skip{precision.skip};
  const std::string rc = trim(cell("recompute"));
  std::string recompute;
  if (moe) {
    auto r = detail::moe_recompute_of(rc, facts, cell, c.assumptions);
    if (!r.value) return Skip{r.skip};
    recompute = *r.value;
  } else if (rc.rfind("none", 0) == 0) recompute = "none";
  else if (rc.rfind("selective", 0) == 0) recompute = "selective";
  else if (rc.rfind("full", 0) == 0) recompute = "full";
  else if (!facts.default_recompute.empty()) {
    recompute = facts.default_recompute;
    c.assumptions.push_back(fmt::format("recompute '{}': {} (the source's default)", rc,
                                        recompute));
  } else {
    return Skip{fmt::format("recompute '{}' not read", rc)};
  }

  // Megatron FSDP where the table's FSDP column (kept in the notes) or its dp cell says so.
  const std::string dp_cell = cell("dp"), notes = cell("notes");
  const bool fsdp = contains(dp_cell, "FSDP=") ||
                    (contains(notes, "FSDP=") && !contains(notes, "FSDP=0"));
  const int64_t dp = *gpus / (*tp * *pp * cp);
  if (*tp * *pp * cp * dp != *gpus)
    return Skip{fmt::format("tp*pp*cp = {}*{}*{} does not divide {} GPUs", *tp, *pp, cp, *gpus)};
  Json plan = source_plan(facts, *tp, *pp, dp, cp, vpp, *micro, *gbs, recompute, *precision.value);
  if (fsdp) {
    plan["framework"] = facts.framework == "pytorch-fsdp" ? "pytorch-fsdp" : "megatron-fsdp";
    c.assumptions.push_back(fmt::format("FSDP={}: {}", dp, plan["framework"].get<std::string>()));
  }
  const Json layout = layout_flags(facts, cell("model"));
  for (auto it = layout.begin(); it != layout.end(); ++it) plan[it.key()] = *it;
  if (moe) {
    const int64_t layers = (*model.value)["layers"].get<int64_t>();
    auto keys = detail::moe_plan_of(cell, facts, *pp * vpp, layers, c.assumptions);
    if (!keys.value) return Skip{keys.skip};
    for (auto it = keys.value->begin(); it != keys.value->end(); ++it) plan[it.key()] = *it;
  }
  // The modules a selective recipe recomputes, where the row leaves recompute to the recipe.
  if (const auto* recipe = detail::recipe_of(cell, facts);
      recipe && !recipe->recompute_modules.empty() && recompute == "selective" &&
      recipe->recompute == "selective" && (rc.empty() || contains(rc, "not stated"))) {
    plan["recompute_modules"] = recipe->recompute_modules;
    c.assumptions.push_back(fmt::format("recompute modules '{}' (the source's {} recipe, "
                                        "sources.json)",
                                        recipe->recompute_modules, cell("model")));
  }
  // A row that lists its own recompute modules (MBSKILL's Moonlight variants: "selective
  // mla_up_proj, mlp"; the verification cards': "selective: ['layernorm', 'moe'] | text: ..."):
  // those modules, where each is one the engine prices (kRecomputeModules); otherwise the
  // engine's default module, said in the row's assumptions.
  if (moe && recompute == "selective" &&
      (contains(rc, "selective ") || contains(rc, "selective:")) &&
      !plan.contains("recompute_modules")) {
    std::string list = rc.substr(rc.find("selective") + 9);
    list = list.substr(0, list.find('|'));
    for (char& ch : list)
      if (ch == ':' || ch == '[' || ch == ']' || ch == '\'') ch = ' ';
    std::vector<std::string> names;
    bool known = true;
    for_each_recompute_module(list,
                              [&](std::string_view name) {
                                names.emplace_back(name);
                                known = known && std::find(kRecomputeModules.begin(),
                                                           kRecomputeModules.end(),
                                                           name) != kRecomputeModules.end();
                              });
    if (!names.empty() && known) {
      plan["recompute_modules"] = fmt::format("{}", fmt::join(names, " "));
      c.assumptions.push_back(fmt::format("recompute modules '{}' as the row lists them",
                                          plan["recompute_modules"].get<std::string>()));
    }
  }
  // The optimizer's master copy, which no row states: its recipe's.
  if (const auto* recipe = detail::recipe_of(cell, facts);
      recipe && !recipe->master_weights.empty()) {
    plan["master_weights"] = recipe->master_weights;
    c.assumptions.push_back(fmt::format("master weights {} (the source's {} recipe, "
                                        "sources.json)",
                                        recipe->master_weights, cell("model")));
  }
  // Activation offloading, which no row states: its recipe's, dense or MoE.
  if (const auto* recipe = detail::recipe_of(cell, facts);
      recipe && recipe->cpu_offloading_num_layers) {
    plan["cpu_offloading_num_layers"] = *recipe->cpu_offloading_num_layers;
    c.assumptions.push_back(fmt::format("activations of {} layers offloaded to the host (the "
                                        "source's {} recipe, sources.json)",
                                        *recipe->cpu_offloading_num_layers, cell("model")));
  }

  // The allocator, which no row states: its recipe's launcher's environment.
  if (const auto* recipe = detail::recipe_of(cell, facts);
      recipe && recipe->expandable_segments) {
    plan["expandable_segments"] = *recipe->expandable_segments;
    c.assumptions.push_back(fmt::format("allocator with expandable segments {} (the source's {} "
                                        "recipe, sources.json)",
                                        *recipe->expandable_segments ? "on" : "off",
                                        cell("model")));
  }

  Json scenario = Json::object();
  scenario["name"] = c.id;
  scenario["model"] = *model.value;
  scenario["cluster"] = *cluster.value;
  scenario["plan"] = std::move(plan);
  auto parsed = scenario_from_json(scenario, catalog);
  if (!parsed) return Skip{"the engine rejects the scenario: " + parsed.error().message};
  if (!facts.listed) c.assumptions.push_back("no source facts recorded: the megatron-core profile");
  c.measured_iter_time_s = iter.value_or(0);
  c.scenario = std::move(scenario);
  return c;
}

}  // namespace detail

bool is_modern_table(const CsvTable& table) { return table.column("moe_ffn_hidden") >= 0; }

bool is_memory_table(const CsvTable& table) { return table.column("peak_allocated_gib") >= 0; }

Conversion convert_memory_runs(const CsvTable& table, const Catalog& catalog) {
  return detail::convert_each(table, [&](size_t r, const SourceTable& sources,
                                         const HardwareMap& hardware) {
    return detail::convert_modern_row(Row{table, r}, sources, hardware, catalog,
                                      detail::Measured::peak_memory);
  });
}

Conversion convert_modern_runs(const CsvTable& table, const Catalog& catalog) {
  return detail::convert_each(table, [&](size_t r, const SourceTable& sources,
                                         const HardwareMap& hardware) {
    return detail::convert_modern_row(Row{table, r}, sources, hardware, catalog);
  });
}

}  // namespace stepcast::accuracy
