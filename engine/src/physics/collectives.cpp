#include "stepcast/collectives.h"

#include <algorithm>
#include <cmath>

namespace stepcast {

GroupPlacement place_group(int size, int64_t stride, int gpus_per_node) {
  GroupPlacement g;
  g.size = std::max(size, 1);
  const int64_t fit = stride >= gpus_per_node ? 1 : gpus_per_node / stride;
  g.per_node = static_cast<int>(std::clamp<int64_t>(fit, 1, g.size));
  return g;
}

CommPath comm_path(const ClusterGroup& c, const GroupPlacement& g) {
  CommPath p;
  const LinkSpec& intra = c.intra_node_link;
  if (!g.spans_nodes()) {
    p.link = &intra;
    p.busbw_Bps = intra.busbw_Bps;
    p.allreduce_busbw_Bps = intra.allreduce_busbw_Bps;
    p.half_peak_bytes = intra.half_peak_bytes;
    p.latency_s = intra.latency_s;
    return p;
  }
  // All groups of one kind run at once, so the node's ports are shared by gpus_per_node/per_node
  // groups: each gets nics * port_busbw * per_node / gpus_per_node, and never more than the
  // fabric inside the node carries.
  const LinkSpec& inter = c.inter_node_link;
  const double share = inter.busbw_Bps * c.nics_per_node * g.per_node / c.gpus_per_node;
  p.link = &inter;
  p.busbw_Bps = std::min(share, intra.busbw_Bps);
  p.allreduce_busbw_Bps = std::min(share, intra.busbw_Bps);
  // A port reaches half its bandwidth at half_peak_bytes; a group striping over several ports
  // needs proportionally larger messages for the same fill time (S_half / busbw).
  p.half_peak_bytes = inter.half_peak_bytes * p.busbw_Bps / inter.busbw_Bps;
  p.latency_s = inter.latency_s;
  p.nodes = g.nodes();
  p.hop_latency_s = kRingIntraHopLatency_s;
  return p;
}

CommPath inter_group_path(const ClusterGroup& from, const LinkSpec& link, int per_node,
                          int nodes) {
  CommPath p;
  p.link = &link;
  const double share = link.busbw_Bps * from.nics_per_node * per_node / from.gpus_per_node;
  p.busbw_Bps = std::min(share, from.intra_node_link.busbw_Bps);
  p.allreduce_busbw_Bps = p.busbw_Bps;
  p.half_peak_bytes = link.half_peak_bytes * p.busbw_Bps / link.busbw_Bps;
  p.latency_s = link.latency_s;
  p.nodes = std::max(nodes, 2);
  p.hop_latency_s = kRingIntraHopLatency_s;
  return p;
}

const CommPath& slowest(const CommPath& a, const CommPath& b) {
  return a.busbw_Bps <= b.busbw_Bps ? a : b;
}

double bus_factor(CollectiveKind kind, int n) {
  const double frac = n > 1 ? static_cast<double>(n - 1) / n : 0.0;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2 * frac;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return frac;
    case CollectiveKind::all_to_all: return frac;
    case CollectiveKind::send_recv:
    case CollectiveKind::broadcast: return 1;
  }
  return 1;
}

// Inside a node one latency floor per collective (measured whole, e.g. 13.7 us for an 8-GPU
// all-reduce on DGX H100). Across nodes NCCL runs all-reduce as a tree (up and down: 2 log2 nodes
// steps) and all-gather / reduce-scatter as a ring (nodes - 1 steps).
int latency_steps(CollectiveKind kind, int nodes) {
  if (nodes <= 1) return 1;
  switch (kind) {
    case CollectiveKind::all_reduce:
      return 2 * static_cast<int>(std::ceil(std::log2(static_cast<double>(nodes))));
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return nodes - 1;
    default: return 1;
  }
}

namespace {
// The bus bandwidth a collective of this kind reaches on the path at large messages.
double bus_peak_Bps(CollectiveKind kind, const CommPath& path) {
  return kind == CollectiveKind::all_reduce ? path.allreduce_busbw_Bps : path.busbw_Bps;
}
}  // namespace

double collective_latency_s(CollectiveKind kind, int n, const CommPath& path) {
  const bool ring = kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter;
  const int intra_hops = ring && path.nodes > 1 ? std::max(0, n - path.nodes) : 0;
  return latency_steps(kind, path.nodes) * path.latency_s + intra_hops * path.hop_latency_s;
}

double collective_time_s(CollectiveKind kind, double bytes, int n, const CommPath& path) {
  if (bytes <= 0) return 0;
  if (n <= 1 && kind != CollectiveKind::send_recv) return 0;
  const double peak = bus_peak_Bps(kind, path);
  if (peak <= 0) return 0;
  return bus_factor(kind, n) * (bytes + path.half_peak_bytes) / peak +
         collective_latency_s(kind, n, path);
}

double collective_fixed_s(CollectiveKind kind, int n, const CommPath& path) {
  if (n <= 1 && kind != CollectiveKind::send_recv) return 0;
  const double peak = bus_peak_Bps(kind, path);
  if (peak <= 0) return 0;
  return bus_factor(kind, n) * path.half_peak_bytes / peak + collective_latency_s(kind, n, path);
}

AllToAllPath all_to_all_path(const ClusterGroup& c, const GroupPlacement& g) {
  AllToAllPath p;
  p.size = g.size;
  p.per_node = g.per_node;
  const LinkSpec& intra = c.intra_node_link;
  p.intra_Bps = intra.busbw_Bps;
  p.intra_half_peak_bytes = intra.half_peak_bytes;
  p.latency_s = intra.latency_s;
  p.link = &intra;
  if (g.spans_nodes()) {
    const LinkSpec& inter = c.inter_node_link;
    p.inter_Bps = std::min(inter.busbw_Bps * c.nics_per_node / c.gpus_per_node, intra.busbw_Bps);
    p.inter_half_peak_bytes = inter.half_peak_bytes * p.inter_Bps / inter.busbw_Bps;
    p.latency_s = std::max(p.latency_s, inter.latency_s);
    p.link = &inter;
  }
  return p;
}

double all_to_all_time_s(double bytes, const AllToAllPath& p, double remote_scale) {
  if (p.size <= 1 || bytes <= 0 || p.intra_Bps <= 0) return 0;
  const double n = p.size;
  const double local = bytes * (p.per_node - 1) / n;
  const double remote = bytes * (n - p.per_node) / n * remote_scale;
  double t = local > 0 ? (local + p.intra_half_peak_bytes) / p.intra_Bps : 0;
  if (remote > 0 && p.inter_Bps > 0)
    t = std::max(t, (remote + p.inter_half_peak_bytes) / p.inter_Bps);
  return t + p.latency_s;
}

}  // namespace stepcast
