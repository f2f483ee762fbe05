// A fused attention kernel's speed from its shape (issue 34): FlashAttention-2/3/4 and cuDNN's
// fused attention run at a share of the GPU's 16-bit peak that depends on the sequence and the
// head dimension, not one share for every shape. Two effects, each from the kernels' structure:
// - Tiles: each block of 128 queries loads its queries, walks the key blocks and writes its
//   output and statistics; the fixed part costs about 1.5 key blocks' work, so short sequences
//   run slower, and a causal mask leaves the diagonal block's masked half computed anyway.
// - Exponentials: every score takes one exp on the SM's special-function units, which run at a
//   small fraction of the tensor cores' rate (FlashAttention-3, Shah et al. 2024, sec. 3: H100
//   has 989 TFLOP/s of FP16 matmul but 3.9 TFLOP/s of special functions), while the matmul work
//   per score grows with the head dimension: small heads are exp-bound.
// Both are shares of the kernel's speed at head dimension 128 on long sequences, the figure the
// calibration's attention_efficiency states. tests/engine/attention_kernel_test.cpp checks them
// against the published kernel charts in tests/validation/gemm/attention-bench.csv.
#pragma once

#include <string_view>

namespace stepcast {

// 16-bit dense tensor-core FLOPs per exponential on one SM per clock for an architecture
// family (GpuSpec::arch); 0 where not known (no exponential term).
double tensor_flops_per_exp(std::string_view arch);

// The kernel's speed on one shape as a share of its speed at head dimension 128 on a long
// sequence: `keys` the key length one kernel call walks per query block (the window for a
// sliding window, the local chunk under context parallelism), `causal` whether a causal mask
// skips the upper triangle, `flops_per_score` the matmul FLOPs each score takes in this pass
// (forward: 2 x (query-key + value head dims); backward 2.5 x that), `flops_per_exp` from
// tensor_flops_per_exp, `backward` which pass (normalised at its own head-128 figure).
double attention_kernel_share(double keys, bool causal, double flops_per_score,
                              double flops_per_exp, bool backward);

}  // namespace stepcast
