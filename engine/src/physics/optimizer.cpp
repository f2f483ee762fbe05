#include "stepcast/optimizer.h"

#include <algorithm>
#include <cmath>

namespace stepcast {

namespace {

// The matrices of `layers` layers' attention, whole, with the ranks splitting each (Megatron-Core's
// ColumnParallelLinear / RowParallelLinear split over TP; MLA's down-projections are whole on
// every rank).
void add_attention(std::vector<MuonMatrix>& out, const ModelSpec& m, const Plan& p,
                   double layers) {
  if (layers <= 0) return;
  const double h = static_cast<double>(m.hidden);
  auto add = [&](std::string_view what, double rows, double cols, double count, int shards,
                 bool row_parallel = false) {
    out.push_back({what, rows, cols, count * layers, shards, false, row_parallel});
  };
  if (m.mla()) {
    const AttentionSpec& a = m.attention;
    const double n = static_cast<double>(m.heads);
    const double qk = static_cast<double>(a.qk_head_dim + a.qk_rope_head_dim);
    const double ql = static_cast<double>(a.q_lora_rank), kvl = static_cast<double>(a.kv_lora_rank);
    if (ql > 0) {
      add("query down-projection", ql, h, 1, 1);
      add("query up-projection", n * qk, ql, 1, p.tp);
    } else {
      add("query projection", n * qk, h, 1, p.tp);
    }
    add("key/value down-projection", kvl + static_cast<double>(a.qk_rope_head_dim), h, 1, 1);
    add("key/value up-projection", n * static_cast<double>(a.qk_head_dim + a.v_head_dim), kvl, 1,
        p.tp);
    add("attention output projection", h, n * static_cast<double>(a.v_head_dim), 1, p.tp, true);
  } else {
    // linear_qkv split into Q, K and V (emerging_optimizers.py, TensorParallelMuon.orthogonalize).
    add("query part of linear_qkv", static_cast<double>(m.q_dim()), h, 1, p.tp);
    add("key and value parts of linear_qkv", static_cast<double>(m.kv_dim()), h, 2, p.tp);
    if (m.attention.output_gate)  // the gate rows of linear_qkv, as wide as the queries
      add("gate part of linear_qkv", static_cast<double>(m.q_dim()), h, 1, p.tp);
    add("attention output projection", h, static_cast<double>(m.q_dim()), 1, p.tp, true);
  }
}

// The matrices of `layers` MLPs, or MoE blocks with `moe` (the router whole on every rank,
// routed experts split over expert TP, experts/ep on each GPU).
void add_ffn(std::vector<MuonMatrix>& out, const ModelSpec& m, const Plan& p, bool moe,
             double layers) {
  if (layers <= 0) return;
  const double h = static_cast<double>(m.hidden);
  const double gated_inputs = ffn_matrices(m.ffn_type) - 1;  // fc1 fuses a gated unit's two
  auto add = [&](std::string_view what, double rows, double cols, double count, int shards,
                 bool expert = false, bool row_parallel = false) {
    out.push_back({what, rows, cols, count * layers, shards, expert, row_parallel});
  };
  if (moe && m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    add("router", static_cast<double>(e.experts), h, 1, 1);
    if (e.shared_experts > 0) {
      const double f = static_cast<double>(e.shared_experts * e.shared_ffn_hidden);
      add("shared experts' fc1", gated_inputs * f, h, 1, p.tp);
      add("shared experts' fc2", h, f, 1, p.tp, false, true);
    }
    // Transformer Engine's grouped linear keeps one weight per expert.
    const double local = static_cast<double>(e.experts) / p.ep;
    const double f = static_cast<double>(e.ffn_hidden);
    const double dt = static_cast<double>(m.moe_token_dim());  // a latent MoE's latent
    add("expert fc1", gated_inputs * f, dt, local, p.etp, true);
    add("expert fc2", dt, f, local, p.etp, true, true);
    if (e.latent_size > 0) {  // whole on every TP rank ("duplicated")
      const double l = static_cast<double>(e.latent_size);
      add("latent down-projection (fc1_latent_proj)", l, h, 1, 1);
      add("latent up-projection (fc2_latent_proj)", h, l, 1, 1);
    }
  } else {
    const double f = static_cast<double>(m.ffn_hidden);
    add("fc1", gated_inputs * f, h, 1, p.tp);
    add("fc2", h, f, 1, p.tp, false, true);
  }
}

// A transformer layer: its attention and its MLP (or MoE block).
void add_layer(std::vector<MuonMatrix>& out, const ModelSpec& m, const Plan& p, bool moe,
               double layers) {
  add_attention(out, m, p, layers);
  add_ffn(out, m, p, moe, layers);
}

// A hybrid model's mixers (Megatron-LM d98e8a64). Mamba: in_proj is flagged `use_muon = False`
// (megatron/core/ssm/mamba_mixer.py: its fused z, x, B, C, dt parts go to Adam), conv1d is 3-D
// and A_log, D, dt_bias and the norm are vectors (emerging_optimizers.py
// _is_nonlinear_or_embedding: only 2-D parameters), so Muon steps out_proj alone. Gated DeltaNet
// (megatron/core/ssm/gated_delta_net/common.py): in_proj (hidden -> q, k, v, z, b, a) carries no
// such flag and is stepped whole, as is out_proj; conv1d, dt_bias, A_log and the norm are not
// matrices.
void add_mixers(std::vector<MuonMatrix>& out, const ModelSpec& m, const Plan& p,
                double mamba_layers, double gdn_layers) {
  const double h = static_cast<double>(m.hidden);
  if (mamba_layers > 0)
    out.push_back({"Mamba out_proj", h, static_cast<double>(m.mamba_inner()), mamba_layers, p.tp,
                   false, true});
  if (gdn_layers > 0) {
    const double k = static_cast<double>(m.gdn_key_dim()), v = static_cast<double>(m.gdn_value_dim());
    const double nv = static_cast<double>(m.gdn.value_heads);
    out.push_back({"Gated DeltaNet in_proj", 2 * k + 2 * v + 2 * nv, h, gdn_layers, p.tp});
    out.push_back({"Gated DeltaNet out_proj", h, v, gdn_layers, p.tp, false, true});
  }
}

}  // namespace

std::vector<MuonMatrix> muon_matrices(const ModelSpec& m, const Plan& p, const StageShape& st) {
  std::vector<MuonMatrix> out;
  const double moe_layers = static_cast<double>(st.moe_layers);
  if (m.hybrid()) {  // one block a layer (StageShape: `E` are the moe_layers)
    add_attention(out, m, p, static_cast<double>(st.attention_layers));
    add_ffn(out, m, p, false, static_cast<double>(st.mlp_layers));
    add_ffn(out, m, p, true, moe_layers);
    add_mixers(out, m, p, static_cast<double>(st.mamba_layers), static_cast<double>(st.gdn_layers));
  } else {
    add_layer(out, m, p, false, static_cast<double>(st.layers) - moe_layers);
    add_layer(out, m, p, true, moe_layers);
  }
  const double h = static_cast<double>(m.hidden);
  if (st.first && m.position == Position::learned)
    out.push_back({"learned position table", static_cast<double>(m.seq_len), h, 1, 1});
  if (st.mtp) {  // each MTP module: its 2h -> h projection (column-parallel) and its layers
    const double n = static_cast<double>(m.mtp_parameter_modules());
    out.push_back({"MTP projection", h, 2 * h, n, p.tp});
    for (const LayerKind& k : m.mtp_kinds()) add_layer(out, m, p, k.moe, n);
  }
  return out;
}

MuonParameters muon_parameters(const std::vector<MuonMatrix>& matrices) {
  MuonParameters out;
  for (const MuonMatrix& x : matrices) (x.expert ? out.expert : out.dense) += x.local_parameters();
  return out;
}

double newton_schulz_flops(double rows, double cols, int steps) {
  const double m = std::min(rows, cols), n = std::max(rows, cols);
  return steps * (2 * m * m * n + 2 * m * m * m + 2 * m * m * n);
}

double muon_owned(const MuonMatrix& x, const Plan& p) {
  if (p.effective_zero_stage() < 1) return x.count;
  // The layer-wise optimizer's bin-packing balances the ranks' Newton-Schulz cost: each steps
  // about its share.
  const double ranks = x.expert ? std::max(1, p.edp()) : static_cast<double>(p.dp) * p.cp;
  return x.count / ranks;
}

MuonStep muon_step(const std::vector<MuonMatrix>& matrices, const Plan& p, const Device& d) {
  // Element-wise traffic per element (orthogonalized_optimizer.py step, muon_utils.py
  // newton_schulz, in fp32 unless said): on this rank's shard, decoupled weight decay
  // p.add_(p) 8 B, the momentum's lerp_ with the gradient 12 B, the update scaled twice
  // (spectral scale, extra factor) 16 B, p.add_ of it 12 B, and the 16-bit model copy written
  // from the fp32 master 6 B (none when training in fp32); on the whole gathered matrix, the
  // Frobenius normalisation (a norm and a division) 12 B and the casts to bf16 and back 12 B.
  const double shard_bytes = 8 + 12 + 16 + 12 + (p.precision == Precision::fp32 ? 0 : 6);
  const double whole_bytes = 12 + 12;
  const Device bf16 = d.sixteen_bit();
  MuonStep out;
  double bytes = 0;
  for (const MuonMatrix& x : matrices) {
    const double owned = muon_owned(x, p);
    const double elements = x.rows * x.cols;
    bytes += owned * elements * (shard_bytes / x.shards + whole_bytes);
    const double m = std::min(x.rows, x.cols), n = std::max(x.rows, x.cols);
    const double one = gemm_time_s(m, m, n, 2, bf16) + gemm_time_s(m, m, m, 2, bf16) +
                       gemm_time_s(m, n, m, 2, bf16);
    out.newton_schulz_s += owned * kNewtonSchulzSteps * one;
  }
  out.elementwise_s = elementwise_s(bytes, d);
  return out;
}

bool sgd_keeps_buffer(const Plan& p) {
  return p.sgd_momentum > 0 || p.execution.kernels == Kernels::fused;
}

double master_bytes_per_parameter(const Plan& p) {
  if (p.precision == Precision::fp32) return 0;
  switch (p.master_weights) {
    case MasterWeights::fp32: return 4;
    case MasterWeights::remainders: return 2;
    case MasterWeights::none: return 0;
  }
  return 4;
}

double state_bytes_per_parameter(const Plan& p) {
  const double master = master_bytes_per_parameter(p);
  switch (p.optimizer) {
    case Optimizer::sgd: return master + (sgd_keeps_buffer(p) ? 4 : 0);
    case Optimizer::adafactor: return master + 4;
    case Optimizer::adam:
    case Optimizer::muon: break;  // Muon's matrices apart (memory.cpp); Adam for the rest
  }
  return master + 2 * (p.bf16_moments ? 2 : 4);
}

AdafactorState adafactor_state(const ModelSpec& m, const Plan& p, const StageShape& st) {
  AdafactorState out;
  const auto add = [&](double rows, double cols, double count) {
    out.matrix_parameters += rows * cols * count;
    out.second_moment += (rows + cols) * count;
  };
  for (const MuonMatrix& x : muon_matrices(m, p, st))
    add(x.local_rows(), x.local_cols(), x.count);
  // The word embedding and the output layer, split over TP by vocabulary rows (a tied output
  // layer on the embedding's stage is the same tensor).
  const double h = static_cast<double>(m.hidden);
  const double rows = static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
  const double tables = (st.first ? 1 : 0) + (st.last && (!m.tied_embeddings || !st.first) ? 1 : 0);
  add(rows, h, tables);
  out.second_moment += st.parameters - out.matrix_parameters;  // norms, biases: one each
  return out;
}

double sgd_step_bytes(const Plan& p) {
  // One fused pass, as FusedSGD runs it (fused_sgd.py, multi_tensor_sgd): read the fp32 master
  // and gradient (8 B) and the buffer (4 B), write the master and the buffer (8 B); then the
  // 16-bit model copy (2 B) unless training in fp32. No buffer: read 8 B, write 4 B.
  const double copy = p.precision == Precision::fp32 ? 0 : 2;
  return (sgd_keeps_buffer(p) ? 20 : 12) + copy;
}

double adafactor_step_bytes(const Plan& p, bool factored) {
  // torch.optim.Adafactor's step, op by op (_single_tensor_adafactor, fp32, weight decay 0 as
  // its default): the parameter's norm (read 4 B); factored, the row and column norms of the
  // gradient (read it twice, 8 B) and the estimate row_var @ col_var written whole (4 B) and
  // divided in place (8 B); unfactored, grad * grad (8 B), the variance's lerp_ (12 B) and its
  // clone (8 B); then clamp_ and rsqrt_ in place (16 B), the update times the gradient (12 B),
  // its norm (4 B) and param.add_ (12 B); and the 16-bit model copy (2 B) unless in fp32.
  const double copy = p.precision == Precision::fp32 ? 0 : 2;
  const double second = factored ? 8 + 4 + 8 : 8 + 12 + 8;
  return 4 + second + 16 + 12 + 4 + 12 + copy;
}

}  // namespace stepcast
