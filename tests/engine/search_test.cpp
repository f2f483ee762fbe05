// The plan search: every plan it returns is valid, fits, is ranked, and is what estimate() says;
// the best is never slower than the plan the user started from when that plan is in the space.
#include <array>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

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

// The search reads each plan's figures without building its report (estimate_figures), and
// its memory from the check it already made: every plan it ranks, fixed or not, interleaved,
// DualPipe or MoE, holds exactly the figures its report gives.
TEST(Search, EveryPlanHoldsItsReportsFigures) {
  std::string dualpipe = kScenario;
  dualpipe.replace(dualpipe.find(R"("pp": 4,)"), 8, R"("pp": 4, "schedule": "dualpipe",)");
  const std::string moe = R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-b200", "nodes": 1},
      "plan": {"tp": 1, "pp": 1, "ep": 8, "micro_batch": 1, "global_batch": 256,
               "recompute": "selective", "distributed_optimizer": true}, "seq_len": 4096})";
  // Full recompute by Megatron's block method replays 2 layers of each model chunk: its share of
  // a layer's compute moves with PP and VPP (the search keeps each kind of layer's compute
  // across plans: estimate/step.h, LayerMemo).
  std::string block = kScenario;
  block.replace(block.find(R"("recompute": "selective",)"), 25,
                R"("recompute": "full", "recompute_method": "block", "recompute_num_layers": 2,)");
  int fixed = 0, interleaved = 0, dualpiped = 0, experts = 0, blocks = 0;
  for (const std::string& text : {std::string(kScenario), dualpipe, moe, block}) {
    const Scenario base = test::scenario(text);
    SearchOptions options;
    options.top = 100000;
    options.rank_exactly = true;  // every plan's figures exact: the report's
    const auto searched = search_plans(base, options);
    ASSERT_TRUE(searched.ok()) << text;
    ASSERT_GT(searched->best.size(), 50u) << text;
    for (const SearchCandidate& c : searched->best) {
      Scenario s = base;
      s.plan = c.plan;
      const Report r = estimate(s);
      ASSERT_FALSE(r.stages.empty());
      double peak = 0;
      for (const auto& st : r.stages) peak = std::max(peak, st.memory.total);
      EXPECT_EQ(c.iteration_time_s, r.iteration_time_s) << to_json(c.plan).dump();
      EXPECT_EQ(c.mfu, r.mfu);
      EXPECT_EQ(c.tokens_per_s, r.tokens_per_s);
      EXPECT_EQ(c.peak_memory_bytes, peak);
      EXPECT_EQ(c.fits, r.fits);
      EXPECT_TRUE(c.fits);
      EXPECT_EQ(c.stage_layers[0], r.stages.front().layers);
      EXPECT_EQ(c.stage_layers[1], r.stages[r.stages.size() > 2 ? 1 : 0].layers);
      EXPECT_EQ(c.stage_layers[2], r.stages.back().layers);
      fixed += !c.needs.empty();
      interleaved += c.plan.vpp > 1;
      dualpiped += c.plan.effective_schedule() == PipelineSchedule::dualpipe;
      experts += c.plan.ep > 1;
      blocks += c.plan.recompute == Recompute::full &&
                c.plan.recompute_method == RecomputeMethod::block;
    }
  }
  // Each path taken: plans given fixes to fit, interleaved and DualPipe pipelines, EP.
  EXPECT_GT(fixed, 0);
  EXPECT_GT(interleaved, 0);
  EXPECT_GT(dualpiped, 0);
  EXPECT_GT(experts, 0);
  EXPECT_GT(blocks, 0);
}

TEST(Search, OffersZbvWhereThePlanStatesIt) {
  // ZB-V likewise where the plan states it, and only on pipelines of two chunks a rank.
  SearchOptions options;
  options.top = 400;
  std::string stated = kScenario;
  stated.replace(stated.find(R"("pp": 4,)"), 8, R"("pp": 4, "vpp": 2, "schedule": "zbv",)");
  const auto varied = search_plans(test::scenario(stated), options);
  ASSERT_TRUE(varied.ok());
  int zbv = 0;
  for (const auto& c : varied->best)
    if (c.plan.effective_schedule() == PipelineSchedule::zbv) {
      ++zbv;
      EXPECT_TRUE(c.plan.pp > 1 && c.plan.vpp == 2);
    }
  EXPECT_GT(zbv, 0);
}

// The schedule where the pipeline admits more than one: 1F1B and zero bubble with PP > 1 and VPP
// 1, each a plan of its own that the rules accept; with VPP > 1 the interleaved one. Not varied,
// every plan runs what its VPP implies.
TEST(Search, VariesTheScheduleWhereThePipelineAdmitsIt) {
  // ZB-H1 only where the plan states it: no bundled training software runs it, so a plan on
  // Megatron-Core is never offered one.
  SearchOptions options;
  options.top = 400;
  const auto megatron = search_plans(test::scenario(kScenario), options);
  ASSERT_TRUE(megatron.ok());
  for (const auto& c : megatron->best)
    EXPECT_NE(c.plan.effective_schedule(), PipelineSchedule::zero_bubble);
  std::string stated = kScenario;
  stated.replace(stated.find(R"("pp": 4,)"), 8, R"("pp": 4, "schedule": "zero_bubble",)");
  const Scenario base = test::scenario(stated);
  const auto varied = search_plans(base, options);
  options.vary_schedule = false;
  const auto fixed = search_plans(base, options);
  ASSERT_TRUE(varied.ok() && fixed.ok());
  int zero_bubble = 0;
  for (const auto& c : varied->best) {
    const PipelineSchedule s = c.plan.effective_schedule();
    if (s == PipelineSchedule::zero_bubble) {
      ++zero_bubble;
      EXPECT_TRUE(c.plan.pp > 1 && c.plan.vpp == 1);
    }
    if (s == PipelineSchedule::interleaved) EXPECT_GT(c.plan.vpp, 1);
  }
  EXPECT_GT(zero_bubble, 0);
  for (const auto& c : fixed->best)
    EXPECT_NE(c.plan.effective_schedule(), PipelineSchedule::zero_bubble);
  // Each zero-bubble plan is a 1F1B plan with its drain filled: more plans, none slower.
  EXPECT_GT(varied->evaluated, fixed->evaluated);
  EXPECT_LE(varied->best.front().iteration_time_s, fixed->best.front().iteration_time_s);
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

// A search that makes plans fit: Llama 3 70B on one DGX H100 (8.8 B parameters a GPU at TP 8,
// 18 bytes each of weights, fp32 gradients and Adam's state before activations) fits in no plan
// as enumerated; every plan it returns fits only with the fixes it names, cheapest first, and is
// the plan stated with them by hand, estimated to the same time; a share of the optimizer a tenth
// smaller does not fit. Without the fixes the search finds nothing, and plans that fit as
// enumerated need nothing (Llama 3 8B there).
TEST(Search, MakesPlansFitWhereNoneDoes) {
  const std::string doc = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"tp": 8, "global_batch": 64}, "seq_len": 4096})";
  SearchOptions plain;
  plain.fit_fixes = false;
  const auto none = search_plans(test::scenario(doc), plain);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->best.empty());
  EXPECT_EQ(none->out_of_memory, none->evaluated);
  EXPECT_EQ(none->fixed, 0);
  const auto fixed = search_plans(test::scenario(doc));
  ASSERT_TRUE(fixed.ok());
  ASSERT_FALSE(fixed->best.empty());
  EXPECT_EQ(fixed->evaluated, none->evaluated);
  EXPECT_EQ(fixed->fixed + fixed->out_of_memory, fixed->evaluated);
  EXPECT_GT(fixed->fixed, 0);
  for (const SearchCandidate& c : fixed->best) {
    EXPECT_TRUE(c.fits);
    EXPECT_FALSE(c.needs.empty());
    EXPECT_TRUE(c.plan.optimizer_cpu_offload) << c.needs;  // bf16 moments alone are not enough
    EXPECT_NE(c.needs.find(fmt::format("plan.optimizer_offload_fraction={}",
                                       c.plan.optimizer_offload_fraction)),
              std::string::npos)
        << c.needs;
  }
  // The first, stated by hand: the same time; a tenth less of the optimizer does not fit.
  const SearchCandidate& top = fixed->best.front();
  Scenario stated = test::scenario(doc);
  stated.plan = top.plan;
  ASSERT_TRUE(check_scenario(stated));
  const Report r = estimate(stated);
  EXPECT_TRUE(r.fits);
  EXPECT_NEAR(r.iteration_time_s, top.iteration_time_s, 1e-9 * r.iteration_time_s);
  stated.plan.optimizer_offload_fraction -= 0.1;
  EXPECT_FALSE(estimate(stated).fits);
  const Json j = to_json(*fixed);
  EXPECT_EQ(j["best"][0]["needs"], top.needs);
  EXPECT_EQ(j["fixed"], fixed->fixed);
  // Plans that fit as enumerated need nothing and keep their times; fixed ones rank among them
  // by theirs (Llama 3 8B: micro-batches of 2 with bf16 moments and the attention's activations
  // offloaded beat the fastest plan that fits as it is).
  const std::string small = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64}, "seq_len": 4096})";
  const auto as_is = search_plans(test::scenario(small), plain);
  const auto with = search_plans(test::scenario(small));
  ASSERT_TRUE(as_is.ok() && with.ok());
  ASSERT_FALSE(as_is->best.empty());
  const SearchCandidate& fastest = as_is->best.front();
  const auto same = std::find_if(with->best.begin(), with->best.end(), [&](const auto& c) {
    return c.needs.empty() && c.iteration_time_s == fastest.iteration_time_s;
  });
  EXPECT_NE(same, with->best.end());
  EXPECT_LE(with->best.front().iteration_time_s, fastest.iteration_time_s);
  EXPECT_EQ(with->evaluated - with->out_of_memory,
            as_is->evaluated - as_is->out_of_memory + with->fixed);
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

// TP communication overlap is on in every plan with TP > 1 where the framework has it
// (Megatron-Core: Transformer Engine's userbuffers) and never where it has not (Megatron-
// DeepSpeed), from a plan without it.
TEST(Search, TurnsTensorParallelOverlapOnWhereTheFrameworkCan) {
  auto searched = [](const char* framework) {
    SearchOptions o;
    o.top = 200;
    return search_plans(test::scenario(fmt::format(R"({{"model": "llama3-70b", "seq_len": 4096,
        "cluster": {{"node": "dgx-h100", "nodes": 8}}, "plan": {{"tp": 8, "pp": 4,
        "global_batch": 512, "framework": "{}", "tp_comm_overlap": false}}}})", framework)), o);
  };
  const auto core = searched("megatron-core"), ds = searched("megatron-deepspeed");
  ASSERT_TRUE(core.ok() && ds.ok());
  int with_tp = 0;
  for (const auto& c : core->best) {
    EXPECT_EQ(c.plan.tp_comm_overlap, c.plan.tp > 1) << to_json(c.plan).dump();
    with_tp += c.plan.tp > 1;
  }
  EXPECT_GT(with_tp, 0);
  for (const auto& c : ds->best) EXPECT_FALSE(c.plan.tp_comm_overlap);
  EXPECT_LT(core->best.front().iteration_time_s, core->baseline_s);
}

// The distributed optimizer is the software's: Megatron-LM 2.x has none (nor context
// parallelism), and a Megatron-Core plan that turns it off keeps it off in every plan the search
// returns, while Megatron-Core's own default keeps it on.
// The `top` best plans for GPT-3 1.3B on one DGX A100 at a global batch of 64, the plan's other
// keys `plan_flags` (", key: value" pairs).
std::vector<SearchCandidate> best_gpt3_on_a100(const char* plan_flags, int top) {
  SearchOptions o;
  o.top = top;
  auto r = search_plans(test::scenario(fmt::format(R"({{"model": "gpt3-1.3b", "seq_len": 2048,
      "cluster": {{"node": "dgx-a100", "nodes": 1}}, "plan": {{"global_batch": 64{}}}}})",
                                                   plan_flags)),
                        o);
  EXPECT_TRUE(r.ok());
  return r.ok() ? r->best : std::vector<SearchCandidate>{};
}

TEST(Search, KeepsTheScenariosOptimizerSharding) {
  auto best = [](const char* plan_flags) { return best_gpt3_on_a100(plan_flags, 50); };
  for (const char* flags : {R"(, "framework": "megatron-lm-2021")",
                            R"(, "distributed_optimizer": false)"}) {
    const auto plans = best(flags);
    ASSERT_FALSE(plans.empty()) << flags;
    int data_parallel = 0;
    for (const auto& c : plans) {
      EXPECT_FALSE(c.plan.distributed_optimizer) << flags << " " << to_json(c.plan).dump();
      EXPECT_EQ(c.plan.effective_zero_stage(), 0) << flags;
      if (c.plan.framework == "megatron-lm-2021") EXPECT_EQ(c.plan.cp, 1);  // none in 2.x
      data_parallel += c.plan.dp > 1;
    }
    EXPECT_GT(data_parallel, 0) << flags;  // plans where it would have sharded something
  }
  const auto core = best("");
  ASSERT_FALSE(core.empty());
  for (const auto& c : core) EXPECT_TRUE(c.plan.distributed_optimizer);
}

// The gradient-reduce overlap is a plan choice where there is a data-parallel gradient reduce
// (issue 38): GPT-3 1.3B on one DGX A100 (8 GPUs) with the distributed optimizer, the overlap off
// in the scenario. Every plan with DP > 1 is tried off and on, DP 1 keeps the scenario's off;
// with the parameter gather overlapped (which needs it) every plan keeps it on.
TEST(Search, VariesTheGradReduceOverlapWhereThereIsDataParallelism) {
  auto plans = [](const char* flags) { return best_gpt3_on_a100(flags, 2000); };
  const auto off = plans(R"(, "overlap_grad_reduce": false, "overlap_param_gather": false)");
  ASSERT_FALSE(off.empty());
  int on_dp = 0, off_dp = 0;
  std::map<std::string, std::set<bool>> both;  // each shape's settings of the flag
  for (const auto& c : off) {
    if (c.plan.dp == 1) {
      EXPECT_FALSE(c.plan.overlap_grad_reduce) << to_json(c.plan).dump();
      continue;
    }
    (c.plan.overlap_grad_reduce ? on_dp : off_dp) += 1;
    Json shape = to_json(c.plan);
    shape.erase("overlap_grad_reduce");
    both[shape.dump()].insert(c.plan.overlap_grad_reduce);
  }
  EXPECT_GT(on_dp, 0);
  EXPECT_EQ(on_dp, off_dp);  // every shape with DP > 1 once each way
  for (const auto& [shape, settings] : both) EXPECT_EQ(settings.size(), 2u) << shape;
  for (const auto& c : plans(R"(, "overlap_grad_reduce": true, "overlap_param_gather": true)"))
    EXPECT_TRUE(c.plan.overlap_grad_reduce) << to_json(c.plan).dump();
}

// The optimizer is the user's, not a plan choice: a Muon search returns Muon plans, each with
// the Newton-Schulz time estimate() gives it.
TEST(Search, KeepsTheScenariosOptimizer) {
  SearchOptions o;
  o.top = 20;
  const Scenario s = test::scenario(R"({"model": "gpt3-1.3b", "seq_len": 2048,
      "cluster": {"node": "dgx-a100", "nodes": 1},
      "plan": {"global_batch": 64, "optimizer": "muon"}})");
  auto r = search_plans(s, o);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->best.empty());
  for (const auto& c : r->best) {
    EXPECT_EQ(c.plan.optimizer, Optimizer::muon) << to_json(c.plan).dump();
    Scenario again = s;
    again.plan = c.plan;
    EXPECT_GT(estimate(again).stages[0].newton_schulz_s, 0);
  }
}

// Context parallelism is searched only where the software has it: a Megatron-LM 2.x search
// weighs the plans a Megatron-Core one does on a sequence no CP size splits (2,050 tokens: CP c
// needs 2c to divide them, and 4, 8 and 16 do not), none refused for CP. (The parameter gather
// is not overlapped in either, so both try the gradient-reduce overlap on and off with DP > 1.)
TEST(Search, VariesContextParallelismOnlyWhereTheSoftwareHasIt) {
  auto searched = [](const char* framework, int seq_len) {
    auto r = search_plans(test::scenario(fmt::format(R"({{"model": "gpt3-1.3b",
        "seq_len": {}, "cluster": {{"node": "dgx-a100", "nodes": 1}},
        "plan": {{"global_batch": 64, "framework": "{}", "overlap_param_gather": false}}}})",
                                                     seq_len, framework)));
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : SearchResult{};
  };
  const SearchResult old = searched("megatron-lm-2021", 2048);
  const SearchResult core_without_cp = searched("megatron-core", 2050);
  const SearchResult core = searched("megatron-core", 2048);
  EXPECT_GT(old.evaluated, 0);
  EXPECT_EQ(old.evaluated + old.rejected, core_without_cp.evaluated + core_without_cp.rejected);
  EXPECT_EQ(old.rejected, core_without_cp.rejected);
  EXPECT_GT(core.evaluated, core_without_cp.evaluated);  // CP 2, 4 and 8 searched there
}

// Layers no power of two divides are split as Megatron can split them (pipeline_layout.h), so the
// search reaches pipelines for DeepSeek-V3 (61 layers) and Llama 3.1 405B (126): small models of
// those depths on one DGX H100, every plan that fits returned.
TEST(Search, SplitsLayerCountsNoPowerOfTwoDivides) {
  struct Split {
    int pp, vpp;
    bool embedding, loss;
    int64_t first, last;
    std::array<int64_t, 3> layers;  // the candidate's stage_layers: first, each between, last
    auto operator<=>(const Split&) const = default;
  };
  auto splits = [](int layers_of) {
    SearchOptions o;
    o.top = 100000;
    const auto r = search_plans(test::scenario(fmt::format(R"({{"model": {{"name": "m",
        "layers": {}, "hidden": 1024, "heads": 16, "ffn_hidden": 4096, "vocab": 32000,
        "seq_len": 2048, "ffn_type": "swiglu", "position": "rope", "tied_embeddings": false}},
        "cluster": {{"node": "dgx-h100", "nodes": 1}}, "plan": {{"global_batch": 64}}}})",
                                                           layers_of)),
                                o);
    EXPECT_TRUE(r.ok());
    std::set<Split> out;
    for (const auto& c : r.ok() ? r->best : std::vector<SearchCandidate>{}) {
      const Plan& p = c.plan;
      if (p.pp > 1)
        out.insert({p.pp, p.vpp, p.embedding_in_split, p.loss_in_split, p.first_stage_layers,
                    p.last_stage_layers, c.stage_layers});
    }
    // The JSON lists every stage's layers: the first, those between, the last.
    if (r.ok() && !r->best.empty()) {
      const SearchCandidate& c = r->best.front();
      const Json layers = to_json(*r)["best"][0]["stage_layers"];
      EXPECT_EQ(layers.size(), static_cast<size_t>(c.plan.pp));
      int64_t sum = 0;
      for (size_t i = 0; i < layers.size(); ++i) {
        const size_t which = i == 0 ? 0 : i + 1 == layers.size() ? 2 : 1;
        EXPECT_EQ(layers[i].get<int64_t>(), c.stage_layers[which]);
        sum += layers[i].get<int64_t>();
      }
      EXPECT_EQ(sum, layers_of);
    }
    return out;
  };
  // 61 on 2 stages: with the loss counted, 62 = 2·31 (31 and 30 layers). On 4: 14, 16, 16, 15
  // (15, 15, 15, 16 would make an end the heaviest). On 8: 6, 8·6, 7. No split of an odd count
  // into chunks of 2 or 4.
  EXPECT_EQ(splits(61), (std::set<Split>{{2, 1, false, true, 0, 0, {31, 31, 30}},
                                         {4, 1, false, false, 14, 15, {14, 16, 15}},
                                         {8, 1, false, false, 6, 7, {6, 8, 7}}}));
  // 126 = 2·63 on 2 stages; 126 + 2 = 128 over 4 or 8 stages of 1, 2 or 4 chunks (VPP 4 on 2
  // stages: 8 chunks of 16; 126 on 2·2 chunks: 128 / 4).
  // Per stage: the first and last chunk each a layer short of the others (128 / 8 = 16 on 8
  // stages of one chunk: 15, 16·6, 15; of 4 chunks, 4 each: 3 + 4 + 4 + 4 = 15 on the first).
  EXPECT_EQ(splits(126), (std::set<Split>{{2, 1, false, false, 0, 0, {63, 63, 63}},
                                          {2, 2, true, true, 0, 0, {63, 63, 63}},
                                          {2, 4, true, true, 0, 0, {63, 63, 63}},
                                          {4, 1, true, true, 0, 0, {31, 32, 31}},
                                          {4, 2, true, true, 0, 0, {31, 32, 31}},
                                          {4, 4, true, true, 0, 0, {31, 32, 31}},
                                          {8, 1, true, true, 0, 0, {15, 16, 15}},
                                          {8, 2, true, true, 0, 0, {15, 16, 15}},
                                          {8, 4, true, true, 0, 0, {15, 16, 15}}}));
}

// Ranked by the closed form, the exact re-estimates of the leading interleaved plans share the
// block budget; with none left, a plan keeps its closed-form time (and the search still answers:
// the blocks are counted up front only when every plan is estimated exactly).
TEST(Search, ReEstimatesWithinTheBlockBudget) {
  const Scenario base = test::scenario(kScenario);
  SearchOptions o;
  o.top = 20;
  o.max_simulated_blocks = 0;
  const auto r = search_plans(base, o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EstimateOptions closed;
  closed.closed_form = true;
  int interleaved = 0;
  for (const auto& c : r->best) {
    Scenario s = base;
    s.plan = c.plan;
    EXPECT_DOUBLE_EQ(c.iteration_time_s, estimate(s, closed).iteration_time_s);
    interleaved += c.plan.vpp > 1 && c.plan.pp > 1;
  }
  EXPECT_GT(interleaved, 0);  // (else the budget would not have been touched)
  o.rank_exactly = true;  // every interleaved plan simulated: counted before, and refused
  const auto exact = search_plans(base, o);
  ASSERT_FALSE(exact.ok());
  EXPECT_EQ(exact.error().code, ErrorCode::budget_exceeded);
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

namespace stepcast {
namespace {

// Interleaved plans of a dense, a wide and an MoE model: the schedule's closed form against the
// event simulation, relative. The search ranks by the closed form within kClosedFormTolerance
// (search.h) of it; the sweep measures how far apart they are (printed) and asserts the bound
// on the plans that fit, the only ones a search times.
TEST(Search, ClosedFormWithinToleranceOfTheSimulationOnInterleavedPlans) {
  const char* bases[] = {
      R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8}, "seq_len": 4096,
          "plan": {"tp": 8, "pp": 4, "global_batch": 512}})",
      R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100", "nodes": 16}, "seq_len": 2048,
          "plan": {"tp": 8, "pp": 8, "global_batch": 1536}})",
      R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "nodes": 4}, "seq_len": 4096,
          "plan": {"tp": 2, "pp": 4, "ep": 4, "global_batch": 256, "sequence_parallel": true}})"};
  std::vector<double> fitting, all;
  for (const char* text : bases) {
    const Scenario base = test::scenario(text);
    for (int pp : {2, 4, 8})
      for (int vpp : {2, 4, 8})
        for (int mb : {1, 2, 4})
          for (int rc = 0; rc < 3; ++rc) {
            Scenario s = base;
            s.plan.pp = pp, s.plan.vpp = vpp, s.plan.micro_batch = mb;
            s.plan.dp = static_cast<int>(s.cluster.gpus() / (s.plan.tp * pp * s.plan.cp));
            s.plan.recompute = static_cast<Recompute>(rc);
            if (!check_scenario(s)) continue;
            EstimateOptions closed;
            closed.closed_form = true;
            const Report a = estimate(s, closed), b = estimate(s);
            const double diff = std::abs(a.iteration_time_s / b.iteration_time_s - 1);
            all.push_back(diff);
            if (b.fits) fitting.push_back(diff);
          }
  }
  ASSERT_GE(fitting.size(), 40u);
  std::sort(fitting.begin(), fitting.end());
  std::sort(all.begin(), all.end());
  std::cout << fmt::format("closed form vs simulation, {} interleaved plans that fit: median {:.2e}, "
                           "largest {:.2e}; all {} plans: largest {:.2e}\n",
                           fitting.size(), fitting[fitting.size() / 2], fitting.back(), all.size(),
                           all.back());
  EXPECT_LE(fitting.back(), kClosedFormTolerance);
  EXPECT_GT(fitting.back(), 0.0);  // they do differ: the search must re-estimate
}

// The ranked search (memory first, closed form, the leaders re-estimated exactly) returns what
// estimating every plan exactly returns: the same plans in the same order with the same values.
TEST(Search, RankingByTheClosedFormKeepsTheTopResults) {
  const char* scenarios[] = {
      kScenario,  // dense
      R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100", "nodes": 16}, "seq_len": 2048,
          "plan": {"tp": 8, "pp": 8, "vpp": 3, "global_batch": 512}})",  // interleaved-heavy
      R"({"model": "mixtral-8x7b", "cluster": {"node": "dgx-h100", "nodes": 4}, "seq_len": 4096,
          "plan": {"tp": 2, "pp": 4, "ep": 4, "global_batch": 256, "sequence_parallel": true}})",
      R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-b200", "nodes": 1}, "seq_len": 4096,
          "plan": {"ep": 8, "global_batch": 256}})"};
  for (const char* text : scenarios) {
    const Scenario base = test::scenario(text);
    SearchOptions ranked, exact;
    ranked.top = exact.top = 15;
    exact.rank_exactly = true;
    // Every interleaved and zero-bubble plan simulated: Mixtral's 21,744 plans run 18 million
    // blocks, past the default budget.
    exact.max_simulated_blocks = uint64_t{1} << 25;
    const auto a = search_plans(base, ranked), b = search_plans(base, exact);
    ASSERT_TRUE(a.ok() && b.ok()) << text << (a.ok() ? "" : a.error().message)
                                  << (b.ok() ? "" : b.error().message);
    EXPECT_EQ(a->evaluated, b->evaluated);
    EXPECT_EQ(a->rejected, b->rejected);
    EXPECT_EQ(a->out_of_memory, b->out_of_memory);
    EXPECT_EQ(a->baseline_s, b->baseline_s);
    ASSERT_EQ(a->best.size(), b->best.size()) << text;
    ASSERT_FALSE(a->best.empty()) << text;
    bool any_interleaved = false;
    for (size_t i = 0; i < a->best.size(); ++i) {
      const SearchCandidate &x = a->best[i], &y = b->best[i];
      EXPECT_EQ(to_json(x.plan), to_json(y.plan)) << text << " rank " << i;
      EXPECT_EQ(x.iteration_time_s, y.iteration_time_s) << text << " rank " << i;
      EXPECT_EQ(x.mfu, y.mfu);
      EXPECT_EQ(x.tokens_per_s, y.tokens_per_s);
      EXPECT_EQ(x.peak_memory_bytes, y.peak_memory_bytes);
      any_interleaved = any_interleaved || (x.plan.vpp > 1 && x.plan.pp > 1);
    }
    if (std::string(text).find("gpt3-175b") != std::string::npos)
      EXPECT_TRUE(any_interleaved) << "the interleaved-heavy case ranks interleaved plans";
  }
}

}  // namespace
}  // namespace stepcast

namespace stepcast {
namespace {

// A search slice by slice, merged, is the search of the whole: counts, plans, order, values.
TEST(Search, SlicesMergeIntoTheWholeSearch) {
  const char* scenarios[] = {
      kScenario,
      R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100", "nodes": 16}, "seq_len": 2048,
          "plan": {"tp": 8, "pp": 8, "vpp": 3, "global_batch": 512}})"};
  for (const char* text : scenarios) {
    const Scenario base = test::scenario(text);
    SearchOptions options;
    options.top = 12;
    const auto whole = search_plans(base, options);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(whole->space, whole->evaluated + whole->rejected);
    std::vector<SearchResult> parts;
    const int64_t size = whole->space / 3 + 1;  // three slices, the last one shorter
    for (int64_t first = 0; first < whole->space; first += size) {
      SearchOptions slice = options;
      slice.first_plan = first, slice.plan_count = size;
      auto part = search_plans(base, slice);
      ASSERT_TRUE(part.ok());
      EXPECT_LE(part->evaluated + part->rejected, size);
      parts.push_back(*part);
    }
    ASSERT_EQ(parts.size(), 3u);
    const SearchResult merged = merge_searches(parts, options.top);
    EXPECT_EQ(merged.evaluated, whole->evaluated);
    EXPECT_EQ(merged.rejected, whole->rejected);
    EXPECT_EQ(merged.out_of_memory, whole->out_of_memory);
    EXPECT_EQ(merged.baseline_s, whole->baseline_s);
    ASSERT_EQ(merged.best.size(), whole->best.size());
    for (size_t i = 0; i < merged.best.size(); ++i) {
      EXPECT_EQ(to_json(merged.best[i].plan), to_json(whole->best[i].plan)) << text << " " << i;
      EXPECT_EQ(merged.best[i].iteration_time_s, whole->best[i].iteration_time_s);
      EXPECT_EQ(merged.best[i].peak_memory_bytes, whole->best[i].peak_memory_bytes);
    }
    // A slice past the end holds nothing, and is not an error.
    SearchOptions beyond = options;
    beyond.first_plan = whole->space;
    const auto none = search_plans(base, beyond);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->evaluated + none->rejected, 0);
    EXPECT_TRUE(none->best.empty());
  }
}

}  // namespace
}  // namespace stepcast
