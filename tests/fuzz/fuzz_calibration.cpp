// A scenario's `calibration` (measured runs, fitted links, GEMMs, layer profiles: the page's
// calibration form, `--calibration FILE`) on a fixed base scenario. Oracles besides
// fuzz_common.h's: the fitted scales stay within the fit's bounds (compute 0.1 to 10, network 0.25
// to 4: calibrate.cpp), every measured run it accepted is within a factor of 3 of the plan's
// prediction, and the link `stepcast link` writes of the calibrated scenario (its runs as the
// scales they fit) reads back to the same iteration time.
#include <cmath>

#include "fuzz_common.h"
#include "stepcast/calibrate.h"
#include "stepcast/share_link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto calibration = parse_json(fuzz::text_of(data, size), "the calibration");
  const Json* c = fuzz::checked(calibration);
  if (!c) return 0;
  Json doc = Json::parse(R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 2},
                             "plan": {"tp": 8, "global_batch": 64}})");
  doc["calibration"] = *c;
  const auto scenario = parse_scenario(doc.dump(), builtin_catalog());
  const Scenario* s = fuzz::checked(scenario);
  if (!s || !s->fit) return 0;
  // Scales fitted from runs stay within the fit's bounds (calibrate.cpp); a scale the document
  // states is the key table's to bound.
  if (s->fit->compute_fitted)
    fuzz::in_range("compute scale out of range", s->fit->compute_scale, 0.1, 10);
  if (s->fit->network_fitted)
    fuzz::in_range("network scale out of range", s->fit->network_scale, 0.25, 4);
  for (const auto& r : s->fit->runs)
    fuzz::in_range("an accepted run past 3 times its prediction", r.measured_s / r.preset_s,
             1 / 3.0 - 1e-9, 3 + 1e-9);
  for (const auto& w : s->fit->warnings) fuzz::check_text(w, 2000);
  fuzz::check_estimate(*s, {}, true);
  // The link of the calibrated scenario: runs as the scales they fit, and back.
  LinkDocument linked{doc, Json::object()};
  linked.scenario["calibration"] = compact_calibration(doc["calibration"], *s->fit);
  const auto link = scenario_to_link(linked, "https://example.org/");
  const std::string* l = fuzz::checked(link);
  if (!l) return 0;
  fuzz::check_text(*l, kMaxLinkLength);
  const auto back = scenario_from_link(*l);
  if (!back) fuzz::finding("a written link does not read back", back.error().message);
  const auto reread = parse_scenario(back->scenario.dump(), builtin_catalog());
  if (!reread) fuzz::finding("a written link's scenario is refused", reread.error().message);
  const double a = estimate(*s).iteration_time_s, b = estimate(*reread).iteration_time_s;
  if (!(std::fabs(a / b - 1) < 1e-6))
    fuzz::finding("the link's calibration estimates another time", std::to_string(a / b));
  return 0;
}
