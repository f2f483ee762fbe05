// A GEMM benchmark table fitted to the engine's GEMM model, and calibration.gemm in a scenario.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "stepcast/gemm_fit.h"
#include "stepcast/calibrate.h"
#include "test_util.h"

namespace stepcast {
namespace {

const GpuSpec& h100() { return *builtin_catalog().find_gpu("h100-sxm5-80gb"); }

// Rows of t = 2mnk / (peak * efficiency) + overhead, written as TFLOP/s (what a benchmark prints).
std::string table(double eff16, double eff8, double overhead_s) {
  std::string csv = "m,n,k,dtype,tflops\n";
  for (int size : {1024, 2048, 4096, 8192})
    for (const char* dtype : {"bf16", "fp8"}) {
      const bool fp8 = dtype[0] == 'f';
      const double peak = *h100().peak_flops(fp8 ? Precision::fp8 : Precision::bf16);
      const double flops = 2.0 * size * size * size;
      const double t = flops / (peak * (fp8 ? eff8 : eff16)) + overhead_s;
      csv += fmt::format("{},{},{},{},{:.6f}\n", size, size, size, dtype, flops / t / 1e12);
    }
  return csv;
}

TEST(GemmFit, RecoversTheEfficienciesAndOverheadThatMadeTheTable) {
  const auto& base = builtin_catalog().calibration.for_arch(h100().arch);
  auto fit = fit_gemm_table(table(0.72, 0.58, 9e-6), h100(), base);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  EXPECT_EQ(fit->rows, 8);
  ASSERT_TRUE(fit->gemm_efficiency && fit->fp8_gemm_efficiency);
  EXPECT_NEAR(*fit->gemm_efficiency, 0.72, 1e-4);
  EXPECT_NEAR(*fit->fp8_gemm_efficiency, 0.58, 1e-4);
  EXPECT_FALSE(fit->fp4_gemm_efficiency.has_value());
  EXPECT_NEAR(fit->gemm_overhead_s, 9e-6, 1e-8);
  EXPECT_LT(fit->max_time_error, 1e-4);  // compute-bound sizes: the engine's time is the formula
  const Json j = gemm_fit_json(*fit);
  EXPECT_DOUBLE_EQ(j["gemm_efficiency"].get<double>(), 0.72);
  EXPECT_DOUBLE_EQ(j["gemm_overhead_us"].get<double>(), 9);
}

TEST(GemmFit, BadTablesNameTheLine) {
  const auto& base = builtin_catalog().calibration.for_arch(h100().arch);
  auto message = [&](const std::string& csv) {
    auto r = fit_gemm_table(csv, h100(), base);
    EXPECT_FALSE(r.ok()) << csv;
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_NE(message("a,b,c\n1,2,3\n").find("line 1: the header must name"), std::string::npos);
  EXPECT_NE(message("m,n,k,dtype,tflops\n1024,1024,1024,bf16,-3\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(message("m,n,k,dtype,tflops\n1024,1024,1024,int8,300\n").find("dtype 'int8'"),
            std::string::npos);
  EXPECT_NE(message("m,n,k,dtype,tflops\n1024,1024,1024,bf16,5000\n").find("above"),
            std::string::npos);
  EXPECT_NE(message("m,n,k,dtype,tflops\n1024,1024\n").find("line 2: 2 cells"), std::string::npos);
  EXPECT_NE(message("m,n,k,dtype,tflops\n1024,1024,1024,bf16,600\n").find("fewer than two"),
            std::string::npos);
  EXPECT_NE(message("").find("no header"), std::string::npos);
}

TEST(GemmFit, CalibrationGemmReplacesThePresetsForTheClustersGpus) {
  const std::string base = R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 1},
    "plan": {"tp": 8, "global_batch": 8}CAL})";
  auto with = [&](const std::string& cal) {
    std::string d = base;
    d.replace(d.find("CAL"), 3, cal);
    return test::scenario(d);
  };
  const Scenario plain = with("");
  const Scenario slow = with(R"(, "calibration": {"gemm": {"gemm_efficiency": 0.4,
      "gemm_overhead_us": 20}})");
  const auto& a = slow.calibration.for_arch(slow.cluster.groups[0].gpu.arch);
  EXPECT_DOUBLE_EQ(a.gemm_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(a.gemm_overhead_s, 20e-6);
  EXPECT_DOUBLE_EQ(a.fp8_gemm_efficiency,
                   plain.calibration.for_arch(plain.cluster.groups[0].gpu.arch).fp8_gemm_efficiency);
  EXPECT_GT(estimate(slow).iteration_time_s, estimate(plain).iteration_time_s);
  const Error e = test::error_of(
      std::string(base).replace(base.find("CAL"), 3,
                                R"(, "calibration": {"gemm": {"gemm_efficiency": 1.5}})"));
  EXPECT_EQ(e.path, "calibration.gemm.gemm_efficiency");
  EXPECT_EQ(e.code, ErrorCode::out_of_range);
}

TEST(GemmFit, TheReportSaysWhatTheTableMovedFromThePreset) {
  const Scenario s = test::scenario(R"({"model": "llama2-7b",
    "cluster": {"node": "dgx-h100", "nodes": 1}, "plan": {"tp": 8, "global_batch": 8},
    "calibration": {"gemm": {"gemm_efficiency": 0.4, "gemm_overhead_us": 20}}})");
  const auto& preset = builtin_catalog().calibration.for_arch(s.cluster.groups[0].gpu.arch);
  const Report r = estimate(s);
  ASSERT_TRUE(r.calibration.has_value());
  const Json j = calibration_json(*r.calibration);
  // Only what the table set, each beside the preset's value, in the key's unit.
  ASSERT_EQ(j["gemm"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["gemm"]["gemm_efficiency"]["value"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(j["gemm"]["gemm_efficiency"]["preset"].get<double>(), preset.gemm_efficiency);
  EXPECT_DOUBLE_EQ(j["gemm"]["gemm_efficiency"]["change_pct"].get<double>(),
                   std::round((0.4 / preset.gemm_efficiency - 1) * 1000) / 10);
  EXPECT_DOUBLE_EQ(j["gemm"]["gemm_overhead_us"]["value"].get<double>(), 20);
  EXPECT_NEAR(j["gemm"]["gemm_overhead_us"]["preset"].get<double>(),
              preset.gemm_overhead_s * 1e6, 1e-9);
}

TEST(GemmFit, OneTableCannotCalibrateAClusterOfTwoGpuTypes) {
  const Error e = test::error_of(R"({"model": "llama2-7b",
    "cluster": {"groups": [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 1}]},
    "plan": {"tp": 8, "pp": 2, "global_batch": 8},
    "calibration": {"gemm": {"gemm_efficiency": 0.6}}})");
  EXPECT_EQ(e.code, ErrorCode::unsupported);
  EXPECT_EQ(e.path, "calibration.gemm");
  EXPECT_NE(e.message.find("mixes"), std::string::npos) << e.message;
}

// Issue 38 §2: a fit the engine would estimate nonsense with is refused when it is made, naming
// the constant, its value and the bound (it wrote efficiency 0.0 and overheads of 8.2e12 us).
TEST(GemmFit, AbsurdFitsAreRefusedWhenFitted) {
  const auto& base = builtin_catalog().calibration.for_arch(h100().arch);
  // A table at 0.1 % of the peak: TFLOP/s in another unit, or another GPU's.
  auto slow = fit_gemm_table(table(0.001, 0.001, 9e-6), h100(), base);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::out_of_range);
  EXPECT_EQ(slow.error().path, "gemm_efficiency");
  EXPECT_NE(slow.error().message.find("the fitted gemm_efficiency=0.001 must be >= 0.04"),
            std::string::npos)
      << slow.error().message;
  // A second of fixed cost per GEMM.
  auto stalled = fit_gemm_table(table(0.72, 0.58, 1.0), h100(), base);
  ASSERT_FALSE(stalled.ok());
  EXPECT_EQ(stalled.error().path, "gemm_overhead_us");
  EXPECT_NE(stalled.error().message.find("the fitted gemm_overhead_us=1e+06 must be <= 1000"),
            std::string::npos)
      << stalled.error().message;
  // Within the bounds: the fit stands.
  EXPECT_TRUE(fit_gemm_table(table(0.3, 0.2, 100e-6), h100(), base).ok());
}

}  // namespace
}  // namespace stepcast
