// A GEMM benchmark table -> `calibration.gemm` (`stepcast calibrate --gemm`, the page's gemmFit()).
// Oracles besides fuzz_common.h's: a fit the engine accepts has its constants within the bounds
// gemm_fit.cpp refuses outside (efficiencies 0.04 to 1, overhead 0 to 1,000 us, mean time error at
// most 50 %), and the calibration.gemm it writes is one a scenario reads and estimates with.
#include "fuzz_common.h"
#include "stepcast/gemm_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepcast;
  const Catalog& catalog = builtin_catalog();
  static const Scenario base = *parse_scenario(
      R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
          "plan": {"tp": 8, "global_batch": 8}})",
      catalog);
  const GpuSpec& gpu = base.cluster.groups.front().gpu;
  const auto fit = fit_gemm_table(fuzz::text_of(data, size), gpu, catalog.calibration.for_arch(gpu.arch));
  const GemmFit* f = fuzz::checked(fit);
  if (!f) return 0;
  for (const auto& eff : {f->gemm_efficiency, f->fp8_gemm_efficiency, f->fp4_gemm_efficiency})
    if (eff) fuzz::in_range("fitted efficiency out of range", *eff, 0.04, 1);
  fuzz::in_range("fitted overhead out of range", f->gemm_overhead_s, 0, 1000e-6);
  fuzz::in_range("fit's mean error out of range", f->mean_time_error, 0, 0.5);
  // What `calibrate --gemm` prints, in a scenario: read and estimated.
  Json doc = Json::parse(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
                             "plan": {"tp": 8, "global_batch": 8}})");
  doc["calibration"] = {{"gemm", gemm_fit_json(*f)}};
  const auto s = parse_scenario(doc.dump(), catalog);
  if (!s) fuzz::finding("a fitted calibration.gemm the engine refuses", s.error().message);
  fuzz::check_estimate(*s, {}, false);
  return 0;
}
