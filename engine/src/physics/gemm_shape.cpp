#include "stepcast/gemm_shape.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace stepcast {

namespace {

// The kernel constants, fitted once on tests/validation/gemm/h200-kernels.csv (629 kernels on an
// H200, bench_h200.py) and checked on the published tables beside it (gemm_shape_test.cpp prints
// the errors per GPU, kind and shape class):
// - kSustainedShare: large GEMMs of training shapes on cold operands hold 0.90 of the MAMF
//   (MAMF is the mean of the best shape of a brute-force search, stas00/ml-engineering; the
//   H200's square and Llama/GPT shapes reach 690-800 TF of its 794.5). Bounds: 0.8-1.0.
// - kKFill: each tile's pipeline fills one 64-wide k block before its first product (the
//   WGMMA mainloop's prologue); the data ask for 32-128 (fit 64, k = 512-2,048 shapes).
// - kLatencyS: the 64^3 GEMM's floor inside a CUDA graph, 2.186 us (h200-kernels.csv, launch).
// - kGroupedFixedS: torch._grouped_mm first runs prepare_grouped_gemm_data (one more kernel,
//   PyTorch aten/src/ATen/native/cuda/GroupMM.cu at 117b8633) and the persistent scheduler's
//   setup: 5 us (fit 4-8 us on the grouped rows of 4-32 groups).
// - kMemoryShare: a memory-bound GEMM streams its operands at 0.9 of HBM (cuBLAS at m = 1 reads
//   H100 weights of 30 MB at 3.06 TB/s, 0.91 of 3.35: vLLM pull request 23280's torch.mm rows in
//   tests/validation/gemm/gemm-bench.csv; STREAM 0.93 on H200, presets/gpus/).
// - kGroupedMemoryShare: the grouped kernel's 64-row tiles stream each expert's weights at 0.75 of
//   HBM (its rows of 128 tokens per expert, 3.2-3.6 TB/s of the H200's 4.8: the weights of an
//   expert are re-read per row tile, partly from L2).
constexpr double kSustainedShare = 0.90;
constexpr double kKFill = 64;
constexpr double kLatencyS = 2.186e-6;
constexpr double kGroupedFixedS = 5e-6;
constexpr double kMemoryShare = 0.9;
constexpr double kGroupedMemoryShare = 0.75;
// Where a GPU's MAMF is not measured: its peak times the median MAMF / peak of the 17 measured
// (GPU, precision) pairs in presets/gpus/ (0.44 MI300X fp8 ... 0.87 A100 bf16).
constexpr double kUnmeasuredMamfShare = 0.745;
// Split-K / stream-K: cuBLAS cuts k into slices so that a partial last wave (or an output with
// fewer tiles than SMs) is shared by every SM; modelled as up to 4 equal k slices, whichever wave
// count is shortest (the slices' fp32 partials, a few MB, are reduced through L2: not charged).
// Without it the H200 table's median error is 4.6 % and vLLM's H100 rows 15.6 % (with: 4.3, 7.8).
constexpr int kMaxSplitK = 4;

// Output tiles per architecture. Hopper (and Ampere, Volta, Turing, Ada): CUTLASS's tensor-core
// CTA tiles, 64x128 to 256x128 (NVIDIA/cutlass python/cutlass_library/generator.py at 751eb9a8:
// GenerateSM80_TensorOp_16816, GenerateSM90_TensorOp_16b_WGMMA_gemm); cuBLAS picks among the
// same sizes. Blackwell adds the 2-SM UMMA tiles (256 rows over an SM pair).
constexpr std::array<GemmTile, 5> kTensorCoreTiles = {
    {{64, 128, 1}, {128, 128, 1}, {128, 256, 1}, {256, 128, 1}, {64, 256, 1}}};
constexpr std::array<GemmTile, 5> kBlackwellTiles = {
    {{128, 128, 1}, {128, 256, 1}, {256, 128, 2}, {256, 256, 2}, {64, 256, 1}}};
// torch._grouped_mm's tiles (GroupMM.cu at 117b8633, dispatch_bf16_grouped_kernel_on_tile_size):
// rows per group <= 128 take the small tile, others the large one. Hopper 64x128 ping-pong and
// 128x256 cooperative; Blackwell 128x256 on one SM and 256x256 on two.
constexpr std::array<GemmTile, 2> kHopperGrouped = {{{64, 128, 1}, {128, 256, 1}}};
constexpr std::array<GemmTile, 2> kBlackwellGrouped = {{{128, 256, 1}, {256, 256, 2}}};

bool blackwell(std::string_view arch) { return arch.substr(0, 9) == "blackwell"; }
bool nvidia_tensor_cores(std::string_view arch) {
  return arch == "volta" || arch == "turing" || arch == "ampere" || arch == "ada" ||
         arch == "hopper" || blackwell(arch);
}

// Time of `tiles` output tiles of one shape, each running `k` deep, in waves over the SMs.
double waves_s(double tiles, const GemmTile& t, double k, const GemmShapeDevice& d) {
  const double per_sm = d.ceiling_flops / d.sm_count;
  const double waves = std::ceil(tiles * t.sms / d.sm_count);
  // A wave of tiles spanning `sms` SMs each: every SM (pair) runs one tile at its share.
  return waves * 2 * t.m * t.n * (k + d.k_fill) / (per_sm * t.sms);
}

double traffic_s(double m, double n, double k, double groups, double element_bytes,
                 double memory_Bps) {
  const double bytes = element_bytes * (m * k + groups * k * n) + 2 * m * n;
  return bytes / memory_Bps;
}

}  // namespace

GemmShapeDevice gemm_shape_device(const GpuSpec& gpu, Precision precision) {
  GemmShapeDevice d;
  const double peak = gpu.peak_flops(precision).value_or(0);
  const double mamf =
      std::min(peak, gpu.measured_gemm_flops(precision).value_or(kUnmeasuredMamfShare * peak));
  d.ceiling_flops = kSustainedShare * mamf;
  d.memory_Bps = kMemoryShare * gpu.memory_bandwidth_Bps;
  d.grouped_memory_Bps = kGroupedMemoryShare * gpu.memory_bandwidth_Bps;
  d.latency_s = kLatencyS;
  d.k_fill = kKFill;
  d.grouped_fixed_s = kGroupedFixedS;
  // Tiles only where the architecture's are known; elsewhere a roofline at the ceiling.
  if (gpu.sm_count > 0 && nvidia_tensor_cores(gpu.arch)) {
    d.sm_count = gpu.sm_count;
    d.tiles = blackwell(gpu.arch) ? std::span<const GemmTile>(kBlackwellTiles)
                                  : std::span<const GemmTile>(kTensorCoreTiles);
    d.grouped_tiles = blackwell(gpu.arch) ? std::span<const GemmTile>(kBlackwellGrouped)
                                          : std::span<const GemmTile>(kHopperGrouped);
  }
  return d;
}

double shape_compute_s(double m, double n, double k, double ceiling_flops,
                       const GemmShapeDevice& d) {
  if (m <= 0 || n <= 0 || k <= 0 || !(ceiling_flops > 0)) return 0;
  if (d.sm_count <= 0 || d.tiles.empty()) return 2 * m * n * k / ceiling_flops;
  // waves_s over every tile and split, its common factor 2 / (ceiling / SMs) taken out of the
  // search: the estimate prices every dense GEMM of every plan a search tries through here.
  double depth[kMaxSplitK];
  for (int split = 1; split <= kMaxSplitK; ++split) depth[split - 1] = k / split + d.k_fill;
  // The waves of each split from one division per tile: tiles = q·SMs + r, so `split` slices
  // take split·q waves and ceil(split·r / SMs) more, split·r being under 4 SMs. In integers, the
  // ceiling of the quotient exactly: what std::ceil(tiles·split / SMs) gives in doubles wherever
  // the quotient stays far from 2^53 (tiles below 2^40 here; the doubles above), at a fifth of the
  // divisions (a tenth of a dense search's time was this function's).
  const auto sms = static_cast<uint64_t>(d.sm_count);
  const bool whole_sms = static_cast<double>(sms) == d.sm_count;
  double best = 0;
  for (const GemmTile& t : d.tiles) {
    const double tiles = std::ceil(m / t.m) * std::ceil(n / t.n) * t.sms;
    const double area = t.m * t.n / t.sms;
    if (whole_sms && tiles < 0x1p40) {
      const auto whole = static_cast<uint64_t>(tiles);
      const uint64_t q = whole / sms, r = whole % sms;
      for (int split = 1; split <= kMaxSplitK; ++split) {
        const uint64_t rest = split * r;
        const uint64_t waves = split * q + (rest > 0) + (rest > sms) + (rest > 2 * sms) +
                               (rest > 3 * sms);
        const double s = static_cast<double>(waves) * area * depth[split - 1];
        if (best == 0 || s < best) best = s;
      }
      continue;
    }
    for (int split = 1; split <= kMaxSplitK; ++split) {
      const double s = std::ceil(tiles * split / d.sm_count) * area * depth[split - 1];
      if (best == 0 || s < best) best = s;
    }
  }
  return best * 2 * d.sm_count / ceiling_flops;
}

double shape_gemm_time_s(double m, double n, double k, double element_bytes,
                         const GemmShapeDevice& d) {
  if (m <= 0 || n <= 0 || k <= 0 || !(d.ceiling_flops > 0) || !(d.memory_Bps > 0)) return 0;
  const double memory = traffic_s(m, n, k, 1, element_bytes, d.memory_Bps);
  return std::max(shape_compute_s(m, n, k, d.ceiling_flops, d), memory) + d.latency_s;
}

double shape_grouped_gemm_time_s(double groups, double rows, double n, double k,
                                 double element_bytes, const GemmShapeDevice& d) {
  if (groups <= 0 || rows <= 0 || n <= 0 || k <= 0 || !(d.ceiling_flops > 0) ||
      !(d.grouped_memory_Bps > 0))
    return 0;
  const double memory =
      traffic_s(groups * rows, n, k, groups, element_bytes, d.grouped_memory_Bps);
  double compute = 2 * groups * rows * n * k / d.ceiling_flops;
  if (d.sm_count > 0 && d.grouped_tiles.size() == 2) {
    const GemmTile& t = rows <= 128 || n <= 128 ? d.grouped_tiles[0] : d.grouped_tiles[1];
    compute = waves_s(groups * std::ceil(rows / t.m) * std::ceil(n / t.n), t, k, d);
  }
  return std::max(compute, memory) + d.latency_s + d.grouped_fixed_s;
}

}  // namespace stepcast
