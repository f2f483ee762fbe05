// The scaling sweep: a scenario estimated again at other node counts (DP follows the GPUs, the
// global batch stays) and at other TP degrees (the same nodes), so a reader sees where adding
// nodes stops paying. Each point is exactly `stepcast estimate` of that variant of the document
// (its calibration applied to it, as to any scenario); a variant the rules refuse is a point with
// its error, not a failed sweep. `stepcast scaling` and the page's Scaling card.
#pragma once

#include <optional>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/json.h"

namespace stepcast {

// The node counts the sweep tries by default around n, the scenario's: 1, n/8, n/4, n/2, n, 2n,
// 4n and 8n, the whole ones up to kScalingMaxNodes (a factor of 8 each way shows where scaling
// bends; past 4,096 nodes no published run compares). The TP degrees: 1 to 16, powers of two
// (TP stays inside a node in practice; 16 shows why).
inline constexpr int kScalingMaxNodes = 4096;
inline constexpr int kScalingTp[] = {1, 2, 4, 8, 16};

struct ScalingOptions {
  std::vector<int> nodes;  // node counts to try; empty: the defaults above
  std::vector<int> tp;     // TP degrees to try; empty: kScalingTp
};

struct ScalingPoint {
  int nodes = 0;
  int tp = 0;
  std::optional<Error> error;  // the variant's first problem; the numbers below are then unset
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  bool fits = false;
  int gpus = 0;
  // Node points only: tokens/s relative to the scenario's own size over nodes relative to it
  // (1 = perfect scaling); absent when either does not estimate.
  std::optional<double> scaling_efficiency;
};

struct ScalingResult {
  int base_nodes = 0;  // the scenario's own node count and TP
  int base_tp = 0;
  std::vector<ScalingPoint> nodes;  // by node count, ascending, the scenario's plan
  std::vector<ScalingPoint> tp;     // by TP degree, on the scenario's nodes
};

// Sweeps the scenario `document` (JSON, as a file holds it): the node points replace
// cluster.nodes and leave plan.dp out (derived from the GPUs), the TP points replace plan.tp and
// leave plan.dp out. Errors: the document's own reading error (the sweep needs its keys), a
// cluster of several groups (unsupported), node counts or TP degrees below 1, or more points than
// kMaxScalingPoints (budget_exceeded, rule max_scaling_points).
Result<ScalingResult> scaling_sweep(const Json& document, const Catalog& catalog,
                                    const ScalingOptions& options = {});

// {"base": {"nodes", "tp"}, "nodes": [{"nodes", "gpus", "iteration_time_s", "tokens_per_s",
// "mfu", "fits", "scaling_efficiency"} or {"nodes", "error": {...}}], "tp": [{"tp", ...}]}; the
// error as to_json(Error) writes it.
Json to_json(const ScalingResult& result);

}  // namespace stepcast
