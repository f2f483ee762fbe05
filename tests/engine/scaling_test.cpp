// The scaling sweep (scaling.h): every point is the estimate of the document with that node count
// or TP degree (dp left to follow the GPUs), refusals carry the rule they break, the node counts
// around the scenario's are the ones the page has always charted, and bad requests are errors.
#include <gtest/gtest.h>

#include "stepcast/rule_ids.h"
#include "stepcast/scaling.h"
#include "test_util.h"

namespace stepcast {
namespace {

// Llama 3 70B, TP 8 x PP 4 on 8 DGX H100 (64 GPUs, dp 2 given: the sweep leaves it out).
const char* kDoc = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "global_batch": 512}, "seq_len": 4096})";

Report estimate_of(const std::string& json) { return estimate(test::scenario(json)); }

std::string variant(int nodes, int tp) {
  return fmt::format(R"({{"model": "llama3-70b", "cluster": {{"node": "dgx-h100", "nodes": {}}},
    "plan": {{"tp": {}, "pp": 4, "global_batch": 512}}, "seq_len": 4096}})",
                     nodes, tp);
}

std::vector<int> nodes_of(const ScalingResult& r) {
  std::vector<int> out;
  for (const auto& p : r.nodes) out.push_back(p.nodes);
  return out;
}

TEST(Scaling, EachPointIsTheEstimateOfThatVariant) {
  auto r = scaling_sweep(Json::parse(kDoc), test::catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->base_nodes, 8);
  EXPECT_EQ(r->base_tp, 8);
  // 1, 8/8, 8/4, 8/2, 8, 16, 32, 64: seven distinct counts.
  EXPECT_EQ(nodes_of(*r), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  for (const auto& p : r->nodes) {
    SCOPED_TRACE(p.nodes);
    if (p.nodes < 4) {
      // 8 or 16 GPUs hold no replica of 8 x 4 = 32.
      ASSERT_TRUE(p.error);
      EXPECT_EQ(p.error->rule, Rule::whole_replicas);
      EXPECT_EQ(p.error->values["replica_gpus"], 32);
      continue;
    }
    ASSERT_FALSE(p.error) << p.error->message;
    const Report want = estimate_of(variant(p.nodes, 8));
    EXPECT_EQ(p.iteration_time_s, want.iteration_time_s);
    EXPECT_EQ(p.tokens_per_s, want.tokens_per_s);
    EXPECT_EQ(p.mfu, want.mfu);
    EXPECT_EQ(p.fits, want.fits);
    EXPECT_EQ(p.gpus, 8 * p.nodes);
  }
  ASSERT_EQ(r->tp.size(), 5u);
  for (const auto& p : r->tp) {
    SCOPED_TRACE(p.tp);
    EXPECT_EQ(p.nodes, 8);
    if (p.tp == 16) {  // 8 KV heads
      ASSERT_TRUE(p.error);
      EXPECT_EQ(p.error->rule, Rule::divides);
      EXPECT_EQ(p.error->values["dividend_key"], "model.kv_heads");
      continue;
    }
    ASSERT_FALSE(p.error) << p.error->message;
    EXPECT_EQ(p.tokens_per_s, estimate_of(variant(8, p.tp)).tokens_per_s);
  }
}

TEST(Scaling, EfficiencyIsAgainstPerfectScalingFromTheScenariosOwnSize) {
  auto r = scaling_sweep(Json::parse(kDoc), test::catalog());
  ASSERT_TRUE(r.ok());
  const auto at = [&](int n) {
    for (const auto& p : r->nodes)
      if (p.nodes == n) return p;
    return ScalingPoint{};
  };
  EXPECT_EQ(*at(8).scaling_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*at(16).scaling_efficiency, at(16).tokens_per_s / at(8).tokens_per_s / 2);
  EXPECT_DOUBLE_EQ(*at(4).scaling_efficiency, at(4).tokens_per_s / at(8).tokens_per_s * 2);
  // The global batch stays: 64 nodes leave each of the 16 replicas 32 micro-batches for 4
  // stages, so the pipeline bubble (3 of 35 slots) and the larger DP ring cost throughput.
  EXPECT_LT(*at(64).scaling_efficiency, *at(16).scaling_efficiency);
  EXPECT_LT(*at(64).scaling_efficiency, 1.0);
  EXPECT_FALSE(at(1).scaling_efficiency);
  const Json j = to_json(*r);
  EXPECT_EQ(j["base"], Json({{"nodes", 8}, {"tp", 8}}));
  EXPECT_EQ(j["nodes"][0]["error"]["rule"], "whole_replicas");
  EXPECT_EQ(j["nodes"][3]["scaling_efficiency"], 1.0);
  EXPECT_FALSE(j["tp"][0].contains("scaling_efficiency"));
}

TEST(Scaling, NodeCountsAroundTheScenarios) {
  auto sweep = [](int nodes) {
    return nodes_of(*scaling_sweep(Json::parse(variant(nodes, 8)), test::catalog()));
  };
  EXPECT_EQ(sweep(6), (std::vector<int>{1, 3, 6, 12, 24, 48}));  // 6/4 and 6/8 are not whole
  EXPECT_EQ(sweep(1000), (std::vector<int>{1, 125, 250, 500, 1000, 2000, 4000}));  // <= 4,096
  ScalingOptions chosen;
  chosen.nodes = {16};  // 128 GPUs: dp 4 splits the 512 sequences
  chosen.tp = {4};
  auto r = scaling_sweep(Json::parse(kDoc), test::catalog(), chosen);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(nodes_of(*r), std::vector<int>{16});
  ASSERT_FALSE(r->nodes[0].error);
  EXPECT_EQ(r->nodes[0].tokens_per_s, estimate_of(variant(16, 8)).tokens_per_s);
  ASSERT_EQ(r->tp.size(), 1u);
  EXPECT_EQ(r->tp[0].tokens_per_s, estimate_of(variant(8, 4)).tokens_per_s);
}

TEST(Scaling, BadRequestsAreErrors) {
  // The document's own reading error.
  auto typo = scaling_sweep(Json::parse(R"({"model": "llama3-70b", "cluster": {"node":
    "dgx-h100", "nodes": 8}, "plan": {"tp": "8", "global_batch": 8}})"),
                            test::catalog());
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().path, "plan.tp");
  // Which group would grow?
  auto groups = scaling_sweep(Json::parse(R"({"model": "llama3-70b", "cluster": {"groups":
    [{"node": "dgx-h100", "nodes": 4}]}, "plan": {"tp": 8, "global_batch": 8}})"),
                              test::catalog());
  ASSERT_FALSE(groups.ok());
  EXPECT_EQ(groups.error().code, ErrorCode::unsupported);
  ScalingOptions zero;
  zero.nodes = {0};
  auto none = scaling_sweep(Json::parse(kDoc), test::catalog(), zero);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::out_of_range);
}

}  // namespace
}  // namespace stepcast
