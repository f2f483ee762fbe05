// The schedule a replica set's micro-batch count can run. Private to schedule/.
#pragma once

#include <vector>

#include "schedule/schedules.h"

namespace stepcast::detail {

// Megatron's interleaved schedule needs the micro-batches in whole groups of p (the scenario
// checks it; the V-shaped schedules do not); a replica set balanced to another count runs the plain 1F1B order, each block then
// the stage's whole work: the chunks' durations are summed into f and b, v becomes 1. Returns the
// schedule to run (nullptr given: 1F1B, or interleaved with virtual stages).
// `w` (the weight gradients of b) is filled with zeros when empty.
inline const Schedule* runnable(std::vector<double>& f, std::vector<double>& b,
                                std::vector<double>& w, int p, int64_t m, int& v,
                                const Schedule* schedule) {
  if (w.size() != f.size()) w.assign(f.size(), 0.0);
  if (v > 1 && m % p != 0 && (!schedule || schedule == &kInterleaved)) {
    for (int i = 0; i < p; ++i)
      for (int c = 1; c < v; ++c) {
        f[i] += f[static_cast<size_t>(c) * p + i];
        b[i] += b[static_cast<size_t>(c) * p + i];
        w[i] += w[static_cast<size_t>(c) * p + i];
      }
    f.resize(p);
    b.resize(p);
    w.resize(p);
    v = 1;
    return &kOneFOneB;
  }
  if (schedule) return schedule;
  return v > 1 ? &kInterleaved : &kOneFOneB;
}

// A block's duration from its virtual stage's forward `f`, whole backward `b` and the weight
// gradients `w` of that backward.
inline double block_s(BlockKind kind, double f, double b, double w) {
  switch (kind) {
    case BlockKind::forward: return f;
    case BlockKind::backward: return b;
    case BlockKind::input_grad: return b - w;
    case BlockKind::weight_grad: return w;
  }
  return b;
}

// The message between virtual stages k and k + 1 of `shape` under `schedule`, either way: its
// link's time from `p2p` (each rank's link to the next), none where both sit on one rank or
// there is no such edge.
inline double message_s(const Schedule& schedule, const ScheduleShape& shape,
                        const std::vector<double>& p2p, int k) {
  if (k < 0 || k + 1 >= shape.stages * shape.chunks) return 0;
  const int link = schedule.link_after(shape, k);
  return link < 0 ? 0.0 : p2p[static_cast<size_t>(link)];
}

inline PipelineEvent::Kind event_kind(BlockKind kind) {
  switch (kind) {
    case BlockKind::forward: return PipelineEvent::Kind::forward;
    case BlockKind::backward: return PipelineEvent::Kind::backward;
    case BlockKind::input_grad: return PipelineEvent::Kind::input_grad;
    case BlockKind::weight_grad: return PipelineEvent::Kind::weight_grad;
  }
  return PipelineEvent::Kind::backward;
}

}  // namespace stepcast::detail
