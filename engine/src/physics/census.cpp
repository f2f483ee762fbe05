#include "stepcast/census.h"

#include <algorithm>
#include <cmath>

#include "stepcast/compute.h"
#include "stepcast/optimizer.h"
#include "stepcast/ranks.h"

namespace stepcast {

StagePaths stage_paths(const Plan& p, const ClusterGroup& c) {
  // Every group is placed where plan.rank_order puts its ranks (ranks.h). With Megatron's
  // default order (tp innermost, then cp, dp, pp; the expert grid etp, ep, edp, pp) each group
  // below is an arithmetic progression of ranks.
  const int g = c.gpus_per_node;
  const RankGrid dense = dense_grid(p), expert = expert_grid(p);
  const auto tp = dim_bit(Dim::tp), cp = dim_bit(Dim::cp), ep = dim_bit(Dim::ep),
             dp = dim_bit(Dim::dp);
  const int64_t pp_stride = dense.stride[static_cast<size_t>(Dim::pp)];
  StagePaths s;
  s.tp = comm_path(c, grid_placement(dense, tp, g));
  s.cp = comm_path(c, grid_placement(dense, cp, g));
  // Gradients are reduced over DP x CP.
  s.dp_placement = grid_placement(dense, dp | cp, g);
  s.dp = comm_path(c, s.dp_placement);
  // Neighbouring stages, and the first and last stage, differ only in their pp coordinate.
  s.pp = comm_path(c, place_group(2, pp_stride, g));
  s.embedding = comm_path(c, place_group(2, pp_stride * std::max(1, p.pp - 1), g));
  // The model-parallel group (tp x pp) carries one scalar; it is priced as if its members sat
  // pp_stride apart, as it always has been (its true placement: `stepcast traffic`).
  s.model_parallel = comm_path(c, place_group(p.tp * p.pp, pp_stride, g));
  s.ep = all_to_all_path(c, grid_placement(expert, ep, g));
  s.etp = comm_path(c, grid_placement(expert, tp, g));
  s.tp_ep = comm_path(c, grid_placement(expert, tp | ep, g));
  s.edp_placement = grid_placement(expert, dp, g);
  s.edp = comm_path(c, s.edp_placement);
  return s;
}

double flex_remote_scale(const ModelSpec& m, const Plan& p, const AllToAllPath& path) {
  if (p.moe_dispatcher != MoeDispatcher::flex) return 1;
  // Nodes the expert-parallel group spans; a token's top_k experts fall on
  // nodes·(1 - (1 - 1/nodes)^k) of them under uniform routing, at most router_group_top_k
  // with group-limited routing (DeepSeek-V3: 4), and flex sends it once to each.
  const double nodes = std::ceil(static_cast<double>(path.size) / path.per_node);
  if (nodes <= 1) return 1;
  const double k = static_cast<double>(m.moe.top_k);
  double distinct = nodes * (1 - std::pow(1 - 1 / nodes, k));
  if (m.moe.router_group_top_k > 0)
    distinct = std::min(distinct, static_cast<double>(m.moe.router_group_top_k));
  return std::min(1.0, distinct / k);
}

int64_t dp_buckets(double parameters, const Plan& p) {
  if (!p.overlap_grad_reduce) return p.vpp;  // one buffer per model chunk
  const double bucket = std::max(40e6, 1e6 * p.dp * p.cp);
  // Each model chunk has its own buffer; a bucket closes once it holds >= bucket parameters.
  const double per_chunk = parameters / p.vpp;
  return p.vpp * (static_cast<int64_t>(std::floor(per_chunk / bucket)) + 1);
}

std::vector<CommOp> stage_census(const ModelSpec& m, const Plan& p, const StageShape& st,
                                 const StagePaths& paths) {
  std::vector<CommOp> ops;
  ops.reserve(64);  // a stage's census is a few dozen operations: no regrowth
  const int64_t mb = p.micro_batches();
  const double a = activation_bytes(p.precision);
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  const double act = tokens * m.hidden * a;  // M = b s h a, one micro-batch's hidden states
  const int64_t L = st.layers;
  // TP's collectives come in pairs around each TP-split block: attention and MLP in a
  // transformer layer, the one block of a hybrid layer (Mamba mixer, attention, MLP or MoE).
  const int64_t blocks = m.hybrid() ? L : 2 * L;
  // Layers with self-attention: CP's K/V ring runs in these.
  const int64_t attending = m.hybrid() ? st.attention_layers : L;
  const bool sp = p.sequence_parallel && p.tp > 1;
  const bool full = p.recompute == Recompute::full;
  // Layers whose forward full recompute replays (all of them, or the block method's share).
  const double replayed = full_recompute_share(m, p);
  auto replays = [&](int64_t count) { return std::llround(replayed * static_cast<double>(count)); };

  auto add = [&](CollectiveKind kind, CommGroup group, Phase phase, std::string_view what,
                 int64_t count, double bytes, int size, const CommPath& path) {
    if (count <= 0 || bytes <= 0) return;
    if (size <= 1 && kind != CollectiveKind::send_recv) return;  // Megatron skips 1-rank groups
    CommOp op{kind, group, phase, what, count, bytes, size,
              path.link ? path.link->id : std::string(), 0};
    op.time_s = collective_time_s(kind, bytes, size, path);
    ops.push_back(std::move(op));
  };
  using K = CollectiveKind;

  // Tensor parallelism (mappings.py, layers.py): per layer per micro-batch.
  if (p.tp > 1) {
    const auto& tp = paths.tp;
    if (!sp) {
      add(K::all_reduce, CommGroup::tp, Phase::forward,
          "row-parallel outputs (attention proj, MLP fc2)", blocks * mb, act, p.tp, tp);
      add(K::all_reduce, CommGroup::tp, Phase::backward,
          "column-parallel input grads (QKV, MLP fc1)", blocks * mb, act, p.tp, tp);
      if (full)
        add(K::all_reduce, CommGroup::tp, Phase::recompute, "row-parallel outputs, re-run",
            replays(blocks * mb), act, p.tp, tp);
      if (st.first)
        add(K::all_reduce, CommGroup::tp, Phase::forward, "vocab-parallel embedding output", mb,
            act, p.tp, tp);
      if (st.last)
        add(K::all_reduce, CommGroup::tp, Phase::backward, "output layer input grad", mb, act,
            p.tp, tp);
    } else {
      add(K::all_gather, CommGroup::tp, Phase::forward,
          "sequence-parallel inputs of QKV and fc1", blocks * mb, act, p.tp, tp);
      add(K::reduce_scatter, CommGroup::tp, Phase::forward, "outputs of proj and fc2",
          blocks * mb, act, p.tp, tp);
      add(K::all_gather, CommGroup::tp, Phase::backward,
          "grads of proj/fc2, re-gathered QKV/fc1 inputs", 2 * blocks * mb, act, p.tp, tp);
      add(K::reduce_scatter, CommGroup::tp, Phase::backward, "input grads of QKV and fc1",
          blocks * mb, act, p.tp, tp);
      if (full) {
        add(K::all_gather, CommGroup::tp, Phase::recompute, "inputs of QKV and fc1, re-run",
            replays(blocks * mb), act, p.tp, tp);
        add(K::reduce_scatter, CommGroup::tp, Phase::recompute, "outputs of proj and fc2, re-run",
            replays(blocks * mb), act, p.tp, tp);
      }
      if (st.first) {
        if (m.position == Position::learned)
          add(K::all_reduce, CommGroup::tp, Phase::forward, "vocab-parallel embedding output",
              mb, act, p.tp, tp);
        else
          add(K::reduce_scatter, CommGroup::tp, Phase::forward,
              "vocab-parallel embedding output", mb, act, p.tp, tp);
        add(K::all_gather, CommGroup::tp, Phase::backward, "embedding output grad", mb, act,
            p.tp, tp);
      }
      if (st.last) {
        add(K::all_gather, CommGroup::tp, Phase::forward, "output layer input", mb, act, p.tp,
            tp);
        add(K::all_gather, CommGroup::tp, Phase::backward, "output layer input, re-gathered", mb,
            act, p.tp, tp);
        add(K::reduce_scatter, CommGroup::tp, Phase::backward, "output layer input grad", mb,
            act, p.tp, tp);
      }
      // Norm weights and row-parallel biases are replicated across TP under SP; their grads
      // are summed in one coalesced all-reduce (finalize_model_grads.py), fp32 main grads.
      const double per_layer = (m.norm == Norm::layernorm ? 4.0 : 2.0) + (m.bias ? 2.0 : 0.0);
      const double replicated =
          (per_layer * static_cast<double>(blocks) / 2 + (st.last ? 2 : 0)) * m.hidden * 4;
      add(K::all_reduce, CommGroup::tp, Phase::gradient_sync, "sequence-parallel norm grads", 1,
          replicated, p.tp, tp);
    }
    if (st.last)  // vocab-parallel cross-entropy: max, target logit, sum of exp (fp32 per token)
      add(K::all_reduce, CommGroup::tp, Phase::forward, "cross-entropy max/target/sum-exp",
          3 * mb, tokens * 4, p.tp, tp);
    // The data loader's batch is broadcast from TP rank 0 on the stages that consume it.
    if (st.first || st.last)
      add(K::broadcast, CommGroup::tp, Phase::forward, "input batch (tokens, labels, masks)",
          2 * mb * ((st.first && st.last) ? 2 : 1), tokens * 8, p.tp, tp);
  }

  // Context parallelism: a ring of K/V exchanges per layer (TE's attention with cp_comm_type
  // p2p): cp-1 steps forward; backward passes K/V and their gradients round again.
  if (p.cp > 1) {
    const double kv = 2 * tokens * m.kv_dim() / p.tp * a;
    add(K::send_recv, CommGroup::cp, Phase::forward, "K/V chunks around the CP ring",
        (p.cp - 1) * attending * mb, kv, p.cp, paths.cp);
    add(K::send_recv, CommGroup::cp, Phase::backward, "K/V and their grads around the ring",
        2 * (p.cp - 1) * attending * mb, kv, p.cp, paths.cp);
    if (full)
      add(K::send_recv, CommGroup::cp, Phase::recompute, "K/V chunks, re-run",
          replays((p.cp - 1) * attending * mb), kv, p.cp, paths.cp);
  }

  // Pipeline send/receive (schedules.py): one message per micro-batch per boundary crossing and
  // direction, v times more with the interleaved schedule; SP sends the 1/tp sequence shard.
  if (p.pp > 1) {
    const bool scatter = p.pp_scatter_gather && !sp && p.tp > 1;
    const double msg = sp || scatter ? act / p.tp : act;
    const int64_t v = p.vpp;
    // Each chunk receives from the virtual stage before it and sends to the one after it, but
    // for the model's ends and a V's turn.
    const int64_t per_direction = (2 * v - st.first - st.last - 2 * st.turn) * mb;
    add(K::send_recv, CommGroup::pp, Phase::forward, "activations between stages",
        per_direction, msg, 2, paths.pp);
    add(K::send_recv, CommGroup::pp, Phase::backward, "activation grads between stages",
        per_direction, msg, 2, paths.pp);
    // Scatter/gather: every received 1/tp shard is all-gathered inside the TP group. A stage
    // receives half of the messages it exchanges: (sends + receives) / 2 per direction pair.
    if (scatter) {
      add(K::all_gather, CommGroup::tp, Phase::forward, "pipeline input shards (scatter/gather)",
          per_direction / 2 + per_direction % 2, act, p.tp, paths.tp);
      add(K::all_gather, CommGroup::tp, Phase::backward,
          "pipeline grad shards (scatter/gather)", per_direction / 2, act, p.tp, paths.tp);
    }
  }

  // Mixture of experts, per MoE layer and micro-batch (token_dispatcher.py): the layer sees
  // this GPU's sequence-parallel shard of T tokens, each sent to top_k experts.
  // The MTP modules' MoE layers (on the last stage) exchange their tokens as the others do.
  int64_t mtp_moe = 0;
  if (st.mtp)
    for (const LayerKind& k : m.mtp_kinds()) mtp_moe += k.moe ? m.mtp_layers : 0;
  if (st.moe_layers + mtp_moe > 0 && m.moe.enabled()) {
    const int64_t Lm = st.moe_layers + mtp_moe;
    const MoeSpec& e = m.moe;
    const double T = tokens / p.tp;
    const double k = static_cast<double>(e.top_k);
    const double E = static_cast<double>(e.experts);
    // The routed tokens' width: a latent MoE dispatches its latent-wide tokens
    // (fc1_latent_proj runs before the dispatch, moe_layer.py at NVIDIA/Megatron-LM d98e8a64;
    // the flex dispatcher's hidden_dim is moe_latent_size, token_dispatcher.py line 1535).
    const double h = static_cast<double>(m.moe_token_dim());
    // Dropless: every copy is sent; a capacity factor pads each expert to its capacity.
    const double copies = T * k * (e.capacity_factor > 0 ? e.capacity_factor : 1);
    // The busiest rank receives imbalance x the mean (capped by the capacity when drops apply,
    // and by the rank's token budget, plan.moe_rank_capacity_factor).
    const double busiest = e.capacity_factor > 0 ? 1 : p.busiest_rank_load();
    // DeepEP and HybridEP dispatch low-precision tokens in fp8 with their scales; the combine
    // and every gradient stay 16-bit.
    const bool flex = p.moe_dispatcher == MoeDispatcher::flex;
    const double dispatch_bytes = flex && low_precision(p.precision)
                                      ? gemm_element_bytes(p.precision)
                                      : a;
    const double remote = flex_remote_scale(m, p, paths.ep);
    auto a2a = [&](Phase phase, std::string_view what, int64_t count, double bytes) {
      if (p.ep <= 1 || count <= 0 || bytes <= 0) return;
      CommOp op{K::all_to_all, CommGroup::ep, phase, what, count, bytes, p.ep,
                paths.ep.link ? paths.ep.link->id : std::string(), 0};
      op.time_s = all_to_all_time_s(bytes * busiest, paths.ep, remote);
      ops.push_back(std::move(op));
    };
    const int64_t n = Lm * mb;
    if (p.moe_dispatcher == MoeDispatcher::allgather) {
      // Hidden states, routing map and probabilities gathered over expert TP x EP; the combine
      // is a reduce-scatter; the backward swaps them.
      const int g = p.etp * p.ep;
      const double hidden = g * T * h * a;
      add(K::all_gather, CommGroup::ep, Phase::forward, "hidden states over expert TP x EP", n,
          hidden, g, paths.tp_ep);
      add(K::all_gather, CommGroup::ep, Phase::forward, "routing map and probabilities", n,
          g * T * E * 5, g, paths.tp_ep);
      add(K::reduce_scatter, CommGroup::ep, Phase::forward, "expert outputs (combine)", n, hidden,
          g, paths.tp_ep);
      add(K::reduce_scatter, CommGroup::ep, Phase::backward, "hidden-state grads", n, hidden, g,
          paths.tp_ep);
      add(K::all_gather, CommGroup::ep, Phase::backward, "expert output grads", n, hidden, g,
          paths.tp_ep);
      if (full) {
        add(K::all_gather, CommGroup::ep, Phase::recompute, "hidden states, re-run", replays(n), hidden,
            g, paths.tp_ep);
        add(K::reduce_scatter, CommGroup::ep, Phase::recompute, "expert outputs, re-run", replays(n),
            hidden, g, paths.tp_ep);
      }
    } else {
      // The per-expert token counts go round expert TP x EP first (then a device-host sync);
      // flex computes its layout on the device.
      if (!flex)
        add(K::all_gather, CommGroup::ep, Phase::forward, "token counts per expert", n, 8 * E,
            p.etp * p.ep, paths.tp_ep);
      a2a(Phase::forward, "tokens to their experts (dispatch)", n, copies * h * dispatch_bytes);
      a2a(Phase::forward, "expert outputs back (combine)", n, copies * h * a);
      a2a(Phase::backward, "output grads to the experts", n, copies * h * a);
      a2a(Phase::backward, "input grads back to the tokens", n, copies * h * a);
      if (!flex) {  // flex carries the probabilities with the tokens
        a2a(Phase::forward, "routing probabilities", n, copies * 4);
        a2a(Phase::backward, "routing probability grads", n, copies * 4);
      }
      if (full) {
        a2a(Phase::recompute, "dispatch, re-run", replays(n), copies * h * dispatch_bytes);
        a2a(Phase::recompute, "combine, re-run", replays(n), copies * h * a);
      }
    }
    // Expert TP: the dispatched tokens are gathered over the expert-TP group before the experts
    // and their outputs reduce-scattered after; the backward mirrors them.
    if (p.etp > 1) {
      const double gathered = copies * p.etp * h * a;
      add(K::all_gather, CommGroup::etp, Phase::forward, "dispatched tokens over expert TP", n,
          gathered, p.etp, paths.etp);
      add(K::reduce_scatter, CommGroup::etp, Phase::forward, "expert outputs over expert TP", n,
          gathered, p.etp, paths.etp);
      add(K::all_gather, CommGroup::etp, Phase::backward, "expert output grads over expert TP", n,
          gathered, p.etp, paths.etp);
      add(K::reduce_scatter, CommGroup::etp, Phase::backward, "expert input grads over expert TP",
          n, gathered, p.etp, paths.etp);
    }
    // Load-balancing loss: the per-expert token counts summed over TP x CP each layer.
    if (p.tp * p.cp > 1)
      add(K::all_reduce, CommGroup::tp, Phase::forward, "router load (auxiliary loss)", n, 4 * E,
          p.tp * p.cp, paths.tp);
  }

  // Data parallelism over DP x CP (param_and_grad_buffer.py): bucketed gradient reduction.
  const int dp_size = p.dp * p.cp;
  const int zero = p.effective_zero_stage();
  const double grad_bytes =
      p.precision == Precision::fp32 || (p.precision != Precision::fp16 && p.grad_reduce_in_fp32)
          ? 4
          : 2;
  const double param_bytes = p.precision == Precision::fp32 ? 4 : (p.fp8_param_gather ? 1 : 2);
  if (dp_size > 1) {
    if (zero >= 3) {
      // FSDP-style: every micro-batch gathers each layer's parameters before its forward and
      // again before its backward, and reduce-scatters its gradients after the backward. So do
      // the embedding and the output layer (FSDP's root module, its post-backward hook at the end
      // of each micro-batch's backward): on the DP stream during the backward like the layers',
      // not after the step's last backward, where micro-batches' worth of them once outgrew the
      // drain that hides the sync (issue 38: a doubled batch up to 0.45 % dearer a sample). FSDP
      // and Megatron FSDP gather a transformer layer at a time; DeepSpeed each sub-module (the
      // QKV, projection, and MLP matrices: 4, or 5 with a gated MLP's two inputs).
      const double layer = st.layer_parameters;
      const int64_t modules =
          p.execution.zero3_fetch == Zero3Fetch::module ? 2 + ffn_matrices(m.ffn_type) : 1;
      // Each layer is gathered at its own size: the dense layers (a hybrid's: their mean) and
      // the MoE layers' attention, router and shared experts over DP; their routed experts,
      // sharded over the expert data-parallel group as the gradients and optimizer state are
      // (Megatron FSDP's expert data-parallel buffers; torchtitan's experts under their own
      // fully_shard over the mesh left by EP), over that group, a layer at a time.
      const double moe_layers = static_cast<double>(st.moe_layers);
      const double dense_layers = static_cast<double>(L) - moe_layers;
      const bool mtp_moe = st.mtp && m.is_moe_layer(m.layers - 1);
      const double expert_layers = moe_layers + (mtp_moe ? static_cast<double>(m.mtp_layers) : 0);
      const double routed = expert_layers > 0 ? st.expert_parameters / expert_layers : 0;
      const double moe_layer = st.moe_layer_parameters - routed;
      // Static names (CommOp::what is not copied).
      struct Names {
        std::string_view gather, again, gradients;
      };
      auto gather = [&](const Names& what, double layers, double size) {
        if (layers <= 0 || size <= 0) return;
        const int64_t n = std::llround(layers) * mb * modules;
        const double piece = size / static_cast<double>(modules);
        add(K::all_gather, CommGroup::dp, Phase::forward, what.gather, n, piece * param_bytes,
            dp_size, paths.dp);
        add(K::all_gather, CommGroup::dp, Phase::backward, what.again, n, piece * param_bytes,
            dp_size, paths.dp);
        add(K::reduce_scatter, CommGroup::dp, Phase::backward, what.gradients, n,
            piece * grad_bytes, dp_size, paths.dp);
      };
      gather({"layer parameters (ZeRO-3)", "layer parameters again (ZeRO-3)",
              "layer gradients (ZeRO-3)"},
             dense_layers, layer);
      gather({"MoE layer parameters but the experts (ZeRO-3)",
              "MoE layer parameters but the experts, again (ZeRO-3)",
              "MoE layer gradients but the experts (ZeRO-3)"},
             moe_layers, moe_layer);
      const int edp = p.edp();
      if (routed > 0 && edp > 1) {
        const int64_t n = std::llround(expert_layers) * mb;
        add(K::all_gather, CommGroup::edp, Phase::forward, "expert parameters (ZeRO-3)", n,
            routed * param_bytes, edp, paths.edp);
        add(K::all_gather, CommGroup::edp, Phase::backward, "expert parameters again (ZeRO-3)",
            n, routed * param_bytes, edp, paths.edp);
        add(K::reduce_scatter, CommGroup::edp, Phase::backward, "expert gradients (ZeRO-3)", n,
            routed * grad_bytes, edp, paths.edp);
      }
      // The embedding, the output layer and the MTP modules but their experts.
      const double rest = st.parameters - layer * dense_layers - moe_layers * moe_layer -
                          routed * expert_layers;
      add(K::all_gather, CommGroup::dp, Phase::forward, "embedding/output parameters (ZeRO-3)",
          2 * mb, rest * param_bytes, dp_size, paths.dp);
      add(K::reduce_scatter, CommGroup::dp, Phase::backward,
          "embedding/output gradients (ZeRO-3)", mb, rest * grad_bytes, dp_size, paths.dp);
    } else {
      const double dense = st.parameters - st.expert_parameters;
      const int64_t buckets = dp_buckets(dense, p);
      const double bucket = dense / static_cast<double>(buckets);
      if (zero == 2 && p.execution.grad_reduce_every_micro_batch) {
        // DeepSpeed ZeRO-2 reduce-scatters the gradients of every micro-batch's backward into
        // the owning rank's shard (stage_1_and_2.py, reduce_ready_partitions_and_remove_grads).
        add(K::reduce_scatter, CommGroup::dp, Phase::backward,
            "gradient buckets, every micro-batch (ZeRO-2)", buckets * mb, bucket * grad_bytes,
            dp_size, paths.dp);
      } else if (zero == 0) {
        add(K::all_reduce, CommGroup::dp, Phase::gradient_sync, "gradient buckets", buckets,
            bucket * grad_bytes, dp_size, paths.dp);
      } else {
        add(K::reduce_scatter, CommGroup::dp, Phase::gradient_sync,
            "gradient buckets (distributed optimizer)", buckets, bucket * grad_bytes, dp_size,
            paths.dp);
      }
      if (zero >= 1)
        add(K::all_gather, CommGroup::dp, Phase::optimizer,
            "updated parameter buckets (distributed optimizer)", buckets, bucket * param_bytes,
            dp_size, paths.dp);
    }
  }

  // Expert parameters live in their own buffers, reduced over the expert data-parallel group.
  if (st.expert_parameters > 0 && zero < 3) {
    const int edp = p.edp();
    const int64_t buckets = dp_buckets(st.expert_parameters, p);
    const double bucket = st.expert_parameters / static_cast<double>(buckets);
    if (zero == 0)
      add(K::all_reduce, CommGroup::edp, Phase::gradient_sync, "expert gradient buckets", buckets,
          bucket * grad_bytes, edp, paths.edp);
    else
      add(K::reduce_scatter, CommGroup::edp, Phase::gradient_sync,
          "expert gradient buckets (distributed optimizer)", buckets, bucket * grad_bytes, edp,
          paths.edp);
    if (zero >= 1)
      add(K::all_gather, CommGroup::edp, Phase::optimizer,
          "updated expert parameter buckets (distributed optimizer)", buckets,
          bucket * param_bytes, edp, paths.edp);
  }

  // Muon (optimizer.h): --muon-tp-mode duplicated all-gathers each TP-split matrix's fp32
  // momentum-derived update over its TP (expert-TP) group before the Newton-Schulz iterations;
  // every rank then keeps its own slice of the result, so nothing is scattered back
  // (Emerging-Optimizers' muon_utils.py newton_schulz_tp). A rank gathers the matrices it
  // steps, rounded to whole ones.
  if (p.optimizer == Optimizer::muon)
    for (const MuonMatrix& x : muon_matrices(m, p, st))
      add(K::all_gather, x.expert ? CommGroup::etp : CommGroup::tp, Phase::optimizer, x.what,
          std::llround(muon_owned(x, p)), 4 * x.rows * x.cols, x.shards,
          x.expert ? paths.etp : paths.tp);

  // Tied embeddings: first and last stage sum their copies' gradients (V/tp x h, fp32); a rank
  // that holds both (a V's first) has one copy.
  if (p.pp > 1 && m.tied_embeddings && st.first != st.last) {
    const double rows = static_cast<double>(padded_vocab(m.vocab, p.tp)) / p.tp;
    add(K::all_reduce, CommGroup::embedding, Phase::gradient_sync,
        "tied word-embedding grads (first and last stage)", 1, rows * m.hidden * grad_bytes, 2,
        paths.embedding);
  }
  // Gradient-norm clipping: one fp32 scalar over the model-parallel group (the whole world
  // with the distributed optimizer); fp16 adds the found-inf check of the loss scaler.
  const int norm_group = zero >= 1 ? p.tp * p.pp * dp_size : p.tp * p.pp;
  const CommPath& norm_path = zero >= 1 ? paths.dp : paths.model_parallel;
  add(K::all_reduce, CommGroup::model_parallel, Phase::optimizer, "gradient norm", 1, 4,
      norm_group, norm_path);
  if (p.precision == Precision::fp16)
    add(K::all_reduce, CommGroup::model_parallel, Phase::optimizer, "loss-scaler found-inf", 1,
        4, norm_group, norm_path);
  if (st.last)
    add(K::all_reduce, CommGroup::dp, Phase::optimizer, "loss for logging", 1, 8, dp_size,
        paths.dp);
  return ops;
}

}  // namespace stepcast
