// The accuracy suite: published training runs (tests/validation/published-runs.csv and
// modern-runs.csv, each row with its source) as scenarios (tests/validation/cases.jsonl),
// predicted with the built-in calibration. The thresholds are the figures measured when the
// calibration was fitted, rounded up to the next 0.1 %: an accuracy regression anywhere breaks the
// build. After a change to the physics, re-run the fit and update calibration.json, cases.jsonl
// and the tables here and in tests/validation/README.md (commands there).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "stepcast/accuracy/calibrate.h"
#include "stepcast/accuracy/cases.h"
#include "stepcast/accuracy/csv.h"
#include "stepcast/accuracy/hardware_map.h"
#include "stepcast/accuracy/memory_accuracy.h"
#include "stepcast/accuracy/model_family.h"
#include "stepcast/accuracy/runs.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/accuracy/statistics.h"
#include "stepcast/estimate.h"

namespace stepcast::accuracy {
namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CsvTable table_of(const char* path) {
  auto t = parse_csv(read(path));
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? t.value() : CsvTable{};
}

const CsvTable& runs() {
  static const CsvTable table = table_of("tests/validation/published-runs.csv");
  return table;
}

const CsvTable& modern() {
  static const CsvTable table = table_of("tests/validation/modern-runs.csv");
  return table;
}

// The committed cases of a JSON Lines file, prepared for the engine.
std::vector<PreparedCase> prepared_cases(const char* path) {
  auto c = parse_cases_jsonl(read(path));
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  if (!c.ok()) return {};
  auto p = prepare(*c, builtin_catalog());
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? p.value() : std::vector<PreparedCase>{};
}

const std::vector<PreparedCase>& cases() {
  static const std::vector<PreparedCase> prepared = prepared_cases("tests/validation/cases.jsonl");
  return prepared;
}

// One row of a table, converted on its own.
Conversion convert_one(const std::string& id, const CsvTable& table = runs()) {
  CsvTable one;
  one.header = table.header;
  for (size_t r = 0; r < table.rows.size(); ++r)
    if (table.cell(r, "id") == id) one.rows.push_back(table.rows[r]);
  EXPECT_EQ(one.rows.size(), 1u) << id;
  return convert_runs(one, builtin_catalog());
}

const Json& plan_of(const Case& c) { return c.scenario["plan"]; }

// The plan the engine runs for a case: the source's framework profile with what the case states.
Plan resolved_plan(const Case& c) {
  auto s = scenario_from_json(c.scenario, builtin_catalog());
  EXPECT_TRUE(s.ok()) << c.id << (s.ok() ? "" : s.error().message);
  return s.ok() ? s->plan : Plan{};
}

// ---------------------------------------------------------------------------------------------
// Accuracy thresholds (measured figures rounded up to 0.1 %; tests/validation/README.md has the
// same table).

struct Limit {
  const char* source;
  int rows;
  double in_sample_mape;
  double loso_mape;
};

constexpr Limit kLimits[] = {
    {"SC21", 10, 4.2, 6.9},
    {"KORTH", 8, 5.7, 10.9},
    {"MCORE", 9, 8.3, 20.4},
    {"NEMO2407", 6, 5.3, 10.3},
    {"MBRIDGE25.11", 5, 5.0, 5.3},
    {"BLOOM", 1, 12.3, 12.3},
    {"MTNLG", 3, 20.7, 21.1},
    {"DTFM", 5, 12.6, 15.0},
    {"LLMFOUNDRY", 9, 8.5, 9.3},
    {"MBRIDGE26.04.01", 47, 8.3, 8.5},
    {"MBRIDGE26.04", 44, 7.7, 8.0},
    {"MBRIDGE26.02.01", 36, 6.5, 7.1},
    {"MBRIDGE26.02", 33, 8.2, 8.3},
    {"MBRIDGE25.09", 21, 8.9, 9.6},
    {"MBSKILL", 10, 47.6, 48.8},
    {"SIMUMAX", 12, 4.0, 4.0},
    {"AUTOMODEL", 1, 54.6, 54.9},
    {"SIMUMAXB200", 31, 3.9, 6.5},
};
constexpr double kMegatronMape = 6.0, kMegatronLosoMape = 12.6;
constexpr double kOverallMape = 8.8, kOverallLosoMape = 10.1, kOverallWorst = 54.6;
// The groups the training-stacks goals name (tests/validation/README.md): rows run by Megatron
// software, Blackwell rows, models under 3 B parameters; MoE and dense rows apart. LOSO figures,
// measured, rounded up.
struct GroupLimit {
  const char* group;
  int rows;
  double loso_mape;
};
constexpr GroupLimit kGroups[] = {
    {"Megatron software", 277, 9.8},
    {"Megatron software, dense rows", 134, 7.2},
    {"Blackwell GPUs", 197, 7.7},
    {"models under 3 B", 7, 13.5},
    {"MoE rows", 144, 12.6},
    {"dense rows", 147, 7.7},
    // Per model family (model_family.h) and per precision on Blackwell (issue 34), LOSO.
    {"model family dense GPT-style", 48, 12.6},
    {"model family dense Llama-style", 99, 5.3},
    {"model family fine-grained MoE", 74, 14.0},
    {"model family MLA", 41, 12.1},
    {"model family hybrid", 29, 9.6},
    {"Blackwell bf16", 59, 5.7},
    {"Blackwell fp8", 27, 6.3},
    {"Blackwell mxfp8", 87, 9.5},
    {"Blackwell nvfp4", 24, 7.9},
};

// Leave one model family out (issue 34): every row of one architecture class left out of the
// fit, then predicted. Measured, rounded up to the next 0.1 %. Issue 34 asks <= 12 % for every
// family; fine-grained MoE and MLA are far above it (tests/validation/README.md says why).
constexpr GroupLimit kFamilies[] = {
    {"dense GPT-style", 48, 14.1},
    {"dense Llama-style", 99, 18.5},
    {"fine-grained MoE", 74, 33.3},
    {"MLA", 41, 13.9},
    {"hybrid", 29, 16.8},
};
constexpr double kOverallLofoMape = 20.7;

// The fitted constants that sit at a bound of their interval (calibrate.h, constants_at_bounds):
// each is physics the engine lacks, recorded with why; the list may only shrink. A constant that
// reaches a bound fails the test, and one that leaves it fails until it is taken off the list.
struct KnownAtBound {
  const char* arch;
  const char* key;
  const char* why;
};
// None since the refit with the Nemotron 3 Super rows (stop 50): Blackwell Ultra's
// fp8_gemm_efficiency left B300's measured ceiling (0.745 -> 0.717) and its moe_host_expert_us
// its upper bound (250 -> 158 us).
constexpr std::array<KnownAtBound, 0> kKnownAtBounds{};
// Cases of each table on its own, and runs that both tables report (counted once).
constexpr int kPublishedCases = 57, kModernCases = 235, kRepeatedRuns = 1;
constexpr int kCases = kPublishedCases + kModernCases - kRepeatedRuns;

TEST(Accuracy, CommittedCasesAreTheConversionOfBothTables) {
  const Conversion published = convert_runs(runs(), builtin_catalog());
  const Conversion modern_runs = convert_runs(modern(), builtin_catalog());
  EXPECT_EQ(static_cast<int>(published.cases.size()), kPublishedCases);
  EXPECT_EQ(static_cast<int>(modern_runs.cases.size()), kModernCases);
  EXPECT_EQ(published.cases.size() + published.skipped.size(), runs().rows.size());
  EXPECT_EQ(modern_runs.cases.size() + modern_runs.skipped.size(), modern().rows.size());
  Conversion all;
  add_table(all, published);
  add_table(all, modern_runs);
  EXPECT_EQ(static_cast<int>(all.cases.size()), kCases);
  EXPECT_EQ(all.skipped.size(), published.skipped.size() + modern_runs.skipped.size() +
                                    kRepeatedRuns);
  EXPECT_EQ(to_jsonl(all.cases), read("tests/validation/cases.jsonl"))
      << "regenerate: stepcast validate tests/validation/published-runs.csv "
         "tests/validation/modern-runs.csv --write-cases tests/validation/cases.jsonl";
  // Every modern row, dense or MoE, with an iteration time, a model shape and its parallel sizes
  // is predicted: no row is skipped for a feature the engine lacks. The engine rejects only
  // plans that cannot be: 25.09's GB200 DeepSeek-V3 MXFP8 row states pp 8 x ep 64 on 256 GPUs,
  // and NeMo AutoModel's 61 layers over 32 stages need a layout its table does not give (its
  // benchmark configs do not match the table: tests/validation/README.md, MoE rows).
  const std::set<std::string> impossible = {
      "MBRIDGE25.09-DGX-GB200-DeepSeek-V3-256-MXFP8-alt-L610",
      "AUTOMODEL-H100-DeepSeek_V3_671B-1024", "AUTOMODEL-H100-DeepSeek_V3_671B-256",
      "AUTOMODEL-H100-Kimi_K2-256"};
  for (const auto& s : modern_runs.skipped)
    EXPECT_TRUE(s.reason.find("model shape not stated") != std::string::npos ||
                s.reason.find("no iteration time") != std::string::npos ||
                s.reason.find("gpu_count not stated") != std::string::npos ||
                s.reason.find("(ep) not stated") != std::string::npos ||
                (impossible.count(s.id) && s.reason.find("engine rejects") != std::string::npos))
        << s.id << ": " << s.reason;
}

TEST(Accuracy, PerSourceMapeStaysAtTheMeasuredLevel) {
  ASSERT_EQ(static_cast<int>(cases().size()), kCases);
  const Accuracy acc = evaluate(cases(), builtin_catalog().calibration);
  std::map<std::string, SourceAccuracy> by;
  for (const auto& s : acc.sources) by[s.source] = s;
  EXPECT_EQ(by.size(), std::size(kLimits));
  for (const auto& l : kLimits) {
    ASSERT_TRUE(by.count(l.source)) << l.source;
    EXPECT_EQ(by[l.source].rows, l.rows) << l.source;
    EXPECT_LE(by[l.source].mape_pct, l.in_sample_mape)
        << l.source << " MAPE rose (worst row " << by[l.source].worst_id << ")";
  }
  EXPECT_EQ(acc.megatron.rows, 27);
  EXPECT_LE(acc.megatron.mape_pct, kMegatronMape);
  EXPECT_LE(acc.overall.mape_pct, kOverallMape);
  EXPECT_LE(std::fabs(acc.overall.worst_pct), kOverallWorst) << acc.overall.worst_id;
}

TEST(Accuracy, LeaveOneSourceOutStaysAtTheMeasuredLevel) {
  const Catalog& cat = builtin_catalog();
  // The LOSO table's cost, a figure (issue 39 asks <= 60 s on 2 cores), not a timed assertion.
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu = std::clock();
  const LosoResult loso = leave_one_source_out(cases(), cat.calibration, cat);
  std::printf("LOSO table (fit + %zu folds): %.1f s wall, %.1f s CPU\n", loso.sources.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC);
  std::map<std::string, LosoRow> by;
  for (const auto& r : loso.sources) by[r.source] = r;
  for (const auto& l : kLimits) {
    ASSERT_TRUE(by.count(l.source)) << l.source;
    EXPECT_LE(by[l.source].loso_mape_pct, l.loso_mape) << l.source;
  }
  EXPECT_LE(loso.predictions.megatron.mape_pct, kMegatronLosoMape);
  EXPECT_LE(loso.predictions.overall.mape_pct, kOverallLosoMape);
  std::map<std::string, SourceAccuracy> groups;
  for (const auto& g : loso.predictions.groups) groups[g.source] = g;
  for (const auto& g : kGroups) {
    ASSERT_TRUE(groups.count(g.group)) << g.group;
    EXPECT_EQ(groups[g.group].rows, g.rows) << g.group;
    EXPECT_LE(groups[g.group].mape_pct, g.loso_mape) << g.group;
  }
}

TEST(Accuracy, LeaveOneModelFamilyOutStaysAtTheMeasuredLevel) {
  const Catalog& cat = builtin_catalog();
  const LosoResult lofo = leave_one_model_family_out(cases(), cat.calibration, cat);
  std::map<std::string, LosoRow> by;
  for (const auto& r : lofo.sources) {
    by[r.source] = r;
    std::printf("LOFO %-18s %3d rows  in sample %5.1f %%  held out %5.1f %%  worst %+6.1f %% %s\n",
                r.source.c_str(), r.rows, r.in_sample_mape_pct, r.loso_mape_pct, r.loso_worst_pct,
                r.loso_worst_id.c_str());
  }
  EXPECT_EQ(by.size(), std::size(kFamilies));
  for (const auto& l : kFamilies) {
    ASSERT_TRUE(by.count(l.group)) << l.group;
    EXPECT_EQ(by[l.group].rows, l.rows) << l.group;
    EXPECT_LE(by[l.group].loso_mape_pct, l.loso_mape) << l.group;
  }
  EXPECT_LE(lofo.predictions.overall.mape_pct, kOverallLofoMape);
}

TEST(Accuracy, ModelFamiliesByShape) {
  // The classes of model_family.h on the presets they are named after.
  const Catalog& cat = builtin_catalog();
  auto family = [&](const char* preset) {
    const ModelSpec* m = cat.find_model(preset);
    EXPECT_TRUE(m) << preset;
    return m ? std::string(name_of(model_family_of(*m))) : std::string();
  };
  EXPECT_EQ(family("gpt3-175b"), "dense GPT-style");
  EXPECT_EQ(family("llama3-70b"), "dense Llama-style");
  EXPECT_EQ(family("mixtral-8x7b"), "coarse MoE");  // experts 14,336 wide on hidden 4,096
  EXPECT_EQ(family("qwen3-30b-a3b"), "fine-grained MoE");  // 768 on 2,048
  EXPECT_EQ(family("deepseek-v3"), "MLA");
  EXPECT_EQ(family("nemotron-h-8b"), "hybrid");
}

TEST(Accuracy, NoFittedConstantAtABoundBeyondTheKnownOnes) {
  // The committed constants (the fit of the committed cases: the test above) with the intervals
  // the fit searched.
  const Catalog& cat = builtin_catalog();
  CalibrationFit fit;
  std::map<std::string, std::vector<const PreparedCase*>> by_arch;
  for (const auto& c : cases()) by_arch[c.scenario.cluster.groups.front().gpu.arch].push_back(&c);
  for (const auto& [arch, rows] : by_arch) {
    FamilyFit f;
    f.arch = arch;
    f.constants = cat.calibration.for_arch(arch);
    f.parameters = fit_parameters(arch, rows, cat);
    fit.families.push_back(f);
  }
  std::set<std::pair<std::string, std::string>> at, known;
  for (const auto& b : constants_at_bounds(fit)) {
    at.insert({b.arch, b.key});
    std::printf("at a bound: %s %s %.3f (%s %.3f)\n", b.arch.c_str(), b.key.c_str(), b.value,
                b.upper ? "upper" : "lower", b.bound);
  }
  for (const auto& k : kKnownAtBounds) known.insert({k.arch, k.key});
  for (const auto& a : at)
    EXPECT_TRUE(known.count(a)) << a.first << " " << a.second
                                << " reached a bound of its fit: physics is missing";
  for (const auto& k : known)
    EXPECT_TRUE(at.count(k)) << k.first << " " << k.second
                             << " left its bound: take it off kKnownAtBounds";
}

TEST(Accuracy, ConstantsAtBoundsByHand) {
  // 0.8 in [0.4, 0.8] is at the upper bound, 0.403 within 1 % of the width of the lower one,
  // 0.41 (2.5 %) inside; µs keys compare in µs.
  FamilyFit f;
  f.arch = "hopper";
  f.parameters = {{"gemm_efficiency", 0.4, 0.8, ""},
                  {"attention_efficiency", 0.4, 0.8, ""},
                  {"fp8_gemm_efficiency", 0.4, 0.8, ""},
                  {"moe_host_expert_us", 0, 250, ""}};
  f.constants.gemm_efficiency = 0.8;
  f.constants.attention_efficiency = 0.403;
  f.constants.fp8_gemm_efficiency = 0.41;
  f.constants.moe_host_expert_s = 248e-6;
  CalibrationFit fit;
  fit.families = {f};
  const auto at = constants_at_bounds(fit);
  ASSERT_EQ(at.size(), 3u);
  EXPECT_EQ(at[0].key, "gemm_efficiency");
  EXPECT_TRUE(at[0].upper);
  EXPECT_EQ(at[1].key, "attention_efficiency");
  EXPECT_FALSE(at[1].upper);
  EXPECT_DOUBLE_EQ(at[1].bound, 0.4);
  EXPECT_EQ(at[2].key, "moe_host_expert_us");
  EXPECT_NEAR(at[2].value, 248, 1e-9);
}

TEST(Accuracy, CalibrationJsonIsTheFitOfTheCommittedCases) {
  // presets/calibration.json must be what `stepcast calibrate` writes: no hand-tuned constant.
  const Catalog& cat = builtin_catalog();
  const CalibrationFit fit = fit_calibration(cases(), cat.calibration, cat);
  ASSERT_FALSE(fit.families.empty());
  for (const auto& f : fit.families) {
    const ArchCalibration& have = cat.calibration.for_arch(f.arch);
    EXPECT_NEAR(have.gemm_efficiency, f.constants.gemm_efficiency, 1e-9) << f.arch;
    EXPECT_NEAR(have.fp8_gemm_efficiency, f.constants.fp8_gemm_efficiency, 1e-9) << f.arch;
    EXPECT_NEAR(have.attention_efficiency, f.constants.attention_efficiency, 1e-9) << f.arch;
    EXPECT_NEAR(have.memory_efficiency, f.constants.memory_efficiency, 1e-9) << f.arch;
    EXPECT_NEAR(have.gemm_overhead_s, f.constants.gemm_overhead_s, 1e-12) << f.arch;
    EXPECT_NEAR(have.layer_overhead_s, f.constants.layer_overhead_s, 1e-12) << f.arch;
    EXPECT_NEAR(have.grouped_gemm_factor, f.constants.grouped_gemm_factor, 1e-9) << f.arch;
    EXPECT_NEAR(have.moe_host_s, f.constants.moe_host_s, 1e-12) << f.arch;
    EXPECT_NEAR(have.moe_host_expert_s, f.constants.moe_host_expert_s, 1e-12) << f.arch;
  }
  // fitted_on names every committed case of the family, and nothing else.
  std::string text;
  for (const auto& f : builtin_preset_files())
    if (f.path == "calibration.json") text = std::string(f.text);
  const Json j = Json::parse(text, nullptr, false);
  ASSERT_TRUE(j.is_object() && j.contains("families"));
  size_t listed = 0;
  for (const auto& f : fit.families) {
    ASSERT_TRUE(j["families"].contains(f.arch)) << f.arch;
    const Json& on = j["families"][f.arch]["fitted_on"];
    ASSERT_TRUE(on.is_array()) << f.arch;
    std::vector<std::string> ids;
    for (const auto& id : on) ids.push_back(id.get<std::string>());
    EXPECT_EQ(ids, f.fitted_on) << f.arch;
    listed += ids.size();
  }
  EXPECT_EQ(listed, cases().size());
}

TEST(Accuracy, RankOrderWithinSources) {
  const Accuracy acc = evaluate(cases(), builtin_catalog().calibration);
  std::map<std::string, double> rho;
  for (const auto& g : rank_correlations(cases(), acc)) rho[g.name] = g.rho;
  // Several plans of one model: full vs selective recompute (Korthikanti), data-parallel width
  // (MT-NLG), GPU count (NeMo GPT-3), GPU type and count (llm-foundry).
  for (const char* g : {"KORTH GPT-22B", "KORTH GPT-175B", "KORTH GPT-530B", "KORTH GPT-1T",
                        "MTNLG", "NEMO2407 GPT3-175B", "LLMFOUNDRY MPT-70b", "LLMFOUNDRY MPT-7b"}) {
    ASSERT_TRUE(rho.count(g)) << g;
    EXPECT_DOUBLE_EQ(rho[g], 1.0) << g;
  }
  EXPECT_GE(rho["SC21"], 0.99);
  EXPECT_GE(rho["MCORE"], 0.99);
  EXPECT_GE(rho["NEMO2407"], 0.77);
}

// ---------------------------------------------------------------------------------------------
// Row -> scenario, checked by hand against the CSV text.

TEST(Conversion, Sc21LocalDdpRow) {
  // SC21-T1-5: GPT-39.1B, 512 A100-80GB (64 DGX A100), tp 8, pp 2, micro 4, global 1536,
  // fp16, full recompute; >= 39B used Megatron's local DDP (no overlapped all-reduce).
  const Conversion conv = convert_one("SC21-T1-5");
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  const Case& c = conv.cases[0];
  EXPECT_EQ(c.source, "SC21");
  EXPECT_DOUBLE_EQ(c.measured_iter_time_s, 14.45);
  const Json& s = c.scenario;
  EXPECT_EQ(s["cluster"], (Json{{"node", "dgx-a100"}, {"nodes", 64}}));
  EXPECT_EQ(s["model"]["layers"], 48);
  EXPECT_EQ(s["model"]["hidden"], 8192);
  EXPECT_EQ(s["model"]["heads"], 64);
  EXPECT_EQ(s["model"]["ffn_hidden"], 32768);
  EXPECT_EQ(s["model"]["vocab"], 51200);
  EXPECT_EQ(s["model"]["ffn_type"], "gelu");
  EXPECT_EQ(s["model"]["position"], "learned");
  EXPECT_EQ(s["model"]["tied_embeddings"], true);
  const Json& p = plan_of(c);
  EXPECT_EQ(p["tp"], 8);
  EXPECT_EQ(p["pp"], 2);
  EXPECT_EQ(p["dp"], 32);
  EXPECT_EQ(p["vpp"], 1);
  EXPECT_EQ(p["micro_batch"], 4);
  EXPECT_EQ(p["global_batch"], 1536);
  EXPECT_EQ(p["precision"], "fp16");
  EXPECT_EQ(p["recompute"], "full");
  EXPECT_EQ(p["framework"], "megatron-lm-2021");
  EXPECT_EQ(p["overlap_grad_reduce"], false);
  const Plan plan = resolved_plan(c);  // the rest from the megatron-lm-2021 profile
  EXPECT_FALSE(plan.sequence_parallel);
  EXPECT_FALSE(plan.flash_attention);
  EXPECT_TRUE(plan.pp_scatter_gather);
  EXPECT_FALSE(plan.overlap_p2p);
  // SC21-T1-4 (18.4B) used torch DDP, which overlaps the all-reduce (the profile's value).
  EXPECT_TRUE(resolved_plan(convert_one("SC21-T1-4").cases.at(0)).overlap_grad_reduce);
}

TEST(Conversion, KorthikantiSelectiveRow) {
  const Conversion conv = convert_one("KORTH-GPT-175B-sel");
  ASSERT_EQ(conv.cases.size(), 1u);
  const Json& p = plan_of(conv.cases[0]);
  EXPECT_EQ(p["recompute"], "selective");
  EXPECT_EQ(p["sequence_parallel"], true);
  EXPECT_EQ(p["vpp"], 3);
  EXPECT_EQ(p["dp"], 1);
  EXPECT_EQ(conv.cases[0].scenario["cluster"]["nodes"], 8);
  EXPECT_DOUBLE_EQ(conv.cases[0].measured_iter_time_s, 13.75);
  // The full-recompute baseline of Table 5 has no sequence parallelism.
  EXPECT_FALSE(resolved_plan(convert_one("KORTH-GPT-175B-full").cases.at(0)).sequence_parallel);
}

TEST(Conversion, MegatronCoreRowDerivesItsTimeFromTflops) {
  // MCORE-H100-1.7B: 24 x 2048, vocab 131072, seq 4096, 48 H100, global batch 192, 408.8 TF/GPU.
  // Forward FLOPs per sample: 24 x (2 s h 3h + 4 s^2 h + 2 s h^2 + 2 s h 4h x 2) + 2 s h V
  // = 24 x 5.4976e11 + 2.1990e12 = 1.53932e13; x 3 x 192 / (408.8e12 x 48) = 0.45185 s.
  const Conversion conv = convert_one("MCORE-H100-1.7B");
  ASSERT_EQ(conv.cases.size(), 1u);
  const Case& c = conv.cases[0];
  EXPECT_NEAR(c.measured_iter_time_s, 0.45185, 2e-5);
  EXPECT_NE(c.iter_time.find("derived"), std::string::npos);
  EXPECT_EQ(c.scenario["model"]["tied_embeddings"], false);
  const Json& p = plan_of(c);
  EXPECT_EQ(p["micro_batch"], 1);  // not stated: the documented source default
  EXPECT_EQ(p["framework"], "megatron-core");
  EXPECT_EQ(p["grad_reduce_in_fp32"], true);  // Megatron-LM r0.8, beyond the profile
  EXPECT_EQ(resolved_plan(c).effective_zero_stage(), 1);  // the distributed optimizer
  EXPECT_EQ(p["recompute"], "none");
  EXPECT_FALSE(c.assumptions.empty());
}

TEST(Conversion, LlmFoundryRoceRow) {
  // 1600 Gbps per node RoCE = 8 x 200GbE ports; FSDP FULL_SHARD = ZeRO-3.
  const Conversion conv = convert_one("LLMFOUNDRY-A100-MPT7b-8");
  ASSERT_EQ(conv.cases.size(), 1u);
  const Json& s = conv.cases[0].scenario;
  EXPECT_EQ(s["cluster"]["gpu"], "a100-sxm4-80gb");
  EXPECT_EQ(s["cluster"]["inter_node_link"], "roce-200g");
  EXPECT_EQ(s["cluster"]["nics_per_node"], 8);
  EXPECT_EQ(s["plan"]["framework"], "pytorch-fsdp");
  EXPECT_EQ(resolved_plan(conv.cases[0]).effective_zero_stage(), 3);
  EXPECT_EQ(s["plan"]["recompute"], "none");
  EXPECT_EQ(s["plan"]["precision"], "bf16");
  EXPECT_EQ(s["model"]["position"], "rope");  // ALiBi: no position parameters
  EXPECT_EQ(s["model"]["bias"], false);
}

TEST(Conversion, NemoLlamaRow) {
  const Conversion conv = convert_one("NEMO2407-LLAMA3-70B-64");
  ASSERT_EQ(conv.cases.size(), 1u);
  const Json& s = conv.cases[0].scenario;
  EXPECT_EQ(s["model"]["ffn_type"], "swiglu");
  EXPECT_EQ(s["model"]["norm"], "rmsnorm");
  EXPECT_EQ(s["model"]["kv_heads"], 8);
  EXPECT_EQ(s["model"]["tied_embeddings"], false);
  EXPECT_EQ(s["plan"]["precision"], "fp8");
  EXPECT_EQ(s["plan"]["cp"], 2);
  EXPECT_EQ(s["plan"]["vpp"], 5);
  const Plan plan = resolved_plan(conv.cases[0]);
  EXPECT_TRUE(plan.tp_comm_overlap);  // megatron-core, tp 4 with sequence parallelism
  EXPECT_TRUE(plan.sequence_parallel);
  // NeMo 24.07 reduces its gradients in bf16 (its launcher's optim.grad_sync_dtype: sources.json).
  EXPECT_FALSE(plan.grad_reduce_in_fp32);
}

TEST(Conversion, ModernRowsOfBlackwellAndUnevenSplits) {
  // Llama 3.1 405B on 256 GB200 (NVL72 racks, 64 GPUs each), MXFP8, tp 4 pp 16 vp 8: 126 + 2
  // (embedding and loss counted) = 128 layers over 128 chunks, as Megatron-Bridge's recipe.
  const Conversion conv =
      convert_one("MBRIDGE26.04.01-DGX-GB200-LLAMA3.1_405B-256-MXFP8-L217", modern());
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  const Json& s = conv.cases[0].scenario;
  EXPECT_EQ(s["cluster"]["gpu"], "gb200");
  EXPECT_EQ(s["cluster"]["gpus_per_node"], 64);
  EXPECT_EQ(s["cluster"]["nodes"], 4);
  EXPECT_EQ(s["plan"]["precision"], "mxfp8");
  EXPECT_EQ(s["plan"]["embedding_in_split"], true);
  EXPECT_EQ(s["plan"]["loss_in_split"], true);
  EXPECT_EQ(s["plan"]["vpp"], 8);
  const Plan plan = resolved_plan(conv.cases[0]);
  EXPECT_TRUE(plan.fp8_param_gather);  // megatron-core with mxfp8
  EXPECT_FALSE(plan.grad_reduce_in_fp32);
  // FSDP=64 rows ran Megatron FSDP.
  const Conversion fsdp =
      convert_one("MBRIDGE26.04.01-DGX-GB300-LLAMA3_70B-64-FP8-L201", modern());
  ASSERT_EQ(fsdp.cases.size(), 1u);
  EXPECT_EQ(plan_of(fsdp.cases[0])["framework"], "megatron-fsdp");
  EXPECT_EQ(resolved_plan(fsdp.cases[0]).effective_zero_stage(), 3);
}

TEST(Conversion, NetworkHeterogeneousRowsBecomeTwoGroups) {
  // DT-FM case 3: two sites of 32 one-GPU VMs, 5 Gb/s inside a site, 1.2 Gb/s between; the
  // first four of eight pipeline stages at the first site.
  const Conversion conv = convert_one("DTFM-Case3-L24-B1024-Megatron-P8");
  ASSERT_EQ(conv.cases.size(), 1u);
  const Json& s = conv.cases[0].scenario;
  ASSERT_EQ(s["cluster"]["groups"].size(), 2u);
  EXPECT_EQ(s["cluster"]["groups"][0]["nodes"], 32);
  EXPECT_DOUBLE_EQ(s["cluster"]["groups"][0]["inter_node_link"]["bandwidth_GBps_per_dir"].get<double>(),
                   5.0 / 8);
  EXPECT_DOUBLE_EQ(s["cluster"]["inter_group_link"]["bandwidth_GBps_per_dir"].get<double>(),
                   1.2 / 8);
  ASSERT_EQ(s["plan"]["stages"].size(), 8u);
  EXPECT_EQ(s["plan"]["stages"][3]["group"], 0);
  EXPECT_EQ(s["plan"]["stages"][4]["group"], 1);
  EXPECT_EQ(s["plan"]["stages"][4]["layers"], 3);
}

TEST(Conversion, BloomSplitCountsTheEmbeddings) {
  // 70 transformer layers + 2 embeddings over 12 stages: 5, 6 x 10, 5.
  const Conversion conv = convert_one("BLOOM-176B");
  ASSERT_EQ(conv.cases.size(), 1u);
  EXPECT_EQ(plan_of(conv.cases[0])["embedding_in_split"], true);
  EXPECT_EQ(plan_of(conv.cases[0])["loss_in_split"], true);
  const Report r = estimate(*scenario_from_json(conv.cases[0].scenario, builtin_catalog()));
  ASSERT_EQ(r.stages.size(), 12u);
  EXPECT_EQ(r.stages[0].layers, 5);
  EXPECT_EQ(r.stages[1].layers, 6);
  EXPECT_EQ(r.stages[11].layers, 5);
}

TEST(Conversion, SkippedRowsSayWhy) {
  auto reason = [](const char* id) {
    const Conversion c = convert_one(id);
    EXPECT_TRUE(c.cases.empty()) << id;
    return c.skipped.empty() ? std::string() : c.skipped[0].reason;
  };
  EXPECT_NE(reason("MCORE-H100-177B-strong-96").find("not stated: tp, pp"), std::string::npos);
  EXPECT_NE(reason("LLAMA3-405B-8192-cp1").find("no iteration time"), std::string::npos);
}

TEST(Accuracy, MatchedMoeRunsRankInTheMeasuredOrder) {
  // Megatron-Bridge's skills docs: matched A/B runs of one model, cluster and batch. The engine
  // tells apart EP-overlap on and off, and recompute none and any module list (all priced as
  // its selective recompute); it cannot order the module lists among themselves (core_attn,
  // mla_up_proj, mla_up_proj+mlp, moe_act, layernorm+moe_act measured 0.466-0.507 s).
  const Accuracy acc = evaluate(cases(), builtin_catalog().calibration);
  std::map<std::string, double> t;
  for (const auto& p : acc.rows) t[p.id] = p.predicted_s;
  const std::string q = "MBSKILL-Qwen3-30B-16xH100-";
  for (const char* on : {"overlap_on_search", "overlap_on_valid", "canonical"}) {
    ASSERT_TRUE(t.count(q + on)) << on;
    EXPECT_GT(t[q + "overlap_off"], t[q + on]) << on;  // 24.71 s off vs 20.15-21.07 s on
  }
  const std::string m = "MBSKILL-Moonlight16B-8xH100-";
  for (const char* rc : {"core_attn", "mla_up_proj", "mla_up_proj-mlp", "moe_act",
                         "layernorm-moe_act"}) {
    ASSERT_TRUE(t.count(m + rc)) << rc;
    EXPECT_LT(t[m + "none"], t[m + rc]) << rc;  // none is the fastest (0.457 s)
  }
}

TEST(Accuracy, MoonlightPeakMemoryIsTheRecipesWithBf16Moments) {
  // The skill's Moonlight 16B run with no recompute (modern-runs.csv notes): peak allocated
  // 36.618 GB after the optimizer's step (PyTorch's allocated bytes: no CUDA context, no
  // allocator slack, so the engine's weights, gradients, optimizer state and activations). Its
  // recipe keeps Adam's moments in bf16 (sources.json); with them the engine's sum is 2.3 %
  // under (35.77 GB), with fp32 moments 20 % over (43.77 GB). Nothing here is fitted. The sum
  // had been 0.6 % under (36.41 GB) while it counted the experts' outputs, 26 MoE layers of
  // 2 x 12,288 rows x 2048 (1.31 GB: 2048 tokens a GPU at TP 2, top 6, 8 of 64 experts a GPU),
  // which Megatron-Core from 0.13 does not keep (the router's probabilities scale the experts'
  // activation), and not the loss's bf16 gradient of the logits made beside their fp32 softmax
  // at the start of the backward (2 x 4096 x 81,920 = 0.67 GB: memory.cpp). GB is read as 10^9
  // bytes: the skill writes GiB where it means 2^30 (its Nemotron table has both); read as GiB
  // the peak would be 39.3e9 bytes, 10 % above the engine, still nearer than fp32's.
  const Conversion conv = convert_one("MBSKILL-Moonlight16B-8xH100-none", modern());
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  Json scenario = conv.cases[0].scenario;
  ASSERT_EQ(scenario["plan"]["bf16_moments"], true);
  const auto allocated_gb = [&](bool bf16_moments) {
    scenario["plan"]["bf16_moments"] = bf16_moments;
    auto s = scenario_from_json(scenario, builtin_catalog());
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    if (!s.ok()) return 0.0;
    const MemoryBreakdown& m = estimate(*s).stages[0].memory;
    return (m.weights + m.gradients + m.optimizer + m.activations) / 1e9;
  };
  constexpr double kMeasuredGb = 36.618;
  EXPECT_NEAR(allocated_gb(true), kMeasuredGb, 0.03 * kMeasuredGb);
  EXPECT_GT(allocated_gb(false), 1.15 * kMeasuredGb);
}

TEST(Conversion, MoeRowTakesTheRecipeOfItsModel) {
  // DeepSeek-V3 on 256 GB200 (26.04.01): tp 1, pp 4, vp 4, ep 64, MXFP8; recompute, dispatcher
  // and layout not stated: Megatron-Bridge's DeepSeek-V3 recipe (sources.json).
  const Conversion conv =
      convert_one("MBRIDGE26.04.01-DGX-GB200-DeepSeek-V3-256-MXFP8-main-L226", modern());
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  const Json& s = conv.cases[0].scenario;
  EXPECT_EQ(s["model"]["id"], "deepseek-v3");
  EXPECT_EQ(s["model"]["moe"]["experts"], 256);
  EXPECT_EQ(s["model"]["mtp_layers"], 1);
  const Json& p = s["plan"];
  EXPECT_EQ(p["ep"], 64);
  EXPECT_EQ(p["etp"], 1);
  EXPECT_EQ(p["vpp"], 4);
  EXPECT_EQ(p["moe_dispatcher"], "flex");
  EXPECT_EQ(p["recompute"], "selective");
  EXPECT_EQ(p["pipeline_layout"], "Et*4|(t*4|)*14tmL");  // 16 stages
  EXPECT_EQ(s["cluster"]["gpus_per_node"], 64);
  // Qwen3-235B-A22B: 94 + embedding + loss over pp x vp (the recipe's account-for flags).
  const Conversion qwen =
      convert_one("MBRIDGE26.04.01-DGX-GB200-Qwen3-235B-A22B-256-MXFP8-main-L255", modern());
  ASSERT_EQ(qwen.cases.size(), 1u) << (qwen.skipped.empty() ? "" : qwen.skipped[0].reason);
  EXPECT_EQ(plan_of(qwen.cases[0])["embedding_in_split"], true);
  // The release's GB200 recipe: HybridEP (flex) and TE CUDA graphs, no EP overlap.
  EXPECT_EQ(plan_of(qwen.cases[0])["moe_dispatcher"], "flex");
  EXPECT_EQ(plan_of(qwen.cases[0])["cuda_graphs"], true);
  EXPECT_EQ(plan_of(qwen.cases[0])["moe_overlap"], false);
  EXPECT_EQ(plan_of(qwen.cases[0])["recompute"], "none");
  // The same model and release on H100: alltoall with EP overlap, no graphs.
  const Conversion h100 =
      convert_one("MBRIDGE26.04.01-DGX-H100-Qwen3-235B-A22B-256-FP8-main-L258", modern());
  ASSERT_EQ(h100.cases.size(), 1u) << (h100.skipped.empty() ? "" : h100.skipped[0].reason);
  EXPECT_EQ(plan_of(h100.cases[0])["moe_dispatcher"], "alltoall");
  EXPECT_EQ(plan_of(h100.cases[0])["moe_overlap"], true);
  EXPECT_EQ(plan_of(h100.cases[0])["cuda_graphs"], false);
}

// A row that names its model without the shape (Megatron-Bridge's "Nemotron_3_Nano": no layers,
// hidden or experts) takes the preset sources.json's models_by_name names for it, and the
// release's recipe (nemotron_3_workload_base_configs.py): on GB300 micro-batch 4 (the row's),
// EP 8 with HybridEP, TE CUDA graphs, no recompute; on 16 H100 the FP8 recipe recomputes four
// modules.
TEST(Conversion, RowNamingItsModelTakesThePreset) {
  const Conversion conv =
      convert_one("MBRIDGE26.04.01-DGX-GB300-Nemotron_3_Nano-8-MXFP8-main-L272", modern());
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  const Json& s = conv.cases[0].scenario;
  EXPECT_EQ(s["model"]["id"], "nemotron-3-nano-30b-a3b");
  EXPECT_EQ(s["model"]["layers"], 52);
  EXPECT_EQ(s["model"]["seq_len"], 8192);
  EXPECT_EQ(s["model"]["moe"]["experts"], 128);
  const Json& p = s["plan"];
  EXPECT_EQ(p["ep"], 8);
  EXPECT_EQ(p["etp"], 1);
  EXPECT_EQ(p["micro_batch"], 4);
  EXPECT_EQ(p["moe_dispatcher"], "flex");
  EXPECT_EQ(p["cuda_graphs"], true);
  EXPECT_EQ(p["recompute"], "none");
  const Conversion h100 =
      convert_one("MBRIDGE26.04.01-DGX-H100-Nemotron_3_Nano-16-FP8-main-L276", modern());
  ASSERT_EQ(h100.cases.size(), 1u) << (h100.skipped.empty() ? "" : h100.skipped[0].reason);
  EXPECT_EQ(plan_of(h100.cases[0])["recompute"], "selective");
  EXPECT_EQ(plan_of(h100.cases[0])["recompute_modules"], "moe layernorm core_attn moe_act");
  EXPECT_EQ(h100.cases[0].scenario["cluster"]["nodes"], 2);
  // Nemotron 3 Super names no shape either: its preset (latent MoE, two repeated "*E" MTP
  // depths) and the release's recipe per GPU and precision (nemotron_3_workload_base_configs.py
  // at 17a381f95): on GB300 TP 1, EP 64, HybridEP, TE CUDA graphs, no recompute; on B200 under
  // MXFP8 no CUDA graphs and moe_act and layernorm recomputed, under NVFP4 TP 2, graphs, none.
  const Conversion super =
      convert_one("MBRIDGE26.04.01-DGX-GB300-Nemotron_3_Super-64-MXFP8-main-L282", modern());
  ASSERT_EQ(super.cases.size(), 1u) << (super.skipped.empty() ? "" : super.skipped[0].reason);
  const Json& sm = super.cases[0].scenario["model"];
  EXPECT_EQ(sm["id"], "nemotron-3-super-120b-a12b");
  EXPECT_EQ(sm["moe"]["latent_size"], 1024);
  EXPECT_EQ(sm["mtp_layers"], 2);
  EXPECT_EQ(sm["mtp_pattern"], "*E");
  const Json& sp = plan_of(super.cases[0]);
  EXPECT_EQ(sp["tp"], 1);
  EXPECT_EQ(sp["ep"], 64);
  EXPECT_EQ(sp["moe_dispatcher"], "flex");
  EXPECT_EQ(sp["cuda_graphs"], true);
  EXPECT_EQ(sp["recompute"], "none");
  const Conversion b200 =
      convert_one("MBRIDGE26.04.01-DGX-B200-Nemotron_3_Super-64-MXFP8-main-L288", modern());
  ASSERT_EQ(b200.cases.size(), 1u);
  EXPECT_EQ(plan_of(b200.cases[0])["recompute"], "selective");
  EXPECT_EQ(plan_of(b200.cases[0])["recompute_modules"], "moe_act layernorm");
  EXPECT_EQ(plan_of(b200.cases[0])["cuda_graphs"], false);
  const Conversion b200_fp4 =
      convert_one("MBRIDGE26.04.01-DGX-B200-Nemotron_3_Super-64-NVFP4-main-L289", modern());
  ASSERT_EQ(b200_fp4.cases.size(), 1u);
  EXPECT_EQ(plan_of(b200_fp4.cases[0])["tp"], 2);
  EXPECT_EQ(plan_of(b200_fp4.cases[0])["recompute"], "none");
  EXPECT_EQ(plan_of(b200_fp4.cases[0])["cuda_graphs"], true);
  // AutoModel's Super run (FSDP2, its own name) is mapped by no entry: still skipped.
  const Conversion automodel = convert_one("AUTOMODEL-H100-Nemotron_V3_Super_120B-64", modern());
  EXPECT_TRUE(automodel.cases.empty());
}

TEST(Conversion, PublishedMoeRowsReadAsModernRows) {
  // Megatron-Bridge 25.11 on 256 H100: Qwen3-235B-A22B, tp 2, pp 8, vp 4, ep 32, FP8, mb 1,
  // GBS 2048; the expert columns moe_experts/moe_topk and "1536 (expert)" in ffn_hidden. The
  // release's H100 recipe (commit 97ad8cc6f): alltoall with EP overlap, no recompute.
  const Conversion conv = convert_one("MBRIDGE25.11-DGX-H100-Qwen3-235B-A22B-256");
  ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
  const Case& c = conv.cases[0];
  EXPECT_EQ(c.source, "MBRIDGE25.11");
  EXPECT_DOUBLE_EQ(c.measured_iter_time_s, 20.805);
  EXPECT_EQ(c.iter_time, "derived by the data file: iter_time_s");
  const Json& s = c.scenario;
  EXPECT_EQ(s["model"]["id"], "qwen3-235b-a22b");
  EXPECT_EQ(s["model"]["moe"]["experts"], 128);
  EXPECT_EQ(s["model"]["moe"]["top_k"], 8);
  EXPECT_EQ(s["model"]["moe"]["ffn_hidden"], 1536);
  EXPECT_EQ(s["cluster"], (Json{{"node", "dgx-h100"}, {"nodes", 32}}));
  const Json& p = s["plan"];
  EXPECT_EQ(p["tp"], 2);
  EXPECT_EQ(p["pp"], 8);
  EXPECT_EQ(p["vpp"], 4);
  EXPECT_EQ(p["dp"], 16);
  EXPECT_EQ(p["ep"], 32);
  EXPECT_EQ(p["etp"], 1);
  EXPECT_EQ(p["precision"], "fp8");
  EXPECT_EQ(p["moe_dispatcher"], "alltoall");
  EXPECT_EQ(p["moe_overlap"], true);
  EXPECT_EQ(p["recompute"], "none");
  // GPT-OSS-120B on 64 H100, bf16: ep 8 of the 128 experts; the 25.11 recipe names recompute
  // modules without a granularity, which recomputes nothing. The table's micro-batch 4 with
  // GA 2 is not this plan's (512 / (DP 16 x 4) = 8): the recipe's 1 (sources.json recipe_plan),
  // 512 / 16 = 32 micro-batches, and it fits.
  const Conversion oss = convert_one("MBRIDGE25.11-DGX-H100-GPT-OSS-120B-64");
  ASSERT_EQ(oss.cases.size(), 1u) << (oss.skipped.empty() ? "" : oss.skipped[0].reason);
  EXPECT_EQ(oss.cases[0].scenario["model"]["id"], "gpt-oss-120b");
  EXPECT_EQ(plan_of(oss.cases[0])["ep"], 8);
  EXPECT_EQ(plan_of(oss.cases[0])["micro_batch"], 1);
  EXPECT_EQ(plan_of(oss.cases[0])["pp"], 4);
  EXPECT_EQ(plan_of(oss.cases[0])["dp"], 16);
  EXPECT_TRUE(std::any_of(oss.cases[0].assumptions.begin(), oss.cases[0].assumptions.end(),
                          [](const std::string& a) {
                            return a.find("the table's plan (TP 1, PP 4, VP 1, micro-batch 4)") ==
                                   0;
                          }));
  auto oss_scenario = scenario_from_json(oss.cases[0].scenario, builtin_catalog());
  ASSERT_TRUE(oss_scenario.ok());
  EXPECT_TRUE(estimate(*oss_scenario).fits);
  EXPECT_EQ(plan_of(oss.cases[0])["recompute"], "none");
  EXPECT_EQ(plan_of(oss.cases[0])["moe_overlap"], false);
}

TEST(Conversion, PublishedMoeRowWithFsdpShardingRunsMegatronFsdp) {
  // No published MoE row shards with FSDP yet; one that did would say so in its sharding column,
  // which reads as the modern table's "FSDP=dp" cell: Megatron FSDP over the row's 16 replicas.
  CsvTable table = runs();
  const int sharding = table.column("sharding");
  ASSERT_GE(sharding, 0);
  bool found = false;
  for (auto& row : table.rows)
    if (row[table.column("id")] == "MBRIDGE25.11-DGX-H100-Qwen3-235B-A22B-256") {
      row[static_cast<size_t>(sharding)] = "Megatron FSDP";
      found = true;
    }
  ASSERT_TRUE(found);
  const Conversion fsdp = convert_one("MBRIDGE25.11-DGX-H100-Qwen3-235B-A22B-256", table);
  ASSERT_EQ(fsdp.cases.size(), 1u) << (fsdp.skipped.empty() ? "" : fsdp.skipped[0].reason);
  EXPECT_EQ(plan_of(fsdp.cases[0])["framework"], "megatron-fsdp");
  EXPECT_EQ(plan_of(fsdp.cases[0])["dp"], 16);
  const auto& said = fsdp.cases[0].assumptions;
  EXPECT_NE(std::find(said.begin(), said.end(), "FSDP=16: megatron-fsdp"), said.end());
  // As published (DDP + distributed optimizer): the source's own software.
  const Conversion ddp = convert_one("MBRIDGE25.11-DGX-H100-Qwen3-235B-A22B-256");
  ASSERT_EQ(ddp.cases.size(), 1u);
  EXPECT_NE(plan_of(ddp.cases[0]).value("framework", ""), "megatron-fsdp");
}

TEST(Conversion, ARunInBothTablesCountsOnce) {
  // 25.09's DeepSeek-V3 on 1024 H100 (25.264 s) is a row of both tables: the modern table's row
  // stays, the published one is listed as skipped with the modern row's id.
  Conversion all;
  add_table(all, convert_one("MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024"));
  ASSERT_EQ(all.cases.size(), 1u) << (all.skipped.empty() ? "" : all.skipped[0].reason);
  add_table(all, convert_one("MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024-FP8-main-L631", modern()));
  ASSERT_EQ(all.cases.size(), 1u);
  EXPECT_EQ(all.cases[0].id, "MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024-FP8-main-L631");
  ASSERT_EQ(all.skipped.size(), 1u);
  EXPECT_EQ(all.skipped[0].id, "MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024");
  EXPECT_EQ(all.skipped[0].reason,
            "the same run as MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024-FP8-main-L631 (counted once, "
            "from that row)");
  // Another run of the same source and cluster (25.09 Qwen3-235B on H100) is not the same run.
  add_table(all, convert_one("MBRIDGE25.09-DGX-H100-Qwen3-235B-A22B-256-FP8-main-L633", modern()));
  EXPECT_EQ(all.cases.size(), 2u);
}

TEST(Tables, ModelRecipesMatchSourceGpuAndPrecision) {
  // Entries are tried in order; an entry's filters (empty: any) must all hold.
  const auto table = parse_source_table(R"({"unlisted": {
    "framework": "megatron-core", "megatron_lm": false, "plan": {},
    "sequence_parallel_with_selective": false, "overlap_grad_reduce_below_params_b": null,
    "tied_embeddings": null, "default_micro_batch": null, "default_recompute": null,
    "recompute_yes_means": null, "heads_when_unstated": null, "iter_time_from_tflops": false,
    "nvl72_gpus_per_domain": null, "layout": [], "why": "test",
    "model_recipes": [
      {"model_contains": "M", "sources": ["S1"], "gpu_prefix": ["B200"], "precision": ["MXFP8"],
       "recompute": "none", "moe_dispatcher": "flex", "etp": 1, "moe_overlap": true,
       "cuda_graphs": true, "pipeline_layouts": {}, "why": "a"},
      {"model_contains": "M", "gpu_prefix": ["H100"], "recompute": "none",
       "moe_dispatcher": "alltoall", "etp": 1, "pipeline_layouts": {}, "why": "b"},
      {"model_contains": "M", "recompute": "selective", "moe_dispatcher": null, "etp": null,
       "pipeline_layouts": {}, "why": "c"}]},
    "sources": []})");
  ASSERT_TRUE(table.ok()) << table.error().message;
  const SourceFacts& f = table->unlisted;
  auto why = [&](std::string_view model, std::string_view source, std::string_view gpu,
                 std::string_view precision) {
    const auto* r = f.recipe_for(model, source, gpu, precision);
    return r ? r->why : std::string("(none)");
  };
  EXPECT_EQ(why("M-1", "S1", "B200", "MXFP8"), "a");
  EXPECT_EQ(why("M-1", "S1", "GB200 (NVL72)", "MXFP8"), "c");  // a prefix, not a substring
  EXPECT_EQ(why("M-1", "S2", "B200", "MXFP8"), "c");
  EXPECT_EQ(why("M-1", "S1", "B200", "FP8 (mixed)"), "c");
  EXPECT_EQ(why("M-1", "S2", "H100-SXM5-80GB", "BF16"), "b");
  EXPECT_EQ(why("X", "S1", "B200", "MXFP8"), "(none)");
  const auto* a = f.recipe_for("M", "S1", "B200", "MXFP8 (blocks)");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->moe_overlap, std::optional<bool>(true));
  EXPECT_EQ(a->cuda_graphs, std::optional<bool>(true));
  EXPECT_FALSE(f.recipe_for("M", "S2", "H100", "BF16")->moe_overlap.has_value());
  // A filter must be a non-empty array of strings.
  Json bad = Json::parse(read("engine/accuracy/sources.json"));
  bad["unlisted"]["model_recipes"] = Json::array({Json::parse(
      R"({"model_contains": "M", "gpu_prefix": "B200", "recompute": null, "moe_dispatcher": null,
          "etp": null, "pipeline_layouts": {}, "why": "x"})")});
  const auto t = parse_source_table(bad.dump());
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().path, "unlisted.model_recipes[0].gpu_prefix");
}

TEST(Conversion, MoeRowsOfReducedModelsAndModuleLists) {
  // SimuMax's 4-layer DeepSeek-V3: the architecture with 4 layers, 1 dense, no MTP, capacity 1.
  const Conversion sim = convert_one("SIMUMAX-B200-deepseekv3-l4-ep4-pp2-mbc8", modern());
  ASSERT_EQ(sim.cases.size(), 1u) << (sim.skipped.empty() ? "" : sim.skipped[0].reason);
  const Json& m = sim.cases[0].scenario["model"];
  EXPECT_EQ(m["layers"], 4);
  EXPECT_EQ(m["moe"]["first_dense_layers"], 1);
  EXPECT_EQ(m["mtp_layers"], 0);
  EXPECT_DOUBLE_EQ(m["moe"]["capacity_factor"].get<double>(), 1.0);
  EXPECT_EQ(plan_of(sim.cases[0])["recompute"], "none");
  EXPECT_EQ(plan_of(sim.cases[0])["moe_dispatcher"], "alltoall");
  // "selective [] (none)" recomputes nothing; a module list is the selective setting.
  auto rc = [](const char* id) {
    const Conversion c = convert_one(id, modern());
    return c.cases.empty() ? std::string("skipped") : plan_of(c.cases[0])["recompute"].get<std::string>();
  };
  EXPECT_EQ(rc("MBSKILL-Moonlight16B-8xH100-none"), "none");
  EXPECT_EQ(rc("MBSKILL-Moonlight16B-8xH100-mla_up_proj-mlp"), "selective");
  const Conversion on = convert_one("MBSKILL-Qwen3-30B-16xH100-overlap_on_valid", modern());
  ASSERT_EQ(on.cases.size(), 1u);
  EXPECT_EQ(plan_of(on.cases[0])["moe_overlap"], true);
  EXPECT_EQ(plan_of(on.cases[0])["moe_dispatcher"], "flex");
}

// ---------------------------------------------------------------------------------------------
// Small parts.

TEST(Csv, QuotesEscapesAndLineEnds) {
  auto t = parse_csv("a,b,c\r\n1,\"x, \"\"y\"\"\",3\r\n\r\n4,\"multi\nline\",6\n");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->cell(0, "b"), "x, \"y\"");
  EXPECT_EQ(t->cell(1, "b"), "multi\nline");
  EXPECT_EQ(t->cell(1, "c"), "6");
  EXPECT_EQ(t->cell(1, "missing"), "");
  EXPECT_FALSE(parse_csv("a,b\n1,\"open\n").ok());
  EXPECT_FALSE(parse_csv("a,b\n1,2,3\n").ok());
}

TEST(Stats, SpearmanAndSources) {
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(*spearman({1, 2, 3}, {1, 3, 2}), 0.5, 1e-12);
  EXPECT_FALSE(spearman({1}, {1}).has_value());
  EXPECT_FALSE(spearman({1, 1, 1}, {1, 2, 3}).has_value());
  EXPECT_EQ(source_of("SC21-T1-3"), "SC21");
  EXPECT_EQ(source_of("MBRIDGE25.11-DGX-H100-LLAMA3_8B-8"), "MBRIDGE25.11");
  EXPECT_TRUE(is_megatron_source("KORTH"));
  EXPECT_FALSE(is_megatron_source("NEMO2407"));
}

// ---------------------------------------------------------------------------------------------
// The data tables (engine/accuracy/sources.json, hardware_map.json).

TEST(Tables, BuiltInTablesLoadAndNamePresetsThatExist) {
  const auto& sources = builtin_source_table();
  ASSERT_TRUE(sources.ok()) << sources.error().message;
  EXPECT_FALSE(sources->unlisted.listed);
  for (const auto& f : sources->sources) {
    EXPECT_TRUE(f.listed) << f.id;
    EXPECT_FALSE(f.why.empty()) << f.id;
  }
  EXPECT_EQ(sources->facts_for("MBRIDGE25.11").id, "MBRIDGE*");
  EXPECT_EQ(sources->facts_for("SC21").id, "SC21");
  EXPECT_FALSE(sources->facts_for("LLAMA3").listed);
  EXPECT_EQ(sources->megatron_lm_name(), "Megatron-LM (SC21+KORTH+MCORE)");
  ASSERT_FALSE(sources->models_by_name.empty());
  for (const auto& n : sources->models_by_name) {
    const ModelSpec* m = builtin_catalog().find_model(n.preset);
    EXPECT_TRUE(m && m->moe.enabled()) << n.preset << ": models_by_name names MoE presets";
    EXPECT_EQ(sources->model_by_name_for(n.model_contains), &n);
  }
  EXPECT_EQ(sources->model_by_name_for("Nemotron_V3_Super_120B"), nullptr);  // AutoModel's

  const auto& hardware = builtin_hardware_map();
  ASSERT_TRUE(hardware.ok()) << hardware.error().message;
  const Catalog& cat = builtin_catalog();
  for (const auto& g : hardware->gpus) {
    EXPECT_NE(cat.find_gpu(g.preset), nullptr) << g.preset;
    EXPECT_NE(cat.find_link(g.intra_node_link), nullptr) << g.intra_node_link;
  }
  for (const auto& n : hardware->networks) EXPECT_NE(cat.find_link(n.link), nullptr) << n.link;
  ASSERT_NE(hardware->gpu_for("V100 (16GB SXM2 on p3)"), nullptr);
  EXPECT_EQ(hardware->gpu_for("V100 (16GB SXM2 on p3)")->preset, "v100-sxm2-16gb");
  EXPECT_EQ(hardware->gpu_for("MI300X"), nullptr);
  // A hedged cell: the rule's note_if_hedged, with the trimmed cell for {text}.
  const auto hedged =
      hardware->network_for(" IB (likely 8x NDR 400G; not stated) ", "a100-sxm4-80gb", 8);
  ASSERT_TRUE(hedged.has_value());
  EXPECT_EQ(hedged->link, "ib-ndr");
  EXPECT_EQ(hedged->note,
            "inter-node network 'IB (likely 8x NDR 400G; not stated)': 8 ports per node");
  EXPECT_EQ(hardware->network_for("8x NDR IB 400Gb/s per node", "h100-sxm5-80gb", 8).value().note,
            "");
  // No network named: only a DGX H100 (8 GPUs a node) has a reference network.
  EXPECT_EQ(hardware->network_for("IB (not stated)", "h100-sxm5-80gb", 8).value().link, "ib-ndr");
  EXPECT_FALSE(hardware->network_for("IB (not stated)", "h100-sxm5-80gb", 4).has_value());
}

TEST(Tables, BadTablesAreErrorsWithTheirPath) {
  const Json sources = Json::parse(read("engine/accuracy/sources.json"), nullptr, false);
  const Json hardware = Json::parse(read("engine/accuracy/hardware_map.json"), nullptr, false);
  ASSERT_TRUE(sources.is_object() && hardware.is_object());
  auto source_error = [](const Json& doc) {
    auto t = parse_source_table(doc.dump());
    return t.ok() ? Error{ErrorCode::parse_error, "(none)", "parsed"} : t.error();
  };
  auto hardware_error = [](const Json& doc) {
    auto t = parse_hardware_map(doc.dump());
    return t.ok() ? Error{ErrorCode::parse_error, "(none)", "parsed"} : t.error();
  };
  EXPECT_EQ(parse_source_table("{not json").error().code, ErrorCode::parse_error);
  EXPECT_EQ(parse_hardware_map("[]").error().code, ErrorCode::type_error);

  Json bad = sources;
  bad["sources"][1]["zero_stage"] = "one";
  EXPECT_EQ(source_error(bad).path, "sources[1].zero_stage");
  bad = sources;
  bad["sources"][0]["flash_atention"] = false;  // a typo
  EXPECT_EQ(source_error(bad).code, ErrorCode::unknown_key);
  bad = sources;
  bad["sources"][2].erase("default_micro_batch");  // every setting is stated, null or not
  EXPECT_EQ(source_error(bad).path, "sources[2].default_micro_batch");
  bad = sources;
  bad["sources"][8]["heads_when_unstated"]["heads"] = 0;
  EXPECT_EQ(source_error(bad).path, "sources[8].heads_when_unstated.heads");
  bad = sources;
  bad["unlisted"]["default_recompute"] = "some";
  EXPECT_EQ(source_error(bad).code, ErrorCode::out_of_range);
  bad = sources;
  bad["models_by_name"][0].erase("preset");
  EXPECT_EQ(source_error(bad).path, "models_by_name[0].preset");
  bad = sources;
  bad["models_by_name"][0]["layers"] = 52;  // the shape is the preset's, not the table's
  EXPECT_EQ(source_error(bad).code, ErrorCode::unknown_key);

  bad = hardware;
  bad["networks"][0]["contains_any"] = "HDR";
  EXPECT_EQ(hardware_error(bad).path, "networks[0].contains_any");
  bad = hardware;
  bad["gpus"][0].erase("preset");
  EXPECT_EQ(hardware_error(bad).path, "gpus[0].preset");
  bad = hardware;
  bad["networks"][5]["nics_per_node"] = 0;
  EXPECT_EQ(hardware_error(bad).code, ErrorCode::out_of_range);
}

TEST(Cases, BadLinesAreErrorsNotExceptions) {
  EXPECT_FALSE(parse_cases_jsonl("{not json}\n").ok());
  EXPECT_FALSE(parse_cases_jsonl("{\"id\": \"X-1\"}\n").ok());
  EXPECT_FALSE(parse_cases_jsonl("[1, 2]\n").ok());
  auto ok = parse_cases_jsonl("\n{\"id\":\"X-1\",\"measured_iter_time_s\":2,\"scenario\":{}}\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at(0).source, "X");
  EXPECT_FALSE(prepare(*ok, builtin_catalog()).ok());  // empty scenario: the engine's error
}

// ---------------------------------------------------------------------------------------------
// Measured peak memory (tests/validation/memory-runs.csv as memory cases, memory-cases.jsonl):
// the error of the predicted peak allocated and reserved per GPU, per source. Thresholds: the
// measured figures rounded up to the next 0.1 % (tests/validation/README.md, "Peak memory"). No
// constant is fitted on these rows, so the leave-one-source-out figures are the in-sample ones.

const CsvTable& memory_runs() {
  static const CsvTable table = table_of("tests/validation/memory-runs.csv");
  return table;
}

struct PeakLimit {
  const char* source;
  int rows, allocated_rows, reserved_rows;
  double allocated_median, allocated_p90, reserved_median, reserved_p90;  // % of |error|
};
constexpr PeakLimit kPeakLimits[] = {
    {"MBCARD", 2, 2, 2, 9.7, 10.4, 20.5, 21.1},
    {"SIMUMAXB200", 19, 19, 19, 0.7, 4.1, 1.5, 6.6},
    {"MBSKILLMEM", 4, 4, 0, 13.7, 16.4, 0, 0},
    {"overall", 25, 25, 21, 0.9, 11.1, 1.6, 7.0},
};
constexpr int kMemoryCases = 25;

const std::vector<PreparedCase>& peak_cases() {
  static const std::vector<PreparedCase> prepared =
      prepared_cases("tests/validation/memory-cases.jsonl");
  return prepared;
}

TEST(PeakMemory, CommittedCasesAreTheConversionOfTheTable) {
  const Conversion conv = convert_runs(memory_runs(), builtin_catalog());
  EXPECT_EQ(static_cast<int>(conv.cases.size()), kMemoryCases);
  EXPECT_EQ(conv.cases.size() + conv.skipped.size(), memory_runs().rows.size());
  for (const auto& c : conv.cases) {
    EXPECT_EQ(c.measured_iter_time_s, 0) << c.id;  // a memory case measures no time
    ASSERT_TRUE(c.peak.has_value()) << c.id;
  }
  // Every skipped row is a model the engine cannot express yet, and says which.
  for (const auto& s : conv.skipped)
    EXPECT_NE(s.reason.find("cannot express the model yet"), std::string::npos)
        << s.id << ": " << s.reason;
  EXPECT_EQ(to_jsonl(conv.cases), read("tests/validation/memory-cases.jsonl"))
      << "regenerate: stepcast validate tests/validation/memory-runs.csv --write-cases "
         "tests/validation/memory-cases.jsonl";
}

TEST(PeakMemory, ErrorsStayAtTheMeasuredLevel) {
  ASSERT_EQ(static_cast<int>(peak_cases().size()), kMemoryCases);
  const MemoryAccuracy acc = evaluate_memory(peak_cases(), builtin_catalog().calibration);
  std::map<std::string, MemorySourceAccuracy> by;
  for (const auto& s : acc.sources) by[s.source] = s;
  by["overall"] = acc.overall;
  EXPECT_EQ(acc.sources.size() + 1, std::size(kPeakLimits));
  for (const auto& l : kPeakLimits) {
    ASSERT_TRUE(by.count(l.source)) << l.source;
    const MemorySourceAccuracy& s = by[l.source];
    EXPECT_EQ(s.rows, l.rows) << l.source;
    EXPECT_EQ(s.allocated.rows, l.allocated_rows) << l.source;
    EXPECT_EQ(s.reserved.rows, l.reserved_rows) << l.source;
    EXPECT_LE(s.allocated.median_pct, l.allocated_median) << l.source << " " << s.allocated.worst_id;
    EXPECT_LE(s.allocated.p90_pct, l.allocated_p90) << l.source << " " << s.allocated.worst_id;
    EXPECT_LE(s.reserved.median_pct, l.reserved_median) << l.source << " " << s.reserved.worst_id;
    EXPECT_LE(s.reserved.p90_pct, l.reserved_p90) << l.source << " " << s.reserved.worst_id;
  }
  // Every run measured here ran: none may be called out of memory.
  for (const auto& p : acc.rows) EXPECT_TRUE(p.fits) << p.id;
}

TEST(PeakMemory, HybridRowsTakeTheirPresetAndTheSettingsTheyState) {
  // Megatron-Bridge's Nemotron 3 Super card (memory-runs.csv): the row names its model, which
  // maps to the preset (sources.json models_by_name), and states its recompute modules as a
  // Python list and Adam's moment dtypes in its optimizer column; both are read from the row.
  const Conversion c = convert_one("MBCARD-nemotron-3-super-120b-a12b-pretrain-H100", memory_runs());
  ASSERT_EQ(c.cases.size(), 1u) << (c.skipped.empty() ? "" : c.skipped[0].reason);
  const Json& plan = c.cases[0].scenario["plan"];
  EXPECT_EQ(c.cases[0].scenario["model"]["id"], "nemotron-3-super-120b-a12b");
  EXPECT_EQ(plan["recompute"], "selective");
  EXPECT_EQ(plan["recompute_modules"], "layernorm moe_act moe core_attn");
  EXPECT_EQ(plan["bf16_moments"], true);
  // Recomputing the MoE layers keeps only their inputs: the run fits an 80 GB H100 (it ran at
  // 58.1 GiB allocated); with the engine's default module (core_attn) it would need 117 GiB.
  auto s = scenario_from_json(c.cases[0].scenario, builtin_catalog());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(estimate(*s).fits);
  Json core_attn = c.cases[0].scenario;
  core_attn["plan"].erase("recompute_modules");
  EXPECT_FALSE(estimate(*scenario_from_json(core_attn, builtin_catalog())).fits);
}

TEST(PeakMemory, StatisticsByHand) {
  // |errors| 1, 2, 3, 10 (signed -10 the worst): median (2 + 3) / 2, p90 the ceil(3.6) = 4th.
  std::vector<MemoryPrediction> rows;
  for (double e : {1.0, -2.0, 3.0, -10.0}) {
    MemoryPrediction p;
    p.id = fmt::format("S-{}", e);
    p.source = "S";
    p.allocated_error_pct = e;
    rows.push_back(p);
  }
  const MemoryAccuracy acc = summarise_memory(rows);
  EXPECT_EQ(acc.overall.allocated.rows, 4);
  EXPECT_DOUBLE_EQ(acc.overall.allocated.median_pct, 2.5);
  EXPECT_DOUBLE_EQ(acc.overall.allocated.p90_pct, 10.0);
  EXPECT_DOUBLE_EQ(acc.overall.allocated.mape_pct, 4.0);
  EXPECT_DOUBLE_EQ(acc.overall.allocated.worst_pct, -10.0);
  EXPECT_EQ(acc.overall.reserved.rows, 0);
}

TEST(PeakMemory, ImpossiblePeaksAreErrorsNamingTheField) {
  ASSERT_FALSE(peak_cases().empty());
  const Case good = peak_cases().front().data;
  ASSERT_TRUE(good.peak && good.peak->allocated_gib && good.peak->reserved_gib);
  auto error_of = [&](const char* key, double value) -> std::string {
    nlohmann::ordered_json j = to_json(good);
    j[key] = value;
    auto c = parse_cases_jsonl(j.dump() + "\n");
    if (!c.ok()) return c.error().path + " | " + c.error().message;
    auto p = prepare(*c, builtin_catalog());
    return p.ok() ? std::string() : p.error().path + " | " + p.error().message;
  };
  const std::string alloc = good.id + ".measured_peak_allocated_gib";
  const std::string res = good.id + ".measured_peak_reserved_gib";
  EXPECT_EQ(error_of("measured_peak_allocated_gib", -3).rfind(alloc + " | ", 0), 0u);
  EXPECT_NE(error_of("measured_peak_allocated_gib", -3).find("positive"), std::string::npos);
  // The B200 preset holds 180 GiB (presets/gpus/b200.json): 200 GiB cannot have been measured.
  EXPECT_NE(error_of("measured_peak_reserved_gib", 200).find(res + " = 200: above the"),
            std::string::npos);
  EXPECT_NE(error_of("measured_peak_reserved_gib", 1).find(res + " = 1: below the peak allocated"),
            std::string::npos);
  EXPECT_EQ(error_of("measured_peak_reserved_gib", *good.peak->reserved_gib), "");
}


// ---------------------------------------------------------------------------------------------
// The fit verdict on runs that ran (issue 35): every time case was measured, so each one the
// engine calls out of memory is a setting its recipe states and the case leaves out (offloading,
// bf16 moments, recompute by module), or memory the engine overcounts. The list (printed) names
// each with its fullest stage, what that stage needs (total + headroom) against the GPU, and its
// largest part; the count is guarded so that it only falls.

// The largest part of a stage's memory, by name (where an overflow most likely comes from).
std::string largest_part(const MemoryBreakdown& m) {
  const std::pair<const char*, double> parts[] = {
      {"weights", m.weights},         {"gradients", m.gradients},
      {"optimizer", m.optimizer},     {"activations", m.activations},
      {"moe_dispatch", m.moe_dispatch}, {"ep_overlap", m.ep_overlap},
      {"wgrad_dummies", m.wgrad_dummies}, {"userbuffers", m.userbuffers},
      {"deepep", m.deepep}};
  return std::max_element(std::begin(parts), std::end(parts),
                          [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

struct OutOfMemory {
  std::string id, source, part;
  int stage = 0;
  double need_gib = 0, capacity_gib = 0;
};

std::vector<OutOfMemory> runs_called_out_of_memory(const std::vector<PreparedCase>& all) {
  std::vector<OutOfMemory> out;
  for (const auto& c : all) {
    const Report r = estimate_case(c, builtin_catalog().calibration);
    if (r.fits) continue;
    OutOfMemory o{c.data.id, c.data.source};
    double worst = -1;  // the stage furthest over its GPU, by need / capacity
    for (const auto& st : r.stages) {
      const MemoryBreakdown& m = st.memory;
      const double ratio = (m.total + m.headroom) / m.capacity;
      if (ratio <= worst) continue;
      worst = ratio;
      o.stage = st.index;
      o.need_gib = (m.total + m.headroom) / kGiB;
      o.capacity_gib = m.capacity / kGiB;
      o.part = largest_part(m);
    }
    out.push_back(o);
  }
  return out;
}

// The recipes' memory settings (sources.json model_recipes): Megatron-Bridge's GB200 Llama 3
// 70B FP8 recipe offloads 40 of its 80 layers' activations over NVLink-C2C, its DeepSeek-V3
// recipes keep Adam's moments in bf16. Each becomes a plan key, said in an assumption.
TEST(Conversion, RecipesStateTheirMemorySettings) {
  const Conversion llama = convert_one("MBRIDGE26.04.01-DGX-GB200-LLAMA3_70B-64-FP8-L204", modern());
  ASSERT_EQ(llama.cases.size(), 1u) << (llama.skipped.empty() ? "" : llama.skipped[0].reason);
  Json scenario = llama.cases[0].scenario;
  EXPECT_EQ(scenario["plan"]["cpu_offloading_num_layers"], 40);
  EXPECT_EQ(scenario["cluster"]["host_link_GBps_per_dir"], 450);
  EXPECT_TRUE(std::any_of(llama.cases[0].assumptions.begin(), llama.cases[0].assumptions.end(),
                          [](const std::string& a) {
                            return a.find("activations of 40 layers offloaded") != std::string::npos;
                          }));
  // Without a pipeline each offloaded layer takes one micro-batch's activations off the GPU:
  // 40 layers of the 80 the stage keeps (the logits and the embedding output stay).
  auto stage = [&](int layers) {
    scenario["plan"]["cpu_offloading_num_layers"] = layers;
    auto s = scenario_from_json(scenario, builtin_catalog());
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s.ok() ? estimate(*s).stages[0] : StageReport{};
  };
  const StageReport kept = stage(0), offloaded = stage(40);
  const Plan plan = resolved_plan(llama.cases[0]);
  const ModelSpec model = scenario_from_json(scenario, builtin_catalog())->model;
  EXPECT_NEAR(offloaded.memory.offloaded, 40 * layer_activation_bytes(model, plan), 1);
  EXPECT_NEAR(kept.memory.activations - offloaded.memory.activations, offloaded.memory.offloaded, 1);
  // NVLink-C2C moves a layer (4.4 GiB) in about 10 ms, within one layer's compute: none exposed.
  EXPECT_EQ(offloaded.offload_s, 0);

  const Conversion deepseek =
      convert_one("MBRIDGE26.04.01-DGX-GB200-DeepSeek-V3-256-MXFP8-main-L226", modern());
  ASSERT_EQ(deepseek.cases.size(), 1u);
  EXPECT_EQ(deepseek.cases[0].scenario["plan"]["bf16_moments"], true);
  EXPECT_FALSE(deepseek.cases[0].scenario["plan"].contains("cpu_offloading_num_layers"));
  // Its recipe recomputes the MLP of the dense layers (recompute_modules ['mlp']), not the
  // engine's default core_attn.
  EXPECT_EQ(deepseek.cases[0].scenario["plan"]["recompute_modules"], "mlp");

  // The recipe's recompute modules, where the row leaves recompute to it: Megatron-Bridge 25.09's
  // DeepSeek-V3 on 1,024 H100 recomputes mla_up_proj and mlp, and fits (it needed 93 GiB of 80
  // with core_attn in their place).
  const Conversion h100 =
      convert_one("MBRIDGE25.09-DGX-H100-DeepSeek-V3-1024-FP8-main-L631", modern());
  ASSERT_EQ(h100.cases.size(), 1u);
  EXPECT_EQ(h100.cases[0].scenario["plan"]["recompute"], "selective");
  EXPECT_EQ(h100.cases[0].scenario["plan"]["recompute_modules"], "mla_up_proj mlp");
  auto s = scenario_from_json(h100.cases[0].scenario, builtin_catalog());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(estimate(*s).fits);
}

// A row whose table states a plan its release's recipe does not run (sources.json recipe_plan):
// Megatron-Bridge 26.02.01's table gives Llama 3 70B on 64 GB300 in NVFP4 TP 1, PP 1 and
// micro-batch 2, unsharded: one stage holds all 70.55 B parameters, whose bf16 weights and
// gradients (2 bytes each: 263 GiB) with the NVFP4 copies the GEMMs read (the engine's 337 GiB)
// exceed the 288 GiB GPU before any activation. The recipe of that commit, and the 26.02 and
// 26.04 tables for the same run, have PP 4, VP 5, micro-batch 1. The row takes the recipe's
// plan: DP = 64 / (TP 1 x PP 4) = 16, 256 / (16 x 1) = 16 micro-batches a replica, and says
// what the table had.
TEST(Conversion, RecipePlanWhereTheTableContradictsIt) {
  for (const char* id : {"MBRIDGE26.02.01-DGX-GB300-LLAMA3_70B-64-NVFP4-L399",
                         "MBRIDGE26.02.01-DGX-GB300-LLAMA3_70B-64-MXFP8-L401"}) {
    const Conversion conv = convert_one(id, modern());
    ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
    const Json& plan = plan_of(conv.cases[0]);
    EXPECT_EQ(plan["tp"], 1) << id;
    EXPECT_EQ(plan["pp"], 4) << id;
    EXPECT_EQ(plan["vpp"], 5) << id;
    EXPECT_EQ(plan["micro_batch"], 1) << id;
    EXPECT_EQ(plan["dp"], 16) << id;
    EXPECT_TRUE(std::any_of(conv.cases[0].assumptions.begin(), conv.cases[0].assumptions.end(),
                            [](const std::string& a) {
                              return a.find("the table's plan (TP 1, PP ") == 0 &&
                                     a.find("micro-batch 2) is not what its recipe runs") !=
                                         std::string::npos;
                            }))
        << id;
    auto s = scenario_from_json(conv.cases[0].scenario, builtin_catalog());
    ASSERT_TRUE(s.ok());
    EXPECT_TRUE(estimate(*s).fits) << id;
  }
  // The same release's GB200 row states the recipe's own plan (TP 2, PP 4, VP 5): untouched.
  const Conversion gb200 =
      convert_one("MBRIDGE26.02.01-DGX-GB200-LLAMA3_70B-64-NVFP4-L400", modern());
  ASSERT_EQ(gb200.cases.size(), 1u);
  EXPECT_EQ(plan_of(gb200.cases[0])["tp"], 2);
  EXPECT_FALSE(std::any_of(gb200.cases[0].assumptions.begin(), gb200.cases[0].assumptions.end(),
                           [](const std::string& a) { return a.find("table's plan") == 0; }));
}

// The error of the committed sources.json with one model recipe (for the unlisted sources) that
// sets `key` to `value`; path "(none)" where the table parses.
Error recipe_key_error(const char* key, const Json& value) {
  Json bad = Json::parse(read("engine/accuracy/sources.json"), nullptr, false);
  if (!bad.is_object()) return Error{ErrorCode::parse_error, "sources.json", "not an object"};
  bad["unlisted"]["model_recipes"] = Json::array({Json::parse(
      R"({"model_contains": "M", "recompute": null, "moe_dispatcher": null, "etp": null,
          "pipeline_layouts": {}, "why": "x"})")});
  bad["unlisted"]["model_recipes"][0][key] = value;
  auto t = parse_source_table(bad.dump());
  return t.ok() ? Error{ErrorCode::parse_error, "(none)", "parsed"} : t.error();
}

// A recipe_plan must state all four degrees, each at least 1, and nothing else: an error
// naming the field, the value and the rule.
TEST(Tables, BadRecipePlansAreErrorsNamingTheField) {
  auto error_of = [](const Json& plan) { return recipe_key_error("recipe_plan", plan); };
  Error e = error_of(Json::parse(R"({"tp": 1, "pp": 4, "vpp": 5, "micro_batch": 0})"));
  EXPECT_EQ(e.code, ErrorCode::out_of_range);
  EXPECT_EQ(e.path, "unlisted.model_recipes[0].recipe_plan.micro_batch");
  EXPECT_NE(e.message.find("unlisted.model_recipes[0].recipe_plan.micro_batch=0 must be"),
            std::string::npos)
      << e.message;
  e = error_of(Json::parse(R"({"tp": 1, "pp": 4, "micro_batch": 1})"));
  EXPECT_EQ(e.code, ErrorCode::missing_key);
  EXPECT_EQ(e.path, "unlisted.model_recipes[0].recipe_plan.vpp");
  e = error_of(Json::parse(R"({"tp": 1, "pp": 4, "vpp": 5, "micro_batch": 1, "dp": 16})"));
  EXPECT_EQ(e.code, ErrorCode::unknown_key);
  e = error_of(Json(4));
  EXPECT_EQ(e.code, ErrorCode::type_error);
  EXPECT_EQ(e.path, "unlisted.model_recipes[0].recipe_plan");
  EXPECT_TRUE(error_of(Json(nullptr)).path == "(none)");  // null: the row's own plan
  EXPECT_TRUE(
      error_of(Json::parse(R"({"tp": 1, "pp": 4, "vpp": 5, "micro_batch": 1})")).path == "(none)");
}

// Megatron-Bridge 25.09's performance script (run_script.py at af6bc366d, the commit that
// published its table) calls apply_moe_token_drop for every Qwen3 run and for DeepSeek-V3 on
// B200 and GB200: expert capacity factor 1.0 with the experts padded to it, which asserts the
// alltoall dispatcher (sources.json moe_capacity_factor). The rows state it, and its estimate has
// no token-count sync: the same scenario without the factor (dropless) is slower by the host time
// the sync exposes. Later releases' rows (26.02 on the same plan) stay dropless.
TEST(Conversion, TheTokenDropIsTheReleasesRecipe) {
  for (const char* id : {"MBRIDGE25.09-DGX-B200-Qwen3-30B-A3B-8-FP8-main-L621",
                         "MBRIDGE25.09-DGX-H100-Qwen3-235B-A22B-256-FP8-main-L633",
                         "MBRIDGE25.09-DGX-B200-DeepSeek-V3-256-FP8-main-L620"}) {
    const Conversion conv = convert_one(id, modern());
    ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
    const Json& scenario = conv.cases[0].scenario;
    EXPECT_EQ(scenario["model"]["moe"]["capacity_factor"], 1) << id;
    EXPECT_EQ(plan_of(conv.cases[0])["moe_dispatcher"], "alltoall") << id;
    EXPECT_TRUE(std::any_of(conv.cases[0].assumptions.begin(), conv.cases[0].assumptions.end(),
                            [](const std::string& a) {
                              return a.find("expert capacity factor not stated: 1, experts "
                                            "padded to it") == 0;
                            }))
        << id;
    auto padded = scenario_from_json(scenario, builtin_catalog());
    Json dropless_doc = scenario;
    dropless_doc["model"]["moe"].erase("capacity_factor");
    auto dropless = scenario_from_json(dropless_doc, builtin_catalog());
    ASSERT_TRUE(padded.ok() && dropless.ok()) << id;
    const Report with = estimate(*padded), without = estimate(*dropless);
    EXPECT_LT(with.iteration_time_s, without.iteration_time_s) << id;
  }
  // The same model and plan in 26.02 ran dropless (its recipe sets no capacity factor).
  const Conversion later = convert_one("MBRIDGE26.02-DGX-B200-Qwen3-30B-A3B-8-MXFP8-main-L529",
                                       modern());
  ASSERT_EQ(later.cases.size(), 1u);
  EXPECT_FALSE(later.cases[0].scenario["model"]["moe"].contains("capacity_factor"));
}

// A recipe's moe_capacity_factor is a number above 0 (0 would be the scenario's "dropless",
// which a recipe says by leaving the key out): an error naming the field otherwise.
TEST(Tables, BadCapacityFactorsAreErrorsNamingTheField) {
  auto error_of = [](const Json& f) { return recipe_key_error("moe_capacity_factor", f); };
  for (const Json& factor : {Json(0), Json(-1), Json("1")}) {
    const Error e = error_of(factor);
    EXPECT_EQ(e.path, "unlisted.model_recipes[0].moe_capacity_factor") << factor.dump();
    EXPECT_NE(e.message.find("moe_capacity_factor"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(error_of(Json(1.25)).path == "(none)");
  EXPECT_TRUE(error_of(Json(nullptr)).path == "(none)");  // null: dropless
}

// NeMo 24.07's optimizer state as Apex's DistributedFusedAdam kept it (sources.json NEMO2407):
// the fp32 master as 16-bit remainders beside the bf16 weights (2 bytes, not 4) with fp32
// moments, 10 bytes a parameter where Megatron keeps 12; Nemotron-4 340B's optim.dtype bf16
// keeps no master and bf16 moments, 4 bytes. The optimizer part falls to 10/12 and 4/12 of the
// fp32 master's, nothing else moves, and both runs fit: the 8B at 79.95 GiB of 80 with the
// headroom, its Transformer Engine 1.x keeping no dummy weight gradients (sources.json NEMO2407:
// plan.dummy_wgrads false; the megatron-core profile's TE >= 2.3 caches them, 1.4 GiB more).
TEST(Conversion, NemoDistributedAdamKeepsRemaindersOrNoMaster) {
  for (const auto& [id, master, moments, bytes] :
       {std::tuple{"NEMO2407-LLAMA3-8B-8", "remainders", false, 10.0},
        std::tuple{"NEMO2407-Nemotron-340B-128", "none", true, 4.0}}) {
    const Conversion conv = convert_one(id);
    ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
    Json scenario = conv.cases[0].scenario;
    EXPECT_EQ(scenario["plan"]["master_weights"], master) << id;
    EXPECT_EQ(scenario["plan"].value("bf16_moments", false), moments) << id;
    auto s = scenario_from_json(scenario, builtin_catalog());
    ASSERT_TRUE(s.ok()) << s.error().message;
    const Report stated = estimate(*s);
    EXPECT_TRUE(stated.fits) << id;
    EXPECT_EQ(stated.stages[0].memory.wgrad_dummies, 0) << id;
    scenario["plan"]["master_weights"] = "fp32";
    scenario["plan"]["bf16_moments"] = false;
    const Report fp32 = estimate(*scenario_from_json(scenario, builtin_catalog()));
    EXPECT_NEAR(stated.stages[0].memory.optimizer / fp32.stages[0].memory.optimizer, bytes / 12,
                1e-12)
        << id;
    EXPECT_DOUBLE_EQ(stated.stages[0].memory.weights, fp32.stages[0].memory.weights) << id;
  }
}

// Megatron-Bridge's Llama 3.1 405B on 256 GB200 in FP8 ran with the allocator's expandable
// segments (its perf_plugins.py, sources.json), which give the cache back before the GPU runs
// out: 182.1 GiB with the cache, 173.6 without, of 186 less the 3 % headroom (180.4). Its 26.02.01
// NVFP4 run is its recipe's VP 8 (the table says 4), and NeMo AutoModel's Qwen3-30B recomputes
// every layer and steps bf16 parameters with bf16 moments (its benchmark config at 8d9bfb90e).
TEST(Conversion, RunsAsTheirRecipesRanFit) {
  for (const char* id : {"MBRIDGE26.04-DGX-GB200-LLAMA3.1_405B-256-FP8-L319",
                         "MBRIDGE26.02.01-DGX-GB200-LLAMA3.1_405B-256-NVFP4-L412",
                         "AUTOMODEL-H100-Qwen3_MoE_30B-8"}) {
    const Conversion conv = convert_one(id, modern());
    ASSERT_EQ(conv.cases.size(), 1u) << (conv.skipped.empty() ? "" : conv.skipped[0].reason);
    const Json& plan = conv.cases[0].scenario["plan"];
    auto s = scenario_from_json(conv.cases[0].scenario, builtin_catalog());
    ASSERT_TRUE(s.ok()) << s.error().message;
    EXPECT_TRUE(estimate(*s).fits) << id;
    if (plan.value("expandable_segments", false)) {
      Json without = conv.cases[0].scenario;
      without["plan"]["expandable_segments"] = false;
      EXPECT_FALSE(estimate(*scenario_from_json(without, builtin_catalog())).fits) << id;
    }
  }
  EXPECT_EQ(convert_one("MBRIDGE26.04-DGX-GB200-LLAMA3.1_405B-256-FP8-L319", modern())
                .cases[0]
                .scenario["plan"]["expandable_segments"],
            true);
  EXPECT_EQ(convert_one("MBRIDGE26.02.01-DGX-GB200-LLAMA3.1_405B-256-NVFP4-L412", modern())
                .cases[0]
                .scenario["plan"]["vpp"],
            8);
  const Json automodel = convert_one("AUTOMODEL-H100-Qwen3_MoE_30B-8", modern()).cases[0].scenario["plan"];
  EXPECT_EQ(automodel["recompute"], "full");
  EXPECT_EQ(automodel["master_weights"], "none");
  EXPECT_EQ(automodel["bf16_moments"], true);
}

// The runs called out of memory today, by source (tests/validation/README.md, "The fit verdict"):
// none, once each recipe's allocator, recompute, optimizer state and Transformer Engine are
// stated (97 of 231 at first).
constexpr int kRunsCalledOutOfMemory = 0;

TEST(FitVerdict, RunsThatRanCalledOutOfMemory) {
  ASSERT_EQ(static_cast<int>(cases().size()), kCases);
  const std::vector<OutOfMemory> oom = runs_called_out_of_memory(cases());
  std::map<std::string, int> by_source, by_part;
  for (const auto& o : oom) {
    fmt::print("{:<58} {:<16} stage {:>2} needs {:6.1f} of {:5.1f} GiB ({:4.2f}x), largest {}\n",
               o.id, o.source, o.stage, o.need_gib, o.capacity_gib, o.need_gib / o.capacity_gib,
               o.part);
    ++by_source[o.source];
    ++by_part[o.part];
  }
  for (const auto& [source, n] : by_source) fmt::print("{:<16} {:>3}\n", source, n);
  for (const auto& [part, n] : by_part) fmt::print("largest {:<12} {:>3}\n", part, n);
  fmt::print("{} of {} runs that ran are called out of memory\n", oom.size(), cases().size());
  EXPECT_LE(static_cast<int>(oom.size()), kRunsCalledOutOfMemory);
  // Each one overflows by its own need: capacity is the GPU's, the need above it.
  for (const auto& o : oom) EXPECT_GT(o.need_gib, o.capacity_gib) << o.id;
}

}  // namespace
}  // namespace stepcast::accuracy
