#include "stepcast/estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "stepcast/compute.h"
#include "stepcast/pipeline.h"

namespace stepcast {

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

// Sum of op time per iteration for ops matching a group and phase.
double census_time(const std::vector<CommOp>& ops, CommGroup group, Phase phase) {
  double t = 0;
  for (const auto& op : ops)
    if (op.group == group && op.phase == phase) t += op.total_s();
  return t;
}

// Parameters one GPU of a stage holds, with Megatron's padded vocabulary.
StageShape stage_shape(const ModelSpec& m, const Plan& p, int index) {
  StageShape st;
  st.index = index;
  st.layers = m.layers / p.pp;
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

// Communication hidden behind a compute window: what exceeds the window stays exposed, and the
// compute it overlaps slows down (NCCL kernels take SMs and memory bandwidth).
double exposed_after_overlap(double comm, double window, double slowdown) {
  return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
}

}  // namespace

Report estimate(const Scenario& sc, const EstimateOptions& options) {
  const ModelSpec& m = sc.model;
  const Plan& p = sc.plan;
  const ClusterGroup& cluster = sc.cluster.groups.front();
  const Device device = make_device(cluster.gpu, p.precision, sc.calibration);
  const double slowdown = sc.calibration.overlap_slowdown;
  const StagePaths paths = stage_paths(p, cluster);
  const LayerCompute layer = layer_compute(m, p, device);
  const HeadCompute head = head_compute(m, p, device);
  const HeadCompute embed = embedding_compute(m, p, device);
  const int64_t mb = p.micro_batches();
  const double mbd = static_cast<double>(mb);
  const int zero = p.effective_zero_stage();

  Report r;
  r.gpus = sc.cluster.gpus();
  r.micro_batches = mb;
  r.peak_tflops = device.peak_flops / 1e12;
  r.parameters = count_parameters(m, m.vocab, m.seq_len).total;

  // Per stage and micro-batch: compute, exposed communication, and the pipeline unit time.
  struct Exposed {
    double fwd = 0, bwd = 0, rc = 0;  // compute only
    double tp = 0, cp = 0, zero3 = 0;
    double total() const { return fwd + bwd + rc + tp + cp + zero3; }
  };
  std::vector<Exposed> exposed(p.pp);
  std::vector<double> unit(p.pp);
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  for (int i = 0; i < p.pp; ++i) {
    StageReport st;
    const StageShape shape = stage_shape(m, p, i);
    st.index = i;
    st.layers = shape.layers;
    st.gpu = cluster.gpu.id.empty() ? cluster.gpu.name : cluster.gpu.id;
    st.parameters = shape.parameters;
    st.communication = stage_census(m, p, shape, paths);
    const auto& ops = st.communication;
    const double L = static_cast<double>(shape.layers);

    Exposed& e = exposed[i];
    e.fwd = L * layer.forward_s + (shape.first ? embed.forward_s : 0) +
            (shape.last ? head.forward_s : 0);
    e.bwd = L * layer.backward_s + (shape.first ? embed.backward_s : 0) +
            (shape.last ? head.backward_s : 0);
    e.rc = L * layer.recompute_s;

    // TP collectives sit between the GEMMs that produce and consume them: exposed, unless
    // Transformer Engine's userbuffers overlap them with those GEMMs.
    const double tp_fwd = census_time(ops, CommGroup::tp, Phase::forward) / mbd;
    const double tp_bwd = census_time(ops, CommGroup::tp, Phase::backward) / mbd;
    const double tp_rc = census_time(ops, CommGroup::tp, Phase::recompute) / mbd;
    if (p.tp_comm_overlap) {
      e.tp = exposed_after_overlap(tp_fwd, L * layer.linear_forward_s, slowdown) +
             exposed_after_overlap(tp_bwd, 2 * L * layer.linear_forward_s, slowdown) +
             exposed_after_overlap(tp_rc, e.rc > 0 ? L * layer.linear_forward_s : 0, slowdown);
    } else {
      e.tp = tp_fwd + tp_bwd + tp_rc;
    }
    // CP's K/V ring overlaps the attention blocks it feeds.
    const double attn = L * layer.attention_forward_s;
    e.cp = exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::forward) / mbd, attn,
                                 slowdown) +
           exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::backward) / mbd,
                                 2.5 * attn, slowdown) +
           exposed_after_overlap(census_time(ops, CommGroup::cp, Phase::recompute) / mbd,
                                 p.recompute == Recompute::full ? attn : 0, slowdown);
    // ZeRO-3 prefetches the next layer's parameters while the current one computes.
    if (zero >= 3) {
      const double zf = (census_time(ops, CommGroup::dp, Phase::forward)) / mbd;
      const double zb = (census_time(ops, CommGroup::dp, Phase::backward)) / mbd;
      e.zero3 = exposed_after_overlap(zf, e.fwd + e.rc, slowdown) +
                exposed_after_overlap(zb, e.bwd, slowdown);
    }

    st.forward_s = e.fwd + (tp_fwd > 0 && !p.tp_comm_overlap ? tp_fwd : 0);
    st.backward_s = e.bwd + (tp_bwd > 0 && !p.tp_comm_overlap ? tp_bwd : 0);
    st.recompute_s = e.rc + (p.tp_comm_overlap ? 0 : tp_rc);
    for (const auto& op : ops)
      if (op.group == CommGroup::pp) st.p2p_s = op.time_s;
    unit[i] = e.total() + (p2p_hidden ? 0 : 2.0 * p.vpp * st.p2p_s);

    const double shard = zero >= 1 ? static_cast<double>(p.dp) * p.cp : 1.0;
    st.optimizer_s = optimizer_step_s(shape.parameters / shard, p, device);
    st.dp_sync_s = census_time(ops, CommGroup::dp, Phase::gradient_sync);
    st.memory = stage_memory(m, p, shape, cluster.gpu, sc.calibration);
    r.stages.push_back(std::move(st));
  }

  const PipelineTime pipe = pipeline_time(unit, static_cast<long>(mb), p.vpp);
  const double p2p = r.stages.front().p2p_s;
  const double fill = p.pp > 1 && p2p_hidden ? 2.0 * (p.pp - 1) * p2p : 0;

  // Data-parallel gradient sync. With overlap, buckets go out during the last micro-batch's
  // backward and only the remainder (at least the last bucket) is exposed; later stages finish
  // their last backward earlier (the 1F1B drain), which hides part of their sync.
  std::vector<double> stage_sync(p.pp, 0);
  double dp_exposed = 0, slack = 0, param_gather = 0, other = 0, optimizer = 0;
  double tp_grads = 0, embedding_grads = 0, scalars = 0;
  for (int i = 0; i < p.pp; ++i) {
    const StageReport& st = r.stages[i];
    const auto& ops = st.communication;
    double sync = st.dp_sync_s;
    if (p.overlap_grad_reduce && sync > 0 && zero < 3) {
      const double buckets = static_cast<double>(dp_buckets(st.parameters, p));
      sync = std::max(exposed_after_overlap(sync, exposed[i].bwd, slowdown), sync / buckets);
    }
    stage_sync[i] = sync;
    dp_exposed = std::max(dp_exposed, sync - slack);
    slack += exposed[i].bwd / p.vpp + p2p;
    // The distributed optimizer's parameter all-gather: after the step, or (overlapped) in the
    // forward pre-hooks of the next iteration, where only the first micro-batch's forward can
    // hide it.
    if (zero >= 1 && zero < 3)
      for (const auto& op : ops)
        if (op.group == CommGroup::dp && op.phase == Phase::optimizer &&
            op.kind == CollectiveKind::all_gather)
          param_gather = std::max(
              param_gather, p.overlap_param_gather
                                ? exposed_after_overlap(op.total_s(), exposed[i].fwd, slowdown)
                                : op.total_s());
    tp_grads = std::max(tp_grads, census_time(ops, CommGroup::tp, Phase::gradient_sync));
    embedding_grads =
        std::max(embedding_grads, census_time(ops, CommGroup::embedding, Phase::gradient_sync));
    double small = census_time(ops, CommGroup::model_parallel, Phase::optimizer);
    for (const auto& op : ops)
      if (op.group == CommGroup::dp && op.phase == Phase::optimizer &&
          op.kind == CollectiveKind::all_reduce)
        small += op.total_s();
    scalars = std::max(scalars, small);
    optimizer = std::max(optimizer, st.optimizer_s);
  }
  other = tp_grads + embedding_grads + scalars;

  const int k = pipe.bottleneck;
  const Exposed& e = exposed[k];
  Breakdown& b = r.breakdown;
  b.forward = mbd * e.fwd;
  b.backward = mbd * e.bwd;
  b.recompute = mbd * e.rc;
  b.tp_comm = mbd * e.tp;
  b.cp_comm = mbd * e.cp;
  b.pp_comm = mbd * (unit[k] - e.total()) + fill;
  b.bubble = pipe.bubble_s;
  b.dp_comm = mbd * e.zero3 + std::max(0.0, dp_exposed) + param_gather;
  b.optimizer = optimizer;
  b.other = other;
  r.bottleneck_stage = k;
  r.iteration_time_s = pipe.total_s + fill + std::max(0.0, dp_exposed) + param_gather + other +
                       optimizer;

  if (options.timeline) {
    const size_t blocks = 2 * static_cast<size_t>(mb) * p.vpp * p.pp;
    if (blocks > options.max_timeline_events) {
      r.timeline_truncated = true;
    } else {
      std::vector<double> fwd(p.pp), bwd(p.pp);
      for (int i = 0; i < p.pp; ++i) {
        // A block carries its share of the stage's exposed communication; p2p travels on the
        // edges between blocks.
        const Exposed& ex = exposed[i];
        const double compute = ex.fwd + ex.bwd + ex.rc;
        fwd[i] = ex.fwd * ex.total() / compute;
        bwd[i] = ex.total() - fwd[i];
      }
      double makespan = 0;
      const auto events = simulate_pipeline(fwd, bwd, static_cast<long>(mb), p.vpp, p2p,
                                            p.pp > 1 && !p2p_hidden, &makespan);
      std::vector<double> stage_end(p.pp, 0);
      for (const auto& ev : events) {
        r.timeline.push_back({ev.kind == PipelineEvent::Kind::forward ? "forward" : "backward",
                              ev.stage, ev.chunk, ev.micro_batch, ev.start_s, ev.end_s});
        stage_end[ev.stage] = std::max(stage_end[ev.stage], ev.end_s);
      }
      double sync_end = 0;
      for (int i = 0; i < p.pp; ++i) {
        if (stage_sync[i] > 0)
          r.timeline.push_back({"dp_sync", i, 0, 0, stage_end[i], stage_end[i] + stage_sync[i]});
        sync_end = std::max(sync_end, stage_end[i] + stage_sync[i]);
      }
      for (int i = 0; i < p.pp; ++i)
        r.timeline.push_back({"optimizer", i, 0, 0, sync_end + other,
                              sync_end + other + r.stages[i].optimizer_s});
    }
  }

  // Throughput and utilisation.
  const double samples = static_cast<double>(p.global_batch);
  const double seq = static_cast<double>(m.seq_len);
  const double model_flops = model_flops_per_sample(m, seq) * samples;
  const double layer_fwd = layer_forward_flops(m, 1, seq).total() * m.layers * samples;
  double hardware_flops = model_flops;
  if (p.recompute == Recompute::full) hardware_flops += layer_fwd;
  if (p.recompute == Recompute::selective)
    hardware_flops += layer_forward_flops(m, 1, seq).attention * m.layers * samples;
  r.samples_per_s = samples / r.iteration_time_s;
  r.tokens_per_s = samples * seq / r.iteration_time_s;
  r.model_tflops_per_gpu = model_flops / r.iteration_time_s / r.gpus / 1e12;
  r.mfu = r.model_tflops_per_gpu / r.peak_tflops;
  r.hfu = hardware_flops / r.iteration_time_s / r.gpus / 1e12 / r.peak_tflops;

  // Warnings: what a careful engineer would point out.
  for (const auto& st : r.stages) {
    if (!st.memory.fits()) {
      r.fits = false;
      r.warnings.push_back(fmt::format(
          "stage {} does not fit: needs {:.1f} GiB per GPU (weights {:.1f}, gradients {:.1f}, "
          "optimizer {:.1f}, activations {:.1f}, other {:.1f}) but {} has {:.1f} GiB",
          st.index, st.memory.total / GiB, st.memory.weights / GiB, st.memory.gradients / GiB,
          st.memory.optimizer / GiB, st.memory.activations / GiB, st.memory.other / GiB, st.gpu,
          st.memory.capacity / GiB));
    }
  }
  if (p.tp > cluster.gpus_per_node)
    r.warnings.push_back(fmt::format("plan.tp={} spans nodes ({} GPUs per node): every layer's "
                                     "tensor-parallel collectives cross the network",
                                     p.tp, cluster.gpus_per_node));
  if (p.pp > 1 && mb < p.pp)
    r.warnings.push_back(fmt::format("only {} micro-batches for {} pipeline stages: the pipeline "
                                     "never fills and most of the step is bubble",
                                     mb, p.pp));
  if (p.sequence_parallel && p.tp == 1)
    r.warnings.push_back("plan.sequence_parallel has no effect with plan.tp=1");
  if (p.flash_attention && (cluster.gpu.arch == "volta" || cluster.gpu.arch == "turing"))
    r.warnings.push_back(fmt::format("FlashAttention needs Ampere or newer; {} runs unfused "
                                     "attention (set plan.flash_attention=false)",
                                     cluster.gpu.name));
  return r;
}

}  // namespace stepcast
