// Megatron-Core's order of forward and backward blocks on one pipeline rank
// (megatron/core/pipeline_parallel/schedules.py: forward_backward_pipelining_without_interleaving
// and _with_interleaving, get_pp_rank_microbatches): warm-up forwards, then one forward and one
// backward at a time (1F1B), then the remaining backwards. With v model chunks per rank the
// micro-batches go in groups of p (microbatch_group_size_per_vp_stage): within a group every
// chunk runs all its micro-batches before the next chunk, backwards walk the chunks in reverse,
// and the warm-up is 2(p - stage - 1) + (v - 1)·p forwards. Private to schedule/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stepcast/schedule.h"

namespace stepcast::detail {

inline int64_t megatron_warmup(int stage, int p, int v, int64_t m) {
  return v == 1 ? std::min<int64_t>(p - stage - 1, m)
                : std::min<int64_t>(int64_t{2} * (p - stage - 1) +
                                        static_cast<int64_t>(v - 1) * std::min<int64_t>(p, m),
                                    m * v);
}

inline void megatron_order(int stage, int p, int v, int64_t m, std::vector<ScheduleBlock>& out) {
  std::vector<ScheduleBlock> forwards, backwards;
  const int64_t groups = (m + p - 1) / p;  // (the interleaved schedule's callers have m % p == 0)
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = g * p, last = std::min<int64_t>(m, first + p);
    for (int c = 0; c < v; ++c)
      for (int64_t mb = first; mb < last; ++mb) forwards.push_back({BlockKind::forward, c, mb});
    for (int c = v - 1; c >= 0; --c)
      for (int64_t mb = first; mb < last; ++mb) backwards.push_back({BlockKind::backward, c, mb});
  }
  const int64_t total = static_cast<int64_t>(forwards.size());
  const int64_t warmup = megatron_warmup(stage, p, v, m);
  out.reserve(out.size() + 2 * static_cast<size_t>(total));
  int64_t f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(forwards[f]);
  while (f < total) {
    out.push_back(forwards[f++]);
    out.push_back(backwards[b++]);
  }
  for (; b < total; ++b) out.push_back(backwards[b]);
}

// The same order one block at a time: block `k` of rank `stage`, without building the list
// (the lean simulation asks for every block in turn). For v > 1, m is a multiple of p.

inline ScheduleBlock megatron_block_at(int stage, int p, int v, int64_t m, int64_t k) {
  const int64_t total = m * v;  // forwards (and backwards) of the rank
  const int64_t warmup = megatron_warmup(stage, p, v, m);
  const auto nth = [&](bool forward, int64_t n) -> ScheduleBlock {
    const BlockKind kind = forward ? BlockKind::forward : BlockKind::backward;
    if (v == 1) return {kind, 0, n};
    const int64_t per_group = int64_t{p} * v, r = n % per_group;
    const int chunk = static_cast<int>(r / p);
    return {kind, forward ? chunk : v - 1 - chunk, (n / per_group) * p + r % p};
  };
  if (k < warmup) return nth(true, k);
  const int64_t j = k - warmup, steady = total - warmup;
  if (j < 2 * steady) return j % 2 == 0 ? nth(true, warmup + j / 2) : nth(false, j / 2);
  return nth(false, k - total);
}

// After the warm-up each step runs forward n and backward n - warmup; forward n's chunk and
// micro-batch repeat every v·p forwards (a group) with the micro-batch p further on, so the
// alternation repeats every 2·v·p blocks (every 2 for 1F1B) until the forwards run out.
inline SteadyState megatron_steady_state(int stage, int p, int v, int64_t m) {
  const int64_t warmup = megatron_warmup(stage, p, v, m);
  const int64_t steps = m * v - warmup;
  return {warmup, warmup + 2 * steps, v == 1 ? 2 : int64_t{2} * v * p, v == 1 ? 1 : p};
}

}  // namespace stepcast::detail
