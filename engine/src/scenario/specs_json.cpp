#include "scenario/specs_json.h"

#include <fmt/format.h>

#include <algorithm>

#include "scenario/fields.h"
#include "scenario/json_reader.h"
#include "stepcast/arch_calibration_keys.h"
#include "stepcast/rule_ids.h"

namespace stepcast::detail {

namespace {
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

Result<GpuSpec> gpu_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  GpuSpec g;
  read_fields(r, gpu_fields(), g);
  if (const Json* peaks = r.raw("peak_tflops")) {
    JsonReader p(*peaks, r.field("peak_tflops"));
    static const std::vector<std::string_view> names = names_of(peak_keys());
    p.reject_unknown(names);
    auto peak = [&](std::string_view name) -> std::optional<double> {
      const KeyInfo& k = key_in(peak_keys(), name);
      if (!p.has(k.name) || p.raw(k.name)->is_null()) return std::nullopt;
      return p.number(k);
    };
    for (size_t i = 0; i < kPrecisions; ++i) g.peak[i] = peak(enum_names<Precision>()[i]);
    peak("tf32");  // checked, not used: Megatron trains in 16 bits or fp32
    if (!p.ok()) return p.error();
    if (std::none_of(g.peak.begin(), g.peak.end(), [](const auto& v) { return v.has_value(); }))
      return Error{ErrorCode::missing_key, p.path(), p.path() + " must give at least one precision"};
  } else if (r.is_object()) {
    r.fail(ErrorCode::missing_key, r.field("peak_tflops"), r.field("peak_tflops") + " is required");
  }
  if (!r.ok()) return r.error();
  // The measured maximum achievable matmul rates (the GEMM shape model's ceiling, which caps
  // them at the peak: a derated copy of a preset keeps its measured figures).
  const Json* measured = r.raw("measured");
  const Json* rates = measured && measured->is_object() && measured->contains("gemm_tflops")
                          ? &(*measured)["gemm_tflops"]
                          : nullptr;
  if (rates && !rates->is_null()) {
    JsonReader m(*rates, r.field("measured") + ".gemm_tflops");
    static const std::vector<std::string_view> names = names_of(peak_keys());
    m.reject_unknown(names);
    for (size_t i = 0; i < kPrecisions; ++i) {
      const KeyInfo& k = key_in(peak_keys(), enum_names<Precision>()[i]);
      if (m.has(k.name) && !m.raw(k.name)->is_null()) g.measured_gemm[i] = m.number(k);
    }
    if (!m.ok()) return m.error();
  }
  return g;
}

Result<LinkSpec> link_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  LinkSpec l;
  read_fields(r, link_fields(), l);
  if (!r.ok()) return r.error();
  // The achievable bus bandwidths against the line rate (issue 38 §2: busbw 10^6 GB/s on a 1 GB/s
  // link was read as given). A ring moves each byte over every link once per direction, so its
  // bus bandwidth is at most the line rate; an all-reduce whose switch reduces (NVLS) sends each
  // byte once instead of twice, so at most twice it (the presets' NVLink 4: 480 of 450 GB/s).
  struct Bound {
    const char* key;
    double Bps;
    double lines;  // line rates it may reach
    const char* why;
  };
  const Bound bounds[] = {
      {"busbw_GBps", l.busbw_Bps, 1, "a ring moves at most the line rate"},
      {"allreduce_busbw_GBps", l.allreduce_busbw_Bps, 2,
       "an all-reduce moves at most twice the line rate, where the switch reduces"}};
  for (const Bound& b : bounds)
    if (b.Bps > b.lines * l.bandwidth_Bps_per_dir * (1 + 1e-9))
      return Error{ErrorCode::out_of_range, r.field(b.key),
                   fmt::format("{}={:g} must be <= {:g} x bandwidth_GBps_per_dir={:g}: {}",
                               r.field(b.key), b.Bps / 1e9, b.lines,
                               l.bandwidth_Bps_per_dir / 1e9, b.why)};
  return l;
}

Result<NodePreset> node_preset_from_json(const Json& j) {
  JsonReader r(j, "");
  r.reject_unknown_keys({"id", "name", "gpu", "gpus_per_node", "intra_node_link",
                         "inter_node_link", "nics_per_node", "host_link_GBps_per_dir", "source",
                         "confidence", "notes"});
  NodePreset n;
  n.id = r.string("id", std::nullopt);
  n.name = r.string("name", n.id);
  n.gpu = r.string("gpu", std::nullopt);
  n.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", std::nullopt, 1, 4096));
  n.intra_node_link = r.string("intra_node_link", std::nullopt);
  n.inter_node_link = r.string("inter_node_link", std::nullopt);
  n.nics_per_node = static_cast<int>(r.integer("nics_per_node", std::nullopt, 1, 4096));
  // Each GPU's link to host memory (activation offloading's copies); absent: not stated.
  n.host_link_Bps_per_dir = r.number("host_link_GBps_per_dir", 0.0, 0, true, 10000) * 1e9;
  if (!r.ok()) return r.error();
  return n;
}

Result<ModelSpec> model_from_json(const Json& j, const std::string& path, bool preset) {
  JsonReader r(j, path);
  ModelSpec m;
  read_fields(r, model_fields(), m);
  if (preset) {
    r.string("id", std::nullopt);
    // Where the numbers come from: every preset file names it (presets_test.cpp); the browser's
    // copy leaves it out (engine/embed_presets.cmake), as it does each GPU's and link's.
    r.string("source", std::string());
  }
  if (!r.ok()) return r.error();
  // A broken rule of the model's shape (rule_ids.h), its path and related keys inside the model.
  auto invalid = [&](Rule rule, std::string key, std::string message,
                     std::vector<std::string> related = {}, Json values = Json::object()) {
    for (auto& k : related) k = r.field(k);
    return Error{.code = ErrorCode::invalid_model,
                 .path = r.field(key),
                 .message = std::move(message),
                 .related = std::move(related),
                 .rule = rule,
                 .values = std::move(values)};
  };
  // `divisor` must divide `dividend` (the rule `divides`).
  auto divides = [&](std::string divisor, int64_t a, std::string dividend, int64_t b) {
    return Json{{"divisor_key", r.field(divisor)}, {"divisor", a},
                {"dividend_key", r.field(dividend)}, {"dividend", b}};
  };
  // Without head_dim every head is hidden/heads wide.
  if (m.head_size == 0 && m.hidden % m.heads != 0)
    return invalid(Rule::divides, "hidden",
                   fmt::format("{}={} must be divisible by {}={} (or give {})", r.field("hidden"),
                               m.hidden, r.field("heads"), m.heads, r.field("head_dim")),
                   {"heads"}, divides("heads", m.heads, "hidden", m.hidden));
  if (m.heads % m.kv_heads != 0)
    return invalid(Rule::divides, "kv_heads",
                   fmt::format("{}={} must divide {}={}", r.field("kv_heads"), m.kv_heads,
                               r.field("heads"), m.heads),
                   {"heads"}, divides("kv_heads", m.kv_heads, "heads", m.heads));
  const AttentionSpec& a = m.attention;
  if (m.mla()) {
    for (const auto& [key, value] :
         {std::pair{"kv_lora_rank", a.kv_lora_rank}, std::pair{"qk_head_dim", a.qk_head_dim},
          std::pair{"qk_rope_head_dim", a.qk_rope_head_dim}, std::pair{"v_head_dim", a.v_head_dim}})
      if (value <= 0)
        return invalid(Rule::mla_dims, std::string("attention.") + key,
                       fmt::format("{}.attention.{} is required and must be > 0 for "
                                   "attention.type=mla",
                                   r.path().empty() ? "model" : r.path(), key),
                       {"attention.type"});
  }
  if (a.chunk > 0 && a.window > 0)
    return invalid(Rule::attention_chunk, "attention.chunk",
                   fmt::format("{} with {}: a layer attends within its chunk or over its window, "
                               "not both",
                               r.field("attention.chunk"), r.field("attention.window")),
                   {"attention.window"}, {{"chunk", a.chunk}});
  // Hybrid models: Megatron's override pattern (megatron/core/ssm/mamba_hybrid_layer_allocation.py
  // _allocate_override checks the length and the symbols).
  const std::string& pattern = m.layer_pattern;
  const bool mamba_layers = pattern.find('M') != std::string::npos;
  if (m.hybrid() && static_cast<int64_t>(pattern.size()) != m.layers)
    return invalid(Rule::hybrid_pattern, "layer_pattern",
                   fmt::format("{} has {} characters but {}={}: one per layer",
                               r.field("layer_pattern"), pattern.size(), r.field("layers"),
                               m.layers),
                   {"layers"}, {{"length", pattern.size()}, {"layers", m.layers}});
  // The main pattern and a hybrid MTP module's (Megatron's mtp_hybrid_override_pattern, read
  // with the same symbols: megatron/core/ssm/mamba_hybrid_layer_allocation.py) name layers the
  // engine has, an E only with model.moe.
  using Named = std::pair<const char*, const std::string*>;
  for (const auto& [key, text] :
       {Named{"layer_pattern", &pattern}, Named{"mtp_pattern", &m.mtp_pattern}}) {
    if (const size_t bad = text->find_first_not_of(kHybridSymbols); bad != std::string::npos)
      return invalid(Rule::hybrid_pattern, key,
                     fmt::format("{}[{}]='{}' is not a layer: one of M (Mamba), * (attention), "
                                 "- (MLP), E (MoE), G (Gated DeltaNet)",
                                 r.field(key), bad, (*text)[bad]),
                     {}, {{"symbol", std::string(1, (*text)[bad])}, {"position", bad}});
    if (text->find('E') != std::string::npos && !m.moe.enabled())
      return invalid(Rule::hybrid_pattern, key,
                     fmt::format("{} has MoE layers (E) but {} is absent", r.field(key),
                                 r.field("moe")),
                     {"moe"});
  }
  if (m.hybrid() && m.attention.window > 0)
    return invalid(Rule::hybrid_pattern, "attention.window",
                   fmt::format("{} with {} is not modelled (sliding windows on hybrid layers)",
                               r.field("attention.window"), r.field("layer_pattern")),
                   {"layer_pattern"});
  // A hybrid MTP module's layers: after a hybrid model's main layers, with mixers they have.
  const std::string& mtp = m.mtp_pattern;
  if (!mtp.empty() && (!m.hybrid() || m.mtp_layers == 0))
    return invalid(Rule::hybrid_pattern, "mtp_pattern",
                   fmt::format("{}=\"{}\" needs {} and {} > 0: it is a hybrid model's MTP "
                               "module",
                               r.field("mtp_pattern"), mtp, r.field("layer_pattern"),
                               r.field("mtp_layers")),
                   {m.hybrid() ? "mtp_layers" : "layer_pattern"});
  if ((mtp.find('M') != std::string::npos && pattern.find('M') == std::string::npos) ||
      (mtp.find('G') != std::string::npos && pattern.find('G') == std::string::npos))
    return invalid(Rule::hybrid_pattern, "mtp_pattern",
                   fmt::format("{} has a mixer (M or G) that {} does not: its shape is the "
                               "main layers'",
                               r.field("mtp_pattern"), r.field("layer_pattern")),
                   {"layer_pattern"});
  if (m.mtp_repeated && m.mtp_layers == 0)
    return invalid(Rule::hybrid_pattern, "mtp_repeated",
                   fmt::format("{} repeats an MTP module but {}=0", r.field("mtp_repeated"),
                               r.field("mtp_layers")),
                   {"mtp_layers"});
  if (const Json* v = r.raw("mamba"); v && !v->is_null() && !mamba_layers)
    return invalid(Rule::mamba_dims, "mamba",
                   fmt::format("{} describes Mamba layers but {} has no M",
                               r.field("mamba"), r.field("layer_pattern")),
                   {"layer_pattern"});
  if (mamba_layers && m.mamba_heads() <= 0)
    return invalid(Rule::mamba_dims, "mamba.num_heads",
                   fmt::format("{}·{}/{} gives no Mamba head: give {}", r.field("mamba.expand"),
                               r.field("hidden"), r.field("mamba.head_dim"),
                               r.field("mamba.num_heads")),
                   {"mamba.head_dim"});
  if (mamba_layers && m.mamba_heads() % m.mamba.groups != 0)
    return invalid(Rule::mamba_dims, "mamba.num_groups",
                   fmt::format("{}={} must divide the {} Mamba heads", r.field("mamba.num_groups"),
                               m.mamba.groups, m.mamba_heads()),
                   {"mamba.num_heads"},
                   divides("mamba.num_groups", m.mamba.groups, "mamba.num_heads", m.mamba_heads()));
  const bool gdn_layers = pattern.find('G') != std::string::npos;
  if (const Json* v = r.raw("gdn"); v && !v->is_null() && !gdn_layers)
    return invalid(Rule::gdn_dims, "gdn",
                   fmt::format("{} describes Gated DeltaNet layers but {} has no G",
                               r.field("gdn"), r.field("layer_pattern")),
                   {"layer_pattern"});
  // transformers' Qwen3NextGatedDeltaNet repeats each q/k head over value_heads/key_heads value
  // heads.
  if (gdn_layers && m.gdn.value_heads % m.gdn.key_heads != 0)
    return invalid(Rule::gdn_dims, "gdn.key_heads",
                   fmt::format("{}={} must divide {}={}", r.field("gdn.key_heads"),
                               m.gdn.key_heads, r.field("gdn.value_heads"), m.gdn.value_heads),
                   {"gdn.value_heads"},
                   divides("gdn.key_heads", m.gdn.key_heads, "gdn.value_heads",
                           m.gdn.value_heads));
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    if (e.top_k > e.experts)
      return invalid(Rule::top_k, "moe.top_k",
                     fmt::format("{}={} must be <= {}={}", r.field("moe.top_k"), e.top_k,
                                 r.field("moe.experts"), e.experts),
                     {"moe.experts"}, {{"top_k", e.top_k}, {"experts", e.experts}});
    if (!e.layer_pattern.empty() && static_cast<int64_t>(e.layer_pattern.size()) != m.layers)
      return invalid(Rule::layer_pattern, "moe.layer_freq",
                     fmt::format("{} lists {} layers but {}={}", r.field("moe.layer_freq"),
                                 e.layer_pattern.size(), r.field("layers"), m.layers),
                     {"layers"}, {{"entries", e.layer_pattern.size()}, {"layers", m.layers}});
    if (e.first_dense_layers >= m.layers)
      return invalid(Rule::moe_layers, "moe.first_dense_layers",
                     fmt::format("{}={} leaves no MoE layer of {}={}",
                                 r.field("moe.first_dense_layers"), e.first_dense_layers,
                                 r.field("layers"), m.layers),
                     {"layers"});
    if (m.moe_layers(0, m.layers) == 0)
      return invalid(Rule::moe_layers, "moe.layer_freq",
                     fmt::format("{} makes no layer an MoE layer", r.field("moe.layer_freq")),
                     {"moe.first_dense_layers"});
    if (e.router_group_top_k > 0 && e.router_groups == 0)
      return invalid(Rule::router_groups, "moe.router_group_top_k",
                     fmt::format("{}={} needs {}", r.field("moe.router_group_top_k"),
                                 e.router_group_top_k, r.field("moe.router_groups")),
                     {"moe.router_groups"});
    if (e.router_groups > 0 &&
        (e.experts % e.router_groups != 0 || e.router_group_top_k > e.router_groups))
      return invalid(Rule::router_groups, "moe.router_groups",
                     fmt::format("{}={} must divide {}={} and be >= {}={}",
                                 r.field("moe.router_groups"), e.router_groups,
                                 r.field("moe.experts"), e.experts,
                                 r.field("moe.router_group_top_k"), e.router_group_top_k),
                     {"moe.experts", "moe.router_group_top_k"});
  }
  return m;
}

Result<FrameworkProfile> framework_from_json(const Json& j) {
  JsonReader r(j, "");
  r.reject_unknown_keys({"id", "name", "about", "plan", "execution", "cannot"});
  FrameworkProfile f;
  f.id = r.string("id", std::nullopt);
  f.name = r.string("name", std::nullopt);
  r.string("about", std::nullopt);
  if (!r.ok()) return r.error();
  // Every setting is {"value": ..., "source": "..."}: a profile states where each value comes from.
  auto settings = [&](std::string_view key, auto&& each) -> std::optional<Error> {
    const Json* list = r.raw(key);
    if (!list || !list->is_object())
      return Error{ErrorCode::missing_key, std::string(key), fmt::format("{} must be an object", key)};
    for (auto it = list->begin(); it != list->end(); ++it) {
      JsonReader e(*it, fmt::format("{}.{}", key, it.key()));
      e.reject_unknown_keys({"value", "source"});
      e.string("source", std::nullopt);
      if (!e.ok()) return e.error();
      if (const Json* v = e.raw("value")) each(it.key(), *v, e);
      else return Error{ErrorCode::missing_key, e.field("value"), e.field("value") + " is required"};
      if (!e.ok()) return e.error();
    }
    return std::nullopt;
  };
  if (auto e = settings("plan", [&](const std::string& k, const Json& v, JsonReader& e) {
        if (k == "framework" || !std::any_of(plan_fields().begin(), plan_fields().end(),
                                             [&](const auto& field) { return field.info.name == k; }))
          e.fail(ErrorCode::unknown_key, e.path(), e.path() + " is not a plan key a profile sets");
        f.plan_defaults[k] = v;
      }))
    return *e;
  if (auto e = settings("execution", [&](const std::string& k, const Json&, JsonReader& e) {
        if (k == "kernels")
          f.execution.kernels = static_cast<Kernels>(e.choice("value", enum_names<Kernels>(), std::nullopt));
        else if (k == "zero3_fetch")
          f.execution.zero3_fetch =
              static_cast<Zero3Fetch>(e.choice("value", enum_names<Zero3Fetch>(), std::nullopt));
        else if (k == "grad_reduce_every_micro_batch")
          f.execution.grad_reduce_every_micro_batch = e.boolean("value", std::nullopt);
        else if (k == "zero3_copy_out")
          f.execution.zero3_copy_out = e.boolean("value", std::nullopt);
        else if (k == "moe_probs_in_activation")
          f.execution.moe_probs_in_activation = e.boolean("value", std::nullopt);
        else if (k == "loss_grad_copy")
          f.execution.loss_grad_copy = e.boolean("value", std::nullopt);
        else
          e.fail(ErrorCode::unknown_key, e.path(), e.path() + " is not an execution setting");
      }))
    return *e;
  if (const Json* cannot = r.raw("cannot"); cannot && cannot->is_object()) {
    for (auto it = cannot->begin(); it != cannot->end(); ++it) {
      if (!it->is_string())
        return Error{ErrorCode::type_error, "cannot." + it.key(), "cannot." + it.key() + " must say why"};
      f.cannot.emplace_back(it.key(), it->get<std::string>());
    }
  }
  return f;
}

namespace {
Result<ArchCalibration> arch_calibration_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  static const std::vector<std::string_view> known = [] {
    std::vector<std::string_view> out;  // the fitted constants' keys and what says where from
    for (const ArchCalibrationKey& k : arch_calibration_keys()) out.push_back(k.name);
    for (std::string_view about : {"fitted_on", "source", "notes"}) out.push_back(about);
    return out;
  }();
  r.reject_unknown(known);
  ArchCalibration c;
  for (const ArchCalibrationKey& k : arch_calibration_keys()) {
    std::optional<double> fallback = k.absent;  // (the table's order reads a fallback first)
    if (!k.falls_back_to.empty())
      fallback = key_value(c, *find_arch_calibration_key(k.falls_back_to));
    set_key_value(c, k, r.number(k.name, fallback, 0, !k.zero_allowed));
  }
  for (const ArchCalibrationKey& k : arch_calibration_keys())
    if (k.max > 0 && key_value(c, k) > k.max)
      r.fail(ErrorCode::out_of_range, r.field(k.name),
             fmt::format("{} must be at most {} ({})", r.field(k.name), k.max, k.max_why));
  if (!r.ok()) return r.error();
  return c;
}
}  // namespace

Result<Calibration> calibration_from_json(const Json& j) {
  JsonReader r(j, "");
  r.reject_unknown_keys({"source", "notes", "families", "fallback", "overlap_slowdown",
                         "host_launch_us", "host_launch_source", "framework_memory_gib",
                         "framework_memory_fraction",
                         "fitted_on"});
  Calibration c;
  c.overlap_slowdown = r.number("overlap_slowdown", std::nullopt, 0, false);
  c.host_launch_s = r.number("host_launch_us", 5.0, 0, false) * 1e-6;
  c.framework_memory_bytes = r.number("framework_memory_gib", std::nullopt, 0, false) * GiB;
  c.framework_memory_fraction = r.number("framework_memory_fraction", std::nullopt, 0, false);
  if (!r.ok()) return r.error();
  const Json* fallback = r.raw("fallback");
  if (!fallback) return Error{ErrorCode::missing_key, "fallback", "fallback is required"};
  auto fb = arch_calibration_from_json(*fallback, "fallback");
  if (!fb) return fb.error();
  c.fallback = *fb;
  if (const Json* families = r.raw("families")) {
    if (!families->is_object())
      return Error{ErrorCode::type_error, "families", "families must be an object"};
    for (auto it = families->begin(); it != families->end(); ++it) {
      auto fam = arch_calibration_from_json(*it, "families." + it.key());
      if (!fam) return fam.error();
      c.families.emplace_back(it.key(), *fam);
    }
  }
  return c;
}

}  // namespace stepcast::detail
