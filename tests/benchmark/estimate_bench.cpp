// How long one estimate takes (goal: well under 20 us natively), and the parts around it.
#include <benchmark/benchmark.h>

#include "stepcast/estimate.h"
#include "stepcast/pipeline.h"
#include "stepcast/search.h"

namespace {

const char* kScenario = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "vpp": 1, "micro_batch": 1, "global_batch": 512,
           "sequence_parallel": true, "recompute": "selective", "distributed_optimizer": true,
           "precision": "bf16"}, "seq_len": 4096})";

void BM_Estimate(benchmark::State& state) {
  const auto scenario = stepcast::parse_scenario(kScenario, stepcast::builtin_catalog());
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::estimate(*scenario));
}
BENCHMARK(BM_Estimate)->Unit(benchmark::kMicrosecond);

void BM_ParseAndEstimate(benchmark::State& state) {
  for (auto _ : state) {
    auto scenario = stepcast::parse_scenario(kScenario, stepcast::builtin_catalog());
    benchmark::DoNotOptimize(stepcast::estimate(*scenario));
  }
}
BENCHMARK(BM_ParseAndEstimate)->Unit(benchmark::kMicrosecond);

void BM_EstimateToJson(benchmark::State& state) {
  const auto scenario = stepcast::parse_scenario(kScenario, stepcast::builtin_catalog());
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::to_json(stepcast::estimate(*scenario)).dump());
}
BENCHMARK(BM_EstimateToJson)->Unit(benchmark::kMicrosecond);

// The schedule simulation at scale: 64 stages, 512 micro-batches.
void BM_SimulatePipeline64x512(benchmark::State& state) {
  const std::vector<double> fwd(64, 1.0), bwd(64, 2.0);
  for (auto _ : state) {
    double makespan = 0;
    benchmark::DoNotOptimize(stepcast::simulate_pipeline(fwd, bwd, 512, 1, 0.01, true, &makespan));
  }
}
BENCHMARK(BM_SimulatePipeline64x512)->Unit(benchmark::kMillisecond);

// The plan search over every plan 64 H100s admit for Llama 3 70B (about 1,150 estimates).
void BM_SearchPlans(benchmark::State& state) {
  const auto scenario = stepcast::parse_scenario(kScenario, stepcast::builtin_catalog());
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::search_plans(*scenario).ok());
}
BENCHMARK(BM_SearchPlans)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
