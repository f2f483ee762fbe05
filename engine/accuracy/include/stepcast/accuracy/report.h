// The accuracy tables as `stepcast validate` and `stepcast calibrate` print them, in text for
// people and in JSON for machines.
#pragma once

#include <string>
#include <vector>

#include "stepcast/accuracy/calibrate.h"
#include "stepcast/accuracy/memory_accuracy.h"
#include "stepcast/accuracy/runs.h"
#include "stepcast/accuracy/statistics.h"
#include "stepcast/catalog.h"

namespace stepcast::accuracy {

// Per row, per source, Megatron-LM and overall.
Json to_json(const Accuracy& accuracy);
std::string to_text(const Accuracy& accuracy);

// What `stepcast validate` reports: the accuracy of the time cases, the rows it skipped and the
// rank order, and the accuracy of the memory cases where there are some.
struct ValidationReport {
  Accuracy accuracy;
  std::vector<Skipped> skipped;
  std::vector<RankGroup> ranks;
  std::optional<MemoryAccuracy> memory;
};
Json to_json(const ValidationReport& report);
std::string to_text(const ValidationReport& report);

// What `stepcast calibrate` reports: the fitted constants of each family with their bounds, the
// accuracy in sample, leave-one-source-out and leave-one-model-family-out, the constants at a
// bound, the skipped rows and the rank order.
struct CalibrationReport {
  std::vector<std::string> excluded_sources;
  CalibrationFit fit;
  Json written;  // the calibration.json the fit writes (calibration_json), parsed
  Accuracy in_sample;
  LosoResult loso;
  LosoResult lofo;  // leave one model family out: `source` names the family
  std::vector<ConstantAtBound> at_bounds;  // the fit's constants at a bound of their interval
  std::vector<Skipped> skipped;
  std::vector<RankGroup> ranks;
};
Json to_json(const CalibrationReport& report);
std::string to_text(const CalibrationReport& report);

}  // namespace stepcast::accuracy
