#include "stepcast/link_load.h"

#include <algorithm>
#include <cmath>

namespace stepcast {

LoadWindow load_window(Phase phase) {
  switch (phase) {
    case Phase::forward: return LoadWindow::forward;
    case Phase::backward:
    case Phase::recompute: return LoadWindow::backward;
    case Phase::gradient_sync: return LoadWindow::gradient_sync;
    case Phase::optimizer: return LoadWindow::optimizer;
  }
  return LoadWindow::forward;
}

namespace {

struct Interval {
  double start_s = 0, end_s = 0;
  double length() const { return std::max(0.0, end_s - start_s); }
};

// The stage's intervals of one window (link_load.h says which).
std::vector<Interval> intervals_of(const std::vector<TimelineEvent>& timeline, int stage,
                                   LoadWindow window) {
  std::vector<Interval> blocks;
  const TimelineEvent* last_backward = nullptr;
  const TimelineEvent* sync = nullptr;
  const TimelineEvent* optimizer = nullptr;
  for (const auto& ev : timeline) {
    if (ev.stage != stage) continue;
    // A zero-bubble schedule's backward is its B and W blocks; its gradients are done after
    // the last W.
    const bool backward = ev.kind == TimelineKind::backward ||
                          ev.kind == TimelineKind::input_grad ||
                          ev.kind == TimelineKind::weight_grad;
    if ((window == LoadWindow::forward && ev.kind == TimelineKind::forward) ||
        (window == LoadWindow::backward && backward))
      blocks.push_back({ev.start_s, ev.end_s});
    if (backward && ev.kind != TimelineKind::input_grad &&
        (!last_backward || ev.start_s > last_backward->start_s))
      last_backward = &ev;
    if (ev.kind == TimelineKind::dp_sync) sync = &ev;
    if (ev.kind == TimelineKind::optimizer) optimizer = &ev;
  }
  if (window == LoadWindow::forward || window == LoadWindow::backward) return blocks;
  // Gradient sync: from the last backward block (Megatron reduces buckets as the last
  // micro-batch's backward frees them) to the end of the exposed sync.
  Interval grad;
  if (last_backward) grad = {last_backward->start_s, last_backward->end_s};
  if (sync) {
    if (!last_backward) grad.start_s = sync->start_s;
    grad.end_s = std::max(grad.end_s, sync->end_s);
  }
  if (window == LoadWindow::gradient_sync) {
    if (last_backward || sync) blocks.push_back(grad);
    return blocks;
  }
  // Optimizer phase (the parameter all-gather, the norms): from the sync's end to the end of
  // the optimizer step, which the timeline puts after the exposed parameter gather.
  if (optimizer)
    blocks.push_back({last_backward || sync ? std::min(grad.end_s, optimizer->start_s)
                                            : optimizer->start_s,
                      optimizer->end_s});
  return blocks;
}

}  // namespace

std::vector<double> spread_over_timeline(const std::vector<TimelineEvent>& timeline,
                                         const WindowBytes& bytes, double span_s, int bins) {
  bins = std::max(1, bins);
  std::vector<double> out(static_cast<size_t>(bins), 0.0);
  const double bin_s = span_s > 0 ? span_s / bins : 1;
  auto bin_of = [&](double t) {
    return static_cast<size_t>(std::clamp(static_cast<int>(std::floor(t / bin_s)), 0, bins - 1));
  };
  for (size_t stage = 0; stage < bytes.size(); ++stage)
    for (size_t w = 0; w < kLoadWindows; ++w) {
      const double total = bytes[stage][w];
      if (total <= 0) continue;
      const auto blocks =
          intervals_of(timeline, static_cast<int>(stage), static_cast<LoadWindow>(w));
      if (blocks.empty()) {
        out.back() += total;
        continue;
      }
      double duration_s = 0;
      for (const Interval& b : blocks) duration_s += b.length();
      for (const Interval& block : blocks) {
        const double len = block.length();
        if (duration_s <= 0) {  // instants only: equal shares at their starts
          out[bin_of(block.start_s)] += total / static_cast<double>(blocks.size());
          continue;
        }
        if (len <= 0) continue;
        const double share = total * len / duration_s;
        // Each bin the block overlaps gets the share of its overlap (the first and last bins
        // reach out to take what lies outside the span).
        for (size_t b = bin_of(block.start_s), last = bin_of(block.end_s); b <= last; ++b) {
          const double lo = b == 0 ? -INFINITY : static_cast<double>(b) * bin_s;
          const double hi = b + 1 == out.size() ? INFINITY : static_cast<double>(b + 1) * bin_s;
          const double overlap = std::min(hi, block.end_s) - std::max(lo, block.start_s);
          if (overlap > 0) out[b] += share * overlap / len;
        }
      }
    }
  return out;
}

}  // namespace stepcast
