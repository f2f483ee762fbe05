// Step 2 of an estimate: what one micro-batch costs on one pipeline stage. Compute per layer
// (compute.cpp), the census of its collectives (census.cpp) priced on the links its groups cross,
// the part of that communication the software overlaps with compute, and the stage's memory.
#include <fmt/format.h>

#include <algorithm>

#include "detail/step.h"
#include "stepcast/compute.h"

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
  if (p.tp_comm_overlap) {
    t.tp = exposed_after_overlap(tp_fwd, L * layer.linear_forward_s, slowdown) +
           exposed_after_overlap(tp_bwd, L * layer.linear_backward_s, slowdown) +
           exposed_after_overlap(tp_rc, L * layer.linear_recompute_s, slowdown);
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
  // ZeRO-3 prefetches the next layer's parameters while the current one computes.
  if (zero >= 3) {
    const double zf = census_time(ops, CommGroup::dp, Phase::forward) / mbd;
    const double zb = census_time(ops, CommGroup::dp, Phase::backward) / mbd;
    t.zero3 = exposed_after_overlap(zf, t.forward + t.recompute, slowdown) +
              exposed_after_overlap(zb, t.backward, slowdown);
  }

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
