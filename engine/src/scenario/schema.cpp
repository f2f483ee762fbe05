// The schema as data for its readers: the list of every key, its JSON form for the page, and the
// documentation tables of docs/scenario.md.
#include "stepcast/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "scenario/fields.h"
#include "stepcast/catalog.h"
#include "stepcast/rule_ids.h"

namespace stepcast {

namespace {

constexpr std::string_view kObjects[] = {"scenario", "model", "model.attention", "model.moe",
                                         "cluster", "plan", "plan.stages[]",
                                         "plan.replicas[]", "gpu", "gpu.peak_tflops", "link",
                                         "calibration", "calibration.gemm", "calibration.runs[]",
                                         "page"};

std::vector<KeyInfo> all_keys() {
  std::vector<KeyInfo> keys;
  auto add = [&](const auto& table) {
    for (const auto& f : table) {
      if constexpr (std::is_same_v<std::decay_t<decltype(f)>, KeyInfo>)
        keys.push_back(f);
      else
        keys.push_back(f.info);
    }
  };
  add(detail::scenario_keys());
  add(detail::model_fields());
  add(detail::attention_fields());
  add(detail::moe_fields());
  add(detail::mamba_fields());
  add(detail::gdn_fields());
  add(detail::cluster_keys());
  add(detail::plan_fields());
  add(detail::stage_keys());
  add(detail::replica_keys());
  add(detail::gpu_fields());
  add(detail::peak_keys());
  add(detail::link_fields());
  add(detail::calibration_keys());
  add(detail::calibration_gemm_keys());
  add(detail::calibration_memory_keys());
  add(detail::calibration_layer_keys());
  add(detail::calibration_run_keys());
  add(detail::page_keys());
  return keys;
}

// A number as people write it: 1, 0.5, 1048576.
std::string plain(double v) {
  if (v >= 65536 && std::floor(std::log2(v)) == std::log2(v))
    return fmt::format("2^{:.0f}", std::log2(v));
  if (v > 0 && (v >= 1e6 || v < 1e-3)) {  // 10^6, 10^-6
    const double e = std::round(std::log10(v));
    if (std::fabs(std::pow(10.0, e) - v) <= 1e-12 * v) return fmt::format("10^{:.0f}", e);
  }
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

Json default_json(const KeyInfo& k) {
  using Kind = DefaultValue::Kind;
  switch (k.fallback.kind) {
    case Kind::required: return "required";
    case Kind::none: return nullptr;
    case Kind::number:
      if (k.type == ValueType::integer) return static_cast<int64_t>(k.fallback.number);
      return k.fallback.number;
    case Kind::boolean: return k.fallback.flag;
    case Kind::text: return std::string(k.fallback.text);
    case Kind::rule: return Json{{"rule", std::string(k.fallback.text)}};
  }
  return nullptr;
}

std::string type_text(const KeyInfo& k) {
  switch (k.type) {
    case ValueType::integer: {
      std::string t = "integer";
      if (k.max > 0) return fmt::format("integer {}–{}", plain(k.min), plain(k.max));
      return fmt::format("{} ≥ {}", t, plain(k.min));
    }
    case ValueType::number:
      if (k.max > 0)
        return fmt::format("number {}{}–{}", k.min_exclusive ? "> " : "", plain(k.min),
                           plain(k.max));
      return fmt::format("number {} {}", k.min_exclusive ? ">" : "≥", plain(k.min));
    case ValueType::boolean: return "bool";
    case ValueType::choice: {
      std::string out;
      for (auto c : k.choices) out += fmt::format("{}`{}`", out.empty() ? "" : " ", c);
      return out;
    }
    case ValueType::text:
      if (k.max > 0) return fmt::format("string of ≤ {} bytes", plain(k.max));
      return "string";
    case ValueType::reference: return "preset id or object";
    case ValueType::list: return "array";
    case ValueType::object: return "object";
  }
  return "?";
}

std::string default_text(const KeyInfo& k) {
  using Kind = DefaultValue::Kind;
  switch (k.fallback.kind) {
    case Kind::required: return "required";
    case Kind::none: return "none";
    case Kind::number: return plain(k.fallback.number);
    case Kind::boolean: return k.fallback.flag ? "true" : "false";
    case Kind::text: return fmt::format("`{}`", k.fallback.text);
    case Kind::rule: return std::string(k.fallback.text);
  }
  return "";
}

}  // namespace

std::string KeyInfo::path() const {
  if (object == "scenario") return std::string(name);
  return fmt::format("{}.{}", object, name);
}

std::span<const KeyInfo> schema_keys() {
  static const std::vector<KeyInfo> keys = all_keys();
  return keys;
}

std::span<const std::string_view> schema_objects() { return kObjects; }

const KeyInfo* find_key(std::string_view object, std::string_view name) {
  for (const KeyInfo& k : schema_keys())
    if (k.object == object && k.name == name) return &k;
  return nullptr;
}

Json schema_json() {
  Json keys = Json::array();
  for (const KeyInfo& k : schema_keys()) {
    Json j = {{"path", k.path()},
              {"object", std::string(k.object)},
              {"name", std::string(k.name)},
              {"link", std::string(k.link)},
              {"type", std::string(name_of(k.type))},
              {"default", default_json(k)},
              {"unit", std::string(k.unit)},
              {"label", std::string(k.label)},
              {"doc", std::string(k.doc)},
              {"control", std::string(name_of(k.control))}};
    if (k.type == ValueType::integer || k.type == ValueType::number) {
      j["min"] = k.min;
      if (k.min_exclusive) j["min_exclusive"] = true;
      if (k.max > 0) j["max"] = k.max;
    }
    if (!k.choices.empty()) {
      Json choices = Json::array();
      for (auto c : k.choices) choices.push_back(std::string(c));
      j["choices"] = std::move(choices);
    }
    if (!k.needs.empty()) j["needs"] = std::string(k.needs);
    keys.push_back(std::move(j));
  }
  Json objects = Json::array();
  for (auto o : kObjects) objects.push_back(std::string(o));
  return Json{{"version", 1}, {"objects", std::move(objects)}, {"keys", std::move(keys)}};
}

std::string schema_markdown(std::string_view object) {
  std::string out = "| key | link | type | default | unit | meaning |\n|---|---|---|---|---|---|\n";
  for (const KeyInfo& k : schema_keys()) {
    if (k.object != object) continue;
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", k.name,
                       k.link.empty() ? "" : fmt::format("`{}`", k.link), type_text(k),
                       default_text(k), k.unit, k.doc);
  }
  return out;
}

std::string framework_markdown(const Catalog& catalog) {
  // In the schema's order (megatron-core, the default, first).
  std::vector<FrameworkProfile> frameworks;
  for (auto id : detail::framework_ids())
    if (const FrameworkProfile* f = catalog.find_framework(id)) frameworks.push_back(*f);
  std::string out = "| setting |";
  std::string rule = "|---|";
  for (const auto& f : frameworks) {
    out += fmt::format(" `{}` |", f.id);
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  auto cell = [](const Json& v) {
    if (v.is_boolean()) return std::string(v.get<bool>() ? "yes" : "no");
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
  };
  for (const auto& field : detail::plan_fields()) {
    const std::string key(field.info.name);
    if (std::none_of(frameworks.begin(), frameworks.end(), [&](const FrameworkProfile& f) {
          return f.plan_defaults.contains(key) || f.cannot_do(key) ||
                 !f.refused_values(key).empty();
        }))
      continue;
    out += fmt::format("| `plan.{}` |", key);
    // A key no profile sets (plan.cp) is a capability: yes, or no where the software lacks it;
    // a choice some of whose values it lacks (plan.optimizer): yes but those.
    for (const auto& f : frameworks) {
      const std::string refused = f.refused_values(key);
      out += fmt::format(" {}{} |",
                         f.plan_defaults.contains(key) ? cell(f.plan_defaults[key])
                         : f.cannot_do(key)            ? "no"
                                                       : "yes",
                         f.cannot_do(key)    ? " (cannot)"
                         : refused.empty() ? ""
                                           : fmt::format(" (not {})", refused));
    }
    out += "\n";
  }
  const std::pair<const char*, std::string (*)(const Execution&)> rows[] = {
      {"kernels", [](const Execution& e) { return std::string(name_of(e.kernels)); }},
      {"ZeRO-3 gathers per", [](const Execution& e) { return std::string(name_of(e.zero3_fetch)); }},
      {"gradients reduced every micro-batch",
       [](const Execution& e) { return std::string(e.grad_reduce_every_micro_batch ? "yes" : "no"); }},
      {"ZeRO-3 gathers copied out on the compute stream",
       [](const Execution& e) { return std::string(e.zero3_copy_out ? "yes" : "no"); }},
      {"MoE probabilities scale the experts' activation",
       [](const Execution& e) { return std::string(e.moe_probs_in_activation ? "yes" : "no"); }},
      {"the loss's 16-bit logit gradient made beside the fp32 softmax",
       [](const Execution& e) { return std::string(e.loss_grad_copy ? "yes" : "no"); }}};
  for (const auto& [name, value] : rows) {
    out += fmt::format("| {} |", name);
    for (const auto& f : frameworks) out += fmt::format(" {} |", value(f.execution));
    out += "\n";
  }
  return out;
}

std::string rules_markdown() {
  std::string out = "| rule | meaning | values |\n|---|---|---|\n";
  for (const RuleInfo& r : kRules)
    if (r.rule != Rule::none)
      out += fmt::format("| `{}` | {} | {} |\n", r.id, r.meaning, r.values);
  return out;
}

std::string fill_schema_tables(std::string_view doc) {
  constexpr std::string_view open = "<!-- schema: ", close = "<!-- /schema -->";
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t start = doc.find(open, pos);
    if (start == std::string_view::npos) break;
    const size_t name_end = doc.find(" -->", start);
    const size_t end = doc.find(close, start);
    if (name_end == std::string_view::npos || end == std::string_view::npos || end < name_end)
      break;
    const std::string_view object = doc.substr(start + open.size(), name_end - start - open.size());
    out += doc.substr(pos, name_end + 4 - pos);
    out += '\n';
    out += object == "frameworks" ? framework_markdown(builtin_catalog())
           : object == "errors"   ? rules_markdown()
                                  : schema_markdown(object);
    out += close;
    pos = end + close.size();
  }
  out += doc.substr(pos);
  return out;
}

namespace detail {

namespace {

// Writes at most `budget` characters of a value, never recursing deeper than a few levels (a
// hostile document can nest thousands of arrays).
void echo_into(const Json& v, std::string& out, int depth, size_t budget) {
  if (out.size() >= budget) return;
  if (v.is_array() || v.is_object()) {
    const bool array = v.is_array();
    if (depth >= 2 || v.size() > 8) {
      // (ASCII only: the cut in echo() must never fall inside a character.)
      out += array ? fmt::format("[... {} items]", v.size())
                   : fmt::format("{{... {} keys}}", v.size());
      return;
    }
    out += array ? '[' : '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() < budget; ++it) {
      if (!first) out += ',';
      first = false;
      if (!array) {
        echo_into(Json(it.key()), out, depth + 1, budget);
        out += ':';
      }
      echo_into(*it, out, depth + 1, budget);
    }
    out += array ? ']' : '}';
    return;
  }
  // Scalars: ASCII only (control characters and invalid UTF-8 escaped or replaced), so an echoed
  // value can never break the one-line error contract or the terminal.
  out += v.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
}

}  // namespace

Error text_too_long(const std::string& field, size_t bytes, double max) {
  return Error{ErrorCode::out_of_range, field,
               fmt::format("{} is {} bytes long; at most {:g} are read", field, bytes, max)};
}

std::string echo(const Json& value) {
  constexpr size_t kBudget = 48;
  std::string out;
  echo_into(value, out, 0, kBudget);
  if (out.size() > kBudget) out = out.substr(0, kBudget - 3) + "...";
  return out;
}

}  // namespace detail

}  // namespace stepcast
