// A scenario: what is trained, on what, how. The JSON form (docs/scenario.md) names presets; the
// resolved form below holds every number the estimate needs, so estimate() is a pure function.
#pragma once

#include <string>
#include <string_view>

#include "stepcast/catalog.h"
#include "stepcast/hardware.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"
#include "stepcast/result.h"

namespace stepcast {

struct Scenario {
  ModelSpec model;  // seq_len already overridden by the scenario's top-level seq_len
  ClusterSpec cluster;
  Plan plan;
  Calibration calibration;
};

// Parses and validates a scenario document against the catalog's presets. Every rule violation
// is an Error naming the JSON path, the value and the rule.
Result<Scenario> parse_scenario(std::string_view json_text, const Catalog& catalog);

// The same, for a document already parsed by nlohmann::json (see catalog.h for the type).
Result<Scenario> scenario_from_json(const Json& document, const Catalog& catalog);

// Checks the plan against the model and cluster (divisibility, sizes); parse_scenario calls it.
std::optional<Error> validate(const Scenario& scenario);

}  // namespace stepcast
