// torchtitan job configs in and out (torchtitan_config.h): each TOML key as torchtitan's JobConfig
// reads it (pytorch/torchtitan 4a950eaa, torchtitan/config/job_config.py and distributed/
// pipeline_parallel.py), what the engine does not model listed, bad configs refused naming the
// key, and a plan written out reads back as the same plan.
#include <gtest/gtest.h>

#include "stepcast/torchtitan_config.h"
#include "test_util.h"

namespace stepcast {
namespace {

// The shape of torchtitan's own llama3_70b.toml ("a preset for 64 A100 GPUs"): FSDP over the
// ranks TP 8 leaves, full activation checkpointing, 8 sequences of 8,192 tokens a rank.
const char* kLlama70b = R"(
[job]
description = "Llama 3 70B training"
[model]
name = "llama3"
flavor = "70B"
[optimizer]
name = "AdamW"
lr = 1.5e-4
[training]
local_batch_size = 8
seq_len = 8192
steps = 1000
[parallelism]
data_parallel_replicate_degree = 1
data_parallel_shard_degree = -1
tensor_parallel_degree = 8  # 8-way TP
pipeline_parallel_degree = 1
[activation_checkpoint]
mode = "full"
)";

TorchtitanImport imported(const std::string& toml, std::string node = "dgx-a100", int nodes = 0) {
  auto r = scenario_from_torchtitan_toml(toml, test::catalog(), {node, nodes});
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : TorchtitanImport{};
}

Error error_of(const std::string& toml, int nodes = 0) {
  auto r = scenario_from_torchtitan_toml(toml, test::catalog(), {"dgx-h100", nodes});
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.error();
}

TEST(Torchtitan, TheLlama70bConfigOn64A100) {
  const TorchtitanImport t = imported(kLlama70b, "dgx-a100", 8);
  const Json& plan = t.scenario["plan"];
  EXPECT_EQ(t.scenario["model"], "llama3-70b");
  EXPECT_EQ(t.scenario["cluster"]["nodes"], 8);
  EXPECT_EQ(t.scenario["seq_len"], 8192);
  EXPECT_EQ(plan["framework"], "torchtitan");
  EXPECT_EQ(plan["tp"], 8);
  EXPECT_EQ(plan["dp"], 8);  // shard -1: 64 / 8
  EXPECT_EQ(plan["global_batch"], 64);  // global_batch_size -1: 8 a rank x 8 ranks
  EXPECT_EQ(plan["micro_batch"], 8);
  EXPECT_EQ(plan["recompute"], "full");
  EXPECT_EQ(plan["precision"], "bf16");
  EXPECT_FALSE(plan.contains("zero_stage"));  // the profile's FSDP2: ZeRO-3
  const auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  EXPECT_TRUE(has(t.ignored, "optimizer.lr = 0.00015"));
  EXPECT_FALSE(has(t.ignored, "optimizer.name = \"AdamW\""));  // read: the engine's adam
  EXPECT_TRUE(has(t.ignored, "training.steps = 1000"));
  EXPECT_FALSE(has(t.ignored, "parallelism.tensor_parallel_degree = 8"));
  // It estimates as torchtitan runs it: ZeRO-3 over the 8 data-parallel ranks.
  const Scenario s = test::scenario(t.scenario.dump());
  EXPECT_EQ(s.plan.effective().effective_zero_stage(), 3);
  EXPECT_GT(estimate(s).iteration_time_s, 0);
}

TEST(Torchtitan, DegreesFillTheNodes) {
  // Every degree given: 2 x 8 x 4 = 64 ranks, 8 nodes of 8.
  const std::string all = R"([model]
name = "llama3"
flavor = "8B"
[parallelism]
data_parallel_replicate_degree = 2
data_parallel_shard_degree = 4
tensor_parallel_degree = 8
)";
  const TorchtitanImport hsdp = imported(all, "dgx-h100");
  EXPECT_EQ(hsdp.scenario["cluster"]["nodes"], 8);
  EXPECT_EQ(hsdp.scenario["plan"]["dp"], 8);
  ASSERT_FALSE(hsdp.notes.empty());
  EXPECT_NE(hsdp.notes.front().find("HSDP (replicate 2 x shard 4)"), std::string::npos);
  // Shard 1: DDP, no sharding.
  std::string ddp = all;
  ddp.replace(ddp.find("shard_degree = 4"), 16, "shard_degree = 1");
  ddp.replace(ddp.find("replicate_degree = 2"), 20, "replicate_degree = 8");
  EXPECT_EQ(imported(ddp, "dgx-h100").scenario["plan"]["zero_stage"], 0);
  // -1 needs the node count; degrees that do not make the nodes' GPUs are refused.
  EXPECT_EQ(error_of(kLlama70b, 0).path, "parallelism.data_parallel_shard_degree");
  std::string three = all;
  three.replace(three.find("shard_degree = 4"), 16, "shard_degree = 3");
  const Error e = error_of(three, 8);
  EXPECT_EQ(e.code, ErrorCode::out_of_range);
  EXPECT_NE(e.message.find("make 48 ranks where 8 nodes hold 64 GPUs"), std::string::npos)
      << e.message;
}

TEST(Torchtitan, PipelineStagesAsTorchtitanSplitsThem) {
  // Llama 3 8B's 32 layers plus the embedding and the output as one layer each (first/last
  // stage less layers, 1 by default): 34 / 9 -> 4 stages over PP 2: 2 a rank.
  const std::string pp = R"([model]
name = "llama3"
flavor = "8B"
[training]
local_batch_size = 16
[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_layers_per_stage = 9
pipeline_parallel_microbatch_size = 2
data_parallel_shard_degree = 4
)";
  const Json plan = imported(pp, "dgx-h100").scenario["plan"];
  EXPECT_EQ(plan["schedule"], "interleaved");
  EXPECT_EQ(plan["vpp"], 2);
  EXPECT_EQ(plan["micro_batch"], 2);
  EXPECT_EQ(plan["global_batch"], 64);  // 16 a rank x DP 4
  EXPECT_EQ(plan["embedding_in_split"], true);
  // 34 / 17 = 2 stages: one a rank, which a looped schedule refuses (as torchtitan does).
  std::string one = pp;
  one.replace(one.find("layers_per_stage = 9"), 20, "layers_per_stage = 17");
  EXPECT_EQ(error_of(one).path, "parallelism.pipeline_parallel_layers_per_stage");
  // No layers_per_stage: 2 stages a rank for a looped schedule.
  std::string two = pp;
  two.erase(two.find("pipeline_parallel_layers_per_stage = 9\n"), 39);
  EXPECT_EQ(imported(two, "dgx-h100").scenario["plan"]["vpp"], 2);
  // ZBVZeroBubble is ZB-V and DualPipeV DualPipeV, two stages a rank; a schedule the engine does
  // not run yet says so, and one torchtitan does not have.
  std::string zbv = pp;
  zbv.replace(zbv.find("\"Interleaved1F1B\""), 17, "\"ZBVZeroBubble\"");
  EXPECT_EQ(imported(zbv, "dgx-h100").scenario["plan"]["schedule"], "zbv");
  EXPECT_EQ(imported(zbv, "dgx-h100").scenario["plan"]["vpp"], 2);
  std::string dualpipev = pp;
  dualpipev.replace(dualpipev.find("\"Interleaved1F1B\""), 17, "\"DualPipeV\"");
  EXPECT_EQ(imported(dualpipev, "dgx-h100").scenario["plan"]["schedule"], "dualpipev");
  EXPECT_EQ(imported(dualpipev, "dgx-h100").scenario["plan"]["vpp"], 2);
  std::string looped_bfs = pp;
  looped_bfs.replace(looped_bfs.find("\"Interleaved1F1B\""), 17, "\"LoopedBFS\"");
  EXPECT_EQ(error_of(looped_bfs).code, ErrorCode::unsupported);
  std::string bad = pp;
  bad.replace(bad.find("\"Interleaved1F1B\""), 17, "\"Backwards\"");
  EXPECT_EQ(error_of(bad).path, "parallelism.pipeline_parallel_schedule");
}

TEST(Torchtitan, CheckpointingAndPrecision) {
  // torchtitan's default: selective, every 2nd layer checkpointed whole: 16 of 32 per chunk.
  const std::string base = R"([model]
name = "llama3"
flavor = "8B"
converters = ["quantize.linear.float8"]
[parallelism]
data_parallel_shard_degree = 8
)";
  const TorchtitanImport t = imported(base, "dgx-h100");
  EXPECT_EQ(t.scenario["plan"]["recompute"], "full");
  EXPECT_EQ(t.scenario["plan"]["recompute_method"], "block");
  EXPECT_EQ(t.scenario["plan"]["recompute_num_layers"], 16);
  EXPECT_EQ(t.scenario["plan"]["precision"], "fp8");
  const std::string op = base + "[activation_checkpoint]\nselective_ac_option = \"op\"\n";
  EXPECT_EQ(imported(op, "dgx-h100").scenario["plan"]["recompute"], "selective");
  const std::string budget = base + "[activation_checkpoint]\nmode = \"memory_budget\"\n";
  EXPECT_EQ(error_of(budget).path, "activation_checkpoint.mode");
  const std::string word = base + "[activation_checkpoint]\nselective_ac_option = \"two\"\n";
  EXPECT_EQ(error_of(word).path, "activation_checkpoint.selective_ac_option");
}

TEST(Torchtitan, BadConfigsNameTheKey) {
  Error e = error_of("[model]\nname = \"llama3\n");
  EXPECT_EQ(e.code, ErrorCode::parse_error);
  EXPECT_NE(e.message.find("line 2"), std::string::npos) << e.message;
  e = error_of("[model]\nname = \"llama3\"\nflavor = \"13B\"\n");
  EXPECT_EQ(e.path, "model.flavor");
  EXPECT_NE(e.message.find("llama3 8B, llama3 70B"), std::string::npos) << e.message;
  EXPECT_EQ(error_of("[model]\nname = \"llama3\"\n").code, ErrorCode::missing_key);
  e = error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
               "tensor_parallel_degree = \"8\"\n");
  EXPECT_EQ(e.code, ErrorCode::type_error);
  EXPECT_EQ(e.path, "parallelism.tensor_parallel_degree");
  e = error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[parallelism]\n"
               "tensor_parallel_degree = 0\n");
  EXPECT_EQ(e.path, "parallelism.tensor_parallel_degree");
  // torchtitan builds Adam and AdamW only; its own error is NotImplementedError.
  e = error_of("[model]\nname = \"llama3\"\nflavor = \"8B\"\n[optimizer]\nname = \"SGD\"\n", 1);
  EXPECT_EQ(e.path, "optimizer.name");
  EXPECT_NE(e.message.find("Adam and AdamW only"), std::string::npos) << e.message;
}

// Text beyond ASCII where TOML allows it (comments, strings) imports; where toml++ 3.3.0 would
// reach unreachable code (a Latin letter after a multi-line string's line-ending backslash, or
// inside a value: the fuzzer's "2C\u0131#") the parse reports an error instead. The checked build
// (UBSan) is the test that matters: there undefined behaviour fails it.
TEST(Torchtitan, TextBeyondAsciiWhereTomlAllowsIt) {
  const std::string model = "[model]\nname = \"llama3\"\nflavor = \"8B\"\n";
  const TorchtitanImport ok = imported(
      "# Konfiguration von Jos\u00e9 \u00a7 2\n[job]\ndescription = \"\"\"\\\n  \u00a7 \u0131\"\"\"\n" +
      model + "[training]\nseq_len = 4096  # \u00fcber\n",
      "dgx-h100", 1);
  EXPECT_EQ(ok.scenario.value("seq_len", int64_t{0}), 4096);
  EXPECT_EQ(error_of("2C\u0131#").code, ErrorCode::parse_error);
  EXPECT_EQ(error_of(model + "[training]\nseq_len = 40\u0131\n").code, ErrorCode::parse_error);
  // The other unhandled chunks of toml++'s table: U+2C5E..U+3057 and U+FB26..U+FEFE.
  EXPECT_EQ(error_of("\n[channels\ufe7f; ").code, ErrorCode::parse_error);
  EXPECT_EQ(error_of(model + "[training]\nseq_len = 40\u3001\n").code, ErrorCode::parse_error);
  EXPECT_EQ(error_of(model + "[training]\nseq_len = 40\u2e80\n").code, ErrorCode::parse_error);
  const Error flavor = error_of("[model]\nname = \"llama3\"\nflavor = \"8B\u0131\"\n");
  EXPECT_EQ(flavor.path, "model.flavor");
  EXPECT_NE(flavor.message.find("8B\uFFFD"), std::string::npos) << flavor.message;
}

// A plan written out and read back: the same plan.
TEST(Torchtitan, ExportReadsBackAsThePlan) {
  for (const char* json : {
           R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100", "nodes": 8}, "seq_len": 8192,
               "plan": {"framework": "torchtitan", "tp": 8, "global_batch": 64, "micro_batch": 2,
                        "recompute": "full"}})",
           R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "nodes": 4},
               "seq_len": 4096, "plan": {"framework": "torchtitan", "tp": 2, "pp": 2,
               "ep": 8, "etp": 1, "global_batch": 128, "micro_batch": 1,
               "recompute": "none", "precision": "fp8"}})"}) {
    SCOPED_TRACE(json);
    const Scenario s = test::scenario(json);
    const std::string toml = export_torchtitan_toml(s);
    const TorchtitanImport back =
        imported(toml, "dgx-h100", s.cluster.groups.front().nodes);
    const Scenario t = test::scenario(back.scenario.dump());
    const Plan a = s.plan.effective(), b = t.plan.effective();
    EXPECT_EQ(b.tp, a.tp);
    EXPECT_EQ(b.pp, a.pp);
    EXPECT_EQ(b.dp, a.dp);
    EXPECT_EQ(b.ep, a.ep);
    EXPECT_EQ(b.micro_batch, a.micro_batch);
    EXPECT_EQ(b.global_batch, a.global_batch);
    EXPECT_EQ(b.recompute, a.recompute);
    EXPECT_EQ(b.precision, a.precision);
    EXPECT_EQ(t.model.id, s.model.id);
    EXPECT_EQ(estimate(t).iteration_time_s, estimate(s).iteration_time_s) << toml;
  }
}

}  // namespace
}  // namespace stepcast
