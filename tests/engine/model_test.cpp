// Parameter and FLOP counts against published model sizes and the closed forms of Narayanan et
// al. (SC21) and Korthikanti et al.
#include <gtest/gtest.h>

#include "stepcast/rule_ids.h"
#include "test_util.h"

namespace stepcast {
namespace {

double nominal_params(const char* id) {
  const ModelSpec* m = builtin_catalog().find_model(id);
  EXPECT_NE(m, nullptr) << id;
  return m ? count_parameters(*m, m->vocab, m->seq_len).total : 0;
}

TEST(Model, ParameterCountsMatchPublishedSizes) {
  // GPT-3 175B: 96 x (12 h^2 + 13 h) + 50257 h + 2048 h + 2 h = 174,604,259,328.
  EXPECT_DOUBLE_EQ(nominal_params("gpt3-175b"), 174604259328.0);
  // Llama-2-70B: 80 x 855,654,400 + 2 x 32000 x 8192 + 8192 = 68,976,648,192 (69.0 B).
  EXPECT_DOUBLE_EQ(nominal_params("llama2-70b"), 68976648192.0);
  // Llama-3-8B: 32 x 218,112,000 + 2 x 128256 x 4096 + 4096 = 8,030,261,248 (8.03 B).
  EXPECT_DOUBLE_EQ(nominal_params("llama3-8b"), 8030261248.0);
}

TEST(Model, PaddedVocabularyIsAMultipleOf128TimesTp) {
  EXPECT_EQ(padded_vocab(50257, 1), 50304);
  EXPECT_EQ(padded_vocab(50257, 8), 51200);
  EXPECT_EQ(padded_vocab(32000, 4), 32256);
  EXPECT_EQ(padded_vocab(51200, 8), 51200);
}

TEST(Model, LayerFlopsOfAGptLayer) {
  // Per token: QKV 6 h^2, projection 2 h^2, MLP 16 h^2 (f = 4h), attention 4 s h, times 2 for
  // multiply-add: 2 b s (12 h^2) for the linear layers.
  ModelSpec m = *builtin_catalog().find_model("gpt3-175b");
  const double b = 2, s = 2048, h = 12288;
  const LayerFlops f = layer_forward_flops(m, b, s);
  EXPECT_DOUBLE_EQ(f.qkv, 2 * b * s * 3 * h * h);
  EXPECT_DOUBLE_EQ(f.projection, 2 * b * s * h * h);
  EXPECT_DOUBLE_EQ(f.mlp, 2 * b * s * 8 * h * h);
  EXPECT_DOUBLE_EQ(f.attention, 4 * b * s * s * h);
}

TEST(Model, PublishedModelFlopsMatchNarayananFormula) {
  // 72 B s l h^2 (1 + s/6h + V/12lh) per iteration (Korthikanti et al., appendix), per sample:
  // the full s x s attention matrix, as the published tables of 2021-24 count it.
  ModelSpec m = *builtin_catalog().find_model("gpt3-175b");
  const double s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(published_model_flops_per_sample(m, s) / expected, 1.0, 1e-12);
}

TEST(Model, ModelFlopsCountCausalAttentionAsMegatronDoes) {
  // Megatron-LM's num_floating_point_operations since commit 8873b55d6a (2025-03): the causal
  // mask halves the attention core, 72 B s l h^2 (1 + s/12h + V/12lh).
  ModelSpec m = *builtin_catalog().find_model("gpt3-175b");
  const double s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * s * l * h * h * (1 + s / (12 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops_per_sample(m, s) / expected, 1.0, 1e-12);
}

// Chunked attention (Llama 4's attention_chunk_size, as Megatron-Bridge's Llama4SelfAttention
// runs it: the sequence padded to whole chunks, each a causal sequence of its own). The share
// of the full causal core, by hand: 4 chunks of 8,192 for 32,768 tokens, 4·8192²/32768² = 1/4;
// 20,000 tokens pad to 3 chunks, 3·8192²/20000²; one chunk or less, all of it. Megatron's model
// FLOPs keep the full causal count; the work (HFU) and the time run the chunks: per sample and
// layer the work falls by 3 x (1/2 · 4·s²·heads·head_dim) x 3/4 (forward and backward).
TEST(Model, ChunkedAttentionRunsItsChunksWhileModelFlopsKeepMegatronsCount) {
  ModelSpec m = *builtin_catalog().find_model("llama4-scout-17b-16e");
  ASSERT_EQ(m.attention.chunk, 8192);
  EXPECT_DOUBLE_EQ(m.chunked_attention_share(32768), 0.25);
  EXPECT_DOUBLE_EQ(m.chunked_attention_share(20000), 3.0 * 8192 * 8192 / (20000.0 * 20000.0));
  EXPECT_DOUBLE_EQ(m.chunked_attention_share(8192), 1.0);
  EXPECT_DOUBLE_EQ(m.chunked_attention_share(4096), 1.0);

  const std::string plan = R"({"tp": 4, "pp": 1, "ep": 16, "global_batch": 64, "micro_batch": 1})";
  const std::string chunked = R"({"model": "llama4-scout-17b-16e", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": )" + plan + R"(, "seq_len": 32768})";
  Json full = Json::parse(chunked);
  Json preset;
  for (const PresetFile& f : builtin_preset_files())
    if (f.path == "models/llama4-scout-17b-16e.json") preset = Json::parse(f.text);
  ASSERT_TRUE(preset.is_object());
  preset.erase("attention");
  preset["seq_len"] = 32768;
  full["model"] = preset;
  full.erase("seq_len");
  const Report a = estimate(test::scenario(chunked)), b = estimate(test::scenario(full.dump()));
  EXPECT_LT(a.iteration_time_s, 0.9 * b.iteration_time_s);
  // The same model FLOPs: model TFLOP/s x time.
  EXPECT_NEAR(a.model_tflops_per_gpu * a.iteration_time_s / (b.model_tflops_per_gpu * b.iteration_time_s),
              1.0, 1e-12);
  auto work = [](const Report& r) { return r.hfu * r.iteration_time_s * r.gpus * 1e12 * r.peak_tflops; };
  const double s = 32768, heads_width = 40 * 128, samples = 64;
  const double saved = samples * 48 * 3 * 0.5 * 4 * s * s * heads_width * 0.75;
  EXPECT_NEAR((work(b) - work(a)) / saved, 1.0, 1e-9);
}

// Bad chunks: with a window (a layer attends one way), below one token, and a CP split whose
// 2·cp pieces cut chunks (32,768 / 8 = 4,096 < 8,192; Megatron-Bridge asserts whole chunks).
TEST(Model, BadAttentionChunksAreRefusedNamingTheKey) {
  Json m;
  for (const PresetFile& f : builtin_preset_files())
    if (f.path == "models/llama4-scout-17b-16e.json") m = Json::parse(f.text);
  ASSERT_TRUE(m.is_object());
  m["seq_len"] = 32768;
  m["attention"]["window"] = 128;
  const std::string plan = R"({"tp": 4, "pp": 1, "ep": 8, "global_batch": 16, "micro_batch": 1})";
  const std::string cluster = R"({"node": "dgx-h100", "nodes": 2})";
  Error both = test::error_of(test::doc(plan, m.dump(), cluster));
  EXPECT_EQ(both.rule, Rule::attention_chunk);
  EXPECT_EQ(both.path, "model.attention.chunk");
  m["attention"] = {{"chunk", 0}};
  EXPECT_EQ(test::error_of(test::doc(plan, m.dump(), cluster)).path, "model.attention.chunk");
  m["attention"] = {{"chunk", 8192}};
  Error cp = test::error_of(test::doc(R"({"tp": 2, "pp": 1, "cp": 4, "ep": 8,
      "global_batch": 16, "micro_batch": 1})", m.dump(), cluster));
  EXPECT_EQ(cp.rule, Rule::attention_chunk);
  EXPECT_EQ(cp.path, "plan.cp");
  EXPECT_NE(cp.message.find("4096"), std::string::npos) << cp.message;
  // CP 2: pieces of 8,192 hold whole chunks.
  test::scenario(test::doc(R"({"tp": 4, "pp": 1, "cp": 2, "ep": 8, "etp": 1,
      "global_batch": 16, "micro_batch": 1})", m.dump(), cluster));
}

// NVIDIA's published model TFLOP/s over tokens/s per GPU for dense Llama at sequence 8192
// (Megatron-Bridge's performance tables, tests/validation/modern-runs.csv: rows
// MBRIDGE25.09-DGX-GB200-LLAMA3_8B-8-NA-L607 51.47, ...-LLAMA3_70B-64-NA-L608 449.3,
// ...-LLAMA3.1_405B-128-NA-L609 2524.0 GFLOP per token). Counting the full s x s matrix put the
// engine's 12 % (8B) to 5 % (405B) above them.
TEST(Model, DenseModelFlopsMatchNvidiasPublishedFigures) {
  auto gflop_per_token = [](const char* id) {
    return model_flops_per_sample(*builtin_catalog().find_model(id), 8192) / 8192 / 1e9;
  };
  EXPECT_NEAR(gflop_per_token("llama3-8b"), 51.47, 51.47 * 0.005);
  EXPECT_NEAR(gflop_per_token("llama3-70b"), 449.3, 449.3 * 0.005);
  EXPECT_NEAR(gflop_per_token("llama3.1-405b"), 2524.0, 2524.0 * 0.005);
}

TEST(Model, DroppedTokensAreNotCounted) {
  // A capacity factor of 0.5 computes half of the routed copies: the model FLOPs lose half of
  // the routed experts' 3 x 2 x s x h x top_k x expert width x 3 (SwiGLU) per MoE layer.
  ModelSpec m = *builtin_catalog().find_model("mixtral-8x7b");
  const double s = 4096, h = 4096, k = 2, f = 14336, layers = 32;
  const double dropless = model_flops_per_sample(m, s);
  m.moe.capacity_factor = 0.5;
  EXPECT_NEAR(dropless - model_flops_per_sample(m, s), 0.5 * layers * 3 * 2 * s * h * k * f * 3,
              1e-9 * dropless);
  m.moe.capacity_factor = 2;  // padding is no token's work
  EXPECT_DOUBLE_EQ(model_flops_per_sample(m, s), dropless);
}

TEST(Model, GroupedQueryAttentionShrinksQkv) {
  ModelSpec m = *builtin_catalog().find_model("llama3-70b");  // 64 heads, 8 KV heads
  const double h = 8192, kv = 1024;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 1, 8192).qkv, 2 * 8192 * h * (h + 2 * kv));
  EXPECT_EQ(ffn_matrices(m.ffn_type), 3);
}

}  // namespace
}  // namespace stepcast
