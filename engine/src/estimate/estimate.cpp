// One estimate, in the order of its steps (estimate/step.h): where each pipeline runs, what each
// stage costs, the schedule, the tail after the last backward, then the breakdown, the timeline
// and the summary.
#include "stepcast/estimate.h"

#include <algorithm>

#include "estimate/step.h"
#include "stepcast/limits.h"

namespace stepcast {

namespace {

// DualPipe runs as DualPipeV on half the ranks (schedule/dualpipe.cpp); the report keeps the
// user's plan and counts per replica, and its stages are the first half's (the second half
// mirrors them).
Report estimate_dualpipe(const Scenario& sc, const EstimateOptions& options) {
  Scenario half = sc;
  half.plan = plan_as_run(sc.plan);
  EstimateOptions inner = options;
  inner.fit_fixes = nullptr;  // fixes change the user's plan, below
  Report r = estimate(half, inner);
  r.plan = sc.plan;
  r.micro_batches = sc.plan.micro_batches();
  if (options.fit_fixes && !r.fits) r.fit_fixes = options.fit_fixes(sc, r);
  return r;
}

// Steps 2-4 on the replica sets of step 1 (the caller's: the runs point into their layouts):
// their pipelines and the tail, and the iteration's time.
struct Stepped {
  std::vector<detail::PipelineRun> runs;
  size_t critical = 0;
  detail::Tail end;
  double iteration_time_s = 0;
};
// `memory`: as estimate_figures takes it.
Stepped step_through(const Scenario& sc, const std::vector<detail::ReplicaSet>& sets,
                     const EstimateOptions& options,
                     std::span<const std::vector<MemoryBreakdown>> memory = {}) {
  using namespace detail;
  const Plan& p = sc.plan;
  Stepped out;
  const bool mixed_stages = [&] {
    for (const auto& s : p.stages)
      if (s.group != p.stages.front().group || s.layers != p.stages.front().layers) return true;
    return false;
  }();

  // 2-3. Stage costs and each set's pipeline schedule; the slowest set is the critical path.
  // The timeline's events are only simulated when they fit in it (a longer one is truncated
  // anyway), and the simulation of all sets together within the block budget (limits.h).
  uint64_t blocks = 0;
  for (const auto& set : sets)
    blocks = std::min<uint64_t>(blocks + schedule_blocks(plan_for(p, set.micro_batches)),
                                uint64_t{1} << 62);
  const bool want_events = options.timeline && blocks <= options.max_timeline_events;
  uint64_t block_budget = kMaxSimulatedBlocks;
  std::vector<PipelineRun>& runs = out.runs;
  runs.reserve(sets.size());
  for (size_t k = 0; k < sets.size(); ++k)
    runs.push_back(run_pipeline(sc, plan_for(p, sets[k].micro_batches), sets[k].layout,
                                mixed_stages || options.simulate, options.closed_form,
                                want_events, block_budget,
                                k < memory.size() ? std::span<const MemoryBreakdown>(memory[k])
                                                  : std::span<const MemoryBreakdown>()));
  size_t& critical = out.critical;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].pipe_s + runs[i].fill_s > runs[critical].pipe_s + runs[critical].fill_s)
      critical = i;
  const PipelineRun& run = runs[critical];

  // 4. The tail: gradient sync, parameter gather, small all-reduces, optimizer.
  out.end = tail(sc, runs, critical);
  out.iteration_time_s = run.pipe_s + run.fill_s + out.end.total();
  return out;
}

}  // namespace

Report estimate(const Scenario& sc, const EstimateOptions& options) {
  using namespace detail;
  const Plan& p = sc.plan;
  if (p.effective_schedule() == PipelineSchedule::dualpipe && p.pp > 1)
    return estimate_dualpipe(sc, options);

  // 1. Layout: the replica sets and where their stages run.
  const std::vector<ReplicaSet> sets = replica_sets(sc);
  Stepped stepped = step_through(sc, sets, options);
  std::vector<PipelineRun>& runs = stepped.runs;
  const size_t critical = stepped.critical;
  const PipelineRun& run = runs[critical];
  const Tail& end = stepped.end;

  Report r;
  r.plan = p;
  r.micro_batches = run.plan.micro_batches();
  r.bottleneck_stage = run.bottleneck;
  r.iteration_time_s = stepped.iteration_time_s;

  // 5-7. Breakdown of the critical path, timeline, summary.
  r.breakdown = breakdown(run, end);
  add_timeline(r, runs, critical, end, options);
  summarise(r, sc, sets, runs);
  // The critical set's stage reports, moved: nothing reads the runs after this.
  r.stages.reserve(runs[critical].stages.size());
  for (auto& s : runs[critical].stages) {
    r.stages.push_back(std::move(s.report));
    if (s.census_of >= 0)  // the earlier stage's census, shared until now (StageCost::census_of)
      r.stages.back().communication = r.stages[static_cast<size_t>(s.census_of)].communication;
  }
  if (options.fit_fixes && !r.fits) r.fit_fixes = options.fit_fixes(sc, r);
  if (sc.fit) {
    r.calibration = sc.fit;
    r.warnings.insert(r.warnings.end(), sc.fit->warnings.begin(), sc.fit->warnings.end());
  }
  return r;
}

namespace detail {

SearchFigures estimate_figures(const Scenario& sc, const EstimateOptions& options,
                               std::span<const std::vector<MemoryBreakdown>> memory,
                               const std::vector<ReplicaSet>* sets) {
  // DualPipe runs as DualPipeV on half the ranks, as estimate_dualpipe says.
  if (sc.plan.effective_schedule() == PipelineSchedule::dualpipe && sc.plan.pp > 1) {
    Scenario half = sc;
    half.plan = plan_as_run(sc.plan);
    return estimate_figures(half, options, memory, sets);
  }
  std::vector<ReplicaSet> own;
  if (!sets) {
    own = replica_sets(sc);
    sets = &own;
  }
  const Stepped stepped = step_through(sc, *sets, options, memory);
  SearchFigures f;
  f.iteration_time_s = stepped.iteration_time_s;
  const Throughput rate = throughput(sc, f.iteration_time_s, mean_peak_tflops(sc));
  f.mfu = rate.mfu;
  f.tokens_per_s = rate.tokens_per_s;
  // As summarise finds them: every stage of every set fits; the critical set's stages.
  for (const PipelineRun& run : stepped.runs)
    for (const StageCost& s : run.stages) f.fits = f.fits && s.report.memory.fits();
  const std::vector<StageCost>& stages = stepped.runs[stepped.critical].stages;
  for (const StageCost& s : stages) f.peak_memory_bytes = std::max(f.peak_memory_bytes, s.report.memory.total);
  if (!stages.empty()) {
    f.stage_layers = {stages.front().report.layers,
                      stages.size() > 2 ? stages[1].report.layers : stages.front().report.layers,
                      stages.back().report.layers};
  }
  return f;
}

}  // namespace detail

}  // namespace stepcast
