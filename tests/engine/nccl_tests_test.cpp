// nccl-tests output: the parser (formats, ranks and hosts, bad input) and the link fitted to it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "stepcast/limits.h"
#include "stepcast/nccl_tests.h"
#include "test_util.h"

namespace stepcast {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/tests/engine/fixtures/nccl-tests/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// 8 ranks on one host; times from t = 1.75 (S + 8 MiB) / 400 GB/s + 10 us (an all-reduce's bus
// factor 2*7/8), and the 8-byte row at the 10 us floor.
constexpr const char* kExact = R"(# nThread 1 nGpus 8 minBytes 8 maxBytes 268435456 step: 16(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid  1 on   box device  0 [0x18] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid  1 on   box device  1 [0x2a] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid  1 on   box device  2 [0x3a] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid  1 on   box device  3 [0x5d] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid  1 on   box device  4 [0x84] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid  1 on   box device  5 [0x8b] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid  1 on   box device  6 [0x91] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid  1 on   box device  7 [0xe4] NVIDIA H100 80GB HBM3
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             2     float     sum      -1    10.00    0.00    0.00      0    10.00    0.00    0.00      0
     1048576        262144     float     sum      -1    51.29   20.44   35.78      0    51.29   20.44   35.78      0
    16777216       4194304     float     sum      -1   120.10  139.69  244.46      0   120.10  139.69  244.46      0
   268435456      67108864     float     sum      -1  1221.11  219.83  384.70      0  1221.11  219.83  384.70      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 166.23
)";

TEST(NcclTests, ParsesRanksHostsAndBothHalves) {
  auto run = parse_nccl_tests(kExact, "");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->collective, CollectiveKind::all_reduce);  // busbw/algbw = 1.75 = 2*7/8
  EXPECT_EQ(run->ranks, 8);
  EXPECT_EQ(run->hosts, 1);
  EXPECT_EQ(run->gpu_name, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(run->points.size(), 8u);  // four rows, out-of-place and in-place
  EXPECT_DOUBLE_EQ(run->points[2].size_bytes, 1048576);
  EXPECT_DOUBLE_EQ(run->points[2].time_s, 51.29e-6);
  EXPECT_DOUBLE_EQ(run->points[7].busbw_Bps, 384.70e9);
}

TEST(NcclTests, FitRecoversTheModelThatMadeTheTable) {
  auto run = parse_nccl_tests(kExact, "all_reduce_perf.txt");
  ASSERT_TRUE(run.ok());
  auto fit = fit_nccl_link({*run}, 0);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const LinkSpec& l = fit->link;
  EXPECT_EQ(l.scope, LinkScope::intra_node);
  EXPECT_NEAR(l.allreduce_busbw_Bps / 1e9, 400, 0.5);
  EXPECT_NEAR(l.busbw_Bps / 1e9, 400, 0.5);  // no ring test given: the all-reduce's
  EXPECT_NEAR(l.latency_s * 1e6, 10, 0.01);  // the 8-byte floor
  EXPECT_NEAR(l.half_peak_bytes / 8388608, 1, 0.01);
  ASSERT_EQ(fit->checks.size(), 1u);
  EXPECT_EQ(fit->checks[0].points, 6);
  EXPECT_LT(fit->checks[0].max_busbw_error, 0.002);  // rounding of the printed figures only
}

// The done-when: bus bandwidth within 5 % for every size >= 1 MiB of each fixture.
TEST(NcclTests, FixturesFitWithinFivePercent) {
  struct Case {
    const char* file;
    LinkScope scope;
    CollectiveKind kind;
    int ranks, hosts;
  };
  const Case cases[] = {
      {"all_reduce_perf-dgx-h100-8gpu.txt", LinkScope::intra_node, CollectiveKind::all_reduce, 8, 1},
      {"all_gather_perf-dgx-h100-8gpu.txt", LinkScope::intra_node, CollectiveKind::all_gather, 8, 1},
      {"reduce_scatter_perf-a100-old-format.txt", LinkScope::intra_node,
       CollectiveKind::reduce_scatter, 8, 1},
      {"all_reduce_perf-2node-ib-ndr.txt", LinkScope::inter_node, CollectiveKind::all_reduce, 16, 2},
      {"alltoall_perf-2node-ib-ndr.txt", LinkScope::inter_node, CollectiveKind::all_to_all, 16, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    auto run = parse_nccl_tests(fixture(c.file), c.file);
    ASSERT_TRUE(run.ok()) << run.error().message;
    EXPECT_EQ(run->collective, c.kind);
    EXPECT_EQ(run->ranks, c.ranks);
    EXPECT_EQ(run->hosts, c.hosts);
    auto fit = fit_nccl_link({*run}, 0);
    ASSERT_TRUE(fit.ok()) << fit.error().message;
    EXPECT_EQ(fit->link.scope, c.scope);
    ASSERT_EQ(fit->checks.size(), 1u);
    EXPECT_GE(fit->checks[0].points, 12);  // alltoall: out-of-place only, up to 4 GiB
    EXPECT_LT(fit->checks[0].max_busbw_error, 0.05);
  }
}

TEST(NcclTests, InterNodeFigureIsPerPort) {
  // 16 ranks on 2 hosts of 8: the group's bus bandwidth is the node's 8 ports together
  // (comm_path), so the port's is an eighth of the ~356 GB/s the table saturates at.
  auto run = parse_nccl_tests(fixture("all_reduce_perf-2node-ib-ndr.txt"), "all_reduce_perf");
  ASSERT_TRUE(run.ok());
  auto fit = fit_nccl_link({*run}, 0);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->nics_per_node, 8);
  EXPECT_NEAR(fit->link.busbw_Bps / 1e9, 356.0 / 8, 356.0 / 8 * 0.03);
  auto four = fit_nccl_link({*run}, 4);  // half the ports: each carries twice as much
  ASSERT_TRUE(four.ok());
  EXPECT_NEAR(four->link.busbw_Bps / fit->link.busbw_Bps, 2, 1e-9);
}

TEST(NcclTests, TwoTestsOfOneNodeFillBothBandwidths) {
  auto ar = parse_nccl_tests(fixture("all_reduce_perf-dgx-h100-8gpu.txt"), "all_reduce_perf");
  auto ag = parse_nccl_tests(fixture("all_gather_perf-dgx-h100-8gpu.txt"), "all_gather_perf");
  ASSERT_TRUE(ar.ok() && ag.ok());
  auto fit = fit_nccl_link({*ar, *ag}, 0);
  ASSERT_TRUE(fit.ok());
  EXPECT_NEAR(fit->link.allreduce_busbw_Bps / 1e9, 468, 468 * 0.03);  // NVLS all-reduce
  EXPECT_NEAR(fit->link.busbw_Bps / 1e9, 362, 362 * 0.03);            // ring all-gather
  const Json j = nccl_link_json(*fit, {"a.txt", "b.txt"});
  // The link object is one a scenario accepts.
  Json scenario = Json::parse(R"({"model": "llama2-7b", "plan": {"tp": 8, "global_batch": 8},
      "cluster": {"gpu": "h100-sxm5-80gb", "gpus_per_node": 8, "nodes": 1,
                  "inter_node_link": "ib-ndr"}})");
  scenario["cluster"]["intra_node_link"] = j;
  auto s = parse_scenario(scenario.dump(), builtin_catalog());
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_NEAR(s->cluster.groups[0].intra_node_link.busbw_Bps, fit->link.busbw_Bps, 1e6);
}

// kExact with `from` replaced by `to` everywhere (a column of the table changed).
std::string edited(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Issue 38 §2: nccl-tests output whose columns disagree is refused with the line, the column, its
// value and the rule, where it fitted 4.6e8 GB/s ("mean error 100,012,038 %") or printed "inf %".
TEST(NcclTests, ColumnsThatDisagreeAreRefusedWithTheLine) {
  // Times off by 10^6 (seconds' digits in the microseconds column): algbw is no longer size/time.
  auto seconds = parse_nccl_tests(edited(kExact, "  51.29 ", "  0.00005129 "), "all_reduce_perf");
  ASSERT_FALSE(seconds.ok());
  EXPECT_EQ(seconds.error().message,
            "line 16: algbw=20.44 GB/s must be size/time = 2.044e+07 GB/s (nccl-tests prints "
            "the time in us): the time column was changed or converted");
  // One busbw of 1e-308.
  auto tiny = parse_nccl_tests(edited(kExact, "  244.46 ", "  1e-308 "), "all_reduce_perf");
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.error().message,
            "line 17: busbw=1e-308 GB/s must be algbw x 1.75 = 244.5 GB/s (all_reduce on 8 "
            "ranks): the busbw column was changed");
}

// Every column scaled alike (times 10^-6, bandwidths 10^6) parses, and the fit is refused: its
// bus bandwidth is past the range a scenario reads a link in.
TEST(NcclTests, AFitPastTheLinkRangesIsRefused) {
  std::string text = kExact;
  for (const auto& [from, to] : std::initializer_list<std::pair<const char*, const char*>>{
           {"  51.29   20.44   35.78 ", "  0.00005129   20440000   35780000 "},
           {"  120.10  139.69  244.46 ", "  0.00012010  139690000  244460000 "},
           {"  1221.11  219.83  384.70 ", "  0.00122111  219830000  384700000 "}})
    text = edited(text, from, to);
  auto run = parse_nccl_tests(text, "all_reduce_perf");
  ASSERT_TRUE(run.ok()) << run.error().message;
  auto fit = fit_nccl_link({*run}, 0);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.error().code, ErrorCode::out_of_range);
  EXPECT_EQ(fit.error().path, "link.busbw_GBps");
  EXPECT_EQ(fit.error().message.rfind("the fitted link.busbw_GBps=4", 0), 0u) << fit.error().message;
  EXPECT_NE(fit.error().message.find("e+08 must be >= 1e-06 and <= 1e+06: the nccl-tests times "
                                     "are not of a link"),
            std::string::npos)
      << fit.error().message;
}

// Issue 37 item 6: output measured on another GPU than the cluster's is named and refused.
TEST(NcclTests, AnotherGpusOutputIsRefused) {
  auto run = parse_nccl_tests(kExact, "all_reduce_perf");
  ASSERT_TRUE(run.ok());
  const Catalog& c = builtin_catalog();
  EXPECT_FALSE(nccl_gpu_error(*run, *c.find_gpu("h100-sxm5-80gb")).has_value());
  EXPECT_FALSE(nccl_gpu_error(*run, *c.find_gpu("h100-pcie-80gb")).has_value());
  auto a100 = nccl_gpu_error(*run, *c.find_gpu("a100-sxm4-80gb"));
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(a100->code, ErrorCode::invalid_cluster);
  EXPECT_EQ(a100->message,
            "nccl-tests ran on NVIDIA H100 80GB HBM3 (h100), and this cluster's GPU is "
            "a100-sxm4-80gb: a link measured on other GPUs does not calibrate these");
  auto old = parse_nccl_tests(fixture("reduce_scatter_perf-a100-old-format.txt"), "reduce_scatter");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(nccl_gpu_error(*old, *c.find_gpu("a100-sxm4-80gb")).has_value()) << old->gpu_name;
  EXPECT_TRUE(nccl_gpu_error(*old, *c.find_gpu("h100-sxm5-80gb")).has_value());
  // Output that names no device is not checked.
  NcclTestRun unnamed = *run;
  unnamed.gpu_name.clear();
  EXPECT_FALSE(nccl_gpu_error(unnamed, *c.find_gpu("a100-sxm4-80gb")).has_value());
}

TEST(NcclTests, BadInputGetsOneLineNeverACrash) {
  auto message = [](std::string_view text, std::string_view hint = "all_reduce_perf") {
    auto r = parse_nccl_tests(text, hint);
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.error().message;
  };
  EXPECT_NE(message("hello world\n").find("not nccl-tests output"), std::string::npos);
  EXPECT_NE(message("").find("not nccl-tests output"), std::string::npos);
  const std::string text = kExact;
  // Cut before the table: ranks known, no measurements.
  EXPECT_NE(message(text.substr(0, text.find("#       size"))).find("no measurements"),
            std::string::npos);
  // Cut in the middle of a row.
  const size_t row = text.find("    16777216");
  EXPECT_NE(message(text.substr(0, row + 40)).find("line 17"), std::string::npos);
  // A garbled number.
  std::string garbled = text;
  garbled.replace(garbled.find("120.10"), 6, "12O.10");
  EXPECT_NE(message(garbled).find("must be numbers"), std::string::npos);
  // No rank lines.
  std::string no_ranks;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);)
    if (l.find("Rank") == std::string::npos) no_ranks += l + "\n";
  EXPECT_NE(message(no_ranks).find("ranks and hosts are unknown"), std::string::npos);
  // Only small sizes: nothing to fit a bandwidth on.
  auto small = parse_nccl_tests(text.substr(0, text.find("     1048576")), "all_reduce_perf");
  ASSERT_TRUE(small.ok());
  auto fit = fit_nccl_link({*small}, 0);
  ASSERT_FALSE(fit.ok());
  EXPECT_NE(fit.error().message.find("fewer than two sizes of 1 MiB"), std::string::npos);
  // Unnamed all_gather / alltoall cannot be told apart.
  auto ag = fixture("all_gather_perf-dgx-h100-8gpu.txt");
  EXPECT_NE(message(ag, "").find("cannot tell all_gather from alltoall"), std::string::npos);
}

TEST(NcclTests, EveryPrefixAndRandomBytesGiveAResultOrOneLine) {
  const std::string text = fixture("all_reduce_perf-2node-ib-ndr.txt");
  for (size_t n = 0; n <= text.size(); n += 7) {
    auto run = parse_nccl_tests(text.substr(0, n), "all_reduce_perf");
    if (!run.ok()) {
      EXPECT_EQ(run.error().message.find('\n'), std::string::npos) << n;
      continue;
    }
    auto fit = fit_nccl_link({*run}, 0);
    if (fit.ok()) {
      EXPECT_TRUE(std::isfinite(fit->link.busbw_Bps) && fit->link.busbw_Bps > 0) << n;
    }
  }
  std::string noisy = text;
  uint32_t state = 12345;
  for (int i = 0; i < 2000; ++i) {
    state = state * 1664525u + 1013904223u;  // a fixed LCG: the same bytes every run
    noisy[state % noisy.size()] = static_cast<char>(state >> 24);
    auto run = parse_nccl_tests(noisy, "");
    if (run.ok()) (void)fit_nccl_link({*run}, 0);
  }
}

// Found by fuzz_nccl_tests: a byte that is not UTF-8 in a rank line's device name reached the
// fitted link's name, and writing its JSON threw (an abort in the module). It is echoed escaped.
TEST(NcclTests, ADeviceNameThatIsNotUtf8IsEchoedEscaped) {
  std::string text = fixture("all_reduce_perf-dgx-h100-8gpu.txt");
  const auto at = text.find("HBM3");
  ASSERT_NE(at, std::string::npos);
  text[at + 3] = '\xb3';
  const auto run = parse_nccl_tests(text, "bad-name.txt");
  ASSERT_TRUE(run.ok()) << run.error().message;
  const auto fit = fit_nccl_link({*run}, 0);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  const Json link = nccl_link_json(*fit, {"out\xff.txt"});
  const std::string dumped = link.dump();  // strict UTF-8: threw before
  EXPECT_NE(dumped.find("HBM\\\\xb3"), std::string::npos) << dumped;
  EXPECT_TRUE(valid_utf8(link["name"].get<std::string>()));
  EXPECT_TRUE(valid_utf8(link["source"].get<std::string>()));
}

TEST(NcclTests, MpirunTagsAndInterleavedLogLinesAreRead) {
  std::string tagged;
  std::istringstream lines(kExact);
  for (std::string l; std::getline(lines, l);) {
    tagged += "[0] " + l + "\n";
    if (l.find("Using devices") != std::string::npos)
      tagged += "box:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n";
  }
  auto run = parse_nccl_tests(tagged, "");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->ranks, 8);
  EXPECT_EQ(run->points.size(), 8u);
}

}  // namespace
}  // namespace stepcast
