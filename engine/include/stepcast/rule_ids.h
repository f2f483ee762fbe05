// The rules an input can break, each by a stable id an error carries (Error::rule), as
// nlohmann::json numbers its exceptions: a caller (the web page) keys on the id and its values,
// never on the message's words. This table is the one list: docs/scenario.md's "Errors" section is
// written from it (`stepcast schema --write-docs`), and a rule site can only name an id that is
// in it (the enum). Ids are a contract: added, never renamed.
//
// Reading errors (text that is not JSON, an unknown key, a wrong type, a number outside the key's
// own range) carry no rule: their code and path say all there is.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "stepcast/enum_names.h"

namespace stepcast {

enum class Rule {
  none,
  // Sizes that must divide one another.
  divides,
  whole_replicas,
  gpus_product,
  batch_split,
  interleaved_batches,
  layer_split,
  stage_chunks,
  cp_divides_sequence,
  expert_grid,
  // Splitting the layers over the pipeline.
  vpp_needs_pp,
  schedule_stages,
  schedule_batches,
  dualpipe_layout,
  uneven_split,
  one_uneven_split,
  stages_alone,
  auto_stage_split,
  layout_alone,
  layout_syntax,
  layout_stages,
  layout_order,
  layout_layers,
  // Where stages and replicas run.
  stages_or_replicas,
  groups_placement,
  stage_count,
  group_index,
  stage_layers,
  replica_count,
  replica_batches,
  group_gpus,
  rank_order,
  rank_order_groups,
  rank_order_pipeline,
  // What the training software and the plan's settings need.
  framework_cannot,
  optimizer_sharding,
  needs_sequence_parallel,
  needs_grad_reduce_overlap,
  needs_fp8,
  muon_zero_stage,
  muon_precision,
  moments_optimizer,
  adafactor_hybrid,
  needs_moe,
  moe_overlap,
  moe_rank_capacity,
  moe_imbalance,
  recompute_modules,
  recompute_num_layers,
  offload_layers,
  offload_conflict,
  offload_modules,
  offload_modules_conflict,
  optimizer_offload,
  master_weights,
  host_link,
  precision_supported,
  // The model's shape and the cluster's links.
  top_k,
  layer_pattern,
  moe_layers,
  router_groups,
  mla_dims,
  attention_chunk,
  hybrid_pattern,
  mamba_dims,
  gdn_dims,
  link_scope,
  // Share links (share_link.h).
  link_incomplete,
  // Budgets (limits.h): more work than one call may do.
  max_gpus,
  max_groups,
  max_list_entries,
  max_parameters,
  max_stage_evaluations,
  max_balance_work,
  max_search,
  max_scaling_points,
};

// id, what breaking it means, and the values the error carries (Error::values, a JSON object).
struct RuleInfo {
  Rule rule;
  std::string_view id;
  std::string_view meaning;
  std::string_view values;
};

inline constexpr RuleInfo kRules[] = {
    {Rule::none, "", "", ""},
    {Rule::divides, "divides",
     "a size must divide another: `plan.tp` the attention heads, the KV heads and the FFN size; "
     "`plan.ep` the experts; `plan.etp` the experts' FFN size; `plan.micro_batch` the global "
     "batch (with `plan.replicas`); `model.heads` the hidden size (without `head_dim`); "
     "`model.kv_heads` the heads",
     "`divisor_key`, `divisor`, `dividend_key`, `dividend`; `would_divide` (divisors that would, "
     "for `plan.tp` and `plan.ep`)"},
    {Rule::whole_replicas, "whole_replicas",
     "`plan.dp` left out: the cluster's GPUs must hold whole model replicas of tp·pp·cp GPUs",
     "`gpus`, `tp`, `pp`, `cp`, `replica_gpus`; `gpus_per_node` and `would_fit_nodes` (node "
     "counts near the cluster's that would, one group whose nodes hold whole TP groups only)"},
    {Rule::gpus_product, "gpus_product",
     "`plan.dp` given: tp·pp·cp·dp must equal the cluster's GPUs",
     "`tp`, `pp`, `cp`, `dp`, `product`, `gpus`"},
    {Rule::batch_split, "batch_split",
     "the global batch must be a multiple of micro-batch · dp",
     "`global_batch`, `micro_batch`, `dp`, `would_split` (the global batches below and above "
     "that would)"},
    {Rule::interleaved_batches, "interleaved_batches",
     "with `plan.vpp` > 1, the micro-batches per replica must be a multiple of `plan.pp` "
     "(Megatron's interleaved schedule runs them in groups of pp)",
     "`micro_batches`, `pp`, `vpp`, `would_split` (global batches that would)"},
    {Rule::layer_split, "layer_split",
     "the layers (plus the embedding and the loss where they count as layers) must split "
     "evenly over pp·vpp model chunks",
     "`layers`, `counted`, `pp`, `vpp`; for the plain split also `would_divide` (pp·vpp that "
     "would), `count_embedding` and `count_loss` (counting them as layers would split), "
     "`first_stage_layers`, `last_stage_layers`, `other_stage_layers` (Megatron's uneven split "
     "that would), else `pipeline_layout` (Megatron's layout as NVIDIA's recipes write it)"},
    {Rule::stage_chunks, "stage_chunks",
     "a pipeline stage's layers (plus those counted) must split into `plan.vpp` chunks",
     "`layers`, `counted`, `vpp`; for first and last stage layers also `pp` and the splits at "
     "this vpp that would replace them, named as for `layer_split`"},
    {Rule::cp_divides_sequence, "cp_divides_sequence",
     "the sequence length must be a multiple of 2·cp (Megatron splits each sequence into 2·cp "
     "chunks)",
     "`seq_len`, `cp`"},
    {Rule::expert_grid, "expert_grid",
     "etp·ep·pp must divide the GPUs (tp·cp·dp·pp): the expert grid folds onto the same GPUs",
     "`etp`, `ep`, `pp`, `gpus`"},
    {Rule::vpp_needs_pp, "vpp_needs_pp",
     "`plan.vpp` > 1 needs `plan.pp` > 1 (the interleaved schedule splits pipeline stages)",
     "`vpp`"},
    {Rule::schedule_stages, "schedule_stages",
     "`plan.schedule` needs its pipeline: `interleaved` vpp > 1 and pp > 1, `zero_bubble` pp > "
     "1 and vpp 1, `zbv` and `dualpipev` pp > 1 and vpp 2, `dualpipe` an even pp and vpp 1, "
     "`1f1b` vpp 1",
     "`schedule`, `pp`, `vpp`"},
    {Rule::schedule_batches, "schedule_batches",
     "`dualpipev` and `dualpipe` need at least 2·pp micro-batches per replica, each replica "
     "set's given, and `dualpipe` an even number (deepseek-ai/DualPipe's DualPipeV.step and "
     "DualPipe.step assert it)",
     "`schedule`, `micro_batches`, `pp`; `would_split` (global batches that would)"},
    {Rule::dualpipe_layout, "dualpipe_layout",
     "`dualpipe` with `plan.stages` or `plan.replicas` is not modelled (its mirrored halves run "
     "as two replicas of DualPipeV's pipeline)",
     "`schedule`"},
    {Rule::uneven_split, "uneven_split",
     "`first_stage_layers` and `last_stage_layers` must leave the other stages an equal whole "
     "number of layers",
     "`first_stage_layers`, `last_stage_layers`, `layers`, `pp`, `other_stages`"},
    {Rule::one_uneven_split, "one_uneven_split",
     "first/last stage layers and the embedding or loss counted as layers are two uneven "
     "splits: Megatron takes one",
     ""},
    {Rule::stages_alone, "stages_alone",
     "`plan.stages` gives every stage's layers: first/last stage layers go with it",
     ""},
    {Rule::auto_stage_split, "auto_stage_split",
     "\"auto\" stage layers with the embedding or the loss counted as layers are not modelled",
     ""},
    {Rule::layout_alone, "layout_alone",
     "`plan.pipeline_layout` gives the whole split: no other split key goes with it", ""},
    {Rule::layout_syntax, "layout_syntax",
     "`plan.pipeline_layout` cannot be read (symbols E t m L, '|' between stages, repeats)",
     "`position` (the character, from 1) where it can say"},
    {Rule::layout_stages, "layout_stages",
     "`plan.pipeline_layout` must have pp·vpp stages", "`stages`, `pp`, `vpp`"},
    {Rule::layout_order, "layout_order",
     "`plan.pipeline_layout`: the embedding goes in the first stage, the loss and the MTP "
     "modules in the last",
     "`stage`"},
    {Rule::layout_layers, "layout_layers",
     "`plan.pipeline_layout` must hold every layer and MTP module of the model once",
     "`layers`, `mtp_layers`, `model_layers`, `model_mtp_layers`"},
    {Rule::stages_or_replicas, "stages_or_replicas",
     "`plan.stages` and `plan.replicas` together are not modelled", ""},
    {Rule::groups_placement, "groups_placement",
     "a cluster of several groups whose stages do not fall within one group each needs "
     "`plan.stages` or `plan.replicas`",
     "`groups`, `stage_gpus`"},
    {Rule::stage_count, "stage_count", "`plan.stages` must have `plan.pp` entries",
     "`entries`, `pp`"},
    {Rule::group_index, "group_index", "a stage or replica set names a group the cluster lacks",
     "`group`, `groups`"},
    {Rule::stage_layers, "stage_layers",
     "the layers of `plan.stages` must add up to the model's (each \"auto\" stage a multiple of "
     "vpp)",
     "`layers` (given), `model_layers`, `auto_stages`, `vpp`"},
    {Rule::replica_count, "replica_count", "`plan.replicas` must count `plan.dp` replicas",
     "`replicas`, `dp`"},
    {Rule::replica_batches, "replica_batches",
     "the micro-batches of `plan.replicas` must add up to global batch / micro-batch",
     "`micro_batches` (given), `auto_replicas`, `total`"},
    {Rule::group_gpus, "group_gpus", "the plan must use each group's GPUs exactly",
     "`group`, `used`, `gpus`"},
    {Rule::rank_order, "rank_order",
     "`plan.rank_order` must name tp, cp, ep, dp and pp once each, joined by '-'", ""},
    {Rule::rank_order_groups, "rank_order_groups",
     "a rank order other than Megatron's default needs one cluster group and no "
     "`plan.stages` or `plan.replicas`",
     ""},
    {Rule::rank_order_pipeline, "rank_order_pipeline",
     "a rank order with pp before another dimension needs the expert data-parallel size to "
     "equal `plan.dp` (Megatron-Core's dense and expert grids share their pipeline groups)",
     "`edp`, `dp`"},
    {Rule::framework_cannot, "framework_cannot",
     "the training software (`plan.framework`) cannot do a setting the plan turns on",
     "`framework`, `reason`"},
    {Rule::optimizer_sharding, "optimizer_sharding",
     "`plan.zero_stage` and `plan.distributed_optimizer` both given must agree: the distributed "
     "optimizer is sharding at ZeRO stage 1 or above (true with `zero_stage` 1-3, false with 0); "
     "one of them given sets the other",
     "`zero_stage`, `distributed_optimizer`"},
    {Rule::needs_sequence_parallel, "needs_sequence_parallel",
     "`plan.tp_comm_overlap`, or TP in a mixture-of-experts model, needs "
     "`plan.sequence_parallel`",
     "`tp`"},
    {Rule::needs_grad_reduce_overlap, "needs_grad_reduce_overlap",
     "`plan.overlap_param_gather` with the distributed optimizer needs "
     "`plan.overlap_grad_reduce` (Megatron-LM asserts it)",
     ""},
    {Rule::needs_fp8, "needs_fp8", "`plan.fp8_param_gather` needs `plan.precision` fp8 or mxfp8",
     "`precision`"},
    {Rule::muon_zero_stage, "muon_zero_stage",
     "`plan.optimizer` muon shards at most as the distributed optimizer does (ZeRO-1: "
     "Megatron-Core's layer-wise distributed optimizer; it refuses Megatron FSDP and FSDP2)",
     "`zero_stage`"},
    {Rule::muon_precision, "muon_precision",
     "`plan.optimizer` muon cannot train in fp16 (Megatron-Core refuses emerging optimizers "
     "with fp16)",
     "`precision`"},
    {Rule::moments_optimizer, "moments_optimizer",
     "`plan.bf16_moments` keeps Adam's moments in bf16: `plan.optimizer` adam or muon (Adam's "
     "share), not sgd or adafactor",
     "`optimizer`"},
    {Rule::adafactor_hybrid, "adafactor_hybrid",
     "`plan.optimizer` adafactor unsharded (`plan.zero_stage` 0) is not modelled for a hybrid "
     "model's Mamba and Gated DeltaNet mixers",
     "`zero_stage`"},
    {Rule::needs_moe, "needs_moe",
     "an expert setting (`plan.ep`, `plan.etp`, `plan.moe_overlap`, `plan.moe_dispatcher`, "
     "`plan.moe_imbalance`) away from its default needs a mixture-of-experts model",
     ""},
    {Rule::moe_overlap, "moe_overlap",
     "`plan.moe_overlap` (Megatron-Core's EP overlap) needs ep > 1, the alltoall or flex "
     "dispatcher, no full recompute, the interleaved schedule when pipelined and at most one "
     "MTP layer; the error's path is the setting that stops it",
     ""},
    {Rule::moe_rank_capacity, "moe_rank_capacity",
     "`plan.moe_rank_capacity_factor` (Megatron-Core's per-rank token budget) is at least 1 and "
     "needs the flex dispatcher (HybridEP or NCCL-EP: TransformerConfig refuses it otherwise)",
     "`factor`"},
    {Rule::moe_imbalance, "moe_imbalance",
     "`plan.moe_imbalance` above what routing can put on one expert-parallel rank: each token "
     "picks top_k distinct experts and a rank holds experts/ep of them, so the busiest rank "
     "receives at most min(ep, experts/top_k) times the mean",
     "`moe_imbalance`, `most`, `ep`, `experts`, `top_k`"},
    {Rule::recompute_modules, "recompute_modules",
     "a name in `plan.recompute_modules` is not one of Megatron-Core's modules the engine models "
     "(`mla_up_proj` only with multi-latent attention)",
     "`module`, `allowed`"},
    {Rule::recompute_num_layers, "recompute_num_layers",
     "`plan.recompute_num_layers` of full recompute is more than a pipeline rank's layers",
     "`recompute_num_layers`, `most`"},
    {Rule::offload_layers, "offload_layers",
     "`plan.cpu_offloading_num_layers` must be below the model's layers (Megatron-Core offloads "
     "fewer layers than the model has; with no pipeline, a stage holds them all)",
     "`cpu_offloading_num_layers`, `most`"},
    {Rule::offload_conflict, "offload_conflict",
     "Megatron-Core's activation offloading (`plan.cpu_offloading_num_layers`) runs without a "
     "pipeline and without recompute; the error's path is the setting that stops it",
     "`setting`, `value`"},
    {Rule::offload_modules, "offload_modules",
     "a name in `plan.offload_modules` is not one of Megatron-Core's --offload-modules the engine "
     "models, or needs a part the model lacks (`expert_fc1`, `moe_act`: an MoE model)",
     "`module`, `allowed`"},
    {Rule::offload_modules_conflict, "offload_modules_conflict",
     "a combination Megatron-Core refuses with fine-grained offloading (`plan.offload_modules`): "
     "`attn_proj` without `core_attn`, layer-level offloading beside it, or offloading inside "
     "the MoE block while `moe` is recomputed; `setting` names the other part",
     "`setting`, `value`"},
    {Rule::optimizer_offload, "optimizer_offload",
     "a setting Megatron-Core refuses with optimizer offloading (`plan.optimizer_cpu_offload`): "
     "an optimizer other than Adam or SGD, bf16 moments, ZeRO-2/3, or fp8 parameter gathers "
     "under mxfp8 or nvfp4; `setting` names it",
     "`setting`, `value`"},
    {Rule::master_weights, "master_weights",
     "a master copy other than fp32 (`plan.master_weights` remainders or none) with a setting "
     "that keeps an fp32 one or has none to drop: fp32 training, an optimizer other than Adam, "
     "remainders of fp16 weights, fp8 parameters, remainders beside bf16 moments, or optimizer "
     "offloading; `setting` names it",
     "`setting`, `value`"},
    {Rule::host_link, "host_link",
     "activation or optimizer offloading needs the node's link to host memory, which a node "
     "preset states "
     "(`host_link_GBps_per_dir`) and a cluster described key by key does not",
     "`node`"},
    {Rule::precision_supported, "precision_supported",
     "the GPU has no dense peak at `plan.precision`",
     "`precision`, `gpu`, `supported` (the precisions it has)"},
    {Rule::top_k, "top_k", "`model.moe.top_k` must be at most `model.moe.experts`",
     "`top_k`, `experts`"},
    {Rule::layer_pattern, "layer_pattern",
     "a list `model.moe.layer_freq` must give one entry per layer", "`entries`, `layers`"},
    {Rule::moe_layers, "moe_layers",
     "a mixture-of-experts model must have an MoE layer (`first_dense_layers`, `layer_freq`)",
     ""},
    {Rule::router_groups, "router_groups",
     "`model.moe.router_groups` must divide the experts and be at least "
     "`router_group_top_k`, which needs it",
     ""},
    {Rule::mla_dims, "mla_dims", "multi-head latent attention needs its dimensions", ""},
    {Rule::attention_chunk, "attention_chunk",
     "chunked attention (`model.attention.chunk`) and a sliding window exclude each other; with "
     "CP over a sequence longer than a chunk, each of the 2·cp pieces of a sequence holds whole "
     "chunks (Megatron-Bridge's Llama4SelfAttention asserts it)",
     "`chunk`, `seq_len`, `cp`"},
    {Rule::hybrid_pattern, "hybrid_pattern",
     "`model.layer_pattern` gives one of `M`, `*`, `-`, `E`, `G` per layer (`E` needs "
     "`model.moe`), `model.mtp_pattern` too, with a hybrid model, `model.mtp_layers` and no "
     "mixer the main layers lack (`model.mtp_repeated` needs `model.mtp_layers`); sliding "
     "windows are not modelled on hybrids",
     "`length`, `layers`, `symbol`, `position`"},
    {Rule::mamba_dims, "mamba_dims",
     "`model.mamba` needs `M` layers in `model.layer_pattern`, and its groups divide its heads "
     "and TP divides both; CP over Mamba layers is not modelled",
     ""},
    {Rule::gdn_dims, "gdn_dims",
     "`model.gdn` needs `G` layers in `model.layer_pattern`, its key heads divide its value "
     "heads and TP divides both; CP over Gated DeltaNet layers is not modelled",
     ""},
    {Rule::link_scope, "link_scope",
     "a link in the wrong place: a network link inside a node, a scale-up fabric between "
     "nodes or groups",
     ""},
    {Rule::link_incomplete, "link_incomplete",
     "a share link of format 3 without its end marker `&end`: cut when it was copied",
     "`last` (the last part read), `parts` (how many parts were read)"},
    {Rule::max_gpus, "max_gpus", "the cluster has more GPUs than the engine models",
     "`gpus`, `limit`"},
    {Rule::max_groups, "max_groups", "`cluster.groups` has more entries than the engine models",
     "`entries`, `limit`"},
    {Rule::max_list_entries, "max_list_entries",
     "`plan.stages` or `plan.replicas` has more entries than the engine models",
     "`entries`, `limit`"},
    {Rule::max_parameters, "max_parameters", "the model has more parameters than the engine models",
     "`parameters`, `limit`"},
    {Rule::max_stage_evaluations, "max_stage_evaluations",
     "one estimate would cost more stage evaluations than it may make", "`evaluations`, `limit`"},
    {Rule::max_balance_work, "max_balance_work",
     "balancing \"auto\" layers would cost more than one estimate may (layers × stages)",
     "`work`, `limit`"},
    {Rule::max_search, "max_search",
     "the plans a search would try cost more than one search may (plans, stage evaluations, "
     "simulated blocks)",
     "`plans`, `evaluations`, `blocks` and their limits `max_plans`, "
     "`max_stage_evaluations`, `max_blocks`"},
    {Rule::max_scaling_points, "max_scaling_points",
     "a scaling sweep would estimate more variants than one sweep may", "`points`, `limit`"},
};

inline constexpr size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);

// The table lists every rule once, in the enum's order: name_of(rule) reads it.
constexpr bool rules_in_order() {
  for (size_t i = 0; i < kRuleCount; ++i)
    if (static_cast<size_t>(kRules[i].rule) != i) return false;
  return static_cast<size_t>(Rule::max_scaling_points) + 1 == kRuleCount;
}
static_assert(rules_in_order(), "kRules: one entry per Rule, in the enum's order");

// The ids alone (what an error writes), copied out of kRules at compile time so that a program
// that names rules does not carry their documentation.
template <>
struct EnumNames<Rule> {
  static constexpr std::array<std::string_view, kRuleCount> values = [] {
    std::array<std::string_view, kRuleCount> ids{};
    for (size_t i = 0; i < kRuleCount; ++i) ids[i] = kRules[i].id;
    return ids;
  }();
};

}  // namespace stepcast
