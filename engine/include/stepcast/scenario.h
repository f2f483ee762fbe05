// A scenario: what is trained, on what, how. The JSON form (docs/scenario.md, described key by key
// in schema.h) names presets; the resolved form below holds every number the estimate needs, so
// estimate() is a pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/hardware.h"
#include "stepcast/calibration_fit.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"
#include "stepcast/result.h"

namespace stepcast {

struct Scenario {
  ModelSpec model;  // seq_len already overridden by the scenario's top-level seq_len
  ClusterSpec cluster;
  Plan plan;
  Calibration calibration;
  std::string name;  // the document's free-text name, if any
  const FrameworkProfile* framework = nullptr;  // the catalog's profile of plan.framework
  // The document's `calibration`, applied above (links, scales); what was fitted, for the report.
  std::optional<CalibrationFit> fit;
};

// Parses a scenario document, applies its calibration and checks it against the catalog's
// presets. Every problem is an Error naming the JSON path, the value and the rule; this returns
// the first.
Result<Scenario> parse_scenario(std::string_view json_text, const Catalog& catalog);

// The same, for a document already parsed by nlohmann::json (see catalog.h for the type).
Result<Scenario> scenario_from_json(const Json& document, const Catalog& catalog);

// Every problem of a document at once (empty when it is a valid scenario): each key's type and
// range, then, when the keys read, every plan rule. The page marks each on its control.
std::vector<Error> scenario_errors(const Json& document, const Catalog& catalog);

// The keys of a document read into a scenario, before the plan's rules are checked: what the
// plan search needs when the plan on show breaks a rule it is about to vary anyway.
Result<Scenario> read_scenario(const Json& document, const Catalog& catalog);

// The plan's rules against the model and cluster (divisibility, sizes, placement). Appends every
// broken rule to `errors` and returns whether there were none; with errors = nullptr it stops at
// the first and formats nothing (the plan search checks thousands of plans).
bool check_scenario(const Scenario& scenario, std::vector<Error>* errors = nullptr);

// The steps the functions above compose (engine/src/load.cpp: read -> calibrate -> check):
// the document's keys read into a scenario, every key but `calibration` (every problem goes to
// `errors`), and read + check without the calibration: how a calibration's measured runs are read.
std::optional<Scenario> read_keys(const Json& document, const Catalog& catalog,
                                  std::vector<Error>& errors);
Result<Scenario> scenario_without_calibration(const Json& document, const Catalog& catalog);

// Whether Megatron-Core admits EP communication overlap (plan.moe_overlap) for this model and
// plan: the conditions check_scenario names one by one when it is set.
bool moe_overlap_admitted(const ModelSpec& model, const Plan& plan);

}  // namespace stepcast
