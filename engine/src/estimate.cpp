#include "stepcast/estimate.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "stepcast/balance.h"
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

// Communication hidden behind a compute window: what exceeds the window stays exposed, and the
// compute it overlaps slows down (NCCL kernels take SMs and memory bandwidth).
double exposed_after_overlap(double comm, double window, double slowdown) {
  return std::max(0.0, comm - window) + slowdown * std::min(comm, window);
}

// Per micro-batch on one stage: compute, and the communication left on the critical path.
struct Exposed {
  double fwd = 0, bwd = 0, rc = 0;  // compute only
  double tp = 0, cp = 0, zero3 = 0;
  double total() const { return fwd + bwd + rc + tp + cp + zero3; }
};

struct StageCost {
  Exposed e;
  double unit = 0;  // time per micro-batch in the schedule, with blocking send/receive
  StageReport report;
};

// Where each stage of one pipeline runs and what it holds.
struct PipelineLayout {
  std::vector<int> groups;        // cluster group of each stage
  std::vector<int64_t> layers;    // transformer layers of each stage
  std::vector<int> dp_groups;     // groups the data-parallel ring of every stage crosses
};

// The communication paths of stage i: its own group's, with the pipeline link to the next stage
// and the data-parallel ring replaced where they leave the group.
StagePaths paths_for_stage(const Scenario& sc, const Plan& p, const PipelineLayout& lay,
                           int i) {
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
                     const StagePaths& paths) {
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

  Exposed& e = c.e;
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
    const double zf = census_time(ops, CommGroup::dp, Phase::forward) / mbd;
    const double zb = census_time(ops, CommGroup::dp, Phase::backward) / mbd;
    e.zero3 = exposed_after_overlap(zf, e.fwd + e.rc, slowdown) +
              exposed_after_overlap(zb, e.bwd, slowdown);
  }

  st.forward_s = e.fwd + (p.tp_comm_overlap ? 0 : tp_fwd);
  st.backward_s = e.bwd + (p.tp_comm_overlap ? 0 : tp_bwd);
  st.recompute_s = e.rc + (p.tp_comm_overlap ? 0 : tp_rc);
  for (const auto& op : ops)
    if (op.group == CommGroup::pp) st.p2p_s = op.time_s;
  // Blocking send/receive: a stage sends twice per micro-batch and chunk (activations on,
  // gradients back), except the model's first chunk backward and last chunk forward.
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  const double sends = 2.0 * p.vpp - (shape.first || shape.last ? 1.0 : 0.0);
  c.unit = e.total() + (p2p_hidden || p.pp == 1 ? 0 : sends * st.p2p_s);

  const double shard = zero >= 1 ? static_cast<double>(p.dp) * p.cp : 1.0;
  st.optimizer_s = optimizer_step_s(shape.parameters / shard, p, device);
  st.dp_sync_s = census_time(ops, CommGroup::dp, Phase::gradient_sync);
  st.memory = stage_memory(m, p, shape, gpu, sc.calibration);
  return c;
}

// One pipeline (a set of identical data-parallel replicas) run through the schedule.
struct PipelineRun {
  Plan plan;  // the scenario's plan with this set's micro-batch count
  PipelineLayout layout;
  std::vector<StageCost> stages;
  double pipe_s = 0;  // forward-backward of all micro-batches, fill and drain included
  double fill_s = 0;  // send/receive of the fill and drain when the steady state hides it
  int bottleneck = 0;
  std::vector<PipelineEvent> events;
};

PipelineRun run_pipeline(const Scenario& sc, const Plan& p, const PipelineLayout& lay,
                         bool simulate, bool want_events) {
  PipelineRun run;
  run.plan = p;
  run.layout = lay;
  for (int i = 0; i < p.pp; ++i) {
    const StageShape shape = stage_shape(sc.model, p, i, lay.layers[i]);
    run.stages.push_back(
        stage_cost(sc, p, shape, lay.groups[i], paths_for_stage(sc, p, lay, i)));
  }
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  const long mb = static_cast<long>(p.micro_batches());
  std::vector<double> unit, fwd, bwd, p2p;
  for (const auto& s : run.stages) {
    unit.push_back(s.unit);
    // A block carries its share of the stage's exposed communication; messages travel on the
    // edges between blocks.
    const double compute = s.e.fwd + s.e.bwd + s.e.rc;
    fwd.push_back(s.e.fwd * s.e.total() / compute);
    bwd.push_back(s.e.total() - fwd.back());
    p2p.push_back(s.report.p2p_s);
  }
  const PipelineTime closed = pipeline_time(unit, mb, p.vpp);
  run.bottleneck = closed.bottleneck;
  run.pipe_s = closed.total_s;
  // Overlapped send/receive still delays the first micro-batch's forward and the last one's
  // backward through every virtual stage: each boundary v times, the wrap v - 1 times.
  if (p.pp > 1 && p2p_hidden) {
    for (int i = 0; i + 1 < p.pp; ++i) run.fill_s += 2.0 * p.vpp * p2p[i];
    run.fill_s += 2.0 * (p.vpp - 1) * p2p[p.pp - 1];
  }
  // The event simulation is the reference. The closed form is exact for 1F1B and for identical
  // interleaved stages (tests), and costs nothing; interleaved stages that differ (embedding,
  // output layer, uneven or mixed GPUs) are simulated, up to a size that keeps estimates fast.
  const size_t blocks = 2 * static_cast<size_t>(mb) * p.vpp * p.pp;
  simulate = simulate || (p.vpp > 1 && p.pp > 1);
  if ((simulate || want_events) && blocks <= 400000) {
    double makespan = 0;
    run.events =
        simulate_pipeline(fwd, bwd, mb, p.vpp, p2p, p.pp > 1 && !p2p_hidden, &makespan);
    if (simulate) {
      run.pipe_s = makespan;
      run.fill_s = 0;
    }
  }
  return run;
}

// Layers per stage: as given, L/pp each by default, or balanced by stage speed and memory.
std::vector<int64_t> stage_layers(const Scenario& sc, const std::vector<int>& groups) {
  const Plan& p = sc.plan;
  const int64_t even = sc.model.layers / p.pp;
  if (p.stages.empty()) return std::vector<int64_t>(p.pp, even);
  std::vector<int64_t> fixed;
  bool any_auto = false;
  for (const auto& s : p.stages) {
    fixed.push_back(s.layers);
    any_auto = any_auto || s.layers == 0;
  }
  if (!any_auto) return fixed;
  // Measure each stage with one and two layers per chunk: time and memory are affine in layers.
  PipelineLayout probe{groups, {}, {}};
  std::vector<double> per_layer, fixed_s;
  std::vector<int64_t> max_layers;
  for (int i = 0; i < p.pp; ++i) {
    probe.layers.assign(p.pp, p.vpp);
    const StagePaths paths = paths_for_stage(sc, p, probe, i);
    const StageCost one = stage_cost(sc, p, stage_shape(sc.model, p, i, p.vpp), groups[i], paths);
    const StageCost two =
        stage_cost(sc, p, stage_shape(sc.model, p, i, 2 * p.vpp), groups[i], paths);
    const double slope = (two.unit - one.unit) / p.vpp;
    per_layer.push_back(std::max(slope, 1e-12));
    fixed_s.push_back(one.unit - slope * p.vpp);
    const double mem_slope = (two.report.memory.total - one.report.memory.total) / p.vpp;
    const double room = one.report.memory.capacity - one.report.memory.total;
    max_layers.push_back(
        mem_slope > 0 ? std::max<int64_t>(p.vpp, static_cast<int64_t>(room / mem_slope) + p.vpp)
                      : 0);
  }
  return balance_layers(per_layer, fixed_s, max_layers, fixed, sc.model.layers, p.vpp);
}

// A set of identical replicas and the pipeline layout they run.
struct ReplicaSet {
  int group = -1;  // -1: the stage layout decides (stages may sit on several groups)
  int count = 1;
  int64_t micro_batches = 0;
};

}  // namespace

Report estimate(const Scenario& sc, const EstimateOptions& options) {
  const ModelSpec& m = sc.model;
  const Plan& p = sc.plan;
  const int zero = p.effective_zero_stage();
  const double slowdown = sc.calibration.overlap_slowdown;

  // The replica sets: one by default (dp identical replicas), or as plan.replicas lists them.
  std::vector<ReplicaSet> sets;
  std::vector<int> replica_groups;
  if (p.replicas.empty()) {
    sets.push_back({-1, p.dp, p.micro_batches()});
  } else {
    for (const auto& r : p.replicas) {
      sets.push_back({r.group, r.count, r.micro_batches});
      if (std::find(replica_groups.begin(), replica_groups.end(), r.group) ==
          replica_groups.end())
        replica_groups.push_back(r.group);
    }
  }
  auto layout_for = [&](const ReplicaSet& set) {
    PipelineLayout lay;
    for (int i = 0; i < p.pp; ++i)
      lay.groups.push_back(set.group >= 0 ? set.group
                                          : (p.stages.empty() ? 0 : p.stages[i].group));
    lay.layers = stage_layers(sc, lay.groups);
    lay.dp_groups = replica_groups;
    return lay;
  };
  auto plan_for = [&](int64_t micro_batches) {
    Plan q = p;  // the same plan, with this set's micro-batches per replica
    q.global_batch = micro_batches * p.micro_batch * p.dp;
    return q;
  };
  const bool mixed_stages = [&] {
    for (const auto& s : p.stages)
      if (s.group != p.stages.front().group || s.layers != p.stages.front().layers) return true;
    return false;
  }();

  // Auto micro-batches: in proportion to each set's throughput (its slowest stage per batch).
  if (!p.replicas.empty()) {
    std::vector<double> per_mb;
    std::vector<int> counts;
    std::vector<int64_t> fixed;
    for (const auto& set : sets) {
      const PipelineRun probe = run_pipeline(sc, plan_for(p.pp), layout_for(set), false, false);
      double worst = 0;
      for (const auto& s : probe.stages) worst = std::max(worst, s.unit);
      per_mb.push_back(worst);
      counts.push_back(set.count);
      fixed.push_back(set.micro_batches);
    }
    const auto m_r =
        balance_micro_batches(per_mb, counts, fixed, p.global_batch / p.micro_batch);
    for (size_t i = 0; i < sets.size(); ++i) sets[i].micro_batches = m_r[i];
  }

  std::vector<PipelineRun> runs;
  for (const auto& set : sets)
    runs.push_back(run_pipeline(sc, plan_for(set.micro_batches), layout_for(set),
                                mixed_stages || options.simulate, options.timeline));
  size_t critical = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].pipe_s + runs[i].fill_s > runs[critical].pipe_s + runs[critical].fill_s)
      critical = i;
  const PipelineRun& run = runs[critical];
  const Plan& q = run.plan;

  Report r;
  r.plan = p;
  r.gpus = sc.cluster.gpus();
  r.micro_batches = q.micro_batches();
  r.peak_tflops = 0;
  for (const auto& g : sc.cluster.groups)
    r.peak_tflops += g.gpu.peak_flops(p.precision).value_or(0) * g.gpus() / 1e12;
  r.peak_tflops /= r.gpus;  // the cluster's mean dense peak per GPU
  r.parameters = count_parameters(m, m.vocab, m.seq_len).total;
  for (const auto& s : run.stages) r.stages.push_back(s.report);
  for (size_t i = 0; i < sets.size(); ++i) {
    const auto& g = sc.cluster.groups[runs[i].layout.groups.front()];
    ReplicaReport rep{sets[i].group, g.gpu.id.empty() ? g.gpu.name : g.gpu.id, sets[i].count,
                      sets[i].micro_batches, runs[i].pipe_s + runs[i].fill_s};
    for (const auto& s : runs[i].stages) {
      const MemoryBreakdown& mem = s.report.memory;
      if (mem.total / mem.capacity > rep.memory_bytes / std::max(rep.capacity_bytes, 1.0)) {
        rep.memory_bytes = mem.total;
        rep.capacity_bytes = mem.capacity;
      }
      rep.fits = rep.fits && mem.fits();
    }
    r.replicas.push_back(rep);
  }

  // Data-parallel sync, after the slowest pipeline (a barrier across replicas). With overlap,
  // buckets go out during the last micro-batch's backward and only the remainder (at least the
  // last bucket) is exposed; later stages finish their last backward earlier (the 1F1B drain),
  // which hides part of their sync.
  std::vector<double> stage_sync(p.pp, 0);
  double dp_exposed = 0, slack = 0, param_gather = 0, optimizer = 0;
  double tp_grads = 0, embedding_grads = 0, scalars = 0;
  for (int i = 0; i < p.pp; ++i) {
    const StageCost& sc_i = run.stages[i];
    const StageReport& st = sc_i.report;
    const auto& ops = st.communication;
    double sync = st.dp_sync_s;
    if (p.overlap_grad_reduce && sync > 0 && zero < 3) {
      const double buckets = static_cast<double>(dp_buckets(st.parameters, q));
      sync = std::max(exposed_after_overlap(sync, sc_i.e.bwd, slowdown), sync / buckets);
    }
    stage_sync[i] = sync;
    dp_exposed = std::max(dp_exposed, sync - slack);
    slack += sc_i.e.bwd / p.vpp + st.p2p_s;
    // The distributed optimizer's parameter all-gather: after the step, or (overlapped) in the
    // forward pre-hooks of the next iteration, where only the first micro-batch's forward can
    // hide it.
    if (zero >= 1 && zero < 3)
      for (const auto& op : ops)
        if (op.group == CommGroup::dp && op.phase == Phase::optimizer &&
            op.kind == CollectiveKind::all_gather)
          param_gather = std::max(
              param_gather, p.overlap_param_gather
                                ? exposed_after_overlap(op.total_s(), sc_i.e.fwd, slowdown)
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
  }
  for (const auto& other_run : runs)  // every replica steps its own optimizer
    for (const auto& s : other_run.stages) optimizer = std::max(optimizer, s.report.optimizer_s);
  const double other = tp_grads + embedding_grads + scalars;

  // The breakdown follows the critical path: the bottleneck stage of the slowest pipeline.
  const double mbd = static_cast<double>(q.micro_batches());
  const int k = run.bottleneck;
  const Exposed& e = run.stages[k].e;
  Breakdown& b = r.breakdown;
  b.forward = mbd * e.fwd;
  b.backward = mbd * e.bwd;
  b.recompute = mbd * e.rc;
  b.tp_comm = mbd * e.tp;
  b.cp_comm = mbd * e.cp;
  b.pp_comm = std::max(0.0, mbd * (run.stages[k].unit - e.total())) + run.fill_s;
  b.dp_comm = mbd * e.zero3 + std::max(0.0, dp_exposed) + param_gather;
  b.optimizer = optimizer;
  b.other = other;
  // Fill and drain: whatever of the pipeline the steady state of the bottleneck does not cover.
  const double steady = b.forward + b.backward + b.recompute + b.tp_comm + b.cp_comm +
                        mbd * e.zero3;
  b.bubble = run.pipe_s + run.fill_s - steady - b.pp_comm;
  if (b.bubble < 0) {  // the simulation can beat m x the bottleneck when p2p is on edges
    b.pp_comm = std::max(0.0, b.pp_comm + b.bubble);
    b.bubble = run.pipe_s + run.fill_s - steady - b.pp_comm;
  }
  r.bottleneck_stage = k;
  r.iteration_time_s = run.pipe_s + run.fill_s + std::max(0.0, dp_exposed) + param_gather +
                       other + optimizer;

  if (options.timeline) {
    if (run.events.empty() && q.micro_batches() > 0) {
      r.timeline_truncated = true;
    } else {
      size_t total = 0;
      for (const auto& x : runs) total += x.events.size();
      if (total > options.max_timeline_events) {
        r.timeline_truncated = true;
      } else {
        // The simulated schedule of every replica set, shifted to end with the closed form's
        // pipeline time where that is the reference, then gradient sync and the optimizer.
        for (size_t set = 0; set < runs.size(); ++set) {
          const PipelineRun& x = runs[set];
          double makespan = 0;
          for (const auto& ev : x.events) makespan = std::max(makespan, ev.end_s);
          const double scale = makespan > 0 ? (x.pipe_s + x.fill_s) / makespan : 1;
          std::vector<double> stage_end(p.pp, 0);
          for (const auto& ev : x.events) {
            const char* kind = ev.kind == PipelineEvent::Kind::forward    ? "forward"
                               : ev.kind == PipelineEvent::Kind::backward ? "backward"
                                                                          : "send";
            r.timeline.push_back(
                {kind, ev.stage,
                 ev.chunk, ev.micro_batch, ev.start_s * scale, ev.end_s * scale,
                 static_cast<int>(set), x.layout.groups[ev.stage]});
            stage_end[ev.stage] = std::max(stage_end[ev.stage], ev.end_s * scale);
          }
          if (set != critical) continue;
          double sync_end = run.pipe_s + run.fill_s;
          for (int i = 0; i < p.pp; ++i) {
            if (stage_sync[i] > 0)
              r.timeline.push_back({"dp_sync", i, 0, 0, stage_end[i],
                                    stage_end[i] + stage_sync[i], static_cast<int>(set),
                                    x.layout.groups[i]});
            sync_end = std::max(sync_end, stage_end[i] + stage_sync[i]);
          }
          sync_end = std::max(sync_end, run.pipe_s + run.fill_s + std::max(0.0, dp_exposed));
          for (int i = 0; i < p.pp; ++i)
            r.timeline.push_back({"optimizer", i, 0, 0, sync_end + param_gather + other,
                                  sync_end + param_gather + other + x.stages[i].report.optimizer_s,
                                  static_cast<int>(set), x.layout.groups[i]});
        }
      }
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
  for (const auto& x : runs)
    for (const auto& s : x.stages) {
      const StageReport& st = s.report;
      if (st.memory.fits()) continue;
      r.fits = false;
      r.warnings.push_back(fmt::format(
          "stage {} does not fit: needs {:.1f} GiB per GPU (weights {:.1f}, gradients {:.1f}, "
          "optimizer {:.1f}, activations {:.1f}, other {:.1f}) but {} has {:.1f} GiB",
          st.index, st.memory.total / GiB, st.memory.weights / GiB, st.memory.gradients / GiB,
          st.memory.optimizer / GiB, st.memory.activations / GiB, st.memory.other / GiB, st.gpu,
          st.memory.capacity / GiB));
    }
  for (const auto& g : sc.cluster.groups)
    if (p.tp > g.gpus_per_node)
      r.warnings.push_back(fmt::format("plan.tp={} spans nodes ({} GPUs per node): every "
                                       "layer's tensor-parallel collectives cross the network",
                                       p.tp, g.gpus_per_node));
  if (p.pp > 1 && q.micro_batches() < p.pp)
    r.warnings.push_back(fmt::format("only {} micro-batches for {} pipeline stages: the pipeline "
                                     "never fills and most of the step is bubble",
                                     q.micro_batches(), p.pp));
  if (p.sequence_parallel && p.tp == 1)
    r.warnings.push_back("plan.sequence_parallel has no effect with plan.tp=1");
  for (const auto& g : sc.cluster.groups)
    if (p.flash_attention && (g.gpu.arch == "volta" || g.gpu.arch == "turing"))
      r.warnings.push_back(fmt::format("FlashAttention needs Ampere or newer; {} runs unfused "
                                       "attention (set plan.flash_attention=false)",
                                       g.gpu.name));
  if (!p.replicas.empty()) {
    int64_t taken = 0;
    for (const auto& set : sets) taken += set.count * set.micro_batches;
    if (taken != p.global_batch / p.micro_batch)
      r.warnings.push_back(fmt::format("the replicas take {} micro-batches per iteration, not "
                                       "global_batch / micro_batch = {}: no equal split exists "
                                       "for these replica counts",
                                       taken, p.global_batch / p.micro_batch));
  }
  return r;
}

}  // namespace stepcast
