// Step 5 of an estimate: the critical path (the bottleneck stage of the slowest pipeline, then
// the tail) in named parts. Each part is computed from the step that produces it; the parts add
// up to the iteration time, which tests assert rather than assume.
#include "estimate/step.h"

namespace stepcast::detail {

Breakdown breakdown(const PipelineRun& run, const Tail& tail) {
  const double m = static_cast<double>(run.plan.micro_batches());
  const StageTime& t = run.stages[run.bottleneck].time;
  Breakdown b;
  b.forward = m * t.forward;
  b.backward = m * t.backward;
  b.recompute = m * t.recompute;
  b.tp_comm = m * t.tp;
  b.cp_comm = m * t.cp;
  b.ep_comm = m * t.ep;
  b.pp_comm = run.blocking_p2p_s + run.fill_s;
  b.bubble = run.bubble_s;
  b.dp_comm = m * t.zero3 + tail.lockstep_s + tail.dp_exposed_s + tail.param_gather_s;
  b.optimizer = tail.optimizer_s;
  b.other = tail.other_s;
  b.host = m * t.host;
  b.offload = m * t.offload;
  return b;
}

}  // namespace stepcast::detail
