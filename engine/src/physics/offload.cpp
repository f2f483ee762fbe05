#include "stepcast/offload.h"

#include <algorithm>

namespace stepcast {

OffloadCost offload_cost(int64_t layers, double layer_bytes, double host_link_Bps,
                         double forward_layer_s, double backward_layer_s) {
  OffloadCost c;
  if (layers <= 0 || host_link_Bps <= 0) return c;
  const double n = static_cast<double>(layers);
  c.bytes_per_layer = layer_bytes;
  c.copy_s = layer_bytes / host_link_Bps;
  // Each offloaded layer's copy to the host runs while the layer after it computes its forward;
  // its copy back runs while the layer after it computes its backward (the reload is issued one
  // layer ahead). What a copy takes beyond that layer's compute is exposed.
  c.forward_s = n * std::max(0.0, c.copy_s - forward_layer_s);
  c.backward_s = n * std::max(0.0, c.copy_s - backward_layer_s);
  return c;
}

}  // namespace stepcast
