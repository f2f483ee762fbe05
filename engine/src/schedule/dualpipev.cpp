// DualPipeV, the V-shaped "cut-in-half" DualPipe of DeepSeek (DeepSeek-V3 technical report,
// arXiv:2412.19437, sec. 3.2.1; deepseek-ai/DualPipe at 3da1bbe, dualpipe/dualpipev.py): two
// chunks per rank placed in a V (rank r holds virtual stages r and 2p - 1 - r; schedule.h,
// StagePlacement::v_shape), each chunk half of the stage's layers, over m >= 2p micro-batches
// (DualPipeV.step asserts it). The order is DualPipeV.step's eight steps, rank r of p (F a
// forward, BW a whole backward, B an input-gradient backward whose W is queued, W the oldest
// queued weight-gradient pass; PyTorch's ScheduleDualPipeV transcribes the same steps):
//
//   1  2(p - r - 1) F0            5  p - r - 1 times BW1, F1 BW0
//   2  r + 1 times F0 F1          6  r + 1 times B1 B0 (whole backwards BW until half-way, then B)
//   3  p - r - 1 times B1 W F1    7  p - r - 1 times W B0
//   4  m - 2p + r + 1 times       8  r + 1 times W
//      F0 BW1, F1 BW0
//
// In steps 4 and 5 a forward and the backward written beside it ("F0 BW1") are one overlapped
// pair in DualPipe: two micro-batches' passes on one rank, the exchange of one running beside the
// other's compute. Their compute still adds up; what the pair hides is the communication, which
// the estimate prices with plan.moe_overlap (the EP exchange behind the other pass's compute,
// estimate/stage_cost.cpp), as for Megatron's combined 1F1B.
//
// Its time, with F, B and W a chunk's (half a stage's) passes, on identical stages without
// messages, for m >= 2p and W <= B (read off the event simulation of the order, which agrees to
// the last bit over p, m and the ratios: tests/engine/schedule_test.cpp):
//   T = 2m·(F + B + W) + max((p - 1)·(F + B - W), (p - 1)·2(F - W), (p - 1)·(2B - W) - F):
// ZB-V's 2m(F + B + W) + (p - 1)B at F = B = W, more where B outgrows F (the whole backwards of
// steps 4 and 5 set the pace down the V) or F outgrows B + W (the forwards of steps 1 and 2).
// The repository's README puts DualPipeV's bubble at (PP/2 - 1)(F&B + B - 3W) (its B a whole
// backward, B + W here; PP = 2p): with no overlap, F&B = F + B + W, that is (p - 1)(F + 2B - W),
// a bound the order's time stays under wherever F <= 2B + W (a forward as long as two backwards
// is no layer's). Stages that differ are simulated (closed_form_exact is false).
#include <algorithm>

#include "schedule/schedules.h"

namespace stepcast::detail {

namespace {

ScheduleBlock F(int chunk, int64_t mb) { return {BlockKind::forward, chunk, mb}; }
ScheduleBlock BW(int chunk, int64_t mb) { return {BlockKind::backward, chunk, mb}; }
ScheduleBlock B(int chunk, int64_t mb) { return {BlockKind::input_grad, chunk, mb}; }
ScheduleBlock W(int chunk, int64_t mb) { return {BlockKind::weight_grad, chunk, mb}; }

// Step 6 turns the weight-gradient split on half-way through its r + 1 rounds: before round
// (r + 1)/2's B1 on odd ranks, between its B1 and B0 on even ones.
bool step6_splits(int64_t r, int64_t round, int chunk) {
  const int64_t half = (r + 1) / 2;
  return chunk == 0 || r % 2 == 1 ? round >= half : round > half;
}

// The t-th W of steps 7 and 8: the queue's oldest, first step 6's split backwards in their
// order, then step 7's B0s.
ScheduleBlock queued_w(int64_t p, int64_t r, int64_t m, int64_t t) {
  const int64_t half = (r + 1) / 2;
  if (t > r) return W(0, m - p + r + 1 + (t - r - 1));
  // Step 6's split backwards in order, round by round from `half`.
  int64_t k = t;
  if (r % 2 == 0) {  // round `half` splits its B0 only
    if (k == 0) return W(0, m - p + half);
    --k;
    const int64_t round = half + 1 + k / 2;
    return k % 2 == 0 ? W(1, m - (r + 1) + round) : W(0, m - p + round);
  }
  const int64_t round = half + k / 2;
  return k % 2 == 0 ? W(1, m - (r + 1) + round) : W(0, m - p + round);
}

// Block k of rank r's order over m >= 2p micro-batches.
ScheduleBlock block_of(int64_t p, int64_t r, int64_t m, int64_t k) {
  const int64_t s1 = 2 * (p - r - 1), s2 = r + 1, s3 = p - r - 1, s4 = m - 2 * p + r + 1;
  if (k < s1) return F(0, k);
  k -= s1;
  if (k < 2 * s2) return k % 2 == 0 ? F(0, s1 + k / 2) : F(1, k / 2);
  k -= 2 * s2;
  if (k < 3 * s3) {
    const int64_t j = k / 3;
    return k % 3 == 0 ? B(1, j) : k % 3 == 1 ? W(1, j) : F(1, s2 + j);
  }
  k -= 3 * s3;
  if (k < 4 * s4) {
    const int64_t j = k / 4;
    switch (k % 4) {
      case 0: return F(0, s1 + s2 + j);
      case 1: return BW(1, s3 + j);
      case 2: return F(1, p + j);
      default: return BW(0, j);
    }
  }
  k -= 4 * s4;
  if (k < 3 * s3) {
    const int64_t j = k / 3;
    return k % 3 == 0 ? BW(1, s3 + s4 + j) : k % 3 == 1 ? F(1, p + s4 + j) : BW(0, s4 + j);
  }
  k -= 3 * s3;
  if (k < 2 * s2) {
    const int64_t round = k / 2;
    const int chunk = k % 2 == 0 ? 1 : 0;
    const int64_t mb = chunk == 1 ? m - s2 + round : m - p + round;
    return step6_splits(r, round, chunk) ? B(chunk, mb) : BW(chunk, mb);
  }
  k -= 2 * s2;
  if (k < 2 * s3) return k % 2 == 0 ? queued_w(p, r, m, k / 2) : B(0, m - p + s2 + k / 2);
  k -= 2 * s3;
  return queued_w(p, r, m, s3 + k);
}

// Below 2p micro-batches DualPipe does not run (the rules refuse such plans); a shape that has
// fewer anyway runs ZB-V's order on the same V, which keeps every caller safe.
bool runs(const ScheduleShape& s) { return s.micro_batches >= 2 * int64_t{s.stages}; }

int64_t blocks_of_rank(const ScheduleShape& s, int stage) {
  if (!runs(s)) return kZbv.blocks_of_rank(s, stage);
  return 4 * s.micro_batches + 2 * s.stages - stage - 1;  // 2m F, 2m B or BW, 2p - r - 1 W
}

ScheduleBlock block_at(const ScheduleShape& s, int stage, int64_t k) {
  if (!runs(s)) return kZbv.block_at(s, stage, k);
  return block_of(s.stages, stage, s.micro_batches, k);
}

void rank_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  if (!runs(s)) return kZbv.rank_order(s, stage, out);
  const int64_t n = blocks_of_rank(s, stage);
  for (int64_t k = 0; k < n; ++k) out.push_back(block_at(s, stage, k));
}

// Micro-batches in flight, half a stage each chunk, held from the forward to its W: steps 1 and
// 2 reach 2p on every rank, and step 4's first forward one more, 2p + 1 chunks (the README's
// PP + 1 activations, counted from the order: tests/engine/schedule_test.cpp).
double in_flight(const ScheduleShape& s, int stage) {
  if (!runs(s)) return kZbv.in_flight(s, stage);
  return s.stages + 0.5;
}

// Every stage but the bottleneck adds F + B - W of a chunk's passes, or 2(F - W), or 2B - W less
// one F of the bottleneck's, whichever adds up to most (a stage's passes are two chunks').
PipelineTime closed_form(const std::vector<StagePasses>& stages, const ScheduleShape& s) {
  if (!runs(s)) return kZbv.closed_form(stages, s);
  PipelineTime t = pipeline_time(units_of(stages), s.micro_batches, 1);
  double pairs = 0, forwards = 0, backwards = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    if (static_cast<int>(i) == t.bottleneck) continue;
    const StagePasses& x = stages[i];
    pairs += (x.forward_s + x.input_grad_s - x.weight_grad_s) / 2;
    forwards += x.forward_s - x.weight_grad_s;
    backwards += (2 * x.input_grad_s - x.weight_grad_s) / 2;
  }
  const double bottleneck_forward = stages[static_cast<size_t>(t.bottleneck)].forward_s / 2;
  t.bubble_s = std::max({0.0, pairs, forwards, backwards - bottleneck_forward});
  t.total_s = t.steady_s + t.bubble_s;
  return t;
}

// The tail as ZB-V's (zbv.cpp): every rank ends on the queued W of one chunk at about the same
// time, the V bringing the last micro-batch back to the first rank.
double last_backward_s(double backward_s, double weight_grad_s, const ScheduleShape& s) {
  return kZbv.last_backward_s(backward_s, weight_grad_s, s);
}
double drain_step_s(double backward_s, double weight_grad_s, const ScheduleShape& s) {
  return kZbv.drain_step_s(backward_s, weight_grad_s, s);
}

// Step 4: four blocks, one micro-batch on, on every rank.
SteadyState steady_state(const ScheduleShape& s, int stage) {
  if (!runs(s)) return kZbv.steady_state(s, stage);
  const int64_t p = s.stages, r = stage, m = s.micro_batches;
  const int64_t first = 2 * (p - r - 1) + 2 * (r + 1) + 3 * (p - r - 1);
  return {first, first + 4 * (m - 2 * p + r + 1), 4, 1};
}

}  // namespace

const Schedule kDualPipeV{"dualpipev",
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
