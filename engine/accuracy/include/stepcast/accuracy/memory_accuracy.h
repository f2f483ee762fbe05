// How far the engine's peak memory per GPU is from measured peaks (tests/validation/
// memory-runs.csv as memory cases): the error of the predicted peak allocated and peak reserved
// of each case, and per source and overall the median, 90th percentile and mean of their
// absolute values, with the worst row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/accuracy/cases.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy {

// One memory case: what was measured and what the engine predicts, GiB per GPU, the largest
// over the pipeline's stages (the sources report the largest over ranks).
struct MemoryPrediction {
  std::string id;
  std::string source;
  std::optional<double> measured_allocated_gib, measured_reserved_gib;
  double predicted_allocated_gib = 0;
  double predicted_reserved_gib = 0;
  std::optional<double> allocated_error_pct, reserved_error_pct;  // where measured
  double capacity_gib = 0;
  bool fits = true;  // the engine's verdict for the run
};

// The errors of one measure (allocated or reserved) over a set of rows.
struct PeakErrors {
  int rows = 0;
  double median_pct = 0;  // of |error|
  double p90_pct = 0;     // of |error|, nearest rank: the ceil(0.9 n)-th smallest
  double mape_pct = 0;
  double worst_pct = 0;   // signed error of the row with the largest |error|
  std::string worst_id;
};

struct MemorySourceAccuracy {
  std::string source;
  int rows = 0;
  PeakErrors allocated, reserved;
};

struct MemoryAccuracy {
  std::vector<MemoryPrediction> rows;
  std::vector<MemorySourceAccuracy> sources;  // in order of first appearance
  MemorySourceAccuracy overall;
};

MemoryPrediction predict_memory(const PreparedCase& c, const Calibration& calibration);
MemoryAccuracy summarise_memory(std::vector<MemoryPrediction> rows);
MemoryAccuracy evaluate_memory(const std::vector<PreparedCase>& cases,
                               const Calibration& calibration);

Json to_json(const MemoryAccuracy& accuracy);
std::string to_text(const MemoryAccuracy& accuracy);

}  // namespace stepcast::accuracy
