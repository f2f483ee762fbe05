// ZeRO-3 / FSDP gathers run module by module (sharded_gathers.h): the figures below are replayed by
// hand, two streams and one communicator, seconds as plain numbers.
#include <gtest/gtest.h>

#include <vector>

#include "stepcast/collectives.h"
#include "stepcast/sharded_gathers.h"
#include "test_util.h"

namespace stepcast {
namespace {

TEST(ShardedGathers, GathersThatFitBehindThePreviousModuleAreHidden) {
  // 4 modules, gather 1, compute 2, one ahead: G0 [0,1], C0 [1,3]; G1 issued at 1, [1,2];
  // C1 [3,5]; ... C3 [7,9]. Only the first gather shows: 9 - 8 = 1.
  const FetchUnit u{1, 2, 0};
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 1, 0.0), 1.0);
  // The compute they ran beside loses 0.2 of the 3 hidden: 1 + 0.6.
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 1, 0.2), 1.6);
  // Without prefetch each gather waits for the compute before it: 4 x 3 - 8 = 4.
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 0, 0.0), 4.0);
  // The list and the count say the same.
  const std::vector<FetchUnit> list(4, u);
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(list, 1, 0.2), sharded_pass_exposed_s(u, 4, 1, 0.2));
}

TEST(ShardedGathers, GathersLongerThanTheComputeAreExposedModuleByModule) {
  // Latency-bound: gather 3, compute 1. G0 [0,3], C0 [3,4]; G1 issued at 3, [3,6], C1 [6,7];
  // G2 [6,9], C2 [9,10]; G3 [9,12], C3 [12,13]: 13 - 4 = 9 = 3 + 3 x (3 - 1). Prefetching deeper
  // does not help modules alike: the communicator is the bottleneck.
  const FetchUnit u{3, 1, 0};
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 1, 0.0), 9.0);
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 4, 0.0), 9.0);
  // With slowdown: 12 of traffic, 9 exposed, the 3 hidden slow the compute: 9 + 0.5 x 3.
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(u, 4, 1, 0.5), 10.5);
}

TEST(ShardedGathers, BackwardQueuesReduceScattersBehindTheNextGather) {
  // Gather 1, compute 3, reduce-scatter 1, three modules: G0 [0,1], C0 [1,4], G1 issued at 1
  // [1,2], RS0 at 4 [4,5], C1 [4,7], G2 issued at 4 waits for RS0: [5,6], RS1 [7,8], C2 [7,10],
  // RS2 [10,11]. The first gather and the last reduce-scatter show: 11 - 9 = 2.
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(FetchUnit{1, 3, 1}, 3, 1, 0.0), 2.0);
  // Gather and reduce-scatter together outlast the compute (1.5 + 1.5 > 2): each module after the
  // first waits 1; G0 [0,1.5], C0 [1.5,3.5], G1 [1.5,3], RS0 [3.5,5], C1 [3.5,5.5], G2 issued at
  // 3.5 after RS0: [5,6.5], RS1 [6.5,8], C2 [6.5,8.5], RS2 [8.5,10]: 10 - 6 = 4.
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(FetchUnit{1.5, 2, 1.5}, 3, 1, 0.0), 4.0);
}

TEST(ShardedGathers, DeeperPrefetchHidesALargeModuleBehindEarlierOnes) {
  // A large module (gather 4) after a short one: one ahead, its gather starts when the short one
  // starts: G0 [0,1], C0 [1,5], G1 [1,2], C1 [5,6], G2 issued at 5 [5,9], C2 [9,10]: 10 - 6 = 4.
  // Two ahead, it starts with module 0: G2 issued at 1 after G1, [2,6], C2 [6,7]: 7 - 6 = 1.
  const std::vector<FetchUnit> units{{1, 4, 0}, {1, 1, 0}, {4, 1, 0}};
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(units, 1, 0.0), 4.0);
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(units, 2, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(sharded_pass_exposed_s(std::vector<FetchUnit>{}, 1, 0.2), 0.0);
}

// Weak scaling of a ZeRO-3 plan (PyTorch FSDP): one micro-batch of 4,096 tokens per GPU per
// step on 2 and on 128 DGX H100 (16 and 1,024 ranks). Each GPU computes the same and gathers the
// same bytes at the same bus bandwidth (8 ports of NDR a node, capped at NVLink's 370 GB/s); only
// the ring's latency grows, 1 x 5 + 14 x 3.4 = 52.6 us to 127 x 5 + 896 x 3.4 = 3,681.4 us
// (collectives.h). Every pass starts with a gather nothing hides and the backward ends with a
// reduce-scatter nothing follows, so the exposed communication grows by at least three times
// the difference.
Report fsdp(int nodes, const std::string& model, const std::string& extra = "") {
  const int dp = 8 * nodes;
  return estimate(test::scenario(test::doc(
      fmt::format(R"({{"framework": "pytorch-fsdp", "tp": 1, "pp": 1, "micro_batch": 1,
                       "global_batch": {}{}}})",
                  dp, extra),
      "\"" + model + "\"", fmt::format(R"({{"node": "dgx-h100", "nodes": {}}})", nodes),
      R"(, "seq_len": 4096)")));
}

TEST(ShardedGathers, ExposedGathersGrowWithTheRankCountAtFixedWork) {
  const Report small = fsdp(2, "llama3-8b"), large = fsdp(128, "llama3-8b");
  const double latency_growth = 3681.4e-6 - 52.6e-6;
  // Same compute per GPU.
  EXPECT_NEAR(large.stages[0].forward_s, small.stages[0].forward_s, 1e-12);
  // The first forward gather, the first backward gather and the last reduce-scatter of the one
  // micro-batch each pay the longer latency in full.
  EXPECT_GT(large.breakdown.dp_comm - small.breakdown.dp_comm, 3 * latency_growth);
  EXPECT_GT(large.iteration_time_s, small.iteration_time_s + 3 * latency_growth);
}

TEST(ShardedGathers, LatencyBoundLayersAtManyRanksAreExposed) {
  // GPT-3 1.3B (24 layers of 50 M parameters, 100 MB in bf16) on 1,024 H100s: a layer's gather
  // costs 3.7 ms of latency alone, beside a forward of about 1 ms a layer, so nearly every
  // gather shows: the exposed DP time exceeds 24 layers x 2 passes x (3.68 - 1.5) ms.
  const Report r = fsdp(128, "gpt3-1.3b");
  const double per_layer_forward = r.stages[0].forward_s / 24;
  ASSERT_LT(per_layer_forward, 1.5e-3);
  EXPECT_GT(r.breakdown.dp_comm, 24 * 2 * (3681.4e-6 - 1.5e-3));
  // One node ahead of the compute it was at 16 ranks: far less shows.
  EXPECT_LT(fsdp(2, "gpt3-1.3b").breakdown.dp_comm, r.breakdown.dp_comm / 2);
}

TEST(ShardedGathers, PrefetchDepthIsAPlanKey) {
  // No prefetch exposes every gather; one ahead (FSDP's default) hides what fits.
  const Report none = fsdp(2, "llama3-8b", R"(, "zero3_prefetch": 0)");
  const Report one = fsdp(2, "llama3-8b");
  EXPECT_GT(none.breakdown.dp_comm, one.breakdown.dp_comm);
  // Each layer prefetched holds one more gathered layer in memory: 4,096 x (4,096 + 2 x 1,024)
  // QKV + 4,096^2 projection + 3 x 4,096 x 14,336 SwiGLU + 2 x 4,096 norms = 218,112,000
  // parameters, in bf16.
  const Report two = fsdp(2, "llama3-8b", R"(, "zero3_prefetch": 2)");
  EXPECT_NEAR(two.stages[0].memory.weights - one.stages[0].memory.weights, 2 * 218112000.0, 1.0);
  EXPECT_NEAR(one.stages[0].memory.weights - none.stages[0].memory.weights, 2 * 218112000.0, 1.0);
  for (const char* bad : {"-1", "65", "1.5", "\"one\""}) {
    const Error e = test::error_of(test::doc(
        fmt::format(R"({{"framework": "pytorch-fsdp", "global_batch": 64, "zero3_prefetch": {}}})",
                    bad)));
    EXPECT_EQ(e.path, "plan.zero3_prefetch") << bad;
  }
}

}  // namespace
}  // namespace stepcast

namespace stepcast {
namespace {

TEST(ShardedGathers, Fsdp2CopiesEachGatheredUnitOutOnTheComputeStream) {
  // torchtitan's FSDP2 copies every gathered layer out of the all-gather's buffer on the compute
  // stream (foreach_all_gather_copy_out): each gathered byte read and written once at HBM speed,
  // 3,350 GB/s x 0.933 (Hopper's memory efficiency, calibration.json) on an H100. Llama 3 8B on
  // one DGX H100, one 4,096-token micro-batch per GPU: the pass pays for the copies whatever the
  // gathers hide, so the exposed DP time is at least the copies' time; FSDP1 (pytorch-fsdp,
  // gathered in place) has none of it.
  auto on_one_node = [](const char* framework) {
    return estimate(test::scenario(test::doc(
        fmt::format(R"({{"framework": "{}", "tp": 1, "pp": 1, "micro_batch": 1,
                         "global_batch": 8}})",
                    framework),
        R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 1})", R"(, "seq_len": 4096)")));
  };
  const Report titan = on_one_node("torchtitan");
  double gathered = 0;  // bytes per micro-batch, forward and backward
  for (const auto& op : titan.stages[0].communication)
    if (op.group == CommGroup::dp && op.kind == CollectiveKind::all_gather &&
        (op.phase == Phase::forward || op.phase == Phase::backward))
      gathered += op.bytes * static_cast<double>(op.count);
  // 32 layers of 218,112,000 bf16 parameters, twice (forward and backward), and the embedding and
  // output layer: at least 2 x 32 x 436,224,000 bytes.
  ASSERT_GE(gathered, 2 * 32 * 436224000.0);
  const double copies = 2 * gathered / (3350e9 * 0.933);
  EXPECT_GT(titan.breakdown.dp_comm, copies);
  // The gathers hide behind the compute on one node, so what FSDP2 exposes beyond FSDP1 is
  // about the copies (19 ms of 62; the profiles' other settings move the rest by under 10 %).
  const Report fsdp1 = on_one_node("pytorch-fsdp");
  EXPECT_NEAR(titan.breakdown.dp_comm - fsdp1.breakdown.dp_comm, copies, 0.1 * copies);
}

// An MoE model under ZeRO-3 gathers each layer at its own size, its routed experts over the
// expert data-parallel group (census.cpp), and shards their weights over that group
// (memory.cpp). Llama 4 Scout (h 5120, 40 query and 8 KV heads of 128, 48 MoE layers of 16
// SwiGLU experts of 8192 and one shared, vocabulary 202,048) on 4 DGX H100, tp 1, ep 8, dp 32:
// edp 32 / 8 = 4, 2 micro-batches of the 64. By hand, bf16: a layer's 2 local experts
// 2·3·5120·8192 = 251,658,240 parameters; the rest of a layer Q and output 2·5120² =
// 52,428,800, K and V 2·1024·5120 = 10,485,760, the shared expert 3·5120·8192 = 125,829,120,
// the router 16·5120 + 16 bias and two norms 2·5120: 188,835,856; the embedding and the output
// layer 2·202,112·5120 (the vocabulary padded to 128) and the final norm 5120: 2,069,632,000.
// Before, the experts went with the embedding (16 GB an operation, over all 32 DP ranks) and
// each layer was gathered at a dense layer's size.
TEST(ShardedGathers, MoeExpertsAreGatheredALayerAtATimeOverTheExpertDataParallelGroup) {
  const Report r = estimate(test::scenario(R"({"model": "llama4-scout-17b-16e",
      "cluster": {"node": "dgx-h100", "nodes": 4}, "seq_len": 4096,
      "plan": {"tp": 1, "pp": 1, "ep": 8, "global_batch": 64, "micro_batch": 1,
               "zero_stage": 3}})"));
  const StageReport& st = r.stages[0];
  auto op = [&](std::string_view what) -> const CommOp& {
    for (const auto& o : st.communication)
      if (o.what == what) return o;
    ADD_FAILURE() << what;
    return st.communication.front();
  };
  const CommOp& experts = op("expert parameters (ZeRO-3)");
  EXPECT_EQ(experts.group, CommGroup::edp);
  EXPECT_EQ(experts.group_size, 4);
  EXPECT_EQ(experts.count, 48 * 2);
  EXPECT_DOUBLE_EQ(experts.bytes, 251'658'240.0 * 2);
  EXPECT_EQ(op("expert gradients (ZeRO-3)").count, 48 * 2);
  const CommOp& rest = op("MoE layer parameters but the experts (ZeRO-3)");
  EXPECT_EQ(rest.group_size, 32);
  EXPECT_DOUBLE_EQ(rest.bytes, 188'835'856.0 * 2);
  EXPECT_DOUBLE_EQ(op("embedding/output parameters (ZeRO-3)").bytes, 2'069'632'000.0 * 2);
  for (const auto& o : st.communication) EXPECT_NE(o.what, "layer parameters (ZeRO-3)");
  // Weights: the rest sharded over 32, the experts over 4.
  const double expert_parameters = 48 * 251'658'240.0;
  EXPECT_NEAR(st.memory.weights,
              (st.parameters - expert_parameters) * 2 / 32 + expert_parameters * 2 / 4 +
                  2 * (188'835'856.0 + 251'658'240.0) * 2,  // the gathered layer and the next
              1e-6 * st.memory.weights);
}

}  // namespace
}  // namespace stepcast
