#include "stepcast/accuracy/anchored.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "stepcast/estimate.h"
#include "stepcast/calibrate.h"

namespace stepcast::accuracy {

namespace {

// What makes two runs "one cluster": every group's GPU, GPUs per node, NICs and links.
std::string cluster_key(const Scenario& s) {
  std::string out;
  for (const auto& g : s.cluster.groups)
    out += fmt::format("{}{} x{}, {} / {} x{}", out.empty() ? "" : "; ", g.gpu.name,
                       g.gpus_per_node, g.intra_node_link.name, g.inter_node_link.name,
                       g.nics_per_node);
  return out;
}

double abs_error_pct(double predicted, double measured) {
  return std::fabs(predicted - measured) / measured * 100;
}

struct Sums {
  double preset = 0, one = 0, two = 0;
  int rows = 0, n_one = 0, n_two = 0, network = 0;
  void add(const Sums& o) {
    preset += o.preset, one += o.one, two += o.two;
    rows += o.rows, n_one += o.n_one, n_two += o.n_two, network += o.network;
  }
  void into(AnchoredGroup& g) const {
    g.rows = rows;
    g.preset_mape_pct = rows ? preset / rows : 0;
    g.one_anchor_mape_pct = n_one ? one / n_one : 0;
    g.two_anchor_mape_pct = n_two ? two / n_two : 0;
    g.one_anchor_predictions = n_one;
    g.two_anchor_predictions = n_two;
    g.network_fits = network;
  }
};

Sums anchor_group(const std::vector<const Scenario*>& scenarios,
                  const std::vector<double>& measured) {
  const size_t n = scenarios.size();
  Sums s;
  s.rows = static_cast<int>(n);
  for (size_t i = 0; i < n; ++i)
    s.preset += abs_error_pct(predicted_iteration_s(*scenarios[i], 1, 1), measured[i]);
  auto predict_rest = [&](const ScaleFit& f, size_t a, size_t b, double& sum, int& count) {
    for (size_t k = 0; k < n; ++k) {
      if (k == a || k == b) continue;
      sum += abs_error_pct(
          predicted_iteration_s(*scenarios[k], f.compute_scale, f.network_scale), measured[k]);
      ++count;
    }
  };
  for (size_t a = 0; a < n; ++a) {
    const ScaleFit f = fit_scales({{scenarios[a], measured[a]}});
    predict_rest(f, a, a, s.one, s.n_one);
  }
  // Neighbouring pairs: n fits rather than n(n-1)/2 (a source lists related runs together).
  for (size_t a = 0; a < n; ++a) {
    const size_t b = (a + 1) % n;
    const ScaleFit f = fit_scales({{scenarios[a], measured[a]}, {scenarios[b], measured[b]}});
    s.network += f.network_fitted;
    predict_rest(f, a, b, s.two, s.n_two);
  }
  return s;
}

}  // namespace

AnchoredAccuracy anchored_accuracy(const std::vector<PreparedCase>& cases,
                                   const Calibration& calibration, bool same_model) {
  // The cases' scenarios with the calibration under test (as evaluate() uses it).
  std::vector<Scenario> scenarios;
  scenarios.reserve(cases.size());
  for (const auto& c : cases) {
    scenarios.push_back(c.scenario);
    scenarios.back().calibration = calibration;
  }
  std::vector<std::pair<std::string, std::string>> order;  // (source, cluster) first seen
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> members;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string cluster = cluster_key(scenarios[i]);
    if (same_model) cluster = scenarios[i].model.name + " on " + cluster;
    const auto key = std::pair{cases[i].data.source, std::move(cluster)};
    if (!members.count(key)) order.push_back(key);
    members[key].push_back(i);
  }
  AnchoredAccuracy out;
  out.same_model = same_model;
  Sums total;
  for (const auto& key : order) {
    const auto& idx = members[key];
    if (idx.size() < 3) continue;
    std::vector<const Scenario*> group;
    std::vector<double> measured;
    for (size_t i : idx) {
      group.push_back(&scenarios[i]);
      measured.push_back(cases[i].data.measured_iter_time_s);
    }
    const Sums s = anchor_group(group, measured);
    AnchoredGroup g;
    g.source = key.first;
    g.cluster = key.second;
    s.into(g);
    out.groups.push_back(g);
    total.add(s);
  }
  out.overall.source = "overall";
  total.into(out.overall);
  return out;
}

Json to_json(const AnchoredAccuracy& a) {
  auto one = [](const AnchoredGroup& g) {
    return Json{{"source", g.source},
                {"cluster", g.cluster},
                {"rows", g.rows},
                {"preset_mape_pct", g.preset_mape_pct},
                {"one_anchor_mape_pct", g.one_anchor_mape_pct},
                {"two_anchor_mape_pct", g.two_anchor_mape_pct},
                {"one_anchor_predictions", g.one_anchor_predictions},
                {"two_anchor_predictions", g.two_anchor_predictions},
                {"network_fits", g.network_fits}};
  };
  Json groups = Json::array();
  for (const auto& g : a.groups) groups.push_back(one(g));
  return Json{{"same_model", a.same_model}, {"groups", std::move(groups)},
              {"overall", one(a.overall)}};
}

std::string to_text(const AnchoredAccuracy& a) {
  std::string out = fmt::format("{:<16} {:>4} {:>9} {:>9} {:>9}  {}\n", "source", "rows",
                                "preset %", "1 run %", "2 runs %",
                                a.same_model ? "model on cluster" : "cluster");
  auto line = [&](const AnchoredGroup& g) {
    out += fmt::format("{:<16} {:>4} {:>9.1f} {:>9.1f} {:>9.1f}  {}\n", g.source, g.rows,
                       g.preset_mape_pct, g.one_anchor_mape_pct, g.two_anchor_mape_pct,
                       g.cluster);
  };
  for (const auto& g : a.groups) line(g);
  line(a.overall);
  out += fmt::format(
      "MAPE of the rows not used to calibrate: '1 run' calibrates the compute scale on each run "
      "in turn ({} predictions), '2 runs' on each neighbouring pair ({} predictions, {} of the "
      "pairs also fitted the network); 'preset' is the same rows uncalibrated.\n",
      a.overall.one_anchor_predictions, a.overall.two_anchor_predictions, a.overall.network_fits);
  return out;
}

}  // namespace stepcast::accuracy
