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
  const SearchResult r = search_plans(base, options);
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
  const SearchResult r = search_plans(test::scenario(R"({"model": "gpt3-175b",
      "cluster": {"node": "dgx-a100", "nodes": 1}, "plan": {"global_batch": 8}})"));
  EXPECT_TRUE(r.best.empty());
  EXPECT_EQ(r.out_of_memory, r.evaluated);
  EXPECT_GT(r.evaluated, 0);
}

}  // namespace
}  // namespace stepcast
