// Hybrid Mamba models (model.layer_pattern, model.mamba): parameter counts by hand from
// Megatron-Core's MambaMixer and the presets' configs, model FLOPs by hand from Megatron-LM's
// hybrid_flops (megatron/training/training.py at 86df799dc4) and against Megatron-Bridge's
// published TFLOP/s, and what the pipeline, TP and memory do with a pattern's layers.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "stepcast/census.h"
#include "stepcast/compute.h"
#include "stepcast/estimate.h"
#include "stepcast/export_megatron.h"
#include "stepcast/memory.h"
#include "stepcast/rule_ids.h"
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

// Nemotron 3 Super 120B-A12B (presets/models/nemotron-3-super-120b-a12b.json), by hand:
//   Mamba (hidden 4096, 128 heads of 64, 8 groups, state 128, conv 4, with its norm):
//   109,640,064 (as Nemotron-H 8B's above), times 40.
//   attention: 4096·(4096 + 2·256) + 4096·4096 + 4096 = 35,655,680, times 8.
//   latent MoE block: router 4096·512 + 512; latent projections 2·4096·1024 = 8,388,608;
//   512 experts of 2·1024·2688 (latent -> 2688 -> latent, squared ReLU) = 2,818,572,288; one
//   shared expert 2·4096·5376 = 44,040,192; norm 4096: 2,873,102,848, times 40.
//   embedding and output 2·131072·4096 = 1,073,741,824; final norm 4096.
// 120,668,707,840 without the MTP module (NVIDIA: 120B total, 12B active); the one MTP module
// ("*E", its 2·4096·4096 projection and three norms) 2,942,325,248, held once though run twice.
// Active: 490 of 512 experts idle in 40 layers, 12,770,237,440 (12.8B; 12.2B without the input
// embedding, which no token multiplies).
TEST(Hybrid, NemotronSuperMatchesPublishedCounts) {
  const ModelSpec& m = preset("nemotron-3-super-120b-a12b");
  const ModelSpec::LayerCounts n = m.layer_counts(0, m.layers);
  EXPECT_EQ(n.mamba, 40);
  EXPECT_EQ(n.moe_block, 40);
  EXPECT_EQ(n.attention, 8);
  EXPECT_DOUBLE_EQ(expert_parameters(m), 2.0 * 1024 * 2688);
  EXPECT_DOUBLE_EQ(latent_projection_parameters(m), 2.0 * 4096 * 1024);
  const ParameterCount c = count_parameters(m, m.vocab, m.seq_len);
  EXPECT_DOUBLE_EQ(c.moe_layer, 2873102848.0);
  EXPECT_DOUBLE_EQ(c.mtp, 2942325248.0);
  EXPECT_DOUBLE_EQ(c.total - c.mtp, 120668707840.0);
  EXPECT_NEAR(c.total - c.mtp, 120e9, 120e9 * 0.01);
  const double active = c.total - c.mtp - 40.0 * 490 * 2 * 1024 * 2688;
  EXPECT_DOUBLE_EQ(active, 12770237440.0);
  EXPECT_NEAR(active - c.embedding, 12e9, 12e9 * 0.02);
  // Repeated MTP modules hold one module's parameters; separate ones hold each their own.
  ModelSpec separate = m;
  separate.mtp_repeated = false;
  EXPECT_DOUBLE_EQ(count_parameters(separate, m.vocab, m.seq_len).mtp, 2 * 2942325248.0);
}

// Megatron-Bridge's hybrid_flops (src/megatron/bridge/training/utils/flop_utils.py at
// 17a381f95) for Super at sequence 8192, per token forward: Mamba 2·4096·(4·4096 + 2·8·128 +
// 128) + 7·8192·128 + 2·8192·4096 = 226,492,416 (x40); attention 4·4096·(4096 + 256 + 4096) =
// 138,412,032 (x8, and x2 for the MTP depths); latent MoE 4·1024·2688·22 + 4·4096·1024 +
// 4·4096·5376 = 347,078,656 (x40, and x2); logits 2·4096·131072 (x3: the model and two MTP
// depths). 28,242,345,984 forward, 84.73 GFLOP a token; NVIDIA's published TFLOP/s over tokens/s
// (tests/validation/modern-runs.csv, rows ...-Nemotron_3_Super-64-...-L282 to L289: 795/9344 to
// 542/6400) are 84.69 to 85.10.
TEST(Hybrid, SuperModelFlopsMatchNvidiasPublishedFigures) {
  const ModelSpec& m = preset("nemotron-3-super-120b-a12b");
  EXPECT_DOUBLE_EQ(model_flops_per_sample(m, 8192) / 8192, 3 * 28242345984.0);
  EXPECT_NEAR(model_flops_per_sample(m, 8192) / 8192 / 1e9, 84.9, 84.9 * 0.01);
  // The latent MoE block's work: routed experts on the 1024-wide latent, the shared expert on the
  // hidden state, the two projections, per token.
  const LayerFlops e = layer_forward_flops(m, 1, 1, LayerKind{true, false, Block::mlp});
  EXPECT_DOUBLE_EQ(e.mlp, 4.0 * 1024 * 2688 * 22 + 4.0 * 4096 * 5376 + 4.0 * 4096 * 1024);
  EXPECT_DOUBLE_EQ(e.router, 2.0 * 4096 * 512);
}

// A latent MoE sends its latent-wide tokens: B200 row of the Super recipe (EP 64, flex,
// mxfp8): this GPU's 8192 tokens, 22 copies each, 1024 wide, in MXFP8 out (a byte and one E8M0
// scale per 32 values) and bf16 back.
// The MTP depths' two MoE layers exchange theirs as the 40 others: 42 layers x 8 micro-batches.
TEST(Hybrid, LatentMoeDispatchesLatentTokens) {
  const Scenario s = test::scenario(R"({"model": "nemotron-3-super-120b-a12b",
      "cluster": {"node": "dgx-b200", "nodes": 8},
      "plan": {"ep": 64, "global_batch": 512, "micro_batch": 1, "precision": "mxfp8",
               "moe_dispatcher": "flex", "recompute": "selective",
               "recompute_modules": "moe_act layernorm"}})");
  const Report e = estimate(s);
  ASSERT_EQ(e.stages.size(), 1u);
  int seen = 0;
  for (const auto& op : e.stages[0].communication) {
    if (op.kind != CollectiveKind::all_to_all) continue;
    ++seen;
    EXPECT_EQ(op.count, 42 * 8) << op.what;
    const bool dispatch = op.what == "tokens to their experts (dispatch)";
    EXPECT_DOUBLE_EQ(op.bytes, 8192.0 * 22 * 1024 * (dispatch ? 1 + 1.0 / 32 : 2)) << op.what;
  }
  EXPECT_EQ(seen, 4);
  // Latent off, the same tokens are 4096 wide.
  Scenario wide = s;
  wide.model.moe.latent_size = 0;
  const Report wide_report = estimate(wide);  // named: the loop reads its stages
  int combines = 0;
  for (const auto& op : wide_report.stages[0].communication)
    if (op.what == "expert outputs back (combine)") {
      ++combines;
      EXPECT_DOUBLE_EQ(op.bytes, 8192.0 * 22 * 4096 * 2);
    }
  EXPECT_EQ(combines, 1);
}

// The MTP modules' layers: Super's "*E" run twice (repeated) on the last stage, held once.
TEST(Hybrid, HybridMtpModuleRunsItsPattern) {
  const ModelSpec& m = preset("nemotron-3-super-120b-a12b");
  const std::vector<LayerKind> kinds = m.mtp_kinds();
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0].block, Block::attention);
  EXPECT_TRUE(kinds[1].moe);
  EXPECT_EQ(m.mtp_parameter_modules(), 1);
  // The hardware FLOPs add each depth's attention and MoE layers and the 2h -> h projection.
  ModelSpec none = m;
  none.mtp_layers = 0;
  none.mtp_pattern.clear();
  none.mtp_repeated = false;
  const double seq = 8192;
  auto layer = [&](LayerKind k) {
    const LayerFlops f = layer_forward_flops(m, 1, seq, k);
    return f.linear() + 0.5 * f.attention + f.scan + f.conv;
  };
  const double per_depth = layer(kinds[0]) + layer(kinds[1]) + seq * 4 * 4096.0 * 4096 +
                           logits_forward_flops(m, 1, seq, m.vocab);
  EXPECT_NEAR(layers_forward_flops(m, seq, true) - layers_forward_flops(none, seq, true),
              2 * per_depth, 1e-9 * per_depth);
}

// pretrain_hybrid.py's latent and MTP arguments are not in the flag table: the export says so.
TEST(Hybrid, ExportSaysTheLatentAndMtpArgumentsItLeavesOut) {
  const Scenario s = test::scenario(R"({"model": "nemotron-3-super-120b-a12b",
      "cluster": {"node": "dgx-b200", "nodes": 8},
      "plan": {"ep": 64, "global_batch": 512, "micro_batch": 1}})");
  const std::string args = export_plan(s, PlanExport::megatron_args);
  EXPECT_NE(args.find("# model.moe.latent_size 1024: --moe-latent-size 1024, not written here"),
            std::string::npos)
      << args;
  EXPECT_NE(args.find("# model.mtp_pattern \"*E\" and model.mtp_repeated: the MTP depths' "
                      "pattern in --hybrid-layer-pattern and --mtp-use-repeated-layer"),
            std::string::npos)
      << args;
}

// Bad input: a latent size below 1, an MTP pattern with a symbol that is no layer, on a model
// without a hybrid pattern, with a mixer the main pattern lacks, repeated modules without any.
TEST(Hybrid, BadLatentAndMtpPatternsAreRefused) {
  const std::string base = R"({"model": {"name": "t", "layers": 4, "hidden": 1024, "heads": 8,
      "kv_heads": 8, "ffn_hidden": 2048, "vocab": 32000, "seq_len": 2048, "position": "rope",
      "tied_embeddings": false, "norm": "rmsnorm", "ffn_type": "squared_relu",
      "layer_pattern": "M*EM", "mtp_layers": 2, "mtp_pattern": "*E", "mtp_repeated": true,
      "moe": {"experts": 8, "top_k": 2, "ffn_hidden": 512, "latent_size": 256}},
      "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"global_batch": 8, "micro_batch": 1, "ep": 8}})";
  const Scenario ok = test::scenario(base);
  EXPECT_EQ(ok.model.moe.latent_size, 256);
  EXPECT_EQ(ok.model.mtp_pattern, "*E");
  auto with = [&](const std::string& from, const std::string& to) {
    std::string doc = base;
    doc.replace(doc.find(from), from.size(), to);
    return test::error_of(doc);
  };
  Error e = with(R"("latent_size": 256)", R"("latent_size": 0)");
  EXPECT_EQ(e.path, "model.moe.latent_size");
  EXPECT_NE(e.message.find("model.moe.latent_size=0"), std::string::npos) << e.message;
  e = with(R"("mtp_pattern": "*E")", R"("mtp_pattern": "*X")");
  EXPECT_EQ(e.path, "model.mtp_pattern");
  EXPECT_EQ(e.rule, Rule::hybrid_pattern);
  EXPECT_NE(e.message.find("model.mtp_pattern[1]='X'"), std::string::npos) << e.message;
  e = with(R"("layer_pattern": "M*EM", )", "");
  EXPECT_EQ(e.path, "model.mtp_pattern");
  e = with(R"("mtp_pattern": "*E")", R"("mtp_pattern": "G*")");
  EXPECT_EQ(e.path, "model.mtp_pattern");
  EXPECT_NE(e.message.find("mixer"), std::string::npos) << e.message;
  e = with(R"("mtp_layers": 2, "mtp_pattern": "*E", )", "");
  EXPECT_EQ(e.path, "model.mtp_repeated");
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

// The SSD scan of a Mamba layer runs at the chunked scan's measured rate, not at the fused
// attention kernels': mamba_chunk_scan_combined's kernels (vLLM's copy) ran a median 1.18 x 10^7
// tokens/s on one H100 SXM at head dim 64, 128 heads, state 128 (vllm-project/vllm pull request
// 27299, cyang49's H100 microbenchmark of 2025-10-25). Nemotron-H 8B's mixer has that shape (128
// heads of 64, state 128; 8 groups, which the per-token count leaves out): at micro-batch 1 of
// 8,192 tokens, TP 1, its forward is 8192 / 1.18e7 s, and Megatron's 7·8192·128 FLOPs a token
// at 0.0875 of the H100's 989.4 TFLOP/s by hand; the backward twice that. The fitted attention
// efficiency does not move it.
TEST(Hybrid, SsdScanRunsAtItsMeasuredRate) {
  const Scenario sc = test::scenario(R"({"model": "nemotron-h-8b",
      "cluster": {"node": "dgx-h100", "nodes": 1},
      "plan": {"global_batch": 8, "micro_batch": 1, "tp": 1}})");
  ASSERT_EQ(sc.model.seq_len, 8192);
  Device d = make_device(sc.cluster.groups[0].gpu, sc.plan.precision, sc.calibration);
  const LayerKind mamba{false, false, Block::mamba};
  const LayerCompute l = layer_compute(sc.model, sc.plan, d, mamba);
  const double by_hand = 7.0 * 8192 * 8192 * 128 / (989.4e12 * 0.0875);
  EXPECT_NEAR(l.attention_forward_s, by_hand, 1e-9 * by_hand);
  EXPECT_NEAR(l.attention_forward_s, 8192 / 1.18e7, 0.01 * 8192 / 1.18e7);
  EXPECT_DOUBLE_EQ(l.attention_backward_s, 2 * l.attention_forward_s);
  d.cal.attention_efficiency /= 2;
  EXPECT_DOUBLE_EQ(layer_compute(sc.model, sc.plan, d, mamba).attention_forward_s,
                   l.attention_forward_s);
  // Above an H100's peak, the H100's rate: a B200 (2,250 TFLOP/s) runs the scan no faster (FLA's
  // Triton chunked scan measured slower there); an A100 at the same share of its own 312.
  auto scan_on = [&](const char* node) {
    const Scenario s = test::scenario(fmt::format(R"({{"model": "nemotron-h-8b",
        "cluster": {{"node": "{}", "nodes": 1}},
        "plan": {{"global_batch": 8, "micro_batch": 1, "tp": 1}}}})", node));
    const Device dev = make_device(s.cluster.groups[0].gpu, s.plan.precision, s.calibration);
    return layer_compute(s.model, s.plan, dev, mamba).attention_forward_s;
  };
  EXPECT_NEAR(scan_on("dgx-b200"), by_hand, 1e-9 * by_hand);
  const double a100 = 7.0 * 8192 * 8192 * 128 / (312e12 * 0.0875);
  EXPECT_NEAR(scan_on("dgx-a100"), a100, 1e-9 * a100);
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
