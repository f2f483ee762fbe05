// DualPipe, the bidirectional original of DualPipeV (DeepSeek-V3 technical report,
// arXiv:2412.19437, sec. 3.2.1; deepseek-ai/DualPipe at 3da1bbe, dualpipe/dualpipe.py): pp ranks
// (even), two copies of the model's pp stages fed from both ends, rank r holding stage r of the
// forward direction and stage pp - 1 - r of the reverse one, half of each replica's micro-batches
// in each direction (DualPipe.step asserts an even pp and an even count of at least 2·pp).
//
// DualPipe.step is DualPipeV.step (dualpipev.cpp) with rank r replaced by its half rank
// min(r, pp - 1 - r), the ranks by pp/2 and the micro-batches by half of them: the same eight
// steps, and the middle ranks' unpaired first pair where DualPipeV's last rank has it. So rank r
// and its mirror pp - 1 - r run the order DualPipeV's rank min(r, pp - 1 - r) runs on pp/2 ranks,
// over the same pp stages of layers/pp each, holding the same two stages' layers (the repository's
// README, "based on the same number of PP stages": the same bubble (PP/2 - 1)(F&B + B - 3W), 2x
// the parameters and PP + 1 activations per device for both). The two halves of the pipeline
// are then two replicas of that DualPipeV pipeline: each mirrored pair holds copies of the same
// layers, whose gradients are reduced over both copies and every data-parallel replica.
//
// What differs and is not priced: across the middle DualPipe sends each micro-batch's activation
// and gradient between ranks pp/2 - 1 and pp/2, where the V turns on one rank; and where the
// copies' ranks sit in the cluster (here as data-parallel replicas in Megatron's rank order).
#include "stepcast/schedule.h"

namespace stepcast {

Plan plan_as_run(const Plan& p) {
  if (p.effective_schedule() != PipelineSchedule::dualpipe || p.pp < 2) return p;
  Plan half = p;
  half.schedule = PipelineSchedule::dualpipev;
  half.schedule_derived = false;
  half.pp = p.pp / 2;
  half.vpp = 2;
  half.dp = 2 * p.dp;  // the mirrored halves: the same GPUs, half the micro-batches each
  return half;
}

}  // namespace stepcast
