// Time of one NCCL collective on the links its group crosses.
//
// Megatron-LM orders ranks tensor-innermost (tp, cp, dp, pp), so a group of `size` ranks at rank
// stride `stride` puts min(size, gpus_per_node / stride) members in each node. A group inside one
// node runs on the node's scale-up fabric; a group that spans nodes is limited by the network
// ports its node members share with the other groups of the same kind running at the same time.
//
// Bus bandwidth rises with message size S as busbw(S) = peak * S / (S + S_half) (nccl-tests
// "busbw"; S_half is the half-peak message size fitted to published sweeps), so
//   time = F * (S + S_half) / peak + steps * latency,
// with F = 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 for send/recv and
// broadcast (nccl-tests doc/PERFORMANCE.md).
#pragma once

#include <string>

#include "stepcast/enum_names.h"
#include "stepcast/hardware.h"

namespace stepcast {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, send_recv, broadcast, all_to_all };
template <>
struct EnumNames<CollectiveKind> {
  static constexpr std::array<std::string_view, 6> values = {
      "all_reduce", "all_gather", "reduce_scatter", "send_recv", "broadcast", "all_to_all"};
};
inline const char* to_string(CollectiveKind v) { return name_of(v).data(); }

struct GroupPlacement {
  int size = 1;
  int per_node = 1;  // members of one group inside one node
  bool spans_nodes() const { return per_node < size; }
  int nodes() const { return (size + per_node - 1) / per_node; }
};

GroupPlacement place_group(int size, int64_t stride, int gpus_per_node);

// The link a group's traffic is priced on, with the bandwidth one group gets.
struct CommPath {
  const LinkSpec* link = nullptr;  // the slowest link the group crosses
  double busbw_Bps = 0;            // ring bus bandwidth available to this group
  double allreduce_busbw_Bps = 0;  // all-reduce bus bandwidth (in-switch reduction where present)
  double half_peak_bytes = 0;
  double latency_s = 0;
  int nodes = 1;  // nodes the group spans (1 inside a node)
  // A ring across nodes also steps through every member inside each node (collective_time_s):
  // the latency of one such hop, 0 inside a node (the link's latency_s is measured whole there).
  double hop_latency_s = 0;
};

// NCCL's latency of one intra-node hop of a ring that crosses nodes, Simple protocol (the one
// it picks for the MB-sized buffers of data-parallel collectives): max(NVLink ring Simple 3.4 us,
// 3 x the 1.0 us network overhead on x86/Intel) = 3.4 us (src/graph/tuning.cc,
// ncclTunerConstantsDefaults hwLatencies and the ring branch of ncclTopoTuneModel, NVIDIA/nccl
// 5067397c). NCCL's PCIe figure (5.7 us) is not told apart: the link presets do not say which
// fabric a node's GPUs ring over.
inline constexpr double kRingIntraHopLatency_s = 3.4e-6;

CommPath comm_path(const ClusterGroup& cluster, const GroupPlacement& placement);

// The path between two groups of a heterogeneous cluster: every GPU of `from` that takes part
// talks at once, so each gets the inter-group link's bandwidth times the node's ports over its
// GPUs (per_node: GPUs of one node in the collective).
CommPath inter_group_path(const ClusterGroup& from, const LinkSpec& link, int per_node, int nodes);

// The slower of two paths (a collective crossing both runs at the pace of its slowest hop).
const CommPath& slowest(const CommPath& a, const CommPath& b);

// Bus-bandwidth factor F of nccl-tests for a collective over n ranks.
double bus_factor(CollectiveKind kind, int n);

// Latency steps of one collective over a group spanning `nodes` nodes.
int latency_steps(CollectiveKind kind, int nodes);

// Latency of one collective over n ranks along `path`: inside a node the link's measured floor;
// across nodes, a tree all-reduce's 2 log2(nodes) network steps, and a ring all-gather or
// reduce-scatter's n - 1 steps, nodes - 1 of them over the network and n - nodes inside the nodes
// (NCCL's ring latency, src/graph/tuning.cc at NVIDIA/nccl 5067397c: (nsteps - nInterSteps) *
// intraLat + nInterSteps * interLat), so it grows with the rank count, not the node count alone.
double collective_latency_s(CollectiveKind kind, int n, const CommPath& path);

// Time of one collective moving `bytes` (the full tensor size, as nccl-tests' "size") among n
// ranks along `path`. n = 1 costs nothing (Megatron skips collectives of one rank). All-to-alls
// are priced by all_to_all_time_s.
double collective_time_s(CollectiveKind kind, double bytes, int n, const CommPath& path);

// What collective_time_s charges one collective whatever its size: the half-peak fill of the
// bus-bandwidth curve and the latency steps. The rest of its time moves the bytes.
double collective_fixed_s(CollectiveKind kind, int n, const CommPath& path);

// The links an all-to-all crosses. Each GPU sends (n-1)/n of its buffer: the share for peers in
// its own node over the scale-up fabric, the rest over the node's network ports, which every GPU
// of the node uses at once (all expert-parallel groups exchange together). Both run at the same
// time, so the slower share sets the pace.
struct AllToAllPath {
  int size = 1;
  int per_node = 1;      // members of the group inside one node
  double intra_Bps = 0;  // per GPU, scale-up fabric
  double inter_Bps = 0;  // per GPU, its share of the node's ports
  double intra_half_peak_bytes = 0, inter_half_peak_bytes = 0;
  double latency_s = 0;            // of the slowest link crossed
  const LinkSpec* link = nullptr;  // the slowest link crossed
};

AllToAllPath all_to_all_path(const ClusterGroup& cluster, const GroupPlacement& placement);

// Time of one all-to-all in which every GPU sends `bytes` (its whole send buffer, nccl-tests'
// size), spread evenly over the group; `remote_scale` scales the bytes that leave the node
// (DeepEP/HybridEP send a token once per destination node instead of once per expert).
double all_to_all_time_s(double bytes, const AllToAllPath& path, double remote_scale = 1);

}  // namespace stepcast
