// How many GPUs for a deadline (deadline.h): each point is the plan search's fastest plan on that
// many nodes, the days and GPU-hours follow from its tokens per second, the sweep starts where
// the GPUs' peak allows and the cheapest point meets the deadline; bad requests are errors.
#include <gtest/gtest.h>

#include <cmath>

#include "stepcast/deadline.h"
#include "stepcast/model.h"
#include "stepcast/rule_ids.h"
#include "stepcast/scaling.h"
#include "test_util.h"

namespace stepcast {
namespace {

// Llama 3 8B on DGX H100 nodes, global batch 256 x 4,096 tokens.
const char* kDoc = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
  "plan": {"tp": 1, "dp": 8, "global_batch": 256}, "seq_len": 4096})";

std::string on_nodes(int nodes) {
  return fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node": "dgx-h100", "nodes": {}}},
    "plan": {{"tp": 1, "global_batch": 256}}, "seq_len": 4096}})",
                     nodes);
}

DeadlineOptions options(double tokens, double days, std::vector<int> nodes = {}) {
  DeadlineOptions o;
  o.tokens = tokens;
  o.days = days;
  o.nodes = std::move(nodes);
  return o;
}

TEST(Deadline, EachPointIsTheSearchsFastestPlan) {
  auto r = deadline_plan(Json::parse(kDoc), test::catalog(), options(100e9, 7, {4, 2}));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->points.size(), 2u);
  EXPECT_EQ(r->points[0].nodes, 2);  // ascending
  for (const DeadlinePoint& p : r->points) {
    SCOPED_TRACE(p.nodes);
    ASSERT_FALSE(p.error) << p.error->message;
    ASSERT_TRUE(p.best);
    auto scenario = read_scenario(Json::parse(on_nodes(p.nodes)), test::catalog());
    ASSERT_TRUE(scenario.ok());
    SearchOptions one;
    one.top = 1;
    auto searched = search_plans(*scenario, one);
    ASSERT_TRUE(searched.ok());
    EXPECT_EQ(p.best->iteration_time_s, searched->best.front().iteration_time_s);
    EXPECT_EQ(p.gpus, 8 * p.nodes);
    // 256 x 4,096 tokens an iteration: days = tokens / (tokens per iteration / time) / 86,400.
    const double days = 100e9 / (256.0 * 4096 / p.best->iteration_time_s) / 86400;
    EXPECT_NEAR(p.train_days, days, 1e-9 * days);
    EXPECT_NEAR(p.gpu_hours, 8.0 * p.nodes * days * 24, 1e-9 * p.gpu_hours);
    EXPECT_EQ(p.meets, p.train_days <= 7);
  }
}

// The default sweep: powers of two from the fewest nodes the peak allows, to four times the
// first that meets the deadline; the cheapest meets it, and no point that costs less does.
TEST(Deadline, CheapestOfThePowersOfTwoThatMeetsIt) {
  auto r = deadline_plan(Json::parse(kDoc), test::catalog(), options(1e12, 10));
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The bound by hand: Llama 3 8B's 6 N = 6 x 8.03e9 FLOPs a token plus attention (a few %
  // more), 1e12 tokens, the H100's 989.4 dense BF16 TFLOP/s (NVIDIA H100 datasheet, with
  // sparsity halved), 10 days: 1e12 x 4.82e10 / (989.4e12 x 864,000) = 56.4 GPUs or more,
  // 8 nodes of 8.
  const Scenario sc = test::scenario(kDoc);
  const double flops = 1e12 / 4096 * model_flops_per_sample(sc.model, 4096);
  EXPECT_GT(flops, 1e12 * 6 * 8.03e9);
  EXPECT_LT(flops, 1e12 * 6 * 8.03e9 * 1.15);
  const double peak_per_node = 8 * 989.4e12 * 10 * 86400;
  EXPECT_EQ(r->fewest_nodes_at_peak, static_cast<int>(std::ceil(flops / peak_per_node)));
  EXPECT_EQ(r->fewest_nodes_at_peak, 8);
  ASSERT_FALSE(r->points.empty());
  EXPECT_EQ(r->points.front().nodes, 8);
  std::optional<int> first;
  for (const DeadlinePoint& p : r->points) {
    EXPECT_EQ(p.nodes & (p.nodes - 1), 0) << p.nodes;  // a power of two
    if (!first && p.meets) first = p.nodes;
  }
  ASSERT_TRUE(first);
  EXPECT_EQ(r->points.back().nodes, 4 * *first);
  ASSERT_TRUE(r->cheapest);
  const DeadlinePoint& cheapest = r->points[*r->cheapest];
  EXPECT_TRUE(cheapest.meets);
  EXPECT_LE(cheapest.train_days, 10);
  for (const DeadlinePoint& p : r->points)
    if (p.meets) EXPECT_GE(p.gpu_hours, cheapest.gpu_hours) << p.nodes;
}

TEST(Deadline, NothingMeetsAnImpossibleDeadline) {
  // 1e12 tokens in 15 minutes: past 4,096 nodes even at the peak; the one count tried misses.
  auto r = deadline_plan(Json::parse(kDoc), test::catalog(), options(1e12, 0.01));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->fewest_nodes_at_peak, kScalingMaxNodes);
  EXPECT_FALSE(r->cheapest);
  for (const DeadlinePoint& p : r->points) EXPECT_FALSE(p.meets);
  const Json j = to_json(*r);
  EXPECT_TRUE(j["cheapest"].is_null());
}

TEST(Deadline, BadRequestsAreErrors) {
  const Json doc = Json::parse(kDoc);
  using Bad = std::tuple<double, double, const char*>;
  for (const auto& [tokens, days, path] :
       {Bad{0.0, 7.0, "tokens"}, Bad{1e12, -1.0, "days"}, Bad{NAN, 7.0, "tokens"},
        Bad{1e12, INFINITY, "days"}}) {
    auto r = deadline_plan(doc, test::catalog(), options(tokens, days));
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_EQ(r.error().code, ErrorCode::out_of_range);
    EXPECT_EQ(r.error().path, path);
  }
  auto zero = deadline_plan(doc, test::catalog(), options(1e12, 7, {0}));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().path, "nodes");
  auto many = deadline_plan(doc, test::catalog(), options(1e12, 7, std::vector<int>(65, 1)));
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().rule, Rule::max_scaling_points);
  auto groups = deadline_plan(Json::parse(R"({"model": "llama3-8b", "cluster": {"groups":
    [{"node": "dgx-h100", "nodes": 4}]}, "plan": {"global_batch": 64}})"),
                              test::catalog(), options(1e12, 7));
  ASSERT_FALSE(groups.ok());
  EXPECT_EQ(groups.error().code, ErrorCode::unsupported);
  auto typo = deadline_plan(Json::parse(R"({"model": "llama3-8b", "cluster": {"node":
    "dgx-h100", "nodes": 1}, "plan": {"tp": "8", "global_batch": 8}})"),
                            test::catalog(), options(1e12, 7));
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().path, "plan.tp");
}

}  // namespace
}  // namespace stepcast
