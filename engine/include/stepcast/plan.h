// How it is parallelised: Megatron-LM's tensor / pipeline / context / data parallel plan and the
// options around it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/hardware.h"

namespace stepcast {

enum class Recompute { none, selective, full };
template <>
struct EnumNames<Recompute> {
  static constexpr std::array<std::string_view, 3> values = {"none", "selective", "full"};
};
inline const char* to_string(Recompute v) { return name_of(v).data(); }

// Which layers full recompute checkpoints (Megatron-Core's --recompute-method with
// --recompute-num-layers, transformer_block.py _checkpointed_forward): `uniform` checkpoints the
// input of every group of recompute_num_layers layers and replays a group at a time; `block`
// checkpoints the first recompute_num_layers layers of each model chunk and keeps every
// activation of the rest.
enum class RecomputeMethod { uniform, block };
template <>
struct EnumNames<RecomputeMethod> {
  static constexpr std::array<std::string_view, 2> values = {"uniform", "block"};
};

// Megatron-Core's --recompute-modules (TransformerConfig.recompute_modules, megatron/core/
// transformer/transformer_config.py at NVIDIA/Megatron-LM d98e8a64): the parts of each layer
// selective recompute replays. Its other modules (gdn_norm_out, gdp_in_proj, gdp_qkv, mhc)
// belong to architectures the engine does not express.
inline constexpr std::array<std::string_view, 7> kRecomputeModules = {
    "core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe", "shared_experts"};
inline constexpr std::array<std::string_view, 4> kMegatronOnlyRecomputeModules = {
    "gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc"};
// Calls f(name) for each name of a recompute_modules text (separated by spaces or commas).
// (One pass over the characters: find_first_of(" ,") calls memchr once per character, and
// the memory checks of a search read these lists for every stage of every plan.)
template <class F>
void for_each_recompute_module(std::string_view text, F f) {
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ' ' && text[i] != ',') continue;
    if (i > start) f(text.substr(start, i - start));
    start = i + 1;
  }
}

// Megatron-Core's fine-grained activation offloading (--fine-grained-activation-offloading
// --offload-modules; TransformerConfig.offload_modules, megatron/core/transformer/
// transformer_config.py at NVIDIA/Megatron-LM d98e8a64): the modules whose saved tensors each
// layer copies to host memory after their forward and back before their backward. Its other
// names: gdp_qkv belongs to GatedDeltaProduct, which the engine does not express, and
// fused_group_mlp needs Transformer Engine's op fuser (--use-transformer-engine-op-fuser), which
// the engine does not model.
inline constexpr std::array<std::string_view, 7> kOffloadModules = {
    "attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm", "expert_fc1", "moe_act"};
inline constexpr std::array<std::string_view, 2> kMegatronOnlyOffloadModules = {"fused_group_mlp",
                                                                                "gdp_qkv"};

// How an MoE layer exchanges tokens between expert-parallel ranks (Megatron-Core's
// --moe-token-dispatcher-type).
enum class MoeDispatcher { alltoall, allgather, flex };
template <>
struct EnumNames<MoeDispatcher> {
  static constexpr std::array<std::string_view, 3> values = {"alltoall", "allgather", "flex"};
};
inline const char* to_string(MoeDispatcher v) { return name_of(v).data(); }

// The cross-entropy loss (Megatron-Core's --cross-entropy-loss-fusion with
// --cross-entropy-fusion-impl, language_module.py compute_language_model_loss at NVIDIA/Megatron-LM
// d98e8a64): `none` is tensor_parallel.vocab_parallel_cross_entropy and `native` Megatron's fused
// kernel, both keeping the softmax in fp32 for the backward (4 bytes a logit); `te` is
// Transformer Engine's Triton kernel, which through TE 2.17 writes the logits' gradient over the
// 16-bit logits in place and keeps that (2 bytes a logit; TE 2.18, #3193, keeps an fp32 gradient
// instead: `native`'s memory).
enum class CrossEntropyFusion { none, native, te };
template <>
struct EnumNames<CrossEntropyFusion> {
  static constexpr std::array<std::string_view, 3> values = {"none", "native", "te"};
};
inline const char* to_string(CrossEntropyFusion v) { return name_of(v).data(); }

// The optimizer's master copy of 16-bit weights. `fp32`: a full fp32 copy (Megatron's, 4 bytes
// a parameter). `remainders`: the 16 low bits that with the bf16 weight make the fp32 value (2
// bytes): Apex's DistributedFusedAdam with store_param_remainders, as NeMo sets it for a bf16
// model when the optimizer's dtype is fp32 (nemo/collections/nlp/models/language_modeling/
// megatron_base_model.py lines 800-808 at NVIDIA/NeMo 070a0bb1; the int16 shard in
// apex/contrib/optimizers/distributed_fused_adam.py at NVIDIA/apex 6424da3b). `none`: no copy,
// the optimizer steps the 16-bit weights (NeMo's store_params=False when the optimizer's dtype
// is the model's).
enum class MasterWeights { fp32, remainders, none };
template <>
struct EnumNames<MasterWeights> {
  static constexpr std::array<std::string_view, 3> values = {"fp32", "remainders", "none"};
};
inline const char* to_string(MasterWeights v) { return name_of(v).data(); }

// The optimizer (Megatron-LM's --optimizer, megatron/training/arguments.py at NVIDIA/Megatron-LM
// d98e8a64): Adam, or Muon as Megatron-Core runs it (megatron/core/optimizer/
// emerging_optimizers.py): the 2-D weights of the layers orthogonalised by Newton-Schulz
// iterations, everything else (embeddings, output layer, norms, biases) stepped by Adam; SGD
// (--optimizer sgd, with --sgd-momentum: plan.sgd_momentum); Adafactor (Shazeer & Stern 2018,
// arXiv 1804.04235) as torch.optim.Adafactor runs it: no first moment, the second factored into
// row and column means per matrix. Each physics in optimizer.h.
enum class Optimizer { adam, muon, sgd, adafactor };
template <>
struct EnumNames<Optimizer> {
  static constexpr std::array<std::string_view, 4> values = {"adam", "muon", "sgd", "adafactor"};
};
inline const char* to_string(Optimizer v) { return name_of(v).data(); }
// The pipeline schedule (plan.schedule; schedule.h): Megatron's 1F1B, its interleaved 1F1B
// (vpp > 1), ZB-H1 of Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, which runs the
// backward's weight gradients apart to fill the drain, and the same paper's ZB-V (two chunks per
// rank in a V), and DeepSeek's DualPipeV (the same V, forward and backward passes of two
// micro-batches paired).
enum class PipelineSchedule { one_f_one_b, interleaved, zero_bubble, zbv, dualpipev, dualpipe };
template <>
struct EnumNames<PipelineSchedule> {
  static constexpr std::array<std::string_view, 6> values = {
      "1f1b", "interleaved", "zero_bubble", "zbv", "dualpipev", "dualpipe"};
};

// How the training software runs what the plan describes (the framework profile's "execution"
// part, presets/frameworks/): not scenario keys, but read by the physics.
enum class Kernels { fused, eager };     // Transformer Engine / Megatron fused kernels, or eager
enum class Zero3Fetch { layer, module };  // ZeRO-3 gathers per transformer layer, or per linear
template <>
struct EnumNames<Kernels> {
  static constexpr std::array<std::string_view, 2> values = {"fused", "eager"};
};
template <>
struct EnumNames<Zero3Fetch> {
  static constexpr std::array<std::string_view, 2> values = {"layer", "module"};
};
struct Execution {
  Kernels kernels = Kernels::fused;
  Zero3Fetch zero3_fetch = Zero3Fetch::layer;
  bool grad_reduce_every_micro_batch = false;  // ZeRO-2/3 (DeepSpeed), FSDP
  // ZeRO-3: each gathered unit is copied out of the all-gather's buffer into its parameters on
  // the compute stream (FSDP2's foreach_all_gather_copy_out), not gathered in place.
  bool zero3_copy_out = false;
  // MoE: the router's probabilities scale the experts' activation (fc1's output), not their
  // output, so the combine keeps no expert output for the backward (Megatron-Core from
  // core_v0.13.0).
  bool moe_probs_in_activation = false;
  // The loss (Megatron's, unless Transformer Engine's): at the start of the backward it makes the
  // logits' 16-bit gradient beside the fp32 softmax it computed it over, both held at once.
  bool loss_grad_copy = false;
};

// Where pipeline stage i runs and how many layers it holds (heterogeneous and uneven layouts).
struct StageAssignment {
  int group = 0;       // index into cluster.groups
  int64_t layers = 0;  // 0: chosen by the engine (balanced by stage speed and memory)
};

// A set of identical data-parallel replicas on one group, with its share of the micro-batches.
struct ReplicaAssignment {
  int group = 0;
  int count = 1;              // replicas in the set
  int64_t micro_batches = 0;  // per replica per iteration; 0: balanced by replica speed
};

struct Plan {
  std::string framework = "megatron-core";  // presets/frameworks/<id>.json
  Execution execution;                      // from the framework profile
  int tp = 1;
  int pp = 1;
  int dp = 1;
  bool dp_derived = false;  // dp was left out and taken from the cluster's GPU count
  int cp = 1;
  int vpp = 1;  // virtual pipeline stages (model chunks) per pipeline rank; >1 = interleaved 1F1B
  // The pipeline schedule as given; left out (schedule_derived), the one vpp implies:
  // effective_schedule().
  PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  bool schedule_derived = true;
  // Mixture of experts: the expert grid etp x ep x edp x pp folds onto the same GPUs as
  // tp x cp x dp x pp (Megatron-Core's "parallel folding").
  int ep = 1;
  int etp = 1;  // expert tensor parallel (defaults to tp)
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  bool moe_overlap = false;   // EP all-to-alls overlap the adjacent micro-batch's compute
  double moe_imbalance = 1;   // busiest expert's tokens over the mean
  // Megatron-Core's --moe-expert-rank-capacity-factor (HybridEP/NCCL-EP flex backends): each EP
  // rank receives at most this many times its balanced share of tokens into a buffer of fixed
  // size, so the token counts stay on the GPU (no per-layer host sync; CUDA graphs can capture
  // the whole MoE layer) and tokens past the budget are dropped. 0: none (dropless, the counts
  // copied to the host).
  double moe_rank_capacity = 0;
  // The busiest EP rank's tokens over the balanced share: the imbalance, within the budget.
  double busiest_rank_load() const {
    return moe_rank_capacity > 0 && moe_rank_capacity < moe_imbalance ? moe_rank_capacity
                                                                       : moe_imbalance;
  }
  // Share of each GPU's memory a plan must leave free to be called fitting (fields.cpp: why 3 %).
  double memory_headroom = 0.03;
  // PyTorch's caching allocator with expandable segments (PYTORCH_CUDA_ALLOC_CONF=
  // expandable_segments:True): it unmaps cached pages before it would run out, so its cache
  // never makes a plan not fit (memory.cpp).
  bool expandable_segments = false;
  // Each linear whose weight gradient accumulates into main_grad hands autograd a dummy weight
  // gradient that Transformer Engine caches, one per weight shape, for the process (from its
  // release v2.3; its grouped GEMMs' from v2.10): held at every peak (wgrad_dummies.cpp). The
  // framework profile's; a run on an older Transformer Engine sets it false.
  bool dummy_wgrads = false;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  // How ranks are numbered, innermost first (Megatron-Core's RankGenerator order, ranks.h).
  std::string rank_order = "tp-cp-ep-dp-pp";
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  // Selective recompute's modules, Megatron's names separated by spaces or commas.
  std::string recompute_modules = "core_attn";
  RecomputeMethod recompute_method = RecomputeMethod::uniform;  // full recompute's layers
  int64_t recompute_num_layers = 1;
  Optimizer optimizer = Optimizer::adam;
  // SGD's momentum factor (--sgd-momentum, 0.9 by default: megatron/training/arguments.py at
  // NVIDIA/Megatron-LM d98e8a64); 0 is plain SGD. Read only under plan.optimizer sgd.
  double sgd_momentum = 0.9;
  bool distributed_optimizer = false;
  int zero_stage = 0;  // 0-3; distributed_optimizer implies at least 1
  // ZeRO-3 / FSDP: the fetch units (layers, or DeepSpeed's sub-modules) whose parameters are
  // gathered ahead of the one computing (sharded_gathers.h); 0: each gather waits for the compute
  // before it. FSDP's BACKWARD_PRE and forward prefetch, FSDP2's implicit prefetch: 1.
  int zero3_prefetch = 1;
  Precision precision = Precision::bf16;
  // Options that Megatron-LM exposes as flags; defaults follow its current recommended recipes.
  bool flash_attention = true;       // fused attention: no s x s matrix stored or re-read
  bool overlap_grad_reduce = true;   // DP gradient buckets overlap the last backward
  bool overlap_param_gather = true;  // distributed-optimizer all-gather overlaps next forward
  bool tp_comm_overlap = false;      // TE userbuffers: TP collectives overlap GEMMs
  bool overlap_p2p = true;           // interleaved schedule overlaps send/recv with compute
  bool grad_reduce_in_fp32 = true;   // bf16 training reduces fp32 main grads (Megatron default)
  // Adam's two moments in bf16 beside fp32 master weights: Megatron-Core's precision-aware
  // optimizer (--use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16), as
  // Megatron-Bridge's Moonlight-16B (H100) and DeepSeek-V4-Flash MXFP8 (GB200) recipes run;
  // fp32 moments by default.
  bool bf16_moments = false;
  MasterWeights master_weights = MasterWeights::fp32;  // the master copy of 16-bit weights
  // Megatron-LM 2.x (2021-22) sent 1/tp of each activation between pipeline stages and
  // all-gathered it over NVLink on arrival (SC21 sec. 4.1, --scatter-gather-tensors-in-pipeline);
  // Megatron-Core sends whole tensors unless sequence parallelism already splits them.
  bool pp_scatter_gather = false;
  bool fp8_param_gather = false;  // low-precision training gathers fp8 parameters (and keeps them)
  bool cuda_graphs = false;       // kernels launched from captured CUDA graphs, not one by one
  CrossEntropyFusion cross_entropy_fusion = CrossEntropyFusion::none;
  // Megatron's --hidden-dropout (TransformerConfig.hidden_dropout): the dropout probability of
  // the embedding and of each bias-dropout-add. Above 0 each keeps a 1-byte mask for the
  // backward; at 0 PyTorch's dropout returns its input and keeps none (ATen's Dropout.cpp
  // _dropout_impl), as the recipes run (the framework profile's default).
  double hidden_dropout = 0.1;
  // Megatron-Core's layer-level activation offloading (--cpu-offloading with
  // --cpu-offloading-num-layers, TransformerConfig.cpu_offloading_num_layers at NVIDIA/Megatron-LM
  // d98e8a64): the activations of that many layers live in host memory between their forward and
  // their backward, copied over the host link while the next layer computes (Transformer
  // Engine's get_cpu_offload_context). 0: none.
  int64_t cpu_offloading_num_layers = 0;
  // Megatron-Core's fine-grained activation offloading by module (kOffloadModules, separated by
  // spaces or commas; physics/offload.h): every layer's listed modules' saved tensors wait in
  // host memory between their forward and their backward. Empty: none.
  std::string offload_modules;
  // Megatron-Core's optimizer offloading (--optimizer-cpu-offload --optimizer-offload-fraction
  // --overlap-cpu-optimizer-d2h-h2d: HybridDeviceOptimizer, megatron/core/optimizer/
  // cpu_offloading/hybrid_optimizer.py at NVIDIA/Megatron-LM d98e8a64; physics/offload.h): that
  // fraction of each GPU's optimizer parameters keep their fp32 master copy and moments in host
  // memory and are stepped by the CPU; their gradients cross the host link to it and the updated
  // parameters back. The fraction is read only with the switch (Megatron-LM's default 1.0).
  bool optimizer_cpu_offload = false;
  double optimizer_offload_fraction = 1.0;
  bool overlap_cpu_optimizer_d2h_h2d = false;  // copies and CPU step pipelined per parameter

  // Megatron's uneven pipeline splits: layers on the first and last stage (0: the even share),
  // and whether the input embedding and the loss count as a layer each in the split
  // (--decoder-first/last-pipeline-num-layers, --account-for-embedding/loss-in-pipeline-split).
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  bool embedding_in_split = false;
  bool loss_in_split = false;
  // Megatron-Core's free-form layout of blocks per virtual stage (pipeline_layout.h); empty: the
  // splits above.
  std::string pipeline_layout;

  // Optional layouts for clusters of several groups (or uneven splits on one group). Empty
  // stages: pp stages of layers/pp on group 0; empty replicas: dp identical replicas.
  std::vector<StageAssignment> stages;
  std::vector<ReplicaAssignment> replicas;

  int64_t micro_batches() const { return global_batch / (micro_batch * dp); }
  // Whether selective recompute replays `module` (one of kRecomputeModules).
  bool recomputes(std::string_view module) const {
    bool found = false;
    if (recompute == Recompute::selective)
      for_each_recompute_module(recompute_modules,
                                [&](std::string_view name) { found = found || name == module; });
    return found;
  }
  // The share of the optimizer's parameters stepped on the CPU (0 without optimizer offloading).
  double optimizer_offloaded_share() const {
    return optimizer_cpu_offload ? optimizer_offload_fraction : 0.0;
  }
  // Whether fine-grained offloading moves `module`'s saved tensors (one of kOffloadModules).
  bool offloads(std::string_view module) const {
    bool found = false;
    for_each_recompute_module(offload_modules,
                              [&](std::string_view name) { found = found || name == module; });
    return found;
  }
  // Expert data-parallel size: the GPUs of one pipeline stage over the expert grid's etp x ep.
  int edp() const { return static_cast<int>(int64_t{tp} * cp * dp / (int64_t{etp} * ep)); }
  // The schedule the plan runs: as given, or interleaved with model chunks on a pipeline and
  // 1F1B otherwise (what Megatron runs for vpp).
  PipelineSchedule effective_schedule() const {
    if (!schedule_derived) return schedule;
    return vpp > 1 && pp > 1 ? PipelineSchedule::interleaved : PipelineSchedule::one_f_one_b;
  }
  int effective_zero_stage() const {
    return distributed_optimizer && zero_stage < 1 ? 1 : zero_stage;
  }
  // Where a switch can act at all, each stated once: effective() turns a switch off elsewhere,
  // and parse_plan a framework profile's default (scenario/read.cpp), which also leaves a
  // profile's switch off where the plan's own would break a rule (`..._allowed`, the rules of
  // scenario/rules.cpp: an explicit value is an error there, a profile's is quietly off).
  bool sequence_parallel_acts() const { return tp > 1; }
  bool tp_comm_overlap_acts() const { return tp > 1; }
  bool tp_comm_overlap_allowed() const { return sequence_parallel; }
  bool param_gather_overlap_acts() const { return effective_zero_stage() >= 1; }
  bool param_gather_overlap_allowed() const {
    return overlap_grad_reduce || effective_zero_stage() >= 3;
  }
  // The plan as the training software runs it, which the resolved plan, the report and the
  // exporters show: sequence parallelism and the TP overlap only with TP (Megatron-LM turns
  // sequence parallelism off at tp = 1, after which its --tp-comm-overlap assert fails;
  // Megatron-Bridge turns the TP overlap off there), the parameter all-gather's overlap only
  // with sharding (there is no gather; Megatron-LM asserts the distributed optimizer), the p2p
  // overlap only with model chunks (Megatron-LM turns it off without the interleaved schedule,
  // as the physics does; DualPipe runs two chunks a rank, plan_as_run in schedule.h), the ZeRO
  // stage the flags imply.
  Plan effective() const {
    Plan p = *this;
    p.sequence_parallel = sequence_parallel && sequence_parallel_acts();
    p.tp_comm_overlap = tp_comm_overlap && tp_comm_overlap_acts();
    p.overlap_p2p =
        overlap_p2p && (vpp > 1 || effective_schedule() == PipelineSchedule::dualpipe);
    p.overlap_param_gather = overlap_param_gather && param_gather_overlap_acts();
    p.zero_stage = effective_zero_stage();
    p.distributed_optimizer = p.zero_stage >= 1;
    return p;
  }
};

}  // namespace stepcast
