// Scenario JSON -> estimate, printed as JSON and as text (`stepcast estimate FILE`, the page's
// estimate()).
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto scenario = parse_scenario(fuzz::text_of(data, size), builtin_catalog());
  if (const Scenario* s = fuzz::checked(scenario)) {
    EstimateOptions options;
    options.timeline = size % 2 == 0;  // both paths, decided by the input
    fuzz::check_estimate(*s, options, /*text=*/true);
  }
  return 0;
}
