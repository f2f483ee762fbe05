// ZeRO-3 / FSDP: a pass over the modules whose parameters each data-parallel rank gathers before
// it computes them (and whose gradients it reduce-scatters after, in the backward), run as the
// software runs it: the gathers on their own stream, one NCCL communicator for the gathers and the
// reduce-scatters (so they queue behind each other), and each gather issued up to `prefetch`
// modules ahead of the module computing.
//
// Sources: Zhao et al., "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB
// 2023 (arXiv 2304.11277): backward prefetch (BACKWARD_PRE, the default, issues the next unit's
// all-gather before the current unit's gradient computation, so it runs ahead of that unit's
// reduce-scatter on the shared communicator; without it the gather queues behind it), forward
// prefetch, and the rate limiter that caps the gathers in flight; FSDP2 as torchtitan runs it
// (pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py at 62a45b6f: the
// next module's gather issued ahead implicitly, set_modules_to_forward_prefetch and
// set_modules_to_backward_prefetch for more); DeepSpeed ZeRO-3 (deepspeedai/DeepSpeed
// deepspeed/runtime/zero/partitioned_param_coordinator.py at 00a31c99, fetch_sub_module: the
// current sub-module's parameters, waited for, then the next ones in trace order up to
// stage3_prefetch_bucket_size elements, 5e7 by default).
// The first module's gather has no compute before it to hide behind, the last
// reduce-scatter none after it, and a module's gather hides only behind the compute of the
// modules ahead of it in the prefetch window: a gather longer than that (latency-bound small
// modules over many ranks: collectives.h) is exposed module after module.
#pragma once

#include <span>

namespace stepcast {

// One fetch unit of a pass (a transformer layer, or one sub-module under DeepSpeed), seconds.
struct FetchUnit {
  double gather_s = 0;   // its parameters' all-gather(s), before its compute
  double compute_s = 0;  // its compute (and what else the pass runs on the compute stream)
  double reduce_s = 0;   // its gradients' reduce-scatter, after its compute (backward only)
};

// The time the pass takes beyond its compute: the gathers and reduce-scatters the compute did
// not hide, plus `slowdown` times the communication it did hide (the SMs and memory bandwidth
// NCCL takes from the compute beside it, overlap.h). `prefetch` 0: each gather waits for the
// compute before it (no prefetch); k >= 1: module i + k's gather is issued when module i starts.
double sharded_pass_exposed_s(std::span<const FetchUnit> units, int prefetch, double slowdown);

// The same for `count` identical units, without building them.
double sharded_pass_exposed_s(const FetchUnit& unit, int count, int prefetch, double slowdown);

}  // namespace stepcast
