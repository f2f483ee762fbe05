// The fused attention kernel's shape model (attention_kernel.h): hand-derived shares, the share
// the estimate applies, and the published and measured kernel charts of tests/validation/gemm/
// reproduced per kernel, pass, head dimension and mask.
#include "stepcast/attention_kernel.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kernel_tables.h"
#include "stepcast/catalog.h"
#include "stepcast/compute.h"
#include "test_util.h"

namespace stepcast {
namespace {

TEST(AttentionKernel, TilesByHand) {
  // No exponential term (flops_per_exp 0): the tiles alone. 512 keys are 4 blocks of 128 and
  // the query block's fixed 1.6: 4 / 5.6 of the long-sequence speed.
  EXPECT_NEAR(attention_kernel_share(512, false, 512, 0, false), 4 / 5.6, 1e-12);
  // Causal, 4,096 keys: 32 blocks counted, 16.5 run on average plus the fixed 1.6:
  // 32 / (32 + 1 + 3.2).
  EXPECT_NEAR(attention_kernel_share(4096, true, 512, 0, false), 32 / 36.2, 1e-12);
  // A million keys: within 0.02 % of the long-sequence speed; no keys: no share to take.
  EXPECT_NEAR(attention_kernel_share(1 << 20, false, 512, 0, false), 1, 2e-4);
  EXPECT_EQ(attention_kernel_share(0, true, 512, 256, false), 1);
}

TEST(AttentionKernel, ExponentialsByHand) {
  // Tensor FLOPs per SM per clock over 16 exponentials (32 on Blackwell Ultra).
  EXPECT_EQ(tensor_flops_per_exp("ampere"), 128);
  EXPECT_EQ(tensor_flops_per_exp("hopper"), 256);
  EXPECT_EQ(tensor_flops_per_exp("blackwell"), 512);
  EXPECT_EQ(tensor_flops_per_exp("blackwell-ultra"), 256);
  EXPECT_EQ(tensor_flops_per_exp("cdna3"), 0);  // not known: no exponential term
  const double keys = 1e12;  // tiles at 1 to 12 digits
  // Hopper, head 64 forward (256 FLOPs per score): (1 + 256/512) / (1 + 256/256) = 0.75 of the
  // head-128 speed; FlashAttention-3's chart gives 497 / 648 = 0.77 at 16k.
  EXPECT_NEAR(attention_kernel_share(keys, false, 256, 256, false), 0.75, 1e-9);
  // Backward (2.5 x 256 per score against 2.5 x 512): (1 + 256/1280) / (1 + 256/640) = 6/7.
  EXPECT_NEAR(attention_kernel_share(keys, false, 640, 256, true), 6.0 / 7, 1e-9);
  // MLA's 192 + 128 head dims forward (640 per score): 1.5 / 1.4 of head 128's speed.
  EXPECT_NEAR(attention_kernel_share(keys, false, 640, 256, false), 1.5 / 1.4, 1e-9);
  // Head 128 is the reference whatever the GPU.
  EXPECT_NEAR(attention_kernel_share(keys, false, 512, 512, false), 1, 1e-9);
}

TEST(AttentionKernel, TheEstimateTakesTheShapesShare) {
  const Catalog& cat = test::catalog();
  const ModelSpec& m = *cat.find_model("llama3-8b");  // head dim 128
  const GpuSpec& gpu = *cat.find_gpu("h100-sxm5-80gb");
  Plan p;
  const Device d = make_device(gpu, Precision::bf16, cat.calibration);
  const double fitted = d.cal.attention_efficiency;
  // Causal over 8,192 keys on one rank: 64 blocks, 64 / (65 + 3.2).
  EXPECT_NEAR(fused_attention_efficiency(m, p, d, 8192, false, false), fitted * 64 / 68.2, 1e-12);
  // Context parallel 2: each call walks one rank's 4,096 keys, its mask mostly off the
  // diagonal (taken as unmasked): 32 / 33.6.
  p.cp = 2;
  EXPECT_NEAR(fused_attention_efficiency(m, p, d, 8192, false, false), fitted * 32 / 33.6, 1e-12);
  // A sliding window of 128 keys: one block and the fixed part, 1 / 2.6 of the fitted share.
  p.cp = 1;
  EXPECT_NEAR(fused_attention_efficiency(m, p, d, 128, true, true), fitted / 2.6, 1e-12);
}

// ---- The kernel charts ----

struct Chart {
  std::string series;  // source, GPU, kernel and pass: one level (the calibrated share) each
  std::string kernel, pass, arch;
  double keys = 0, head_dim = 0, tflops = 0;
  bool causal = false;
};

std::string kernel_of(const std::string& library) {
  if (library.rfind("FlashAttention-2", 0) == 0 || library == "sdpa flash") return "FA2";
  if (library.rfind("FlashAttention-3", 0) == 0) return "FA3";
  if (library.rfind("FlashAttention-4", 0) == 0 || library.rfind("FA4", 0) == 0) return "FA4";
  if (library.rfind("cuDNN", 0) == 0 || library == "sdpa cudnn") return "cuDNN";
  return "";
}

std::vector<Chart> charts() {
  std::vector<Chart> out;
  const std::string dir = std::string(STEPCAST_SOURCE_DIR) + "/tests/validation/gemm/";
  for (const auto& r : test::read_csv(dir + "attention-bench.csv")) {
    Chart c;
    c.kernel = kernel_of(r.at("library"));
    c.pass = r.at("kind").substr(std::string("attention_").size());
    c.arch = r.at("arch");
    c.series = fmt::format("{} | {} | {} | {}", r.at("source"), r.at("gpu"), r.at("library"), c.pass);
    c.keys = test::num(r, "seq_len"), c.head_dim = test::num(r, "head_dim");
    c.causal = r.at("causal") == "1";
    c.tflops = test::num(r, "measured_tflops");
    out.push_back(c);
  }
  for (const auto& r : test::read_csv(dir + "h200-kernels.csv")) {
    if (r.at("kind").rfind("attention_", 0) != 0) continue;
    Chart c;
    c.kernel = kernel_of(r.at("library"));
    c.pass = r.at("kind").substr(std::string("attention_").size());
    c.arch = "hopper";
    c.series = fmt::format("bench_h200.py | H200 | {} | {}", r.at("library"), c.pass);
    c.keys = test::num(r, "seq_len"), c.head_dim = test::num(r, "head_dim");
    c.causal = r.at("causal") == "1";
    c.tflops = test::num(r, "tflops");
    out.push_back(c);
  }
  return out;
}

// The model's speed for one chart row relative to the head-128 long-sequence speed; a row of
// forward + backward throughput (the FlashAttention-2 charts) is the two passes' harmonic mix
// under flash-attention's convention (backward 2.5x the forward's FLOPs).
double model_share(const Chart& c) {
  const double r = tensor_flops_per_exp(c.arch);
  const double fwd = attention_kernel_share(c.keys, c.causal, 4 * c.head_dim, r, false);
  const double bwd = attention_kernel_share(c.keys, c.causal, 10 * c.head_dim, r, true);
  if (c.pass == "fwd") return fwd;
  if (c.pass == "bwd") return bwd;
  return 3.5 / (1 / fwd + 2.5 / bwd);
}

// Goal (issue 34): each chart's shape (sequence, head dimension, mask) from the model, its level
// being what the calibration fits (attention_efficiency): median |error| <= 5 % over the rows at
// head dimensions 64 and 128 (the models' own: Llama, GPT, Qwen), and no class (kernel, pass,
// head dimension, mask) of 3 rows or more off by more than 25 % (its median signed error).
// Levels come from the head-64 and -128 rows. Heads of 192 and 256 are printed, not asserted:
// the kernels shrink their key blocks there (hopper/tile_size.h), which the model does not see
// (FlashAttention-2 at 256 +45 %, cuDNN's backward at 192 +54 %).
TEST(AttentionKernel, ReproducesTheKernelCharts) {
  const std::vector<Chart> rows = charts();
  ASSERT_GT(rows.size(), 250u);
  std::map<std::string, std::vector<double>> ratios;
  for (const Chart& c : rows) {
    ASSERT_FALSE(c.kernel.empty()) << c.series;
    ASSERT_GT(c.tflops, 0) << c.series;
    if (c.head_dim <= 128) ratios[c.series].push_back(c.tflops / model_share(c));
  }
  std::map<std::string, double> level;
  for (const auto& [series, v] : ratios) level[series] = test::median(v);
  std::vector<double> abs_errors;
  std::map<std::string, std::vector<double>> classes;
  for (const Chart& c : rows) {
    const auto it = level.find(c.series);
    if (it == level.end()) continue;  // a head-256-only series
    const double err = 100 * (it->second * model_share(c) / c.tflops - 1);
    const std::string cls = fmt::format("{} {} d={:.0f}{}", c.kernel, c.pass, c.head_dim,
                                        c.causal ? " causal" : "");
    classes[cls].push_back(err);
    if (c.head_dim <= 128) abs_errors.push_back(std::abs(err));
  }
  const double median_abs = test::median(abs_errors);
  fmt::print("attention kernels: {} rows at head 64/128, median |error| {:.1f} %\n",
             abs_errors.size(), median_abs);
  EXPECT_LE(median_abs, 5.0);
  for (const auto& [cls, errs] : classes) {
    const double med = test::median(errs);
    fmt::print("  {:<28} {:>3} rows  median {:+6.1f} %\n", cls, errs.size(), med);
    const bool large_head = cls.find("d=192") != std::string::npos ||
                            cls.find("d=256") != std::string::npos;
    if (errs.size() >= 3 && !large_head) EXPECT_LE(std::abs(med), 25.0) << cls;
  }
}

}  // namespace
}  // namespace stepcast
