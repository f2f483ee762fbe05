// A scenario document in, a scenario the estimate can run out, in three steps: read its keys
// (scenario/), apply its `calibration` (calibration/: links from nccl-tests, GEMM tables, scales
// fitted from measured runs, which estimates those runs), then check the plan's rules (scenario/).
// The only place the three meet, so reading never runs the estimator and the calibration's
// measured runs are read without a calibration of their own (scenario_without_calibration).
// Also the schema document a reader gets (schema_document): the keys and the search's space, one
// room apart.
#include "stepcast/calibrate.h"
#include "stepcast/limits.h"
#include "stepcast/scenario.h"
#include "stepcast/schema.h"
#include "stepcast/search.h"
#include "stepcast/stepcast.h"

namespace stepcast {

namespace {

// Read, then calibrate: every problem goes to `errors`.
std::optional<Scenario> read_and_calibrate(const Json& doc, const Catalog& catalog,
                                           std::vector<Error>& errors) {
  auto s = read_keys(doc, catalog, errors);
  if (!s) return std::nullopt;
  if (const auto cal = doc.find("calibration"); cal != doc.end()) {
    auto fit = apply_calibration(*cal, doc, *s, catalog);
    if (!fit) {
      errors.push_back(fit.error());
      return std::nullopt;
    }
    s->fit = std::move(fit).value();
  }
  return s;
}

}  // namespace

Result<Scenario> read_scenario(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  auto s = read_and_calibrate(doc, catalog, errors);
  if (!s) return errors.front();
  return std::move(*s);
}

std::vector<Error> scenario_errors(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  if (auto s = read_and_calibrate(doc, catalog, errors)) check_scenario(*s, &errors);
  if (errors.size() > kMaxErrors) errors.resize(kMaxErrors);  // 4,096 stages, each wrong
  return errors;
}

Result<Scenario> scenario_from_json(const Json& doc, const Catalog& catalog) {
  std::vector<Error> errors;
  auto s = read_and_calibrate(doc, catalog, errors);
  if (!s) return errors.front();
  if (!check_scenario(*s, &errors)) return errors.front();
  return std::move(*s);
}

Json schema_document() {
  Json j = schema_json();
  j["search"] = search_space_json();
  j["calibration"]["max_measured_over_predicted"] = kMaxMeasuredOverPredicted;
  return j;
}

Result<Scenario> parse_scenario(std::string_view text, const Catalog& catalog) {
  auto doc = parse_json(text);
  if (!doc) return doc.error();
  return scenario_from_json(*doc, catalog);
}

}  // namespace stepcast
