// Scenario links: round trips, defaults left out, old formats still open, untrusted input refused.
#include <gtest/gtest.h>

#include "stepcast/report.h"
#include "stepcast/rule_ids.h"
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
            "http://localhost:8080/#v=3&model=llama3-70b&node=dgx-h100&nodes=8&tp=8&pp=4&dp=2"
            "&gbs=512&sp=1&rc=selective&do=1&seq=4096&tokens=1000000000000&price=2.5&end");
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
  // A profile's flag set against the profile travels (dummy_wgrads false on megatron-core:
  // dwg=0), as does the allocator's setting (xs=1), and reads back to the same memory.
  Json te1 = Json::parse(kScenario);
  te1["plan"]["dummy_wgrads"] = false;
  te1["plan"]["expandable_segments"] = true;
  auto old = scenario_to_link(LinkDocument{te1, Json::object()}, "https://example.org/");
  ASSERT_TRUE(old.ok());
  EXPECT_NE(old->find("&xs=1&dwg=0"), std::string::npos) << *old;
  auto te1_back = scenario_from_link(*old);
  ASSERT_TRUE(te1_back.ok()) << te1_back.error().message;
  const Report c = estimate(test::scenario(te1_back->scenario.dump()));
  EXPECT_FALSE(c.plan.dummy_wgrads);
  EXPECT_TRUE(c.plan.expandable_segments);
  EXPECT_EQ(c.stages[0].memory.wgrad_dummies, 0);
}

// The page's address holds comparison pins after the plan's link (web/src/app/address.js:
// "#v=3&...&end#compare=...&compare=..."), past the link's own limit where there are many: the
// CLI reads the plan and leaves the pins to the page.
TEST(Link, ThePagesComparisonPinsAreNotTheScenario) {
  auto link = scenario_to_link(LinkDocument{Json::parse(kScenario), Json::object()},
                               "https://example.org/");
  ASSERT_TRUE(link.ok());
  std::string pins;
  for (int i = 0; i < 4; ++i) pins += (i ? "&compare=" : "#compare=") + std::string(3000, 'x');
  auto read = scenario_from_link(*link + pins);
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->scenario, scenario_from_link(*link)->scenario);
  // A cut link is still incomplete with pins after it.
  const std::string cut = link->substr(0, link->find("&end"));
  EXPECT_FALSE(scenario_from_link(cut + pins).ok());
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
  EXPECT_EQ(*link, "#v=3&model=llama3-8b&groups=dgx-a100:1,dgx-h100:1&igl=roce-100g&tp=8&pp=2"
                   "&gbs=64&stages=0:auto,1:auto&seq=4096&end");
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
  // Format 1 read the larger sharding of zero_stage and distributed_optimizer; today's reader
  // refuses the two stated apart (optimizer_sharding), so an old link is written as that sharding.
  for (const auto& [flags, stage] : {std::pair{"&zero=2&do=0", 2}, {"&zero=0&do=1", 1},
                                     {"&zero=3", 3}, {"&do=1", 1}, {"", 0}}) {
    auto old = scenario_from_link("#v=1&" + fragment + flags);
    ASSERT_TRUE(old.ok()) << flags;
    const auto read = parse_scenario(old->scenario.dump(), test::catalog());
    ASSERT_TRUE(read.ok()) << flags << ": " << read.error().message;
    EXPECT_EQ(read->plan.effective_zero_stage(), stage) << flags;
    EXPECT_EQ(read->plan.distributed_optimizer, stage >= 1) << flags;
  }
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

// Issue 38 §2: every link Stepcast writes, a reader reads back. Numbers past 2^53 go in the
// shortest text of the same double without a '+' (a fragment reads '+' as a space: "1e+16" came
// back as "1e 16" and the link was refused).
TEST(Link, LargeNumbersAreWrittenSoTheReaderReadsThemBack) {
  for (const double tokens : {1e16, 1.5e17, 123456789012345678.0, 1e21}) {
    LinkDocument doc{Json::parse(kScenario), Json{{"tokens", tokens}}};
    auto link = scenario_to_link(doc, "https://example.org/");
    ASSERT_TRUE(link.ok()) << tokens << ": " << link.error().message;
    EXPECT_EQ(link->find('+'), std::string::npos) << *link;
    auto back = scenario_from_link(*link);
    ASSERT_TRUE(back.ok()) << *link << " -> " << back.error().message;
    EXPECT_EQ(back->page["tokens"].get<double>(), tokens) << *link;
  }
  auto link = scenario_to_link({Json::parse(kScenario), Json{{"tokens", 1e16}}}, "");
  ASSERT_TRUE(link.ok());
  EXPECT_NE(link->find("&tokens=1e16"), std::string::npos) << *link;
  // A fraction keeps its negative exponent.
  auto small = scenario_to_link({Json::parse(kScenario), Json{{"price_per_gpu_hour", 2.5e-7}}}, "");
  ASSERT_TRUE(small.ok());
  EXPECT_NE(small->find("&price=2.5e-07"), std::string::npos) << *small;
}

// Values the reader would refuse are refused when the link is written, with the key and its
// range, so a plan is never shared as a link that opens the default scenario.
TEST(Link, ValuesPastTheReadersLimitsAreRefusedWhenWritten) {
  struct Case {
    Json page;
    const char* message;
  };
  const Case cases[] = {
      {Json{{"tokens", 1e22}}, "tokens=1e+22 must be between 0 and 1e+21"},
      {Json{{"price_per_gpu_hour", 2e6}}, "price=2000000.0 must be between 0 and 1e+06"},
      {Json{{"tokens", -1}}, "tokens=-1 must be between 0 and 1e+21"},
  };
  for (const auto& c : cases) {
    auto r = scenario_to_link({Json::parse(kScenario), c.page}, "https://example.org/");
    ASSERT_FALSE(r.ok()) << c.page.dump() << " -> " << *r;
    EXPECT_EQ(r.error().code, ErrorCode::out_of_range);
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
  // An integer key holding a whole number past the reader's 18 digits is refused too.
  Json big = Json::parse(kScenario);
  big["plan"]["global_batch"] = 1e19;
  auto r = scenario_to_link({big}, "");
  ASSERT_FALSE(r.ok()) << *r;
  EXPECT_NE(r.error().message.find("plan.global_batch=1e+19 cannot be written in a link"),
            std::string::npos)
      << r.error().message;
}

// The base is written before the fragment as it is: a newline would print a second line (a
// forged "error:"), a '#' would start the fragment early.
TEST(Link, BaseWithControlCharactersIsRefused) {
  for (const char* base : {"http://example.org/\nerror: forged", "http://x/\x1b[31m",
                           "http://x/\x7f", "http://x/#v=9&"}) {
    auto r = scenario_to_link({Json::parse(kScenario)}, base);
    ASSERT_FALSE(r.ok()) << base;
    EXPECT_EQ(r.error().path, "base");
    EXPECT_NE(r.error().message.find("the base address"), std::string::npos) << r.error().message;
    for (const char c : r.error().message) EXPECT_GE(static_cast<unsigned char>(c), 0x20);
  }
  EXPECT_TRUE(scenario_to_link({Json::parse(kScenario)}, "https://example.org/a b/").ok());
}

// Names are bounded when read (limits.h: 256 bytes), so a link carries them within the 8,192
// characters a reader takes; a document written by hand past that is refused with its longest
// part named, never written as a link no reader opens.
TEST(Link, NamesAreBoundedAndTheLinkStaysWithinTheReadersLimit) {
  Json named = Json::parse(kScenario);
  named["name"] = std::string(257, 'x');
  const Error e = test::error_of(named.dump());
  EXPECT_EQ(e.code, ErrorCode::out_of_range);
  EXPECT_EQ(e.path, "name");
  EXPECT_NE(e.message.find("name is 257 bytes long; at most 256 are read"), std::string::npos)
      << e.message;
  // 256 bytes of a character percent-encoded in 6 characters each: within the limit.
  std::string umlauts;
  for (int i = 0; i < 128; ++i) umlauts += "\u00fc";
  named["name"] = umlauts;
  ASSERT_TRUE(parse_scenario(named.dump(), test::catalog()).ok());
  auto link = scenario_to_link({named}, "https://example.org/");
  ASSERT_TRUE(link.ok()) << link.error().message;
  EXPECT_LE(link->size(), kMaxLinkLength);
  auto back = scenario_from_link(*link);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->scenario["name"], umlauts);
  // The 9,000-character name of issue 38 made a 9,077-character link.
  named["name"] = std::string(9000, 'n');
  auto r = scenario_to_link({named}, "https://example.org/");
  ASSERT_FALSE(r.ok()) << r->size();
  EXPECT_EQ(r.error().code, ErrorCode::out_of_range);
  EXPECT_NE(r.error().message.find("over the 8192 readers take; its longest part is name (9005 "
                                   "characters)"),
            std::string::npos)
      << r.error().message;
}

// Issue 37 item 9: a link cut when it was copied opened with its tail's keys at their defaults
// (cut after gbs=512: 57.9 s instead of 29.5 s). Format 3 ends with "&end"; without it the link
// is refused as incomplete, with its rule id and where it stops. Format 2 links (no marker) read.
TEST(Link, ACutLinkIsIncomplete) {
  auto link = scenario_to_link({Json::parse(kScenario)}, "https://example.org/");
  ASSERT_TRUE(link.ok());
  ASSERT_TRUE(link->ends_with("&seq=4096&end")) << *link;
  const std::string cut = link->substr(0, link->find("&sp=1"));
  ASSERT_TRUE(cut.ends_with("&gbs=512")) << cut;
  auto r = scenario_from_link(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().rule, Rule::link_incomplete);
  EXPECT_EQ(r.error().values, Json({{"last", "gbs=512"}, {"parts", 8}}));
  EXPECT_EQ(r.error().message,
            "link: this link is incomplete: it stops after 'gbs=512' without the '&end' that "
            "ends every link Stepcast writes; copy the whole link again");
  EXPECT_EQ(to_json(r.error())["error"]["rule"], "link_incomplete");
  // Cut inside the marker, or inside a value: incomplete too.
  for (const size_t keep : {link->size() - 1, link->size() - 3, link->find("&rc=") + 5}) {
    auto part = scenario_from_link(link->substr(0, keep));
    ASSERT_FALSE(part.ok()) << link->substr(0, keep);
    EXPECT_EQ(part.error().rule, Rule::link_incomplete) << part.error().message;
  }
  // The same pairs in format 2 read as they always did; the marker is format 3's alone, and last.
  const std::string v2 = "#v=2" + cut.substr(cut.find("&model="));
  auto old = scenario_from_link(v2);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->scenario["plan"]["global_batch"], 512);
  EXPECT_FALSE(scenario_from_link(v2 + "&end").ok());
  auto twice = scenario_from_link(cut + "&end&end");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("comes last, once"), std::string::npos);
  // A whole link reads back.
  auto whole = scenario_from_link(*link);
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->scenario["plan"]["global_batch"], 512);
}

TEST(Link, KeysALinkCannotCarryAreErrors) {
  auto r = scenario_to_link({Json::parse(R"({"model": "x", "plan": {"teepee": 2}})")}, "");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("plan.teepee"), std::string::npos);
}

}  // namespace
}  // namespace stepcast
