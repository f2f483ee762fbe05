#include "stepcast/attention_kernel.h"

namespace stepcast {

namespace {

// Query and key blocks of 128: FlashAttention-3's tile for a causal head-128 forward
// (Dao-AILab/flash-attention hopper/tile_size.h at 8a80215, tile_size_fwd_sm90; 128 x 176
// without the mask), taken for every kernel and head dimension: the fixed work below absorbs
// the rest.
constexpr double kBlock = 128;
// The fixed work of one query block (load its queries, rescale and write its output and
// log-sum-exp), in key blocks: fitted once on the 215 fused-kernel rows of
// tests/validation/gemm/attention-bench.csv (FlashAttention-2 on A100 and H100, -3 and cuDNN on
// H100, -4 on Blackwell; each chart at its own level): 1.6 (median |error| 4.0 %; 1.3-1.8 stay
// within 0.7 points). FlashAttention-3's head-128 forward alone gives 1.55 (467 TF at 512
// against 648 TF at 16k, non-causal).
constexpr double kQueryBlockFixed = 1.6;
// Forward matmul FLOPs per score at head dimension 128 (Q K^T and P V, 2 x 128 each), the
// reference the calibration's attention_efficiency is stated at; the backward's five matmuls
// to the forward's two make it 2.5x (Dao 2023, sec. 3).
constexpr double kReferenceForward = 4 * 128;
constexpr double kBackwardRatio = 2.5;

// Tensor-core FLOPs per SM per clock (16-bit inputs, dense) over exponentials per SM per clock.
// Exponentials: 16 per SM per clock on compute capability 7.0-10.0 (CUDA C++ Programming Guide,
// "Throughput of Native Arithmetic Instructions": base-2 exponential exp2f), which 3.9 TFLOP/s
// over H100 SXM's 132 SMs at 1.83 GHz confirms; Blackwell Ultra doubles them (NVIDIA Technical
// Blog, "Making Softmax More Efficient with NVIDIA Blackwell Ultra", 2026: twice Blackwell's
// SFU throughput for MUFU.EX2).
// Tensor cores per SM per clock, dense 16-bit: Volta and Turing 512 FMA (V100 and Turing
// whitepapers: 8 tensor cores x 64), Ampere GA100 1,024 (A100 whitepaper: 4 x 256), Ada 512
// (L40S: 362 TF over 142 SMs at 2.52 GHz), Hopper 2,048 (H100 whitepaper: 4 x 512), Blackwell
// 4,096 (B200: 2.25 PF dense over 148 SMs at 1.86 GHz). Cut-down parts of a family (H20, GA102's
// A10 and A40) take the family's ratio, which overstates their exponentials' share.
struct ArchRatio {
  std::string_view arch;
  double flops_per_exp;
};
constexpr ArchRatio kRatios[] = {
    {"volta", 1024.0 / 16},   {"turing", 1024.0 / 16}, {"ampere", 2048.0 / 16},
    {"ada", 1024.0 / 16},     {"hopper", 4096.0 / 16}, {"blackwell", 8192.0 / 16},
    {"blackwell-ultra", 8192.0 / 32},
};

// Share of the exponentials: the matmul time per score against matmul plus exponential time,
// relative to the same at the reference FLOPs per score. Heads above 128 come out faster than
// the charts show (the kernels shrink their key blocks there to fit shared memory,
// tile_size.h: 112 keys at head 192, 80 at 256): forward within 10 % on average, backward up to
// 45 % (attention_kernel_test.cpp prints them). Capping the gain at head 128 fits the charts
// better but left Blackwell's moe_host_expert_us at its bound in the refit: kept uncapped
// until the MoE time that constant absorbs is modelled.
double exp_share(double flops_per_score, double flops_per_exp, double reference) {
  if (flops_per_score <= 0) return 1;
  return (1 + flops_per_exp / reference) / (1 + flops_per_exp / flops_per_score);
}

}  // namespace

double tensor_flops_per_exp(std::string_view arch) {
  for (const ArchRatio& r : kRatios)
    if (r.arch == arch) return r.flops_per_exp;
  return 0;
}

double attention_kernel_share(double keys, bool causal, double flops_per_score,
                              double flops_per_exp, bool backward) {
  const double n = keys / kBlock;
  if (n <= 0) return 1;
  // Non-causal: n key blocks of work per query block and the fixed part. Causal: n/2 blocks are
  // counted (the FLOPs skip the upper triangle) where (n + 1)/2 run, the diagonal block whole.
  const double tiles = causal ? n / (n + 1 + 2 * kQueryBlockFixed) : n / (n + kQueryBlockFixed);
  const double reference = backward ? kBackwardRatio * kReferenceForward : kReferenceForward;
  return tiles * exp_share(flops_per_score, flops_per_exp, reference);
}

}  // namespace stepcast
