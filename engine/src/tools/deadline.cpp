// How many GPUs for a deadline (deadline.h): the plan search at each node count, the days its
// fastest plan takes to train the tokens, the cheapest that meets the deadline.
#include "stepcast/deadline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/limits.h"
#include "stepcast/model.h"
#include "stepcast/report.h"
#include "stepcast/rule_ids.h"
#include "stepcast/scaling.h"
#include "stepcast/scenario.h"

namespace stepcast {

namespace {

constexpr double kSecondsPerDay = 86400.0;

// The fewest nodes that train `tokens` within `days` at the GPUs' dense peak: the model's FLOPs
// per token (model.h, as MFU counts them) over the peak, in whole nodes.
int fewest_nodes_at_peak(const Scenario& sc, double tokens, double days) {
  const ClusterGroup& g = sc.cluster.groups.front();
  const double peak = g.gpu.peak_flops(sc.plan.precision).value_or(0);
  const double flops = tokens / sc.model.seq_len * model_flops_per_sample(sc.model, sc.model.seq_len);
  if (!(peak > 0) || !(flops > 0)) return 1;
  const double gpus = flops / (peak * days * kSecondsPerDay);
  const double per_node = static_cast<double>(g.gpus()) / g.nodes;
  return static_cast<int>(std::clamp(std::ceil(gpus / per_node), 1.0, double{kScalingMaxNodes}));
}

// The powers of two at or above `fewest`, up to kScalingMaxNodes.
std::vector<int> powers_of_two_from(int fewest) {
  std::vector<int> out;
  for (int n = 1; n <= kScalingMaxNodes; n *= 2)
    if (n >= fewest) out.push_back(n);
  return out;
}

// The fastest plan the search finds on `nodes` nodes, and what it takes to train the tokens.
DeadlinePoint point(Json variant, int nodes, const Catalog& catalog, double tokens,
                    double days) {
  DeadlinePoint p;
  p.nodes = nodes;
  variant["cluster"]["nodes"] = nodes;
  auto scenario = read_scenario(variant, catalog);
  if (!scenario) {
    p.error = scenario.error();
    return p;
  }
  p.gpus = scenario->cluster.gpus();
  SearchOptions options;
  options.top = 1;
  auto searched = search_plans(*scenario, options);
  if (!searched) {
    p.error = searched.error();
    return p;
  }
  if (searched->best.empty() || !(searched->best.front().tokens_per_s > 0)) return p;
  p.best = searched->best.front();
  p.train_days = tokens / p.best->tokens_per_s / kSecondsPerDay;
  p.gpu_hours = p.gpus * p.train_days * 24;
  p.meets = p.train_days <= days;
  return p;
}

}  // namespace

Result<DeadlineResult> deadline_plan(const Json& document, const Catalog& catalog,
                                     const DeadlineOptions& options) {
  auto base = read_scenario(document, catalog);
  if (!base) return base.error();
  if (document["cluster"].contains("groups"))
    return Error{ErrorCode::unsupported, "cluster.groups",
                 "deadline: a cluster of several groups is not swept (which group would "
                 "grow?); give one group of nodes"};
  for (const auto& [value, name] : {std::pair{options.tokens, "tokens"},
                                    std::pair{options.days, "days"}})
    if (!(value > 0) || !std::isfinite(value))
      return Error{ErrorCode::out_of_range, name,
                   fmt::format("deadline: {} must be a number above 0 (got {})", name, value)};
  for (const int n : options.nodes)
    if (n < 1)
      return Error{ErrorCode::out_of_range, "nodes",
                   fmt::format("deadline: nodes {} must be at least 1", n)};
  if (options.nodes.size() > kMaxScalingPoints)
    return Error{.code = ErrorCode::budget_exceeded,
                 .path = "nodes",
                 .message = fmt::format("deadline: {} node counts, each a plan search; one "
                                        "sweep makes at most {}",
                                        options.nodes.size(), kMaxScalingPoints),
                 .rule = Rule::max_scaling_points,
                 .values = {{"points", options.nodes.size()}, {"limit", kMaxScalingPoints}}};

  DeadlineResult out;
  out.tokens = options.tokens;
  out.days = options.days;
  out.fewest_nodes_at_peak = fewest_nodes_at_peak(*base, options.tokens, options.days);
  Json variant = document;
  variant["plan"].erase("dp");  // derived from each count's GPUs
  if (!options.nodes.empty()) {
    std::vector<int> nodes = options.nodes;
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (const int n : nodes)
      out.points.push_back(point(variant, n, catalog, options.tokens, options.days));
  } else {
    // Up the powers of two until four times the first count that meets the deadline.
    std::optional<int> first_meeting;
    for (const int n : powers_of_two_from(out.fewest_nodes_at_peak)) {
      if (first_meeting && n > 4 * *first_meeting) break;
      out.points.push_back(point(variant, n, catalog, options.tokens, options.days));
      if (!first_meeting && out.points.back().meets) first_meeting = n;
    }
  }
  for (size_t i = 0; i < out.points.size(); ++i) {
    const DeadlinePoint& p = out.points[i];
    if (p.meets && (!out.cheapest || p.gpu_hours < out.points[*out.cheapest].gpu_hours))
      out.cheapest = i;
  }
  return out;
}

Json to_json(const DeadlineResult& r) {
  Json points = Json::array();
  for (const auto& p : r.points) {
    Json j = {{"nodes", p.nodes}, {"gpus", p.gpus}};
    if (p.error) {
      j["error"] = to_json(*p.error)["error"];
    } else if (!p.best) {
      j["plan"] = nullptr;  // nothing fits on this many nodes
    } else {
      j["plan"] = to_json(p.best->plan);
      j["iteration_time_s"] = p.best->iteration_time_s;
      j["tokens_per_s"] = p.best->tokens_per_s;
      j["mfu"] = p.best->mfu;
      j["train_days"] = p.train_days;
      j["gpu_hours"] = p.gpu_hours;
      j["meets"] = p.meets;
    }
    points.push_back(std::move(j));
  }
  Json out = {{"tokens", r.tokens},
              {"days", r.days},
              {"fewest_nodes_at_peak", r.fewest_nodes_at_peak},
              {"points", std::move(points)}};
  out["cheapest"] = r.cheapest ? Json(*r.cheapest) : Json(nullptr);
  return out;
}

}  // namespace stepcast
