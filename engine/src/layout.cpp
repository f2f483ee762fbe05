// Step 1 of an estimate: where each pipeline runs. One set of dp identical replicas by default,
// or the replica sets plan.replicas lists; stages on group 0 with layers/pp each by default, or
// where plan.stages puts them. "auto" counts are balanced here: layers by stage speed within
// each stage's memory, micro-batches by replica speed (balance.cpp), both measured with the stage
// costs of step 2.
#include <algorithm>

#include "detail/step.h"
#include "stepcast/balance.h"

namespace stepcast::detail {

namespace {

// Layers per stage: as given, L/pp each by default, or balanced by stage speed and memory.
std::vector<int64_t> stage_layers(const Scenario& sc, const std::vector<int>& groups) {
  const Plan& p = sc.plan;
  const int64_t even = sc.model.layers / p.pp;
  if (p.stages.empty()) return std::vector<int64_t>(p.pp, even);
  std::vector<int64_t> fixed;
  bool any_auto = false;
  for (const auto& s : p.stages) {
    fixed.push_back(s.layers);
    any_auto = any_auto || s.layers == 0;
  }
  if (!any_auto) return fixed;
  // Measure each stage with one and two layers per chunk: time and memory are affine in layers.
  PipelineLayout probe{groups, {}, {}};
  std::vector<double> per_layer, fixed_s;
  std::vector<int64_t> max_layers;
  for (int i = 0; i < p.pp; ++i) {
    probe.layers.assign(p.pp, p.vpp);
    const StagePaths paths = paths_for_stage(sc, p, probe, i);
    const StageCost one = stage_cost(sc, p, stage_shape(sc.model, p, i, p.vpp), groups[i], paths);
    const StageCost two =
        stage_cost(sc, p, stage_shape(sc.model, p, i, 2 * p.vpp), groups[i], paths);
    const double slope = (two.unit_s - one.unit_s) / p.vpp;
    per_layer.push_back(std::max(slope, 1e-12));
    fixed_s.push_back(one.unit_s - slope * p.vpp);
    const double mem_slope = (two.report.memory.total - one.report.memory.total) / p.vpp;
    const double room = one.report.memory.capacity - one.report.memory.total;
    max_layers.push_back(
        mem_slope > 0 ? std::max<int64_t>(p.vpp, static_cast<int64_t>(room / mem_slope) + p.vpp)
                      : 0);
  }
  return balance_layers(per_layer, fixed_s, max_layers, fixed, sc.model.layers, p.vpp);
}

PipelineLayout layout_for(const Scenario& sc, int group, const std::vector<int>& replica_groups) {
  const Plan& p = sc.plan;
  PipelineLayout lay;
  for (int i = 0; i < p.pp; ++i)
    lay.groups.push_back(group >= 0 ? group : (p.stages.empty() ? 0 : p.stages[i].group));
  lay.layers = stage_layers(sc, lay.groups);
  lay.dp_groups = replica_groups;
  return lay;
}

// The slowest stage's time per micro-batch of a layout (what a replica's throughput follows).
double slowest_unit_s(const Scenario& sc, const Plan& q, const PipelineLayout& lay) {
  double worst = 0;
  for (int i = 0; i < q.pp; ++i)
    worst = std::max(worst, stage_cost(sc, q, stage_shape(sc.model, q, i, lay.layers[i]),
                                       lay.groups[i], paths_for_stage(sc, q, lay, i))
                                .unit_s);
  return worst;
}

}  // namespace

Plan plan_for(const Plan& p, int64_t micro_batches) {
  Plan q = p;  // the same plan, with this set's micro-batches per replica
  q.global_batch = micro_batches * p.micro_batch * p.dp;
  return q;
}

std::vector<ReplicaSet> replica_sets(const Scenario& sc) {
  const Plan& p = sc.plan;
  std::vector<ReplicaSet> sets;
  std::vector<int> replica_groups;
  if (p.replicas.empty()) {
    sets.push_back({-1, p.dp, p.micro_batches(), {}});
  } else {
    for (const auto& r : p.replicas) {
      sets.push_back({r.group, r.count, r.micro_batches, {}});
      if (std::find(replica_groups.begin(), replica_groups.end(), r.group) ==
          replica_groups.end())
        replica_groups.push_back(r.group);
    }
  }
  for (auto& set : sets) set.layout = layout_for(sc, set.group, replica_groups);
  if (p.replicas.empty()) return sets;

  // Auto micro-batches: in proportion to each set's throughput (its slowest stage per batch).
  std::vector<double> per_mb;
  std::vector<int> counts;
  std::vector<int64_t> fixed;
  for (const auto& set : sets) {
    per_mb.push_back(slowest_unit_s(sc, plan_for(p, p.pp), set.layout));
    counts.push_back(set.count);
    fixed.push_back(set.micro_batches);
  }
  const auto m_r = balance_micro_batches(per_mb, counts, fixed, p.global_batch / p.micro_batch);
  for (size_t i = 0; i < sets.size(); ++i) sets[i].micro_batches = m_r[i];
  return sets;
}

}  // namespace stepcast::detail
