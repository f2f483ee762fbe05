// The GEMM shape model (gemm_shape.h): hand-derived cases, and the measured kernel tables of
// tests/validation/gemm/ (629 H200 kernels, and published GEMM rows from gemm-bench.csv there)
// reproduced per GPU, kind and shape class.
#include "stepcast/gemm_shape.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/compute.h"
#include "kernel_tables.h"
#include "test_util.h"

namespace stepcast {
namespace {

using test::catalog;
using test::median;
using test::num;
using test::read_csv;

// One tile shape on 132 SMs at 100 TFLOP/s (so 1e12/1.32 FLOP/s per SM), no fill, no latency,
// memory far faster than compute: the time is the waves' alone.
constexpr GemmTile kOneTile[] = {{128, 256, 1}};
GemmShapeDevice bare() {
  GemmShapeDevice d;
  d.ceiling_flops = 100e12;
  d.memory_Bps = 1e18;
  d.grouped_memory_Bps = 1e18;
  d.sm_count = 132;
  d.tiles = kOneTile;
  return d;
}

TEST(GemmShape, OneWaveAgainstOnePercentMore) {
  const GemmShapeDevice d = bare();
  // 12 x 11 = 132 tiles of 128 x 256: one wave; each SM computes 2·128·256·4096 FLOPs at
  // 100e12 / 132 FLOP/s.
  const double one_wave = 2.0 * 128 * 256 * 4096 / (100e12 / 132);
  EXPECT_NEAR(shape_gemm_time_s(12 * 128, 11 * 256, 4096, 2, d), one_wave, 1e-12);
  // 133 tiles in one 256-wide column (1.008 waves): whole, a second wave (2x); cut into 2, 3 or
  // 4 k slices, 266, 399 or 532 tiles in 3, 4 or 5 waves of 1/2, 1/3 or 1/4 the depth: 1.5x,
  // 1.33x, 1.25x. The shortest, 1.25x, for 0.8 % more FLOPs.
  EXPECT_NEAR(shape_gemm_time_s(133 * 128, 256, 4096, 2, d), 1.25 * one_wave, 1e-12);
  // One more row of tiles on the 132 (143 tiles): 572 quarter-deep tiles in 5 waves, 1.25x too.
  EXPECT_NEAR(shape_gemm_time_s(12 * 128 + 1, 11 * 256, 4096, 2, d), 1.25 * one_wave, 1e-12);
  // Exactly two waves (264 tiles) take exactly twice one.
  EXPECT_NEAR(shape_gemm_time_s(24 * 128, 11 * 256, 4096, 2, d), 2 * one_wave, 1e-12);
}

TEST(GemmShape, TileQuantisedN) {
  const GemmShapeDevice d = bare();
  // n = 257 runs two 256-wide tiles as n = 512 does: 4 x 2 = 8 tiles, under one wave, so
  // split-K cuts k into 4 slices (32 tiles, still one wave) of 1024 each.
  const double quarter = 2.0 * 128 * 256 * 1024 / (100e12 / 132);
  EXPECT_NEAR(shape_gemm_time_s(512, 512, 4096, 2, d), quarter, 1e-12);
  EXPECT_NEAR(shape_gemm_time_s(512, 257, 4096, 2, d), quarter, 1e-12);
  // n = 256: one tile column, 4 tiles, the same quarter-deep wave; twice the FLOPs of n = 257
  // took no longer.
  EXPECT_NEAR(shape_gemm_time_s(512, 256, 4096, 2, d), quarter, 1e-12);
}

TEST(GemmShape, FillLatencyAndMemory) {
  GemmShapeDevice d = bare();
  d.k_fill = 64;
  d.latency_s = 2e-6;
  // One wave, each tile 4096 + 64 deep.
  const double wave = 2.0 * 128 * 256 * (4096 + 64) / (100e12 / 132);
  EXPECT_NEAR(shape_gemm_time_s(12 * 128, 11 * 256, 4096, 2, d), wave + 2e-6, 1e-12);
  // At 10 GB/s the operands bound it: (1536·4096 + 4096·2816)·2 + 1536·2816·2 bytes.
  d.memory_Bps = 1e10;
  const double bytes = (1536.0 * 4096 + 4096.0 * 2816) * 2 + 1536.0 * 2816 * 2;
  EXPECT_NEAR(shape_gemm_time_s(1536, 2816, 4096, 2, d), bytes / 1e10 + 2e-6, 1e-12);
}

TEST(GemmShape, GroupedExpertsShareTheWaves) {
  GemmShapeDevice d = bare();
  constexpr GemmTile grouped[] = {{64, 128, 1}, {128, 256, 1}};
  d.grouped_tiles = grouped;
  d.grouped_fixed_s = 5e-6;
  // 8 experts of 128 rows, n = 2048: the small tile (rows <= 128), 8·2·16 = 256 tiles, two waves.
  const double small = 2 * 2.0 * 64 * 128 * 1024 / (100e12 / 132);
  EXPECT_NEAR(shape_grouped_gemm_time_s(8, 128, 2048, 1024, 2, d), small + 5e-6, 1e-12);
  // 8 experts of 129 rows: the large tile, 8·2·8 = 128 tiles, one wave.
  const double large = 2.0 * 128 * 256 * 1024 / (100e12 / 132);
  EXPECT_NEAR(shape_grouped_gemm_time_s(8, 129, 2048, 1024, 2, d), large + 5e-6, 1e-12);
  // Nothing to multiply: nothing, not the fixed cost.
  EXPECT_EQ(shape_grouped_gemm_time_s(8, 0, 2048, 1024, 2, d), 0);
}

// shape_compute_s counts each split's waves in integers (one division per tile); the counts are
// the model's ceil(tiles · split / SMs). Every tile, split and fill of the Hopper and Blackwell
// devices on a sweep of shapes, exact multiples of the SMs and of the tiles included, against
// that ceiling taken in doubles, and shapes of more than 2^40 tiles (the doubles' path) too.
TEST(GemmShape, WaveCountsAreTheCeilingOfTheQuotient) {
  const auto reference = [](double m, double n, double k, const GemmShapeDevice& d) {
    double best = 0;
    for (const GemmTile& t : d.tiles) {
      const double tiles = std::ceil(m / t.m) * std::ceil(n / t.n) * t.sms;
      for (int split = 1; split <= 4; ++split) {
        const double s = std::ceil(tiles * split / d.sm_count) * (t.m * t.n / t.sms) *
                         (k / split + d.k_fill);
        if (best == 0 || s < best) best = s;
      }
    }
    return best * 2 * d.sm_count / d.ceiling_flops;
  };
  int checked = 0;
  for (const char* id : {"h100-sxm5-80gb", "b200", "a100-sxm4-80gb"}) {
    const GpuSpec* gpu = catalog().find_gpu(id);
    ASSERT_NE(gpu, nullptr) << id;
    const GemmShapeDevice d = gemm_shape_device(*gpu, Precision::bf16);
    ASSERT_FALSE(d.tiles.empty()) << id;
    for (double m : {1.0, 63.0, 64.0, 65.0, 127.5, 1000.0, 4096.0, 8448.0, 16896.0, 1e5, 3e6})
      for (double n : {1.0, 128.0, 255.0, 256.0, 1056.0, 2112.0, 8192.0, 28672.0, 151936.0})
        for (double k : {64.0, 1000.0, 8192.0}) {
          EXPECT_EQ(shape_compute_s(m, n, k, d.ceiling_flops, d), reference(m, n, k, d))
              << id << " " << m << " x " << n << " x " << k;
          ++checked;
        }
    // Over 2^40 tiles of 64 x 128: the doubles' path.
    EXPECT_EQ(shape_compute_s(1e12, 1e8, 64, d.ceiling_flops, d), reference(1e12, 1e8, 64, d));
  }
  // One tile shape with a fill, 1 to 600 tiles: every remainder on the 132 SMs, where the
  // shortest split is each in turn (66 tiles: two slices in one wave; 88: three in two).
  GemmShapeDevice one = bare();
  one.k_fill = 64;
  for (int tiles = 1; tiles <= 600; ++tiles, ++checked)
    EXPECT_EQ(shape_compute_s(128.0 * tiles, 256, 4096, one.ceiling_flops, one),
              reference(128.0 * tiles, 256, 4096, one))
        << tiles << " tiles";
  EXPECT_EQ(checked, 3 * 11 * 9 * 3 + 600);
}

TEST(GemmShape, UnknownSmsIsARooflineAtTheCeiling) {
  GemmShapeDevice d = bare();
  d.sm_count = 0;
  EXPECT_NEAR(shape_gemm_time_s(100, 100, 100, 2, d), 2e6 / 100e12, 1e-15);
}

TEST(GemmShape, DeviceFromThePresets) {
  const GpuSpec* h200 = catalog().find_gpu("h200-sxm-141gb");
  ASSERT_NE(h200, nullptr);
  EXPECT_EQ(h200->sm_count, 132);
  const GemmShapeDevice d = gemm_shape_device(*h200, Precision::bf16);
  // 0.90 x the 794.5 TF MAMF (stas00/ml-engineering), 0.9 (0.75 grouped) x 4.8 TB/s.
  EXPECT_NEAR(d.ceiling_flops, 0.9 * 794.5e12, 1e6);
  EXPECT_NEAR(d.memory_Bps, 0.9 * 4800e9, 1);
  EXPECT_NEAR(d.grouped_memory_Bps, 0.75 * 4800e9, 1);
  EXPECT_EQ(d.tiles.size(), 5u);
  // A GPU without a measured MAMF: 0.745 of its peak; without SMs: no tiles.
  const GpuSpec* h800 = catalog().find_gpu("h800-sxm5-80gb");
  ASSERT_NE(h800, nullptr);
  const GemmShapeDevice u = gemm_shape_device(*h800, Precision::fp8);
  EXPECT_NEAR(u.ceiling_flops, 0.9 * 0.745 * 1978.9e12, 1e6);
  EXPECT_TRUE(u.tiles.empty());
}

TEST(GemmShape, MeasuredRatesAreReadAndCappedAtThePeak) {
  GpuSpec gpu;
  gpu.arch = "hopper";
  gpu.memory_bandwidth_Bps = 3350e9;
  gpu.peak[static_cast<size_t>(Precision::bf16)] = 989.4e12;
  gpu.measured_gemm[static_cast<size_t>(Precision::bf16)] = 1200e12;  // above its peak
  EXPECT_NEAR(gemm_shape_device(gpu, Precision::bf16).ceiling_flops, 0.9 * 989.4e12, 1e6);
  // A custom GPU's measured block reaches the model; a wrong key in it is an error naming it.
  const std::string gpu_json =
      R"({"name": "x", "memory_gib": 80, "memory_bandwidth_GBps": 3350, "sm_count": 132,
          "peak_tflops": {"bf16": 989.4}, "measured": {"gemm_tflops": {"bf16": 700}}})";
  const Scenario s = test::scenario(test::doc(
      R"({"tp": 8, "global_batch": 64})", R"("llama3-8b")", R"({"gpu": )" + gpu_json + R"(, "gpus_per_node": 8, "nodes": 1, "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"})"));
  ASSERT_EQ(s.cluster.groups.size(), 1u);
  EXPECT_EQ(s.cluster.groups[0].gpu.sm_count, 132);
  EXPECT_EQ(s.cluster.groups[0].gpu.measured_gemm_flops(Precision::bf16), 700e12);
  const std::string typo =
      R"({"name": "x", "memory_gib": 80, "memory_bandwidth_GBps": 3350,
          "peak_tflops": {"bf16": 989.4}, "measured": {"gemm_tflops": {"bf61": 700}}})";
  const Error e = test::error_of(test::doc(
      R"({"tp": 8, "global_batch": 64})", R"("llama3-8b")", R"({"gpu": )" + typo + R"(, "gpus_per_node": 8, "nodes": 1, "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"})"));
  EXPECT_NE(e.message.find("gemm_tflops.bf61"), std::string::npos) << e.message;
  // A negative rate is refused by the peak keys' range.
  const std::string negative =
      R"({"name": "x", "memory_gib": 80, "memory_bandwidth_GBps": 3350,
          "peak_tflops": {"bf16": 989.4}, "measured": {"gemm_tflops": {"bf16": -1}}})";
  const Error n = test::error_of(test::doc(
      R"({"tp": 8, "global_batch": 64})", R"("llama3-8b")", R"({"gpu": )" + negative + R"(, "gpus_per_node": 8, "nodes": 1, "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"})"));
  EXPECT_NE(n.message.find("gemm_tflops.bf16"), std::string::npos) << n.message;
}

// The estimate's dense GEMMs (compute.cpp's gemm_time_s) run on the architecture's tiles at
// the calibrated rate of large GEMMs: an H100 at gemm_efficiency 0.6 (593.64 TF, 4.4973 TF a
// SM), the per-GEMM overhead of the calibration on top.
TEST(GemmShape, TheEstimatesDenseGemmsRunOnTheirTiles) {
  const Catalog& cat = catalog();
  const GpuSpec& gpu = *cat.find_gpu("h100-sxm5-80gb");
  Calibration cal = cat.calibration;
  ArchCalibration c = cal.for_arch(gpu.arch);
  c.gemm_efficiency = 0.6;
  cal.families = {{gpu.arch, c}};
  const Device d = make_device(gpu, Precision::bf16, cal);
  const double per_sm = 989.4e12 * 0.6 / 132;
  // 12 x 11 tiles of 128 x 256 (or 6 x 22 of 256 x 128, or two waves of 128 x 128 at half the
  // area): one full wave, each tile 4,096 + 64 deep.
  const double one_wave = 2.0 * 128 * 256 * (4096 + 64) / per_sm;
  EXPECT_NEAR(gemm_time_s(12 * 128, 11 * 256, 4096, 2, d) - c.gemm_overhead_s, one_wave, 1e-12);
  // One row more: a partly empty wave however it is cut. The best cut runs 25 x 22 tiles of
  // 64 x 128, k in 4 slices: 2,200 tiles in 17 waves, 17 x 0.25 x (1,024 + 64) / 4,160 of the
  // full wave, 1.11x it, for 0.07 % more FLOPs.
  EXPECT_NEAR(gemm_time_s(12 * 128 + 1, 11 * 256, 4096, 2, d) - c.gemm_overhead_s,
              one_wave * 17 * 0.25 * (1024 + 64) / 4160, 1e-12);
  // Where the architecture's tiles are not known, a roofline at the calibrated rate.
  GpuSpec bare = gpu;
  bare.sm_count = 0;
  const Device r = make_device(bare, Precision::bf16, cal);
  EXPECT_NEAR(gemm_time_s(12 * 128 + 1, 11 * 256, 4096, 2, r) - c.gemm_overhead_s,
              2.0 * 1537 * 2816 * 4096 / (989.4e12 * 0.6), 1e-12);
}

// ---- The measured tables ----

struct Kernel {
  std::string gpu_id, gpu_label, kind, precision, shape_class;
  double m = 0, n = 0, k = 0, groups = 1, rows = 0, measured_s = 0;
  bool format_stated = true;  // Azure's GB200 "fp4" (read as NVFP4) is not
};

// Shape classes: rows per GEMM (or per expert) and the smaller of n and k.
std::string shape_class(double rows, double n, double k) {
  const char* m = rows <= 256 ? "m<=256" : rows <= 1024 ? "m<=1k" : rows <= 4096 ? "m<=4k" : "m>4k";
  const double nk = std::min(n, k);
  const char* w = nk < 2048 ? "nk<2k" : nk < 8192 ? "nk<8k" : "nk>=8k";
  return fmt::format("{} {}", m, w);
}

// The published GPU strings of gemm-bench.csv as preset ids.
std::string preset_of(const std::string& gpu) {
  if (gpu.rfind("GB200", 0) == 0) return "gb200";
  if (gpu.rfind("B200", 0) == 0) return "b200";
  if (gpu.rfind("H200", 0) == 0) return "h200-sxm-141gb";
  if (gpu.rfind("H100", 0) == 0) return "h100-sxm5-80gb";
  if (gpu.rfind("A100-SXM", 0) == 0) return "a100-sxm4-80gb";
  return "";
}

std::vector<Kernel> kernels() {
  std::vector<Kernel> out;
  const std::string dir = std::string(STEPCAST_SOURCE_DIR) + "/tests/validation/gemm/";
  for (const auto& r : read_csv(dir + "h200-kernels.csv")) {
    const std::string kind = r.at("kind");
    if (kind != "gemm" && kind != "grouped_gemm") continue;
    Kernel x;
    x.gpu_id = "h200-sxm-141gb";
    x.gpu_label = "h200-sxm-141gb (bench_h200.py)";
    x.kind = kind;
    x.precision = r.at("precision") == "bf16" ? "bf16" : "fp8";
    x.m = num(r, "m"), x.n = num(r, "n"), x.k = num(r, "k");
    // The alignment sweep's k = 10,922 (not a multiple of 8 elements: no 16-byte TMA rows) runs
    // a slower kernel at 0.27 of its aligned neighbours; the model does not see alignment.
    if (std::fmod(x.k, 8) != 0 || std::fmod(x.n, 8) != 0) continue;
    x.groups = kind == "grouped_gemm" ? num(r, "groups") : 1;
    x.rows = kind == "grouped_gemm" ? num(r, "tokens_per_group") : x.m;
    x.measured_s = num(r, "gpu_us") * 1e-6;
    out.push_back(x);
  }
  for (const auto& r : read_csv(dir + "gemm-bench.csv")) {
    Kernel x;
    x.gpu_id = preset_of(r.at("gpu"));
    if (x.gpu_id.empty()) continue;
    x.kind = r.at("kind");
    const std::string p = r.at("precision");
    x.precision = p == "fp4" ? "nvfp4" : p.rfind("fp8", 0) == 0 ? "fp8" : "bf16";
    x.format_stated = p != "fp4";
    x.gpu_label = fmt::format("{} (published)", x.gpu_id);
    x.m = num(r, "m"), x.n = num(r, "n"), x.k = num(r, "k");
    x.groups = x.kind == "grouped_gemm" ? num(r, "groups") : 1;
    x.rows = x.kind == "grouped_gemm" ? num(r, "tokens_per_group") : x.m;
    const double t = num(r, "measured_time_us");
    x.measured_s = t > 0 ? t * 1e-6 : 2 * x.m * x.n * x.k / (num(r, "measured_tflops") * 1e12);
    // Azure's superbench loop times back-to-back eager cuBLASLt calls: a kernel under 10 us
    // shows the host's launch rate there (its 1024^3 rows: 3-8 us), not the GPU time the model
    // (and the H200 table, from CUDA graphs) gives.
    if (r.at("source") == "Azure-AI-benchmarking-guide" && x.measured_s < 10e-6) continue;
    out.push_back(x);
  }
  for (Kernel& x : out) x.shape_class = shape_class(x.rows, x.n, x.k);
  return out;
}

// Goal (issue 34): median |error| <= 10 % per GPU and kind; no shape class off by more than 25 %
// (a class's median signed error). Printed as the README's table reads; asserted for groups of
// 5 rows or more in a stated number format, and classes of 3 rows or more (one or two rows are
// a shape, not a class: they are printed).
TEST(GemmShape, ReproducesTheKernelTables) {
  const std::vector<Kernel> all = kernels();
  // 540 GEMM and grouped-GEMM rows of the H200 table less its misaligned one; 62 published less
  // the 7 eager-timed ones under 10 us.
  ASSERT_EQ(all.size(), 594u);
  std::map<std::string, std::vector<double>> errors;                         // group -> |err|
  std::map<std::string, std::map<std::string, std::vector<double>>> classes;  // signed
  std::map<std::string, bool> stated;
  for (const Kernel& x : all) {
    const GpuSpec* gpu = catalog().find_gpu(x.gpu_id);
    ASSERT_NE(gpu, nullptr) << x.gpu_id;
    const Precision p = x.precision == "nvfp4" ? Precision::nvfp4
                        : x.precision == "fp8" ? Precision::fp8
                                               : Precision::bf16;
    const GemmShapeDevice d = gemm_shape_device(*gpu, p);
    const double e = gemm_element_bytes(p);
    const double t = x.kind == "grouped_gemm"
                         ? shape_grouped_gemm_time_s(x.groups, x.rows, x.n, x.k, e, d)
                         : shape_gemm_time_s(x.m, x.n, x.k, e, d);
    ASSERT_GT(x.measured_s, 0);
    const double err = t / x.measured_s - 1;
    const std::string group = fmt::format("{} {} {}", x.gpu_label, x.kind, x.precision);
    errors[group].push_back(std::abs(err));
    classes[group][x.shape_class].push_back(err);
    stated.try_emplace(group, true);
    stated[group] = stated[group] && x.format_stated;
  }
  std::string table =
      "| GPU (data) | kind | precision | rows | median abs. error | worst class (median error) |\n"
      "|---|---|---|---:|---:|---|\n";
  for (const auto& [group, errs] : errors) {
    const bool judged = errs.size() >= 5 && stated[group];
    std::string worst;
    double worst_err = 0;
    for (const auto& [c, v] : classes[group]) {
      const double med = median(v);
      if (worst.empty() || std::abs(med) > std::abs(worst_err)) worst = c, worst_err = med;
      if (judged && v.size() >= 3)
        EXPECT_LE(std::abs(med), 0.25) << group << ", " << c << ": " << v.size() << " rows";
    }
    const size_t space = group.find(' ', group.find(')'));
    const std::string gpu = group.substr(0, space), rest = group.substr(space + 1);
    table += fmt::format("| {} | {} | {} | {:.1f} % | {} {:+.1f} %{} |\n", gpu,
                         rest.substr(0, rest.find(' ')), rest.substr(rest.find(' ') + 1) +
                         fmt::format(" | {}", errs.size()), 100 * median(errs), worst,
                         100 * worst_err, judged ? "" : " (not asserted)");
    if (judged) EXPECT_LE(median(errs), 0.10) << group;
  }
  std::cout << table;
}

}  // namespace
}  // namespace stepcast
