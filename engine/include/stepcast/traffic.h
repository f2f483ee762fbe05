// The traffic matrix of one iteration: bytes each GPU sends each other GPU, by group kind and by
// link tier, derived from the communication census (census.h) and the algorithm of each
// collective, with the ranks placed as Megatron-Core numbers them (ranks.h). Following
// Narayanan et al. SC21 (arXiv 2104.04473) section 3.3 and nccl-tests' bus-bandwidth factors
// (NVIDIA/nccl-tests doc/PERFORMANCE.md):
//   ring all-reduce:            2(n-1)/n x S to the ring successor,
//   ring all-gather / reduce-scatter: (n-1)/n x S to the ring successor,
//   broadcast (a chain from group rank 0): S from each member but the last to its successor,
//   all-to-all (uniform routing):  S/n to every other member,
//   context-parallel ring step:    S to the ring successor,
//   pipeline send/recv:            S per message to the neighbouring stage the schedule names
//                                  (interleaved: rank pp-1 sends on to rank 0's next chunk).
// S is the census's size of one operation. The flex dispatcher (DeepEP, HybridEP) sends a token
// once per destination node: its all-to-alls' cross-node shares are scaled as the census's time
// scales them (flex_remote_scale), so the matrix holds the bytes on the wire and its ep total is
// below census_sent_bytes (the forwarding hop inside the destination node is not modelled, as in
// the census). The census is per GPU and the same for every GPU of
// a stage, so the matrix is the census applied at every rank.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/census.h"
#include "stepcast/result.h"
#include "stepcast/scenario.h"

namespace stepcast {

// Scale-up: both ends in one node (NVLink, xGMI); scale-out: between nodes (the network).
enum class LinkTier { scale_up, scale_out };
template <>
struct EnumNames<LinkTier> {
  static constexpr std::array<std::string_view, 2> values = {"scale_up", "scale_out"};
};
inline const char* to_string(LinkTier v) { return name_of(v).data(); }

inline constexpr size_t kGroupKinds = EnumNames<CommGroup>::values.size();

// Budgets (limits.h's policy): the GPU x GPU matrix for up to kMaxTrafficGpus GPUs; node x node
// for up to kMaxTrafficNodes nodes (and kMaxTrafficWalkGpus GPUs walked to build it); at most
// kMaxTrafficWork (sender, receiver, operation) visits. Past them: budget_exceeded.
inline constexpr int64_t kMaxTrafficGpus = 1024;
inline constexpr int64_t kMaxTrafficNodes = 1024;
inline constexpr int64_t kMaxTrafficWalkGpus = int64_t{1} << 16;
inline constexpr int64_t kMaxTrafficWork = int64_t{1} << 27;

enum class TrafficLevel { automatic, gpu, node };

struct TrafficOptions {
  TrafficLevel level = TrafficLevel::automatic;  // automatic: gpu up to kMaxTrafficGpus, else node
};

// One nonzero cell: bytes per iteration from endpoint `from` to `to` (GPUs or nodes), by kind.
struct TrafficCell {
  int64_t from = 0, to = 0;
  LinkTier tier = LinkTier::scale_up;
  std::array<double, kGroupKinds> bytes{};  // indexed by CommGroup
  double total() const;
};

// Where one kind of group sits: its size, how many there are, the most members of one group in
// one node, and how many groups span nodes (all of them checked, not only the first).
struct GroupLocality {
  CommGroup kind = CommGroup::tp;
  int64_t size = 1;
  int64_t groups = 0;
  int64_t max_per_node = 1;
  int64_t spanning_groups = 0;
  bool inside_node() const { return spanning_groups == 0; }
};

// Effective bandwidth of one census operation as the cost model prices it.
struct OpBandwidth {
  int stage = 0;
  CommOp op;
  double algbw_Bps = 0;  // message size / time (nccl-tests' algbw)
  double busbw_Bps = 0;  // algbw x the bus factor
  double peak_Bps = 0;   // the line rate the operation could use per GPU (below)
  double fraction_of_peak = 0;
  int curve = -1;        // index into Traffic::curves: the cost model's busbw for its path
};

// The cost model's bus bandwidth against message size on one path (collectives.h):
// busbw(S) = peak x S / (S + S_half), sampled at kCurveSizes sizes from 1 KiB to 4 GiB. The
// operations' own busbw sits at or a little below it (each also pays a latency floor).
inline constexpr int kCurveSizes = 24;
struct BandwidthCurve {
  std::string link;            // link id
  double peak_Bps = 0;         // the path's bus bandwidth per GPU at large messages
  double half_peak_bytes = 0;  // where it reaches half of that
  std::vector<double> sizes_bytes, busbw_Bps;
};

// Link load over the iteration (link_load.h): bytes per second sent on each tier by all GPUs,
// and by the busiest NIC (the one sending most scale-out bytes per iteration; a GPU uses the
// NICs of its share of the node: nics_per_node / gpus_per_node of them, or one NIC shared by
// gpus_per_node / nics_per_node GPUs), with the capacities they are drawn against.
struct LinkLoad {
  double bin_s = 0;
  std::vector<double> scale_up_Bps, scale_out_Bps, busiest_nic_Bps;
  double scale_up_capacity_Bps = 0;   // every GPU's scale-up line rate, one direction
  double scale_out_capacity_Bps = 0;  // every NIC's line rate, one direction
  double nic_capacity_Bps = 0;        // one NIC (the inter-node link's per-port rate)
  int64_t busiest_nic = 0;            // node x NICs-per-node numbering
  double busiest_nic_bytes = 0;       // per iteration
};

// The predictability of one kind's traffic: dense collectives are exact; an MoE all-to-all is
// an expected value under uniform routing, and the busiest GPU receives (and the busiest pair
// carries) up to `imbalance` x the mean (plan.moe_imbalance; 1 when a capacity factor pads every
// expert to its capacity, so the padded bytes are exact).
struct TrafficRange {
  CommGroup kind = CommGroup::ep;
  double imbalance = 1;
  double expected_pair_bytes = 0;  // one pair of the group per iteration, the largest stage's
  double max_pair_bytes = 0;
  double expected_gpu_bytes = 0;   // one GPU receives per iteration, the largest stage's
  double max_gpu_bytes = 0;
  double flex_remote_scale = 1;    // cross-node share the flex dispatcher still sends
};

// The nodes of one cluster group; groups are numbered one after the other (nodes, GPUs, NICs).
struct TrafficNodes {
  int gpus_per_node = 0;
  int nodes = 0;
  int64_t first_node = 0;  // the number of its first node
};

struct Traffic {
  std::string rank_order;
  int64_t gpus = 0, nodes = 0;
  int64_t gpus_per_node = 0;            // 0 when the cluster groups differ
  std::vector<TrafficNodes> cluster_groups;
  bool gpu_level = true;                // cells are GPU x GPU (else node x node)
  std::vector<TrafficCell> cells;       // nonzero cells, sorted by (from, to)
  std::array<std::array<double, 2>, kGroupKinds> totals{};  // [kind][tier], bytes per iteration
  std::vector<GroupLocality> groups;    // the kinds the census uses
  std::vector<OpBandwidth> bandwidth;   // every census operation of every stage
  std::vector<BandwidthCurve> curves;   // one per path the operations use
  std::vector<TrafficRange> ranges;     // kinds whose bytes are not exact (MoE all-to-all)
  bool has_load = false;                // false when the timeline is too long to report
  LinkLoad load;
  double total() const;
};

// The matrix of a checked scenario. Several cluster groups with plan.stages: stage i runs on the
// next tp·cp·dp GPUs of its group, the groups' nodes numbered one after the other; a pipeline or
// embedding message between groups counts as scale-out. Errors: unsupported for plan.replicas
// (each set runs its own census, and the estimate reports only the slowest set's),
// budget_exceeded past the budgets above.
Result<Traffic> traffic(const Scenario& scenario, const TrafficOptions& options = {});

// Bytes one GPU of the stage sends per iteration for an operation, averaged over its group's
// members (exact for every GPU except broadcasts' chain ends and pipeline edge stages, which
// the matrix resolves per rank).
double census_sent_bytes(const CommOp& op);

// The matrix as JSON, through one key table per struct (engine/src/tools/traffic_json.cpp, as
// the report's): an error naming the first number that is not finite, where one is.
Result<Json> traffic_json(const Traffic& traffic);
// Those tables as report_schema() gives the report's: {"traffic": [{name, unit, label, doc,
// of?, array?}], "traffic.cells[]": [...], ...}; docs/scenario.md's traffic tables are filled
// from it (fill_report_tables).
Json traffic_schema();
// One row per nonzero cell: from,to,tier then a column per kind (by kind) or per tier (by tier).
std::string to_csv(const Traffic& traffic, bool by_kind);

}  // namespace stepcast
