#include "stepcast/scenario.h"

#include <fmt/format.h>

#include "detail/json_reader.h"
#include "detail/specs_json.h"

namespace stepcast {

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

namespace {

using detail::JsonReader;

// A preset id, or an inline object of the same schema.
template <class Spec, class Find, class FromJson>
Result<Spec> preset_or_object(JsonReader& r, std::string_view key, const char* kind, Find find,
                              FromJson from_json) {
  const Json* v = r.raw(key);
  const std::string field = r.field(key);
  if (!v) return Error{ErrorCode::missing_key, field, field + " is required"};
  if (v->is_string()) {
    const auto& id = v->get_ref<const std::string&>();
    if (const Spec* spec = find(id)) return *spec;
    return Error{ErrorCode::unknown_preset, field,
                 fmt::format("{}=\"{}\" is not a {} preset (see `stepcast presets {}s`)", field,
                             id, kind, kind)};
  }
  if (v->is_object()) return from_json(*v, field);
  return Error{ErrorCode::type_error, field,
               fmt::format("{}={} must be a preset id or an object", field, v->dump())};
}

Result<ClusterGroup> parse_group(const Json& j, const std::string& path, const Catalog& catalog) {
  JsonReader r(j, path);
  if (!r.ok()) return r.error();
  ClusterGroup g;
  if (r.has("node")) {
    r.reject_unknown_keys({"node", "nodes"});
    const std::string id = r.string("node", std::nullopt);
    g.nodes = static_cast<int>(r.integer("nodes", std::nullopt, 1, 1 << 20));
    if (!r.ok()) return r.error();
    const NodePreset* node = catalog.find_node(id);
    if (!node)
      return Error{ErrorCode::unknown_preset, r.field("node"),
                   fmt::format("{}=\"{}\" is not a node preset (see `stepcast presets nodes`)",
                               r.field("node"), id)};
    g.node_id = node->id;
    g.gpu = *catalog.find_gpu(node->gpu);  // references checked when the catalog was loaded
    g.gpus_per_node = node->gpus_per_node;
    g.intra_node_link = *catalog.find_link(node->intra_node_link);
    g.inter_node_link = *catalog.find_link(node->inter_node_link);
    g.nics_per_node = node->nics_per_node;
    return g;
  }
  r.reject_unknown_keys({"gpu", "gpus_per_node", "nodes", "intra_node_link", "inter_node_link",
                         "nics_per_node"});
  g.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", std::nullopt, 1, 4096));
  g.nodes = static_cast<int>(r.integer("nodes", std::nullopt, 1, 1 << 20));
  g.nics_per_node = static_cast<int>(r.integer("nics_per_node", g.gpus_per_node, 1, 4096));
  if (!r.ok()) return r.error();
  auto gpu = preset_or_object<GpuSpec>(
      r, "gpu", "gpu", [&](const std::string& id) { return catalog.find_gpu(id); },
      detail::gpu_from_json);
  if (!gpu) return gpu.error();
  g.gpu = std::move(gpu).value();
  auto find_link = [&](const std::string& id) { return catalog.find_link(id); };
  auto intra = preset_or_object<LinkSpec>(r, "intra_node_link", "link", find_link,
                                          detail::link_from_json);
  if (!intra) return intra.error();
  auto inter = preset_or_object<LinkSpec>(r, "inter_node_link", "link", find_link,
                                          detail::link_from_json);
  if (!inter) return inter.error();
  if (intra->scope != LinkScope::intra_node)
    return Error{ErrorCode::invalid_plan, r.field("intra_node_link"),
                 fmt::format("{}=\"{}\" is an inter-node link; an intra-node fabric is needed",
                             r.field("intra_node_link"), intra->id)};
  if (inter->scope != LinkScope::inter_node)
    return Error{ErrorCode::invalid_plan, r.field("inter_node_link"),
                 fmt::format("{}=\"{}\" is an intra-node fabric; a network link is needed",
                             r.field("inter_node_link"), inter->id)};
  g.intra_node_link = std::move(intra).value();
  g.inter_node_link = std::move(inter).value();
  return g;
}

Result<ClusterSpec> parse_cluster(const Json& j, const Catalog& catalog) {
  ClusterSpec cluster;
  if (j.is_object() && j.contains("groups")) {
    JsonReader r(j, "cluster");
    r.reject_unknown_keys({"groups"});
    if (!r.ok()) return r.error();
    const Json& groups = j["groups"];
    if (!groups.is_array() || groups.empty())
      return Error{ErrorCode::type_error, "cluster.groups",
                   "cluster.groups must be a non-empty array of groups"};
    for (size_t i = 0; i < groups.size(); ++i) {
      auto g = parse_group(groups[i], fmt::format("cluster.groups[{}]", i), catalog);
      if (!g) return g.error();
      cluster.groups.push_back(std::move(g).value());
    }
    return cluster;
  }
  auto g = parse_group(j, "cluster", catalog);
  if (!g) return g.error();
  cluster.groups.push_back(std::move(g).value());
  return cluster;
}

Result<Plan> parse_plan(const Json& j, int cluster_gpus) {
  JsonReader r(j, "plan");
  r.reject_unknown_keys({"tp", "pp", "dp", "cp", "vpp", "micro_batch", "global_batch",
                         "sequence_parallel", "recompute", "distributed_optimizer", "zero_stage",
                         "precision", "flash_attention", "overlap_grad_reduce",
                         "overlap_param_gather", "tp_comm_overlap", "overlap_p2p",
                         "grad_reduce_in_fp32", "pp_scatter_gather"});
  Plan p;
  p.tp = static_cast<int>(r.integer("tp", 1, 1, 1 << 20));
  p.pp = static_cast<int>(r.integer("pp", 1, 1, 1 << 20));
  p.cp = static_cast<int>(r.integer("cp", 1, 1, 1 << 20));
  if (!r.ok()) return r.error();
  // dp may be left out: it is then whatever the cluster leaves (GPUs / (tp pp cp)).
  const int64_t model_parallel = int64_t{p.tp} * p.pp * p.cp;
  const int64_t derived_dp = std::max<int64_t>(1, cluster_gpus / model_parallel);
  p.dp = static_cast<int>(r.integer("dp", derived_dp, 1, 1 << 24));
  p.vpp = static_cast<int>(r.integer("vpp", 1, 1, 1 << 16));
  p.micro_batch = r.integer("micro_batch", 1, 1, 1 << 24);
  p.global_batch = r.integer("global_batch", std::nullopt, 1, int64_t{1} << 40);
  p.sequence_parallel = r.boolean("sequence_parallel", false);
  p.recompute = static_cast<Recompute>(r.choice("recompute", {"none", "selective", "full"}, 0));
  p.distributed_optimizer = r.boolean("distributed_optimizer", false);
  p.zero_stage = static_cast<int>(r.integer("zero_stage", 0, 0, 3));
  p.precision =
      static_cast<Precision>(r.choice("precision", {"fp32", "fp16", "bf16", "fp8"}, 2));
  p.flash_attention = r.boolean("flash_attention", true);
  p.overlap_grad_reduce = r.boolean("overlap_grad_reduce", true);
  p.overlap_param_gather = r.boolean("overlap_param_gather", true);
  p.tp_comm_overlap = r.boolean("tp_comm_overlap", false);
  p.overlap_p2p = r.boolean("overlap_p2p", true);
  p.grad_reduce_in_fp32 = r.boolean("grad_reduce_in_fp32", true);
  p.pp_scatter_gather = r.boolean("pp_scatter_gather", false);
  if (!r.ok()) return r.error();
  return p;
}

std::optional<Error> plan_error(std::string path, std::string message) {
  return Error{ErrorCode::invalid_plan, std::move(path), std::move(message)};
}

}  // namespace

std::optional<Error> validate(const Scenario& s) {
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus();
  const int64_t product = int64_t{p.tp} * p.pp * p.cp * p.dp;
  if (s.cluster.groups.size() != 1)
    return plan_error("cluster.groups",
                      "cluster.groups: clusters of several GPU groups are not modelled yet; give "
                      "one group");
  if (product != gpus)
    return plan_error("plan.dp", fmt::format("plan: tp*pp*cp*dp={}*{}*{}*{}={} must equal the "
                                             "cluster's GPU count {}",
                                             p.tp, p.pp, p.cp, p.dp, product, gpus));
  if (m.heads % p.tp != 0)
    return plan_error("plan.tp",
                      fmt::format("plan.tp={} must divide model.heads={}", p.tp, m.heads));
  if (m.kv_heads % p.tp != 0)
    return plan_error("plan.tp",
                      fmt::format("plan.tp={} must divide model.kv_heads={}", p.tp, m.kv_heads));
  if (m.ffn_hidden % p.tp != 0)
    return plan_error("plan.tp", fmt::format("plan.tp={} must divide model.ffn_hidden={}", p.tp,
                                             m.ffn_hidden));
  if (p.vpp > 1 && p.pp == 1)
    return plan_error("plan.vpp", fmt::format("plan.vpp={} needs plan.pp>1 (the interleaved "
                                              "schedule splits pipeline stages)",
                                              p.vpp));
  if (m.layers % (int64_t{p.pp} * p.vpp) != 0)
    return plan_error(p.vpp > 1 ? "plan.vpp" : "plan.pp",
                      fmt::format("model.layers={} must be divisible by plan.pp*plan.vpp={}*{}={}",
                                  m.layers, p.pp, p.vpp, int64_t{p.pp} * p.vpp));
  if (p.global_batch % (p.micro_batch * p.dp) != 0)
    return plan_error("plan.global_batch",
                      fmt::format("plan.global_batch={} must be divisible by "
                                  "plan.micro_batch*plan.dp={}*{}={}",
                                  p.global_batch, p.micro_batch, p.dp, p.micro_batch * p.dp));
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0)
    return plan_error("plan.cp", fmt::format("seq_len={} must be divisible by 2*plan.cp={} "
                                             "(Megatron splits each sequence into 2*cp chunks)",
                                             m.seq_len, 2 * p.cp));
  for (const auto& g : s.cluster.groups) {
    if (!g.gpu.peak_flops(p.precision)) {
      std::string have;
      for (Precision q : {Precision::fp32, Precision::fp16, Precision::bf16, Precision::fp8})
        if (g.gpu.peak_flops(q)) have += (have.empty() ? "" : ", ") + std::string(to_string(q));
      return plan_error("plan.precision",
                        fmt::format("plan.precision={} is not supported by {} (it has: {})",
                                    to_string(p.precision), g.gpu.name, have));
    }
  }
  return std::nullopt;
}

Result<Scenario> scenario_from_json(const Json& doc, const Catalog& catalog) {
  JsonReader r(doc, "");
  r.reject_unknown_keys({"model", "cluster", "plan", "seq_len", "name"});
  if (!r.ok()) return r.error();
  Scenario s;
  auto model = preset_or_object<ModelSpec>(
      r, "model", "model", [&](const std::string& id) { return catalog.find_model(id); },
      [](const Json& j, const std::string& path) {
        return detail::model_from_json(j, path, /*preset=*/false);
      });
  if (!model) return model.error();
  s.model = std::move(model).value();
  s.model.seq_len = r.integer("seq_len", s.model.seq_len, 1, 1 << 26);
  if (!r.ok()) return r.error();

  const Json* cluster = r.raw("cluster");
  if (!cluster) return Error{ErrorCode::missing_key, "cluster", "cluster is required"};
  auto parsed_cluster = parse_cluster(*cluster, catalog);
  if (!parsed_cluster) return parsed_cluster.error();
  s.cluster = std::move(parsed_cluster).value();

  const Json* plan = r.raw("plan");
  if (!plan) return Error{ErrorCode::missing_key, "plan", "plan is required"};
  auto parsed_plan = parse_plan(*plan, s.cluster.gpus());
  if (!parsed_plan) return parsed_plan.error();
  s.plan = *parsed_plan;
  s.calibration = catalog.calibration;
  if (auto e = validate(s)) return *e;
  return s;
}

Result<Scenario> parse_scenario(std::string_view text, const Catalog& catalog) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Error{ErrorCode::parse_error, "", "the scenario is not valid JSON"};
  return scenario_from_json(doc, catalog);
}

}  // namespace stepcast
