// Activation offloading, Megatron-Core's layer-level kind (plan.cpu_offloading_num_layers,
// --cpu-offloading-num-layers): the activations a layer saves for its backward are copied to
// pinned host memory during the forward and copied back before its backward, so they hold no GPU
// memory in between. Megatron-Core hands the layers to Transformer Engine's
// get_cpu_offload_context (transformer_engine/pytorch/cpu_offload.py), whose double-buffered
// handler copies one layer while the next one computes, on the GPU's copy engines.
#pragma once

#include <cstdint>

namespace stepcast {

// What offloading `layers` layers of a stage costs per micro-batch.
struct OffloadCost {
  double bytes_per_layer = 0;  // activations of one offloaded layer, one micro-batch
  double copy_s = 0;           // one layer's copy over the host link, either way
  double forward_s = 0;        // the copies to the host not hidden behind the next layer's forward
  double backward_s = 0;       // the copies back not hidden behind the next layer's backward
};

// `layer_bytes`: the activations one layer keeps for one micro-batch (the stage's mean: the
// offloaded layers are the stage's first ones, whatever their kind). `forward_layer_s` and
// `backward_layer_s`: the window each copy overlaps, one layer's compute in each pass (the
// stage's compute over its layers: its embedding and output layer spread over them). The copy
// runs at the host link's line rate per direction (`host_link_Bps`): a copy engine moves it, not
// the SMs, so it does not slow the compute it overlaps (the HBM traffic it adds is not modelled).
OffloadCost offload_cost(int64_t layers, double layer_bytes, double host_link_Bps,
                         double forward_layer_s, double backward_layer_s);

// Optimizer offloading (plan.optimizer_cpu_offload): Megatron-Core's HybridDeviceOptimizer
// (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py at NVIDIA/Megatron-LM d98e8a64)
// gives the first plan.optimizer_offload_fraction of a GPU's optimizer parameters (by count) to a
// CPU optimizer (torch.optim.AdamW, fused=True; or SGD) holding a pinned fp32 copy of each, its
// state, and a pinned fp32 gradient; the rest stay with the GPU optimizer.
//
// A CPU's Adam throughput, parameters a second over one node's CPUs: Ren et al., "ZeRO-Offload:
// Democratizing Billion-Scale Model Training" (USENIX ATC 2021), Table 3, DeepSpeed's CPU-Adam
// steps 10 billion parameters in 2.57 s on a DGX-2's host (two 24-core Intel Xeon Platinum 8168).
// Node presets state no CPU, so every node's is taken at that one's; the node's GPUs share it
// (each rank steps its own shard at once).
inline constexpr double kCpuAdamParametersPerSecondPerNode = 10e9 / 2.57;
// Bytes an fp32 Adam step moves per parameter (read the parameter, gradient and two moments,
// write the parameter and moments): the unit that scales the CPU's rate to other optimizers.
inline constexpr double kCpuAdamStepBytes = 28;

struct OptimizerOffloadCost {
  double d2h_s = 0;       // the offloaded gradients to the host
  double cpu_step_s = 0;  // the CPU's step over them
  double h2d_s = 0;       // the updated parameters back
  double step_s = 0;      // the optimizer step as the software orders it, the GPU's share in it
};

// `parameters`: the offloaded parameters of one GPU; `cpu_step_bytes`: what its optimizer's step
// moves per parameter in fp32 (kCpuAdamStepBytes for Adam); `gpu_step_s`: the GPU optimizer's
// step over the parameters it keeps. Both copies move fp32 (4 B a parameter): PyTorch converts a
// non-blocking copy's dtype on the GPU, so the fp32 tensor is what crosses the link either way
// (copy_kernel_cuda, aten/src/ATen/native/cuda/Copy.cu at pytorch/pytorch 007aa8ae).
OptimizerOffloadCost optimizer_offload_cost(double parameters, double cpu_step_bytes,
                                            double gpu_step_s, double host_link_Bps,
                                            int gpus_per_node, bool overlap);

}  // namespace stepcast
