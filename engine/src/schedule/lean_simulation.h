// The lean simulation (lean_simulation.cpp) under a budget of blocks: what the estimate runs, so
// that its block budget (limits.h) counts the blocks simulated, not the blocks the schedule has
// (the extrapolated steady state costs none). Private to schedule/ and the estimate.
#pragma once

#include <cstdint>
#include <vector>

#include "stepcast/pipeline.h"
#include "stepcast/schedule.h"

namespace stepcast::detail {

// simulate_schedule_time (pipeline.h) running at most `max_blocks` blocks (the event
// simulation it falls back on counts all of its own). Returns false, and leaves `out` without a
// makespan, when the budget runs out first: the caller keeps the schedule's closed form.
bool simulate_schedule_time_within(const std::vector<double>& forward_s,
                                   const std::vector<double>& backward_s, int stages,
                                   int64_t micro_batches, int virtual_stages,
                                   const std::vector<double>& p2p_s, bool p2p_blocking, int watch,
                                   const Schedule* schedule,
                                   const std::vector<double>& weight_grad_s,
                                   const std::vector<double>& rank_start_s,
                                   uint64_t max_blocks, ScheduleTime& out);

// Each rank's last compute block's end in a simulation's events (sends aside).
std::vector<double> rank_ends(const std::vector<PipelineEvent>& events, int ranks);

}  // namespace stepcast::detail
