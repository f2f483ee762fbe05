// A GEMM's time from its shape (issue 34): the GPU's maximum achievable matmul rate (MAMF,
// measured per precision, gpu.measured.gemm_tflops) on the tiles the library cuts the output
// into, in waves over the GPU's SMs, each tile filling its k pipeline first; or its bytes at HBM
// bandwidth, whichever is longer; plus the kernel's launch latency. A grouped GEMM (the routed
// experts of an MoE layer) is the same tiles over every group's rows in one persistent kernel,
// plus its own fixed cost. Nothing here is fitted to training runs: the kernel constants come
// from measured kernel tables (tests/validation/gemm/), each named where it is defined.
#pragma once

#include <span>

#include "stepcast/hardware.h"

namespace stepcast {

// One output tile shape a GEMM library runs on an architecture: `m` x `n` outputs per tile, on
// `sms` SMs (Blackwell's 2-SM UMMA tiles span an SM pair).
struct GemmTile {
  double m = 128;
  double n = 256;
  double sms = 1;
};

// What the shape model needs about one GPU at one precision.
struct GemmShapeDevice {
  double ceiling_flops = 0;  // sustained share x MAMF at the precision
  double memory_Bps = 0;     // achievable HBM bandwidth (GEMM operand streams)
  double grouped_memory_Bps = 0;  // the same for a grouped GEMM's expert weights
  double sm_count = 0;       // 0: unknown, no tile or wave quantisation (a plain roofline)
  double latency_s = 0;      // one kernel's launch-to-end floor
  double k_fill = 0;         // k elements each tile spends filling its pipeline
  double grouped_fixed_s = 0;  // a grouped GEMM's own fixed cost (its setup kernel)
  std::span<const GemmTile> tiles;          // dense GEMMs: the candidates the library picks from
  std::span<const GemmTile> grouped_tiles;  // grouped GEMMs: {small rows, large rows}
};

// The shape model of `gpu` at `precision`: MAMF from gpu.measured (else the peak times the
// presets' median MAMF/peak share), the architecture's tiles, the kernel constants.
GemmShapeDevice gemm_shape_device(const GpuSpec& gpu, Precision precision);

// The compute part of one GEMM m x n x k alone: the architecture's tiles in waves over the SMs
// (split-K where it shortens them), each tile filling its pipeline, at `ceiling_flops` (a
// roofline at it where the SMs or tiles are not known). No memory bound, no latency.
double shape_compute_s(double m, double n, double k, double ceiling_flops,
                       const GemmShapeDevice& device);

// One GEMM C[m x n] = A[m x k] B[k x n], `element_bytes` per input element, 16-bit output.
double shape_gemm_time_s(double m, double n, double k, double element_bytes,
                         const GemmShapeDevice& device);

// `groups` GEMMs of `rows` x n x k each in one grouped kernel (PyTorch's torch._grouped_mm /
// CUTLASS grouped GEMM): every group's tiles share the waves.
double shape_grouped_gemm_time_s(double groups, double rows, double n, double k,
                                 double element_bytes, const GemmShapeDevice& device);

}  // namespace stepcast
