// Hostile and extreme input (issue 13): each finding as a regression test. No input crashes,
// hangs or exhausts the engine; every error is one line naming the limit or the range; no report
// holds a number that is not finite.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <random>

#include "stepcast/balance.h"
#include "stepcast/gemm_fit.h"
#include "stepcast/limits.h"
#include "stepcast/resolve.h"
#include "stepcast/search.h"
#include "stepcast/share_link.h"
#include "test_util.h"

namespace stepcast {
namespace {

const char* kHead = R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1}, )";

std::string nested(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// One line of printable text: no control character (C0, DEL) anywhere.
void expect_one_line(const std::string& message) {
  for (unsigned char c : message) EXPECT_FALSE(c < 0x20 || c == 0x7F) << message;
}

// Wall time of `f`, seconds. The bounds below are generous (sanitizers, a loaded machine): what
// they catch took minutes to hours before.
constexpr double kQuick = 5.0;
template <class F>
double seconds(F f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// 1. Deep nesting: bounded at parse time for every JSON the engine reads, the limit named.
TEST(Hostile, DeepNestingIsAParseErrorNamingTheLimit) {
  EXPECT_TRUE(parse_json(nested(kMaxJsonDepth)).ok());
  auto deep = parse_json(nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, ErrorCode::parse_error);
  EXPECT_NE(deep.error().message.find("more than 32 levels"), std::string::npos);

  // The issue's crash: 75,000 arrays inside plan.tp (the value used to be printed back).
  const std::string doc =
      std::string(kHead) + R"("plan": {"tp": )" + nested(75000) + R"(, "global_batch": 8}})";
  auto s = parse_scenario(doc, test::catalog());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::parse_error);
  EXPECT_LT(s.error().message.size(), 120u);

  // Links: format 0, a cluster as JSON, a layout as JSON.
  const std::string deep_link = "%7B%22plan%22:" + nested(100) + "%7D";
  for (const std::string& url : {"#" + deep_link, "#v=2&cluster=%7B%22a%22:" + nested(100) + "%7D",
                                 "#v=2&stages=" + nested(100)}) {
    auto r = scenario_from_link(url);
    ASSERT_FALSE(r.ok()) << url;
    expect_one_line(r.error().message);
  }
  EXPECT_NE(scenario_from_link("#" + deep_link).error().message.find("levels deep"),
            std::string::npos);

  // Too much text is refused before it is read.
  auto big = parse_json(std::string(kMaxDocumentBytes + 1, ' '));
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("at most 1048576"), std::string::npos);
}

TEST(Hostile, EchoedValuesAreShort) {
  // A value of a million characters, or a wide object, is echoed in a few dozen.
  for (const std::string& value :
       {"\"" + std::string(1000000, 'x') + "\"", std::string("[") + nested(20) + "]",
        std::string(R"({"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9})"),
        // (A fuzzer's find: the cut fell inside the "…" of a nested array, leaving bytes that
        // are not UTF-8, which JSON cannot hold.)
        std::string(R"({"<tp":8,"replicas":[{"x":"auto"}],"globa]l_h":109951162})")}) {
    const auto e = test::error_of(std::string(kHead) + R"("plan": {"tp": )" + value +
                                  R"(, "global_batch": 8}})");
    EXPECT_LT(e.message.size(), 100u) << e.message;
    EXPECT_TRUE(valid_utf8(e.message)) << e.message;
  }
}

// 2 and 5. Text that is not UTF-8, and control characters: never raw in a message.
TEST(Hostile, KeysAndValuesAreEchoedAsOneLine) {
  const auto key = test::error_of(
      std::string(kHead) +
      "\"plan\": {\"global_batch\": 8, \"a\\nerror: b\\u001b[31m\\u007f\\u0085\": 1}}");
  EXPECT_EQ(key.code, ErrorCode::unknown_key);
  expect_one_line(key.message);
  expect_one_line(key.path);
  EXPECT_NE(key.message.find("plan.a\\nerror: b\\u001b[31m\\u007f\\u0085 is not a known key"),
            std::string::npos)
      << key.message;
  const auto value = test::error_of(R"({"model": "llama3-8b\nerror: fake", "cluster": {"node":
    "dgx-h100", "nodes": 1}, "plan": {"global_batch": 8}})");
  expect_one_line(value.message);
  // A link cannot forge an "error:" line either.
  auto link =
      scenario_from_link("#v=2&model=llama3-8b%0Aerror%3A%20fake&node=dgx-h100&nodes=1&gbs=8");
  ASSERT_TRUE(link.ok());
  auto s = scenario_from_json(link->scenario, test::catalog());
  ASSERT_FALSE(s.ok());
  expect_one_line(s.error().message);
  // Bytes that are not UTF-8 never reach a JSON string.
  EXPECT_FALSE(parse_scenario(
                   std::string(kHead) + "\"name\": \"\xff\xfe\", \"plan\": {\"global_batch\": 8}}",
                   test::catalog())
                   .ok());
  EXPECT_EQ(printable("a\xff\xc0\xaf"
                      "b\n\x1b\x7f"),
            "a\\xff\\xc0\\xafb\\n\\u001b\\u007f");
  EXPECT_EQ(printable("K\xc3\xbc"
                      "che"),
            "K\xc3\xbc"
            "che");  // UTF-8 stays
  EXPECT_EQ(printable(std::string(100, 'x'), 10), std::string(10, 'x') + "...");
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));  // a surrogate
}

TEST(Hostile, NamesInTheTextReportAreOneLine) {
  const Scenario s = test::scenario(R"({"model": {"name": "m\n\u001b[2J", "layers": 2,
    "hidden": 256, "heads": 4, "ffn_hidden": 1024, "vocab": 1000, "seq_len": 128,
    "ffn_type": "gelu", "position": "rope", "tied_embeddings": true}, "cluster": {"node":
    "dgx-h100", "nodes": 1}, "plan": {"global_batch": 8}})");
  const std::string text = to_text(estimate(s), s);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("m\\n\\u001b[2J ("), std::string::npos);
  EXPECT_NE(text.find(" x NVIDIA H100 SXM5 80GB (1 node)"), std::string::npos) << text;
}

// Issue 38 §2 "Error text": a custom GPU's name (a newline, an ESC and 20 KB) in a warning and in
// the GEMM fit's messages is escaped and cut (limits.h: kNameInMessageBytes), never quoted raw.
std::string one_short_line(const std::string& message) {
  for (const char c : message) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << message;
  EXPECT_LT(message.size(), 400u) << message.substr(0, 400);
  return message;
}

TEST(Hostile, CustomNamesAreEscapedAndCutInEveryMessage) {
  const std::string name = "v100\nerror: forged\x1b[2J" + std::string(20000, 'x');
  Json doc = Json::parse(R"({"model": "llama3-8b", "cluster": {"gpu": {"name": "", "arch":
    "volta", "memory_gib": 32, "memory_bandwidth_GBps": 900, "peak_tflops": {"bf16": 125,
    "fp16": 125}}, "gpus_per_node": 8, "nodes": 1, "intra_node_link": "nvlink4",
    "inter_node_link": "ib-ndr"}, "plan": {"tp": 8, "global_batch": 8,
    "flash_attention": true}})");
  doc["cluster"]["gpu"]["name"] = name;
  const Scenario s = test::scenario(doc.dump());
  // The warning of summary.cpp (FlashAttention on Volta) quotes the name.
  const Report r = estimate(s);
  bool warned = false;
  for (const auto& w : r.warnings)
    if (w.find("FlashAttention needs Ampere") != std::string::npos) {
      warned = true;
      EXPECT_NE(one_short_line(w).find("v100\\nerror: forged\\u001b[2Jxxx"), std::string::npos)
          << w;
      EXPECT_NE(w.find("xxx... runs unfused"), std::string::npos) << w;
    }
  EXPECT_TRUE(warned);
  // The GEMM fit's messages (gemm_fit.cpp): a row above the GPU's peak, and a precision it lacks.
  const auto& base = builtin_catalog().calibration.for_arch("volta");
  const GpuSpec& gpu = s.cluster.groups.front().gpu;
  auto above = fit_gemm_table("m,n,k,dtype,tflops\n4096,4096,4096,bf16,900\n", gpu, base);
  ASSERT_FALSE(above.ok());
  EXPECT_NE(one_short_line(above.error().message).find("above v100\\nerror"), std::string::npos)
      << above.error().message;
  auto no_peak = fit_gemm_table("m,n,k,dtype,tflops\n4096,4096,4096,fp8,90\n", gpu, base);
  ASSERT_FALSE(no_peak.ok());
  EXPECT_NE(one_short_line(no_peak.error().message).find("xxx... has no fp8 peak"),
            std::string::npos)
      << no_peak.error().message;
}

// Issue 38 §2: a key given twice in one object is refused, as a link refuses a repeated key
// (JSON parsers keep the last value without a word); the same key in two objects is not repeated.
TEST(Hostile, DuplicateKeysAreRefused) {
  for (const char* json :
       {R"({"model": "llama3-8b", "model": "llama3-70b", "cluster": {"node": "dgx-h100",
           "nodes": 1}, "plan": {"global_batch": 8}})",
        R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100", "nodes": 1},
           "plan": {"tp": 8, "global_batch": 8, "tp": 1}})"}) {
    const Error e = test::error_of(json);
    EXPECT_EQ(e.code, ErrorCode::duplicate_key) << e.message;
    EXPECT_NE(e.message.find("twice in one object: give it once"), std::string::npos) << e.message;
  }
  const Error named = test::error_of(R"({"plan": {"a\nb": 1, "a\nb": 2}})");
  EXPECT_NE(named.message.find(R"(has the key "a\nb" twice)"), std::string::npos) << named.message;
  EXPECT_TRUE(parse_json(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]})").ok());
}

// Issue 38 §2: a link's achievable bus bandwidth past its line rate (10^6 GB/s on a 1 GB/s link)
// is refused, naming both; an all-reduce may reach twice it where the switch reduces (NVLS).
TEST(Hostile, BusBandwidthAboveTheLineRateIsRefused) {
  auto with_link = [](const std::string& link) {
    return R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm5-80gb", "gpus_per_node": 8,
      "nodes": 2, "intra_node_link": "nvlink4", "inter_node_link": )" + link +
           R"(}, "plan": {"tp": 8, "global_batch": 16}})";
  };
  const Error busbw = test::error_of(with_link(
      R"({"scope": "inter_node", "bandwidth_GBps_per_dir": 1, "busbw_GBps": 1e6})"));
  EXPECT_EQ(busbw.code, ErrorCode::out_of_range);
  EXPECT_EQ(busbw.path, "cluster.inter_node_link.busbw_GBps");
  EXPECT_NE(busbw.message.find("cluster.inter_node_link.busbw_GBps=1e+06 must be <= 1 x "
                               "bandwidth_GBps_per_dir=1: a ring moves at most the line rate"),
            std::string::npos)
      << busbw.message;
  const Error ar = test::error_of(with_link(
      R"({"scope": "inter_node", "bandwidth_GBps_per_dir": 50, "allreduce_busbw_GBps": 101})"));
  EXPECT_EQ(ar.path, "cluster.inter_node_link.allreduce_busbw_GBps");
  // NVLS-like: all-reduce above the line rate, within twice it.
  test::scenario(with_link(R"({"scope": "inter_node", "bandwidth_GBps_per_dir": 50,
      "busbw_GBps": 48, "allreduce_busbw_GBps": 99})"));
}

// 3. Work budgets: an estimate's cost does not grow with the global batch, and every count that
// makes it grow has a limit with a clear error.
TEST(Hostile, AutoMicroBatchesDoNotGrowWithTheBatch) {
  const std::string doc = R"({"model": "llama3-8b", "cluster": {"groups": [{"node": "dgx-h100",
    "nodes": 1}, {"node": "dgx-a100", "nodes": 1}]}, "plan": {"tp": 8, "replicas": [
    {"group": 0, "micro_batches": "auto"}, {"group": 1, "micro_batches": "auto"}],
    "global_batch": 1099511627776}})";
  Report r;
  EXPECT_LT(seconds([&] { r = estimate(test::scenario(doc)); }), kQuick);
  ASSERT_EQ(r.replicas.size(), 2u);
  EXPECT_EQ(r.replicas[0].micro_batches + r.replicas[1].micro_batches, int64_t{1} << 40);
  EXPECT_GT(r.replicas[0].micro_batches, r.replicas[1].micro_batches);  // H100 takes more
  EXPECT_TRUE(report_json(r).ok());
}

// The greedy the balancer used to run one micro-batch at a time (the first pass of today's).
std::vector<int64_t> greedy(std::span<const double> per_mb, std::span<const double> fill,
                            std::span<const int> counts, std::span<const int64_t> fixed,
                            int64_t total) {
  const size_t n = per_mb.size();
  std::vector<int64_t> m(n, 0);
  int64_t left = total;
  for (size_t i = 0; i < n; ++i) {
    m[i] = fixed[i] > 0 ? fixed[i] : 1;
    left -= counts[i] * m[i];
  }
  auto next = [&](size_t i) { return fill[i] + static_cast<double>(m[i] + 1) * per_mb[i]; };
  while (left > 0) {
    size_t best = n;
    for (size_t i = 0; i < n; ++i)
      if (fixed[i] == 0 && counts[i] <= left && (best == n || next(i) < next(best))) best = i;
    if (best == n) break;
    m[best] += 1;
    left -= counts[best];
  }
  return m;
}

// The earliest finish of a split that adds up exactly, by dynamic programming over every sum (or
// infinity where none adds up): the reference for small batches.
double best_exact_finish(std::span<const double> per_mb, std::span<const double> fill,
                         std::span<const int> counts, std::span<const int64_t> fixed,
                         int64_t total) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  double floor = 0;  // the given sets' finish
  for (size_t i = 0; i < per_mb.size(); ++i)
    if (fixed[i] > 0) {
      floor = std::max(floor, fill[i] + static_cast<double>(fixed[i]) * per_mb[i]);
      total -= counts[i] * fixed[i];
    }
  if (total < 0) return kNone;
  std::vector<double> best(static_cast<size_t>(total) + 1, kNone);
  best[0] = floor;
  for (size_t i = 0; i < per_mb.size(); ++i) {
    if (fixed[i] > 0) continue;
    std::vector<double> next(best.size(), kNone);
    for (int64_t sum = 0; sum <= total; ++sum)
      for (int64_t k = 1; counts[i] * k <= sum; ++k)
        next[static_cast<size_t>(sum)] = std::min(
            next[static_cast<size_t>(sum)],
            std::max(best[static_cast<size_t>(sum - counts[i] * k)],
                     fill[i] + static_cast<double>(k) * per_mb[i]));
    best = std::move(next);
  }
  return best.back();
}

TEST(Hostile, BulkBalanceIsTheBestExactSplit) {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 600; ++trial) {
    const size_t n = 1 + rng() % 5;
    std::vector<double> per_mb, fill;
    std::vector<int> counts;
    std::vector<int64_t> fixed;
    // Speeds that tie (the same GPU twice), are close, or differ by orders of magnitude.
    const double speeds[] = {1.0, 1.0, 2.0, 3.0, 0.37, 1e-3, 123.456, 1.0 / 3};
    for (size_t i = 0; i < n; ++i) {
      per_mb.push_back(speeds[rng() % 8] * (rng() % 2 ? 1.0 : 1.0 + 1e-9 * (rng() % 3)));
      fill.push_back(rng() % 2 ? 0.0 : per_mb.back() * static_cast<double>(rng() % 8));
      counts.push_back(rng() % 3 == 0 ? 1 + static_cast<int>(rng() % 40)
                                      : 1 + static_cast<int>(rng() % 3));
      fixed.push_back(rng() % 5 == 0 ? 1 + static_cast<int64_t>(rng() % 5) : 0);
    }
    const int64_t total = static_cast<int64_t>(rng() % 300);
    const auto m = balance_micro_batches(per_mb, fill, counts, fixed, total);
    const double best = best_exact_finish(per_mb, fill, counts, fixed, total);
    if (!std::isfinite(best)) {  // no split adds up: as many as fit, greedily
      EXPECT_EQ(m, greedy(per_mb, fill, counts, fixed, total)) << "trial " << trial;
      continue;
    }
    int64_t sum = 0;
    double finish = 0;
    for (size_t i = 0; i < n; ++i) {
      sum += counts[i] * m[i];
      finish = std::max(finish, fill[i] + static_cast<double>(m[i]) * per_mb[i]);
    }
    std::string what = fmt::format("trial {}: total {}", trial, total);
    for (size_t i = 0; i < n; ++i)
      what += fmt::format("; {} x {} s + {} s fill{}: {}", counts[i], per_mb[i], fill[i],
                          fixed[i] > 0 ? " (given)" : "", m[i]);
    EXPECT_EQ(sum, total) << what;
    EXPECT_NEAR(finish, best, 1e-12 * best) << what;
  }
  // A batch of 2^40 in one call.
  const double per[] = {1.0, 2.5, 2.5}, none[] = {0, 0, 0};
  const int counts[] = {3, 1000000, 7};
  const int64_t fixed[] = {0, 0, 0};
  std::vector<int64_t> m;
  EXPECT_LT(seconds([&] { m = balance_micro_batches(per, none, counts, fixed, int64_t{1} << 40); }),
            kQuick);
  EXPECT_LE(3 * m[0] + 1000000 * m[1] + 7 * m[2], int64_t{1} << 40);
  EXPECT_GT(3 * m[0] + 1000000 * m[1] + 7 * m[2], (int64_t{1} << 40) - 1000000);
}

TEST(Hostile, EveryCountThatCostsWorkHasABudget) {
  auto code_of = [](const std::string& doc) {
    auto s = parse_scenario(doc, test::catalog());
    EXPECT_FALSE(s.ok()) << doc.substr(0, 200);
    if (!s.ok()) expect_one_line(s.error().message);
    return s.ok() ? ErrorCode::parse_error : s.error().code;
  };
  const std::string model = R"({"name": "deep", "layers": 100000, "hidden": 1024, "heads": 8,
    "ffn_hidden": 4096, "vocab": 32000, "seq_len": 2048, "ffn_type": "gelu", "position": "rope",
    "tied_embeddings": true})";
  const std::string cluster = R"({"node": "dgx-h100", "nodes": 12500})";
  // A 100,000-layer model at pp 100,000; 100,000 "auto" stages.
  EXPECT_EQ(code_of(R"({"model": )" + model + R"(, "cluster": )" + cluster +
                    R"(, "plan": {"pp": 100000, "global_batch": 1}})"),
            ErrorCode::budget_exceeded);
  // (100,000 entries are more text than a document may hold; 50,000 are more than it may list.)
  auto stages = [](int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += std::string(i ? "," : "") + R"({"layers":"auto"})";
    return out;
  };
  EXPECT_EQ(code_of(R"({"model": )" + model + R"(, "cluster": )" + cluster +
                    R"(, "plan": {"pp": 100000, "global_batch": 1, "stages": [)" + stages(100000) +
                    "]}}"),
            ErrorCode::parse_error);
  EXPECT_EQ(
      code_of(R"({"model": )" + model + R"(, "cluster": )" + cluster +
              R"(, "plan": {"pp": 50000, "global_batch": 1, "stages": [)" + stages(50000) + "]}}"),
      ErrorCode::budget_exceeded);
  // 1,000 "auto" stages of 100 layers: within the stage budget, over the balancer's.
  std::string auto_stages;
  for (int i = 0; i < 1000; ++i) auto_stages += std::string(i ? "," : "") + R"({"layers":"auto"})";
  EXPECT_EQ(code_of(R"({"model": )" + model + R"(, "cluster": {"node": "dgx-h100", "nodes": 125},
    "plan": {"pp": 1000, "global_batch": 1, "stages": [)" +
                    auto_stages + "]}}"),
            ErrorCode::budget_exceeded);
  // 20,000 replica sets.
  std::string replicas;
  for (int i = 0; i < 20000; ++i) replicas += std::string(i ? "," : "") + R"({"group": 0})";
  EXPECT_EQ(code_of(std::string(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
    "nodes": 20000}, "plan": {"global_batch": 20000, "replicas": [)") +
                    replicas + "]}}"),
            ErrorCode::budget_exceeded);
  // 65 groups; 2^32 GPUs (4096 per node: an int would overflow).
  std::string groups;
  for (int i = 0; i < 65; ++i)
    groups += std::string(i ? "," : "") + R"({"node": "dgx-h100", "nodes": 1})";
  EXPECT_EQ(code_of(R"({"model": "llama3-8b", "cluster": {"groups": [)" + groups +
                    R"(]}, "plan": {"global_batch": 8}})"),
            ErrorCode::budget_exceeded);
  EXPECT_EQ(code_of(R"({"model": "llama3-8b", "cluster": {"gpu": "h100-sxm5-80gb",
    "gpus_per_node": 4096, "nodes": 1048576, "intra_node_link": "nvlink4", "inter_node_link":
    "ib-ndr"}, "plan": {"global_batch": 8}})"),
            ErrorCode::budget_exceeded);
  // A document of a million unknown keys reports a bounded number of them.
  std::string keys;
  for (int i = 0; i < 30000; ++i) keys += fmt::format(R"("k{}": 1,)", i);
  const Json doc =
      Json::parse(std::string(kHead) + R"("plan": {)" + keys + R"("global_batch": 8}})");
  EXPECT_EQ(scenario_errors(doc, test::catalog()).size(), kMaxErrors);
  // A model too large for the census's 64-bit counts.
  EXPECT_EQ(code_of(R"({"model": {"name": "x", "layers": 100000, "hidden": 16777216, "heads": 1,
    "ffn_hidden": 67108864, "vocab": 1000, "seq_len": 128, "ffn_type": "gelu", "position": "rope",
    "tied_embeddings": true}, "cluster": {"node": "dgx-h100", "nodes": 1}, "plan":
    {"global_batch": 8}})"),
            ErrorCode::out_of_range);
}

TEST(Hostile, SearchHasABudget) {
  // 65,536 layers over a million GPUs: refused at once, not searched for minutes.
  const Json doc = Json::parse(R"({"model": {"name": "x", "layers": 65536, "hidden": 8192,
    "heads": 64, "ffn_hidden": 28672, "vocab": 128256, "seq_len": 8192, "ffn_type": "swiglu",
    "position": "rope", "tied_embeddings": false}, "cluster": {"node": "dgx-h100",
    "nodes": 131072}, "plan": {"tp": 8, "pp": 64, "global_batch": 16384}})");
  auto s = read_scenario(doc, test::catalog());
  ASSERT_TRUE(s.ok()) << s.error().message;
  Result<SearchResult> r = SearchResult{};
  EXPECT_LT(seconds([&] { r = search_plans(*s); }), kQuick);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::budget_exceeded);
  expect_one_line(r.error().message);
  // A small budget refuses a search the default admits.
  const Scenario small =
      test::scenario(std::string(kHead) + R"("plan": {"tp": 8, "global_batch": 64}})");
  EXPECT_TRUE(search_plans(small).ok());
  SearchOptions tight;
  tight.max_plans = 10;
  EXPECT_EQ(search_plans(small, tight).error().code, ErrorCode::budget_exceeded);
}

TEST(Hostile, TheScheduleSimulationHasABudget) {
  // Interleaved stages are simulated block by block, the repeating steady state extrapolated,
  // within a budget of blocks run (past it the closed form stands), so a batch of 2^40 costs
  // what a batch of 2^10 does.
  const std::string doc = R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100",
    "nodes": 16}, "plan": {"tp": 8, "pp": 8, "vpp": 2, "global_batch": GBS}})";
  auto with = [&](const char* gbs) {
    std::string d = doc;
    d.replace(d.find("GBS"), 3, gbs);
    return test::scenario(d);
  };
  EstimateOptions timeline;
  timeline.timeline = true;
  Report big;
  EXPECT_LT(seconds([&] { big = estimate(with("1099511627776"), timeline); }), kQuick);
  EXPECT_TRUE(big.timeline_truncated);
  EXPECT_TRUE(report_json(big).ok());
  const Report small = estimate(with("1024"));
  EXPECT_GT(big.iteration_time_s, 1e8 * small.iteration_time_s);
}

// 4. Counts are 64-bit everywhere (a wasm32 `long` is 32-bit): 2^31 and 2^40 micro-batches give
// positive, proportional times.
TEST(Hostile, MicroBatchCountsPast32Bits) {
  auto at = [&](int64_t gbs) {
    return estimate(test::scenario(
        std::string(kHead) + fmt::format(R"("plan": {{"tp": 8, "global_batch": {}}}}})", gbs)));
  };
  const Report base = at(1024), r31 = at(int64_t{1} << 31), r40 = at(int64_t{1} << 40);
  EXPECT_EQ(r31.micro_batches, int64_t{1} << 31);
  EXPECT_EQ(r40.micro_batches, int64_t{1} << 40);
  EXPECT_NEAR(r31.iteration_time_s / base.iteration_time_s, double(1 << 21),
              double(1 << 21) * 1e-3);
  EXPECT_NEAR(r40.iteration_time_s / r31.iteration_time_s, double(1 << 9), 1e-3 * (1 << 9));
  EXPECT_NEAR(r40.mfu, base.mfu, 1e-3);
  EXPECT_GT(r40.tokens_per_s, 0);
}

// 6. Custom hardware within physical ranges (the range in the message), and no report with a
// number that is not finite.
TEST(Hostile, CustomHardwareHasPhysicalRanges) {
  const std::string gpu = R"({"model": "llama3-8b", "cluster": {"gpu": {"name": "g",
    "memory_gib": MEM, "memory_bandwidth_GBps": BW, "peak_tflops": {"bf16": PEAK}},
    "gpus_per_node": 8, "nodes": 1, "intra_node_link": "nvlink4", "inter_node_link":
    {"scope": "inter_node", "bandwidth_GBps_per_dir": NET}}, "plan": {"tp": 8,
    "global_batch": 8}})";
  auto doc = [&](const char* mem, const char* bw, const char* peak, const char* net) {
    std::string d = gpu;
    for (auto [key, value] : {std::pair{"MEM", mem}, {"BW", bw}, {"PEAK", peak}, {"NET", net}})
      d.replace(d.find(key), std::string(key).size(), value);
    return d;
  };
  const std::pair<std::string, const char*> bad[] = {
      {doc("1e308", "1000", "100", "50"), "memory_gib=1e+308 must be >= 0.001 and <= 1048576"},
      {doc("80", "1e-308", "100", "50"), "memory_bandwidth_GBps=1e-308 must be >= 0.001"},
      {doc("80", "1000", "1e-308", "50"), "peak_tflops.bf16=1e-308 must be >= 1e-06 and <= 1e+06"},
      {doc("80", "1000", "100", "1e-308"), "bandwidth_GBps_per_dir=1e-308 must be >= 1e-06"},
  };
  for (const auto& [d, message] : bad) {
    const auto e = test::error_of(d);
    EXPECT_EQ(e.code, ErrorCode::out_of_range);
    EXPECT_NE(e.message.find(message), std::string::npos) << e.message;
  }
  // The ends of every range still give finite reports.
  for (const char* mem : {"0.001", "1048576"})
    for (const char* bw : {"0.001", "1000000"})
      for (const char* peak : {"1e-6", "1e6"})
        for (const char* net : {"1e-6", "1e6"}) {
          auto r = report_json(estimate(test::scenario(doc(mem, bw, peak, net))));
          EXPECT_TRUE(r.ok()) << mem << " " << bw << " " << peak << " " << net << ": "
                              << r.error().message;
        }
}

TEST(Hostile, AReportWithANumberThatIsNotFiniteIsAnError) {
  Report r =
      estimate(test::scenario(std::string(kHead) + R"("plan": {"tp": 8, "global_batch": 8}})"));
  ASSERT_TRUE(report_json(r).ok());
  r.stages[0].forward_s = std::nan("");
  auto e = report_json(r);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("stages[0].forward_s is not a finite number"), std::string::npos)
      << e.error().message;
  r = estimate(test::scenario(std::string(kHead) + R"("plan": {"tp": 8, "global_batch": 8}})"));
  r.breakdown.bubble = INFINITY;
  EXPECT_NE(report_json(r).error().message.find("breakdown_s.bubble"), std::string::npos);
}

// 8. Links: the page's settings have the schema's range too.
TEST(Hostile, LinkPageSettingsHaveTheirRange) {
  for (const char* url : {"#v=2&price=-5", "#v=2&tokens=1e30"}) {
    auto r = scenario_from_link(url);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.error().code, ErrorCode::out_of_range) << r.error().message;
  }
}

// Resolve, the page's other entry point, shares the budgets.
TEST(Hostile, ResolveSharesTheBudgets) {
  const Json doc = Json::parse(R"({"model": "llama3-8b", "cluster": {"node": "dgx-h100",
    "nodes": 1000}, "plan": {"pp": 8000, "global_batch": 8000}})");
  const Json r = resolve_json(doc, test::catalog());
  ASSERT_TRUE(r.contains("errors"));
  EXPECT_EQ(r["errors"][0]["code"], "budget_exceeded");
}

}  // namespace
}  // namespace stepcast
