// Compute time of one micro-batch on one GPU: matrix multiplies on a roofline with a fitted
// achievable fraction of peak and a fixed per-kernel overhead (small GEMMs are less efficient),
// fused attention at its own fraction of peak, and element-wise kernels (norms, activations,
// dropout, residual adds, softmax) at a fraction of HBM bandwidth.
#pragma once

#include "stepcast/gemm_shape.h"
#include "stepcast/hardware.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"

namespace stepcast {

// Everything the compute model needs about the device, resolved once per estimate.
struct Device {
  Precision precision = Precision::bf16;
  double peak_flops = 0;       // dense peak at the plan's precision (GEMMs)
  double attention_peak = 0;   // peak the attention kernels run at (bf16/fp16 even under fp8)
  double flops_per_exp = 0;    // tensor FLOPs per exponential (attention_kernel.h), 0: unknown
  double memory_Bps = 0;       // HBM bandwidth
  ArchCalibration cal;
  double gemm_efficiency = 0;  // for the plan's precision
  // The GEMM shape model at the plan's precision (gemm_shape.h): tiles in waves over the SMs,
  // HBM, the kernels' latency. Every dense GEMM runs on its tiles at the calibrated rate
  // (peak_flops x gemm_efficiency, gemm_time_s); its ceiling, that rate x grouped_gemm_factor,
  // is the routed experts' grouped kernel's, so a grouped GEMM of large experts runs as a dense
  // GEMM of its size (at factor 1) and only the shape makes small experts slower.
  GemmShapeDevice shape;

  // The same device running 16-bit GEMMs (the output layer, unfused attention).
  Device sixteen_bit() const {
    Device d = *this;
    d.precision = Precision::bf16;
    d.peak_flops = attention_peak;
    d.gemm_efficiency = cal.gemm_efficiency;
    return d;
  }
};

Device make_device(const GpuSpec& gpu, Precision precision, const Calibration& calibration);

// Time of a memory-bound kernel moving `bytes` through HBM (the calibrated share of its bandwidth).
double elementwise_s(double bytes, const Device& device);

// The share of the 16-bit peak a fused attention kernel (FlashAttention, cuDNN) reaches on one
// layer's shape, forward or backward: the calibration's attention_efficiency (head dimension
// 128, long sequences) times attention_kernel_share for `keys` keys per query (the window for a
// sliding window).
double fused_attention_efficiency(const ModelSpec& m, const Plan& p, const Device& d,
                                  double keys, bool windowed, bool backward);

// Time of one GEMM C[m x n] = A[m x k] B[k x n] with `element_bytes` per element: its tiles in
// waves at the calibrated rate (Device::shape), or its traffic at HBM bandwidth, plus the
// calibration's per-GEMM overhead.
double gemm_time_s(double m, double n, double k, double element_bytes, const Device& device);

// One transformer layer, one micro-batch, one GPU (its 1/tp shard and 1/cp of the sequence).
// One layer's four GEMMs, forward (the backward runs two GEMMs of the same shape for each).
// In an MoE layer fc1 and fc2 are the shared experts' (the TP-split part), and experts_s the
// router and the routed experts' grouped GEMMs (split over EP and ETP).
struct LayerGemms {
  double qkv_s = 0, proj_s = 0, fc1_s = 0, fc2_s = 0;
  double experts_s = 0;
  double total() const { return qkv_s + proj_s + fc1_s + fc2_s + experts_s; }
};


// The *_s parts are what the overlap model needs: communication hides behind the GEMMs (TP) or
// the attention core (CP) of the same pass.
struct LayerCompute {
  LayerGemms gemms;
  double forward_s = 0;            // linear + attention + element-wise, no communication
  double backward_s = 0;           // gradients of inputs and weights
  // Of backward_s, the weight gradients (W; the rest, B, is the input gradients): one wgrad GEMM
  // per forward GEMM, of the forward's FLOPs (Qi et al., "Zero Bubble Pipeline Parallelism",
  // ICLR 2024, sec. 2: a linear layer's backward is a dgrad and a wgrad matrix product of equal
  // FLOPs); the attention core, norms and element-wise gradients are all B.
  double weight_grad_s = 0;
  double recompute_s = 0;          // re-run forward work under the plan's recompute mode
  double linear_forward_s = 0;     // GEMM share of forward_s
  double linear_backward_s = 0;    // GEMM share of backward_s (data and weight gradients)
  double linear_recompute_s = 0;   // GEMM share of recompute_s (full recompute only)
  double attention_forward_s = 0;  // attention-core share of forward_s
  double attention_backward_s = 0;
  double attention_recompute_s = 0;
};

LayerCompute layer_compute(const ModelSpec& model, const Plan& plan, const Device& device,
                           LayerKind kind = {});

// The share of layers full recompute replays: 1 under the uniform method (every layer, in
// groups), recompute_num_layers of each model chunk's layers under block (the even split's
// chunk); 0 without full recompute.
double full_recompute_share(const ModelSpec& model, const Plan& plan);

// Time of `groups` GEMMs of one shape launched as one grouped GEMM (the routed experts of an MoE
// layer): the shape model's grouped kernel (shape_grouped_gemm_time_s) on Device::shape, its
// tiles over every group's rows (an expert's last tile runs partly empty) in waves over the SMs,
// each expert's weights streamed from HBM, the kernel's latency and its own fixed cost.
double grouped_gemm_time_s(double groups, double m, double n, double k, double element_bytes,
                           const Device& device);

// Rows each local expert's GEMMs run on, per micro-batch, on the busiest GPU: this GPU's tokens
// times top_k, gathered over the expert-TP group, spread over experts/ep local experts; times
// the imbalance, or padded to the capacity when a capacity factor drops the excess.
double expert_rows(const ModelSpec& model, const Plan& plan);

// Kernels one layer launches per micro-batch (host overhead: eager training issues them one by one
// from the CPU, each costing Calibration::host_launch_s). Counted from the layer's structure:
// Transformer Engine / Megatron fused kernels (norm, GEMM, RoPE, attention, bias-dropout-add,
// activation) or eager PyTorch's one kernel per operation, the quantize kernels of low-precision
// GEMMs, and the TP collectives.
struct LayerKernels {
  double forward = 0;
  double backward = 0;
  double recompute = 0;
  // Of `backward`, the weight-gradient GEMMs (one per weighted forward GEMM): what the
  // zero-bubble schedules launch apart, as the W block.
  double weight_grad = 0;
};
LayerKernels layer_kernels(const ModelSpec& model, const Plan& plan, LayerKind kind = {});

// The bytes one logit moves through HBM in the loss (cross-entropy over the vocabulary), by the
// loss kernels the software runs (plan.cross_entropy_fusion), forward and backward.
struct LossTraffic {
  double forward = 0;
  double backward = 0;
};
LossTraffic cross_entropy_bytes_per_logit(CrossEntropyFusion fusion, Precision precision);

// The output layer and loss (last stage), one micro-batch: logits GEMM, cross-entropy.
struct HeadCompute {
  double forward_s = 0;
  double backward_s = 0;
  double weight_grad_s = 0;  // of backward_s, the weight gradient (W)
};
HeadCompute head_compute(const ModelSpec& model, const Plan& plan, const Device& device);

// The input embedding lookup (first stage), one micro-batch.
HeadCompute embedding_compute(const ModelSpec& model, const Plan& plan, const Device& device);

// Mixed-precision Adam step over `parameters` held by this GPU: reads and writes fp32 master
// weights, moments and gradients and writes the 16-bit copy (memory bound).
double optimizer_step_s(double parameters, const Plan& plan, const Device& device);

// Bytes per element of activations and of weights in GEMMs for the plan's precision (block
// scales included).
double activation_bytes(Precision precision);
double gemm_element_bytes(Precision precision);

// Memory traffic of quantizing one element of a GEMM input below 16 bits (0 at 16 bits and up).
double quantize_bytes_per_element(Precision precision);

}  // namespace stepcast
