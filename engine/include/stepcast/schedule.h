// A pipeline schedule: the order each pipeline rank runs its forward and backward blocks in, and
// what follows from that order. Everything outside engine/src/schedule/ that depends on the
// schedule asks this interface (docs/contributing.md, "Add a schedule"):
//
//   memory          micro-batches whose activations a rank holds at its peak   in_flight
//   the estimate    the time of the schedule: its closed form, and whether       closed_form,
//                   that form is exact or the event simulation must run            closed_form_exact
//   the simulation  each rank's block order                                      rank_order
//   the tail        the last backward block, behind which a stage's gradient      last_backward_s
//                   reduction starts
//   budgets         the blocks the simulation runs                               blocks
//   extrapolation   the part of each rank's order that repeats                   steady_state
//   placement       which virtual stages each rank holds (the loop or the V)     placement,
//                                                                                 virtual_stage
//
// The implementations: 1F1B (PipeDream-flush, Megatron's default; schedule/one_f_one_b.cpp), the
// interleaved 1F1B of Narayanan et al., SC21 (schedule/interleaved.cpp), ZB-H1 and ZB-V of Qi et
// al., ICLR 2024 (schedule/zero_bubble.cpp, schedule/zbv.cpp), and DeepSeek's DualPipeV
// (schedule/dualpipev.cpp). Which one a plan runs is schedule_of(plan), from plan.schedule.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "stepcast/pipeline.h"
#include "stepcast/plan.h"

namespace stepcast {

// What a schedule is run over: pipeline ranks, model chunks per rank and micro-batches.
struct ScheduleShape {
  int stages = 1;
  int chunks = 1;  // virtual pipeline stages per rank (plan.vpp)
  int64_t micro_batches = 1;
};

// What a block computes: the kinds of Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
// sec. 2 (F, B, W), and the whole backward of the schedules that do not split it (BW, as
// sail-sg/zero-bubble-pipeline-parallelism names it at 39f2c186, megatron/core/pipeline_parallel/
// zerobubble/scheduler/graph.py).
enum class BlockKind {
  forward,      // F: the chunk's forward
  backward,     // BW: B followed at once by W in one autograd pass (Megatron's backward_step):
                //     the gradient goes back to the previous stage after both
  input_grad,   // B: the input gradients, sent back as soon as they are done
  weight_grad,  // W: the weight gradients of an earlier B of the same chunk and micro-batch on
                //    this rank; nothing waits for it but the optimizer step
};

// One block of a rank's order: one kind of pass of chunk `chunk` for one micro-batch.
struct ScheduleBlock {
  BlockKind kind = BlockKind::forward;
  int chunk = 0;
  int64_t micro_batch = 0;
  bool forward() const { return kind == BlockKind::forward; }
  // Whether the block produces the gradient the previous virtual stage waits for (B or BW).
  bool sends_gradient() const {
    return kind == BlockKind::backward || kind == BlockKind::input_grad;
  }
};

// One stage's time per micro-batch, whole (all its chunks), as the closed forms read it: `unit_s`
// is its compute, exposed communication and blocking sends; the passes are the blocks' shares of
// it (forward, input gradients with recompute, weight gradients).
struct StagePasses {
  double unit_s = 0;
  double forward_s = 0, input_grad_s = 0, weight_grad_s = 0;
};

// The repeating middle of one rank's order: blocks [first_block, end_block) repeat every
// `period_blocks` blocks, the same kinds and chunks with micro-batches `period_micro_batches`
// further on (1F1B's steady state: one forward and one backward; the interleaved schedule's: a
// group of p micro-batches through every chunk). The lean simulation extrapolates over it once
// the pipeline's state repeats (pipeline_simulation.cpp).
struct SteadyState {
  int64_t first_block = 0;
  int64_t end_block = 0;
  int64_t period_blocks = 0;
  int64_t period_micro_batches = 0;
};

// Where the model's p·v virtual stages sit on the p ranks. Every reader (the layers of each
// chunk, the stages that hold the embedding and the loss, the simulations' dependencies and
// messages) asks Schedule::virtual_stage and Schedule::home, never computes it.
enum class StagePlacement {
  // Megatron's interleaving (Narayanan et al., SC21 sec. 2.2.2): chunk c of rank r is virtual
  // stage c·p + r; the activations go round the ranks v times, the last rank sends to the first.
  loop,
  // The V of ZB-V (Qi et al., ICLR 2024, sec. 5) and DualPipeV (deepseek-ai/DualPipe at 3da1bbe,
  // dualpipe/dualpipev.py): two chunks, rank r holds virtual stages r and 2p - 1 - r, so the
  // activations go down the ranks and back up; the turn (p - 1 to p) stays on the last rank, and
  // the first rank holds the model's first and last layers (PyTorch's
  // generate_stage_to_rank_mapping, style "v", torch/distributed/pipelining/schedules.py at
  // pytorch/pytorch 00722e64).
  v_shape,
};

// A virtual stage's rank and chunk.
struct StageHome {
  int rank = 0;
  int chunk = 0;
};

// Virtual stage of chunk `chunk` of rank `rank` on `stages` ranks, and its inverse.
int virtual_stage_of(StagePlacement placement, int stages, int rank, int chunk);
StageHome home_of(StagePlacement placement, int stages, int virtual_stage);

struct Schedule {
  std::string_view name;
  // Micro-batches whose activations rank `stage` holds at its peak.
  double (*in_flight)(const ScheduleShape& shape, int stage) = nullptr;
  // The blocks of rank `stage`, in the order it runs them (appended to `out`).
  void (*rank_order)(const ScheduleShape& shape, int stage, std::vector<ScheduleBlock>& out) =
      nullptr;
  // Block `k` of that order, and how many there are: what the lean simulation walks, one block
  // at a time, without building the order (rank_order is the same list); nullptr where
  // blocks_from gives the blocks.
  ScheduleBlock (*block_at)(const ScheduleShape& shape, int stage, int64_t k) = nullptr;
  int64_t (*blocks_of_rank)(const ScheduleShape& shape, int stage) = nullptr;
  // The schedule's time from each stage's time per micro-batch (compute, exposed communication
  // and blocking sends): exact where closed_form_exact says so, else a bound the event
  // simulation refines.
  PipelineTime (*closed_form)(const std::vector<StagePasses>& stages,
                              const ScheduleShape& shape) = nullptr;
  // Whether closed_form is exact for any stage times (1F1B), or only the event simulation is.
  bool closed_form_exact = true;
  // Of a stage's backward per micro-batch (`backward_s`, of which `weight_grad_s` is W), the block
  // that produces its last gradients: what the data-parallel reduction of those gradients can
  // start behind.
  double (*last_backward_s)(double backward_s, double weight_grad_s,
                            const ScheduleShape& shape) = nullptr;
  // How much sooner the next stage finishes its last gradient block than this one (besides the
  // message between them): the drain that hides a later stage's gradient reduction.
  double (*drain_step_s)(double backward_s, double weight_grad_s,
                         const ScheduleShape& shape) = nullptr;
  // The steady state of rank `stage`'s order (nullptr: nothing repeats; simulate every block).
  SteadyState (*steady_state)(const ScheduleShape& shape, int stage) = nullptr;
  // Which virtual stages each rank holds.
  StagePlacement placement = StagePlacement::loop;
  // Blocks [k, k + n) of rank `stage`'s order into `out`, for a schedule whose order a few
  // counters walk (Megatron's: megatron_order.h), in place of block_at; nullptr: block_at. The
  // lean simulation reads the blocks its steady state's table does not hold (warm-ups, first
  // periods, drains) in runs of these: on GPT-3 175B's TP 8 x PP 16 x VPP 2 estimate, block_at's
  // divisions and the call around each block were a third of the simulation's instructions.
  void (*blocks_from)(const ScheduleShape& shape, int stage, int64_t k, int64_t n,
                      ScheduleBlock* out) = nullptr;

  int virtual_stage(const ScheduleShape& s, int rank, int chunk) const {
    return virtual_stage_of(placement, s.stages, rank, chunk);
  }
  StageHome home(const ScheduleShape& s, int virtual_stage) const {
    return home_of(placement, s.stages, virtual_stage);
  }
  // The link the message between virtual stages `virtual_stage` and `virtual_stage` + 1 crosses
  // (its index into the per-rank message times, each rank's link to the next: the forward and
  // its gradient travel the same one), or -1 where both sit on one rank and nothing is sent.
  int link_after(const ScheduleShape& s, int virtual_stage) const;
  // Whether rank `rank` holds the model's first (last) virtual stage: its embedding (its output
  // layer and loss).
  bool holds_first(const ScheduleShape& s, int rank) const { return home(s, 0).rank == rank; }
  bool holds_last(const ScheduleShape& s, int rank) const {
    return home(s, s.stages * s.chunks - 1).rank == rank;
  }
};

// The schedule a plan runs: interleaved when it has more than one model chunk per rank and more
// than one rank, else 1F1B.
const Schedule& schedule_of(const Plan& plan);
ScheduleShape schedule_shape(const Plan& plan);

// The plan the engine runs for `plan`: itself, but for a `dualpipe` plan DualPipeV on pp/2 ranks,
// the two halves as two replicas (schedule/dualpipe.cpp says why). Whatever times a plan or sizes
// its stages (the estimate, the search's memory checks, resolve) reads this one.
Plan plan_as_run(const Plan& plan);

// Blocks the event simulation of a shape runs: a forward and a backward per micro-batch, chunk
// and rank.
inline uint64_t schedule_blocks(const ScheduleShape& s) {
  return 2 * static_cast<uint64_t>(s.micro_batches) * static_cast<uint64_t>(s.chunks) *
         static_cast<uint64_t>(s.stages);
}

}  // namespace stepcast
