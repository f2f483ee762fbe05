// Where each pipeline of a scenario runs and what its stages hold: the cluster group of every
// stage, the layers of every stage and virtual chunk (Megatron's splits, plan.stages), their kinds,
// and the replica sets of plan.replicas with their micro-batches. Shared by the estimate (which
// balances "auto" counts by stage cost: estimate/replica_sets.cpp) and resolve. Private.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stepcast/model.h"
#include "stepcast/plan.h"

namespace stepcast {
struct Scenario;
}

namespace stepcast::detail {

// Layers of a stage or a chunk by kind (ModelSpec::LayerCounts' kinds): dense or MoE, full or
// sliding-window attention, or a hybrid model's blocks. Counts are whole for real layouts; the
// balancer's probes use the model's average mix.
struct LayerMix {
  double dense = 0, moe = 0, dense_windowed = 0, moe_windowed = 0;
  double mamba = 0, attention = 0, mlp = 0, moe_block = 0, gdn = 0;
  double total() const {
    return dense + moe + dense_windowed + moe_windowed + mamba + attention + mlp + moe_block +
           gdn;
  }
  double moe_total() const { return moe + moe_windowed + moe_block; }
  // The count of one of kLayerKinds.
  double of(const LayerKind& k) const { return count_of(*this, k); }
  // Every count times f.
  LayerMix scaled(double f) const {
    return {dense * f, moe * f, dense_windowed * f, moe_windowed * f,
            mamba * f, attention * f, mlp * f, moe_block * f, gdn * f};
  }
  bool operator==(const LayerMix&) const = default;
  LayerMix& operator+=(const LayerMix& o) {
    dense += o.dense, moe += o.moe, dense_windowed += o.dense_windowed;
    moe_windowed += o.moe_windowed, mamba += o.mamba, attention += o.attention, mlp += o.mlp;
    moe_block += o.moe_block, gdn += o.gdn;
    return *this;
  }
};
// The kinds of layers [first, first + count) of the model.
LayerMix layer_mix(const ModelSpec& m, int64_t first, int64_t count);
// `layers` layers in the model's average proportions.
LayerMix average_mix(const ModelSpec& m, double layers);

// Where each stage of one pipeline runs and what it holds.
struct PipelineLayout {
  std::vector<int> groups;      // cluster group of each stage
  std::vector<int64_t> layers;  // transformer layers of each stage (all its chunks)
  int vpp = 1;                  // virtual chunks per stage
  // Layers of each stage's virtual chunks, stage by stage (chunk c of stage i at i·vpp + c; flat,
  // as a search builds thousands of layouts); equal shares unless Megatron counts the embedding
  // or the loss as a layer (the first or last chunk then holds one fewer).
  std::vector<int64_t> chunk_layers;
  // The kinds of the layers of each chunk, in the same order (model chunk c·pp + i holds the
  // layers after those of the model chunks before it).
  std::vector<LayerMix> chunk_mix;
  std::vector<int> dp_groups;   // groups the data-parallel ring of every stage crosses

  // Stage i's chunks' kinds.
  std::span<const LayerMix> chunks_of(int i) const {
    return {chunk_mix.data() + static_cast<size_t>(i) * static_cast<size_t>(vpp),
            static_cast<size_t>(vpp)};
  }
};

// A set of identical data-parallel replicas and the pipeline layout they run.
struct ReplicaSet {
  int group = -1;  // -1: the stage layout decides (stages may sit on several groups)
  int count = 1;
  int64_t micro_batches = 0;
  PipelineLayout layout;
};

// The placement as the scenario states it. Stage layers left to the engine ("auto": 0 in
// plan.stages) and "auto" micro-batches stay 0 here: the estimate balances them.
// The layout of one replica set on `group` (-1: plan.stages decides each stage's group), with the
// layers of each stage given (`stage_layers`, plan.stages' order) or, when empty, Megatron's split.
PipelineLayout layout_for(const Scenario& sc, int group, const std::vector<int>& replica_groups,
                          const std::vector<int64_t>& stage_layers = {});
// The stage groups of a replica set's pipeline (before its layers are known).
std::vector<int> stage_groups(const Plan& p, int group);
// The replica sets of the plan (one set of dp replicas without plan.replicas), each without its
// layout, and the groups their data-parallel ring crosses.
std::vector<ReplicaSet> declared_replica_sets(const Plan& p, std::vector<int>& replica_groups);
// The same plan with `micro_batches` per replica (the layouts stay with the scenario).
Plan plan_for(const Plan& p, int64_t micro_batches);

}  // namespace stepcast::detail
