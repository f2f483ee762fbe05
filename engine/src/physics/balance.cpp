#include "stepcast/balance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "stepcast/limits.h"

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

namespace {

// A non-negative double from its bits: they order as integers, so a bisection over them finds
// a time to the last bit in at most 63 halvings. (Emscripten's libc++ has no std::bit_cast.)
double time_of(uint64_t bits) {
  double t;
  std::memcpy(&t, &bits, sizeof t);
  return t;
}
constexpr uint64_t kInfinityBits = 0x7FF0000000000000;

// `excess` as a sum of counts[i]·y_i with 0 <= y_i <= room[i], or none (also when finding one
// would take more than `budget` steps, or hold more than kMaxExactSplitAmounts amounts). Bounded
// coin change over 0..excess, one set at a time: an amount is reachable with the sets up to i
// when, stepping back by counts[i] at most room[i] times, it meets an amount reachable with the
// sets before i; `set` and `times` remember the first such step of each amount, which rebuilds
// the sum from `excess` down.
std::optional<std::vector<int64_t>> exact_excess(std::span<const int> counts,
                                                 std::span<const int64_t> room, int64_t excess,
                                                 int64_t& budget) {
  const int n = static_cast<int>(counts.size());
  if (excess < 0 || excess >= kMaxExactSplitAmounts || (excess + 1) * (n + 1) > budget)
    return std::nullopt;
  budget -= (excess + 1) * (n + 1);
  const auto at = [](int64_t d) { return static_cast<size_t>(d); };
  std::vector<int> set(at(excess) + 1, -1);  // -1: not reachable yet; n: 0, with no set
  std::vector<int64_t> times(set.size(), 0);
  set[0] = n;
  for (int i = 0; i < n; ++i) {
    const int64_t c = counts[static_cast<size_t>(i)];
    const int64_t most = room[static_cast<size_t>(i)];
    for (int64_t r = 0; r < std::min(c, excess + 1); ++r) {
      int64_t last = -1;  // the step of the latest amount reachable before set i
      for (int64_t j = 0, d = r; d <= excess; ++j, d += c) {
        const int by = set[at(d)];
        if (by == n || (by >= 0 && by < i)) {
          last = j;
        } else if (by < 0 && last >= 0 && j - last <= most) {
          set[at(d)] = i;
          times[at(d)] = j - last;
        }
      }
    }
  }
  if (set[at(excess)] < 0) return std::nullopt;
  std::vector<int64_t> y(counts.size(), 0);
  for (int64_t d = excess; d > 0; d -= times[at(d)] * counts[at(set[at(d)])])
    y[at(set[at(d)])] += times[at(d)];
  return y;
}

}  // namespace

std::vector<int64_t> balance_micro_batches(std::span<const double> per_mb,
                                           std::span<const double> fill_s,
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
  const std::vector<size_t> auto_sets = open;
  const int64_t open_total = [&] {
    int64_t t = left;
    for (size_t i : open) t += counts[i] * m[i];
    return t;
  }();
  // 1. Greedily: one more micro-batch to every replica of the set that then finishes first (the
  // lower index on a tie), while the set still fits in what is left; the total is met exactly when
  // the counts allow it. That takes every set's increments in the order of their finishing times
  // fill + (m+1)·t, dropping a set for good once it no longer fits. Every increment up to a time
  // whose increments fit together is one the greedy takes before any later one, so those are
  // taken in bulk (the time found by bisection), then one greedy step: the cost does not grow
  // with the batch.
  auto finish = [&](size_t i, int64_t k) {
    return fill_s[i] + static_cast<double>(m[i] + k) * per_mb[i];
  };
  // Increments of set i finishing by time t, at most `cap`.
  auto taken_by = [&](size_t i, double t, int64_t cap) -> int64_t {
    if (cap <= 0 || !(finish(i, 1) <= t)) return 0;
    const double estimate = std::floor((t - fill_s[i]) / per_mb[i]) - static_cast<double>(m[i]);
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
    // The latest time whose increments fit.
    uint64_t lo = 0, hi = kInfinityBits;
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

  // 2. Once a set's count no longer fits what is left, the greedy gives the rest to the sets
  // that still fit, however slow: 1 A100 replica and 4 H200 replicas sharing 320 micro-batches
  // get 28 and 73 each, where 24 and 74 finish sooner. The best split finishes at the earliest
  // time T by which the automatic sets can take exactly their share N, each replica at least one
  // micro-batch and at most U_i(T), those it finishes by T: T works when the excess
  // E = sum c_i·U_i(T) - N is a sum of c_i·y_i with 0 <= y_i < U_i(T) (exact_excess). A later T
  // only allows more, so T is found by bisection, below the greedy's finish when the greedy adds
  // up (a split that leaves micro-batches out does not run the global batch, so one that adds up
  // wins however late); past the work budget the best split found stands.
  if (auto_sets.empty()) return m;
  auto most_by = [&](size_t i, double t) -> int64_t {  // U_i(t), at most N / c_i + 1
    if (!(t >= fill_s[i] + per_mb[i])) return 0;
    const int64_t most = open_total / counts[i] + 1;
    const double u = std::floor((t - fill_s[i]) / per_mb[i]);
    int64_t k = u < static_cast<double>(most) ? static_cast<int64_t>(u) : most;
    while (k > 1 && !(fill_s[i] + static_cast<double>(k) * per_mb[i] <= t)) --k;
    return k;
  };
  std::vector<int> auto_counts;
  for (size_t i : auto_sets) auto_counts.push_back(counts[i]);
  int64_t budget = kMaxExactSplitWork;
  auto split_by = [&](double t) -> std::optional<std::vector<int64_t>> {
    std::vector<int64_t> most, room;
    int64_t capacity = 0;
    for (size_t i : auto_sets) {
      most.push_back(most_by(i, t));
      if (most.back() < 1) return std::nullopt;
      room.push_back(most.back() - 1);
      capacity += counts[i] * most.back();
    }
    const auto y = exact_excess(auto_counts, room, capacity - open_total, budget);
    if (!y) return std::nullopt;
    for (size_t k = 0; k < most.size(); ++k) most[k] -= (*y)[k];
    return most;
  };
  double latest = 0;  // the greedy's finish, or where every set may take all that is left
  std::optional<std::vector<int64_t>> best;
  if (left == 0) {
    best.emplace();
    for (size_t i : auto_sets) {
      best->push_back(m[i]);
      latest = std::max(latest, fill_s[i] + static_cast<double>(m[i]) * per_mb[i]);
    }
  } else {
    for (size_t i : auto_sets)
      latest = std::max(latest, fill_s[i] + static_cast<double>(open_total / counts[i] + 1) *
                                                per_mb[i]);
    best = split_by(latest);
  }
  if (!best) return m;
  uint64_t lo = 0, hi = 0;
  std::memcpy(&hi, &latest, sizeof hi);
  while (hi - lo > 1 && budget > 0) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (auto split = split_by(time_of(mid))) {
      best = std::move(split);
      hi = mid;
    } else {
      lo = mid;
    }
  }
  for (size_t k = 0; k < auto_sets.size(); ++k) m[auto_sets[k]] = (*best)[k];
  return m;
}

std::vector<int64_t> balance_lockstep_micro_batches(std::span<const double> per_mb,
                                                    std::span<const double> fill_s,
                                                    std::span<const double> lockstep_s,
                                                    std::span<const int> counts,
                                                    std::span<const int64_t> fixed, int64_t total) {
  const size_t n = per_mb.size();
  auto finish_of = [&](size_t i, int64_t m, int64_t most) {
    return fill_s[i] + static_cast<double>(m) * per_mb[i] +
           static_cast<double>(most - m) * lockstep_s[i];
  };
  auto finish = [&](const std::vector<int64_t>& m) {
    const int64_t most = *std::max_element(m.begin(), m.end());
    double end = 0;
    for (size_t i = 0; i < n; ++i) end = std::max(end, finish_of(i, m[i], most));
    return end;
  };
  std::vector<int64_t> best = balance_micro_batches(per_mb, fill_s, counts, fixed, total);
  int64_t sum = 0, replicas = 0, most_fixed = 1;
  for (size_t i = 0; i < n; ++i) {
    sum += counts[i] * best[i];
    replicas += counts[i];
    if (fixed[i] > 0) most_fixed = std::max(most_fixed, fixed[i]);
  }
  if (n == 0 || sum != total) return best;  // no split adds up: as many as fit
  int64_t budget = kMaxExactSplitWork;
  // The counts of set i in [1, most] that finish by t with the busiest at `most`: an interval,
  // the finish being affine in the count (rising where a micro-batch costs more than the
  // lockstep, falling otherwise). Found by bisection on the finish itself, so exact to the bit.
  auto counts_by = [&](size_t i, double t, int64_t most) -> std::optional<std::pair<int64_t, int64_t>> {
    if (fixed[i] > 0) {
      if (fixed[i] > most || !(finish_of(i, fixed[i], most) <= t)) return std::nullopt;
      return std::pair{fixed[i], fixed[i]};
    }
    const int64_t cap = std::min(most, total / counts[i]);
    if (cap < 1) return std::nullopt;
    const bool rising = finish_of(i, 1, most) <= finish_of(i, cap, most);
    const int64_t good = rising ? 1 : cap;  // the end that finishes first
    if (!(finish_of(i, good, most) <= t)) return std::nullopt;
    int64_t in = good, out = rising ? cap + 1 : 0;  // the last count that finishes by t; past it
    while (std::abs(out - in) > 1) {
      const int64_t mid = in + (out - in) / 2;
      (finish_of(i, mid, most) <= t ? in : out) = mid;
    }
    return rising ? std::pair{int64_t{1}, in} : std::pair{in, cap};
  };
  // A split finishing by t, or none (also past the budget).
  auto split_by = [&](double t) -> std::optional<std::vector<int64_t>> {
    // The busiest count M: at least the even share and every given count; at most what a set
    // that may be the busiest finishes by t.
    int64_t least = std::max(most_fixed, (total + replicas - 1) / replicas), largest = most_fixed;
    for (size_t i = 0; i < n; ++i)
      if (fixed[i] == 0 && fill_s[i] + per_mb[i] <= t)
        largest = std::max(largest, per_mb[i] > 0 ? static_cast<int64_t>(std::min(
                                                        static_cast<double>(total / counts[i]),
                                                        std::floor((t - fill_s[i]) / per_mb[i])))
                                                  : total / counts[i]);
    std::vector<int64_t> high(n), room(n);
    for (int64_t most = least; most <= largest; ++most) {
      budget -= static_cast<int64_t>(n) * 64;
      if (budget < 0) return std::nullopt;
      int64_t low_sum = 0, high_sum = 0;
      bool fits = true;
      for (size_t i = 0; i < n && fits; ++i) {
        const auto range = counts_by(i, t, most);
        fits = range.has_value();
        if (!fits) break;
        high[i] = range->second;
        room[i] = range->second - range->first;
        low_sum += counts[i] * range->first;
        high_sum += counts[i] * range->second;
      }
      if (!fits || low_sum > total || high_sum < total) continue;
      const auto y = exact_excess(counts, room, high_sum - total, budget);
      if (!y) continue;
      std::vector<int64_t> m(n);
      for (size_t i = 0; i < n; ++i) m[i] = high[i] - (*y)[i];
      return m;
    }
    return std::nullopt;
  };
  const double start = finish(best);
  uint64_t lo = 0, hi = 0;
  std::memcpy(&hi, &start, sizeof hi);
  while (hi - lo > 1 && budget > 0) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (auto split = split_by(time_of(mid))) {
      if (finish(*split) < finish(best)) best = std::move(*split);
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return best;
}

}  // namespace stepcast
