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

// One walk through Megatron's forwards (or backwards) of a rank: the next one's chunk index,
// micro-batch and place in its group of p micro-batches (every chunk runs the group's p before
// the next chunk does; 1F1B: one chunk, a group that never ends).
struct MegatronWalk {
  int64_t micro_batch;
  int chunk, in_group;
  void step(int p, int v, int group) {
    ++micro_batch;
    if (++in_group < group) return;
    in_group = 0;
    micro_batch -= p;  // the next chunk: the group's micro-batches again
    if (++chunk == v) {
      chunk = 0;
      micro_batch += p;  // the next group
    }
  }
};

// The same order n blocks at a time from block k (Schedule::blocks_from), without building the
// list: the forwards and the backwards each walked by a counter, so a block costs a few
// additions, not a position's divisions. For v > 1, m is a multiple of p. (One copy for both
// schedules, not inlined into each: code size, the page's module.)
[[gnu::noinline]] inline void megatron_blocks_from(int stage, int p, int v, int64_t m,
                                                   int64_t k, int64_t n, ScheduleBlock* out) {
  const int64_t total = m * v, warmup = megatron_warmup(stage, p, v, m);
  const int64_t steady_end = warmup + 2 * (total - warmup);
  // The forwards and backwards before block k, and where each walk stands.
  const int64_t fwd = k <= warmup ? k : k < steady_end ? warmup + (k - warmup + 1) / 2 : total;
  const int64_t bwd = k <= warmup ? 0 : k < steady_end ? (k - warmup) / 2 : k - total;
  const int group = v == 1 ? INT32_MAX : p;
  const auto at = [&](int64_t nth) {
    const int64_t r = nth % (int64_t{p} * v);
    return v == 1 ? MegatronWalk{nth, 0, 0}
                  : MegatronWalk{(nth - r) / v + r % p, static_cast<int>(r / p),
                                 static_cast<int>(r % p)};
  };
  MegatronWalk f = at(fwd), b = at(bwd);
  // The warm-up's forwards, the steady state's forward-backward pairs, the drain's backwards.
  const int64_t end = k + n, steady_stop = std::min(end, steady_end);
  int64_t j = k;
  for (; j < std::min(end, warmup); ++j, f.step(p, v, group))
    *out++ = {BlockKind::forward, f.chunk, f.micro_batch};
  for (; j < steady_stop; ++j) {
    if ((j - warmup) % 2 == 0) {
      *out++ = {BlockKind::forward, f.chunk, f.micro_batch};
      f.step(p, v, group);
    } else {
      *out++ = {BlockKind::backward, v - 1 - b.chunk, b.micro_batch};
      b.step(p, v, group);
    }
  }
  for (; j < end; ++j, b.step(p, v, group))
    *out++ = {BlockKind::backward, v - 1 - b.chunk, b.micro_batch};
}

// The whole order of rank `stage`, appended to `out`.
inline void megatron_order(int stage, int p, int v, int64_t m, std::vector<ScheduleBlock>& out) {
  const size_t at = out.size(), n = 2 * static_cast<size_t>(m) * static_cast<size_t>(v);
  out.resize(at + n);
  megatron_blocks_from(stage, p, v, m, 0, static_cast<int64_t>(n), out.data() + at);
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
