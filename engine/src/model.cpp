#include "stepcast/model.h"

namespace stepcast {

int ffn_matrices(FfnType type) {
  return (type == FfnType::swiglu || type == FfnType::geglu) ? 3 : 2;
}

int64_t padded_vocab(int64_t vocab, int tp) {
  const int64_t multiple = 128 * static_cast<int64_t>(tp);
  return (vocab + multiple - 1) / multiple * multiple;
}

ParameterCount count_parameters(const ModelSpec& m, int64_t vocab, int64_t seq_len) {
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double norm_params = (m.norm == Norm::layernorm ? 2.0 : 1.0) * h;
  const double mlp_in = (ffn_matrices(m.ffn_type) - 1) * f;  // gated units have two input matrices

  ParameterCount p;
  const double qkv = h * (h + 2 * kv) + (m.bias ? h + 2 * kv : 0);
  const double proj = h * h + (m.bias ? h : 0);
  const double mlp = h * mlp_in + f * h + (m.bias ? mlp_in + h : 0);
  p.per_layer = qkv + proj + mlp + 2 * norm_params;
  p.embedding = static_cast<double>(vocab) * h;
  p.position = m.position == Position::learned ? static_cast<double>(seq_len) * h : 0;
  p.output = m.tied_embeddings ? 0 : static_cast<double>(vocab) * h;
  p.final_norm = norm_params;
  p.total = p.per_layer * static_cast<double>(m.layers) + p.embedding + p.position + p.output +
            p.final_norm;
  return p;
}

LayerFlops layer_forward_flops(const ModelSpec& m, double b, double s) {
  const double h = static_cast<double>(m.hidden);
  const double kv = static_cast<double>(m.kv_dim());
  const double f = static_cast<double>(m.ffn_hidden);
  const double tokens = b * s;
  LayerFlops out;
  out.qkv = 2 * tokens * h * (h + 2 * kv);
  out.attention = 4 * tokens * s * h;  // 2 b s^2 h for Q K^T, the same for scores x V
  out.projection = 2 * tokens * h * h;
  out.mlp = 2 * tokens * h * f * ffn_matrices(m.ffn_type);
  return out;
}

double logits_forward_flops(const ModelSpec& m, double b, double s, int64_t vocab) {
  return 2 * b * s * static_cast<double>(m.hidden) * static_cast<double>(vocab);
}

double model_flops_per_sample(const ModelSpec& m, double seq) {
  const double layers = static_cast<double>(m.layers);
  const double forward =
      layers * layer_forward_flops(m, 1, seq).total() + logits_forward_flops(m, 1, seq, m.vocab);
  return 3 * forward;
}

}  // namespace stepcast
