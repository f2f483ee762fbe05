// The schema: one description per key drives the parser, the resolved scenario, the link codec
// and the documentation, so they cannot drift apart.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "stepcast/resolve.h"
#include "stepcast/rule_ids.h"
#include "stepcast/schema.h"
#include "stepcast/share_link.h"
#include "test_util.h"

namespace stepcast {
namespace {

std::string read(const std::string& relative) {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Schema, DocumentationTablesAreGeneratedFromIt) {
  const std::string doc = read("docs/scenario.md");
  ASSERT_NE(doc.find("<!-- schema: plan -->"), std::string::npos);
  // Run `stepcast schema --write-docs docs/scenario.md` after changing a key.
  EXPECT_EQ(fill_schema_tables(doc), doc);
  for (auto object : schema_objects())
    EXPECT_NE(doc.find(fmt::format("<!-- schema: {} -->", object)), std::string::npos) << object;
}

TEST(Schema, LinkNamesAreUniqueAndKeysAreDocumented) {
  std::set<std::string> links, paths;
  for (const KeyInfo& k : schema_keys()) {
    EXPECT_TRUE(paths.insert(k.path()).second) << k.path();
    EXPECT_FALSE(k.doc.empty()) << k.path();
    if (!k.link.empty()) EXPECT_TRUE(links.insert(std::string(k.link)).second) << k.link;
    if (k.type == ValueType::choice) EXPECT_FALSE(k.choices.empty()) << k.path();
  }
  // The contract's link names (docs/scenario.md, format v1) are all still there.
  for (const char* name : {"tp", "pp", "dp", "cp", "vpp", "mb", "gbs", "sp", "rc", "do", "zero",
                           "prec", "fa", "ogr", "opg", "tpo", "op2p", "gr32", "ppsg", "stages",
                           "replicas", "m.name", "m.layers", "m.hidden", "m.heads", "m.kv",
                           "m.ffn", "m.vocab", "m.seq", "m.act", "m.pos", "m.tied", "m.norm",
                           "m.bias", "node", "nodes", "gpu", "gpn", "intra", "inter", "nics",
                           "groups", "igl", "seq", "name", "tokens", "price"})
    EXPECT_EQ(links.count(name), 1u) << name;
}

TEST(Schema, JsonCarriesEveryKeyWithItsDefault) {
  const Json j = schema_json();
  ASSERT_TRUE(j["keys"].is_array());
  EXPECT_EQ(j["keys"].size(), schema_keys().size());
  auto key = [&](const std::string& path) {
    for (const auto& k : j["keys"])
      if (k["path"] == path) return k;
    return Json();
  };
  EXPECT_EQ(key("plan.tp")["default"], 1);
  EXPECT_EQ(key("plan.tp")["link"], "tp");
  EXPECT_EQ(key("plan.recompute")["choices"], Json::parse(R"(["none","selective","full"])"));
  EXPECT_EQ(key("plan.global_batch")["default"], "required");
  EXPECT_TRUE(key("plan.dp")["default"].contains("rule"));
  EXPECT_EQ(key("plan.flash_attention")["control"], "advanced");
  // Conditions name a key of the schema (and, after "=", one of its choices); the page hides
  // expert parallelism for a dense model and MLA's ranks for grouped-query attention by them.
  EXPECT_EQ(key("plan.ep")["needs"], "model.moe");
  EXPECT_EQ(key("model.attention.kv_lora_rank")["needs"], "model.attention.type=mla");
  EXPECT_FALSE(key("plan.tp").contains("needs"));
  for (const auto& k : j["keys"]) {
    if (!k.contains("needs")) continue;
    const std::string needs = k["needs"];
    const auto eq = needs.find('=');
    const Json target = key(needs.substr(0, eq));
    ASSERT_TRUE(target.is_object()) << k["path"] << " needs " << needs;
    if (eq != std::string::npos) {
      const Json value = needs.substr(eq + 1);
      EXPECT_NE(std::find(target["choices"].begin(), target["choices"].end(), value),
                target["choices"].end())
          << k["path"] << " needs " << needs;
    }
  }
  // The keys of the model's sub-objects have labels (the custom model form shows them).
  for (const auto& k : j["keys"])
    if (k["object"] == "model.moe" || k["object"] == "model.attention")
      EXPECT_NE(k["label"], "") << k["path"];
}

// A document with several bad keys reports each of them, with its path.
// Plan{}'s member initialisers (plan.h) are the key table's fixed defaults (fields.cpp): a plan
// key with a number, boolean or text default reads that value in a default Plan. (Keys whose
// default is the framework profile's are set from the profile on every read; derived ones by
// their rule.)
TEST(Schema, PlanDefaultsAreTheKeyTables) {
  const Json plan = resolved_plan_json(Plan{});
  int checked = 0;
  for (const KeyInfo& k : schema_keys()) {
    if (k.object != "plan") continue;
    const std::string name(k.name);
    const DefaultValue& d = k.fallback;
    if (d.kind != DefaultValue::Kind::number && d.kind != DefaultValue::Kind::boolean &&
        d.kind != DefaultValue::Kind::text)
      continue;
    ASSERT_TRUE(plan.contains(name)) << name;
    if (d.kind == DefaultValue::Kind::number) EXPECT_EQ(plan[name].get<double>(), d.number) << name;
    if (d.kind == DefaultValue::Kind::boolean) EXPECT_EQ(plan[name].get<bool>(), d.flag) << name;
    if (d.kind == DefaultValue::Kind::text) EXPECT_EQ(plan[name].get<std::string>(), d.text) << name;
    ++checked;
  }
  // framework, tp, pp, cp, vpp, ep, moe_dispatcher, moe_overlap, moe_imbalance, micro_batch,
  // recompute, recompute_modules, recompute_method, recompute_num_layers, optimizer,
  // sgd_momentum, memory_headroom, expandable_segments, precision, bf16_moments,
  // cpu_offloading_num_layers,
  // offload_modules, optimizer_cpu_offload, optimizer_offload_fraction,
  // overlap_cpu_optimizer_d2h_h2d, embedding_in_split, loss_in_split, rank_order, zero3_prefetch,
  // moe_rank_capacity_factor, cross_entropy_fusion, master_weights.
  EXPECT_EQ(checked, 32);
}

TEST(Schema, EveryProblemOfADocumentIsReported) {
  const Json doc = Json::parse(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": "x", "pp": 0, "global_batch": 8, "teepee": 1,
      "recompute": "some"}})");
  const auto errors = scenario_errors(doc, builtin_catalog());
  std::set<std::string> paths;
  for (const auto& e : errors) paths.insert(e.path);
  EXPECT_EQ(paths, (std::set<std::string>{"plan.tp", "plan.pp", "plan.teepee", "plan.recompute"}));
  // Rules too: TP and the batch both broken.
  const auto rules = scenario_errors(Json::parse(R"({"model": "llama3-70b", "cluster": {
      "node": "dgx-h100", "nodes": 8}, "plan": {"tp": 3, "pp": 3, "dp": 2,
      "global_batch": 7}})"), builtin_catalog());
  ASSERT_GE(rules.size(), 3u);
  EXPECT_EQ(rules[0].path, "plan.tp");
  EXPECT_EQ(rules[0].related, std::vector<std::string>{"model.heads"});
  EXPECT_EQ(rules[0].hint, "tp 1, 2, 4 or 8 divides the model");
}

// Layers that pp·vpp does not divide: the hint says what would (the page shows it under the
// control), and what it proposes is a plan the engine accepts.
TEST(Schema, ALayerCountThatDoesNotDivideGetsASplitThatDoes) {
  auto plan_doc = [](const std::string& model, const std::string& plan, int nodes) {
    return fmt::format(R"({{"model": "{}", "cluster": {{"node": "dgx-h100", "nodes": {}}},
        "plan": {{{}, "micro_batch": 1, "global_batch": 4096, "sequence_parallel": true}}}})",
                       model, nodes, plan);
  };
  auto hint_of = [&](const std::string& model, const std::string& plan, int nodes) {
    return test::error_of(plan_doc(model, plan, nodes)).hint;
  };
  // DeepSeek-V3's 61 layers on 8 stages: 6 + 7 + 6·8 = 61, the busiest stage 8 layers (9 + 10 +
  // 6·7 would make it 10); 61 is prime, and neither 62 nor 63 is a multiple of 8.
  EXPECT_EQ(hint_of("deepseek-v3", R"("tp": 2, "pp": 8, "ep": 64)", 128),
            "pp·vpp 1 or 61 divides 61 layers; plan.first_stage_layers=6 and "
            "plan.last_stage_layers=7 (8 on each other stage)");
  EXPECT_EQ(test::scenario(plan_doc("deepseek-v3", R"("tp": 2, "pp": 8, "ep": 64,
      "first_stage_layers": 6, "last_stage_layers": 7)", 128)).plan.last_stage_layers, 7);
  // Two stages: 61 + 1 = 2·31 with the loss counted, or 30 and 31. With two chunks a stage,
  // every stage's layers must be even, and 61 is odd: no uneven split, and neither 62 nor 63 is a
  // multiple of 16.
  EXPECT_EQ(hint_of("deepseek-v3", R"("tp": 2, "pp": 2, "ep": 64)", 128),
            "pp·vpp 1 or 61 divides 61 layers; count the loss as a layer (plan.loss_in_split); "
            "plan.first_stage_layers=30 and plan.last_stage_layers=31");
  // Two and four chunks a stage: no plainer split, so Megatron's layout as NVIDIA's recipes
  // write it, the embedding and the MTP module with the loss at the lighter ends (Megatron-Bridge's
  // DeepSeek-V3 recipe runs PP 8 x VPP 4 as "Et|(tt|)*30mL": 1 + 30·2 layers in 32 chunks).
  EXPECT_EQ(hint_of("deepseek-v3", R"("tp": 2, "pp": 8, "vpp": 2, "ep": 64)", 128),
            "pp·vpp 1 or 61 divides 61 layers; plan.pipeline_layout=\"Ettt|(t*4|)*14ttmL\"");
  EXPECT_EQ(hint_of("deepseek-v3", R"("tp": 2, "pp": 8, "vpp": 4, "ep": 64)", 128),
            "pp·vpp 1 or 61 divides 61 layers; plan.pipeline_layout=\"Et|(tt|)*30mL\"");
  // The first and last stage layers of PP 8 kept, then VPP 4: a stage of 6 layers is no whole
  // number of chunks; the same splits at PP 8 x VPP 4 replace them (issue 37 item 3).
  const Error chunks = test::error_of(plan_doc(
      "deepseek-v3", R"("tp": 2, "pp": 8, "vpp": 4, "ep": 64, "first_stage_layers": 6,
      "last_stage_layers": 7)", 128));
  EXPECT_EQ(chunks.rule, Rule::stage_chunks);
  EXPECT_EQ(chunks.hint, "at plan.vpp=4, in place of first_stage_layers and last_stage_layers: "
                         "pp·vpp 1 or 61 divides 61 layers; "
                         "plan.pipeline_layout=\"Et|(tt|)*30mL\"");
  EXPECT_EQ(chunks.values.at("pipeline_layout"), "Et|(tt|)*30mL");
  EXPECT_EQ(chunks.message, "a stage of 6 layers does not split into plan.vpp=4 chunks");
  // One layer on the first stage (as a PP 16 plan balances the MTP module on the last), then VPP 2.
  const Error one = test::error_of(plan_doc(
      "deepseek-v3", R"("tp": 4, "pp": 16, "vpp": 2, "ep": 8, "first_stage_layers": 1,
      "last_stage_layers": 4)", 32));
  EXPECT_EQ(one.rule, Rule::stage_chunks);
  EXPECT_EQ(one.message, "a stage of 1 layer does not split into plan.vpp=2 chunks");
  for (const char* layout : {R"("vpp": 2, "pipeline_layout": "Ettt|(t*4|)*14ttmL")",
                             R"("vpp": 4, "pipeline_layout": "Et|(tt|)*30mL")"}) {
    const Scenario laid = test::scenario(
        plan_doc("deepseek-v3", std::string(R"("tp": 2, "pp": 8, "ep": 64, )") + layout, 128));
    EXPECT_EQ(laid.plan.pp, 8) << layout;
  }
  // Llama 3.1 405B's 126 layers on 8·4 chunks, as NVIDIA's recipes run it: 126 + 2 = 4·32.
  // (126 is 2 mod 4 and six other stages of a multiple of 4 keep it so: no uneven split.)
  EXPECT_EQ(hint_of("llama3.1-405b", R"("tp": 8, "pp": 8, "vpp": 4)", 64),
            "pp·vpp 1, 2, 3, 6, 7, 9, 14, 18, 21, 42 or 63 divides 126 layers; count the "
            "embedding and the loss as layers (plan.embedding_in_split, plan.loss_in_split)");
}

// A global batch the micro-batches do not divide: the nearest ones that do, below and above.
TEST(Schema, AGlobalBatchThatDoesNotSplitGetsTheNearestThatDo) {
  auto hint_of = [](const std::string& plan) {
    return test::error_of(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
        "plan": {"tp": 8, "pp": 4, )" + plan + "}}").hint;
  };
  // micro_batch 2 x dp 2 = 4: 1,000 and 1,004 around 1,002; below 4, only 4.
  EXPECT_EQ(hint_of(R"("micro_batch": 2, "global_batch": 1002)"),
            "plan.global_batch=1000 or 1004");
  EXPECT_EQ(hint_of(R"("micro_batch": 2, "global_batch": 3)"), "plan.global_batch=4");
  // Interleaved: 12 / (1 x 2) = 6 micro-batches a replica, not a multiple of pp 4; whole groups
  // of pp need multiples of 1 x 2 x 4 = 8.
  EXPECT_EQ(hint_of(R"("vpp": 2, "micro_batch": 1, "global_batch": 12)"),
            "plan.global_batch=8 or 16");
}

TEST(Schema, DerivedDataParallelNamesTheInputsThatSetIt) {
  // 7 nodes or PP 5: DP is derived, so the rule names what derives it (a page marks the input its
  // user changed, never the read-only DP).
  const Error e = test::error_of(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 8}, "plan": {"tp": 8, "pp": 5, "global_batch": 8}})");
  EXPECT_EQ(e.path, "plan.dp");
  EXPECT_NE(std::find(e.related.begin(), e.related.end(), "plan.pp"), e.related.end());
  const Error dp = test::error_of(R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
      "nodes": 7}, "plan": {"tp": 8, "pp": 4, "global_batch": 8}})");
  EXPECT_EQ(dp.path, "plan.dp");
  EXPECT_NE(std::find(dp.related.begin(), dp.related.end(), "cluster.nodes"), dp.related.end());
  EXPECT_NE(std::find(dp.related.begin(), dp.related.end(), "plan.pp"), dp.related.end());
}

// The resolved scenario is a fixed point that estimates the same.
TEST(Resolve, FillsEveryDefaultAndEstimatesTheSame) {
  for (const char* file : {"llama3-70b_dgx-h100x8.json", "gpt3-175b_dgx-a100x128.json",
                           "llama3-8b_a100-and-h100_stages.json",
                           "llama3-70b_a100-and-h100_replicas.json",
                           "custom-7b_l40s-pcie.json"}) {
    const Json doc = Json::parse(read(std::string("web/examples/scenarios/") + file));
    const Json resolved = resolve_json(doc, builtin_catalog());
    ASSERT_FALSE(resolved.contains("errors")) << file << resolved.dump();
    const Json& s = resolved["scenario"];
    // Every plan key, but the layout ones: plan.stages carries the first and last stage's
    // layers, and one of stages or replicas is there (a free-form layout only when given).
    for (const KeyInfo& k : schema_keys())
      if (k.object == "plan" && k.name != "stages" && k.name != "replicas" &&
          k.name != "first_stage_layers" && k.name != "last_stage_layers" &&
          k.name != "pipeline_layout")
        EXPECT_TRUE(s["plan"].contains(k.name)) << file << " " << k.name;
    EXPECT_TRUE(s["plan"].contains("stages") != s["plan"].contains("replicas")) << file;
    const Report a = estimate(test::scenario(doc.dump()));
    const Report b = estimate(test::scenario(s.dump()));
    EXPECT_EQ(a.iteration_time_s, b.iteration_time_s) << file;
    EXPECT_EQ(resolve_json(s, builtin_catalog())["scenario"], s) << file;
  }
}

TEST(Resolve, DerivedValues) {
  const Json r = resolve_json(Json::parse(R"({"model": "llama3-70b", "cluster": {"node":
      "dgx-h100", "nodes": 8}, "plan": {"tp": 8, "pp": 4, "vpp": 5, "global_batch": 512,
      "distributed_optimizer": true}, "seq_len": 4096})"), builtin_catalog());
  const Json& plan = r["scenario"]["plan"];
  EXPECT_EQ(plan["dp"], 2);
  EXPECT_EQ(plan["zero_stage"], 1);
  EXPECT_EQ(plan["recompute"], "none");
  ASSERT_EQ(plan["stages"].size(), 4u);
  EXPECT_EQ(plan["stages"][3], Json::parse(R"({"group": 0, "layers": 20})"));
  EXPECT_EQ(r["micro_batches"], 256);
  EXPECT_EQ(r["gpus"], 64);
  EXPECT_EQ(r["model"]["kv_heads"], 8);
  EXPECT_FALSE(r["model"].contains("moe_layers"));  // dense
  // MoE layers counted by the engine's rule: DeepSeek-V3's first 3 of 61 dense; Qwen3-30B-A3B
  // all 48; every other of 8 layers (layer_freq 2: layers 0, 2, 4, 6) after a dense first one.
  auto moe_layers = [](const char* model) {
    return resolve_json(Json::parse(fmt::format(R"({{"model": {}, "cluster": {{"node":
        "dgx-h100", "nodes": 1}}, "plan": {{"global_batch": 8}}}})", model)),
                        builtin_catalog())["model"]["moe_layers"];
  };
  EXPECT_EQ(moe_layers(R"("deepseek-v3")"), 58);
  EXPECT_EQ(moe_layers(R"("qwen3-30b-a3b")"), 48);
  EXPECT_EQ(moe_layers(R"({"layers": 8, "hidden": 1024, "heads": 8, "vocab": 32000,
      "seq_len": 2048, "position": "rope", "ffn_hidden": 4096, "ffn_type": "swiglu",
      "tied_embeddings": false, "moe": {"experts": 8, "top_k": 2, "ffn_hidden": 1024,
      "layer_freq": 2, "first_dense_layers": 1}})"), 3);
  // Auto layers come back as the balancer's numbers, adding up to the model's.
  const Json hetero = resolve_json(Json::parse(read("web/examples/scenarios/"
                                                    "llama3-8b_a100-and-h100_stages.json")),
                                   builtin_catalog());
  int64_t layers = 0;
  for (const auto& st : hetero["scenario"]["plan"]["stages"]) layers += st["layers"].get<int64_t>();
  EXPECT_EQ(layers, 32);
  // Errors: every one, as values.
  const Json bad = resolve_json(Json::parse(R"({"model": "gpt-9", "cluster": {"node":
      "dgx-h100", "nodes": 1}, "plan": {"tp": 0, "global_batch": 8}})"), builtin_catalog());
  ASSERT_TRUE(bad.contains("errors"));
  EXPECT_EQ(bad["errors"].size(), 2u);
  EXPECT_EQ(bad["errors"][0]["code"], "unknown_preset");
  EXPECT_EQ(bad["errors"][1]["path"], "plan.tp");
}

}  // namespace
}  // namespace stepcast
