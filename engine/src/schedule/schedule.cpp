// Which schedule a plan runs (schedule.h).
#include "schedule/schedules.h"

#include <algorithm>

namespace stepcast {

const Schedule& schedule_of(const Plan& p) {
  switch (p.effective_schedule()) {
    case PipelineSchedule::one_f_one_b: break;
    case PipelineSchedule::interleaved:
      if (p.vpp > 1 && p.pp > 1) return detail::kInterleaved;
      break;
    case PipelineSchedule::zero_bubble:
      if (p.vpp == 1 && p.pp > 1) return detail::kZeroBubble;
      break;
    case PipelineSchedule::zbv:
      if (p.vpp == 2 && p.pp > 1) return detail::kZbv;
      break;
    case PipelineSchedule::dualpipev:
      if (p.vpp == 2 && p.pp > 1) return detail::kDualPipeV;
      break;
    case PipelineSchedule::dualpipe: break;  // run as DualPipeV on half the ranks (dualpipe.cpp)
  }
  return detail::kOneFOneB;  // (a plan the rules refuse; 1F1B keeps callers safe)
}

int virtual_stage_of(StagePlacement placement, int stages, int rank, int chunk) {
  switch (placement) {
    case StagePlacement::loop: break;
    case StagePlacement::v_shape: return chunk % 2 == 0 ? chunk * stages + rank
                                                        : (chunk + 1) * stages - 1 - rank;
  }
  return chunk * stages + rank;
}

StageHome home_of(StagePlacement placement, int stages, int virtual_stage) {
  const int chunk = virtual_stage / stages, offset = virtual_stage % stages;
  switch (placement) {
    case StagePlacement::loop: break;
    case StagePlacement::v_shape:
      return {chunk % 2 == 0 ? offset : stages - 1 - offset, chunk};
  }
  return {offset, chunk};
}

// Rank r's message time is its link to rank r + 1 (the last rank's: to the first). In the loop
// the edge after virtual stage k leaves k's rank on that link (a single rank's chunks included,
// as Megatron sends them); in the V it joins two neighbouring ranks, or stays on the last rank at
// the turn.
int Schedule::link_after(const ScheduleShape& s, int virtual_stage) const {
  const int from = home(s, virtual_stage).rank;
  if (placement == StagePlacement::loop) return from;
  const int to = home(s, virtual_stage + 1).rank;
  return from == to ? -1 : std::min(from, to);
}

ScheduleShape schedule_shape(const Plan& p) {
  return {p.pp, std::max(p.vpp, 1), p.micro_batches()};
}

}  // namespace stepcast
