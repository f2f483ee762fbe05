// The communication census against counts derived by hand from Megatron-LM's source (the files
// census.h names), for a worked example: Llama-2-7B-like, t=4, p=2, d=2, m=16, b=1, s=4096.
#include <gtest/gtest.h>

#include "test_util.h"

namespace stepcast {
namespace {

struct Counts {
  int64_t all_reduce = 0, all_gather = 0, reduce_scatter = 0, send_recv = 0;
};

// Counts of the per-layer TP collectives (entries not about embedding, head, loss or data).
Counts layer_tp_counts(const std::vector<CommOp>& ops) {
  Counts c;
  for (const auto& op : ops) {
    if (op.group != CommGroup::tp || op.phase == Phase::gradient_sync) continue;
    const bool layer = op.what.find("embedding") == std::string::npos &&
                       op.what.find("output layer") == std::string::npos &&
                       op.what.find("cross-entropy") == std::string::npos &&
                       op.what.find("batch") == std::string::npos;
    if (!layer) continue;
    if (op.kind == CollectiveKind::all_reduce) c.all_reduce += op.count;
    if (op.kind == CollectiveKind::all_gather) c.all_gather += op.count;
    if (op.kind == CollectiveKind::reduce_scatter) c.reduce_scatter += op.count;
  }
  return c;
}

class CensusTest : public ::testing::Test {
 protected:
  std::vector<CommOp> census(bool sp, Recompute rc, bool dist_opt = false, int vpp = 1) {
    plan.tp = 4;
    plan.pp = 2;
    plan.dp = 2;
    plan.vpp = vpp;
    plan.micro_batch = 1;
    plan.global_batch = 32;  // m = 32 / (1 x 2) = 16
    plan.sequence_parallel = sp;
    plan.recompute = rc;
    plan.distributed_optimizer = dist_opt;
    ClusterGroup c;
    c.gpus_per_node = 8;
    c.nodes = 2;
    c.nics_per_node = 8;
    c.intra_node_link = *builtin_catalog().find_link("nvlink4");
    c.inter_node_link = *builtin_catalog().find_link("ib-ndr");
    StageShape st;
    st.index = 1;
    st.layers = 16;
    st.last = true;
    // P_rank ~ 842 M: 16 layers x 202.4 M / 4 + the 32000 x 4096 / 4 output layer.
    st.parameters = 842.4e6;
    st.layer_parameters = 50.6e6;
    return stage_census(model, plan, st, stage_paths(plan, c));
  }
  ModelSpec model = test::llama2_7b_like();
  Plan plan;
};

TEST_F(CensusTest, TensorParallelWithoutSequenceParallel) {
  const Counts c = layer_tp_counts(census(false, Recompute::none));
  EXPECT_EQ(c.all_reduce, 1024);  // 4 per layer per micro-batch: 4 x 16 x 16
  EXPECT_EQ(c.all_gather + c.reduce_scatter, 0);
}

TEST_F(CensusTest, FullRecomputeAddsTwoAllReducesPerLayer) {
  EXPECT_EQ(layer_tp_counts(census(false, Recompute::full)).all_reduce, 1536);
  // Selective recompute re-runs only the attention core: no extra communication.
  EXPECT_EQ(layer_tp_counts(census(false, Recompute::selective)).all_reduce, 1024);
}

TEST_F(CensusTest, SequenceParallelUsesGatherAndScatter) {
  Counts c = layer_tp_counts(census(true, Recompute::none));
  EXPECT_EQ(c.all_gather, 1536);  // 2 forward + 4 backward per layer
  EXPECT_EQ(c.reduce_scatter, 1024);
  EXPECT_EQ(c.all_reduce, 0);
  c = layer_tp_counts(census(true, Recompute::full));
  EXPECT_EQ(c.all_gather, 2048);
  EXPECT_EQ(c.reduce_scatter, 1536);
}

TEST_F(CensusTest, TensorMessagesAreFullActivations) {
  for (const auto& op : census(false, Recompute::none))
    if (op.group == CommGroup::tp && op.kind == CollectiveKind::all_reduce &&
        op.what.rfind("row-parallel", 0) == 0)
      EXPECT_DOUBLE_EQ(op.bytes, 32.0 * 1024 * 1024);  // M = b s h a = 4096 x 4096 x 2
}

TEST_F(CensusTest, PipelineMessagesPerBoundary) {
  // Edge stage of 1F1B: m activation messages one way and m gradients the other; with SP the
  // message is the 1/t sequence shard (8 MiB instead of 32 MiB).
  for (bool sp : {false, true}) {
    int64_t messages = 0;
    for (const auto& op : census(sp, Recompute::none))
      if (op.group == CommGroup::pp) {
        messages += op.count;
        EXPECT_DOUBLE_EQ(op.bytes, (sp ? 8.0 : 32.0) * 1024 * 1024);
      }
    EXPECT_EQ(messages, 32);
  }
  // Interleaved with v=2, an edge rank sends and receives 4vm - 2m = 96 messages.
  int64_t messages = 0;
  for (const auto& op : census(false, Recompute::none, false, 2))
    if (op.group == CommGroup::pp) messages += op.count;
  EXPECT_EQ(messages, 96);
}

TEST_F(CensusTest, DataParallelBuckets) {
  // Bucket = max(40 M, 1 M x 2) parameters -> floor(842.4 / 40) + 1 = 22 buckets of fp32 grads.
  EXPECT_EQ(dp_buckets(842.4e6, [] { Plan p; p.dp = 2; return p; }()), 22);
  int64_t ar = 0;
  double bytes = 0;
  for (const auto& op : census(false, Recompute::none))
    if (op.group == CommGroup::dp && op.kind == CollectiveKind::all_reduce &&
        op.phase == Phase::gradient_sync) {
      ar += op.count;
      bytes += op.bytes * op.count;
    }
  EXPECT_EQ(ar, 22);
  EXPECT_DOUBLE_EQ(bytes, 842.4e6 * 4);
  // Distributed optimizer: 22 reduce-scatters of fp32 grads and 22 all-gathers of bf16 params.
  int64_t rs = 0, ag = 0;
  for (const auto& op : census(false, Recompute::none, true)) {
    if (op.group != CommGroup::dp) continue;
    if (op.kind == CollectiveKind::reduce_scatter) rs += op.count;
    if (op.kind == CollectiveKind::all_gather) {
      ag += op.count;
      EXPECT_DOUBLE_EQ(op.bytes, 842.4e6 / 22 * 2);
    }
  }
  EXPECT_EQ(rs, 22);
  EXPECT_EQ(ag, 22);
}

TEST(Census, TiedEmbeddingsAndContextParallel) {
  // GPT-3 175B with pp=8 (tied): first and last stage all-reduce the (V/t) x h word-embedding
  // grads; interior stages do not. CP=2 adds a K/V ring per layer.
  const Scenario s = test::scenario(R"({"model": "gpt3-175b", "cluster": {"node": "dgx-a100",
    "nodes": 16}, "plan": {"tp": 8, "pp": 8, "cp": 2, "micro_batch": 1, "global_batch": 64}})");
  const Report r = estimate(s);
  auto count = [](const StageReport& st, CommGroup g) {
    int64_t n = 0;
    for (const auto& op : st.communication)
      if (op.group == g) n += op.count;
    return n;
  };
  EXPECT_EQ(count(r.stages[0], CommGroup::embedding), 1);
  EXPECT_EQ(count(r.stages[7], CommGroup::embedding), 1);
  EXPECT_EQ(count(r.stages[3], CommGroup::embedding), 0);
  // dp = 128 / (8 x 8 x 2) = 1, so m = 64; 12 layers per stage; forward 1 + backward 2 rounds
  // of (cp-1) = 1 step each.
  EXPECT_EQ(count(r.stages[3], CommGroup::cp), 3 * 12 * 64);
}

}  // namespace
}  // namespace stepcast
