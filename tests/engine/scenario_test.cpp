// Scenario parsing: defaults, presets and every bad-input rule, each error naming the field, the
// value and the rule.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace stepcast {
namespace {

using test::doc;

TEST(Scenario, ContractExampleParses) {
  const Scenario s = test::scenario(doc(R"({"tp": 8, "pp": 4, "dp": 2, "vpp": 1,
      "micro_batch": 1, "global_batch": 512, "sequence_parallel": true, "recompute": "selective",
      "distributed_optimizer": true, "precision": "bf16"})", R"("llama3-70b")",
      R"({"node": "dgx-h100", "nodes": 8})", R"(, "seq_len": 4096)"));
  EXPECT_EQ(s.model.seq_len, 4096);  // top-level seq_len overrides the preset's 8192
  EXPECT_EQ(s.cluster.gpus(), 64);
  EXPECT_EQ(s.cluster.groups[0].gpu.id, "h100-sxm5-80gb");
  EXPECT_EQ(s.plan.micro_batches(), 256);
  EXPECT_EQ(s.plan.effective_zero_stage(), 1);
}

// zero_stage and distributed_optimizer say one thing twice: the one a plan states sets the other
// over its framework profile's default (issue 38: zero_stage 0 on megatron-core ran ZeRO-1, the
// profile's distributed optimizer; distributed_optimizer false on DeepSpeed ran ZeRO-3).
TEST(Scenario, StatedShardingSetsTheOtherKey) {
  struct Case {
    const char* plan;
    int stage;
  };
  for (const Case& c : {Case{R"("framework": "megatron-core", "zero_stage": 0)", 0},
                        Case{R"("framework": "megatron-core")", 1},
                        Case{R"("framework": "deepspeed", "distributed_optimizer": false)", 0},
                        Case{R"("framework": "deepspeed", "distributed_optimizer": true)", 3},
                        Case{R"("framework": "deepspeed")", 3},
                        Case{R"("framework": "megatron-lm-2021", "distributed_optimizer": true)", 1},
                        Case{R"("framework": "megatron-lm-2021", "zero_stage": 2)", 2}}) {
    const Scenario s = test::scenario(
        doc(fmt::format(R"({{"tp": 8, "global_batch": 64, {}}})", c.plan), R"("llama3-8b")",
            R"({"node": "dgx-h100", "nodes": 1})"));
    EXPECT_EQ(s.plan.effective_zero_stage(), c.stage) << c.plan;
    EXPECT_EQ(s.plan.effective().distributed_optimizer, c.stage >= 1) << c.plan;
  }
}

TEST(Scenario, DataParallelIsDerivedWhenOmitted) {
  const Scenario s = test::scenario(doc(R"({"tp": 8, "pp": 2, "global_batch": 64})"));
  EXPECT_EQ(s.plan.dp, 4);
  EXPECT_EQ(s.plan.micro_batch, 1);
  EXPECT_EQ(s.plan.recompute, Recompute::none);
  EXPECT_EQ(s.plan.precision, Precision::bf16);
}

TEST(Scenario, CustomModelAndExplicitCluster) {
  const Scenario s = test::scenario(doc(R"({"tp": 2, "global_batch": 16})",
      R"({"name": "tiny", "layers": 4, "hidden": 512, "heads": 8, "kv_heads": 8,
          "ffn_hidden": 2048, "vocab": 1000, "seq_len": 256, "ffn_type": "gelu",
          "position": "learned", "tied_embeddings": true})",
      R"({"gpu": "a100-sxm4-80gb", "gpus_per_node": 4, "nodes": 2, "intra_node_link": "nvlink3",
          "inter_node_link": "ib-hdr", "nics_per_node": 4})"));
  EXPECT_EQ(s.model.name, "tiny");
  EXPECT_EQ(s.cluster.gpus(), 8);
  EXPECT_EQ(s.plan.dp, 4);
}

struct BadCase {
  const char* name;
  std::string json;
  ErrorCode code;
  const char* path;
  const char* message;  // a substring the message must contain
};

// Name the case instead of dumping its bytes when a test fails.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, GivesOneClearError) {
  const BadCase& c = GetParam();
  const Error e = test::error_of(c.json);
  EXPECT_EQ(e.code, c.code) << e.message;
  EXPECT_EQ(e.path, c.path) << e.message;
  EXPECT_NE(e.message.find(c.message), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find('\n'), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, BadInput,
    ::testing::Values(
        BadCase{"not_json", "{\"model\": ", ErrorCode::parse_error, "", "not valid JSON"},
        BadCase{"not_object", "[1, 2]", ErrorCode::type_error, "", "must be an object"},
        BadCase{"unknown_top_key", doc(R"({"global_batch": 8})", R"("llama3-70b")",
                                       R"({"node": "dgx-h100", "nodes": 8})", R"(, "seqlen": 1)"),
                ErrorCode::unknown_key, "seqlen", "seqlen is not a known key"},
        BadCase{"unknown_plan_key", doc(R"({"tp": 8, "global_batch": 8, "tensor_parallel": 2})"),
                ErrorCode::unknown_key, "plan.tensor_parallel", "not a known key"},
        BadCase{"missing_plan", R"({"model": "llama3-70b", "cluster": {"node": "dgx-h100",
                "nodes": 1}})", ErrorCode::missing_key, "plan", "plan is required"},
        BadCase{"missing_global_batch", doc(R"({"tp": 8})"), ErrorCode::missing_key,
                "plan.global_batch", "plan.global_batch is required"},
        BadCase{"unknown_model", doc(R"({"global_batch": 8})", R"("gpt-5")"),
                ErrorCode::unknown_preset, "model", "model=\"gpt-5\" is not a model preset"},
        BadCase{"unknown_node", doc(R"({"global_batch": 8})", R"("llama3-70b")",
                                    R"({"node": "dgx-z9", "nodes": 1})"),
                ErrorCode::unknown_preset, "cluster.node", "\"dgx-z9\" is not a node preset"},
        BadCase{"unknown_link", doc(R"({"global_batch": 8})", R"("llama3-8b")",
                                    R"({"gpu": "h100-sxm5-80gb", "gpus_per_node": 8, "nodes": 1,
                                        "intra_node_link": "warp", "inter_node_link": "ib-ndr"})"),
                ErrorCode::unknown_preset, "cluster.intra_node_link", "is not a link preset"},
        BadCase{"gpu_count", doc(R"({"tp": 8, "pp": 4, "dp": 4, "global_batch": 512})"),
                ErrorCode::invalid_plan, "plan.dp",
                "tp*pp*cp*dp=8*4*1*4=128 must equal the cluster's GPU count 64"},
        BadCase{"tp_heads", doc(R"({"tp": 3, "dp": 1, "global_batch": 8})", R"("llama3-70b")",
                                R"({"gpu": "h100-sxm5-80gb", "gpus_per_node": 3, "nodes": 1,
                                    "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"})"),
                ErrorCode::invalid_plan, "plan.tp", "plan.tp=3 must divide model.heads=64"},
        BadCase{"tp_kv_heads", doc(R"({"tp": 16, "global_batch": 8})", R"("llama3-70b")",
                                   R"({"node": "dgx-h100", "nodes": 2})"),
                ErrorCode::invalid_plan, "plan.tp", "plan.tp=16 must divide model.kv_heads=8"},
        BadCase{"layers_pp", doc(R"({"tp": 8, "pp": 3, "dp": 1, "global_batch": 8})",
                                 R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 3})"),
                ErrorCode::invalid_plan, "plan.pp",
                "model.layers=80 must be divisible by plan.pp*plan.vpp=3*1=3"},
        BadCase{"layers_vpp", doc(R"({"tp": 8, "pp": 4, "vpp": 3, "global_batch": 8})"),
                ErrorCode::invalid_plan, "plan.vpp", "plan.pp*plan.vpp=4*3=12"},
        BadCase{"vpp_without_pp", doc(R"({"tp": 8, "pp": 1, "vpp": 2, "global_batch": 8})"),
                ErrorCode::invalid_plan, "plan.vpp", "plan.vpp=2 needs plan.pp>1"},
        BadCase{"global_batch", doc(R"({"tp": 8, "pp": 4, "dp": 2, "micro_batch": 2,
                                        "global_batch": 6})"),
                ErrorCode::invalid_plan, "plan.global_batch",
                "plan.global_batch=6 must be divisible by plan.micro_batch*plan.dp=2*2=4"},
        BadCase{"zero_tp", doc(R"({"tp": 0, "global_batch": 8})"), ErrorCode::out_of_range,
                "plan.tp", "plan.tp=0 must be between 1"},
        BadCase{"negative_micro_batch", doc(R"({"micro_batch": -1, "global_batch": 8})"),
                ErrorCode::out_of_range, "plan.micro_batch", "plan.micro_batch=-1 must be between 1"},
        BadCase{"zero_layers", doc(R"({"global_batch": 8})",
                                   R"({"layers": 0, "hidden": 64, "heads": 1, "ffn_hidden": 64,
                                       "vocab": 10, "seq_len": 8, "ffn_type": "gelu",
                                       "position": "rope", "tied_embeddings": false})"),
                ErrorCode::out_of_range, "model.layers", "model.layers=0 must be between 1"},
        BadCase{"string_tp", doc(R"({"tp": "8", "global_batch": 8})"), ErrorCode::type_error,
                "plan.tp", "plan.tp=\"8\" must be an integer"},
        BadCase{"fractional_batch", doc(R"({"global_batch": 8.5})"), ErrorCode::type_error,
                "plan.global_batch", "must be an integer"},
        BadCase{"bad_recompute", doc(R"({"global_batch": 8, "recompute": "some"})"),
                ErrorCode::out_of_range, "plan.recompute",
                "plan.recompute=\"some\" must be one of none|selective|full"},
        BadCase{"bad_ffn_type", doc(R"({"global_batch": 8})",
                                    R"({"layers": 2, "hidden": 64, "heads": 1, "ffn_hidden": 64,
                                        "vocab": 10, "seq_len": 8, "ffn_type": "swish",
                                        "position": "rope", "tied_embeddings": false})"),
                ErrorCode::out_of_range, "model.ffn_type", "must be one of gelu|relu"},
        BadCase{"precision_unsupported",
                doc(R"({"global_batch": 8, "precision": "bf16"})", R"("gpt3-1.3b")",
                    R"({"node": "dgx-1-v100", "nodes": 1})"),
                ErrorCode::invalid_plan, "plan.precision",
                "plan.precision=bf16 is not supported by"},
        BadCase{"cp_sequence", doc(R"({"tp": 8, "cp": 8, "global_batch": 8})", R"("llama3-70b")",
                                   R"({"node": "dgx-h100", "nodes": 8})", R"(, "seq_len": 1000)"),
                ErrorCode::invalid_plan, "plan.cp", "seq_len=1000 must be divisible by 2*plan.cp=16"},
        BadCase{"zero_stage_range", doc(R"({"global_batch": 8, "zero_stage": 4})"),
                ErrorCode::out_of_range, "plan.zero_stage", "between 0 and 3"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace stepcast
