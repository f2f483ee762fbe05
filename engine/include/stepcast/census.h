// The communication census (HATP): every collective Megatron-LM issues in one iteration on one
// GPU of a pipeline stage, with its kind, group, phase, count, size, link and time. Counts follow
// Megatron-LM's source (NVIDIA/Megatron-LM at d98e8a64ddf3: megatron/core/tensor_parallel/
// mappings.py and layers.py, pipeline_parallel/schedules.py and p2p_communication.py,
// distributed/param_and_grad_buffer.py and finalize_model_grads.py, transformer/moe/
// token_dispatcher.py; tags core_v0.4.0-core_v0.8.0 for older behaviour).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/collectives.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"

namespace stepcast {

// ep: the expert-parallel group of an MoE layer; etp: expert tensor parallel; edp: expert data
// parallel (the group that reduces expert gradients).
enum class CommGroup { tp, cp, pp, dp, embedding, model_parallel, ep, etp, edp };
enum class Phase { forward, backward, recompute, gradient_sync, optimizer };
template <>
struct EnumNames<CommGroup> {
  static constexpr std::array<std::string_view, 9> values = {
      "tp", "cp", "pp", "dp", "embedding", "model_parallel", "ep", "etp", "edp"};
};
template <>
struct EnumNames<Phase> {
  static constexpr std::array<std::string_view, 5> values = {
      "forward", "backward", "recompute", "gradient_sync", "optimizer"};
};
inline const char* to_string(CommGroup v) { return name_of(v).data(); }
inline const char* to_string(Phase v) { return name_of(v).data(); }

struct CommOp {
  CollectiveKind kind = CollectiveKind::all_reduce;
  CommGroup group = CommGroup::tp;
  Phase phase = Phase::forward;
  std::string_view what;  // which tensor, in Megatron-LM's terms (a static string: no copy)
  int64_t count = 0;      // operations per GPU per iteration
  double bytes = 0;       // size of one operation (the full tensor, as nccl-tests counts it)
  int group_size = 1;
  std::string link;       // id of the slowest link the group crosses
  double time_s = 0;      // one operation
  double total_s() const { return time_s * static_cast<double>(count); }
};

// Where a stage sits and what it holds; the census depends on nothing else.
struct StageShape {
  int index = 0;          // pipeline rank
  int64_t layers = 0;     // transformer layers on this GPU (all its virtual chunks)
  bool first = false;     // holds the input embedding
  bool last = false;      // holds the output layer and loss (in a V, the first rank: both)
  // Holds both sides of a V's turn (schedule.h, StagePlacement::v_shape: the last rank), whose
  // activations and gradients between them stay on the GPU.
  bool turn = false;
  double parameters = 0;  // parameters held by one GPU of the stage (before ZeRO sharding)
  double layer_parameters = 0;  // parameters of one dense layer on one GPU (ZeRO-3 gathers these)
  int64_t moe_layers = 0;       // of `layers`, the MoE ones
  double moe_layer_parameters = 0;  // one MoE layer on one GPU, experts included
  double expert_parameters = 0;  // of `parameters`, the routed experts' (reduced over edp)
  bool mtp = false;             // holds the multi-token prediction modules (last stage)
  // Hybrid models: of `layers`, the `*`, `M`, `-` and `G` ones (`E` are the moe_layers).
  int64_t attention_layers = 0, mamba_layers = 0, mlp_layers = 0, gdn_layers = 0;
  // Micro-batches whose activations the stage holds at the schedule's peak (schedule.h's
  // in_flight: min(p - i, m) under 1F1B; interleaved, min(p + (p - 1 - 2i)/v, m).
  double in_flight = 1;
};

// The communication paths a stage's groups use (resolved from the cluster's placement).
struct StagePaths {
  CommPath tp, cp, pp, dp, embedding, model_parallel;
  GroupPlacement dp_placement;  // the DP x CP group that reduces gradients
  // MoE layers: the expert-parallel all-to-all, the expert-TP and expert-TP x EP groups, and
  // the expert data-parallel group.
  AllToAllPath ep;
  CommPath etp, tp_ep, edp;
  GroupPlacement edp_placement;  // the expert data-parallel group
};

StagePaths stage_paths(const Plan& plan, const ClusterGroup& cluster);

std::vector<CommOp> stage_census(const ModelSpec& model, const Plan& plan, const StageShape& stage,
                                 const StagePaths& paths);

// The share of an all-to-all's cross-node bytes the flex dispatcher still sends (1 otherwise):
// a token goes once to each node holding one of its experts.
double flex_remote_scale(const ModelSpec& model, const Plan& plan, const AllToAllPath& path);

// Megatron's DDP bucket size in parameters: max(40 M, 1 M x DP size) when gradient reduction
// overlaps the backward, else one bucket per buffer (megatron/core/distributed).
int64_t dp_buckets(double parameters, const Plan& plan);

}  // namespace stepcast
