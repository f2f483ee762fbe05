// The traffic matrix of one iteration: bytes each GPU sends each other GPU, by group kind and by
// link tier, derived from the communication census (census.h) and the algorithm of each
// collective, with the ranks placed as Megatron-Core numbers them (ranks.h). Following
// shared/reference/comm-predictability.md section 2 and nccl-tests' bus-bandwidth factors:
//   ring all-reduce:            2(n-1)/n x S to the ring successor,
//   ring all-gather / reduce-scatter: (n-1)/n x S to the ring successor,
//   broadcast (a chain from group rank 0): S from each member but the last to its successor,
//   all-to-all (uniform routing):  S/n to every other member,
//   context-parallel ring step:    S to the ring successor,
//   pipeline send/recv:            S per message to the neighbouring stage the schedule names
//                                  (interleaved: rank pp-1 sends on to rank 0's next chunk).
// S is the census's size of one operation. The census is per GPU and the same for every GPU of
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
};

struct Traffic {
  std::string rank_order;
  int64_t gpus = 0, nodes = 0, gpus_per_node = 0;
  bool gpu_level = true;                // cells are GPU x GPU (else node x node)
  std::vector<TrafficCell> cells;       // nonzero cells, sorted by (from, to)
  std::array<std::array<double, 2>, kGroupKinds> totals{};  // [kind][tier], bytes per iteration
  std::vector<GroupLocality> groups;    // the kinds the census uses
  std::vector<OpBandwidth> bandwidth;   // every census operation of every stage
  double total() const;
};

// The matrix of a checked scenario. Errors: unsupported for several cluster groups or replica
// sets (placed stage by stage, not by rank order), budget_exceeded past the budgets above.
Result<Traffic> traffic(const Scenario& scenario, const TrafficOptions& options = {});

// Bytes one GPU of the stage sends per iteration for an operation, averaged over its group's
// members (exact for every GPU except broadcasts' chain ends and pipeline edge stages, which
// the matrix resolves per rank).
double census_sent_bytes(const CommOp& op);

Json to_json(const Traffic& traffic);
// One row per nonzero cell: from,to,tier then a column per kind (by kind) or per tier (by tier).
std::string to_csv(const Traffic& traffic, bool by_kind);

}  // namespace stepcast
