// Stepcast's lifecycle in one place, for a program that uses the engine (the command line, the
// WebAssembly bindings, a test):
//
//   1. read      text -> Json (json.h: parse_json, bounded)
//   2. load      Json -> Scenario: its keys read, its `calibration` applied, its rules checked
//                (scenario.h: scenario_from_json; every problem at once: scenario_errors)
//   3. estimate  Scenario -> Report, a pure function (estimate.h)
//   4. write     Report -> JSON or text (report.h: report_text, to_text)
//
// and what is built on them: the scenario resolved (resolve.h), the plan search (search.h), the
// traffic matrix (traffic.h), links (share_link.h), calibration from measurements (calibrate.h,
// nccl_tests.h, gemm_fit.h), other tools' formats (import_*.h, export_megatron.h). The presets
// compiled in are catalog.h's builtin_catalog().
#pragma once

#include "stepcast/catalog.h"
#include "stepcast/estimate.h"
#include "stepcast/json.h"
#include "stepcast/report.h"
#include "stepcast/scenario.h"

namespace stepcast {

// What `stepcast schema --format json` and the `schema` binding give a reader: every scenario
// key (schema.h's schema_json) and, as "search", what the plan search varies and keeps
// (search.h's search_space_json), the text of the page's "?" on its search; as "calibration", the
// bound on a measured run (calibrate.h's kMaxMeasuredOverPredicted).
Json schema_document();

}  // namespace stepcast
