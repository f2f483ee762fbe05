// Step 5 of an estimate: the critical path (the bottleneck stage of the slowest pipeline, then
// the tail) in named parts. Each part is computed from the step that produces it; the parts add
// up to the iteration time, which tests assert rather than assume.
#include "estimate/step.h"

namespace stepcast::detail {

Breakdown breakdown(const PipelineRun& run, const Tail& tail) {
  const double m = static_cast<double>(run.plan.micro_batches());
  const StageCost& stage = run.stages[run.bottleneck];
  const StageTime& t = stage.time;
  // m micro-batches of the stage's time, where the EP overlap's first forward and last backward
  // run unpaired (StageCost::unpaired) m - 1 of the paired passes' and one of the unpaired.
  const StageTime& ends = stage.unpaired ? *stage.unpaired : t;
  const auto part = [&](double StageTime::*field) {
    return m > 0 ? (m - 1) * t.*field + ends.*field : 0.0;
  };
  Breakdown b;
  b.forward = part(&StageTime::forward);
  b.backward = part(&StageTime::backward);
  b.recompute = part(&StageTime::recompute);
  b.tp_comm = part(&StageTime::tp);
  b.cp_comm = part(&StageTime::cp);
  b.ep_comm = part(&StageTime::ep);
  b.pp_comm = run.blocking_p2p_s + run.fill_s;
  b.bubble = run.bubble_s;
  b.dp_comm = part(&StageTime::zero3) + run.gather_s + tail.lockstep_s + tail.dp_exposed_s +
              tail.param_gather_s;
  b.optimizer = tail.optimizer_s;
  b.other = tail.other_s;
  b.host = part(&StageTime::host);
  b.offload = part(&StageTime::offload);
  return b;
}

}  // namespace stepcast::detail
