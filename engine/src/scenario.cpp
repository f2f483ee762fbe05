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
    r.reject_unknown_keys({"groups", "inter_group_link"});
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
    if (r.has("inter_group_link")) {
      auto link = preset_or_object<LinkSpec>(
          r, "inter_group_link", "link",
          [&](const std::string& id) { return catalog.find_link(id); }, detail::link_from_json);
      if (!link) return link.error();
      if (link->scope != LinkScope::inter_node)
        return Error{ErrorCode::invalid_plan, "cluster.inter_group_link",
                     fmt::format("cluster.inter_group_link=\"{}\" is an intra-node fabric; a "
                                 "network link is needed between groups",
                                 link->id)};
      cluster.inter_group_link = std::move(link).value();
    } else if (cluster.groups.size() > 1) {
      // Without a stated link, groups talk over the slowest of their own networks.
      cluster.inter_group_link = cluster.groups.front().inter_node_link;
      for (const auto& g : cluster.groups)
        if (g.inter_node_link.busbw_Bps < cluster.inter_group_link.busbw_Bps)
          cluster.inter_group_link = g.inter_node_link;
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
                         "grad_reduce_in_fp32", "pp_scatter_gather", "stages", "replicas"});
  Plan p;
  p.tp = static_cast<int>(r.integer("tp", 1, 1, 1 << 20));
  p.pp = static_cast<int>(r.integer("pp", 1, 1, 1 << 20));
  p.cp = static_cast<int>(r.integer("cp", 1, 1, 1 << 20));
  if (!r.ok()) return r.error();
  // dp may be left out: it is then whatever the cluster leaves (GPUs / (tp pp cp)).
  const int64_t model_parallel = int64_t{p.tp} * p.pp * p.cp;
  int64_t derived_dp = std::max<int64_t>(1, cluster_gpus / model_parallel);
  if (const Json* replicas = r.raw("replicas"); replicas && replicas->is_array()) {
    int64_t sum = 0;  // dp is the number of replicas listed
    for (const auto& rep : *replicas)
      sum += rep.is_object() && rep.contains("count") && rep["count"].is_number_integer()
                 ? rep["count"].get<int64_t>()
                 : 1;
    derived_dp = std::max<int64_t>(1, sum);
  }
  p.dp_derived = !r.has("dp");
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
  // "auto" (or a missing key) leaves a count to the engine's balancer (0).
  auto count_or_auto = [](JsonReader& e, std::string_view key, int64_t max) -> int64_t {
    const Json* v = e.raw(key);
    if (!v || (v->is_string() && v->get_ref<const std::string&>() == "auto")) return 0;
    return e.integer(key, std::nullopt, 1, max);
  };
  auto entries = [&](std::string_view key, auto&& each) -> std::optional<Error> {
    const Json* list = r.raw(key);
    if (!list) return std::nullopt;
    const std::string path = r.field(key);
    if (!list->is_array() || list->empty())
      return Error{ErrorCode::type_error, path, path + " must be a non-empty array"};
    for (size_t i = 0; i < list->size(); ++i) {
      JsonReader e((*list)[i], fmt::format("{}[{}]", path, i));
      each(e);
      if (!e.ok()) return e.error();
    }
    return std::nullopt;
  };
  if (auto e = entries("stages", [&](JsonReader& e) {
        e.reject_unknown_keys({"group", "layers"});
        StageAssignment s;
        s.group = static_cast<int>(e.integer("group", 0, 0, 1 << 16));
        s.layers = count_or_auto(e, "layers", 100000);
        p.stages.push_back(s);
      }))
    return *e;
  if (auto e = entries("replicas", [&](JsonReader& e) {
        e.reject_unknown_keys({"group", "count", "micro_batches"});
        ReplicaAssignment a;
        a.group = static_cast<int>(e.integer("group", 0, 0, 1 << 16));
        a.count = static_cast<int>(e.integer("count", 1, 1, 1 << 24));
        a.micro_batches = count_or_auto(e, "micro_batches", int64_t{1} << 40);
        p.replicas.push_back(a);
      }))
    return *e;
  return p;
}

std::optional<Error> plan_error(std::string path, std::string message) {
  return Error{ErrorCode::invalid_plan, std::move(path), std::move(message)};
}

// Stage and replica layouts: every group used exactly, layers and micro-batches adding up.
std::optional<Error> validate_layout(const Scenario& s) {
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int groups = static_cast<int>(s.cluster.groups.size());
  if (groups > 1 && p.stages.empty() && p.replicas.empty())
    return plan_error("plan.stages",
                      fmt::format("cluster has {} groups: give plan.stages (which group runs each "
                                  "pipeline stage) or plan.replicas (which group runs each "
                                  "data-parallel replica)",
                                  groups));
  if (!p.stages.empty() && !p.replicas.empty())
    return plan_error("plan.replicas",
                      "plan.stages and plan.replicas together are not modelled: give one");
  std::vector<int64_t> used(groups, 0);
  const int64_t mp = int64_t{p.tp} * p.cp;
  if (!p.stages.empty()) {
    if (static_cast<int>(p.stages.size()) != p.pp)
      return plan_error("plan.stages", fmt::format("plan.stages has {} entries but plan.pp={}",
                                                   p.stages.size(), p.pp));
    int64_t fixed = 0, autos = 0;
    for (size_t i = 0; i < p.stages.size(); ++i) {
      const auto& st = p.stages[i];
      const std::string path = fmt::format("plan.stages[{}]", i);
      if (st.group >= groups)
        return plan_error(path + ".group", fmt::format("{}.group={} but the cluster has {} "
                                                       "group(s)",
                                                       path, st.group, groups));
      if (st.layers > 0 && st.layers % p.vpp != 0)
        return plan_error(path + ".layers", fmt::format("{}.layers={} must be divisible by "
                                                        "plan.vpp={}",
                                                        path, st.layers, p.vpp));
      fixed += st.layers;
      autos += st.layers == 0;
      used[st.group] += mp * p.dp;
    }
    if (autos == 0 && fixed != m.layers)
      return plan_error("plan.stages", fmt::format("plan.stages hold {} layers but model.layers={}",
                                                   fixed, m.layers));
    if (autos > 0 && (m.layers - fixed < autos * p.vpp || (m.layers - fixed) % p.vpp != 0))
      return plan_error("plan.stages",
                        fmt::format("plan.stages: {} layers left for {} \"auto\" stage(s) "
                                    "(model.layers={}, each stage needs a multiple of vpp={})",
                                    m.layers - fixed, autos, m.layers, p.vpp));
  } else if (!p.replicas.empty()) {
    int64_t replicas = 0, fixed = 0, autos = 0;
    for (size_t i = 0; i < p.replicas.size(); ++i) {
      const auto& rep = p.replicas[i];
      const std::string path = fmt::format("plan.replicas[{}]", i);
      if (rep.group >= groups)
        return plan_error(path + ".group", fmt::format("{}.group={} but the cluster has {} "
                                                       "group(s)",
                                                       path, rep.group, groups));
      replicas += rep.count;
      fixed += rep.count * rep.micro_batches;
      autos += rep.micro_batches == 0 ? rep.count : 0;
      used[rep.group] += mp * p.pp * rep.count;
    }
    if (replicas != p.dp)
      return plan_error("plan.replicas", fmt::format("plan.replicas count {} replicas but "
                                                     "plan.dp={}",
                                                     replicas, p.dp));
    if (p.global_batch % p.micro_batch != 0)
      return plan_error("plan.global_batch",
                        fmt::format("plan.global_batch={} must be divisible by "
                                    "plan.micro_batch={}",
                                    p.global_batch, p.micro_batch));
    const int64_t total = p.global_batch / p.micro_batch;
    if ((autos == 0 && fixed != total) || (autos > 0 && total - fixed < autos))
      return plan_error("plan.replicas",
                        fmt::format("plan.replicas take {} micro-batches{} but global_batch / "
                                    "micro_batch = {}",
                                    fixed, autos > 0 ? " before the \"auto\" ones" : "", total));
  } else {
    used[0] = mp * p.pp * p.dp;
  }
  if (groups > 1 || !p.stages.empty() || !p.replicas.empty())
    for (int g = 0; g < groups; ++g)
      if (used[g] != s.cluster.groups[g].gpus())
        return plan_error(p.replicas.empty() ? "plan.stages" : "plan.replicas",
                          fmt::format("the plan uses {} GPUs of cluster.groups[{}]"
                                                     " but it has {}",
                                                     used[g], g, s.cluster.groups[g].gpus()));
  return std::nullopt;
}

}  // namespace

std::optional<Error> validate(const Scenario& s) {
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus();
  const int64_t product = int64_t{p.tp} * p.pp * p.cp * p.dp;
  // What the model allows first (the control that causes it), then what the cluster holds.
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
  if (p.stages.empty() && m.layers % (int64_t{p.pp} * p.vpp) != 0)
    return plan_error(p.vpp > 1 ? "plan.vpp" : "plan.pp",
                      fmt::format("model.layers={} must be divisible by plan.pp*plan.vpp={}*{}={}",
                                  m.layers, p.pp, p.vpp, int64_t{p.pp} * p.vpp));
  if (auto e = validate_layout(s)) return e;
  if (product != gpus && p.dp_derived)
    return plan_error("plan.dp",
                      fmt::format("the cluster's {} GPUs are not divisible by "
                                  "tp*pp*cp={}*{}*{}={}",
                                  gpus, p.tp, p.pp, p.cp, int64_t{p.tp} * p.pp * p.cp));
  if (product != gpus)
    return plan_error("plan.dp", fmt::format("plan: tp*pp*cp*dp={}*{}*{}*{}={} must equal the "
                                             "cluster's GPU count {}",
                                             p.tp, p.pp, p.cp, p.dp, product, gpus));
  if (p.replicas.empty() && p.global_batch % (p.micro_batch * p.dp) != 0)
    return plan_error("plan.global_batch",
                      fmt::format("plan.global_batch={} must be divisible by "
                                  "plan.micro_batch*plan.dp={}*{}={}",
                                  p.global_batch, p.micro_batch, p.dp, p.micro_batch * p.dp));
  if (p.vpp > 1 && p.replicas.empty() && p.micro_batches() % p.pp != 0)
    return plan_error("plan.global_batch",
                      fmt::format("with plan.vpp={} the micro-batches per replica ({}) must be a "
                                  "multiple of plan.pp={}: Megatron's interleaved schedule runs "
                                  "them in groups of pp",
                                  p.vpp, p.micro_batches(), p.pp));
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
