// A scenario's `calibration`: this cluster as measured. Link objects fitted to nccl-tests
// (nccl_tests.h) replace the presets' links; measured iterations of one or more plans fit two
// scales, one on compute efficiency and one on link bandwidth, that every other plan on the
// cluster is then predicted with.
//
// The fit: the predicted iteration time falls as either scale grows. One run (or runs whose
// communication share is alike) pins only the compute scale, which then absorbs the network's
// error too (a warning says so); runs that differ in communication pin both (least squares on
// log time, Gauss-Newton).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"

namespace stepcast {

struct Scenario;

inline constexpr size_t kMaxMeasuredRuns = 16;
inline constexpr size_t kMaxLayerProfiles = 64;

struct MeasuredRunFit {
  double measured_s = 0;
  double preset_s = 0;      // predicted before the calibration's scales
  double calibrated_s = 0;  // predicted with them
};

struct CalibrationFit {
  double compute_scale = 1;
  double network_scale = 1;
  bool compute_fitted = false;  // from runs (else given or 1)
  bool network_fitted = false;
  std::string intra_node_link;  // names of the links the calibration put in (empty: none)
  std::string inter_node_link;
  struct GemmChange {           // a value calibration.gemm set, and the preset's it replaced
    std::string key;            // calibration.gemm's key
    double value = 0, preset = 0;  // in the key's unit (µs for gemm_overhead_us)
  };
  std::vector<GemmChange> gemm;
  int layer_profiles = 0;       // calibration.layer_profiles given
  int layer_profiles_used = 0;  // of them, those of this plan's shape (used where GPUs match)
  std::vector<MeasuredRunFit> runs;
  std::vector<std::string> warnings;
};

// One measured iteration of a scenario (which the caller keeps alive).
struct MeasuredRun {
  const Scenario* scenario = nullptr;
  double measured_s = 0;
};

struct ScaleFit {
  double compute_scale = 1;
  double network_scale = 1;
  bool network_fitted = false;  // the runs separate the network from compute
  bool at_bound = false;        // a scale stopped at 0.1 or 10 times the presets
};

// The scales that make the runs' predictions meet their measured times (least squares on log
// time): compute alone when the runs cannot separate the two, else both.
ScaleFit fit_scales(const std::vector<MeasuredRun>& runs);

// The predicted iteration time of `scenario` with both scales applied.
double predicted_iteration_s(const Scenario& scenario, double compute_scale, double network_scale);

// Scales a scenario's compute efficiencies and link bandwidths (1 and 1 leave it as it is).
void scale_scenario(Scenario& scenario, double compute_scale, double network_scale);

// Reads `calibration` of `document` (the scenario `scenario` was read from) and applies it to
// `scenario`: its links, then its scales, fitted from its runs when it has them. Errors carry
// the JSON path (calibration.runs[1].plan.tp, ...).
Result<CalibrationFit> apply_calibration(const Json& calibration, const Json& document,
                                         Scenario& scenario, const Catalog& catalog);

// The fit as the report states it: each scale, how far it moved from the presets (percent), the
// links put in and each run's measured, preset and calibrated times.
Json calibration_json(const CalibrationFit& fit);

// The calibration a share link carries: the fitted scales and links, never the runs behind them.
Json compact_calibration(const Json& calibration, const CalibrationFit& fit);

}  // namespace stepcast
