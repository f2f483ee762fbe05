// The tools module's Embind bindings (stepcast-tools.js and .wasm): what a user's action calls
// once (an import, an export, a calibration, the traffic card, the changes that make a plan
// fit, the deadline sweep), apart from the page's engine
// (bindings.cpp) so that a first visit does not download them (42 KB of brotli: web/README.md).
// The page's worker loads this module on the first such request (web/src/engine/worker.js). JSON
// in, JSON out; no engine logic here. Each is declared in stepcast.d.ts
// (StepcastToolsModule; tests/wasm/bindings.test.mjs).
#include <emscripten/bind.h>

#include <string>
#include <vector>

#include "binding_text.h"
#include "stepcast/calibrate.h"
#include "stepcast/deadline.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/export_megatron.h"
#include "stepcast/gemm_fit.h"
#include "stepcast/import_hf_config.h"
#include "stepcast/import_megatron_args.h"
#include "stepcast/nccl_tests.h"
#include "stepcast/share_link.h"
#include "stepcast/stepcast.h"
#include "stepcast/torchtitan_config.h"
#include "stepcast/traffic.h"

namespace {

using stepcast_wasm::error_text;
using stepcast_wasm::text;

// nccl-tests output -> a fitted link (`stepcast calibrate --nccl-tests`). In:
// {"files": [{"name": "all_reduce_perf.txt", "text": "..."}], "nics_per_node": 0, "gpu": "h100-sxm5-80gb"};
// out: {"link": {...link object...}, "checks": [{"label", "points", "max_busbw_error"}]} or an
// error. "gpu" (a preset id, or a custom GPU's name): output whose ranks name another GPU is
// refused, as `calibrate --gpu` refuses it.
std::string nccl_link_json(const std::string& request_json) {
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
std::string gemm_fit_request(const std::string& request_json) {
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
std::string compact_calibration_json(const std::string& scenario_json) {
  auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return error_text(doc.error());
  auto scenario = stepcast::scenario_from_json(*doc, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  stepcast::Json out = *doc;
  if (scenario->fit)
    out["calibration"] = stepcast::compact_calibration(out["calibration"], *scenario->fit);
  return text(stepcast::Json{{"scenario", std::move(out)}});
}

// The traffic matrix (traffic.h) as `stepcast traffic` prints it; options {"level": "gpu" |
// "node" | "auto"} (auto: GPUs up to 1,024, else nodes).
std::string traffic_json(const std::string& scenario_json, const std::string& options_json) {
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

// A Hugging Face config.json -> the model object `stepcast import hf-config` prints.
std::string import_hf_config_json(const std::string& config_json) {
  auto model = stepcast::model_from_hf_config(config_json);
  if (!model) return error_text(model.error());
  return text(*model);
}

// A Megatron-LM command line -> {"scenario", "ignored", "notes"}, as `stepcast import
// megatron-args` prints it (the default node, dgx-h100, for a torchrun prefix's counts).
std::string import_megatron_args_json(const std::string& command_line) {
  auto imported =
      stepcast::scenario_from_megatron_args(command_line, stepcast::builtin_catalog());
  if (!imported) return error_text(imported.error());
  return text(stepcast::to_json(*imported));
}

// A torchtitan job config (TOML) -> {"scenario", "ignored", "notes"}, as `stepcast import
// torchtitan --format json` prints it; options {"node": preset id, "nodes": N}, each optional (the
// CLI's --node and --nodes: the page passes the cluster on show).
std::string import_torchtitan_json(const std::string& toml, const std::string& options_json) {
  auto opts = stepcast::parse_json(options_json.empty() ? "{}" : options_json, "the options");
  if (!opts) return error_text(opts.error());
  stepcast::TorchtitanImportOptions options;
  if (opts->is_object() && opts->contains("node") && (*opts)["node"].is_string())
    options.node = (*opts)["node"].get<std::string>();
  if (opts->is_object() && opts->contains("nodes") && (*opts)["nodes"].is_number_integer()) {
    const int64_t n = (*opts)["nodes"].get<int64_t>();
    if (n < 1 || n > 1 << 20)
      return error_text(stepcast::Error{stepcast::ErrorCode::out_of_range, "nodes",
                                        "nodes must be a whole number from 1"});
    options.nodes = static_cast<int>(n);
  }
  auto imported =
      stepcast::scenario_from_torchtitan_toml(toml, stepcast::builtin_catalog(), options);
  if (!imported) return error_text(imported.error());
  return text(stepcast::to_json(*imported));
}

// A scenario's plan as `stepcast export KIND` prints it: {"text": "..."}; kind is
// "megatron-args", "bridge-recipe", "torchrun" or "torchtitan" (a torchtitan job config).
std::string export_plan_json(const std::string& scenario_json, const std::string& kind) {
  const auto which = stepcast::plan_export_kind(kind);
  if (!which && kind != "torchtitan")
    return error_text(stepcast::Error{
        stepcast::ErrorCode::out_of_range, "kind",
        "kind must be megatron-args, bridge-recipe, torchrun or torchtitan"});
  auto scenario = stepcast::parse_scenario(scenario_json, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  return text(stepcast::Json{{"text", which ? stepcast::export_plan(*scenario, *which)
                                            : stepcast::export_torchtitan_toml(*scenario)}});
}

// The changes, one at a time, that make an out-of-memory plan fit, fastest first, each estimated
// again (estimate.h's fit_fixes_of; `stepcast estimate`'s fit_fixes[]): {"fits", "fit_fixes":
// [{change, settings, iteration_time_s, time_change, memory_bytes}]} (none when it fits). The
// page's out-of-memory line offers them as buttons.
std::string fit_fixes_json(const std::string& scenario_json) {
  auto scenario = stepcast::parse_scenario(scenario_json, stepcast::builtin_catalog());
  if (!scenario) return error_text(scenario.error());
  stepcast::EstimateOptions options;
  options.fit_fixes = stepcast::fit_fixes_of;
  const stepcast::Report r = stepcast::estimate(*scenario, options);
  auto report = stepcast::report_json(r);
  if (!report) return error_text(report.error());
  return text(stepcast::Json{{"fits", r.fits},
                             {"fit_fixes", report->value("fit_fixes", stepcast::Json::array())}});
}

// How many GPUs for a deadline (`stepcast deadline --format json`): options {"tokens", "days",
// "nodes": [...]?}; the node counts with each one's fastest plan, days and GPU-hours, and the
// cheapest that meets the deadline, or the error.
std::string deadline_json(const std::string& scenario_json, const std::string& options_json) {
  auto doc = stepcast::parse_json(scenario_json);
  if (!doc) return error_text(doc.error());
  auto opts = stepcast::parse_json(options_json, "the options");
  if (!opts) return error_text(opts.error());
  stepcast::DeadlineOptions options;
  if (!opts->is_object() || !(*opts)["tokens"].is_number() || !(*opts)["days"].is_number())
    return error_text(stepcast::Error{stepcast::ErrorCode::parse_error, "",
                                      "expected {\"tokens\": N, \"days\": D}"});
  options.tokens = (*opts)["tokens"].get<double>();
  options.days = (*opts)["days"].get<double>();
  if (opts->contains("nodes") && (*opts)["nodes"].is_array())
    for (const auto& n : (*opts)["nodes"])
      if (n.is_number_integer()) options.nodes.push_back(n.get<int>());
  auto planned = stepcast::deadline_plan(*doc, stepcast::builtin_catalog(), options);
  if (!planned) return error_text(planned.error());
  return stepcast_wasm::finite_text(stepcast::to_json(*planned), "deadline");
}

std::string version() { return STEPCAST_VERSION; }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcast_tools) {
  emscripten::function("version", &version);
  emscripten::function("traffic", &stepcast_wasm::as_js<traffic_json, const std::string&, const std::string&>);
  emscripten::function("importHfConfig", &import_hf_config_json);
  emscripten::function("importMegatronArgs", &import_megatron_args_json);
  emscripten::function("importTorchtitan", &import_torchtitan_json);
  emscripten::function("exportPlan", &export_plan_json);
  emscripten::function("ncclLink", &nccl_link_json);
  emscripten::function("gemmFit", &gemm_fit_request);
  emscripten::function("compactCalibration", &compact_calibration_json);
  emscripten::function("fitFixes", &fit_fixes_json);
  emscripten::function("deadline", &stepcast_wasm::as_js<deadline_json, const std::string&, const std::string&>);
}
