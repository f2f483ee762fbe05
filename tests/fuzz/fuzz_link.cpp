// A share link -> its scenario -> estimate (`stepcast estimate --link`, the page's fromLink()
// then estimate()); a decoded link encodes again.
#include "fuzz_common.h"
#include "stepcast/share_link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto link = scenario_from_link(fuzz::text_of(data, size));
  const LinkDocument* doc = fuzz::checked(link);
  if (!doc) return 0;
  (void)Json{{"scenario", doc->scenario}, {"page", doc->page}}.dump();
  (void)fuzz::checked(scenario_to_link(*doc, "http://localhost/"));
  const auto scenario = scenario_from_json(doc->scenario, builtin_catalog());
  if (const Scenario* s = fuzz::checked(scenario))
    fuzz::check_estimate(*s, EstimateOptions{}, /*text=*/true);
  return 0;
}
