// `stepcast estimate --batch`: one scenario per line, each line on its own; a line never stops
// the others.
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  std::string_view rest = fuzz::text_of(data, size);
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto scenario = parse_scenario(line, builtin_catalog());
    // As `--batch` runs by default (fuzz_scenario covers the timeline).
    if (const Scenario* s = fuzz::checked(scenario))
      fuzz::check_estimate(*s, EstimateOptions{}, /*text=*/false);
  }
  return 0;
}
