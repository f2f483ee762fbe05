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

// Bucketed data-parallel communication overlapped with the compute that frees it (the gradient
// reduce: Megatron DDP's buckets, each sent as the last micro-batch's backward completes it) or
// needs it (the distributed optimizer's parameter all-gather, each bucket gathered ahead of the
// next forward's layers). The same bytes as one message: `transfer` seconds of bytes at the
// path's bus bandwidth plus `fixed`, one collective's start-up (latency steps and half-peak fill,
// collective_fixed_s), here split in `buckets` that go out back to back on one ring. A ring kept
// busy pays its start-up once per burst, not once per bucket: the next bucket's data enters the
// ring as the last one's drains (NeMo's communication-overlap docs: overlap "exposes only one
// DP communication chunk"). What the compute window cannot cover is the backlog: at least the
// last bucket (freed last, or needed first), and what the link could not move during the window:
//   backlog = max(transfer / buckets, transfer - window)
//   exposed = backlog + fixed + slowdown * (transfer - backlog)
// The last bucket starts no later than the single message would (at the end of the compute) and
// the backlog holds no more bytes than the message, so exposed <= transfer + fixed: overlap is
// never slower than none, by construction, for any slowdown <= 1.
double bucketed_overlap_s(double transfer, double fixed, double buckets, double window,
                          double slowdown);

// The compute each overlap above runs its communication beside: the part of `window` or `gemm`
// that is busy hiding it (the `min` of its formula). Another communication hidden behind the same
// compute can only use what is left; hiding two behind the whole of it let each grow by what the
// compute shrank, so a faster GPU could finish later (issue 38).
//   bulk: min(comm, window); ring exchange: min(comm, (tp-1)/tp * gemm);
//   pipelined reduce-scatter: (splits-1)/splits * min(comm, gemm)
double bulk_hidden_s(double comm, double window);
double ring_exchange_hidden_s(double comm, double gemm, int tp);
double pipelined_reduce_scatter_hidden_s(double comm, double gemm, int splits);

}  // namespace stepcast
