// ZB-H1, the first handcrafted schedule of Qi et al., "Zero Bubble Pipeline Parallelism", ICLR
// 2024, sec. 3.1: the backward splits into B (input gradients, which the previous stage waits
// for) and W (weight gradients, which nothing waits for until the optimizer step). Rank i warms
// up as 1F1B (p - i - 1 forwards), then runs F, B and, from its (i + 1)-th step on, W: the first
// i weight gradients are deferred to the end, where they fill the drain that 1F1B leaves idle
// (sail-sg/zero-bubble-pipeline-parallelism at c5d50741, branch zb-h1-quick-start, megatron/
// core/pipeline_parallel/schedules.py: "delay W by rank"). The paper's bubble for identical
// stages,
//   T = m·(F + B + W) + (p - 1)·(F + B - W),
// holds while W is at most F and B; a W longer than either cannot fill more than min(F, B) of
// each step's wait, so in general (the event simulation agrees to the last bit for m >= p:
// tests/engine/zero_bubble_test.cpp)
//   T = m·(F + B + W) + (p - 1)·(F + B - min(W, F, B)).
// Stages that differ, and m < p, are simulated (closed_form_exact is false).
#include <algorithm>

#include "schedule/schedules.h"

namespace stepcast::detail {

namespace {

// Micro-batches in flight: p on every rank, the paper's peak (p·M_B, as 1F1B's first stage).
// Rank i holds p - i micro-batches' whole activations and i whose B has run and W has not; W
// reads each linear layer's input and the gradient of its output, most of a layer's activations
// (Korthikanti et al., MLSys 2023, sec. 4.1: the linear inputs are 14 of 34 s·b·h bytes, their
// output gradients as many again), so those count whole too.
double in_flight(const ScheduleShape& s, int) {
  return static_cast<double>(std::min<int64_t>(s.stages, s.micro_batches));
}

ScheduleBlock block_at(const ScheduleShape& s, int stage, int64_t k) {
  const int64_t m = s.micro_batches, defer = std::min<int64_t>(stage, m);
  const int64_t warmup = std::min<int64_t>(s.stages - stage - 1, m), steady = m - warmup;
  const auto F = [](int64_t mb) { return ScheduleBlock{BlockKind::forward, 0, mb}; };
  const auto B = [](int64_t mb) { return ScheduleBlock{BlockKind::input_grad, 0, mb}; };
  const auto W = [](int64_t mb) { return ScheduleBlock{BlockKind::weight_grad, 0, mb}; };
  if (k < warmup) return F(k);
  k -= warmup;
  // Steady steps j < defer: F(warmup + j), B(j); then F, B, W(j - defer).
  const int64_t short_steps = std::min(defer, steady);
  if (k < 2 * short_steps) return k % 2 == 0 ? F(warmup + k / 2) : B(k / 2);
  k -= 2 * short_steps;
  const int64_t long_steps = steady - short_steps;
  if (k < 3 * long_steps) {
    const int64_t j = short_steps + k / 3;
    return k % 3 == 0 ? F(warmup + j) : k % 3 == 1 ? B(j) : W(j - defer);
  }
  k -= 3 * long_steps;
  // The cool-down's backwards j >= steady: B(j), and W(j - defer) once j >= defer.
  const int64_t bare = std::max<int64_t>(0, defer - steady);
  if (k < bare) return B(steady + k);
  k -= bare;
  const int64_t first = steady + bare;
  if (k < 2 * (m - first)) return k % 2 == 0 ? B(first + k / 2) : W(first + k / 2 - defer);
  k -= 2 * (m - first);
  return W(m - defer + k);  // the deferred weight gradients
}

int64_t blocks_of_rank(const ScheduleShape& s, int) { return 3 * s.micro_batches; }

void rank_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  for (int64_t k = 0; k < blocks_of_rank(s, stage); ++k) out.push_back(block_at(s, stage, k));
}

// Every stage but the bottleneck adds its wait: its time less the W that fills it, and less
// min(W, F, B) of the wait for the gradient coming back.
PipelineTime closed_form(const std::vector<StagePasses>& stages, const ScheduleShape& s) {
  PipelineTime t = pipeline_time(units_of(stages), s.micro_batches, 1);
  t.bubble_s = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (static_cast<int>(i) == t.bottleneck) continue;
    const StagePasses& x = stages[i];
    t.bubble_s += x.unit_s - x.weight_grad_s -
                  std::min({x.weight_grad_s, x.forward_s, x.input_grad_s});
  }
  t.total_s = t.steady_s + t.bubble_s;
  return t;
}

// A stage's gradients are complete after its last W.
double last_backward_s(double, double weight_grad_s, const ScheduleShape&) {
  return weight_grad_s;
}

// The next stage's last B ends one B sooner, and it runs one more deferred W after it.
double drain_step_s(double backward_s, double weight_grad_s, const ScheduleShape&) {
  return std::max(0.0, backward_s - 2 * weight_grad_s);
}

// Between the deferred steps and the cool-down every rank runs F, B, W: three blocks, one
// micro-batch on.
SteadyState steady_state(const ScheduleShape& s, int stage) {
  const int64_t m = s.micro_batches, defer = std::min<int64_t>(stage, m);
  const int64_t warmup = std::min<int64_t>(s.stages - stage - 1, m), steady = m - warmup;
  const int64_t short_steps = std::min(defer, steady);
  const int64_t first = warmup + 2 * short_steps;
  return {first, first + 3 * (steady - short_steps), 3, 1};
}

}  // namespace

const Schedule kZeroBubble{"zero_bubble",
                           &in_flight,
                           &rank_order,
                           &block_at,
                           &blocks_of_rank,
                           &closed_form,
                           /*closed_form_exact=*/false,
                           &last_backward_s,
                           &drain_step_s,
                           &steady_state};

}  // namespace stepcast::detail
