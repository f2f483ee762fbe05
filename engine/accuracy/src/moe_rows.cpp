#include "moe_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

#include "cell_text.h"
#include "data_tables.h"

namespace stepcast::accuracy::detail {

namespace {

// "DeepSeek-V3" and "deepseek-v3" alike: lower-case letters and digits only.
std::string folded(std::string_view s) {
  std::string out;
  for (char ch : s)
    if (std::isalnum(static_cast<unsigned char>(ch)))
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
  return out;
}

// The preset file of a model id, parsed; null when there is none.
Json preset_json(std::string_view id) {
  const std::string path = fmt::format("models/{}.json", id);
  for (const auto& f : builtin_preset_files())
    if (f.path == path) {
      Json j = Json::parse(f.text, nullptr, /*allow_exceptions=*/false);
      return j.is_discarded() ? Json() : j;
    }
  return Json();
}

// The integer after `key` in `text` ("dense_layers=1 (SimuMax ...)" -> 1).
std::optional<int64_t> integer_after(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return leading_integer(text.substr(at + key.size()));
}

std::optional<double> number_after(std::string_view text, std::string_view key) {
  const size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return leading_number(text.substr(at + key.size()));
}

}  // namespace

Step<Json> moe_model_of(const CellReader& cell, const Catalog& catalog, const ModelByName* named,
                        std::vector<std::string>& assumptions) {
  const std::string name = trim(cell("model"));
  const std::string base = trim(std::string_view(name).substr(0, name.find(" (")));
  const bool reduced = contains_nocase(name, "reduced");
  const ModelSpec* spec = named ? catalog.find_model(named->preset) : nullptr;
  if (named && (!spec || !spec->moe.enabled()))
    return Skip{fmt::format("sources.json names MoE preset '{}' for '{}': there is none",
                            named->preset, base)};
  for (const auto& m : catalog.models)
    if (!named && m.moe.enabled() &&
        (folded(m.name) == folded(base) || folded(m.id) == folded(base)))
      spec = &m;
  if (!spec) return Skip{fmt::format("no MoE model preset is named '{}'", base)};
  Json model = preset_json(spec->id);
  if (!model.is_object() || !model.contains("moe"))
    return Skip{fmt::format("preset '{}' could not be read", spec->id)};
  model.erase("source");
  model.erase("notes");
  model.erase("recipe");  // a published run of the preset, for the page: not the row's model

  // The row repeats the preset's shape; a difference means another model of the same name.
  auto layers = leading_integer(cell("layers"));
  const auto seq = leading_integer(cell("seq_len"));
  if (!layers && named) {
    // The source names the model without its shape; the preset is that model (the evidence in
    // sources.json's models_by_name).
    layers = model["layers"].get<int64_t>();
    assumptions.push_back(fmt::format("{}: the row states no shape; preset {} ({})", base,
                                      spec->id, named->why));
  }
  if (!layers) return Skip{"model shape not stated in the data (layers)"};
  if (!seq) return Skip{"model shape not stated in the data (seq_len)"};
  const std::pair<const char*, Json> checks[] = {
      {"hidden", model["hidden"]},
      {"experts", model["moe"]["experts"]},
      {"topk", model["moe"]["top_k"]},
      {"moe_ffn_hidden", model["moe"]["ffn_hidden"]},
  };
  for (const auto& [column, want] : checks) {
    const auto have = leading_integer(cell(column));
    if (have && (!want.is_number_integer() || *have != want.get<int64_t>()))
      return Skip{fmt::format("the row's {} {} is not preset {}'s {}", column, *have,
                                        spec->id, want.dump())};
  }
  if (*layers != model["layers"].get<int64_t>()) {
    if (!reduced)
      return Skip{fmt::format("the row's {} layers are not preset {}'s {}", *layers,
                                        spec->id, model["layers"].dump())};
    // A cut-down model for a timing harness: the architecture with fewer layers.
    model["layers"] = *layers;
    const std::string freq = cell("moe_layer_freq");
    if (const auto dense = integer_after(freq, "dense_layers=")) {
      model["moe"]["first_dense_layers"] = *dense;
      assumptions.push_back(fmt::format("{}: preset {} with {} layers, {} dense ('{}')", name,
                                        spec->id, *layers, *dense, trim(freq)));
    }
    if (model.value("mtp_layers", 0) > 0) {
      model["mtp_layers"] = 0;
      assumptions.push_back("the reduced model's MTP modules are not stated: none");
    }
  }
  model["seq_len"] = *seq;
  // Megatron's --moe-expert-capacity-factor with padding: tokens past it dropped, experts padded.
  if (const auto factor = number_after(cell("dispatcher"), "capacity factor")) {
    model["moe"]["capacity_factor"] = *factor;
    assumptions.push_back(fmt::format("expert capacity factor {} (the dispatcher cell)", *factor));
  }
  return model;
}

const SourceFacts::ModelRecipe* recipe_of(const CellReader& row, const SourceFacts& facts) {
  return facts.recipe_for(row("model"), source_of(row("id")), row("gpu"), row("precision"));
}

namespace {
// How an assumption names the recipe: its model and, where it has them, its filters.
std::string recipe_name(const SourceFacts::ModelRecipe& r) {
  std::string name = r.model_contains;
  for (const auto* list : {&r.sources, &r.gpu_prefix, &r.precision})
    if (!list->empty()) name += fmt::format(" {}", fmt::join(*list, "/"));
  return name;
}
}  // namespace

Step<std::string> moe_recompute_of(std::string_view cell_text, const SourceFacts& facts,
                                      const CellReader& row,
                                      std::vector<std::string>& assumptions) {
  const std::string rc = trim(cell_text);
  if (rc.rfind("full", 0) == 0) return std::string("full");
  // "selective [] (none)": selective granularity with no modules recomputes nothing.
  if (rc.rfind("none", 0) == 0 || contains(rc, "[]") || contains(rc, "(none)"))
    return std::string("none");
  if (rc.empty() || contains(rc, "not stated")) {
    const auto* recipe = recipe_of(row, facts);
    if (recipe && !recipe->recompute.empty()) {
      assumptions.push_back(fmt::format("recompute not stated: {} (the source's {} recipe, "
                                        "sources.json)",
                                        recipe->recompute, recipe_name(*recipe)));
      return recipe->recompute;
    }
    if (!facts.default_recompute.empty()) {
      assumptions.push_back(
          fmt::format("recompute not stated: {} (the source's default)", facts.default_recompute));
      return facts.default_recompute;
    }
    return Skip{fmt::format("recompute '{}' not read", rc)};
  }
  // A module list (Megatron's --recompute-modules: core_attn, mla_up_proj, mlp, moe_act,
  // layernorm): Megatron's selective granularity; the caller passes the modules on where the
  // engine prices each of them (modern_runs.cpp), else the engine's default, the attention core.
  assumptions.push_back(fmt::format("recompute '{}': selective", rc));
  return std::string("selective");
}

Step<Json> moe_plan_of(const CellReader& cell, const SourceFacts& facts, int64_t stages,
                          int64_t layers, std::vector<std::string>& assumptions) {
  Json plan = Json::object();
  const auto ep = leading_integer(cell("ep"));
  if (!ep) return Skip{"expert parallel size (ep) not stated"};
  plan["ep"] = *ep;
  const auto* recipe = recipe_of(cell, facts);
  if (const auto etp = leading_integer(cell("etp"))) {
    plan["etp"] = *etp;
  } else if (recipe && recipe->etp) {
    plan["etp"] = *recipe->etp;
    assumptions.push_back(fmt::format("etp not stated: {} (the source's {} recipe, sources.json)",
                                      *recipe->etp, recipe_name(*recipe)));
  } else {
    assumptions.push_back("etp not stated: tp (Megatron-Core's default)");
  }
  const std::string d = cell("dispatcher");
  if (contains_nocase(d, "flex") || contains_nocase(d, "deepep") || contains_nocase(d, "hybridep")) {
    plan["moe_dispatcher"] = "flex";
  } else if (contains_nocase(d, "allgather")) {
    plan["moe_dispatcher"] = "allgather";
  } else if (contains_nocase(d, "alltoall")) {
    plan["moe_dispatcher"] = "alltoall";
  } else if (recipe && !recipe->moe_dispatcher.empty()) {
    plan["moe_dispatcher"] = recipe->moe_dispatcher;
    assumptions.push_back(fmt::format("dispatcher not stated: {} (the source's {} recipe, "
                                      "sources.json)",
                                      recipe->moe_dispatcher, recipe_name(*recipe)));
  } else {
    plan["moe_dispatcher"] = "alltoall";
    assumptions.push_back("dispatcher not stated: alltoall (Megatron-Core's default)");
  }
  // --overlap-moe-expert-parallel-comm, where the row's notes say which.
  const std::string notes = cell("notes");
  if (contains(notes, "EP overlap on")) plan["moe_overlap"] = true;
  if (contains(notes, "EP overlap off")) plan["moe_overlap"] = false;
  if (!plan.contains("moe_overlap") && recipe && recipe->moe_overlap) {
    plan["moe_overlap"] = *recipe->moe_overlap;
    assumptions.push_back(fmt::format("EP overlap not stated: {} (the source's {} recipe, "
                                      "sources.json)",
                                      *recipe->moe_overlap ? "on" : "off", recipe_name(*recipe)));
  }
  if (recipe && recipe->cuda_graphs) {
    plan["cuda_graphs"] = *recipe->cuda_graphs;
    assumptions.push_back(fmt::format("CUDA graphs not stated: {} (the source's {} recipe, "
                                      "sources.json)",
                                      *recipe->cuda_graphs ? "on" : "off", recipe_name(*recipe)));
  }
  // The precision-aware optimizer's moment dtypes: the optimizer state's size and its step. A
  // row that states both (the verification cards' optimizer column, Megatron-Core's
  // OptimizerConfig names) says so itself; otherwise its recipe's.
  const std::string optimizer = cell("optimizer");
  if (contains(optimizer, "exp_avg_dtype=torch.bfloat16") &&
      contains(optimizer, "exp_avg_sq_dtype=torch.bfloat16")) {
    plan["bf16_moments"] = true;
    assumptions.push_back("Adam's moments in bf16, as the row's optimizer column states");
  } else if (recipe && recipe->bf16_moments) {
    plan["bf16_moments"] = *recipe->bf16_moments;
    assumptions.push_back(fmt::format("Adam's moments not stated: {} (the source's {} recipe, "
                                      "sources.json)",
                                      *recipe->bf16_moments ? "bf16" : "fp32",
                                      recipe_name(*recipe)));
  }

  if (recipe)
    for (const auto& [count, layout] : recipe->pipeline_layouts)
      if (count == stages) {
        plan["pipeline_layout"] = layout;
        assumptions.push_back(fmt::format("pipeline layout '{}' for {} stages (the source's {} "
                                          "recipe, sources.json)",
                                          layout, stages, recipe_name(*recipe)));
      }
  if (!plan.contains("pipeline_layout") && layers % stages != 0)
    assumptions.push_back(fmt::format("{} layers over {} stages: no layout stated, the "
                                      "account-for flags or the engine's uneven split",
                                      layers, stages));
  return plan;
}

}  // namespace stepcast::accuracy::detail
