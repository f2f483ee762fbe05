// Step 2 of an estimate: what one micro-batch costs on one pipeline stage. Compute per layer
// (compute.cpp), the census of its collectives (census.cpp) priced on the links its groups cross,
// the part of that communication the software overlaps with compute, and the stage's memory.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "estimate/step.h"
#include "stepcast/compute.h"
#include "stepcast/offload.h"
#include "stepcast/optimizer.h"
#include "stepcast/overlap.h"
#include "stepcast/sharded_gathers.h"

namespace stepcast::detail {

double census_time(const std::vector<CommOp>& ops, CommGroup group, Phase phase) {
  double t = 0;
  for (const auto& op : ops)
    if (op.group == group && op.phase == phase) t += op.total_s();
  return t;
}

namespace {

// census_time of every group and phase at once: one pass over the census, each sum taken in
// the census's order as census_time takes it (the same doubles). A stage's cost reads a dozen
// of them; scanned for each, they were 6 % of an MoE search's instructions.
class CensusTimes {
 public:
  explicit CensusTimes(const std::vector<CommOp>& ops) {
    for (const auto& op : ops) at(op.group, op.phase) += op.total_s();
  }
  double operator()(CommGroup group, Phase phase) const {
    return sums_[index(group, phase)];
  }

 private:
  static constexpr size_t kPhases = EnumNames<Phase>::values.size();
  static size_t index(CommGroup group, Phase phase) {
    return static_cast<size_t>(group) * kPhases + static_cast<size_t>(phase);
  }
  double& at(CommGroup group, Phase phase) { return sums_[index(group, phase)]; }
  std::array<double, EnumNames<CommGroup>::values.size() * kPhases> sums_{};
};

}  // namespace

double exposed_after_overlap(double comm, double window, double slowdown) {
  return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
}

namespace {

// The data-parallel collectives of `phase` that reduce gradients (all-reduce, reduce-scatter) or
// gather parameters (all-gather), per micro-batch when `micro_batches` > 1 (ZeRO-2's every
// micro-batch), as one burst.
DpBurst dp_burst(const std::vector<CommOp>& ops, Phase phase, bool gather,
                 const StagePaths& paths, double micro_batches) {
  DpBurst b;
  for (const auto& op : ops) {
    if (op.phase != phase || (op.group != CommGroup::dp && op.group != CommGroup::edp) ||
        (op.kind == CollectiveKind::all_gather) != gather)
      continue;
    const CommPath& path = op.group == CommGroup::dp ? paths.dp : paths.edp;
    const double fixed = collective_fixed_s(op.kind, op.group_size, path);
    const double count = static_cast<double>(op.count) / micro_batches;
    b.transfer_s += count * std::max(0.0, op.time_s - fixed);
    b.fixed_s += fixed;
    b.buckets += count;
  }
  return b;
}

// One layer's sequence-parallel collectives per micro-batch (census.cpp): forward, all-gathers
// of the QKV and fc1 inputs and reduce-scatters of the proj and fc2 outputs; backward, four
// all-gathers and two reduce-scatters; full recompute replays the forward's.
struct SpCollectives {
  double all_gather = 0, reduce_scatter = 0;  // one of each, seconds
};
SpCollectives sp_collectives(const ModelSpec& m, const Plan& p, const CommPath& path) {
  const double act = static_cast<double>(p.micro_batch) * m.seq_len / p.cp * m.hidden *
                     activation_bytes(p.precision);
  return {collective_time_s(CollectiveKind::all_gather, act, p.tp, path),
          collective_time_s(CollectiveKind::reduce_scatter, act, p.tp, path)};
}

}  // namespace

ByPass layer_tp_comm_s(const ModelSpec& m, const Plan& p, const CommPath& path) {
  const SpCollectives c = sp_collectives(m, p, path);
  // A transformer layer's two TP-split blocks, a hybrid layer's one.
  const double blocks = m.hybrid() ? 1 : 2;
  const double forward = blocks * c.all_gather + blocks * c.reduce_scatter;
  const double backward = 2 * blocks * c.all_gather + blocks * c.reduce_scatter;
  return {forward, backward + full_recompute_share(m, p) * forward};
}

namespace {

// One TP-split block under Transformer Engine's userbuffers, per micro-batch: `in` the GEMM that
// consumes the gathered input (QKV, fc1), `out` the one whose output is reduce-scattered (proj,
// fc2). Forward, the all-gather ring-exchanges with `in` and the reduce-scatter is pipelined in 4
// splits behind `out`; backward, the output gradient's all-gather ring-exchanges with `out`'s
// dgrad, the re-gathered input overlaps `in`'s dgrad in bulk and its input-gradient
// reduce-scatter `in`'s wgrad (each of `in`'s time). Where the schedule runs the weight
// gradients apart (`wgrad_apart`: the zero-bubble schedules' W blocks), no wgrad runs beside
// that reduce-scatter: Transformer Engine refuses its bulk wgrad overlap with
// delay_wgrad_compute (transformer_engine/pytorch/module/_common.py, WeightGradStore, at
// d0067d0), and its plain reduce-scatter is waited for at the end of the module's backward
// (layernorm_linear.py, dgrad_work), so it stays exposed in the input-gradient block. (Hidden
// behind a wgrad that ran in W, a slower GPU shortened B: issue 38's seed 49251, ZB-V with an
// MI350X stage, its peaks x 0.798 0.001 % faster.)
// Returns the exposed time per pass and the GEMM time busy hiding the collectives.
struct BlockTp {
  ByPass exposed, busy;
};
BlockTp block_tp_overlap(const SpCollectives& c, double in, double out, int tp, double slowdown,
                         bool wgrad_apart) {
  constexpr int kReduceScatterSplits = 4;
  BlockTp b;
  b.exposed.forward =
      ring_exchange_overlap_s(c.all_gather, in, tp, slowdown) +
      pipelined_reduce_scatter_s(c.reduce_scatter, out, kReduceScatterSplits, slowdown);
  b.exposed.backward = ring_exchange_overlap_s(c.all_gather, out, tp, slowdown) +
                       bulk_overlap_s(c.all_gather, in, slowdown) +
                       (wgrad_apart ? c.reduce_scatter
                                    : bulk_overlap_s(c.reduce_scatter, in, slowdown));
  b.busy.forward = ring_exchange_hidden_s(c.all_gather, in, tp) +
                  pipelined_reduce_scatter_hidden_s(c.reduce_scatter, out, kReduceScatterSplits);
  b.busy.backward = ring_exchange_hidden_s(c.all_gather, out, tp) +
                    bulk_hidden_s(c.all_gather, in) +
                    (wgrad_apart ? 0.0 : bulk_hidden_s(c.reduce_scatter, in));
  return b;
}

}  // namespace

// Transformer Engine's userbuffer overlap of one layer's TP collectives, per micro-batch
// (NeMo's ub configs, e.g. ub_cfg_h100_h12288_tp8_mbs2_seqlen2048.yaml): a transformer layer's
// attention (QKV, proj) and MLP (fc1, fc2) blocks each as block_tp_overlap above; full
// recompute replays the forward.
TpOverlap te_overlapped_tp_s(const ModelSpec& m, const Plan& p, const LayerCompute& layer,
                             const CommPath& path, double slowdown, const LayerKind& kind) {
  const SpCollectives c = sp_collectives(m, p, path);
  const LayerGemms& g = layer.gemms;
  const PipelineSchedule schedule = p.effective_schedule();
  const bool wgrad_apart = schedule == PipelineSchedule::zero_bubble ||
                           schedule == PipelineSchedule::zbv ||
                           schedule == PipelineSchedule::dualpipev;
  TpOverlap out;
  if (kind.block != Block::transformer) {
    // A hybrid layer's one block: its input and output GEMMs carry its collectives (the Mamba
    // mixer's in_proj and out_proj stand in qkv and proj; an MLP or MoE block's fc1 and fc2).
    const bool mlp = kind.block == Block::mlp;
    const BlockTp b =
        block_tp_overlap(c, mlp ? g.fc1_s : g.qkv_s, mlp ? g.fc2_s : g.proj_s, p.tp, slowdown,
                         wgrad_apart);
    out.exposed = b.exposed;
    (mlp ? out.mlp_busy : out.attention_busy) = b.busy;
  } else {
    const BlockTp attention =
        block_tp_overlap(c, g.qkv_s, g.proj_s, p.tp, slowdown, wgrad_apart);
    const BlockTp mlp = block_tp_overlap(c, g.fc1_s, g.fc2_s, p.tp, slowdown, wgrad_apart);
    out.exposed = {attention.exposed.forward + mlp.exposed.forward,
                   attention.exposed.backward + mlp.exposed.backward};
    out.attention_busy = attention.busy;
    out.mlp_busy = mlp.busy;
  }
  out.exposed.backward += full_recompute_share(m, p) * out.exposed.forward;
  return out;
}

// Parameters one GPU of a stage holds, with Megatron's padded vocabulary. Attention and the
// MLP are split over TP (their replicated parts whole), routed experts over EP x ETP; norms and
// the router are replicated.
StageShape stage_shape(const ModelSpec& m, const Plan& p, int index, const LayerMix& mix) {
  StageShape st;
  st.index = index;
  st.layers = std::llround(mix.total());
  st.moe_layers = std::llround(mix.moe_total());
  const Schedule& schedule = schedule_of(p);
  const ScheduleShape pipe = schedule_shape(p);
  st.first = schedule.holds_first(pipe, index);
  st.last = schedule.holds_last(pipe, index);
  for (int c = 0; c < pipe.chunks; ++c) {  // a V's turn: an edge that stays on this rank
    const int vs = schedule.virtual_stage(pipe, index, c);
    st.turn = st.turn || (vs + 1 < p.pp * pipe.chunks && schedule.link_after(pipe, vs) < 0);
  }
  st.in_flight = schedule.in_flight(pipe, index);
  const int64_t vocab = padded_vocab(m.vocab, p.tp);
  const ParameterCount count = count_parameters(m, vocab, m.seq_len);
  const double h = static_cast<double>(m.hidden);
  const double norms = 2 * (m.norm == Norm::layernorm ? 2.0 * h : h);
  const double row_bias = m.bias ? h : 0;  // the row-parallel output's bias, whole on every rank
  const double att = attention_parameters(m), att_whole = attention_replicated_parameters(m);
  const double attention = (att - att_whole) / p.tp + att_whole;
  auto mlp = [&](double f) { return (mlp_parameters(m, f) - row_bias) / p.tp + row_bias; };
  st.layer_parameters = attention + mlp(static_cast<double>(m.ffn_hidden)) + norms;
  double routed = 0;
  if (m.moe.enabled()) {
    const MoeSpec& e = m.moe;
    routed = count.routed_experts / (static_cast<double>(p.ep) * p.etp);
    const double shared =
        e.shared_experts > 0 ? mlp(static_cast<double>(e.shared_experts * e.shared_ffn_hidden)) : 0;
    const double router = h * static_cast<double>(e.experts) + static_cast<double>(e.experts);
    // A latent MoE's projections are whole on every TP rank (parallel_mode "duplicated").
    st.moe_layer_parameters =
        attention + norms + router + count.latent_projections + shared + routed;
  }
  const double moe = mix.moe_total();
  st.parameters = st.layer_parameters * (mix.total() - moe) + st.moe_layer_parameters * moe;
  st.expert_parameters = routed * moe;
  // One GPU's parameters of a dense layer of each hybrid kind (for the MTP modules' layers).
  double mamba_layer = 0, gdn_layer = 0, attention_layer = 0, mlp_layer = 0;
  if (m.hybrid()) {
    // One block behind one norm per layer; the Mamba mixer split over TP by heads and groups
    // (its in_proj column-parallel, out_proj row-parallel; the conv, the per-head vectors and
    // the gated norm follow their channels), the out_proj bias whole.
    const double norm = norms / 2;
    const double mamba = mamba_layer = (mamba_parameters(m) - row_bias) / p.tp + row_bias + norm;
    // A Gated DeltaNet mixer splits by heads as Megatron-Core's GatedDeltaNet does (in_proj
    // column-parallel, out_proj row-parallel, conv and per-head vectors with their channels).
    const double gdn = gdn_layer = gdn_parameters(m) / p.tp + norm;
    attention_layer = attention + norm;
    mlp_layer = mlp(static_cast<double>(m.ffn_hidden)) + norm;
    st.moe_layer_parameters -= attention + norm;  // an `E` holds the MoE block alone
    const double dense = mix.mamba * mamba + mix.attention * attention_layer +
                         mix.mlp * mlp_layer + mix.gdn * gdn;
    const double dense_layers = mix.mamba + mix.attention + mix.mlp + mix.gdn;
    st.parameters = dense + st.moe_layer_parameters * moe;
    // ZeRO-3 gathers a layer at a time: the mean of the stage's other layers.
    st.layer_parameters = dense_layers > 0 ? dense / dense_layers : 0;
  }
  st.attention_layers = std::llround(mix.attention);
  st.mamba_layers = std::llround(mix.mamba);
  st.mlp_layers = std::llround(mix.mlp);
  st.gdn_layers = std::llround(mix.gdn);
  if (st.first) st.parameters += count.embedding / p.tp + count.position;
  if (st.last) {
    st.parameters += count.final_norm;
    // The last stage holds the output layer; tied embeddings keep a copy there unless the stage
    // holds the embedding too (pp = 1, or a V's first rank).
    if (!m.tied_embeddings || !st.first) st.parameters += count.embedding / p.tp;
    // Multi-token prediction modules run after the last layer, on the last stage: a layer like
    // the last, the column-parallel 2h -> h projection and three norms each.
    // A hybrid module holds model.mtp_pattern's layers; repeated modules hold one's.
    if (m.mtp_layers > 0) {
      st.mtp = true;
      const double mtp = static_cast<double>(m.mtp_parameter_modules());
      double layers = 0;
      auto per_kind = [&](const LayerKind& k) {
        switch (k.block) {
          case Block::mamba: return mamba_layer;
          case Block::gdn: return gdn_layer;
          case Block::attention: return attention_layer;
          case Block::mlp: return mlp_layer;
          case Block::transformer: break;
        }
        return st.layer_parameters;
      };
      for (const LayerKind& k : m.mtp_kinds()) {
        layers += k.moe ? st.moe_layer_parameters : per_kind(k);
        if (k.moe) st.expert_parameters += mtp * routed;
      }
      st.parameters += mtp * (layers + 2 * h * h / p.tp + 1.5 * norms);
    }
  }
  return st;
}

// The communication paths of stage i: its own group's, with the pipeline link to the next stage
// and the data-parallel rings replaced where they leave the group. A message between two groups
// leaves one group's network ports and enters the other's, over the inter-group link: it runs at
// the pace of the slower side.
StagePaths paths_for_stage(const Scenario& sc, const Plan& p, const PipelineLayout& lay, int i) {
  const ClusterSpec& cl = sc.cluster;
  const ClusterGroup& here = cl.groups[lay.groups[i]];
  StagePaths paths = stage_paths(p, here);
  auto slower = [](const CommPath& a, const CommPath& b) { return slowest(a, b); };
  auto between = [&](int a, int b) {
    return slower(inter_group_path(cl.groups[a], cl.inter_group_link, 1, 2),
                  inter_group_path(cl.groups[b], cl.inter_group_link, 1, 2));
  };
  const int next = lay.groups[(i + 1) % p.pp];
  if (p.pp > 1 && next != lay.groups[i]) paths.pp = between(lay.groups[i], next);
  const Schedule& schedule = schedule_of(p);
  const int last = lay.groups[schedule.home(schedule_shape(p), p.pp * p.vpp - 1).rank];
  if (p.pp > 1 && last != lay.groups[0]) paths.embedding = between(lay.groups[0], last);
  if (lay.dp_groups.size() > 1) {
    // A ring over several groups runs at the pace of its slowest hop: any group's share of its
    // own network onto the inter-group link, or any group's own ring inside it. The dense
    // gradients' ring (DP x CP) and the experts' (expert DP) each. Each figure is the worst
    // hop's: the lowest bandwidths, the longest fill time (half-peak bytes over bandwidth), the
    // most nodes to step through and the highest latency of a step between nodes (a link
    // inside a node has a latency floor per collective, not per step of a ring across nodes).
    // Taking the lowest-bandwidth hop whole gave the ring that hop's node count: a mixed MI355X
    // and GH200 set with 4 NICs a node on the MI355X instead of 8 tied the GH200's bandwidth,
    // stepped through the MI355X's 3 nodes for the GH200's 6 and ran 2.1 % faster (seed 8205
    // of the invariant suite, issue 38).
    auto ring = [&](auto placement_of, auto own_of) {
      CommPath out;
      bool first = true;
      double fill_s = 0, latency_s = 0, allreduce_Bps = 0;
      int nodes = 2;
      for (int g : lay.dp_groups) {
        const ClusterGroup& group = cl.groups[g];
        const StagePaths own = stage_paths(p, group);
        const GroupPlacement place = placement_of(own);
        for (const CommPath& hop :
             {inter_group_path(group, cl.inter_group_link, place.per_node, place.nodes()),
              own_of(own)}) {
          if (hop.busbw_Bps > 0) fill_s = std::max(fill_s, hop.half_peak_bytes / hop.busbw_Bps);
          if (hop.nodes > 1) latency_s = std::max(latency_s, hop.latency_s);
          nodes = std::max(nodes, hop.nodes);
          allreduce_Bps = first ? hop.allreduce_busbw_Bps
                                : std::min(allreduce_Bps, hop.allreduce_busbw_Bps);
          if (first || hop.busbw_Bps < out.busbw_Bps) out = hop;
          first = false;
        }
      }
      out.allreduce_busbw_Bps = allreduce_Bps;
      out.half_peak_bytes = fill_s * out.busbw_Bps;
      out.latency_s = latency_s;
      out.nodes = nodes;
      return out;
    };
    paths.dp = ring([](const StagePaths& s) { return s.dp_placement; },
                    [](const StagePaths& s) { return s.dp; });
    paths.edp = ring([](const StagePaths& s) { return s.edp_placement; },
                     [](const StagePaths& s) { return s.edp; });
  }
  return paths;
}

namespace {

// The layers of a mix with what each kind costs: at most kLayerKinds' kinds, held in place (an
// estimate makes one per stage and chunk).
struct KindCost {
  LayerKind kind;
  double count = 0;
  LayerCompute compute;
};
struct KindCosts {
  std::array<KindCost, kLayerKinds.size()> items;
  size_t size = 0;
  const KindCost* begin() const { return items.data(); }
  const KindCost* end() const { return items.data() + size; }
};

// A stage's layers by kind with each kind's cost (a layer's cost depends on its kind, not on how
// many there are): found in `layers`, those of the plan's other stages on GPU group `group`,
// else computed (and added there).
KindCosts kind_costs(const ModelSpec& m, const Plan& p, const Device& d, const LayerMix& mix,
                     KnownLayers* layers, int group) {
  KindCosts out;
  for (const LayerKind& kind : kLayerKinds) {
    const double count = mix.of(kind);
    if (!(count > 0)) continue;
    if (const LayerCompute* found = layers ? layers->find(group, kind) : nullptr) {
      out.items[out.size++] = {kind, count, *found};
    } else {
      out.items[out.size++] = {kind, count, layer_compute(m, p, d, kind)};
      if (layers) layers->add(group, kind, out.items[out.size - 1].compute);
    }
  }
  return out;
}

// The least time one layer's forward can take on one GPU: its FLOPs there (the GEMMs, the
// router's included, at the plan's dense peak; the attention core at the peak its kernels run
// at, a causal mask halving a full matrix) at 100 % of the peak. The backward is twice that.
double forward_at_peak_s(const ModelSpec& m, const Plan& p, const Device& d, LayerKind kind) {
  if (!(d.peak_flops > 0) || !(d.attention_peak > 0)) return 0;
  const LayerFlops f = layer_forward_flops(m, static_cast<double>(p.micro_batch),
                                           static_cast<double>(m.seq_len), kind);
  const double gpus = static_cast<double>(p.tp) * p.cp;
  const double attention =
      kind.windowed ? f.attention
                    : 0.5 * f.attention * m.chunked_attention_share(static_cast<double>(m.seq_len));
  return (f.linear() / d.peak_flops + (attention + f.scan + f.conv) / d.attention_peak) / gpus;
}

// A layer's compute as measured (calibration.layer_profiles): its forward and backward seconds,
// their parts (GEMMs, attention core, recompute) in the roofline's proportions, which the
// overlap model needs and a profile of the whole layer does not give. No GPU runs a layer
// faster than its dense peak allows (`at_peak_s`, the forward's least time): a profile faster
// than that (of another precision, model or GPU) is taken at the peak. Returns whether it was.
bool use_profile(LayerCompute& c, const LayerProfile& lp, double at_peak_s) {
  const double forward = std::max(lp.forward_s, at_peak_s);
  const double backward = std::max(lp.backward_s, 2 * at_peak_s);
  const double f = c.forward_s > 0 ? forward / c.forward_s : 1;
  const double b = c.backward_s > 0 ? backward / c.backward_s : 1;
  c.forward_s = forward;
  c.backward_s = backward;
  c.recompute_s *= f;
  c.linear_forward_s *= f;
  c.linear_backward_s *= b;
  c.weight_grad_s *= b;
  c.linear_recompute_s *= f;
  c.attention_forward_s *= f;
  c.attention_backward_s *= b;
  c.attention_recompute_s *= f;
  for (double* g : {&c.gemms.qkv_s, &c.gemms.proj_s, &c.gemms.fc1_s, &c.gemms.fc2_s,
                    &c.gemms.experts_s})
    *g *= f;
  return forward > lp.forward_s || backward > lp.backward_s;
}

// A field of LayerCompute summed over the layers of a mix.
template <class Field>
double sum_of(const KindCosts& kinds, Field field) {
  double total = 0;
  for (const auto& k : kinds) total += k.count * field(k.compute);
  return total;
}

// The same over the layers of `chunk`, one of the chunks of the stage whose layers `kinds` costs
// (the stage's mix holds every kind of its chunks'): the sum sum_of takes over the chunk's own
// kind_costs, the same terms in the same order, without building them (2.7 KB a chunk).
template <class Field>
double sum_in(const KindCosts& kinds, const LayerMix& chunk, Field field) {
  double total = 0;
  for (const auto& k : kinds) {
    const double count = chunk.of(k.kind);
    if (count > 0) total += count * field(k.compute);
  }
  return total;
}

}  // namespace

StageCost stage_cost_of(const Scenario& sc, const Plan& p, const PipelineLayout& lay, int i,
                        const MemoryBreakdown* memory, KnownLayers* known) {
  LayerMix mix;
  for (const auto& c : lay.chunks_of(i)) mix += c;
  return stage_cost(sc, p, stage_shape(sc.model, p, i, mix), mix, lay.groups[i],
                    paths_for_stage(sc, p, lay, i), lay.chunks_of(i), memory, known);
}

StageCost stage_cost(const Scenario& sc, const Plan& p, const StageShape& shape,
                     const LayerMix& mix, int group, const StagePaths& paths,
                     std::span<const LayerMix> chunk_mix, const MemoryBreakdown* memory,
                     KnownLayers* known) {
  const ModelSpec& m = sc.model;
  const GpuSpec& gpu = sc.cluster.groups[group].gpu;
  const Device device = make_device(gpu, p.precision, sc.calibration);
  const double slowdown = sc.calibration.overlap_slowdown;
  KindCosts kinds = kind_costs(m, p, device, mix, known, group);
  bool profile_at_peak = false;
  for (size_t i = 0; i < kinds.size; ++i) {  // measured layers replace the roofline's
    KindCost& k = kinds.items[i];
    if (k.kind.block != Block::transformer) continue;  // profiles are of transformer layers
    if (const LayerProfile* lp = sc.calibration.layer_profile(
            gpu.id.empty() ? gpu.name : gpu.id, p.micro_batch, m.seq_len, p.tp, p.cp, k.kind.moe))
      profile_at_peak = use_profile(k.compute, *lp, forward_at_peak_s(m, p, device, k.kind)) ||
                        profile_at_peak;
  }
  // The output layer and loss on the last stage (and its MTP modules), the embedding on the first.
  const HeadCompute head = shape.last || shape.mtp ? head_compute(m, p, device) : HeadCompute{};
  const HeadCompute embed = shape.first ? embedding_compute(m, p, device) : HeadCompute{};
  const double mbd = static_cast<double>(p.micro_batches());
  const int zero = p.effective_zero_stage();

  StageCost c;
  c.profile_at_peak = profile_at_peak;
  StageReport& st = c.report;
  st.index = shape.index;
  st.layers = shape.layers;
  st.group = group;
  st.gpu = gpu.id.empty() ? gpu.name : gpu.id;
  st.parameters = shape.parameters;
  st.gemm_efficiency = device.gemm_efficiency;
  st.gemm_tflops = device.peak_flops * device.gemm_efficiency / 1e12;
  // Unfused attention runs its two batched GEMMs at the GEMM efficiency (compute.cpp); a fused
  // kernel at its share on a full-attention layer's forward shape.
  const double keys = static_cast<double>(m.seq_len) * m.chunked_attention_share(m.seq_len);
  st.attention_efficiency = p.flash_attention
                                ? fused_attention_efficiency(m, p, device, keys, false, false)
                                : device.cal.gemm_efficiency;
  st.communication = stage_census(m, p, shape, paths);
  const auto& ops = st.communication;
  const CensusTimes census(ops);
  const double L = mix.total();

  // Multi-token prediction on the last stage: each module runs a layer like the last one, its
  // 2h -> h projection and one more output layer and loss.
  double mtp_forward = 0, mtp_backward = 0, mtp_recompute = 0, mtp_weight_grad = 0;
  if (shape.mtp) {
    // One module's layers (the last layer's kind, or a hybrid's model.mtp_pattern).
    LayerCompute layer;
    for (const LayerKind& k : m.mtp_kinds()) {
      const LayerCompute c = layer_compute(m, p, device, k);
      layer.forward_s += c.forward_s;
      layer.backward_s += c.backward_s;
      layer.recompute_s += c.recompute_s;
      layer.weight_grad_s += c.weight_grad_s;
    }
    const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
    const double proj = gemm_time_s(tokens, static_cast<double>(m.hidden) / p.tp,
                                    2.0 * m.hidden, gemm_element_bytes(p.precision), device);
    const double n = static_cast<double>(m.mtp_layers);
    mtp_forward = n * (layer.forward_s + proj + head.forward_s);
    mtp_backward = n * (layer.backward_s + 2 * proj + head.backward_s);
    mtp_recompute = n * layer.recompute_s;
    mtp_weight_grad = n * (layer.weight_grad_s + proj + head.weight_grad_s);
  }

  StageTime& t = c.time;
  const double layers_forward = sum_of(kinds, [](const LayerCompute& l) { return l.forward_s; });
  const double layers_backward = sum_of(kinds, [](const LayerCompute& l) { return l.backward_s; });
  t.forward = layers_forward + (shape.first ? embed.forward_s : 0) +
              (shape.last ? head.forward_s : 0) + mtp_forward;
  t.backward = layers_backward + (shape.first ? embed.backward_s : 0) +
               (shape.last ? head.backward_s : 0) + mtp_backward;
  t.recompute = sum_of(kinds, [](const LayerCompute& l) { return l.recompute_s; }) + mtp_recompute;
  t.weight_grad = sum_of(kinds, [](const LayerCompute& l) { return l.weight_grad_s; }) +
                  (shape.first ? embed.weight_grad_s : 0) +
                  (shape.last ? head.weight_grad_s : 0) + mtp_weight_grad;

  // Each virtual chunk's share: its layers, plus the embedding on the model's first chunk and the
  // output layer (and MTP) on its last (a backward block carries the chunk's recompute too).
  std::vector<LayerMix> even;  // without the chunks' kinds: vpp equal shares of the mix
  std::span<const LayerMix> chunks = chunk_mix;
  if (chunks.empty()) {
    even.assign(p.vpp, mix.scaled(1.0 / p.vpp));
    chunks = even;
  }
  const int v = static_cast<int>(chunks.size());
  for (int k = 0; k < v; ++k) {
    const LayerMix& in_chunk = chunks[k];
    const bool model_first = shape.first && k == 0, model_last = shape.last && k == v - 1;
    c.chunk_forward_share.push_back(
        (sum_in(kinds, in_chunk, [](const LayerCompute& l) { return l.forward_s; }) +
         (model_first ? embed.forward_s : 0) +
         (model_last ? head.forward_s + mtp_forward : 0)) / t.forward);
    c.chunk_backward_share.push_back(
        (sum_in(kinds, in_chunk,
                [](const LayerCompute& l) { return l.backward_s + l.recompute_s; }) +
         (model_first ? embed.backward_s : 0) +
         (model_last ? head.backward_s + mtp_backward + mtp_recompute : 0)) /
        (t.backward + t.recompute));
    c.chunk_layers_share.push_back(L > 0 ? chunks[k].total() / L : 1.0 / v);
    c.chunk_weight_grad_share.push_back(
        t.weight_grad > 0
            ? (sum_in(kinds, in_chunk, [](const LayerCompute& l) { return l.weight_grad_s; }) +
               (model_first ? embed.weight_grad_s : 0) +
               (model_last ? head.weight_grad_s + mtp_weight_grad : 0)) / t.weight_grad
            : 1.0 / v);
  }

  // TP collectives sit between the GEMMs that produce and consume them: exposed, unless
  // Transformer Engine's userbuffers overlap them with those GEMMs.
  const double tp_fwd = census(CommGroup::tp, Phase::forward) / mbd;
  const double tp_bwd = census(CommGroup::tp, Phase::backward) / mbd;
  const double tp_rc = census(CommGroup::tp, Phase::recompute) / mbd;
  ByPass tp{tp_fwd, tp_bwd + tp_rc};
  std::array<TpOverlap, kLayerKinds.size()> tp_layer{};  // each kind's, by its index in `kinds`
  if (p.tp_comm_overlap && p.sequence_parallel && p.tp > 1) {
    // The embedding's, output layer's and loss's collectives are not overlapped.
    const ByPass per_layer = layer_tp_comm_s(m, p, paths.tp);
    tp = {std::max(0.0, tp.forward - L * per_layer.forward),
          std::max(0.0, tp.backward - L * per_layer.backward)};
    for (size_t i = 0; i < kinds.size; ++i) {
      const KindCost& k = kinds.items[i];
      tp_layer[i] = te_overlapped_tp_s(m, p, k.compute, paths.tp, slowdown, k.kind);
      tp.forward += tp_layer[i].exposed.forward * k.count;
      tp.backward += tp_layer[i].exposed.backward * k.count;
    }
  }
  // CP's K/V ring overlaps the attention blocks it feeds; `cp_busy`, the fraction of each
  // attention core's time it keeps busy (the same in every layer).
  const double cp_fwd = census(CommGroup::cp, Phase::forward) / mbd;
  const double cp_bwd = census(CommGroup::cp, Phase::backward) / mbd;
  const double attention_fwd =
      sum_of(kinds, [](const LayerCompute& l) { return l.attention_forward_s; });
  const double attention_bwd =
      sum_of(kinds, [](const LayerCompute& l) { return l.attention_backward_s; });
  const ByPass cp{
      exposed_after_overlap(cp_fwd, attention_fwd, slowdown),
      exposed_after_overlap(cp_bwd, attention_bwd, slowdown) +
          exposed_after_overlap(census(CommGroup::cp, Phase::recompute) / mbd,
                                sum_of(kinds, [](const LayerCompute& l) { return l.attention_recompute_s; }),
                                slowdown)};
  const ByPass cp_busy{attention_fwd > 0 ? bulk_hidden_s(cp_fwd, attention_fwd) / attention_fwd : 0,
                       attention_bwd > 0 ? bulk_hidden_s(cp_bwd, attention_bwd) / attention_bwd : 0};
  // MoE token exchange sits between the router and the experts: exposed, unless Megatron's
  // --overlap-moe-expert-parallel-comm pairs the forward of one micro-batch's layer with the
  // backward of another's (combined_1f1b.py): each of the four exchanges (dispatch and combine,
  // forward and backward) runs during one compute block of the other pass, the attention or the
  // MoE block, and only what exceeds its block stays exposed. A block's GEMMs already busy
  // hiding its TP collectives (userbuffers) and its attention core busy with CP's K/V ring hide
  // nothing more: the exchange has the rest of the block. (Hiding it behind the whole block let
  // the TP and the EP exposure each grow by what a faster GPU saved: a compute scale of 2 over 1
  // made a moe_overlap plan 0.39 % slower, issue 38.)
  auto ep_time = [&](Phase ph) {
    return (census(CommGroup::ep, ph) + census(CommGroup::etp, ph)) / mbd;
  };
  ByPass ep{ep_time(Phase::forward), ep_time(Phase::backward) + ep_time(Phase::recompute)};
  // The exposed exchanges by the pass whose compute they run beside (below): the other pass's
  // under the EP overlap.
  ByPass ep_beside = ep;
  if (p.moe_overlap && mix.moe_total() > 0) {
    const double per_layer = 1 / mix.moe_total();
    const double fwd = ep_time(Phase::forward) * per_layer, bwd = ep_time(Phase::backward) * per_layer;
    ep = {0, ep_time(Phase::recompute)};
    for (size_t i = 0; i < kinds.size; ++i) {
      const KindCost& k = kinds.items[i];
      if (!k.kind.moe) continue;
      const LayerCompute& l = k.compute;
      const LayerGemms& g = l.gemms;
      const TpOverlap& busy = tp_layer[i];
      const double attn_f_whole = g.qkv_s + g.proj_s + l.attention_forward_s;
      const double attn_b_whole = 2 * (g.qkv_s + g.proj_s) + l.attention_backward_s;
      const double moe_f = std::max(0.0, l.forward_s - attn_f_whole - busy.mlp_busy.forward);
      const double moe_b = std::max(0.0, l.backward_s - attn_b_whole - busy.mlp_busy.backward);
      const double attn_f = std::max(0.0, attn_f_whole - busy.attention_busy.forward -
                                              cp_busy.forward * l.attention_forward_s);
      const double attn_b = std::max(0.0, attn_b_whole - busy.attention_busy.backward -
                                              cp_busy.backward * l.attention_backward_s);
      ep.forward += k.count * (exposed_after_overlap(fwd / 2, moe_b, slowdown) +
                               exposed_after_overlap(fwd / 2, attn_b, slowdown));
      ep.backward += k.count * (exposed_after_overlap(bwd / 2, attn_f, slowdown) +
                                exposed_after_overlap(bwd / 2, moe_f, slowdown));
    }
    ep_beside = {ep.backward - ep_time(Phase::recompute), ep.forward + ep_time(Phase::recompute)};
  }
  t.tp = tp.total();
  t.cp = cp.total();
  t.ep = ep.total();
  // A dropless MoE layer copies its token counts to the host before it can size the
  // all-to-all (EP > 1) and the grouped GEMM, which takes them as a list of integers (TEGroupedMLP
  // in experts.py, whatever the EP): the CPU waits for the GPU, and the GPU then waits while the
  // CPU launches the rest of the layer (dispatch, experts, combine: 8 kernels; flex's fused
  // ones: 5), graphs or not (the sync is what stops whole-layer CUDA graphs). A per-rank token
  // budget (plan.moe_rank_capacity_factor: a receive buffer of fixed size, the counts read on
  // the GPU) has no such sync.
  ByPass host;
  const bool synced =
      m.moe.enabled() && m.moe.capacity_factor == 0 && p.moe_rank_capacity == 0;
  if (synced)
    host.forward += mix.moe_total() * (p.moe_dispatcher == MoeDispatcher::flex ? 5 : 8) *
                    sc.calibration.host_launch_s;
  // What the kernel count below misses: the Python of the dispatcher and the expert modules
  // between that sync and the next (fitted: calibration.json's moe_host_us per layer, plus
  // moe_host_expert_us per local expert for the grouped linear's loop over its experts). The GPU
  // runs the layer's forward (compute and the token exchange it waits on) while the CPU issues
  // it, so only the excess shows; a full recompute replays the forward and its sync (in the
  // backward).
  const double local_experts = static_cast<double>(m.moe.experts) / p.ep;
  const double moe_host = device.cal.moe_host_s + local_experts * device.cal.moe_host_expert_s;
  // CP's exposed K/V ring and the exposed TP collectives a layer's forward waits on run on the
  // GPU's stream while the CPU issues it too (a layer's share of the pass's): left out, a slower
  // GPU whose attention hid more of the ring, or whose GEMMs hid more of the TP collectives
  // behind Transformer Engine's userbuffers, shortened a host-bound forward (issue 38's
  // invariant suite: seed 3971, gpt-oss-20b with cp 4 on a B200 stage, its peaks x 0.687
  // 0.003 % faster; seed 28566, ZB-H1 with B300 stages ahead of Gaudi 2 ones, its peaks x 0.402
  // 0.004 %; seed 85216, DeepSeek-V3 at tp 64, 0.014 %). Taking the TP part in moved the
  // host-bound MoE rows with TP (Qwen3-235B-A22B on H100 and GB200, Moonlight-16B on H100) 2 to
  // 4 % faster before moe_host_us was refitted with it (stop 50).
  if (synced && moe_host > 0) {
    const double ep_forward = ep.forward / std::max(1.0, mix.moe_total());
    double layers = 0;
    for (const auto& k : kinds) layers += k.count;
    const double beside_forward = layers > 0 ? (cp.forward + tp.forward) / layers : 0;
    for (const auto& k : kinds)
      if (k.kind.moe) {
        const double excess = k.count * std::max(0.0, moe_host - k.compute.forward_s -
                                                          ep_forward - beside_forward);
        host.forward += excess;
        host.backward += full_recompute_share(m, p) * excess;
      }
  }
  // The CPU issues every kernel of a micro-batch; when that takes longer than the GPU runs them
  // (small layers, small micro-batches, many kernels), the GPU waits. Under CUDA graphs the CPU
  // launches one graph per layer and pass instead (Megatron's per-layer TE graphs). The GPU's
  // time includes its waits at the MoE syncs above (the GPU work cannot hide the launches twice).
  // ZeRO's communication (below) runs through these waits. Each pass waits for its own launches:
  // a pipeline stage's send and receive between passes synchronise the CPU with the GPU
  // (Megatron-Core's p2p_communication.py, `_communicate`: torch.cuda.synchronize() after
  // batch_isend_irecv, batch_p2p_sync on by default), so the CPU cannot issue the next pass
  // while the GPU still runs this one, and the zero-bubble schedules' W block (its weight-
  // gradient GEMMs, layer_kernels) waits for its own launches apart from its B. One wait for
  // both passes, shared out by their launch counts, moved wall time from a pass whose compute
  // shrank to the other: a faster GPU lengthened a launch-bound pipeline whose passes sit
  // differently on the critical path (issue 38: 63 violations of the compute-scale invariant,
  // 55 of the lower peak's and 26 of the HBM bandwidth's in 100,000 bases; seed 273, a
  // torchtitan ZB-H1 plan 0.78 % slower with a compute scale of 20 than of 5). Each virtual
  // chunk waits for its own launches behind its own share of the passes, and its wait stays
  // with it (StageCost): spread over the chunks by their compute shares it moved between them
  // as the compute did (issue 38: a dense DeepSpeed plan on 2 DGX B300, 0.15 % slower with a
  // compute scale of 20 than of 5).
  const PipelineSchedule schedule = p.effective_schedule();
  const bool split_w = schedule == PipelineSchedule::zero_bubble ||
                       schedule == PipelineSchedule::zbv ||
                       schedule == PipelineSchedule::dualpipev;
  struct Launches {
    double forward = 0, backward = 0, weight_grad = 0;  // W's of the backward's
  };
  // Each kind's kernels (layer_kernels), found once for every chunk: by its index in `kinds`.
  std::array<LayerKernels, kLayerKinds.size()> kernels;
  for (size_t i = 0; i < kinds.size; ++i) kernels[i] = layer_kernels(m, p, kinds.items[i].kind);
  auto launches_of = [&](const LayerMix& chunk) {
    Launches out;
    for (size_t i = 0; i < kinds.size; ++i) {
      const double count = chunk.of(kinds.items[i].kind);
      if (!(count > 0)) continue;  // (as kind_costs lists a chunk's kinds)
      const LayerKernels& n = kernels[i];
      out.forward += count * (p.cuda_graphs ? 1 : n.forward);
      out.backward +=
          count * (p.cuda_graphs ? 1 + (t.recompute > 0 ? 1 : 0) : n.backward + n.recompute);
      out.weight_grad += count * (p.cuda_graphs || !split_w ? 0 : n.weight_grad);
    }
    return out;
  };
  const double busy_forward = t.forward + tp.forward + cp.forward + ep.forward + host.forward;
  const double busy_backward = t.total() + host.total() - busy_forward;
  const double launch_s = sc.calibration.host_launch_s;
  // Under the EP overlap a forward and another micro-batch's backward run as one step
  // (combined_forward_backward_step, combined_1f1b.py: the two passes' layers interleaved by
  // TransformerModelChunkSchedulePlan.run, with no send or receive between them to synchronise
  // the CPU): the CPU issues both passes' kernels while the GPU runs both, so the pair waits for
  // its launches together, shared out by their launch counts. Apart, a faster GPU's exchanges
  // grew exposed in the forward, where its launches already waited, while the backward, whose
  // compute they had hidden behind, waited for its launches that much longer (issue 38: seed
  // 12985, a DeepSpeed plan on MI355X 0.026 % slower with a compute scale of 20 than of 5).
  const bool paired = p.moe_overlap && mix.moe_total() > 0;
  for (int k = 0; k < v; ++k) {
    const Launches n = launches_of(chunks[k]);
    const double weight_grad = split_w ? t.weight_grad * c.chunk_weight_grad_share[k] : 0.0;
    const double busy_f = c.chunk_forward_s(k, busy_forward);
    const double busy_b = c.chunk_backward_s(k, busy_backward) - weight_grad;
    const double launches_b = (n.backward - n.weight_grad) * launch_s;
    double wait_forward = std::max(0.0, n.forward * launch_s - busy_f);
    const double wait_weight = std::max(0.0, n.weight_grad * launch_s - weight_grad);
    double wait_backward = std::max(0.0, launches_b - busy_b);
    if (paired) {
      const double launches = n.forward * launch_s + launches_b;
      const double wait = std::max(0.0, launches - busy_f - busy_b);
      wait_forward = launches > 0 ? wait * n.forward * launch_s / launches : 0.0;
      wait_backward = wait - wait_forward;
    }
    wait_backward += wait_weight;
    c.chunk_launch_wait_forward.push_back(wait_forward);
    c.chunk_launch_wait_backward.push_back(wait_backward);
    c.chunk_launch_wait_weight.push_back(wait_weight);
    host.forward += wait_forward;
    host.backward += wait_backward;
  }
  t.host = host.total();
  // ZeRO-3 prefetches the next layer's parameters while the current one computes; ZeRO-2 in
  // DeepSpeed reduces every micro-batch's gradients during its backward (overlap_comm) or after.
  // Both run on their own stream through the whole pass: beside its compute and beside the TP,
  // CP and EP communication and the launches the pass waits on, so they hide behind the pass's
  // time, not its compute alone (which the other overlaps already count: hiding behind it twice
  // would make a slower GPU finish sooner). Under the EP overlap a pass's wall time holds the
  // other pass's exposed exchanges, those its compute ran beside (counted in that pass's time):
  // taking its own pass's instead, a DeepSpeed ZeRO-2 plan's gradient reduce hid behind a
  // backward that shrank with a faster GPU while the forward's exchanges beside it grew, 0.04 %
  // slower with a compute scale of 20 over 5 (issue 38).
  const double forward_pass = t.forward + tp.forward + cp.forward + ep_beside.forward + host.forward;
  const double backward_pass = t.backward + t.recompute + tp.backward + cp.backward +
                               ep_beside.backward + host.backward;
  ByPass zero3;
  if (zero >= 3) {
    // The routed experts' gathers run over the expert data-parallel group (census.cpp), on the
    // same stream as the rest, a layer at a time.
    const double gather_s = (census(CommGroup::dp, Phase::forward) +
                             census(CommGroup::edp, Phase::forward)) /
                            mbd;
    const double reduce_s = (census(CommGroup::dp, Phase::backward) +
                             census(CommGroup::edp, Phase::backward)) /
                            mbd;
    c.dp_per_micro_batch_s = gather_s + reduce_s;
    // Each virtual chunk gathers its own layers' parameters (and reduce-scatters their
    // gradients) while it runs: its share of the stage's layers, hidden behind its own part of
    // the pass (its compute, its layers' share of the communication and syncs beside it, its own
    // launch waits). Spreading the stage's exposed total by the chunks' compute shares instead
    // moved it between chunks whenever the compute did (the output layer's share grows as the
    // GEMMs get faster), so a faster GPU or less recompute could lengthen an interleaved
    // pipeline; so did a window that gave each chunk the pass's exposed TP, CP and EP
    // communication by compute share (seed 2634 of the invariant suite, interleaved ZeRO-3 with
    // the EP overlap: a compute scale of 20 0.58 % slower than 2; issue 38).
    double waits_forward = 0, waits_backward = 0;
    for (int k = 0; k < v; ++k) {
      waits_forward += c.chunk_launch_wait_forward[k];
      waits_backward += c.chunk_launch_wait_backward[k];
    }
    // Under the EP overlap (combined_1f1b) there is no forward pass apart from a backward: each
    // layer's forward runs paired with another micro-batch's backward, so the gathers and the
    // reduce-scatters hide behind the pair's time together, and the exposed total goes to the
    // passes by their traffic. Apart, a pass that lost the exchanges the overlap hid gave its
    // reduce-scatters less room while the other, bound by the CPU's launches, gained nothing:
    // seeds 8158 and 3776 of the invariant suite, torchtitan ZeRO-3 plans with the EP overlap
    // 0.41 % and 0.04 % slower than without (issue 38).
    // Apart, each pass runs module by module (sharded_gathers.h): the gathers on the DP
    // communicator, each issued plan.zero3_prefetch units ahead, and in the backward each unit's
    // reduce-scatter queued on the same communicator behind the next unit's gather. The first
    // gather of a pass and its last reduce-scatter have no compute to hide behind, and a unit
    // whose gather outlasts the compute ahead of it waits (latency-bound gathers over many
    // ranks). The units share the chunk's traffic and window evenly (the embedding's and output
    // layer's gathers too).
    double backward_gather_s = 0;
    ByPass gathered_bytes;  // per micro-batch
    for (const auto& op : ops)
      if ((op.group == CommGroup::dp || op.group == CommGroup::edp) &&
          op.kind == CollectiveKind::all_gather) {
        const double bytes = op.bytes * static_cast<double>(op.count) / mbd;
        if (op.phase == Phase::backward) {
          backward_gather_s += op.total_s() / mbd;
          gathered_bytes.backward += bytes;
        } else if (op.phase == Phase::forward) {
          gathered_bytes.forward += bytes;
        }
      }
    const double per_layer = p.execution.zero3_fetch == Zero3Fetch::module
                                 ? 2.0 + ffn_matrices(m.ffn_type)
                                 : 1.0;
    // Schedules that run the weight gradients apart (W blocks filling the bubbles) charge the
    // backward's exposure to the input-gradient block (run_pipeline.cpp): it hides behind that
    // block alone, or a faster W would lengthen B (issue 38's invariants, seeds 26 and 273).
    for (int k = 0; k < v; ++k) {
      const double layers_share = c.chunk_layers_share[k];
      const double gather = gather_s * layers_share, reduce = reduce_s * layers_share;
      const int units = static_cast<int>(
          std::max(1.0, std::round(layers_share * static_cast<double>(shape.layers) * per_layer)));
      const double n = units;
      const double forward_window =
          c.chunk_forward_s(k, forward_pass - waits_forward) + c.chunk_launch_wait_forward[k];
      const double backward_window =
          c.chunk_backward_s(k, backward_pass - waits_backward) + c.chunk_launch_wait_backward[k];
      const double input_grad_window = std::max(
          0.0, backward_window - (split_w ? t.weight_grad * c.chunk_weight_grad_share[k] +
                                                c.chunk_launch_wait_weight[k]
                                          : 0.0));
      if (paired) {
        // The pair of a forward and an input-gradient block: under DualPipeV the W blocks run
        // apart as in the schedules above (hidden behind W too, a busier expert's longer W
        // shortened the pairs: the suite's seed 55558, Llama 4 Maverick under Megatron-FSDP with
        // the EP overlap, moe_imbalance 6.1 0.11 % faster than 1, issue 38).
        const double both =
            exposed_after_overlap(gather + reduce, forward_window + input_grad_window, slowdown);
        const double gather_part = gather + reduce > 0 ? gather / (gather + reduce) : 0;
        c.chunk_zero3_forward.push_back(both * gather_part);
        c.chunk_zero3_backward.push_back(both * (1 - gather_part));
      } else {
        const double backward_gather = backward_gather_s * layers_share;
        // FSDP2 copies each gathered unit out of the all-gather's buffer on the compute stream
        // before the unit computes (Execution::zero3_copy_out): read and written once at HBM
        // speed, compute time the gathers can hide behind but the pass pays for.
        auto copy_out = [&](double bytes) {
          return p.execution.zero3_copy_out ? elementwise_s(2 * bytes * layers_share / n, device)
                                            : 0.0;
        };
        const ByPass copy{copy_out(gathered_bytes.forward), copy_out(gathered_bytes.backward)};
        const FetchUnit forward_unit{gather / n, forward_window / n + copy.forward, 0};
        const FetchUnit backward_unit{
            backward_gather / n, input_grad_window / n + copy.backward,
            std::max(0.0, reduce - backward_gather) / n};
        c.chunk_zero3_forward.push_back(
            sharded_pass_exposed_s(forward_unit, units, p.zero3_prefetch, slowdown) +
            n * copy.forward);
        c.chunk_zero3_backward.push_back(
            sharded_pass_exposed_s(backward_unit, units, p.zero3_prefetch, slowdown) +
            n * copy.backward);
      }
      zero3.forward += c.chunk_zero3_forward.back();
      zero3.backward += c.chunk_zero3_backward.back();
    }
  } else if (zero == 2) {
    // Each micro-batch's gradient buckets, a burst like the last micro-batch's of Megatron
    // (tail.cpp), during its backward (overlap_comm) or after it.
    const DpBurst reduce = dp_burst(ops, Phase::backward, false, paths, mbd);
    zero3.backward = p.overlap_grad_reduce
                         ? bucketed_overlap_s(reduce.transfer_s, reduce.fixed_s, reduce.buckets,
                                              backward_pass, slowdown)
                         : reduce.whole_s();
    c.dp_per_micro_batch_s = reduce.whole_s();
  }
  t.zero3 = zero3.total();

  // Activation offloading (offload.h): each offloaded layer's copy to the host hides behind the
  // next layer's forward, its copy back behind the next layer's backward; the excess waits.
  st.memory = memory ? *memory : stage_memory(m, p, shape, gpu, sc.calibration);
  ByPass offload;
  if (const int64_t n = offloaded_layers(p, shape); n > 0) {
    const double layers = static_cast<double>(shape.layers);
    const OffloadCost copies = offload_cost(
        n, st.memory.offloaded / (static_cast<double>(n) * shape.in_flight),
        sc.cluster.groups[group].host_link_Bps_per_dir, t.forward / layers, t.backward / layers);
    offload = {copies.forward_s, copies.backward_s};
  } else if (const StageOffload o = stage_offloaded_modules(m, p, shape);
             o.per_micro_batch > 0 && shape.layers > 0) {
    // Fine-grained offloading: each layer's groups go to the host on a side stream after their
    // forward and come back one group ahead of their backward (fine_grained_activation_offload.py
    // bulk_offload_group, bulk_reload), so a layer's copies overlap the next layer's compute, as
    // the layer-level kind's do: every layer of the stage, at the stage's mean per layer.
    const double layers = static_cast<double>(shape.layers);
    const OffloadCost copies =
        offload_cost(shape.layers, o.per_micro_batch / layers,
                     sc.cluster.groups[group].host_link_Bps_per_dir, t.forward / layers,
                     t.backward / layers);
    offload = {copies.forward_s, copies.backward_s};
  }
  t.offload = offload.total();
  st.offload_s = t.offload;

  t.forward_exposed =
      tp.forward + cp.forward + ep.forward + zero3.forward + host.forward + offload.forward;
  // The backward as its compute runs, under the EP overlap (StageCost::paired_backward_pass_s).
  if (paired) c.paired_backward_pass_s = t.backward_pass() - ep.backward + ep_beside.backward;

  st.forward_s = t.forward + (p.tp_comm_overlap ? 0 : tp_fwd);
  st.backward_s = t.backward + (p.tp_comm_overlap ? 0 : tp_bwd);
  st.recompute_s = t.recompute + (p.tp_comm_overlap ? 0 : tp_rc);
  for (const auto& op : ops)
    if (op.group == CommGroup::pp) st.p2p_s = op.time_s;
  // Blocking send/receive: a stage sends twice per micro-batch and chunk (activations on,
  // gradients back), except the model's first chunk backward and last chunk forward, and the
  // two that stay on the GPU at a V's turn.
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  const double sends = 2.0 * p.vpp - shape.first - shape.last - 2.0 * shape.turn;
  c.unit_s = t.total() + (p2p_hidden || p.pp == 1 ? 0 : sends * st.p2p_s);

  // The distributed optimizer shards dense parameters over DP x CP, experts over expert DP.
  const double shard = zero >= 1 ? static_cast<double>(p.dp) * p.cp : 1.0;
  const double expert_shard = zero >= 1 ? std::max(1, p.edp()) : 1.0;
  const double stepped =
      (shape.parameters - shape.expert_parameters) / shard + shape.expert_parameters / expert_shard;
  // Optimizer offloading (offload.h; Adam and SGD only, the rules say): the GPU steps its share,
  // the CPU the rest, with the copies over the node's host link.
  const double on_cpu = p.optimizer_offloaded_share() * stepped;
  auto offloaded_step = [&](double gpu_step_s, double cpu_step_bytes) {
    if (on_cpu <= 0) return gpu_step_s;
    const ClusterGroup& g = sc.cluster.groups[group];
    return optimizer_offload_cost(on_cpu, cpu_step_bytes, gpu_step_s, g.host_link_Bps_per_dir,
                                  g.gpus_per_node, p.overlap_cpu_optimizer_d2h_h2d)
        .step_s;
  };
  if (p.optimizer == Optimizer::adam) {
    st.optimizer_s = offloaded_step(optimizer_step_s(stepped - on_cpu, p, device),
                                    kCpuAdamStepBytes);
  } else if (p.optimizer == Optimizer::sgd) {
    // The CPU's SGD moves fp32 master, gradient and buffer, no 16-bit copy (the copy back is
    // the host link's).
    const double copy = p.precision == Precision::fp32 ? 0 : 2;
    st.optimizer_s = offloaded_step(elementwise_s((stepped - on_cpu) * sgd_step_bytes(p), device),
                                    sgd_step_bytes(p) - copy);
  } else if (p.optimizer == Optimizer::adafactor) {
    // Factored matrices on whole tensors; a flat ZeRO/FSDP shard is stepped as a vector.
    const double factored = zero >= 1 ? 0 : adafactor_state(m, p, shape).matrix_parameters;
    st.optimizer_s = elementwise_s(factored * adafactor_step_bytes(p, true) +
                                       (stepped - factored) * adafactor_step_bytes(p, false),
                                   device);
  } else {
    // Muon's matrices (optimizer.h) on their own, Adam over the rest; the Newton-Schulz
    // iterations and the TP gathers before them are reported apart.
    const std::vector<MuonMatrix> matrices = muon_matrices(m, p, shape);
    const MuonParameters muon = muon_parameters(matrices);
    const MuonStep step = muon_step(matrices, p, device);
    const double adam = (shape.parameters - shape.expert_parameters - muon.dense) / shard +
                        (shape.expert_parameters - muon.expert) / expert_shard;
    st.newton_schulz_s = step.newton_schulz_s + census(CommGroup::tp, Phase::optimizer) +
                         census(CommGroup::etp, Phase::optimizer);
    st.optimizer_s = optimizer_step_s(adam, p, device) + step.elementwise_s + st.newton_schulz_s;
  }
  // The gradient reduce after the last micro-batch and the distributed optimizer's parameter
  // gather, each one burst of buckets (tail.cpp).
  c.dp_reduce = dp_burst(ops, Phase::gradient_sync, false, paths, 1);
  c.dp_gather = dp_burst(ops, Phase::optimizer, true, paths, 1);
  st.dp_sync_s = c.dp_reduce.whole_s();
  // Without pipelining the EP overlap's first forward and last backward run alone
  // (StageCost::unpaired): the same stage without the overlap. (Under the interleaved schedule
  // and DualPipeV the warm-up forwards and cool-down backwards run alone too; not modelled yet.)
  if (p.moe_overlap && p.pp == 1 && mix.moe_total() > 0) {
    Plan apart = p;
    apart.moe_overlap = false;
    c.unpaired = stage_cost(sc, apart, shape, mix, group, paths, chunk_mix).time;
  }
  return c;
}

}  // namespace stepcast::detail
