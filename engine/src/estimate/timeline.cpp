// Step 6 of an estimate: the iteration as bars, stages as rows. The simulated schedule of every
// replica set (shifted to end with the pipeline time where the closed form is the reference),
// then each stage's gradient sync and optimizer step.
#include <algorithm>

#include "estimate/step.h"

namespace stepcast::detail {

namespace {

TimelineKind kind_of(PipelineEvent::Kind k) {
  switch (k) {
    case PipelineEvent::Kind::forward: return TimelineKind::forward;
    case PipelineEvent::Kind::backward: return TimelineKind::backward;
    case PipelineEvent::Kind::send: return TimelineKind::send;
    case PipelineEvent::Kind::input_grad: return TimelineKind::input_grad;
    case PipelineEvent::Kind::weight_grad: return TimelineKind::weight_grad;
  }
  return TimelineKind::forward;
}

}  // namespace

void add_timeline(Report& r, const std::vector<PipelineRun>& runs, size_t critical,
                  const Tail& tail, const EstimateOptions& options) {
  if (!options.timeline) return;
  const PipelineRun& run = runs[critical];
  const int pp = run.plan.pp;
  size_t total = 0;
  for (const auto& x : runs) total += x.events.size();
  if ((run.events.empty() && run.plan.micro_batches() > 0) ||
      total > options.max_timeline_events) {
    r.timeline_truncated = true;
    return;
  }
  for (size_t set = 0; set < runs.size(); ++set) {
    const PipelineRun& x = runs[set];
    double makespan = 0;
    for (const auto& ev : x.events) makespan = std::max(makespan, ev.end_s);
    const double scale = makespan > 0 ? (x.pipe_s + x.fill_s) / makespan : 1;
    std::vector<double> stage_end(pp, 0);
    for (const auto& ev : x.events) {
      r.timeline.push_back({kind_of(ev.kind), ev.stage, ev.chunk, ev.micro_batch,
                            ev.start_s * scale, ev.end_s * scale, static_cast<int>(set),
                            x.layout->groups[ev.stage]});
      stage_end[ev.stage] = std::max(stage_end[ev.stage], ev.end_s * scale);
    }
    if (set != critical) continue;
    double sync_end = run.pipe_s + run.fill_s;
    for (int i = 0; i < pp; ++i) {
      // After the other sets' micro-batches' collectives, where the critical set takes part in
      // more of them than it runs (Tail::lockstep_s).
      const double sync_start = stage_end[i] + tail.lockstep_s;
      if (tail.stage_sync_s[i] > 0)
        r.timeline.push_back({TimelineKind::dp_sync, i, 0, 0, sync_start,
                              sync_start + tail.stage_sync_s[i], static_cast<int>(set),
                              x.layout->groups[i]});
      sync_end = std::max(sync_end, sync_start + tail.stage_sync_s[i]);
    }
    sync_end = std::max(sync_end, run.pipe_s + run.fill_s + tail.lockstep_s + tail.dp_exposed_s);
    const double start = sync_end + tail.param_gather_s + tail.other_s;
    for (int i = 0; i < pp; ++i)
      r.timeline.push_back({TimelineKind::optimizer, i, 0, 0, start,
                            start + x.stages[i].report.optimizer_s, static_cast<int>(set),
                            x.layout->groups[i]});
  }
}

}  // namespace stepcast::detail
