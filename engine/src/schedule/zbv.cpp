// ZB-V, the memory-efficient zero-bubble schedule of Qi et al., "Zero Bubble Pipeline
// Parallelism", ICLR 2024, sec. 5: two chunks per rank placed in a V (rank i holds virtual
// stages i and 2p - 1 - i; schedule.h, StagePlacement::v_shape), the backward split into B and
// W as in ZB-H1 (zero_bubble.cpp), each chunk half of the stage's layers. The order is the
// handcrafted one PyTorch and torchtitan run (ScheduleZBVZeroBubble._calculate_single_rank_
// operations, torch/distributed/pipelining/schedules.py at pytorch/pytorch 00722e64), rank r of
// p over n = max(m, 2p - 1) micro-batches, blocks of micro-batches >= m left out (as there):
//
//   warm-up   2(p - r) - 1 F0;  r times F1 F0;  p - r times F1 B1 W1
//   steady    F0 B0 W0 F1 B1 W1 while chunk 0 has forwards left, then B0 W0 F1 B1 W1 until
//             chunk 1's forwards catch up (n - p steps in all)
//   cool-down r times B0 B1;  p - r times B0 W0;  the W1 left;  the W0 left
//
// (sail-sg/zero-bubble-pipeline-parallelism at 39f2c186 builds its ZB-V greedily from measured
// F, B and W times, megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py; this is the
// fixed order a framework runs whatever the times).
//
// Its time, with F, B and W a chunk's (half a stage's) passes, on identical stages without
// messages, for m >= 2p - 1 and F <= B, W <= B (derived from the order; the event simulation
// agrees to the last bit over p and the ratios, tests/engine/schedule_test.cpp):
//   T = 2m·(F + B + W) + (p - 1)·max(B, 2(B - W)),
// against 1F1B's 2m·(F + B + W) + (p - 1)·2(F + B + W) on the same stages. The paper's
// bubble-free ZB-V (F = B = W) is the limit m >> p: the last rank still waits p - 1 chunk
// forwards for its first input, which no order can fill. Outside those ratios the wait grows with
// p; the estimate simulates (closed_form_exact is false).
#include <algorithm>

#include "schedule/schedules.h"

namespace stepcast::detail {

namespace {

ScheduleBlock F(int chunk, int64_t mb) { return {BlockKind::forward, chunk, mb}; }
ScheduleBlock B(int chunk, int64_t mb) { return {BlockKind::input_grad, chunk, mb}; }
ScheduleBlock W(int chunk, int64_t mb) { return {BlockKind::weight_grad, chunk, mb}; }

// Block k of rank r's order over n >= 2p - 1 micro-batches, none left out (6n blocks).
ScheduleBlock full_block_at(int64_t p, int64_t r, int64_t n, int64_t k) {
  const int64_t warm_f0 = 2 * (p - r) - 1;
  if (k < warm_f0) return F(0, k);
  k -= warm_f0;
  if (k < 2 * r) return k % 2 == 0 ? F(1, k / 2) : F(0, warm_f0 + k / 2);
  k -= 2 * r;
  if (k < 3 * (p - r)) {
    const int64_t j = k / 3;
    return k % 3 == 0 ? F(1, r + j) : k % 3 == 1 ? B(1, j) : W(1, j);
  }
  k -= 3 * (p - r);
  // Steady steps j: chunk 0's forward (while it has some left), B0 W0 of j, chunk 1's F, B, W.
  const int64_t with_f0 = n - (2 * p - r - 1), without_f0 = p - r - 1;
  const auto step = [&](int64_t j, int64_t at) {
    switch (at) {
      case 0: return B(0, j);
      case 1: return W(0, j);
      case 2: return F(1, p + j);
      case 3: return B(1, p - r + j);
      default: return W(1, p - r + j);
    }
  };
  if (k < 6 * with_f0) return k % 6 == 0 ? F(0, 2 * p - r - 1 + k / 6) : step(k / 6, k % 6 - 1);
  k -= 6 * with_f0;
  if (k < 5 * without_f0) return step(with_f0 + k / 5, k % 5);
  k -= 5 * without_f0;
  if (k < 2 * r) return k % 2 == 0 ? B(0, n - p + k / 2) : B(1, n - r + k / 2);
  k -= 2 * r;
  if (k < 2 * (p - r)) return k % 2 == 0 ? B(0, n - p + r + k / 2) : W(0, n - p + k / 2);
  k -= 2 * (p - r);
  if (k < r) return W(1, n - r + k);
  return W(0, n - r + (k - r));
}

// Fewer than 2p - 1 micro-batches: the order over 2p - 1 without the blocks past m (a few
// dozen blocks; what PyTorch runs, its empty slots aside).
void short_order(int64_t p, int64_t r, int64_t m, std::vector<ScheduleBlock>& out) {
  const int64_t n = 2 * p - 1;
  for (int64_t k = 0; k < 6 * n; ++k) {
    const ScheduleBlock blk = full_block_at(p, r, n, k);
    if (blk.micro_batch < m) out.push_back(blk);
  }
}

ScheduleBlock block_at(const ScheduleShape& s, int stage, int64_t k) {
  if (s.micro_batches >= 2 * int64_t{s.stages} - 1)
    return full_block_at(s.stages, stage, s.micro_batches, k);
  std::vector<ScheduleBlock> order;
  short_order(s.stages, stage, s.micro_batches, order);
  return order[static_cast<size_t>(k)];
}

int64_t blocks_of_rank(const ScheduleShape& s, int) { return 6 * s.micro_batches; }

void rank_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  if (s.micro_batches < 2 * int64_t{s.stages} - 1)
    return short_order(s.stages, stage, s.micro_batches, out);
  for (int64_t k = 0; k < blocks_of_rank(s, stage); ++k) out.push_back(block_at(s, stage, k));
}

// Micro-batches in flight: each chunk's forward holds half a stage's activations until its W
// (as ZB-H1 counts them, zero_bubble.cpp). The warm-up's forwards reach 2p chunks on every rank
// (the paper's p·M_B, as 1F1B's first stage), and the steady steps free one for each one they
// add; with fewer micro-batches rank r reaches (m + r + 1)/2 (counted from the order:
// tests/engine/schedule_test.cpp).
double in_flight(const ScheduleShape& s, int stage) {
  const double m = static_cast<double>(s.micro_batches);
  return std::min({static_cast<double>(s.stages), m, (m + stage + 1) / 2});
}

// Every stage but the bottleneck adds its wait, max(B, 2(B - W)) in a chunk's passes: half its
// B, or its B less its W (whole-stage passes here).
PipelineTime closed_form(const std::vector<StagePasses>& stages, const ScheduleShape& s) {
  PipelineTime t = pipeline_time(units_of(stages), s.micro_batches, 1);
  t.bubble_s = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (static_cast<int>(i) == t.bottleneck) continue;
    const StagePasses& x = stages[i];
    t.bubble_s += std::max(x.input_grad_s / 2, x.input_grad_s - x.weight_grad_s);
  }
  t.total_s = t.steady_s + t.bubble_s;
  return t;
}

// A stage's gradients are complete after its last W, of chunk 0: half the stage's W.
double last_backward_s(double, double weight_grad_s, const ScheduleShape&) {
  return weight_grad_s / 2;
}

// Every rank ends on its deferred W at about the same time (the V brings the last micro-batch
// back to the first rank): no drain hides a later stage's gradient reduction.
double drain_step_s(double, double, const ScheduleShape&) { return 0; }

// The steady steps with chunk 0's forward: six blocks, one micro-batch on, on every rank.
SteadyState steady_state(const ScheduleShape& s, int stage) {
  const int64_t p = s.stages, r = stage, n = s.micro_batches;
  if (n < 2 * p - 1) return {};
  const int64_t first = 2 * (p - r) - 1 + 2 * r + 3 * (p - r);
  return {first, first + 6 * (n - (2 * p - r - 1)), 6, 1};
}

}  // namespace

const Schedule kZbv{"zbv",
                    &in_flight,
                    &rank_order,
                    &block_at,
                    &blocks_of_rank,
                    &closed_form,
                    /*closed_form_exact=*/false,
                    &last_backward_s,
                    &drain_step_s,
                    &steady_state,
                    StagePlacement::v_shape};

}  // namespace stepcast::detail
