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

}  // namespace stepcast
