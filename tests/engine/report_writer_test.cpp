// The streamed report (report_text) is the document the JSON tree (report_json) dumps, byte for
// byte: on the page's examples and a set chosen to reach every key (interleaved, heterogeneous
// groups, MoE with DeepSeek-V3, a plan that does not fit, timelines, escaped names), in both
// the one-line form (--batch, the bindings) and the indented one (estimate), and on numbers
// and strings at the edges of dump()'s formatting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "stepcast/estimate.h"
#include "test_util.h"

namespace stepcast {
namespace {

// The page's examples and the golden reports' scenarios.
std::vector<std::string> scenario_texts() { return test::example_scenarios(); }

std::string tree_text(const Report& report, int indent) {
  auto json = report_json(report);
  EXPECT_TRUE(json.ok());
  return json ? json->dump(indent, ' ', false, Json::error_handler_t::replace) : "";
}

TEST(ReportWriter, SameDocumentAsTheTreeOnEveryScenario) {
  const auto texts = scenario_texts();
  ASSERT_GE(texts.size(), 17u);  // 9 examples, 8 more
  size_t timelines = 0;
  for (const auto& text : texts) {
    const Scenario s = test::scenario(text);
    for (bool timeline : {false, true}) {
      EstimateOptions options;
      options.timeline = timeline;
      const Report r = estimate(s, options);
      if (r.timeline.size() > 3000) continue;  // keeps the test quick; small ones cover it
      timelines += timeline;
      for (int indent : {-1, 2}) {
        auto streamed = report_text(r, indent);
        ASSERT_TRUE(streamed.ok()) << text;
        EXPECT_EQ(*streamed, tree_text(r, indent)) << text << " indent " << indent;
      }
    }
  }
  EXPECT_GE(timelines, 3u);
}

// --report summary: every key and value of the full report but each stage's census operations.
TEST(ReportWriter, SummaryIsTheFullReportLessTheCensusOperations) {
  for (const auto& text : scenario_texts()) {
    const Report r = estimate(test::scenario(text));
    const auto summary = report_text(r, -1, ReportKind::summary);
    ASSERT_TRUE(summary.ok());
    Json full = Json::parse(*report_text(r));
    const Json brief = Json::parse(*summary);
    ASSERT_FALSE(full["stages"].empty());
    for (auto& st : full["stages"]) {
      EXPECT_FALSE(st["communication"].empty()) << text;
      st.erase("communication");
    }
    for (const auto& st : brief["stages"]) EXPECT_FALSE(st.contains("communication"));
    EXPECT_EQ(brief, full) << text;
    EXPECT_LT(summary->size(), report_text(r)->size()) << text;
  }
  EXPECT_EQ(enum_from<ReportKind>("summary"), ReportKind::summary);
  EXPECT_EQ(enum_from<ReportKind>("full"), ReportKind::full);
  EXPECT_FALSE(enum_from<ReportKind>("Summary").has_value());
}

// Numbers and strings where dump()'s formatting changes style.
TEST(ReportWriter, EdgeNumbersAndStringsAsDumpWritesThem) {
  const Report base = estimate(test::scenario(scenario_texts().front()));
  const double values[] = {0.0,     -0.0,    1.0,     -1.0,   0.1,     1e-4,    1.5e-5,
                           1e-300,  5e-324,  1e15,    1e16,   1.25e17, 123456789012345.6,
                           1e21,    -2.5e-7, 1e308,   std::numeric_limits<double>::max(),
                           0.30000000000000004, 999999999999999.0, -999999999999999.0,
                           999999999999999.9, 4503599627370496.0, 85899345920.0, -7.0,
                           1e14, 562949953421312.0};
  const std::string names[] = {"plain", "tab\there", "quote \" and \\ backslash", "line\nbreak",
                               "\x01\x1f control", "naïve ✓", "bad \xff\xfe utf-8",
                               "cut \xe2\x9c"};
  for (size_t i = 0; i < std::size(values); ++i) {
    Report r = base;
    r.iteration_time_s = values[i];
    r.breakdown.bubble = values[(i + 3) % std::size(values)];
    r.stages.front().memory.total = values[(i + 7) % std::size(values)];
    r.stages.front().communication.front().bytes = values[(i + 11) % std::size(values)];
    r.stages.front().gpu = names[i % std::size(names)];
    r.warnings = {names[(i + 1) % std::size(names)], names[(i + 2) % std::size(names)]};
    r.stages.front().communication.front().link = names[(i + 5) % std::size(names)];
    for (int indent : {-1, 0, 2, 4}) {
      auto streamed = report_text(r, indent);
      ASSERT_TRUE(streamed.ok());
      EXPECT_EQ(*streamed, tree_text(r, indent)) << "value " << values[i] << " indent " << indent;
    }
  }
}

// Numbers written again (the writer keeps the text of the last few by their bits): a pool of 300
// fractional values, several to each of the writer's 64 slots, written 600 times in an order
// that returns to each value after others have taken its slot, and -0.5 beside 0.5 (other bits,
// other text). The document is still dump()'s.
TEST(ReportWriter, RepeatedNumbersAsDumpWritesThem) {
  Report r = estimate(test::scenario(scenario_texts().front()));
  std::mt19937_64 random(39);
  std::vector<double> pool;
  for (int i = 0; i < 300; ++i)
    pool.push_back(std::ldexp(static_cast<double>(random() >> 11) / 9007199254740992.0 + 0.5,
                              static_cast<int>(random() % 80) - 40));
  pool[1] = 0.5, pool[2] = -0.5;
  r.stages.resize(100, r.stages.front());
  size_t k = 0;
  for (auto& st : r.stages)
    for (double* v : {&st.memory.total, &st.memory.weights, &st.memory.activations,
                      &st.forward_s, &st.backward_s, &st.p2p_s})
      *v = pool[(k++ * 7) % pool.size()];
  for (int indent : {-1, 2}) {
    auto streamed = report_text(r, indent);
    ASSERT_TRUE(streamed.ok());
    EXPECT_EQ(*streamed, tree_text(r, indent)) << "indent " << indent;
  }
}

// Whole numbers of every size (the writer prints those below 10^15 without Grisu2): bytes,
// counts and parameters as dump() writes them, from 1 to past 2^53, either sign.
TEST(ReportWriter, WholeNumbersAsDumpWritesThem) {
  Report r = estimate(test::scenario(scenario_texts().front()));
  ASSERT_GE(r.stages.front().communication.size(), 4u);
  std::mt19937_64 random(12);
  int written = 0;
  for (int round = 0; round < 300; ++round) {
    for (auto& op : r.stages.front().communication) {
      const int digits = static_cast<int>(random() % 18) + 1;  // 1 to 18 digits
      double v = std::floor(std::ldexp(static_cast<double>(random() >> 11), -53) *
                            std::pow(10.0, digits));
      if (random() % 2) v = -v;
      op.bytes = v;
      ++written;
    }
    r.parameters = std::ldexp(1.0, static_cast<int>(random() % 60));  // powers of two, to 2^59
    const auto streamed = report_text(r, -1);
    ASSERT_TRUE(streamed.ok());
    ASSERT_EQ(*streamed, tree_text(r, -1)) << "round " << round;
  }
  EXPECT_GT(written, 1000);
}

// An empty report: empty arrays stay [] in the indented form as in dump().
TEST(ReportWriter, EmptyContainersAsDumpWritesThem) {
  const Report r;
  for (int indent : {-1, 2}) EXPECT_EQ(*report_text(r, indent), tree_text(r, indent));
}

// A number that is not finite: the same error, naming the same first path, as report_json.
TEST(ReportWriter, NonFiniteNumberIsTheSameError) {
  Report r = estimate(test::scenario(scenario_texts().front()));
  r.stages.back().communication.back().time_s = std::numeric_limits<double>::quiet_NaN();
  r.tokens_per_s = std::numeric_limits<double>::infinity();
  const auto streamed = report_text(r);
  ASSERT_FALSE(streamed.ok());
  const auto tree = report_json(r);
  ASSERT_FALSE(tree.ok());
  EXPECT_EQ(streamed.error().message, tree.error().message);
  EXPECT_EQ(streamed.error().code, ErrorCode::unsupported);
  const size_t last = r.stages.size() - 1, op = r.stages.back().communication.size() - 1;
  EXPECT_NE(streamed.error().message.find(
                fmt::format("stages[{}].communication[{}].time_s", last, op)),
            std::string::npos)
      << streamed.error().message;
}

// The report key table (report_schema) names exactly the keys a report holds, table by table:
// every key of every object of the reports of the scenarios above is in its table, and every
// key of a table shows up in some report (calibration only with a calibrated scenario, so the
// set includes one).
TEST(ReportSchema, NamesEveryKeyAReportHolds) {
  const Json schema = report_schema();
  std::map<std::string, std::set<std::string>> seen;
  auto texts = scenario_texts();
  texts.push_back(R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 2},
    "plan": {"tp": 2, "pp": 2, "global_batch": 64},
    "calibration": {"runs": [{"plan": {"tp": 2, "pp": 2, "global_batch": 64},
                              "measured_iteration_s": 3.0}]}})");
  // Out of memory, with the changes that fit (fit_fixes): Llama 3 70B on 8 GPUs without recompute.
  texts.push_back(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 1},
    "plan": {"tp": 8, "pp": 1, "global_batch": 8, "recompute": "none"}, "seq_len": 8192})");
  for (const auto& text : texts) {
    EstimateOptions options;
    options.timeline = true;
    options.max_timeline_events = 500;
    options.fit_fixes = &fit_fixes_of;
    test::collect_keys(to_json(estimate(test::scenario(text), options)), "report", schema, seen);
  }
  test::expect_every_key_seen(schema, seen, "report");
  // Each key is documented, and the breakdown's parts each have a label (the page's and the
  // text table's).
  for (auto it = schema.begin(); it != schema.end(); ++it)
    for (const auto& row : *it) EXPECT_FALSE(row["doc"].get<std::string>().empty());
  for (const auto& row : schema["breakdown_s"]) {
    EXPECT_FALSE(row["label"].get<std::string>().empty());
    EXPECT_EQ(row["unit"], "s");
  }
}

TEST(ReportSchema, DocumentationTablesAreGeneratedFromIt) {
  const std::string doc = test::source_file("docs/scenario.md");
  // Run `stepcast schema --write-docs docs/scenario.md` after changing a report key.
  EXPECT_EQ(fill_report_tables(doc), doc);
  const Json schema = report_schema();
  for (auto it = schema.begin(); it != schema.end(); ++it)
    EXPECT_NE(doc.find("<!-- report: " + it.key() + " -->"), std::string::npos) << it.key();
}

}  // namespace
}  // namespace stepcast
