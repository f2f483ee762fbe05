// Parameter and FLOP counts against published model sizes and the closed forms of Narayanan et
// al. (SC21) and Korthikanti et al.
#include <gtest/gtest.h>

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

TEST(Model, ModelFlopsMatchNarayananFormula) {
  // 72 B s l h^2 (1 + s/6h + V/12lh) per iteration (Korthikanti et al., appendix), per sample.
  ModelSpec m = *builtin_catalog().find_model("gpt3-175b");
  const double s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(model_flops_per_sample(m, s) / expected, 1.0, 1e-12);
}

TEST(Model, GroupedQueryAttentionShrinksQkv) {
  ModelSpec m = *builtin_catalog().find_model("llama3-70b");  // 64 heads, 8 KV heads
  const double h = 8192, kv = 1024;
  EXPECT_DOUBLE_EQ(layer_forward_flops(m, 1, 8192).qkv, 2 * 8192 * h * (h + 2 * kv));
  EXPECT_EQ(ffn_matrices(m.ffn_type), 3);
}

}  // namespace
}  // namespace stepcast
