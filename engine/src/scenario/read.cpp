// Scenario documents -> Scenario: every key read through the schema's tables (scenario/fields.h),
// each problem with its JSON path, and a multi-group cluster's stages or replicas placed on its
// groups. The plan's rules are rules.cpp; the calibration is applied between the two (load.cpp).
#include "stepcast/scenario.h"

#include <fmt/format.h>

#include <numeric>

#include "scenario/counts.h"
#include "scenario/fields.h"
#include "scenario/json_reader.h"
#include "scenario/specs_json.h"
#include "stepcast/limits.h"
#include "stepcast/rule_ids.h"

namespace stepcast {


namespace {

using detail::JsonReader;
using detail::plus;
using detail::times;

using detail::key_in;

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
                 fmt::format("{}={} is not a {} preset (see `stepcast presets {}s`)", field,
                             detail::echo(*v), kind, kind)};
  }
  if (v->is_object()) return from_json(*v, field);
  return Error{ErrorCode::type_error, field,
               fmt::format("{}={} must be a preset id or an object", field, detail::echo(*v))};
}

Result<LinkSpec> link_of(JsonReader& r, std::string_view key, const Catalog& catalog) {
  return preset_or_object<LinkSpec>(
      r, key, "link", [&](const std::string& id) { return catalog.find_link(id); },
      detail::link_from_json);
}

// A link where its scope does not belong (rule link_scope): `path="id" <why>`.
Error misplaced_link(const std::string& path, const LinkSpec& link, const char* why) {
  return Error{.code = ErrorCode::invalid_cluster,
               .path = path,
               .message = fmt::format("{}=\"{}\" {}", path, printable(link.id), why),
               .rule = Rule::link_scope};
}

Result<ClusterGroup> parse_group(const Json& j, const std::string& path, const Catalog& catalog) {
  JsonReader r(j, path);
  if (!r.ok()) return r.error();
  const auto keys = detail::cluster_keys();
  auto key = [&](std::string_view name) -> const KeyInfo& { return key_in(keys, name); };
  ClusterGroup g;
  if (r.has("node")) {
    r.reject_unknown_keys({"node", "nodes"});
    const std::string id = r.string("node", std::nullopt);
    g.nodes = static_cast<int>(r.integer(key("nodes")));
    if (!r.ok()) return r.error();
    const NodePreset* node = catalog.find_node(id);
    if (!node)
      return Error{ErrorCode::unknown_preset, r.field("node"),
                   fmt::format("{}={} is not a node preset (see `stepcast presets nodes`)",
                               r.field("node"), detail::echo(Json(id)))};
    g.node_id = node->id;
    g.gpu = *catalog.find_gpu(node->gpu);  // references checked when the catalog was loaded
    g.gpus_per_node = node->gpus_per_node;
    g.intra_node_link = *catalog.find_link(node->intra_node_link);
    g.inter_node_link = *catalog.find_link(node->inter_node_link);
    g.nics_per_node = node->nics_per_node;
    g.host_link_Bps_per_dir = node->host_link_Bps_per_dir;
    return g;
  }
  r.reject_unknown_keys({"gpu", "gpus_per_node", "nodes", "intra_node_link", "inter_node_link",
                         "nics_per_node", "host_link_GBps_per_dir"});
  g.gpus_per_node = static_cast<int>(r.integer(key("gpus_per_node")));
  g.nodes = static_cast<int>(r.integer(key("nodes")));
  g.nics_per_node = static_cast<int>(r.integer(key("nics_per_node"), g.gpus_per_node));
  g.host_link_Bps_per_dir = r.number(key("host_link_GBps_per_dir"), 0.0);
  if (!r.ok()) return r.error();
  auto gpu = preset_or_object<GpuSpec>(
      r, "gpu", "gpu", [&](const std::string& id) { return catalog.find_gpu(id); },
      detail::gpu_from_json);
  if (!gpu) return gpu.error();
  g.gpu = std::move(gpu).value();
  auto intra = link_of(r, "intra_node_link", catalog);
  if (!intra) return intra.error();
  auto inter = link_of(r, "inter_node_link", catalog);
  if (!inter) return inter.error();
  if (intra->scope != LinkScope::intra_node)
    return misplaced_link(r.field("intra_node_link"), *intra,
                          "is an inter-node link; an intra-node fabric is needed");
  if (inter->scope != LinkScope::inter_node)
    return misplaced_link(r.field("inter_node_link"), *inter,
                          "is an intra-node fabric; a network link is needed");
  g.intra_node_link = std::move(intra).value();
  g.inter_node_link = std::move(inter).value();
  return g;
}

// The GPUs of every group together, within what the engine counts (kMaxGpus).
std::optional<Error> check_gpu_count(const ClusterSpec& cluster) {
  int64_t gpus = 0;
  for (const auto& g : cluster.groups) gpus += int64_t{g.gpus_per_node} * g.nodes;
  if (gpus <= kMaxGpus) return std::nullopt;
  const bool one = cluster.groups.size() == 1;
  return Error{.code = ErrorCode::budget_exceeded,
               .path = one ? "cluster.nodes" : "cluster.groups",
               .message = fmt::format("the cluster has {} GPUs; at most {} are modelled", gpus,
                                      kMaxGpus),
               .rule = Rule::max_gpus,
               .values = {{"gpus", gpus}, {"limit", kMaxGpus}}};
}

Result<ClusterSpec> parse_cluster(const Json& j, const Catalog& catalog) {
  ClusterSpec cluster;
  if (!(j.is_object() && j.contains("groups"))) {
    auto g = parse_group(j, "cluster", catalog);
    if (!g) return g.error();
    cluster.groups.push_back(std::move(g).value());
    if (auto e = check_gpu_count(cluster)) return *e;
    return cluster;
  }
  JsonReader r(j, "cluster");
  r.reject_unknown_keys({"groups", "inter_group_link"});
  if (!r.ok()) return r.error();
  const Json& groups = j["groups"];
  if (!groups.is_array() || groups.empty())
    return Error{ErrorCode::type_error, "cluster.groups",
                 "cluster.groups must be a non-empty array of groups"};
  if (groups.size() > kMaxGroups)
    return Error{.code = ErrorCode::budget_exceeded,
                 .path = "cluster.groups",
                 .message = fmt::format("cluster.groups has {} entries; at most {} are modelled",
                                        groups.size(), kMaxGroups),
                 .rule = Rule::max_groups,
                 .values = {{"entries", groups.size()}, {"limit", kMaxGroups}}};
  for (size_t i = 0; i < groups.size(); ++i) {
    auto g = parse_group(groups[i], fmt::format("cluster.groups[{}]", i), catalog);
    if (!g) return g.error();
    cluster.groups.push_back(std::move(g).value());
  }
  if (auto e = check_gpu_count(cluster)) return *e;
  if (r.has("inter_group_link")) {
    auto link = link_of(r, "inter_group_link", catalog);
    if (!link) return link.error();
    if (link->scope != LinkScope::inter_node)
      return misplaced_link("cluster.inter_group_link", *link,
                            "is an intra-node fabric; a network link is needed between groups");
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

// "auto" (or a missing key) leaves a count to the engine's balancer (0).
int64_t count_or_auto(JsonReader& e, const KeyInfo& k) {
  const Json* v = e.raw(k.name);
  if (!v || (v->is_string() && v->get_ref<const std::string&>() == "auto")) return 0;
  return e.integer(k.name, std::nullopt, static_cast<int64_t>(k.min), static_cast<int64_t>(k.max));
}

// Reads the entries of plan.stages or plan.replicas, each with `each`.
template <class Each>
void read_entries(JsonReader& r, std::string_view key, std::span<const KeyInfo> keys,
                  size_t max_entries, Each each) {
  const Json* list = r.raw(key);
  if (!list) return;
  const std::string path = r.field(key);
  if (!list->is_array() || list->empty()) {
    r.fail(ErrorCode::type_error, path, path + " must be a non-empty array");
    return;
  }
  if (list->size() > max_entries) {
    r.fail(Error{.code = ErrorCode::budget_exceeded,
                 .path = path,
                 .message = fmt::format("{} has {} entries; at most {} are modelled", path,
                                        list->size(), max_entries),
                 .rule = Rule::max_list_entries,
                 .values = {{"entries", list->size()}, {"limit", max_entries}}});
    return;
  }
  static const std::vector<std::string_view> names = detail::names_of(keys);
  for (size_t i = 0; i < list->size(); ++i) {
    JsonReader e((*list)[i], fmt::format("{}[{}]", path, i));
    e.reject_unknown(names);
    each(e);
    r.absorb(e.errors());
  }
}

const KeyInfo& plan_key(std::string_view name) {
  for (const auto& f : detail::plan_fields())
    if (f.info.name == name) return f.info;
  std::abort();  // a fixed table: a missing name is a typo in the engine
}

// The plan's keys, through the schema's table. The framework profile fills the flags the plan
// leaves out; dp is derived from the cluster when left out.
Plan parse_plan(JsonReader& r, int64_t cluster_gpus, const Catalog& catalog) {
  static const std::vector<std::string_view> names = detail::names_of(detail::plan_fields());
  r.reject_unknown(names);
  Plan p;
  const KeyInfo& framework = plan_key("framework");
  p.framework = std::string(framework.choices[static_cast<size_t>(r.choice(framework))]);
  const FrameworkProfile* profile = catalog.find_framework(p.framework);
  if (!profile) {  // a build whose presets lack a profile the schema names: a packaging defect
    r.fail(ErrorCode::unknown_preset, "plan.framework",
           fmt::format("plan.framework={} has no profile in this build's presets", p.framework));
    return p;
  }
  p.execution = profile->execution;
  // The profile's values for what the plan leaves out, the plan's own for the rest.
  JsonReader m = r.with_defaults(profile->plan_defaults);
  for (const auto& f : detail::plan_fields())
    if (f.read && f.info.name != "framework") f.read(m, f.info, p);
  r.absorb(m.errors());
  // plan.zero_stage and plan.distributed_optimizer say one thing twice (Megatron's distributed
  // optimizer shards what ZeRO stage 1 shards): the one the plan states sets the other over the
  // profile's default (zero_stage 0 on megatron-core is no sharding, not the profile's
  // distributed optimizer), and two stated values must agree. Neither stated: the profile's, the
  // larger sharding of the two (Plan::effective_zero_stage).
  const bool zero_stated = r.has("zero_stage"), sharded_stated = r.has("distributed_optimizer");
  if (zero_stated && sharded_stated && (p.zero_stage >= 1) != p.distributed_optimizer) {
    Error e{ErrorCode::invalid_plan, "plan.distributed_optimizer",
            fmt::format("plan.distributed_optimizer={} contradicts plan.zero_stage={}: the "
                        "distributed optimizer is ZeRO stage 1 or above (give one of the two)",
                        p.distributed_optimizer, p.zero_stage),
            {"plan.zero_stage"}};
    e.rule = Rule::optimizer_sharding;
    e.values = {{"zero_stage", p.zero_stage}, {"distributed_optimizer", p.distributed_optimizer}};
    r.fail(std::move(e));
  } else if (zero_stated) {
    p.distributed_optimizer = p.zero_stage >= 1;
  } else if (sharded_stated) {
    p.zero_stage = p.distributed_optimizer ? std::max(p.zero_stage, 1) : 0;
  }
  // Profile values that only apply where they can (a plan's own are checked below, or warned
  // about as having no effect): sequence parallelism needs TP, TP overlap needs TP with sequence
  // parallelism (Transformer Engine overlaps its all-gathers and reduce-scatters), fp8
  // parameters need fp8 GEMMs.
  if (!r.has("sequence_parallel"))
    p.sequence_parallel = p.sequence_parallel && p.sequence_parallel_acts();
  if (!r.has("tp_comm_overlap"))
    p.tp_comm_overlap =
        p.tp_comm_overlap && p.tp_comm_overlap_allowed() && p.tp_comm_overlap_acts();
  // The distributed optimizer's parameter all-gather overlaps through the gradient buckets
  // (Megatron-LM asserts --overlap-grad-reduce with it); with nothing sharded there is none.
  if (!r.has("overlap_param_gather"))
    p.overlap_param_gather = p.overlap_param_gather && p.param_gather_overlap_acts() &&
                             p.param_gather_overlap_allowed();
  if (!r.has("fp8_param_gather"))
    p.fp8_param_gather = p.fp8_param_gather &&
                         (p.precision == Precision::fp8 || p.precision == Precision::mxfp8);
  // dp may be left out: it is then whatever the cluster leaves (GPUs / (tp pp cp)), or the
  // number of replicas plan.replicas lists.
  const int64_t model_parallel = int64_t{p.tp} * p.pp * p.cp;
  int64_t derived_dp = std::max<int64_t>(1, cluster_gpus / model_parallel);
  if (const Json* replicas = r.raw("replicas"); replicas && replicas->is_array()) {
    // (Counts out of their range count as 1 here; the entry's own check reports them.)
    const KeyInfo& count = key_in(detail::replica_keys(), "count");
    int64_t sum = 0;
    for (size_t i = 0; i < std::min(replicas->size(), kMaxReplicaSets); ++i) {
      const Json& rep = (*replicas)[i];
      const Json* n = rep.is_object() && rep.contains("count") ? &rep["count"] : nullptr;
      const bool valid = n && n->is_number_integer() && n->get<int64_t>() >= count.min &&
                         n->get<int64_t>() <= count.max;
      sum += valid ? n->get<int64_t>() : 1;
    }
    derived_dp = std::max<int64_t>(1, sum);
  }
  p.dp_derived = !r.has("dp");
  p.dp = static_cast<int>(r.integer(plan_key("dp"), std::min<int64_t>(derived_dp, 1 << 24)));
  read_entries(r, "stages", detail::stage_keys(), kMaxStageEvaluations, [&](JsonReader& e) {
    StageAssignment s;
    s.group = static_cast<int>(e.integer(key_in(detail::stage_keys(), "group")));
    s.layers = count_or_auto(e, key_in(detail::stage_keys(), "layers"));
    p.stages.push_back(s);
  });
  read_entries(r, "replicas", detail::replica_keys(), kMaxReplicaSets, [&](JsonReader& e) {
    ReplicaAssignment a;
    a.group = static_cast<int>(e.integer(key_in(detail::replica_keys(), "group")));
    a.count = static_cast<int>(e.integer(key_in(detail::replica_keys(), "count")));
    a.micro_batches = count_or_auto(e, key_in(detail::replica_keys(), "micro_batches"));
    p.replicas.push_back(a);
  });
  return p;
}

// Where Megatron puts the stages of a plan on a cluster of several groups when the plan does not
// say: ranks in order (tp fastest, then cp, dp, pp) over the groups in order, so stage i holds
// ranks [i·S, (i+1)·S) with S = tp·cp·dp; it runs on a group when all of them are there. When a
// stage would straddle two groups, whole replicas (tp·pp·cp ranks each, pp = 1) may still fit
// each group. Layers and micro-batches are left to the balancer ("auto").
void place_on_groups(Scenario& s) {
  Plan& p = s.plan;
  if (s.cluster.groups.size() < 2 || !p.stages.empty() || !p.replicas.empty()) return;
  if (p.pp > kMaxStageEvaluations) return;  // over the budget: check_scenario says so
  std::vector<int64_t> first;  // first rank of each group
  int64_t rank = 0;
  for (const auto& g : s.cluster.groups) {
    first.push_back(rank);
    rank += g.gpus();
  }
  // Ranks go in order, so each search starts at the group of the one before.
  size_t from = 0;
  auto group_of = [&](int64_t begin, int64_t size) -> int {
    for (size_t& g = from; g < first.size(); ++g) {
      const int64_t end = first[g] + s.cluster.groups[g].gpus();
      if (begin >= first[g] && begin + size <= end) return static_cast<int>(g);
    }
    return -1;
  };
  const int64_t per_stage = times(times(p.tp, p.cp), p.dp);
  if (times(per_stage, p.pp) == rank) {
    std::vector<StageAssignment> stages;
    for (int i = 0; i < p.pp; ++i) {
      const int g = group_of(i * per_stage, per_stage);
      if (g < 0) {
        stages.clear();
        break;
      }
      stages.push_back({g, 0});
    }
    if (!stages.empty()) {
      p.stages = std::move(stages);
      return;
    }
  }
  const int64_t per_replica = int64_t{p.tp} * p.cp * p.pp;
  from = 0;
  if (p.pp == 1 && times(per_replica, p.dp) == rank) {
    std::vector<ReplicaAssignment> sets;
    for (int r = 0; r < p.dp; ++r) {
      const int g = group_of(r * per_replica, per_replica);
      if (g < 0) return;
      if (!sets.empty() && sets.back().group == g)
        ++sets.back().count;
      else
        sets.push_back({g, 1, 0});
    }
    p.replicas = std::move(sets);
  }
}

}  // namespace

// Reads the document's keys into a scenario; every problem goes to `errors`. The plan's keys are
// read even when the model or the cluster is wrong, so that every bad key shows at once.
std::optional<Scenario> read_keys(const Json& doc, const Catalog& catalog,
                                  std::vector<Error>& errors) {
  JsonReader r(doc, "");
  static const std::vector<std::string_view> names = detail::names_of(detail::scenario_keys());
  r.reject_unknown(names);
  if (!r.is_object()) {
    errors = r.errors();
    return std::nullopt;
  }
  Scenario s;
  bool model_ok = false;
  auto model = preset_or_object<ModelSpec>(
      r, "model", "model", [&](const std::string& id) { return catalog.find_model(id); },
      [](const Json& j, const std::string& path) {
        return detail::model_from_json(j, path, /*preset=*/false);
      });
  if (model) {
    s.model = std::move(model).value();
    model_ok = true;
  } else {
    r.fail(model.error());
  }
  s.model.seq_len = r.integer(key_in(detail::scenario_keys(), "seq_len"),
                              model_ok ? s.model.seq_len : 1);
  s.name = r.string(key_in(detail::scenario_keys(), "name"));

  if (const Json* cluster = r.raw("cluster")) {
    auto parsed = parse_cluster(*cluster, catalog);
    if (parsed)
      s.cluster = std::move(parsed).value();
    else
      r.fail(parsed.error());
  } else {
    r.fail(ErrorCode::missing_key, "cluster", "cluster is required");
  }

  if (const Json* plan = r.raw("plan")) {
    JsonReader pr(*plan, "plan");
    s.plan = parse_plan(pr, s.cluster.gpus(), catalog);
    r.absorb(pr.errors());
  } else {
    r.fail(ErrorCode::missing_key, "plan", "plan is required");
  }
  errors = r.errors();
  if (!errors.empty()) return std::nullopt;
  s.calibration = catalog.calibration;
  s.framework = catalog.find_framework(s.plan.framework);
  place_on_groups(s);
  return s;
}

Result<Scenario> scenario_without_calibration(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  auto s = read_keys(doc, catalog, errors);
  if (!s) return errors.front();
  if (!check_scenario(*s, &errors)) return errors.front();
  return std::move(*s);
}

}  // namespace stepcast
