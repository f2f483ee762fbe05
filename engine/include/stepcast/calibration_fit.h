// What a scenario's `calibration` did to it: the scales fitted from measured runs, the links and GEMM
// values it put in, and how each run came out (the report's "calibration"). Types only, so the
// scenario can carry its fit; the fitting itself is calibrate.h.
#pragma once

#include <optional>
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
  // calibration.memory: a measured peak of the scenario's own plan on its fullest GPU, against
  // the engine's count at the presets' allowance (bytes).
  struct MemoryFit {
    double measured_allocated = 0, measured_reserved = 0;  // reserved 0: not given
    double predicted_allocated = 0;                        // the fullest stage, presets' allowance
    double allocator_fraction = 0;  // reserved / allocated - 1, as measured (else the preset's)
    double allowance_change = 0;    // added to what the software holds beyond the count
    int stage = 0;
  };
  std::optional<MemoryFit> memory;
  std::vector<std::string> warnings;
};

}  // namespace stepcast
