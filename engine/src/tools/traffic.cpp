#include "stepcast/traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "stepcast/estimate.h"
#include "stepcast/link_load.h"
#include "stepcast/ranks.h"
#include "stepcast/schedule.h"

namespace stepcast {

namespace {

using K = CollectiveKind;
constexpr size_t idx(CommGroup g) { return static_cast<size_t>(g); }
constexpr size_t idx(Dim d) { return static_cast<size_t>(d); }

// The ranks an operation's group is made of: dimensions of one grid, or the pipeline's pairs.
struct OpGroup {
  const RankGrid* grid = nullptr;
  DimMask dims = 0;
  enum class Shape { grid, pipeline, ends } shape = Shape::grid;  // ends: first and last stage
  double remote_scale = 1;  // cross-node share of an all-to-all on the wire (flex, census.h)
  GroupPlacement place;     // where the cost model places it (collectives.h)
};

// Where every rank runs. One cluster group: rank r on GPU r, node r / gpus_per_node (torchrun).
// Several groups (plan.stages): the groups' nodes are numbered one group after the other, and
// stage i takes the next tp·cp·dp GPUs of its group in rank order, as check_layout counts them
// (the rank order is the default there, pp outermost, so a stage's ranks are consecutive).
struct Machines {
  std::vector<int64_t> phys;  // rank -> GPU (empty: the same)
  std::vector<int64_t> node_of_gpu;
  std::vector<int64_t> node_first_gpu, node_first_nic;
  std::vector<int> node_gpus, node_nics, node_group;
  int64_t gpu(int64_t rank) const { return phys.empty() ? rank : phys[static_cast<size_t>(rank)]; }
  int64_t node(int64_t gpu) const { return node_of_gpu[static_cast<size_t>(gpu)]; }
  // The node holding a NIC (NICs are numbered node by node).
  int64_t node_of_nic(int64_t nic) const {
    auto it = std::upper_bound(node_first_nic.begin(), node_first_nic.end(), nic);
    return static_cast<int64_t>(it - node_first_nic.begin()) - 1;
  }
};

Machines machines_of(const Scenario& sc, const RankGrid& dense) {
  Machines m;
  std::vector<int64_t> group_first_gpu;
  int64_t gpu = 0, nic = 0;
  for (size_t g = 0; g < sc.cluster.groups.size(); ++g) {
    const ClusterGroup& c = sc.cluster.groups[g];
    group_first_gpu.push_back(gpu);
    for (int n = 0; n < c.nodes; ++n) {
      const int64_t node = static_cast<int64_t>(m.node_gpus.size());
      m.node_first_gpu.push_back(gpu);
      m.node_first_nic.push_back(nic);
      m.node_gpus.push_back(c.gpus_per_node);
      m.node_nics.push_back(std::max(1, c.nics_per_node));
      m.node_group.push_back(static_cast<int>(g));
      m.node_of_gpu.insert(m.node_of_gpu.end(), static_cast<size_t>(c.gpus_per_node), node);
      gpu += c.gpus_per_node;
      nic += std::max(1, c.nics_per_node);
    }
  }
  const Plan& p = sc.plan;
  if (p.stages.empty()) return m;
  const int64_t per_stage = dense.stride[idx(Dim::pp)];
  std::vector<int64_t> used(sc.cluster.groups.size(), 0), stage_first;
  for (const auto& st : p.stages) {
    const auto g = static_cast<size_t>(st.group);
    stage_first.push_back(group_first_gpu[g] + used[g]);
    used[g] += per_stage;
  }
  m.phys.resize(static_cast<size_t>(dense.world()));
  for (int64_t r = 0; r < dense.world(); ++r) {
    const int64_t stage = dense.coords_of(r)[idx(Dim::pp)];
    m.phys[static_cast<size_t>(r)] = stage_first[static_cast<size_t>(stage)] + r - stage * per_stage;
  }
  return m;
}

// Which group of which grid the census means, told apart by kind and size (census.cpp).
Result<OpGroup> op_group(const CommOp& op, const Plan& p, const RankGrid& dense,
                         const RankGrid& expert) {
  const auto tp = dim_bit(Dim::tp), cp = dim_bit(Dim::cp), ep = dim_bit(Dim::ep),
             dp = dim_bit(Dim::dp), pp = dim_bit(Dim::pp);
  const int64_t n = op.group_size;
  auto on = [&](const RankGrid& g, DimMask dims) -> Result<OpGroup> {
    if (group_size(g, dims) == n) return OpGroup{&g, dims, OpGroup::Shape::grid, 1, {}};
    return Error{ErrorCode::unsupported, "plan",
                 fmt::format("traffic: the census's {} group of {} ranks has no placement",
                             to_string(op.group), n)};
  };
  switch (op.group) {
    case CommGroup::tp: return on(dense, n == p.tp ? tp : tp | cp);
    case CommGroup::cp: return on(dense, cp);
    case CommGroup::dp: return on(dense, dp | cp);
    case CommGroup::pp: return OpGroup{&dense, pp, OpGroup::Shape::pipeline, 1, {}};
    case CommGroup::embedding: return OpGroup{&dense, pp, OpGroup::Shape::ends, 1, {}};
    case CommGroup::model_parallel:
      return on(dense, n == int64_t{p.tp} * p.pp ? tp | pp : tp | cp | dp | pp);
    case CommGroup::ep: return on(expert, op.kind == K::all_to_all ? ep : tp | ep);
    case CommGroup::etp: return on(expert, tp);
    case CommGroup::edp: return on(expert, dp);
  }
  return on(dense, 0);
}

// Peers one GPU sends to for one operation (the walk's cost).
int64_t peers(const CommOp& op) { return op.kind == K::all_to_all ? op.group_size - 1 : 1; }

struct Walk {
  const Machines* machines = nullptr;
  bool gpu_level = true;
  int64_t endpoints = 1;
  int pp = 1;
  std::unordered_map<uint64_t, std::array<double, kGroupKinds>> cells;
  std::array<std::array<double, 2>, kGroupKinds> totals{};
  // For the link load: the sender's stage and the operation's window, the bytes per tier by
  // (stage, window), and scale-out bytes per NIC by (NIC x pp + stage, window).
  int stage = 0;
  size_t window = 0;
  std::array<WindowBytes, 2> tier_window;
  std::unordered_map<int64_t, std::array<double, kLoadWindows>> nic_window;
  std::unordered_map<int64_t, bool> nic_leaves_group;  // NICs sending to another cluster group

  // From rank to rank (placed by `machines`).
  void send(int64_t from_rank, int64_t to_rank, CommGroup kind, double bytes,
            double remote_scale = 1) {
    if (bytes <= 0 || from_rank == to_rank) return;
    const Machines& m = *machines;
    const int64_t from = m.gpu(from_rank), to = m.gpu(to_rank);
    const int64_t nf = m.node(from), nt = m.node(to);
    const LinkTier tier = nf == nt ? LinkTier::scale_up : LinkTier::scale_out;
    if (tier == LinkTier::scale_out) bytes *= remote_scale;
    totals[idx(kind)][static_cast<size_t>(tier)] += bytes;
    tier_window[static_cast<size_t>(tier)][stage][window] += bytes;
    if (tier == LinkTier::scale_out) {
      // A GPU's NICs: nics / gpus of its own, or one shared with gpus / nics GPUs.
      const auto n = static_cast<size_t>(nf);
      const int64_t gpn = m.node_gpus[n], nics = m.node_nics[n];
      const int64_t local = from - m.node_first_gpu[n];
      const int64_t nic = m.node_first_nic[n] + local * nics / gpn;
      const double per_nic = nics > gpn ? bytes * static_cast<double>(gpn) / nics : bytes;
      nic_window[nic * pp + stage][window] += per_nic;
      if (m.node_group[n] != m.node_group[static_cast<size_t>(nt)]) nic_leaves_group[nic] = true;
    }
    const int64_t a = gpu_level ? from : nf, b = gpu_level ? to : nt;
    cells[static_cast<uint64_t>(a * endpoints + b)][idx(kind)] += bytes;
  }
};

// One GPU's sends for one operation, per iteration.
void sends_of(const CommOp& op, const OpGroup& g, const Plan& p, int64_t micro_batches,
              int64_t rank, Walk& w) {
  const double S = op.bytes, count = static_cast<double>(op.count);
  const int64_t n = op.group_size;
  const RankGrid& grid = *g.grid;
  const size_t ppd = idx(Dim::pp);
  if (g.shape == OpGroup::Shape::ends) {  // a two-rank ring all-reduce: S to the other end
    const Coords c = grid.coords_of(rank);
    Coords other = c;
    other[ppd] = c[ppd] == 0 ? p.pp - 1 : 0;
    w.send(rank, grid.rank_of(other), op.group, count * S * bus_factor(op.kind, 2));
    return;
  }
  if (g.shape == OpGroup::Shape::pipeline) {
    // Each virtual stage sends activations to the next and gradients to the one before, wherever
    // the schedule places them (schedule.h: Megatron's loop, chunk * pp + rank, where rank pp-1
    // hands on to rank 0's next chunk; or ZB-V's V, down the ranks and back up, where the turn
    // stays on the last rank). Each direction's census operation counts sends and receives, so
    // sends come from the schedule.
    const Coords c = grid.coords_of(rank);
    const int i = static_cast<int>(c[ppd]);
    const StagePlacement placement = schedule_of(p).placement;
    const int stages = p.pp * p.vpp;
    const bool forward = op.phase != Phase::backward;
    for (int chunk = 0; chunk < p.vpp; ++chunk) {
      const int k = virtual_stage_of(placement, p.pp, i, chunk);
      const int next = forward ? k + 1 : k - 1;
      if (next < 0 || next >= stages) continue;  // the model's first or last layer
      const int to = home_of(placement, p.pp, next).rank;
      if (to == i) continue;  // the next virtual stage on this rank: nothing sent
      Coords peer = c;
      peer[ppd] = to;
      w.send(rank, grid.rank_of(peer), op.group, static_cast<double>(micro_batches) * S);
    }
    return;
  }
  switch (op.kind) {
    case K::all_reduce:
    case K::all_gather:
    case K::reduce_scatter:
      w.send(rank, ring_neighbour(grid, g.dims, rank), op.group,
             count * S * bus_factor(op.kind, static_cast<int>(n)));
      return;
    case K::send_recv:  // a ring step (context parallelism): every member passes S on
      w.send(rank, ring_neighbour(grid, g.dims, rank), op.group, count * S);
      return;
    case K::broadcast:  // a chain from group rank 0; the last member sends nothing
      if (group_position(grid, g.dims, rank) + 1 < n)
        w.send(rank, ring_neighbour(grid, g.dims, rank), op.group, count * S);
      return;
    case K::all_to_all:
      for (int64_t q = 0; q < n; ++q)
        w.send(rank, group_member(grid, g.dims, rank, q), op.group,
               count * S / static_cast<double>(n), g.remote_scale);
      return;
  }
}

// Where every group of one kind sits: each group's members, walked from its rank-0 member.
GroupLocality locality(CommGroup kind, const OpGroup& g, const Plan& p, const Machines& where) {
  const RankGrid& grid = *g.grid;
  GroupLocality out;
  out.kind = kind;
  const bool ends = g.shape == OpGroup::Shape::ends;
  const bool pair = g.shape == OpGroup::Shape::pipeline;
  out.size = ends || pair ? std::min<int64_t>(2, p.pp) : group_size(grid, g.dims);
  for (int64_t r = 0; r < grid.world(); ++r) {
    const Coords c = grid.coords_of(r);
    std::vector<int64_t> members;
    if (ends) {
      if (c[idx(Dim::pp)] != 0) continue;
      Coords last = c;
      last[idx(Dim::pp)] = p.pp - 1;
      members = {r, grid.rank_of(last)};
    } else if (pair) {  // neighbouring stages
      if (c[idx(Dim::pp)] + 1 >= p.pp) continue;
      Coords next = c;
      next[idx(Dim::pp)] += 1;
      members = {r, grid.rank_of(next)};
    } else {
      if (group_position(grid, g.dims, r) != 0) continue;
      for (int64_t q = 0; q < out.size; ++q) members.push_back(group_member(grid, g.dims, r, q));
    }
    ++out.groups;
    std::unordered_map<int64_t, int64_t> per_node;
    for (int64_t m : members) per_node[where.node(where.gpu(m))] += 1;
    for (const auto& entry : per_node) out.max_per_node = std::max(out.max_per_node, entry.second);
    if (per_node.size() > 1) ++out.spanning_groups;
  }
  return out;
}

// What the cost model gives one operation, against the line rate it could use per GPU: the
// scale-up link's inside a node; across nodes the node's ports shared by its GPUs, times the
// group's members per node (NCCL stripes a ring over that many ports), at most the scale-up
// rate. An all-to-all moves its in-node and cross-node shares at once; of the cross-node share
// only `remote_scale` goes on the wire (flex sends a token once to each node: census.h), and its
// bus bandwidth counts the bytes on the wire, as the line rate does (counting the copies flex
// never sends put DeepEP's dispatch at up to 3.4 times its NICs' rate, issue 38).
OpBandwidth bandwidth_of(int stage, const CommOp& op, const GroupPlacement& place,
                         const ClusterGroup& c, double remote_scale) {
  OpBandwidth b;
  b.stage = stage;
  b.op = op;
  if (op.time_s <= 0) return b;
  const int n = op.group_size;
  b.algbw_Bps = op.bytes / op.time_s;
  b.busbw_Bps = b.algbw_Bps * bus_factor(op.kind, n);
  const double intra = c.intra_node_link.bandwidth_Bps_per_dir;
  const double ports = c.inter_node_link.bandwidth_Bps_per_dir * c.nics_per_node /
                       std::max(1, c.gpus_per_node);
  if (op.kind == K::all_to_all) {
    const double local = op.bytes * (place.per_node - 1) / n;
    const double remote = op.bytes * (n - place.per_node) / n * remote_scale;
    if (local + remote > 0) b.busbw_Bps = (local + remote) / op.time_s;
    const double fastest = std::max(local / intra, remote > 0 ? remote / std::min(ports, intra)
                                                                  : 0.0);
    b.peak_Bps = fastest > 0 ? (local + remote) / fastest : 0;
  } else if (!place.spans_nodes()) {
    b.peak_Bps = intra;
  } else {
    b.peak_Bps = std::min(intra, ports * place.per_node);
  }
  b.fraction_of_peak = b.peak_Bps > 0 ? b.busbw_Bps / b.peak_Bps : 0;
  return b;
}

GroupPlacement placement_of(const OpGroup& g, const Plan& p, int gpus_per_node) {
  const int64_t pp_stride = g.grid->stride[idx(Dim::pp)];
  if (g.shape == OpGroup::Shape::pipeline) return place_group(2, pp_stride, gpus_per_node);
  if (g.shape == OpGroup::Shape::ends)
    return place_group(2, pp_stride * std::max(1, p.pp - 1), gpus_per_node);
  return grid_placement(*g.grid, g.dims, gpus_per_node);
}

// The path the cost model prices an operation on (collectives.h), as a curve's parameters.
BandwidthCurve curve_of(const CommOp& op, const GroupPlacement& place, const ClusterGroup& c) {
  BandwidthCurve curve;
  if (op.kind == K::all_to_all) {
    const AllToAllPath a = all_to_all_path(c, place);
    const bool out = place.spans_nodes() && a.inter_Bps > 0;
    curve.peak_Bps = out ? a.inter_Bps : a.intra_Bps;
    curve.half_peak_bytes = out ? a.inter_half_peak_bytes : a.intra_half_peak_bytes;
    curve.link = a.link ? a.link->id : std::string();
  } else {
    const CommPath path = comm_path(c, place);
    curve.peak_Bps = op.kind == K::all_reduce ? path.allreduce_busbw_Bps : path.busbw_Bps;
    curve.half_peak_bytes = path.half_peak_bytes;
    curve.link = path.link ? path.link->id : std::string();
  }
  for (int i = 0; i < kCurveSizes; ++i) {
    const double size = std::exp2(10.0 + 22.0 * i / (kCurveSizes - 1));  // 1 KiB .. 4 GiB
    curve.sizes_bytes.push_back(size);
    curve.busbw_Bps.push_back(curve.peak_Bps * size / (size + curve.half_peak_bytes));
  }
  return curve;
}

int curve_index(std::vector<BandwidthCurve>& curves, BandwidthCurve curve) {
  for (size_t i = 0; i < curves.size(); ++i)
    if (curves[i].link == curve.link && curves[i].peak_Bps == curve.peak_Bps &&
        curves[i].half_peak_bytes == curve.half_peak_bytes)
      return static_cast<int>(i);
  curves.push_back(std::move(curve));
  return static_cast<int>(curves.size() - 1);
}

// The expected and the busiest pair's and GPU's bytes of the MoE all-to-alls, per iteration.
std::optional<TrafficRange> all_to_all_range(
    const Scenario& sc, const std::vector<std::vector<std::pair<CommOp, OpGroup>>>& stage_ops) {
  TrafficRange r;
  r.imbalance = sc.model.moe.capacity_factor > 0 ? 1 : sc.plan.busiest_rank_load();
  bool any = false;
  for (const auto& ops : stage_ops) {
    double pair = 0, gpu = 0, remote_pair = 0;
    for (const auto& [op, g] : ops) {
      if (op.kind != K::all_to_all || op.group != CommGroup::ep) continue;
      any = true;
      const GroupPlacement& place = g.place;
      const double one = static_cast<double>(op.count) * op.bytes / op.group_size;
      pair += place.per_node > 1 ? one : 0;
      remote_pair += place.spans_nodes() ? one * g.remote_scale : 0;
      gpu += one * ((place.per_node - 1) + (place.size - place.per_node) * g.remote_scale);
      r.flex_remote_scale = g.remote_scale;
    }
    r.expected_pair_bytes = std::max({r.expected_pair_bytes, pair, remote_pair});
    r.expected_gpu_bytes = std::max(r.expected_gpu_bytes, gpu);
  }
  if (!any) return std::nullopt;
  r.max_pair_bytes = r.expected_pair_bytes * r.imbalance;
  r.max_gpu_bytes = r.expected_gpu_bytes * r.imbalance;
  return r;
}

// The walk's bytes over the report's timeline (link_load.h), per second of each bin.
LinkLoad link_load(const Report& report, const Walk& w, const ClusterSpec& cluster) {
  LinkLoad load;
  double span_s = report.iteration_time_s;
  for (const auto& ev : report.timeline) span_s = std::max(span_s, ev.end_s);
  load.bin_s = span_s / kLoadBins;
  auto rate = [&](const WindowBytes& bytes) {
    std::vector<double> v = spread_over_timeline(report.timeline, bytes, span_s, kLoadBins);
    for (double& x : v) x = load.bin_s > 0 ? x / load.bin_s : 0;
    return v;
  };
  load.scale_up_Bps = rate(w.tier_window[0]);
  load.scale_out_Bps = rate(w.tier_window[1]);
  int64_t nodes = 0;
  for (const ClusterGroup& c : cluster.groups) {
    load.scale_up_capacity_Bps += c.intra_node_link.bandwidth_Bps_per_dir * c.gpus();
    load.scale_out_capacity_Bps +=
        c.inter_node_link.bandwidth_Bps_per_dir * std::max(1, c.nics_per_node) * c.nodes;
    nodes += c.nodes;
  }
  if (nodes <= 1) load.scale_out_capacity_Bps = 0;
  // The busiest NIC: most bytes per iteration, the lowest number among equals.
  std::unordered_map<int64_t, double> per_nic;
  for (const auto& [key, windows] : w.nic_window)
    for (double b : windows) per_nic[key / w.pp] += b;
  load.busiest_nic = -1;
  for (const auto& [nic, bytes] : per_nic)
    if (bytes > load.busiest_nic_bytes ||
        (bytes == load.busiest_nic_bytes && load.busiest_nic >= 0 && nic < load.busiest_nic)) {
      load.busiest_nic = nic;
      load.busiest_nic_bytes = bytes;
    }
  WindowBytes nic_bytes(static_cast<size_t>(w.pp));
  for (const auto& [key, windows] : w.nic_window)
    if (key / w.pp == load.busiest_nic) nic_bytes[static_cast<size_t>(key % w.pp)] = windows;
  load.busiest_nic = std::max<int64_t>(load.busiest_nic, 0);
  load.busiest_nic_Bps = rate(nic_bytes);
  // Its line rate: its group's network port, or the link between groups where it leaves the
  // group over a slower one.
  const Machines& m = *w.machines;
  const auto node = static_cast<size_t>(m.node_of_nic(load.busiest_nic));
  load.nic_capacity_Bps =
      cluster.groups[static_cast<size_t>(m.node_group[node])].inter_node_link.bandwidth_Bps_per_dir;
  if (w.nic_leaves_group.count(load.busiest_nic) &&
      cluster.inter_group_link.bandwidth_Bps_per_dir > 0)
    load.nic_capacity_Bps =
        std::min(load.nic_capacity_Bps, cluster.inter_group_link.bandwidth_Bps_per_dir);
  return load;
}

}  // namespace

double TrafficCell::total() const {
  double t = 0;
  for (double b : bytes) t += b;
  return t;
}

double Traffic::total() const {
  double t = 0;
  for (const auto& kind : totals) t += kind[0] + kind[1];
  return t;
}

double census_sent_bytes(const CommOp& op) {
  const double S = op.bytes, count = static_cast<double>(op.count);
  const int n = op.group_size;
  switch (op.kind) {
    case K::all_reduce:
    case K::all_gather:
    case K::reduce_scatter:
    case K::all_to_all: return count * S * bus_factor(op.kind, n);
    case K::broadcast: return count * S * (n - 1) / n;
    case K::send_recv:
      // Pipeline operations count sends and receives; a context-parallel step is both.
      return op.group == CommGroup::pp ? count * S / 2 : count * S;
  }
  return 0;
}

Result<Traffic> traffic(const Scenario& sc, const TrafficOptions& options) {
  const Plan& p = sc.plan;
  if (!p.replicas.empty())
    return Error{ErrorCode::unsupported, "plan.replicas",
                 "traffic: replica sets (plan.replicas) are not covered: each set runs its own "
                 "census (its micro-batches, its group's links) and the estimate reports the "
                 "slowest set's only; the matrix covers one-group clusters and stages placed on "
                 "groups (plan.stages)"};
  if (p.effective_schedule() == PipelineSchedule::dualpipe)
    return Error{ErrorCode::unsupported, "plan.schedule",
                 "traffic: plan.schedule dualpipe is not covered: its pipeline sends both ways "
                 "between mirrored ranks, which the matrix's one send per stage does not draw; "
                 "the matrix covers dualpipev"};
  Traffic t;
  t.rank_order = p.rank_order;
  t.gpus = sc.cluster.gpus();
  t.gpus_per_node = sc.cluster.groups.front().gpus_per_node;
  for (const ClusterGroup& c : sc.cluster.groups) {
    t.cluster_groups.push_back({c.gpus_per_node, c.nodes, /*first_node=*/t.nodes});
    t.nodes += c.nodes;
    if (c.gpus_per_node != t.gpus_per_node) t.gpus_per_node = 0;  // groups differ
  }
  t.gpu_level = options.level == TrafficLevel::gpu ||
                (options.level == TrafficLevel::automatic && t.gpus <= kMaxTrafficGpus);
  if (t.gpu_level && t.gpus > kMaxTrafficGpus)
    return Error{ErrorCode::budget_exceeded, "cluster",
                 fmt::format("traffic: the GPU x GPU matrix covers at most {} GPUs, the cluster "
                             "has {} (use the node level)",
                             kMaxTrafficGpus, t.gpus)};
  if (!t.gpu_level && (t.nodes > kMaxTrafficNodes || t.gpus > kMaxTrafficWalkGpus))
    return Error{ErrorCode::budget_exceeded, "cluster",
                 fmt::format("traffic: the node x node matrix covers at most {} nodes and {} "
                             "GPUs, the cluster has {} nodes and {} GPUs",
                             kMaxTrafficNodes, kMaxTrafficWalkGpus, t.nodes, t.gpus)};

  EstimateOptions with_timeline;
  with_timeline.timeline = true;
  const Report report = estimate(sc, with_timeline);
  const RankGrid dense = dense_grid(p), expert = expert_grid(p);
  const Machines machines = machines_of(sc, dense);
  // Each stage's operations with their groups, and the walk's cost, before walking.
  std::vector<std::vector<std::pair<CommOp, OpGroup>>> stage_ops(p.pp);
  std::array<const OpGroup*, kGroupKinds> kind_group{};
  std::vector<std::unique_ptr<OpGroup>> kinds_seen;
  const int64_t per_stage = t.gpus / p.pp;
  int64_t work = 0;
  for (const StageReport& st : report.stages) {
    if (st.index < 0 || st.index >= p.pp) continue;
    const ClusterGroup& own = sc.cluster.groups[static_cast<size_t>(st.group)];
    // A pipeline or embedding pair between groups runs on the link joining them, one GPU per
    // node at each end (inter_group_path): priced here as a pair spanning nodes on that link.
    ClusterGroup bridge = own;
    bridge.inter_node_link = sc.cluster.inter_group_link;
    for (const CommOp& op : st.communication) {
      auto g = op_group(op, p, dense, expert);
      if (!g) return g.error();
      OpGroup group = *g;
      const bool between = sc.cluster.groups.size() > 1 && !bridge.inter_node_link.id.empty() &&
                           op.link == bridge.inter_node_link.id &&
                           op.link != own.inter_node_link.id;
      const ClusterGroup& cluster = between ? bridge : own;
      group.place = between ? place_group(2, own.gpus_per_node, own.gpus_per_node)
                            : placement_of(group, p, own.gpus_per_node);
      if (op.kind == K::all_to_all)
        group.remote_scale = flex_remote_scale(sc.model, p, all_to_all_path(cluster, group.place));
      stage_ops[st.index].push_back({op, group});
      work += per_stage * peers(op);
      t.bandwidth.push_back(bandwidth_of(st.index, op, group.place, cluster, group.remote_scale));
      t.bandwidth.back().curve = curve_index(t.curves, curve_of(op, group.place, cluster));
      if (!kind_group[idx(op.group)]) {
        kinds_seen.push_back(std::make_unique<OpGroup>(group));
        kind_group[idx(op.group)] = kinds_seen.back().get();
      }
    }
  }
  if (work > kMaxTrafficWork)
    return Error{ErrorCode::budget_exceeded, "plan",
                 fmt::format("traffic: {} sender-receiver pairs to walk, at most {}", work,
                             kMaxTrafficWork)};

  Walk w;
  w.machines = &machines;
  w.gpu_level = t.gpu_level;
  w.endpoints = t.gpu_level ? t.gpus : t.nodes;
  w.pp = p.pp;
  for (auto& tier : w.tier_window) tier.assign(static_cast<size_t>(p.pp), {});
  for (int64_t r = 0; r < t.gpus; ++r) {
    const int64_t stage = dense.coords_of(r)[idx(Dim::pp)];
    w.stage = static_cast<int>(stage);
    for (const auto& entry : stage_ops[stage]) {
      w.window = static_cast<size_t>(load_window(entry.first.phase));
      sends_of(entry.first, entry.second, p, report.micro_batches, r, w);
    }
  }
  t.totals = w.totals;
  if (auto range = all_to_all_range(sc, stage_ops))
    t.ranges.push_back(*range);
  if (!report.timeline_truncated) t.load = link_load(report, w, sc.cluster);
  t.has_load = !report.timeline_truncated;
  t.cells.reserve(w.cells.size());
  for (const auto& entry : w.cells) {
    TrafficCell cell;
    cell.from = static_cast<int64_t>(entry.first / static_cast<uint64_t>(w.endpoints));
    cell.to = static_cast<int64_t>(entry.first % static_cast<uint64_t>(w.endpoints));
    const bool same = t.gpu_level ? machines.node(cell.from) == machines.node(cell.to)
                                  : cell.from == cell.to;
    cell.tier = same ? LinkTier::scale_up : LinkTier::scale_out;
    cell.bytes = entry.second;
    t.cells.push_back(cell);
  }
  std::sort(t.cells.begin(), t.cells.end(), [](const TrafficCell& a, const TrafficCell& b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  for (size_t k = 0; k < kGroupKinds; ++k)
    if (kind_group[k])
      t.groups.push_back(locality(static_cast<CommGroup>(k), *kind_group[k], p, machines));
  return t;
}

std::string to_csv(const Traffic& t, bool by_kind) {
  std::string out = "from,to,tier";
  std::vector<size_t> kinds;
  if (by_kind) {
    for (size_t k = 0; k < kGroupKinds; ++k)
      if (t.totals[k][0] + t.totals[k][1] > 0) {
        kinds.push_back(k);
        out += fmt::format(",{}_bytes", EnumNames<CommGroup>::values[k]);
      }
  } else {
    out += ",scale_up_bytes,scale_out_bytes";
  }
  out += ",total_bytes\n";
  for (const auto& c : t.cells) {
    out += fmt::format("{},{},{}", c.from, c.to, to_string(c.tier));
    if (by_kind) {
      for (size_t k : kinds) out += fmt::format(",{:.17g}", c.bytes[k]);
    } else {
      const bool up = c.tier == LinkTier::scale_up;
      out += fmt::format(",{:.17g},{:.17g}", up ? c.total() : 0.0, up ? 0.0 : c.total());
    }
    out += fmt::format(",{:.17g}\n", c.total());
  }
  return out;
}

}  // namespace stepcast
