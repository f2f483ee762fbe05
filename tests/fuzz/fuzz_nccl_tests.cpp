// nccl-tests output -> its run -> a fitted link (`stepcast calibrate --nccl-tests`), which a
// scenario must read and estimate with (the oracle: a fit is never one the engine refuses).
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
  // A fit the engine writes is one it reads (the link keys' ranges, busbw within the line rate).
  Json doc = Json::parse(R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm5-80gb",
      "gpus_per_node": 8, "nodes": 2, "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"},
      "plan": {"tp": 8, "global_batch": 16}})");
  doc["cluster"][f->link.scope == LinkScope::intra_node ? "intra_node_link" : "inter_node_link"] = link;
  const auto s = parse_scenario(doc.dump(), builtin_catalog());
  if (!s) fuzz::finding("a fitted link the engine refuses", s.error().message);
  fuzz::check_estimate(*s, {}, false);
  return 0;
}
