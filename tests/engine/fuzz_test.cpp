// Random and truncated input never crashes the parser and never yields NaN or Inf: either a clean
// error or a finite report.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "stepcast/share_link.h"
#include "test_util.h"

namespace stepcast {
namespace {

const std::string kScenario = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
  "nodes": 8}, "plan": {"tp": 8, "pp": 4, "dp": 2, "vpp": 2, "micro_batch": 1,
  "global_batch": 512, "sequence_parallel": true, "recompute": "selective",
  "distributed_optimizer": true, "precision": "bf16"}, "seq_len": 4096})";

void expect_finite(const Report& r) {
  ASSERT_TRUE(std::isfinite(r.iteration_time_s));
  EXPECT_GT(r.iteration_time_s, 0);
  EXPECT_TRUE(std::isfinite(r.mfu) && std::isfinite(r.tokens_per_s));
  const Json j = to_json(r);
  EXPECT_EQ(j.dump().find("null"), std::string::npos);  // nlohmann writes NaN/Inf as null
}

TEST(Fuzz, TruncatedDocumentsGiveErrors) {
  for (size_t n = 0; n < kScenario.size(); ++n) {
    auto s = parse_scenario(kScenario.substr(0, n), builtin_catalog());
    EXPECT_FALSE(s.ok()) << n;
    if (!s.ok()) EXPECT_FALSE(s.error().message.empty());
  }
}

TEST(Fuzz, MutatedDocumentsErrorOrEstimate) {
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[]\":,0123456789-.eE tfnlarsu";
  int estimated = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = kScenario;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + rng() % 5); break;
        default: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    auto s = parse_scenario(text, builtin_catalog());
    if (!s.ok()) {
      EXPECT_FALSE(s.error().message.empty());
      continue;
    }
    ++estimated;
    expect_finite(estimate(*s));
  }
  EXPECT_GT(estimated, 0);  // some mutations (digits changed) still describe a valid plan
}

TEST(Fuzz, RandomValidPlansAreFinite) {
  std::mt19937 rng(7);
  const char* models[] = {"llama3-8b", "llama3-70b", "gpt3-175b", "mistral-7b", "nemotron4-15b"};
  const char* recompute[] = {"none", "selective", "full"};
  int estimated = 0;
  for (int i = 0; i < 2000; ++i) {
    const int tp = 1 << (rng() % 4), pp = 1 << (rng() % 4), cp = 1 << (rng() % 2);
    const int nodes = 1 << (rng() % 5);
    const int vpp = pp > 1 ? 1 + static_cast<int>(rng() % 2) : 1;
    const int mb = 1 << (rng() % 3);
    const std::string json = fmt::format(
        R"({{"model": "{}", "cluster": {{"node": "dgx-h100", "nodes": {}}}, "plan": {{"tp": {},
        "pp": {}, "cp": {}, "vpp": {}, "micro_batch": {}, "global_batch": {}, "recompute": "{}",
        "sequence_parallel": {}, "zero_stage": {}, "tp_comm_overlap": {}}}}})",
        models[rng() % 5], nodes, tp, pp, cp, vpp, mb, mb * 512, recompute[rng() % 3],
        rng() % 2 ? "true" : "false", rng() % 4, rng() % 2 ? "true" : "false");
    auto s = parse_scenario(json, builtin_catalog());
    if (!s.ok()) continue;  // plans that do not divide are rejected, which is right
    ++estimated;
    expect_finite(estimate(*s));
  }
  EXPECT_GT(estimated, 100);
}

TEST(Fuzz, MutatedLinksErrorOrEstimate) {
  // Links are untrusted: any text decodes to an error or to data that then validates or not.
  const std::string base =
      "http://x/#v=1&model=llama3-8b&groups=dgx-a100:1,dgx-h100:1&igl=roce-100g&tp=8&pp=2&gbs=64"
      "&stages=0:auto,1:auto&seq=4096&tokens=1e12&price=2.5";
  std::mt19937 rng(99);
  const std::string alphabet = "%&=:,#{}[]\"0123456789abcdefv.-+";
  int opened = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text = base;
    for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
      const size_t pos = rng() % text.size();
      if (rng() % 2) text[pos] = alphabet[rng() % alphabet.size()];
      else text.erase(pos, 1 + rng() % 4);
    }
    auto doc = scenario_from_link(text);
    if (!doc.ok()) {
      EXPECT_EQ(doc.error().message.rfind("link: ", 0), 0u) << doc.error().message;
      continue;
    }
    auto s = scenario_from_json(doc->scenario, builtin_catalog());
    if (!s.ok()) continue;
    ++opened;
    expect_finite(estimate(*s));
  }
  EXPECT_GT(opened, 0);
}

}  // namespace
}  // namespace stepcast
