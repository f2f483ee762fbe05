// The interleaved 1F1B of Narayanan et al. (SC21 §2.2.2): v model chunks per rank, micro-batches
// in groups of p, each chunk a block of 1/v of the stage's work, so the fill and drain shrink v
// times: for identical stages
//   T = (m + (p - 1)/v)·u.
// Rank i runs 2(p - i - 1) + (v - 1)·p chunk forwards before its first backward and one more
// before it (Megatron-Core's get_pp_rank_microbatches, megatron/core/pipeline_parallel/
// schedules.py at NVIDIA/Megatron-LM d98e8a64, micro-batch groups of p, the default), each
// holding 1/v of the stage's activations: min((2(p - i - 1) + (v - 1)·p + 1)/v, m) micro-batches,
// p + (p - 1)/v on the first rank, 2i/v fewer on rank i. The closed form is exact for identical stages only; stages that differ (the embedding, the output
// layer, uneven splits, mixed GPUs) are simulated.
#include "schedule/megatron_order.h"
#include "schedule/schedules.h"

namespace stepcast::detail {

namespace {

double in_flight(const ScheduleShape& s, int stage) {
  const double p = s.stages, v = s.chunks;
  const double chunk_forwards = 2 * (p - stage - 1) + (v - 1) * p + 1;
  return std::min(chunk_forwards / v, static_cast<double>(s.micro_batches));
}

void rank_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  megatron_order(stage, s.stages, s.chunks, s.micro_batches, out);
}

int64_t blocks_of_rank(const ScheduleShape& s, int) { return 2 * s.micro_batches * s.chunks; }

PipelineTime closed_form(const std::vector<StagePasses>& stages, const ScheduleShape& s) {
  return pipeline_time(units_of(stages), s.micro_batches, s.chunks);
}

// A chunk's gradients are complete after its last backward: 1/v of the stage's backward.
double last_backward_s(double backward_s, double, const ScheduleShape& s) {
  return backward_s / s.chunks;
}

SteadyState steady_state(const ScheduleShape& s, int stage) {
  return megatron_steady_state(stage, s.stages, s.chunks, s.micro_batches);
}

void blocks_from(const ScheduleShape& s, int stage, int64_t k, int64_t n, ScheduleBlock* out) {
  megatron_blocks_from(stage, s.stages, s.chunks, s.micro_batches, k, n, out);
}

}  // namespace

const Schedule kInterleaved{"interleaved",
                  &in_flight,
                  &rank_order,
                  /*block_at=*/nullptr,  // blocks_from gives them
                  &blocks_of_rank,
                  &closed_form,
                  /*closed_form_exact=*/false,
                  &last_backward_s,
                  &last_backward_s,  // the drain: one chunk's backward per stage
                  &steady_state,
                  StagePlacement::loop,
                  &blocks_from};

}  // namespace stepcast::detail
