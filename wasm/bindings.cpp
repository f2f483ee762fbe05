// The page's engine (stepcast.js and .wasm): Embind bindings, JSON in, JSON out. No engine logic
// here; errors come back as {"error": {"code", "path", "message", ...}} values (docs/scenario.md,
// "Errors"), never as an abort. What a user's action calls once (imports, exports, calibration
// fits, the traffic card) is the tools module's (tool_bindings.cpp), off the first visit. Each is
// declared beside this file in stepcast.d.ts (tests/wasm/bindings.test.mjs).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "binding_text.h"
#include "stepcast/calibrate.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/limits.h"
#include "stepcast/resolve.h"
#include "stepcast/scaling.h"
#include "stepcast/schema.h"
#include "stepcast/search.h"
#include "stepcast/share_link.h"
#include "stepcast/stepcast.h"

namespace {

using stepcast_wasm::as_js;
using stepcast_wasm::error_text;
using stepcast_wasm::finite_text;
using stepcast_wasm::js_string;
using stepcast_wasm::text;

// A binding a user's action calls once (a link read or written): built for size and never
// inlined, so that link-time optimisation does not copy the engine code it calls into it at -O3
// (the traffic card's alone was 24 KB of the module, before it moved to the tools module). Only the function
// itself is marked: the engine code it calls keeps its own optimisation, and the estimate's and
// the search's paths are not touched.
#define STEPCAST_COLD_BINDING __attribute__((minsize, noinline))

// The estimate options: {"report": "full" | "summary", "timeline": true | false}
// (estimate.h's ReportKind, full when absent; the schedule's events, there when absent: the
// page draws them. A sweep asks for {"report": "summary", "timeline": false}, what
// `stepcast estimate --report summary` writes.)
struct ReportOptions {
  stepcast::ReportKind kind = stepcast::ReportKind::full;
  bool timeline = true;
};
stepcast::Result<ReportOptions> report_options(const std::string& options_json) {
  auto opts = stepcast::parse_json(options_json.empty() ? "{}" : options_json, "the options");
  if (!opts) return opts.error();
  ReportOptions out;
  if (!opts->is_object()) return out;
  if (opts->contains("report")) {
    const stepcast::Json& report = (*opts)["report"];
    const auto kind = report.is_string()
                          ? stepcast::enum_from<stepcast::ReportKind>(report.get<std::string>())
                          : std::nullopt;
    if (!kind)
      return stepcast::Error{stepcast::ErrorCode::out_of_range, "report",
                             "report must be full or summary"};
    out.kind = *kind;
  }
  if (opts->contains("timeline")) {
    const stepcast::Json& timeline = (*opts)["timeline"];
    if (!timeline.is_boolean())
      return stepcast::Error{stepcast::ErrorCode::type_error, "timeline",
                             "timeline must be true or false"};
    out.timeline = timeline.get<bool>();
  }
  return out;
}

// estimate(scenario) or estimate(scenario, options): the report, or the error.
std::string estimate_with(const std::string& scenario_json, const std::string& options_json) {
  const auto wanted = report_options(options_json);
  if (!wanted) return error_text(wanted.error());
  const stepcast::Catalog& catalog = stepcast::builtin_catalog();
  auto scenario = stepcast::parse_scenario(scenario_json, catalog);
  if (!scenario) return error_text(scenario.error());
  stepcast::EstimateOptions options;
  options.timeline = wanted->timeline;
  auto report = stepcast::report_text(stepcast::estimate(*scenario, options), -1, wanted->kind);
  if (!report) return error_text(report.error());
  return std::move(report).value();
}
std::string estimate_json(const std::string& scenario_json) {
  return estimate_with(scenario_json, "");
}

// The names of the timeline's event kinds, in the order of their numbers in estimateColumns.
emscripten::val timeline_kinds() {
  emscripten::val names = emscripten::val::array();
  for (auto k : stepcast::enum_names<stepcast::TimelineKind>()) names.call<void>("push", std::string(k));
  return names;
}

// The web page's fast path: the same report as estimate(), but the timeline's events leave as one
// Float64Array of 6 numbers each (stage, kind, micro_batch, chunk, start_s, end_s; kind indexes
// `kinds`) instead of JSON objects, whose building costs ~1 us per event (most of an estimate).
// Returns {json, events, kinds, placement}; `json` is the report with "timeline": {"events": [],
// ...}, or the error; `kinds` names the kind numbers (timelineKinds()); `placement` holds 2
// numbers per event (replica, group). Options as estimate()'s.
// tests/wasm checks that it rebuilds to exactly estimate()'s report.
emscripten::val estimate_columns_with(const std::string& scenario_json,
                                      const std::string& options_json) {
  emscripten::val out = emscripten::val::object();
  const auto wanted = report_options(options_json);
  if (!wanted) {
    out.set("json", js_string(error_text(wanted.error())));
    return out;
  }
  const stepcast::Catalog& catalog = stepcast::builtin_catalog();
  auto scenario = stepcast::parse_scenario(scenario_json, catalog);
  if (!scenario) {
    out.set("json", js_string(error_text(scenario.error())));
    return out;
  }
  stepcast::EstimateOptions options;
  options.timeline = wanted->timeline;
  stepcast::Report report = stepcast::estimate(*scenario, options);
  std::vector<stepcast::TimelineEvent> events = std::move(report.timeline);
  report.timeline.clear();
  std::vector<double> packed, placement;
  packed.reserve(6 * events.size());
  placement.reserve(2 * events.size());
  for (const auto& e : events) {
    packed.insert(packed.end(), {static_cast<double>(e.stage), static_cast<double>(e.kind),
                                 static_cast<double>(e.micro_batch), static_cast<double>(e.chunk),
                                 e.start_s, e.end_s});
    placement.insert(placement.end(),
                     {static_cast<double>(e.replica), static_cast<double>(e.group)});
  }
  auto json = stepcast::report_text(report, -1, wanted->kind);  // events moved out: checked below
  if (!json) {
    out.set("json", js_string(error_text(json.error())));
    return out;
  }
  for (const auto& e : events)
    if (!std::isfinite(e.start_s) || !std::isfinite(e.end_s)) {
      out.set("json", js_string(error_text(stepcast::Error{stepcast::ErrorCode::unsupported, "",
                                                 "the estimate's timeline is not finite numbers: "
                                                 "the inputs are beyond what the model computes"})));
      return out;
    }
  out.set("json", js_string(*json));
  // slice() copies the view out of the module's memory into an array JavaScript owns.
  out.set("events", emscripten::val(emscripten::typed_memory_view(packed.size(), packed.data()))
                        .call<emscripten::val>("slice"));
  out.set("placement",
          emscripten::val(emscripten::typed_memory_view(placement.size(), placement.data()))
              .call<emscripten::val>("slice"));
  out.set("kinds", timeline_kinds());
  return out;
}
emscripten::val estimate_columns(const std::string& scenario_json) {
  return estimate_columns_with(scenario_json, "");
}

// {"scenario": {...}, "page": {...}} -> {"link": "<base>#v=3&...&end", "left_out": [paths]}
STEPCAST_COLD_BINDING std::string to_link_json(const std::string& document_json, const std::string& base) {
  auto doc = stepcast::parse_json(document_json, "the document");
  if (!doc) return error_text(doc.error());
  if (!doc->is_object() || !doc->contains("scenario"))
    return error_text(stepcast::Error{stepcast::ErrorCode::parse_error, "",
                                      "expected {\"scenario\": ..., \"page\": ...}"});
  stepcast::LinkDocument link_doc{(*doc)["scenario"],
                                  doc->value("page", stepcast::Json::object())};
  auto link = stepcast::scenario_to_link(link_doc, base);
  if (!link) return error_text(link.error());
  // "left_out": the paths the link does not carry (a custom model's source and notes), which the
  // page says beside its Copy link button.
  stepcast::Json out = stepcast::Json::object();
  out["link"] = *link;
  out["left_out"] = stepcast::Json::array();
  for (const std::string& path : stepcast::link_leaves_out(link_doc.scenario))
    out["left_out"].push_back(path);
  return text(out);
}

// A URL (or its fragment) -> {"scenario": {...}, "page": {...}}
STEPCAST_COLD_BINDING std::string from_link_json(const std::string& url) {
  auto doc = stepcast::scenario_from_link(url);
  if (!doc) return error_text(doc.error());
  return text(stepcast::Json{{"scenario", doc->scenario}, {"page", doc->page}});
}

// The plan search around a scenario: {"best": [...], "evaluated", ...} or {"error": ...}. The
// scenario's own plan may break a rule the search varies (then "baseline_error" says which).
std::string search_json(const std::string& scenario_json, int top) {
  const auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return error_text(doc.error());
  auto scenario = stepcast::read_scenario(*doc, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  stepcast::SearchOptions options;
  options.top = static_cast<size_t>(std::clamp(top, 1, 1000));
  auto result = stepcast::search_plans(*scenario, options);
  if (!result) return error_text(result.error());
  return text(stepcast::to_json(*result));
}

// Every key of a scenario: type, range or choices, default, unit, doc, link name, page control;
// and "search", what the plan search varies and keeps.
std::string schema_json() { return stepcast::schema_document().dump(); }

// Every key a report holds, table by table (report.h's report_schema): the page's parts, labels
// and units.
std::string report_schema_json() { return stepcast::report_schema().dump(); }

// The scenario with every default and derived value filled in, or every problem of it.
std::string resolve_json(const std::string& scenario_json) {
  const auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return text(stepcast::Json{{"errors", {stepcast::to_json(doc.error())["error"]}}});
  return text(stepcast::resolve_json(*doc, stepcast::builtin_catalog()));
}

// The scaling sweep (`stepcast scaling --format json`): the scenario at other node counts and TP
// degrees, {"base", "nodes": [...], "tp": [...]} or the error.
std::string scaling_json(const std::string& scenario_json) {
  const auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return error_text(doc.error());
  auto swept = stepcast::scaling_sweep(*doc, stepcast::builtin_catalog());
  if (!swept) return error_text(swept.error());
  return finite_text(stepcast::to_json(*swept), "scaling");
}

std::string presets_json() { return stepcast::builtin_catalog().documents.dump(); }

std::string version() { return STEPCAST_VERSION; }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcast) {
  // Overloaded by argument count: (scenario) as ever, or (scenario, options JSON).
  emscripten::function("estimate", &as_js<estimate_json, const std::string&>);
  emscripten::function("estimate", &as_js<estimate_with, const std::string&, const std::string&>);
  emscripten::function("estimateColumns", &estimate_columns);
  emscripten::function("estimateColumns", &estimate_columns_with);
  emscripten::function("presets", &as_js<presets_json>);
  emscripten::function("version", &version);
  emscripten::function("toLink", &to_link_json);
  emscripten::function("fromLink", &from_link_json);
  emscripten::function("search", &as_js<search_json, const std::string&, int>);
  emscripten::function("schema", &as_js<schema_json>);
  emscripten::function("reportSchema", &as_js<report_schema_json>);
  emscripten::function("resolve", &as_js<resolve_json, const std::string&>);
  emscripten::function("scaling", &as_js<scaling_json, const std::string&>);
  emscripten::function("timelineKinds", &timeline_kinds);
}
