// The report an estimate returns, written out: the JSON tree and the same JSON streamed into one
// string (what the command line and the bindings print), checked for numbers JSON cannot hold, and
// the text table for people. The room above the estimate (engine/src/report/).
#pragma once

#include <optional>
#include <string>

#include "stepcast/calibration_fit.h"
#include "stepcast/estimate.h"
#include "stepcast/json.h"

namespace stepcast {

Json to_json(const Report& report);
Json to_json(const Plan& plan);  // the resolved plan's main keys
Json to_json(const Error& error);

// The report as JSON, checked: every number in it finite. JSON has no word for NaN or infinity
// (nlohmann writes null), and a report must never hold one: an estimate that would is an error
// (`unsupported`, naming the first such number). The entry points (CLI, bindings) print this.
Result<Json> report_json(const Report& report);

// What a JSON report holds (`stepcast estimate --report`, the bindings' `report` option): `full`,
// every key (the document report_json builds); `summary`, the same without each stage's census
// operation list (`stages[].communication`, three quarters of a full report's bytes), for
// sweeps: every total, time, memory and headline key stays, with the same values.
enum class ReportKind { full, summary };
template <>
struct EnumNames<ReportKind> {
  static constexpr std::array<std::string_view, 2> values = {"full", "summary"};
};

// The same checked report as JSON text: for `full`, exactly what report_json(report)->dump(indent)
// prints (ensure_ascii off, invalid UTF-8 replaced; indent < 0: one line), written straight into
// one string without the tree. Errors as report_json's. What the entry points print.
Result<std::string> report_text(const Report& report, int indent = -1,
                                ReportKind kind = ReportKind::full);

// The first number in `json` that is NaN or infinite, as a JSON path ("breakdown_s.forward").
std::optional<std::string> non_finite_path(const Json& json);

// The same report as a table for people (`stepcast estimate --format text`).
std::string to_text(const Report& report, const Scenario& scenario);

// Every key a report holds, table by table: {"report": [{"name", "unit", "label", "doc"} plus
// "of" (the table of a nested object or of each element of an array), "array" and "summary"
// (false: left out of a summary report) where they apply], "breakdown_s": [...],
// "stages[]": [...], ...}, each table in reading order. The page takes its parts, labels and
// units from it (the `reportSchema` binding); docs/scenario.md's report tables are written from it.
Json report_schema();

// The report tables of docs/scenario.md: each "<!-- report: NAME -->" ... "<!-- /report -->"
// block of `doc` refilled with the key table NAME of report_schema() (or of `schema`, a table
// set of the same form: the traffic's); a block of a name `schema` lacks is left as it is.
std::string fill_report_tables(std::string_view doc);
std::string fill_report_tables(std::string_view doc, const Json& schema);

// The calibration's fit as the report states it: each scale, how far it moved from the presets
// (percent), the links put in and each run's measured, preset and calibrated times.
Json calibration_json(const CalibrationFit& fit);

}  // namespace stepcast
