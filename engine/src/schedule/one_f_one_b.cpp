// 1F1B (PipeDream-flush; Megatron's schedule without virtual stages): rank i runs p - i - 1
// warm-up forwards, then alternates one forward and one backward, then drains. Its time is
// exact in closed form for any stage times (Aceso, Metis: the straggler form),
//   T = (m - 1)·max_i u_i + sum_i u_i,
// and rank i holds the activations of min(p - i, m) micro-batches (Narayanan et al., SC21 §2.2).
#include "schedule/megatron_order.h"
#include "schedule/schedules.h"

namespace stepcast::detail {

namespace {

double in_flight(const ScheduleShape& s, int stage) {
  return std::min(static_cast<double>(s.stages - stage), static_cast<double>(s.micro_batches));
}

void rank_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  megatron_order(stage, s.stages, 1, s.micro_batches, out);
}

int64_t blocks_of_rank(const ScheduleShape& s, int) { return 2 * s.micro_batches * 1; }

PipelineTime closed_form(const std::vector<StagePasses>& stages, const ScheduleShape& s) {
  return pipeline_time(units_of(stages), s.micro_batches, 1);
}

double last_backward_s(double backward_s, double, const ScheduleShape&) { return backward_s; }

// The next stage's last backward ends one backward sooner (the drain).
double drain_step_s(double backward_s, double, const ScheduleShape&) { return backward_s; }

SteadyState steady_state(const ScheduleShape& s, int stage) {
  return megatron_steady_state(stage, s.stages, 1, s.micro_batches);
}

void blocks_from(const ScheduleShape& s, int stage, int64_t k, int64_t n, ScheduleBlock* out) {
  megatron_blocks_from(stage, s.stages, 1, s.micro_batches, k, n, out);
}

}  // namespace

const Schedule kOneFOneB{"1f1b",
                  &in_flight,
                  &rank_order,
                  /*block_at=*/nullptr,  // blocks_from gives them
                  &blocks_of_rank,
                  &closed_form,
                  /*closed_form_exact=*/true,
                  &last_backward_s,
                  &drain_step_s,
                  &steady_state,
                  StagePlacement::loop,
                  &blocks_from};

}  // namespace stepcast::detail
