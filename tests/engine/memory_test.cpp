// Memory per GPU against Korthikanti et al. (2022), eq. 1-4 and table 2.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "stepcast/report.h"
#include "stepcast/rule_ids.h"
#include "stepcast/schedule.h"
#include "stepcast/search.h"

#include "test_util.h"

namespace stepcast {
namespace {

class MemoryTest : public ::testing::Test {
 protected:
  ModelSpec gpt = *builtin_catalog().find_model("gpt3-175b");  // s = 2048, h = 12288, a = 96
  Plan plan = [] {
    Plan p;
    p.tp = 8;
    p.micro_batch = 1;
    p.flash_attention = false;
    return p;
  }();
  double sbh() const { return 2048.0 * 1 * 12288; }
};

TEST_F(MemoryTest, KorthikantiPerLayerActivations) {
  // No parallelism tricks: sbh (10 + 24/t + 5 a s / (h t)) bytes (eq. 2 with tensor parallelism).
  plan.recompute = Recompute::none;
  const double a = 96, s = 2048, h = 12288, t = 8;
  EXPECT_NEAR(layer_activation_bytes(gpt, plan), sbh() * (10 + 24 / t + 5 * a * s / (h * t)), 1);
  // Sequence parallel: everything divided by t (eq. 3).
  plan.sequence_parallel = true;
  EXPECT_NEAR(layer_activation_bytes(gpt, plan), sbh() * (34 / t + 5 * a * s / (h * t)), 1);
  // Selective recompute drops the attention-score terms (eq. 4): 34 sbh / t.
  plan.recompute = Recompute::selective;
  EXPECT_NEAR(layer_activation_bytes(gpt, plan), sbh() * 34 / t, 1);
  // Full recompute keeps only each layer's input (2 sbh, split by SP).
  plan.recompute = Recompute::full;
  EXPECT_NEAR(layer_activation_bytes(gpt, plan), 2 * sbh() / t, 1);
}

// Selective recompute by module (plan.recompute_modules): each drops its terms of eq. 2 (GPT-3
// 175B, t = 8, no SP, GELU MLP of 4h: the MLP's activation input and output, 16 sbh / t).
TEST_F(MemoryTest, RecomputeModulesDropTheirActivations) {
  const double a = 96, s = 2048, h = 12288, t = 8;
  plan.recompute = Recompute::selective;
  const auto per_layer = [&](const char* modules) {
    plan.recompute_modules = modules;
    return layer_activation_bytes(gpt, plan) / sbh();
  };
  EXPECT_NEAR(per_layer("core_attn"), 10 + 24 / t, 1e-9);  // eq. 4, no SP
  // layernorm: the QKV and fc1 inputs (the norms' outputs), 2 sbh each.
  EXPECT_NEAR(per_layer("core_attn layernorm"), 6 + 24 / t, 1e-9);
  EXPECT_NEAR(per_layer("core_attn,mlp"), 10 + 8 / t, 1e-9);
  // Without core_attn the unfused attention keeps its scores, 5 a s / (h t).
  EXPECT_NEAR(per_layer("mlp"), 10 + 8 / t + 5 * a * s / (h * t), 1e-9);
  // The modules act only under selective recompute.
  plan.recompute = Recompute::none;
  EXPECT_NEAR(per_layer("mlp layernorm"), 10 + 24 / t + 5 * a * s / (h * t), 1e-9);
}

// Full recompute by method: Llama 3 70B over 8 stages, 10 layers each; stage 1 holds 7
// micro-batches in flight under 1F1B.
TEST(Memory, RecomputeMethodAndLayers) {
  const Scenario base = test::scenario(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 8, "global_batch": 64, "recompute": "full"},
      "seq_len": 4096})");
  auto activations = [&](const char* method, int n) {
    Scenario s = base;
    s.plan.recompute_method = method[0] == 'u' ? RecomputeMethod::uniform : RecomputeMethod::block;
    s.plan.recompute_num_layers = n;
    return estimate(s).stages[1].memory.activations;  // stage 1: 10 layers, 7 in flight
  };
  Plan p = base.plan;
  ModelSpec m = base.model;
  const double input = layer_activation_bytes(m, p);
  p.recompute = Recompute::none;
  const double whole = layer_activation_bytes(m, p);
  // uniform 1: ten inputs per micro-batch in flight, one layer re-materialised.
  EXPECT_NEAR(activations("uniform", 1), 10 * input * 7 + whole, 1);
  // uniform 5: two inputs, five layers re-materialised together.
  EXPECT_NEAR(activations("uniform", 5), 2 * input * 7 + 5 * whole, 1);
  // block 4: four layers checkpointed, six keep everything, one re-materialised.
  EXPECT_NEAR(activations("block", 4), (4 * input + 6 * whole) * 7 + whole, 1);
  // Time: block replays 4 of each stage's 10 layers' forward, uniform all of them.
  Scenario blocked = base;
  blocked.plan.recompute_method = RecomputeMethod::block;
  blocked.plan.recompute_num_layers = 4;
  EXPECT_NEAR(estimate(blocked).stages[1].recompute_s / estimate(base).stages[1].recompute_s,
              0.4, 1e-9);
  // More layers than a pipeline rank has (80 / 8 = 10): one line naming the key and the rule.
  const Error e = test::error_of(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 8, "global_batch": 64, "recompute": "full",
      "recompute_num_layers": 11}})");
  EXPECT_EQ(e.path, "plan.recompute_num_layers");
  EXPECT_EQ(e.rule, Rule::recompute_num_layers);
  EXPECT_NE(e.message.find("11"), std::string::npos) << e.message;
}

// The replay each module costs: its forward parts of layer_compute.
TEST(Memory, RecomputeModulesReplayTheirForward) {
  const Scenario s = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 1, "global_batch": 64, "recompute": "selective"},
      "seq_len": 4096})");
  const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
  Plan p = s.plan;
  const LayerCompute attn = layer_compute(s.model, p, d);
  EXPECT_DOUBLE_EQ(attn.recompute_s, attn.attention_forward_s);  // core_attn, the default
  p.recompute_modules = "core_attn mlp";
  const LayerCompute mlp = layer_compute(s.model, p, d);
  EXPECT_DOUBLE_EQ(mlp.linear_recompute_s, mlp.gemms.fc1_s + mlp.gemms.fc2_s);
  // The GEMMs and the SwiGLU's element-wise pass: more than the GEMMs, less than the forward.
  EXPECT_GT(mlp.recompute_s, attn.recompute_s + mlp.linear_recompute_s);
  EXPECT_LT(mlp.recompute_s, mlp.forward_s);
  p.recompute = Recompute::none;
  EXPECT_EQ(layer_compute(s.model, p, d).recompute_s, 0);
  // A module Megatron-Core does not have: one line naming the key, the value and the rule.
  const Error e = test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64, "recompute": "selective",
      "recompute_modules": "core_attn attention"}})");
  EXPECT_EQ(e.path, "plan.recompute_modules");
  EXPECT_EQ(e.rule, Rule::recompute_modules);
  EXPECT_NE(e.message.find("'attention' is not a module of Megatron-Core"), std::string::npos)
      << e.message;
  // mla_up_proj needs multi-latent attention (Megatron-Core raises the same).
  EXPECT_EQ(test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64, "recompute": "selective",
      "recompute_modules": "mla_up_proj"}})").rule, Rule::recompute_modules);
}

// Megatron-Bridge's configs write the modules as a list (recompute_modules: ["moe_act",
// "layernorm"]): the same plan as the string, and an item that is not a name is refused.
TEST(Memory, RecomputeModulesReadAsAList) {
  const char* base = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
      "seq_len": 4096, "plan": {"tp": 1, "global_batch": 64, "recompute": "selective",
      "recompute_modules": )";
  const Scenario listed = test::scenario(std::string(base) + R"(["core_attn", "mlp"]}})");
  const Scenario typed = test::scenario(std::string(base) + R"("core_attn,mlp"}})");
  EXPECT_EQ(listed.plan.recompute_modules, "core_attn,mlp");
  EXPECT_DOUBLE_EQ(estimate(listed).iteration_time_s, estimate(typed).iteration_time_s);
  const Error e = test::error_of(std::string(base) + R"(["core_attn", 7]}})");
  EXPECT_EQ(e.path, "plan.recompute_modules[1]");
  EXPECT_NE(e.message.find("must be a name"), std::string::npos) << e.message;
  // A name Megatron-Core does not have is the same rule as in the string.
  EXPECT_EQ(test::error_of(std::string(base) + R"(["core_attn", "attention"]}})").rule,
            Rule::recompute_modules);
}

TEST_F(MemoryTest, MicroBatchesInFlight) {
  const auto in_flight = [&](int stage) {
    return schedule_of(plan).in_flight(schedule_shape(plan), stage);
  };
  plan.pp = 8;
  plan.dp = 1;
  plan.global_batch = 64;  // m = 64
  EXPECT_EQ(schedule_of(plan).name, "1f1b");
  EXPECT_DOUBLE_EQ(in_flight(0), 8);  // the first stage holds p
  EXPECT_DOUBLE_EQ(in_flight(7), 1);  // the last stage one
  // Interleaving: Megatron-Core's rank i runs 2 (p - i - 1) + (v - 1) p warm-up chunk forwards
  // and one more before its first backward (schedules.py get_pp_rank_microbatches), each a
  // third of the stage: (14 + 16 + 1) / 3 on the first stage, (0 + 16 + 1) / 3 on the last,
  // (6 + 16 + 1) / 3 on the fifth.
  plan.vpp = 3;
  EXPECT_EQ(schedule_of(plan).name, "interleaved");
  EXPECT_DOUBLE_EQ(in_flight(0), 8 + 7.0 / 3);
  EXPECT_DOUBLE_EQ(in_flight(7), 17.0 / 3);
  EXPECT_DOUBLE_EQ(in_flight(4), 23.0 / 3);
  plan.vpp = 2;  // v = 2: 2i/v = i fewer than the first stage, as under 1F1B
  EXPECT_DOUBLE_EQ(in_flight(0), 8 + 7.0 / 2);
  EXPECT_DOUBLE_EQ(in_flight(7), 9.0 / 2);
  plan.vpp = 3;
  plan.global_batch = 4;  // never more than the micro-batches there are
  EXPECT_DOUBLE_EQ(in_flight(0), 4);
}

TEST_F(MemoryTest, ModelStatesAndDistributedOptimizer) {
  const Scenario s = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "global_batch": 64,
      "distributed_optimizer": true, "grad_reduce_in_fp32": true}, "seq_len": 2048})");
  const Report r = estimate(s);
  const MemoryBreakdown& m = r.stages[0].memory;
  const double P = r.stages[0].parameters;
  EXPECT_DOUBLE_EQ(m.weights, 2 * P);       // bf16 weights
  EXPECT_DOUBLE_EQ(m.gradients, 4 * P);     // fp32 main grads (Megatron-Core's bf16 default)
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * P / 8);  // master + 2 moments sharded over 8 DP ranks
  EXPECT_NEAR(m.total, m.weights + m.gradients + m.optimizer + m.activations +
                          m.wgrad_dummies + m.allocator + m.nccl + m.other, 1);
  // Allocated: what live tensors hold, Transformer Engine's dummy weight gradients among them
  // (one of each weight shape: a layer's four linears and the output layer, 16-bit); reserved:
  // plus the caching allocator's 5 % (calibration framework_memory_fraction); total: plus the
  // 2 GiB outside the allocator, of which NCCL's buffers for the one communicator used (DP) are
  // 16 channels x (4 + 0.5 + 4.6875) MiB.
  EXPECT_DOUBLE_EQ(m.wgrad_dummies, 2 * (6144.0 * 4096 + 4096.0 * 4096 + 28672.0 * 4096 +
                                         4096.0 * 14336 + 128256.0 * 4096));
  EXPECT_DOUBLE_EQ(m.allocated,
                   m.weights + m.gradients + m.optimizer + m.activations + m.wgrad_dummies);
  EXPECT_DOUBLE_EQ(m.allocator, 0.05 * m.allocated);
  EXPECT_DOUBLE_EQ(m.reserved, 1.05 * m.allocated);
  EXPECT_DOUBLE_EQ(m.nccl, 147.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(m.other, 2.0 * (1 << 30) - m.nccl);
  EXPECT_DOUBLE_EQ(m.total, m.reserved + m.nccl + m.other);
  EXPECT_EQ(m.userbuffers + m.deepep + m.moe_dispatch + m.ep_overlap, 0);
  // 8.03 B x (2 + 4 + 1.5) B = 56 GiB of model states + ~13 GiB of activations fits in 80 GiB.
  EXPECT_TRUE(r.fits) << r.stages[0].memory.total / (1 << 30);
}

// The buffers the software allocates (engine/src/physics/software_buffers.cpp for the sources),
// by hand: Llama 3 70B at s = 4096, b = 1, h = 8192 on 64 H100s, TP 8 x PP 4 x DP 2.
TEST(Memory, UserbuffersAndNcclBuffersByHand) {
  auto stage = [](const char* precision, bool overlap) {
    return estimate(test::scenario(fmt::format(R"({{"model": "llama3-70b", "cluster":
        {{"node": "dgx-h100", "nodes": 8}}, "plan": {{"tp": 8, "pp": 4, "global_batch": 64,
        "sequence_parallel": true, "tp_comm_overlap": {}, "precision": "{}"}},
        "seq_len": 4096}})", overlap, precision))).stages[0].memory;
  };
  const double MiB = 1 << 20;
  // 12 buffers of [4096, 8192] in bf16: 768 MiB; fp8 keeps the 8 all-gather ones in 1 byte.
  EXPECT_DOUBLE_EQ(stage("bf16", true).userbuffers, 4096.0 * 8192 * 12 * 2);
  EXPECT_DOUBLE_EQ(stage("bf16", true).userbuffers, 768 * MiB);
  EXPECT_DOUBLE_EQ(stage("fp8", true).userbuffers, 4096.0 * 8192 * (8 * 1 + 4 * 2));
  EXPECT_EQ(stage("bf16", false).userbuffers, 0);
  // TP, PP and DP communicators, 147 MiB each; outside the allocator, beside reserved.
  const MemoryBreakdown m = stage("bf16", true);
  EXPECT_DOUBLE_EQ(m.nccl, 3 * 147 * MiB);
  EXPECT_DOUBLE_EQ(m.other, 2048 * MiB - 3 * 147 * MiB);
  EXPECT_DOUBLE_EQ(m.total, m.reserved + m.userbuffers + m.nccl + m.other);
  EXPECT_DOUBLE_EQ(m.total - stage("bf16", false).total, 768 * MiB);
}

// Transformer Engine's cached dummy weight gradients (engine/src/physics/wgrad_dummies.cpp), by
// hand: Llama 3 70B (h = 8192, 64 query and 8 key/value heads of 128, SwiGLU 28672, vocabulary
// 128,256) at TP 8 x PP 4 on 64 H100s. Each GPU keeps one tensor of each local weight shape:
// linear_qkv (8192 + 2 x 1024) / 8 x 8192, linear_proj 8192 x 1024, fc1 2 x 28672 / 8 x 8192, fc2
// 8192 x 3584, 16-bit; the last stage also the output layer's, 129,024 / 8 x 8192 (the
// vocabulary padded to a multiple of 128 x 8).
TEST(Memory, DummyWeightGradientsByHand) {
  auto report = [](const char* framework, const char* precision) {
    return estimate(test::scenario(fmt::format(R"({{"model": "llama3-70b", "cluster":
        {{"node": "dgx-h100", "nodes": 8}}, "plan": {{"framework": "{}", "tp": 8, "pp": 4,
        "global_batch": 64, "precision": "{}"}}, "seq_len": 4096}})", framework, precision)));
  };
  const double layer = 1280.0 * 8192 + 8192.0 * 1024 + 7168.0 * 8192 + 8192.0 * 3584;
  EXPECT_DOUBLE_EQ(layer, 106954752);
  const Report r = report("megatron-core", "bf16");
  ASSERT_EQ(r.stages.size(), 4u);
  EXPECT_DOUBLE_EQ(r.stages[0].memory.wgrad_dummies, 2 * layer);  // 204 MiB
  EXPECT_DOUBLE_EQ(r.stages[1].memory.wgrad_dummies, 2 * layer);
  EXPECT_DOUBLE_EQ(r.stages[3].memory.wgrad_dummies, 2 * (layer + 16128.0 * 8192));  // 456 MiB
  // Inside the allocator: part of allocated (and so of reserved).
  const MemoryBreakdown& m = r.stages[3].memory;
  EXPECT_DOUBLE_EQ(m.allocated, m.weights + m.gradients + m.optimizer + m.activations +
                                    m.moe_dispatch + m.ep_overlap + m.wgrad_dummies);
  // fp8 weights report their 16-bit dtype (2 B); fp32 training keeps 4-byte dummies; Megatron-LM
  // 2021 (before Transformer Engine) none.
  EXPECT_DOUBLE_EQ(report("megatron-core", "fp8").stages[0].memory.wgrad_dummies, 2 * layer);
  EXPECT_DOUBLE_EQ(report("megatron-core", "fp32").stages[0].memory.wgrad_dummies, 4 * layer);
  EXPECT_EQ(report("megatron-lm-2021", "bf16").stages[3].memory.wgrad_dummies, 0);
  // A run on Transformer Engine 1.x (plan.dummy_wgrads false: each dummy freed after its layer's
  // backward) holds none, allocated that much less, and runs in the same time.
  const Report te1 = estimate(test::scenario(R"({"model": "llama3-70b", "cluster":
      {"node": "dgx-h100", "nodes": 8}, "plan": {"tp": 8, "pp": 4, "global_batch": 64,
      "dummy_wgrads": false}, "seq_len": 4096})"));
  EXPECT_EQ(te1.stages[3].memory.wgrad_dummies, 0);
  EXPECT_DOUBLE_EQ(te1.stages[3].memory.allocated, m.allocated - m.wgrad_dummies);
  EXPECT_DOUBLE_EQ(te1.iteration_time_s, r.iteration_time_s);
  EXPECT_TRUE(r.plan.dummy_wgrads);  // the megatron-core profile's
}

// One shape, one tensor: Mixtral 8x7B (h = 4096, 32 query and 8 key/value heads of 128, 8
// experts of SwiGLU 14336, vocabulary 32,000) on EP 8 holds its 32 layers' weights but one dummy
// of each shape: linear_qkv 6144 x 4096, linear_proj 4096 x 4096, the grouped experts' fc1
// 28672 x 4096 and fc2 4096 x 14336, and the output layer's 32000 x 4096.
TEST(Memory, DummyWeightGradientsOncePerShape) {
  const Report r = estimate(test::scenario(R"({"model": "mixtral-8x7b", "cluster":
      {"node": "dgx-h100", "nodes": 1}, "plan": {"tp": 1, "ep": 8, "global_batch": 64},
      "seq_len": 4096})"));
  EXPECT_DOUBLE_EQ(r.stages[0].memory.wgrad_dummies,
                   2 * (6144.0 * 4096 + 4096.0 * 4096 + 28672.0 * 4096 + 4096.0 * 14336 +
                        32000.0 * 4096));
}

// Mixtral 8x7B (h = 4096, top-2 of 8 experts, every layer MoE) at s = 4096, b = 1, EP 8.
TEST(Memory, MoeDispatchBuffersByHand) {
  auto stage = [](const char* plan, int nodes = 1) {
    return estimate(test::scenario(fmt::format(R"({{"model": "mixtral-8x7b", "cluster":
        {{"node": "dgx-h100", "nodes": {}}}, "plan": {{"tp": 1, "ep": 8, "global_batch": 64, {}}},
        "seq_len": 4096}})", nodes, plan))).stages[0];
  };
  // alltoall: the permuted send buffer, each of 4096 tokens twice, 2-byte elements.
  EXPECT_DOUBLE_EQ(stage(R"("moe_dispatcher": "alltoall")").memory.moe_dispatch,
                   2.0 * 4096 * 2 * 4096);
  // allgather: the hidden states of the tp x ep = 8 GPUs.
  EXPECT_DOUBLE_EQ(stage(R"("moe_dispatcher": "allgather")").memory.moe_dispatch,
                   2.0 * 4096 * 8 * 4096);
  // flex: DeepEP's NVLink buffer, 10 channels x 8 peers x 256 tokens x (2 h + 128 x 16) bytes;
  // across 16 GPUs (Qwen3-30B-A3B, h = 2048, 128 experts) 288 tokens, and an RDMA buffer of
  // 10 x 2 ranks x 128 x (2 h + 2048 + 16) x 2.
  const MemoryBreakdown flex = stage(R"("moe_dispatcher": "flex")").memory;
  EXPECT_EQ(flex.moe_dispatch, 0);
  EXPECT_DOUBLE_EQ(flex.deepep, 10.0 * 8 * 256 * (2 * 4096 + 2048));
  EXPECT_DOUBLE_EQ(estimate(test::scenario(R"({"model": "qwen3-30b-a3b", "cluster": {"node":
                       "dgx-h100", "nodes": 2}, "plan": {"ep": 16, "global_batch": 64,
                       "moe_dispatcher": "flex"}})")).stages[0].memory.deepep,
                   10.0 * 8 * 288 * (2 * 2048 + 2048) + 10.0 * 2 * 128 * (2 * 2048 + 2048 + 16) * 2);
  // NCCL: DP and EP communicators under alltoall; flex's tokens go through DeepEP, not NCCL.
  EXPECT_DOUBLE_EQ(stage(R"("moe_dispatcher": "alltoall")").memory.nccl, 2 * 147.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(flex.nccl, 147.0 * (1 << 20));
  // EP overlap without a pipeline: the merged step stores the next micro-batch's layers as it
  // frees the last one's, one layer ahead (pipelined: one model chunk, schedules.py).
  const StageReport over = stage(R"("moe_dispatcher": "alltoall", "moe_overlap": true)");
  const ModelSpec mixtral = *builtin_catalog().find_model("mixtral-8x7b");
  Plan p;
  p.ep = 8;
  p.dp = 8;
  p.sequence_parallel = false;
  p.hidden_dropout = 0;  // the megatron-core profile's
  p.execution.moe_probs_in_activation = true;  // the megatron-core profile's
  ModelSpec m = mixtral;
  m.seq_len = 4096;
  EXPECT_NEAR(over.memory.ep_overlap, layer_activation_bytes(m, p, true), 1);
  // Pipelined (PP 2 x VPP 2): stage 0's 16 layers in two chunks, one chunk of 8 layers ahead.
  const StageReport piped = estimate(test::scenario(R"({"model": "mixtral-8x7b", "cluster":
      {"node": "dgx-h100", "nodes": 2}, "plan": {"tp": 1, "pp": 2, "vpp": 2, "ep": 8,
      "global_batch": 64, "moe_overlap": true}, "seq_len": 4096})")).stages[0];
  EXPECT_NEAR(piped.memory.ep_overlap, 8 * layer_activation_bytes(m, p, true), 1);
  EXPECT_EQ(stage(R"("moe_dispatcher": "alltoall")").memory.ep_overlap, 0);
}

// The experts' outputs: Qwen3-30B-A3B (hidden 2048, 128 experts, top 8) over EP 8, one micro-batch
// of 4096 tokens, bf16. Each GPU's 16 experts receive 4096 x 8 rows (balanced routing); where the
// combine scales their outputs by the probabilities it keeps them, 2 x 32768 x 2048 =
// 134,217,728 bytes a layer. Megatron-Core (the megatron-core profile) scales the activation
// instead and keeps none; DeepSpeed's MoE combines by an einsum over the outputs.
TEST(Memory, ExpertOutputsAreKeptOnlyWhereTheProbabilitiesScaleThem) {
  const Scenario s = test::scenario(R"({"model": "qwen3-30b-a3b", "cluster": {"node":
      "dgx-h100", "nodes": 1}, "plan": {"ep": 8, "global_batch": 64, "precision": "bf16"},
      "seq_len": 4096})");
  EXPECT_TRUE(s.plan.execution.moe_probs_in_activation);
  Plan after = s.plan;
  after.execution.moe_probs_in_activation = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s.model, after, true) -
                       layer_activation_bytes(s.model, s.plan, true),
                   2.0 * 4096 * 8 * 2048);
  // A dense layer has no experts: nothing changes.
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s.model, after, false),
                   layer_activation_bytes(s.model, s.plan, false));
  EXPECT_FALSE(test::scenario(R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"framework": "megatron-deepspeed", "ep": 8, "global_batch": 64}})")
                   .plan.execution.moe_probs_in_activation);
}

// The loss's gradient: Llama 3 8B on 8 H100, one micro-batch of 8192 tokens each, bf16, its 128,256
// logits (a multiple of 128: no padding). Megatron's loss holds their fp32 softmax (4 bytes a
// logit) and, at the start of the backward, their bf16 gradient beside it: 2 x 8192 x 128,256 =
// 2,101,346,304 bytes more. Transformer Engine's loss writes the gradient over the bf16 logits;
// fp32 training makes no copy; a profile whose loss is not read here adds none.
TEST(Memory, MegatronsLossHoldsTheLogitGradientBesideTheSoftmax) {
  const std::string llama = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "seq_len": 8192, "plan": {"global_batch": 8,)";
  auto activations = [&](const std::string& plan, bool copy) {
    Scenario s = test::scenario(llama + plan + "}}");
    EXPECT_EQ(s.plan.execution.loss_grad_copy, s.plan.framework == "megatron-core") << plan;
    s.plan.execution.loss_grad_copy = copy;
    return estimate(s).stages[0].memory.activations;
  };
  const std::string bf16 = R"("precision": "bf16")";
  EXPECT_DOUBLE_EQ(activations(bf16, true) - activations(bf16, false), 2.0 * 8192 * 128256);
  const std::string te = R"("precision": "bf16", "cross_entropy_fusion": "te")";
  EXPECT_DOUBLE_EQ(activations(te, true), activations(te, false));
  const std::string fp32 = R"("precision": "fp32")";
  EXPECT_DOUBLE_EQ(activations(fp32, true), activations(fp32, false));
  EXPECT_FALSE(test::scenario(llama + R"("framework": "pytorch-fsdp"}})")
                   .plan.execution.loss_grad_copy);
}

// Llama 3 8B over DP 8 with the distributed optimizer, one stage: the optimizer-state tests'
// plan, with `plan_keys` (JSON members) added.
StageReport llama8b_dp8_stage(const std::string& plan_keys) {
  const Scenario s = test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster":
      {{"node": "dgx-h100", "nodes": 1}}, "plan": {{"tp": 1, "pp": 1, "dp": 8,
      "micro_batch": 1, "global_batch": 64, "distributed_optimizer": true, {}}},
      "seq_len": 2048}})",
                                                plan_keys));
  return estimate(s).stages[0];
}

// Megatron-Core's precision-aware optimizer with bf16 moments: fp32 master weights and two bf16
// moments, 4 + 2 + 2 = 8 bytes per parameter (12 with fp32 moments); fp32 training keeps no
// master copy, 4 bytes. The Adam step reads and writes each moment in 2 bytes instead of 4:
// 30 - 8 = 22 bytes per parameter at memory bandwidth, 28 - 8 = 20 in fp32 training.
TEST(Memory, Bf16AdamMomentsTakeEightBytesAParameter) {
  auto stage = [](const char* precision, bool bf16_moments) {
    return llama8b_dp8_stage(
        fmt::format(R"("precision": "{}", "bf16_moments": {})", precision, bf16_moments));
  };
  const StageReport fp32_moments = stage("bf16", false), bf16 = stage("bf16", true);
  const double P = bf16.parameters;
  EXPECT_DOUBLE_EQ(fp32_moments.memory.optimizer, 12 * P / 8);
  EXPECT_DOUBLE_EQ(bf16.memory.optimizer, 8 * P / 8);
  EXPECT_DOUBLE_EQ(bf16.memory.weights, fp32_moments.memory.weights);
  EXPECT_DOUBLE_EQ(bf16.memory.gradients, fp32_moments.memory.gradients);
  EXPECT_NEAR(bf16.optimizer_s / fp32_moments.optimizer_s, 22.0 / 30.0, 1e-12);
  EXPECT_DOUBLE_EQ(stage("fp32", true).memory.optimizer, 4 * P / 8);
  EXPECT_NEAR(stage("fp32", true).optimizer_s / stage("fp32", false).optimizer_s, 20.0 / 28.0,
              1e-12);
}

// The master copy's width (plan.master_weights), as Apex's DistributedFusedAdam keeps it under
// NeMo: Llama 3 8B over DP 8 with the distributed optimizer, bf16 weights. fp32 master and fp32
// moments: 4 + 4 + 4 = 12 bytes a parameter; remainders (int16 beside the bf16 weight): 2 + 8 =
// 10; no master: 8; no master and bf16 moments (NeMo's optim.dtype bf16): 0 + 2 + 2 = 4. The
// Adam step moves 30 bytes a parameter with an fp32 master, 28 with remainders (the 16-bit
// weight and its remainder are read and written: the copy's write is the weight's), 24 with
// none (the weight read and written in 2 bytes), 16 with none and bf16 moments. Weights and
// gradients do not change.
TEST(Memory, MasterWeightsAsRemaindersOrNone) {
  auto stage = [](const char* master, bool bf16_moments) {
    return llama8b_dp8_stage(
        fmt::format(R"("master_weights": "{}", "bf16_moments": {})", master, bf16_moments));
  };
  const StageReport fp32 = stage("fp32", false), rem = stage("remainders", false),
                    none = stage("none", false), none_bf16 = stage("none", true);
  const double P = fp32.parameters;
  EXPECT_DOUBLE_EQ(fp32.memory.optimizer, 12 * P / 8);
  EXPECT_DOUBLE_EQ(rem.memory.optimizer, 10 * P / 8);
  EXPECT_DOUBLE_EQ(none.memory.optimizer, 8 * P / 8);
  EXPECT_DOUBLE_EQ(none_bf16.memory.optimizer, 4 * P / 8);
  EXPECT_DOUBLE_EQ(rem.memory.weights, fp32.memory.weights);
  EXPECT_DOUBLE_EQ(none.memory.gradients, fp32.memory.gradients);
  EXPECT_NEAR(rem.optimizer_s / fp32.optimizer_s, 28.0 / 30.0, 1e-12);
  EXPECT_NEAR(none.optimizer_s / fp32.optimizer_s, 24.0 / 30.0, 1e-12);
  EXPECT_NEAR(none_bf16.optimizer_s / fp32.optimizer_s, 16.0 / 30.0, 1e-12);
  // fp8 training with bf16 weights (NeMo 24.07's FP8 runs) keeps remainders the same way.
  const Scenario fp8 = test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"tp": 1, "pp": 1, "dp": 8, "global_batch": 64,
      "distributed_optimizer": true, "precision": "fp8", "fp8_param_gather": false,
      "master_weights": "remainders"},
      "seq_len": 2048})");
  EXPECT_DOUBLE_EQ(estimate(fp8).stages[0].memory.optimizer, 10 * P / 8);
}

// Where no narrower master can be kept: one line naming plan.master_weights, the setting in the
// way and the rule; a value that is not a width names the choices.
TEST(Memory, MasterWeightsWhereTheSoftwareCannot) {
  auto doc = [](const std::string& plan) {
    return fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node": "dgx-h100", "nodes": 1}},
        "plan": {{"global_batch": 64, {}}}}})",
                       plan);
  };
  auto error = [&](const std::string& plan) { return test::error_of(doc(plan)); };
  Error e = error(R"("master_weights": "remainders", "precision": "fp32")");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.path, "plan.master_weights");
  EXPECT_EQ(e.values["setting"], "precision");
  EXPECT_EQ(e.message,
            "plan.master_weights=remainders with plan.precision=fp32: fp32 training keeps no "
            "master copy (its weights are the master); use fp32 (rule master_weights)");
  e = error(R"("master_weights": "none", "optimizer": "sgd", "distributed_optimizer": false)");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.values["setting"], "optimizer");
  EXPECT_EQ(e.values["value"], "sgd");
  e = error(R"("master_weights": "remainders", "precision": "fp16")");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.values["value"], "fp16");
  // fp16 weights may drop the master (the optimizer's dtype the model's): no error.
  EXPECT_TRUE(parse_scenario(doc(R"("master_weights": "none", "precision": "fp16")"),
                             test::catalog())
                  .ok());
  e = error(R"("master_weights": "none", "precision": "fp8", "fp8_param_gather": true)");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.values["setting"], "fp8_param_gather");
  e = error(R"("master_weights": "remainders", "bf16_moments": true)");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.values["setting"], "bf16_moments");
  e = error(R"("master_weights": "none", "optimizer_cpu_offload": true)");
  EXPECT_EQ(e.rule, Rule::master_weights);
  EXPECT_EQ(e.values["setting"], "optimizer_cpu_offload");
  e = error(R"("master_weights": "bf16")");
  EXPECT_EQ(e.path, "plan.master_weights");
  EXPECT_NE(e.message.find("plan.master_weights"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("remainders"), std::string::npos) << e.message;
}

// What one Llama 3 8B layer saves for its backward (no parallelism, 4096 tokens, fused
// attention), in units of s b h bytes, by precision and hidden dropout. bf16: the two norms'
// inputs 4, the QKV input 2, Q K V 2 (4096 + 2 x 1024) / 4096 = 3, the attention output 2 (the
// same tensor as the projection's input), the fc1 input 2, SwiGLU's input 2 x 2 x 14336 / 4096
// = 14 and output (fc2's input) 2 x 14336 / 4096 = 7, the log-sum-exp 4 x 32 heads / 4096 =
// 0.03125: 34.03125; with dropout, each bias-dropout-add's 1-byte mask: 36.03125. In fp8
// Transformer Engine saves the QKV, projection, fc1 and fc2 inputs quantized (1 byte): the QKV
// input 1, the attention output 2 plus the projection's copy 1, the fc1 input 1, fc2's 3.5:
// 29.53125. MXFP8 adds a scale byte per 32 (1.03125 a byte): 4 + 1.03125 + 3 + 2 + 1.03125 +
// 1.03125 + 14 + 3.5 x 1.03125 + 0.03125 = 29.734375.
TEST(Memory, GemmInputsInTheirPrecisionAndDropoutMasks) {
  auto layer = [](const char* precision, double dropout) {  // on B200s, which run MXFP8
    const Scenario s = test::scenario(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "dgx-b200", "nodes": 1}}, "plan": {{
        "tp": 1, "pp": 1, "micro_batch": 1, "global_batch": 64, "recompute": "none",
        "precision": "{}", "hidden_dropout": {}}}, "seq_len": 4096}})",
        precision, dropout));
    return layer_activation_bytes(s.model, s.plan) / (4096.0 * 4096.0);
  };
  EXPECT_NEAR(layer("bf16", 0), 34.03125, 1e-12);
  EXPECT_NEAR(layer("bf16", 0.1), 36.03125, 1e-12);
  EXPECT_NEAR(layer("fp8", 0), 29.53125, 1e-12);
  EXPECT_NEAR(layer("fp8", 0.1), 31.53125, 1e-12);
  EXPECT_NEAR(layer("mxfp8", 0), 29.734375, 1e-12);
  // The recipes' profile trains without dropout (Megatron-Bridge's model bridges); Megatron-LM
  // 2.x kept its 0.1.
  const auto dropout = [](const char* framework) {
    return test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster": {{"node":
        "dgx-h100", "nodes": 1}}, "plan": {{"framework": "{}", "global_batch": 64}}}})",
                                      framework)).plan.hidden_dropout;
  };
  EXPECT_EQ(dropout("megatron-core"), 0);
  EXPECT_EQ(dropout("megatron-lm-2021"), 0.1);
  // A probability: 1 or more is refused, naming the key.
  EXPECT_EQ(test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64, "hidden_dropout": 1}})").path,
            "plan.hidden_dropout");
}

// The quantized weight copies Transformer Engine keeps, per parameter: Llama 3 8B, data
// parallel only. Per-tensor fp8 caches the row-wise copy and its transpose on Hopper (1 + 1
// bytes, beside the bf16 weight without fp8 parameters: 4), one copy on Blackwell, whose fp8
// GEMMs take any layout (1, or 3 beside the bf16 weight); MXFP8 keeps both directions' copies
// with a scale byte per 32: 2 x 1.03125 = 2.0625.
TEST(Memory, Fp8WeightsKeepOneCopyOnBlackwell) {
  auto weights = [](const char* node, const char* precision, bool fp8_params) {
    const Scenario s = test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster":
        {{"node": "{}", "nodes": 1}}, "plan": {{"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1,
        "global_batch": 64, "precision": "{}", "fp8_param_gather": {}}}, "seq_len": 2048}})",
                                                  node, precision, fp8_params));
    const StageReport st = estimate(s).stages[0];
    return st.memory.weights / st.parameters;
  };
  EXPECT_DOUBLE_EQ(weights("dgx-h100", "fp8", true), 2);
  EXPECT_DOUBLE_EQ(weights("dgx-h100", "fp8", false), 4);
  EXPECT_DOUBLE_EQ(weights("dgx-b200", "fp8", true), 1);
  EXPECT_DOUBLE_EQ(weights("dgx-b200", "fp8", false), 3);
  EXPECT_DOUBLE_EQ(weights("dgx-b200", "mxfp8", true), 2.0625);
  EXPECT_DOUBLE_EQ(weights("dgx-b200", "bf16", false), 2);
}

// The loss's logits (last stage), one micro-batch of 4096 tokens over Llama 3's 128,256-entry
// vocabulary (a multiple of 128: no padding), bf16: Megatron's cross-entropy, fused (`native`)
// or not, keeps the fp32 softmax, 4 x 4096 x 128256 = 2,101,346,304 bytes, and makes the bf16
// gradient beside it at the start of the backward, half that again; Transformer Engine's kernel
// the bf16 logits with the gradient written over them, a third of the two: 4 bytes a logit
// apart. Over TP 2 each GPU holds half the vocabulary.
TEST(Memory, TheLossKernelKeepsItsLogits) {
  auto activations = [](const char* fusion, int tp) {
    const Scenario s = test::scenario(fmt::format(R"({{"model": "llama3-8b", "cluster":
        {{"node": "dgx-h100", "nodes": 1}}, "plan": {{"tp": {}, "pp": 1, "micro_batch": 1,
        "global_batch": 64, "precision": "bf16", "cross_entropy_fusion": "{}"}},
        "seq_len": 4096}})",
                                                  tp, fusion));
    return estimate(s).stages[0].memory.activations;
  };
  EXPECT_DOUBLE_EQ(activations("none", 1) - activations("te", 1), 4.0 * 4096 * 128256);
  EXPECT_DOUBLE_EQ(activations("native", 1), activations("none", 1));
  EXPECT_DOUBLE_EQ(activations("none", 2) - activations("te", 2), 4.0 * 4096 * 64128);
  // Megatron-Core's default is no fusion; a kernel it does not have is refused, by name.
  EXPECT_EQ(test::scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes":
      1}, "plan": {"global_batch": 64}})").plan.cross_entropy_fusion, CrossEntropyFusion::none);
  EXPECT_EQ(test::error_of(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64, "cross_entropy_fusion": "liger"}})").path,
            "plan.cross_entropy_fusion");
}

// Activation offloading (plan.cpu_offloading_num_layers): Llama 3 8B, no parallelism but data,
// 4096 tokens a micro-batch, bf16, fused attention, no dropout (the megatron-core profile): one
// layer keeps 34.03125 s b h bytes (above).
TEST(Memory, OffloadedLayersLeaveTheGpuAndCostTheirCopies) {
  auto run = [](const char* node, int nodes, int layers) {  // one micro-batch a GPU on GB200
    return estimate(test::scenario(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "{}", "nodes": {}}}, "plan": {{"tp": 1,
        "pp": 1, "micro_batch": 1, "global_batch": {}, "recompute": "none",
        "cpu_offloading_num_layers": {}}}, "seq_len": 4096}})",
        node, nodes, node[0] == 'g' ? 72 : 64, layers)));
  };
  const double layer = 34.03125 * 4096.0 * 4096.0;  // 570,949,632 bytes
  const Report none = run("dgx-h100", 1, 0), eight = run("dgx-h100", 1, 8);
  const StageReport &a = none.stages[0], &b = eight.stages[0];
  EXPECT_NEAR(b.memory.offloaded, 8 * layer, 1);
  EXPECT_NEAR(a.memory.activations - b.memory.activations, 8 * layer, 1);
  EXPECT_NEAR(a.memory.total - b.memory.total,
              8 * layer * (1 + builtin_catalog().calibration.framework_memory_fraction), 1);
  EXPECT_EQ(a.memory.offloaded, 0);
  EXPECT_NEAR(eight.host_memory_bytes_per_node, 8 * 8 * layer, 1);  // 8 GPUs a node
  EXPECT_EQ(none.host_memory_bytes_per_node, 0);
  // Time: each copy moves one layer over PCIe 5.0 x16 at 63 GB/s (9.1 ms), behind the next
  // layer's forward (to the host) and backward (back); the excess waits, 8 layers' worth, every
  // micro-batch (64 / 8 GPUs = 8).
  const double copy = layer / 63e9;
  const double f = b.forward_s / 32, bw = b.backward_s / 32;
  ASSERT_GT(copy, bw);  // PCIe is slower than either pass of one layer here
  EXPECT_NEAR(b.offload_s, 8 * (copy - f) + 8 * (copy - bw), 1e-12);
  EXPECT_NEAR(eight.breakdown.offload, 8 * b.offload_s, 1e-12);
  EXPECT_EQ(a.offload_s, 0);
  // The breakdown names it; the iteration grows by it, less what the longer backward now hides
  // of the data-parallel gradient reduce.
  EXPECT_NEAR(eight.breakdown.sum(), eight.iteration_time_s, 1e-9);
  EXPECT_LE(eight.iteration_time_s - none.iteration_time_s, eight.breakdown.offload + 1e-12);
  EXPECT_GT(eight.iteration_time_s - none.iteration_time_s, 0.5 * eight.breakdown.offload);
  // NVLink-C2C (GB200, 450 GB/s a direction): 1.34 ms, hidden behind every layer's compute.
  const Report c2c = run("gb200-nvl72", 1, 8);
  EXPECT_LT(layer / 450e9, c2c.stages[0].forward_s / 32);
  EXPECT_EQ(c2c.stages[0].offload_s, 0);
  EXPECT_NEAR(c2c.stages[0].memory.offloaded, 8 * layer, 1);
}

// Megatron-Core's restrictions on offloading, and the host link it needs: one line each, naming
// the key, its value and the rule.
TEST(Memory, OffloadingWhereMegatronCannot) {
  auto error = [](const std::string& plan, const char* node = "dgx-h100",
                  const char* framework = "megatron-core") {
    return test::error_of(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "{}", "nodes": 1}}, "plan": {{"tp": 1,
        "global_batch": 64, "framework": "{}", {}}}}})",
        node, framework, plan));
  };
  Error e = error(R"("pp": 1, "recompute": "none", "cpu_offloading_num_layers": 32)");
  EXPECT_EQ(e.rule, Rule::offload_layers);
  EXPECT_EQ(e.path, "plan.cpu_offloading_num_layers");
  EXPECT_EQ(e.values["most"], 31);
  EXPECT_NE(e.message.find("plan.cpu_offloading_num_layers=32 must be below model.layers=32"),
            std::string::npos) << e.message;
  e = error(R"("pp": 2, "recompute": "none", "cpu_offloading_num_layers": 4)");
  EXPECT_EQ(e.rule, Rule::offload_conflict);
  EXPECT_EQ(e.values["setting"], "pp");
  EXPECT_NE(e.message.find("plan.cpu_offloading_num_layers=4 with plan.pp=2"), std::string::npos)
      << e.message;
  e = error(R"("pp": 1, "recompute": "selective", "cpu_offloading_num_layers": 4)");
  EXPECT_EQ(e.rule, Rule::offload_conflict);
  EXPECT_EQ(e.values["setting"], "recompute");
  e = error(R"("pp": 1, "recompute": "none", "cpu_offloading_num_layers": 4)", "pcie-l40s-x8");
  EXPECT_EQ(e.rule, Rule::host_link);
  EXPECT_EQ(e.values["node"], "pcie-l40s-x8");
  e = error(R"("pp": 1, "recompute": "none", "cpu_offloading_num_layers": 4)", "dgx-h100",
            "deepspeed");
  EXPECT_EQ(e.rule, Rule::framework_cannot);
  EXPECT_EQ(e.path, "plan.cpu_offloading_num_layers");
}

// Fine-grained offloading (plan.offload_modules), Llama 3 8B as above (bf16, tp 1, 4096 tokens a
// micro-batch, no recompute): of a layer's 34.03125 s b h bytes, qkv_linear holds the fused
// norm's input and the QKV GEMM's input (2 + 2), core_attn Q, K and V ((4096 + 2 x 1024) x 2 bytes
// = 3 sbh) and the log-sum-exp (32 heads x 4 bytes = 0.03125 sbh), attn_proj the attention output
// (2); the MLP's 25 (the fused norm's input, fc1's input, SwiGLU's two inputs and fc2's) has no
// offload group on a dense layer. Every layer's groups leave but the last layer's (Megatron-Core
// keeps the last group of each name): 31 of the 32 layers' worth.
TEST(Memory, OffloadedModulesLeaveTheGpuAndCostTheirCopies) {
  auto run = [](const char* node, const char* modules,
                const char* extra = R"(, "recompute": "none")") {
    return estimate(test::scenario(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "{}", "nodes": 1}}, "plan": {{"tp": 1,
        "pp": 1, "micro_batch": 1, "global_batch": {},
        "offload_modules": "{}"{}}}, "seq_len": 4096}})",
        node, node[0] == 'g' ? 72 : 64, modules, extra)));
  };
  const double sbh = 4096.0 * 4096.0;
  const Report none = run("dgx-h100", ""), attn = run("dgx-h100", "core_attn attn_proj"),
               all = run("dgx-h100", "qkv_linear,core_attn,attn_proj");
  const MemoryBreakdown &a = none.stages[0].memory, &b = attn.stages[0].memory,
                        &c = all.stages[0].memory;
  EXPECT_EQ(a.offloaded, 0);
  EXPECT_NEAR(b.offloaded, 31 * 5.03125 * sbh, 1);
  EXPECT_NEAR(c.offloaded, 31 * 9.03125 * sbh, 1);
  EXPECT_NEAR(a.activations - c.activations, c.offloaded, 1);
  EXPECT_NEAR(all.host_memory_bytes_per_node, 8 * c.offloaded, 8);  // 8 GPUs a node
  // The norms of a dense layer are fused into the next GEMM (attn_norm and mlp_norm offload
  // nothing), and there are no experts: the names are Megatron's, the bytes none.
  EXPECT_EQ(run("dgx-h100", "attn_norm mlp_norm").stages[0].memory.offloaded, 0);
  // Under core_attn recompute the checkpointed attention bypasses its offload group: only the
  // projection's input leaves.
  EXPECT_NEAR(run("dgx-h100", "core_attn attn_proj",
                  R"(, "recompute": "selective", "recompute_modules": "core_attn")")
                  .stages[0].memory.offloaded,
              31 * 2 * sbh, 1);
  // Full recompute keeps only each layer's input, which no group holds.
  EXPECT_EQ(run("dgx-h100", "core_attn attn_proj", R"(, "recompute": "full")")
                .stages[0].memory.offloaded,
            0);
  // Time: a layer's 9.03125 sbh (151.5 MB) crosses PCIe 5.0 x16 at 63 GB/s in 2.4 ms, less than
  // a layer's forward or backward: hidden, no time moves. Unfused attention on A100 keeps its
  // scores, softmax output and dropout mask, (2 x 2 + 1) bytes x 32 heads x 4096 x 4096 = 160 sbh
  // in core_attn's group: 165 sbh a layer, 88 ms over PCIe 4.0 x16 (31.5 GB/s), and what it takes
  // beyond each layer's compute is exposed.
  const double copy = 9.03125 * sbh / 63e9;
  EXPECT_LT(copy, all.stages[0].forward_s / 32);
  EXPECT_EQ(all.stages[0].offload_s, 0);
  EXPECT_EQ(all.iteration_time_s, none.iteration_time_s);
  const Report slow =
      run("dgx-a100", "core_attn attn_proj", R"(, "recompute": "none", "flash_attention": false)");
  const StageReport& d = slow.stages[0];
  EXPECT_NEAR(d.memory.offloaded, 31 * 165 * sbh, 1);
  const double copy4 = 165 * sbh / 31.5e9;
  EXPECT_NEAR(d.offload_s,
              32 * (std::max(0.0, copy4 - d.forward_s / 32) +
                    std::max(0.0, copy4 - d.backward_s / 32)),
              1e-12);
  EXPECT_GT(d.offload_s, 0);
}

// Megatron-Core's refusals of fine-grained offloading (TransformerConfig.__post_init__): one
// line each, naming the key, its value and the rule.
TEST(Memory, OffloadedModulesWhereMegatronCannot) {
  auto error = [](const std::string& plan, const char* model = "llama3-8b",
                  const char* node = "dgx-h100") {
    return test::error_of(fmt::format(
        R"({{"model": "{}", "cluster": {{"node": "{}", "nodes": 1}}, "plan": {{"global_batch": 64,
        {}}}}})",
        model, node, plan));
  };
  Error e = error(R"("offload_modules": "core_attn mlp")");
  EXPECT_EQ(e.rule, Rule::offload_modules);
  EXPECT_EQ(e.path, "plan.offload_modules");
  EXPECT_EQ(e.values["module"], "mlp");
  EXPECT_NE(e.message.find("'mlp' is not a module of Megatron-Core's --offload-modules"),
            std::string::npos) << e.message;
  e = error(R"("offload_modules": "expert_fc1")");
  EXPECT_EQ(e.rule, Rule::offload_modules);
  EXPECT_NE(e.message.find("the model has none"), std::string::npos) << e.message;
  e = error(R"("offload_modules": ["gdp_qkv"])");
  EXPECT_EQ(e.rule, Rule::offload_modules);
  EXPECT_EQ(e.values["module"], "gdp_qkv");
  e = error(R"("offload_modules": "attn_proj")");
  EXPECT_EQ(e.rule, Rule::offload_modules_conflict);
  EXPECT_NE(e.message.find("offload core_attn too"), std::string::npos) << e.message;
  e = error(R"("offload_modules": "core_attn", "cpu_offloading_num_layers": 4)");
  EXPECT_EQ(e.rule, Rule::offload_modules_conflict);
  EXPECT_EQ(e.values["setting"], "cpu_offloading_num_layers");
  EXPECT_EQ(e.values["value"], 4);
  e = error(R"("ep": 8, "offload_modules": "moe_act", "recompute": "selective",
               "recompute_modules": "moe")",
            "qwen3-30b-a3b");
  EXPECT_EQ(e.rule, Rule::offload_modules_conflict);
  EXPECT_EQ(e.values["setting"], "recompute_modules");
  e = error(R"("offload_modules": "core_attn")", "llama3-8b", "pcie-l40s-x8");
  EXPECT_EQ(e.rule, Rule::host_link);
  EXPECT_EQ(e.path, "plan.offload_modules");
  e = error(R"("offload_modules": "core_attn", "framework": "deepspeed")");
  EXPECT_EQ(e.rule, Rule::framework_cannot);
  EXPECT_EQ(e.path, "plan.offload_modules");
  // With a pipeline and recompute, as Megatron-Core runs it: no error.
  EXPECT_TRUE(parse_scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"pp": 2, "global_batch": 64, "recompute": "selective",
      "offload_modules": "core_attn attn_proj"}})", builtin_catalog()).ok());
}

// Optimizer offloading (plan.optimizer_cpu_offload): Llama 3 8B on one DGX H100, DP 8 with the
// distributed optimizer, bf16, fp32 moments: each GPU steps P/8 parameters, 12 bytes of state
// each (fp32 master and two moments). Half of them on the CPU: the GPU keeps 6 P/8 bytes; the
// host holds, per offloaded parameter, the fp32 copy 4, the moments 8 and the pinned fp32
// gradient 4: 16 x P/16 per GPU, 8 GPUs a node.
TEST(Memory, OffloadedOptimizerLeavesTheGpuAndCostsItsStep) {
  auto run = [](const std::string& extra) {
    return estimate(test::scenario(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "dgx-h100", "nodes": 1}}, "plan": {{"tp": 1,
        "pp": 1, "micro_batch": 1, "global_batch": 64, "distributed_optimizer": true{}}},
        "seq_len": 2048}})",
        extra)));
  };
  const Report none = run(""), half = run(R"(, "optimizer_cpu_offload": true,
      "optimizer_offload_fraction": 0.5)");
  const Report overlapped = run(R"(, "optimizer_cpu_offload": true,
      "optimizer_offload_fraction": 0.5, "overlap_cpu_optimizer_d2h_h2d": true)");
  const StageReport &a = none.stages[0], &b = half.stages[0];
  const double P = a.parameters, offloaded = 0.5 * P / 8;
  EXPECT_DOUBLE_EQ(a.memory.optimizer, 12 * P / 8);
  EXPECT_DOUBLE_EQ(b.memory.optimizer, 12 * offloaded);
  EXPECT_DOUBLE_EQ(b.memory.optimizer_offloaded, 16 * offloaded);
  EXPECT_EQ(a.memory.optimizer_offloaded, 0);
  EXPECT_DOUBLE_EQ(b.memory.weights, a.memory.weights);
  EXPECT_DOUBLE_EQ(b.memory.gradients, a.memory.gradients);
  EXPECT_NEAR(half.host_memory_bytes_per_node, 8 * 16 * offloaded, 1);
  EXPECT_EQ(none.host_memory_bytes_per_node, 0);
  // Time: the gradients' fp32 copies to the host and the parameters' back over PCIe 5.0 x16 (63
  // GB/s a direction): 4 B each, 31.9 ms; the CPU's Adam at ZeRO-Offload's 10 B parameters in
  // 2.57 s a node, shared by its 8 GPUs: 1.03 s; the GPU's Adam over the other half (its
  // unoffloaded step halved). Without the overlap flag one after the other, the GPU's step beside
  // the CPU's; with it, the slowest (the CPU's).
  const double copy = 4 * offloaded / 63e9;
  const double cpu = offloaded * 2.57 / 10e9 * 8;
  const double gpu = a.optimizer_s / 2;
  EXPECT_NEAR(copy, 0.0319, 0.0005);
  EXPECT_NEAR(cpu, 1.032, 0.001);
  EXPECT_NEAR(b.optimizer_s, copy + std::max(gpu, cpu) + copy, 1e-9);
  EXPECT_NEAR(overlapped.stages[0].optimizer_s, std::max({gpu, cpu, copy}), 1e-9);
  EXPECT_NEAR(half.iteration_time_s - none.iteration_time_s, b.optimizer_s - a.optimizer_s, 1e-6);
  // The fraction counts only with the switch; the whole optimizer at 1 (Megatron-LM's default).
  EXPECT_DOUBLE_EQ(run(R"(, "optimizer_offload_fraction": 0.5)").stages[0].memory.optimizer,
                   a.memory.optimizer);
  const StageReport all = run(R"(, "optimizer_cpu_offload": true)").stages[0];
  EXPECT_EQ(all.memory.optimizer, 0);
  EXPECT_DOUBLE_EQ(all.memory.optimizer_offloaded, 16 * P / 8);
  // fp32 training has no master: the host's fp32 copy is the parameter's (4 + 8 + 4 bytes), the
  // GPU keeps its moments' share (8 bytes a parameter).
  const StageReport fp32 = run(R"(, "precision": "fp32", "optimizer_cpu_offload": true,
      "optimizer_offload_fraction": 0.25)").stages[0];
  EXPECT_DOUBLE_EQ(fp32.memory.optimizer, 0.75 * 8 * P / 8);
  EXPECT_DOUBLE_EQ(fp32.memory.optimizer_offloaded, 0.25 * 16 * P / 8);
}

// Megatron-Core's refusals of optimizer offloading: one line each, naming the key, the setting
// and the rule; the fraction outside [0, 1].
TEST(Memory, OptimizerOffloadWhereMegatronCannot) {
  auto error = [](const std::string& plan, const char* node = "dgx-h100") {
    return test::error_of(fmt::format(
        R"({{"model": "llama3-8b", "cluster": {{"node": "{}", "nodes": 1}}, "plan": {{"global_batch": 64,
        "optimizer_cpu_offload": true, {}}}}})",
        node, plan));
  };
  Error e = error(R"("optimizer": "muon")");
  EXPECT_EQ(e.rule, Rule::optimizer_offload);
  EXPECT_EQ(e.path, "plan.optimizer_cpu_offload");
  EXPECT_EQ(e.values["setting"], "optimizer");
  EXPECT_EQ(e.message,
            "plan.optimizer_cpu_offload=true with plan.optimizer=\"muon\": the hybrid device "
            "optimizer steps Adam or SGD only (rule optimizer_offload)");
  e = error(R"("bf16_moments": true)");
  EXPECT_EQ(e.rule, Rule::optimizer_offload);
  EXPECT_EQ(e.values["setting"], "bf16_moments");
  e = error(R"("zero_stage": 3)");
  EXPECT_EQ(e.rule, Rule::optimizer_offload);
  EXPECT_EQ(e.values["setting"], "zero_stage");
  EXPECT_EQ(e.values["value"], 3);
  e = error(R"("precision": "mxfp8", "fp8_param_gather": true)", "dgx-b200");
  EXPECT_EQ(e.rule, Rule::optimizer_offload);
  EXPECT_EQ(e.values["setting"], "fp8_param_gather");
  e = error(R"("optimizer": "adam")", "pcie-l40s-x8");
  EXPECT_EQ(e.rule, Rule::host_link);
  EXPECT_EQ(e.path, "plan.optimizer_cpu_offload");
  e = error(R"("framework": "deepspeed")");
  EXPECT_EQ(e.rule, Rule::framework_cannot);
  EXPECT_EQ(e.path, "plan.optimizer_cpu_offload");
  e = error(R"("optimizer_offload_fraction": 1.5)");
  EXPECT_EQ(e.path, "plan.optimizer_offload_fraction");
  EXPECT_EQ(e.code, ErrorCode::out_of_range) << e.message;
  e = error(R"("optimizer_offload_fraction": -0.1)");
  EXPECT_EQ(e.path, "plan.optimizer_offload_fraction");
  // SGD, as Megatron-Core offloads it: no error.
  EXPECT_TRUE(parse_scenario(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
      "nodes": 1}, "plan": {"global_batch": 64, "optimizer": "sgd", "distributed_optimizer": false,
      "optimizer_cpu_offload": true, "optimizer_offload_fraction": 0}})", builtin_catalog()).ok());
}

TEST(Memory, OutOfMemoryIsReportedWithTheNumbers) {
  // GPT-3 175B on one DGX A100: 175 B parameters / 8 GPUs x 18 bytes is far over 80 GiB.
  const Scenario s = test::scenario(R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100",
      "nodes": 1}, "plan": {"tp": 8, "pp": 1, "micro_batch": 1, "global_batch": 8}})");
  const Report r = estimate(s);
  EXPECT_FALSE(r.fits);
  EXPECT_FALSE(r.stages[0].memory.fits());
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings[0].find("stage 0 does not fit"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("GiB"), std::string::npos);
}

// Out of memory, the engine says what makes the plan fit, each change estimated again: Llama 3
// 8B on one DGX H100, micro-batches of 4 x 8192 tokens, no recompute, bf16 moments and the
// distributed optimizer already on (never offered again), Transformer Engine's loss (its bf16
// logits only). One layer keeps 34.03125 s b h bytes (above), 4.57 GB: far over the GPU without
// recompute.
TEST(Memory, OutOfMemoryAdviceIsEstimatedAgain) {
  const std::string doc = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"tp": 1, "pp": 1, "micro_batch": 4, "global_batch": 64, "recompute": "none",
      "bf16_moments": true, "distributed_optimizer": true, "cross_entropy_fusion": "te"},
      "seq_len": 8192})";
  EstimateOptions advise;
  advise.fit_fixes = &fit_fixes_of;
  const Scenario s = test::scenario(doc);
  const Report r = estimate(s, advise);
  ASSERT_FALSE(r.fits);
  EXPECT_TRUE(estimate(s).fit_fixes.empty());  // only when asked
  ASSERT_FALSE(r.fit_fixes.empty());
  const MemoryBreakdown& m = r.stages[0].memory;
  for (size_t i = 0; i < r.fit_fixes.size(); ++i) {
    const FitFix& f = r.fit_fixes[i];
    EXPECT_EQ(f.settings.find("bf16_moments"), std::string::npos) << f.settings;
    EXPECT_EQ(f.settings.find("distributed_optimizer"), std::string::npos) << f.settings;
    EXPECT_LE(f.memory_bytes, m.capacity) << f.change;
    EXPECT_NEAR(f.time_change, f.iteration_time_s / r.iteration_time_s - 1, 1e-12);
    if (i > 0) EXPECT_LE(r.fit_fixes[i - 1].iteration_time_s, f.iteration_time_s);
  }
  const auto fix = [&](std::string_view settings) -> const FitFix* {
    for (const FitFix& f : r.fit_fixes)
      if (f.settings == settings) return &f;
    return nullptr;
  };
  // Full recompute: the same plan as stated by hand.
  const FitFix* full =
      fix("plan.recompute=full plan.recompute_method=uniform plan.recompute_num_layers=1");
  ASSERT_NE(full, nullptr);
  std::string by_hand = doc;
  by_hand.replace(by_hand.find(R"("recompute": "none")"), 19, R"("recompute": "full")");
  const Report recomputed = estimate(test::scenario(by_hand));
  EXPECT_TRUE(recomputed.fits);
  EXPECT_DOUBLE_EQ(full->iteration_time_s, recomputed.iteration_time_s);
  // Offloading: each layer offloaded frees its activations (one micro-batch in flight without
  // a pipeline) and the allocator's share of them; the fewest layers that cover the excess.
  const double layer = 34.03125 * 4 * 8192 * 4096.0;
  const double freed = layer * (1 + builtin_catalog().calibration.framework_memory_fraction);
  const auto n = static_cast<int64_t>(std::ceil((m.total + m.headroom - m.capacity) / freed));
  ASSERT_LT(n, 32);
  EXPECT_NE(fix(fmt::format("plan.cpu_offloading_num_layers={}", n)), nullptr);
  // Context parallelism: the smallest CP that fits (each GPU keeps 1/CP of every layer's
  // activations): CP 4 leaves 4 x 8192 / 4 tokens a GPU, still over; CP 8 fits.
  ASSERT_NE(fix("plan.cp=8 plan.dp=1"), nullptr);
  std::string cp4 = doc;
  cp4.replace(cp4.find(R"("tp": 1,)"), 8, R"("tp": 1, "cp": 4,)");
  EXPECT_FALSE(estimate(test::scenario(cp4)).fits);
  // The text output says each as "fits with X, +N % time".
  EXPECT_NE(to_text(r, s).find("fits with full recompute of every layer, +"), std::string::npos);
  // Nothing one change can do: GPT-3 175B on 8 GPUs (no DP to shard over, no GPU to add TP or
  // PP on; recompute and bf16 moments leave 175 B x 14 bytes / 8 over 80 GiB).
  const Report hopeless = estimate(test::scenario(R"({"model": "gpt3-175b", "cluster": {"node":
      "dgx-a100", "nodes": 1}, "plan": {"tp": 8, "pp": 1, "micro_batch": 1, "global_batch": 8}})"),
                                   advise);
  EXPECT_FALSE(hopeless.fits);
  EXPECT_TRUE(hopeless.fit_fixes.empty());
}

// Fine-grained offloading as a fix: Llama 3 8B at one 8,704-token micro-batch per H100, 83.7 GiB
// needed of 80. Offloading the attention's and the norms' saved tensors (9.03 of a layer's 34.03
// s b h bytes, on 31 of 32 layers) fits, its copies hidden behind compute over PCIe 5; the expert
// modules are never offered on a dense model (the rules refuse them), and the fix is the plan
// stated by hand.
TEST(Memory, OffloadingModulesIsOfferedWhereItFits) {
  const std::string doc = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"tp": 1, "pp": 1, "micro_batch": 1, "global_batch": 48, "recompute": "none",
      "bf16_moments": true, "distributed_optimizer": true}, "seq_len": 8704})";
  EstimateOptions advise;
  advise.fit_fixes = &fit_fixes_of;
  const Report r = estimate(test::scenario(doc), advise);
  ASSERT_FALSE(r.fits);
  const std::string modules = "attn_norm qkv_linear core_attn attn_proj mlp_norm";
  const FitFix* offload = nullptr;
  for (const FitFix& f : r.fit_fixes) {
    EXPECT_EQ(f.settings.find("expert_fc1"), std::string::npos) << f.settings;
    EXPECT_EQ(f.settings.find("moe_act"), std::string::npos) << f.settings;
    if (f.settings == fmt::format("plan.offload_modules=\"{}\"", modules)) offload = &f;
  }
  ASSERT_NE(offload, nullptr);
  std::string by_hand = doc;
  by_hand.replace(by_hand.find(R"("recompute": "none")"), 19,
                  fmt::format(R"("recompute": "none", "offload_modules": "{}")", modules));
  const Report stated = estimate(test::scenario(by_hand));
  EXPECT_TRUE(stated.fits);
  EXPECT_DOUBLE_EQ(offload->iteration_time_s, stated.iteration_time_s);
  EXPECT_LT(offload->time_change, 0.001);  // hidden behind the layers' compute
  // What it frees: 9.03125 s b h bytes on 31 layers, with the allocator's share.
  const double freed = 9.03125 * 8704 * 4096.0 * 31 *
                       (1 + builtin_catalog().calibration.framework_memory_fraction);
  EXPECT_NEAR(r.stages[0].memory.total - stated.stages[0].memory.total, freed, 0.01 * freed);
}

// Optimizer offloading as a fix: Llama 3 8B on one DGX H100 without the distributed optimizer,
// 12 bytes of optimizer state for each of its 8.03 B parameters on every GPU (89.7 GiB). The
// smallest share in tenths that fits is offered, overlapped, and is the plan stated by hand; a
// tenth less does not fit. Each tenth frees a tenth of the state with the allocator's share.
TEST(Memory, OffloadingTheOptimizerIsOfferedWhereItFits) {
  auto doc = [](const std::string& extra) {
    return R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"tp": 1, "pp": 1, "micro_batch": 1, "global_batch": 64, "recompute": "selective",
      "distributed_optimizer": false)" + extra + R"(}, "seq_len": 4096})";
  };
  EstimateOptions advise;
  advise.fit_fixes = &fit_fixes_of;
  const Report r = estimate(test::scenario(doc("")), advise);
  ASSERT_FALSE(r.fits);
  const FitFix* offload = nullptr;
  for (const FitFix& f : r.fit_fixes)
    if (f.settings.find("optimizer_cpu_offload") != std::string::npos) offload = &f;
  ASSERT_NE(offload, nullptr);
  EXPECT_EQ(offload->settings,
            "plan.optimizer_cpu_offload=true plan.optimizer_offload_fraction=0.8 "
            "plan.overlap_cpu_optimizer_d2h_h2d=true");
  EXPECT_EQ(offload->change, "80 % of the optimizer on the CPU");
  auto stated = [&](double fraction) {
    return estimate(test::scenario(doc(fmt::format(
        R"(, "optimizer_cpu_offload": true, "optimizer_offload_fraction": {},
        "overlap_cpu_optimizer_d2h_h2d": true)", fraction))));
  };
  const Report eight = stated(0.8);
  EXPECT_TRUE(eight.fits);
  EXPECT_FALSE(stated(0.7).fits);
  EXPECT_DOUBLE_EQ(offload->iteration_time_s, eight.iteration_time_s);
  const MemoryBreakdown& m = r.stages[0].memory;
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * r.stages[0].parameters);
  EXPECT_NEAR(m.total - eight.stages[0].memory.total,
              0.8 * m.optimizer * (1 + builtin_catalog().calibration.framework_memory_fraction),
              1e3);
}

// plan.memory_headroom: the share of the GPU a plan must leave free. At the edge it decides the
// verdict; the report states it in bytes; the search never proposes a plan inside it.
TEST(Memory, HeadroomDecidesTheFitAtTheEdge) {
  const std::string base = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
      "plan": {"tp": 8, "pp": 4, "global_batch": 512, "micro_batch": 2, "recompute": "none",
               "memory_headroom": )";
  const auto at = [&](double headroom) {
    return estimate(test::scenario(base + fmt::format("{}", headroom) + "}, \"seq_len\": 4096}"));
  };
  const Report none = at(0);
  const StageReport* full = &none.stages[0];
  for (const auto& st : none.stages)
    if (st.memory.total / st.memory.capacity > full->memory.total / full->memory.capacity) full = &st;
  const double used = full->memory.total / full->memory.capacity;
  ASSERT_TRUE(none.fits);
  ASSERT_GT(used, 0.5);
  const Report inside = at(1 - used + 0.002);  // asks for 0.2 % more than is left
  EXPECT_FALSE(inside.fits);
  EXPECT_NEAR(inside.stages[full->index].memory.headroom, (1 - used + 0.002) * full->memory.capacity, 1);
  ASSERT_FALSE(inside.warnings.empty());
  // The headroom is why: the warning says the GPU's memory less the headroom's share.
  EXPECT_NE(inside.warnings[0].find(fmt::format("{:.1f} GiB less {:.3g} % headroom",
                                                full->memory.capacity / kGiB,
                                                100 * (1 - used + 0.002))),
            std::string::npos)
      << inside.warnings[0];
  EXPECT_NE(inside.warnings[0].find("which the headroom alone makes too little"),
            std::string::npos);
  EXPECT_TRUE(at(1 - used - 0.002).fits);
  // The default, 3 %: the report says so.
  const Report d = estimate(test::scenario(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 4, "global_batch": 512}, "seq_len": 4096})"));
  EXPECT_DOUBLE_EQ(d.stages[0].memory.headroom, 0.03 * d.stages[0].memory.capacity);
  // Out of range: one line naming the key.
  const Error e = test::error_of(base + "0.6}, \"seq_len\": 4096}");
  EXPECT_EQ(e.path, "plan.memory_headroom");
}

// plan.expandable_segments: the allocator unmaps its free pages before it runs out, so its cache
// (5 % of allocated, framework_memory_fraction) takes only what the GPU has left, the headroom
// kept. Where the cache alone makes a plan not fit, with expandable segments it fits, at the same
// time; with room to spare nothing moves. The out-of-memory advice offers it first.
TEST(Memory, ExpandableSegmentsGiveTheCacheBack) {
  const auto at = [](double headroom, bool expandable) {
    EstimateOptions advise;
    advise.fit_fixes = &fit_fixes_of;
    return estimate(test::scenario(fmt::format(
        R"({{"model": "llama3-70b", "cluster": {{"node": "dgx-h100", "nodes": 8}},
            "plan": {{"tp": 8, "pp": 4, "global_batch": 512, "micro_batch": 2,
            "recompute": "none", "memory_headroom": {}, "expandable_segments": {}}},
            "seq_len": 4096}})",
        headroom, expandable)), advise);
  };
  const Report roomy = at(0.03, false), roomy_x = at(0.03, true);
  const MemoryBreakdown& m = roomy.stages[0].memory;
  const double f = builtin_catalog().calibration.framework_memory_fraction;
  ASSERT_GT(f, 0);
  EXPECT_DOUBLE_EQ(m.allocator, f * m.allocated);
  EXPECT_DOUBLE_EQ(roomy_x.stages[0].memory.allocator, m.allocator);  // room: the whole cache
  // A headroom that leaves room for what is allocated and outside the allocator, but only half
  // of the cache: stage 0's need without the cache, and half of it, as shares of the GPU.
  const double outside = m.total - m.reserved;
  const double headroom = 1 - (m.allocated + outside + m.allocator / 2) / m.capacity;
  const Report classic = at(headroom, false), expandable = at(headroom, true);
  EXPECT_FALSE(classic.stages[0].memory.fits());
  const MemoryBreakdown& x = expandable.stages[0].memory;
  EXPECT_TRUE(x.fits());
  EXPECT_DOUBLE_EQ(x.allocated, m.allocated);
  EXPECT_NEAR(x.allocator, m.allocator / 2, 1e3);  // what the GPU has left for it
  EXPECT_NEAR(x.total + x.headroom, x.capacity, 1e3);
  EXPECT_DOUBLE_EQ(expandable.iteration_time_s, classic.iteration_time_s);
  // The advice: the setting, at no time.
  bool offered = false;
  for (const FitFix& fix : classic.fit_fixes)
    if (fix.settings == "plan.expandable_segments=true") {
      offered = true;
      EXPECT_DOUBLE_EQ(fix.time_change, 0);
    }
  EXPECT_TRUE(offered);
}

TEST(Memory, TheSearchLeavesTheHeadroomFree) {
  const Scenario s = test::scenario(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 4, "global_batch": 512}, "seq_len": 4096})");
  const auto r = search_plans(s);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->best.empty());
  const double capacity = 80.0 * (1ull << 30);
  for (const auto& plan : r->best) EXPECT_LE(plan.peak_memory_bytes, 0.97 * capacity) << plan.iteration_time_s;
}

// Why the default is 3 %: every validation run on software whose memory the engine models closely
// ran, so each must fit with the default headroom (the fullest, LLM Foundry's MPT on H100, is
// predicted at 97 % of its GPU).
TEST(Memory, PublishedRunsFitWithTheDefaultHeadroom) {
  const std::set<std::string> closely = {"SC21", "KORTH", "MCORE", "MBSKILL", "LLMFOUNDRY", "SIMUMAX"};
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/tests/validation/cases.jsonl");
  int checked = 0;
  double fullest = 0;
  for (std::string line; std::getline(in, line);) {
    const Json c = Json::parse(line);
    if (!closely.count(c["source"].get<std::string>())) continue;
    const Report r = estimate(test::scenario(c["scenario"].dump()));
    for (const auto& st : r.stages) fullest = std::max(fullest, st.memory.total / st.memory.capacity);
    EXPECT_TRUE(r.fits) << c["id"];
    ++checked;
  }
  EXPECT_GE(checked, 50);
  EXPECT_GT(fullest, 0.96);  // the default sits just above the fullest published run
  EXPECT_LE(fullest, 0.97);
}

}  // namespace
}  // namespace stepcast
