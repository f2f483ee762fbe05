#include "stepcast/software_buffers.h"

#include <algorithm>

#include "stepcast/compute.h"

namespace stepcast {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// NCCL's receive buffers per channel of a connection, one of each protocol (NVIDIA/nccl
// src/init.cc DEFAULT_BUFFSIZE, DEFAULT_LL_BUFFSIZE and DEFAULT_LL128_BUFFSIZE with
// src/include/device.h, at 5067397c): Simple 4 MiB; LL 8 lines x 512 threads x 8 steps x 16 B =
// 512 KiB; LL128 120 elements x 640 threads x 8 steps x 8 B = 4.6875 MiB.
constexpr double kNcclChannelBytes = 4 * kMiB + 0.5 * kMiB + 4.6875 * kMiB;
// Rings per communicator: NCCL chooses 2 to MAXCHANNELS (64) by topology and bandwidth
// (src/graph/search.cc); 16 is a stated figure, not a measurement, and counts one ring peer per
// channel (trees and NVLS add more where NCCL runs them).
constexpr double kNcclChannels = 16;

// Transformer Engine's userbuffers (transformer_engine/pytorch/module/base.py initialize_ub at
// NVIDIA/TransformerEngine d0067d0d): one buffer for each of its 12 overlapped GEMMs (4
// ring-exchange, 2 pipeline, 4 bulk, 2 external), each of Megatron's shape [seq_len x
// micro_batch / cp, hidden] (megatron/training/initialize.py _initialize_tp_communicators at
// NVIDIA/Megatron-LM d98e8a64), cudaMalloc'd and registered outside PyTorch's allocator
// (common/comm_gemm_overlap/comm_gemm_overlap.cpp). Under an fp8 recipe the 8 all-gather
// buffers (layers_all_gather_overlap) hold 1-byte elements; the other 4, and all 12 otherwise,
// bf16.
constexpr double kUbAllGatherBuffers = 8;
constexpr double kUbReduceScatterBuffers = 4;

// DeepEP's normal-mode buffers, as Megatron-Core sizes them (megatron/core/transformer/moe/
// fused_a2a.py get_buffer: the larger of the dispatch and combine configs' hints, hidden bytes
// = hidden x max(element size, 2)), from deepseek-ai/DeepEP at dd758caf: csrc/legacy/config.hpp
// get_nvl_buffer_size_hint and get_rdma_buffer_size_hint, deep_ep/buffers/legacy.py (20 SMs,
// so 10 channels; the recommended configs' receive tokens per channel). Per received token the
// buffers hold its hidden bytes and up to 128 top-k indices (8 B), weights (4 B) and scales
// (4 B); the RDMA buffer is doubled (send and receive halves) and adds 16 B per token.
constexpr double kDeepEpChannels = 10;
constexpr double kDeepEpNvlPeers = 8;   // LEGACY_NUM_MAX_NVL_PEERS
constexpr double kDeepEpRdmaTokens = 128;
constexpr double kDeepEpTokenMetaBytes = 128 * (8 + 4 + 4);
double deepep_nvl_tokens(int ep) {  // the recommended configs' num_max_nvl_chunked_recv_tokens
  return ep <= 8 ? 256 : ep <= 64 ? 288 : ep <= 96 ? 480 : ep <= 128 ? 560 : 720;
}

}  // namespace

int nccl_communicators(const ModelSpec& m, const Plan& p, const StageShape& st) {
  const bool moe = m.moe.enabled() && st.moe_layers > 0;
  int n = 0;
  n += p.tp > 1;                                // TP's all-gathers and reduce-scatters
  n += p.cp > 1;                                // CP's K/V exchange
  n += p.pp > 1;                                // the pipeline's sends and receives
  n += p.dp * p.cp > 1;                         // the gradient reduction over DP x CP
  n += moe && p.ep > 1 && p.moe_dispatcher != MoeDispatcher::flex;  // flex: DeepEP, not NCCL
  n += moe && p.etp > 1 && p.etp != p.tp;       // expert TP, where it is not TP's group
  n += moe && p.edp() > 1 && p.edp() != p.dp * p.cp;  // the experts' gradient reduction
  return n;
}

SoftwareBuffers software_buffers(const ModelSpec& m, const Plan& p, const StageShape& st,
                                 double layer_activations) {
  SoftwareBuffers b;
  const double a = activation_bytes(p.precision);
  const double h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;  // per CP rank

  if (p.tp_comm_overlap && p.tp > 1) {
    const double ag_bytes = low_precision(p.precision) ? 1 : 2;
    b.userbuffers = tokens * h * (kUbAllGatherBuffers * ag_bytes + kUbReduceScatterBuffers * 2);
  }

  const bool moe = m.moe.enabled() && st.moe_layers > 0;
  if (moe && p.ep * p.etp > 1) {
    const double shard = tokens / p.tp;  // the MoE layer's sequence-parallel tokens
    // Routed tokens are latent-wide in a latent MoE (the flex dispatcher sizes its buffers by
    // moe_latent_size: token_dispatcher.py line 1535 at d98e8a64).
    const double dt = static_cast<double>(m.moe_token_dim());
    // Megatron-Core's token dispatchers (megatron/core/transformer/moe/token_dispatcher.py at
    // d98e8a64): alltoall permutes each token top_k times into a send buffer that lives until
    // the all-to-all has delivered it (the received rows are the experts' input, counted in the
    // activations, at the busiest rank's moe_imbalance); allgather gathers the hidden states of
    // the whole tp x ep group before each GPU picks its experts' rows; flex permutes inside
    // DeepEP's own buffers (below).
    if (p.moe_dispatcher == MoeDispatcher::alltoall)
      b.moe_dispatch = a * shard * static_cast<double>(m.moe.top_k) * dt;
    else if (p.moe_dispatcher == MoeDispatcher::allgather)
      b.moe_dispatch = a * shard * p.tp * p.ep * dt;
    else if (p.ep > 1) {
      const double token_bytes = dt * std::max(a, 2.0) + kDeepEpTokenMetaBytes;
      const double nvl_ranks = std::min<double>(p.ep, kDeepEpNvlPeers);
      const double rdma_ranks = std::max(1.0, p.ep / kDeepEpNvlPeers);
      b.deepep = kDeepEpChannels * nvl_ranks * deepep_nvl_tokens(p.ep) * token_bytes;
      if (p.ep > kDeepEpNvlPeers)
        b.deepep += kDeepEpChannels * rdma_ranks * kDeepEpRdmaTokens * (token_bytes + 16) * 2;
    }
  }
  // --overlap-moe-expert-parallel-comm runs one more micro-batch's forward before the steady
  // 1F1B phase of the interleaved schedule (megatron/core/pipeline_parallel/schedules.py,
  // get_pp_rank_microbatches at d98e8a64: "we schedule one extra micro-batch forward step"), so
  // one more model chunk's activations are held. Without a pipeline the merged step runs the
  // next micro-batch's layers forward as the last one's run backward, freeing as many as it
  // stores: one layer's more at a time.
  if (moe && p.moe_overlap && p.ep > 1)
    b.ep_overlap = p.pp > 1 ? layer_activations / p.vpp
                            : layer_activations / std::max<double>(1, static_cast<double>(st.layers));

  b.wgrad_dummies = wgrad_dummy_bytes(m, p, st);
  b.nccl = kNcclChannels * kNcclChannelBytes * nccl_communicators(m, p, st);
  return b;
}

}  // namespace stepcast
