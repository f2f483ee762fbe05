// The plan search: every plan it returns is valid, fits, is ranked, and is what estimate() says;
// the best is never slower than the plan the user started from when that plan is in the space.
#include <gtest/gtest.h>

#include "stepcast/search.h"
#include "test_util.h"

namespace stepcast {
namespace {

const char* kScenario = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "micro_batch": 1, "global_batch": 512,
           "sequence_parallel": true, "recompute": "selective", "distributed_optimizer": true},
  "seq_len": 4096})";

TEST(Search, ReturnsValidFittingPlansFastestFirst) {
  const Scenario base = test::scenario(kScenario);
  SearchOptions options;
  options.top = 20;
  const auto searched = search_plans(base, options);
  ASSERT_TRUE(searched.ok());
  const SearchResult& r = *searched;
  EXPECT_FALSE(r.baseline_error.has_value());
  ASSERT_FALSE(r.best.empty());
  EXPECT_GT(r.evaluated, 500);
  EXPECT_LE(r.best.size(), 20u);
  for (size_t i = 0; i < r.best.size(); ++i) {
    Scenario s = base;
    s.plan = r.best[i].plan;
    EXPECT_TRUE(check_scenario(s));
    const Report again = estimate(s);
    EXPECT_DOUBLE_EQ(again.iteration_time_s, r.best[i].iteration_time_s);
    EXPECT_TRUE(again.fits);
    EXPECT_EQ(s.plan.tp * s.plan.pp * s.plan.cp * s.plan.dp, 64);
    if (i > 0) EXPECT_LE(r.best[i - 1].iteration_time_s, r.best[i].iteration_time_s);
  }
  // The user's plan (tp 8, pp 4, mb 1, selective, SP, distributed optimizer) is in the space.
  EXPECT_LE(r.best.front().iteration_time_s, r.baseline_s);
}

TEST(Search, NothingFitsIsAnAnswerToo) {
  // GPT-3 175B on one node: no plan holds it.
  const auto searched = search_plans(test::scenario(R"({"model": "gpt3-175b",
      "cluster": {"node": "dgx-a100", "nodes": 1}, "plan": {"global_batch": 8}})"));
  ASSERT_TRUE(searched.ok());
  const SearchResult& r = *searched;
  EXPECT_TRUE(r.best.empty());
  EXPECT_EQ(r.out_of_memory, r.evaluated);
  EXPECT_GT(r.evaluated, 0);
}

Scenario keys_only(const std::string& json) {
  auto s = read_scenario(Json::parse(json), builtin_catalog());
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : Scenario{};
}

TEST(Search, StartsFromAPlanThatBreaksARuleItVaries) {
  // TP 3 does not divide 64 heads: the search still searches, and says why the plan itself was
  // not estimated.
  const auto searched = search_plans(keys_only(R"({"model": "llama3-70b", "cluster": {"node":
      "dgx-h100", "nodes": 8}, "plan": {"tp": 3, "global_batch": 512}, "seq_len": 4096})"));
  ASSERT_TRUE(searched.ok()) << searched.error().message;
  ASSERT_TRUE(searched->baseline_error.has_value());
  EXPECT_EQ(searched->baseline_error->path, "plan.tp");
  EXPECT_EQ(searched->baseline_s, 0);
  EXPECT_FALSE(searched->best.empty());
}

TEST(Search, WhatItCannotSearchIsAnError) {
  const auto groups = search_plans(test::scenario(R"({"model": "llama3-8b", "seq_len": 4096,
      "cluster": {"groups": [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 1}]},
      "plan": {"tp": 8, "pp": 2, "global_batch": 64}})"));
  ASSERT_FALSE(groups.ok());
  EXPECT_EQ(groups.error().code, ErrorCode::unsupported);
  // bf16 on V100: no plan of any shape passes the rules; the plan's own error says why.
  const auto none = search_plans(keys_only(R"({"model": "gpt3-1.3b", "cluster": {"node":
      "dgx-1-v100", "nodes": 1}, "plan": {"global_batch": 8, "precision": "bf16"}})"));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().path, "plan.precision");
}

}  // namespace
}  // namespace stepcast
