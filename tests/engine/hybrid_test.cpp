// Hybrid Mamba models (model.layer_pattern, model.mamba): parameter counts by hand from
// Megatron-Core's MambaMixer and the presets' configs, model FLOPs by hand from Megatron-LM's
// hybrid_flops (megatron/training/training.py at 86df799dc4) and against Megatron-Bridge's
// published TFLOP/s, and what the pipeline, TP and memory do with a pattern's layers.
#include <gtest/gtest.h>

#include "stepcast/census.h"
#include "stepcast/estimate.h"
#include "stepcast/memory.h"
#include "test_util.h"

namespace stepcast {
namespace {

const ModelSpec& preset(const char* id) {
  const ModelSpec* m = builtin_catalog().find_model(id);
  EXPECT_NE(m, nullptr) << id;
  return *m;
}

TEST(Hybrid, PatternCountsEachBlock) {
  const ModelSpec& m = preset("nemotron-3-nano-30b-a3b");
  const ModelSpec::LayerCounts n = m.layer_counts(0, m.layers);
  EXPECT_EQ(n.mamba, 23);
  EXPECT_EQ(n.moe_block, 23);
  EXPECT_EQ(n.attention, 6);
  EXPECT_EQ(n.dense + n.moe + n.mlp, 0);
  EXPECT_EQ(m.moe_layers(0, m.layers), 23);
  // "MEMEM*E...": layers 0-5 hold 3 M, 2 E and the first attention.
  const ModelSpec::LayerCounts first = m.layer_counts(0, 6);
  EXPECT_EQ(first.mamba, 3);
  EXPECT_EQ(first.moe_block, 2);
  EXPECT_EQ(first.attention, 1);
}

// Nemotron-H 8B (hidden 4096, 128 Mamba heads of 64, 8 groups, state 128, conv 4; 32 heads, 8
// KV heads of 128; squared-ReLU MLP of 21504; vocab 131072, untied), one RMSNorm per layer:
//   Mamba: in_proj 4096·(2·8192 + 2·8·128 + 128) = 76,021,760; conv (8192 + 2048)·(4 + 1) =
//   51,200; dt_bias, A_log, D 3·128; gated norm 8192; out_proj 8192·4096 = 33,554,432; norm
//   4096: 109,640,064, times 24 = 2,631,361,536.
//   attention: 4096·(4096 + 2·1024) + 4096·4096 + 4096 = 41,947,136, times 4 = 167,788,544.
//   MLP: 2·4096·21504 + 4096 = 176,164,864, times 24 = 4,227,956,736.
//   embedding and output 2·131072·4096 = 1,073,741,824; final norm 4096.
// 8,100,852,736 in all (the name says 8B: 1.3 % above it; no exact published count was found).
TEST(Hybrid, NemotronHParameterCountsByHand) {
  const ModelSpec& m8 = preset("nemotron-h-8b");
  EXPECT_DOUBLE_EQ(mamba_parameters(m8), 109640064.0 - 4096);
  EXPECT_DOUBLE_EQ(count_parameters(m8, m8.vocab, m8.seq_len).total, 8100852736.0);
  // 56B: 54 Mamba (hidden 8192, 256 heads of 64, state 256), 10 attention (64 heads, 8 KV),
  // 54 MLP of 32768: 56,324,350,464, 0.6 % above the published 56B.
  const ModelSpec& m56 = preset("nemotron-h-56b");
  const double total = count_parameters(m56, m56.vocab, m56.seq_len).total;
  EXPECT_DOUBLE_EQ(total, 56324350464.0);
  EXPECT_NEAR(total, 56e9, 56e9 * 0.01);
}

// Nemotron 3 Nano 30B-A3B: NVIDIA publishes 31.6B parameters, 3.6B active per token with the
// embeddings. 23 MoE layers of 128 routed experts (2·2688·1856 each), top-6, and one shared
// expert of 3712: the active count drops 122 routed experts per MoE layer.
TEST(Hybrid, NemotronNanoMatchesPublishedCounts) {
  const ModelSpec& m = preset("nemotron-3-nano-30b-a3b");
  const ParameterCount c = count_parameters(m, m.vocab, m.seq_len);
  EXPECT_DOUBLE_EQ(c.total, 31577940288.0);
  EXPECT_NEAR(c.total, 31.6e9, 31.6e9 * 0.01);
  const double active = c.total - 23.0 * 122 * 2 * 2688 * 1856;
  EXPECT_NEAR(active, 3.6e9, 3.6e9 * 0.01);
}

// Megatron-LM's hybrid_flops per token, forward, Nemotron-H 8B at sequence 8192:
//   Mamba 2·4096·18560 + 7·8192·128 + 2·8192·4096 = 226,492,416 (x24);
//   attention 4·4096·(4096 + 1024 + 8192/2) = 150,994,944 (x4);
//   MLP 4·21504·4096 = 352,321,536 (x24); logits 2·4096·131072 = 1,073,741,824.
// 15,569,256,448 forward, times 3.
TEST(Hybrid, ModelFlopsAsMegatronCountsThem) {
  const ModelSpec& m = preset("nemotron-h-8b");
  EXPECT_DOUBLE_EQ(model_flops_per_sample(m, 8192) / 8192, 3 * 15569256448.0);
  // The conv is work the GPU does but not a model FLOP: 2·(8192 + 2048)·4 per token.
  const LayerFlops f = layer_forward_flops(m, 1, 1, LayerKind{false, false, Block::mamba});
  EXPECT_DOUBLE_EQ(f.conv, 2.0 * 10240 * 4);
  EXPECT_DOUBLE_EQ(f.scan, 7.0 * 8192 * 128);
}

// Megatron-Bridge's published model TFLOP/s over tokens/s per GPU for Nemotron 3 Nano at
// sequence 8192 (tests/validation/modern-runs.csv, rows ...-Nemotron_3_Nano-8-MXFP8-main-L272
// to L276: 845/37888, 725/32768, 794/35840, 726/32768, 321/14336 = 22.13 to 22.39 GFLOP per
// token, three-digit TFLOP/s): Megatron's formula, its Mamba width 2·hidden.
TEST(Hybrid, NanoModelFlopsMatchNvidiasPublishedFigures) {
  const double gflop = model_flops_per_sample(preset("nemotron-3-nano-30b-a3b"), 8192) / 8192 / 1e9;
  EXPECT_NEAR(gflop, 22.30, 22.30 * 0.01);
}

TEST(Hybrid, TpSplitsOneCollectivePairPerLayer) {
  const Scenario s = test::scenario(R"({"model": "nemotron-h-8b",
      "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"tp": 2, "pp": 2, "global_batch": 8, "micro_batch": 1}})");
  const Report e = estimate(s);
  ASSERT_EQ(e.stages.size(), 2u);
  // 26 layers per stage: one block each, so one all-gather and one reduce-scatter forward per
  // layer and micro-batch under sequence parallelism (a transformer layer has two of each).
  const int64_t mb = s.plan.micro_batches();
  for (const auto& op : e.stages[0].communication)
    if (op.group == CommGroup::tp && op.phase == Phase::forward &&
        op.kind == CollectiveKind::reduce_scatter && op.what == "outputs of proj and fc2")
      EXPECT_EQ(op.count, 26 * mb) << op.what;
  // Stage 0 holds the first 26 layers: 12 M, 2 *, 12 -.
  EXPECT_GT(e.stages[0].memory.activations, 0);
  EXPECT_GT(e.iteration_time_s, 0);
}

TEST(Hybrid, MambaActivationsByHand) {
  // One Mamba layer, b = 1, s = 8192, h = 4096, TP 1, bf16, no recompute, no SP: the norm's input
  // and output (2·2·s·h), in_proj's output (z, x, B, C, dt: 18560 channels), the conv's output
  // (10240), the scan's output and the gated norm's (2·8192), all 2 bytes, and the residual's
  // 1-byte mask (s·h) under dropout (Megatron-LM's 0.1; the megatron-core profile's 0 keeps none).
  const Scenario sc = test::scenario(R"({"model": "nemotron-h-8b",
      "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"global_batch": 8, "micro_batch": 1, "sequence_parallel": false,
               "hidden_dropout": 0.1}})");
  const double s = 8192, h = 4096;
  const double expect = 2 * 2 * s * h + 2 * s * 18560 + 2 * s * (10240 + 2 * 8192) + s * h;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(sc.model, sc.plan, LayerKind{false, false, Block::mamba}),
                   expect);
}

}  // namespace
}  // namespace stepcast
