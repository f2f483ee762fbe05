// The figures of issue 12's table, natively: one estimate alone, with its JSON report, from
// text to report, one `estimate --batch` line, an interleaved plan, and the plan search (plans
// per second). Figures only: nothing here passes or fails on time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>

#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/pipeline.h"
#include "stepcast/search.h"

namespace {

const char* kScenario = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "vpp": 1, "micro_batch": 1, "global_batch": 512,
           "sequence_parallel": true, "recompute": "selective", "distributed_optimizer": true,
           "precision": "bf16"}, "seq_len": 4096})";

// The same model and cluster, interleaved: 4 stages of 5 virtual chunks each.
const char* kInterleaved = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "vpp": 5, "micro_batch": 1, "global_batch": 512,
           "sequence_parallel": true, "recompute": "selective", "distributed_optimizer": true,
           "precision": "bf16"}, "seq_len": 4096})";

stepcast::Scenario parsed(const char* text) {
  return *stepcast::parse_scenario(text, stepcast::builtin_catalog());
}

// What a user receives: the checked report as one line of JSON, as --batch and the bindings
// write it (full, or --report summary).
std::string delivered(const stepcast::Report& report,
                      stepcast::ReportKind kind = stepcast::ReportKind::full) {
  auto text = stepcast::report_text(report, -1, kind);
  return text ? std::move(text).value() : std::string();
}

void BM_Estimate(benchmark::State& state) {
  const auto scenario = parsed(kScenario);
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::estimate(scenario));
}
BENCHMARK(BM_Estimate)->Unit(benchmark::kMicrosecond);

// Argument 0: the full report; 1: --report summary.
stepcast::ReportKind kind_of(const benchmark::State& state) {
  return state.range(0) ? stepcast::ReportKind::summary : stepcast::ReportKind::full;
}

void BM_EstimateReport(benchmark::State& state) {
  const auto scenario = parsed(kScenario);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = delivered(stepcast::estimate(scenario), kind_of(state));
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["report_bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_EstimateReport)->ArgName("summary")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// The report alone, from an estimate made once: what writing the JSON costs.
void BM_Report(benchmark::State& state) {
  const auto report = stepcast::estimate(parsed(kScenario));
  for (auto _ : state) {
    const std::string text = delivered(report, kind_of(state));
    benchmark::DoNotOptimize(text.data());
  }
}
BENCHMARK(BM_Report)->ArgName("summary")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_ParseEstimateReport(benchmark::State& state) {
  for (auto _ : state) {
    const std::string text = delivered(stepcast::estimate(parsed(kScenario)), kind_of(state));
    benchmark::DoNotOptimize(text.data());
  }
}
BENCHMARK(BM_ParseEstimateReport)->ArgName("summary")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// One line of `stepcast estimate --batch`: parse the line, estimate, report, write it out as
// the command does (lines gathered into 64 KB writes).
void BM_BatchLine(benchmark::State& state) {
  std::FILE* sink = std::fopen("/dev/null", "w");
  constexpr size_t kChunk = 64 * 1024;
  std::string out;
  out.reserve(2 * kChunk);
  for (auto _ : state) {
    auto scenario = stepcast::parse_scenario(kScenario, stepcast::builtin_catalog());
    out += delivered(stepcast::estimate(*scenario), kind_of(state));
    out += '\n';
    if (out.size() >= kChunk) {
      std::fwrite(out.data(), 1, out.size(), sink);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), sink);
  std::fclose(sink);
}
BENCHMARK(BM_BatchLine)->ArgName("summary")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Argument 0: as estimate() does (the event simulation); 1: the closed form (as search ranks).
void BM_EstimateInterleaved(benchmark::State& state) {
  const auto scenario = parsed(kInterleaved);
  stepcast::EstimateOptions options;
  options.closed_form = state.range(0) != 0;
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::estimate(scenario, options));
}
BENCHMARK(BM_EstimateInterleaved)->ArgName("closed_form")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Issue 39's table: GPT-3 175B on DGX A100 with seq 2,048, micro-batch 1. Argument 0: 256 GPUs,
// TP 8 x PP 8, 1F1B (global batch 1,536: 384 micro-batches); 1: 1,024 GPUs, TP 8 x PP 8 x VPP 2,
// the page's example (96 micro-batches, 3,072 simulated blocks); 2: 256 GPUs, TP 8 x PP 16 x
// VPP 2 (global batch 512: 256 micro-batches, 16,384 blocks).
std::string gpt3(int config) {
  const int nodes = config == 1 ? 128 : 32, pp = config == 2 ? 16 : 8, vpp = config == 0 ? 1 : 2;
  const int gbs = config == 2 ? 512 : 1536;
  return "{\"model\": \"gpt3-175b\", \"cluster\": {\"node\": \"dgx-a100\", \"nodes\": " +
         std::to_string(nodes) + "}, \"plan\": {\"tp\": 8, \"pp\": " + std::to_string(pp) +
         ", \"vpp\": " + std::to_string(vpp) + ", \"micro_batch\": 1, \"global_batch\": " +
         std::to_string(gbs) +
         ", \"sequence_parallel\": true, \"recompute\": \"selective\", "
         "\"distributed_optimizer\": true}, \"seq_len\": 2048}";
}

void BM_EstimateGpt3(benchmark::State& state) {
  const auto scenario = parsed(gpt3(static_cast<int>(state.range(0))).c_str());
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::estimate(scenario));
}
BENCHMARK(BM_EstimateGpt3)->ArgName("config")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// The same, as one summary line of `stepcast estimate --batch`: parse, estimate, summary report.
void BM_BatchLineGpt3(benchmark::State& state) {
  const std::string line = gpt3(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto scenario = stepcast::parse_scenario(line, stepcast::builtin_catalog());
    const std::string text = delivered(stepcast::estimate(*scenario), stepcast::ReportKind::summary);
    benchmark::DoNotOptimize(text.data());
  }
}
BENCHMARK(BM_BatchLineGpt3)->ArgName("config")->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

// A summary line's two other parts, apart: the line parsed into a scenario, and the summary
// report written from an estimate (where a batch line's time goes beside the estimate's).
void BM_ParseGpt3(benchmark::State& state) {
  const std::string line = gpt3(static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(stepcast::parse_scenario(line, stepcast::builtin_catalog()));
}
BENCHMARK(BM_ParseGpt3)->ArgName("config")->Arg(0)->Unit(benchmark::kMicrosecond);

void BM_SummaryGpt3(benchmark::State& state) {
  const auto report = stepcast::estimate(parsed(gpt3(static_cast<int>(state.range(0))).c_str()));
  for (auto _ : state) {
    const std::string text = delivered(report, stepcast::ReportKind::summary);
    benchmark::DoNotOptimize(text.data());
  }
}
BENCHMARK(BM_SummaryGpt3)->ArgName("config")->Arg(0)->Unit(benchmark::kMicrosecond);

// The schedule simulation at scale: 64 stages, 512 micro-batches.
void BM_SimulatePipeline64x512(benchmark::State& state) {
  const std::vector<double> fwd(64, 1.0), bwd(64, 2.0);
  for (auto _ : state) {
    double makespan = 0;
    benchmark::DoNotOptimize(stepcast::simulate_pipeline(fwd, bwd, 512, 1, 0.01, true, &makespan));
  }
}
BENCHMARK(BM_SimulatePipeline64x512)->Unit(benchmark::kMillisecond);

// A plan search: `plans` is how many it estimated (and the rules admitted), `plans_per_s` the
// rate.
void search_benchmark(benchmark::State& state, const stepcast::Scenario& scenario) {
  int64_t plans = 0;
  for (auto _ : state) {
    auto result = stepcast::search_plans(scenario);
    plans = result ? result->evaluated : 0;
    benchmark::DoNotOptimize(result.ok());
  }
  state.counters["plans"] = static_cast<double>(plans);
  state.counters["plans_per_s"] = benchmark::Counter(
      static_cast<double>(plans) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
// Every plan 64 H100s admit for Llama 3 70B.
void BM_SearchPlans(benchmark::State& state) { search_benchmark(state, parsed(kScenario)); }
BENCHMARK(BM_SearchPlans)->Unit(benchmark::kMillisecond);

// The largest space the page meets: Qwen3-235B-A22B on 1,024 H100s (128 DGX nodes), EP, expert
// TP and the dispatcher varied too, its 94 layers split with the embedding and the loss counted.
void BM_SearchPlansMoe(benchmark::State& state) {
  search_benchmark(state, parsed(R"({"model": "qwen3-235b-a22b", "seq_len": 4096,
      "cluster": {"node": "dgx-h100", "nodes": 128},
      "plan": {"tp": 4, "pp": 2, "ep": 32, "micro_batch": 1, "global_batch": 2048}})"));
}
BENCHMARK(BM_SearchPlansMoe)->Unit(benchmark::kMillisecond);

// The presets compiled in, parsed into the catalog: what the first estimate of a process (and the
// page's first presets()) pays once.
void BM_LoadCatalog(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::load_catalog(stepcast::builtin_preset_files()));
}
BENCHMARK(BM_LoadCatalog)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
