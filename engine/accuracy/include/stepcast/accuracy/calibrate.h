// Fitting the achievable-efficiency constants (presets/calibration.json) to published runs.
// Physics stays fixed: peaks, bandwidths and latencies come from the presets. Only the
// per-architecture-family constants of ArchCalibration are searched, one family at a time, by
// coordinate descent with golden-section line searches inside physical bounds, minimising the
// mean absolute percentage error of the family's rows. The estimate is pure and fast, so the
// fit simply calls estimate() many times.
#pragma once

#include <string>
#include <vector>

#include "stepcast/accuracy/cases.h"
#include "stepcast/accuracy/statistics.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy {

// One fitted constant of one family, its search interval and where the bounds come from.
struct FitParameter {
  std::string key;  // calibration.json key: gemm_efficiency, fp8_gemm_efficiency, ...
  double lo = 0;
  double hi = 0;
  std::string bound_source;
};

// What may be fitted for a family, given the rows (a constant no row exercises stays as it is)
// and the catalog (measured GEMM and STREAM ceilings in the gpu presets bound the efficiencies).
std::vector<FitParameter> fit_parameters(const std::string& arch,
                                         const std::vector<const PreparedCase*>& rows,
                                         const Catalog& catalog);

struct FamilyFit {
  std::string arch;
  ArchCalibration constants;
  std::vector<std::string> fitted_keys;
  std::vector<FitParameter> parameters;  // the fitted keys with their bounds
  std::vector<std::string> fitted_on;  // row ids
  double mape_pct = 0;                 // in sample, over fitted_on
};

struct CalibrationFit {
  Calibration calibration;
  std::vector<FamilyFit> families;
};

// Fits every family that has rows (minus the excluded sources), starting from `start`.
CalibrationFit fit_calibration(const std::vector<PreparedCase>& cases, const Calibration& start,
                               const Catalog& catalog,
                               const std::vector<std::string>& exclude_sources = {});

// Leave-one-source-out: for each source, fit without it and predict its rows.
struct LosoRow {
  std::string source;
  int rows = 0;
  double in_sample_mape_pct = 0;
  double loso_mape_pct = 0;
  double loso_worst_pct = 0;
  std::string loso_worst_id;
};
struct LosoResult {
  std::vector<LosoRow> sources;
  Accuracy predictions;  // every row predicted by the fit that excluded its source
};
LosoResult leave_one_source_out(const std::vector<PreparedCase>& cases, const Calibration& start,
                                const Catalog& catalog);

// Leave one model family out (issue 34): for each architecture class of model_family.h, fit
// without all its rows and predict them; a LosoRow's `source` names the class. The honest figure
// for a kind of model the constants were never fitted on.
LosoResult leave_one_model_family_out(const std::vector<PreparedCase>& cases,
                                      const Calibration& start, const Catalog& catalog);

// A fitted constant within kAtBoundShare of its interval's width from a bound: the fit wanted to
// go further, so the constant absorbs physics the engine does not model (a bug report, the
// project's standards).
inline constexpr double kAtBoundShare = 0.01;
struct ConstantAtBound {
  std::string arch;
  std::string key;
  double value = 0;  // in the key's unit (µs keys in µs)
  double bound = 0;
  bool upper = false;
};
std::vector<ConstantAtBound> constants_at_bounds(const CalibrationFit& fit);

// presets/calibration.json with the fitted families written in (other keys and the key order
// kept as they are): the text of the new file.
std::string calibration_json(const CalibrationFit& fit, std::string_view original);

}  // namespace stepcast::accuracy
