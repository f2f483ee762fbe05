#include "stepcast/accuracy/sources.h"

#include <fmt/format.h>

#include <charconv>

#include "data_tables.h"

namespace stepcast::accuracy {

std::string source_of(std::string_view id) {
  const size_t dash = id.find('-');
  return std::string(dash == std::string_view::npos ? id : id.substr(0, dash));
}

const SourceFacts& SourceTable::facts_for(std::string_view source) const {
  for (const auto& f : sources) {
    const bool prefix = !f.id.empty() && f.id.back() == '*';
    const std::string_view id = std::string_view(f.id).substr(0, f.id.size() - (prefix ? 1 : 0));
    if (prefix ? source.starts_with(id) : source == id) return f;
  }
  return unlisted;
}

const SourceFacts::ModelRecipe* SourceFacts::recipe_for(std::string_view model,
                                                        std::string_view source,
                                                        std::string_view gpu,
                                                        std::string_view precision) const {
  const std::string_view word = precision.substr(0, precision.find_first_of(" \t("));
  auto any = [](const std::vector<std::string>& list, auto&& pred) {
    if (list.empty()) return true;
    for (const auto& s : list)
      if (pred(s)) return true;
    return false;
  };
  for (const auto& r : model_recipes)
    if (model.find(r.model_contains) != std::string_view::npos &&
        any(r.sources, [&](const std::string& s) { return source == s; }) &&
        any(r.gpu_prefix, [&](const std::string& s) { return gpu.starts_with(s); }) &&
        any(r.precision, [&](const std::string& s) { return word == s; }))
      return &r;
  return nullptr;
}

const NotExpressible* SourceTable::not_expressible_for(std::string_view model) const {
  for (const auto& n : not_expressible)
    if (model.find(n.model_contains) != std::string_view::npos) return &n;
  return nullptr;
}

const ModelByName* SourceTable::model_by_name_for(std::string_view model) const {
  for (const auto& n : models_by_name)
    if (model.find(n.model_contains) != std::string_view::npos) return &n;
  return nullptr;
}

std::string SourceTable::megatron_lm_name() const {
  std::string ids;
  for (const auto& f : sources)
    if (f.megatron_lm) ids += (ids.empty() ? "" : "+") + f.id;
  return fmt::format("Megatron-LM ({})", ids);
}

namespace {

using stepcast::detail::JsonReader;
using detail::is_null;

// A recompute mode of the scenario's plan, or empty for null.
std::string recompute_mode(JsonReader& r, std::string_view key) {
  if (is_null(r, key)) return "";
  r.choice(key, {"none", "selective", "full"}, std::nullopt);
  return r.ok() ? r.raw(key)->get<std::string>() : "";
}

std::optional<SourceFacts::Heads> heads_when_unstated(JsonReader& r) {
  const std::string_view key = "heads_when_unstated";
  const Json* v = is_null(r, key) ? nullptr : detail::required(r, key);
  if (!v) return std::nullopt;
  JsonReader h(*v, r.field(key));
  h.reject_unknown_keys({"hidden", "heads", "because"});
  SourceFacts::Heads heads;
  heads.hidden = h.integer("hidden", std::nullopt);
  heads.heads = h.integer("heads", std::nullopt);
  heads.because = h.string("because", std::nullopt);
  if (!h.ok()) r.fail(h.error().code, h.error().path, h.error().message);
  return heads;
}

std::optional<SourceFacts::Layout> layout_entry(const Json& j, std::string path, JsonReader& parent) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"model_contains", "embedding_in_split", "loss_in_split", "why"});
  SourceFacts::Layout l;
  l.model_contains = r.string("model_contains", std::nullopt);
  l.embedding_in_split = r.boolean("embedding_in_split", false);
  l.loss_in_split = r.boolean("loss_in_split", false);
  l.why = r.string("why", std::nullopt);
  if (!r.ok()) {
    parent.fail(r.error());
    return std::nullopt;
  }
  return l;
}

// A string choice of a recipe, or empty for null.
std::string optional_choice(JsonReader& r, std::string_view key,
                            std::initializer_list<std::string_view> choices) {
  if (is_null(r, key)) return "";
  r.choice(key, choices, std::nullopt);
  return r.ok() ? r.raw(key)->get<std::string>() : "";
}

std::optional<SourceFacts::ModelRecipe> recipe_entry(const Json& j, std::string path,
                                                     JsonReader& parent) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"model_contains", "sources", "gpu_prefix", "precision", "recompute",
                         "recompute_modules", "moe_dispatcher", "moe_capacity_factor", "etp",
                         "moe_overlap", "cuda_graphs",
                         "bf16_moments", "master_weights", "cpu_offloading_num_layers",
                         "expandable_segments", "pipeline_layouts", "recipe_plan", "why"});
  SourceFacts::ModelRecipe m;
  m.model_contains = r.string("model_contains", std::nullopt);
  // Optional filters: arrays of strings.
  for (auto [key, out] : {std::pair{"sources", &m.sources}, std::pair{"gpu_prefix", &m.gpu_prefix},
                          std::pair{"precision", &m.precision}}) {
    if (!r.has(key)) continue;
    const Json* list = r.raw(key);
    bool good = list && list->is_array() && !list->empty();
    for (size_t i = 0; good && i < list->size(); ++i) good = (*list)[i].is_string();
    if (!good) {
      r.fail(ErrorCode::type_error, r.field(key),
             r.field(key) + " must be a non-empty array of strings");
      break;
    }
    for (const auto& s : *list) out->push_back(s.get<std::string>());
  }
  if (r.has("moe_overlap") && !is_null(r, "moe_overlap"))
    m.moe_overlap = r.boolean("moe_overlap", std::nullopt);
  if (r.has("cuda_graphs") && !is_null(r, "cuda_graphs"))
    m.cuda_graphs = r.boolean("cuda_graphs", std::nullopt);
  if (r.has("bf16_moments") && !is_null(r, "bf16_moments"))
    m.bf16_moments = r.boolean("bf16_moments", std::nullopt);
  if (r.has("expandable_segments") && !is_null(r, "expandable_segments"))
    m.expandable_segments = r.boolean("expandable_segments", std::nullopt);
  if (r.has("cpu_offloading_num_layers") && !is_null(r, "cpu_offloading_num_layers"))
    m.cpu_offloading_num_layers = r.integer("cpu_offloading_num_layers", std::nullopt, 1);
  m.recompute = optional_choice(r, "recompute", {"none", "selective", "full"});
  if (r.has("master_weights"))
    m.master_weights = optional_choice(r, "master_weights", {"fp32", "remainders", "none"});
  if (r.has("recompute_modules") && !is_null(r, "recompute_modules"))
    m.recompute_modules = r.string("recompute_modules", std::nullopt);
  m.moe_dispatcher = optional_choice(r, "moe_dispatcher", {"alltoall", "allgather", "flex"});
  // (above 0: a factor of 0 is the scenario's "dropless", which a recipe says by leaving it out)
  if (r.has("moe_capacity_factor") && !is_null(r, "moe_capacity_factor"))
    m.moe_capacity_factor = r.number("moe_capacity_factor", std::nullopt);
  if (!is_null(r, "etp")) m.etp = r.integer("etp", std::nullopt, 1);
  // {"16": "Et*4|(t*4|)*14tmL", ...}: the layout for each count of pipeline stages.
  if (const Json* layouts = detail::required(r, "pipeline_layouts"); layouts && r.ok()) {
    if (!layouts->is_object())
      r.fail(ErrorCode::type_error, r.field("pipeline_layouts"),
             r.field("pipeline_layouts") + " must be an object of stage count -> layout");
    for (auto it = layouts->begin(); r.ok() && layouts->is_object() && it != layouts->end(); ++it) {
      const std::string& key = it.key();
      int64_t stages = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), stages);
      if (ec != std::errc() || end != key.data() + key.size() || stages <= 0 || !it->is_string())
        r.fail(ErrorCode::type_error, r.field("pipeline_layouts") + "." + it.key(),
               fmt::format("{}.{}: a stage count with a layout string", r.field("pipeline_layouts"),
                           it.key()));
      else
        m.pipeline_layouts.emplace_back(stages, it->get<std::string>());
    }
  }
  if (r.ok() && r.has("recipe_plan") && !is_null(r, "recipe_plan") &&
      !r.raw("recipe_plan")->is_object())
    r.fail(ErrorCode::type_error, r.field("recipe_plan"),
           r.field("recipe_plan") + " must be an object of tp, pp, vpp and micro_batch");
  if (r.ok() && r.has("recipe_plan") && !is_null(r, "recipe_plan")) {
    // Every key stated, each a degree of at least 1: the whole plan the recipe runs.
    JsonReader p(*r.raw("recipe_plan"), r.field("recipe_plan"));
    p.reject_unknown_keys({"tp", "pp", "vpp", "micro_batch"});
    SourceFacts::ModelRecipe::Plan plan;
    plan.tp = p.integer("tp", std::nullopt, 1);
    plan.pp = p.integer("pp", std::nullopt, 1);
    plan.vpp = p.integer("vpp", std::nullopt, 1);
    plan.micro_batch = p.integer("micro_batch", std::nullopt, 1);
    if (p.ok()) m.recipe_plan = plan;
    else r.fail(p.error());
  }
  m.why = r.string("why", std::nullopt);
  if (!r.ok()) {
    parent.fail(r.error());
    return std::nullopt;
  }
  return m;
}

// One entry of the table (`listed`) or the defaults for unlisted sources.
Result<SourceFacts> read_facts(const Json& j, std::string path, bool listed) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"id", "framework", "megatron_lm", "plan",
                         "sequence_parallel_with_selective", "overlap_grad_reduce_below_params_b",
                         "tied_embeddings", "default_micro_batch", "default_recompute",
                         "recompute_yes_means", "heads_when_unstated", "iter_time_from_tflops",
                         "nvl72_gpus_per_domain", "layout", "model_recipes", "why"});
  SourceFacts f;
  f.listed = listed;
  if (listed)
    f.id = r.string("id", std::nullopt);
  else if (r.has("id"))
    r.fail(ErrorCode::unknown_key, r.field("id"),
           fmt::format("{}: the defaults for unlisted sources have no id", r.field("id")));
  f.framework = r.string("framework", std::nullopt);
  f.megatron_lm = r.boolean("megatron_lm", std::nullopt);
  if (const Json* plan = detail::required(r, "plan")) {
    if (plan->is_object())
      f.plan = *plan;
    else
      r.fail(ErrorCode::type_error, r.field("plan"), r.field("plan") + " must be an object");
  }
  f.sequence_parallel_with_selective = r.boolean("sequence_parallel_with_selective", std::nullopt);
  if (!is_null(r, "overlap_grad_reduce_below_params_b"))
    f.overlap_grad_reduce_below_params_b =
        r.number("overlap_grad_reduce_below_params_b", std::nullopt);
  if (!is_null(r, "tied_embeddings"))
    f.tied_embeddings = r.boolean("tied_embeddings", std::nullopt);
  if (!is_null(r, "default_micro_batch"))
    f.default_micro_batch = r.integer("default_micro_batch", std::nullopt);
  f.default_recompute = recompute_mode(r, "default_recompute");
  f.recompute_yes_means = recompute_mode(r, "recompute_yes_means");
  f.heads_when_unstated = heads_when_unstated(r);
  f.iter_time_from_tflops = r.boolean("iter_time_from_tflops", std::nullopt);
  if (!is_null(r, "nvl72_gpus_per_domain"))
    f.nvl72_gpus_per_domain = r.integer("nvl72_gpus_per_domain", std::nullopt);
  if (const Json* list = detail::required(r, "layout"); list && list->is_array())
    for (size_t i = 0; i < list->size(); ++i)
      if (auto l = layout_entry((*list)[i], fmt::format("{}[{}]", r.field("layout"), i), r))
        f.layout.push_back(std::move(*l));
  if (const Json* list = detail::required(r, "model_recipes"); list && list->is_array())
    for (size_t i = 0; i < list->size(); ++i)
      if (auto m = recipe_entry((*list)[i], fmt::format("{}[{}]", r.field("model_recipes"), i), r))
        f.model_recipes.push_back(std::move(*m));
  f.why = r.string("why", std::nullopt);
  if (!r.ok()) return r.error();
  return f;
}

}  // namespace

Result<SourceTable> parse_source_table(std::string_view json_text) {
  auto doc = detail::parse_table(json_text, "sources.json");
  if (!doc) return doc.error();
  JsonReader top(*doc, "");
  top.reject_unknown_keys(
      {"about", "unlisted", "sources", "models_not_expressible", "models_by_name"});
  top.string("about", std::string());  // for people only
  const Json* unlisted = detail::required(top, "unlisted");
  if (!top.ok()) return top.error();
  SourceTable table;
  auto defaults = read_facts(*unlisted, "unlisted", /*listed=*/false);
  if (!defaults) return defaults.error();
  table.unlisted = std::move(defaults).value();
  auto listed = [](const Json& j, std::string path) {
    return read_facts(j, std::move(path), /*listed=*/true);
  };
  if (auto e = detail::read_list(top, "sources", listed, table.sources)) return *e;
  auto model = [](const Json& j, std::string path) -> Result<NotExpressible> {
    JsonReader r(j, std::move(path));
    r.reject_unknown_keys({"model_contains", "why"});
    NotExpressible n{r.string("model_contains", std::nullopt), r.string("why", std::nullopt)};
    if (!r.ok()) return r.error();
    return n;
  };
  if (top.has("models_not_expressible"))
    if (auto e = detail::read_list(top, "models_not_expressible", model, table.not_expressible))
      return *e;
  auto by_name = [](const Json& j, std::string path) -> Result<ModelByName> {
    JsonReader r(j, std::move(path));
    r.reject_unknown_keys({"model_contains", "preset", "why"});
    ModelByName n{r.string("model_contains", std::nullopt), r.string("preset", std::nullopt),
                  r.string("why", std::nullopt)};
    if (!r.ok()) return r.error();
    return n;
  };
  if (top.has("models_by_name"))
    if (auto e = detail::read_list(top, "models_by_name", by_name, table.models_by_name))
      return *e;
  return table;
}

const Result<SourceTable>& builtin_source_table() {
  static const Result<SourceTable> table = parse_source_table(detail::sources_json());
  return table;
}

bool is_megatron_source(std::string_view source) {
  const auto& table = builtin_source_table();
  return table.ok() && table->facts_for(source).megatron_lm;
}

}  // namespace stepcast::accuracy
