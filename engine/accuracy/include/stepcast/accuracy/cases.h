// A case: one published run as a scenario with what was measured on it (its iteration time, or
// its peak memory per GPU), where the measurement came from and every assumption made to build
// the scenario. Cases are stored as JSON Lines (tests/validation/cases.jsonl, memory-cases.jsonl)
// and parsed once into engine scenarios for prediction.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"
#include "stepcast/scenario.h"

namespace stepcast::accuracy {

// A measured peak of memory per GPU, in GiB (2^30 bytes), as PyTorch's caching allocator counts
// it: bytes held by live tensors (torch.cuda.max_memory_allocated) and bytes the allocator
// holds from the driver (max_memory_reserved), each the largest over the run's ranks. Either
// may be missing where the source gives only one.
struct MeasuredPeak {
  std::optional<double> allocated_gib;
  std::optional<double> reserved_gib;
  std::string metric;  // what the source measured, in its words
};

// One published run as a scenario with its measured iteration time or its measured peak memory
// (a memory case, measured_iter_time_s 0).
struct Case {
  std::string id;
  std::string source;       // id prefix
  std::string citation;     // the row's `source` column (paper / repository and commit)
  std::string locator;      // the row's `source_locator` column (table, section)
  double measured_iter_time_s = 0;  // 0: not measured (a memory case)
  std::string iter_time;    // "measured", or how it was derived from a measured rate
  std::optional<MeasuredPeak> peak;  // a memory case's measurement
  std::vector<std::string> assumptions;  // every value the row does not state, and its origin
  Json scenario;            // the scenario document (docs/scenario.md schema)
};

// A case as one JSON object, keys in the order people read them (identity, the measurement, its
// provenance, the scenario), and back. A case measures a time (measured_iter_time_s > 0) or a
// peak (measured_peak_allocated_gib and/or measured_peak_reserved_gib > 0); anything else is an
// error naming the field, its value and the rule. `prepare` rejects the peaks a run cannot have
// had: reserved below allocated (the allocator holds every byte it hands out), or above the GPU's
// memory.
nlohmann::ordered_json to_json(const Case& c);
Result<Case> case_from_json(const Json& j);

// Cases in JSON Lines (one case object per line; blank lines ignored).
Result<std::vector<Case>> parse_cases_jsonl(std::string_view text);
std::string to_jsonl(const std::vector<Case>& cases);

// A case with its scenario parsed once, so a fit can re-run estimate() with other constants.
struct PreparedCase {
  Case data;
  Scenario scenario;
};
Result<std::vector<PreparedCase>> prepare(const std::vector<Case>& cases, const Catalog& catalog);

// The cases of a set that measure an iteration time, and those that measure a peak.
std::vector<PreparedCase> time_cases(const std::vector<PreparedCase>& cases);
std::vector<PreparedCase> memory_cases(const std::vector<PreparedCase>& cases);

}  // namespace stepcast::accuracy
