// A scenario's calibration: links from nccl-tests, measured runs fitting the compute and network
// scales, the report's account of them, bad input with its path, and share links carrying it.
#include <gtest/gtest.h>

#include "stepcast/calibrate.h"
#include "stepcast/share_link.h"
#include "stepcast/stepcast.h"
#include "test_util.h"

namespace stepcast {
namespace {

// Llama-2-7B on two DGX H100: two plans that spend different shares of their time
// communicating (tp 8 inside a node vs dp 16 across both).
Json base() {
  return Json::parse(R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 2},
    "plan": {"tp": 8, "pp": 1, "micro_batch": 1, "global_batch": 64, "precision": "bf16"}})");
}
const Json kOtherPlan = Json::parse(
    R"({"tp": 1, "pp": 1, "micro_batch": 1, "global_batch": 64, "precision": "bf16",
        "distributed_optimizer": true})");

double time_of(const Json& doc) { return estimate(test::scenario(doc.dump())).iteration_time_s; }

Json with_scales(Json doc, double compute, double network) {
  doc["calibration"] = {{"compute_scale", compute}, {"network_scale", network}};
  return doc;
}

TEST(MeasuredRuns, ScalesSlowComputeAndNetwork) {
  const double preset = time_of(base());
  const double slower_compute = time_of(with_scales(base(), 0.5, 1));
  const double slower_network = time_of(with_scales(base(), 1, 0.5));
  // Compute is about half of this tp-8 iteration (TP communication most of the rest).
  EXPECT_GT(slower_compute, 1.4 * preset);
  EXPECT_GT(slower_network, preset);
  EXPECT_LT(slower_network, slower_compute);
  EXPECT_DOUBLE_EQ(time_of(with_scales(base(), 1, 1)), preset);
}

// Two runs measured far faster than predicted push both scales to their bounds: the fit stays
// within them (the fuzzer found 10.000000000000002: exp(log(10)) after a clamp in log space).
TEST(MeasuredRuns, ScalesAtTheirBoundsStayWithinThem) {
  Json doc = Json::parse(R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 2},
      "plan": {"tp": 8, "global_batch": 64}})");
  doc["calibration"] = Json::parse(R"({"runs": [
      {"plan": {"pp": 8, "global_batch": 28}, "measured_iteration_s": 0.5},
      {"plan": {"tp": 4, "global_batch": 64, "distributed_optimizer": true},
       "measured_iteration_s": 2.4}]})");
  const Scenario s = test::scenario(doc.dump());
  ASSERT_TRUE(s.fit);
  EXPECT_LE(s.fit->compute_scale, 10.0);
  EXPECT_GT(s.fit->compute_scale, 9.99);  // at the bound
  EXPECT_LE(s.fit->network_scale, 4.0);
}

TEST(MeasuredRuns, OneRunAtThePresetTimeFitsScaleOne) {
  Json doc = base();
  doc["calibration"] = {{"runs", {{{"plan", doc["plan"]}, {"measured_iteration_s", time_of(base())}}}}};
  const Scenario s = test::scenario(doc.dump());
  ASSERT_TRUE(s.fit.has_value());
  EXPECT_NEAR(s.fit->compute_scale, 1, 1e-6);
  EXPECT_FALSE(s.fit->network_fitted);
  ASSERT_EQ(s.fit->warnings.size(), 1u);  // one run cannot separate compute from network
  EXPECT_NE(s.fit->warnings[0].find("one measured run"), std::string::npos);
}

// Issue 37 item 6: a measured step more than 3 times off the prediction either way (1e-300 s, a
// whole run's hours) is refused naming the run, its value, the prediction and the bound, where
// the fit clamped the compute scale at x10 and calibrated every estimate by it.
TEST(MeasuredRuns, AMeasuredTimeFarFromThePredictionIsRefused) {
  const double predicted = time_of(base());
  for (const double measured : {1e-300, predicted / 3.5, predicted * 3.5, 3600.0}) {
    Json doc = base();
    doc["calibration"] = {{"runs", {{{"plan", doc["plan"]}, {"measured_iteration_s", measured}}}}};
    const Error e = test::error_of(doc.dump());
    EXPECT_EQ(e.code, ErrorCode::out_of_range) << measured;
    EXPECT_EQ(e.path, "calibration.runs[0].measured_iteration_s");
    EXPECT_NE(e.message.find(fmt::format("calibration.runs[0].measured_iteration_s={:.4g} s is",
                                         measured)),
              std::string::npos)
        << e.message;
    EXPECT_NE(e.message.find(fmt::format("times the {:.4g} s Stepcast predicts for its plan; a "
                                         "measured step more than 3 times off",
                                         predicted)),
              std::string::npos)
        << e.message;
  }
  // Within a factor of 3 either way, the fit stands.
  for (const double measured : {predicted / 2.9, predicted * 2.9}) {
    Json doc = base();
    doc["calibration"] = {{"runs", {{{"plan", doc["plan"]}, {"measured_iteration_s", measured}}}}};
    EXPECT_TRUE(test::scenario(doc.dump()).fit.has_value()) << measured;
  }
  // The page refuses such a run before it enters the scenario by the bound the schema document
  // gives it (web/src/form/calibration.js), the one enforced above.
  EXPECT_EQ(schema_document()["calibration"]["max_measured_over_predicted"], 3.0);
}

// A run whose plan the engine predicts out of memory still calibrates (it ran: the plan left
// something out), with a warning naming it and its fullest stage: Llama-2-7B with tp 1 and no
// distributed optimizer holds 7B x (2 + 2 + 12) bytes, about 104 GiB, of weights, gradients and Adam
// state per GPU, more than an H100's 80 GiB.
TEST(MeasuredRuns, ARunPredictedOutOfMemoryIsFittedWithAWarning) {
  Json doc = base();
  Json oom = kOtherPlan;
  oom["distributed_optimizer"] = false;
  doc["calibration"] = {{"runs", {{{"plan", doc["plan"]}, {"measured_iteration_s", 2.0}},
                                  {{"plan", oom}, {"measured_iteration_s", 3.0}}}}};
  const Scenario s = test::scenario(doc.dump());  // (predicted 1.3 s: within a factor of 3)
  ASSERT_TRUE(s.fit.has_value());
  int named = 0;
  for (const auto& w : s.fit->warnings) {
    if (w.find("calibration.runs[1]: Stepcast predicts this plan does not fit in memory") == 0) {
      ++named;
      EXPECT_NE(w.find("of 80.0 GiB"), std::string::npos) << w;
    }
    EXPECT_EQ(w.find("calibration.runs[0]"), std::string::npos) << w;  // that one fits
  }
  EXPECT_EQ(named, 1);
  EXPECT_EQ(s.fit->runs.size(), 2u);
}

TEST(MeasuredRuns, OneRunRecoversTheComputeScaleThatMadeIt) {
  const double measured = time_of(with_scales(base(), 0.8, 1));
  Json doc = base();
  doc["calibration"] = {{"runs", {{{"plan", doc["plan"]}, {"measured_iteration_s", measured}}}}};
  const Report r = estimate(test::scenario(doc.dump()));
  ASSERT_TRUE(r.calibration.has_value());
  EXPECT_NEAR(r.calibration->compute_scale, 0.8, 1e-4);
  EXPECT_NEAR(r.iteration_time_s, measured, measured * 1e-6);
  auto json = report_json(r);
  ASSERT_TRUE(json.ok());
  const Json& c = (*json)["calibration"];
  EXPECT_NEAR(c["compute_change_pct"].get<double>(), -20, 0.05);
  EXPECT_EQ(c["compute_scale_fitted"], true);
  EXPECT_EQ(c["network_scale_fitted"], false);
  ASSERT_EQ(c["runs"].size(), 1u);
  EXPECT_NEAR(c["runs"][0]["calibrated_error_pct"].get<double>(), 0, 0.05);
  EXPECT_GT(c["runs"][0]["measured_iteration_s"].get<double>(),
            c["runs"][0]["preset_iteration_s"].get<double>());
  bool warned = false;
  for (const auto& w : r.warnings) warned = warned || w.find("calibration:") == 0;
  EXPECT_TRUE(warned);
}

TEST(MeasuredRuns, TwoRunsDifferingInCommunicationFitBothScales) {
  Json other = base();
  other["plan"] = kOtherPlan;
  const double m1 = time_of(with_scales(base(), 0.85, 0.6));
  const double m2 = time_of(with_scales(other, 0.85, 0.6));
  Json doc = base();
  doc["calibration"] = {{"runs", {{{"plan", base()["plan"]}, {"measured_iteration_s", m1}},
                                  {{"plan", kOtherPlan}, {"measured_iteration_s", m2}}}}};
  const Scenario s = test::scenario(doc.dump());
  ASSERT_TRUE(s.fit.has_value());
  EXPECT_TRUE(s.fit->network_fitted);
  // The ridge on the network scale (calibration/calibrate.cpp) pulls it from 0.6 towards 1 a little,
  // and the compute scale makes up part of the difference.
  EXPECT_NEAR(s.fit->compute_scale, 0.85, 0.85 * 0.05);
  EXPECT_GT(s.fit->network_scale, 0.6);
  EXPECT_LT(s.fit->network_scale, 0.75);
  for (const auto& r : s.fit->runs) EXPECT_NEAR(r.calibrated_s / r.measured_s, 1, 0.03);
  EXPECT_TRUE(s.fit->warnings.empty());
  // The fitted cluster predicts a third plan as the scales that made the runs do.
  Json third = base();
  third["plan"]["tp"] = 4;
  Json third_cal = third;
  third_cal["calibration"] = doc["calibration"];
  EXPECT_NEAR(time_of(third_cal), time_of(with_scales(third, 0.85, 0.6)),
              0.03 * time_of(third_cal));
}

TEST(MeasuredRuns, LinksFromNcclTestsReplaceAPresetNodesLinks) {
  Json doc = base();
  doc["calibration"] = Json::parse(R"({"intra_node_link": {"name": "measured NVLink",
      "scope": "intra_node", "bandwidth_GBps_per_dir": 200, "busbw_GBps": 180,
      "half_peak_bytes": 1e6, "latency_us": 20, "source": "nccl-tests on box 7"}})");
  const Scenario s = test::scenario(doc.dump());
  EXPECT_EQ(s.cluster.groups[0].intra_node_link.name, "measured NVLink");
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].intra_node_link.busbw_Bps, 180e9);
  EXPECT_DOUBLE_EQ(s.cluster.groups[0].intra_node_link.allreduce_busbw_Bps, 180e9);
  EXPECT_GT(time_of(doc), time_of(base()));  // 180 GB/s is slower than NVLink 4's 370
}

TEST(MeasuredRuns, BadInputNamesItsPath) {
  struct Case {
    const char* calibration;
    const char* path;
    ErrorCode code;
  };
  const Case cases[] = {
      {R"({"runs": [{"plan": {"tp": 8, "global_batch": 64}, "measured_iteration_s": -1}]})",
       "calibration.runs[0].measured_iteration_s", ErrorCode::out_of_range},
      {R"({"runs": [{"plan": {"tp": 8, "global_batch": 64}}]})",
       "calibration.runs[0].measured_iteration_s", ErrorCode::missing_key},
      {R"({"runs": [{"plan": {"tp": 32, "global_batch": 64}, "measured_iteration_s": 1}]})",
       "calibration.runs[0].plan", ErrorCode::invalid_plan},
      {R"({"runs": [{"plan": {"tp": 8, "global_batch": 64}, "measured_iteration_s": 1,
           "speed": 3}]})", "calibration.runs[0].speed", ErrorCode::unknown_key},
      {R"({"runs": [{"measured_iteration_s": 1}]})", "calibration.runs[0]",
       ErrorCode::missing_key},
      {R"({"runs": [{"scenario": {"cluster": {"node": "dgx-a100", "nodes": 2},
           "plan": {"tp": 8, "global_batch": 64}}, "measured_iteration_s": 1}]})",
       "calibration.runs[0].scenario", ErrorCode::invalid_cluster},
      {R"({"runs": [], "compute_scale": 1})", "calibration.runs", ErrorCode::duplicate_key},
      {R"({"runs": []})", "calibration.runs", ErrorCode::type_error},
      {R"({"compute_scale": 0})", "calibration.compute_scale", ErrorCode::out_of_range},
      {R"({"intra_node_link": "ib-ndr"})", "calibration.intra_node_link",
       ErrorCode::invalid_cluster},
      {R"({"runs": [{"link": "#v=2&model=nope", "measured_iteration_s": 1}]})",
       "calibration.runs[0].link", ErrorCode::unknown_preset},
      {R"({"colibration": 1})", "calibration.colibration", ErrorCode::unknown_key},
      {R"({"layer_profiles": {}})", "calibration.layer_profiles", ErrorCode::type_error},
      {R"({"layer_profiles": [{"gpu": "a100-sxm4-80gb", "micro_batch": 1, "forward_s": 0.01,
           "backward_s": 0.02}]})", "calibration.layer_profiles[0].gpu",
       ErrorCode::invalid_cluster},
      {R"({"layer_profiles": [{"gpu": "h100-sxm5-80gb", "micro_batch": 1, "forward_s": -1,
           "backward_s": 0.02}]})", "calibration.layer_profiles[0].forward_s",
       ErrorCode::out_of_range},
      {R"({"layer_profiles": [{"gpu": "h100-sxm5-80gb", "micro_batch": 1,
           "forward_s": 0.01}]})", "calibration.layer_profiles[0].backward_s",
       ErrorCode::missing_key},
      {R"({"layer_profiles": [{"gpu": "h100-sxm5-80gb", "micro_batch": 1, "forward_s": 0.01,
           "backward_s": 0.02, "layers": "odd"}]})", "calibration.layer_profiles[0].layers",
       ErrorCode::out_of_range},
      {R"({"layer_profiles": [{"gpu": "h100-sxm5-80gb", "micro_batch": 1, "forward_s": 0.01,
           "backward_s": 0.02, "speed": 1}]})", "calibration.layer_profiles[0].speed",
       ErrorCode::unknown_key},
      // The same GPU, shape and layers twice (seq_len given once, defaulted once: the same).
      {R"({"layer_profiles": [{"gpu": "h100-sxm5-80gb", "micro_batch": 1, "forward_s": 0.01,
           "backward_s": 0.02}, {"gpu": "h100-sxm5-80gb", "micro_batch": 2, "forward_s": 0.02,
           "backward_s": 0.04}, {"gpu": "h100-sxm5-80gb", "micro_batch": 1, "seq_len": 4096,
           "forward_s": 0.011, "backward_s": 0.021}]})", "calibration.layer_profiles[2]",
       ErrorCode::duplicate_key},
  };
  for (const auto& c : cases) {
    Json doc = base();
    doc["calibration"] = Json::parse(c.calibration);
    const Error e = test::error_of(doc.dump());
    EXPECT_EQ(e.path.rfind(c.path, 0), 0u) << c.calibration << " -> " << e.path << ": " << e.message;
    EXPECT_EQ(e.code, c.code) << c.calibration << " -> " << e.message;
    EXPECT_EQ(e.message.find('\n'), std::string::npos);
  }
}

// A layer profile (HATP's input) replaces the roofline's layer compute where the stage's GPU and
// the plan's shape match: Llama-2-7B in 4 stages of 8 layers on H100s, one layer measured at
// 10 ms forward and 20 ms backward per micro-batch, so a middle stage takes 8 x 10 = 80 ms and
// 8 x 20 = 160 ms; the first stage adds its embedding as before; under full recompute the
// layers' recompute is their forward again.
Json profiled(int micro_batch) {
  Json doc = Json::parse(R"({"model": "llama2-7b", "cluster": {"node": "dgx-h100", "nodes": 2},
    "plan": {"tp": 1, "pp": 4, "micro_batch": 1, "global_batch": 64, "precision": "bf16",
             "distributed_optimizer": true}})");
  doc["calibration"] = {{"layer_profiles", {{{"gpu", "h100-sxm5-80gb"},
                                             {"micro_batch", micro_batch},
                                             {"forward_s", 0.010},
                                             {"backward_s", 0.020}}}}};
  return doc;
}

TEST(MeasuredRuns, ALayerProfileReplacesTheRooflinesLayerTime) {
  Json plain = profiled(1);
  plain.erase("calibration");
  const Report before = estimate(test::scenario(plain.dump()));
  const Report after = estimate(test::scenario(profiled(1).dump()));
  ASSERT_EQ(after.stages.size(), 4u);
  EXPECT_NEAR(after.stages[1].forward_s, 0.080, 1e-12);
  EXPECT_NEAR(after.stages[1].backward_s, 0.160, 1e-12);
  EXPECT_NEAR(after.stages[2].forward_s, 0.080, 1e-12);
  // The embedding's time on stage 0 is the roofline's, as before.
  EXPECT_NEAR(after.stages[0].forward_s - 0.080,
              before.stages[0].forward_s - before.stages[1].forward_s, 1e-9);
  EXPECT_GT(after.iteration_time_s, 2 * before.iteration_time_s);  // 10 ms against ~3 ms
  ASSERT_TRUE(after.calibration.has_value());
  EXPECT_EQ(after.calibration->layer_profiles, 1);
  EXPECT_EQ(after.calibration->layer_profiles_used, 1);
  EXPECT_EQ(calibration_json(*after.calibration)["layer_profiles_used"], 1);

  Json full = profiled(1);
  full["plan"]["recompute"] = "full";
  const Report recomputed = estimate(test::scenario(full.dump()));
  EXPECT_NEAR(recomputed.stages[1].recompute_s, 0.080, 1e-9);  // per micro-batch, as forward_s

  // Profiled at another micro-batch: kept, with a warning; this plan keeps the roofline.
  const Scenario other = test::scenario(profiled(2).dump());
  ASSERT_TRUE(other.fit.has_value());
  ASSERT_EQ(other.fit->warnings.size(), 1u);
  EXPECT_EQ(other.fit->warnings[0].find("calibration.layer_profiles[0]: profiled at micro-batch "
                                        "2, sequence 4096, TP 1, CP 1; this plan runs "
                                        "micro-batch 1"),
            0u)
      << other.fit->warnings[0];
  EXPECT_DOUBLE_EQ(estimate(other).iteration_time_s, before.iteration_time_s);
  EXPECT_EQ(other.fit->layer_profiles_used, 0);

  // The link carries the profiles (measured inputs, not fitted from runs).
  auto link = scenario_to_link({profiled(1)}, "http://localhost:8080/");
  ASSERT_TRUE(link.ok()) << link.error().message;
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_NEAR(time_of(back->scenario), after.iteration_time_s, 1e-9 * after.iteration_time_s);
}

TEST(MeasuredRuns, ShareLinksCarryTheFittedScalesNotTheRuns) {
  Json doc = base();
  doc["calibration"] = Json::parse(R"({"compute_scale": 0.9, "network_scale": 1.25,
      "inter_node_link": {"scope": "inter_node", "bandwidth_GBps_per_dir": 50,
                          "busbw_GBps": 44.5, "latency_us": 9, "half_peak_bytes": 2e7}})");
  auto link = scenario_to_link({doc}, "http://localhost:8080/");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_NE(link->find("&cal="), std::string::npos);
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scenario["calibration"], doc["calibration"]);
  EXPECT_EQ(time_of(back->scenario), time_of(doc));

  // Runs become the scales they fit.
  Json runs = base();
  runs["calibration"] = {
      {"runs", {{{"plan", runs["plan"]}, {"measured_iteration_s", 1.5 * time_of(base())}}}},
      {"gemm", {{"gemm_overhead_us", 12}}}};
  const Scenario s = test::scenario(runs.dump());
  const Json compact = compact_calibration(runs["calibration"], *s.fit);
  EXPECT_FALSE(compact.contains("runs"));
  EXPECT_EQ(compact["gemm"], runs["calibration"]["gemm"]);
  Json linked = base();
  linked["calibration"] = compact;
  EXPECT_NEAR(time_of(linked), 1.5 * time_of(base()), 1e-5 * time_of(base()));
}

}  // namespace
}  // namespace stepcast

namespace stepcast {
namespace {

// calibration.memory: a peak measured on the plan's fullest GPU. The allocator's share becomes
// the measured reserved / allocated - 1, and what was allocated beyond the engine's count joins
// the allowance outside the allocator (times that share): this plan then holds the measured
// reserved bytes plus what lies outside the allocator, as before.
TEST(MeasuredMemory, APeakFitsTheAllocatorAndTheAllowance) {
  const Json doc = base();
  const Report preset = estimate(test::scenario(doc.dump()));
  const StageReport& st = preset.stages.front();
  const double allocated = st.memory.allocated + 2 * kGiB;  // 2 GiB the engine does not count
  const double reserved = 1.1 * allocated;
  Json measured = doc;
  measured["calibration"]["memory"] = {{"peak_allocated_gib", allocated / kGiB},
                                       {"peak_reserved_gib", reserved / kGiB}};
  const Report fitted = estimate(test::scenario(measured.dump()));
  ASSERT_TRUE(fitted.calibration && fitted.calibration->memory);
  const auto& m = *fitted.calibration->memory;
  EXPECT_NEAR(m.allocator_fraction, 0.1, 1e-12);
  EXPECT_NEAR(m.allowance_change, 2.2 * kGiB, 1e-3);
  EXPECT_EQ(m.predicted_allocated, st.memory.allocated);
  const MemoryBreakdown& after = fitted.stages.front().memory;
  EXPECT_EQ(after.allocated, st.memory.allocated);  // the count itself is the engine's
  EXPECT_NEAR(after.reserved + (after.other - st.memory.other), reserved, 1e-3);
  EXPECT_NEAR(after.total - st.memory.total, reserved - st.memory.reserved, 1e-3);
  // Times do not move.
  EXPECT_EQ(fitted.iteration_time_s, preset.iteration_time_s);
  // The report says it; a share link carries the measured pair.
  const Json report = Json::parse(*report_text(fitted));
  EXPECT_NEAR(report["calibration"]["memory"]["allocator_fraction"].get<double>(), 0.1, 1e-12);
  const Scenario s = test::scenario(measured.dump());
  const Json compact = compact_calibration(measured["calibration"], *s.fit);
  EXPECT_EQ(compact["memory"], measured["calibration"]["memory"]);
}

TEST(MeasuredMemory, ImpossiblePeaksAreRefused) {
  const Report preset = estimate(test::scenario(base().dump()));
  const double a = preset.stages.front().memory.allocated / kGiB;
  auto error_with = [](const Json& memory) {
    Json doc = base();
    doc["calibration"]["memory"] = memory;
    return test::error_of(doc.dump());
  };
  Error e = error_with({{"peak_allocated_gib", 500.0}});
  EXPECT_EQ(e.path, "calibration.memory.peak_allocated_gib");
  EXPECT_NE(e.message.find("more than the GPU holds"), std::string::npos) << e.message;
  e = error_with({{"peak_allocated_gib", a}, {"peak_reserved_gib", a - 1}});
  EXPECT_EQ(e.path, "calibration.memory.peak_reserved_gib");
  e = error_with({{"peak_allocated_gib", a / 4}});
  EXPECT_EQ(e.path, "calibration.memory.peak_allocated_gib");
  EXPECT_NE(e.message.find("not of this plan"), std::string::npos) << e.message;
  e = error_with({{"peak_allocated_gib", -1.0}});
  EXPECT_EQ(e.path, "calibration.memory.peak_allocated_gib");
  e = error_with({{"peak_allocated", a}});
  EXPECT_EQ(e.code, ErrorCode::unknown_key);
}

}  // namespace
}  // namespace stepcast
