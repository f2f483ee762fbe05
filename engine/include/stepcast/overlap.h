// Communication hidden behind compute, mechanism by mechanism, as the training software does it
// (NeMo's communication_overlap.rst and userbuffer configs for TP overlap; Megatron-LM
// megatron/core/distributed/distributed_data_parallel.py for DP buckets; DeepSpeed
// deepspeed/runtime/zero/stage_1_and_2.py and stage3.py for ZeRO-2/3). Each function returns the
// time the communication adds to the critical path: what the compute cannot cover, plus the
// slowdown of the compute it does cover (NCCL and userbuffer kernels take SMs and memory
// bandwidth: `slowdown` is the fraction of the overlapped communication time the compute loses, a
// fitted constant).
#pragma once

namespace stepcast {

// Bulk overlap: `comm` runs beside an independent compute window of `window` seconds (Transformer
// Engine's bulk overlaps in the backward, a ZeRO-3 prefetch, CP's K/V ring).
//   exposed = max(0, comm - window) + slowdown * min(comm, window)
double bulk_overlap_s(double comm, double window, double slowdown);

// Ring-exchange all-gather overlapped with the GEMM that consumes it (Transformer Engine
// userbuffers, `split_pipelined_ag`): the GEMM runs in tp chunks, chunk i on the shard that has
// arrived while the next is sent round the TP ring, so tp - 1 steps each hide a 1/(tp-1) share of
// the all-gather behind a 1/tp share of the GEMM:
//   exposed = (tp-1) * max(0, comm/(tp-1) - gemm/tp) + slowdown * min(comm, (tp-1)/tp * gemm)
double ring_exchange_overlap_s(double comm, double gemm, int tp, double slowdown);

// Pipelined reduce-scatter after the GEMM that produces it (`split_pipelined_rs`, 4 splits in
// NeMo's userbuffer configs): the GEMM runs in `splits` chunks and each chunk's reduce-scatter
// overlaps the next chunk's GEMM; the last chunk's has nothing left to hide behind:
//   exposed = comm/splits + (splits-1) * max(0, comm/splits - gemm/splits)
//             + slowdown * min((splits-1)/splits * comm, (splits-1)/splits * gemm)
double pipelined_reduce_scatter_s(double comm, double gemm, int splits, double slowdown);

// Data-parallel gradient sync overlapped with the backward (Megatron DDP's buckets). Buckets go
// out as the backward of the last micro-batch produces them; with virtual pipeline chunks each
// chunk's buckets wait for that chunk's last backward, so the granularity is one chunk: the last
// chunk's share of the sync hides behind that chunk's backward, and the last bucket is always
// exposed (NeMo communication-overlap docs: "exposes only one DP communication chunk"):
//   chunk = sync / vpp
//   exposed = max(chunk / buckets_per_chunk, max(0, chunk - backward/vpp)
//                                            + slowdown * min(chunk, backward/vpp))
double dp_sync_exposed_s(double sync, double backward, int vpp, double buckets, double slowdown);

}  // namespace stepcast
