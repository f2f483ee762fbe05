#include "stepcast/memory.h"

#include <algorithm>

#include "stepcast/compute.h"

namespace stepcast {

double layer_activation_bytes(const ModelSpec& m, const Plan& p, bool moe) {
  const double t = p.tp;
  const double s = static_cast<double>(m.seq_len) / p.cp;  // this GPU's share of the sequence
  const double b = static_cast<double>(p.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double q = static_cast<double>(m.q_dim());
  const double a = activation_bytes(p.precision);
  const double sbh = s * b * h;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double replicated = sp ? 1.0 / t : 1.0;  // tensors TP leaves whole unless SP splits them
  const double gated = ffn_matrices(m.ffn_type) - 1;

  if (p.recompute == Recompute::full)  // only each layer's input is kept (checkpoint)
    return a * sbh * replicated;

  // Korthikanti et al. eq. 2 terms, in units of bytes (a = bytes per activation element):
  double bytes = 0;
  bytes += replicated * (2 * a * sbh);            // the two norms' inputs
  bytes += replicated * (a * sbh);                // QKV input (first norm's output)
  if (m.mla()) {
    // The latents (and their norms' inputs), every head's query, key and value, and the
    // attention output.
    const AttentionSpec& A = m.attention;
    const double n = static_cast<double>(m.heads);
    const double latents = static_cast<double>(A.q_lora_rank + A.kv_lora_rank + A.qk_rope_head_dim);
    bytes += 2 * a * s * b * latents;
    bytes += a * s * b * n * static_cast<double>(2 * (A.qk_head_dim + A.qk_rope_head_dim) + A.v_head_dim) / t;
    bytes += a * s * b * n * static_cast<double>(A.v_head_dim) / t;
  } else {
    bytes += a * s * b * (q + 2 * kv) / t;  // Q, K, V
    bytes += a * s * b * q / t;             // attention output (projection input)
  }
  bytes += replicated * sbh;                      // attention dropout mask (1 byte)
  bytes += replicated * (a * sbh);                // fc1 input (second norm's output)
  auto mlp = [&](double f, double rows) {         // activation input(s) and output (fc2 input)
    return a * rows * f * gated + a * rows * f;
  };
  if (moe && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    const double shard = s * b / t;  // the layer's sequence-parallel tokens
    const double routed = static_cast<double>(e.experts) / p.ep * expert_rows(m, p);
    const double fe = static_cast<double>(e.ffn_hidden) / p.etp;
    bytes += 4 * shard * static_cast<double>(e.experts);        // router probabilities (fp32)
    bytes += 2 * a * routed * h;                                 // permuted tokens, expert outputs
    bytes += mlp(fe, routed);                                    // the experts' intermediates
    if (e.shared_experts > 0)
      bytes += mlp(static_cast<double>(e.shared_experts * e.shared_ffn_hidden) / t, s * b);
  } else {
    bytes += mlp(static_cast<double>(m.ffn_hidden) / t, s * b);
  }
  bytes += replicated * sbh;                      // MLP dropout mask
  const double heads = static_cast<double>(m.heads) / t;
  const bool stores_scores = !p.flash_attention && p.recompute != Recompute::selective;
  if (stores_scores)  // softmax output, its dropout mask and output: 5 a-ish bytes per score
    bytes += (2 * a + 1) * heads * s * static_cast<double>(m.seq_len) * b;
  else if (p.flash_attention)  // fused attention keeps the fp32 log-sum-exp per row
    bytes += 4 * heads * s * b;
  return bytes;
}

MemoryBreakdown stage_memory(const ModelSpec& m, const Plan& p, const StageShape& st,
                             const GpuSpec& gpu, const Calibration& cal) {
  MemoryBreakdown mem;
  const int dp = p.dp * p.cp;  // the distributed optimizer shards over DP x CP
  const int zero = p.effective_zero_stage();
  const double params = st.parameters;

  // Weights in the training precision. Below 16 bits Transformer Engine caches each weight
  // quantized twice (row-wise and transposed, for the forward and the dgrad GEMM) beside the
  // 16-bit copy; with fp8 parameters (fp8_param_gather) the fp8 copies are the parameters.
  const double e = gemm_element_bytes(p.precision);
  const double weight_bytes = p.precision == Precision::fp32 ? 4
                              : !low_precision(p.precision) ? 2
                              : p.fp8_param_gather          ? 2 * e
                                                            : 2 + 2 * e;
  const double grad_bytes =
      p.precision == Precision::fp32 || (p.precision != Precision::fp16 && p.grad_reduce_in_fp32)
          ? 4
          : 2;
  // Adam: fp32 master weights (none needed when training in fp32) + two moments, fp32 or bf16.
  const double optimizer_bytes =
      (p.precision == Precision::fp32 ? 0 : 4) + 2 * (p.bf16_moments ? 2 : 4);

  // Expert parameters are sharded by the optimizer over the expert data-parallel group.
  const double dense = params - st.expert_parameters, experts = st.expert_parameters;
  const double edp = std::max(1, p.edp());
  mem.weights = params * weight_bytes / (zero >= 3 ? dp : 1);
  if (zero >= 3)  // the gathered layer being computed (and the one prefetched)
    mem.weights += 2 * std::max(st.layer_parameters, st.moe_layer_parameters) * weight_bytes;
  mem.gradients = zero >= 2 ? dense * grad_bytes / dp + experts * grad_bytes / edp
                            : params * grad_bytes;
  mem.optimizer = zero >= 1 ? dense * optimizer_bytes / dp + experts * optimizer_bytes / edp
                            : params * optimizer_bytes;

  const double in_flight = st.in_flight;
  const double moe_layers = static_cast<double>(st.moe_layers);
  double act = (layer_activation_bytes(m, p) * (static_cast<double>(st.layers) - moe_layers) +
                layer_activation_bytes(m, p, true) * moe_layers) *
               in_flight;
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  if (p.recompute == Recompute::full) {  // one layer is re-materialised at a time
    Plan rerun = p;
    rerun.recompute = Recompute::none;
    act += layer_activation_bytes(m, rerun, st.moe_layers > 0);
  }
  if (st.mtp)  // the MTP modules' layers, like the last layer, for the micro-batches in flight
    act += static_cast<double>(m.mtp_layers) * in_flight *
           layer_activation_bytes(m, p, m.is_moe_layer(m.layers - 1));
  if (st.last)  // fp32 logits of one micro-batch over this GPU's vocabulary slice
    act += 4 * tokens * static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
  if (st.first)  // embedding output and its dropout mask for each micro-batch in flight
    act += in_flight * tokens * m.hidden * (activation_bytes(p.precision) + 1) /
           (p.sequence_parallel ? p.tp : 1);
  mem.activations = act;

  mem.allocated = mem.weights + mem.gradients + mem.optimizer + mem.activations;
  // PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp at pytorch/pytorch
  // 001074d2) rounds every block up to 512 B, packs requests up to 1 MiB into 2 MiB segments and
  // rounds larger ones up to 2 MiB (requests of 1-10 MiB split 20 MiB segments); freed blocks
  // stay cached and split blocks fragment. That waste is a fraction of what is allocated
  // (calibration framework_memory_fraction): measured reserved runs 2.8-9.3 % above allocated,
  // median 5.3 %, in SimuMax's 19 B200 runs (tests/validation/memory-runs.csv).
  mem.allocator = cal.framework_memory_fraction * mem.allocated;
  mem.reserved = mem.allocated + mem.allocator;
  mem.other = cal.framework_memory_bytes;  // outside the allocator
  mem.total = mem.reserved + mem.other;
  mem.capacity = gpu.memory_bytes;
  mem.headroom = p.memory_headroom * gpu.memory_bytes;
  return mem;
}

}  // namespace stepcast
