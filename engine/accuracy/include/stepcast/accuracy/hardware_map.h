// Which GPU preset and which network a published row means: its `gpu` and `inter_node_link`
// columns are prose ("A100-SXM4-80GB (DGX A100, Selene)", "8x HDR IB 200Gb/s per node (fat
// tree)", "2 universities x 32 V100; 5 Gbps within, 1.2 Gbps between (tc-emulated)").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "stepcast/catalog.h"

namespace stepcast::accuracy {

// GPU preset id from the `gpu` column.
std::optional<std::string> gpu_preset(std::string_view gpu);

// The node's network from the `inter_node_link` column: link preset and ports per node.
struct Network {
  std::string link;
  int nics = 0;
  std::string note;
};

std::optional<Network> network_for(std::string_view inter, const std::string& gpu, int per_node);

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
