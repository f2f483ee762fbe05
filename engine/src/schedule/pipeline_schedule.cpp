#include "stepcast/pipeline.h"

#include "schedule/runnable.h"
#include "schedule/schedules.h"

#include <algorithm>
#include <numeric>

namespace stepcast {

PipelineTime pipeline_time(const std::vector<double>& u, int64_t m, int v) {
  PipelineTime t;
  if (u.empty()) return t;
  const auto worst = std::max_element(u.begin(), u.end());
  t.bottleneck = static_cast<int>(worst - u.begin());
  const double sum = std::accumulate(u.begin(), u.end(), 0.0);
  t.steady_s = static_cast<double>(m) * *worst;
  t.bubble_s = (sum - *worst) / std::max(v, 1);
  t.total_s = t.steady_s + t.bubble_s;
  return t;
}

}  // namespace stepcast

namespace stepcast {

std::vector<PipelineEvent> simulate_pipeline(const std::vector<double>& fwd,
                                             const std::vector<double>& bwd, int64_t m, int v,
                                             double p2p_s, bool p2p_blocking,
                                             double* makespan_s) {
  return simulate_pipeline(fwd, bwd, m, v, std::vector<double>(fwd.size(), p2p_s), p2p_blocking,
                           makespan_s);
}

std::vector<PipelineEvent> simulate_pipeline(const std::vector<double>& fwd,
                                             const std::vector<double>& bwd, int64_t m, int v,
                                             const std::vector<double>& p2p,
                                             bool p2p_blocking, double* makespan_s) {
  // Every chunk of a stage takes 1/v of its time.
  const int p = static_cast<int>(fwd.size());
  std::vector<double> f, b;
  for (int c = 0; c < std::max(v, 1); ++c)
    for (int i = 0; i < p; ++i) {
      f.push_back(fwd[i] / std::max(v, 1));
      b.push_back(bwd[i] / std::max(v, 1));
    }
  return simulate_virtual_pipeline(f, b, p, m, v, p2p, p2p_blocking, makespan_s);
}

std::vector<PipelineEvent> simulate_virtual_pipeline(const std::vector<double>& fwd,
                                                     const std::vector<double>& bwd, int p,
                                                     int64_t m, int v,
                                                     const std::vector<double>& p2p,
                                                     bool p2p_blocking, double* makespan_s,
                                                     const Schedule* schedule,
                                                     const std::vector<double>& weight_grad_s,
                                                     const std::vector<double>& rank_start_s) {
  std::vector<PipelineEvent> events;
  if (p == 0 || m <= 0) {
    if (makespan_s) *makespan_s = 0;
    return events;
  }
  std::vector<double> f = fwd, b = bwd, w = weight_grad_s;
  schedule = detail::runnable(f, b, w, p, m, v, schedule);
  const ScheduleShape shape{p, v, m};
  const int virtual_stages = p * v;
  const auto message_s = [&](int k) { return detail::message_s(*schedule, shape, p2p, k); };
  // done[vs][mb] = time the block's output is available to the next virtual stage.
  std::vector<std::vector<double>> fwd_done(virtual_stages, std::vector<double>(m, -1));
  std::vector<std::vector<double>> bwd_done(virtual_stages, std::vector<double>(m, -1));
  std::vector<std::vector<ScheduleBlock>> order(p);
  std::vector<size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
  if (rank_start_s.size() == static_cast<size_t>(p)) free_at = rank_start_s;
  for (int i = 0; i < p; ++i) schedule->rank_order(shape, i, order[i]);
  events.reserve(static_cast<size_t>(2 * m * v * p));

  // Repeatedly advance any rank whose next block's input is ready; the schedule is deadlock-free
  // (Megatron's), so every sweep makes progress until all blocks are placed.
  size_t remaining = 0;
  for (const auto& o : order) remaining += o.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int i = 0; i < p; ++i) {
      while (next[i] < order[i].size()) {
        const ScheduleBlock& blk = order[i][next[i]];
        const int vs = schedule->virtual_stage(shape, i, blk.chunk);
        double ready = 0;  // a W's input is its own B's, earlier on this rank
        if (blk.kind == BlockKind::weight_grad) {
        } else if (blk.forward()) {
          if (vs > 0) {
            ready = fwd_done[vs - 1][blk.micro_batch];
            if (ready < 0) break;
            ready += message_s(vs - 1);  // from the previous virtual stage
          }
        } else if (vs == virtual_stages - 1) {
          ready = fwd_done[vs][blk.micro_batch];
          if (ready < 0) break;
        } else {
          ready = bwd_done[vs + 1][blk.micro_batch];
          if (ready < 0) break;
          ready += message_s(vs);  // back from the next virtual stage
        }
        const double duration = detail::block_s(blk.kind, f[vs], b[vs], w[vs]);
        const double start = std::max(free_at[i], ready);
        const double end = start + duration;
        if (blk.kind != BlockKind::weight_grad)
          (blk.forward() ? fwd_done : bwd_done)[vs][blk.micro_batch] = end;
        const bool sends = blk.forward() ? vs < virtual_stages - 1
                                         : blk.sends_gradient() && vs > 0;
        const double sent = blk.forward() ? message_s(vs) : message_s(vs - 1);
        free_at[i] = end + (p2p_blocking && sends ? sent : 0);
        events.push_back({detail::event_kind(blk.kind), i, blk.chunk, blk.micro_batch, start,
                          end});
        if (free_at[i] > end)
          events.push_back(
              {PipelineEvent::Kind::send, i, blk.chunk, blk.micro_batch, end, free_at[i]});
        ++next[i];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) break;  // cannot happen for Megatron's orders; guards against a bad input
  }
  double makespan = 0;
  for (const auto& e : events) makespan = std::max(makespan, e.end_s);
  if (makespan_s) *makespan_s = makespan;
  return events;
}

}  // namespace stepcast
