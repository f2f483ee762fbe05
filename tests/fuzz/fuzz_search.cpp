// The plan search around a scenario (`stepcast search`, the page's search()), with a small work
// budget so that each input stays fast.
#include "fuzz_common.h"
#include "stepcast/search.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto doc = parse_json(fuzz::text_of(data, size));
  if (!fuzz::checked(doc)) return 0;
  const auto scenario = read_scenario(*doc, builtin_catalog());
  const Scenario* s = fuzz::checked(scenario);
  if (!s) return 0;
  SearchOptions options;
  options.top = 3;
  options.max_plans = 48;
  options.max_stage_evaluations = 512;
  options.max_simulated_blocks = uint64_t{1} << 16;
  const auto result = search_plans(*s, options);
  const SearchResult* r = fuzz::checked(result);
  if (!r) return 0;
  if (r->baseline_error) fuzz::check_error(*r->baseline_error);
  const Json json = to_json(*r);
  if (auto path = non_finite_path(json)) fuzz::finding("search result not finite", *path);
  (void)json.dump();
  return 0;
}
