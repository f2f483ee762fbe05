// Rule ids on errors (engine/include/stepcast/rule_ids.h): each rule broken by a scenario written
// for it, its id, path and values as the table documents them (values worked out by hand from
// the presets' shapes), the id and values in the error's JSON, and every id of the table met by
// a case here, so a documented id cannot be one no rule site uses.
#include <gtest/gtest.h>

#include <set>

#include "stepcast/limits.h"
#include "stepcast/rule_ids.h"
#include "stepcast/scaling.h"
#include "stepcast/schema.h"
#include "stepcast/search.h"
#include "test_util.h"

namespace stepcast {
namespace {

using test::doc;

// A small custom model: its shape (8 layers of 1,024 by default) and any more keys.
std::string model(const std::string& more,
                  const std::string& shape = R"("layers": 8, "hidden": 1024, "heads": 8,
                                                "ffn_hidden": 4096)") {
  return R"({"name": "m", )" + shape +
         R"(, "vocab": 32000, "seq_len": 2048, "ffn_type": "swiglu", "position": "rope",
             "tied_embeddings": false)" +
         more + "}";
}

std::string repeat(const std::string& item, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? "," : "") + item;
  return out;
}

struct RuleCase {
  const char* name;
  std::string json;
  Rule rule;
  const char* path;
  Json values;  // a subset of the error's values
};
void PrintTo(const RuleCase& c, std::ostream* os) { *os << c.name; }

const std::string kMixtral = R"("mixtral-8x7b")";
const std::string kTwoGroups =
    R"({"groups": [{"node": "dgx-h100", "nodes": 1}, {"node": "dgx-h100", "nodes": 2}]})";

const std::vector<RuleCase>& cases() {
  static const std::vector<RuleCase> all = {
      // Llama 3 70B: 64 heads, 8 KV heads, FFN 28,672, 80 layers; DGX H100: 8 GPUs a node.
      {"tp_kv_heads", doc(R"({"tp": 16, "global_batch": 8})", R"("llama3-70b")",
                          R"({"node": "dgx-h100", "nodes": 2})"),
       Rule::divides, "plan.tp",
       {{"divisor_key", "plan.tp"}, {"divisor", 16}, {"dividend_key", "model.kv_heads"},
        {"dividend", 8}, {"would_divide", {1, 2, 4, 8}}}},
      // Mixtral 8x7B: 8 experts; 24 GPUs at tp 1 leave dp 24.
      {"ep_experts", doc(R"({"ep": 3, "global_batch": 48})", kMixtral,
                         R"({"node": "dgx-h100", "nodes": 3})"),
       Rule::divides, "plan.ep",
       {{"divisor_key", "plan.ep"}, {"divisor", 3}, {"dividend_key", "model.moe.experts"},
        {"dividend", 8}, {"would_divide", {1, 2, 4, 8}}}},
      {"micro_batch_replicas",
       doc(R"({"tp": 8, "global_batch": 10, "micro_batch": 4,
               "replicas": [{"group": 0, "count": 8}]})"),
       Rule::divides, "plan.global_batch",
       {{"divisor_key", "plan.micro_batch"}, {"divisor", 4},
        {"dividend_key", "plan.global_batch"}, {"dividend", 10}}},
      {"heads_hidden", doc(R"({"global_batch": 8})", model("", R"("layers": 8, "hidden": 1000, "heads": 3,
                                                         "ffn_hidden": 4096)")),
       Rule::divides, "model.hidden",
       {{"divisor_key", "model.heads"}, {"divisor", 3}, {"dividend_key", "model.hidden"},
        {"dividend", 1000}}},
      // 56 GPUs, replicas of 8 x 4 = 32: 4 or 8 nodes hold whole ones (32 / gcd(32, 8) = 4).
      {"whole_replicas", doc(R"({"tp": 8, "pp": 4, "global_batch": 512})", R"("llama3-70b")",
                             R"({"node": "dgx-h100", "nodes": 7})"),
       Rule::whole_replicas, "plan.dp",
       {{"gpus", 56}, {"tp", 8}, {"pp", 4}, {"cp", 1}, {"replica_gpus", 32},
        {"gpus_per_node", 8}, {"would_fit_nodes", {4, 8}}}},
      {"gpus_product", doc(R"({"tp": 8, "pp": 4, "dp": 4, "global_batch": 512})"),
       Rule::gpus_product, "plan.dp",
       {{"tp", 8}, {"pp", 4}, {"cp", 1}, {"dp", 4}, {"product", 128}, {"gpus", 64}}},
      // 6 is not a multiple of 2 x 2; 4 and 8 are.
      {"batch_split", doc(R"({"tp": 8, "pp": 4, "dp": 2, "micro_batch": 2, "global_batch": 6})"),
       Rule::batch_split, "plan.global_batch",
       {{"global_batch", 6}, {"micro_batch", 2}, {"dp", 2}, {"would_split", {4, 8}}}},
      // 6 / (1 x 2) = 3 micro-batches, not a multiple of pp 4; 8 would be.
      {"interleaved_batches",
       doc(R"({"tp": 8, "pp": 4, "vpp": 2, "dp": 2, "global_batch": 6})"),
       Rule::interleaved_batches, "plan.global_batch",
       {{"micro_batches", 3}, {"pp", 4}, {"vpp", 2}, {"would_split", {8}}}},
      // 80 layers on 3 stages: 81 = 80 + the loss divides by 3.
      {"layer_split", doc(R"({"tp": 8, "pp": 3, "global_batch": 8})", R"("llama3-70b")",
                          R"({"node": "dgx-h100", "nodes": 3})"),
       Rule::layer_split, "plan.pp",
       {{"layers", 80}, {"counted", 0}, {"pp", 3}, {"vpp", 1},
        {"would_divide", {1, 2, 4, 5, 8, 10, 16, 20, 40}}, {"count_embedding", false},
        {"count_loss", true}}},
      {"layer_split_counted",
       doc(R"({"tp": 8, "pp": 3, "global_batch": 8, "embedding_in_split": true,
               "loss_in_split": true})",
           R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 3})"),
       Rule::layer_split, "plan.pp", {{"layers", 80}, {"counted", 2}, {"pp", 3}, {"vpp", 1}}},
      {"stage_chunks",
       doc(R"({"tp": 8, "pp": 2, "vpp": 2, "global_batch": 64,
               "stages": [{"group": 0, "layers": 41}, {"group": 0, "layers": 39}]})"),
       Rule::stage_chunks, "plan.stages[0].layers", {{"layers", 41}, {"counted", 0}, {"vpp", 2}}},
      {"cp_sequence", doc(R"({"tp": 8, "cp": 8, "global_batch": 8})", R"("llama3-70b")",
                          R"({"node": "dgx-h100", "nodes": 8})", R"(, "seq_len": 1000)"),
       Rule::cp_divides_sequence, "plan.cp", {{"seq_len", 1000}, {"cp", 8}}},
      // One node: tp 2 x dp 4 = 8 GPUs a stage; etp 2 x ep 8 = 16 does not fold onto them.
      {"expert_grid", doc(R"({"tp": 2, "ep": 8, "etp": 2, "global_batch": 8})", kMixtral,
                          R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::expert_grid, "plan.ep", {{"etp", 2}, {"ep", 8}, {"pp", 1}, {"gpus", 8}}},
      {"vpp_needs_pp", doc(R"({"tp": 8, "pp": 1, "vpp": 2, "global_batch": 8})"),
       Rule::vpp_needs_pp, "plan.vpp", {{"vpp", 2}}},
      {"schedule_stages",
       doc(R"({"tp": 8, "pp": 1, "global_batch": 8, "schedule": "zero_bubble"})"),
       Rule::schedule_stages, "plan.schedule", {{"schedule", "zero_bubble"}, {"pp", 1}, {"vpp", 1}}},
      // DualPipeV fills its V with 2·pp = 8 micro-batches; 4 is too few (8 or 9 would do).
      {"schedule_batches",
       doc(R"({"tp": 8, "pp": 4, "vpp": 2, "global_batch": 4, "schedule": "dualpipev"})",
           R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})"),
       Rule::schedule_batches, "plan.global_batch",
       {{"schedule", "dualpipev"}, {"micro_batches", 4}, {"pp", 4}, {"would_split", {8, 9}}}},
      // DualPipe's mirrored halves run as two replicas of DualPipeV: its own replica sets are not
      // modelled.
      {"dualpipe_layout",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "schedule": "dualpipe",
               "replicas": [{"count": 2, "micro_batches": 16}]})",
           R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})"),
       Rule::dualpipe_layout, "plan.replicas", {{"schedule", "dualpipe"}}},
      // 80 - 11 - 10 = 59 layers for 2 stages.
      {"uneven_split",
       doc(R"({"tp": 8, "pp": 4, "first_stage_layers": 11, "last_stage_layers": 10,
               "global_batch": 8})"),
       Rule::uneven_split, "plan.first_stage_layers",
       {{"first_stage_layers", 11}, {"last_stage_layers", 10}, {"layers", 80}, {"pp", 4},
        {"other_stages", 2}}},
      {"one_uneven_split",
       doc(R"({"tp": 8, "pp": 4, "first_stage_layers": 10, "embedding_in_split": true,
               "global_batch": 8})"),
       Rule::one_uneven_split, "plan.first_stage_layers", Json::object()},
      {"stages_alone",
       doc(R"({"tp": 8, "pp": 2, "first_stage_layers": 30, "global_batch": 64,
               "stages": [{"group": 0, "layers": 30}, {"group": 0, "layers": 50}]})"),
       Rule::stages_alone, "plan.first_stage_layers", Json::object()},
      {"auto_stage_split",
       doc(R"({"tp": 8, "pp": 2, "loss_in_split": true, "global_batch": 64,
               "stages": [{"group": 0, "layers": "auto"}, {"group": 0, "layers": 40}]})"),
       Rule::auto_stage_split, "plan.stages", Json::object()},
      {"layout_alone",
       doc(R"({"tp": 8, "pp": 2, "first_stage_layers": 40, "global_batch": 64,
               "pipeline_layout": "Et*40|t*40L"})"),
       Rule::layout_alone, "plan.pipeline_layout", Json::object()},
      {"layout_syntax",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "pipeline_layout": "Ex|tL"})"),
       Rule::layout_syntax, "plan.pipeline_layout", {{"position", 2}}},
      {"layout_stages",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "pipeline_layout": "Et*20|t*30|t*30L"})"),
       Rule::layout_stages, "plan.pipeline_layout", {{"stages", 3}, {"pp", 2}, {"vpp", 1}}},
      {"layout_order",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "pipeline_layout": "t*40|Et*40L"})"),
       Rule::layout_order, "plan.pipeline_layout", {{"stage", 0}}},
      {"layout_layers",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "pipeline_layout": "Et*40|t*39L"})"),
       Rule::layout_layers, "plan.pipeline_layout",
       {{"layers", 79}, {"mtp_layers", 0}, {"model_layers", 80}, {"model_mtp_layers", 0}}},
      {"stages_or_replicas",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "stages": [{"group": 0}, {"group": 0}],
               "replicas": [{"group": 0, "count": 4}]})"),
       Rule::stages_or_replicas, "plan.replicas", Json::object()},
      // Stages of 8 GPUs cover 16 of the groups' 24 in rank order; pp 2 > 1 rules out replicas.
      {"groups_placement", doc(R"({"tp": 8, "pp": 2, "global_batch": 8})", R"("llama3-70b")",
                               kTwoGroups),
       Rule::groups_placement, "plan.stages", {{"groups", 2}, {"stage_gpus", 8}}},
      {"stage_count",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64,
               "stages": [{"group": 0}, {"group": 0}, {"group": 0}]})"),
       Rule::stage_count, "plan.stages", {{"entries", 3}, {"pp", 2}}},
      {"group_index",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64, "stages": [{"group": 0}, {"group": 5}]})"),
       Rule::group_index, "plan.stages[1].group", {{"group", 5}, {"groups", 1}}},
      {"stage_layers",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 64,
               "stages": [{"group": 0, "layers": 40}, {"group": 0, "layers": 39}]})"),
       Rule::stage_layers, "plan.stages",
       {{"layers", 79}, {"model_layers", 80}, {"auto_stages", 0}, {"vpp", 1}}},
      {"replica_count",
       doc(R"({"tp": 8, "dp": 8, "global_batch": 8, "replicas": [{"group": 0, "count": 3}]})"),
       Rule::replica_count, "plan.replicas", {{"replicas", 3}, {"dp", 8}}},
      {"replica_batches",
       doc(R"({"tp": 8, "global_batch": 8,
               "replicas": [{"group": 0, "count": 8, "micro_batches": 2}]})"),
       Rule::replica_batches, "plan.replicas",
       {{"micro_batches", 16}, {"auto_replicas", 0}, {"total", 8}}},
      {"group_gpus",
       doc(R"({"tp": 8, "global_batch": 8, "replicas": [{"group": 0, "count": 4}]})"),
       Rule::group_gpus, "plan.replicas", {{"group", 0}, {"used", 32}, {"gpus", 64}}},
      {"rank_order", doc(R"({"tp": 8, "global_batch": 64, "rank_order": "tp-cp-dp-pp"})"),
       Rule::rank_order, "plan.rank_order", Json::object()},
      {"rank_order_groups",
       doc(R"({"tp": 8, "pp": 2, "global_batch": 8, "rank_order": "tp-cp-ep-pp-dp",
               "stages": [{"group": 0}, {"group": 1}]})",
           R"("llama3-70b")",
           R"({"groups": [{"node": "dgx-h100", "nodes": 1}, {"node": "dgx-h100", "nodes": 1}]})"),
       Rule::rank_order_groups, "plan.rank_order", Json::object()},
      // 64 GPUs at pp 2: dp 32; experts' data-parallel size 32 / 8 = 4.
      {"rank_order_pipeline",
       doc(R"({"pp": 2, "ep": 8, "global_batch": 64, "rank_order": "tp-cp-ep-pp-dp"})",
           kMixtral),
       Rule::rank_order_pipeline, "plan.rank_order", {{"edp", 4}, {"dp", 32}}},
      {"framework_cannot",
       doc(R"({"framework": "deepspeed", "cuda_graphs": true, "global_batch": 64})",
           R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::framework_cannot, "plan.cuda_graphs", {{"framework", "deepspeed"}}},
      {"optimizer_sharding",
       doc(R"({"tp": 8, "zero_stage": 2, "distributed_optimizer": false, "global_batch": 64})"),
       Rule::optimizer_sharding, "plan.distributed_optimizer",
       {{"zero_stage", 2}, {"distributed_optimizer", false}}},
      {"tp_overlap_sp",
       doc(R"({"tp": 8, "tp_comm_overlap": true, "sequence_parallel": false,
               "global_batch": 64})"),
       Rule::needs_sequence_parallel, "plan.tp_comm_overlap", {{"tp", 8}}},
      {"moe_tp_sp",
       doc(R"({"tp": 2, "sequence_parallel": false, "global_batch": 64})", kMixtral),
       Rule::needs_sequence_parallel, "plan.sequence_parallel", {{"tp", 2}}},
      {"param_gather",
       doc(R"({"tp": 8, "distributed_optimizer": true, "overlap_param_gather": true,
               "overlap_grad_reduce": false, "global_batch": 64})"),
       Rule::needs_grad_reduce_overlap, "plan.overlap_param_gather", Json::object()},
      {"fp8_gather",
       doc(R"({"tp": 8, "fp8_param_gather": true, "precision": "bf16", "global_batch": 64})"),
       Rule::needs_fp8, "plan.fp8_param_gather", {{"precision", "bf16"}}},
      {"muon_zero_stage",
       doc(R"({"tp": 8, "optimizer": "muon", "zero_stage": 2, "global_batch": 64})"),
       Rule::muon_zero_stage, "plan.zero_stage", {{"zero_stage", 2}}},
      {"muon_precision",
       doc(R"({"tp": 8, "optimizer": "muon", "precision": "fp16", "global_batch": 64})"),
       Rule::muon_precision, "plan.precision", {{"precision", "fp16"}}},
      {"framework_cannot_muon",
       doc(R"({"framework": "deepspeed", "optimizer": "muon", "global_batch": 64})",
           R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::framework_cannot, "plan.optimizer", {{"framework", "deepspeed"}}},
      // Megatron-Core's distributed optimizer (its profile's default) asserts Adam: SGD with it
      // is the profile's "optimizer=sgd with distributed_optimizer".
      {"framework_cannot_sgd",
       doc(R"({"framework": "megatron-core", "optimizer": "sgd", "global_batch": 64})",
           R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::framework_cannot, "plan.optimizer", {{"framework", "megatron-core"}}},
      {"moments_optimizer",
       doc(R"({"tp": 8, "optimizer": "sgd", "distributed_optimizer": false,
               "bf16_moments": true, "global_batch": 64})"),
       Rule::moments_optimizer, "plan.bf16_moments", {{"optimizer", "sgd"}}},
      {"adafactor_hybrid",
       doc(R"({"framework": "pytorch-fsdp", "zero_stage": 0, "optimizer": "adafactor",
               "global_batch": 64})",
           R"("nemotron-h-8b")", R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::adafactor_hybrid, "plan.optimizer", {{"zero_stage", 0}}},
      {"needs_moe", doc(R"({"tp": 8, "ep": 2, "global_batch": 64})"), Rule::needs_moe, "plan.ep",
       Json::object()},
      {"moe_overlap", doc(R"({"moe_overlap": true, "global_batch": 64})", kMixtral),
       Rule::moe_overlap, "plan.ep", Json::object()},
      {"moe_rank_capacity",
       doc(R"({"ep": 2, "moe_rank_capacity_factor": 1.5, "global_batch": 64})", kMixtral),
       Rule::moe_rank_capacity, "plan.moe_dispatcher", {{"factor", 1.5}}},
      // Mixtral 8x7B: 8 experts, top-2; at ep 2 a rank holds 4 of them, and at most
      // min(2, 8/2) = 2 times the mean rank's tokens reach it.
      {"moe_imbalance", doc(R"({"ep": 2, "moe_imbalance": 8, "global_batch": 64})", kMixtral),
       Rule::moe_imbalance, "plan.moe_imbalance",
       {{"moe_imbalance", 8}, {"most", 2}, {"ep", 2}, {"experts", 8}, {"top_k", 2}}},
      {"recompute_modules",
       doc(R"({"tp": 8, "global_batch": 64, "recompute": "selective",
               "recompute_modules": "core_attn attn_norm"})"),
       Rule::recompute_modules, "plan.recompute_modules", {{"module", "attn_norm"}}},
      {"recompute_num_layers",
       doc(R"({"tp": 8, "pp": 8, "global_batch": 64, "recompute": "full",
               "recompute_num_layers": 11})"),
       Rule::recompute_num_layers, "plan.recompute_num_layers",
       {{"recompute_num_layers", 11}, {"most", 10}}},
      {"offload_layers",
       doc(R"({"tp": 8, "global_batch": 64, "cpu_offloading_num_layers": 80})"),
       Rule::offload_layers, "plan.cpu_offloading_num_layers",
       {{"cpu_offloading_num_layers", 80}, {"most", 79}}},
      {"offload_conflict",
       doc(R"({"tp": 8, "pp": 8, "global_batch": 64, "cpu_offloading_num_layers": 4})"),
       Rule::offload_conflict, "plan.cpu_offloading_num_layers", {{"setting", "pp"}, {"value", 8}}},
      {"offload_modules",
       doc(R"({"tp": 8, "global_batch": 64, "offload_modules": "core_attn moe_act"})"),
       Rule::offload_modules, "plan.offload_modules", {{"module", "moe_act"}}},
      {"offload_modules_conflict",
       doc(R"({"tp": 8, "global_batch": 64, "offload_modules": "attn_proj"})"),
       Rule::offload_modules_conflict, "plan.offload_modules",
       {{"setting", "offload_modules"}, {"value", "attn_proj"}}},
      {"optimizer_offload",
       doc(R"({"tp": 8, "global_batch": 64, "optimizer_cpu_offload": true, "bf16_moments": true})"),
       Rule::optimizer_offload, "plan.optimizer_cpu_offload",
       {{"setting", "bf16_moments"}, {"value", true}}},
      {"master_weights",
       doc(R"({"tp": 8, "global_batch": 64, "master_weights": "remainders", "precision": "fp32"})"),
       Rule::master_weights, "plan.master_weights", {{"setting", "precision"}, {"value", "fp32"}}},
      {"host_link",
       doc(R"({"tp": 8, "global_batch": 64, "cpu_offloading_num_layers": 4})", R"("llama3-70b")",
           R"({"node": "hgx-h20", "nodes": 8})"),
       Rule::host_link, "plan.cpu_offloading_num_layers", {{"node", "hgx-h20"}}},
      {"precision", doc(R"({"global_batch": 8, "precision": "bf16"})", R"("gpt3-1.3b")",
                        R"({"node": "dgx-1-v100", "nodes": 1})"),
       Rule::precision_supported, "plan.precision", {{"precision", "bf16"}}},
      {"top_k", doc(R"({"global_batch": 8})",
                    model(R"(, "moe": {"experts": 8, "top_k": 9, "ffn_hidden": 1024})")),
       Rule::top_k, "model.moe.top_k", {{"top_k", 9}, {"experts", 8}}},
      {"layer_pattern",
       doc(R"({"global_batch": 8})",
           model(R"(, "moe": {"experts": 8, "top_k": 2, "ffn_hidden": 1024,
                              "layer_freq": [1, 1, 1]})")),
       Rule::layer_pattern, "model.moe.layer_freq", {{"entries", 3}, {"layers", 8}}},
      {"moe_layers",
       doc(R"({"global_batch": 8})",
           model(R"(, "moe": {"experts": 8, "top_k": 2, "ffn_hidden": 1024,
                              "first_dense_layers": 8})")),
       Rule::moe_layers, "model.moe.first_dense_layers", Json::object()},
      {"router_groups",
       doc(R"({"global_batch": 8})",
           model(R"(, "moe": {"experts": 8, "top_k": 2, "ffn_hidden": 1024,
                              "router_group_top_k": 2})")),
       Rule::router_groups, "model.moe.router_group_top_k", Json::object()},
      {"mla_dims", doc(R"({"global_batch": 8})", model(R"(, "attention": {"type": "mla"})")),
       Rule::mla_dims, "model.attention.kv_lora_rank", Json::object()},
      {"attention_chunk",
       doc(R"({"global_batch": 8})", model(R"(, "attention": {"chunk": 512, "window": 128})")),
       Rule::attention_chunk, "model.attention.chunk", {{"chunk", 512}}},
      // 2,048 tokens over 2·cp = 8 pieces of 256: each cuts a 512-token chunk.
      {"attention_chunk_cp",
       doc(R"({"cp": 4, "global_batch": 8})", model(R"(, "attention": {"chunk": 512})")),
       Rule::attention_chunk, "plan.cp", {{"chunk", 512}, {"seq_len", 2048}, {"cp", 4}}},
      {"hybrid_pattern",
       doc(R"({"global_batch": 8})", model(R"(, "layer_pattern": "M*-M*-")")),
       Rule::hybrid_pattern, "model.layer_pattern", {{"length", 6}, {"layers", 8}}},
      {"mamba_dims", doc(R"({"global_batch": 8})", model(R"(, "mamba": {"state_dim": 64})")),
       Rule::mamba_dims, "model.mamba", Json::object()},
      {"gdn_dims", doc(R"({"global_batch": 8})", model(R"(, "gdn": {"key_heads": 8})")),
       Rule::gdn_dims, "model.gdn", Json::object()},
      {"link_scope",
       doc(R"({"global_batch": 8})", R"("llama3-8b")",
           R"({"gpu": "h100-sxm5-80gb", "gpus_per_node": 8, "nodes": 1,
               "intra_node_link": "ib-ndr", "inter_node_link": "ib-ndr"})"),
       Rule::link_scope, "cluster.intra_node_link", Json::object()},
      // 4,096 GPUs a node x 1,048,576 nodes = 2^32.
      {"max_gpus",
       doc(R"({"global_batch": 8})", R"("llama3-8b")",
           R"({"gpu": "h100-sxm5-80gb", "gpus_per_node": 4096, "nodes": 1048576,
               "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"})"),
       Rule::max_gpus, "cluster.nodes", {{"gpus", int64_t{1} << 32}, {"limit", kMaxGpus}}},
      {"max_groups",
       doc(R"({"global_batch": 8})", R"("llama3-8b")",
           "{\"groups\": [" + repeat(R"({"node": "dgx-h100", "nodes": 1})", 65) + "]}"),
       Rule::max_groups, "cluster.groups", {{"entries", 65}, {"limit", kMaxGroups}}},
      {"max_list_entries",
       doc("{\"global_batch\": 8, \"replicas\": [" + repeat(R"({"group": 0})", 257) + "]}",
           R"("llama3-8b")", R"({"node": "dgx-h100", "nodes": 40})"),
       Rule::max_list_entries, "plan.replicas",
       {{"entries", 257}, {"limit", kMaxReplicaSets}}},
      {"max_parameters",
       doc(R"({"global_batch": 8})",
           model("", R"("layers": 100000, "hidden": 16777216, "heads": 1,
                       "ffn_hidden": 67108864)"),
           R"({"node": "dgx-h100", "nodes": 1})"),
       Rule::max_parameters, "model", {{"limit", kMaxParameters}}},
      // 8 layers on 5,000 stages: 5,000 evaluations, over 4,096 (before the split is checked).
      {"max_stage_evaluations",
       doc(R"({"pp": 5000, "global_batch": 8})", model(""),
           R"({"node": "dgx-h100", "nodes": 625})"),
       Rule::max_stage_evaluations, "plan.pp",
       {{"evaluations", 5000}, {"limit", kMaxStageEvaluations}}},
      // 100,000 layers balanced over 200 "auto" stages: 2e7 > 2^24.
      {"max_balance_work",
       doc("{\"pp\": 200, \"global_batch\": 8, \"stages\": [" +
               repeat(R"({"layers": "auto"})", 200) + "]}",
           model("", R"("layers": 100000, "hidden": 1024, "heads": 8, "ffn_hidden": 4096)"),
           R"({"node": "dgx-h100", "nodes": 25})"),
       Rule::max_balance_work, "plan.stages",
       {{"work", 20000000}, {"limit", kMaxBalanceWork}}},
  };
  return all;
}

class RuleIds : public ::testing::TestWithParam<RuleCase> {};

TEST_P(RuleIds, TheErrorNamesItsRuleAndValues) {
  const RuleCase& c = GetParam();
  const std::vector<Error> errors = scenario_errors(Json::parse(c.json), test::catalog());
  const auto e = std::find_if(errors.begin(), errors.end(),
                              [&](const Error& x) { return x.rule == c.rule; });
  ASSERT_NE(e, errors.end()) << "no error with rule " << name_of(c.rule) << "; first: "
                             << (errors.empty() ? "none" : errors.front().message);
  EXPECT_EQ(e->path, c.path) << e->message;
  for (auto it = c.values.begin(); it != c.values.end(); ++it)
    EXPECT_EQ(e->values.value(it.key(), Json()), it.value())
        << it.key() << " of " << e->values.dump() << " (" << e->message << ")";
  // As every caller reads it: the id, and the values as an object.
  const Json j = to_json(*e)["error"];
  EXPECT_EQ(j["rule"], name_of(c.rule));
  EXPECT_TRUE(j["values"].is_object());
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleIds, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// Rules of the tools, above the scenario: the search's and the sweep's budgets.
Error search_budget() {
  SearchOptions tight;
  tight.max_plans = 10;
  auto r = search_plans(test::scenario(doc(R"({"tp": 8, "global_batch": 64})")), tight);
  return r.ok() ? Error{} : r.error();
}
Error scaling_budget() {
  ScalingOptions many;
  for (int n = 1; n <= 65; ++n) many.nodes.push_back(n);
  auto r = scaling_sweep(Json::parse(doc(R"({"tp": 8, "global_batch": 64})")), test::catalog(),
                         many);
  return r.ok() ? Error{} : r.error();
}

// One cause, its errors: TP 3 on Llama 3 70B and 64 GPUs breaks the model's divisibility and
// the GPUs' whole replicas (64 is not a multiple of 3 x 4); the global batch 512 is not split
// by the floor(64 / 12) = 5 replicas nobody asked for, and is not blamed (issue 37 item 12).
TEST(RuleIds, ADerivedDpOfNoWholeReplicasBlamesNotTheBatch) {
  const auto rules_of = [](const std::string& plan) {
    std::vector<Rule> out;
    for (const Error& e : scenario_errors(Json::parse(doc(plan)), test::catalog()))
      out.push_back(e.rule);
    return out;
  };
  const std::vector<Rule> tp3 = rules_of(R"({"tp": 3, "pp": 4, "global_batch": 512})");
  EXPECT_NE(std::find(tp3.begin(), tp3.end(), Rule::whole_replicas), tp3.end());
  EXPECT_EQ(std::find(tp3.begin(), tp3.end(), Rule::batch_split), tp3.end());
  // A dp the user gave is theirs: its batch split is still checked.
  const std::vector<Rule> given = rules_of(R"({"tp": 3, "pp": 4, "dp": 5, "global_batch": 512})");
  EXPECT_NE(std::find(given.begin(), given.end(), Rule::batch_split), given.end());
}

TEST(RuleIds, BudgetsOfTheTools) {
  const Error search = search_budget();
  EXPECT_EQ(search.code, ErrorCode::budget_exceeded);
  EXPECT_EQ(search.rule, Rule::max_search);
  EXPECT_EQ(search.values["max_plans"], 10);
  const Error scaling = scaling_budget();
  EXPECT_EQ(scaling.code, ErrorCode::budget_exceeded);
  EXPECT_EQ(scaling.rule, Rule::max_scaling_points);
  EXPECT_EQ(scaling.values["points"], 65 + 5);
  EXPECT_EQ(scaling.values["limit"], kMaxScalingPoints);
}

TEST(RuleIds, EveryIdInTheTableHasACase) {
  // link_incomplete: Link.ACutLinkIsIncomplete (link_test.cpp), a link, not a scenario.
  std::set<Rule> met = {Rule::max_search, Rule::max_scaling_points, Rule::link_incomplete};
  for (const RuleCase& c : cases()) met.insert(c.rule);
  for (const RuleInfo& r : kRules) {
    if (r.rule == Rule::none) continue;
    EXPECT_TRUE(met.count(r.rule)) << r.id << " has no case: every documented id is one a rule "
                                          "site sets";
  }
}

TEST(RuleIds, IdsAreUniqueSnakeCaseAndDocumented) {
  std::set<std::string_view> ids;
  for (const RuleInfo& r : kRules) {
    if (r.rule == Rule::none) continue;
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_EQ(r.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_"), std::string_view::npos)
        << r.id;
    EXPECT_FALSE(r.meaning.empty()) << r.id;
    EXPECT_NE(rules_markdown().find(fmt::format("| `{}` |", r.id)), std::string::npos) << r.id;
  }
}

TEST(RuleIds, ReadingErrorsCarryNoRule) {
  const Error e = test::error_of(doc(R"({"tp": "8", "global_batch": 8})"));
  EXPECT_EQ(e.code, ErrorCode::type_error);
  EXPECT_EQ(e.rule, Rule::none);
  EXPECT_FALSE(to_json(e)["error"].contains("rule"));
}

}  // namespace
}  // namespace stepcast
