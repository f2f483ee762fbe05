// The scaling sweep (scaling.h): variants of the scenario document, each read, calibrated,
// checked and estimated as `stepcast estimate` would.
#include "stepcast/scaling.h"

#include <fmt/format.h>

#include <algorithm>

#include "stepcast/estimate.h"
#include "stepcast/limits.h"
#include "stepcast/report.h"
#include "stepcast/rule_ids.h"
#include "stepcast/scenario.h"

namespace stepcast {

namespace {

// The node counts around n: n/8 to 8n by factors of two, and 1, the whole ones in range.
std::vector<int> default_nodes(int n) {
  std::vector<int> out = {1};
  for (const int k : {8, 4, 2})
    if (n % k == 0) out.push_back(n / k);
  for (const int k : {1, 2, 4, 8})
    if (int64_t{n} * k <= kScalingMaxNodes) out.push_back(n * k);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  std::erase_if(out, [](int v) { return v > kScalingMaxNodes; });
  return out;
}

// One variant of the document, estimated: its numbers, or its first problem.
ScalingPoint point(const Json& variant, const Catalog& catalog) {
  ScalingPoint p;
  auto scenario = scenario_from_json(variant, catalog);
  if (!scenario) {
    p.error = scenario.error();
    return p;
  }
  const Report r = estimate(*scenario);
  p.iteration_time_s = r.iteration_time_s;
  p.tokens_per_s = r.tokens_per_s;
  p.mfu = r.mfu;
  p.fits = r.fits;
  p.gpus = r.gpus;
  return p;
}

Json point_json(const char* axis, int value, const ScalingPoint& p) {
  Json j = {{axis, value}};
  if (p.error) {
    j["error"] = to_json(*p.error)["error"];
    return j;
  }
  j["gpus"] = p.gpus;
  j["iteration_time_s"] = p.iteration_time_s;
  j["tokens_per_s"] = p.tokens_per_s;
  j["mfu"] = p.mfu;
  j["fits"] = p.fits;
  if (p.scaling_efficiency) j["scaling_efficiency"] = *p.scaling_efficiency;
  return j;
}

}  // namespace

Result<ScalingResult> scaling_sweep(const Json& document, const Catalog& catalog,
                                    const ScalingOptions& options) {
  // The document's keys must read: every variant shares them.
  auto base = read_scenario(document, catalog);
  if (!base) return base.error();
  if (document["cluster"].contains("groups"))
    return Error{ErrorCode::unsupported, "cluster.groups",
                 "scaling: a cluster of several groups is not swept (which group would grow?); "
                 "give one group of nodes"};
  ScalingResult out;
  out.base_nodes = base->cluster.groups.front().nodes;
  out.base_tp = base->plan.tp;
  const std::vector<int> nodes = options.nodes.empty() ? default_nodes(out.base_nodes)
                                                       : options.nodes;
  const std::vector<int> tps =
      options.tp.empty() ? std::vector<int>(std::begin(kScalingTp), std::end(kScalingTp))
                         : options.tp;
  for (const auto& [list, key] : {std::pair{&nodes, "nodes"}, std::pair{&tps, "tp"}})
    for (const int v : *list)
      if (v < 1)
        return Error{ErrorCode::out_of_range, key,
                     fmt::format("scaling: {} {} must be at least 1", key, v)};
  const size_t points = nodes.size() + tps.size();
  if (points > kMaxScalingPoints)
    return Error{.code = ErrorCode::budget_exceeded,
                 .path = "nodes",
                 .message = fmt::format("scaling: {} node counts and {} TP degrees make {} "
                                        "estimates; one sweep makes at most {}",
                                        nodes.size(), tps.size(), points, kMaxScalingPoints),
                 .rule = Rule::max_scaling_points,
                 .values = {{"points", points}, {"limit", kMaxScalingPoints}}};

  // The plan with dp left out: derived from each variant's GPUs.
  Json variant = document;
  variant["plan"].erase("dp");
  for (const int n : nodes) {
    variant["cluster"]["nodes"] = n;
    ScalingPoint p = point(variant, catalog);
    p.nodes = n;
    p.tp = out.base_tp;
    out.nodes.push_back(std::move(p));
  }
  variant["cluster"]["nodes"] = out.base_nodes;
  for (const int tp : tps) {
    variant["plan"]["tp"] = tp;
    ScalingPoint p = point(variant, catalog);
    p.nodes = out.base_nodes;
    p.tp = tp;
    out.tp.push_back(std::move(p));
  }
  // Perfect scaling from the scenario's own size.
  const auto own = std::find_if(out.nodes.begin(), out.nodes.end(), [&](const ScalingPoint& p) {
    return p.nodes == out.base_nodes && !p.error;
  });
  if (own != out.nodes.end() && own->tokens_per_s > 0)
    for (ScalingPoint& p : out.nodes)
      if (!p.error)
        p.scaling_efficiency = (p.tokens_per_s / own->tokens_per_s) /
                               (static_cast<double>(p.nodes) / out.base_nodes);
  return out;
}

Json to_json(const ScalingResult& r) {
  Json nodes = Json::array(), tp = Json::array();
  for (const auto& p : r.nodes) nodes.push_back(point_json("nodes", p.nodes, p));
  for (const auto& p : r.tp) tp.push_back(point_json("tp", p.tp, p));
  return Json{{"base", {{"nodes", r.base_nodes}, {"tp", r.base_tp}}},
              {"nodes", std::move(nodes)},
              {"tp", std::move(tp)}};
}

}  // namespace stepcast
