// nccl-tests output -> its run -> a fitted link (`stepcast calibrate --nccl-tests`).
#include "fuzz_common.h"
#include "stepcast/nccl_tests.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const auto run = parse_nccl_tests(fuzz::text_of(data, size), "");
  const NcclTestRun* r = fuzz::checked(run);
  if (!r) return 0;
  const auto fit = fit_nccl_link({*r}, 0);
  const NcclLinkFit* f = fuzz::checked(fit);
  if (!f) return 0;
  const Json link = nccl_link_json(*f, {"x"});
  if (auto path = non_finite_path(link)) fuzz::finding("fitted link not finite", *path);
  (void)link.dump();
  return 0;
}
