#include "stepcast/compute.h"

#include <algorithm>
#include <cmath>

#include "physics/recompute_set.h"
#include "stepcast/attention_kernel.h"

namespace stepcast {

double activation_bytes(Precision p) { return p == Precision::fp32 ? 4 : 2; }

double gemm_element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
    case Precision::fp8: return 1;
    // One E8M0 scale byte per 32 values (OCP MX spec v1.0).
    case Precision::mxfp8: return 1 + 1.0 / 32;
    // Half a byte per value plus one E4M3 scale byte per 16 values (NVFP4, TE 2.7).
    case Precision::nvfp4: return 0.5 + 1.0 / 16;
  }
  return 2;
}

double quantize_bytes_per_element(Precision p) {
  if (!low_precision(p)) return 0;
  // Read the bf16 tensor, write it quantized twice: row-wise for one GEMM and column-wise
  // (transposed) for the other (Transformer Engine's cast-transpose; MX and NVFP4 scales run
  // along one axis, so each direction is quantized on its own). A recipe with a per-tensor scale
  // reads the tensor once more to find its amax first: fp8 with current scaling, and NVFP4,
  // whose FP32 global scale is amax / (448 x 6) over the whole tensor (NVFP4Quantizer::
  // quantize_impl in transformer_engine/pytorch/csrc/quantizer.cpp at NVIDIA/TransformerEngine
  // d0067d0d: nvte_compute_amax, or nvte_hadamard_transform_amax for both amaxes of an operand
  // the wgrad GEMM takes through the random Hadamard transform, one read; then one fused kernel
  // writes the row-wise and the RHT'd column-wise data). MXFP8's E8M0 scales are per block of
  // 32, found in the cast's own read.
  const double reads = p == Precision::fp8 || p == Precision::nvfp4 ? 2 * 2.0 : 2.0;
  return reads + 2 * gemm_element_bytes(p);
}

Device make_device(const GpuSpec& gpu, Precision precision, const Calibration& calibration) {
  Device d;
  d.precision = precision;
  d.peak_flops = gpu.peak_flops(precision).value_or(0);
  // Attention kernels run in 16-bit even when GEMMs use fp8 or fp4 (Transformer Engine keeps
  // the dot-product attention in bf16 by default).
  d.attention_peak = low_precision(precision)
                         ? gpu.peak_flops(Precision::bf16)
                               .value_or(gpu.peak_flops(Precision::fp16).value_or(d.peak_flops))
                         : d.peak_flops;
  d.flops_per_exp = tensor_flops_per_exp(gpu.arch);
  d.memory_Bps = gpu.memory_bandwidth_Bps;
  d.cal = calibration.for_arch(gpu.arch);
  switch (precision) {
    case Precision::fp8:
    case Precision::mxfp8: d.gemm_efficiency = d.cal.fp8_gemm_efficiency; break;
    case Precision::nvfp4: d.gemm_efficiency = d.cal.fp4_gemm_efficiency; break;
    default: d.gemm_efficiency = d.cal.gemm_efficiency; break;
  }
  // GEMMs from their shape (gemm_shape.cpp) at the rate the dense GEMMs are calibrated to rather
  // than the shape model's MAMF ceiling (priced from the MAMF they refit worse out of sample:
  // stop 49's and helper g's measurements in tests/validation/README.md), so that a large GEMM
  // costs what its calibrated rate says and a coarse expert what a dense GEMM of its size costs.
  // What the shape adds: partly empty tiles and waves, the pipeline fill of short k, and for the
  // experts every expert's weights streamed and the grouped kernel's setup. The ceiling kept
  // here is the grouped kernel's; gemm_time_s passes the dense rate.
  d.shape = gemm_shape_device(gpu, precision);
  d.shape.ceiling_flops = d.peak_flops * d.gemm_efficiency * d.cal.grouped_gemm_factor;
  return d;
}

double gemm_time_s(double m, double n, double k, double element_bytes, const Device& d) {
  // The calibrated rate of large GEMMs in training, on the architecture's tiles in waves over the
  // SMs (gemm_shape.h): a GEMM of few tiles runs a partly empty last wave, a short k fills each
  // tile's pipeline for longer. Small models at small micro-batches are made of such GEMMs.
  const double compute = shape_compute_s(m, n, k, d.peak_flops * d.gemm_efficiency, d.shape);
  const double traffic = element_bytes * (m * k + k * n) + 2 * m * n;  // output in 16 bits
  const double memory = traffic / (d.memory_Bps * d.cal.memory_efficiency);
  return std::max(compute, memory) + d.cal.gemm_overhead_s;
}

double grouped_gemm_time_s(double groups, double m, double n, double k, double element_bytes,
                           const Device& d) {
  return shape_grouped_gemm_time_s(groups, m, n, k, element_bytes, d.shape);
}

double expert_rows(const ModelSpec& m, const Plan& p) {
  const MoeSpec& e = m.moe;
  if (!e.enabled()) return 0;
  // The MoE layer sees this GPU's sequence-parallel shard: b·s / (cp·tp) tokens.
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp / p.tp;
  const double balanced = tokens * static_cast<double>(e.top_k) * p.etp * p.ep /
                          static_cast<double>(e.experts);
  return e.capacity_factor > 0 ? balanced * e.capacity_factor : balanced * p.busiest_rank_load();
}

double elementwise_s(double bytes, const Device& d) {
  return bytes / (d.memory_Bps * d.cal.memory_efficiency);
}

namespace {

// One layer's attention projections, forward: their GEMM time, the elements quantized into them
// (forward: their inputs; backward: the gradients of their outputs), and their element-wise
// traffic beyond the layer's norms (RoPE, MLA's latent norms).
struct Projections {
  double qkv_s = 0, proj_s = 0;
  double up_proj_s = 0;  // MLA: the up-projections from the latents (of qkv_s)
  double quantize_fwd = 0, quantize_bwd = 0;  // elements per token
  double elementwise_bytes = 0;               // per token
  double core_flops_per_key = 0;              // attention core FLOPs per token per key
  double heads = 0;                           // heads on this GPU
};

Projections projections(const ModelSpec& m, const Plan& p, const Device& d, double tokens) {
  const double t = p.tp;
  const double h = static_cast<double>(m.hidden);
  const double e = gemm_element_bytes(p.precision);
  const double a = activation_bytes(p.precision);
  Projections out;
  out.heads = static_cast<double>(m.heads) / t;
  if (m.mla()) {
    // Megatron-Core's MLASelfAttention: the down-projections (to the query and key/value
    // latents and the shared rotary key) are replicated on every TP rank; the up-projections to
    // each head and the output projection are split.
    const AttentionSpec& A = m.attention;
    const double n = static_cast<double>(m.heads);
    const double qk = static_cast<double>(A.qk_head_dim + A.qk_rope_head_dim);
    const double rope = static_cast<double>(A.qk_rope_head_dim);
    const double ql = static_cast<double>(A.q_lora_rank), kvl = static_cast<double>(A.kv_lora_rank);
    const double up_kv = n * static_cast<double>(A.qk_head_dim + A.v_head_dim) / t;
    const double v = n * static_cast<double>(A.v_head_dim) / t;
    if (ql > 0) {
      out.up_proj_s += gemm_time_s(tokens, n * qk / t, ql, e, d);
      out.qkv_s += gemm_time_s(tokens, ql, h, e, d) + out.up_proj_s;
      out.quantize_fwd += h + ql;
      out.quantize_bwd += ql + n * qk / t;
    } else {
      out.qkv_s += gemm_time_s(tokens, n * qk / t, h, e, d);
      out.quantize_fwd += h;
      out.quantize_bwd += n * qk / t;
    }
    out.up_proj_s += gemm_time_s(tokens, up_kv, kvl, e, d);
    out.qkv_s += gemm_time_s(tokens, kvl + rope, h, e, d) + gemm_time_s(tokens, up_kv, kvl, e, d);
    out.proj_s = gemm_time_s(tokens, h, v, e, d);
    out.quantize_fwd += h + kvl + v;
    out.quantize_bwd += kvl + rope + up_kv + h;
    // The latents' norms (read, write) and RoPE on the queries' and the shared key's rotary part.
    out.elementwise_bytes = (ql + kvl) * 2 * a + (n * rope / t + rope) * a * 2;
    out.core_flops_per_key = 2 * out.heads * (qk + static_cast<double>(A.v_head_dim));
    return out;
  }
  const double q = static_cast<double>(m.q_dim());
  const double kv = static_cast<double>(m.kv_dim());
  // Column-parallel QKV (and the output gate), row-parallel projection (Megatron-LM layout).
  const double in = (m.attention.output_gate ? 2 * q : q) + 2 * kv;
  out.qkv_s = gemm_time_s(tokens, in / t, h, e, d);
  out.proj_s = gemm_time_s(tokens, h, q / t, e, d);
  out.quantize_fwd = h + q / t;
  out.quantize_bwd = in / t + h;
  if (m.position == Position::rope) out.elementwise_bytes = (q + kv) / t * a * 2;
  // The gate: its sigmoid times the attention output (read both, write).
  if (m.attention.output_gate) out.elementwise_bytes += 3 * q / t * a;
  out.core_flops_per_key = 4 * q / t;  // Q K^T and scores x V over this GPU's heads
  return out;
}

// A hybrid mixer's projections, forward, in Projections' terms, all widths per GPU: the
// column-parallel in_proj (hidden -> `in`) and the row-parallel out_proj (`width` -> hidden) over
// `heads`; the depthwise conv (read and write its `conv` channels) and the gated RMSNorm (read
// the output and its gate, write: 3 x `width`) as element-wise traffic.
Projections mixer_projections(const ModelSpec& m, const Plan& p, const Device& d, double tokens,
                              double in, double width, double conv, double heads) {
  const double h = static_cast<double>(m.hidden);
  const double e = gemm_element_bytes(p.precision);
  const double a = activation_bytes(p.precision);
  Projections out;
  out.heads = heads;
  out.qkv_s = gemm_time_s(tokens, in, h, e, d);
  out.proj_s = gemm_time_s(tokens, h, width, e, d);
  out.quantize_fwd = h + width;
  out.quantize_bwd = in + h;
  out.elementwise_bytes = 2 * conv * a + 3 * width * a;
  return out;
}

// A Mamba-2 mixer (Megatron-Core's MambaMixer): in_proj to z, x, B, C and dt, each GPU holding
// heads/tp heads and groups/tp groups; the conv over x, B and C.
Projections mamba_projections(const ModelSpec& m, const Plan& p, const Device& d, double tokens) {
  const double t = p.tp;
  const double inner = static_cast<double>(m.mamba_inner()) / t;
  const double conv = static_cast<double>(m.mamba_conv_dim()) / t;
  const double heads = static_cast<double>(m.mamba_heads()) / t;
  return mixer_projections(m, p, d, tokens, inner + conv + heads, inner, conv, heads);
}

// A Gated DeltaNet mixer (Megatron-Core's GatedDeltaNet): in_proj to q, k, v, z, b and a over
// value_heads/tp heads; the conv over q, k and v.
Projections gdn_projections(const ModelSpec& m, const Plan& p, const Device& d, double tokens) {
  const double t = p.tp;
  const double v = static_cast<double>(m.gdn_value_dim()) / t;
  const double conv = static_cast<double>(m.gdn_conv_dim()) / t;
  const double heads = static_cast<double>(m.gdn.value_heads) / t;
  return mixer_projections(m, p, d, tokens, conv + v + 2 * heads, v, conv, heads);
}

// The gated delta rule of one Gated DeltaNet layer over this GPU's heads, forward, as
// flash-linear-attention's chunk_gated_delta_rule runs it (Megatron-Core's GatedDeltaNet calls
// it with q and k repeated to the value heads): Megatron's count of its FLOPs (4 multiply-adds
// per state element per token) at the rate its Triton kernels reach (calibration
// delta_rule_efficiency), of at most an H100's peak as the SSD scan below; and where few
// sequences x heads run, the state pass's chunk steps one after another. Measured, not fitted
// (flashinfer-ai/flashinfer pull request 3788, "FLA/Triton" column, one H100 80GB HBM3, key and
// value head dim 128): at 32-64 value heads, 2.04 ns a token and head (the median of 13 rows of
// 2,048-262,144 tokens in 1-32 sequences, 1.99-2.16), i.e. 64.3 TFLOP/s on 131,072 FLOPs a
// token and head, 0.065 of 989.4; the chain (K K^T, the triangular solve, w and u, the chunk
// states, the output) moves ~5 KB a token and head through HBM with small matmuls between, so it
// runs near memory speed, far below the fused attention kernels' 0.6 of the peak. At 8 value
// heads (pull request 3866, one sequence of 2,048-65,536 tokens: 0.086-1.954 ms) the time grows
// by 1.15 us a chunk of 64 tokens over the rate's: chunk_gated_delta_rule_fwd_h walks the chunks
// in order, one program per sequence, head and 64 value columns, so 16 programs leave most SMs
// idle. Here that pass costs its chunks x 1.15 us (calibration delta_rule_chunk_us; every GPU
// the H100's: a B300's 8-head rows grow ~1.5 us a chunk, pull request 4078) for each wave of
// programs over the SMs, in place of its share of the chain's traffic (its k, w, u, h and v_new
// of all the kernels'). A B300 ran the 64-head rows 1.43x faster than the H100 (the same pull
// request: 1.43 ns a token and head), faster than the cap gives and slower than the same share
// of its peak would: no Blackwell training rate is measured, and the SSD scan's Blackwell rows
// want the cap.
constexpr double kDeltaRuleChunkTokens = 64;     // FLA's chunk size (BT)
constexpr double kDeltaRuleValueColumns = 64;    // chunk_gated_delta_rule_fwd_h's BV
constexpr double kScanPeakCapFlops = 989.4e12;   // H100 SXM's dense 16-bit peak (its preset)
double delta_rule_s(const ModelSpec& m, const Plan& p, const Device& d) {
  const double dk = static_cast<double>(m.gdn.key_head_dim);
  const double dv = static_cast<double>(m.gdn.value_head_dim);
  const double seq = static_cast<double>(m.seq_len);
  const double sequences = static_cast<double>(p.micro_batch);
  const double heads = static_cast<double>(m.gdn.value_heads) / p.tp;
  const double token_heads = sequences * seq * heads;
  const double flops = 8 * token_heads * dk * dv;
  const double peak = std::min(d.attention_peak, kScanPeakCapFlops);
  const double rate_s = flops / (peak * d.cal.delta_rule_efficiency);
  // The chain's HBM traffic per token and head in elements (bf16; the fp32 K K^T counts twice):
  // K K^T reads k, writes A (C fp32); the solve reads A, writes its inverse (C); w and u read k,
  // v and the inverse, write w and u; the state pass reads k, w, u, writes the chunk's state
  // (dk x dv per C tokens) and v_new; the output reads q, k, v_new and the state, writes o.
  const double C = kDeltaRuleChunkTokens;
  const double state_pass = 2 * dk + 2 * dv + dk * dv / C;
  const double chain = 7 * dk + 6 * dv + 6 * C + 2 * dk * dv / C;
  const double programs = std::ceil(sequences * heads) * std::ceil(dv / kDeltaRuleValueColumns);
  const double waves = d.shape.sm_count > 0 ? std::ceil(programs / d.shape.sm_count) : 1;
  const double chunks_s = std::ceil(seq / C) * waves * d.cal.delta_rule_chunk_s;
  const double bytes = token_heads * activation_bytes(p.precision) * chain;
  return std::max({rate_s, (1 - state_pass / chain) * rate_s + chunks_s, elementwise_s(bytes, d)});
}

// The SSD scan of one Mamba layer over this GPU's heads, forward: Megatron's count of its FLOPs
// (7 per inner channel and state element per token) at the rate the chunked scan's Triton
// kernels reach (calibration ssd_scan_efficiency), or its traffic (read x, B, C and dt, write y)
// at memory bandwidth, whichever is longer. The rate is measured, not fitted:
// mamba_chunk_scan_combined's five kernels (chunk cumsum, B·C, chunk state, state passing, chunk
// scan; vLLM's copy of them, "Original") ran 1.07-1.29 x 10^7 tokens/s on one H100 SXM at head
// dim 64, 128 heads, state 128, one group, for 4,096 to 262,144 tokens (vllm-project/vllm pull
// request 27299, cyang49's H100 microbenchmark of 2025-10-25): the median, 1.18 x 10^7 tokens/s at
// 7.3 MFLOP a token, is 86.6 TFLOP/s, 0.0875 of the H100's 989.4 TFLOP/s. The intra-chunk
// matmuls are small (a chunk's tokens by head dim 64 by state 128) and the chunk states
// round-trip through memory in fp32, so the scan runs far below the fused attention kernels
// (0.6 of the peak). Above an H100's peak the share is of the H100's, not the GPU's: Triton's
// chunked scans measured no faster on a B200 than on an H100 (FLA's chunk_gated_delta_rule, the
// same kind of kernel, at 8,192 tokens, 8 value heads of 128: 0.338 ms on a B200 in flashinfer
// pull request 3001 with Triton 3.5.1, 0.259 ms on an H100 in pull request 3866), and the
// validation set's hybrid rows on Blackwell want the scan slower still. That row is bound by its
// state pass's chunk steps (delta_rule_s): at 64 heads a B300 ran FLA's chain 1.43x an H100's
// rate, so the cap may be slow on Blackwell Ultra; no SSD scan is measured there.
double ssd_scan_s(const ModelSpec& m, const Plan& p, const Device& d, double tokens) {
  const double t = p.tp;
  const double inner = static_cast<double>(m.mamba_inner()) / t;
  const double flops = 7 * tokens * inner * static_cast<double>(m.mamba.state_dim);
  const double bytes = tokens * activation_bytes(p.precision) *
                       (static_cast<double>(m.mamba_conv_dim() + m.mamba_heads()) / t + inner);
  const double peak = std::min(d.attention_peak, kScanPeakCapFlops);
  return std::max(flops / (peak * d.cal.ssd_scan_efficiency), elementwise_s(bytes, d));
}

}  // namespace

double full_recompute_share(const ModelSpec& m, const Plan& p) {
  if (p.recompute != Recompute::full) return 0;
  if (p.recompute_method == RecomputeMethod::uniform) return 1;
  const double chunk = static_cast<double>(m.layers) / (p.pp * p.vpp);  // the even split's
  return std::min(1.0, static_cast<double>(p.recompute_num_layers) / std::max(1.0, chunk));
}

double fused_attention_efficiency(const ModelSpec& m, const Plan& p, const Device& d,
                                  double keys, bool windowed, bool backward) {
  // The calibrated share of the peak (head dimension 128, long sequences) times the kernel's
  // share on this shape (attention_kernel.h): the keys one call walks (a window's band, or under
  // context parallelism one rank's chunk, its mask mostly off the diagonal), and the matmul
  // FLOPs each score takes against its exponential (MLA: query-key and value head dims apart).
  const AttentionSpec& A = m.attention;
  const double per_score =
      m.mla() ? 2.0 * static_cast<double>(A.qk_head_dim + A.qk_rope_head_dim + A.v_head_dim)
              : 4.0 * static_cast<double>(m.head_dim());
  const bool causal = !windowed && p.cp == 1;
  return d.cal.attention_efficiency *
         attention_kernel_share(keys / p.cp, causal, backward ? 2.5 * per_score : per_score,
                                d.flops_per_exp, backward);
}

LayerCompute layer_compute(const ModelSpec& m, const Plan& p, const Device& d, LayerKind kind) {
  const double t = p.tp;
  const double b = static_cast<double>(p.micro_batch);
  const double s = static_cast<double>(m.seq_len);
  const double tokens = b * s / p.cp;  // context parallelism splits every sequence cp ways
  const double h = static_cast<double>(m.hidden);
  const double gated = ffn_matrices(m.ffn_type) - 1;  // input matrices of the MLP (1 or 2)
  const double e = gemm_element_bytes(p.precision);
  const double a = activation_bytes(p.precision);
  const bool moe = kind.moe && m.moe.enabled();
  // A transformer layer is attention and an MLP; a hybrid layer one block (or a Mamba mixer).
  const bool attends = kind.block == Block::transformer || kind.block == Block::attention;
  const bool ffn = kind.block == Block::transformer || kind.block == Block::mlp;
  const bool mamba = kind.block == Block::mamba, gdn = kind.block == Block::gdn;
  const double norms = kind.block == Block::transformer ? 2 : 1;  // and residual adds

  const Projections att = attends ? projections(m, p, d, tokens)
                          : mamba ? mamba_projections(m, p, d, tokens)
                          : gdn   ? gdn_projections(m, p, d, tokens)
                                  : Projections{};
  LayerGemms g;
  g.qkv_s = att.qkv_s;
  g.proj_s = att.proj_s;
  double quantize_fwd = att.quantize_fwd * tokens, quantize_bwd = att.quantize_bwd * tokens;
  double mlp_bytes = 0;  // element-wise traffic of the MLP or the MoE block, forward
  // A TP-split MLP of width f: the dense layer's, or an MoE layer's shared experts.
  double act_bytes = 0;  // the MLP's activation function, forward (of mlp_bytes)
  auto split_mlp = [&](double f) {
    g.fc1_s = gemm_time_s(tokens, gated * f / t, h, e, d);
    g.fc2_s = gemm_time_s(tokens, h, f / t, e, d);
    quantize_fwd += tokens * (h + f / t);
    quantize_bwd += tokens * (gated * f / t + h);
    mlp_bytes += tokens * (f / t) * a * (gated + 1);  // the activation (gate product)
  };
  double experts_act_bytes = 0, experts_block_bytes = 0;  // the routed experts' share
  if (!ffn) {
    // (no MLP in an attention or Mamba layer of a hybrid model)
  } else if (!moe) {
    split_mlp(static_cast<double>(m.ffn_hidden));
  } else {
    const MoeSpec& x = m.moe;
    if (x.shared_experts > 0) split_mlp(static_cast<double>(x.shared_experts * x.shared_ffn_hidden));
    // The router scores this GPU's sequence-parallel shard against every expert (16-bit GEMM,
    // then softmax and top-k over fp32 logits); the routed experts run as two grouped GEMMs over
    // the experts/ep local experts, each 1/etp of an expert wide.
    const double shard = tokens / t;
    const double local = static_cast<double>(x.experts) / p.ep;
    const double rows = expert_rows(m, p);
    const double fe = static_cast<double>(x.ffn_hidden) / p.etp;
    const double routed = local * rows;  // rows over all local experts
    // The routed tokens' width: a latent MoE projects this GPU's shard to the latent before the
    // dispatch and back after the combine, two GEMMs whole on every TP rank ("duplicated").
    const double dt = static_cast<double>(m.moe_token_dim());
    const double latent = static_cast<double>(x.latent_size);
    g.experts_s = gemm_time_s(shard, static_cast<double>(x.experts), h, 2, d.sixteen_bit()) +
                  grouped_gemm_time_s(local, rows, gated * fe, dt, e, d) +
                  grouped_gemm_time_s(local, rows, dt, fe, e, d);
    if (latent > 0) {
      g.experts_s += gemm_time_s(shard, latent, h, e, d) + gemm_time_s(shard, h, latent, e, d);
      quantize_fwd += shard * (h + latent);
      quantize_bwd += shard * (latent + h);
    }
    quantize_fwd += routed * (dt + fe);
    quantize_bwd += routed * (gated * fe + dt);
    experts_act_bytes = routed * fe * a * (gated + 1);
    experts_block_bytes = experts_act_bytes + shard * static_cast<double>(x.experts) * 4 * 3;
    // Permutation: every token copied top_k times into expert order before the dispatch and
    // summed back after the combine (flex fuses both into its communication kernels).
    if (p.moe_dispatcher != MoeDispatcher::flex)
      experts_block_bytes += 2 * (shard * dt * a + shard * static_cast<double>(x.top_k) * dt * a);
    mlp_bytes += experts_block_bytes;
  }
  act_bytes = mlp_bytes - experts_block_bytes;  // the dense or shared MLP's activation
  const double linear = g.total();
  // Below 16 bits every GEMM input is quantized first: the activations going in (forward) and
  // the gradients coming back (backward), at memory bandwidth.
  const double q = quantize_bytes_per_element(p.precision);
  const double quantize_fwd_s = elementwise_s(q * quantize_fwd, d);
  const double quantize_bwd_s = elementwise_s(q * quantize_bwd, d);

  // Attention core over this GPU's heads for the full matrix (or the window's band; chunked
  // attention's causal chunks). Causal fused kernels skip the masked half of a full matrix;
  // unfused ones compute it all.
  const double keys = kind.windowed ? std::min(s, static_cast<double>(m.attention.window))
                                    : s * m.chunked_attention_share(s);
  const double attention_flops = att.core_flops_per_key * tokens * keys;
  double attention_fwd, attention_bwd;
  double softmax_bytes = 0;
  if (!attends) {
    // A Mamba layer's SSD scan (a Gated DeltaNet layer's delta rule) stands where the attention
    // core would: its backward, the chunked kernels' gradients of the scan's inputs and states,
    // taken as twice the forward as for the layer's GEMMs (FLA's delta rule backward recomputes
    // the forward's w, u and chunk states, then walks the chunks back: its state pass twice).
    attention_fwd = mamba ? ssd_scan_s(m, p, d, tokens) : gdn ? delta_rule_s(m, p, d) : 0;
    attention_bwd = 2 * attention_fwd;
  } else if (p.flash_attention) {
    const double flops = (kind.windowed ? 1.0 : 0.5) * attention_flops;
    attention_fwd = flops / (d.attention_peak * fused_attention_efficiency(m, p, d, keys,
                                                                           kind.windowed, false));
    // FlashAttention-2's backward does 5 matrix products to the forward's 2 (Dao, 2023, sec. 3).
    attention_bwd = 2.5 * flops / (d.attention_peak * fused_attention_efficiency(
                                                          m, p, d, keys, kind.windowed, true));
  } else {
    // Two batched GEMMs (one kernel each) over every head of the micro-batch.
    attention_fwd =
        attention_flops / (d.attention_peak * d.cal.gemm_efficiency) + 2 * d.cal.gemm_overhead_s;
    attention_bwd = 2 * attention_fwd;
    // Scores are written, soft-maxed, dropped out (1-byte mask) and read back by the second GEMM.
    softmax_bytes = (4 * a + 1) * b * att.heads * (s / p.cp) * keys;
  }

  // Element-wise traffic per layer forward: two norms (read, write), two bias-dropout-residual
  // adds (read 2, write 1, and a 1-byte mask where plan.hidden_dropout drops anything: at p = 0
  // PyTorch's dropout returns its input and writes no mask, aten's _dropout_impl and the
  // torch._decomp decomposition Megatron's jit_fuser traces; memory.cpp keeps none either), the
  // activation over the FFN width, RoPE on Q and K. With sequence parallelism, norms and dropout
  // run on 1/tp of the tokens.
  const double mask = p.hidden_dropout > 0 ? 1.0 : 0.0;
  const double sp_tokens = p.sequence_parallel ? tokens / t : tokens;
  double bytes = sp_tokens * h * (norms * 2 * a + norms * (3 * a + mask));
  bytes += mlp_bytes;
  bytes += tokens * att.elementwise_bytes;
  const double elementwise_fwd = elementwise_s(bytes, d) + elementwise_s(softmax_bytes, d);

  LayerCompute out;
  out.gemms = g;
  out.linear_forward_s = linear;
  out.attention_forward_s = attention_fwd + elementwise_s(softmax_bytes, d);
  out.forward_s =
      linear + attention_fwd + elementwise_fwd + quantize_fwd_s + d.cal.layer_overhead_s / 3;
  // Backward: a data-gradient and a weight-gradient GEMM per forward GEMM; element-wise
  // gradients read the saved input and the incoming gradient and write one (about 2x).
  out.linear_backward_s = 2 * linear;
  out.attention_backward_s = attention_bwd + 2 * elementwise_s(softmax_bytes, d);
  out.backward_s = 2 * linear + attention_bwd + 2 * elementwise_fwd + quantize_bwd_s +
                   2 * d.cal.layer_overhead_s / 3;
  out.weight_grad_s = linear;  // the wgrad GEMMs; the dgrad GEMMs and the rest are B
  switch (p.recompute) {
    case Recompute::none: break;
    // Selective recompute replays each module of plan.recompute_modules forward: the attention
    // core (Korthikanti et al., sec. 4.2), the norms, MLA's up-projections, the dense MLP, the
    // MoE block's experts (its token exchange is not re-priced), their activation function, the
    // shared experts.
    case Recompute::selective: {
      const detail::RecomputeSet recomputes(p);
      const bool shared = moe && m.moe.shared_experts > 0;
      double linear_rc = 0, elementwise_rc = 0;
      if (attends && recomputes.has("core_attn")) out.attention_recompute_s = out.attention_forward_s;
      if (recomputes.has("layernorm")) elementwise_rc += sp_tokens * h * norms * 2 * a;
      if (recomputes.has("mla_up_proj")) linear_rc += att.up_proj_s;
      if (ffn && !moe && recomputes.has("mlp")) {
        linear_rc += g.fc1_s + g.fc2_s;
        elementwise_rc += act_bytes;
      }
      if (moe && recomputes.has("moe")) {
        linear_rc += g.experts_s + (shared ? g.fc1_s + g.fc2_s : 0);
        elementwise_rc += mlp_bytes;
      } else if (moe) {
        if (recomputes.has("moe_act")) elementwise_rc += experts_act_bytes;
        if (shared && recomputes.has("shared_experts")) {
          linear_rc += g.fc1_s + g.fc2_s;
          elementwise_rc += act_bytes;
        }
      }
      out.linear_recompute_s = linear_rc;
      out.recompute_s = out.attention_recompute_s + linear_rc + elementwise_s(elementwise_rc, d);
      break;
    }
    case Recompute::full: {
      const double share = full_recompute_share(m, p);
      out.recompute_s = share * out.forward_s;
      out.linear_recompute_s = share * out.linear_forward_s;
      out.attention_recompute_s = share * out.attention_forward_s;
      break;
    }
  }
  return out;
}

LayerKernels layer_kernels(const ModelSpec& m, const Plan& p, LayerKind kind) {
  const bool fused = p.execution.kernels == Kernels::fused;
  const bool gated = ffn_matrices(m.ffn_type) == 3;
  const bool moe = kind.moe && m.moe.enabled();
  const bool hybrid = kind.block != Block::transformer;
  // Forward: norm, QKV GEMM, RoPE, attention, proj GEMM, bias-dropout-add, norm, fc1 GEMM,
  // activation, fc2 GEMM, bias-dropout-add (Megatron-Core's TransformerLayer with TE modules).
  // A hybrid layer's block: the attention's six or the MLP's five of these; a Mamba mixer's
  // norm, in_proj, conv1d, the SSD's five Triton kernels (mamba_chunk_scan_combined: chunk
  // cumsum, chunk state, state passing, BMM, chunk scan), gated norm, out_proj, residual add.
  // Eager hybrids are not told apart: their blocks count as fused.
  // A Gated DeltaNet mixer: norm, in_proj, conv1d, the chunked rule's kernels (flash-linear-
  // attention's chunk_gated_delta_rule: the decay's cumsum, the l2 norms of q and k, K K^T, the
  // triangular solve, the WY recompute, the chunk states, the output), gated norm, out_proj,
  // residual add.
  double forward = 11;
  if (hybrid)
    forward = kind.block == Block::mamba       ? 11
              : kind.block == Block::gdn       ? 13
              : kind.block == Block::attention ? 6
                                               : 5;
  // Eager PyTorch (Hugging Face-style modules): the norms in 1 (LayerNorm) or 6 (RMSNorm: pow,
  // mean, add, rsqrt, mul, mul) kernels each, RoPE in ~10 (slice, neg, cat, mul, add for Q and
  // K), head reshapes (3 copies), dropout and residual add apart, a gated MLP's two input GEMMs
  // and the gate product.
  if (!fused && !hybrid)
    forward = 2 * (m.norm == Norm::rmsnorm ? 6 : 1) + 1 + 3 +
              (m.position == Position::rope ? 10 : 0) + 1 + 1 + 2 + 2 + (gated ? 2 : 1) +
              (gated ? 2 : 1) + 1;
  // MLA: four projections and two latent norms where GQA has one QKV GEMM.
  const bool attends = kind.block == Block::transformer || kind.block == Block::attention;
  if (m.mla() && attends) forward += (m.attention.q_lora_rank > 0 ? 5 : 3);
  const double local_experts = moe ? static_cast<double>(m.moe.experts) / p.ep : 0;
  if (moe) {
    // The MLP's three kernels become the router and the dispatcher's metadata, the token
    // exchange, the experts and the combine. The router and what precedes the dispatch are
    // counted as Megatron-Core's DeepSeek-V3 profile on GB200 counts them (Megatron-LM
    // docs/discussions/deepseek-v3-gb200-optimization, sec. 2.1.4 and 2.2, at eb0783b6d): the
    // router with --moe-router-fusion 31 kernels (72 without), the router and DeepEP's fused
    // preprocess together 17. The all-to-all dispatcher's preprocess
    // (MoEAlltoAllTokenDispatcher.preprocess, token_dispatcher.py at d98e8a64) adds 9: the
    // per-expert count, its cast, the per-rank sum, the count all-gather, the local experts'
    // slice, three sums and the counts' D2H copy; then permute, the token and probability
    // all-to-alls, the sort by local expert and back (sort_chunks_by_idxs, fused), the
    // activation, the combine all-to-all and unpermute. Flex: its dispatch, the permute by local
    // expert after it and the unpermute before the combine (the profile, sec. 2.1.1: the global
    // permute is fused into the exchange, the local one is not), the activation, its combine. The grouped GEMMs: Transformer Engine's
    // GroupedLinear issues one cuBLAS GEMM per local expert (general_grouped_gemm's loop over
    // the m_splits), fc1 and fc2. The shared experts keep an MLP's three; a latent MoE adds its
    // two projections.
    const bool flex = p.moe_dispatcher == MoeDispatcher::flex;
    const double around = flex ? 17 + 5 : 31 + 9 + 8;
    forward += -3 + around + 2 * local_experts + (m.moe.shared_experts > 0 ? 3 : 0) +
               (m.moe.latent_size > 0 ? 2 : 0);
  }
  if (!p.flash_attention && attends) forward += 3;  // two batched GEMMs, softmax, dropout
  if (low_precision(p.precision)) forward += hybrid ? 2 : 4;  // quantize each GEMM input
  // The backward runs a data- and a weight-gradient GEMM per forward GEMM and the gradient of
  // every element-wise kernel: about twice the forward's kernels.
  double backward = 2 * forward;
  if (p.tp > 1) {
    const bool sp = p.sequence_parallel;
    const double blocks = hybrid ? 1 : 2;  // collectives per TP-split block:
    forward += blocks * (sp ? 2 : 1);    // all-gather + reduce-scatter, or an all-reduce
    backward += blocks * (sp ? 3 : 1);
  }
  // The weight-gradient GEMMs: one for each forward GEMM with weights (unfused attention's two
  // batched GEMMs have none). An attention block's QKV and output projections (MLA's down and
  // up projections of Q, if it has a Q LoRA, and of K/V in place of the QKV); an MLP's fc1 and
  // fc2 (an eager gated MLP's gate and up GEMMs apart), or a MoE layer's router, fc1 and fc2 per
  // local expert (GroupedLinear's loop, above) and its shared experts' MLP; a Mamba or Gated
  // DeltaNet mixer's in and out projections.
  const bool has_mlp = kind.block == Block::transformer || kind.block == Block::mlp;
  double weight_gemms = 0;
  if (attends) weight_gemms += 2 + (m.mla() ? (m.attention.q_lora_rank > 0 ? 3 : 2) : 0);
  if (kind.block == Block::mamba || kind.block == Block::gdn) weight_gemms += 2;
  const double mlp_gemms = !fused && !hybrid && gated ? 3 : 2;
  if (has_mlp)
    weight_gemms += moe ? 1 + 2 * local_experts + (m.moe.shared_experts > 0 ? mlp_gemms : 0) +
                              (m.moe.latent_size > 0 ? 2 : 0)  // the latent projections
                        : mlp_gemms;
  LayerKernels k{forward, backward, 0, weight_gemms};
  if (p.recompute == Recompute::full) k.recompute = full_recompute_share(m, p) * forward;
  if (p.recompute == Recompute::selective) k.recompute = p.flash_attention ? 1 : 4;
  return k;
}

LossTraffic cross_entropy_bytes_per_logit(CrossEntropyFusion fusion, Precision precision) {
  const double a = activation_bytes(precision);  // the logits' dtype (the output layer's)
  const double cast = a < 4 ? a + 4 : 0;         // .float(): read them, write fp32 (or nothing)
  switch (fusion) {
    case CrossEntropyFusion::none:
      // Megatron's vocab_parallel_cross_entropy, eager (megatron/core/tensor_parallel/
      // cross_entropy.py at NVIDIA/Megatron-LM d98e8a64; megatron/mpu/cross_entropy.py of
      // Megatron-LM 2.x runs the same passes on logits it casts first). Forward, one kernel a
      // line: `.float()`, torch.max (read 4), the in-place subtraction of the max (read 4, write
      // 4), torch.exp(out=) (8), .sum (read 4), exp_logits.div_ (8), saved as the softmax.
      // Backward: grad_input.mul_(grad_output) in place (8) and autograd's cast of that fp32
      // gradient back to the logits' dtype (read 4, write a). The index updates touch one logit
      // a token: not counted.
      return {cast + 4 + 8 + 8 + 4 + 8, 8 + cast};
    case CrossEntropyFusion::native:
      // The same steps under Megatron's jit_fuser (megatron/core/fusions/
      // fused_cross_entropy.py at d98e8a64), one kernel a fused function: the cast with the max
      // (read a, write 4), subtract-exp-sum (read 4, write 4), the division (8); backward the
      // multiply and `.to(torch.bfloat16)` together (read 4, write 2).
      return {cast + 8 + 8, 4 + 2};
    case CrossEntropyFusion::te:
      // Transformer Engine's Triton kernels (transformer_engine/pytorch/triton/
      // cross_entropy.py at NVIDIA/TransformerEngine 42b84005, release_v2.15, as memory.cpp
      // keeps it): online_softmax_kernel reads the logits once, cross_entropy_kernel reads them
      // again and writes the gradient over them; backward, element_mul_kernel scales it in place
      // (Megatron's per-token loss gives a grad_output that is not the scalar 1.0 it skips).
      return {3 * a, 2 * a};
  }
  return {};
}

HeadCompute head_compute(const ModelSpec& m, const Plan& p, const Device& d) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  const double v = static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
  const double h = static_cast<double>(m.hidden);
  HeadCompute out;
  // The output layer is Megatron's own ColumnParallelLinear, not a Transformer Engine module:
  // it runs in 16 bits whatever the transformer layers use.
  const double logits = gemm_time_s(tokens, v, h, 2, d.sixteen_bit());
  // The loss over this GPU's vocabulary slice, each of its passes over the logits at memory
  // bandwidth, as the software's loss kernels run them (cross_entropy_bytes_per_logit).
  const LossTraffic ce = cross_entropy_bytes_per_logit(p.cross_entropy_fusion, p.precision);
  out.forward_s = logits + elementwise_s(tokens * v * ce.forward, d);
  out.backward_s = 2 * logits + elementwise_s(tokens * v * ce.backward, d);
  out.weight_grad_s = logits;  // the output layer's wgrad GEMM
  return out;
}

HeadCompute embedding_compute(const ModelSpec& m, const Plan& p, const Device& d) {
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  const double bytes = tokens * m.hidden * activation_bytes(p.precision);
  HeadCompute out;
  out.forward_s = elementwise_s(2 * bytes, d);  // gather rows, add positions, dropout
  // The backward writes a gradient of the whole table, however few of its rows the tokens touch:
  // PyTorch's embedding backward allocates it with at::zeros({num_weights, hidden}) in the
  // weights' dtype before it scatters the tokens' gradients into it (both paths of
  // embedding_dense_backward_cuda, aten/src/ATen/native/cuda/Embedding.cu and
  // EmbeddingBackwardKernel.cu; Megatron's VocabParallelEmbedding calls F.embedding). Outside
  // ZeRO-3/FSDP, which reduce-scatter that gradient as it is, the software then adds it into the
  // gradient buffer its DP reduction reads (Megatron's DDP hook: param.main_grad.add_(param.grad)
  // in megatron/core/distributed/distributed_data_parallel.py at NVIDIA/Megatron-LM d98e8a64; an
  // fp32 buffer under grad_reduce_in_fp32): read both, write the buffer. Each micro-batch, over
  // this GPU's vocabulary slice.
  const double a = activation_bytes(p.precision);
  const double rows = static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
  const double buffer = p.grad_reduce_in_fp32 ? 4 : a;
  const double table = rows * static_cast<double>(m.hidden) *
                       (a + (p.effective_zero_stage() >= 3 ? 0 : a + 2 * buffer));
  out.backward_s = elementwise_s(4 * bytes + table, d);  // the tokens' scatter-add, the table
  out.weight_grad_s = out.backward_s;  // the table's gradient is all it computes: no input
  return out;
}

double optimizer_step_s(double parameters, const Plan& p, const Device& d) {
  // Adam over fp32 state: read param, grad, m, v (16 B), write param, m, v (12 B), write the
  // 16-bit model copy (2 B). fp32 training has no separate copy. Moments in bf16 read and write
  // 2 B each instead of 4 (8 B less). A master kept as remainders reads and writes the 16-bit
  // weight with its 2-byte remainder, which is that copy's write (2 B less); with no master the
  // optimizer reads and writes the 16-bit weight alone (6 B less).
  const double master_saving = p.precision == Precision::fp32                     ? 0
                               : p.master_weights == MasterWeights::remainders ? 2
                               : p.master_weights == MasterWeights::none       ? 6
                                                                                : 0;
  const double bytes_per_param =
      (p.precision == Precision::fp32 ? 28 : 30) - (p.bf16_moments ? 8 : 0) - master_saving;
  return elementwise_s(parameters * bytes_per_param, d);
}

}  // namespace stepcast
