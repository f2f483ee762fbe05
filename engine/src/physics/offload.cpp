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

OptimizerOffloadCost optimizer_offload_cost(double parameters, double cpu_step_bytes,
                                            double gpu_step_s, double host_link_Bps,
                                            int gpus_per_node, bool overlap) {
  OptimizerOffloadCost c;
  c.step_s = gpu_step_s;
  if (parameters <= 0 || host_link_Bps <= 0) return c;
  c.d2h_s = 4 * parameters / host_link_Bps;
  c.h2d_s = c.d2h_s;
  const double cpu_rate = kCpuAdamParametersPerSecondPerNode / std::max(1, gpus_per_node);
  c.cpu_step_s = parameters * (cpu_step_bytes / kCpuAdamStepBytes) / cpu_rate;
  if (overlap) {
    // --overlap-cpu-optimizer-d2h-h2d: one CPU optimizer per parameter, the gradients' copies on
    // a stream of their own, each parameter stepped as its gradient lands and copied back on a
    // third stream (HybridDeviceOptimizer.build_cpu_optimizer_list, step): a pipeline whose
    // slowest stage sets the time, the GPU's step beside it (the fill, one parameter's copies,
    // is not counted).
    c.step_s = std::max({gpu_step_s, c.d2h_s, c.cpu_step_s, c.h2d_s});
  } else {
    // Without it the copies run on the compute stream: the gradients go first, then the GPU's
    // step while the CPU steps (it waits for the copies' event), then the parameters come back.
    c.step_s = c.d2h_s + std::max(gpu_step_s, c.cpu_step_s) + c.h2d_s;
  }
  return c;
}

}  // namespace stepcast
