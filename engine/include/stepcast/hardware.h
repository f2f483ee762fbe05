// What it runs on: GPUs, links, nodes and the cluster they form, plus the calibration constants
// (achievable fractions of peak) per GPU architecture family.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/enum_names.h"

namespace stepcast {

// The precision GEMMs run in. fp8 is per-tensor scaled FP8 (Hopper and later); mxfp8 (32-element
// blocks with an 8-bit scale each) and nvfp4 (16-element blocks of 4-bit values) are Blackwell's
// block-scaled formats. With the low precisions, activations between kernels and attention stay
// 16-bit (Transformer Engine).
enum class Precision { fp32, fp16, bf16, fp8, mxfp8, nvfp4 };
template <>
struct EnumNames<Precision> {
  static constexpr std::array<std::string_view, 6> values = {"fp32", "fp16", "bf16",
                                                             "fp8",  "mxfp8", "nvfp4"};
};
inline const char* to_string(Precision v) { return name_of(v).data(); }
inline constexpr size_t kPrecisions = EnumNames<Precision>::values.size();

// GEMMs below 16 bits (fp8, mxfp8, nvfp4): the master weights, optimizer and activations stay in
// bf16/fp32 around them.
constexpr bool low_precision(Precision p) { return p >= Precision::fp8; }

struct GpuSpec {
  std::string id;
  std::string name;
  std::string arch;  // family: ampere, hopper, ... (selects calibration constants)
  double memory_bytes = 0;
  double memory_bandwidth_Bps = 0;
  // Dense peak FLOP/s per precision (indexed by Precision); nullopt where the device lacks it.
  std::array<std::optional<double>, kPrecisions> peak = {};
  double scaleup_Bps_per_dir = 0;
  // Streaming multiprocessors (compute units): the waves a GEMM's tiles run in (gemm_shape.h).
  // 0: not stated.
  double sm_count = 0;
  // Maximum achievable matmul FLOP/s per precision (gpu.measured.gemm_tflops: the best shape of
  // a measured search); nullopt where not measured.
  std::array<std::optional<double>, kPrecisions> measured_gemm = {};
  // How sure its source is of the figures (`high`, `medium`, `low`: the preset's word); empty
  // where not stated (a custom GPU). A `low` GPU's estimates carry a warning.
  std::string confidence;

  std::optional<double> peak_flops(Precision p) const { return peak[static_cast<size_t>(p)]; }
  std::optional<double> measured_gemm_flops(Precision p) const {
    return measured_gemm[static_cast<size_t>(p)];
  }
};

enum class LinkScope { intra_node, inter_node };
template <>
struct EnumNames<LinkScope> {
  static constexpr std::array<std::string_view, 2> values = {"intra_node", "inter_node"};
};
inline const char* to_string(LinkScope v) { return name_of(v).data(); }

struct LinkSpec {
  std::string id;
  std::string name;
  LinkScope scope = LinkScope::intra_node;
  double bandwidth_Bps_per_dir = 0;  // line rate: per GPU (intra) or per port (inter)
  double busbw_Bps = 0;              // achievable NCCL ring bus bandwidth at large messages
  double allreduce_busbw_Bps = 0;    // achievable all-reduce bus bandwidth (NVLS where present)
  double half_peak_bytes = 0;        // message size reaching half of the bus bandwidth
  double latency_s = 0;              // small-message floor of one collective
};

// One pool of identical nodes. A homogeneous cluster is one group; heterogeneous clusters (a later
// extension) are several groups joined by an inter-group link.
struct ClusterGroup {
  std::string node_id;  // preset id when built from a node preset, else empty
  GpuSpec gpu;
  int gpus_per_node = 0;
  int nodes = 0;
  LinkSpec intra_node_link;
  LinkSpec inter_node_link;
  int nics_per_node = 0;
  // The link between each GPU and host memory, bytes/s per direction (the node preset's
  // host_link_GBps_per_dir: PCIe x16 per GPU, NVLink-C2C on Grace systems); 0: not stated.
  double host_link_Bps_per_dir = 0;

  int gpus() const { return gpus_per_node * nodes; }
};

struct ClusterSpec {
  std::vector<ClusterGroup> groups;
  LinkSpec inter_group_link;  // joins the groups (several groups only)
  int gpus() const {
    int n = 0;
    for (const auto& g : groups) n += g.gpus();
    return n;
  }
};

// Achievable fractions of peak for one architecture family. These are the only fitted constants
// of the compute model; presets/calibration.json says which published runs each was fitted on.
struct ArchCalibration {
  double gemm_efficiency = 0.8;       // fraction of dense peak reached by large 16-bit GEMMs
  double fp8_gemm_efficiency = 0.7;   // the same for fp8 and mxfp8 GEMMs
  double fp4_gemm_efficiency = 0.6;   // the same for nvfp4 GEMMs
  double gemm_overhead_s = 10e-6;     // fixed time per GEMM kernel (launch, wave tail)
  double attention_efficiency = 0.5;  // fused (flash) attention kernels, fraction of peak
  double memory_efficiency = 0.8;     // fraction of HBM bandwidth for element-wise kernels
  double layer_overhead_s = 0;        // framework time per layer per micro-batch (fwd + bwd)
  // Grouped expert GEMMs (MoE layers) run at this fraction of the dense GEMMs' rate, beyond what
  // their shape costs (tiles, waves, weight traffic: gemm_shape.h prices that). Fitted on whole
  // MoE iterations it carries MoE time the model does not place elsewhere (Megatron's isolated
  // MoE layer needs 0.65-1). 1 where no MoE run pins it.
  double grouped_gemm_factor = 1.0;
  // CPU time per MoE layer and micro-batch in the forward that the GPU cannot run ahead of: a
  // dropless layer copies its token counts to the host, so the queue drains, and the CPU then
  // issues dispatch, experts, combine and the next attention from Python while the GPU waits
  // (only what exceeds the layer's forward GPU work shows). 0 where no MoE run pins it.
  double moe_host_s = 0;
  // The same CPU time's share that grows with the experts on this GPU: Transformer Engine's
  // GroupedLinear splits the tokens per local expert, issues one GEMM (and, in FP8, one
  // quantisation) per expert and walks the experts' weights in Python. Added to moe_host_s per
  // local expert. 0 where no MoE run pins it.
  double moe_host_expert_s = 0;
  // Fraction of the 16-bit peak the Mamba-2 SSD scan's chunked kernels reach (Megatron's count of
  // its FLOPs, 7 per inner channel and state element per token). Measured, not fitted: 0.0875 on
  // H100 SXM (compute.cpp's ssd_scan_s says where); other GPUs take the same share of their peak,
  // up to an H100's (the Triton kernels measured no faster on a B200).
  double ssd_scan_efficiency = 0.0875;
  // Fraction of the 16-bit peak a Gated DeltaNet's chunked delta rule (flash-linear-attention's
  // Triton kernels) reaches with enough sequences x heads to fill the GPU (Megatron's count, 8
  // FLOPs per state element per token). Measured, not fitted: 0.065 on H100 SXM (compute.cpp's
  // delta_rule_s says where and adds the state pass's chunk steps where few heads run); other
  // GPUs take the same share of their peak, up to an H100's.
  double delta_rule_efficiency = 0.065;
  // One chunk of 64 tokens of the delta rule's state pass, per wave of its programs over the SMs:
  // what binds where few sequences x heads run (compute.cpp's delta_rule_s). Measured, not
  // fitted: 1.15 us on H100 SXM.
  double delta_rule_chunk_s = 1.15e-6;
};

// One transformer layer as measured on a GPU (calibration.layer_profiles, HATP's input): its
// forward and backward kernels' seconds per micro-batch of one shape. Where a stage's GPU and the
// plan's shape match, these replace the roofline's layer compute (stage_cost.cpp).
struct LayerProfile {
  std::string gpu;           // the GPU's id
  int64_t micro_batch = 1;
  int64_t seq_len = 1;
  int tp = 1;
  int cp = 1;
  int layers = 0;            // which layers: 0 all, 1 dense only, 2 MoE only
  double forward_s = 0;
  double backward_s = 0;
};

struct Calibration {
  std::vector<std::pair<std::string, ArchCalibration>> families;  // arch -> constants
  std::vector<LayerProfile> layer_profiles;  // measured layers (a scenario's calibration)
  ArchCalibration fallback;           // for families never fitted
  double overlap_slowdown = 0.189;    // compute slowdown while communication overlaps it
  double host_launch_s = 5e-6;        // CPU time to issue one kernel in eager training
  double framework_memory_bytes = 0;  // CUDA context, NCCL buffers, allocator slack per GPU
  double framework_memory_fraction = 0;  // fragmentation, as a fraction of the rest

  const ArchCalibration& for_arch(const std::string& arch) const;
  // The layer profile measured on GPU `gpu_id` for this shape (micro-batch, sequence, TP, CP)
  // and layer kind (dense or MoE), or null: the roofline then stands.
  const LayerProfile* layer_profile(const std::string& gpu_id, int64_t micro_batch,
                                    int64_t seq_len, int tp, int cp, bool moe) const;
};

}  // namespace stepcast
