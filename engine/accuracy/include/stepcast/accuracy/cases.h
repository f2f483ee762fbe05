// A case: one published run as a scenario with its measured iteration time, where the time
// came from and every assumption made to build the scenario. Cases are stored as JSON Lines
// (tests/validation/cases.jsonl) and parsed once into engine scenarios for prediction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"
#include "stepcast/scenario.h"

namespace stepcast::accuracy {

// One published run as a scenario with its measured iteration time.
struct Case {
  std::string id;
  std::string source;       // id prefix
  std::string citation;     // the row's `source` column (paper / repository and commit)
  std::string locator;      // the row's `source_locator` column (table, section)
  double measured_iter_time_s = 0;
  std::string iter_time;    // "measured", or how it was derived from a measured rate
  std::vector<std::string> assumptions;  // every value the row does not state, and its origin
  Json scenario;            // the scenario document (docs/scenario.md schema)
};

// A case as one JSON object, keys in the order people read them (identity, the measurement, its
// provenance, the scenario), and back.
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

}  // namespace stepcast::accuracy
