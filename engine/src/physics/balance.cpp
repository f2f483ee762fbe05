#include "stepcast/balance.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <limits>

namespace stepcast {

std::vector<int64_t> balance_layers(std::span<const double> per_layer_s,
                                    std::span<const double> fixed_s,
                                    std::span<const int64_t> max_layers,
                                    std::span<const int64_t> fixed_layers, int64_t total_layers,
                                    int64_t g) {
  const size_t n = per_layer_s.size();
  std::vector<int64_t> layers(n, 0);
  int64_t left = total_layers;
  std::vector<size_t> free;
  for (size_t i = 0; i < n; ++i) {
    if (fixed_layers[i] > 0) {
      layers[i] = fixed_layers[i];
      left -= fixed_layers[i];
    } else {
      free.push_back(i);
    }
  }
  if (free.empty()) return layers;
  // Start from the split proportional to speed (1 / per-layer time), in units of g layers.
  const int64_t units = left / g;
  double speed = 0;
  for (size_t i : free) speed += 1 / per_layer_s[i];
  int64_t given = 0;
  for (size_t i : free) {
    layers[i] = std::max<int64_t>(1, static_cast<int64_t>(units / per_layer_s[i] / speed)) * g;
    if (max_layers[i] > 0) layers[i] = std::max(g, std::min(layers[i], max_layers[i] / g * g));
    given += layers[i];
  }
  auto time = [&](size_t i, int64_t l) { return fixed_s[i] + static_cast<double>(l) * per_layer_s[i]; };
  auto cap = [&](size_t i, bool memory) {
    return memory && max_layers[i] > 0 ? max_layers[i] : std::numeric_limits<int64_t>::max();
  };
  for (bool memory : {true, false}) {
    // Hand out the remaining units one at a time to the stage that stays fastest with one more.
    while (given < left) {
      size_t best = n;
      for (size_t i : free)
        if (layers[i] + g <= cap(i, memory) &&
            (best == n || time(i, layers[i] + g) < time(best, layers[best] + g)))
          best = i;
      if (best == n) break;  // every stage at its memory cap
      layers[best] += g;
      given += g;
    }
    while (given > left) {  // the rounding overshot: take from the slowest
      size_t worst = free.front();
      for (size_t i : free)
        if (layers[i] > g && time(i, layers[i]) > time(worst, layers[worst])) worst = i;
      layers[worst] -= g;
      given -= g;
    }
    if (given == left) break;
  }
  // Improve: move one unit from the slowest stage to the one that then finishes first, while
  // the slowest stage gets faster (bounded: each move strictly lowers the maximum).
  for (int64_t step = 0; step < total_layers; ++step) {
    size_t worst = free.front();
    for (size_t i : free)
      if (time(i, layers[i]) > time(worst, layers[worst])) worst = i;
    size_t best = n;
    for (size_t i : free)
      if (i != worst && layers[i] + g <= cap(i, true) &&
          (best == n || time(i, layers[i] + g) < time(best, layers[best] + g)))
        best = i;
    if (best == n || layers[worst] <= g ||
        time(best, layers[best] + g) >= time(worst, layers[worst]))
      break;
    layers[worst] -= g;
    layers[best] += g;
  }
  return layers;
}

std::vector<int64_t> balance_micro_batches(std::span<const double> per_mb,
                                           std::span<const int> counts,
                                           std::span<const int64_t> fixed, int64_t total) {
  const size_t n = per_mb.size();
  std::vector<int64_t> m(n, 0);
  int64_t left = total;
  std::vector<size_t> open;  // the sets the balancer may still give to
  for (size_t i = 0; i < n; ++i) {
    m[i] = fixed[i] > 0 ? fixed[i] : 1;
    left -= counts[i] * m[i];
    if (fixed[i] == 0) open.push_back(i);
  }
  // Greedily: one more micro-batch to every replica of the set that then finishes first (the
  // lower index on a tie), while the set still fits in what is left; the total is met exactly when
  // the counts allow it. That takes every set's increments in the order of their finishing times
  // (m+1)·t, dropping a set for good once it no longer fits. Every increment up to a time whose
  // increments fit together is one the greedy takes before any later one, so those are taken in
  // bulk (the time found by bisection), then one greedy step: the cost does not grow with the
  // batch.
  auto finish = [&](size_t i, int64_t k) { return static_cast<double>(m[i] + k) * per_mb[i]; };
  // Increments of set i finishing by time t, at most `cap`.
  auto taken_by = [&](size_t i, double t, int64_t cap) -> int64_t {
    if (cap <= 0 || !(finish(i, 1) <= t)) return 0;
    const double estimate = std::floor(t / per_mb[i]) - static_cast<double>(m[i]);
    int64_t k = !(estimate < static_cast<double>(cap)) ? cap
                : estimate < 1                         ? 1
                                                       : static_cast<int64_t>(estimate);
    while (k > 1 && !(finish(i, k) <= t)) --k;  // the estimate is off by a rounding at most
    while (k < cap && finish(i, k + 1) <= t) ++k;
    return k;
  };
  auto cost_by = [&](double t) {  // micro-batches the increments up to t take (left + 1: more)
    int64_t cost = 0;
    for (size_t i : open) {
      cost += counts[i] * taken_by(i, t, left / counts[i]);
      if (cost > left) return left + 1;
    }
    return cost;
  };
  // Each round takes at least one increment or drops a set; rounds of single steps are rare (they
  // need sets whose finishing times tie exactly), and bounded here all the same.
  for (size_t round = 0; left > 0 && round < 64 * n + 64; ++round) {
    std::erase_if(open, [&](size_t i) { return counts[i] > left; });
    if (open.empty()) break;
    // The latest time whose increments fit, over the bits of non-negative doubles (ordered as
    // integers): at most 63 halvings. (Emscripten's libc++ has no std::bit_cast.)
    auto time_of = [](uint64_t bits) {
      double t;
      std::memcpy(&t, &bits, sizeof t);
      return t;
    };
    uint64_t lo = 0, hi = 0x7FF0000000000000;  // 0 and +infinity
    if (cost_by(time_of(hi)) <= left) lo = hi;
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (cost_by(time_of(mid)) <= left ? lo : hi) = mid;
    }
    const double t = time_of(lo);
    for (size_t i : open) {
      const int64_t k = taken_by(i, t, left / counts[i]);
      m[i] += k;
      left -= counts[i] * k;
    }
    // One greedy step: the set that finishes first with one more, among those that still fit.
    size_t best = n;
    for (size_t i : open)
      if (counts[i] <= left && (best == n || finish(i, 1) < finish(best, 1))) best = i;
    if (best == n) continue;
    m[best] += 1;
    left -= counts[best];
  }
  return m;
}

}  // namespace stepcast
