// Every preset loads, refers to presets that exist, carries its source, and describes what its
// name says.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "stepcast/arch_calibration_keys.h"
#include "stepcast/schema.h"
#include "test_util.h"

namespace stepcast {
namespace {

TEST(Presets, BuiltinCatalogLoads) {
  auto loaded = load_catalog(builtin_preset_files());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_GE(loaded->gpus.size(), 27u);
  EXPECT_GE(loaded->links.size(), 17u);
  EXPECT_GE(loaded->nodes.size(), 16u);
  EXPECT_GE(loaded->models.size(), 29u);
}

TEST(Presets, IssueListsArePresent) {
  const Catalog& c = builtin_catalog();
  for (const char* id :
       {"v100-sxm2-32gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "a800-sxm4-80gb",
        "h100-sxm5-80gb", "h100-pcie-80gb", "h800-sxm5-80gb", "h20-96gb", "h200-sxm-141gb",
        "gh200-96gb", "b200", "gb200", "l40s", "l20", "l4", "a10", "rtx-a6000", "rtx-4090",
        "rtx-3090", "t4", "mi250x", "mi300x", "mi325x", "gaudi2", "gaudi3", "ascend-910b",
        // Issue 36: CDNA 4, and the GPUs published heterogeneous clusters mix.
        "mi350x", "mi355x", "rtx-2080-ti", "titan-rtx", "a40", "v100-pcie-32gb", "a10g"})
    EXPECT_NE(c.find_gpu(id), nullptr) << id;
  for (const char* id : {"nvlink2", "nvlink3", "nvlink4", "nvlink5", "pcie3", "pcie4", "pcie5",
                         "ib-edr", "ib-hdr", "ib-ndr", "ib-xdr", "roce-100g", "roce-200g",
                         "roce-400g", "eth-25g", "eth-10g", "xgmi", "xgmi-cdna4"})
    EXPECT_NE(c.find_link(id), nullptr) << id;
  for (const char* id : {"dgx-1-v100", "dgx-2-v100", "dgx-a100", "dgx-a100-40gb", "hgx-a800",
                         "dgx-h100", "hgx-h800", "hgx-h20", "hgx-h200", "gh200-x4", "dgx-b200",
                         "gb200-nvl72", "mi300x-x8", "mi250x-x4", "pcie-rtx4090-x8",
                         "pcie-l40s-x8", "mi350x-x8", "mi355x-x8", "g5-48xlarge"})
    EXPECT_NE(c.find_node(id), nullptr) << id;
  for (const char* id :
       {"gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b", "gpt3-175b", "gpt-1.7b", "gpt-1t",
        "llama2-7b", "llama2-13b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3.1-405b",
        "mistral-7b", "qwen2.5-7b", "qwen2.5-72b", "nemotron4-15b", "nemotron4-340b", "mpt-7b",
        "mpt-30b", "mpt-70b", "bloom-176b", "qwen3-8b", "qwen3-32b"})
    EXPECT_NE(c.find_model(id), nullptr) << id;
}

// "llama3-70b" -> 70e9, "gpt-1t" -> 1e12: the size in a model's id.
double size_in_id(const std::string& id) {
  const auto dash = id.rfind('-');
  const std::string tail = id.substr(dash + 1);
  const double n = std::strtod(tail.c_str(), nullptr);
  return tail.back() == 't' ? n * 1e12 : n * 1e9;
}

// Mixture-of-experts presets: total and active parameters as their makers publish them (model
// cards and papers), without the multi-token prediction module (DeepSeek-V3: "671B total, 37B
// activated, plus a 14B MTP module" with its own embedding and head copies).
struct PublishedSize {
  const char* id;
  double total, active;
  bool active_without_embedding = false;  // OpenAI's gpt-oss card counts the unembedding only
};
constexpr PublishedSize kMoeSizes[] = {
    {"deepseek-v3", 671e9, 37e9},       {"deepseek-v3.1", 671e9, 37e9},
    {"deepseek-v2", 236e9, 21e9},
    {"deepseek-v2-lite", 15.7e9, 2.4e9}, {"moonlight-16b-a3b", 16e9, 3e9},
    {"kimi-k2", 1.04e12, 32e9},          {"qwen3-30b-a3b", 30.5e9, 3.3e9},
    {"qwen3-235b-a22b", 235e9, 22e9},    {"gpt-oss-120b", 117e9, 5.1e9, true},
    {"gpt-oss-20b", 21e9, 3.6e9, true},        {"mixtral-8x7b", 46.7e9, 12.9e9},
    {"mixtral-8x22b", 141e9, 39e9},      {"grok-1", 314e9, 86e9},
    {"glm-4.5", 355e9, 32e9},            {"glm-4.5-air", 106e9, 12e9},
    {"llama4-scout-17b-16e", 109e9, 17e9}, {"llama4-maverick-17b-128e", 400e9, 17e9},
    {"nemotron-3-super-120b-a12b", 120e9, 12e9},  // by hand: tests/engine/hybrid_test.cpp
};

// Llama 4 by hand (presets/models/llama4-*.json): attention 5120·5120 (Q) + 2·5120·1024 (K, V) +
// 5120·5120 (O) = 62,914,560; an expert 3·5120·8192 = 125,829,120 (routed or shared); a dense
// MLP 3·5120·16384 = 251,658,240; two norms 10,240; the router E·5120 and the one value an
// expert the engine counts. Scout: 48 MoE layers of 16 experts, 2,202,101,776 each,
// 105,700,885,248; with 2·202048·5120 = 2,068,971,520 and the final norm 5,120:
// 107,769,861,888 (Meta: ~109B, its vision encoder included). Active: 15 of 16 experts idle in
// 48 layers, 90,596,966,400 less: 17,172,895,488 (17B). Maverick: 24 dense layers of
// 314,583,040 and 24 MoE layers of 128 experts, 16,295,536,768 each: 398,642,875,392;
// 400,711,852,032 in all (~400B); 127 of 128 experts idle in 24 layers, 383,527,157,760 less:
// 17,184,694,272 (17B).
TEST(Presets, Llama4CountsByHand) {
  const Catalog& c = builtin_catalog();
  struct Want {
    const char* id;
    double total, active;
    int64_t moe_layers;
  };
  for (const Want& w : {Want{"llama4-scout-17b-16e", 107'769'861'888, 17'172'895'488, 48},
                        Want{"llama4-maverick-17b-128e", 400'711'852'032, 17'184'694'272, 24}}) {
    const ModelSpec* m = c.find_model(w.id);
    ASSERT_NE(m, nullptr) << w.id;
    const ParameterCount n = count_parameters(*m, m->vocab, m->seq_len);
    EXPECT_DOUBLE_EQ(n.total, w.total) << w.id;
    EXPECT_EQ(m->moe_layers(0, m->layers), w.moe_layers) << w.id;
    const double idle = n.routed_experts * (1 - static_cast<double>(m->moe.top_k) / m->moe.experts);
    EXPECT_DOUBLE_EQ(n.total - static_cast<double>(w.moe_layers) * idle, w.active) << w.id;
  }
  // Maverick's MoE layers are the odd ones (transformers' moe_layers for interleave step 2).
  const ModelSpec* maverick = c.find_model("llama4-maverick-17b-128e");
  ASSERT_NE(maverick, nullptr);
  EXPECT_FALSE(maverick->is_moe_layer(0));
  EXPECT_TRUE(maverick->is_moe_layer(1));
  EXPECT_TRUE(maverick->is_moe_layer(47));
}

// GLM-4.5 and GLM-4.5-Air by hand (presets/models/glm-4.5*.json; QKV bias and QK-Norm not
// modelled). GLM-4.5: attention 5120·12288 (Q) + 2·5120·1024 (K, V) +
// 12288·5120 (O) = 136,314,880; a dense MLP 3·5120·12288 = 188,743,680; an expert 3·5120·1536 =
// 23,592,960, 160 routed and 1 shared, the router 160·5120 = 819,200 and its expert bias 160; two
// norms 10,240. A dense layer 325,068,800, an MoE layer 3,935,611,040; 3 + 89 of them
// 351,244,588,960; the embedding
// and the output layer 2·151552·5120 = 1,551,892,480 and the final norm 5,120:
// 352,796,486,560 (GLM: 355B). Active: 152 of the 160 routed experts idle in each of the 89 MoE
// layers, 319,165,562,880 less: 33,630,923,680, 32,079,031,200 without the two vocabulary
// matrices (GLM: 32B). GLM-4.5-Air: attention 109,051,904, a dense MLP 3·4096·10944 =
// 134,479,872, an expert 3·4096·1408 = 17,301,504 (128 routed, 1 shared), the router 524,288
// and 128, norms 8,192: a dense layer 243,539,968, an MoE layer 2,341,478,528; 1 + 45 of them
// 105,610,073,728; with 2·151552·4096 = 1,241,513,984 and 4,096: 106,851,591,808 (GLM: 106B);
// active 13,423,470,208, 12,181,956,224 without the vocabulary matrices (GLM: 12B).
TEST(Presets, GlmCountsByHand) {
  const Catalog& c = builtin_catalog();
  struct Want {
    const char* id;
    double total, active, vocabulary;
  };
  for (const Want& w : {Want{"glm-4.5", 352'796'486'560, 33'630'923'680, 1'551'892'480},
                        Want{"glm-4.5-air", 106'851'591'808, 13'423'470'208, 1'241'513'984}}) {
    const ModelSpec* m = c.find_model(w.id);
    ASSERT_NE(m, nullptr) << w.id;
    const ParameterCount n = count_parameters(*m, m->vocab, m->seq_len);
    EXPECT_DOUBLE_EQ(n.total - n.mtp, w.total) << w.id;
    EXPECT_DOUBLE_EQ(n.embedding + n.output, w.vocabulary) << w.id;
    const double moe_layers = static_cast<double>(m->moe_layers(0, m->layers));
    const double idle = n.routed_experts * (1 - static_cast<double>(m->moe.top_k) / m->moe.experts);
    EXPECT_DOUBLE_EQ(n.total - n.mtp - moe_layers * idle, w.active) << w.id;
    EXPECT_GT(n.mtp, 0) << w.id;  // one MTP layer, as Megatron-Bridge's recipes train it
  }
}

TEST(Presets, MixtureOfExpertsModelsHaveTheirPublishedSizes) {
  const Catalog& c = builtin_catalog();
  for (const auto& want : kMoeSizes) {
    const ModelSpec* m = c.find_model(want.id);
    ASSERT_NE(m, nullptr) << want.id;
    const ParameterCount n = count_parameters(*m, m->vocab, m->seq_len);
    const double moe_layers = static_cast<double>(m->moe_layers(0, m->layers));
    const double idle = n.routed_experts * (1 - static_cast<double>(m->moe.top_k) / m->moe.experts);
    const double active = n.total - n.mtp - moe_layers * idle -
                          (want.active_without_embedding ? n.embedding : 0);
    // Published figures round to two or three digits: 2 % on the total, 12 % on the active.
    EXPECT_NEAR((n.total - n.mtp) / want.total, 1.0, 0.02) << want.id;
    EXPECT_NEAR(active / want.active, 1.0, 0.12) << want.id;
  }
}

TEST(Presets, ModelsHaveTheSizeTheirNameSays) {
  for (const auto& m : builtin_catalog().models) {
    if (m.moe.enabled()) continue;  // checked against their published sizes above
    const double params = count_parameters(m, m.vocab, m.seq_len).total;
    // Names round (MPT-70B's benchmark shape is 65 B, Nemotron-4 15B is 15.7 B): 12 %.
    EXPECT_NEAR(params / size_in_id(m.id), 1.0, 0.12) << m.id << " has " << params / 1e9 << " B";
  }
}

TEST(Presets, EveryPresetNamesItsSource) {
  const Json& docs = builtin_catalog().documents;
  for (const char* kind : {"gpus", "links", "nodes", "models"})
    for (const auto& d : docs[kind])
      EXPECT_TRUE(d.contains("source") && d["source"].is_string() &&
                  d["source"].get<std::string>().size() > 10)
          << kind << "/" << d.value("id", "?");
}

// A model's recipe is a published run (no estimate reads a recipe: its shape is checked here): it
// estimates as written (the model, its cluster, its plan) within the validation set's spread of
// its measured time (those runs are rows of tests/validation/modern-runs.csv: +3 ... +26 %
// since the refit with the vocabulary's passes, Qwen3-235B-A22B on 256 H100 the furthest), and
// the mixture-of-experts presets that the page's newcomers pick first have one.
TEST(Presets, RecipesAreRunsThatEstimate) {
  std::set<std::string> with_recipe;
  for (const auto& d : builtin_catalog().documents["models"]) {
    if (!d.contains("recipe")) continue;
    const Json& r = d["recipe"];
    const std::string id = d["id"];
    with_recipe.insert(id);
    auto has = [&](const char* key, Json::value_t type) {
      return r.contains(key) && r.at(key).type() == type;
    };
    ASSERT_TRUE(r.is_object() && r.size() == 5 && has("name", Json::value_t::string) &&
                has("source", Json::value_t::string) && has("cluster", Json::value_t::object) &&
                has("plan", Json::value_t::object) &&
                r.value("measured_iter_time_s", 0.0) > 0 &&
                r.at("source").get<std::string>().size() > 40)
        << id << ": a recipe is {name, cluster, plan, measured_iter_time_s, source}";
    const Json document = {{"model", id}, {"cluster", r["cluster"]}, {"plan", r["plan"]}};
    auto scenario = scenario_from_json(document, builtin_catalog());
    ASSERT_TRUE(scenario.ok()) << id << ": " << scenario.error().message;
    const double measured = r["measured_iter_time_s"];
    EXPECT_NEAR(estimate(*scenario).iteration_time_s / measured, 1.0, 0.26) << id;
  }
  for (const char* id : {"qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-120b", "deepseek-v3"})
    EXPECT_TRUE(with_recipe.count(id)) << id;
}

TEST(Presets, MeasuredFiguresStayBelowPeaks) {
  for (const auto& l : builtin_catalog().links) {
    EXPECT_LE(l.busbw_Bps, l.bandwidth_Bps_per_dir * 1.0001) << l.id;
    EXPECT_GT(l.busbw_Bps, 0) << l.id;
  }
  for (const auto& g : builtin_catalog().gpus) {
    EXPECT_TRUE(g.peak_flops(Precision::fp16) || g.peak_flops(Precision::bf16)) << g.id;
    EXPECT_GT(g.memory_bytes, 8e9) << g.id;
  }
}

// Peaks a datasheet rounds, derived from the chip: units x FLOP per unit per clock x clock. CDNA
// 4 (ROCm's GPU specifications: 256 CUs on gfx950; AMD CDNA 4 white paper: 8,192 dense FP8 FLOP
// per CU per clock, FP16/BF16 half that, 256 FP32 FLOP per CU per clock; MI355X 2.4 GHz, MI350X
// 2.2 GHz), Turing (whitepaper WP-09183-001: 128 FP16 tensor FLOP per Tensor Core per clock,
// 2 FP32 FLOP per CUDA core; GeForce halves the rate with FP32 accumulate, TITAN does not) and
// the A10G, which has no datasheet (presets/gpus/a10g.json: 80 SMs at 1.71 GHz, GA102's
// GeForce-class 512 FP16 tensor FLOP per SM per clock with FP32 accumulate, 256 FP32).
TEST(Presets, PeaksFollowFromTheChip) {
  struct Derived {
    const char* gpu;
    Precision precision;
    double units, flop_per_unit_per_clock, clock_hz;
  };
  const Derived kChips[] = {
      {"mi355x", Precision::fp8, 256, 8192, 2.4e9},
      {"mi355x", Precision::mxfp8, 256, 8192, 2.4e9},
      {"mi355x", Precision::bf16, 256, 4096, 2.4e9},
      {"mi355x", Precision::fp32, 256, 256, 2.4e9},
      {"mi350x", Precision::fp8, 256, 8192, 2.2e9},
      {"mi350x", Precision::fp16, 256, 4096, 2.2e9},
      {"mi350x", Precision::fp32, 256, 256, 2.2e9},
      {"titan-rtx", Precision::fp16, 576, 128, 1.77e9},
      {"titan-rtx", Precision::fp32, 4608, 2, 1.77e9},
      {"rtx-2080-ti", Precision::fp16, 544, 64, 1.545e9},
      {"rtx-2080-ti", Precision::fp32, 4352, 2, 1.545e9},
      {"a10g", Precision::bf16, 80, 512, 1.71e9},
      {"a10g", Precision::fp32, 80, 256, 1.71e9},
  };
  for (const Derived& d : kChips) {
    const GpuSpec* g = builtin_catalog().find_gpu(d.gpu);
    ASSERT_NE(g, nullptr) << d.gpu;
    const double derived = d.units * d.flop_per_unit_per_clock * d.clock_hz;
    EXPECT_NEAR(g->peak_flops(d.precision).value_or(0) / derived, 1.0, 0.005)  // 3 figures
        << d.gpu << " " << name_of(d.precision) << ": " << derived / 1e12 << " TFLOP/s";
  }
  // CDNA 4 has no NVFP4: a plan asking for it is refused (CLI test mi355x_nvfp4).
  EXPECT_FALSE(builtin_catalog().find_gpu("mi355x")->peak_flops(Precision::nvfp4).has_value());
}

// Each NVIDIA SKU's 16-bit Tensor Core peak against its own datasheet, as the datasheet prints
// it: dense where it gives a dense figure, else its figure with 2:4 sparsity halved (every
// preset peak is dense). Per SKU, not per chip: the NVL72 superchips' GPUs (GB200, GB300) run at
// a higher power and clock than the HGX parts (B200, B300) and publish 11 % more, which tools
// that match "B300" inside "GB300" get wrong (OLMo-core PR #747, torchtitan PR #2884's order);
// a sparse figure taken for dense doubles MFU's denominator (OLMo-core PR #614). System
// datasheets are divided by their GPUs.
TEST(Presets, NvidiaPeaksMatchEachSkusDatasheet) {
  struct Sheet {
    const char* gpu;
    double published_tflops;  // FP16/BF16 Tensor Core (Volta, Turing: FP16), as printed
    bool sparse;              // the figure is "with sparsity"
    double gpus;              // GPUs the figure covers (a system's)
    const char* source;
  };
  const Sheet kSheets[] = {
      {"v100-sxm2-32gb", 125, false, 1, "V100 datasheet (1165301-r5), SXM2"},
      {"v100-pcie-32gb", 112, false, 1, "V100 datasheet (1165301-r5), PCIe"},
      {"t4", 65, false, 1, "T4 datasheet, mixed precision FP16/FP32"},
      {"a100-sxm4-80gb", 624, true, 1, "A100 datasheet (1758950-r4), BF16 Tensor Core"},
      {"a100-pcie-80gb", 624, true, 1, "A100 datasheet (1758950-r4), BF16 Tensor Core"},
      {"a10", 125, false, 1, "A10 datasheet, BF16 Tensor Core"},
      {"a40", 149.7, false, 1, "A40 datasheet (2021), BF16 Tensor Core"},
      {"rtx-a6000", 309.7, true, 1, "RTX A6000 datasheet, Tensor performance"},
      {"l4", 242, true, 1, "L4 datasheet, BF16 Tensor Core"},
      {"l40s", 362, false, 1, "L40S datasheet, BF16 Tensor Core (362.05 dense)"},
      {"h100-sxm5-80gb", 1979, true, 1, "H100 datasheet, SXM, BF16 Tensor Core"},
      {"h100-pcie-80gb", 1513, true, 1, "H100 datasheet, PCIe, BF16 Tensor Core"},
      {"h200-sxm-141gb", 1979, true, 1, "H200 datasheet, SXM, BF16 Tensor Core"},
      {"b200", 36000, true, 8, "HGX B200 specifications, FP16/BF16 Tensor Core"},
      {"b300", 36000, true, 8, "HGX B300 specifications, FP16/BF16 Tensor Core"},
      {"gb200", 360000, true, 72, "GB200 NVL72 specifications, FP16/BF16 Tensor Core"},
      {"gb300", 360000, true, 72, "GB300 NVL72 specifications, FP16/BF16 Tensor Core"},
  };
  for (const Sheet& s : kSheets) {
    const GpuSpec* g = builtin_catalog().find_gpu(s.gpu);
    ASSERT_NE(g, nullptr) << s.gpu;
    const double dense = s.published_tflops / s.gpus / (s.sparse ? 2 : 1) * 1e12;
    const double preset =
        g->peak_flops(Precision::bf16).value_or(g->peak_flops(Precision::fp16).value_or(0));
    EXPECT_NEAR(preset / dense, 1.0, 0.001) << s.gpu << " against " << s.source;
  }
  // The superchip and the HGX part of one chip differ, as their sheets do.
  const auto bf16 = [](const char* id) {
    return builtin_catalog().find_gpu(id)->peak_flops(Precision::bf16).value_or(0);
  };
  EXPECT_NEAR(bf16("gb300") / bf16("b300"), 2500.0 / 2250, 1e-9);
  EXPECT_NEAR(bf16("gb200") / bf16("b200"), 2500.0 / 2250, 1e-9);
}

TEST(Presets, BadPresetFilesAreRejectedWithTheirPath) {
  const PresetFile cal{"calibration.json",
                       R"({"overlap_slowdown": 0.1, "framework_memory_gib": 1,
                           "framework_memory_fraction": 0, "fallback": {"gemm_efficiency": 0.7,
                           "gemm_overhead_us": 1, "attention_efficiency": 0.5,
                           "memory_efficiency": 0.8, "layer_overhead_us": 0}})"};
  const PresetFile bad_json{"gpus/x.json", "{"};
  const PresetFile wrong_id{"gpus/x.json", R"({"id": "y", "memory_gib": 1,
      "memory_bandwidth_GBps": 1, "peak_tflops": {"bf16": 1}})"};
  const PresetFile dangling{"nodes/n.json", R"({"id": "n", "gpu": "nope", "gpus_per_node": 8,
      "intra_node_link": "a", "inter_node_link": "b", "nics_per_node": 1})"};
  // A key given twice: nlohmann would keep the second silently; the presets are read as a
  // scenario is (parse_json), so the file is refused, named.
  const PresetFile twice{"links/l.json", R"({"id": "l", "id": "m"})"};
  for (const auto& f : {bad_json, wrong_id, dangling, twice}) {
    const PresetFile files[] = {cal, f};
    auto r = load_catalog(files);
    ASSERT_FALSE(r.ok()) << f.path;
    EXPECT_NE(r.error().message.find(std::string(f.path.substr(0, 5))), std::string::npos)
        << r.error().message;
  }
  const PresetFile files[] = {cal, twice};
  EXPECT_EQ(load_catalog(files).error().message,
            "links/l.json: the file has the key \"id\" twice in one object: give it once");
  const PresetFile broken[] = {cal, bad_json};
  EXPECT_EQ(load_catalog(broken).error().message, "gpus/x.json: the file is not valid JSON");
}

// The fitted constants' keys are one table (arch_calibration_keys.h): each names its own member
// once, µs keys are held in seconds, and the preset reader applies each row: a missing fp8 or
// fp4 efficiency is the one above it, a missing MoE term 0 and grouped factor 1, a missing SSD
// scan efficiency the measured 0.0875, a grouped factor or an SSD share above 1 out of range.
TEST(Presets, CalibrationKeysAreOneTable) {
  std::set<std::string_view> names;
  std::set<const double*> members;
  ArchCalibration a;
  for (const ArchCalibrationKey& k : arch_calibration_keys()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_TRUE(members.insert(&(a.*k.member)).second) << k.name;
    EXPECT_EQ(k.scale, k.unit == "µs" ? 1e-6 : 1.0) << k.name;
    EXPECT_EQ(find_arch_calibration_key(k.name), &k);
    if (!k.falls_back_to.empty()) EXPECT_NE(find_arch_calibration_key(k.falls_back_to), nullptr);
  }
  EXPECT_EQ(find_arch_calibration_key("gemm_overhead_s"), nullptr);
  // A scenario's calibration.gemm overrides four of them, by the same names and units.
  int gemm_keys = 0;
  for (const KeyInfo& key : schema_keys()) {
    if (key.object != "calibration.gemm") continue;
    const ArchCalibrationKey* k = find_arch_calibration_key(key.name);
    ASSERT_NE(k, nullptr) << key.name;
    EXPECT_EQ(key.scale, k->scale) << key.name;
    ++gemm_keys;
  }
  EXPECT_EQ(gemm_keys, 4);
  auto load = [](const std::string& fallback) {
    const std::string text = R"({"overlap_slowdown": 0.1, "framework_memory_gib": 1,
        "framework_memory_fraction": 0, "fallback": )" + fallback + "}";
    const PresetFile files[] = {{"calibration.json", text}};
    return load_catalog(files);
  };
  const std::string required = R"("gemm_efficiency": 0.7, "gemm_overhead_us": 12,
      "attention_efficiency": 0.5, "memory_efficiency": 0.8, "layer_overhead_us": 0)";
  auto read = load("{" + required + "}");
  ASSERT_TRUE(read.ok()) << read.error().message;
  const ArchCalibration& c = read->calibration.fallback;
  EXPECT_EQ(c.fp8_gemm_efficiency, 0.7);
  EXPECT_EQ(c.fp4_gemm_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.gemm_overhead_s, 12e-6);
  EXPECT_EQ(c.grouped_gemm_factor, 1);
  EXPECT_EQ(c.moe_host_s, 0);
  EXPECT_EQ(c.moe_host_expert_s, 0);
  // The scans' rates, measured on H100 (compute.cpp), not fitted: absent the measured share, a
  // value read, and a share of the 16-bit peak above 1 or not above 0 refused naming the key.
  struct Measured {
    const char* key;
    double ArchCalibration::*member;
    double absent;
  };
  for (const Measured& k : {Measured{"ssd_scan_efficiency", &ArchCalibration::ssd_scan_efficiency,
                                     0.0875},
                            Measured{"delta_rule_efficiency",
                                     &ArchCalibration::delta_rule_efficiency, 0.065}}) {
    EXPECT_EQ(c.*k.member, k.absent) << k.key;
    auto read = load("{" + required + ", \"" + k.key + "\": 0.05}");
    ASSERT_TRUE(read.ok()) << read.error().message;
    EXPECT_EQ(read->calibration.fallback.*k.member, 0.05) << k.key;
    for (const char* bad : {"1.5", "0", "-0.1"}) {
      auto refused = load("{" + required + ", \"" + k.key + "\": " + bad + "}");
      ASSERT_FALSE(refused.ok()) << k.key << " " << bad;
      EXPECT_NE(refused.error().message.find(k.key), std::string::npos)
          << refused.error().message;
    }
  }
  // The delta rule's state pass: a measured time in µs (1.15 on H100), 0 allowed, below refused.
  EXPECT_DOUBLE_EQ(c.delta_rule_chunk_s, 1.15e-6);
  auto chunk = load("{" + required + R"(, "delta_rule_chunk_us": 2.5})");
  ASSERT_TRUE(chunk.ok()) << chunk.error().message;
  EXPECT_DOUBLE_EQ(chunk->calibration.fallback.delta_rule_chunk_s, 2.5e-6);
  EXPECT_TRUE(load("{" + required + R"(, "delta_rule_chunk_us": 0})").ok());
  auto negative = load("{" + required + R"(, "delta_rule_chunk_us": -1})");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.error().message.find("delta_rule_chunk_us"), std::string::npos)
      << negative.error().message;
  auto fp8 = load("{" + required + R"(, "fp8_gemm_efficiency": 0.6, "moe_host_us": 300})");
  ASSERT_TRUE(fp8.ok()) << fp8.error().message;
  EXPECT_EQ(fp8->calibration.fallback.fp4_gemm_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(fp8->calibration.fallback.moe_host_s, 300e-6);
  auto wide = load("{" + required + R"(, "grouped_gemm_factor": 1.5})");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("grouped_gemm_factor must be at most 1 (a fraction of gemm "
                                      "efficiency)"),
            std::string::npos)
      << wide.error().message;
  auto unknown = load("{" + required + R"(, "gemm_overhead_s": 1})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("gemm_overhead_s"), std::string::npos);
  auto missing = load(R"({"gemm_efficiency": 0.7})");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace stepcast
