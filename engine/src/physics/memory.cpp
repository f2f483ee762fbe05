#include "stepcast/memory.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "stepcast/compute.h"
#include "stepcast/optimizer.h"
#include "physics/recompute_set.h"

namespace stepcast {

double layer_activation_bytes(const ModelSpec& m, const Plan& p, bool moe) {
  return layer_activation_bytes(m, p, LayerKind{moe, false});
}

namespace {

// Whether the GPU's fp8 GEMMs take their operands in any layout, not only TN: Blackwell's
// (compute capability 10.x, Transformer Engine's is_non_tn_fp8_gemm_supported).
bool fp8_gemms_any_layout(const GpuSpec& gpu) { return gpu.arch.starts_with("blackwell"); }

// The fine-grained offloading group (kOffloadModules) whose saved tensors a part of a layer's
// activations is, as Megatron-Core's TE layer spec wraps its modules (megatron/core/models/gpt/
// gpt_layer_specs.py, transformer/attention.py and moe/experts.py at NVIDIA/Megatron-LM
// d98e8a64): `qkv_linear` holds linear_qkv's saved tensors, the first norm's input with them
// (TELayerNormColumnParallelLinear fuses the norm: input_layernorm is IdentityOp) or, under
// multi-latent attention, the down- and latent projections' (its input_layernorm is a TENorm of
// its own, `attn_norm`); `core_attn` the core attention's Q, K, V, its softmax statistics and its
// output (freed once the projection has quantized it); `attn_proj` the projection's input (at 16
// bits that same output, freed with it: forced_released_tensors=[core_attn_out]); `mlp_norm`
// the pre-MLP norm's input of an MoE layer (a dense layer fuses it into linear_fc1); `expert_fc1`
// the experts' fc1 input (the permuted tokens), `moe_act` the activation's input.
enum class Part { kept, attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, moe_act };

// A layer's activation bytes by part: f(part, bytes) for each term.
template <class F>
void layer_activation_parts(const ModelSpec& m, const Plan& p, const LayerKind& kind, F put) {
  const bool moe = kind.moe;
  // A transformer layer is attention and an MLP; a hybrid layer one block (or a Mamba mixer).
  const bool attends = kind.block == Block::transformer || kind.block == Block::attention;
  const bool ffn = kind.block == Block::transformer || kind.block == Block::mlp;
  const double blocks = kind.block == Block::transformer ? 2 : 1;  // norms, dropout masks
  const double t = p.tp;
  const double s = static_cast<double>(m.seq_len) / p.cp;  // this GPU's share of the sequence
  const double b = static_cast<double>(p.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double q = static_cast<double>(m.q_dim());
  const double a = activation_bytes(p.precision);
  // Below 16 bits Transformer Engine's Linear and LayerNormLinear save their GEMM input for the
  // weight-gradient GEMM quantized, one copy (only the column-wise data, or the row-wise where
  // sequence parallelism gathers it again in the backward), not the bf16 tensor: module/linear.py
  // and module/layernorm_linear.py "Discard unneeded data in input tensor" (NVIDIA/
  // TransformerEngine d0067d0d). gemm_element_bytes counts the block scales of mxfp8 and nvfp4.
  const double g = low_precision(p.precision) ? gemm_element_bytes(p.precision) : a;
  // A dropout mask, 1 byte per element, only where plan.hidden_dropout drops anything.
  const double mask = p.hidden_dropout > 0 ? 1.0 : 0.0;
  const double sbh = s * b * h;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const double replicated = sp ? 1.0 / t : 1.0;  // tensors TP leaves whole unless SP splits them
  const double gated = ffn_matrices(m.ffn_type) - 1;
  // The attention output: the fused attention keeps it (bf16) for its backward, and the output
  // projection its input, the same tensor at 16 bits, a quantized copy below.
  const double out_copies = a + (low_precision(p.precision) ? g : 0);
  // Under core_attn recompute the checkpointed attention keeps its inputs outside any offload
  // group (attention.py bypasses the core_attn offload there).
  const Part core_attn = p.recomputes("core_attn") ? Part::kept : Part::core_attn;
  // The attention output, `elements` of it: below 16 bits core attention's bf16 copy (core_attn)
  // and the projection's quantized input (attn_proj); at 16 bits one tensor both keep, freed
  // only with attn_proj (which Megatron-Core admits only beside core_attn).
  auto attention_output = [&](double elements) {
    if (low_precision(p.precision)) {
      put(core_attn, a * elements);
      put(Part::attn_proj, g * elements);
    } else {
      put(Part::attn_proj, out_copies * elements);
    }
  };

  if (p.recompute == Recompute::full) {  // only each layer's input is kept (checkpoint)
    put(Part::kept, a * sbh * replicated);
    return;
  }
  // Selective recompute's modules (plan.recompute_modules): each keeps its input and drops what
  // it would save inside, replayed in the backward (compute.cpp prices the replay).
  const detail::RecomputeSet recomputes(p);
  const bool norms = recomputes.has("layernorm"), up_proj = recomputes.has("mla_up_proj");

  // Korthikanti et al. eq. 2 terms, in units of bytes (a = bytes per activation element):
  // the norms' inputs: the attention's, then the MLP's.
  const bool moe_ffn = ffn && moe && m.moe.enabled();
  if (attends) put(m.mla() ? Part::attn_norm : Part::qkv_linear, replicated * a * sbh);
  if (ffn) put(moe_ffn ? Part::mlp_norm : Part::kept, replicated * a * sbh);
  if (!attends && !ffn) put(Part::kept, replicated * (blocks * a * sbh));
  double bytes = 0;  // the parts no offload group holds, put at the end
  if (kind.block == Block::mamba) {
    // Megatron-Core's MambaMixer keeps in_proj's input (the norm's output) and output (z, x,
    // B, C, dt), the conv's output (x, B, C), the scan's output y and the gated norm's output
    // (out_proj's input), over this GPU's heads and groups; the residual's dropout mask.
    const double inner = static_cast<double>(m.mamba_inner()) / t;
    const double conv = static_cast<double>(m.mamba_conv_dim()) / t;
    if (!norms) bytes += replicated * (a * sbh);
    bytes += a * s * b * (inner + conv + static_cast<double>(m.mamba_heads()) / t);
    bytes += a * s * b * (conv + 2 * inner);
    put(Part::kept, bytes + replicated * mask * sbh);
    return;
  }
  if (kind.block == Block::gdn) {
    // Megatron-Core's GatedDeltaNet keeps in_proj's input and output (q, k, v, z, b, a), the
    // conv's output (q, k, v), the chunked rule's output and the gated norm's output (out_proj's
    // input), over this GPU's heads. The chunked kernel (flash-linear-attention's
    // ChunkGatedDeltaRuleFunction, fla/ops/gated_delta_rule/chunk.py) saves besides q, k, v its
    // decay cumsum g (fp32) and b per value head, and A, each value head's 64 x 64 chunk-local
    // matrix (64 per token); the chunks' states it recomputes in the backward, none kept.
    const double nv = static_cast<double>(m.gdn.value_heads) / t;
    const double v = static_cast<double>(m.gdn_value_dim()) / t;
    const double conv = static_cast<double>(m.gdn_conv_dim()) / t;
    if (!norms) bytes += replicated * (a * sbh);
    bytes += a * s * b * (static_cast<double>(2 * m.gdn_key_dim()) / t + 2 * v + 2 * nv);
    bytes += a * s * b * (conv + 2 * v + 64 * nv) + (4 + a) * s * b * nv;
    put(Part::kept, bytes + replicated * mask * sbh);
    return;
  }
  if (!norms && attends) put(Part::qkv_linear, replicated * (g * sbh));  // QKV input
  if (!attends) {
    // (an MLP or MoE layer of a hybrid model: no attention)
  } else if (m.mla()) {
    // The latents' norms' inputs and the up-projections' inputs (their outputs), every head's
    // query, key and value, and the attention output.
    const AttentionSpec& A = m.attention;
    const double n = static_cast<double>(m.heads);
    const double latents = static_cast<double>(A.q_lora_rank + A.kv_lora_rank + A.qk_rope_head_dim);
    put(Part::qkv_linear, (a + g) * s * b * latents);
    if (!up_proj)
      put(core_attn, a * s * b * n * static_cast<double>(2 * (A.qk_head_dim + A.qk_rope_head_dim) + A.v_head_dim) / t);
    attention_output(s * b * n * static_cast<double>(A.v_head_dim) / t);
  } else {
    put(core_attn, a * s * b * (q + 2 * kv) / t);  // Q, K, V
    // The output gate's input (the QKV projection's output) and the gated output.
    if (m.attention.output_gate) bytes += 2 * a * s * b * q / t;
    attention_output(s * b * q / t);  // attention output (and the projection's input)
  }
  if (attends) bytes += replicated * mask * sbh;  // the projection's dropout mask
  if (!norms && ffn) bytes += replicated * (g * sbh);  // fc1 input (second norm's output)
  // An MLP's activation input(s), bf16, and output (fc2's input, as a GEMM input); `act`
  // replays the activation function, so keeps only its input(s).
  auto mlp = [&](double f, double rows, bool act = false) {
    return a * rows * f * gated + (act ? 0 : g * rows * f);
  };
  if (!ffn) {
    // (an attention layer of a hybrid model: no MLP)
  } else if (moe && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    const double shard = s * b / t;  // the layer's sequence-parallel tokens
    const double routed = static_cast<double>(e.experts) / p.ep * expert_rows(m, p);
    const double fe = static_cast<double>(e.ffn_hidden) / p.etp;
    const double dt = static_cast<double>(m.moe_token_dim());  // latent-wide in a latent MoE
    if (!recomputes.has("moe")) {  // `moe` replays the whole MoE block from its input
      bytes += 4 * shard * static_cast<double>(e.experts);   // router probabilities (fp32)
      put(Part::expert_fc1, g * routed * dt);  // permuted tokens (the experts' fc1 input)
      // The experts' outputs, where the combine scales them by the router's probabilities and
      // keeps them for the probabilities' gradient. Megatron-Core scales the activation instead
      // (TEGroupedMLP's weighted_bias_swiglu_impl; the dispatchers' unpermute takes no probs:
      // megatron/core/transformer/moe/experts.py and token_dispatcher.py at NVIDIA/Megatron-LM
      // core_v0.13.0 and d98e8a64), its combine keeping nothing.
      if (!p.execution.moe_probs_in_activation) bytes += a * routed * dt;
      // A latent MoE's fc2_latent_proj keeps its input, the combined latent tokens (its
      // fc1_latent_proj reads the norm's output, which the router keeps already).
      bytes += g * shard * static_cast<double>(e.latent_size);
      // The experts' intermediates: the activation's input(s), fc2's input unless replayed.
      put(Part::moe_act, a * routed * fe * gated);
      if (!recomputes.has("moe_act")) bytes += g * routed * fe;
      if (e.shared_experts > 0 && !recomputes.has("shared_experts"))
        bytes += mlp(static_cast<double>(e.shared_experts * e.shared_ffn_hidden) / t, s * b);
    }
  } else if (!recomputes.has("mlp")) {
    bytes += mlp(static_cast<double>(m.ffn_hidden) / t, s * b);
  }
  if (ffn) bytes += replicated * mask * sbh;      // MLP dropout mask
  put(Part::kept, bytes);
  if (!attends) return;
  const double heads = static_cast<double>(m.heads) / t;
  const bool stores_scores = !p.flash_attention && !recomputes.has("core_attn");
  if (stores_scores)  // softmax output, its dropout mask and output: 5 a-ish bytes per score
    put(core_attn, (2 * a + 1) * heads * s * static_cast<double>(m.seq_len) * b);
  else if (p.flash_attention)  // fused attention keeps the fp32 log-sum-exp per row
    put(core_attn, 4 * heads * s * b);
}

constexpr std::array<std::string_view, 8> kPartNames = {
    "", "attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act"};

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const Plan& p, const LayerKind& kind) {
  double bytes = 0;
  layer_activation_parts(m, p, kind, [&](Part, double b) { bytes += b; });
  return bytes;
}

namespace {

// The parts plan.offload_modules names, its text read once: read per part and layer kind, the
// list's parsing was a tenth of a search's instructions (the fixes try every module offloaded).
using OffloadedParts = std::array<bool, kPartNames.size()>;
OffloadedParts offloaded_parts(const Plan& p) {
  OffloadedParts out{};
  for_each_recompute_module(p.offload_modules, [&](std::string_view name) {
    for (size_t i = 1; i < kPartNames.size(); ++i)
      if (name == kPartNames[i]) {  // (the names differ: the first match is the only one)
        out[i] = true;
        break;
      }
  });
  return out;
}

double offloaded_bytes(const ModelSpec& m, const Plan& p, const LayerKind& kind,
                       const OffloadedParts& parts) {
  double bytes = 0;
  layer_activation_parts(m, p, kind, [&](Part part, double b) {
    if (parts[static_cast<size_t>(part)]) bytes += b;  // (parts[kept] is false)
  });
  return bytes;
}

}  // namespace

double layer_offloaded_bytes(const ModelSpec& m, const Plan& p, const LayerKind& kind) {
  if (p.offload_modules.empty()) return 0;
  return offloaded_bytes(m, p, kind, offloaded_parts(p));
}

StageOffload stage_offloaded_modules(const ModelSpec& m, const Plan& p, const StageShape& st) {
  StageOffload o;
  if (p.offload_modules.empty()) return o;
  const OffloadedParts parts = offloaded_parts(p);
  auto add = [&](const LayerKind& kind, int64_t layers) {
    if (layers <= 0) return;
    const double bytes = offloaded_bytes(m, p, kind, parts);
    o.per_micro_batch += bytes * static_cast<double>(layers);
    o.largest_layer = std::max(o.largest_layer, bytes);
  };
  if (!m.hybrid()) {
    add(LayerKind{false, false}, st.layers - st.moe_layers);
    add(LayerKind{true, false}, st.moe_layers);
  } else {
    add(LayerKind{false, false, Block::mamba}, st.mamba_layers);
    add(LayerKind{false, false, Block::attention}, st.attention_layers);
    add(LayerKind{false, false, Block::mlp}, st.mlp_layers);
    add(LayerKind{false, false, Block::gdn}, st.gdn_layers);
    add(LayerKind{true, false, Block::mlp}, st.moe_layers);
  }
  return o;
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
  // Per-tensor fp8 on Blackwell keeps one: its GEMMs take fp8 operands in any layout, so
  // Transformer Engine's Float8Tensor holds no transpose there (transformer_engine/pytorch/
  // csrc/quantizer.cpp Float8Quantizer::create_tensor, with_transpose = columnwise_usage &&
  // !is_non_tn_fp8_gemm_supported, true for compute capability 10.x: utils.py, at
  // NVIDIA/TransformerEngine 42b84005, release_v2.15). MXFP8 and NVFP4 scale along rows and
  // columns apart, so keep both.
  const double e = gemm_element_bytes(p.precision);
  const double copies = p.precision == Precision::fp8 && fp8_gemms_any_layout(gpu) ? 1 : 2;
  const double weight_bytes = p.precision == Precision::fp32 ? 4
                              : !low_precision(p.precision) ? 2
                              : p.fp8_param_gather          ? copies * e
                                                            : 2 + copies * e;
  const double grad_bytes =
      p.precision == Precision::fp32 || (p.precision != Precision::fp16 && p.grad_reduce_in_fp32)
          ? 4
          : 2;
  // fp32 master weights (none needed when training in fp32), and the optimizer's state: Adam's
  // two moments, fp32 or bf16; Muon's one momentum per matrix element, fp32 (zeros_like of the
  // fp32 main gradient: Emerging-Optimizers' orthogonalized_optimizer.py), with Adam's for the
  // parameters Muon leaves to it; SGD's momentum buffer; Adafactor's second moment (optimizer.h).
  const double master = master_bytes_per_parameter(p);
  const double adam_bytes = master + 2 * (p.bf16_moments ? 2 : 4);
  const double muon_bytes = master + 4;
  const MuonParameters muon = p.optimizer == Optimizer::muon
                                  ? muon_parameters(muon_matrices(m, p, st))
                                  : MuonParameters{};

  // Expert parameters are sharded by the optimizer over the expert data-parallel group; under
  // Muon the layer-wise optimizer shards its matrices over the same groups as the distributed
  // optimizer does Adam's share (layer_wise_optimizer.py compute_full_param_layout).
  const double dense = params - st.expert_parameters, experts = st.expert_parameters;
  const double edp = std::max(1, p.edp());
  const double dense_state = (dense - muon.dense) * adam_bytes + muon.dense * muon_bytes;
  const double expert_state = (experts - muon.expert) * adam_bytes + muon.expert * muon_bytes;
  // ZeRO-3 shards the routed experts' weights over the expert data-parallel group, as their
  // gradients and optimizer state below (census.cpp gathers them over it).
  mem.weights = zero >= 3 ? dense * weight_bytes / dp + experts * weight_bytes / edp
                          : params * weight_bytes;
  // The gathered layer being computed and those prefetched (plan.zero3_prefetch) under per-layer
  // gathers; DeepSpeed's sub-module gathers keep two layers' worth (its live-parameter limit,
  // stage3_max_live_parameters, is not modelled).
  if (zero >= 3) {
    const double gathered =
        p.execution.zero3_fetch == Zero3Fetch::layer ? 1.0 + p.zero3_prefetch : 2.0;
    mem.weights +=
        gathered * std::max(st.layer_parameters, st.moe_layer_parameters) * weight_bytes;
  }
  mem.gradients = zero >= 2 ? dense * grad_bytes / dp + experts * grad_bytes / edp
                            : params * grad_bytes;
  if (p.optimizer == Optimizer::muon) {
    mem.optimizer = zero >= 1 ? dense_state / dp + expert_state / edp : dense_state + expert_state;
  } else if (p.optimizer == Optimizer::adafactor && zero < 1) {
    // Whole tensors: each matrix's factored row and column means (optimizer.h).
    mem.optimizer = params * master + 4 * adafactor_state(m, p, st).second_moment;
  } else {
    // Adam, SGD, and Adafactor on flat ZeRO/FSDP shards: so many bytes a parameter.
    const double bytes = state_bytes_per_parameter(p);
    const double stepped = zero >= 1 ? dense / dp + experts / edp : params;
    mem.optimizer = stepped * bytes;
    // Optimizer offloading (offload.h): the offloaded share's fp32 masters and state leave the
    // GPU; the host holds an fp32 copy of each parameter (the master, or under fp32 training the
    // parameter's own copy), the state, and a pinned fp32 gradient (HybridDeviceOptimizer
    // _get_sub_optimizer_param_groups, _set_sub_optimizer_grads). The rules keep it to Adam and
    // SGD with fp32 moments.
    if (const double f = p.optimizer_offloaded_share(); f > 0) {
      mem.optimizer = (1 - f) * stepped * bytes;
      mem.optimizer_offloaded = f * stepped * (bytes - master + 4 + 4);
    }
  }

  const double in_flight = st.in_flight;
  const double moe_layers = static_cast<double>(st.moe_layers);
  // The stage's layers, one micro-batch, under `plan`: dense and MoE ones, or a hybrid's blocks.
  auto stage_layers = [&](const Plan& plan) {
    if (!m.hybrid())
      return layer_activation_bytes(m, plan) * (static_cast<double>(st.layers) - moe_layers) +
             layer_activation_bytes(m, plan, true) * moe_layers;
    auto d = [](int64_t n) { return static_cast<double>(n); };
    return layer_activation_bytes(m, plan, LayerKind{false, false, Block::mamba}) *
               d(st.mamba_layers) +
           layer_activation_bytes(m, plan, LayerKind{false, false, Block::attention}) *
               d(st.attention_layers) +
           layer_activation_bytes(m, plan, LayerKind{false, false, Block::mlp}) * d(st.mlp_layers) +
           layer_activation_bytes(m, plan, LayerKind{false, false, Block::gdn}) * d(st.gdn_layers) +
           layer_activation_bytes(m, plan, LayerKind{true, false, Block::mlp}) * moe_layers;
  };
  const double one_micro_batch = stage_layers(p);
  double act = one_micro_batch * in_flight;
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  if (p.recompute == Recompute::full) {
    // Full recompute by method (plan.recompute_method, Megatron-Core's transformer_block.py
    // _checkpointed_forward): the layers' whole activations, their mean over the stage's kinds.
    Plan rerun = p;
    rerun.recompute = Recompute::none;
    const double layers = static_cast<double>(st.layers);
    const double whole = stage_layers(rerun) / std::max(1.0, layers);
    // What one re-materialised layer holds: an MoE layer's where the stage has one (a hybrid's
    // largest block).
    double replayed = layer_activation_bytes(m, rerun, st.moe_layers > 0);
    if (m.hybrid())
      for (const LayerKind& k : kLayerKinds)
        if (k.block != Block::transformer)
          replayed = std::max(replayed, layer_activation_bytes(m, rerun, k));
    const double input = layer_activation_bytes(m, p);  // a checkpoint: the layer's input
    const double n = static_cast<double>(p.recompute_num_layers);
    const double chunk = layers / p.vpp;  // layers of one model chunk
    if (p.recompute_method == RecomputeMethod::uniform) {
      // One input per group of n layers kept (groups counted over the stage; Megatron groups
      // each chunk's layers); one group re-materialised at a time.
      act = input * std::ceil(layers / n) * in_flight + replayed * std::min(n, chunk);
    } else {
      // The first n layers of each chunk checkpointed, the rest keep everything; one
      // checkpointed layer re-materialised at a time.
      const double checkpointed = std::min(n, chunk) * p.vpp;
      act = (input * checkpointed + whole * (layers - checkpointed)) * in_flight + replayed;
    }
  }
  // Activation offloading (offload.h): the offloaded layers' activations wait in host memory
  // between their forward and their backward. Megatron-Core runs it without a pipeline or
  // recompute (rules.cpp), so they are the stage's own first layers of each micro-batch in
  // flight, at the stage's mean per layer.
  if (const int64_t n = offloaded_layers(p, st); n > 0) {
    mem.offloaded = static_cast<double>(n) * one_micro_batch / static_cast<double>(st.layers) *
                    in_flight;
    act -= mem.offloaded;
  }
  // Fine-grained offloading (plan.offload_modules): every layer's listed modules' saved tensors
  // wait in host memory, for each micro-batch in flight, but the last group of each module name
  // (PipelineOffloadManager.post_warmup_callback, megatron/core/pipeline_parallel/
  // fine_grained_activation_offload.py at NVIDIA/Megatron-LM d98e8a64, keeps it on the GPU so
  // that its reload does not stall the backward that comes next): one layer's worth stays. The
  // MTP modules' layers keep theirs here.
  if (const StageOffload o = stage_offloaded_modules(m, p, st); o.per_micro_batch > 0) {
    const double moved = std::max(0.0, o.per_micro_batch * in_flight - o.largest_layer);
    mem.offloaded += moved;
    act -= moved;
  }
  if (st.mtp)  // the MTP modules' layers (like the last layer), for the micro-batches in flight
    for (const LayerKind& k : m.mtp_kinds())
      act += static_cast<double>(m.mtp_layers) * in_flight * layer_activation_bytes(m, p, k);
  // The loss's logits of one micro-batch over this GPU's vocabulary slice, as the loss kernel
  // keeps them for the backward (plan.cross_entropy_fusion): the fp32 softmax (Megatron-Core's
  // vocab_parallel_cross_entropy and its native fused kernel save exp_logits after .float():
  // tensor_parallel/cross_entropy.py, fusions/fused_cross_entropy.py at NVIDIA/Megatron-LM
  // d98e8a64), or under Transformer Engine's kernel the logits themselves, in their own 16-bit
  // dtype, the gradient written over them in place (transformer_engine/pytorch/triton/
  // cross_entropy.py cross_entropy_forward returns its input, which CrossEntropyFunction saves,
  // at NVIDIA/TransformerEngine 42b84005, release_v2.15; an fp32 gradient from 01bbe3ee, v2.18).
  // Megatron's own loss also makes, at the start of the backward (the last stage's peak, every
  // activation still held), the logits' 16-bit gradient beside the fp32 softmax it computed it
  // over in place (the profiles' loss_grad_copy: fusions/fused_cross_entropy.py
  // calculate_gradients casts it, the unfused loss's fp32 gradient is cast by autograd to the
  // logits' dtype); fp32 training makes no copy.
  if (st.last) {
    const bool te_loss = p.cross_entropy_fusion == CrossEntropyFusion::te;
    const double a = activation_bytes(p.precision);
    const double logit_bytes = te_loss ? a : 4 + (p.execution.loss_grad_copy && a < 4 ? 2 : 0);
    act += logit_bytes * tokens * static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
  }
  if (st.first)  // embedding output and its dropout mask for each micro-batch in flight
    act += in_flight * tokens * m.hidden *
           (activation_bytes(p.precision) + (p.hidden_dropout > 0 ? 1 : 0)) /
           (p.sequence_parallel ? p.tp : 1);
  mem.activations = act;

  const SoftwareBuffers buffers = software_buffers(m, p, st, one_micro_batch);
  mem.moe_dispatch = buffers.moe_dispatch;
  mem.ep_overlap = buffers.ep_overlap;
  mem.wgrad_dummies = buffers.wgrad_dummies;
  mem.allocated = mem.weights + mem.gradients + mem.optimizer + mem.activations +
                  mem.moe_dispatch + mem.ep_overlap + mem.wgrad_dummies;
  // PyTorch's CUDACachingAllocator (c10/cuda/CUDACachingAllocator.cpp at pytorch/pytorch
  // 001074d2) rounds every block up to 512 B, packs requests up to 1 MiB into 2 MiB segments and
  // rounds larger ones up to 2 MiB (requests of 1-10 MiB split 20 MiB segments); freed blocks
  // stay cached and split blocks fragment. That waste is a fraction of what is allocated
  // (calibration framework_memory_fraction): measured reserved runs 2.8-9.3 % above allocated,
  // median 5.3 %, in SimuMax's 19 B200 runs (tests/validation/memory-runs.csv).
  mem.allocator = cal.framework_memory_fraction * mem.allocated;
  // Outside the allocator: the buffers the software allocates itself, and the allowance for the
  // CUDA context and NCCL (framework_memory_bytes), of which the named NCCL buffers are part.
  mem.userbuffers = buffers.userbuffers;
  mem.deepep = buffers.deepep;
  mem.nccl = buffers.nccl;
  mem.other = std::max(0.0, cal.framework_memory_bytes - mem.nccl);
  mem.capacity = gpu.memory_bytes;
  mem.headroom = p.memory_headroom * gpu.memory_bytes;
  const double outside = mem.userbuffers + mem.deepep + mem.nccl + mem.other;
  // With expandable segments the allocator maps physical memory page by page under one virtual
  // range per stream and, before it reports out of memory, unmaps the pages its free blocks
  // hold (ExpandableSegment and release_cached_blocks in c10/cuda/CUDACachingAllocator.cpp at
  // pytorch/pytorch 001074d2): its cache only takes memory nothing else needs. Megatron-Bridge
  // sets it where the fixed segments' fragmentation ran out of memory ("expandable_segments lets
  // the allocator reclaim fragmented physical memory and avoids the OOM",
  // scripts/performance/perf_plugins.py at NVIDIA-NeMo/Megatron-Bridge 74695a06d). So the cache
  // is what the GPU has left, the headroom kept, up to its share. (tests/validation/
  // memory-runs.csv, MBSKILLMEM: Llama 3 70B SFT on 32 H100 ran out of memory from
  // fragmentation at 58.8 GB allocated of 80; with expandable segments it ran.)
  if (p.expandable_segments)
    mem.allocator = std::clamp(mem.capacity - mem.headroom - outside - mem.allocated, 0.0,
                               mem.allocator);
  mem.reserved = mem.allocated + mem.allocator;
  mem.total = mem.reserved + outside;
  return mem;
}

}  // namespace stepcast
