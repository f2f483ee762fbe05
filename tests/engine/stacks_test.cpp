// Today's training stacks: framework profiles, overlap as the software does it, the host launch
// floor, Megatron's uneven pipeline splits, block-scaled precisions. Values derived by hand.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "stepcast/compute.h"
#include "stepcast/export_megatron.h"
#include "stepcast/overlap.h"
#include "stepcast/resolve.h"
#include "stepcast/rule_ids.h"
#include "test_util.h"

namespace stepcast {
namespace {

TEST(Overlap, BulkHidesWhatTheWindowCovers) {
  // 3 s of communication beside 2 s of compute: 1 s sticks out, and the 2 s overlapped slow the
  // compute by 10 %: 1 + 0.1 x 2.
  EXPECT_DOUBLE_EQ(bulk_overlap_s(3, 2, 0.1), 1.2);
  EXPECT_DOUBLE_EQ(bulk_overlap_s(1, 5, 0.0), 0.0);
}

TEST(Overlap, RingExchangeHidesEachStepBehindAGemmChunk) {
  // TP 4: 3 steps of 6/3 = 2 s of all-gather against 4/4 = 1 s GEMM chunks: 3 x 1 s exposed.
  EXPECT_DOUBLE_EQ(ring_exchange_overlap_s(6, 4, 4, 0.0), 3.0);
  // ... plus the slowdown of the 3 s of GEMM the communication ran beside: 0.5 x min(6, 3).
  EXPECT_DOUBLE_EQ(ring_exchange_overlap_s(6, 4, 4, 0.5), 4.5);
  EXPECT_DOUBLE_EQ(ring_exchange_overlap_s(6, 4, 1, 0.5), 0.0);  // no TP, no ring
}

TEST(Overlap, PipelinedReduceScatterExposesTheLastChunk) {
  // 4 splits of 1 s against 2 s GEMM chunks: only the last chunk's 1 s is exposed ...
  EXPECT_DOUBLE_EQ(pipelined_reduce_scatter_s(4, 8, 4, 0.0), 1.0);
  // ... and the 3 s overlapped slow the GEMMs: + 0.5 x min(3, 6).
  EXPECT_DOUBLE_EQ(pipelined_reduce_scatter_s(4, 8, 4, 0.5), 2.5);
  // Communication longer than compute: 1 + 3 x (1 - 0.5).
  EXPECT_DOUBLE_EQ(pipelined_reduce_scatter_s(4, 2, 4, 0.0), 2.5);
}

TEST(Overlap, BucketedSyncExposesTheBacklogAndOneStartUp) {
  // 8 s of bytes in 4 buckets plus a 1 s start-up, against 4 s of backward: the link moves 4 s
  // of bytes during it, the other 4 s and the start-up are exposed ...
  EXPECT_DOUBLE_EQ(bucketed_overlap_s(8, 1, 4, 4, 0.0), 5.0);
  // ... and the compute the 4 s ran beside slows by half of them: + 0.5 x 4.
  EXPECT_DOUBLE_EQ(bucketed_overlap_s(8, 1, 4, 4, 0.5), 7.0);
  // Fully hidden, the last 2 s bucket and the start-up still show.
  EXPECT_DOUBLE_EQ(bucketed_overlap_s(8, 1, 4, 10, 0.0), 3.0);
  // One bucket cannot overlap the compute that frees it: the whole message, 9 s.
  EXPECT_DOUBLE_EQ(bucketed_overlap_s(8, 1, 1, 10, 0.5), 9.0);
  // Never more than the 9 s of the same bytes sent after the compute, whatever the buckets,
  // window and slowdown.
  for (double buckets : {1.0, 2.0, 40.0, 5678.0})
    for (double window : {0.0, 0.5, 4.0, 100.0})
      for (double slowdown : {0.0, 0.189, 1.0})
        EXPECT_LE(bucketed_overlap_s(8, 1, buckets, window, slowdown), 9.0);
}

const char* k70b = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "seq_len": 8192, "plan": {"tp": 4, "pp": 4, "vpp": 5, "global_batch": 128}})";

TEST(Frameworks, ANewcomerGetsTheMegatronCoreRecipe) {
  // "Llama 3 70B, 8 DGX H100, TP 4 PP 4 VPP 5" and nothing else.
  const Scenario s = test::scenario(k70b);
  EXPECT_EQ(s.plan.framework, "megatron-core");
  EXPECT_TRUE(s.plan.sequence_parallel);
  EXPECT_TRUE(s.plan.tp_comm_overlap);
  EXPECT_EQ(s.plan.effective_zero_stage(), 1);
  EXPECT_FALSE(s.plan.grad_reduce_in_fp32);
  EXPECT_TRUE(s.plan.overlap_p2p);
  const Json r = resolve_json(Json::parse(k70b), builtin_catalog());
  EXPECT_EQ(r["scenario"]["plan"]["framework"], "megatron-core");
  EXPECT_EQ(r["scenario"]["plan"]["tp_comm_overlap"], true);
  // A plan's own flag wins over the profile.
  const Scenario own = test::scenario(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 4, "pp": 4, "global_batch": 128, "sequence_parallel": false,
      "tp_comm_overlap": false}})");
  EXPECT_FALSE(own.plan.sequence_parallel);
  EXPECT_FALSE(own.plan.tp_comm_overlap);
}

TEST(Frameworks, EachProfileSetsItsStack) {
  auto plan = [](const char* framework) {
    return test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node":
        "dgx-h100", "nodes": 2}}, "plan": {{"tp": 2, "pp": 2, "global_batch": 64,
        "framework": "{}"}}}})",
                                      framework))
        .plan;
  };
  EXPECT_TRUE(plan("megatron-lm-2021").pp_scatter_gather);
  EXPECT_FALSE(plan("megatron-lm-2021").flash_attention);
  EXPECT_EQ(plan("megatron-deepspeed").effective_zero_stage(), 1);
  EXPECT_FALSE(plan("megatron-deepspeed").overlap_grad_reduce);
  EXPECT_EQ(plan("deepspeed").effective_zero_stage(), 3);
  EXPECT_EQ(plan("deepspeed").execution.zero3_fetch, Zero3Fetch::module);
  EXPECT_EQ(plan("pytorch-fsdp").execution.kernels, Kernels::eager);
  EXPECT_EQ(plan("megatron-fsdp").effective_zero_stage(), 3);
  EXPECT_TRUE(plan("megatron-fsdp").tp_comm_overlap);
  // torchtitan's defaults (configs.py at b5bcd76c6): FSDP2, sequence parallelism with TP, no
  // async TP without torch.compile, the step in a CUDA graph, a reduce-scatter per micro-batch.
  const Plan titan = plan("torchtitan");
  EXPECT_EQ(titan.effective_zero_stage(), 3);
  EXPECT_TRUE(titan.sequence_parallel);
  EXPECT_FALSE(titan.tp_comm_overlap);
  EXPECT_TRUE(titan.cuda_graphs);
  EXPECT_TRUE(titan.grad_reduce_in_fp32);
  EXPECT_EQ(titan.execution.kernels, Kernels::eager);
  EXPECT_EQ(titan.execution.zero3_fetch, Zero3Fetch::layer);
  EXPECT_TRUE(titan.execution.grad_reduce_every_micro_batch);
}

TEST(Frameworks, WhatASoftwareCannotDoIsAnError) {
  const Error cannot = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 8, "global_batch": 8, "framework": "pytorch-fsdp",
      "tp_comm_overlap": true}})");
  EXPECT_EQ(cannot.path, "plan.tp_comm_overlap");
  EXPECT_NE(cannot.message.find("pytorch-fsdp cannot do it"), std::string::npos) << cannot.message;
  const Error titan = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 2, "global_batch": 8, "framework": "torchtitan",
      "bf16_moments": true}})");
  EXPECT_EQ(titan.path, "plan.bf16_moments");
  EXPECT_NE(titan.message.find("torchtitan cannot do it"), std::string::npos) << titan.message;
  // Adam's moments in bf16: Megatron-Core's precision-aware optimizer, not DeepSpeed's ZeRO.
  const Error moments = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 1, "global_batch": 8, "framework": "deepspeed",
      "bf16_moments": true}})");
  EXPECT_EQ(moments.path, "plan.bf16_moments");
  EXPECT_EQ(moments.message.rfind("plan.bf16_moments=true: deepspeed cannot do it (DeepSpeed's "
                                  "ZeRO optimizers keep Adam's moments in fp32",
                                  0),
            0u)
      << moments.message;
  const Error no_sp = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 8, "global_batch": 8, "sequence_parallel": false,
      "tp_comm_overlap": true}})");
  EXPECT_EQ(no_sp.path, "plan.tp_comm_overlap");
  EXPECT_NE(no_sp.message.find("needs plan.sequence_parallel=true"), std::string::npos);
  const Error fpg = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 8, "fp8_param_gather": true}})");
  EXPECT_EQ(fpg.path, "plan.fp8_param_gather");
  // Megatron-LM asserts --overlap-grad-reduce with --overlap-param-gather (arguments.py).
  const Error no_grad_overlap = test::error_of(R"({"model": "llama3-8b", "cluster": {"node":
      "dgx-h100", "nodes": 1}, "plan": {"tp": 2, "global_batch": 8, "overlap_grad_reduce": false,
      "overlap_param_gather": true}})");
  EXPECT_EQ(no_grad_overlap.path, "plan.overlap_param_gather");
  EXPECT_EQ(no_grad_overlap.message,
            "plan.overlap_param_gather=true needs plan.overlap_grad_reduce=true (the distributed "
            "optimizer overlaps both through its gradient buckets; Megatron-LM's arguments.py "
            "asserts it)");
  // Context parallelism is Megatron-Core's K/V ring: Megatron-LM 2.x has none, and the
  // DeepSpeed family splits long sequences with Ulysses' all-to-all instead.
  for (const char* framework : {"megatron-lm-2021", "megatron-deepspeed", "deepspeed"}) {
    const Error cp = test::error_of(fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node":
        "dgx-h100", "nodes": 1}}, "plan": {{"cp": 2, "global_batch": 8, "framework": "{}"}}}})",
                                                framework));
    EXPECT_EQ(cp.path, "plan.cp") << framework;
    EXPECT_EQ(cp.message.rfind(fmt::format("plan.cp=2: {} cannot do it (", framework), 0), 0u)
        << cp.message;
  }
  for (const char* framework : {"megatron-core", "megatron-fsdp", "pytorch-fsdp"})
    EXPECT_EQ(test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node":
        "dgx-h100", "nodes": 1}}, "plan": {{"cp": 2, "global_batch": 8, "framework": "{}"}}}})",
                                         framework))
                  .plan.cp,
              2);
  const Error unknown = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 8, "framework": "jax"}})");
  EXPECT_EQ(unknown.path, "plan.framework");
  EXPECT_EQ(unknown.code, ErrorCode::out_of_range);
}

// The framework check reads each `cannot` key's value as the plan's writer writes it: a number
// away from its default (micro_batch 2, not 1), a choice by its name, and a key written by hand
// (the derived schedule, which has no streamer); the message quotes the value as JSON.
TEST(Frameworks, CannotReadsNumbersChoicesAndHandWrittenKeys) {
  Catalog cat = test::catalog();
  for (FrameworkProfile& f : cat.frameworks)
    if (f.id == "megatron-core") {
      f.cannot.push_back({"micro_batch", "test: one sample a micro-batch"});
      f.cannot.push_back({"schedule=interleaved", "test: no interleaving"});
    }
  const auto error = [&](const std::string& plan) {
    auto s = parse_scenario(fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node":
        "dgx-h100", "nodes": 1}}, "plan": {{"tp": 2, "pp": 2, "global_batch": 16, {}}}}})",
                                        plan),
                            cat);
    return s.ok() ? Error{} : s.error();
  };
  const Error mb = error(R"("micro_batch": 2)");
  EXPECT_EQ(mb.rule, Rule::framework_cannot);
  EXPECT_EQ(mb.path, "plan.micro_batch");
  EXPECT_EQ(mb.message.rfind("plan.micro_batch=2: megatron-core cannot do it (test: one sample", 0),
            0u)
      << mb.message;
  EXPECT_EQ(error(R"("micro_batch": 1)").message, "");  // the default
  const Error interleaved = error(R"("micro_batch": 1, "vpp": 2)");
  EXPECT_EQ(interleaved.path, "plan.schedule");
  EXPECT_EQ(interleaved.message.rfind(
                "plan.schedule=\"interleaved\": megatron-core cannot do it (test: no", 0),
            0u)
      << interleaved.message;
  EXPECT_EQ(error(R"("micro_batch": 1, "vpp": 1)").message, "");  // 1f1b
}

// The profile's parameter-gather overlap applies where there is a gather to overlap: with the
// distributed optimizer (and its gradient overlap, which Megatron-LM asserts with it). Turned off
// by the plan's own flags it is off in the resolved plan and the export, and the estimate is the
// one with it off; a plan that sets it where nothing is sharded is warned.
TEST(Frameworks, ParamGatherOverlapOnlyWhereThereIsAGather) {
  const std::string base = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 2, "global_batch": 8, )";
  const Scenario no_grad = test::scenario(base + R"("overlap_grad_reduce": false}})");
  EXPECT_FALSE(no_grad.plan.overlap_param_gather);
  EXPECT_EQ(no_grad.plan.effective_zero_stage(), 1);
  EXPECT_EQ(estimate(no_grad).iteration_time_s,
            estimate(test::scenario(base + R"("overlap_grad_reduce": false,
                "overlap_param_gather": false}})")).iteration_time_s);
  EXPECT_EQ(export_plan(no_grad, PlanExport::megatron_args).find("--overlap-param-gather"),
            std::string::npos);
  const Scenario unsharded = test::scenario(base + R"("distributed_optimizer": false}})");
  EXPECT_FALSE(unsharded.plan.overlap_param_gather);
  for (const auto& w : estimate(unsharded).warnings)
    EXPECT_EQ(w.find("overlap_param_gather"), std::string::npos) << w;
  const Scenario asked = test::scenario(base + R"("distributed_optimizer": false,
      "overlap_param_gather": true}})");
  const Report r = estimate(asked);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_EQ(r.warnings.back(),
            "plan.overlap_param_gather has no effect with plan.zero_stage=0 and no distributed "
            "optimizer (no parameters to gather)");
  EXPECT_EQ(to_json(asked.plan)["overlap_param_gather"], false);
  EXPECT_EQ(export_plan(asked, PlanExport::megatron_args).find("--overlap-param-gather"),
            std::string::npos);
  // ZeRO-3 (FSDP) prefetches the next layer's parameters whatever the gradient overlap.
  EXPECT_TRUE(test::scenario(base + R"("framework": "pytorch-fsdp", "overlap_grad_reduce":
      false}})").plan.overlap_param_gather);
}

TEST(Precision, BlockScaledFormatsAreBlackwellOnly) {
  const Error e = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 8, "precision": "mxfp8"}})");
  EXPECT_EQ(e.path, "plan.precision");
  EXPECT_NE(e.message.find("plan.precision=mxfp8 is not supported by NVIDIA H100"),
            std::string::npos)
      << e.message;
  // On B300 they run, nvfp4 faster than mxfp8, mxfp8 as fast as fp8 per FLOP but with block
  // scales to read.
  auto time = [](const char* precision) {
    return estimate(test::scenario(fmt::format(R"({{"model": "llama3-70b", "cluster": {{"node":
        "dgx-b300", "nodes": 8}}, "plan": {{"tp": 4, "pp": 4, "vpp": 5, "global_batch": 128,
        "precision": "{}"}}}})",
                                               precision)))
        .iteration_time_s;
  };
  EXPECT_LT(time("nvfp4"), time("mxfp8"));
  EXPECT_LT(time("mxfp8"), time("bf16"));
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::mxfp8), 1 + 1.0 / 32);
  EXPECT_DOUBLE_EQ(gemm_element_bytes(Precision::nvfp4), 0.5 + 1.0 / 16);
  // Quantizing one element: read bf16 (twice for per-tensor fp8 and for NVFP4's global scale:
  // amax first) and write both orientations.
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Precision::fp8), 4 + 2);
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Precision::mxfp8), 2 + 2 * (1 + 1.0 / 32));
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Precision::nvfp4), 4 + 2 * (0.5 + 1.0 / 16));
  EXPECT_DOUBLE_EQ(quantize_bytes_per_element(Precision::bf16), 0);
}

TEST(UnevenSplits, EmbeddingAndLossCountAsLayers) {
  // Llama 3.1 405B, 126 layers, pp 8 x vp 4 with both counted: 128 / 32 = 4 per chunk, the
  // model's first and last chunk one fewer: stages of 15, 16 x 6, 15.
  const Scenario s = test::scenario(R"({"model": "llama3.1-405b", "cluster": {"node":
      "gb300-nvl72", "nodes": 4}, "seq_len": 8192, "plan": {"tp": 4, "pp": 8, "vpp": 4, "dp": 9,
      "global_batch": 1152, "embedding_in_split": true, "loss_in_split": true}})");
  const Report r = estimate(s);
  ASSERT_EQ(r.stages.size(), 8u);
  EXPECT_EQ(r.stages[0].layers, 15);
  EXPECT_EQ(r.stages[3].layers, 16);
  EXPECT_EQ(r.stages[7].layers, 15);
  // Without the flags the same plan is refused: 126 does not split over 32 chunks.
  const Error e = test::error_of(R"({"model": "llama3.1-405b", "cluster": {"node":
      "gb300-nvl72", "nodes": 4}, "plan": {"tp": 4, "pp": 8, "vpp": 4, "dp": 9,
      "global_batch": 1152}})");
  EXPECT_EQ(e.path, "plan.vpp");
}

TEST(UnevenSplits, FirstAndLastStageLayers) {
  // 80 layers, pp 4: 18 on the first stage, 14 on the last, (80 - 32) / 2 = 24 elsewhere.
  const Report r = estimate(test::scenario(R"({"model": "llama3-70b", "cluster": {"node":
      "dgx-h100", "nodes": 8}, "plan": {"tp": 8, "pp": 4, "global_batch": 64,
      "first_stage_layers": 18, "last_stage_layers": 14}})"));
  ASSERT_EQ(r.stages.size(), 4u);
  EXPECT_EQ(r.stages[0].layers, 18);
  EXPECT_EQ(r.stages[1].layers, 24);
  EXPECT_EQ(r.stages[2].layers, 24);
  EXPECT_EQ(r.stages[3].layers, 14);
  // Layers that do not add up: one line naming the field, the value and the rule.
  const Error e = test::error_of(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 4, "global_batch": 64, "first_stage_layers": 19}})");
  EXPECT_EQ(e.path, "plan.first_stage_layers");
  EXPECT_NE(e.message.find("first_stage_layers=19 and last_stage_layers=0 leave 61"),
            std::string::npos)
      << e.message;
}

TEST(HostOverhead, EagerKernelsBoundSmallWorkAndGraphsRemoveIt) {
  // A tiny model at micro-batch 1: every layer's GPU work is microseconds, so the CPU issuing
  // eager PyTorch's kernels (DeepSpeed) sets the pace.
  auto tiny = [](const char* plan) {
    return fmt::format(R"({{"model": {{"name": "tiny", "layers": 8, "hidden": 256, "heads": 4,
      "ffn_hidden": 1024, "vocab": 1000, "seq_len": 128, "ffn_type": "gelu", "position": "rope",
      "tied_embeddings": true}}, "cluster": {{"node": "dgx-h100", "nodes": 1}},
      "plan": {{"dp": 8, "global_batch": 8, {}}}}})",
                       plan);
  };
  const Report eager =
      estimate(test::scenario(tiny(R"("framework": "deepspeed", "zero_stage": 1)")));
  EXPECT_GT(eager.breakdown.host, 0);
  // Megatron-Core's fused kernels launch fewer; CUDA graphs launch one per layer and pass.
  const Scenario core = test::scenario(tiny(R"("framework": "megatron-core")"));
  const Report fused = estimate(core);
  const Report graphs =
      estimate(test::scenario(tiny(R"("framework": "megatron-core", "cuda_graphs": true)")));
  EXPECT_LT(fused.breakdown.host, eager.breakdown.host);
  EXPECT_LT(graphs.breakdown.host, fused.breakdown.host);
  EXPECT_LT(graphs.iteration_time_s, fused.iteration_time_s);
  // Hand count for the fused layer (bf16, FlashAttention, no TP): 11 kernels forward, 22
  // backward: 8 layers x 33 launches x 5 us = 1.32 ms of CPU per micro-batch.
  const LayerKernels k = layer_kernels(core.model, core.plan);
  EXPECT_DOUBLE_EQ(k.forward, 11);
  EXPECT_DOUBLE_EQ(k.backward, 22);
  const double gpu = fused.stages[0].forward_s + fused.stages[0].backward_s;
  EXPECT_NEAR(fused.breakdown.host, std::max(0.0, 8 * 33 * 5e-6 - gpu), 1e-4);
}

TEST(ZeroStages, DeepSpeedReducesEveryMicroBatchAndGathersPerModule) {
  auto plan = [](int zero) {
    return fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node": "dgx-h100", "nodes": 2}},
        "seq_len": 4096, "plan": {{"global_batch": 64, "framework": "deepspeed",
        "zero_stage": {}}}}})",
                       zero);
  };
  const Report z2 = estimate(test::scenario(plan(2)));
  int64_t every = 0;
  for (const auto& op : z2.stages[0].communication)
    if (op.what == "gradient buckets, every micro-batch (ZeRO-2)") every = op.count;
  // 8 B parameters in max(40 M, 16 M) buckets: 201 buckets, each of the 4 micro-batches.
  EXPECT_EQ(every, 201 * 4);
  const Report z3 = estimate(test::scenario(plan(3)));
  int64_t gathers = 0;
  for (const auto& op : z3.stages[0].communication)
    if (op.what == "layer parameters (ZeRO-3)") gathers = op.count;
  // 32 layers x 4 micro-batches x 5 modules (QKV, proj, two gated inputs, fc2).
  EXPECT_EQ(gathers, 32 * 4 * 5);
}

}  // namespace
}  // namespace stepcast
