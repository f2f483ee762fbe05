// Embind bindings: JSON in, JSON out. No engine logic here; errors come back as
// {"error": {"code", "path", "message"}} values, never as an abort.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <string>
#include <vector>

#include "stepcast/estimate.h"
#include "stepcast/share_link.h"
#include "stepcast/search.h"

namespace {

std::string estimate_json(const std::string& scenario_json) {
  const stepcast::Catalog& catalog = stepcast::builtin_catalog();
  auto scenario = stepcast::parse_scenario(scenario_json, catalog);
  if (!scenario) return stepcast::to_json(scenario.error()).dump();
  stepcast::EstimateOptions options;
  options.timeline = true;
  return stepcast::to_json(stepcast::estimate(*scenario, options)).dump();
}

// The web page's fast path: the same report as estimate(), but the timeline's events leave as one
// Float64Array of 6 numbers each (stage, kind, micro_batch, chunk, start_s, end_s; kind indexes
// `kinds`) instead of JSON objects, whose building costs ~1 us per event (most of an estimate).
// Returns {json, events, kinds, placement}; `json` is the report with "timeline": {"events": [],
// ...}, or the error; `placement` holds 2 numbers per event (replica, group).
// tests/wasm checks that it rebuilds to exactly estimate()'s report.
emscripten::val estimate_columns(const std::string& scenario_json) {
  emscripten::val out = emscripten::val::object();
  const stepcast::Catalog& catalog = stepcast::builtin_catalog();
  auto scenario = stepcast::parse_scenario(scenario_json, catalog);
  if (!scenario) {
    out.set("json", stepcast::to_json(scenario.error()).dump());
    return out;
  }
  stepcast::EstimateOptions options;
  options.timeline = true;
  stepcast::Report report = stepcast::estimate(*scenario, options);
  std::vector<stepcast::TimelineEvent> events = std::move(report.timeline);
  report.timeline.clear();
  std::vector<std::string> kinds;
  std::vector<double> packed, placement;
  packed.reserve(6 * events.size());
  placement.reserve(2 * events.size());
  for (const auto& e : events) {
    size_t kind = 0;
    while (kind < kinds.size() && kinds[kind] != e.kind) ++kind;
    if (kind == kinds.size()) kinds.push_back(e.kind);
    packed.insert(packed.end(), {static_cast<double>(e.stage), static_cast<double>(kind),
                                 static_cast<double>(e.micro_batch), static_cast<double>(e.chunk),
                                 e.start_s, e.end_s});
    placement.insert(placement.end(),
                     {static_cast<double>(e.replica), static_cast<double>(e.group)});
  }
  out.set("json", stepcast::to_json(report).dump());
  // slice() copies the view out of the module's memory into an array JavaScript owns.
  out.set("events", emscripten::val(emscripten::typed_memory_view(packed.size(), packed.data()))
                        .call<emscripten::val>("slice"));
  out.set("placement",
          emscripten::val(emscripten::typed_memory_view(placement.size(), placement.data()))
              .call<emscripten::val>("slice"));
  emscripten::val names = emscripten::val::array();
  for (const auto& k : kinds) names.call<void>("push", k);
  out.set("kinds", names);
  return out;
}

// {"scenario": {...}, "page": {...}} -> {"link": "<base>#v=1&..."}
std::string to_link_json(const std::string& document_json, const std::string& base) {
  stepcast::Json doc = stepcast::Json::parse(document_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("scenario"))
    return stepcast::to_json(stepcast::Error{stepcast::ErrorCode::parse_error, "",
                                             "expected {\"scenario\": ..., \"page\": ...}"})
        .dump();
  stepcast::LinkDocument link_doc{doc["scenario"], doc.value("page", stepcast::Json::object())};
  auto link = stepcast::scenario_to_link(link_doc, base);
  if (!link) return stepcast::to_json(link.error()).dump();
  return stepcast::Json{{"link", *link}}.dump();
}

// A URL (or its fragment) -> {"scenario": {...}, "page": {...}}
std::string from_link_json(const std::string& url) {
  auto doc = stepcast::scenario_from_link(url);
  if (!doc) return stepcast::to_json(doc.error()).dump();
  return stepcast::Json{{"scenario", doc->scenario}, {"page", doc->page}}.dump();
}

// The plan search around a scenario: {"best": [...], "evaluated", ...} or {"error": ...}.
std::string search_json(const std::string& scenario_json, int top) {
  auto scenario = stepcast::parse_scenario(scenario_json, stepcast::builtin_catalog());
  if (!scenario) return stepcast::to_json(scenario.error()).dump();
  if (scenario->cluster.groups.size() != 1)
    return stepcast::to_json(stepcast::Error{stepcast::ErrorCode::invalid_plan, "cluster.groups",
                                             "search: clusters of several groups are not "
                                             "searched; give one group"})
        .dump();
  stepcast::SearchOptions options;
  options.top = static_cast<size_t>(std::clamp(top, 1, 1000));
  return stepcast::to_json(stepcast::search_plans(*scenario, options)).dump();
}

std::string presets_json() { return stepcast::builtin_catalog().documents.dump(); }

std::string version() { return STEPCAST_VERSION; }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcast) {
  emscripten::function("estimate", &estimate_json);
  emscripten::function("estimateColumns", &estimate_columns);
  emscripten::function("presets", &presets_json);
  emscripten::function("version", &version);
  emscripten::function("toLink", &to_link_json);
  emscripten::function("fromLink", &from_link_json);
  emscripten::function("search", &search_json);
}
