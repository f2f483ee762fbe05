#include "stepcast/model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace stepcast {

int ffn_matrices(FfnType type) {
  return (type == FfnType::swiglu || type == FfnType::geglu) ? 3 : 2;
}

int64_t padded_vocab(int64_t vocab, int tp) {
  const int64_t multiple = 128 * static_cast<int64_t>(tp);
  return (vocab + multiple - 1) / multiple * multiple;
}

LayerKind hybrid_kind(char symbol) {
  switch (symbol) {
    case 'M': return {false, false, Block::mamba};
    case '*': return {false, false, Block::attention};
    case 'E': return {true, false, Block::mlp};
    case 'G': return {false, false, Block::gdn};
    default: return {false, false, Block::mlp};  // '-'
  }
}

LayerKind ModelSpec::kind_of(int64_t i) const {
  if (hybrid())
    return i >= 0 && i < static_cast<int64_t>(layer_pattern.size())
               ? hybrid_kind(layer_pattern[static_cast<size_t>(i)])
               : LayerKind{false, false, Block::mlp};
  return {is_moe_layer(i), windowed_layer(i)};
}

std::vector<LayerKind> ModelSpec::mtp_kinds() const {
  if (mtp_pattern.empty()) return {kind_of(layers - 1)};
  std::vector<LayerKind> out;
  for (char c : mtp_pattern) out.push_back(hybrid_kind(c));
  return out;
}

bool ModelSpec::is_moe_layer(int64_t i) const {
  if (hybrid())  // an `E` routes its tokens to experts, whatever model.moe's layer keys say
    return i >= 0 && i < static_cast<int64_t>(layer_pattern.size()) &&
           layer_pattern[static_cast<size_t>(i)] == 'E';
  if (!moe.enabled() || i < moe.first_dense_layers) return false;
  if (!moe.layer_pattern.empty())
    return i < static_cast<int64_t>(moe.layer_pattern.size()) &&
           moe.layer_pattern[static_cast<size_t>(i)] != 0;
  return moe.layer_freq > 0 && i % moe.layer_freq == 0;
}

namespace {
// The multiples of f in [lo, hi), for 0 <= lo.
int64_t multiples(int64_t lo, int64_t hi, int64_t f) {
  return hi <= lo ? 0 : (hi + f - 1) / f - (lo + f - 1) / f;
}
}  // namespace

int64_t ModelSpec::moe_layers(int64_t first, int64_t count) const {
  const LayerCounts n = layer_counts(first, count);
  return n.moe + n.moe_windowed + n.moe_block;
}

ModelSpec::LayerCounts ModelSpec::layer_counts(int64_t first, int64_t count) const {
  LayerCounts n;
  const int64_t lo = std::max(first, int64_t{0}), hi = first + count;
  if (hi <= lo) return n;
  if (hybrid()) {  // a pattern is at most 100,000 characters: counted one by one
    for (int64_t i = lo; i < hi; ++i) ++n.of(kind_of(i));
    return n;
  }
  // Sliding windows on every layer, or on the even ones (GPT-OSS alternates, starting with one).
  const bool windows = attention.window > 0, alternate = attention.window_layers != WindowLayers::all;
  const int64_t windowed = !windows ? 0 : alternate ? multiples(lo, hi, 2) : hi - lo;
  int64_t moe_all = 0, moe_windowed = 0;
  if (moe.enabled() && !moe.layer_pattern.empty()) {
    for (int64_t i = lo; i < hi; ++i)
      if (is_moe_layer(i)) ++moe_all, moe_windowed += windowed_layer(i) ? 1 : 0;
  } else if (moe.enabled() && moe.layer_freq > 0) {
    // Every layer_freq-th layer from first_dense_layers on; the windowed ones among them are
    // the multiples of lcm(layer_freq, 2) when windows alternate.
    const int64_t from = std::max(lo, moe.first_dense_layers), f = moe.layer_freq;
    moe_all = multiples(from, hi, f);
    moe_windowed = !windows ? 0 : alternate ? multiples(from, hi, std::lcm(f, int64_t{2})) : moe_all;
  }
  n.moe = moe_all - moe_windowed;
  n.moe_windowed = moe_windowed;
  n.dense_windowed = windowed - moe_windowed;
  n.dense = (hi - lo) - windowed - n.moe;
  return n;
}

double ModelSpec::chunked_attention_share(double seq) const {
  const double c = static_cast<double>(attention.chunk);
  if (c <= 0 || seq <= c) return 1;
  // Megatron-Bridge's Llama4SelfAttention (src/megatron/bridge/models/llama/llama4_utils.py at
  // 067f987df, chunkify) pads the sequence to a whole number of chunks and runs each chunk as
  // its own causal sequence: ceil(s / c) causal c x c matrices for the s x s one. It does so on
  // every layer (the NoPE layers only skip RoPE), as this share assumes.
  return std::ceil(seq / c) * c * c / (seq * seq);
}

bool ModelSpec::windowed_layer(int64_t i) const {
  if (attention.window <= 0 || hybrid()) return false;  // a rule keeps windows off hybrids
  // GPT-OSS alternates sliding-window and full layers, starting with a windowed one.
  return attention.window_layers == WindowLayers::all || i % 2 == 0;
}

double attention_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  if (m.mla()) {
    const AttentionSpec& a = m.attention;
    const double n = static_cast<double>(m.heads);
    const double qk = static_cast<double>(a.qk_head_dim + a.qk_rope_head_dim);
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    // Queries: down-projection, its norm, up-projection (or one projection without q LoRA);
    // keys/values: a down-projection to the latent plus the shared rotary key, its norm, an
    // up-projection to every head's key and value; then the output projection.
    const double q = ql > 0 ? h * ql + ql + ql * n * qk : h * n * qk;
    const double kv = h * (kvl + static_cast<double>(a.qk_rope_head_dim)) + kvl +
                      kvl * n * static_cast<double>(a.qk_head_dim + a.v_head_dim);
    return q + kv + n * static_cast<double>(a.v_head_dim) * h;
  }
  // The output gate is one more query-wide output of the QKV projection.
  const double q = static_cast<double>(m.q_dim());
  const double kv = static_cast<double>(m.kv_dim());
  const double in = (m.attention.output_gate ? 2 * q : q) + 2 * kv;
  return h * in + (m.bias ? in : 0) + q * h + (m.bias ? h : 0);
}

double attention_replicated_parameters(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  if (m.mla()) {
    const AttentionSpec& a = m.attention;
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    return (ql > 0 ? h * ql + ql : 0) + h * (kvl + static_cast<double>(a.qk_rope_head_dim)) + kvl;
  }
  return m.bias ? h : 0;
}

double mlp_parameters(const ModelSpec& m, double f) {
  const double h = static_cast<double>(m.hidden);
  const double in = (ffn_matrices(m.ffn_type) - 1) * f;  // gated units have two input matrices
  return h * in + f * h + (m.bias ? in + h : 0);
}

double expert_parameters(const ModelSpec& m) {
  // A latent MoE's experts map latent -> ffn -> latent (megatron/core/transformer/moe/
  // experts.py at NVIDIA/Megatron-LM d98e8a64: fc1's input and fc2's output moe_latent_size).
  const double d = static_cast<double>(m.moe_token_dim());
  const double f = static_cast<double>(m.moe.ffn_hidden);
  const double in = (ffn_matrices(m.ffn_type) - 1) * f;
  return d * in + f * d + (m.bias ? in + d : 0);
}

double latent_projection_parameters(const ModelSpec& m) {
  // fc1_latent_proj (hidden -> latent) and fc2_latent_proj (latent -> hidden), with a bias each
  // under add_bias_linear (megatron/core/transformer/moe/moe_layer.py at d98e8a64).
  if (m.moe.latent_size <= 0) return 0;
  const double h = static_cast<double>(m.hidden), l = static_cast<double>(m.moe.latent_size);
  return 2 * h * l + (m.bias ? l + h : 0);
}

double mamba_parameters(const ModelSpec& m) {
  // Megatron-Core's MambaMixer: in_proj (hidden -> z, x, B, C, dt), conv1d over x, B, C with a
  // bias, dt_bias, A_log and D per head, the gated RMSNorm over d_inner, out_proj.
  const double h = static_cast<double>(m.hidden);
  const double inner = static_cast<double>(m.mamba_inner());
  const double heads = static_cast<double>(m.mamba_heads());
  const double conv = static_cast<double>(m.mamba_conv_dim());
  const double in = 2 * inner + 2 * static_cast<double>(m.mamba.groups * m.mamba.state_dim) + heads;
  return h * in + (m.bias ? in : 0) + conv * static_cast<double>(m.mamba.conv_kernel) + conv +
         3 * heads + inner + inner * h + (m.bias ? h : 0);
}

double gdn_parameters(const ModelSpec& m) {
  // transformers' Qwen3NextGatedDeltaNet (and Megatron-Core's GatedDeltaNet, the same tensors):
  // in_proj_qkvz and in_proj_ba (hidden -> q, k, v, z, b, a), conv1d over q, k, v without a
  // bias, dt_bias and A_log per value head, the gated RMSNorm's weight (value_head_dim, shared
  // by the heads), out_proj (v -> hidden) without a bias.
  const double h = static_cast<double>(m.hidden);
  const double k = static_cast<double>(m.gdn_key_dim()), v = static_cast<double>(m.gdn_value_dim());
  const double nv = static_cast<double>(m.gdn.value_heads);
  return h * (2 * k + 2 * v + 2 * nv) +
         static_cast<double>(m.gdn_conv_dim() * m.gdn.conv_kernel) + 2 * nv +
         static_cast<double>(m.gdn.value_head_dim) + v * h;
}

double layer_parameters(const ParameterCount& c, const LayerKind& kind) {
  switch (kind.block) {
    case Block::mamba: return c.mamba_layer;
    case Block::gdn: return c.gdn_layer;
    case Block::attention: return c.attention_layer;
    case Block::mlp: return kind.moe ? c.moe_layer : c.mlp_layer;
    case Block::transformer: break;
  }
  return kind.moe ? c.moe_layer : c.per_layer;
}

ParameterCount count_parameters(const ModelSpec& m, int64_t vocab, int64_t seq_len) {
  const double h = static_cast<double>(m.hidden);
  const double norm_params = (m.norm == Norm::layernorm ? 2.0 : 1.0) * h;
  const double attention = attention_parameters(m);

  ParameterCount p;
  p.per_layer = attention + mlp_parameters(m, static_cast<double>(m.ffn_hidden)) + 2 * norm_params;
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    p.routed_experts = static_cast<double>(e.experts) * expert_parameters(m);
    p.latent_projections = latent_projection_parameters(m);
    // The router's weights, plus the expert-bias vector of aux-loss-free balancing.
    const double router = h * static_cast<double>(e.experts) + static_cast<double>(e.experts);
    // Megatron builds the shared experts as one MLP as wide as all of them.
    const double shared =
        e.shared_experts > 0
            ? mlp_parameters(m, static_cast<double>(e.shared_experts * e.shared_ffn_hidden))
            : 0;
    const double block = router + p.latent_projections + p.routed_experts + shared;
    p.moe_layer = attention + block + 2 * norm_params;
    // A hybrid `E` is the MoE block alone, behind one norm.
    if (m.hybrid()) p.moe_layer = block + norm_params;
  }
  if (m.hybrid()) {  // each layer of a hybrid pattern is one block behind one norm
    p.mamba_layer = mamba_parameters(m) + norm_params;
    p.gdn_layer = gdn_parameters(m) + norm_params;
    p.attention_layer = attention + norm_params;
    p.mlp_layer = mlp_parameters(m, static_cast<double>(m.ffn_hidden)) + norm_params;
  }
  p.embedding = static_cast<double>(vocab) * h;
  p.position = m.position == Position::learned ? static_cast<double>(seq_len) * h : 0;
  p.output = m.tied_embeddings ? 0 : static_cast<double>(vocab) * h;
  p.final_norm = norm_params;
  // An MTP module: norms of the embedding and of the hidden state, their joint projection
  // (2h -> h), one transformer layer like the model's last (or a hybrid model's layers of
  // model.mtp_pattern), and a final norm; it shares the embedding and the output layer
  // (megatron/core/transformer/multi_token_prediction.py). Repeated modules hold one's.
  if (m.mtp_layers > 0) {
    const double modules = static_cast<double>(m.mtp_parameter_modules());
    double layers = 0, moe = 0;
    for (const LayerKind& k : m.mtp_kinds()) {
      layers += layer_parameters(p, k);
      moe += k.moe && m.moe.enabled() ? 1 : 0;
    }
    p.mtp = modules * (layers + 2 * h * h + 3 * norm_params);
    p.mtp_moe_layers = modules * moe;
  }
  const double moe_layers = static_cast<double>(m.moe_layers(0, m.layers));
  const double layers =
      m.hybrid() ? m.layer_counts(0, m.layers).sum([&](const LayerKind& k) {
        return layer_parameters(p, k);
      })
                 : p.per_layer * (static_cast<double>(m.layers) - moe_layers) +
                       p.moe_layer * moe_layers;
  p.total = layers + p.embedding + p.position + p.output + p.final_norm + p.mtp;
  return p;
}

LayerFlops layer_forward_flops(const ModelSpec& m, double b, double s, const LayerKind& kind) {
  const double h = static_cast<double>(m.hidden);
  const double tokens = b * s;
  const bool windowed = kind.windowed, moe_layer = kind.moe;
  // Keys each query is scored against (before any causal halving): the window, or the sequence.
  const double keys = windowed ? std::min(s, static_cast<double>(m.attention.window)) : s;
  LayerFlops out;
  if (kind.block == Block::mamba) {
    // Megatron-LM's mamba_layer_flops (megatron/training/training.py at 86df799dc4): in_proj
    // 2·t·h·(2·d_in + 2·G·N + heads), the scan 7·t·d_in·N, out_proj 2·t·d_in·h, here with d_in
    // the mixer's true width heads·head_dim (the work the GPU does; Megatron writes 2h, the same
    // for expand 2: model_flops_per_sample keeps its count); the depthwise conv,
    // 2·t·channels·kernel.
    const double inner = static_cast<double>(m.mamba_inner());
    const double n = static_cast<double>(m.mamba.state_dim);
    out.qkv = 2 * tokens * h *
              (2 * inner + 2 * static_cast<double>(m.mamba.groups) * n +
               static_cast<double>(m.mamba_heads()));
    out.scan = 7 * tokens * inner * n;
    out.conv = 2 * tokens * static_cast<double>(m.mamba_conv_dim() * m.mamba.conv_kernel);
    out.projection = 2 * tokens * inner * h;
    return out;
  }
  if (kind.block == Block::gdn) {
    // Megatron-LM's gdn_layer_flops (megatron/training/training.py at d98e8a64dd; Megatron-
    // Bridge's flop_utils.py since its PR #3029 counts the same): in_proj
    // 2·t·h·(2·k + 2·v + 2·value_heads), the conv 2·t·kernel·(2·k + v), the gated delta rule
    // 2·t·4·value_heads·d_k·d_v (K K^T, V K^T, the state update S·a(I - b K K^T) and S Q: four
    // multiply-adds per state element per token, as the chunked kernel's work is counted;
    // Megatron writes value_head_dim², equal for Qwen3-Next's 128 x 128 states), out_proj
    // 2·t·v·h.
    const double k = static_cast<double>(m.gdn_key_dim()), v = static_cast<double>(m.gdn_value_dim());
    const double nv = static_cast<double>(m.gdn.value_heads);
    out.qkv = 2 * tokens * h * (2 * k + 2 * v + 2 * nv);
    out.conv = 2 * tokens * static_cast<double>(m.gdn.conv_kernel) * (2 * k + v);
    out.scan = 2 * tokens * 4 * nv *
               static_cast<double>(m.gdn.key_head_dim * m.gdn.value_head_dim);
    out.projection = 2 * tokens * v * h;
    return out;
  }
  if (kind.block == Block::mlp) {
    // (the attention parts stay 0)
  } else if (m.mla()) {
    const AttentionSpec& a = m.attention;
    const double n = static_cast<double>(m.heads);
    const double qk = static_cast<double>(a.qk_head_dim + a.qk_rope_head_dim);
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    const double q = ql > 0 ? h * ql + ql * n * qk : h * n * qk;
    const double kv = h * (kvl + static_cast<double>(a.qk_rope_head_dim)) +
                      kvl * n * static_cast<double>(a.qk_head_dim + a.v_head_dim);
    out.qkv = 2 * tokens * (q + kv);
    out.attention = 2 * tokens * keys * n * (qk + static_cast<double>(a.v_head_dim));
    out.projection = 2 * tokens * n * static_cast<double>(a.v_head_dim) * h;
  } else {
    const double q = static_cast<double>(m.q_dim());
    const double kv = static_cast<double>(m.kv_dim());
    out.qkv = 2 * tokens * h * ((m.attention.output_gate ? 2 * q : q) + 2 * kv);
    out.attention = 4 * tokens * keys * q;  // 2 b s^2 q for Q K^T, the same for scores x V
    out.projection = 2 * tokens * q * h;
  }
  const double g = ffn_matrices(m.ffn_type);
  if (kind.block == Block::attention) {
    // (a hybrid attention layer has no MLP)
  } else if (moe_layer && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    // A capacity factor below 1 drops what exceeds each expert's capacity: under balanced
    // routing a share capacity_factor of the routed copies is computed (above 1 the experts are
    // padded with empty rows, no token's work).
    const double routed = static_cast<double>(e.top_k * e.ffn_hidden) *
                          (e.capacity_factor > 0 ? std::min(1.0, e.capacity_factor) : 1.0);
    const double shared = static_cast<double>(e.shared_experts * e.shared_ffn_hidden);
    // A latent MoE's routed experts run on latent-wide tokens, behind its two projections
    // (Megatron-LM's moe_layer_flops, megatron/training/training.py at d98e8a64: routed
    // 4·t·latent·ffn·k, projections 4·t·h·latent).
    const double d = static_cast<double>(m.moe_token_dim());
    out.mlp = 2 * tokens * (d * routed + h * shared) * g +
              4 * tokens * h * static_cast<double>(e.latent_size);
    out.router = 2 * tokens * h * static_cast<double>(e.experts);
  } else {
    out.mlp = 2 * tokens * h * static_cast<double>(m.ffn_hidden) * g;
  }
  return out;
}

double logits_forward_flops(const ModelSpec& m, double b, double s, int64_t vocab) {
  return 2 * b * s * static_cast<double>(m.hidden) * static_cast<double>(vocab);
}

double layers_forward_flops(const ModelSpec& m, double seq, bool causal_half, bool chunked) {
  // One layer of each kind, times how many the model has of it.
  const double chunk_share = chunked ? m.chunked_attention_share(seq) : 1.0;
  auto layer = [&](const LayerKind& kind) {
    const LayerFlops f = layer_forward_flops(m, 1, seq, kind);
    // A causal mask skips half of a full matrix; a sliding window's band has no masked half.
    const double attention =
        kind.windowed ? f.attention : (causal_half ? 0.5 : 1.0) * chunk_share * f.attention;
    const double rest = f.linear() + attention;
    return kind.block == Block::mamba || kind.block == Block::gdn ? rest + f.scan + f.conv : rest;
  };
  double forward = m.layer_counts(0, m.layers).sum(layer);
  const double h = static_cast<double>(m.hidden);
  const double mtp = static_cast<double>(m.mtp_layers);
  if (m.mtp_layers > 0) {  // each MTP module's layers (like the model's last), its projection
    for (const LayerKind& k : m.mtp_kinds()) forward += mtp * layer(k);
    forward += mtp * seq * 2 * (2 * h * h);
  }
  return forward + (1 + mtp) * logits_forward_flops(m, 1, seq, m.vocab);
}

double model_flops_per_sample(const ModelSpec& m, double seq) {
  // Megatron-LM's num_floating_point_operations (megatron/training/training.py, causal attention
  // counted as half the matrix since commit 8873b55d6a, 2025-03-06): the router left out.
  double moe_layers = static_cast<double>(m.moe_layers(0, m.layers));
  double mtp_mamba = 0;
  if (m.mtp_layers > 0)
    for (const LayerKind& k : m.mtp_kinds()) {
      moe_layers += k.moe && m.moe.enabled() ? static_cast<double>(m.mtp_layers) : 0;
      mtp_mamba += k.block == Block::mamba ? static_cast<double>(m.mtp_layers) : 0;
    }
  const double router = moe_layers > 0 ? moe_layers * layer_forward_flops(m, 1, seq, true).router : 0;
  if (!m.hybrid()) return 3 * (layers_forward_flops(m, seq, true) - router);
  // Hybrid models: Megatron-LM's hybrid_flops (training.py at 86df799dc4; its gdn_layer_flops
  // counts a Gated DeltaNet layer as layer_forward_flops does), whose mamba_layer_flops leaves
  // the conv out and takes the mixer 2·hidden wide whatever its heads
  // (Megatron-Bridge's published TFLOP/s for Nemotron 3 Nano, 64 heads of 64 on hidden 2688,
  // follow that: 845 TFLOP/s at 37,888 tokens/s on GB300, 22.30 GFLOP per token, in
  // tests/validation/modern-runs.csv).
  const double h = static_cast<double>(m.hidden), n = static_cast<double>(m.mamba.state_dim);
  const double d_in = 2 * h;
  const double counted =
      2 * seq * h *
          (2 * d_in + 2 * static_cast<double>(m.mamba.groups) * n +
           static_cast<double>(m.mamba_heads())) +
      7 * seq * d_in * n + 2 * seq * d_in * h;
  const LayerFlops mamba = layer_forward_flops(m, 1, seq, LayerKind{false, false, Block::mamba});
  const double layers = static_cast<double>(m.layer_counts(0, m.layers).mamba) + mtp_mamba;
  // Megatron-Bridge's hybrid_flops (src/megatron/bridge/training/utils/flop_utils.py at
  // NVIDIA-NeMo/Megatron-Bridge 17a381f95) counts each MTP depth's pattern layers and one more
  // output layer, not its 2h -> h projection (Nemotron 3 Super, "*E" twice: 84.73 GFLOP per
  // token, as the published TFLOP/s over tokens/s say).
  const double eh_proj = static_cast<double>(m.mtp_layers) * seq * 2 * (2 * h * h);
  return 3 * (layers_forward_flops(m, seq, true) - router - eh_proj +
              layers * (counted - mamba.total()));
}

double published_model_flops_per_sample(const ModelSpec& m, double seq) {
  if (m.modern()) return model_flops_per_sample(m, seq);
  const double layers = static_cast<double>(m.layers);
  const double forward = layers * layer_forward_flops(m, 1, seq).total() +
                         logits_forward_flops(m, 1, seq, m.vocab);
  return 3 * forward;
}

}  // namespace stepcast
