// The pipeline schedules behind schedule.h: the backward split into input gradients (B) and
// weight gradients (W) in the compute model, and each schedule's bubble and micro-batches in
// flight against its paper's formulas, by hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "stepcast/compute.h"
#include "stepcast/pipeline.h"
#include "stepcast/rule_ids.h"
#include "stepcast/schedule.h"
#include "stepcast/resolve.h"
#include "stepcast/search.h"
#include "test_util.h"

namespace stepcast {
namespace {

// A linear layer's backward is a data-gradient and a weight-gradient GEMM of the forward's FLOPs
// (Qi et al., ICLR 2024, sec. 2): W is the forward GEMMs' time again; the attention core, the
// norms and the element-wise gradients are all B.
TEST(BackwardSplit, WeightGradientsAreTheForwardGemmsAgain) {
  const Scenario s = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 2, "global_batch": 64}, "seq_len": 4096})");
  const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
  const LayerCompute l = layer_compute(s.model, s.plan, d);
  EXPECT_DOUBLE_EQ(l.weight_grad_s, l.gemms.total());
  EXPECT_DOUBLE_EQ(l.weight_grad_s, l.linear_forward_s);
  EXPECT_DOUBLE_EQ(2 * l.weight_grad_s, l.linear_backward_s);  // dgrad + wgrad
  // B keeps the dgrad GEMMs, the attention core's backward and the element-wise work.
  EXPECT_GT(l.backward_s - l.weight_grad_s, l.weight_grad_s + l.attention_backward_s);
  // The output layer's wgrad is its logits GEMM (backward: dgrad, wgrad and the loss); the
  // embedding computes only its table's gradient.
  const HeadCompute head = head_compute(s.model, s.plan, d);
  EXPECT_GT(head.weight_grad_s, 0);
  EXPECT_LT(2 * head.weight_grad_s, head.backward_s);
  const HeadCompute embed = embedding_compute(s.model, s.plan, d);
  EXPECT_DOUBLE_EQ(embed.weight_grad_s, embed.backward_s);
}

// The bias-dropout-add writes a 1-byte mask per element only where dropout drops anything: at
// plan.hidden_dropout 0 the forward saves its two writes (one per residual add) of the hidden
// state over the sequence-parallel tokens, and the backward reads none (2x, as every
// element-wise gradient).
TEST(ElementWise, NoDropoutWritesNoMask) {
  const Scenario s = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 2, "global_batch": 64, "hidden_dropout": 0.1},
      "seq_len": 4096})");
  const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
  Plan off = s.plan;
  off.hidden_dropout = 0;
  const LayerCompute with = layer_compute(s.model, s.plan, d);
  const LayerCompute without = layer_compute(s.model, off, d);
  // 4,096 tokens / TP 2 (sequence parallel) x 4,096 hidden x 2 adds x 1 byte.
  ASSERT_TRUE(s.plan.sequence_parallel);
  const double mask_bytes = 4096.0 / 2 * 4096 * 2;
  EXPECT_NEAR(with.forward_s - without.forward_s, elementwise_s(mask_bytes, d), 1e-15);
  EXPECT_NEAR(with.backward_s - without.backward_s, 2 * elementwise_s(mask_bytes, d), 1e-15);
  EXPECT_DOUBLE_EQ(with.linear_forward_s, without.linear_forward_s);
}

// 1F1B's backward block is B followed at once by W: the weight gradients given to the simulation
// move nothing (its gradient goes back after both, as Megatron's backward_step sends it).
TEST(BackwardSplit, OneFOneBRunsBAndWAsOneBlock) {
  const std::vector<double> f{1, 1.5, 1, 2}, b{2, 3, 2.5, 4}, w{1, 1.2, 0.3, 2}, link(4, 0.1);
  for (int64_t m : {1, 4, 9}) {
    double plain = 0, split = 0;
    simulate_virtual_pipeline(f, b, 4, m, 1, link, true, &plain);
    const auto events = simulate_virtual_pipeline(f, b, 4, m, 1, link, true, &split, nullptr, w);
    EXPECT_EQ(split, plain);
    for (const auto& e : events) {
      EXPECT_NE(e.kind, PipelineEvent::Kind::input_grad);
      EXPECT_NE(e.kind, PipelineEvent::Kind::weight_grad);
    }
    EXPECT_EQ(simulate_schedule_time(f, b, 4, m, 1, link, true, 0, nullptr, w).makespan_s, plain);
  }
}

// Where the virtual stages sit: Megatron's loop (chunk c of rank r is c·p + r) and the V of ZB-V
// and DualPipeV (rank r holds r and 2p - 1 - r), each the inverse of the other's home, and the
// link each edge between virtual stages crosses.
TEST(StagePlacement, LoopAndVAsTheirSchedulesNumberThem) {
  for (int p : {1, 2, 3, 8})
    for (int v : {1, 2, 3}) {
      for (int r = 0; r < p; ++r)
        for (int c = 0; c < v; ++c) {
          const int loop = virtual_stage_of(StagePlacement::loop, p, r, c);
          EXPECT_EQ(loop, c * p + r);
          EXPECT_EQ(home_of(StagePlacement::loop, p, loop).rank, r);
          EXPECT_EQ(home_of(StagePlacement::loop, p, loop).chunk, c);
          const int vee = virtual_stage_of(StagePlacement::v_shape, p, r, c);
          EXPECT_EQ(home_of(StagePlacement::v_shape, p, vee).rank, r);
          EXPECT_EQ(home_of(StagePlacement::v_shape, p, vee).chunk, c);
        }
    }
  // p = 4: rank 0 holds 0 and 7, rank 3 holds 3 and 4 (the turn).
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(virtual_stage_of(StagePlacement::v_shape, 4, r, 0), r);
    EXPECT_EQ(virtual_stage_of(StagePlacement::v_shape, 4, r, 1), 7 - r);
  }
  Schedule loop, vee;
  vee.placement = StagePlacement::v_shape;
  const ScheduleShape shape{4, 2, 8};
  // The loop's edges leave their rank on its link (the wrap 3 -> 0 on rank 3's); the V's join
  // neighbours (link min(a, b)) and send nothing at the turn.
  const int loop_links[] = {0, 1, 2, 3, 0, 1, 2}, v_links[] = {0, 1, 2, -1, 2, 1, 0};
  for (int k = 0; k < 7; ++k) {
    EXPECT_EQ(loop.link_after(shape, k), loop_links[k]) << k;
    EXPECT_EQ(vee.link_after(shape, k), v_links[k]) << k;
  }
  EXPECT_TRUE(loop.holds_first(shape, 0) && loop.holds_last(shape, 3));
  EXPECT_TRUE(vee.holds_first(shape, 0) && vee.holds_last(shape, 0));
  EXPECT_FALSE(vee.holds_last(shape, 3));
}

// Two ranks, one micro-batch, two chunks each: F of chunk 0, F of chunk 1, the backward of chunk
// 1, the backward of chunk 0. The simulations follow the schedule's placement.
ScheduleBlock two_chunk_block(const ScheduleShape&, int, int64_t k) {
  const ScheduleBlock order[] = {{BlockKind::forward, 0, 0},
                                 {BlockKind::forward, 1, 0},
                                 {BlockKind::backward, 1, 0},
                                 {BlockKind::backward, 0, 0}};
  return order[k];
}
int64_t two_chunk_blocks(const ScheduleShape&, int) { return 4; }
void two_chunk_order(const ScheduleShape& s, int stage, std::vector<ScheduleBlock>& out) {
  for (int64_t k = 0; k < 4; ++k) out.push_back(two_chunk_block(s, stage, k));
}

TEST(StagePlacement, SimulationsSendWhereTheVirtualStagesSit) {
  Schedule schedule;
  schedule.rank_order = &two_chunk_order;
  schedule.block_at = &two_chunk_block;
  schedule.blocks_of_rank = &two_chunk_blocks;
  // F = 1, whole backward 2 on every virtual stage, 0.5 per message.
  const std::vector<double> f(4, 1.0), b(4, 2.0), link(2, 0.5);
  const auto makespan = [&](bool blocking) {
    double event = 0;
    simulate_virtual_pipeline(f, b, 2, 1, 2, link, blocking, &event, &schedule);
    const ScheduleTime lean = simulate_schedule_time(f, b, 2, 1, 2, link, blocking, 0, &schedule);
    EXPECT_DOUBLE_EQ(lean.makespan_s, event);
    return event;
  };
  // The loop (rank 0: 0 and 2): six messages on the chain 0 -> 1 -> 2 -> 3 and back:
  // 4·1 + 4·2 + 6·0.5 = 15.
  EXPECT_DOUBLE_EQ(makespan(false), 15);
  // The V (rank 0: 0 and 3, rank 1: 1 and 2): the turn 1 -> 2 stays on rank 1, four messages:
  // 12 + 4·0.5 = 14.
  schedule.placement = StagePlacement::v_shape;
  EXPECT_DOUBLE_EQ(makespan(false), 14);
  // Blocking sends hold the sender as long as the message: each one on the critical path is
  // followed by its receiver's wait, the same 14.
  EXPECT_DOUBLE_EQ(makespan(true), 14);
}

// A plan that runs `schedule` on p stages (the schedule as given, not derived from vpp).
Plan plan_of(PipelineSchedule schedule, int p, int64_t m, int vpp = 1) {
  Plan plan;
  plan.pp = p;
  plan.vpp = vpp;
  plan.micro_batch = 1;
  plan.global_batch = m;
  plan.schedule = schedule;
  plan.schedule_derived = false;
  return plan;
}

// The event simulation of p identical stages (no messages) under a schedule: its makespan.
double simulated_s(const Schedule& schedule, int p, int64_t m, double f, double b_whole,
                   double w) {
  double makespan = 0;
  const std::vector<double> F(p, f), B(p, b_whole), W(p, w), link(p, 0.0);
  simulate_virtual_pipeline(F, B, p, m, 1, link, false, &makespan, &schedule, W);
  return makespan;
}

// Megatron-Core's order of rank `stage` built as schedules.py builds it (megatron/core/
// pipeline_parallel/schedules.py at NVIDIA/Megatron-LM d98e8a64: the forwards' and backwards'
// lists of (chunk, micro-batch) in groups of p, get_pp_rank_microbatches' warm-up, then one
// forward and one backward at a time, then the rest of the backwards): the reference the
// engine's counters (megatron_order.h) are held to.
std::vector<ScheduleBlock> megatron_list(int stage, int p, int v, int64_t m) {
  std::vector<ScheduleBlock> forwards, backwards, out;
  for (int64_t first = 0; first < m; first += p) {
    const int64_t last = std::min<int64_t>(m, first + p);
    for (int c = 0; c < v; ++c)
      for (int64_t mb = first; mb < last; ++mb) forwards.push_back({BlockKind::forward, c, mb});
    for (int c = v - 1; c >= 0; --c)
      for (int64_t mb = first; mb < last; ++mb) backwards.push_back({BlockKind::backward, c, mb});
  }
  const auto total = static_cast<int64_t>(forwards.size());
  const int64_t warmup =
      v == 1 ? std::min<int64_t>(p - stage - 1, m)
             : std::min<int64_t>(2 * (p - stage - 1) + (v - 1) * std::min<int64_t>(p, m), m * v);
  int64_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(forwards[static_cast<size_t>(f)]);
  while (f < total) {
    out.push_back(forwards[static_cast<size_t>(f++)]);
    out.push_back(backwards[static_cast<size_t>(b++)]);
  }
  for (; b < total; ++b) out.push_back(backwards[static_cast<size_t>(b)]);
  return out;
}

// Megatron's orders as the engine walks them (by counters, n blocks at a time: Schedule::
// blocks_from, what the lean simulation reads; and whole: rank_order) are schedules.py's lists,
// from any block on, for 1F1B and the interleaved schedule: warm-ups of every length (ranks 0 to
// p - 1, micro-batches fewer than the warm-up), whole and partial groups of p (1F1B's m need
// not be a multiple of p), and reads across the warm-up, the steady state and the drain. A read
// that skips a block, repeats one or takes the wrong chunk of a group fails on the first block
// it gets wrong.
TEST(MegatronOrder, ReadNBlocksAtATimeIsTheList) {
  int checked = 0;
  for (const auto& [schedule, p, v, m] :
       std::vector<std::tuple<PipelineSchedule, int, int, int64_t>>{
           {PipelineSchedule::one_f_one_b, 1, 1, 5},
           {PipelineSchedule::one_f_one_b, 4, 1, 2},
           {PipelineSchedule::one_f_one_b, 4, 1, 11},
           {PipelineSchedule::interleaved, 2, 2, 4},
           {PipelineSchedule::interleaved, 4, 2, 8},
           {PipelineSchedule::interleaved, 4, 3, 12},
           {PipelineSchedule::interleaved, 3, 4, 9}}) {
    const Plan plan = plan_of(schedule, p, m, v);
    const Schedule& order = schedule_of(plan);
    const ScheduleShape shape = schedule_shape(plan);
    EXPECT_EQ(order.name, v > 1 ? "interleaved" : "1f1b");
    ASSERT_NE(order.blocks_from, nullptr) << order.name;
    for (int i = 0; i < p; ++i) {
      const std::vector<ScheduleBlock> list = megatron_list(i, p, v, m);
      ASSERT_EQ(static_cast<int64_t>(list.size()), 2 * m * v);
      std::vector<ScheduleBlock> whole{{BlockKind::weight_grad, 9, 9}};  // (appended to)
      order.rank_order(shape, i, whole);
      ASSERT_EQ(whole.size(), list.size() + 1);
      for (size_t j = 0; j < list.size(); ++j)
        ASSERT_TRUE(whole[j + 1].kind == list[j].kind && whole[j + 1].chunk == list[j].chunk &&
                    whole[j + 1].micro_batch == list[j].micro_batch)
            << order.name << " p=" << p << " v=" << v << " m=" << m << " rank " << i
            << ": block " << j << " of rank_order";
      for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{7}, 2 * m * v})
        for (int64_t k = 0; k < 2 * m * v; ++k) {
          const int64_t count = std::min(n, 2 * m * v - k);
          std::vector<ScheduleBlock> read(static_cast<size_t>(count));
          order.blocks_from(shape, i, k, count, read.data());
          for (int64_t j = 0; j < count; ++j) {
            const ScheduleBlock& want = list[static_cast<size_t>(k + j)];
            const ScheduleBlock& got = read[static_cast<size_t>(j)];
            ASSERT_TRUE(got.kind == want.kind && got.chunk == want.chunk &&
                        got.micro_batch == want.micro_batch)
                << order.name << " p=" << p << " v=" << v << " m=" << m << " rank " << i
                << ": block " << k + j << " read from " << k << ", " << count << " at a time";
            ++checked;
          }
        }
    }
  }
  EXPECT_GT(checked, 10000);
}

// ZB-H1's bubble (Qi et al., ICLR 2024, sec. 3.1): (p - 1)(F + B - W) on identical stages, against
// 1F1B's (p - 1)(F + B + W), by hand.
TEST(ZeroBubble, BubbleIsThePapers) {
  const Plan plan = plan_of(PipelineSchedule::zero_bubble, 4, 8);
  const Schedule& zb = schedule_of(plan);
  EXPECT_EQ(zb.name, "zero_bubble");
  // F = B = W = 1: 8·3 + 3·(1 + 1 - 1) = 27, where 1F1B takes 8·3 + 3·3 = 33.
  EXPECT_DOUBLE_EQ(simulated_s(zb, 4, 8, 1, 2, 1), 27);
  EXPECT_DOUBLE_EQ(simulated_s(schedule_of(plan_of(PipelineSchedule::one_f_one_b, 4, 8)), 4, 8,
                               1, 2, 1),
                   33);
  // F = 1, B = 2, W = 1: 8·4 + 3·(1 + 2 - 1) = 38; W = 0.5: 8·3.5 + 3·2.5 = 35.5.
  EXPECT_DOUBLE_EQ(simulated_s(zb, 4, 8, 1, 3, 1), 38);
  EXPECT_DOUBLE_EQ(simulated_s(zb, 4, 8, 1, 2.5, 0.5), 35.5);
  // A W longer than F or B fills only min(F, B) of each step's wait: F = B = 1, W = 2 gives
  // 8·4 + 3·(1 + 1 - 1) = 35, not the paper's 8·4 + 3·0.
  EXPECT_DOUBLE_EQ(simulated_s(zb, 4, 8, 1, 3, 2), 35);
  const PipelineTime closed = zb.closed_form(std::vector<StagePasses>(4, {4, 1, 1, 2}),
                                             schedule_shape(plan));
  EXPECT_DOUBLE_EQ(closed.total_s, 35);
  EXPECT_DOUBLE_EQ(closed.bubble_s, 3);
}

// The closed form is the event simulation on identical stages for every m >= p, over p and
// F:B:W ratios; ZB-H1 is never slower than 1F1B on the same stages, m < p included.
TEST(ZeroBubble, SimulationEqualsClosedFormAndNeverLosesToOneFOneB) {
  const double ratios[][3] = {{1, 1, 1}, {1, 2, 1}, {1, 1, 0.5}, {2, 1, 1}, {1, 1.5, 0.7},
                              {1, 1, 2}, {0.5, 2, 1.5}, {3, 1, 0.2}, {1, 2, 0}};
  int cases = 0;
  for (int p = 2; p <= 9; ++p)
    for (int64_t m = 1; m <= 3 * p + 1; ++m)
      for (const auto& r : ratios) {
        const Plan plan = plan_of(PipelineSchedule::zero_bubble, p, m);
        const Schedule& zb = schedule_of(plan);
        const double f = r[0], b = r[1], w = r[2];
        const double zero_bubble = simulated_s(zb, p, m, f, b + w, w);
        const double one_f_one_b =
            simulated_s(schedule_of(plan_of(PipelineSchedule::one_f_one_b, p, m)), p, m, f,
                        b + w, w);
        const std::string where = "p=" + std::to_string(p) + " m=" + std::to_string(m) +
                                  " F:B:W=" + std::to_string(f) + ":" + std::to_string(b) + ":" +
                                  std::to_string(w);
        EXPECT_LE(zero_bubble, one_f_one_b + 1e-12) << where;
        if (m >= p) {
          const PipelineTime closed = zb.closed_form(
              std::vector<StagePasses>(p, {f + b + w, f, b, w}), schedule_shape(plan));
          EXPECT_NEAR(zero_bubble, closed.total_s, 1e-9 * closed.total_s) << where;
        }
        ++cases;
      }
  EXPECT_GT(cases, 1000);
}

// Micro-batches in flight: p on every rank (the paper's p·M_B, 1F1B's first stage), counted from
// the simulated order as forwards begun and weight gradients not yet done.
TEST(ZeroBubble, HoldsAtMostPMicroBatchesLikeOneFOneB) {
  for (int p : {2, 4, 7})
    for (int64_t m : {int64_t{1}, int64_t{p}, int64_t{3 * p + 2}}) {
      const Plan plan = plan_of(PipelineSchedule::zero_bubble, p, m);
      const Schedule& zb = schedule_of(plan);
      const ScheduleShape shape = schedule_shape(plan);
      for (int i = 0; i < p; ++i) {
        EXPECT_DOUBLE_EQ(zb.in_flight(shape, i), static_cast<double>(std::min<int64_t>(p, m)));
        std::vector<ScheduleBlock> order;
        zb.rank_order(shape, i, order);
        ASSERT_EQ(order.size(), static_cast<size_t>(3 * m));
        int64_t held = 0, most = 0;
        for (size_t k = 0; k < order.size(); ++k) {
          EXPECT_EQ(zb.block_at(shape, i, static_cast<int64_t>(k)).micro_batch,
                    order[k].micro_batch);
          if (order[k].kind == BlockKind::forward) most = std::max(most, ++held);
          if (order[k].kind == BlockKind::weight_grad) --held;
        }
        EXPECT_EQ(held, 0);
        // Rank i holds p: its 1F1B share p - i and the i weight gradients it defers.
        EXPECT_EQ(most, std::min<int64_t>(p, m)) << "p=" << p << " m=" << m << " rank " << i;
      }
    }
}

// The estimate: a zero-bubble plan's iteration is shorter than 1F1B's, and its timeline has a B
// and a W block per stage and micro-batch. (Without Transformer Engine's TP overlap: with it the
// W blocks take away the wgrads that hide B's reduce-scatters, at tp 8 more than the bubble of
// 4 stages over 64 micro-batches; stage_cost.cpp, block_tp_overlap.)
TEST(ZeroBubble, EstimateRunsItsBlocks) {
  const auto run = [](const std::string& schedule) {
    EstimateOptions options;
    options.timeline = true;
    return estimate(test::scenario(test::doc(
                        R"({"tp": 8, "pp": 4, "global_batch": 64, "tp_comm_overlap": false)" +
                            schedule + "}",
                        R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})",
                        R"(, "seq_len": 4096)")),
                    options);
  };
  const Report one = run(""), zero = run(R"(, "schedule": "zero_bubble")");
  EXPECT_LT(zero.iteration_time_s, one.iteration_time_s);
  EXPECT_LT(zero.breakdown.bubble, one.breakdown.bubble);
  int b = 0, w = 0;
  for (const auto& e : zero.timeline) {
    b += e.kind == TimelineKind::input_grad;
    w += e.kind == TimelineKind::weight_grad;
  }
  EXPECT_EQ(b, 4 * 64);
  EXPECT_EQ(w, 4 * 64);
}

// The schedule needs its pipeline: one line naming the key, the value and the rule.
TEST(ZeroBubble, NeedsAPipelineOfOneChunk) {
  for (const char* plan : {R"({"tp": 8, "pp": 1, "global_batch": 64, "schedule": "zero_bubble"})",
                           R"({"tp": 8, "pp": 4, "vpp": 2, "global_batch": 64,
                               "schedule": "zero_bubble"})",
                           R"({"tp": 8, "pp": 4, "global_batch": 64, "schedule": "interleaved"})",
                           R"({"tp": 8, "pp": 4, "vpp": 2, "global_batch": 64,
                               "schedule": "1f1b"})"}) {
    const Error e = test::error_of(test::doc(plan));
    EXPECT_EQ(e.path, "plan.schedule") << plan;
    EXPECT_EQ(e.rule, Rule::schedule_stages) << plan;
  }
  const Error e = test::error_of(test::doc(R"({"tp": 8, "pp": 4, "global_batch": 64,
                                                "schedule": "zbh2"})"));
  EXPECT_EQ(e.path, "plan.schedule");
  // Left out, the schedule follows vpp; given, it is kept as given.
  EXPECT_EQ(schedule_of(test::scenario(test::doc(R"({"tp": 8, "pp": 4, "vpp": 2,
      "global_batch": 64})")).plan).name, "interleaved");
  EXPECT_EQ(schedule_of(test::scenario(test::doc(R"({"tp": 8, "pp": 4, "global_batch": 64,
      "schedule": "zero_bubble"})")).plan).name, "zero_bubble");
}

// The lean simulation of `s` (v chunks a rank) against the event simulation of the same blocks:
// the makespan and rank `watch`'s busy time equal; returns the lean run and the event list.
struct LeanAndEvents {
  ScheduleTime lean;
  std::vector<PipelineEvent> events;
};
LeanAndEvents expect_lean_is_events(const std::vector<double>& f, const std::vector<double>& b,
                                    const std::vector<double>& w, const std::vector<double>& link,
                                    int p, int64_t m, int v, bool blocking, int watch,
                                    const Schedule& s) {
  double makespan = 0;
  LeanAndEvents out;
  out.events = simulate_virtual_pipeline(f, b, p, m, v, link, blocking, &makespan, &s, w);
  double busy = 0;
  for (const auto& e : out.events)
    if (e.stage == watch && e.kind != PipelineEvent::Kind::send) busy += e.end_s - e.start_s;
  out.lean = simulate_schedule_time(f, b, p, m, v, link, blocking, watch, &s, w);
  const std::string where = std::string(s.name) + " p=" + std::to_string(p) +
                            " m=" + std::to_string(m) + (blocking ? " blocking" : "");
  EXPECT_NEAR(out.lean.makespan_s, makespan, 1e-12 * makespan) << where;
  EXPECT_NEAR(out.lean.busy_s, busy, 1e-12 * busy) << where;
  // Every block run (nothing extrapolated): the same maxes of the same sums, to the bit.
  const auto blocks = std::count_if(out.events.begin(), out.events.end(),
                                    [](const PipelineEvent& e) {
                                      return e.kind != PipelineEvent::Kind::send;
                                    });
  if (out.lean.blocks_run == blocks) EXPECT_EQ(out.lean.makespan_s, makespan) << where;
  return out;
}

// The lean simulation (its W blocks, its steady state of F, B, W extrapolated) is the event
// simulation of ZB-H1 over uneven random stages, blocking and overlapped messages.
TEST(ZeroBubble, LeanSimulationIsTheEventSimulation) {
  std::mt19937_64 rng(20261205);
  std::uniform_real_distribution<double> time(0.1, 3.0), message(0.0, 0.4);
  int cases = 0, extrapolated = 0;
  for (int p : {2, 3, 4, 8, 16})
    for (int64_t m : {int64_t{1}, int64_t{p - 1}, int64_t{p}, int64_t{3 * p + 1}, int64_t{257}})
      for (bool blocking : {false, true}) {
        if (m < 1) continue;
        std::vector<double> f(p), b(p), w(p), link(p);
        for (int i = 0; i < p; ++i) {
          f[i] = time(rng);
          w[i] = time(rng);
          b[i] = w[i] + time(rng);
          link[i] = message(rng);
        }
        const Schedule& zb = schedule_of(plan_of(PipelineSchedule::zero_bubble, p, m));
        const int watch = static_cast<int>(rng() % static_cast<uint64_t>(p));
        const auto [lean, events] = expect_lean_is_events(f, b, w, link, p, m, 1, blocking, watch, zb);
        EXPECT_EQ(events.size() - static_cast<size_t>(std::count_if(
                                      events.begin(), events.end(),
                                      [](const PipelineEvent& e) {
                                        return e.kind == PipelineEvent::Kind::send;
                                      })),
                  static_cast<size_t>(3 * m * p));
        extrapolated += lean.blocks_run < 3 * m * p;
        ++cases;
      }
  EXPECT_GT(extrapolated, 0) << "of " << cases;
}

// ZB-V (zbv.cpp): rank r of p over m micro-batches runs PyTorch's ScheduleZBVZeroBubble order;
// for p = 2, m = 3, rank 1, by hand from its phases: F0; F1 F0; F1 B1 W1; one steady step with
// chunk 0's forward (F0 B0 W0 F1 B1 W1); B0 B1; B0 W0; W1; W0.
TEST(Zbv, RunsPyTorchsOrder) {
  const Plan plan = plan_of(PipelineSchedule::zbv, 2, 3, 2);
  const Schedule& zbv = schedule_of(plan);
  EXPECT_EQ(zbv.name, "zbv");
  EXPECT_EQ(zbv.placement, StagePlacement::v_shape);
  const ScheduleShape shape = schedule_shape(plan);
  std::vector<ScheduleBlock> order;
  zbv.rank_order(shape, 1, order);
  const char* want[] = {"F0.0", "F1.0", "F0.1", "F1.1", "B1.0", "W1.0", "F0.2", "B0.0", "W0.0",
                        "F1.2", "B1.1", "W1.1", "B0.1", "B1.2", "B0.2", "W0.1", "W1.2", "W0.2"};
  ASSERT_EQ(order.size(), std::size(want));
  for (size_t k = 0; k < order.size(); ++k) {
    const ScheduleBlock& b = order[k];
    const char kind = b.kind == BlockKind::forward ? 'F' : b.kind == BlockKind::input_grad ? 'B' : 'W';
    EXPECT_EQ(std::string(1, kind) + std::to_string(b.chunk) + "." + std::to_string(b.micro_batch),
              want[k]) << k;
  }
}

// The event simulation of p identical stages under a schedule on the V (ZB-V, DualPipeV), each
// chunk's passes F, B and W.
double v_simulated_s(PipelineSchedule schedule, int p, int64_t m, double f, double b, double w) {
  const Schedule& v = schedule_of(plan_of(schedule, p, m, 2));
  double makespan = 0;
  const std::vector<double> F(2 * p, f), BW(2 * p, b + w), W(2 * p, w), link(p, 0.0);
  simulate_virtual_pipeline(F, BW, p, m, 2, link, false, &makespan, &v, W);
  return makespan;
}
double zbv_simulated_s(int p, int64_t m, double f, double b, double w) {
  return v_simulated_s(PipelineSchedule::zbv, p, m, f, b, w);
}

// The closed form (zbv.cpp) by hand, and the event simulation equal to it for m >= 2p - 1 over
// p and the ratios with F <= B and W <= B, chunk passes: T = 2m(F + B + W) + (p - 1)·max(B,
// 2(B - W)); ZB-V never slower than 1F1B on the same stages (a stage's passes twice a chunk's),
// whatever the ratios and micro-batches.
TEST(Zbv, SimulationEqualsClosedFormAndNeverLosesToOneFOneB) {
  // p = 4, m = 8, F = B = W = 1: 48 + 3·1 = 51, where 1F1B takes (8 - 1 + 4)·6 = 66; B = 2:
  // 64 + 3·2 = 70.
  EXPECT_DOUBLE_EQ(zbv_simulated_s(4, 8, 1, 1, 1), 51);
  EXPECT_DOUBLE_EQ(zbv_simulated_s(4, 8, 1, 2, 1), 70);
  const Schedule& one = schedule_of(plan_of(PipelineSchedule::one_f_one_b, 4, 8));
  EXPECT_DOUBLE_EQ(simulated_s(one, 4, 8, 2, 4, 2), 66);
  const double ratios[][3] = {{1, 1, 1}, {1, 2, 1}, {1, 1, 0.5}, {2, 1, 1}, {1, 1.5, 0.7},
                              {1, 1, 2}, {0.5, 2, 1.5}, {3, 1, 0.2}, {1, 2, 0}, {0.3, 3, 3}};
  int exact = 0;
  for (int p = 2; p <= 8; ++p)
    for (int64_t m = 1; m <= 3 * p + 1; ++m)
      for (const auto& r : ratios) {
        const double f = r[0], b = r[1], w = r[2];
        const double zbv = zbv_simulated_s(p, m, f, b, w);
        const Schedule& ofob = schedule_of(plan_of(PipelineSchedule::one_f_one_b, p, m));
        const std::string where = "p=" + std::to_string(p) + " m=" + std::to_string(m) +
                                  " F:B:W=" + std::to_string(f) + ":" + std::to_string(b) + ":" +
                                  std::to_string(w);
        EXPECT_LE(zbv, simulated_s(ofob, p, m, 2 * f, 2 * (b + w), 2 * w) + 1e-12) << where;
        if (m >= 2 * p - 1 && f <= b && w <= b) {
          const Plan plan = plan_of(PipelineSchedule::zbv, p, m, 2);
          const PipelineTime closed = schedule_of(plan).closed_form(
              std::vector<StagePasses>(p, {2 * (f + b + w), 2 * f, 2 * b, 2 * w}),
              schedule_shape(plan));
          EXPECT_NEAR(zbv, closed.total_s, 1e-12 * closed.total_s) << where;
          EXPECT_NEAR(closed.bubble_s, (p - 1) * std::max(b, 2 * (b - w)), 1e-12) << where;
          ++exact;
        }
      }
  EXPECT_GT(exact, 300);
}

// Micro-batches in flight: forwards begun and weight gradients not yet done, half a stage each,
// counted from the order: p on every rank (the paper's p·M_B, 1F1B's first stage) once m >=
// 2p - 1; (m + r + 1)/2 on rank r below.
TEST(Zbv, HoldsAtMostPMicroBatchesLikeOneFOneB) {
  for (int p : {2, 3, 4, 7})
    for (int64_t m = 1; m <= 3 * p + 2; ++m) {
      const Plan plan = plan_of(PipelineSchedule::zbv, p, m, 2);
      const Schedule& zbv = schedule_of(plan);
      const ScheduleShape shape = schedule_shape(plan);
      for (int i = 0; i < p; ++i) {
        std::vector<ScheduleBlock> order;
        zbv.rank_order(shape, i, order);
        ASSERT_EQ(order.size(), static_cast<size_t>(6 * m));
        ASSERT_EQ(zbv.blocks_of_rank(shape, i), 6 * m);
        int64_t held = 0, most = 0;
        for (size_t k = 0; k < order.size(); ++k) {
          const ScheduleBlock at = zbv.block_at(shape, i, static_cast<int64_t>(k));
          EXPECT_EQ(at.micro_batch, order[k].micro_batch);
          EXPECT_EQ(at.chunk, order[k].chunk);
          EXPECT_EQ(at.kind, order[k].kind);
          if (order[k].kind == BlockKind::forward) most = std::max(most, ++held);
          if (order[k].kind == BlockKind::weight_grad) --held;
        }
        EXPECT_EQ(held, 0);
        EXPECT_DOUBLE_EQ(zbv.in_flight(shape, i), most / 2.0)
            << "p=" << p << " m=" << m << " rank " << i;
        if (m >= 2 * p - 1) {
          EXPECT_EQ(most, 2 * p);
        }
      }
    }
}

// The lean simulation against the event simulation over uneven random chunks on the V (ZB-V,
// DualPipeV), blocking and overlapped messages, for each p and its micro-batch counts: how many
// runs extrapolated a steady state (ran fewer blocks than the orders hold).
int lean_is_events_on_the_v(PipelineSchedule schedule, uint64_t seed,
                            std::vector<int64_t> (*counts)(int p)) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> time(0.1, 3.0), message(0.0, 0.4);
  int extrapolated = 0;
  for (int p : {2, 3, 4, 8, 16})
    for (int64_t m : counts(p))
      for (bool blocking : {false, true}) {
        std::vector<double> f(2 * p), b(2 * p), w(2 * p), link(p);
        for (int k = 0; k < 2 * p; ++k) {
          f[k] = time(rng);
          w[k] = time(rng);
          b[k] = w[k] + time(rng);
        }
        for (int i = 0; i < p; ++i) link[i] = message(rng);
        const Schedule& v = schedule_of(plan_of(schedule, p, m, 2));
        const int watch = static_cast<int>(rng() % static_cast<uint64_t>(p));
        const ScheduleTime lean =
            expect_lean_is_events(f, b, w, link, p, m, 2, blocking, watch, v).lean;
        int64_t blocks = 0;
        for (int i = 0; i < p; ++i) blocks += v.blocks_of_rank({p, 2, m}, i);
        extrapolated += lean.blocks_run < blocks;
      }
  return extrapolated;
}

// ZB-V's: its V-shaped messages, its steady state of six blocks extrapolated.
TEST(Zbv, LeanSimulationIsTheEventSimulation) {
  EXPECT_GT(lean_is_events_on_the_v(PipelineSchedule::zbv, 20261205, [](int p) {
              return std::vector<int64_t>{1, p, 2 * p - 1, 3 * p + 1, 257};
            }),
            0);
}

// The estimate: the V puts the embedding and the output layer on the first rank, and a ZB-V plan
// is faster than 1F1B on the same GPUs with B and W blocks for both chunks in its timeline
// (without the TP overlap, as ZeroBubble.EstimateRunsItsBlocks).
TEST(Zbv, EstimateRunsTheV) {
  const auto run = [](const std::string& schedule) {
    EstimateOptions options;
    options.timeline = true;
    return estimate(test::scenario(test::doc(
                        R"({"tp": 8, "pp": 4, "global_batch": 64, "tp_comm_overlap": false)" +
                            schedule + "}",
                        R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})",
                        R"(, "seq_len": 4096)")),
                    options);
  };
  const Report one = run(""), zbv = run(R"(, "vpp": 2, "schedule": "zbv")");
  EXPECT_LT(zbv.iteration_time_s, one.iteration_time_s);
  EXPECT_LT(zbv.breakdown.bubble, one.breakdown.bubble);
  // 1F1B: the last stage holds the output layer; the V: the first holds both ends.
  EXPECT_GT(one.stages[3].parameters, one.stages[1].parameters);
  EXPECT_GT(zbv.stages[0].parameters, one.stages[0].parameters);
  EXPECT_DOUBLE_EQ(zbv.stages[3].parameters, zbv.stages[1].parameters);
  int b = 0, w = 0;
  for (const auto& e : zbv.timeline) {
    b += e.kind == TimelineKind::input_grad;
    w += e.kind == TimelineKind::weight_grad;
  }
  EXPECT_EQ(b, 4 * 2 * 64);
  EXPECT_EQ(w, 4 * 2 * 64);
}

// ZB-V needs its two chunks: plan.vpp=2 (left out it is 1).
TEST(Zbv, NeedsTwoChunksPerRank) {
  for (const char* plan : {R"({"tp": 8, "pp": 4, "global_batch": 64, "schedule": "zbv"})",
                           R"({"tp": 8, "pp": 4, "vpp": 4, "global_batch": 64,
                               "schedule": "zbv"})"}) {
    const Error e = test::error_of(test::doc(plan));
    EXPECT_EQ(e.path, "plan.schedule") << plan;
    EXPECT_EQ(e.rule, Rule::schedule_stages) << plan;
    EXPECT_NE(e.message.find("plan.schedule=zbv needs"), std::string::npos) << e.message;
  }
  // Micro-batches need not come in groups of pp (Megatron's interleaved rule).
  EXPECT_EQ(schedule_of(test::scenario(test::doc(R"({"tp": 8, "pp": 4, "vpp": 2,
      "global_batch": 6, "schedule": "zbv"})")).plan).name, "zbv");
}

// DualPipeV (dualpipev.cpp): rank r of p over m micro-batches runs DualPipeV.step's eight steps
// (deepseek-ai/DualPipe at 3da1bbe). For p = 2, m = 4, by hand from the steps, rank 1 (the
// turn): F0 F1 twice; two main steps F0 BW1 F1 BW0; step 6's two rounds, the split from round 1
// on (odd rank); its two W. Rank 0: two F0; F0 F1; B1 W F1; one main step; BW1 F1 BW0; one
// round of step 6 (even rank: B1 whole, B0 split); W B0; W.
std::string block_names(const std::vector<ScheduleBlock>& order) {
  std::string out;
  for (const ScheduleBlock& b : order) {
    const char* kind = b.kind == BlockKind::forward      ? "F"
                       : b.kind == BlockKind::backward   ? "BW"
                       : b.kind == BlockKind::input_grad ? "B"
                                                         : "W";
    out += (out.empty() ? "" : " ") + std::string(kind) + std::to_string(b.chunk) + "." +
           std::to_string(b.micro_batch);
  }
  return out;
}

TEST(DualPipeV, RunsDualPipesOrder) {
  const Plan plan = plan_of(PipelineSchedule::dualpipev, 2, 4, 2);
  const Schedule& dpv = schedule_of(plan);
  EXPECT_EQ(dpv.name, "dualpipev");
  EXPECT_EQ(dpv.placement, StagePlacement::v_shape);
  const ScheduleShape shape = schedule_shape(plan);
  std::vector<ScheduleBlock> one, zero;
  dpv.rank_order(shape, 1, one);
  dpv.rank_order(shape, 0, zero);
  EXPECT_EQ(block_names(one),
            "F0.0 F1.0 F0.1 F1.1 F0.2 BW1.0 F1.2 BW0.0 F0.3 BW1.1 F1.3 BW0.1 BW1.2 BW0.2 B1.3 "
            "B0.3 W1.3 W0.3");
  EXPECT_EQ(block_names(zero),
            "F0.0 F0.1 F0.2 F1.0 B1.0 W1.0 F1.1 F0.3 BW1.1 F1.2 BW0.0 BW1.2 F1.3 BW0.1 BW1.3 "
            "B0.2 W0.2 B0.3 W0.3");
}

double dualpipev_simulated_s(int p, int64_t m, double f, double b, double w) {
  return v_simulated_s(PipelineSchedule::dualpipev, p, m, f, b, w);
}

// The closed form (dualpipev.cpp) by hand, and the event simulation equal to it over p, m >= 2p
// and the ratios with W <= B, chunk passes: T = 2m(F + B + W) + max((p - 1)(F + B - W), (p - 1)
// 2(F - W), (p - 1)(2B - W) - F); never slower than 1F1B on the same stages (a stage's passes
// twice a chunk's).
TEST(DualPipeV, SimulationEqualsClosedFormAndNeverLosesToOneFOneB) {
  // p = 4, m = 8, F = B = W = 1: 48 + max(3, 0, 2) = 51 (ZB-V's, where 1F1B takes 66); B = 2:
  // 64 + max(3·2, 0, 3·3 - 1) = 72 (ZB-V: 70); F = 3, W = 0.2: 16·4.2 + max(3·3.8, 3·5.6,
  // 3·1.8 - 3) = 67.2 + 16.8.
  EXPECT_NEAR(dualpipev_simulated_s(4, 8, 3, 1, 0.2), 84, 1e-12);
  EXPECT_DOUBLE_EQ(dualpipev_simulated_s(4, 8, 1, 1, 1), 51);
  EXPECT_DOUBLE_EQ(dualpipev_simulated_s(4, 8, 1, 2, 1), 72);
  const double ratios[][3] = {{1, 1, 1}, {1, 2, 1}, {1, 1, 0.5}, {2, 1, 1}, {1, 1.5, 0.7},
                              {1, 1, 2}, {0.5, 2, 1.5}, {3, 1, 0.2}, {1, 2, 0}, {0.3, 3, 3}};
  int exact = 0;
  for (int p = 2; p <= 8; ++p)
    for (int64_t m = 2 * p; m <= 4 * p + 1; ++m)
      for (const auto& r : ratios) {
        const double f = r[0], b = r[1], w = r[2];
        const double dpv = dualpipev_simulated_s(p, m, f, b, w);
        const Schedule& ofob = schedule_of(plan_of(PipelineSchedule::one_f_one_b, p, m));
        const std::string where = "p=" + std::to_string(p) + " m=" + std::to_string(m) +
                                  " F:B:W=" + std::to_string(f) + ":" + std::to_string(b) + ":" +
                                  std::to_string(w);
        EXPECT_LE(dpv, simulated_s(ofob, p, m, 2 * f, 2 * (b + w), 2 * w) + 1e-12) << where;
        if (w <= b) {
          const Plan plan = plan_of(PipelineSchedule::dualpipev, p, m, 2);
          const PipelineTime closed = schedule_of(plan).closed_form(
              std::vector<StagePasses>(p, {2 * (f + b + w), 2 * f, 2 * b, 2 * w}),
              schedule_shape(plan));
          EXPECT_NEAR(dpv, closed.total_s, 1e-12 * closed.total_s) << where;
          EXPECT_NEAR(closed.bubble_s,
                      std::max({(p - 1) * (f + b - w), (p - 1) * 2 * (f - w),
                                (p - 1) * (2 * b - w) - f}),
                      1e-12) << where;
          // DualPipe's README: (PP/2 - 1)(F&B + B - 3W) on PP = 2p stages, its B whole (B + W)
          // and F&B unoverlapped (F + B + W): a bound where F <= 2B + W.
          if (f <= 2 * b + w)
            EXPECT_LE(closed.bubble_s, (p - 1) * ((f + b + w) + (b + w) - 3 * w) + 1e-12) << where;
          ++exact;
        }
      }
  EXPECT_GT(exact, 300);
}

// Micro-batches in flight: forwards begun and their activations not yet freed (by a whole
// backward, or by the W of a split one), half a stage each, counted from the order: 2p + 1
// chunks on every rank (the README's PP + 1), p + 1/2 stage micro-batches.
TEST(DualPipeV, HoldsPPlusAHalfMicroBatches) {
  for (int p : {2, 3, 4, 7})
    for (int64_t m = 2 * p; m <= 4 * p + 2; ++m) {
      const Plan plan = plan_of(PipelineSchedule::dualpipev, p, m, 2);
      const Schedule& dpv = schedule_of(plan);
      const ScheduleShape shape = schedule_shape(plan);
      for (int i = 0; i < p; ++i) {
        std::vector<ScheduleBlock> order;
        dpv.rank_order(shape, i, order);
        ASSERT_EQ(static_cast<int64_t>(order.size()), dpv.blocks_of_rank(shape, i));
        int64_t held = 0, most = 0, forwards = 0, backwards = 0, splits = 0, weights = 0;
        std::vector<std::pair<int, int64_t>> queued;  // the split backwards, oldest first
        for (size_t k = 0; k < order.size(); ++k) {
          const ScheduleBlock at = dpv.block_at(shape, i, static_cast<int64_t>(k));
          EXPECT_EQ(at.micro_batch, order[k].micro_batch);
          EXPECT_EQ(at.chunk, order[k].chunk);
          EXPECT_EQ(at.kind, order[k].kind);
          switch (order[k].kind) {
            case BlockKind::forward: ++forwards; most = std::max(most, ++held); break;
            case BlockKind::backward: ++backwards; --held; break;
            case BlockKind::input_grad:
              ++splits;
              queued.emplace_back(order[k].chunk, order[k].micro_batch);
              break;
            case BlockKind::weight_grad:
              ++weights;
              --held;
              // The oldest queued split backward's (WeightGradStore is a FIFO queue).
              ASSERT_FALSE(queued.empty());
              EXPECT_EQ(queued.front(), std::make_pair(order[k].chunk, order[k].micro_batch));
              queued.erase(queued.begin());
              break;
          }
        }
        const std::string where = "p=" + std::to_string(p) + " m=" + std::to_string(m) +
                                  " rank " + std::to_string(i);
        EXPECT_EQ(held, 0) << where;
        EXPECT_EQ(forwards, 2 * m) << where;
        EXPECT_EQ(backwards + splits, 2 * m) << where;
        EXPECT_EQ(splits, weights) << where;
        EXPECT_EQ(weights, 2 * p - i - 1) << where;
        EXPECT_EQ(most, 2 * p + 1) << where;
        EXPECT_DOUBLE_EQ(dpv.in_flight(shape, i), most / 2.0) << where;
      }
    }
}

// DualPipeV's: its steady state of four blocks extrapolated.
TEST(DualPipeV, LeanSimulationIsTheEventSimulation) {
  EXPECT_GT(lean_is_events_on_the_v(PipelineSchedule::dualpipev, 20261206, [](int p) {
              return std::vector<int64_t>{2 * p, 2 * p + 1, 3 * p + 1, 257};
            }),
            0);
}

// The estimate: a DualPipeV plan on the V, its timeline with whole and split backwards, the
// EP overlap admitted (DualPipe's overlapped pairs) and hiding the exchange; too few
// micro-batches refused with the rule's id.
TEST(DualPipeV, EstimateRunsTheV) {
  const auto plan = [](const std::string& extra) {
    return test::doc(R"({"tp": 2, "pp": 4, "vpp": 2, "ep": 4, "global_batch": 64,
                         "schedule": "dualpipev")" + extra + "}",
                     R"("qwen3-30b-a3b")", R"({"node": "dgx-h100", "nodes": 4})",
                     R"(, "seq_len": 4096)");
  };
  EstimateOptions options;
  options.timeline = true;
  const Report dpv = estimate(test::scenario(plan("")), options);
  const Report paired = estimate(test::scenario(plan(R"(, "moe_overlap": true)")));
  EXPECT_GT(dpv.iteration_time_s, 0);
  EXPECT_LT(paired.iteration_time_s, dpv.iteration_time_s);
  EXPECT_LT(paired.breakdown.ep_comm, dpv.breakdown.ep_comm);
  int bw = 0, b = 0, w = 0;
  for (const auto& e : dpv.timeline) {
    bw += e.kind == TimelineKind::backward;
    b += e.kind == TimelineKind::input_grad;
    w += e.kind == TimelineKind::weight_grad;
  }
  // 16 micro-batches a replica (64 / DP 4); each rank splits 2p - r - 1 backwards: 7+6+5+4.
  EXPECT_EQ(b, 22);
  EXPECT_EQ(w, 22);
  EXPECT_EQ(bw + b, 4 * 2 * 16);
  const Error few = test::error_of(plan(R"(, "micro_batch": 4)"));  // 4 of the 8 it needs
  EXPECT_EQ(few.rule, Rule::schedule_batches);
  EXPECT_EQ(few.path, "plan.global_batch");
  EXPECT_EQ(few.values["micro_batches"], 4);
  EXPECT_EQ(few.hint, "plan.global_batch=128 or 144");  // 8 micro-batches of 4 on DP 4
}

// DualPipe, the bidirectional original (dualpipe.cpp): DualPipe.step is DualPipeV.step on half
// the ranks (deepseek-ai/DualPipe at 3da1bbe), so a dualpipe plan on pp ranks is estimated as
// DualPipeV on pp/2 ranks of two stages each, its mirrored halves as two replicas: the same time
// as that plan written out, the report keeping the user's plan and micro-batches. Against 1F1B
// on the same pp stages, each rank holds two stages' parameters (the README's 2x) and the
// activations of pp + 1 stage micro-batches (PP + 1), and its bubble is the README's
// (PP/2 - 1)(F&B + B - 3W), the DualPipeV tests' closed form.
TEST(DualPipe, RunsAsDualPipeVOnHalfTheRanks) {
  const auto plan = [](const std::string& keys) {
    return test::doc(R"({"tp": 8, "global_batch": 64, "micro_batch": 1, )" + keys + "}",
                     R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 8})",
                     R"(, "seq_len": 4096)");
  };
  const Report dual = estimate(test::scenario(plan(R"("pp": 8, "schedule": "dualpipe")")));
  const Report v = estimate(test::scenario(plan(R"("pp": 4, "vpp": 2, "schedule": "dualpipev")")));
  const Report one = estimate(test::scenario(plan(R"("pp": 8)")));
  EXPECT_DOUBLE_EQ(dual.iteration_time_s, v.iteration_time_s);
  EXPECT_EQ(dual.plan.pp, 8);
  EXPECT_EQ(dual.plan.dp, 1);
  EXPECT_EQ(dual.plan.effective_schedule(), PipelineSchedule::dualpipe);
  EXPECT_EQ(dual.micro_batches, 64);  // 32 in each direction
  EXPECT_EQ(dual.gpus, 64);
  ASSERT_EQ(dual.stages.size(), 4u);  // the first half; ranks 7..4 mirror them
  // A middle rank: 10 layers of 8,192 hidden in each direction against 1F1B's 10.
  EXPECT_DOUBLE_EQ(dual.stages[1].parameters, 2 * one.stages[1].parameters);
  EXPECT_LT(dual.iteration_time_s, one.iteration_time_s);  // the bubble it removes
}

// What else reads a dualpipe plan's stages reads the plan it runs as (plan_as_run): the search's
// memory checks agree with each plan's estimate (a plan it keeps fits, and has its estimate's
// peak and time, held twice the parameters), and resolve writes no stages, which DualPipe takes
// none of, so its scenario reads back and estimates the same.
TEST(DualPipe, SearchAndResolveSeeThePlanItRunsAs) {
  const std::string doc = test::doc(
      R"({"tp": 8, "pp": 4, "global_batch": 64, "micro_batch": 1, "schedule": "dualpipe"})",
      R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})", R"(, "seq_len": 4096)");
  const Scenario s = test::scenario(doc);
  SearchOptions options;
  options.fit_fixes = false;
  const auto found = search_plans(s, options);
  ASSERT_TRUE(found.ok()) << found.error().message;
  int dual = 0;
  for (const SearchCandidate& c : found.value().best) {
    if (c.plan.effective_schedule() != PipelineSchedule::dualpipe) continue;
    ++dual;
    Scenario t = s;
    t.plan = c.plan;
    const Report r = estimate(t);
    EXPECT_TRUE(r.fits);
    double peak = 0;
    for (const auto& st : r.stages) peak = std::max(peak, st.memory.total);
    EXPECT_DOUBLE_EQ(c.peak_memory_bytes, peak);
    EXPECT_DOUBLE_EQ(c.iteration_time_s, r.iteration_time_s);
  }
  EXPECT_GT(dual, 0);
  const Json resolved = resolve_json(Json::parse(doc), builtin_catalog());
  ASSERT_FALSE(resolved.contains("errors")) << resolved.dump();
  EXPECT_FALSE(resolved["scenario"]["plan"].contains("stages"));
  EXPECT_EQ(estimate(test::scenario(resolved["scenario"].dump())).iteration_time_s,
            estimate(s).iteration_time_s);
}

TEST(DualPipe, BadPlansNameTheRule) {
  const auto plan = [](const std::string& keys) {
    return test::doc(R"({"tp": 8, "schedule": "dualpipe", )" + keys + "}", R"("llama3-70b")",
                     R"({"node": "dgx-h100", "nodes": 8})");
  };
  const Error odd = test::error_of(plan(R"("pp": 7, "global_batch": 56)"));  // DualPipe.step's assert
  EXPECT_EQ(odd.rule, Rule::schedule_stages);
  EXPECT_NE(odd.message.find("an even plan.pp"), std::string::npos) << odd.message;
  const Error chunks = test::error_of(plan(R"("pp": 4, "vpp": 2, "global_batch": 64)"));
  EXPECT_EQ(chunks.rule, Rule::schedule_stages);
  const Error few = test::error_of(plan(R"("pp": 8, "global_batch": 14)"));  // 14 of 16
  EXPECT_EQ(few.rule, Rule::schedule_batches);
  EXPECT_EQ(few.values["micro_batches"], 14);
  const Error uneven = test::error_of(plan(R"("pp": 8, "global_batch": 17)"));
  EXPECT_EQ(uneven.rule, Rule::schedule_batches);
  EXPECT_EQ(uneven.path, "plan.global_batch");
  EXPECT_NE(uneven.message.find("an even number"), std::string::npos) << uneven.message;
}

}  // namespace
}  // namespace stepcast
