// Step 4 of an estimate: what follows the pipelines. Data-parallel gradient sync after the
// slowest pipeline (a barrier across replicas), the distributed optimizer's parameter gather,
// the small all-reduces (TP-replicated and tied-embedding gradients, gradient norm, loss) and the
// optimizer step.
#include <algorithm>

#include "estimate/step.h"
#include "stepcast/overlap.h"

namespace stepcast::detail {

double lockstep_per_micro_batch_s(const std::vector<StageCost>& stages) {
  double most = 0;
  for (const StageCost& cost : stages) most = std::max(most, cost.dp_per_micro_batch_s);
  return most;
}

// The gradient buckets go out as one burst (bucketed_overlap_s): after the last micro-batch's
// backward, or with overlap during it, each model chunk's once its last backward is done, so
// only the last chunk's can be exposed: what its backward does not cover, at least the last
// bucket. Later stages finish their last backward earlier (the 1F1B drain), which hides part
// of their sync.
double exposed_sync_s(const Scenario& sc, const Plan& set_plan,
                      const std::vector<StageCost>& stages, std::vector<double>* stage_sync,
                      const PipelineRun* run) {
  const Plan& p = sc.plan;
  const int zero = p.effective_zero_stage();
  const double slowdown = sc.calibration.overlap_slowdown;
  const ScheduleShape shape = schedule_shape(set_plan);
  const Schedule& schedule = schedule_of(set_plan);
  // The last chunk's share of a stage's gradients (1/chunks when interleaved).
  const double last_share = 1.0 / shape.chunks;
  // A simulated pipeline's own drain: the closed form's is exact for 1F1B on equal stages, not
  // for a zero-bubble schedule on stages that differ, whose simulated pipeline could grow while
  // the closed-form slack behind it shrank (issue 38, seed 47659: a B300's HBM x 0.443 0.6 %
  // faster).
  const bool simulated = run != nullptr && run->stage_end_s.size() == static_cast<size_t>(p.pp);
  double exposed = 0, slack = 0;
  for (int i = 0; i < p.pp; ++i) {
    if (simulated) slack = std::max(0.0, run->pipe_s - run->stage_end_s[i]);
    const StageCost& cost = stages[i];
    const DpBurst& reduce = cost.dp_reduce;
    // The last backward: under the EP overlap without pipelining it runs unpaired
    // (StageCost::unpaired), the window behind which Megatron reduces the gradients (the last
    // micro-batch's backward runs outside no_sync, combined_1f1b.py).
    // (Paired with a forward, the backward as its compute runs: StageCost::sync_window_s. The
    // closed-form drain below is the pipeline's, its blocks.)
    const double backward = cost.last_backward_pass_s(), weight_grad = cost.weight_grad_block_s();
    const double last_backward = schedule.last_backward_s(cost.sync_window_s(), weight_grad, shape);
    double sync = reduce.whole_s();
    if (p.overlap_grad_reduce && sync > 0 && zero < 3)
      sync = bucketed_overlap_s(reduce.transfer_s * last_share, reduce.fixed_s,
                                reduce.buckets * last_share, last_backward, slowdown);
    if (stage_sync) (*stage_sync)[i] = sync;
    exposed = std::max(exposed, sync - slack);
    slack += schedule.drain_step_s(backward, weight_grad, shape) + cost.report.p2p_s;
  }
  return std::max(0.0, exposed);
}

namespace {

// A stage's overlapped parameter gather: what its first forward cannot hide.
double overlapped_gather_s(const Scenario& sc, const StageCost& cost) {
  const DpBurst& g = cost.dp_gather;
  return bucketed_overlap_s(g.transfer_s, g.fixed_s, g.buckets, cost.first_forward_pass_s(),
                            sc.calibration.overlap_slowdown);
}

bool gathers_beside_the_fill(const Plan& p) {
  const int zero = p.effective_zero_stage();
  return p.overlap_param_gather && zero >= 1 && zero < 3 && p.pp > 1;
}

}  // namespace

// The distributed optimizer's parameter all-gather (dense and expert parameters from their own
// groups, DP x CP and expert DP), one burst after the step, or (overlapped) in the forward
// pre-hooks of the next iteration, where only the first micro-batch's forward can hide it
// (unpaired under the EP overlap, StageCost::first_forward_pass_s): each replica's own, before
// its pipeline. Overlapped over several stages, each stage's runs beside the pipeline's fill
// instead (first_forward_gathers_s).
double param_gather_s(const Scenario& sc, const std::vector<StageCost>& stages) {
  const Plan& p = sc.plan;
  const int zero = p.effective_zero_stage();
  double gather = 0;
  if (zero >= 1 && zero < 3 && !gathers_beside_the_fill(p))
    for (const StageCost& cost : stages)
      gather = std::max(gather, p.overlap_param_gather ? overlapped_gather_s(sc, cost)
                                                       : cost.dp_gather.whole_s());
  return gather;
}

// Overlapped over several stages, the gathers run beside the pipeline's fill. With virtual
// stages Megatron-Core starts every stage's gathers of its first chunks as the schedule begins
// (align_param_gather, on by default there: schedules.py calls param_sync_func; NVIDIA/
// Megatron-LM at d98e8a6), and Megatron-Bridge's performance recipes send them with the
// optimizer step before it (overlap_param_gather_with_optimizer_step,
// presets/frameworks/megatron-core.json). A stage that waits for the fill hides its gather
// behind the wait: its rank starts no earlier than its gather lets its first forward
// (overlapped_gather_s, as if the forward began with the iteration) and no earlier than the
// fill lets it. Added before the whole pipeline as one maximum over the stages instead, a
// slower GPU's stage late in the fill hid more of its gather behind its longer forward while
// the fill's slack absorbed the forward: an MI300X stage's peaks x 0.935 0.003 % faster
// (issue 38's invariant suite, seed 41449). Without virtual stages this is an approximation:
// Megatron-Core r0.8.0 starts only the first bucket with the step (the optimizer's zero_grad,
// distrib_optimizer.py at core_r0.8.0), later versions start it in the stage's first forward's
// pre-hook (finish_param_sync, param_and_grad_buffer.py at d98e8a6), each next bucket after
// the one before, so there each stage's exposure lengthens its own first forward and the
// exposures add along the fill. Modelled so, the MCORE-H100 weak-scaling rows of
// tests/validation (vpp 1 assumed, not stated; the source overlaps pipeline communication,
// which needs virtual stages) move +5 to +13 %: not done (tests/fuzz/README.md). Empty where
// the gather does not overlap the fill (param_gather_s then).
std::vector<double> first_forward_gathers_s(const Scenario& sc,
                                            const std::vector<StageCost>& stages) {
  std::vector<double> out;
  if (!gathers_beside_the_fill(sc.plan)) return out;
  out.reserve(stages.size());
  for (const StageCost& cost : stages) out.push_back(overlapped_gather_s(sc, cost));
  return out;
}

double fill_delay_s(const std::vector<double>& gathers, const std::vector<double>& fill_start) {
  double delay = 0;
  for (size_t k = 0; k < gathers.size() && k < fill_start.size(); ++k)
    delay = std::max(delay, gathers[k] - fill_start[k]);
  return delay;
}

Tail tail(const Scenario& sc, const std::vector<PipelineRun>& runs, size_t critical) {
  const PipelineRun& run = runs[critical];
  const Plan& p = sc.plan;
  Tail t;
  t.stage_sync_s.assign(p.pp, 0);
  // One ring spans every replica set: a bucket goes out once every set has produced it, so the
  // sync ends after the latest of the sets' ends plus what each one's own last backward leaves
  // exposed (a set that finishes earlier but hides less of the sync behind a shorter last
  // backward can end later: taking only the critical set's made a slower GPU in one set give a
  // shorter iteration, issue 38). Measured from the latest set's end (below).
  //
  // ZeRO-3's gathers and reduce-scatters (and DeepSpeed ZeRO-2's reduces) of every micro-batch
  // are collectives of every data-parallel rank, which spans the sets: a set that runs fewer
  // micro-batches than the busiest one still takes part in the collectives of the rest, with no
  // compute of its own to hide them, so it ends that much later (a faster GPU that took fewer
  // micro-batches skipped those gathers, and a slower one in the other set made the step
  // shorter, issue 38). Each set's end with them; the latest, past the critical pipeline, is
  // lockstep_s.
  int64_t most = 0;
  for (const auto& each : runs) most = std::max(most, each.plan.micro_batches());
  std::vector<double> ends;
  for (const auto& each : runs)
    ends.push_back(each.pipe_s + each.fill_s +
                   static_cast<double>(most - each.plan.micro_batches()) *
                       lockstep_per_micro_batch_s(each.stages));
  const double critical_end = run.pipe_s + run.fill_s;
  const double latest = *std::max_element(ends.begin(), ends.end());
  t.lockstep_s = latest - critical_end;
  // Each replica's parameter gather (param_gather_s), before its pipeline: what the iteration
  // exposes is how far the slowest replica's gather and pipeline together run past the latest
  // pipeline.
  std::vector<double> gathered;
  for (size_t k = 0; k < runs.size(); ++k)
    gathered.push_back(ends[k] + param_gather_s(sc, runs[k].stages));
  t.param_gather_s = std::max(latest, *std::max_element(gathered.begin(), gathered.end())) - latest;
  // The gradient sync after each set's gather and pipeline: a set whose gather delayed its
  // pipeline delays its buckets too. (Measuring the sync from the pipelines' ends alone and the
  // gather apart let a slower GPU in one set, now the latest, absorb the other set's gather: an
  // RTX 4090 set with its HBM x 0.57 made the step 0.7 % shorter, issue 38.)
  exposed_sync_s(sc, run.plan, run.stages, &t.stage_sync_s, &run);
  const double gather_end = latest + t.param_gather_s;
  for (size_t k = 0; k < runs.size(); ++k)
    t.dp_exposed_s = std::max(
        t.dp_exposed_s,
        gathered[k] + exposed_sync_s(sc, runs[k].plan, runs[k].stages, nullptr, &runs[k]) -
            gather_end);
  // After the gradient sync every replica takes its own steps, the slowest one's setting the
  // iteration: the TP-replicated and embedding gradients' all-reduces, the scalars (gradient
  // norm, loss) and the optimizer step.
  double tp_grads = 0, embedding_grads = 0, scalars = 0;
  for (const auto& each : runs)
    for (const StageCost& cost : each.stages) {
      t.optimizer_s = std::max(t.optimizer_s, cost.report.optimizer_s);
      // A stage costed as an earlier one has its census (StageCost::census_of), counted there.
      if (cost.census_of >= 0) continue;
      const auto& ops = cost.report.communication;
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
  t.other_s = tp_grads + embedding_grads + scalars;
  return t;
}

}  // namespace stepcast::detail
