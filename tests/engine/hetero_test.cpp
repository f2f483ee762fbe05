// Heterogeneous clusters: per-stage GPUs, links between groups, balancing, and the schedule
// simulation, against hand-derived values and physical monotonicity.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <random>

#include "stepcast/balance.h"
#include "stepcast/pipeline.h"
#include "test_util.h"

namespace stepcast {
namespace {

TEST(Hetero, TwoStagePipelineByHand) {
  // Stage 0: forward 1, backward 2; stage 1 (twice as slow): 2 and 4; 4 micro-batches, 1F1B.
  // Stage 1 runs F0 [1,3] B0 [3,7] F1 [7,9] B1 [9,13] F2 [13,15] B2 [15,19] F3 [19,21]
  // B3 [21,25]; stage 0 then runs B3 [25,27]: 27 = (m-1) x 6 + (3 + 6).
  double makespan = 0;
  simulate_pipeline({1, 2}, {2, 4}, 4, 1, 0.0, false, &makespan);
  EXPECT_DOUBLE_EQ(makespan, 27);
  EXPECT_DOUBLE_EQ(pipeline_time({3, 6}, 4, 1).total_s, 27);
  // A blocking link of 0.5 s between them: each stage sends once per micro-batch (stage 0 its
  // activations, stage 1 its gradients), so stage 1 cycles every 6.5 s and stage 0's last
  // backward starts when stage 1's last gradient lands at 27.5: (m-1) x 6.5 + (3.5 + 6.5).
  simulate_pipeline({1, 2}, {2, 4}, 4, 1, 0.5, true, &makespan);
  EXPECT_DOUBLE_EQ(makespan, 29.5);
  EXPECT_DOUBLE_EQ(pipeline_time({3.5, 6.5}, 4, 1).total_s, 29.5);
}

TEST(Hetero, BalancingByHand) {
  // Stages taking 1 s and 2 s per layer share 12 layers as 8 and 4 (8 s each).
  const double per_layer[] = {1, 2}, none[] = {0, 0};
  const int64_t no_cap[] = {0, 0}, free[] = {0, 0};
  EXPECT_EQ(balance_layers(per_layer, none, no_cap, free, 12, 1), (std::vector<int64_t>{8, 4}));
  // A memory cap of 6 layers on the fast stage moves the rest to the slow one.
  const int64_t cap[] = {6, 0};
  EXPECT_EQ(balance_layers(per_layer, none, cap, free, 12, 1), (std::vector<int64_t>{6, 6}));
  // Fixed extra work on the first stage (embedding) shifts layers to the second.
  const double extra[] = {3, 0};
  EXPECT_EQ(balance_layers(per_layer, extra, no_cap, free, 12, 1), (std::vector<int64_t>{7, 5}));
  // Replicas taking 1 s and 2 s per micro-batch share 12 micro-batches as 8 and 4.
  const double per_mb[] = {1, 2}, no_fill[] = {0, 0};
  const int counts[] = {1, 1};
  const int64_t auto_mb[] = {0, 0};
  EXPECT_EQ(balance_micro_batches(per_mb, no_fill, counts, auto_mb, 12),
            (std::vector<int64_t>{8, 4}));
  // A pipeline's fill and drain (3 s on the fast one) move micro-batches to the other: 7 and 5,
  // finishing at 10 s each.
  const double fill[] = {3, 0};
  EXPECT_EQ(balance_micro_batches(per_mb, fill, counts, auto_mb, 12),
            (std::vector<int64_t>{7, 5}));
  // One A100 replica at 1.33 s a micro-batch and four H200 replicas at 0.4718 s share 320 (GPT-3
  // 175B at TP 8, issue 38): the greedy gave 28 and 73 each, finishing at 37.2 s (the last 4 no
  // longer fit the set of four and went to the one); 24 and 74 finish at 31.9 and 34.9 s.
  const double gpt3[] = {1.33, 0.4718}, zero_fill[] = {0, 0};
  const int sets[] = {1, 4};
  EXPECT_EQ(balance_micro_batches(gpt3, zero_fill, sets, auto_mb, 320),
            (std::vector<int64_t>{24, 74}));
}

TEST(Hetero, LockstepBalancingByHand) {
  // The same replicas at 1 s and 2 s a micro-batch, each micro-batch's collectives spanning
  // both (ZeRO-3) at 0.5 s for a replica that does not run it: 8 and 4 leave the slow one 4
  // of the fast one's, 4 x 2 + 4 x 0.5 = 10 s; 9 and 3 finish at 9 s and 3 x 2 + 6 x 0.5 = 9 s.
  const double per_mb[] = {1, 2}, no_fill[] = {0, 0}, lockstep[] = {0.5, 0.5};
  const int counts[] = {1, 1};
  const int64_t auto_mb[] = {0, 0};
  EXPECT_EQ(balance_lockstep_micro_batches(per_mb, no_fill, lockstep, counts, auto_mb, 12),
            (std::vector<int64_t>{9, 3}));
  // No lockstep: the affine balance's 8 and 4.
  const double none[] = {0, 0};
  EXPECT_EQ(balance_lockstep_micro_batches(per_mb, no_fill, none, counts, auto_mb, 12),
            (std::vector<int64_t>{8, 4}));
}

// Against every split, on small random sets: the lockstep balance finishes as soon as the best
// one that adds up (given counts kept), lockstep costs below and above a micro-batch's own.
TEST(Hetero, LockstepBalancingIsTheExactMinimax) {
  std::mt19937_64 rng(38);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = 1 + rng() % 3;
    std::vector<double> per_mb, fill, lockstep;
    std::vector<int> counts;
    std::vector<int64_t> fixed;
    for (size_t i = 0; i < n; ++i) {
      per_mb.push_back(0.25 + static_cast<double>(rng() % 16) / 4);
      fill.push_back(rng() % 2 ? 0.0 : static_cast<double>(rng() % 8) / 2);
      lockstep.push_back(rng() % 3 == 0 ? 0.0 : per_mb.back() * static_cast<double>(rng() % 7) / 4);
      counts.push_back(1 + static_cast<int>(rng() % 3));
      fixed.push_back(rng() % 6 == 0 ? 1 + static_cast<int64_t>(rng() % 4) : 0);
    }
    const int64_t total = 1 + static_cast<int64_t>(rng() % 40);
    auto finish = [&](const std::vector<int64_t>& m) {
      const int64_t most = *std::max_element(m.begin(), m.end());
      double end = 0;
      for (size_t i = 0; i < n; ++i)
        end = std::max(end, fill[i] + static_cast<double>(m[i]) * per_mb[i] +
                                static_cast<double>(most - m[i]) * lockstep[i]);
      return end;
    };
    double best = std::numeric_limits<double>::infinity();
    std::vector<int64_t> m(n, 1);
    std::function<void(size_t, int64_t)> every = [&](size_t i, int64_t left) {
      if (i == n) {
        if (left == 0) best = std::min(best, finish(m));
        return;
      }
      for (int64_t k = fixed[i] > 0 ? fixed[i] : 1; counts[i] * k <= left; ++k) {
        m[i] = k;
        every(i + 1, left - counts[i] * k);
        if (fixed[i] > 0) break;
      }
    };
    every(0, total);
    if (!std::isfinite(best)) continue;  // no split adds up
    const auto got = balance_lockstep_micro_batches(per_mb, fill, lockstep, counts, fixed, total);
    int64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += counts[i] * got[i];
      if (fixed[i] > 0) EXPECT_EQ(got[i], fixed[i]) << "trial " << trial;
    }
    EXPECT_EQ(sum, total) << "trial " << trial;
    EXPECT_NEAR(finish(got), best, 1e-12 * best) << "trial " << trial;
  }
}

std::string two_groups(const std::string& a, const std::string& b, const std::string& plan,
                       const std::string& link = "roce-100g") {
  return fmt::format(R"({{"model": "llama3-8b", "seq_len": 4096,
      "cluster": {{"groups": [{{"node": "{}", "nodes": 1}}, {{"node": "{}", "nodes": 1}}],
                   "inter_group_link": "{}"}},
      "plan": {}}})",
                     a, b, link, plan);
}

const char* kStages = R"({"tp": 8, "pp": 2, "global_batch": 64,
    "stages": [{"group": 0, "layers": "auto"}, {"group": 1, "layers": "auto"}]})";
const char* kEvenStages = R"({"tp": 8, "pp": 2, "global_batch": 64,
    "stages": [{"group": 0, "layers": 16}, {"group": 1, "layers": 16}]})";
const char* kReplicas = R"({"tp": 8, "pp": 1, "global_batch": 64,
    "replicas": [{"group": 0, "micro_batches": "auto"}, {"group": 1, "micro_batches": "auto"}]})";
const char* kEvenReplicas = R"({"tp": 8, "pp": 1, "global_batch": 64,
    "replicas": [{"group": 0, "micro_batches": 32}, {"group": 1, "micro_batches": 32}]})";

double time_of(const std::string& json) { return estimate(test::scenario(json)).iteration_time_s; }

TEST(Hetero, StagesRunOnTheirOwnGpus) {
  const Report r = estimate(test::scenario(two_groups("dgx-a100", "dgx-h100", kEvenStages)));
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[0].gpu, "a100-sxm4-80gb");
  EXPECT_EQ(r.stages[1].gpu, "h100-sxm5-80gb");
  EXPECT_GT(r.stages[0].forward_s, r.stages[1].forward_s);  // the A100 stage is slower
  EXPECT_EQ(r.stages[0].memory.capacity, 80.0 * (1 << 30));
  // The stage boundary crosses the inter-group link, and the census says so.
  bool crosses = false;
  for (const auto& op : r.stages[0].communication)
    crosses = crosses || (op.group == CommGroup::pp && op.link == "roce-100g");
  EXPECT_TRUE(crosses);
  EXPECT_NEAR(r.breakdown.sum(), r.iteration_time_s, 1e-9 * r.iteration_time_s);
}

TEST(Hetero, AutoBalanceBeatsEvenOnMixedAndEqualsItOnUniform) {
  EXPECT_LT(time_of(two_groups("dgx-a100", "dgx-h100", kStages)),
            0.8 * time_of(two_groups("dgx-a100", "dgx-h100", kEvenStages)));
  EXPECT_LT(time_of(two_groups("dgx-a100", "dgx-h100", kReplicas)),
            0.8 * time_of(two_groups("dgx-a100", "dgx-h100", kEvenReplicas)));
  const Report uniform = estimate(test::scenario(two_groups("dgx-h100", "dgx-h100", kStages)));
  EXPECT_EQ(uniform.stages[0].layers + uniform.stages[1].layers, 32);
  // On equal groups the balancer may still move a layer or two off the stage holding the output
  // layer (128 K vocabulary): never slower than the even split, and close to it.
  const double even = time_of(two_groups("dgx-h100", "dgx-h100", kEvenStages));
  EXPECT_LE(uniform.iteration_time_s, even);
  EXPECT_NEAR(uniform.iteration_time_s, even, 0.05 * even);
  EXPECT_DOUBLE_EQ(time_of(two_groups("dgx-h100", "dgx-h100", kReplicas)),
                   time_of(two_groups("dgx-h100", "dgx-h100", kEvenReplicas)));
}

TEST(Hetero, FasterGpusNeverSlowSlowerLinksNeverSpeed) {
  for (const char* plan : {kStages, kEvenStages, kReplicas, kEvenReplicas}) {
    const double mixed = time_of(two_groups("dgx-a100", "dgx-h100", plan));
    EXPECT_LE(time_of(two_groups("dgx-h100", "dgx-h100", plan)), mixed * (1 + 1e-9)) << plan;
    EXPECT_GE(time_of(two_groups("dgx-a100", "dgx-a100", plan)), mixed * (1 - 1e-9)) << plan;
    const double fast_link = time_of(two_groups("dgx-a100", "dgx-h100", plan, "ib-ndr"));
    const double slow_link = time_of(two_groups("dgx-a100", "dgx-h100", plan, "eth-10g"));
    EXPECT_LE(fast_link, mixed * (1 + 1e-9)) << plan;
    EXPECT_GE(slow_link, mixed * (1 - 1e-9)) << plan;
  }
}

TEST(Hetero, ReplicasReportTheirShares) {
  const Report r = estimate(test::scenario(two_groups("dgx-a100", "dgx-h100", kReplicas)));
  ASSERT_EQ(r.replicas.size(), 2u);
  EXPECT_EQ(r.replicas[0].micro_batches + r.replicas[1].micro_batches, 64);
  EXPECT_LT(r.replicas[0].micro_batches, r.replicas[1].micro_batches);  // A100 takes fewer
  // Balanced pipelines finish within one micro-batch of each other.
  EXPECT_NEAR(r.replicas[0].pipeline_s, r.replicas[1].pipeline_s,
              r.replicas[0].pipeline_s / r.replicas[0].micro_batches);
}

TEST(Hetero, SimulationAgreesWithClosedFormOnHomogeneousScenarios) {
  // 1F1B plans take the closed form; the simulation must agree to 0.1 %.
  for (const char* plan :
       {R"({"tp": 8, "pp": 4, "dp": 2, "global_batch": 512, "sequence_parallel": true})",
        R"({"tp": 4, "pp": 8, "dp": 2, "global_batch": 128, "recompute": "full"})",
        R"({"tp": 8, "pp": 8, "dp": 1, "global_batch": 64, "pp_scatter_gather": true,
            "framework": "megatron-lm-2021"})"}) {
    const Scenario s = test::scenario(fmt::format(
        R"({{"model": "llama3-70b", "cluster": {{"node": "dgx-h100", "nodes": 8}},
            "seq_len": 4096, "plan": {}}})",
        plan));
    EstimateOptions simulated;
    simulated.simulate = true;
    const double closed = estimate(s).iteration_time_s;
    EXPECT_NEAR(estimate(s, simulated).iteration_time_s, closed, 1e-3 * closed) << plan;
  }
}

TEST(Hetero, InterleavedClosedFormIsExactForIdenticalStages) {
  // (m + (p-1)/v) u plus the send/receive latency through every virtual stage, 2 (p v - 1) c,
  // against the simulation with overlapped (non-blocking) messages of c = 10 ms.
  for (int p : {2, 4, 8})
    for (int v : {2, 3, 5}) {
      const long m = 8L * p;
      double makespan = 0;
      simulate_pipeline(std::vector<double>(p, 1.0 / 3), std::vector<double>(p, 2.0 / 3), m, v,
                        0.01, false, &makespan);
      const double closed = pipeline_time(std::vector<double>(p, 1.0), m, v).total_s +
                            2.0 * (p * v - 1) * 0.01;
      EXPECT_NEAR(makespan, closed, 1e-9) << "p=" << p << " v=" << v;
    }
}

TEST(Hetero, StagesOrReplicasFollowRankOrderWhenLeftOut) {
  // Megatron's rank order (tp fastest, pp slowest) over the groups in order: with pp 2 each
  // stage's 8 GPUs are one DGX; with pp 1 each replica's are.
  const Scenario staged = test::scenario(
      two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "pp": 2, "global_batch": 64})"));
  ASSERT_EQ(staged.plan.stages.size(), 2u);
  EXPECT_EQ(staged.plan.stages[0].group, 0);
  EXPECT_EQ(staged.plan.stages[1].group, 1);
  EXPECT_EQ(staged.plan.stages[0].layers, 0);  // "auto": balanced by speed
  const Scenario replicated = test::scenario(
      two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "global_batch": 64})"));
  ASSERT_EQ(replicated.plan.replicas.size(), 2u);
  EXPECT_EQ(replicated.plan.replicas[0].group, 0);
  EXPECT_EQ(replicated.plan.replicas[1].group, 1);
  EXPECT_EQ(replicated.plan.replicas[1].count, 1);
}

TEST(Hetero, PublishedMixesCanBeWrittenDown) {
  // Issue 36: the boards published heterogeneous clusters mix, each on its own bus. An AWS
  // g5.48xlarge (8 A10G on PCIe 4.0, presets/nodes/g5-48xlarge.json) beside an 8 x L40S PCIe
  // server: each stage runs on its own GPU with its own memory, its TP all-reduces cross its
  // own PCIe, and the balancer gives the A10G (70 TF BF16) fewer layers than the L40S (362 TF).
  const Report r = estimate(test::scenario(two_groups("g5-48xlarge", "pcie-l40s-x8", kStages)));
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[0].gpu, "a10g");
  EXPECT_EQ(r.stages[1].gpu, "l40s");
  EXPECT_EQ(r.stages[0].memory.capacity, 24.0 * (1 << 30));
  EXPECT_LT(r.stages[0].layers, r.stages[1].layers);
  EXPECT_EQ(r.stages[0].layers + r.stages[1].layers, 32);
  EXPECT_GT(r.stages[0].forward_s / r.stages[0].layers, r.stages[1].forward_s / r.stages[1].layers);
  bool tp_on_pcie = false;
  for (const auto& op : r.stages[0].communication)
    tp_on_pcie = tp_on_pcie || (op.group == CommGroup::tp && op.link == "pcie4");
  EXPECT_TRUE(tp_on_pcie);
  // Each board alone: the mixed cluster sits between two A10G servers and two L40S servers.
  const double mixed = r.iteration_time_s;
  EXPECT_LT(mixed, time_of(two_groups("g5-48xlarge", "g5-48xlarge", kStages)));
  EXPECT_GT(mixed, time_of(two_groups("pcie-l40s-x8", "pcie-l40s-x8", kStages)));
  // The A10G's peaks are derived, not a datasheet's (confidence low): the report says so, once
  // however many of its groups; the L40S (a datasheet, high) adds nothing.
  auto low_confidence = [](const Report& report) {
    return std::count_if(report.warnings.begin(), report.warnings.end(),
                         [](const std::string& w) {
                           return w.find("its figures are of low confidence") !=
                                  std::string::npos;
                         });
  };
  EXPECT_EQ(low_confidence(r), 1);
  EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(),
                          [](const std::string& w) { return w.rfind("a10g: ", 0) == 0; }));
  auto of = [](const char* a, const char* b) {
    return estimate(test::scenario(two_groups(a, b, kStages)));
  };
  EXPECT_EQ(low_confidence(of("g5-48xlarge", "g5-48xlarge")), 1);
  EXPECT_EQ(low_confidence(of("pcie-l40s-x8", "pcie-l40s-x8")), 0);
}

TEST(Hetero, LayoutErrors) {
  struct Case {
    std::string json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"model": "llama3-8b", "seq_len": 4096,
          "cluster": {"groups": [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 2}]},
          "plan": {"tp": 4, "pp": 2, "global_batch": 60}})",
       "stages (12 GPUs each) do not fall within one group each in rank order: give plan.stages"},
      {two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "pp": 2, "global_batch": 64,
           "stages": [{"group": 0, "layers": 10}, {"group": 1, "layers": 10}]})"),
       "plan.stages hold 20 layers but model.layers=32"},
      {two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "pp": 2, "global_batch": 64,
           "stages": [{"group": 0}, {"group": 0}]})"),
       "uses 16 GPUs of cluster.groups[0] but it has 8"},
      {two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "pp": 2, "global_batch": 64,
           "stages": [{"group": 0}, {"group": 2}]})"),
       "plan.stages[1].group=2 but the cluster has 2 group(s)"},
      {two_groups("dgx-a100", "dgx-h100", R"({"tp": 8, "global_batch": 64,
           "replicas": [{"group": 0, "micro_batches": 10}, {"group": 1, "micro_batches": 10}]})"),
       "plan.replicas take 20 micro-batches but global_batch / micro_batch = 64"},
      {two_groups("dgx-a100", "dgx-h100", kStages, "nvlink4"),
       "cluster.inter_group_link=\"nvlink4\" is an intra-node fabric"},
  };
  for (const auto& c : cases) {
    const Error e = test::error_of(c.json);
    EXPECT_NE(e.message.find(c.message), std::string::npos) << e.message;
  }
}

}  // namespace
}  // namespace stepcast
