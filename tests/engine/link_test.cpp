// Scenario links: round trips, defaults left out, old formats still open, untrusted input refused.
#include <gtest/gtest.h>

#include "stepcast/share_link.h"
#include "test_util.h"

namespace stepcast {
namespace {

const char* kScenario = R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8},
  "plan": {"tp": 8, "pp": 4, "dp": 2, "vpp": 1, "micro_batch": 1, "global_batch": 512,
           "sequence_parallel": true, "recompute": "selective", "distributed_optimizer": true,
           "precision": "bf16"}, "seq_len": 4096})";

TEST(Link, DefaultsAreLeftOutAndTheLinkIsReadable) {
  LinkDocument doc{Json::parse(kScenario), Json{{"tokens", 1e12}, {"price_per_gpu_hour", 2.5}}};
  auto link = scenario_to_link(doc, "http://localhost:8080/");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_EQ(*link,
            "http://localhost:8080/#v=2&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&dp=2"
            "&gbs=512&sp=1&rc=selective&do=1&seq=4096&tokens=1000000000000&price=2.5");
}

TEST(Link, RoundTripGivesTheSameEstimate) {
  LinkDocument doc{Json::parse(kScenario), Json{{"tokens", 2e11}}};
  auto link = scenario_to_link(doc, "https://example.org/stepcast/");
  ASSERT_TRUE(link.ok());
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_DOUBLE_EQ(back->page["tokens"].get<double>(), 2e11);
  const Report a = estimate(test::scenario(kScenario));
  const Report b = estimate(test::scenario(back->scenario.dump()));
  EXPECT_EQ(a.iteration_time_s, b.iteration_time_s);
  // Adam's moments in bf16 travel as bfm=1 (left out when false, the default).
  Json moments = Json::parse(kScenario);
  moments["plan"]["bf16_moments"] = true;
  auto with = scenario_to_link(LinkDocument{moments, Json::object()}, "https://example.org/");
  ASSERT_TRUE(with.ok());
  EXPECT_NE(with->find("&bfm=1"), std::string::npos) << *with;
  EXPECT_EQ(link->find("bfm"), std::string::npos) << *link;
  auto read = scenario_from_link(*with);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->scenario["plan"]["bf16_moments"], true);
}

TEST(Link, CustomModelAndExplicitClusterRoundTrip) {
  const char* custom = R"({"model": {"name": "my model 7b", "layers": 32, "hidden": 4096,
    "heads": 32, "kv_heads": 8, "ffn_hidden": 14336, "vocab": 32000, "seq_len": 4096,
    "ffn_type": "swiglu", "position": "rope", "tied_embeddings": false, "norm": "rmsnorm",
    "bias": false}, "cluster": {"gpu": "l40s", "gpus_per_node": 8, "nodes": 2,
    "intra_node_link": "pcie4", "inter_node_link": "roce-200g", "nics_per_node": 2},
    "plan": {"tp": 2, "pp": 2, "global_batch": 64, "recompute": "full"}})";
  auto link = scenario_to_link({Json::parse(custom)}, "");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_NE(link->find("m.name=my%20model%207b"), std::string::npos) << *link;
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scenario, Json::parse(custom));
}

TEST(Link, HeterogeneousClustersRoundTrip) {
  const char* hetero = R"({"model": "llama3-8b", "seq_len": 4096,
    "cluster": {"groups": [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 1}],
                "inter_group_link": "roce-100g"},
    "plan": {"tp": 8, "pp": 2, "global_batch": 64,
             "stages": [{"group": 0, "layers": "auto"}, {"group": 1, "layers": "auto"}]}})";
  auto link = scenario_to_link({Json::parse(hetero)}, "");
  ASSERT_TRUE(link.ok()) << link.error().message;
  // Readable in chat: node presets with counts, the link between them, group:layers per stage.
  EXPECT_EQ(*link, "#v=2&model=llama3-8b&groups=dgx-a100:1,dgx-h100:1&igl=roce-100g&tp=8&pp=2"
                   "&gbs=64&stages=0:auto,1:auto&seq=4096");
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scenario, Json::parse(hetero));
  EXPECT_EQ(estimate(test::scenario(back->scenario.dump())).iteration_time_s,
            estimate(test::scenario(hetero)).iteration_time_s);
}

TEST(Link, ReplicaLayoutsRoundTripWhateverTheyOmit) {
  // Entries with only a group still read back as replica sets (count 1, auto micro-batches).
  const char* replicas = R"({"model": "llama3-8b", "seq_len": 4096,
    "cluster": {"groups": [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 1}]},
    "plan": {"tp": 8, "global_batch": 64, "replicas": [{"group": 0}, {"group": 1}]}})";
  auto link = scenario_to_link({Json::parse(replicas)}, "");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_NE(link->find("replicas=0:1:auto,1:1:auto"), std::string::npos) << *link;
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(estimate(test::scenario(back->scenario.dump())).iteration_time_s,
            estimate(test::scenario(replicas)).iteration_time_s);
}

TEST(Link, LegacyFormatZeroStillOpens) {
  // Format 0 carried the scenario JSON itself after '#'. Fixture made by hand.
  const std::string old =
      "http://localhost:8080/#%7B%22model%22%3A%22llama3-8b%22%2C%22cluster%22%3A%7B%22node%22"
      "%3A%22dgx-h100%22%2C%22nodes%22%3A1%7D%2C%22plan%22%3A%7B%22global_batch%22%3A64%7D%7D";
  auto back = scenario_from_link(old);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scenario["model"], "llama3-8b");
  EXPECT_TRUE(parse_scenario(back->scenario.dump(), builtin_catalog()).ok());
}

TEST(Link, UntrustedInputIsRefusedClearly) {
  struct Case {
    std::string url;
    const char* message;
  };
  const Case cases[] = {
      {"http://x/", "no '#' part"},
      {"#", "holds no scenario"},
      {"#v=9&model=llama3-8b", "format version 9"},
      {"#model=llama3-8b", "no format version"},
      {"#v=1&tp=eight", "tp=eight is not a valid value"},
      {"#v=1&evil=%3Cscript%3E", "unknown key 'evil'"},
      {"#v=1&tp=2&tp=4", "appears twice"},
      {"#v=1&model=%ZZ", "bad percent-encoding"},
      {"#v=1&m.layers=4", "m.* keys need model=custom"},
      {"#%7Bnot json", "the scenario in the link is not valid JSON"},
      {"#v=1&groups=dgx-a100", "groups=dgx-a100 is not node:count"},
      {"#v=1&stages=0:auto:7", "stages=0:auto:7 is not a valid value"},
      {"#v=1&replicas=x:1:auto", "is not a valid value"},
      {"#v=1&" + std::string(9000, 'a'), "links over 8192 are refused"},
  };
  for (const auto& c : cases) {
    auto r = scenario_from_link(c.url);
    ASSERT_FALSE(r.ok()) << c.url;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.url << " -> " << r.error().message;
  }
  // A link naming a preset that does not exist decodes, and the scenario then says so.
  auto r = scenario_from_link("#v=1&model=gpt-9&node=dgx-h100&nodes=1&gbs=8");
  ASSERT_TRUE(r.ok());
  auto s = parse_scenario(r->scenario.dump(), builtin_catalog());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::unknown_preset);
}

// A format 1 link was written when a left-out flag meant one fixed default: it opens with those
// defaults, so it estimates what it estimated then, while a format 2 link leaves them to the
// framework profile.
TEST(Link, FormatOneKeepsItsDefaults) {
  const std::string fragment = "model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&gbs=512&seq=4096";
  auto v1 = scenario_from_link("#v=1&" + fragment);
  auto v2 = scenario_from_link("#v=2&" + fragment);
  ASSERT_TRUE(v1.ok() && v2.ok());
  const Json& plan1 = v1->scenario["plan"];
  EXPECT_EQ(plan1["sequence_parallel"], false);
  EXPECT_EQ(plan1["distributed_optimizer"], false);
  EXPECT_EQ(plan1["grad_reduce_in_fp32"], true);
  EXPECT_FALSE(v2->scenario["plan"].contains("sequence_parallel"));
  const Scenario s1 = test::scenario(v1->scenario.dump());
  const Scenario s2 = test::scenario(v2->scenario.dump());
  EXPECT_FALSE(s1.plan.sequence_parallel);
  EXPECT_TRUE(s2.plan.sequence_parallel);  // megatron-core's
  EXPECT_TRUE(s2.plan.tp_comm_overlap);
  // The old default overlapped the parameter gather; with no distributed optimizer there is no
  // gather (no warning about a flag the link never set), and where the link turns the gradient
  // overlap off, Megatron cannot overlap it (no error for it either).
  EXPECT_FALSE(plan1.contains("overlap_param_gather"));  // the profile's
  EXPECT_FALSE(s1.plan.overlap_param_gather);
  for (const auto& w : estimate(s1).warnings)
    EXPECT_EQ(w.find("overlap_param_gather"), std::string::npos) << w;
  auto sharded = scenario_from_link("#v=1&" + fragment + "&do=1");
  ASSERT_TRUE(sharded.ok());
  EXPECT_TRUE(test::scenario(sharded->scenario.dump()).plan.overlap_param_gather);
  auto no_grad = scenario_from_link("#v=1&" + fragment + "&do=1&ogr=0");
  ASSERT_TRUE(no_grad.ok());
  const auto opened = parse_scenario(no_grad->scenario.dump(), test::catalog());
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  EXPECT_FALSE(opened->plan.overlap_param_gather);
}

TEST(Link, OneRuleForEveryKeyAndEveryValue) {
  struct Case {
    std::string url;
    ErrorCode code;
    const char* message;
  };
  const Case cases[] = {
      // Every key at most once, the structural ones included.
      {"#v=1&model=llama3-8b&model=llama3-70b", ErrorCode::duplicate_key, "'model' appears twice"},
      {"#v=1&v=1&model=llama3-8b", ErrorCode::duplicate_key, "'v' appears twice"},
      {"#v=1&cluster=%7B%7D&cluster=%7B%7D", ErrorCode::duplicate_key, "appears twice"},
      {"#v=1&node=dgx-h100&cluster=%7B%7D", ErrorCode::duplicate_key, "other cluster keys"},
      {"#v=1&groups=dgx-a100:1&groups=dgx-h100:1", ErrorCode::duplicate_key, "appears twice"},
      // Numbers written plainly: no spaces, plus signs, hex, infinities.
      {"#v=1&tp=%202", ErrorCode::type_error, "is not a valid value"},
      {"#v=1&tp=%2B2", ErrorCode::type_error, "is not a valid value"},
      {"#v=1&tokens=0x10", ErrorCode::type_error, "is not a valid value"},
      {"#v=1&tokens=inf", ErrorCode::type_error, "is not a valid value"},
      {"#v=1&price=1e", ErrorCode::type_error, "is not a valid value"},
      // Text is UTF-8 (a JSON string must be), and messages never echo raw bytes.
      {"#v=1&name=%FF%FE", ErrorCode::parse_error, "not UTF-8 text"},
      {"#v=1&model=%C0%AF", ErrorCode::parse_error, "not UTF-8 text"},
      {"#v=1&name=%ED%A0%80", ErrorCode::parse_error, "not UTF-8 text"},  // a surrogate
      {"#v=1&evil%0Aerror=1", ErrorCode::unknown_key, "unknown key 'evil%0Aerror'"},
      {"#v=7", ErrorCode::unsupported, "format version 7"},
  };
  for (const auto& c : cases) {
    auto r = scenario_from_link(c.url);
    ASSERT_FALSE(r.ok()) << c.url;
    EXPECT_EQ(r.error().code, c.code) << c.url << " -> " << r.error().message;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.url << " -> " << r.error().message;
    EXPECT_EQ(r.error().message.find('\n'), std::string::npos) << c.url;
  }
  // Plain numbers, non-ASCII text and exponents still read.
  auto ok = scenario_from_link("#v=1&model=llama3-8b&tokens=1.5e12&price=-0&name=K%C3%BCche");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->scenario["name"], "K\u00fcche");
  EXPECT_DOUBLE_EQ(ok->page["tokens"].get<double>(), 1.5e12);
}

TEST(Link, KeysALinkCannotCarryAreErrors) {
  auto r = scenario_to_link({Json::parse(R"({"model": "x", "plan": {"teepee": 2}})")}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("plan.teepee"), std::string::npos);
}

}  // namespace
}  // namespace stepcast
