// Scenario documents -> Scenario: the keys (read through the schema's tables, detail/fields.h),
// then the plan's rules (check_scenario), each problem with its JSON path.
#include "stepcast/scenario.h"
#include "stepcast/pipeline_layout.h"
#include "stepcast/ranks.h"

#include <fmt/format.h>

#include <numeric>

#include "detail/fields.h"
#include "detail/json_reader.h"
#include "detail/specs_json.h"
#include "stepcast/limits.h"

namespace stepcast {

namespace {

using detail::JsonReader;

// a·b for counts (GPUs, stages, replicas) of a plan not yet checked: each may be up to 2^24, so
// the product of four can pass 2^63; it stops at 2^62, which no count reaches.
constexpr int64_t kCeiling = int64_t{1} << 62;
int64_t times(int64_t a, int64_t b) {
  return b != 0 && a > kCeiling / b ? kCeiling : std::min(a * b, kCeiling);
}
int64_t plus(int64_t a, int64_t b) { return std::min(a, kCeiling - b) + b; }
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
    return g;
  }
  r.reject_unknown_keys({"gpu", "gpus_per_node", "nodes", "intra_node_link", "inter_node_link",
                         "nics_per_node"});
  g.gpus_per_node = static_cast<int>(r.integer(key("gpus_per_node")));
  g.nodes = static_cast<int>(r.integer(key("nodes")));
  g.nics_per_node = static_cast<int>(r.integer(key("nics_per_node"), g.gpus_per_node));
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
    return Error{ErrorCode::invalid_cluster, r.field("intra_node_link"),
                 fmt::format("{}=\"{}\" is an inter-node link; an intra-node fabric is needed",
                             r.field("intra_node_link"), printable(intra->id))};
  if (inter->scope != LinkScope::inter_node)
    return Error{ErrorCode::invalid_cluster, r.field("inter_node_link"),
                 fmt::format("{}=\"{}\" is an intra-node fabric; a network link is needed",
                             r.field("inter_node_link"), printable(inter->id))};
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
  return Error{ErrorCode::budget_exceeded, one ? "cluster.nodes" : "cluster.groups",
               fmt::format("the cluster has {} GPUs; at most {} are modelled", gpus, kMaxGpus)};
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
    return Error{ErrorCode::budget_exceeded, "cluster.groups",
                 fmt::format("cluster.groups has {} entries; at most {} are modelled",
                             groups.size(), kMaxGroups)};
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
      return Error{ErrorCode::invalid_cluster, "cluster.inter_group_link",
                   fmt::format("cluster.inter_group_link=\"{}\" is an intra-node fabric; a "
                               "network link is needed between groups",
                               printable(link->id))};
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
    r.fail(ErrorCode::budget_exceeded, path,
           fmt::format("{} has {} entries; at most {} are modelled", path, list->size(),
                       max_entries));
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
  // Profile values that only apply where they can (a plan's own are checked below, or warned
  // about as having no effect): sequence parallelism needs TP, TP overlap needs TP with sequence
  // parallelism (Transformer Engine overlaps its all-gathers and reduce-scatters), fp8
  // parameters need fp8 GEMMs.
  if (!r.has("sequence_parallel")) p.sequence_parallel = p.sequence_parallel && p.tp > 1;
  if (!r.has("tp_comm_overlap"))
    p.tp_comm_overlap = p.tp_comm_overlap && p.sequence_parallel && p.tp > 1;
  // The distributed optimizer's parameter all-gather overlaps through the gradient buckets
  // (Megatron-LM asserts --overlap-grad-reduce with it); with nothing sharded there is none.
  if (!r.has("overlap_param_gather"))
    p.overlap_param_gather = p.overlap_param_gather && p.effective_zero_stage() >= 1 &&
                             (p.overlap_grad_reduce || p.effective_zero_stage() >= 3);
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

// The plan's rules. Each broken rule is reported with the input it names first and the other
// inputs it involves (`related`), plus values that would satisfy it where that is cheap to say.
class Rules {
 public:
  Rules(const Scenario& s, std::vector<Error>* out) : s_(s), out_(out) {}

  // Records a broken rule; returns whether checking should go on (only when collecting).
  template <class Make>
  bool broken(Make make) {
    ok_ = false;
    if (out_) out_->push_back(make());
    return out_ != nullptr;
  }
  bool ok() const { return ok_; }
  const Scenario& s() const { return s_; }

  // The inputs that set the GPU count: every group's node count.
  std::vector<std::string> node_paths() const {
    if (s_.cluster.groups.size() == 1) return {"cluster.nodes"};
    std::vector<std::string> out;
    for (size_t g = 0; g < s_.cluster.groups.size(); ++g)
      out.push_back(fmt::format("cluster.groups[{}].nodes", g));
    return out;
  }

 private:
  const Scenario& s_;
  std::vector<Error>* out_;
  bool ok_ = true;
};

Error rule(std::string path, std::string message, std::vector<std::string> related = {}) {
  return Error{ErrorCode::invalid_plan, std::move(path), std::move(message), std::move(related)};
}

std::vector<std::string> join(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// "1, 2, 4 or 8": the divisors of n up to `limit`, for a message that says what would work.
std::string divisors_text(int64_t n, int64_t limit) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= std::min(n, limit) && d.size() < 12; ++i)
    if (n % i == 0) d.push_back(i);
  std::string out;
  for (size_t i = 0; i < d.size(); ++i)
    out += fmt::format("{}{}", i == 0 ? "" : (i + 1 == d.size() ? " or " : ", "), d[i]);
  return out;
}

// The global batches nearest `global_batch` that `step` divides (the one below when there is one,
// and the one above): "plan.global_batch=496 or 512".
std::string batch_hint(int64_t global_batch, int64_t step) {
  const int64_t below = global_batch / step * step;
  return below > 0 ? fmt::format("plan.global_batch={} or {}", below, below + step)
                   : fmt::format("plan.global_batch={}", step);
}

// What would split `layers` over pp·vpp chunks when they do not divide evenly, as the page and a
// user can act on it: the counts that divide them, then Megatron's other splits
// (pipeline_layout.h).
std::string split_hint(int64_t layers, int pp, int vpp) {
  std::string hint = fmt::format("pp·vpp {} divides {} layers", divisors_text(layers, 64), layers);
  if (const auto a = accounted_split(layers, pp, vpp))
    hint += a->embedding_in_split ? "; count the embedding and the loss as layers "
                                    "(plan.embedding_in_split, plan.loss_in_split)"
                                  : "; count the loss as a layer (plan.loss_in_split)";
  if (const auto u = uneven_split(layers, pp, vpp))
    hint += fmt::format("; plan.first_stage_layers={} and plan.last_stage_layers={}{}",
                        u->first_stage_layers, u->last_stage_layers,
                        pp > 2 ? fmt::format(" ({} on each other stage)", u->other_stage_layers)
                               : "");
  return hint;
}

// A free-form pipeline layout: the only split the plan gives, pp·vpp virtual stages holding
// every layer once, the embedding first, the loss and the MTP modules last (where the engine
// runs them).
bool check_pipeline_layout(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  const char* path = "plan.pipeline_layout";
  if ((p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.embedding_in_split ||
       p.loss_in_split || !p.stages.empty()) &&
      !c.broken([&] {
        return rule(path,
                    "plan.pipeline_layout gives the whole split: leave out first_stage_layers, "
                    "last_stage_layers, embedding_in_split, loss_in_split and stages");
      }))
    return false;
  auto parsed = parse_pipeline_layout(p.pipeline_layout, path);
  if (!parsed.ok()) return c.broken([&] { return parsed.error(); });
  const auto& stages = parsed.value();
  const int64_t want = int64_t{p.pp} * p.vpp;
  if (static_cast<int64_t>(stages.size()) != want)
    return c.broken([&] {
      return rule(path,
                  fmt::format("plan.pipeline_layout has {} stages but plan.pp*plan.vpp={}*{}={}",
                              stages.size(), p.pp, p.vpp, want),
                  {"plan.pp", "plan.vpp"});
    });
  int64_t layers = 0, mtp = 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    layers += stages[k].layers;
    mtp += stages[k].mtp;
    const bool first = k == 0, last = k + 1 == stages.size();
    if (stages[k].embedding != first || stages[k].loss != last || (stages[k].mtp > 0 && !last))
      return c.broken([&] {
        return rule(path, fmt::format("plan.pipeline_layout: the embedding E goes in the first "
                                      "stage, the loss L and the MTP modules m in the last "
                                      "(stage {} breaks it)",
                                      k));
      });
  }
  if (layers != m.layers || mtp != m.mtp_layers)
    return c.broken([&] {
      return rule(path,
                  fmt::format("plan.pipeline_layout holds {} layers and {} MTP modules but the "
                              "model has model.layers={} and model.mtp_layers={}",
                              layers, mtp, m.layers, m.mtp_layers),
                  {"model.layers", "model.mtp_layers"});
    });
  return c.ok();
}

// Megatron's uneven splits (first/last stage layers, the embedding and the loss counted as
// layers): the layers must add up and divide the way Megatron divides them. Sets `even_rule` when
// the plain rule (pp·vpp divides the layers) is the one that applies.
bool check_split(Rules& c, bool& even_rule) {
  const Plan& p = c.s().plan;
  const int64_t L = c.s().model.layers;
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0;
  const bool accounted = p.embedding_in_split || p.loss_in_split;
  even_rule = false;
  if (!p.pipeline_layout.empty()) return check_pipeline_layout(c);
  if (!p.stages.empty()) {
    // plan.stages gives every stage's layers; the embedding and the loss may still count as a
    // layer in the split of the first and last stage into virtual chunks.
    if (uneven && !c.broken([&] {
          return rule(p.first_stage_layers > 0 ? "plan.first_stage_layers"
                                               : "plan.last_stage_layers",
                      "plan.stages gives every stage's layers: leave out first_stage_layers and "
                      "last_stage_layers",
                      {"plan.stages"});
        }))
      return false;
    if (accounted && std::any_of(p.stages.begin(), p.stages.end(),
                                 [](const StageAssignment& a) { return a.layers == 0; }) &&
        !c.broken([&] {
          return rule("plan.stages",
                      "\"auto\" stage layers with embedding_in_split or loss_in_split are not "
                      "modelled: give the layers",
                      {"plan.embedding_in_split", "plan.loss_in_split"});
        }))
      return false;
    return c.ok();
  }
  if (uneven && accounted)
    return c.broken([&] {
      return rule(p.first_stage_layers > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers",
                  "give either first_stage_layers/last_stage_layers or "
                  "embedding_in_split/loss_in_split, not both (Megatron takes one uneven split)",
                  {"plan.embedding_in_split", "plan.loss_in_split"});
    });
  if (uneven) {
    const int64_t given = p.first_stage_layers + p.last_stage_layers;
    const int64_t others = p.pp - (p.first_stage_layers > 0) - (p.last_stage_layers > 0);
    const char* path = p.first_stage_layers > 0 ? "plan.first_stage_layers" : "plan.last_stage_layers";
    if (p.pp < 2 || (p.pp == 2 && p.first_stage_layers > 0 && p.last_stage_layers > 0 &&
                     given != L) ||
        given >= L + (others == 0 ? 1 : 0) || (others > 0 && (L - given) % others != 0) ||
        (others == 0 && given != L))
      return c.broken([&] {
        return rule(path,
                    fmt::format("first_stage_layers={} and last_stage_layers={} leave {} of "
                                "model.layers={} for {} other stage(s) of plan.pp={}: they must "
                                "split evenly",
                                p.first_stage_layers, p.last_stage_layers, L - given, L, others,
                                p.pp),
                    {"model.layers", "plan.pp"});
      });
    const int64_t even = others > 0 ? (L - given) / others : 0;
    for (const int64_t n : {p.first_stage_layers, p.last_stage_layers, even})
      if (n > 0 && n % p.vpp != 0)
        return c.broken([&] {
          return rule(path,
                      fmt::format("a stage of {} layers does not split into plan.vpp={} chunks",
                                  n, p.vpp),
                      {"plan.vpp"});
        });
    return c.ok();
  }
  if (accounted) {
    const int64_t total = L + p.embedding_in_split + p.loss_in_split;
    const int64_t chunks = int64_t{p.pp} * p.vpp;
    if (!accounting_divides(L, p.embedding_in_split + p.loss_in_split, p.pp, p.vpp))
      return c.broken([&] {
        return rule(p.vpp > 1 ? "plan.vpp" : "plan.pp",
                    fmt::format("model.layers={} plus the {} counted as layers ({}) must be "
                                "divisible by plan.pp*plan.vpp={}",
                                L,
                                p.embedding_in_split && p.loss_in_split ? "embedding and loss"
                                : p.embedding_in_split                  ? "embedding"
                                                                        : "loss",
                                total, chunks),
                    {"model.layers", "plan.embedding_in_split", "plan.loss_in_split"});
      });
    return c.ok();
  }
  even_rule = L % (int64_t{p.pp} * p.vpp) != 0;
  return c.ok();
}

// Flags the framework cannot honour, and flags that need another.
bool check_framework(Rules& c, const FrameworkProfile* profile) {
  const Plan& p = c.s().plan;
  if (profile)
    for (const auto& entry : profile->cannot) {
      // Named references, not structured bindings: clang 14 (Emscripten) cannot capture those.
      const std::string& key = entry.first;
      const std::string& why = entry.second;
      // A flag it cannot do is refused on; a size (plan.cp) away from its default of 1.
      bool on = false;
      Json v = Json::object();
      for (const auto& f : detail::plan_fields())
        if (f.info.name == key && f.write) {
          f.write(p, f.info, v);
          on = v[key].is_boolean() ? v[key].get<bool>()
                                   : v[key].is_number() &&
                                         f.info.fallback.kind == DefaultValue::Kind::number &&
                                         v[key].get<double>() != f.info.fallback.number;
        }
      if (on && !c.broken([&] {
            return rule(fmt::format("plan.{}", key),
                        fmt::format("plan.{}={}: {} cannot do it ({})", key, v[key].dump(),
                                    p.framework, why),
                        {"plan.framework"});
          }))
        return false;
    }
  if (p.tp_comm_overlap && p.tp > 1 && !p.sequence_parallel && !c.broken([&] {
        return rule("plan.tp_comm_overlap",
                    "plan.tp_comm_overlap=true needs plan.sequence_parallel=true (Transformer "
                    "Engine overlaps the all-gathers and reduce-scatters of sequence parallelism)",
                    {"plan.sequence_parallel"});
      }))
    return false;
  const int zero = p.effective_zero_stage();
  if (p.overlap_param_gather && (zero == 1 || zero == 2) && !p.overlap_grad_reduce &&
      !c.broken([&] {
        return rule("plan.overlap_param_gather",
                    "plan.overlap_param_gather=true needs plan.overlap_grad_reduce=true (the "
                    "distributed optimizer overlaps both through its gradient buckets; "
                    "Megatron-LM's arguments.py asserts it)",
                    {"plan.overlap_grad_reduce"});
      }))
    return false;
  if (p.fp8_param_gather && p.precision != Precision::fp8 && p.precision != Precision::mxfp8 &&
      !c.broken([&] {
        return rule("plan.fp8_param_gather",
                    fmt::format("plan.fp8_param_gather=true needs plan.precision fp8 or mxfp8, "
                                "not {}",
                                to_string(p.precision)),
                    {"plan.precision"});
      }))
    return false;
  return c.ok();
}

// Expert parallelism: the expert grid etp x ep x edp x pp must tile the same GPUs as the dense
// grid (Megatron-Core's parallel_state.py), experts split evenly, and TP in an MoE layer needs
// sequence parallelism (moe_layer.py).
bool check_experts(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  if (!m.moe.enabled()) {
    if ((p.ep > 1 || p.etp != p.tp) && !c.broken([&] {
          return rule(p.ep > 1 ? "plan.ep" : "plan.etp",
                      fmt::format("plan.{}={} needs a mixture-of-experts model (model.moe); "
                                  "{} is dense",
                                  p.ep > 1 ? "ep" : "etp", p.ep > 1 ? p.ep : p.etp, m.name),
                      {"model.moe"});
        }))
      return false;
    // The expert-only keys away from their defaults: on a dense model each would be reported
    // (in the resolved plan and the report) as set while it changes nothing (Megatron-Core
    // asserts expert parallelism for the EP overlap; a dense layer has no tokens to dispatch and
    // no experts to load unevenly).
    const auto dense = [&](const char* key, std::string value, const char* what) {
      return c.broken([&] {
        return rule(fmt::format("plan.{}", key),
                    fmt::format("plan.{}={} ({}) needs a mixture-of-experts model (model.moe); "
                                "{} is dense",
                                key, value, what, m.name),
                    {"model.moe"});
      });
    };
    if (p.moe_overlap && !dense("moe_overlap", "true", "Megatron-Core's EP overlap")) return false;
    if (p.moe_dispatcher != MoeDispatcher::alltoall &&
        !dense("moe_dispatcher", std::string(to_string(p.moe_dispatcher)), "the token exchange"))
      return false;
    if (p.moe_imbalance != 1.0 &&
        !dense("moe_imbalance", fmt::format("{}", p.moe_imbalance), "the experts' load"))
      return false;
    return c.ok();
  }
  // EP communication overlap (--overlap-moe-expert-parallel-comm) as Megatron-Core admits it
  // (TransformerConfig.__post_init__, megatron/core/transformer/transformer_config.py): expert
  // parallelism to overlap, the alltoall or flex dispatcher, no full recompute, the interleaved
  // schedule when pipelined (combined_1f1b pairs chunks), and at most one MTP layer; each named
  // (moe_overlap_admitted, below, is the same conditions at once, for the search).
  if (p.moe_overlap && !moe_overlap_admitted(m, p)) {
    auto needs = [&](bool ok, const char* path, std::string what,
                     std::vector<std::string> related) {
      return ok || c.broken([&] {
               return rule(path,
                           "plan.moe_overlap=true (Megatron-Core's EP overlap) needs " + what,
                           std::move(related));
             });
    };
    if (!needs(p.ep > 1, "plan.ep", fmt::format("plan.ep > 1, not {}", p.ep),
               {"plan.moe_overlap"}) ||
        !needs(p.moe_dispatcher != MoeDispatcher::allgather, "plan.moe_dispatcher",
               "plan.moe_dispatcher alltoall or flex, not allgather", {"plan.moe_overlap"}) ||
        !needs(p.recompute != Recompute::full, "plan.recompute",
               "plan.recompute none or selective, not full", {"plan.moe_overlap"}) ||
        !needs(p.pp == 1 || p.vpp > 1, "plan.vpp",
               fmt::format("plan.vpp > 1 with plan.pp={} (the interleaved schedule)", p.pp),
               {"plan.moe_overlap", "plan.pp"}) ||
        !needs(m.mtp_layers <= 1, "model.mtp_layers",
               fmt::format("at most one MTP layer, not {}", m.mtp_layers), {"plan.moe_overlap"}))
      return false;
  }
  const MoeSpec& e = m.moe;
  if (e.experts % p.ep != 0 && !c.broken([&] {
        Error err = rule("plan.ep",
                         fmt::format("plan.ep={} must divide model.moe.experts={} (each "
                                     "expert-parallel rank holds experts/ep experts)",
                                     p.ep, e.experts),
                         {"model.moe.experts"});
        err.hint = fmt::format("ep {} divides the experts", divisors_text(e.experts, 1024));
        return err;
      }))
    return false;
  if (e.ffn_hidden % p.etp != 0 && !c.broken([&] {
        return rule("plan.etp",
                    fmt::format("plan.etp={} must divide model.moe.ffn_hidden={}", p.etp,
                                e.ffn_hidden),
                    {"model.moe.ffn_hidden"});
      }))
    return false;
  const int64_t stage_gpus = int64_t{p.tp} * p.cp * p.dp;
  const int64_t grid = int64_t{p.etp} * p.ep;
  if (stage_gpus % grid != 0 && !c.broken([&] {
        return rule("plan.ep",
                    fmt::format("plan.etp*plan.ep*plan.pp={}*{}*{}={} must divide the {} GPUs "
                                "(tp*cp*dp*pp): the expert grid folds onto the same GPUs",
                                p.etp, p.ep, p.pp, grid * p.pp, stage_gpus * p.pp),
                    {"plan.etp", "plan.pp", "plan.tp", "plan.dp"});
      }))
    return false;
  if (p.tp > 1 && !p.sequence_parallel && !c.broken([&] {
        return rule("plan.sequence_parallel",
                    fmt::format("plan.tp={} in a mixture-of-experts model needs "
                                "plan.sequence_parallel=true (Megatron-Core's MoE layer "
                                "requires it in training)",
                                p.tp),
                    {"plan.tp", "model.moe"});
      }))
    return false;
  return c.ok();
}

// What an estimate of the plan costs (limits.h): stage evaluations, the balancer's work for
// "auto" layers, and the model's size (the census counts operations in 64-bit integers).
bool check_budget(Rules& c) {
  const Plan& p = c.s().plan;
  const ModelSpec& m = c.s().model;
  const double parameters = count_parameters(m, m.vocab, m.seq_len).total;
  if (parameters > kMaxParameters)
    return c.broken([&] {
      return Error{ErrorCode::out_of_range, "model",
                   fmt::format("the model has {:.3g} parameters; at most {:.0e} are modelled",
                               parameters, kMaxParameters),
                   {"model.layers", "model.hidden", "model.vocab"}};
    });
  const bool auto_layers = std::any_of(p.stages.begin(), p.stages.end(),
                                       [](const StageAssignment& a) { return a.layers == 0; });
  const bool auto_batches =
      std::any_of(p.replicas.begin(), p.replicas.end(),
                  [](const ReplicaAssignment& a) { return a.micro_batches == 0; });
  const int64_t sets = p.replicas.empty() ? 1 : static_cast<int64_t>(p.replicas.size());
  const int64_t evaluations = sets * p.pp * (1 + (auto_layers ? 2 : 0) + (auto_batches ? 1 : 0));
  if (evaluations > kMaxStageEvaluations)
    return c.broken([&] {
      return Error{ErrorCode::budget_exceeded, sets > 1 ? "plan.replicas" : "plan.pp",
                   fmt::format("the plan costs {} stage evaluations ({} stage(s) x {} replica "
                               "set(s){}); one estimate makes at most {}",
                               evaluations, p.pp, sets,
                               auto_layers    ? ", x3 to balance \"auto\" layers"
                               : auto_batches ? ", x2 to balance \"auto\" micro-batches"
                                              : "",
                               kMaxStageEvaluations),
                   {"plan.pp", "plan.replicas", "plan.stages"}};
    });
  if (auto_layers && m.layers * p.pp > kMaxBalanceWork)
    return c.broken([&] {
      return Error{ErrorCode::budget_exceeded, "plan.stages",
                   fmt::format("balancing \"auto\" layers costs model.layers x plan.pp = {} x {}; "
                               "at most {} (give the stages' layers)",
                               m.layers, p.pp, kMaxBalanceWork),
                   {"model.layers", "plan.pp"}};
    });
  return c.ok();
}

// Stage and replica layouts: every group used exactly, layers and micro-batches adding up.
bool check_layout(Rules& c) {
  const Scenario& s = c.s();
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int groups = static_cast<int>(s.cluster.groups.size());
  if (!p.stages.empty() && !p.replicas.empty())
    return c.broken([&] {
      return rule("plan.replicas", "plan.stages and plan.replicas together are not modelled: "
                                   "give one",
                  {"plan.stages"});
    });
  std::vector<int64_t> used(groups, 0);
  const int64_t mp = int64_t{p.tp} * p.cp;
  if (groups > 1 && p.stages.empty() && p.replicas.empty())
    return c.broken([&] {
      return rule("plan.stages",
                  fmt::format("cluster has {} groups and the plan's stages ({} GPUs each) do not "
                              "fall within one group each in rank order: give plan.stages "
                              "(which group runs each pipeline stage) or plan.replicas (which "
                              "group runs each data-parallel replica)",
                              groups, times(mp, p.dp)),
                  join({"plan.pp", "plan.tp"}, c.node_paths()));
    });
  if (!p.stages.empty()) {
    if (static_cast<int>(p.stages.size()) != p.pp)
      return c.broken([&] {
        return rule("plan.stages", fmt::format("plan.stages has {} entries but plan.pp={}",
                                               p.stages.size(), p.pp),
                    {"plan.pp"});
      });
    int64_t fixed = 0, autos = 0;
    for (size_t i = 0; i < p.stages.size(); ++i) {
      const auto& st = p.stages[i];
      const std::string path = fmt::format("plan.stages[{}]", i);
      if (st.group >= groups)
        return c.broken([&] {
          return rule(path + ".group", fmt::format("{}.group={} but the cluster has {} group(s)",
                                                   path, st.group, groups));
        });
      // The embedding and the loss, where they count as a layer, share the split into chunks.
      const int64_t counted = (i == 0 && p.embedding_in_split) + (i + 1 == p.stages.size() &&
                                                                   p.loss_in_split);
      if (st.layers > 0 && (st.layers + counted) % p.vpp != 0 && !c.broken([&] {
            return rule(path + ".layers",
                        fmt::format("{}.layers={}{} must be divisible by plan.vpp={}", path,
                                    st.layers, counted ? fmt::format(" + {} counted as layers", counted) : "",
                                    p.vpp),
                        {"plan.vpp"});
          }))
        return false;
      fixed += st.layers;
      autos += st.layers == 0;
      used[st.group] = plus(used[st.group], times(mp, p.dp));
    }
    if (autos == 0 && fixed != m.layers && !c.broken([&] {
          return rule("plan.stages", fmt::format("plan.stages hold {} layers but model.layers={}",
                                                 fixed, m.layers),
                      {"model.layers"});
        }))
      return false;
    if (autos > 0 && (m.layers - fixed < autos * p.vpp || (m.layers - fixed) % p.vpp != 0) &&
        !c.broken([&] {
          return rule("plan.stages",
                      fmt::format("plan.stages: {} layers left for {} \"auto\" stage(s) "
                                  "(model.layers={}, each stage needs a multiple of vpp={})",
                                  m.layers - fixed, autos, m.layers, p.vpp),
                      {"model.layers", "plan.vpp"});
        }))
      return false;
  } else if (!p.replicas.empty()) {
    int64_t replicas = 0, fixed = 0, autos = 0;
    for (size_t i = 0; i < p.replicas.size(); ++i) {
      const auto& rep = p.replicas[i];
      const std::string path = fmt::format("plan.replicas[{}]", i);
      if (rep.group >= groups)
        return c.broken([&] {
          return rule(path + ".group", fmt::format("{}.group={} but the cluster has {} group(s)",
                                                   path, rep.group, groups));
        });
      replicas += rep.count;
      fixed = plus(fixed, times(rep.count, rep.micro_batches));
      autos += rep.micro_batches == 0 ? rep.count : 0;
      used[rep.group] = plus(used[rep.group], times(times(mp, p.pp), rep.count));
    }
    if (replicas != p.dp && !c.broken([&] {
          return rule("plan.replicas", fmt::format("plan.replicas count {} replicas but "
                                                   "plan.dp={}",
                                                   replicas, p.dp),
                      {"plan.dp"});
        }))
      return false;
    if (p.global_batch % p.micro_batch != 0)
      return c.broken([&] {
        return rule("plan.global_batch",
                    fmt::format("plan.global_batch={} must be divisible by plan.micro_batch={}",
                                p.global_batch, p.micro_batch),
                    {"plan.micro_batch"});
      });
    const int64_t total = p.global_batch / p.micro_batch;
    if (((autos == 0 && fixed != total) || (autos > 0 && total - fixed < autos)) &&
        !c.broken([&] {
          return rule("plan.replicas",
                      fmt::format("plan.replicas take {} micro-batches{} but global_batch / "
                                  "micro_batch = {}",
                                  fixed, autos > 0 ? " before the \"auto\" ones" : "", total),
                      {"plan.global_batch", "plan.micro_batch"});
        }))
      return false;
  } else {
    used[0] = times(times(mp, p.pp), p.dp);
  }
  if (groups > 1 || !p.stages.empty() || !p.replicas.empty())
    for (int g = 0; g < groups; ++g)
      if (used[g] != s.cluster.groups[g].gpus() && !c.broken([&] {
            return rule(p.replicas.empty() ? "plan.stages" : "plan.replicas",
                        fmt::format("the plan uses {} GPUs of cluster.groups[{}] but it has {}",
                                    used[g], g, s.cluster.groups[g].gpus()),
                        {fmt::format("cluster.groups[{}].nodes", g), "plan.tp", "plan.cp",
                         "plan.dp"});
          }))
        return false;
  return c.ok();
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

// plan.rank_order (ranks.h): a permutation of Megatron-Core's five names, which its
// initialize_model_parallel accepts only when the dense and the expert grid agree on the
// pipeline groups (the asserts after building both RankGenerators).
bool check_rank_order(Rules& c, bool counts_agree) {
  const Plan& p = c.s().plan;
  const char* path = "plan.rank_order";
  if (!parse_rank_order(p.rank_order)) {
    return !c.broken([&] {
      Error e = rule(path, fmt::format("plan.rank_order=\"{}\" must name tp, cp, ep, dp and pp "
                                       "once each, joined by '-' (innermost first)",
                                       printable(p.rank_order)));
      e.code = ErrorCode::out_of_range;
      e.hint = "tp-cp-ep-dp-pp (Megatron's default) or tp-cp-ep-pp-dp";
      return e;
    }) && c.ok();
  }
  if (p.rank_order == kDefaultRankOrder) return c.ok();
  // Several groups are placed stage by stage (plan.stages, plan.replicas), not by rank order.
  if ((c.s().cluster.groups.size() > 1 || !p.stages.empty() || !p.replicas.empty()) &&
      !c.broken([&] {
        return rule(path,
                    fmt::format("plan.rank_order=\"{}\" needs one cluster group and no "
                                "plan.stages or plan.replicas: the engine places several groups "
                                "stage by stage",
                                printable(p.rank_order)),
                    {"cluster.groups"});
      }))
    return false;
  if (!counts_agree) return c.ok();
  const bool pp_last = p.rank_order.ends_with("pp");
  const size_t pp = static_cast<size_t>(Dim::pp);
  if ((!(pp_last || p.pp == 1 || p.edp() == p.dp) ||
       dense_grid(p).stride[pp] != expert_grid(p).stride[pp]) &&
      !c.broken([&] {
        return rule(path,
                    fmt::format("plan.rank_order=\"{}\" puts pp before another dimension, so "
                                "the expert data-parallel size tp*cp*dp/(etp*ep)={} must equal "
                                "plan.dp={}: Megatron-Core requires the dense and expert grids "
                                "to share their pipeline groups (dense models too)",
                                printable(p.rank_order), p.edp(), p.dp),
                    {"plan.ep", "plan.etp", "plan.dp"});
      }))
    return false;
  return c.ok();
}

bool check_scenario(const Scenario& s, std::vector<Error>* errors) {
  Rules c(s, errors);
  if (!check_budget(c)) return false;  // the rules below assume counts the engine can hold
  if (!check_framework(c, s.framework) && !errors) return false;
  const Plan& p = s.plan;
  const ModelSpec& m = s.model;
  const int gpus = s.cluster.gpus();
  const int64_t product = times(times(times(p.tp, p.pp), p.cp), p.dp);
  const int per_node = s.cluster.groups.front().gpus_per_node;
  // What the model allows first (the control that causes it), then what the cluster holds.
  for (const auto& divided : {std::pair{"heads", m.heads}, std::pair{"kv_heads", m.kv_heads},
                               std::pair{"ffn_hidden", m.ffn_hidden}}) {
    const char* what = divided.first;  // (clang 14 cannot capture structured bindings)
    const int64_t size = divided.second;
    if (size % p.tp != 0 && !c.broken([&] {
          Error e = rule("plan.tp",
                         fmt::format("plan.tp={} must divide model.{}={}", p.tp, what, size),
                         {fmt::format("model.{}", what)});
          const int64_t common = std::gcd(std::gcd(m.heads, m.kv_heads), m.ffn_hidden);
          e.hint = fmt::format("tp {} divides the model", divisors_text(common, per_node));
          return e;
        }))
      return false;
  }
  if (p.vpp > 1 && p.pp == 1 && !c.broken([&] {
        return rule("plan.vpp",
                    fmt::format("plan.vpp={} needs plan.pp>1 (the interleaved schedule splits "
                                "pipeline stages)",
                                p.vpp),
                    {"plan.pp"});
      }))
    return false;
  bool layers_split = false;
  if (!check_split(c, layers_split) && !errors) return false;
  if (layers_split && !c.broken([&] {
        Error e = rule(p.vpp > 1 ? "plan.vpp" : "plan.pp",
                       fmt::format("model.layers={} must be divisible by plan.pp*plan.vpp={}*{}={}",
                                   m.layers, p.pp, p.vpp, int64_t{p.pp} * p.vpp),
                       {"model.layers", p.vpp > 1 ? "plan.pp" : "plan.vpp"});
        e.hint = split_hint(m.layers, p.pp, p.vpp);
        return e;
      }))
    return false;
  if (!layers_split && !check_layout(c) && !errors) return false;
  const auto nodes = c.node_paths();
  if (product != gpus && p.dp_derived && !c.broken([&] {
        return rule("plan.dp",
                    fmt::format("the cluster's {} GPUs are not divisible by tp*pp*cp={}*{}*{}={}",
                                gpus, p.tp, p.pp, p.cp, int64_t{p.tp} * p.pp * p.cp),
                    join({"plan.tp", "plan.pp", "plan.cp"}, nodes));
      }))
    return false;
  if (product != gpus && !p.dp_derived && !c.broken([&] {
        return rule("plan.dp",
                    fmt::format("plan: tp*pp*cp*dp={}*{}*{}*{}={} must equal the cluster's GPU "
                                "count {}",
                                p.tp, p.pp, p.cp, p.dp, product, gpus),
                    join({"plan.tp", "plan.pp", "plan.cp"}, nodes));
      }))
    return false;
  if (product == gpus && !check_experts(c) && !errors) return false;
  const bool grid_ok = product == gpus && (int64_t{p.etp} * p.ep) > 0 &&
                       (int64_t{p.tp} * p.cp * p.dp) % (int64_t{p.etp} * p.ep) == 0;
  if (!check_rank_order(c, grid_ok) && !errors) return false;
  if (p.replicas.empty() && p.global_batch % (p.micro_batch * p.dp) != 0 && !c.broken([&] {
        Error e = rule("plan.global_batch",
                       fmt::format("plan.global_batch={} must be divisible by "
                                   "plan.micro_batch*plan.dp={}*{}={}",
                                   p.global_batch, p.micro_batch, p.dp, p.micro_batch * p.dp),
                       {"plan.micro_batch", "plan.dp"});
        e.hint = batch_hint(p.global_batch, int64_t{p.micro_batch} * p.dp);
        return e;
      }))
    return false;
  if (p.vpp > 1 && p.replicas.empty() && p.global_batch % (p.micro_batch * p.dp) == 0 &&
      p.micro_batches() % p.pp != 0 && !c.broken([&] {
        Error e = rule("plan.global_batch",
                       fmt::format("with plan.vpp={} the micro-batches per replica ({}) must be "
                                   "a multiple of plan.pp={}: Megatron's interleaved schedule "
                                   "runs them in groups of pp",
                                   p.vpp, p.micro_batches(), p.pp),
                       {"plan.vpp", "plan.pp", "plan.micro_batch"});
        e.hint = batch_hint(p.global_batch, int64_t{p.micro_batch} * p.dp * p.pp);
        return e;
      }))
    return false;
  if (p.cp > 1 && m.seq_len % (2 * p.cp) != 0 && !c.broken([&] {
        return rule("plan.cp",
                    fmt::format("seq_len={} must be divisible by 2*plan.cp={} (Megatron splits "
                                "each sequence into 2*cp chunks)",
                                m.seq_len, 2 * p.cp),
                    {"seq_len"});
      }))
    return false;
  for (const auto& g : s.cluster.groups) {
    if (g.gpu.peak_flops(p.precision)) continue;
    if (!c.broken([&] {
          std::string have;
          for (size_t q = 0; q < kPrecisions; ++q)
            if (g.gpu.peak[q])
              have += (have.empty() ? "" : ", ") + std::string(enum_names<Precision>()[q]);
          return rule("plan.precision",
                      fmt::format("plan.precision={} is not supported by {} (it has: {})",
                                  to_string(p.precision), printable(g.gpu.name), have));
        }))
      return false;
    break;
  }
  return c.ok();
}

namespace {

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
  if (const auto cal = doc.find("calibration"); cal != doc.end()) {  // measured_runs.h
    auto fit = apply_calibration(*cal, doc, s, catalog);
    if (!fit) {
      errors.push_back(fit.error());
      return std::nullopt;
    }
    s.fit = std::move(fit).value();
  }
  return s;
}

}  // namespace

bool moe_overlap_admitted(const ModelSpec& m, const Plan& p) {
  return m.moe.enabled() && p.ep > 1 && p.moe_dispatcher != MoeDispatcher::allgather &&
         p.recompute != Recompute::full && (p.pp == 1 || p.vpp > 1) && m.mtp_layers <= 1;
}

Result<Scenario> read_scenario(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  auto s = read_keys(doc, catalog, errors);
  if (!s) return errors.front();
  return std::move(*s);
}

std::vector<Error> scenario_errors(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  if (auto s = read_keys(doc, catalog, errors)) check_scenario(*s, &errors);
  if (errors.size() > kMaxErrors) errors.resize(kMaxErrors);  // 4,096 stages, each wrong
  return errors;
}

Result<Scenario> scenario_from_json(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  auto s = read_keys(doc, catalog, errors);
  if (!s) return errors.front();
  if (!check_scenario(*s, &errors)) return errors.front();
  return std::move(*s);
}

Result<Scenario> parse_scenario(std::string_view text, const Catalog& catalog) {
  auto doc = parse_json(text);
  if (!doc) return doc.error();
  return scenario_from_json(*doc, catalog);
}

}  // namespace stepcast
