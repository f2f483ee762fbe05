// Which schedule a plan runs (schedule.h).
#include "schedule/schedules.h"

namespace stepcast {

const Schedule& schedule_of(const Plan& p) {
  return p.vpp > 1 && p.pp > 1 ? detail::kInterleaved : detail::kOneFOneB;
}

ScheduleShape schedule_shape(const Plan& p) {
  return {p.pp, std::max(p.vpp, 1), p.micro_batches()};
}

}  // namespace stepcast
