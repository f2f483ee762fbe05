#include "stepcast/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>

#include "scenario/fields.h"
#include "scenario/json_reader.h"
#include "scenario/specs_json.h"
#include "stepcast/arch_calibration_keys.h"
#include "stepcast/estimate.h"
#include "stepcast/gemm_fit.h"
#include "stepcast/json.h"
#include "stepcast/limits.h"
#include "stepcast/memory.h"
#include "stepcast/scenario.h"
#include "stepcast/share_link.h"

namespace stepcast {

namespace {

using detail::JsonReader;
using detail::key_in;

// Where each scale may go in a fit: a tenth to ten times the presets (a wider move says the
// scenario, not the constants, is wrong).
constexpr double kMinScale = 0.1, kMaxScale = 10;
// The network scale moves less: a link runs at a fraction of its datasheet, not a tenth of it, and
// a pair of runs that barely separates the two would otherwise throw it far. A ridge term pulls
// it towards the presets unless the runs insist (kNetworkRidge, on log scale: the weight of a
// 1/e error of one run against an e-fold network change is 1/kNetworkRidge).
constexpr double kMinNetwork = 0.25, kMaxNetwork = 4, kNetworkRidge = 0.01;

// The compute scale: each constant as its key's row says (arch_calibration_keys.h).
void scale_arch(ArchCalibration& a, double s) {
  for (const ArchCalibrationKey& k : arch_calibration_keys()) {
    double& v = a.*k.member;
    if (k.scaled == ComputeScaled::efficiency) v = std::min(1.0, v * s);
    if (k.scaled == ComputeScaled::time) v /= s;
  }
}

void scale_link(LinkSpec& l, double s) {
  l.bandwidth_Bps_per_dir *= s;
  l.busbw_Bps *= s;
  l.allreduce_busbw_Bps *= s;
  l.half_peak_bytes *= s;  // the same fill time
}

// A link of the calibration: an object (nccl-tests fit) or a preset id, of the scope it replaces.
Result<LinkSpec> calibration_link(const Json& v, const std::string& path, LinkScope scope,
                                  const Catalog& catalog) {
  LinkSpec link;
  if (v.is_string()) {
    const LinkSpec* found = catalog.find_link(v.get_ref<const std::string&>());
    if (!found)
      return Error{ErrorCode::unknown_preset, path,
                   fmt::format("{}={} is not a link preset (see `stepcast presets links`)", path,
                               detail::echo(v))};
    link = *found;
  } else if (v.is_object()) {
    auto parsed = detail::link_from_json(v, path);
    if (!parsed) return parsed.error();
    link = std::move(parsed).value();
  } else {
    return Error{ErrorCode::type_error, path,
                 fmt::format("{}={} must be a link preset id or a link object", path,
                             detail::echo(v))};
  }
  if (link.scope != scope)
    return Error{ErrorCode::invalid_cluster, path,
                 fmt::format("{} must be a link of scope {}", path, to_string(scope))};
  return link;
}

// A run's error, its path and message under the run's own.
Error under(Error e, const std::string& prefix) {
  e.path = e.path.empty() ? prefix : prefix + "." + e.path;
  e.message = prefix + ": " + e.message;
  for (auto& r : e.related) r = prefix + "." + r;
  return e;
}

std::string gpu_names(const Scenario& s) {
  std::string out;
  for (const auto& g : s.cluster.groups)
    if (out.find(g.gpu.name) == std::string::npos) out += (out.empty() ? "" : ", ") + g.gpu.name;
  return out;
}

// One entry of calibration.runs: the scenario that ran, checked, on this cluster's GPUs, with
// this calibration's links.
struct Run {
  Scenario scenario;
  double measured_s = 0;
};

Result<Run> read_run(const Json& entry, const std::string& path, const Json& document,
                     const Scenario& host, const CalibrationFit& links_of,
                     const Catalog& catalog) {
  JsonReader r(entry, path);
  static const std::vector<std::string_view> names =
      detail::names_of(detail::calibration_run_keys());
  r.reject_unknown(names);
  if (!r.is_object()) return r.error();
  Run run;
  run.measured_s = r.number(key_in(detail::calibration_run_keys(), "measured_iteration_s"));
  if (!r.ok()) return r.error();
  const int forms = r.has("plan") + r.has("scenario") + r.has("link");
  if (forms != 1)
    return Error{ErrorCode::missing_key, path,
                 fmt::format("{} needs exactly one of plan, scenario and link", path)};
  Json doc;
  std::string where;
  if (const Json* plan = r.raw("plan")) {
    doc = document;
    doc["plan"] = *plan;
    where = path;  // errors read calibration.runs[0].plan.tp
  } else {
    if (const Json* given = r.raw("scenario")) {
      doc = *given;
      where = r.field("scenario");
    } else {
      const Json& link = *r.raw("link");
      where = r.field("link");
      if (!link.is_string())
        return Error{ErrorCode::type_error, where, where + " must be a Stepcast link (text)"};
      auto opened = scenario_from_link(link.get_ref<const std::string&>());
      if (!opened) return under(opened.error(), where);
      doc = std::move(opened->scenario);
    }
    if (!doc.is_object())
      return Error{ErrorCode::type_error, where, where + " must be a scenario object"};
    if (!doc.contains("cluster")) doc["cluster"] = document["cluster"];
    if (!doc.contains("model")) doc["model"] = document["model"];
  }
  if (!r.has("plan") && doc.contains("calibration"))
    return Error{ErrorCode::unsupported, where + ".calibration",
                 where + ".calibration: a measured run cannot carry a calibration of its own"};
  doc.erase("calibration");
  auto parsed = scenario_without_calibration(doc, catalog);
  if (!parsed) return under(parsed.error(), where);
  run.scenario = std::move(parsed).value();
  if (gpu_names(run.scenario) != gpu_names(host))
    return Error{ErrorCode::invalid_cluster, where,
                 fmt::format("{} ran on {}, this cluster has {}: a measured run calibrates its own "
                             "cluster",
                             where, printable(gpu_names(run.scenario), 2 * kNameInMessageBytes),
                             printable(gpu_names(host), 2 * kNameInMessageBytes))};
  run.scenario.calibration = host.calibration;  // with calibration.gemm applied, same GPUs
  for (auto& g : run.scenario.cluster.groups) {
    if (!links_of.intra_node_link.empty()) g.intra_node_link = host.cluster.groups[0].intra_node_link;
    if (!links_of.inter_node_link.empty()) g.inter_node_link = host.cluster.groups[0].inter_node_link;
  }
  return run;
}

double log_error(const MeasuredRun& run, double compute, double network) {
  return std::log(predicted_iteration_s(*run.scenario, compute, network) / run.measured_s);
}

// The compute scale alone: the predicted time falls with it, so the sum of squared log errors
// has one minimum in [kMinScale, kMaxScale] (golden-section search on log scale).
double fit_compute(const std::vector<MeasuredRun>& runs, double network) {
  auto cost = [&](double log_c) {
    double sum = 0;
    for (const auto& r : runs) sum += std::pow(log_error(r, std::exp(log_c), network), 2);
    return sum;
  };
  double lo = std::log(kMinScale), hi = std::log(kMaxScale);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double fa = cost(a), fb = cost(b);
  for (int i = 0; i < 48; ++i) {  // (0.618)^48 of ln 100: below 1e-9
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - g * (hi - lo), fa = cost(a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + g * (hi - lo), fb = cost(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

// d log(time) / d log(scale) for each run, compute and network, at (c, n).
void sensitivities(const std::vector<MeasuredRun>& runs, double c, double n, std::vector<double>& dc,
                   std::vector<double>& dn, std::vector<double>& e) {
  constexpr double h = 1e-3;
  dc.clear(), dn.clear(), e.clear();
  for (const auto& r : runs) {
    const double base = log_error(r, c, n);
    e.push_back(base);
    dc.push_back((log_error(r, c * std::exp(h), n) - base) / h);
    dn.push_back((log_error(r, c, n * std::exp(h)) - base) / h);
  }
}

// Whether the runs pin the network apart from compute: some run's time moves with the network
// (more than 2 % per e-fold), and the runs' two sensitivities point in different directions
// (the angle between the columns of the Jacobian over 0.1 rad).
bool separable(const std::vector<double>& dc, const std::vector<double>& dn) {
  if (dc.size() < 2) return false;
  double cc = 0, nn = 0, cn = 0;
  for (size_t i = 0; i < dc.size(); ++i) cc += dc[i] * dc[i], nn += dn[i] * dn[i], cn += dc[i] * dn[i];
  if (std::sqrt(nn) < 0.02 || cc <= 0) return false;
  const double cos2 = cn * cn / (cc * nn);
  return 1 - cos2 > 0.01;  // sin > 0.1
}

// Both scales: Gauss-Newton on the log errors in log scale space, within the bounds.
void fit_both(const std::vector<MeasuredRun>& runs, double& c, double& n) {
  std::vector<double> dc, dn, e;
  for (int it = 0; it < 20; ++it) {
    sensitivities(runs, c, n, dc, dn, e);
    double a = 0, b = 0, d = 0, gc = 0, gn = 0;
    for (size_t i = 0; i < e.size(); ++i) {
      a += dc[i] * dc[i], b += dc[i] * dn[i], d += dn[i] * dn[i];
      gc += dc[i] * e[i], gn += dn[i] * e[i];
    }
    d += kNetworkRidge;
    gn += kNetworkRidge * std::log(n);
    const double det = a * d - b * b;
    if (!(det > 0)) break;
    const double step_c = -(d * gc - b * gn) / det, step_n = -(a * gn - b * gc) / det;
    const double lc = std::clamp(std::log(c) + step_c, std::log(kMinScale), std::log(kMaxScale));
    const double ln =
        std::clamp(std::log(n) + step_n, std::log(kMinNetwork), std::log(kMaxNetwork));
    const bool done = std::fabs(lc - std::log(c)) < 1e-7 && std::fabs(ln - std::log(n)) < 1e-7;
    // (Clamped again after exp: exp(log(10)) is 10.000000000000002, past the bound.)
    c = std::clamp(std::exp(lc), kMinScale, kMaxScale);
    n = std::clamp(std::exp(ln), kMinNetwork, kMaxNetwork);
    if (done) break;
  }
}

bool at_bound(double s, double lo, double hi) { return s <= lo * 1.001 || s >= hi * 0.999; }

}  // namespace

double predicted_iteration_s(const Scenario& scenario, double compute, double network) {
  Scenario s = scenario;
  scale_scenario(s, compute, network);
  return estimate(s).iteration_time_s;
}

ScaleFit fit_scales(const std::vector<MeasuredRun>& runs) {
  ScaleFit f;
  if (runs.empty()) return f;
  std::vector<double> dc, dn, e;
  sensitivities(runs, 1, 1, dc, dn, e);
  f.compute_scale = fit_compute(runs, 1);
  if (separable(dc, dn)) {
    fit_both(runs, f.compute_scale, f.network_scale);
    f.network_fitted = true;
  }
  f.at_bound = at_bound(f.compute_scale, kMinScale, kMaxScale) ||
               (f.network_fitted && at_bound(f.network_scale, kMinNetwork, kMaxNetwork));
  return f;
}

void scale_scenario(Scenario& s, double compute, double network) {
  if (compute != 1) {
    for (auto& [arch, a] : s.calibration.families) scale_arch(a, compute);
    scale_arch(s.calibration.fallback, compute);
  }
  if (network != 1) {
    for (auto& g : s.cluster.groups) {
      scale_link(g.intra_node_link, network);
      scale_link(g.inter_node_link, network);
    }
    scale_link(s.cluster.inter_group_link, network);
  }
}

// calibration.memory (issue 35): a peak measured on the scenario's own plan (torch.cuda.
// max_memory_allocated and max_memory_reserved on its fullest GPU) against the engine's count
// for the fullest stage. The allocator's share becomes the measured reserved / allocated - 1
// (the presets' framework_memory_fraction is fitted on published pairs, 2.8-9.3 %); what was
// allocated beyond (or short of) the count joins the allowance outside it (framework_memory
// bytes), times the allocator's share, so this plan's verdict reads the measured reserved bytes
// and other plans carry the same difference. Refused: a peak above the GPU, reserved below
// allocated, or a peak more than kMaxMeasuredOverPredicted times off the count (not this plan).
std::optional<Error> fit_memory(const Json& v, const std::string& path, Scenario& s,
                                CalibrationFit& fit) {
  JsonReader m(v, path);
  const auto keys = detail::calibration_memory_keys();
  static const std::vector<std::string_view> names = detail::names_of(keys);
  m.reject_unknown(names);
  if (!m.is_object()) return m.error();
  const double allocated = m.number(key_in(keys, "peak_allocated_gib")) * kGiB;
  const bool has_reserved = m.has("peak_reserved_gib");
  const double reserved = has_reserved ? m.number(key_in(keys, "peak_reserved_gib")) * kGiB : 0;
  if (!m.ok()) return m.error();
  const Report predicted = estimate(s);
  const StageReport* fullest = nullptr;
  for (const auto& st : predicted.stages)
    if (!fullest || st.memory.allocated > fullest->memory.allocated) fullest = &st;
  if (!fullest) return std::nullopt;
  const double capacity = fullest->memory.capacity;
  for (const auto& [key, bytes] : {std::pair{"peak_allocated_gib", allocated},
                                   std::pair{"peak_reserved_gib", reserved}})
    if (bytes > capacity)
      return Error{ErrorCode::out_of_range, fmt::format("{}.{}", path, key),
                   fmt::format("{}.{}={:.4g} GiB is more than the GPU holds ({:.4g} GiB)", path,
                               key, bytes / kGiB, capacity / kGiB)};
  if (has_reserved && reserved < allocated)
    return Error{ErrorCode::out_of_range, path + ".peak_reserved_gib",
                 fmt::format("{}.peak_reserved_gib={:.4g} GiB is below peak_allocated_gib "
                             "({:.4g} GiB): the allocator reserves what it allocates",
                             path, reserved / kGiB, allocated / kGiB)};
  const double ratio = allocated / fullest->memory.allocated;
  if (!(ratio <= kMaxMeasuredOverPredicted && ratio >= 1 / kMaxMeasuredOverPredicted))
    return Error{ErrorCode::out_of_range, path + ".peak_allocated_gib",
                 fmt::format("{}.peak_allocated_gib={:.4g} GiB is {:.3g} times the {:.4g} GiB "
                             "Stepcast counts for this plan's fullest stage; a peak more than "
                             "{:g} times off either way is not of this plan (GiB per GPU?)",
                             path, allocated / kGiB, ratio, fullest->memory.allocated / kGiB,
                             kMaxMeasuredOverPredicted)};
  CalibrationFit::MemoryFit f;
  f.measured_allocated = allocated;
  f.measured_reserved = reserved;
  f.predicted_allocated = fullest->memory.allocated;
  f.stage = fullest->index;
  f.allocator_fraction = has_reserved ? reserved / allocated - 1
                                   : s.calibration.framework_memory_fraction;
  f.allowance_change = (allocated - fullest->memory.allocated) * (1 + f.allocator_fraction);
  s.calibration.framework_memory_fraction = f.allocator_fraction;
  const double held = s.calibration.framework_memory_bytes + f.allowance_change;
  if (held < 0)
    fit.warnings.push_back(fmt::format(
        "{}: Stepcast counts {:.2f} GiB more than was allocated, beyond its whole allowance "
        "outside the allocator; the verdict stays {:.2f} GiB above the measured peak",
        path, -f.allowance_change / kGiB, -held / kGiB));
  s.calibration.framework_memory_bytes = std::max(0.0, held);
  fit.memory = f;
  return std::nullopt;
}

Result<CalibrationFit> apply_calibration(const Json& calibration, const Json& document,
                                         Scenario& s, const Catalog& catalog) {
  JsonReader r(calibration, "calibration");
  static const std::vector<std::string_view> names = detail::names_of(detail::calibration_keys());
  r.reject_unknown(names);
  if (!r.is_object()) return r.error();
  const auto keys = detail::calibration_keys();
  CalibrationFit fit;
  fit.compute_scale = r.number(key_in(keys, "compute_scale"));
  fit.network_scale = r.number(key_in(keys, "network_scale"));
  if (!r.ok()) return r.error();

  // 1. Links measured with nccl-tests, for every group.
  for (const auto& [key, scope] : {std::pair{"intra_node_link", LinkScope::intra_node},
                                   std::pair{"inter_node_link", LinkScope::inter_node}}) {
    const Json* v = r.raw(key);
    if (!v) continue;
    auto link = calibration_link(*v, r.field(key), scope, catalog);
    if (!link) return link.error();
    for (auto& g : s.cluster.groups)
      (scope == LinkScope::intra_node ? g.intra_node_link : g.inter_node_link) = *link;
    (scope == LinkScope::intra_node ? fit.intra_node_link : fit.inter_node_link) = link->name;
    if (scope == LinkScope::inter_node && s.cluster.groups.size() > 1)
      s.cluster.inter_group_link = *link;
  }

  // 2. GEMM efficiencies from a benchmark table (gemm_fit.h), for the families of the cluster's
  // GPUs (a family the presets never fitted gets its own entry).
  if (const Json* gemm = r.raw("gemm")) {
    JsonReader g(*gemm, r.field("gemm"));
    const auto gkeys = detail::calibration_gemm_keys();
    static const std::vector<std::string_view> gnames = detail::names_of(gkeys);
    g.reject_unknown(gnames);
    if (!g.is_object()) return g.error();
    std::vector<std::optional<double>> v;
    for (const auto& k : gkeys) {
      v.push_back(g.has(k.name) ? std::optional<double>(g.number(k)) : std::nullopt);
    }
    if (!g.ok()) return g.error();
    // On a cluster that mixes GPU types one table would set all of them to one GPU's
    // efficiencies, silently wrong for the others.
    if (const ClusterGroup* other = other_gpu_type(s.cluster))
      return Error{ErrorCode::unsupported, r.field("gemm"),
                   fmt::format("{} fits one GPU type, and this cluster mixes {} and {}: give "
                               "the measured runs instead, or calibrate one group's cluster",
                               r.field("gemm"),
                               printable(s.cluster.groups.front().gpu.name, kNameInMessageBytes),
                               printable(other->gpu.name, kNameInMessageBytes))};
    const ArchCalibration preset = s.calibration.for_arch(s.cluster.groups.front().gpu.arch);
    for (const auto& group : s.cluster.groups) {
      const std::string& arch = group.gpu.arch;
      auto it = std::find_if(s.calibration.families.begin(), s.calibration.families.end(),
                             [&](const auto& f) { return f.first == arch; });
      if (it == s.calibration.families.end()) {
        s.calibration.families.emplace_back(arch, s.calibration.fallback);
        it = s.calibration.families.end() - 1;
      }
      ArchCalibration& a = it->second;
      if (v[0]) a.gemm_efficiency = *v[0];
      if (v[1]) a.fp8_gemm_efficiency = *v[1];
      if (v[2]) a.fp4_gemm_efficiency = *v[2];
      if (v[3]) a.gemm_overhead_s = *v[3];
    }
    const double presets[] = {preset.gemm_efficiency, preset.fp8_gemm_efficiency,
                              preset.fp4_gemm_efficiency, preset.gemm_overhead_s};
    for (size_t i = 0; i < gkeys.size() && i < 4; ++i)
      if (v[i])
        fit.gemm.push_back({std::string(gkeys[i].name), *v[i] / gkeys[i].scale,
                            presets[i] / gkeys[i].scale});
  }

  // 3. Layer profiles (HATP's input): measured layer times on a GPU of the cluster, for one
  // shape each; stage_cost.cpp uses them where a stage's GPU and the plan's shape match.
  if (const Json* profiles = r.raw("layer_profiles")) {
    const std::string path = r.field("layer_profiles");
    if (!profiles->is_array() || profiles->empty())
      return Error{ErrorCode::type_error, path,
                   path + " must be a list of one or more layer profiles"};
    if (profiles->size() > kMaxLayerProfiles)
      return Error{ErrorCode::budget_exceeded, path,
                   fmt::format("{} has {} profiles; at most {} are read", path,
                               profiles->size(), kMaxLayerProfiles)};
    const auto lkeys = detail::calibration_layer_keys();
    static const std::vector<std::string_view> lnames = detail::names_of(lkeys);
    for (size_t i = 0; i < profiles->size(); ++i) {
      JsonReader e((*profiles)[i], fmt::format("{}[{}]", path, i));
      e.reject_unknown(lnames);
      if (!e.is_object()) return e.error();
      LayerProfile lp;
      lp.gpu = e.string(key_in(lkeys, "gpu"));
      lp.micro_batch = e.integer(key_in(lkeys, "micro_batch"));
      lp.seq_len = e.integer(key_in(lkeys, "seq_len"), s.model.seq_len);
      lp.tp = static_cast<int>(e.integer(key_in(lkeys, "tp")));
      lp.cp = static_cast<int>(e.integer(key_in(lkeys, "cp")));
      lp.layers = e.choice(key_in(lkeys, "layers"));
      lp.forward_s = e.number(key_in(lkeys, "forward_s"));
      lp.backward_s = e.number(key_in(lkeys, "backward_s"));
      if (!e.ok()) return e.error();
      std::string ids;
      bool known = false;
      for (const auto& g : s.cluster.groups) {
        const std::string& id = g.gpu.id.empty() ? g.gpu.name : g.gpu.id;
        known = known || id == lp.gpu;
        if (ids.find(id) == std::string::npos) ids += (ids.empty() ? "" : ", ") + id;
      }
      if (!known)
        return Error{ErrorCode::invalid_cluster, e.field("gpu"),
                     fmt::format("{}={} is not a GPU of this cluster ({}): a layer profile "
                                 "calibrates the GPUs it ran on",
                                 e.field("gpu"), printable(lp.gpu, 40),
                                 printable(ids, 2 * kNameInMessageBytes))};
      // A profile of another shape serves measured runs and searches of that shape; say when
      // the plan on show is not one.
      const Plan& p = s.plan;
      ++fit.layer_profiles;
      const bool this_shape = lp.micro_batch == p.micro_batch && lp.seq_len == s.model.seq_len &&
                              lp.tp == p.tp && lp.cp == p.cp;
      fit.layer_profiles_used += this_shape;
      if (!this_shape)
        fit.warnings.push_back(fmt::format(
            "{}: profiled at micro-batch {}, sequence {}, TP {}, CP {}; this plan runs micro-batch "
            "{}, sequence {}, TP {}, CP {}: its layers keep the roofline's time",
            e.path(), lp.micro_batch, lp.seq_len, lp.tp, lp.cp, p.micro_batch, s.model.seq_len,
            p.tp, p.cp));
      bool any_moe = false, any_dense = false;
      for (int64_t l = 0; l < s.model.layers; ++l)
        (s.model.is_moe_layer(l) ? any_moe : any_dense) = true;
      if ((lp.layers == 2 && !any_moe) || (lp.layers == 1 && !any_dense))
        fit.warnings.push_back(fmt::format("{}: profiles the {} layers, and this model has none",
                                           e.path(), lp.layers == 2 ? "MoE" : "dense"));
      // Two profiles of one GPU, shape and layer kind: which one to believe is the user's call.
      const auto& kept = s.calibration.layer_profiles;
      for (size_t k = 0; k < kept.size(); ++k)
        if (kept[k].gpu == lp.gpu && kept[k].micro_batch == lp.micro_batch &&
            kept[k].seq_len == lp.seq_len && kept[k].tp == lp.tp && kept[k].cp == lp.cp &&
            kept[k].layers == lp.layers)
          return Error{ErrorCode::duplicate_key, e.path(),
                       fmt::format("{} profiles the same GPU, shape and layers as {}[{}]: keep "
                                   "one (or their mean)",
                                   e.path(), path, k)};
      s.calibration.layer_profiles.push_back(std::move(lp));
    }
  }

  // 4. A measured peak: the allocator's share and the allowance.
  if (const Json* memory = r.raw("memory"))
    if (auto e = fit_memory(*memory, r.field("memory"), s, fit)) return *e;

  // 5. Measured runs: the scales.
  const Json* runs_json = r.raw("runs");
  if (!runs_json) {
    scale_scenario(s, fit.compute_scale, fit.network_scale);
    return fit;
  }
  const std::string runs_path = r.field("runs");
  if (r.has("compute_scale") || r.has("network_scale"))
    return Error{ErrorCode::duplicate_key, runs_path,
                 "calibration: give runs or the scales fitted from them, not both"};
  if (!runs_json->is_array() || runs_json->empty())
    return Error{ErrorCode::type_error, runs_path,
                 runs_path + " must be a list of one or more measured runs"};
  if (runs_json->size() > kMaxMeasuredRuns)
    return Error{ErrorCode::budget_exceeded, runs_path,
                 fmt::format("{} has {} runs; at most {} are fitted", runs_path, runs_json->size(),
                             kMaxMeasuredRuns)};
  std::vector<Run> read;
  for (size_t i = 0; i < runs_json->size(); ++i) {
    auto run = read_run((*runs_json)[i], fmt::format("{}[{}]", runs_path, i), document, s, fit,
                        catalog);
    if (!run) return run.error();
    read.push_back(std::move(run).value());
  }
  // A run the engine predicts out of memory still ran: its time is fitted as measured, but the
  // plan as written is likely not what ran (recompute, offloading or a framework's memory
  // savings left out), so the fit may be off: say so, naming the run.
  for (size_t i = 0; i < read.size(); ++i) {
    const Report predicted = estimate(read[i].scenario);
    // A measured step far from what the plan predicts is not a time of this plan (a unit slip,
    // the whole run's time, 1e-300): refused, where the fit would only clamp the scale at its
    // bound and calibrate every estimate by it.
    const double ratio = read[i].measured_s / predicted.iteration_time_s;
    if (!(ratio <= kMaxMeasuredOverPredicted && ratio >= 1 / kMaxMeasuredOverPredicted))
      return Error{ErrorCode::out_of_range,
                   fmt::format("{}[{}].measured_iteration_s", runs_path, i),
                   fmt::format("{}[{}].measured_iteration_s={:.4g} s is {:.3g} times the {:.4g} s "
                               "Stepcast predicts for its plan; a measured step more than {:g} "
                               "times off either way is not of this plan (seconds per "
                               "iteration?)",
                               runs_path, i, read[i].measured_s, ratio,
                               predicted.iteration_time_s, kMaxMeasuredOverPredicted)};
    if (predicted.fits) continue;
    const StageReport* fullest = nullptr;
    for (const auto& st : predicted.stages)
      if (!fullest || st.memory.total / st.memory.capacity >
                          fullest->memory.total / fullest->memory.capacity)
        fullest = &st;
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    fit.warnings.push_back(fmt::format(
        "{}[{}]: Stepcast predicts this plan does not fit in memory{}; its measured time is "
        "fitted as given, but check the plan for what it left out (recompute, offloading)",
        runs_path, i,
        fullest ? fmt::format(" (stage {} needs {:.1f} GiB of {:.1f} GiB)", fullest->index,
                              fullest->memory.total / kGiB, fullest->memory.capacity / kGiB)
                : std::string()));
  }
  std::vector<MeasuredRun> runs;
  for (const auto& r : read) runs.push_back({&r.scenario, r.measured_s});
  const ScaleFit scales = fit_scales(runs);
  const double c = scales.compute_scale, n = scales.network_scale;
  fit.network_fitted = scales.network_fitted;
  if (!scales.network_fitted) {
    fit.warnings.push_back(
        runs.size() == 1
            ? "calibration: one measured run fits the compute scale only, which then absorbs "
              "the network's error too; a second run that differs in communication (another "
              "tp, dp or node count) fits the network apart"
            : "calibration: the measured runs cannot separate compute from network (their "
              "communication shares are alike); the compute scale absorbs both");
  }
  fit.compute_fitted = true;
  fit.compute_scale = c;
  fit.network_scale = n;
  if (scales.at_bound)
    fit.warnings.push_back(fmt::format(
        "calibration: a fitted scale reached its bound (compute {}..{}, network {}..{} times the "
        "presets): the measured times are far from anything these scenarios predict; check the "
        "runs' plans",
        kMinScale, kMaxScale, kMinNetwork, kMaxNetwork));
  for (const auto& run : runs)
    fit.runs.push_back({run.measured_s, predicted_iteration_s(*run.scenario, 1, 1),
                        predicted_iteration_s(*run.scenario, c, n)});
  scale_scenario(s, c, n);
  return fit;
}

Json compact_calibration(const Json& calibration, const CalibrationFit& fit) {
  Json out = Json::object();
  for (const char* key : {"intra_node_link", "inter_node_link", "gemm", "layer_profiles", "memory"})
    if (calibration.contains(key)) out[key] = calibration[key];
  // Seven significant digits: the link's estimate within 1e-6 of the fitted one at any scale
  // (six decimals, as before, left a scale of 0.1 only five digits: 1.2e-6 off, the fuzzer found).
  auto rounded = [](double v) { return std::strtod(fmt::format("{:.7g}", v).c_str(), nullptr); };
  if (fit.compute_scale != 1) out["compute_scale"] = rounded(fit.compute_scale);
  if (fit.network_scale != 1) out["network_scale"] = rounded(fit.network_scale);
  return out;
}

}  // namespace stepcast
