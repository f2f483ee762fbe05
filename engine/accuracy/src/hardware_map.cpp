#include "stepcast/accuracy/hardware_map.h"

#include <fmt/format.h>

#include <regex>

#include "cell_text.h"

namespace stepcast::accuracy {

using detail::contains;
using detail::trim;

std::optional<std::string> gpu_preset(std::string_view gpu) {
  if (contains(gpu, "A100-SXM4-80GB")) return "a100-sxm4-80gb";
  if (contains(gpu, "A100-SXM4-40GB")) return "a100-sxm4-40gb";
  if (contains(gpu, "H100-SXM5-80GB")) return "h100-sxm5-80gb";
  if (contains(gpu, "V100") && contains(gpu, "16GB")) return "v100-sxm2-16gb";
  if (contains(gpu, "V100") && contains(gpu, "32GB")) return "v100-sxm2-32gb";
  return std::nullopt;
}

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
    const Json link = ethernet_link(std::stod(m[5]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(std::stoll(m[1]), std::stoll(m[2]), link),
                                 group(std::stoll(m[3]), std::stoll(m[4]), link)}},
                     {"inter_group_link", link}};
    h.first_gpus_per_node = std::stoll(m[2]);
    h.first_group_gpus = static_cast<int>(std::stoll(m[1]) * std::stoll(m[2]));
    h.note = fmt::format("cluster read from '{}': two instance groups, every instance on a "
                         "{} Gb/s TCP link; pipeline stages in rank order (first half on the "
                         "first group)",
                         s, m[5].str());
    return h;
  }
  // "2 universities x 32 V100; 5 Gbps within, 1.2 Gbps between (tc-emulated)"
  static const std::regex sites(
      R"((\d+) \w+ x (\d+) V100; (\d+(?:\.\d+)?) Gbps within, (\d+(?:\.\d+)?) Gbps between)");
  if (std::regex_search(s, m, sites) && std::stoll(m[1]) == 2) {
    const Json within = ethernet_link(std::stod(m[3]), catalog);
    HeteroNetwork h;
    h.cluster = Json{{"groups", {group(std::stoll(m[2]), 1, within),
                                 group(std::stoll(m[2]), 1, within)}},
                     {"inter_group_link", ethernet_link(std::stod(m[4]), catalog)}};
    h.first_gpus_per_node = 1;
    h.first_group_gpus = static_cast<int>(std::stoll(m[2]));
    h.note = fmt::format("cluster read from '{}': two sites of one-GPU VMs; pipeline stages in "
                         "rank order (first half at the first site)",
                         s);
    return h;
  }
  return std::nullopt;
}

std::optional<Network> network_for(std::string_view inter, const std::string& gpu, int per_node) {
  const bool unsure = contains(inter, "not stated") || contains(inter, "likely");
  const std::string note =
      unsure ? fmt::format("inter-node network '{}': 8 ports per node", trim(inter)) : "";
  if (contains(inter, "HDR")) return Network{"ib-hdr", 8, note};
  if (contains(inter, "NDR")) return Network{"ib-ndr", 8, note};
  if (contains(inter, "Omni-Path")) {
    // "Omni-Path (4 links per node)": 4 x 100 Gb/s ports.
    return Network{"omni-path", 4, ""};
  }
  if (contains(inter, "1600 Gbps per node RoCE"))
    return Network{"roce-200g", 8, "1600 Gbps per node RoCE = 8 x RoCE 200GbE ports"};
  if (contains(inter, "25 Gbps inter-instance") || contains(inter, "same as above"))
    return Network{"eth-25g", 1, "p3.16xlarge: one 25 Gbps ENA port per instance"};
  if (gpu == "h100-sxm5-80gb" && per_node == 8)
    return Network{"ib-ndr", 8,
                   fmt::format("inter-node network '{}': DGX H100 reference (8 x NDR 400G)",
                               trim(inter))};
  return std::nullopt;
}

}  // namespace stepcast::accuracy
