// Embind bindings: JSON in, JSON out. No engine logic here; errors come back as
// {"error": {"code", "path", "message", ...}} values (docs/scenario.md, "Errors"), never as an
// abort. Each is declared beside this file in stepcast.d.ts (tests/wasm/bindings.test.mjs).
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "stepcast/calibrate.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/export_megatron.h"
#include "stepcast/gemm_fit.h"
#include "stepcast/import_hf_config.h"
#include "stepcast/import_megatron_args.h"
#include "stepcast/limits.h"
#include "stepcast/nccl_tests.h"
#include "stepcast/resolve.h"
#include "stepcast/scaling.h"
#include "stepcast/schema.h"
#include "stepcast/search.h"
#include "stepcast/share_link.h"
#include "stepcast/stepcast.h"
#include "stepcast/traffic.h"

namespace {

// A binding a user's action calls once (a paste, an import, an export, a link, the traffic card):
// built for size and never inlined, so that link-time optimisation does not copy the engine code
// it calls into it at -O3 (the traffic card's alone was 24 KB of the module). Only the function
// itself is marked: the engine code it calls keeps its own optimisation, and the estimate's and
// the search's paths are not touched.
#define STEPCAST_COLD_BINDING __attribute__((minsize, noinline))

// JSON out: whatever a string holds, the serialiser cannot abort the module.
std::string text(const stepcast::Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, stepcast::Json::error_handler_t::replace);
}
std::string error_text(const stepcast::Error& e) { return text(stepcast::to_json(e)); }
// A tool's answer, checked: JSON has no word for a number that is not finite (`what`: whose).
std::string finite_text(const stepcast::Json& j, const char* what) {
  if (auto bad = stepcast::non_finite_path(j))
    return error_text(stepcast::Error{stepcast::ErrorCode::unsupported, *bad,
                                      std::string(what) + ": a number is not finite"});
  return text(j);
}

// Text out as a JavaScript string in one TextDecoder call: Embind's std::string result walks the
// bytes one at a time in JavaScript (web/README.md, "Size and first load"). The same string,
// invalid UTF-8 replaced the same way (U+FFFD).
emscripten::val js_string(const std::string& s) {
  static const emscripten::val decoder = emscripten::val::global("TextDecoder").new_();
  return decoder.call<emscripten::val>(
      "decode", emscripten::val(emscripten::typed_memory_view(
                    s.size(), reinterpret_cast<const unsigned char*>(s.data()))));
}
// A binding that returns text, returning it as js_string does.
template <auto F, class... Args>
emscripten::val as_js(Args... args) {
  return js_string(F(args...));
}

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

// nccl-tests output -> a fitted link (`stepcast calibrate --nccl-tests`). In:
// {"files": [{"name": "all_reduce_perf.txt", "text": "..."}], "nics_per_node": 0, "gpu": "h100-sxm5-80gb"};
// out: {"link": {...link object...}, "checks": [{"label", "points", "max_busbw_error"}]} or an
// error. "gpu" (a preset id, or a custom GPU's name): output whose ranks name another GPU is
// refused, as `calibrate --gpu` refuses it.
STEPCAST_COLD_BINDING std::string nccl_link_json(const std::string& request_json) {
  auto doc = stepcast::parse_json(request_json, "the request");
  if (!doc) return error_text(doc.error());
  const stepcast::Json& req = *doc;
  if (!req.is_object() || !req.contains("files") || !req["files"].is_array())
    return error_text(stepcast::Error{stepcast::ErrorCode::parse_error, "files",
                                      "expected {\"files\": [{\"name\", \"text\"}]}"});
  std::vector<stepcast::NcclTestRun> runs;
  std::vector<std::string> names;
  for (size_t i = 0; i < req["files"].size(); ++i) {
    const stepcast::Json& f = req["files"][i];
    const std::string path = "files[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("text") || !f["text"].is_string())
      return error_text(stepcast::Error{stepcast::ErrorCode::type_error, path,
                                        path + " needs \"text\": the nccl-tests output"});
    const std::string name = f.contains("name") && f["name"].is_string()
                                 ? f["name"].get<std::string>() : std::string();
    auto run = stepcast::parse_nccl_tests(f["text"].get<std::string>(), name);
    if (!run) {
      auto e = run.error();
      e.path = path;
      return error_text(e);
    }
    if (req.contains("gpu") && req["gpu"].is_string()) {
      const std::string id = req["gpu"].get<std::string>();
      stepcast::GpuSpec custom;
      custom.name = id;
      const stepcast::GpuSpec* gpu = stepcast::builtin_catalog().find_gpu(id);
      if (auto e = stepcast::nccl_gpu_error(*run, gpu ? *gpu : custom)) {
        e->path = path;
        return error_text(*e);
      }
    }
    runs.push_back(std::move(run).value());
    names.push_back(name.empty() ? "pasted" : name);
  }
  const int nics = req.contains("nics_per_node") && req["nics_per_node"].is_number_integer()
                       ? std::clamp(req["nics_per_node"].get<int>(), 0, 4096) : 0;
  auto fit = stepcast::fit_nccl_link(runs, nics);
  if (!fit) return error_text(fit.error());
  stepcast::Json checks = stepcast::Json::array();
  for (const auto& c : fit->checks)
    checks.push_back({{"label", c.label}, {"points", c.points},
                      {"max_busbw_error", c.max_busbw_error},
                      {"mean_busbw_error", c.mean_busbw_error}});
  return text(stepcast::Json{{"link", stepcast::nccl_link_json(*fit, names)},
                             {"checks", std::move(checks)}});
}

// A GEMM benchmark table -> `calibration.gemm` (`stepcast calibrate --gemm`), fitted on the GPU of
// the scenario's cluster. In: {"text": "m,n,k,dtype,tflops\n...", "scenario": {...}}; out:
// {"gemm": {...}, "gpu", "rows", "max_time_error", "mean_time_error", "preset": {...}} or an
// error (on "text" for the table, on the scenario's own path for the scenario).
STEPCAST_COLD_BINDING std::string gemm_fit_request(const std::string& request_json) {
  auto doc = stepcast::parse_json(request_json, "the request");
  if (!doc) return error_text(doc.error());
  const stepcast::Json& req = *doc;
  if (!req.is_object() || !req.contains("text") || !req["text"].is_string() ||
      !req.contains("scenario"))
    return error_text(stepcast::Error{stepcast::ErrorCode::parse_error, "",
                                      "expected {\"text\": GEMM table, \"scenario\": {...}}"});
  auto scenario = stepcast::read_scenario(req["scenario"], stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  auto fit = stepcast::fit_gemm_table_on(req["text"].get<std::string>(), *scenario,
                                         stepcast::builtin_catalog());
  if (!fit) return error_text(fit.error());
  return text(*fit);
}

// A scenario whose `calibration` has measured runs -> the same scenario with the calibration as
// a link carries it (the scales fitted from the runs, links kept): {"scenario": {...}}.
STEPCAST_COLD_BINDING std::string compact_calibration_json(const std::string& scenario_json) {
  auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return error_text(doc.error());
  auto scenario = stepcast::scenario_from_json(*doc, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  stepcast::Json out = *doc;
  if (scenario->fit)
    out["calibration"] = stepcast::compact_calibration(out["calibration"], *scenario->fit);
  return text(stepcast::Json{{"scenario", std::move(out)}});
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

// The traffic matrix (traffic.h) as `stepcast traffic` prints it; options {"level": "gpu" |
// "node" | "auto"} (auto: GPUs up to 1,024, else nodes).
STEPCAST_COLD_BINDING std::string traffic_json(const std::string& scenario_json, const std::string& options_json) {
  auto scenario = stepcast::parse_scenario(scenario_json, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  stepcast::TrafficOptions options;
  auto opts = stepcast::parse_json(options_json.empty() ? "{}" : options_json, "the options");
  if (!opts) return error_text(opts.error());
  const std::string level =
      opts->is_object() && opts->contains("level") && (*opts)["level"].is_string()
          ? (*opts)["level"].get<std::string>()
          : "auto";
  if (level == "gpu") options.level = stepcast::TrafficLevel::gpu;
  else if (level == "node") options.level = stepcast::TrafficLevel::node;
  else if (level != "auto")
    return error_text(stepcast::Error{stepcast::ErrorCode::out_of_range, "level",
                                      "level must be gpu, node or auto"});
  auto t = stepcast::traffic(*scenario, options);
  if (!t) return error_text(t.error());
  auto j = stepcast::traffic_json(*t);
  if (!j) return error_text(j.error());
  return text(*j);
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

// A Hugging Face config.json -> the model object `stepcast import hf-config` prints.
STEPCAST_COLD_BINDING std::string import_hf_config_json(const std::string& config_json) {
  auto model = stepcast::model_from_hf_config(config_json);
  if (!model) return error_text(model.error());
  return text(*model);
}

// A Megatron-LM command line -> {"scenario", "ignored", "notes"}, as `stepcast import
// megatron-args` prints it (the default node, dgx-h100, for a torchrun prefix's counts).
STEPCAST_COLD_BINDING std::string import_megatron_args_json(const std::string& command_line) {
  auto imported =
      stepcast::scenario_from_megatron_args(command_line, stepcast::builtin_catalog());
  if (!imported) return error_text(imported.error());
  return text(stepcast::to_json(*imported));
}

// A scenario's plan as `stepcast export KIND` prints it: {"text": "..."}; kind is
// "megatron-args", "bridge-recipe" or "torchrun".
STEPCAST_COLD_BINDING std::string export_plan_json(const std::string& scenario_json, const std::string& kind) {
  const auto which = stepcast::plan_export_kind(kind);
  if (!which)
    return error_text(stepcast::Error{stepcast::ErrorCode::out_of_range, "kind",
                                      "kind must be megatron-args, bridge-recipe or torchrun"});
  auto scenario = stepcast::parse_scenario(scenario_json, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  return text(stepcast::Json{{"text", stepcast::export_plan(*scenario, *which)}});
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
  emscripten::function("traffic", &as_js<traffic_json, const std::string&, const std::string&>);
  emscripten::function("scaling", &as_js<scaling_json, const std::string&>);
  emscripten::function("timelineKinds", &timeline_kinds);
  emscripten::function("importHfConfig", &import_hf_config_json);
  emscripten::function("importMegatronArgs", &import_megatron_args_json);
  emscripten::function("exportPlan", &export_plan_json);
  emscripten::function("ncclLink", &nccl_link_json);
  emscripten::function("gemmFit", &gemm_fit_request);
  emscripten::function("compactCalibration", &compact_calibration_json);
}
