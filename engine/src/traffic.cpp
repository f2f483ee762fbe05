#include "stepcast/traffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "stepcast/estimate.h"
#include "stepcast/ranks.h"

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
};

// Which group of which grid the census means, told apart by kind and size (census.cpp).
Result<OpGroup> op_group(const CommOp& op, const Plan& p, const RankGrid& dense,
                         const RankGrid& expert) {
  const auto tp = dim_bit(Dim::tp), cp = dim_bit(Dim::cp), ep = dim_bit(Dim::ep),
             dp = dim_bit(Dim::dp), pp = dim_bit(Dim::pp);
  const int64_t n = op.group_size;
  auto on = [&](const RankGrid& g, DimMask dims) -> Result<OpGroup> {
    if (group_size(g, dims) == n) return OpGroup{&g, dims};
    return Error{ErrorCode::unsupported, "plan",
                 fmt::format("traffic: the census's {} group of {} ranks has no placement",
                             to_string(op.group), n)};
  };
  switch (op.group) {
    case CommGroup::tp: return on(dense, n == p.tp ? tp : tp | cp);
    case CommGroup::cp: return on(dense, cp);
    case CommGroup::dp: return on(dense, dp | cp);
    case CommGroup::pp: return OpGroup{&dense, pp, OpGroup::Shape::pipeline};
    case CommGroup::embedding: return OpGroup{&dense, pp, OpGroup::Shape::ends};
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
  int64_t gpus_per_node = 1;
  bool gpu_level = true;
  int64_t endpoints = 1;
  std::unordered_map<uint64_t, std::array<double, kGroupKinds>> cells;
  std::array<std::array<double, 2>, kGroupKinds> totals{};

  void send(int64_t from, int64_t to, CommGroup kind, double bytes) {
    if (bytes <= 0 || from == to) return;
    const int64_t nf = from / gpus_per_node, nt = to / gpus_per_node;
    const LinkTier tier = nf == nt ? LinkTier::scale_up : LinkTier::scale_out;
    totals[idx(kind)][static_cast<size_t>(tier)] += bytes;
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
    // Virtual stage k = chunk * pp + rank sends activations to k + 1 and gradients to k - 1
    // (schedules.py); rank pp-1 hands on to rank 0's next chunk. Each direction's census
    // operation counts sends and receives, so sends come from the schedule.
    const Coords c = grid.coords_of(rank);
    const int64_t i = c[ppd], v = p.vpp, P = p.pp;
    const bool forward = op.phase != Phase::backward;
    const int64_t chunks = forward ? (i == P - 1 ? v - 1 : v) : (i == 0 ? v - 1 : v);
    Coords peer = c;
    peer[ppd] = forward ? (i + 1) % P : (i + P - 1) % P;
    w.send(rank, grid.rank_of(peer), op.group,
           static_cast<double>(chunks * micro_batches) * S);
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
               count * S / static_cast<double>(n));
      return;
  }
}

// Where every group of one kind sits: each group's members, walked from its rank-0 member.
GroupLocality locality(CommGroup kind, const OpGroup& g, const Plan& p, int64_t gpus_per_node) {
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
    for (int64_t m : members) per_node[m / gpus_per_node] += 1;
    for (const auto& entry : per_node) out.max_per_node = std::max(out.max_per_node, entry.second);
    if (per_node.size() > 1) ++out.spanning_groups;
  }
  return out;
}

// What the cost model gives one operation, against the line rate it could use per GPU: the
// scale-up link's inside a node; across nodes the node's ports shared by its GPUs, times the
// group's members per node (NCCL stripes a ring over that many ports), at most the scale-up
// rate. An all-to-all moves its in-node and cross-node shares at once.
OpBandwidth bandwidth_of(int stage, const CommOp& op, const GroupPlacement& place,
                         const ClusterGroup& c) {
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
    const double remote = op.bytes * (n - place.per_node) / n;
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
  if (sc.cluster.groups.size() != 1 || !p.stages.empty() || !p.replicas.empty())
    return Error{ErrorCode::unsupported, "cluster.groups",
                 "traffic: clusters of several groups (or plan.stages / plan.replicas) are "
                 "placed stage by stage, not by rank order; the traffic matrix covers one group"};
  const ClusterGroup& cluster = sc.cluster.groups.front();
  Traffic t;
  t.rank_order = p.rank_order;
  t.gpus = sc.cluster.gpus();
  t.gpus_per_node = cluster.gpus_per_node;
  t.nodes = cluster.nodes;
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

  const Report report = estimate(sc);
  const RankGrid dense = dense_grid(p), expert = expert_grid(p);
  // Each stage's operations with their groups, and the walk's cost, before walking.
  std::vector<std::vector<std::pair<CommOp, OpGroup>>> stage_ops(p.pp);
  std::array<const OpGroup*, kGroupKinds> kind_group{};
  std::vector<std::unique_ptr<OpGroup>> kinds_seen;
  const int64_t per_stage = t.gpus / p.pp;
  int64_t work = 0;
  for (const StageReport& st : report.stages) {
    if (st.index < 0 || st.index >= p.pp) continue;
    for (const CommOp& op : st.communication) {
      auto g = op_group(op, p, dense, expert);
      if (!g) return g.error();
      stage_ops[st.index].push_back({op, *g});
      work += per_stage * peers(op);
      t.bandwidth.push_back(bandwidth_of(st.index, op, placement_of(*g, p, cluster.gpus_per_node),
                                         cluster));
      if (!kind_group[idx(op.group)]) {
        kinds_seen.push_back(std::make_unique<OpGroup>(*g));
        kind_group[idx(op.group)] = kinds_seen.back().get();
      }
    }
  }
  if (work > kMaxTrafficWork)
    return Error{ErrorCode::budget_exceeded, "plan",
                 fmt::format("traffic: {} sender-receiver pairs to walk, at most {}", work,
                             kMaxTrafficWork)};

  Walk w;
  w.gpus_per_node = cluster.gpus_per_node;
  w.gpu_level = t.gpu_level;
  w.endpoints = t.gpu_level ? t.gpus : t.nodes;
  for (int64_t r = 0; r < t.gpus; ++r) {
    const int64_t stage = dense.coords_of(r)[idx(Dim::pp)];
    for (const auto& entry : stage_ops[stage])
      sends_of(entry.first, entry.second, p, report.micro_batches, r, w);
  }
  t.totals = w.totals;
  t.cells.reserve(w.cells.size());
  for (const auto& entry : w.cells) {
    TrafficCell cell;
    cell.from = static_cast<int64_t>(entry.first / static_cast<uint64_t>(w.endpoints));
    cell.to = static_cast<int64_t>(entry.first % static_cast<uint64_t>(w.endpoints));
    const bool same = t.gpu_level ? cell.from / t.gpus_per_node == cell.to / t.gpus_per_node
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
      t.groups.push_back(locality(static_cast<CommGroup>(k), *kind_group[k], p, t.gpus_per_node));
  return t;
}

Json to_json(const Traffic& t) {
  Json j;
  j["rank_order"] = t.rank_order;
  j["level"] = t.gpu_level ? "gpu" : "node";
  j["gpus"] = t.gpus;
  j["nodes"] = t.nodes;
  j["gpus_per_node"] = t.gpus_per_node;
  j["total_bytes"] = t.total();
  Json by_kind = Json::object(), by_tier = {{"scale_up", 0.0}, {"scale_out", 0.0}};
  for (size_t k = 0; k < kGroupKinds; ++k) {
    const auto& tiers = t.totals[k];
    if (tiers[0] + tiers[1] <= 0) continue;
    by_kind[std::string(EnumNames<CommGroup>::values[k])] = {{"scale_up", tiers[0]},
                                                             {"scale_out", tiers[1]}};
    by_tier["scale_up"] = by_tier["scale_up"].get<double>() + tiers[0];
    by_tier["scale_out"] = by_tier["scale_out"].get<double>() + tiers[1];
  }
  j["bytes_by_kind"] = by_kind;
  j["bytes_by_tier"] = by_tier;
  Json groups = Json::array();
  for (const auto& g : t.groups)
    groups.push_back({{"kind", to_string(g.kind)},
                      {"size", g.size},
                      {"groups", g.groups},
                      {"max_per_node", g.max_per_node},
                      {"spanning_groups", g.spanning_groups},
                      {"inside_node", g.inside_node()}});
  j["groups"] = groups;
  Json cells = Json::array();
  for (const auto& c : t.cells) {
    Json bytes = Json::object();
    for (size_t k = 0; k < kGroupKinds; ++k)
      if (c.bytes[k] > 0) bytes[std::string(EnumNames<CommGroup>::values[k])] = c.bytes[k];
    cells.push_back({{"from", c.from}, {"to", c.to}, {"tier", to_string(c.tier)},
                     {"bytes", bytes}});
  }
  j["cells"] = cells;
  Json bw = Json::array();
  for (const auto& b : t.bandwidth)
    bw.push_back({{"stage", b.stage},
                  {"collective", to_string(b.op.kind)},
                  {"group", to_string(b.op.group)},
                  {"phase", to_string(b.op.phase)},
                  {"what", b.op.what},
                  {"count", b.op.count},
                  {"message_bytes", b.op.bytes},
                  {"group_size", b.op.group_size},
                  {"link", b.op.link},
                  {"time_s", b.op.time_s},
                  {"algbw_Bps", b.algbw_Bps},
                  {"busbw_Bps", b.busbw_Bps},
                  {"peak_Bps", b.peak_Bps},
                  {"fraction_of_peak", b.fraction_of_peak}});
  j["bandwidth"] = bw;
  return j;
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
