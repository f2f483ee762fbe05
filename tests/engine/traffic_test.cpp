// Rank placement (Megatron-Core's RankGenerator) and the traffic matrix, with values derived by
// hand from the census formulas (census.cpp) and each collective's algorithm (traffic.h).
#include "stepcast/traffic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "stepcast/link_load.h"
#include "stepcast/ranks.h"
#include "test_util.h"

namespace stepcast {
namespace {

// A small dense model: h = 1024, s = 1024, so one micro-batch's hidden states are
// b·s·h·2 = 2 MiB in bf16.
std::string scenario_json(int gpus_per_node, int nodes, const std::string& plan) {
  return fmt::format(R"({{"model": {{"name": "m", "layers": 4, "hidden": 1024, "heads": 8,
      "ffn_hidden": 4096, "vocab": 1000, "seq_len": 1024, "ffn_type": "swiglu",
      "position": "rope", "tied_embeddings": false}},
      "cluster": {{"gpu": "h100-sxm5-80gb", "gpus_per_node": {}, "nodes": {},
                   "intra_node_link": "nvlink4", "inter_node_link": "ib-ndr"}},
      "plan": {}}})",
                     gpus_per_node, nodes, plan);
}

Traffic traffic_of(const std::string& json, TrafficLevel level = TrafficLevel::automatic) {
  auto t = traffic(test::scenario(json), {level});
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return t.ok() ? t.value() : Traffic{};
}

double cell(const Traffic& t, int64_t from, int64_t to, CommGroup kind) {
  for (const auto& c : t.cells)
    if (c.from == from && c.to == to) return c.bytes[static_cast<size_t>(kind)];
  return 0;
}

double row(const Traffic& t, int64_t from) {
  double s = 0;
  for (const auto& c : t.cells)
    if (c.from == from) s += c.total();
  return s;
}

constexpr double kMiB = 1024.0 * 1024.0;

TEST(Ranks, MegatronOrderAndGroups) {
  // parallel_state.py's docstring example: order tp-pp-dp, sizes 2-2-2: dp groups
  // [[0, 4], [1, 5], [2, 6], [3, 7]].
  Plan p;
  p.tp = 2, p.pp = 2, p.dp = 2;
  p.rank_order = "tp-cp-ep-pp-dp";
  const RankGrid g = dense_grid(p);
  EXPECT_EQ(group_member(g, dim_bit(Dim::dp), 1, 1), 5);
  EXPECT_EQ(ring_neighbour(g, dim_bit(Dim::dp), 6), 2);
  EXPECT_EQ(ring_neighbour(g, dim_bit(Dim::pp), 1), 3);
  EXPECT_EQ(g.rank_of(g.coords_of(7)), 7);
  EXPECT_FALSE(parse_rank_order("tp-cp-ep-dp"));
  EXPECT_FALSE(parse_rank_order("tp-tp-ep-dp-pp"));
  EXPECT_FALSE(parse_rank_order("tp-cp-ep-dp-pp-"));
  EXPECT_EQ(*parse_rank_order("pp-dp-ep-cp-tp"), (std::array{Dim::pp, Dim::dp, Dim::ep, Dim::cp, Dim::tp}));
  EXPECT_EQ(*parse_rank_order("tp-cp-ep-pp-dp"), (std::array{Dim::tp, Dim::cp, Dim::ep, Dim::pp, Dim::dp}));
  // The default (read without the search by name): the names in the order written.
  EXPECT_EQ(*parse_rank_order(kDefaultRankOrder), (std::array{Dim::tp, Dim::cp, Dim::ep, Dim::dp, Dim::pp}));
}

// The default order places every group exactly as the cost model always has
// (collectives.h's tensor-innermost strides).
TEST(Ranks, DefaultOrderKeepsTheCostModelsPlacement) {
  for (int tp : {1, 2, 4, 8})
    for (int cp : {1, 2})
      for (int dp : {1, 2, 4, 16})
        for (int g : {2, 4, 8}) {
          Plan p;
          p.tp = tp, p.cp = cp, p.dp = dp, p.pp = 2;
          const RankGrid d = dense_grid(p);
          auto same = [&](GroupPlacement a, GroupPlacement b) {
            EXPECT_EQ(a.size, b.size);
            EXPECT_EQ(a.per_node, b.per_node) << tp << " " << cp << " " << dp << " " << g;
          };
          same(grid_placement(d, dim_bit(Dim::tp), g), place_group(tp, 1, g));
          same(grid_placement(d, dim_bit(Dim::cp), g), place_group(cp, tp, g));
          same(grid_placement(d, dim_bit(Dim::dp) | dim_bit(Dim::cp), g),
               cp > 1 ? place_group(dp * cp, tp, g) : place_group(dp, int64_t{tp} * cp, g));
        }
}

const char* kSmallPlan = R"({"tp": 2, "dp": 2, "micro_batch": 1, "global_batch": 4,
    "sequence_parallel": false, "recompute": "none", "distributed_optimizer": false})";

// 2 nodes x 2 GPUs, tp 2, dp 2 (m = 2 micro-batches of 2 MiB hidden states), cell by cell.
// Ranks 0,1 (node 0) and 2,3 (node 1) form the TP pairs; DP pairs are {0,2} and {1,3}.
TEST(Traffic, SmallCaseCellByCell) {
  const Traffic t = traffic_of(
      scenario_json(2, 2, kSmallPlan));
  ASSERT_TRUE(t.gpu_level);
  // TP: per micro-batch 4 all-reduces per layer x 4 layers, plus the embedding's forward and
  // the output layer's backward: 18 x 2 MiB; a 2-rank ring all-reduce sends 2(n-1)/n = 1 x S.
  // Cross-entropy: 3 all-reduces of s x 4 bytes. The batch broadcast (first and last stage:
  // 4 per micro-batch, s x 8 bytes) goes from TP rank 0 only.
  const double m = 2;
  const double ar = m * 18 * 2 * kMiB + m * 3 * 1024 * 4;
  const double bcast = m * 4 * 1024 * 8;
  EXPECT_DOUBLE_EQ(cell(t, 0, 1, CommGroup::tp), ar + bcast);
  EXPECT_DOUBLE_EQ(cell(t, 1, 0, CommGroup::tp), ar);
  EXPECT_DOUBLE_EQ(cell(t, 2, 3, CommGroup::tp), ar + bcast);
  EXPECT_DOUBLE_EQ(cell(t, 3, 2, CommGroup::tp), ar);
  // DP: the gradient all-reduce over 2 ranks sends each GPU's fp32 gradients once, plus the
  // 8-byte logged loss; the gradient norm (4 bytes) goes round the model-parallel (TP) pair.
  double grads = 0;
  for (const auto& b : t.bandwidth)
    if (b.op.group == CommGroup::dp) grads += b.op.count * b.op.bytes;
  EXPECT_GT(grads, 8);
  for (auto [from, to] : {std::pair{0, 2}, std::pair{2, 0}, std::pair{1, 3}, std::pair{3, 1}})
    EXPECT_DOUBLE_EQ(cell(t, from, to, CommGroup::dp), grads) << from << "->" << to;
  EXPECT_DOUBLE_EQ(cell(t, 0, 1, CommGroup::model_parallel), 4);
  EXPECT_DOUBLE_EQ(cell(t, 0, 3, CommGroup::tp) + cell(t, 0, 3, CommGroup::dp), 0);
  EXPECT_EQ(t.cells.size(), 8u);  // 4 TP cells, 4 DP cells
  // Tiers: TP inside the nodes, DP between them.
  EXPECT_DOUBLE_EQ(t.totals[size_t(CommGroup::tp)][size_t(LinkTier::scale_out)], 0);
  EXPECT_DOUBLE_EQ(t.totals[size_t(CommGroup::dp)][size_t(LinkTier::scale_up)], 0);
  EXPECT_DOUBLE_EQ(t.totals[size_t(CommGroup::dp)][size_t(LinkTier::scale_out)], 4 * grads);

  // Node level: the same bytes, node 0 -> node 1 carrying 2 GPUs' DP traffic.
  const Traffic n = traffic_of(
      scenario_json(2, 2, kSmallPlan),
      TrafficLevel::node);
  ASSERT_FALSE(n.gpu_level);
  EXPECT_DOUBLE_EQ(cell(n, 0, 1, CommGroup::dp), 2 * grads);
  EXPECT_DOUBLE_EQ(cell(n, 0, 0, CommGroup::tp), 2 * ar + bcast);
  EXPECT_DOUBLE_EQ(n.total(), t.total());
}

// Every GPU's row adds up to what the census says its stage's GPUs send (no broadcast here:
// tp = 1), and the whole matrix to the census over all GPUs.
TEST(Traffic, RowSumsEqualTheCensus) {
  const std::string json = scenario_json(
      4, 4, R"({"tp": 1, "cp": 2, "pp": 2, "dp": 4, "micro_batch": 1, "global_batch": 16,
                "distributed_optimizer": true})");
  const Scenario sc = test::scenario(json);
  const Report r = estimate(sc);
  const Traffic t = traffic_of(json);
  std::vector<double> per_stage(2, 0);
  for (const auto& st : r.stages)
    for (const auto& op : st.communication) per_stage[st.index] += census_sent_bytes(op);
  const RankGrid g = dense_grid(sc.plan);
  double all = 0;
  for (int64_t rank = 0; rank < 16; ++rank) {
    const double expect = per_stage[g.coords_of(rank)[size_t(Dim::pp)]];
    EXPECT_NEAR(row(t, rank), expect, 1e-9 * expect) << "rank " << rank;
    all += expect;
  }
  EXPECT_NEAR(t.total(), all, 1e-9 * all);
}

TEST(Traffic, TotalEqualsTheCensusWithBroadcastsAndInterleaving) {
  const std::string json = scenario_json(
      8, 2, R"({"tp": 2, "pp": 2, "vpp": 2, "dp": 4, "micro_batch": 1, "global_batch": 16,
                "sequence_parallel": true})");
  const Report r = estimate(test::scenario(json));
  const Traffic t = traffic_of(json);
  double all = 0;
  for (const auto& st : r.stages)
    for (const auto& op : st.communication) all += 8 * census_sent_bytes(op);  // 8 GPUs a stage
  EXPECT_NEAR(t.total(), all, 1e-9 * all);
}

// ZB-V's V (schedule.h, StagePlacement::v_shape): rank r holds virtual stages r and 7 - r of 8, so
// the activations go down ranks 0..3 and back up 3..0: the last rank sends to rank 2, never to
// rank 0 as Megatron's loop would; the turn stays on rank 3. Each rank's sends are the census's.
TEST(Traffic, ZeroBubbleVSendsDownTheRanksAndBackUp) {
  std::string json = scenario_json(
      4, 1, R"({"tp": 1, "pp": 4, "vpp": 2, "schedule": "zbv", "micro_batch": 1, "global_batch": 8})");
  json.replace(json.find(R"("layers": 4)"), 11, R"("layers": 8)");  // a layer per virtual stage
  const Scenario sc = test::scenario(json);
  const Traffic t = traffic_of(json);
  const RankGrid g = dense_grid(sc.plan);
  auto rank_at = [&](int stage) {
    Coords c = g.coords_of(0);
    c[size_t(Dim::pp)] = stage;
    return g.rank_of(c);
  };
  const auto pp = CommGroup::pp;
  EXPECT_EQ(cell(t, rank_at(3), rank_at(0), pp), 0);  // no hand-on from the last rank to the first
  EXPECT_GT(cell(t, rank_at(3), rank_at(2), pp), 0);  // the V's way back up
  EXPECT_GT(cell(t, rank_at(0), rank_at(1), pp), 0);
  // Ranks 1 and 2 send both ways each pass, ranks 0 and 3 one way each: the middle ranks send
  // twice what the ends send (activations down and up, gradients up and down).
  EXPECT_NEAR(cell(t, rank_at(1), rank_at(2), pp) + cell(t, rank_at(1), rank_at(0), pp),
              2 * cell(t, rank_at(0), rank_at(1), pp), 1e-9 * cell(t, rank_at(0), rank_at(1), pp));
  const Report r = estimate(sc);
  double all = 0;
  for (const auto& st : r.stages)
    for (const auto& op : st.communication) all += census_sent_bytes(op);  // one GPU a stage
  EXPECT_NEAR(t.total(), all, 1e-9 * all);
}

TEST(Traffic, TensorParallelInsideANodeStaysOffTheNetwork) {
  const Traffic t =
      traffic_of(scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"));
  EXPECT_GT(t.totals[size_t(CommGroup::tp)][size_t(LinkTier::scale_up)], 0);
  EXPECT_DOUBLE_EQ(t.totals[size_t(CommGroup::tp)][size_t(LinkTier::scale_out)], 0);
  for (const auto& g : t.groups) {
    if (g.kind == CommGroup::tp) EXPECT_TRUE(g.inside_node());
    if (g.kind == CommGroup::dp) EXPECT_EQ(g.spanning_groups, 8);
  }
}

// dp innermost puts each TP pair across the two nodes: the same TP bytes move to the network,
// and the cost model prices TP on the network link too.
TEST(Traffic, RankOrderMovesTensorParallelAcrossNodes) {
  const char* plan = R"({{"tp": 2, "dp": 2, "micro_batch": 1, "global_batch": 4{}}})";
  const Traffic base = traffic_of(scenario_json(2, 2, fmt::format(fmt::runtime(plan), "")));
  const std::string json =
      scenario_json(2, 2, fmt::format(fmt::runtime(plan), R"(, "rank_order": "dp-tp-cp-ep-pp")"));
  const Traffic moved = traffic_of(json);
  const auto tp = size_t(CommGroup::tp), dp = size_t(CommGroup::dp);
  const auto up = size_t(LinkTier::scale_up), out = size_t(LinkTier::scale_out);
  EXPECT_DOUBLE_EQ(moved.totals[tp][up], 0);
  EXPECT_DOUBLE_EQ(moved.totals[tp][out], base.totals[tp][up]);
  EXPECT_DOUBLE_EQ(moved.totals[dp][out], 0);
  EXPECT_DOUBLE_EQ(moved.totals[dp][up], base.totals[dp][out]);
  EXPECT_GT(cell(moved, 0, 2, CommGroup::tp), 0);  // rank 2 is TP rank 1 of rank 0's group
  const Report r = estimate(test::scenario(json));
  for (const auto& op : r.stages.front().communication) {
    if (op.group == CommGroup::tp) EXPECT_EQ(op.link, "ib-ndr") << op.what;
    if (op.group == CommGroup::dp) EXPECT_EQ(op.link, "nvlink4") << op.what;
  }
}

TEST(Traffic, RankOrderRules) {
  auto bad = test::error_of(
      scenario_json(2, 2, R"({"tp": 2, "dp": 2, "global_batch": 4, "rank_order": "tp-dp"})"));
  EXPECT_EQ(bad.path, "plan.rank_order");
  EXPECT_EQ(bad.code, ErrorCode::out_of_range);
  // Megatron-Core: with pp not last, the expert data-parallel size must equal dp.
  auto grid = test::error_of(R"({"model": "qwen3-30b-a3b",
      "cluster": {"node": "dgx-h100", "nodes": 2},
      "plan": {"pp": 2, "ep": 8, "global_batch": 16, "rank_order": "tp-cp-ep-pp-dp"}})");
  EXPECT_EQ(grid.path, "plan.rank_order");
  EXPECT_NE(grid.message.find("expert data-parallel size"), std::string::npos) << grid.message;
}

// Two groups: one DGX A100 node (group 0, node 0, GPUs 0-7) and two DGX H100 nodes (group 1,
// nodes 1-2, GPUs 8-23). tp 8, pp 3, dp 1, stages on groups 1, 0, 1: stage 0 takes GPUs 8-15,
// stage 1 GPUs 0-7, stage 2 GPUs 16-23 (each stage the next 8 GPUs of its group). Activations
// go 8+l -> l -> 16+l, gradients back, one message of S per micro-batch (64 of them), all
// between nodes; the busiest NIC leaves its group over roce-100g, the slower port.
TEST(Traffic, HeterogeneousStagesArePlacedOnTheirGroups) {
  const std::string cluster = R"("cluster": {"groups": [{"node": "dgx-a100", "nodes": 1},
      {"node": "dgx-h100", "nodes": 2}], "inter_group_link": "roce-100g"})";
  const Traffic t = traffic_of(R"({"model": "llama3-8b", "seq_len": 4096, )" + cluster +
                               R"(, "plan": {"tp": 8, "pp": 3, "global_batch": 64,
      "stages": [{"group": 1, "layers": 12}, {"group": 0, "layers": 10},
                 {"group": 1, "layers": 10}]}})");
  EXPECT_EQ(t.gpus, 24);
  EXPECT_EQ(t.nodes, 3);
  ASSERT_EQ(t.cluster_groups.size(), 2u);
  EXPECT_EQ(t.cluster_groups[1].nodes, 2);
  double S = 0;
  for (const auto& b : t.bandwidth)
    if (b.op.group == CommGroup::pp) S = b.op.bytes;
  ASSERT_GT(S, 0);
  for (int l : {0, 5}) {
    EXPECT_DOUBLE_EQ(cell(t, 8 + l, l, CommGroup::pp), 64 * S) << l;   // stage 0 -> 1
    EXPECT_DOUBLE_EQ(cell(t, l, 16 + l, CommGroup::pp), 64 * S) << l;  // stage 1 -> 2
    EXPECT_DOUBLE_EQ(cell(t, 16 + l, l, CommGroup::pp), 64 * S) << l;  // gradients 2 -> 1
    EXPECT_DOUBLE_EQ(cell(t, l, 8 + l, CommGroup::pp), 64 * S) << l;   // gradients 1 -> 0
    EXPECT_EQ(cell(t, 8 + l, 16 + l, CommGroup::pp), 0) << l;
  }
  EXPECT_GT(cell(t, 8, 9, CommGroup::tp), 0);  // tensor parallel inside node 1
  EXPECT_EQ(cell(t, 7, 8, CommGroup::tp), 0);
  for (const auto& c : t.cells)
    EXPECT_EQ(c.tier == LinkTier::scale_up, c.from / 8 == c.to / 8) << c.from << " " << c.to;
  const size_t pp = static_cast<size_t>(CommGroup::pp);
  EXPECT_DOUBLE_EQ(t.totals[pp][1], 4 * 8 * 64 * S);
  EXPECT_EQ(t.totals[pp][0], 0);
  double census = 0;  // every stage's census at each of its 8 GPUs
  for (const auto& b : t.bandwidth) census += 8 * census_sent_bytes(b.op);
  EXPECT_NEAR(t.total(), census, 1e-9 * census);
  ASSERT_TRUE(t.has_load);
  EXPECT_DOUBLE_EQ(t.load.nic_capacity_Bps, 12.5e9);  // 100 Gb/s
  // Replica sets each run their own census: not covered.
  auto replicas = traffic(test::scenario(R"({"model": "llama3-8b", "seq_len": 4096, )" +
                                         cluster + R"(, "plan": {"tp": 8, "global_batch": 64,
      "replicas": [{"group": 0, "count": 1}, {"group": 1, "count": 2}]}})"));
  ASSERT_FALSE(replicas.ok());
  EXPECT_EQ(replicas.error().code, ErrorCode::unsupported);
  EXPECT_EQ(replicas.error().path, "plan.replicas");
  EXPECT_EQ(replicas.error().message,
            "traffic: replica sets (plan.replicas) are not covered: each set runs its own census "
            "(its micro-batches, its group's links) and the estimate reports the slowest set's "
            "only; the matrix covers one-group clusters and stages placed on groups "
            "(plan.stages)");
}

// DualPipe sends both ways between mirrored ranks: refused, saying which schedule is covered.
TEST(Traffic, DualPipeIsRefusedAndDualPipeVIsNot) {
  const std::string doc = test::doc(
      R"({"tp": 8, "pp": 4, "global_batch": 64, "micro_batch": 1, "schedule": "dualpipe"})",
      R"("llama3-70b")", R"({"node": "dgx-h100", "nodes": 4})", R"(, "seq_len": 4096)");
  auto dual = traffic(test::scenario(doc));
  ASSERT_FALSE(dual.ok());
  EXPECT_EQ(dual.error().code, ErrorCode::unsupported);
  EXPECT_EQ(dual.error().path, "plan.schedule");
  EXPECT_TRUE(dual.error().message.ends_with("; the matrix covers dualpipev"))
      << dual.error().message;
  std::string v = doc;
  v.replace(v.find("\"dualpipe\""), 10, "\"dualpipev\", \"vpp\": 2");
  EXPECT_TRUE(traffic(test::scenario(v)).ok());
}

TEST(Traffic, LargeClustersStayWithinBudget) {
  // 2,048 GPUs: node level by default, a GPU x GPU matrix refused.
  const std::string json = scenario_json(8, 256, R"({"tp": 8, "global_batch": 256})");
  const Traffic t = traffic_of(json);
  EXPECT_FALSE(t.gpu_level);
  auto gpu = traffic(test::scenario(json), {TrafficLevel::gpu});
  ASSERT_FALSE(gpu.ok());
  EXPECT_EQ(gpu.error().code, ErrorCode::budget_exceeded);
  // 2^22 GPUs: not even the node matrix.
  auto huge = traffic(test::scenario(scenario_json(
      8, 1 << 19, R"({"tp": 8, "global_batch": 524288})")));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::budget_exceeded);
}

TEST(Traffic, EffectiveBandwidthBelowPeak) {
  const Traffic t = traffic_of(scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"));
  ASSERT_FALSE(t.bandwidth.empty());
  for (const auto& b : t.bandwidth) {
    EXPECT_GT(b.algbw_Bps, 0) << b.op.what;
    EXPECT_GT(b.fraction_of_peak, 0) << b.op.what;
    EXPECT_LT(b.fraction_of_peak, 1) << b.op.what;
    EXPECT_NEAR(b.algbw_Bps * b.op.time_s, b.op.bytes, 1e-6 * b.op.bytes);
  }
}

// Each window's bytes spread by hand: forward [0,1], backward [1,3], exposed sync [3,3.5],
// optimizer [3.5,4], eight bins of 0.5 s. Gradient sync runs from the last backward block's
// start to the sync's end ([1,3.5], 2.5 s); optimizer-phase bytes from there to the step's end.
TEST(LinkLoad, SpreadsEachWindowOverItsBlocks) {
  const std::vector<TimelineEvent> timeline = {
      {TimelineKind::forward, 0, 0, 0, 0.0, 1.0},
      {TimelineKind::backward, 0, 0, 0, 1.0, 3.0},
      {TimelineKind::dp_sync, 0, 0, 0, 3.0, 3.5},
      {TimelineKind::optimizer, 0, 0, 0, 3.5, 4.0}};
  const WindowBytes bytes = {{10, 20, 6, 4}};
  const std::vector<double> got = spread_over_timeline(timeline, bytes, 4.0, 8);
  const std::vector<double> want = {5, 5, 5 + 1.2, 5 + 1.2, 5 + 1.2, 5 + 1.2, 1.2, 4};
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  // A stage with no blocks at all keeps its bytes (in the last bin).
  const std::vector<double> lost = spread_over_timeline({}, bytes, 4.0, 8);
  EXPECT_NEAR(lost.back(), 40, 1e-12);
}

// Over the iteration the load integrates to the matrix: every tier's bytes, and the busiest
// NIC's. Two nodes of two GPUs with one NIC each (one NIC per two GPUs), dp 4: the gradient
// ring 0->1->2->3->0 crosses nodes at 1->2 and 3->0, so GPU 1 and GPU 3 send their whole ring
// share, 2 x 3/4 x G per all-reduce, over NICs 0 and 1; GPUs 0 and 2 send nothing out.
TEST(LinkLoad, IntegratesToTheMatrixTotals) {
  auto json = scenario_json(2, 2, R"({"dp": 4, "global_batch": 8})");
  json.replace(json.find(R"("inter_node_link")"), 0, R"("nics_per_node": 1, )");
  const Traffic t = traffic_of(json);
  ASSERT_TRUE(t.has_load);
  const LinkLoad& l = t.load;
  ASSERT_EQ(l.scale_up_Bps.size(), static_cast<size_t>(kLoadBins));
  double up = 0, out = 0, nic = 0;
  for (int i = 0; i < kLoadBins; ++i) {
    up += l.scale_up_Bps[i] * l.bin_s;
    out += l.scale_out_Bps[i] * l.bin_s;
    nic += l.busiest_nic_Bps[i] * l.bin_s;
  }
  double want_up = 0, want_out = 0;
  for (const auto& kind : t.totals) want_up += kind[0], want_out += kind[1];
  EXPECT_NEAR(up, want_up, 1e-9 * want_up);
  EXPECT_NEAR(out, want_out, 1e-9 * want_out);
  ASSERT_GT(want_out, 0);
  // Two NICs carry the network traffic equally (GPU 1's and GPU 3's ring hops).
  EXPECT_NEAR(l.busiest_nic_bytes, want_out / 2, 1e-9 * want_out);
  EXPECT_NEAR(nic, l.busiest_nic_bytes, 1e-9 * want_out);
  const double ib_ndr = 50e9;  // 400 Gb/s per port, one direction
  EXPECT_DOUBLE_EQ(l.nic_capacity_Bps, ib_ndr);
  EXPECT_DOUBLE_EQ(l.scale_out_capacity_Bps, 2 * ib_ndr);
}

// MoE all-to-all: an expected value under uniform routing; the busiest pair and GPU carry up to
// plan.moe_imbalance times it. Qwen3-30B-A3B on 2 x 8 GPUs, ep 16: each all-to-all sends S/16 to
// every member, so a pair carries sum(count x S) / 16 per iteration.
TEST(Traffic, MoeAllToAllIsARange) {
  const auto json = [](const std::string& dispatcher) {
    return R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "nodes": 2},
      "plan": {"ep": 16, "global_batch": 256, "moe_imbalance": 1.5, "moe_dispatcher": ")" +
           dispatcher + R"("}})";
  };
  const Traffic t = traffic_of(json("alltoall"));
  ASSERT_EQ(t.ranges.size(), 1u);
  const TrafficRange& r = t.ranges[0];
  double pair = 0;
  for (const auto& b : t.bandwidth)
    if (b.op.kind == CollectiveKind::all_to_all) pair += b.op.count * b.op.bytes / 16;
  EXPECT_NEAR(r.expected_pair_bytes, pair, 1e-9 * pair);
  EXPECT_NEAR(r.max_pair_bytes, 1.5 * pair, 1e-9 * pair);
  EXPECT_NEAR(r.expected_gpu_bytes, 15 * pair, 1e-9 * pair);
  EXPECT_NEAR(r.max_gpu_bytes, 1.5 * 15 * pair, 1e-9 * pair);
  EXPECT_NEAR(cell(t, 0, 9, CommGroup::ep), pair, 1e-9 * pair);  // the matrix holds the mean
  EXPECT_DOUBLE_EQ(r.flex_remote_scale, 1);
  // Dense kinds are exact: no range.
  EXPECT_TRUE(traffic_of(scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"))
                  .ranges.empty());
  // Flex sends a token once per destination node: the cross-node share of each all-to-all is
  // scaled by the census's remote scale (8 of 16 peers sit in the other node), the rest not.
  const Traffic f = traffic_of(json("flex"));
  ASSERT_EQ(f.ranges.size(), 1u);
  const double remote = f.ranges[0].flex_remote_scale;
  EXPECT_LT(remote, 1);
  double local = 0;
  for (const auto& b : f.bandwidth)
    if (b.op.kind == CollectiveKind::all_to_all) local += b.op.count * b.op.bytes / 16;
  const size_t ep = static_cast<size_t>(CommGroup::ep);
  EXPECT_NEAR(f.totals[ep][1], 16 * 8 * local * remote, 1e-9 * f.totals[ep][1]);
  EXPECT_NEAR(f.totals[ep][0], 16 * 7 * local, 1e-9 * f.totals[ep][0]);
  EXPECT_NEAR(cell(f, 0, 9, CommGroup::ep), local * remote, 1e-9 * local);
}

// DeepSeek-V3 on 2 nodes of 8 L40S at tp 4, ep 4: each expert-parallel group has 2 members a
// node, and flex sends a token once to each node its 8 experts fall on (2 (1 - 1/2^8) of 2
// nodes under uniform routing: a quarter of the copies). The bandwidth counts the bytes on the
// wire, as the line rate does: counting the copies flex never sends put its dispatch at 3.1
// times the node's RoCE rate (issue 38, the invariant suite's seed 438).
TEST(Traffic, FlexDispatchCountsTheBytesOnTheWire) {
  const Traffic t = traffic_of(R"({"model": "deepseek-v3", "cluster": {"node": "pcie-l40s-x8",
      "nodes": 2}, "plan": {"tp": 4, "ep": 4, "global_batch": 8, "micro_batch": 1,
      "framework": "megatron-lm-2021", "moe_dispatcher": "flex", "precision": "fp16",
      "sequence_parallel": true}})",
                               TrafficLevel::node);
  ASSERT_EQ(t.ranges.size(), 1u);
  const double remote = t.ranges[0].flex_remote_scale;
  EXPECT_NEAR(remote, 2 * (1 - std::pow(0.5, 8)) / 8, 1e-12);
  size_t all_to_alls = 0;
  for (const auto& b : t.bandwidth) {
    if (b.op.kind != CollectiveKind::all_to_all) continue;
    ++all_to_alls;
    // Of S, a quarter goes to the node's other member and half to the other node's two.
    EXPECT_NEAR(b.busbw_Bps, b.op.bytes * (1 + 2 * remote) / 4 / b.op.time_s,
                1e-9 * b.busbw_Bps) << b.op.what;
    EXPECT_GT(b.fraction_of_peak, 0) << b.op.what;
    EXPECT_LE(b.fraction_of_peak, 1) << b.op.what;
  }
  EXPECT_GT(all_to_alls, 0u);
}

// The bandwidth curves are the cost model's busbw(S) = peak S / (S + S_half); each operation
// names its curve and sits at or below it (it also pays a latency floor).
TEST(Traffic, BandwidthCurvesBoundTheOperations) {
  const Traffic t = traffic_of(scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"));
  ASSERT_FALSE(t.curves.empty());
  for (const auto& c : t.curves) {
    ASSERT_EQ(c.sizes_bytes.size(), static_cast<size_t>(kCurveSizes));
    EXPECT_DOUBLE_EQ(c.sizes_bytes.front(), 1024);
    EXPECT_DOUBLE_EQ(c.sizes_bytes.back(), 4.0 * 1024 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(c.busbw_Bps[5], c.peak_Bps * c.sizes_bytes[5] /
                                         (c.sizes_bytes[5] + c.half_peak_bytes));
  }
  for (const auto& b : t.bandwidth) {
    ASSERT_GE(b.curve, 0);
    const BandwidthCurve& c = t.curves[static_cast<size_t>(b.curve)];
    EXPECT_EQ(c.link, b.op.link) << b.op.what;
    const double S = b.op.bytes;
    EXPECT_LE(b.busbw_Bps, c.peak_Bps * S / (S + c.half_peak_bytes) * (1 + 1e-9)) << b.op.what;
  }
}

// The traffic key tables (traffic_schema) name exactly the keys a traffic JSON holds, table by
// table: every key of every object of the matrices below is in its table, and every key of a
// table shows up in one of them (the MoE range only with experts, the cluster's groups with two
// of them); the first group of the heterogeneous cluster starts at node 0, the second after its
// one node.
TEST(TrafficSchema, NamesEveryKeyATrafficJsonHolds) {
  const Json schema = traffic_schema();
  std::map<std::string, std::set<std::string>> seen;
  const std::string hetero = R"({"model": "llama3-8b", "seq_len": 4096, "cluster": {"groups":
      [{"node": "dgx-a100", "nodes": 1}, {"node": "dgx-h100", "nodes": 2}],
      "inter_group_link": "roce-100g"}, "plan": {"tp": 8, "pp": 3, "global_batch": 64}})";
  for (const std::string& text :
       {scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"), hetero,
        std::string(R"({"model": "qwen3-30b-a3b", "cluster": {"node": "dgx-h100", "nodes": 2},
            "plan": {"ep": 16, "global_batch": 256}})")}) {
    auto j = traffic_json(traffic_of(text));
    ASSERT_TRUE(j.ok()) << j.error().message;
    test::collect_keys(*j, "traffic", schema, seen);
    if (text == hetero) {
      EXPECT_EQ((*j)["cluster_groups"][0]["first_node"], 0);
      EXPECT_EQ((*j)["cluster_groups"][1]["first_node"], 1);
      EXPECT_EQ((*j)["cluster_groups"][1]["nodes"], 2);
    }
  }
  test::expect_every_key_seen(schema, seen, "traffic JSON");
  for (auto it = schema.begin(); it != schema.end(); ++it)
    for (const auto& row : *it) EXPECT_FALSE(row["doc"].get<std::string>().empty());
  // A number that is not finite is an error naming it, not a JSON with a null in its place.
  Traffic t = traffic_of(scenario_json(8, 2, R"({"tp": 8, "dp": 2, "global_batch": 16})"));
  t.bandwidth.at(1).busbw_Bps = std::numeric_limits<double>::infinity();
  auto bad = traffic_json(t);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().path, "bandwidth[1].busbw_Bps");
}

// docs/scenario.md's traffic tables are the key tables' (`stepcast schema --write-docs
// docs/scenario.md` after changing a key).
TEST(TrafficSchema, DocumentationTablesAreGeneratedFromIt) {
  const std::string doc = test::source_file("docs/scenario.md");
  const Json schema = traffic_schema();
  EXPECT_EQ(fill_report_tables(doc, schema), doc);
  for (auto it = schema.begin(); it != schema.end(); ++it)
    EXPECT_NE(doc.find("<!-- report: " + it.key() + " -->"), std::string::npos) << it.key();
}

}  // namespace
}  // namespace stepcast
