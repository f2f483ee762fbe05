#include "stepcast/pipeline.h"

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

namespace {

// Megatron's interleaved schedule needs the micro-batches in whole groups of p (the scenario
// checks it); a replica set balanced to another count runs the plain 1F1B order, each block then
// the stage's whole work: the chunks' durations are summed into f and b, v becomes 1. Returns the
// schedule to run (nullptr given: 1F1B, or interleaved with virtual stages).
const Schedule* runnable(std::vector<double>& f, std::vector<double>& b, int p, int64_t m, int& v,
                         const Schedule* schedule) {
  if (v > 1 && m % p != 0) {
    for (int i = 0; i < p; ++i)
      for (int c = 1; c < v; ++c) {
        f[i] += f[static_cast<size_t>(c) * p + i];
        b[i] += b[static_cast<size_t>(c) * p + i];
      }
    f.resize(p);
    b.resize(p);
    v = 1;
    return &detail::kOneFOneB;
  }
  if (schedule) return schedule;
  return v > 1 ? &detail::kInterleaved : &detail::kOneFOneB;
}

}  // namespace

ScheduleTime simulate_schedule_time(const std::vector<double>& fwd,
                                    const std::vector<double>& bwd, int p, int64_t m, int v,
                                    const std::vector<double>& p2p, bool p2p_blocking,
                                    int watch, const Schedule* schedule) {
  ScheduleTime out;
  if (p == 0 || m <= 0) return out;
  std::vector<double> f = fwd, b = bwd;
  schedule = runnable(f, b, p, m, v, schedule);
  const ScheduleShape shape{p, v, m};
  const int virtual_stages = p * v;
  // A virtual stage's finished blocks, forward and backward, by micro-batch modulo `window`:
  // each virtual stage finishes its micro-batches in order, so `count` finished means
  // micro-batches [0, count) are done, and a block's consumer (the next virtual stage, or the
  // same one's backward) runs within a few rounds of the pipeline (the ranks' warm-ups), far
  // inside the window; a write that would overwrite a time not yet read is checked, and the
  // full simulation answers instead (never seen for Megatron's orders).
  int64_t window = 1;
  while (window < 2 * (int64_t{p} * (v + 2) + 2)) window *= 2;
  const int64_t mask = window - 1;
  std::vector<double> done(2 * static_cast<size_t>(virtual_stages) * static_cast<size_t>(window));
  double* fwd_done = done.data();
  double* bwd_done = done.data() + static_cast<size_t>(virtual_stages) * window;
  std::vector<int64_t> counts(2 * static_cast<size_t>(virtual_stages) + 3 * static_cast<size_t>(p));
  int64_t* fwd_count = counts.data();
  int64_t* bwd_count = fwd_count + virtual_stages;
  int64_t* next = bwd_count + virtual_stages;
  int64_t* length = next + p;
  std::vector<double> free_at(static_cast<size_t>(p), 0.0);
  int64_t remaining = 0;
  for (int i = 0; i < p; ++i) remaining += length[i] = schedule->blocks_of_rank(shape, i);
  const auto slot = [&](int vs, int64_t mb) {
    return static_cast<size_t>(vs) * static_cast<size_t>(window) + static_cast<size_t>(mb & mask);
  };
  double makespan = 0;
  bool overrun = false;
  while (remaining > 0 && !overrun) {
    bool progressed = false;
    for (int i = 0; i < p; ++i) {
      while (next[i] < length[i]) {
        const ScheduleBlock blk = schedule->block_at(shape, i, next[i]);
        const int vs = blk.chunk * p + i;
        const int64_t mb = blk.micro_batch;
        double ready = 0;
        if (blk.forward) {
          if (vs > 0) {
            if (fwd_count[vs - 1] <= mb) break;
            ready = fwd_done[slot(vs - 1, mb)] + p2p[(i + p - 1) % p];
          }
        } else if (vs == virtual_stages - 1) {
          if (fwd_count[vs] <= mb) break;
          ready = fwd_done[slot(vs, mb)];
        } else {
          if (bwd_count[vs + 1] <= mb) break;
          ready = bwd_done[slot(vs + 1, mb)] + p2p[i];
        }
        // The slot this block writes held micro-batch mb - window: its readers must be done
        // with it (the next virtual stage's forward, or this one's backward for the last;
        // the previous virtual stage's backward).
        const int64_t old = mb - window;
        if (old >= 0) {
          const bool read = blk.forward ? (vs == virtual_stages - 1 ? bwd_count[vs] > old
                                                                   : fwd_count[vs + 1] > old)
                                        : (vs == 0 || bwd_count[vs - 1] > old);
          if (!read) {
            overrun = true;
            break;
          }
        }
        const double duration = blk.forward ? f[vs] : b[vs];
        const double start = std::max(free_at[i], ready);
        const double end = start + duration;
        (blk.forward ? fwd_done : bwd_done)[slot(vs, mb)] = end;
        ++(blk.forward ? fwd_count : bwd_count)[vs];
        const bool sends = blk.forward ? vs < virtual_stages - 1 : vs > 0;
        const double sent = blk.forward ? p2p[i] : p2p[(i + p - 1) % p];
        free_at[i] = end + (p2p_blocking && sends ? sent : 0);
        makespan = std::max(makespan, std::max(end, free_at[i]));
        if (i == watch) {
          out.busy_s += end - start;
          if (free_at[i] > end) out.sends_s += free_at[i] - end;
        }
        ++next[i];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) break;  // cannot happen for Megatron's orders; guards against a bad input
  }
  if (overrun) {  // the full simulation, summed as the estimate sums it
    double full = 0;
    const auto events = simulate_virtual_pipeline(f, b, p, m, v, p2p, p2p_blocking, &full,
                                                  schedule);
    out = {full, 0, 0};
    for (const auto& e : events)
      if (e.stage == watch)
        (e.kind == PipelineEvent::Kind::send ? out.sends_s : out.busy_s) += e.end_s - e.start_s;
    return out;
  }
  out.makespan_s = makespan;
  return out;
}

std::vector<PipelineEvent> simulate_virtual_pipeline(const std::vector<double>& fwd,
                                                     const std::vector<double>& bwd, int p,
                                                     int64_t m, int v,
                                                     const std::vector<double>& p2p,
                                                     bool p2p_blocking, double* makespan_s,
                                                     const Schedule* schedule) {
  std::vector<PipelineEvent> events;
  if (p == 0 || m <= 0) {
    if (makespan_s) *makespan_s = 0;
    return events;
  }
  std::vector<double> f = fwd, b = bwd;
  schedule = runnable(f, b, p, m, v, schedule);
  const ScheduleShape shape{p, v, m};
  const int virtual_stages = p * v;
  // done[vs][mb] = time the block's output is available to the next virtual stage.
  std::vector<std::vector<double>> fwd_done(virtual_stages, std::vector<double>(m, -1));
  std::vector<std::vector<double>> bwd_done(virtual_stages, std::vector<double>(m, -1));
  std::vector<std::vector<ScheduleBlock>> order(p);
  std::vector<size_t> next(p, 0);
  std::vector<double> free_at(p, 0);
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
        const int vs = blk.chunk * p + i;
        double ready = 0;
        if (blk.forward) {
          if (vs > 0) {
            ready = fwd_done[vs - 1][blk.micro_batch];
            if (ready < 0) break;
            ready += p2p[(i + p - 1) % p];  // from the previous stage (or the wrap)
          }
        } else if (vs == virtual_stages - 1) {
          ready = fwd_done[vs][blk.micro_batch];
          if (ready < 0) break;
        } else {
          ready = bwd_done[vs + 1][blk.micro_batch];
          if (ready < 0) break;
          ready += p2p[i];  // back from the next stage (or the wrap)
        }
        const double duration = blk.forward ? f[vs] : b[vs];
        const double start = std::max(free_at[i], ready);
        const double end = start + duration;
        (blk.forward ? fwd_done : bwd_done)[vs][blk.micro_batch] = end;
        const bool sends = blk.forward ? vs < virtual_stages - 1 : vs > 0;
        const double sent = blk.forward ? p2p[i] : p2p[(i + p - 1) % p];
        free_at[i] = end + (p2p_blocking && sends ? sent : 0);
        events.push_back({blk.forward ? PipelineEvent::Kind::forward
                                      : PipelineEvent::Kind::backward,
                          i, blk.chunk, blk.micro_batch, start, end});
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
