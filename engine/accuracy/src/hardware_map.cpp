#include "stepcast/accuracy/hardware_map.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "cell_text.h"
#include "data_tables.h"

namespace stepcast::accuracy {

using detail::contains;
using detail::trim;

namespace {

using stepcast::detail::JsonReader;

// A regex group of digits as a number, without the exceptions std::stoll and std::stod throw on
// overflow (the engine and its tools never throw): 0 when it does not fit.
int64_t whole(const std::ssub_match& m) {
  int64_t v = 0;
  const std::string t = m.str();
  const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  return ec == std::errc() && ptr == t.data() + t.size() ? v : 0;
}
double decimal(const std::ssub_match& m) {
  const std::string t = m.str();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return std::isfinite(v) ? v : 0;
}
using detail::is_null;

Result<GpuRule> read_gpu_rule(const Json& j, std::string path) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"contains_all", "preset", "intra_node_link"});
  GpuRule rule;
  rule.contains_all = detail::strings(r, "contains_all");
  rule.preset = r.string("preset", std::nullopt);
  rule.intra_node_link = r.string("intra_node_link", std::nullopt);
  if (!r.ok()) return r.error();
  return rule;
}

Result<NetworkRule> read_network_rule(const Json& j, std::string path) {
  JsonReader r(j, std::move(path));
  r.reject_unknown_keys({"contains_any", "gpu", "gpus_per_node", "link", "nics_per_node", "note",
                         "note_if_hedged", "why"});
  NetworkRule rule;
  rule.contains_any = detail::strings(r, "contains_any");
  if (!is_null(r, "gpu")) rule.gpu = r.string("gpu", std::nullopt);
  if (!is_null(r, "gpus_per_node")) rule.gpus_per_node = r.integer("gpus_per_node", std::nullopt);
  rule.link = r.string("link", std::nullopt);
  rule.nics_per_node = static_cast<int>(r.integer("nics_per_node", std::nullopt, 1, 64));
  if (!is_null(r, "note")) rule.note = r.string("note", std::nullopt);
  if (!is_null(r, "note_if_hedged")) rule.note_if_hedged = r.string("note_if_hedged", std::nullopt);
  r.string("why", std::string());  // for people only
  if (!r.ok()) return r.error();
  return rule;
}

}  // namespace

Result<HardwareMap> parse_hardware_map(std::string_view json_text) {
  auto doc = detail::parse_table(json_text, "hardware_map.json");
  if (!doc) return doc.error();
  JsonReader top(*doc, "");
  top.reject_unknown_keys({"about", "gpus", "hedge_words", "networks"});
  top.string("about", std::string());  // for people only
  HardwareMap map;
  map.hedge_words = detail::strings(top, "hedge_words");
  if (auto e = detail::read_list(top, "gpus", read_gpu_rule, map.gpus)) return *e;
  if (auto e = detail::read_list(top, "networks", read_network_rule, map.networks)) return *e;
  return map;
}

const Result<HardwareMap>& builtin_hardware_map() {
  static const Result<HardwareMap> map = parse_hardware_map(detail::hardware_map_json());
  return map;
}

const GpuRule* HardwareMap::gpu_for(std::string_view gpu) const {
  for (const auto& rule : gpus) {
    bool all = true;
    for (const auto& s : rule.contains_all) all = all && contains(gpu, s);
    if (all) return &rule;
  }
  return nullptr;
}

std::optional<Network> HardwareMap::network_for(std::string_view inter, const std::string& gpu,
                                                int per_node) const {
  bool hedged = false;
  for (const auto& w : hedge_words) hedged = hedged || contains(inter, w);
  for (const auto& rule : networks) {
    bool named = rule.contains_any.empty();
    for (const auto& s : rule.contains_any) named = named || contains(inter, s);
    if (!named || (rule.gpu && *rule.gpu != gpu) ||
        (rule.gpus_per_node && *rule.gpus_per_node != per_node))
      continue;
    std::string note = hedged && !rule.note_if_hedged.empty() ? rule.note_if_hedged : rule.note;
    const std::string text = trim(inter);
    for (size_t at = note.find("{text}"); at != std::string::npos;
         at = note.find("{text}", at + text.size()))
      note.replace(at, 6, text);
    return Network{rule.link, rule.nics_per_node, note};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// DT-FM's network-heterogeneous clusters

namespace {

Json ethernet_link(double gbps, const Catalog& catalog) {
  const LinkSpec* base = catalog.find_link("eth-10g");
  const double line = gbps / 8;  // GB/s per direction
  const double ratio = base ? base->busbw_Bps / base->bandwidth_Bps_per_dir : 0.8;
  const double fill_s = base && base->busbw_Bps > 0 ? base->half_peak_bytes / base->busbw_Bps : 0;
  return Json{{"id", fmt::format("tcp-{}g", gbps)},
              {"name", fmt::format("{} Gb/s TCP (DT-FM, tc-shaped)", gbps)},
              {"scope", "inter_node"},
              {"bandwidth_GBps_per_dir", line},
              {"busbw_GBps", line * ratio},
              {"half_peak_bytes", fill_s * line * ratio * 1e9},
              {"latency_us", base ? base->latency_s * 1e6 : 50}};
}

}  // namespace

std::optional<HeteroNetwork> hetero_network(std::string_view text, const std::string& gpu,
                                            const Catalog& catalog) {
  auto group = [&](int64_t nodes, int64_t per_node, const Json& link) {
    return Json{{"gpu", gpu},           {"gpus_per_node", per_node}, {"nodes", nodes},
                {"intra_node_link", "nvlink2"}, {"inter_node_link", link}, {"nics_per_node", 1}};
  };
  std::smatch m;
  const std::string s(text);
  // "8x p3.8xlarge (4 V100) + 32x p3.2xlarge (1 V100); 100 Gbps intra / 10 Gbps inter-instance"
  static const std::regex instances(
      R"((\d+)x p3\.\w+ \((\d+) V100\) \+ (\d+)x p3\.\w+ \((\d+) V100\);.*?(\d+(?:\.\d+)?) Gbps inter-instance)");
  if (std::regex_search(s, m, instances)) {
    const Json link = ethernet_link(decimal(m[5]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(whole(m[1]), whole(m[2]), link),
                                 group(whole(m[3]), whole(m[4]), link)}},
                     {"inter_group_link", link}};
    h.first_gpus_per_node = whole(m[2]);
    h.first_group_gpus = static_cast<int>(whole(m[1]) * whole(m[2]));
    h.note = fmt::format("cluster read from '{}': two instance groups, every instance on a "
                         "{} Gb/s TCP link; pipeline stages in rank order (first half on the "
                         "first group)",
                         s, m[5].str());
    return h;
  }
  // "2 universities x 32 V100; 5 Gbps within, 1.2 Gbps between (tc-emulated)"
  static const std::regex sites(
      R"((\d+) \w+ x (\d+) V100; (\d+(?:\.\d+)?) Gbps within, (\d+(?:\.\d+)?) Gbps between)");
  if (std::regex_search(s, m, sites) && whole(m[1]) == 2) {
    const Json within = ethernet_link(decimal(m[3]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(whole(m[2]), 1, within),
                                 group(whole(m[2]), 1, within)}},
                     {"inter_group_link", ethernet_link(decimal(m[4]), catalog)}};
    h.first_gpus_per_node = 1;
    h.first_group_gpus = static_cast<int>(whole(m[2]));
    h.note = fmt::format("cluster read from '{}': two sites of one-GPU VMs; pipeline stages in "
                         "rank order (first half at the first site)",
                         s);
    return h;
  }
  return std::nullopt;
}

}  // namespace stepcast::accuracy
