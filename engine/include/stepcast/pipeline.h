// The pipeline schedule: 1F1B (PipeDream-flush, Megatron's default) and the interleaved 1F1B of
// Narayanan et al. (SC21). With per-stage times u_i (forward + backward + recompute of one
// micro-batch, plus blocking send/receive) and m micro-batches,
//   T = m * max_i u_i + (sum_i u_i - max_i u_i) / v,
// which is (m + (p-1)/v) u for identical stages (SC21 eq. for the interleaved bubble) and the
// straggler form (m-1) max u + sum u (Aceso, Metis) for v = 1.
#pragma once

#include <vector>

namespace stepcast {

struct PipelineTime {
  double total_s = 0;
  double steady_s = 0;  // m x the bottleneck stage's time per micro-batch
  double bubble_s = 0;  // fill and drain: total - steady
  int bottleneck = 0;   // the stage with the largest time per micro-batch
};

PipelineTime pipeline_time(const std::vector<double>& per_micro_batch_s, long micro_batches,
                           int virtual_stages);

}  // namespace stepcast
