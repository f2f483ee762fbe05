// The calibration's fit as the report states it (the report's "calibration").
#include <cmath>

#include "stepcast/report.h"

namespace stepcast {

Json calibration_json(const CalibrationFit& fit) {
  auto pct = [](double scale) { return std::round((scale - 1) * 1000) / 10; };
  Json out{{"compute_scale", fit.compute_scale},
           {"compute_change_pct", pct(fit.compute_scale)},
           {"compute_scale_fitted", fit.compute_fitted},
           {"network_scale", fit.network_scale},
           {"network_change_pct", pct(fit.network_scale)},
           {"network_scale_fitted", fit.network_fitted}};
  if (!fit.intra_node_link.empty()) out["intra_node_link"] = fit.intra_node_link;
  if (!fit.inter_node_link.empty()) out["inter_node_link"] = fit.inter_node_link;
  for (const auto& g : fit.gemm)  // what the GEMM table moved, beside the preset's value
    out["gemm"][g.key] = {{"value", g.value},
                          {"preset", g.preset},
                          {"change_pct", g.preset > 0
                                             ? std::round((g.value / g.preset - 1) * 1000) / 10
                                             : 0.0}};
  if (fit.layer_profiles > 0) {
    out["layer_profiles"] = fit.layer_profiles;
    out["layer_profiles_used"] = fit.layer_profiles_used;
  }
  Json runs = Json::array();
  for (const auto& r : fit.runs)
    runs.push_back({{"measured_iteration_s", r.measured_s},
                    {"preset_iteration_s", r.preset_s},
                    {"calibrated_iteration_s", r.calibrated_s},
                    {"calibrated_error_pct",
                     std::round((r.calibrated_s / r.measured_s - 1) * 1000) / 10}});
  if (!runs.empty()) out["runs"] = std::move(runs);
  if (const auto& m = fit.memory) {
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    out["memory"] = {{"stage", m->stage},
                     {"measured_allocated_gib", m->measured_allocated / GiB},
                     {"predicted_allocated_gib", m->predicted_allocated / GiB},
                     {"allocator_fraction", m->allocator_fraction},
                     {"allowance_change_gib", m->allowance_change / GiB}};
    if (m->measured_reserved > 0)
      out["memory"]["measured_reserved_gib"] = m->measured_reserved / GiB;
  }
  return out;
}

}  // namespace stepcast
