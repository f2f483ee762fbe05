// Buffers the training software allocates beside the model's tensors, per GPU of a stage: each
// a named part of the memory report (memory.h), its size from the software that allocates it.
#pragma once

#include "stepcast/census.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"

namespace stepcast {

struct SoftwareBuffers {
  // Inside PyTorch's caching allocator (counted in allocated):
  double moe_dispatch = 0;  // one MoE layer's dispatch send and receive buffers, in flight
  double ep_overlap = 0;    // the activations moe_overlap holds ahead (one chunk, or a layer)
  double wgrad_dummies = 0;  // Transformer Engine's cached dummy weight gradients, one a shape
  // Outside it (cudaMalloc'd or NVSHMEM memory the allocator never sees):
  double userbuffers = 0;  // Transformer Engine's userbuffers for tp_comm_overlap
  double deepep = 0;       // DeepEP's NVLink and RDMA buffers for the flex dispatcher
  double nccl = 0;         // NCCL's per-channel buffers of each communicator the GPU uses
};

// The communicators a GPU of the stage runs collectives on (more than one rank each): NCCL
// connects a communicator's buffers at its first collective, so only these hold any.
int nccl_communicators(const ModelSpec& model, const Plan& plan, const StageShape& stage);

// Bytes of the dummy weight gradients a GPU of the stage holds (plan.dummy_wgrads):
// one of each distinct local linear-weight shape of its layers and output layer, in the
// weights' dtype (wgrad_dummies.cpp).
double wgrad_dummy_bytes(const ModelSpec& model, const Plan& plan, const StageShape& stage);

// `layer_activations`: one micro-batch's activations of all the stage's layers (memory.cpp).
SoftwareBuffers software_buffers(const ModelSpec& model, const Plan& plan, const StageShape& stage,
                                 double layer_activations);

}  // namespace stepcast
