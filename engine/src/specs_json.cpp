#include "detail/specs_json.h"

#include "detail/json_reader.h"

namespace stepcast::detail {

namespace {
constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

Result<GpuSpec> gpu_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  r.reject_unknown_keys({"id", "name", "vendor", "arch", "memory_gib", "memory_bandwidth_GBps",
                         "peak_tflops", "scaleup_GBps_per_dir", "tdp_w", "measured", "source",
                         "confidence", "notes"});
  GpuSpec g;
  g.id = r.string("id", std::string());
  g.name = r.string("name", g.id.empty() ? std::string("custom GPU") : g.id);
  g.arch = r.string("arch", std::string("unknown"));
  g.memory_bytes = r.number("memory_gib", std::nullopt) * GiB;
  g.memory_bandwidth_Bps = r.number("memory_bandwidth_GBps", std::nullopt) * 1e9;
  g.scaleup_Bps_per_dir = r.number("scaleup_GBps_per_dir", 0.0, 0, false) * 1e9;
  if (const Json* peaks = r.raw("peak_tflops")) {
    JsonReader p(*peaks, r.field("peak_tflops"));
    p.reject_unknown_keys({"fp32", "tf32", "fp16", "bf16", "fp8"});
    g.peak_fp32 = p.optional_number("fp32");
    g.peak_fp16 = p.optional_number("fp16");
    g.peak_bf16 = p.optional_number("bf16");
    g.peak_fp8 = p.optional_number("fp8");
    for (auto* v : {&g.peak_fp32, &g.peak_fp16, &g.peak_bf16, &g.peak_fp8})
      if (*v) **v *= 1e12;
    if (!p.ok()) return p.error();
    if (!g.peak_fp32 && !g.peak_fp16 && !g.peak_bf16 && !g.peak_fp8)
      return Error{ErrorCode::missing_key, p.path(), p.path() + " must give at least one precision"};
  } else if (r.ok()) {
    return Error{ErrorCode::missing_key, r.field("peak_tflops"), r.field("peak_tflops") + " is required"};
  }
  if (!r.ok()) return r.error();
  return g;
}

Result<LinkSpec> link_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  r.reject_unknown_keys({"id", "name", "scope", "bandwidth_GBps_per_dir", "busbw_GBps",
                         "allreduce_busbw_GBps", "half_peak_bytes", "latency_us", "source",
                         "confidence", "notes"});
  LinkSpec l;
  l.id = r.string("id", std::string());
  l.name = r.string("name", l.id.empty() ? std::string("custom link") : l.id);
  l.scope = r.choice("scope", {"intra_node", "inter_node"}, std::nullopt) == 0
                ? LinkScope::intra_node
                : LinkScope::inter_node;
  l.bandwidth_Bps_per_dir = r.number("bandwidth_GBps_per_dir", std::nullopt) * 1e9;
  // Without a measurement, the achievable bus bandwidth defaults to the line rate.
  l.busbw_Bps = r.number("busbw_GBps", l.bandwidth_Bps_per_dir / 1e9) * 1e9;
  l.allreduce_busbw_Bps = r.number("allreduce_busbw_GBps", l.busbw_Bps / 1e9) * 1e9;
  l.half_peak_bytes = r.number("half_peak_bytes", 0.0, 0, false);
  l.latency_s = r.number("latency_us", 0.0, 0, false) * 1e-6;
  if (!r.ok()) return r.error();
  return l;
}

Result<NodePreset> node_preset_from_json(const Json& j) {
  JsonReader r(j, "");
  r.reject_unknown_keys({"id", "name", "gpu", "gpus_per_node", "intra_node_link",
                         "inter_node_link", "nics_per_node", "source", "confidence", "notes"});
  NodePreset n;
  n.id = r.string("id", std::nullopt);
  n.name = r.string("name", n.id);
  n.gpu = r.string("gpu", std::nullopt);
  n.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", std::nullopt, 1, 4096));
  n.intra_node_link = r.string("intra_node_link", std::nullopt);
  n.inter_node_link = r.string("inter_node_link", std::nullopt);
  n.nics_per_node = static_cast<int>(r.integer("nics_per_node", std::nullopt, 1, 4096));
  if (!r.ok()) return r.error();
  return n;
}

Result<ModelSpec> model_from_json(const Json& j, const std::string& path, bool preset) {
  JsonReader r(j, path);
  r.reject_unknown_keys({"id", "name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden",
                         "vocab", "seq_len", "ffn_type", "position", "tied_embeddings", "norm",
                         "bias", "source", "notes"});
  ModelSpec m;
  m.id = preset ? r.string("id", std::nullopt) : r.string("id", std::string());
  m.name = r.string("name", m.id.empty() ? std::string("custom model") : m.id);
  m.layers = r.integer("layers", std::nullopt, 1, 100000);
  m.hidden = r.integer("hidden", std::nullopt, 1, 1 << 24);
  m.heads = r.integer("heads", std::nullopt, 1, 1 << 20);
  m.kv_heads = r.integer("kv_heads", m.heads, 1, 1 << 20);
  m.ffn_hidden = r.integer("ffn_hidden", std::nullopt, 1, 1 << 26);
  m.vocab = r.integer("vocab", std::nullopt, 1, 1 << 26);
  m.seq_len = r.integer("seq_len", std::nullopt, 1, 1 << 26);
  m.ffn_type = static_cast<FfnType>(
      r.choice("ffn_type", {"gelu", "relu", "squared_relu", "swiglu", "geglu"}, std::nullopt));
  m.position =
      static_cast<Position>(r.choice("position", {"learned", "rope"}, std::nullopt));
  m.tied_embeddings = r.boolean("tied_embeddings", std::nullopt);
  m.norm = static_cast<Norm>(r.choice("norm", {"layernorm", "rmsnorm"}, 0));
  m.bias = r.boolean("bias", m.norm == Norm::layernorm);
  if (preset) r.string("source", std::nullopt);
  if (!r.ok()) return r.error();
  if (m.hidden % m.heads != 0)
    return Error{ErrorCode::invalid_plan, r.field("hidden"),
                 fmt::format("{}={} must be divisible by {}={}", r.field("hidden"), m.hidden,
                             r.field("heads"), m.heads)};
  if (m.heads % m.kv_heads != 0)
    return Error{ErrorCode::invalid_plan, r.field("kv_heads"),
                 fmt::format("{}={} must divide {}={}", r.field("kv_heads"), m.kv_heads,
                             r.field("heads"), m.heads)};
  return m;
}

namespace {
Result<ArchCalibration> arch_calibration_from_json(const Json& j, const std::string& path) {
  JsonReader r(j, path);
  r.reject_unknown_keys({"gemm_efficiency", "fp8_gemm_efficiency", "gemm_overhead_us", "attention_efficiency",
                         "memory_efficiency", "layer_overhead_us", "fitted_on", "source",
                         "notes"});
  ArchCalibration c;
  c.gemm_efficiency = r.number("gemm_efficiency", std::nullopt);
  c.fp8_gemm_efficiency = r.number("fp8_gemm_efficiency", c.gemm_efficiency);
  c.gemm_overhead_s = r.number("gemm_overhead_us", std::nullopt, 0, false) * 1e-6;
  c.attention_efficiency = r.number("attention_efficiency", std::nullopt);
  c.memory_efficiency = r.number("memory_efficiency", std::nullopt);
  c.layer_overhead_s = r.number("layer_overhead_us", std::nullopt, 0, false) * 1e-6;
  if (!r.ok()) return r.error();
  return c;
}
}  // namespace

Result<Calibration> calibration_from_json(const Json& j) {
  JsonReader r(j, "");
  r.reject_unknown_keys({"source", "notes", "families", "fallback", "overlap_slowdown",
                         "framework_memory_gib", "framework_memory_fraction", "fitted_on"});
  Calibration c;
  c.overlap_slowdown = r.number("overlap_slowdown", std::nullopt, 0, false);
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
