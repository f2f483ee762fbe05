// Which schedule a plan runs (schedule.h).
#include "schedule/schedules.h"

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
  }
  return detail::kOneFOneB;  // (a plan the rules refuse; 1F1B keeps callers safe)
}

ScheduleShape schedule_shape(const Plan& p) {
  return {p.pp, std::max(p.vpp, 1), p.micro_batches()};
}

}  // namespace stepcast
