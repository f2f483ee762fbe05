// Where each pipeline runs (scenario/placement.h): one set of dp identical replicas by default, or
// the replica sets plan.replicas lists; stages on group 0 with Megatron's split of the layers by
// default, or where plan.stages puts them.
#include "scenario/placement.h"

#include <algorithm>

#include "stepcast/pipeline_layout.h"
#include "stepcast/scenario.h"
#include "stepcast/schedule.h"

namespace stepcast::detail {

LayerMix layer_mix(const ModelSpec& m, int64_t first, int64_t count) {
  const ModelSpec::LayerCounts n = m.layer_counts(first, count);
  auto d = [](int64_t v) { return static_cast<double>(v); };
  return {d(n.dense),  d(n.moe),       d(n.dense_windowed), d(n.moe_windowed),
          d(n.mamba), d(n.attention), d(n.mlp),            d(n.moe_block), d(n.gdn)};
}

LayerMix average_mix(const ModelSpec& m, double layers) {
  return layer_mix(m, 0, m.layers).scaled(layers / static_cast<double>(m.layers));
}

namespace {

// Where virtual stage `k` of the plan's schedule sits in PipelineLayout::chunk_layers (chunk c of
// stage i at i·vpp + c).
size_t chunk_index(const Plan& p, int k) {
  const StageHome home = schedule_of(p).home(schedule_shape(p), k);
  return static_cast<size_t>(home.rank) * static_cast<size_t>(p.vpp) +
         static_cast<size_t>(home.chunk);
}

// The kinds of every chunk's layers (`chunks`: PipelineLayout::chunk_layers): each virtual stage
// of the schedule (Megatron's model-chunk order: c·pp + i; the V's) holds the layers that follow
// those of the virtual stages before it.
std::vector<LayerMix> chunk_mixes(const ModelSpec& m, const Plan& p,
                                  const std::vector<int64_t>& chunks) {
  std::vector<LayerMix> out(chunks.size());
  int64_t first = 0;
  for (int vs = 0; vs < p.pp * p.vpp; ++vs) {
    const size_t k = chunk_index(p, vs);
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
    // A free-form layout (checked by check_scenario), virtual stage by virtual stage.
    auto stages = parse_pipeline_layout(p.pipeline_layout, "plan.pipeline_layout");
    if (stages.ok() && static_cast<int64_t>(stages.value().size()) == p.pp * v)
      for (size_t k = 0; k < stages.value().size(); ++k)
        chunks[chunk_index(p, static_cast<int>(k))] = stages.value()[k].layers;
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
    if (p.embedding_in_split) chunks[chunk_index(p, 0)] -= 1;
    if (p.loss_in_split) chunks[chunk_index(p, p.pp * static_cast<int>(v) - 1)] -= 1;
    return chunks;
  }
  for (size_t k = 0; k < chunks.size(); ++k) chunks[k] = stage[k / v] / v;
  return chunks;
}

}  // namespace

std::vector<int> stage_groups(const Plan& p, int group) {
  std::vector<int> groups;
  groups.reserve(static_cast<size_t>(p.pp));
  for (int i = 0; i < p.pp; ++i)
    groups.push_back(group >= 0 ? group : (p.stages.empty() ? 0 : p.stages[i].group));
  return groups;
}

PipelineLayout layout_for(const Scenario& sc, int group, const std::vector<int>& replica_groups,
                          const std::vector<int64_t>& stage_layers) {
  const Plan& p = sc.plan;
  PipelineLayout lay;
  lay.vpp = p.vpp;
  lay.groups = stage_groups(p, group);
  const size_t v = static_cast<size_t>(p.vpp);
  if (p.stages.empty()) {
    lay.chunk_layers = megatron_split(p, sc.model.layers);
    lay.layers.assign(static_cast<size_t>(p.pp), 0);  // the stages' sums
    for (size_t k = 0; k < lay.chunk_layers.size(); ++k) lay.layers[k / v] += lay.chunk_layers[k];
  } else {
    if (stage_layers.empty())
      for (const auto& s : p.stages) lay.layers.push_back(s.layers);
    else
      lay.layers = stage_layers;
    // Given layers split evenly over the stage's chunks, the embedding and the loss counted in
    // the chunks that hold them where the plan says so.
    const size_t pp = lay.layers.size();
    const size_t emb_at = chunk_index(p, 0), loss_at = chunk_index(p, p.pp * p.vpp - 1);
    lay.chunk_layers.resize(pp * v);
    for (size_t i = 0; i < pp; ++i) {
      const bool emb = emb_at / v == i && p.embedding_in_split;
      const bool loss = loss_at / v == i && p.loss_in_split;
      for (size_t c = 0; c < v; ++c)
        lay.chunk_layers[i * v + c] = (lay.layers[i] + emb + loss) / p.vpp;
      if (emb) lay.chunk_layers[emb_at] -= 1;
      if (loss) lay.chunk_layers[loss_at] -= 1;
    }
  }
  lay.chunk_mix = chunk_mixes(sc.model, p, lay.chunk_layers);
  lay.dp_groups = replica_groups;
  return lay;
}

Plan plan_for(const Plan& p, int64_t micro_batches) {
  Plan q = p;  // the same plan, with this set's micro-batches per replica
  q.global_batch = micro_batches * p.micro_batch * p.dp;
  // The layouts stay with the scenario (the steps read sc.plan's): a copy per replica set would
  // grow with the square of plan.replicas.
  q.stages.clear();
  q.replicas.clear();
  return q;
}

std::vector<ReplicaSet> declared_replica_sets(const Plan& p, std::vector<int>& replica_groups) {
  std::vector<ReplicaSet> sets;
  replica_groups.clear();
  if (p.replicas.empty()) {
    sets.push_back({-1, p.dp, p.micro_batches(), {}});
    return sets;
  }
  for (const auto& r : p.replicas) {
    sets.push_back({r.group, r.count, r.micro_batches, {}});
    if (std::find(replica_groups.begin(), replica_groups.end(), r.group) == replica_groups.end())
      replica_groups.push_back(r.group);
  }
  return sets;
}

}  // namespace stepcast::detail
