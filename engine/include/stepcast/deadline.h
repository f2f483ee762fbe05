// How many GPUs for a deadline: the scenario's model, GPUs and global batch on other node counts,
// each with the fastest plan the tuner finds there (search.h), the days that plan takes to train
// a number of tokens, and the GPU-hours it spends; the cheapest node count that trains them in
// time is the answer. `stepcast deadline` and the page's Deadline card.
//
// Which node counts: powers of two, from the fewest nodes that could train the tokens in time at
// the GPUs' dense peak (model FLOPs per token, model.h, over peak FLOP/s: no plan does better, so
// fewer are not tried) to four times the first count that meets the deadline (past it, each
// doubling costs more GPU-hours as scaling efficiency falls; a caller who wants them names them
// in `nodes`), at most kScalingMaxNodes. The cheapest is the cheapest of the counts tried.
#pragma once

#include <optional>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/json.h"
#include "stepcast/search.h"

namespace stepcast {

struct DeadlineOptions {
  double tokens = 0;       // tokens to train (> 0)
  double days = 0;         // the deadline (> 0)
  std::vector<int> nodes;  // node counts to try; empty: the powers of two described above
};

struct DeadlinePoint {
  int nodes = 0;
  int gpus = 0;
  std::optional<Error> error;  // why no plan runs here (the search's error); the rest unset
  std::optional<SearchCandidate> best;  // the fastest plan that fits (none: nothing fits)
  double train_days = 0;                // tokens / best's tokens per second
  double gpu_hours = 0;                 // gpus x train_days x 24
  bool meets = false;                   // train_days <= the deadline
};

struct DeadlineResult {
  double tokens = 0, days = 0;
  // The fewest nodes that could meet the deadline at the dense peak (the default sweep's start).
  int fewest_nodes_at_peak = 1;
  std::vector<DeadlinePoint> points;  // by node count, ascending
  std::optional<size_t> cheapest;     // index into points: the fewest GPU-hours that meet it
};

// Errors: the document's own reading error, a cluster of several groups (unsupported: which
// group would grow?), tokens or days not above 0 (or not finite), a node count below 1, more
// counts than kMaxScalingPoints (budget_exceeded, rule max_scaling_points).
Result<DeadlineResult> deadline_plan(const Json& document, const Catalog& catalog,
                                     const DeadlineOptions& options);

// {"tokens", "days", "fewest_nodes_at_peak", "cheapest": index or null, "points": [{"nodes",
// "gpus", "plan": {...} | null, "iteration_time_s", "tokens_per_s", "mfu", "train_days",
// "gpu_hours", "meets"} or {"nodes", "gpus", "error": {...}}]}.
Json to_json(const DeadlineResult& result);

}  // namespace stepcast
