// Step 1 of an estimate: where each pipeline runs. One set of dp identical replicas by default,
// or the replica sets plan.replicas lists; stages on group 0 with layers/pp each by default, or
// where plan.stages puts them. "auto" counts are balanced here: layers by stage speed within
// each stage's memory, micro-batches by replica speed (balance.cpp), both measured with the stage
// costs of step 2.
#include <algorithm>

#include "detail/step.h"
#include "stepcast/balance.h"
#include "stepcast/pipeline.h"
#include "stepcast/pipeline_layout.h"

namespace stepcast::detail {

LayerMix layer_mix(const ModelSpec& m, int64_t first, int64_t count) {
  const ModelSpec::LayerCounts n = m.layer_counts(first, count);
  return {static_cast<double>(n.dense), static_cast<double>(n.moe),
          static_cast<double>(n.dense_windowed), static_cast<double>(n.moe_windowed)};
}

LayerMix average_mix(const ModelSpec& m, double layers) {
  const LayerMix all = layer_mix(m, 0, m.layers);
  const double f = layers / static_cast<double>(m.layers);
  return {all.dense * f, all.moe * f, all.dense_windowed * f, all.moe_windowed * f};
}

namespace {

// The kinds of every chunk's layers (`chunks`: PipelineLayout::chunk_layers): virtual stage
// c·pp + i holds the layers that follow those of virtual stages before it (Megatron's model-chunk
// order).
std::vector<LayerMix> chunk_mixes(const ModelSpec& m, const std::vector<int64_t>& chunks,
                                  size_t pp, size_t v) {
  std::vector<LayerMix> out(chunks.size());
  int64_t first = 0;
  for (size_t c = 0; c < v; ++c)
    for (size_t i = 0; i < pp; ++i) {
      const size_t k = i * v + c;
      out[k] = layer_mix(m, first, chunks[k]);
      first += chunks[k];
    }
  return out;
}

// Layers per stage without plan.stages: L/pp each, or Megatron's uneven splits (checked to add
// up by check_scenario). --decoder-first/last-pipeline-num-layers fix the first and last stage and
// split the rest evenly; --account-for-embedding/loss-in-pipeline-split count the embedding and
// the loss as one layer each, so (L + 1 + 1) / (pp·vpp) per chunk and one fewer on the model's
// first and last chunk (megatron/core/transformer/transformer_block.py, get_num_layers_to_build).
// Flat, as PipelineLayout::chunk_layers: chunk c of stage i at i·vpp + c.
std::vector<int64_t> megatron_split(const Plan& p, int64_t L) {
  const int64_t v = p.vpp;
  std::vector<int64_t> chunks(static_cast<size_t>(p.pp * v), 0);
  if (!p.pipeline_layout.empty()) {
    // A free-form layout (checked by check_scenario): virtual stage k is rank k % pp, chunk
    // k / pp.
    auto stages = parse_pipeline_layout(p.pipeline_layout, "plan.pipeline_layout");
    if (stages.ok() && static_cast<int64_t>(stages.value().size()) == p.pp * v)
      for (size_t k = 0; k < stages.value().size(); ++k)
        chunks[(k % p.pp) * v + k / p.pp] = stages.value()[k].layers;
    return chunks;
  }
  std::vector<int64_t> stage(p.pp, L / p.pp);
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    const int64_t others = p.pp - (p.first_stage_layers > 0) - (p.last_stage_layers > 0);
    const int64_t rest = L - p.first_stage_layers - p.last_stage_layers;
    const int64_t even = others > 0 ? rest / others : 0;
    stage.assign(p.pp, even);
    if (p.first_stage_layers > 0) stage.front() = p.first_stage_layers;
    if (p.last_stage_layers > 0) stage.back() = p.last_stage_layers;
  }
  if (p.embedding_in_split || p.loss_in_split) {
    const int64_t per_chunk = (L + p.embedding_in_split + p.loss_in_split) / (p.pp * v);
    chunks.assign(chunks.size(), per_chunk);
    if (p.embedding_in_split) chunks.front() -= 1;
    if (p.loss_in_split) chunks.back() -= 1;
    return chunks;
  }
  for (size_t k = 0; k < chunks.size(); ++k) chunks[k] = stage[k / v] / v;
  return chunks;
}

// Layers per stage of plan.stages: as given, or balanced by stage speed and memory where a
// stage leaves them to the engine (layers 0). Without plan.stages, Megatron's split decides.
std::vector<int64_t> stage_layers(const Scenario& sc, const std::vector<int>& groups) {
  const Plan& p = sc.plan;
  std::vector<int64_t> fixed;
  bool any_auto = false;
  for (const auto& s : p.stages) {
    fixed.push_back(s.layers);
    any_auto = any_auto || s.layers == 0;
  }
  if (!any_auto) return fixed;
  // Measure each stage with one and two layers per chunk: time and memory are affine in layers.
  PipelineLayout probe;
  probe.groups = groups;
  std::vector<double> per_layer, fixed_s;
  std::vector<int64_t> max_layers;
  for (int i = 0; i < p.pp; ++i) {
    probe.layers.assign(p.pp, p.vpp);
    const StagePaths paths = paths_for_stage(sc, p, probe, i);
    const LayerMix mix1 = average_mix(sc.model, p.vpp), mix2 = average_mix(sc.model, 2.0 * p.vpp);
    const StageCost one = stage_cost(sc, p, stage_shape(sc.model, p, i, mix1), mix1, groups[i], paths);
    const StageCost two = stage_cost(sc, p, stage_shape(sc.model, p, i, mix2), mix2, groups[i], paths);
    const double slope = (two.unit_s - one.unit_s) / p.vpp;
    per_layer.push_back(std::max(slope, 1e-12));
    fixed_s.push_back(one.unit_s - slope * p.vpp);
    const double mem_slope = (two.report.memory.total - one.report.memory.total) / p.vpp;
    const double room = one.report.memory.capacity - one.report.memory.headroom - one.report.memory.total;
    max_layers.push_back(
        mem_slope > 0 ? std::max<int64_t>(p.vpp, static_cast<int64_t>(room / mem_slope) + p.vpp)
                      : 0);
  }
  return balance_layers(per_layer, fixed_s, max_layers, fixed, sc.model.layers, p.vpp);
}

PipelineLayout layout_for(const Scenario& sc, int group, const std::vector<int>& replica_groups) {
  const Plan& p = sc.plan;
  PipelineLayout lay;
  lay.vpp = p.vpp;
  lay.groups.reserve(static_cast<size_t>(p.pp));
  for (int i = 0; i < p.pp; ++i)
    lay.groups.push_back(group >= 0 ? group : (p.stages.empty() ? 0 : p.stages[i].group));
  const size_t v = static_cast<size_t>(p.vpp);
  if (p.stages.empty()) {
    lay.chunk_layers = megatron_split(p, sc.model.layers);
    lay.layers.assign(static_cast<size_t>(p.pp), 0);  // the stages' sums
    for (size_t k = 0; k < lay.chunk_layers.size(); ++k) lay.layers[k / v] += lay.chunk_layers[k];
  } else {
    lay.layers = stage_layers(sc, lay.groups);
    // Given layers split evenly over the stage's chunks, the embedding and the loss counted in
    // the first and last stage where the plan says so.
    const size_t pp = lay.layers.size();
    lay.chunk_layers.resize(pp * v);
    for (size_t i = 0; i < pp; ++i) {
      const bool emb = i == 0 && p.embedding_in_split;
      const bool loss = i + 1 == pp && p.loss_in_split;
      for (size_t c = 0; c < v; ++c)
        lay.chunk_layers[i * v + c] = (lay.layers[i] + emb + loss) / p.vpp;
      if (emb) lay.chunk_layers[i * v] -= 1;
      if (loss) lay.chunk_layers[i * v + v - 1] -= 1;
    }
  }
  lay.chunk_mix = chunk_mixes(sc.model, lay.chunk_layers, static_cast<size_t>(p.pp), v);
  lay.dp_groups = replica_groups;
  return lay;
}

// A replica's pipeline time against its micro-batches m, by pipeline.h's closed form over its
// stages' times per micro-batch: m times the slowest stage's, plus the fill and drain.
PipelineTime one_micro_batch(const Scenario& sc, const Plan& q, const PipelineLayout& lay) {
  std::vector<double> unit;
  for (int i = 0; i < q.pp; ++i) unit.push_back(stage_cost_of(sc, q, lay, i).unit_s);
  return pipeline_time(unit, 1, q.vpp);
}

}  // namespace

Plan plan_for(const Plan& p, int64_t micro_batches) {
  Plan q = p;  // the same plan, with this set's micro-batches per replica
  q.global_batch = micro_batches * p.micro_batch * p.dp;
  // The layouts stay with the scenario (the steps read sc.plan's): a copy per replica set would
  // grow with the square of plan.replicas.
  q.stages.clear();
  q.replicas.clear();
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

  // Auto micro-batches: the sets' pipelines finish as close together as whole micro-batches let
  // them (each its slowest stage per micro-batch, plus its fill and drain).
  std::vector<double> per_mb, fill;
  std::vector<int> counts;
  std::vector<int64_t> fixed;
  for (const auto& set : sets) {
    const PipelineTime t = one_micro_batch(sc, plan_for(p, p.pp), set.layout);
    per_mb.push_back(t.steady_s);
    fill.push_back(t.bubble_s);
    counts.push_back(set.count);
    fixed.push_back(set.micro_batches);
  }
  const auto m_r =
      balance_micro_batches(per_mb, fill, counts, fixed, p.global_batch / p.micro_batch);
  for (size_t i = 0; i < sets.size(); ++i) sets[i].micro_batches = m_r[i];
  return sets;
}

}  // namespace stepcast::detail
