// Gated DeltaNet layers (model.layer_pattern `G`, model.gdn) and Qwen3-Next-80B-A3B: parameter
// counts by hand from transformers' Qwen3NextGatedDeltaNet and the model's config.json, model
// FLOPs by hand from Megatron-LM's gdn_layer_flops (megatron/training/training.py at
// d98e8a64dd; Megatron-Bridge's flop_utils.py counts the same since its PR #3029), activations by
// hand, and the rules that refuse what is not modelled.
#include <gtest/gtest.h>

#include "stepcast/compute.h"
#include "stepcast/estimate.h"
#include "stepcast/export_megatron.h"
#include "stepcast/memory.h"
#include "stepcast/rule_ids.h"
#include "test_util.h"

namespace stepcast {
namespace {

const ModelSpec& qwen3_next() {
  const ModelSpec* m = builtin_catalog().find_model("qwen3-next-80b-a3b");
  EXPECT_NE(m, nullptr);
  static const ModelSpec none;
  return m ? *m : none;
}

TEST(Gdn, QwenNextPatternIsAMixerThenAnMoeBlockPerDecoderLayer) {
  const ModelSpec& m = qwen3_next();
  const ModelSpec::LayerCounts n = m.layer_counts(0, m.layers);
  EXPECT_EQ(n.gdn, 36);        // 3 of every 4 decoder layers
  EXPECT_EQ(n.attention, 12);  // every fourth (full_attention_interval 4)
  EXPECT_EQ(n.moe_block, 48);
  EXPECT_EQ(n.mamba + n.mlp + n.dense + n.moe, 0);
  EXPECT_EQ(m.kind_of(0).block, Block::gdn);
  EXPECT_EQ(m.kind_of(6).block, Block::attention);  // decoder layer 3's mixer
}

// Qwen3-Next-80B-A3B (hidden 2048; GDN 16 key heads and 32 value heads of 128, conv 4; gated
// attention 16 heads and 2 KV heads of 256; 512 experts of 512, top-10, one shared of 512;
// vocab 151936, untied), one RMSNorm per block:
//   GDN: in_proj 2048·(2·2048 + 2·4096 + 2·32) = 25,296,896; conv 8192·4 = 32,768; dt_bias and
//   A_log 2·32; gated norm 128; out_proj 4096·2048 = 8,388,608: 33,718,464, with its norm
//   33,720,512, times 36 = 1,213,938,432.
//   attention: 2048·(2·4096 + 2·512) + 4096·2048 = 27,262,976, with its norm 27,265,024, times
//   12 = 327,180,288.
//   MoE: router 2048·512 + 512 (the engine's expert-bias vector), routed 512·3·2048·512 =
//   1,610,612,736, shared 3·2048·512 = 3,145,728, norm 2048: 1,614,809,600, times 48 =
//   77,510,860,800.
//   embedding and output 2·151936·2048 = 622,329,856; final norm 2048.
// 79,674,311,424 in all: 0.4 % below Qwen's 80B, 79,051,981,568 without the embeddings (Qwen:
// 79B). The checkpoint holds 79,872 more (QK-Norm 12·512 and the shared experts' gates 48·2048,
// less the 48·512 expert biases it lacks), not modelled.
TEST(Gdn, QwenNextParameterCountsByHand) {
  const ModelSpec& m = qwen3_next();
  EXPECT_DOUBLE_EQ(gdn_parameters(m), 33718464.0);
  const ParameterCount c = count_parameters(m, m.vocab, m.seq_len);
  EXPECT_DOUBLE_EQ(c.gdn_layer, 33720512.0);
  EXPECT_DOUBLE_EQ(c.attention_layer, 27265024.0);
  EXPECT_DOUBLE_EQ(c.total, 79674311424.0);
  EXPECT_NEAR(c.total, 80e9, 80e9 * 0.01);
  EXPECT_NEAR(c.total - c.embedding - c.output, 79e9, 79e9 * 0.01);
  // Active per token: 502 of the 512 routed experts idle in each of the 48 MoE blocks. Qwen's
  // "3B activated" is a rounded name: 3.88e9 with the embeddings, 3.25e9 without.
  const double active = c.total - 48.0 * 502 * 3 * 2048 * 512;
  EXPECT_DOUBLE_EQ(active, 3874849536.0);
  EXPECT_DOUBLE_EQ(active - c.embedding - c.output, 3252519680.0);
}

// Megatron's model FLOPs per token, forward, at sequence 4096:
//   GDN 2·(2048·12352 + 4·8192 + 4·32·128·128 + 2048·4096) = 71,630,848 (x36);
//   gated attention 2·2048·(2·4096 + 2·512) + 2·4096·2048 + 2·4096·4096 (causal half of
//   Q K^T and scores x V) = 88,080,384 (x12);
//   MoE 2·2048·(10·512 + 512)·3 = 69,206,016 (x48; the router not counted);
//   logits 2·2048·151936 = 622,329,856.
// 7,579,893,760 forward, times 3.
TEST(Gdn, ModelFlopsAsMegatronCountsThem) {
  const ModelSpec& m = qwen3_next();
  EXPECT_DOUBLE_EQ(model_flops_per_sample(m, 4096) / 4096, 3 * 7579893760.0);
  const LayerFlops f = layer_forward_flops(m, 1, 1, LayerKind{false, false, Block::gdn});
  EXPECT_DOUBLE_EQ(f.scan, 2.0 * 4 * 32 * 128 * 128);
  EXPECT_DOUBLE_EQ(f.conv, 2.0 * 4 * 8192);
  EXPECT_DOUBLE_EQ(f.total(), 71630848.0);
}

TEST(Gdn, ActivationsByHand) {
  // One GDN layer, b = 1, s = 4096, h = 2048, TP 1, bf16, no SP: the norm's input and output
  // (2·2·s·h); in_proj's output (q, k, v, z, b, a: 12352 channels); the conv's output (8192),
  // the rule's output and the gated norm's (2·4096), A (64 per value head: 2048); g (fp32) and b
  // per value head (6·32 bytes); the residual's 1-byte mask (s·h).
  const Scenario sc = test::scenario(R"({"model": "qwen3-next-80b-a3b",
      "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"global_batch": 8, "micro_batch": 1, "sequence_parallel": false,
               "hidden_dropout": 0.1}})");
  const double s = 4096, h = 2048;
  const double expect = 2 * 2 * s * h + 2 * s * 12352 + 2 * s * (8192 + 8192 + 2048) +
                        6 * s * 32 + s * h;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(sc.model, sc.plan, LayerKind{false, false, Block::gdn}),
                   expect);
}

TEST(Gdn, EstimatesQwenNextOnItsRecipesLayout) {
  // Megatron-Bridge's qwen3_next_80b_a3b_pretrain_32gpu_h100_bf16_config: PP 4, EP 8 on 32 H100.
  const Scenario s = test::scenario(R"({"model": "qwen3-next-80b-a3b",
      "cluster": {"node": "dgx-h100", "nodes": 4},
      "plan": {"pp": 4, "ep": 8, "global_batch": 128, "micro_batch": 1}})");
  const Report e = estimate(s);
  ASSERT_EQ(e.stages.size(), 4u);
  EXPECT_GT(e.iteration_time_s, 0);
  EXPECT_GT(e.stages[0].memory.activations, 0);
}

// The delta rule at flash-linear-attention's measured rate (compute.cpp's delta_rule_s names the
// measurements): Megatron's 8 FLOPs per state element per token at 0.065 of the H100's 989.4
// TFLOP/s where Qwen3-Next's 32 value heads fill the GPU; at 8 value heads, one sequence of
// 8,192 tokens (the measured row: 0.259 ms) the state pass's 128 chunks of 1.15 us each bind.
double delta_rule_forward_s(const std::string& model, const std::string& node, int tp) {
  const Scenario s = test::scenario(fmt::format(R"({{"model": {},
      "cluster": {{"node": "{}", "nodes": 1}},
      "plan": {{"global_batch": 8, "micro_batch": 1, "tp": {}}}}})",
                                                model, node, tp));
  const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
  return layer_compute(s.model, s.plan, d, LayerKind{false, false, Block::gdn}).attention_forward_s;
}

TEST(Gdn, DeltaRuleRunsAtItsMeasuredRate) {
  const double rate = 989.4e12 * 0.065;
  const std::string next = R"("qwen3-next-80b-a3b")";
  // TP 1, 32 heads x 2 programs on 132 SMs: 64 chunks x 1.15 us = 74 us, under the rate's 267.
  const double tp1 = 8.0 * 4096 * 32 * 128 * 128 / rate;
  EXPECT_NEAR(delta_rule_forward_s(next, "dgx-h100", 1), tp1, 1e-9 * tp1);
  EXPECT_NEAR(tp1, 4096 * 32 * 2.04e-9, 0.01 * tp1);  // the 64-head rows' 2.04 ns a token-head
  // The measured shape: 8 value heads of 128, one sequence of 8,192 tokens. 0.7 of the rate
  // (the state pass's 768 of the chain's 2,560 elements a token and head are its own) plus 128
  // chunks x 1.15 us: 7 % under the measured 0.259 ms, 1.8 times the rate alone.
  const std::string eight = R"({"name": "g", "layers": 2, "hidden": 1024, "heads": 8,
      "ffn_hidden": 4096, "vocab": 1000, "seq_len": 8192, "ffn_type": "swiglu",
      "position": "rope", "tied_embeddings": false, "norm": "rmsnorm", "bias": false,
      "layer_pattern": "G-", "gdn": {"key_heads": 2, "value_heads": 8, "key_head_dim": 128,
      "value_head_dim": 128}})";
  const double rate8 = 8.0 * 8192 * 8 * 128 * 128 / rate;
  const double by_hand = (1 - 768.0 / 2560) * rate8 + 128 * 1.15e-6;
  EXPECT_NEAR(delta_rule_forward_s(eight, "dgx-h100", 1), by_hand, 1e-9 * by_hand);
  EXPECT_NEAR(by_hand, 0.259e-3, 0.08 * 0.259e-3);
  EXPECT_GT(by_hand, 1.7 * rate8);
  // Qwen3-Next at TP 2: 16 heads, still the chunks' 64 x 1.15 us over 0.7 of half the rate.
  EXPECT_NEAR(delta_rule_forward_s(next, "dgx-h100", 2), 0.7 * tp1 / 2 + 64 * 1.15e-6,
              1e-9 * tp1);
  // The chunk step is calibration delta_rule_chunk_us, divided by a compute scale as every
  // fixed time is: twice it adds the 128 chunks' 1.15 us again.
  {
    const Scenario s = test::scenario(R"({"model": )" + eight + R"(,
        "cluster": {"node": "dgx-h100", "nodes": 1},
        "plan": {"global_batch": 8, "micro_batch": 1}, "calibration": {"compute_scale": 0.5}})");
    const Device d = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
    EXPECT_DOUBLE_EQ(d.cal.delta_rule_chunk_s, 2 * 1.15e-6);
    EXPECT_NEAR(layer_compute(s.model, s.plan, d, LayerKind{false, false, Block::gdn})
                    .attention_forward_s,
                2 * by_hand, 1e-9 * by_hand);
  }
  // Above an H100's peak the H100's rate (a B200 runs TP 1 as fast); an A100 at 0.065 of 312.
  EXPECT_NEAR(delta_rule_forward_s(next, "dgx-b200", 1), tp1, 1e-9 * tp1);
  const double a100 = 8.0 * 4096 * 32 * 128 * 128 / (312e12 * 0.065);
  EXPECT_NEAR(delta_rule_forward_s(next, "dgx-a100", 1), a100, 1e-9 * a100);
}

// pretrain_gpt.py's arguments cannot say the hybrid pattern, its mixers or the output gate: the
// export says so instead of writing a transformer silently.
TEST(Gdn, ExportSaysWhatTheArgumentsLeaveOut) {
  const Scenario s = test::scenario(R"({"model": "qwen3-next-80b-a3b",
      "cluster": {"node": "dgx-h100", "nodes": 4},
      "plan": {"pp": 4, "ep": 8, "global_batch": 128, "micro_batch": 1}})");
  const std::string args = export_plan(s, PlanExport::megatron_args);
  EXPECT_NE(args.find("# model.layer_pattern (96 layers) with its model.mamba / model.gdn "
                      "mixers: pretrain_hybrid.py's --hybrid-layer-pattern"),
            std::string::npos)
      << args;
  EXPECT_NE(args.find("# model.attention.output_gate: --attention-output-gate, not written here"),
            std::string::npos);
}

Error rule_error(const std::string& plan) {
  return test::error_of(
      test::doc(plan, R"("qwen3-next-80b-a3b")", R"({"node": "dgx-h100", "nodes": 8})"));
}

// A small hybrid: 4 heads of 64, a GDN of 3 key heads and 6 value heads.
std::string small_gdn(const std::string& gdn) {
  return R"({"name": "g", "layers": 2, "hidden": 256, "heads": 4, "ffn_hidden": 512,
      "vocab": 1000, "seq_len": 512, "ffn_type": "swiglu", "position": "rope",
      "tied_embeddings": false, "norm": "rmsnorm", "bias": false, "layer_pattern": "G-",
      "gdn": )" + gdn + "}";
}

TEST(Gdn, RefusesWhatIsNotModelled) {
  // TP splits the key heads and the value heads: 2 divides the 4 attention heads, not 3.
  Error e = test::error_of(test::doc(R"({"tp": 2, "global_batch": 8})",
                                     small_gdn(R"({"key_heads": 3, "value_heads": 6})")));
  EXPECT_EQ(e.path, "plan.tp");
  EXPECT_EQ(e.rule, Rule::gdn_dims);
  EXPECT_NE(e.message.find("model.gdn.key_heads=3"), std::string::npos) << e.message;
  // CP over GDN layers: Megatron's all-to-all is not priced.
  e = rule_error(R"({"cp": 2, "global_batch": 8})");
  EXPECT_EQ(e.path, "plan.cp");
  EXPECT_EQ(e.rule, Rule::gdn_dims);
  EXPECT_NE(e.message.find("Gated DeltaNet"), std::string::npos) << e.message;
  // The model's own rule: each q/k head serves a whole number of value heads.
  e = test::error_of(test::doc(R"({"global_batch": 8})",
                               small_gdn(R"({"key_heads": 3, "value_heads": 8})")));
  EXPECT_EQ(e.rule, Rule::gdn_dims);
  EXPECT_EQ(e.path, "model.gdn.key_heads");
}

}  // namespace
}  // namespace stepcast
