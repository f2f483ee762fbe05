#include "stepcast/balance.h"

#include <algorithm>
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
  for (size_t i = 0; i < n; ++i) {
    m[i] = fixed[i] > 0 ? fixed[i] : 1;
    left -= counts[i] * m[i];
  }
  // Give one more micro-batch to every replica of the set that then finishes first, while the
  // set still fits in what is left; the total is met exactly when the counts allow it.
  while (left > 0) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i)
      if (fixed[i] == 0 && counts[i] <= left &&
          (best == n || static_cast<double>(m[i] + 1) * per_mb[i] <
                            static_cast<double>(m[best] + 1) * per_mb[best]))
        best = i;
    if (best == n) break;
    m[best] += 1;
    left -= counts[best];
  }
  return m;
}

}  // namespace stepcast
