// The schedule a replica set's micro-batch count can run. Private to schedule/.
#pragma once

#include <vector>

#include "schedule/schedules.h"

namespace stepcast::detail {

// Megatron's interleaved schedule needs the micro-batches in whole groups of p (the scenario
// checks it); a replica set balanced to another count runs the plain 1F1B order, each block then
// the stage's whole work: the chunks' durations are summed into f and b, v becomes 1. Returns the
// schedule to run (nullptr given: 1F1B, or interleaved with virtual stages).
inline const Schedule* runnable(std::vector<double>& f, std::vector<double>& b, int p, int64_t m,
                                int& v, const Schedule* schedule) {
  if (v > 1 && m % p != 0) {
    for (int i = 0; i < p; ++i)
      for (int c = 1; c < v; ++c) {
        f[i] += f[static_cast<size_t>(c) * p + i];
        b[i] += b[static_cast<size_t>(c) * p + i];
      }
    f.resize(p);
    b.resize(p);
    v = 1;
    return &kOneFOneB;
  }
  if (schedule) return schedule;
  return v > 1 ? &kInterleaved : &kOneFOneB;
}

}  // namespace stepcast::detail
