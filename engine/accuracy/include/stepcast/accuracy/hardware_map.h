// Which GPU preset and which network a published row means: its `gpu` and `inter_node_link`
// columns are prose ("A100-SXM4-80GB (DGX A100, Selene)", "8x HDR IB 200Gb/s per node (fat
// tree)", "2 universities x 32 V100; 5 Gbps within, 1.2 Gbps between (tc-emulated)"). The
// mapping is data (engine/accuracy/hardware_map.json, compiled in); DT-FM's two
// network-heterogeneous forms are read by code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/catalog.h"
#include "stepcast/result.h"

namespace stepcast::accuracy {

// A `gpu` cell that contains every string of contains_all is the GPU preset `preset`, whose
// nodes join their GPUs with `intra_node_link`.
struct GpuRule {
  std::vector<std::string> contains_all;
  std::string preset;
  std::string intra_node_link;
};

// The node's network: link preset, ports per node and the assumption it takes, if any.
struct Network {
  std::string link;
  int nics = 0;
  std::string note;
};

// An `inter_node_link` cell that contains any string of contains_any (any cell when empty), on a
// row whose GPU preset and GPUs per node are `gpu` and `gpus_per_node` where given.
struct NetworkRule {
  std::vector<std::string> contains_any;
  std::optional<std::string> gpu;
  std::optional<int64_t> gpus_per_node;
  std::string link;
  int nics_per_node = 0;
  std::string note;            // the case's assumption ({text}: the cell); empty: none
  std::string note_if_hedged;  // replaces `note` when the cell hedges; empty: `note` stands
};

// hardware_map.json, read. Rules are tried in order; the first that matches wins.
struct HardwareMap {
  std::vector<GpuRule> gpus;
  std::vector<std::string> hedge_words;  // "not stated", "likely"
  std::vector<NetworkRule> networks;

  // The GPU rule for the `gpu` column, or nullptr.
  const GpuRule* gpu_for(std::string_view gpu) const;
  // The node's network from the `inter_node_link` column, for a row of `gpu` (preset id) with
  // `per_node` GPUs a node.
  std::optional<Network> network_for(std::string_view inter, const std::string& gpu,
                                     int per_node) const;
};

// Parses a hardware map: every key checked, errors as values with their JSON path.
Result<HardwareMap> parse_hardware_map(std::string_view json_text);

// The compiled-in engine/accuracy/hardware_map.json (parsed once).
const Result<HardwareMap>& builtin_hardware_map();

// DT-FM's network-heterogeneous cases describe their clusters in prose; read the two forms it
// uses. Links are TCP Ethernet of the stated rate, scaled from the eth-10g preset (its ratio of
// achievable to line rate, its latency and half-peak fill time). Megatron places ranks in order,
// so with tp = 1 and dp = 8 the first half of the 8 pipeline stages runs on the first group.
struct HeteroNetwork {
  Json cluster;
  int64_t first_gpus_per_node = 1;
  int first_group_gpus = 0;
  std::string note;
};
std::optional<HeteroNetwork> hetero_network(std::string_view text, const std::string& gpu,
                                            const Catalog& catalog);

}  // namespace stepcast::accuracy
