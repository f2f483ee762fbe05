// nccl-tests output (NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf) and the link cost model fitted to it.
//
// The text: "# nThread 1 nGpus 1 minBytes 8 maxBytes ..." header, one "#  Rank  N Group  0 Pid P
// on HOST device D [BUS] GPU NAME" line per rank (older versions omit "Group N"), then a table of
// size, count, type, redop, root (older versions omit root) and, out-of-place then in-place,
// time (us), algbw, busbw (GB/s) and #wrong; "# Avg bus bandwidth : X" closes it. mpirun may
// prefix each line with "[0] "; NCCL INFO lines may be interleaved.
//
// The fit: the engine prices a collective of S bytes as F*(S + S_half)/peak + steps*latency
// (collectives.h), a straight line in S. Its slope and intercept are fitted to the measured
// times of sizes >= 1 MiB (least squares on relative error); the latency is the small-message
// floor (capped by the intercept) and S_half the rest of the intercept. Across nodes the group's
// bandwidth is the node's ports (comm_path): the port's figures follow by dividing by the NICs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/hardware.h"
#include "stepcast/json.h"
#include "stepcast/collectives.h"
#include "stepcast/result.h"

namespace stepcast {

// One row of the table, one of its two halves (out-of-place or in-place).
struct NcclTestPoint {
  double size_bytes = 0;
  double time_s = 0;
  double busbw_Bps = 0;
};

struct NcclTestRun {
  CollectiveKind collective = CollectiveKind::all_reduce;
  int ranks = 0;
  int hosts = 0;
  std::string gpu_name;              // as nccl-tests printed it
  std::vector<NcclTestPoint> points;  // every measured half-row, in order
};

// Reads one nccl-tests output. `name_hint` (the file name, say) names the test when it contains
// all_reduce, all_gather, reduce_scatter, alltoall or sendrecv; otherwise the table's
// busbw/algbw ratio and reduction column tell it (all_gather and alltoall share both, so an
// unnamed one is refused). Errors are one line; nothing in the text can make it fail otherwise.
Result<NcclTestRun> parse_nccl_tests(std::string_view text, std::string_view name_hint);

// How well the fitted link reproduces one run, through the engine's own collective_time_s.
struct NcclRunCheck {
  std::string label;  // "all_reduce, 8 ranks on 1 host"
  int points = 0;     // sizes >= 1 MiB compared
  double max_busbw_error = 0;   // largest |model/measured - 1| of bus bandwidth
  double mean_busbw_error = 0;
};

struct NcclLinkFit {
  LinkSpec link;
  int ranks_per_host = 0;
  int hosts = 0;
  int nics_per_node = 0;  // inter-node: ports the test's node used (assumed or given)
  std::vector<NcclRunCheck> checks;
};

// Fits one link (intra-node when every run's ranks share a host, inter-node otherwise; runs of
// both tiers together are refused) from one or more runs. nics_per_node = 0: one port per GPU.
Result<NcclLinkFit> fit_nccl_link(const std::vector<NcclTestRun>& runs, int nics_per_node);

// Whether a run measured the GPU a cluster has (issue 37 item 6): nccl-tests names each rank's
// device ("NVIDIA A100-SXM4-80GB"); its model (the first word with a digit: A100, MI300X, 4090)
// must be a word of the GPU's preset id or name ("h100-sxm5-80gb"). An error naming both when it
// is not; nothing when the output names no device.
std::optional<Error> nccl_gpu_error(const NcclTestRun& run, const GpuSpec& gpu);

// The link as a scenario accepts it (cluster.intra_node_link / inter_node_link), with its source.
Json nccl_link_json(const NcclLinkFit& fit, const std::vector<std::string>& files);

}  // namespace stepcast
