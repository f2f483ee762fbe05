// What a scenario's `calibration` did to it: the scales fitted from measured runs, the links and GEMM
// values it put in, and how each run came out (the report's "calibration"). Types only, so the
// scenario can carry its fit; the fitting itself is calibrate.h.
#pragma once

#include <string>
#include <vector>

namespace stepcast {

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

}  // namespace stepcast
