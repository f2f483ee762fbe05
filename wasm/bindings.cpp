// Embind bindings: JSON in, JSON out. No engine logic here; errors come back as
// {"error": {"code", "path", "message"}} values, never as an abort.
#include <emscripten/bind.h>

#include <string>

#include "stepcast/estimate.h"

namespace {

std::string estimate_json(const std::string& scenario_json) {
  const stepcast::Catalog& catalog = stepcast::builtin_catalog();
  auto scenario = stepcast::parse_scenario(scenario_json, catalog);
  if (!scenario) return stepcast::to_json(scenario.error()).dump();
  stepcast::EstimateOptions options;
  options.timeline = true;
  return stepcast::to_json(stepcast::estimate(*scenario, options)).dump();
}

std::string presets_json() { return stepcast::builtin_catalog().documents.dump(); }

std::string version() { return STEPCAST_VERSION; }

}  // namespace

EMSCRIPTEN_BINDINGS(stepcast) {
  emscripten::function("estimate", &estimate_json);
  emscripten::function("presets", &presets_json);
  emscripten::function("version", &version);
}
