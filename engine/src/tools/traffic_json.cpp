// The traffic matrix as JSON (traffic.h): one key table per struct it holds, as the report's
// (report/report_keys.h): each key's name, unit, doc and how its value is written. The JSON, the
// tables of docs/scenario.md ("Traffic matrix", `stepcast schema --write-docs`) and
// TrafficSchema.NamesEveryKeyATrafficJsonHolds (tests/engine/traffic_test.cpp) all read them.
#include <fmt/format.h>

#include "report/report_keys.h"
#include "stepcast/traffic.h"

namespace stepcast {

namespace {

using detail::JsonWriter;
using detail::ReportKey;
using detail::ReportTable;
using detail::value;
using detail::write_object;
using detail::write_scalar;

template <class Spec>
ReportTable<Spec> table(std::string_view name, std::span<const ReportKey<Spec>> keys) {
  return {name, keys, detail::key_order(keys)};
}

// A member of a member (an operation's own keys inside its bandwidth row).
template <auto Outer, auto Inner>
void write_inner(JsonWriter& w, const typename detail::MemberOf<Outer>::spec& s, ReportKind) {
  write_scalar(w, (s.*Outer).*Inner);
}

template <class T>
void write_numbers(JsonWriter& w, const std::vector<T>& values) {
  w.begin_array();
  for (const T& v : values) write_scalar(w, v);
  w.end_array();
}
template <auto Member>
void write_list(JsonWriter& w, const typename detail::MemberOf<Member>::spec& s, ReportKind) {
  write_numbers(w, s.*Member);
}

// Bytes scale-up and scale-out, as an object.
void write_tiers(JsonWriter& w, double scale_up, double scale_out) {
  w.begin_object();
  w.member("scale_out", scale_out);
  w.member("scale_up", scale_up);
  w.end_object();
}

// Bytes by group kind, the kinds with traffic only (names in nlohmann's order: the tree's).
template <class Bytes>
void write_by_kind(JsonWriter& w, Bytes bytes_of) {
  w.begin_object();
  std::vector<size_t> kinds;
  for (size_t k = 0; k < kGroupKinds; ++k) {
    auto at = kinds.begin();
    while (at != kinds.end() && EnumNames<CommGroup>::values[*at] < EnumNames<CommGroup>::values[k])
      ++at;
    kinds.insert(at, k);
  }
  for (const size_t k : kinds) bytes_of(k);
  w.end_object();
}

const ReportTable<TrafficNodes>& nodes_table();
const ReportTable<GroupLocality>& locality_table();
const ReportTable<TrafficCell>& cell_table();
const ReportTable<OpBandwidth>& bandwidth_table();
const ReportTable<BandwidthCurve>& curve_table();
const ReportTable<TrafficRange>& range_table();
const ReportTable<LinkLoad>& load_table();

template <class Child, const ReportTable<Child>& (*Table)(), auto Member>
void write_children(JsonWriter& w, const Traffic& t, ReportKind kind) {
  const ReportTable<Child>& table = Table();
  w.begin_array();
  for (const Child& c : t.*Member) write_object<Child>(w, c, table.keys, table.order, kind);
  w.end_array();
}

// --- The matrix.

constexpr ReportKey<Traffic> kTraffic[] = {
    value<&Traffic::rank_order>("rank_order", "", "Rank order",
                                "the rank order used (plan.rank_order)"),
    {"level", "", "Level",
     "`gpu` (cells are GPUs) or `node` (cells are nodes; a node's own GPUs talking lands on the "
     "diagonal)",
     [](JsonWriter& w, const Traffic& t, ReportKind) { w.value(t.gpu_level ? "gpu" : "node"); }},
    value<&Traffic::gpus>("gpus", "", "GPUs", "GPUs of the cluster"),
    value<&Traffic::nodes>("nodes", "", "Nodes", "nodes of the cluster"),
    value<&Traffic::gpus_per_node>("gpus_per_node", "", "GPUs per node",
                                   "0 when the cluster's groups differ"),
    {"cluster_groups", "", "Cluster groups",
     "per cluster group (groups are numbered one after the other)",
     &write_children<TrafficNodes, &nodes_table, &Traffic::cluster_groups>,
     "traffic.cluster_groups[]", /*array=*/true},
    {"total_bytes", "bytes", "Total",
     "every byte sent in one iteration (equals the census over all GPUs)",
     [](JsonWriter& w, const Traffic& t, ReportKind) { w.value(t.total()); }},
    {"bytes_by_kind", "bytes", "By kind",
     "per group kind with traffic (`tp`, `cp`, `pp`, `dp`, `embedding`, `model_parallel`, `ep`, "
     "`etp`, `edp`): `{scale_up, scale_out}`, bytes inside nodes / between nodes",
     [](JsonWriter& w, const Traffic& t, ReportKind) {
       write_by_kind(w, [&](size_t k) {
         const auto& tiers = t.totals[k];
         if (tiers[0] + tiers[1] <= 0) return;
         w.key(EnumNames<CommGroup>::values[k]);
         write_tiers(w, tiers[0], tiers[1]);
       });
     }},
    {"bytes_by_tier", "bytes", "By tier", "the same, all kinds: `{scale_up, scale_out}`",
     [](JsonWriter& w, const Traffic& t, ReportKind) {
       double up = 0, out = 0;
       for (const auto& tiers : t.totals)
         if (tiers[0] + tiers[1] > 0) {
           up += tiers[0];
           out += tiers[1];
         }
       write_tiers(w, up, out);
     }},
    {"groups", "", "Placement", "per group kind the census uses, where its groups sit",
     &write_children<GroupLocality, &locality_table, &Traffic::groups>, "traffic.groups[]",
     /*array=*/true},
    {"cells", "", "Cells",
     "the nonzero cells, sorted by `from`, `to` (`--by tier` on the CLI: `bytes` by tier)",
     &write_children<TrafficCell, &cell_table, &Traffic::cells>, "traffic.cells[]",
     /*array=*/true},
    {"bandwidth", "", "Effective bandwidth", "every census operation of every stage",
     &write_children<OpBandwidth, &bandwidth_table, &Traffic::bandwidth>, "traffic.bandwidth[]",
     /*array=*/true},
    {"curves", "", "Bandwidth curves",
     "the cost model's bus bandwidth on each path the operations use; operations sit at or a "
     "little below their curve (they also pay a latency floor; an all-to-all's time includes "
     "the imbalance)",
     &write_children<BandwidthCurve, &curve_table, &Traffic::curves>, "traffic.curves[]",
     /*array=*/true},
    {"ranges", "", "Ranges",
     "kinds whose bytes are not exact: the MoE all-to-all, an expected value under uniform "
     "routing. Dense kinds are exact and have no entry",
     &write_children<TrafficRange, &range_table, &Traffic::ranges>, "traffic.ranges[]",
     /*array=*/true},
    {"load", "", "Link load",
     "link load over the iteration (engine/include/stepcast/link_load.h), or `null` when the "
     "schedule has more blocks than a timeline reports",
     [](JsonWriter& w, const Traffic& t, ReportKind kind) {
       if (!t.has_load) {
         w.value(Json(nullptr));
         return;
       }
       const ReportTable<LinkLoad>& table = load_table();
       write_object<LinkLoad>(w, t.load, table.keys, table.order, kind);
     },
     "traffic.load"},
};

// --- A cluster group's nodes.

constexpr ReportKey<TrafficNodes> kNodes[] = {
    value<&TrafficNodes::gpus_per_node>("gpus_per_node", "", "GPUs per node", "its nodes' GPUs"),
    value<&TrafficNodes::nodes>("nodes", "", "Nodes", "its nodes"),
    value<&TrafficNodes::first_node>("first_node", "", "First node",
                                     "the number of its first node"),
};

// --- Where the groups of one kind sit.

constexpr ReportKey<GroupLocality> kLocality[] = {
    value<&GroupLocality::kind>("kind", "", "Kind", "the group kind (`tp`, `dp`, `ep`, ...)"),
    value<&GroupLocality::size>("size", "", "Size", "GPUs of one group"),
    value<&GroupLocality::groups>("groups", "", "Groups", "how many groups there are"),
    value<&GroupLocality::max_per_node>("max_per_node", "", "Most per node",
                                        "most members of one group in one node"),
    value<&GroupLocality::spanning_groups>("spanning_groups", "", "Spanning groups",
                                           "groups that leave a node"),
    {"inside_node", "", "Inside a node", "no group leaves a node",
     [](JsonWriter& w, const GroupLocality& g, ReportKind) { w.value(g.inside_node()); }},
};

// --- One nonzero cell.

constexpr ReportKey<TrafficCell> kCell[] = {
    value<&TrafficCell::from>("from", "", "From", "the sending GPU (or node)"),
    value<&TrafficCell::to>("to", "", "To", "the receiving GPU (or node)"),
    value<&TrafficCell::tier>("tier", "", "Tier",
                              "`scale_up` (inside a node) or `scale_out` (between nodes)"),
    {"bytes", "bytes", "Bytes", "per group kind with traffic: `{kind: bytes}` per iteration",
     [](JsonWriter& w, const TrafficCell& c, ReportKind) {
       write_by_kind(w, [&](size_t k) {
         if (c.bytes[k] > 0) w.member(EnumNames<CommGroup>::values[k], c.bytes[k]);
       });
     }},
};

// --- One census operation's effective bandwidth.

constexpr ReportKey<OpBandwidth> kBandwidth[] = {
    value<&OpBandwidth::stage>("stage", "", "Stage", "the pipeline stage"),
    {"collective", "", "Collective", "the operation's kind (`all_reduce`, `all_to_all`, ...)",
     &write_inner<&OpBandwidth::op, &CommOp::kind>},
    {"group", "", "Group", "its group kind", &write_inner<&OpBandwidth::op, &CommOp::group>},
    {"phase", "", "Phase", "its phase", &write_inner<&OpBandwidth::op, &CommOp::phase>},
    {"what", "", "What", "what it carries", &write_inner<&OpBandwidth::op, &CommOp::what>},
    {"count", "", "Count", "operations per GPU per iteration",
     &write_inner<&OpBandwidth::op, &CommOp::count>},
    {"message_bytes", "bytes", "Message", "one operation, nccl-tests' size",
     &write_inner<&OpBandwidth::op, &CommOp::bytes>},
    {"group_size", "", "GPUs", "GPUs of its group",
     &write_inner<&OpBandwidth::op, &CommOp::group_size>},
    {"link", "", "Link", "the link its slowest hop crosses",
     &write_inner<&OpBandwidth::op, &CommOp::link>},
    {"time_s", "s", "Time", "one operation", &write_inner<&OpBandwidth::op, &CommOp::time_s>},
    value<&OpBandwidth::algbw_Bps>("algbw_Bps", "bytes/s", "Algorithm bandwidth",
                                   "message size / time (nccl-tests' algbw)"),
    value<&OpBandwidth::busbw_Bps>("busbw_Bps", "bytes/s", "Bus bandwidth",
                                   "algbw × the nccl-tests bus factor"),
    value<&OpBandwidth::peak_Bps>("peak_Bps", "bytes/s", "Peak",
                                  "the line rate the operation could use per GPU: the scale-up "
                                  "link's in a node; across nodes the node's ports over its GPUs "
                                  "times the group's members per node, at most the scale-up "
                                  "rate; an all-to-all its in-node and cross-node shares at once"),
    value<&OpBandwidth::fraction_of_peak>("fraction_of_peak", "1", "Share of peak",
                                          "busbw / peak"),
    value<&OpBandwidth::curve>("curve", "", "Curve", "index into `curves`"),
};

// --- The cost model's bandwidth curve of one path.

constexpr ReportKey<BandwidthCurve> kCurve[] = {
    value<&BandwidthCurve::link>("link", "", "Link", "the link id"),
    value<&BandwidthCurve::peak_Bps>("peak_Bps", "bytes/s", "Peak",
                                     "the path's bus bandwidth per GPU at large messages"),
    value<&BandwidthCurve::half_peak_bytes>("half_peak_bytes", "bytes", "Half-peak size",
                                            "where it reaches half of that"),
    {"sizes_bytes", "bytes", "Sizes", "24 sizes, 1 KiB to 4 GiB, log-spaced",
     &write_list<&BandwidthCurve::sizes_bytes>},
    {"busbw_Bps", "bytes/s", "Bus bandwidth", "peak·S/(S + S_half) at each size",
     &write_list<&BandwidthCurve::busbw_Bps>},
};

// --- A kind whose bytes are an expected value.

constexpr ReportKey<TrafficRange> kRange[] = {
    value<&TrafficRange::kind>("kind", "", "Kind", "`ep`"),
    {"collective", "", "Collective", "`all_to_all`",
     [](JsonWriter& w, const TrafficRange&, ReportKind) { w.value("all_to_all"); }},
    value<&TrafficRange::imbalance>("imbalance", "", "Imbalance",
                                    "plan.moe_imbalance; 1 with a capacity factor, whose padding "
                                    "is exact"),
    value<&TrafficRange::expected_pair_bytes>("expected_pair_bytes", "bytes", "Expected per pair",
                                              "one pair of the group per iteration"),
    value<&TrafficRange::max_pair_bytes>("max_pair_bytes", "bytes", "Most per pair",
                                         "imbalance × expected"),
    value<&TrafficRange::expected_gpu_bytes>("expected_gpu_bytes", "bytes", "Expected per GPU",
                                             "what one GPU receives per iteration"),
    value<&TrafficRange::max_gpu_bytes>("max_gpu_bytes", "bytes", "Most per GPU",
                                        "imbalance × expected"),
    value<&TrafficRange::flex_remote_scale>("flex_remote_scale", "1", "Cross-node share",
                                            "the cross-node share the flex dispatcher still "
                                            "sends (1 for the others)"),
};

// --- Link load over the iteration.

constexpr ReportKey<LinkLoad> kLoad[] = {
    {"bins", "", "Bins", "time bins over the iteration (200)",
     [](JsonWriter& w, const LinkLoad& l, ReportKind) {
       w.value(static_cast<int64_t>(l.scale_up_Bps.size()));
     }},
    value<&LinkLoad::bin_s>("bin_s", "s", "Bin", "one bin's length"),
    {"scale_up_bytes_per_s", "bytes/s", "Scale-up load", "all GPUs' scale-up sends per bin",
     &write_list<&LinkLoad::scale_up_Bps>},
    {"scale_out_bytes_per_s", "bytes/s", "Scale-out load", "all GPUs' scale-out sends per bin",
     &write_list<&LinkLoad::scale_out_Bps>},
    {"busiest_nic_bytes_per_s", "bytes/s", "Busiest NIC",
     "the NIC sending most scale-out bytes per iteration, per bin",
     &write_list<&LinkLoad::busiest_nic_Bps>},
    value<&LinkLoad::scale_up_capacity_Bps>("scale_up_capacity_bytes_per_s", "bytes/s",
                                            "Scale-up capacity",
                                            "every GPU's scale-up line rate"),
    value<&LinkLoad::scale_out_capacity_Bps>("scale_out_capacity_bytes_per_s", "bytes/s",
                                             "Scale-out capacity", "every NIC's line rate"),
    value<&LinkLoad::nic_capacity_Bps>("nic_capacity_bytes_per_s", "bytes/s", "NIC capacity",
                                       "the busiest NIC's port: its group's inter-node link, or "
                                       "the link between groups where that NIC sends to another "
                                       "group and the link is slower"),
    value<&LinkLoad::busiest_nic>("busiest_nic", "", "Busiest NIC number",
                                  "numbered node by node"),
    value<&LinkLoad::busiest_nic_bytes>("busiest_nic_bytes", "bytes", "Busiest NIC bytes",
                                        "what it sends per iteration"),
};

const ReportTable<Traffic>& traffic_table() {
  static const ReportTable<Traffic> t = table<Traffic>("traffic", kTraffic);
  return t;
}
const ReportTable<TrafficNodes>& nodes_table() {
  static const ReportTable<TrafficNodes> t =
      table<TrafficNodes>("traffic.cluster_groups[]", kNodes);
  return t;
}
const ReportTable<GroupLocality>& locality_table() {
  static const ReportTable<GroupLocality> t = table<GroupLocality>("traffic.groups[]", kLocality);
  return t;
}
const ReportTable<TrafficCell>& cell_table() {
  static const ReportTable<TrafficCell> t = table<TrafficCell>("traffic.cells[]", kCell);
  return t;
}
const ReportTable<OpBandwidth>& bandwidth_table() {
  static const ReportTable<OpBandwidth> t =
      table<OpBandwidth>("traffic.bandwidth[]", kBandwidth);
  return t;
}
const ReportTable<BandwidthCurve>& curve_table() {
  static const ReportTable<BandwidthCurve> t = table<BandwidthCurve>("traffic.curves[]", kCurve);
  return t;
}
const ReportTable<TrafficRange>& range_table() {
  static const ReportTable<TrafficRange> t = table<TrafficRange>("traffic.ranges[]", kRange);
  return t;
}
const ReportTable<LinkLoad>& load_table() {
  static const ReportTable<LinkLoad> t = table<LinkLoad>("traffic.load", kLoad);
  return t;
}

}  // namespace

Result<Json> traffic_json(const Traffic& traffic) {
  std::string text;
  detail::JsonWriter w(text, -1);
  w.track_path();
  const ReportTable<Traffic>& t = traffic_table();
  write_object<Traffic>(w, traffic, t.keys, t.order, ReportKind::full);
  w.finish();
  if (w.non_finite())
    return Error{ErrorCode::unsupported, w.first_non_finite_path(),
                 "traffic: a number is not finite"};
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Json traffic_schema() {
  Json out = Json::object();
  detail::schema_rows(traffic_table(), out);
  detail::schema_rows(nodes_table(), out);
  detail::schema_rows(locality_table(), out);
  detail::schema_rows(cell_table(), out);
  detail::schema_rows(bandwidth_table(), out);
  detail::schema_rows(curve_table(), out);
  detail::schema_rows(range_table(), out);
  detail::schema_rows(load_table(), out);
  return out;
}

}  // namespace stepcast
