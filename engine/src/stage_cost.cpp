// Step 2 of an estimate: what one micro-batch costs on one pipeline stage. Compute per layer
// (compute.cpp), the census of its collectives (census.cpp) priced on the links its groups cross,
// the part of that communication the software overlaps with compute, and the stage's memory.
#include <fmt/format.h>

#include <algorithm>

#include "detail/step.h"
#include "stepcast/compute.h"
#include "stepcast/overlap.h"

namespace stepcast::detail {

double census_time(const std::vector<CommOp>& ops, CommGroup group, Phase phase) {
  double t = 0;
  for (const auto& op : ops)
    if (op.group == group && op.phase == phase) t += op.total_s();
  return t;
}

double exposed_after_overlap(double comm, double window, double slowdown) {
  return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
}

namespace {

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

double layer_tp_comm_s(const ModelSpec& m, const Plan& p, const CommPath& path) {
  const SpCollectives c = sp_collectives(m, p, path);
  const double forward = 2 * c.all_gather + 2 * c.reduce_scatter;
  const double backward = 4 * c.all_gather + 2 * c.reduce_scatter;
  return forward + backward + (p.recompute == Recompute::full ? forward : 0);
}

// Transformer Engine's userbuffer overlap of one layer's TP collectives, per micro-batch
// (NeMo's ub configs, e.g. ub_cfg_h100_h12288_tp8_mbs2_seqlen2048.yaml): forward, the QKV and
// fc1 input all-gathers ring-exchange with their GEMMs and the proj and fc2 output
// reduce-scatters are pipelined in 4 splits; backward, the proj and fc2 dgrad all-gathers
// ring-exchange with their dgrad GEMMs, the re-gathered QKV and fc1 inputs overlap the dgrad
// GEMMs in bulk and their input-gradient reduce-scatters the wgrad GEMMs; full recompute replays
// the forward.
double te_overlapped_tp_s(const ModelSpec& m, const Plan& p, const LayerCompute& layer,
                          const CommPath& path, double slowdown) {
  constexpr int kReduceScatterSplits = 4;
  const SpCollectives c = sp_collectives(m, p, path);
  const LayerGemms& g = layer.gemms;
  const double forward =
      ring_exchange_overlap_s(c.all_gather, g.qkv_s, p.tp, slowdown) +
      ring_exchange_overlap_s(c.all_gather, g.fc1_s, p.tp, slowdown) +
      pipelined_reduce_scatter_s(c.reduce_scatter, g.proj_s, kReduceScatterSplits, slowdown) +
      pipelined_reduce_scatter_s(c.reduce_scatter, g.fc2_s, kReduceScatterSplits, slowdown);
  const double backward = ring_exchange_overlap_s(c.all_gather, g.proj_s, p.tp, slowdown) +
                          ring_exchange_overlap_s(c.all_gather, g.fc2_s, p.tp, slowdown) +
                          bulk_overlap_s(c.all_gather, g.qkv_s, slowdown) +
                          bulk_overlap_s(c.all_gather, g.fc1_s, slowdown) +
                          bulk_overlap_s(c.reduce_scatter, g.qkv_s, slowdown) +
                          bulk_overlap_s(c.reduce_scatter, g.fc1_s, slowdown);
  return forward + backward + (p.recompute == Recompute::full ? forward : 0);
}

// Parameters one GPU of a stage holds, with Megatron's padded vocabulary.
StageShape stage_shape(const ModelSpec& m, const Plan& p, int index, int64_t layers) {
  StageShape st;
  st.index = index;
  st.layers = layers;
  st.first = index == 0;
  st.last = index == p.pp - 1;
  const int64_t vocab = padded_vocab(m.vocab, p.tp);
  const ParameterCount count = count_parameters(m, vocab, m.seq_len);
  const double norm = m.norm == Norm::layernorm ? 2.0 * m.hidden : 1.0 * m.hidden;
  // Norms and row-parallel output biases are replicated on every TP rank; the rest is split.
  const double replicated = 2 * norm + (m.bias ? 2.0 * m.hidden : 0.0);
  st.layer_parameters = (count.per_layer - replicated) / p.tp + replicated;
  st.parameters = st.layer_parameters * static_cast<double>(st.layers);
  if (st.first) st.parameters += count.embedding / p.tp + count.position;
  if (st.last) {
    st.parameters += count.final_norm;
    // The last stage holds the output layer; tied embeddings keep a copy there when pp > 1.
    if (!m.tied_embeddings || p.pp > 1) st.parameters += count.embedding / p.tp;
  }
  return st;
}

// The communication paths of stage i: its own group's, with the pipeline link to the next stage
// and the data-parallel ring replaced where they leave the group.
StagePaths paths_for_stage(const Scenario& sc, const Plan& p, const PipelineLayout& lay, int i) {
  const ClusterGroup& here = sc.cluster.groups[lay.groups[i]];
  StagePaths paths = stage_paths(p, here);
  const int next = lay.groups[(i + 1) % p.pp];
  if (p.pp > 1 && next != lay.groups[i])
    paths.pp = inter_group_path(here, sc.cluster.inter_group_link, 1, 2);
  const int last = lay.groups[p.pp - 1];
  if (p.pp > 1 && last != lay.groups[0])
    paths.embedding = inter_group_path(sc.cluster.groups[lay.groups[0]],
                                       sc.cluster.inter_group_link, 1, 2);
  if (lay.dp_groups.size() > 1) {
    // A ring over several groups runs at the pace of its slowest hop: the inter-group link or
    // any group's own share of its network.
    CommPath dp = inter_group_path(here, sc.cluster.inter_group_link,
                                   paths.dp_placement.per_node, paths.dp_placement.nodes());
    for (int g : lay.dp_groups) {
      const CommPath own = stage_paths(p, sc.cluster.groups[g]).dp;
      if (own.busbw_Bps < dp.busbw_Bps) dp = own;
    }
    paths.dp = dp;
    paths.dp.nodes = std::max(paths.dp.nodes, 2);
  }
  return paths;
}

StageCost stage_cost(const Scenario& sc, const Plan& p, const StageShape& shape, int group,
                     const StagePaths& paths, const std::vector<int64_t>& chunk_layers) {
  const ModelSpec& m = sc.model;
  const GpuSpec& gpu = sc.cluster.groups[group].gpu;
  const Device device = make_device(gpu, p.precision, sc.calibration);
  const double slowdown = sc.calibration.overlap_slowdown;
  const LayerCompute layer = layer_compute(m, p, device);
  const HeadCompute head = head_compute(m, p, device);
  const HeadCompute embed = embedding_compute(m, p, device);
  const double mbd = static_cast<double>(p.micro_batches());
  const int zero = p.effective_zero_stage();

  StageCost c;
  StageReport& st = c.report;
  st.index = shape.index;
  st.layers = shape.layers;
  st.group = group;
  st.gpu = gpu.id.empty() ? gpu.name : gpu.id;
  st.parameters = shape.parameters;
  st.communication = stage_census(m, p, shape, paths);
  const auto& ops = st.communication;
  const double L = static_cast<double>(shape.layers);

  StageTime& t = c.time;
  t.forward = L * layer.forward_s + (shape.first ? embed.forward_s : 0) +
              (shape.last ? head.forward_s : 0);
  t.backward = L * layer.backward_s + (shape.first ? embed.backward_s : 0) +
               (shape.last ? head.backward_s : 0);
  t.recompute = L * layer.recompute_s;

  // Each virtual chunk's share: its layers, plus the embedding on the model's first chunk and the
  // output layer on its last (a backward block carries the chunk's recompute too).
  std::vector<int64_t> chunks = chunk_layers;
  if (chunks.empty()) chunks.assign(p.vpp, shape.layers / p.vpp);
  const int v = static_cast<int>(chunks.size());
  for (int k = 0; k < v; ++k) {
    const double n = static_cast<double>(chunks[k]);
    const bool model_first = shape.first && k == 0, model_last = shape.last && k == v - 1;
    c.chunk_forward_share.push_back(
        (n * layer.forward_s + (model_first ? embed.forward_s : 0) +
         (model_last ? head.forward_s : 0)) / t.forward);
    c.chunk_backward_share.push_back(
        (n * (layer.backward_s + layer.recompute_s) + (model_first ? embed.backward_s : 0) +
         (model_last ? head.backward_s : 0)) / (t.backward + t.recompute));
  }

  // TP collectives sit between the GEMMs that produce and consume them: exposed, unless
  // Transformer Engine's userbuffers overlap them with those GEMMs.
  const double tp_fwd = census_time(ops, CommGroup::tp, Phase::forward) / mbd;
  const double tp_bwd = census_time(ops, CommGroup::tp, Phase::backward) / mbd;
  const double tp_rc = census_time(ops, CommGroup::tp, Phase::recompute) / mbd;
  if (p.tp_comm_overlap && p.sequence_parallel && p.tp > 1) {
    t.tp = te_overlapped_tp_s(m, p, layer, paths.tp, slowdown) * L;
    // The embedding's, output layer's and loss's collectives are not overlapped.
    const double per_layer = layer_tp_comm_s(m, p, paths.tp);
    t.tp += std::max(0.0, tp_fwd + tp_bwd + tp_rc - L * per_layer);
  } else {
    t.tp = tp_fwd + tp_bwd + tp_rc;
  }
  // CP's K/V ring overlaps the attention blocks it feeds.
  t.cp = exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::forward) / mbd,
                               L * layer.attention_forward_s, slowdown) +
         exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::backward) / mbd,
                               L * layer.attention_backward_s, slowdown) +
         exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::recompute) / mbd,
                               L * layer.attention_recompute_s, slowdown);
  // ZeRO-3 prefetches the next layer's parameters while the current one computes; ZeRO-2 in
  // DeepSpeed reduces every micro-batch's gradients during its backward (overlap_comm) or after.
  if (zero >= 2) {
    const double zf = census_time(ops, CommGroup::dp, Phase::forward) / mbd;
    const double zb = census_time(ops, CommGroup::dp, Phase::backward) / mbd;
    const bool overlap = zero >= 3 || p.overlap_grad_reduce;
    t.zero3 = overlap ? exposed_after_overlap(zf, t.forward + t.recompute, slowdown) +
                            exposed_after_overlap(zb, t.backward, slowdown)
                      : zf + zb;
  }

  // The CPU issues every kernel of a micro-batch; when that takes longer than the GPU runs them
  // (small layers, small micro-batches, many kernels), the GPU waits. Under CUDA graphs the CPU
  // launches one graph per layer and pass instead (Megatron's per-layer TE graphs).
  const LayerKernels k = layer_kernels(m, p);
  const double launches = p.cuda_graphs ? L * (2 + (t.recompute > 0 ? 1 : 0))
                                        : L * (k.forward + k.backward + k.recompute);
  t.host = std::max(0.0, launches * sc.calibration.host_launch_s - t.total());

  st.forward_s = t.forward + (p.tp_comm_overlap ? 0 : tp_fwd);
  st.backward_s = t.backward + (p.tp_comm_overlap ? 0 : tp_bwd);
  st.recompute_s = t.recompute + (p.tp_comm_overlap ? 0 : tp_rc);
  for (const auto& op : ops)
    if (op.group == CommGroup::pp) st.p2p_s = op.time_s;
  // Blocking send/receive: a stage sends twice per micro-batch and chunk (activations on,
  // gradients back), except the model's first chunk backward and last chunk forward.
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  const double sends = 2.0 * p.vpp - (shape.first || shape.last ? 1.0 : 0.0);
  c.unit_s = t.total() + (p2p_hidden || p.pp == 1 ? 0 : sends * st.p2p_s);

  const double shard = zero >= 1 ? static_cast<double>(p.dp) * p.cp : 1.0;
  st.optimizer_s = optimizer_step_s(shape.parameters / shard, p, device);
  st.dp_sync_s = census_time(ops, CommGroup::dp, Phase::gradient_sync);
  st.memory = stage_memory(m, p, shape, gpu, sc.calibration);
  return c;
}

}  // namespace stepcast::detail
