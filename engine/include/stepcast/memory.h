// Memory per GPU of one pipeline stage: weights, gradients, optimizer states, activations of the
// micro-batches in flight (Korthikanti et al. 2022, generalised to GQA and gated MLPs): what
// PyTorch's caching allocator hands out (allocated); what it holds from the driver (reserved:
// allocated plus its rounding and fragmentation); and the memory outside it (CUDA context,
// NCCL's own buffers).
#pragma once

#include "stepcast/census.h"
#include "stepcast/compute.h"
#include "stepcast/hardware.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"
#include "stepcast/software_buffers.h"

namespace stepcast {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // bytes; PyTorch's memory stats count in it

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  // The software's own buffers (software_buffers.h), inside the allocator ...
  double moe_dispatch = 0;
  double ep_overlap = 0;
  double wgrad_dummies = 0;
  // The caching allocator's rounding and fragmentation: reserved - allocated.
  double allocator = 0;
  // ... and outside it.
  double userbuffers = 0;
  double deepep = 0;
  double nccl = 0;
  // The rest of the allowance outside the allocator (calibration framework_memory_gib: the CUDA
  // context and NCCL) beyond the named NCCL buffers.
  double other = 0;
  // Activation bytes held in host memory instead of the GPU (plan.cpu_offloading_num_layers,
  // plan.offload_modules):
  // not in `activations` nor the total; what each GPU needs of its node's host memory.
  double offloaded = 0;
  // The optimizer's share in host memory (plan.optimizer_cpu_offload): its fp32 parameter
  // copies, state and pinned fp32 gradients (physics/offload.h). Not in the total.
  double optimizer_offloaded = 0;
  double total = 0;  // reserved + the parts outside the allocator: what the GPU must hold
  // What torch.cuda.max_memory_allocated and max_memory_reserved measure at the stage's peak.
  // weights + gradients + optimizer + activations + moe_dispatch + ep_overlap + wgrad_dummies
  double allocated = 0;
  double reserved = 0;   // allocated + allocator
  double capacity = 0;
  // Bytes of the GPU the plan must leave free (plan.memory_headroom of the capacity): the fit
  // verdict and the search want total + headroom within the capacity.
  double headroom = 0;
  bool fits() const { return total + headroom <= capacity; }
};

// Activation bytes one transformer layer keeps for the backward pass, one micro-batch, one GPU:
// a dense layer, or an MoE layer (router probabilities, the permuted tokens and the experts'
// intermediates on the rows this GPU's experts receive, the shared experts' MLP).
double layer_activation_bytes(const ModelSpec& model, const Plan& plan, bool moe = false);
double layer_activation_bytes(const ModelSpec& model, const Plan& plan, const LayerKind& kind);

// The part of layer_activation_bytes that fine-grained offloading (plan.offload_modules) moves
// to host memory: the saved tensors of the listed modules, one micro-batch (0 under full
// recompute, which keeps only each layer's input).
double layer_offloaded_bytes(const ModelSpec& model, const Plan& plan, const LayerKind& kind);

// What fine-grained offloading moves of one micro-batch's pass through a stage's layers (its
// dense and MoE layers, or a hybrid's blocks), and the most one of its layers moves.
struct StageOffload {
  double per_micro_batch = 0;
  double largest_layer = 0;
};
StageOffload stage_offloaded_modules(const ModelSpec& model, const Plan& plan,
                                     const StageShape& stage);

// The layers of a stage whose activations plan.cpu_offloading_num_layers sends to the host (no
// more than the stage has).
inline int64_t offloaded_layers(const Plan& plan, const StageShape& stage) {
  return plan.cpu_offloading_num_layers < stage.layers ? plan.cpu_offloading_num_layers
                                                       : stage.layers;
}

// A stage's layers' activations are held for StageShape::in_flight micro-batches, as the
// pipeline schedule keeps them (schedule.h; Korthikanti et al., sec. 4.2.3 generalised per stage).
MemoryBreakdown stage_memory(const ModelSpec& model, const Plan& plan, const StageShape& stage,
                             const GpuSpec& gpu, const Calibration& calibration);

}  // namespace stepcast
