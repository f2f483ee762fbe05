#include "stepcast/model.h"

#include <algorithm>
#include <numeric>

namespace stepcast {

int ffn_matrices(FfnType type) {
  return (type == FfnType::swiglu || type == FfnType::geglu) ? 3 : 2;
}

int64_t padded_vocab(int64_t vocab, int tp) {
  const int64_t multiple = 128 * static_cast<int64_t>(tp);
  return (vocab + multiple - 1) / multiple * multiple;
}

bool ModelSpec::is_moe_layer(int64_t i) const {
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
  return n.moe + n.moe_windowed;
}

ModelSpec::LayerCounts ModelSpec::layer_counts(int64_t first, int64_t count) const {
  LayerCounts n;
  const int64_t lo = std::max(first, int64_t{0}), hi = first + count;
  if (hi <= lo) return n;
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

bool ModelSpec::windowed_layer(int64_t i) const {
  if (attention.window <= 0) return false;
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
  const double q = static_cast<double>(m.q_dim());
  const double kv = static_cast<double>(m.kv_dim());
  return h * (q + 2 * kv) + (m.bias ? q + 2 * kv : 0) + q * h + (m.bias ? h : 0);
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

ParameterCount count_parameters(const ModelSpec& m, int64_t vocab, int64_t seq_len) {
  const double h = static_cast<double>(m.hidden);
  const double norm_params = (m.norm == Norm::layernorm ? 2.0 : 1.0) * h;
  const double attention = attention_parameters(m);

  ParameterCount p;
  p.per_layer = attention + mlp_parameters(m, static_cast<double>(m.ffn_hidden)) + 2 * norm_params;
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    p.routed_experts = static_cast<double>(e.experts) *
                       mlp_parameters(m, static_cast<double>(e.ffn_hidden));
    // The router's weights, plus the expert-bias vector of aux-loss-free balancing.
    const double router = h * static_cast<double>(e.experts) + static_cast<double>(e.experts);
    // Megatron builds the shared experts as one MLP as wide as all of them.
    const double shared =
        e.shared_experts > 0
            ? mlp_parameters(m, static_cast<double>(e.shared_experts * e.shared_ffn_hidden))
            : 0;
    p.moe_layer = attention + router + p.routed_experts + shared + 2 * norm_params;
  }
  p.embedding = static_cast<double>(vocab) * h;
  p.position = m.position == Position::learned ? static_cast<double>(seq_len) * h : 0;
  p.output = m.tied_embeddings ? 0 : static_cast<double>(vocab) * h;
  p.final_norm = norm_params;
  // An MTP module: norms of the embedding and of the hidden state, their joint projection
  // (2h -> h), one transformer layer like the model's last, and a final norm; it shares the
  // embedding and the output layer (megatron/core/transformer/multi_token_prediction.py).
  if (m.mtp_layers > 0) {
    const bool last_moe = m.is_moe_layer(m.layers - 1);
    p.mtp = static_cast<double>(m.mtp_layers) *
            ((last_moe ? p.moe_layer : p.per_layer) + 2 * h * h + 3 * norm_params);
  }
  const double moe_layers = static_cast<double>(m.moe_layers(0, m.layers));
  p.total = p.per_layer * (static_cast<double>(m.layers) - moe_layers) + p.moe_layer * moe_layers +
            p.embedding + p.position + p.output + p.final_norm + p.mtp;
  return p;
}

LayerFlops layer_forward_flops(const ModelSpec& m, double b, double s, bool moe_layer,
                               bool windowed) {
  const double h = static_cast<double>(m.hidden);
  const double tokens = b * s;
  // Keys each query is scored against (before any causal halving): the window, or the sequence.
  const double keys = windowed ? std::min(s, static_cast<double>(m.attention.window)) : s;
  LayerFlops out;
  if (m.mla()) {
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
    out.qkv = 2 * tokens * h * (q + 2 * kv);
    out.attention = 4 * tokens * keys * q;  // 2 b s^2 q for Q K^T, the same for scores x V
    out.projection = 2 * tokens * q * h;
  }
  const double g = ffn_matrices(m.ffn_type);
  if (moe_layer && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    // A capacity factor below 1 drops what exceeds each expert's capacity: under balanced
    // routing a share capacity_factor of the routed copies is computed (above 1 the experts are
    // padded with empty rows, no token's work).
    const double routed = static_cast<double>(e.top_k * e.ffn_hidden) *
                          (e.capacity_factor > 0 ? std::min(1.0, e.capacity_factor) : 1.0);
    const double active = routed + static_cast<double>(e.shared_experts * e.shared_ffn_hidden);
    out.mlp = 2 * tokens * h * active * g;
    out.router = 2 * tokens * h * static_cast<double>(e.experts);
  } else {
    out.mlp = 2 * tokens * h * static_cast<double>(m.ffn_hidden) * g;
  }
  return out;
}

double logits_forward_flops(const ModelSpec& m, double b, double s, int64_t vocab) {
  return 2 * b * s * static_cast<double>(m.hidden) * static_cast<double>(vocab);
}

double layers_forward_flops(const ModelSpec& m, double seq, bool causal_half) {
  // One layer of each kind, times how many the model has of it.
  auto layer = [&](bool moe, bool windowed) {
    const LayerFlops f = layer_forward_flops(m, 1, seq, moe, windowed);
    // A causal mask skips half of a full matrix; a sliding window's band has no masked half.
    return f.linear() + (causal_half && !windowed ? 0.5 : 1.0) * f.attention;
  };
  double forward = m.layer_counts(0, m.layers).sum(layer);
  const double h = static_cast<double>(m.hidden);
  const double mtp = static_cast<double>(m.mtp_layers);
  if (m.mtp_layers > 0)  // each MTP module's layer is like the model's last
    forward += mtp * (layer(m.is_moe_layer(m.layers - 1), m.windowed_layer(m.layers - 1)) +
                      seq * 2 * (2 * h * h));
  return forward + (1 + mtp) * logits_forward_flops(m, 1, seq, m.vocab);
}

double model_flops_per_sample(const ModelSpec& m, double seq) {
  // Megatron-LM's num_floating_point_operations (megatron/training/training.py, causal attention
  // counted as half the matrix since commit 8873b55d6a, 2025-03-06): the router left out.
  double moe_layers = static_cast<double>(m.moe_layers(0, m.layers));
  if (m.mtp_layers > 0 && m.is_moe_layer(m.layers - 1))
    moe_layers += static_cast<double>(m.mtp_layers);
  const double router = moe_layers > 0 ? moe_layers * layer_forward_flops(m, 1, seq, true).router : 0;
  return 3 * (layers_forward_flops(m, seq, true) - router);
}

double published_model_flops_per_sample(const ModelSpec& m, double seq) {
  if (m.modern()) return model_flops_per_sample(m, seq);
  const double layers = static_cast<double>(m.layers);
  const double forward = layers * layer_forward_flops(m, 1, seq).total() +
                         logits_forward_flops(m, 1, seq, m.vocab);
  return 3 * forward;
}

}  // namespace stepcast
