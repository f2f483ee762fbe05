// Collective cost: nccl-tests bus factors, group placement on Megatron's rank order, and the
// half-peak bandwidth curve.
#include <gtest/gtest.h>

#include "test_util.h"

namespace stepcast {
namespace {

TEST(Collectives, BusFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::send_recv, 2), 1.0);
}

TEST(Collectives, PlacementOnTensorInnermostRankOrder) {
  // TP 8 at stride 1 on 8-GPU nodes: one node.
  EXPECT_FALSE(place_group(8, 1, 8).spans_nodes());
  // DP groups at stride tp=8: one member per node.
  const GroupPlacement dp = place_group(4, 8, 8);
  EXPECT_EQ(dp.per_node, 1);
  EXPECT_EQ(dp.nodes(), 4);
  // DP 16 at stride 2 on 8-GPU nodes: 4 members per node, 4 nodes.
  const GroupPlacement dp2 = place_group(16, 2, 8);
  EXPECT_EQ(dp2.per_node, 4);
  EXPECT_EQ(dp2.nodes(), 4);
  EXPECT_TRUE(dp2.spans_nodes());
}

TEST(Collectives, IntraNodeAllReduceOnNvlink4) {
  const NodePreset* node = builtin_catalog().find_node("dgx-h100");
  ASSERT_NE(node, nullptr);
  ClusterGroup c;
  c.gpus_per_node = 8;
  c.nics_per_node = 8;
  c.intra_node_link = *builtin_catalog().find_link("nvlink4");
  c.inter_node_link = *builtin_catalog().find_link("ib-ndr");
  const CommPath path = comm_path(c, place_group(8, 1, 8));
  const double S = 64.0 * 1024 * 1024;
  // 1.75 x (S + S_half) / 480 GB/s (NVLS) + one 13.7 us floor.
  const double expected = 1.75 * (S + c.intra_node_link.half_peak_bytes) / 480e9 + 13.7e-6;
  EXPECT_NEAR(collective_time_s(CollectiveKind::all_reduce, S, 8, path), expected, 1e-12);
  // At the half-peak size the bus bandwidth is half of peak (plus the latency floor).
  const double half = c.intra_node_link.half_peak_bytes;
  const double t = collective_time_s(CollectiveKind::all_gather, half, 8, path) - 13.7e-6;
  EXPECT_NEAR(0.875 * half / t, 370e9 / 2, 1e6);
  // One rank: nothing to do.
  EXPECT_EQ(collective_time_s(CollectiveKind::all_reduce, S, 1, path), 0.0);
}

TEST(Collectives, GroupsAcrossNodesShareThePorts) {
  ClusterGroup c;
  c.gpus_per_node = 8;
  c.nics_per_node = 8;
  c.intra_node_link = *builtin_catalog().find_link("nvlink4");
  c.inter_node_link = *builtin_catalog().find_link("ib-ndr");
  // One member per node (TP 8 fills the node): each DP group gets one port, 47 GB/s.
  EXPECT_DOUBLE_EQ(comm_path(c, place_group(4, 8, 8)).busbw_Bps, 47e9);
  // Eight members per node (a whole node in one group): all eight ports, 8 x 47 = 376 GB/s, the
  // order of the 366-470 GB/s measured on 8x NDR HGX H100 (nccl-tests#309) -- but never more
  // than the ring inside the node carries (NVLink 4 ring busbw 370 GB/s).
  EXPECT_DOUBLE_EQ(comm_path(c, place_group(16, 1, 8)).busbw_Bps, 370e9);
  // Four members per node: half the ports.
  EXPECT_DOUBLE_EQ(comm_path(c, place_group(8, 2, 8)).busbw_Bps, 4 * 47e9);
  // A tree all-reduce over 4 nodes pays 2 log2(4) = 4 latency steps; a ring all-gather 3.
  EXPECT_EQ(latency_steps(CollectiveKind::all_reduce, 4), 4);
  EXPECT_EQ(latency_steps(CollectiveKind::all_gather, 4), 3);
  EXPECT_EQ(latency_steps(CollectiveKind::all_reduce, 1), 1);
}

TEST(Collectives, RingLatencyGrowsWithTheRanksNotTheNodesAlone) {
  // NCCL's ring latency (src/graph/tuning.cc at NVIDIA/nccl 5067397c): nodes - 1 network hops
  // and n - nodes hops inside the nodes at 3.4 us (NVLink ring, Simple protocol).
  ClusterGroup c;
  c.gpus_per_node = 8;
  c.nics_per_node = 8;
  c.intra_node_link = *builtin_catalog().find_link("nvlink4");
  c.inter_node_link = *builtin_catalog().find_link("ib-ndr");  // 5 us a network step
  const CommPath dp64 = comm_path(c, place_group(64, 1, 8));
  const CommPath dp1024 = comm_path(c, place_group(1024, 1, 8));
  ASSERT_EQ(dp64.nodes, 8);
  ASSERT_EQ(dp1024.nodes, 128);
  // 64 ranks on 8 nodes: 7 x 5 + 56 x 3.4 = 225.4 us; 1,024 on 128: 127 x 5 + 896 x 3.4 =
  // 3,681.4 us, where the node count alone gave 635 us.
  EXPECT_NEAR(collective_latency_s(CollectiveKind::all_gather, 64, dp64), 225.4e-6, 1e-9);
  EXPECT_NEAR(collective_latency_s(CollectiveKind::reduce_scatter, 1024, dp1024), 3681.4e-6, 1e-9);
  // One rank a node (TP 8 fills it): every hop crosses the network, 127 x 5 = 635 us.
  const CommPath one_per_node = comm_path(c, place_group(128, 8, 8));
  EXPECT_NEAR(collective_latency_s(CollectiveKind::all_gather, 128, one_per_node), 635e-6, 1e-9);
  // The tree all-reduce keeps 2 log2(nodes) network steps: 14 x 5 = 70 us; inside a node the
  // link's measured floor, 13.7 us, whatever the collective.
  EXPECT_NEAR(collective_latency_s(CollectiveKind::all_reduce, 1024, dp1024), 70e-6, 1e-9);
  const CommPath node = comm_path(c, place_group(8, 1, 8));
  EXPECT_NEAR(collective_latency_s(CollectiveKind::all_gather, 8, node), 13.7e-6, 1e-9);
  // A small gather is latency-bound: 1 MB over 1,024 ranks costs its latency plus the bytes and
  // the half-peak fill at the node's share of the ports (376 GB/s capped at NVLink's 370).
  const double bytes = 1e6;
  EXPECT_NEAR(collective_time_s(CollectiveKind::all_gather, bytes, 1024, dp1024),
              1023.0 / 1024 * (bytes + dp1024.half_peak_bytes) / dp1024.busbw_Bps + 3681.4e-6,
              1e-9);
  EXPECT_GT(collective_latency_s(CollectiveKind::all_gather, 1024, dp1024),
            collective_time_s(CollectiveKind::all_gather, bytes, 1024, dp1024) / 2);
}

}  // namespace
}  // namespace stepcast
