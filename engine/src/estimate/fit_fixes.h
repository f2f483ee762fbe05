// What would make an out-of-memory plan fit: the engine's own answer, not a fixed hint. Each
// change a planner would try first is made to the plan, checked against the rules and
// estimated again; the ones whose every stage then fits are ranked by iteration time. Private
// to the engine; fit_fixes_of (estimate.h) is its public name, which EstimateOptions::fit_fixes
// points at when a caller asks.
#pragma once

#include <vector>

#include "stepcast/estimate.h"

namespace stepcast::detail {

// The changes, one at a time, that make `scenario`'s plan fit, fastest first; `without` is its
// estimate as it stands (out of memory). Never a setting the plan already has:
//   - selective recompute of one more of Megatron-Core's modules, or full recompute;
//   - activation offloading: the fewest layers that fit (Megatron-Core's
//     cpu_offloading_num_layers, where the rules allow it);
//   - Adam's moments in bf16; the distributed optimizer;
//   - TP, PP or CP up to the smallest value the rules accept at which it fits, DP down to keep
//     the GPUs.
std::vector<FitFix> fit_fixes(const Scenario& scenario, const Report& without);

}  // namespace stepcast::detail
