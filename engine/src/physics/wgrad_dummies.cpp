// The dummy weight gradients Transformer Engine caches (plan.dummy_wgrads).
//
// Under Megatron-Core's gradient-accumulation fusion a linear's backward adds its weight
// gradient into the parameter's main_grad itself and returns to autograd a dummy gradient of the
// weight's shape (so that Megatron's DDP hooks run on the backward's own thread). Transformer
// Engine allocates that dummy once per (rows, cols, dtype) with get_dummy_wgrad and keeps it in a
// module-level dict for the life of the process (transformer_engine/pytorch/module/base.py
// _dummy_wgrads; module/linear.py and layernorm_linear.py from release v2.3, NVIDIA/
// TransformerEngine ba5dc5dd; module/grouped_linear.py from v2.10; read at v2.11, c188b533);
// Megatron-Core's own ColumnParallelLinear, the output layer, takes its dummy from there too
// (megatron/core/tensor_parallel/layers.py at NVIDIA/Megatron-LM 23e00ed and d98e8a64). So a GPU
// holds, from its first backward on, one tensor of each distinct local weight shape of its
// stage, in the weights' dtype: about one layer's weights plus the output layer's.
#include <algorithm>
#include <array>
#include <cstddef>
#include <utility>

#include "stepcast/compute.h"
#include "stepcast/software_buffers.h"

namespace stepcast {

namespace {

// The local (rows, cols) of each linear weight of a stage's layers and head, one GPU's slice as
// Megatron-Core's layer specs hold them (gpt_layer_specs.py, multi_latent_attention.py,
// moe/experts.py, ssm/mamba_mixer.py, ssm/gated_delta_net at d98e8a64): column-parallel weights
// split their rows over TP, row-parallel ones their columns; MLA's down-projections and a latent
// MoE's latent projections are whole ("duplicated"). The router is a plain parameter (its
// gradient is autograd's, freed by the DDP hook) and embeddings are no linears: neither counts.
// The distinct weight shapes of a stage, in a fixed array: every stage memory call asks for
// them (a search, dozens of times a plan), and a vector was an allocation each time. At most
// 19 distinct shapes: attention 5 (MLA), a dense MLP 2, an MoE block 6, Mamba 2, Gated
// DeltaNet 2, MTP's projection 1, the output layer 1 (MTP's layers repeat those shapes).
class Shapes {
 public:
  void add(double rows, double cols) {
    if (rows <= 0 || cols <= 0) return;
    const std::pair<double, double> s{rows, cols};
    const auto end = shapes_.begin() + count_;
    if (std::find(shapes_.begin(), end, s) == end && count_ < shapes_.size())
      shapes_[count_++] = s;
  }
  double elements() const {
    double n = 0;
    for (size_t i = 0; i < count_; ++i) n += shapes_[i].first * shapes_[i].second;
    return n;
  }

 private:
  std::array<std::pair<double, double>, 24> shapes_{};
  size_t count_ = 0;
};

void add_attention(Shapes& out, const ModelSpec& m, const Plan& p) {
  const double h = static_cast<double>(m.hidden), t = p.tp;
  if (m.mla()) {
    const AttentionSpec& a = m.attention;
    const double n = static_cast<double>(m.heads), rope = static_cast<double>(a.qk_rope_head_dim);
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    if (ql > 0) out.add(ql, h);  // linear_q_down_proj
    // linear_q_up_proj from the query latent, or linear_q_proj from the hidden state
    out.add(n * (static_cast<double>(a.qk_head_dim) + rope) / t, ql > 0 ? ql : h);
    out.add(kvl + rope, h);                                                   // linear_kv_down_proj
    out.add(n * static_cast<double>(a.qk_head_dim + a.v_head_dim) / t, kvl);  // linear_kv_up_proj
    out.add(h, n * static_cast<double>(a.v_head_dim) / t);                    // linear_proj
    return;
  }
  const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
  // linear_qkv, one fused weight (with the output gate's rows where the model has one).
  out.add((q + 2 * kv + (m.attention.output_gate ? q : 0)) / t, h);
  out.add(h, q / t);  // linear_proj
}

void add_ffn(Shapes& out, const ModelSpec& m, const Plan& p, bool moe) {
  const double h = static_cast<double>(m.hidden), t = p.tp;
  const double gated = ffn_matrices(m.ffn_type) - 1;  // fc1 fuses a gated unit's two
  if (moe && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    if (e.shared_experts > 0) {
      const double f = static_cast<double>(e.shared_experts * e.shared_ffn_hidden);
      out.add(gated * f / t, h);
      out.add(h, f / t);
    }
    // Transformer Engine's grouped linear: one weight per local expert, all of one shape.
    const double f = static_cast<double>(e.ffn_hidden) / p.etp;
    const double dt = static_cast<double>(m.moe_token_dim());
    out.add(gated * f, dt);
    out.add(dt, f);
    if (e.latent_size > 0) {
      out.add(static_cast<double>(e.latent_size), h);
      out.add(h, static_cast<double>(e.latent_size));
    }
    return;
  }
  const double f = static_cast<double>(m.ffn_hidden);
  out.add(gated * f / t, h);
  out.add(h, f / t);
}

}  // namespace

double wgrad_dummy_bytes(const ModelSpec& m, const Plan& p, const StageShape& st) {
  if (!p.dummy_wgrads) return 0;
  Shapes shapes;
  const double h = static_cast<double>(m.hidden), t = p.tp;
  const bool dense_layers = m.hybrid() ? st.mlp_layers > 0 : st.layers > st.moe_layers;
  const bool attention = m.hybrid() ? st.attention_layers > 0 : st.layers > 0;
  if (attention) add_attention(shapes, m, p);
  if (dense_layers) add_ffn(shapes, m, p, false);
  if (st.moe_layers > 0) add_ffn(shapes, m, p, true);
  if (st.mamba_layers > 0) {  // in_proj (z, x, B, C, dt) and out_proj
    const double inner = static_cast<double>(m.mamba_inner());
    shapes.add((inner + static_cast<double>(m.mamba_conv_dim() + m.mamba_heads())) / t, h);
    shapes.add(h, inner / t);
  }
  if (st.gdn_layers > 0) {  // in_proj (q, k, v, z, b, a) and out_proj
    const double k = static_cast<double>(m.gdn_key_dim()), v = static_cast<double>(m.gdn_value_dim());
    shapes.add((2 * k + 2 * v + 2 * static_cast<double>(m.gdn.value_heads)) / t, h);
    shapes.add(h, v / t);
  }
  if (st.mtp) {  // each MTP module's 2h -> h projection and its layers' (the same shapes)
    shapes.add(h / t, 2 * h);
    for (const LayerKind& k : m.mtp_kinds()) {
      add_attention(shapes, m, p);
      add_ffn(shapes, m, p, k.moe);
    }
  }
  // The output layer (tied or not: it runs the embedding's weight through the same linear).
  if (st.last) shapes.add(static_cast<double>(padded_vocab(m.vocab, p.tp)) / t, h);
  // The dummy has the weight's dtype: 16-bit, also under fp8 and fp4 recipes (their quantized
  // weights report the high-precision dtype), fp32 when training in fp32.
  const double bytes = p.precision == Precision::fp32 ? 4 : 2;
  return bytes * shapes.elements();
}

}  // namespace stepcast
