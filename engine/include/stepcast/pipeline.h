// The pipeline schedule: 1F1B (PipeDream-flush, Megatron's default) and the interleaved 1F1B of
// Narayanan et al. (SC21). With per-stage times u_i (forward + backward + recompute of one
// micro-batch, plus blocking send/receive) and m micro-batches,
//   T = m * max_i u_i + (sum_i u_i - max_i u_i) / v,
// which is (m + (p-1)/v) u for identical stages (SC21 eq. for the interleaved bubble) and the
// straggler form (m-1) max u + sum u (Aceso, Metis) for v = 1.
#pragma once

#include <cstdint>
#include <vector>


namespace stepcast {

struct PipelineTime {
  double total_s = 0;
  double steady_s = 0;  // m x the bottleneck stage's time per micro-batch
  double bubble_s = 0;  // fill and drain: total - steady
  int bottleneck = 0;   // the stage with the largest time per micro-batch
};

PipelineTime pipeline_time(const std::vector<double>& per_micro_batch_s, int64_t micro_batches,
                           int virtual_stages);

}  // namespace stepcast

namespace stepcast {

// One compute block of the schedule on one pipeline rank.
struct PipelineEvent {
  // backward: B and W in one block (schedules that do not split it); input_grad, weight_grad:
  // B and W apart (schedule.h's BlockKind).
  enum class Kind { forward, backward, send, input_grad, weight_grad } kind = Kind::forward;
  int stage = 0;
  int chunk = 0;  // virtual pipeline chunk (0 without interleaving)
  int64_t micro_batch = 0;
  double start_s = 0;
  double end_s = 0;
};

// Event-driven simulation of Megatron-LM's schedule (forward_backward_pipelining_without /
// with_interleaving): each rank runs its blocks in Megatron's order (warm-up forwards, 1F1B
// steady state, cool-down backwards; interleaved chunks in groups of p micro-batches), and a
// block starts when its rank is free and its input has arrived from the neighbouring stage
// (plus one p2p message time). forward_s / backward_s are per micro-batch for the whole stage
// (all chunks); backward includes recompute. When p2p is blocking, the sender is busy for the
// message time too (reported as `send` events). Returns the events in start order per stage;
// `makespan_s` receives the end of the last block.
std::vector<PipelineEvent> simulate_pipeline(const std::vector<double>& forward_s,
                                             const std::vector<double>& backward_s,
                                             int64_t micro_batches, int virtual_stages,
                                             double p2p_s, bool p2p_blocking,
                                             double* makespan_s);

// The same with a block duration per virtual stage: forward_s[c·p + i] and backward_s[c·p + i] are
// chunk c of stage i (uneven chunks: Megatron's embedding or loss counted as a layer, the
// embedding and output layer on the model's first and last chunk), and a message time per link;
// each rank runs its blocks in `schedule`'s order (schedule.h; nullptr: 1F1B, or interleaved
// with virtual stages). `weight_grad_s[c·p + i]`, of backward_s, is the weight gradients (W),
// which a schedule that splits the backward runs apart from the rest (B); empty: none. The interleaved schedule needs the micro-batches in whole groups of
// `stages`: a replica set balanced to another count runs 1F1B, each block its stage's whole work.
// `rank_start_s[i]` is the earliest rank i starts its first block: what its parameter
// all-gather, begun with the iteration, leaves exposed (tail.cpp, first_forward_gathers_s);
// empty: every rank at 0.
struct Schedule;
std::vector<PipelineEvent> simulate_virtual_pipeline(const std::vector<double>& forward_s,
                                                     const std::vector<double>& backward_s,
                                                     int stages, int64_t micro_batches,
                                                     int virtual_stages,
                                                     const std::vector<double>& p2p_s,
                                                     bool p2p_blocking, double* makespan_s,
                                                     const Schedule* schedule = nullptr,
                                                     const std::vector<double>& weight_grad_s = {},
                                                     const std::vector<double>& rank_start_s = {});

// What the estimate reads of a simulated schedule: its makespan, and how long rank `watch` (the
// bottleneck) spends in its blocks and its blocking sends; the same numbers, to the last bit, as
// summing simulate_virtual_pipeline's events, at a fraction of the cost: blocks are taken from
// the schedule one at a time, finished blocks kept in a ring of recent micro-batches per virtual
// stage, and no event is recorded. Same arguments as simulate_virtual_pipeline.
struct ScheduleTime {
  double makespan_s = 0;
  double busy_s = 0;
  double sends_s = 0;
  int64_t blocks_run = 0;  // blocks the simulation ran (the rest it extrapolated)
  // Each rank's last compute block's end (its last gradients ready), where simulated.
  std::vector<double> rank_end_s;
};
ScheduleTime simulate_schedule_time(const std::vector<double>& forward_s,
                                    const std::vector<double>& backward_s, int stages,
                                    int64_t micro_batches, int virtual_stages,
                                    const std::vector<double>& p2p_s, bool p2p_blocking,
                                    int watch, const Schedule* schedule = nullptr,
                                    const std::vector<double>& weight_grad_s = {},
                                    const std::vector<double>& rank_start_s = {});

// The same with a message time per link: p2p_s[i] from stage i to stage i+1 (and back), the
// last entry for the wrap from the last stage to the first (interleaved chunks).
std::vector<PipelineEvent> simulate_pipeline(const std::vector<double>& forward_s,
                                             const std::vector<double>& backward_s,
                                             int64_t micro_batches, int virtual_stages,
                                             const std::vector<double>& p2p_s, bool p2p_blocking,
                                             double* makespan_s);

}  // namespace stepcast
