// The steps of one estimate, in the order estimate() runs them (estimate.cpp):
//
//   1. layout      where each pipeline runs: stage groups, layers per stage, replica sets and
//                  their micro-batches (scenario/placement.cpp; "auto" counts balanced by the
//                  stage costs of step 2 in replica_sets.cpp)
//   2. stage cost  per stage and micro-batch: compute, exposed TP/CP/ZeRO-3 communication, the
//                  census, memory (stage_cost.cpp)
//   3. schedule    each replica set's pipeline through 1F1B or interleaved 1F1B: closed form or
//                  event simulation (run_pipeline.cpp)
//   4. tail        after the last backward: data-parallel sync, parameter gather, small
//                  all-reduces, the optimizer step (tail.cpp)
//   5. breakdown   the critical path in named parts that add up to the iteration time
//                  (breakdown.cpp)
//   6. timeline    every block of the schedule, then sync and optimizer (timeline.cpp)
//   7. summary     throughput, model and hardware FLOP/s, warnings (summary.cpp)
//
// Private to the engine.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "stepcast/census.h"
#include "stepcast/compute.h"
#include "stepcast/estimate.h"
#include "stepcast/pipeline.h"
#include "stepcast/schedule.h"
#include "scenario/placement.h"

namespace stepcast::detail {

// Exposed time of one micro-batch split by the pass whose blocks carry it: the forward, or the
// backward (recompute runs inside the backward blocks).
struct ByPass {
  double forward = 0, backward = 0;
  double total() const { return forward + backward; }
};

// One micro-batch on one stage: compute, and the communication left on the critical path after
// overlap. Seconds.
struct StageTime {
  double forward = 0, backward = 0, recompute = 0;  // compute only
  // Of backward, the weight gradients (W): what a zero-bubble schedule runs apart from the input
  // gradients (B), which carry the rest of the backward pass, its recompute and its exposed
  // communication (LayerCompute::weight_grad_s).
  double weight_grad = 0;
  double tp = 0, cp = 0, zero3 = 0;                 // exposed communication
  double ep = 0;  // MoE token exchange (all-to-alls, expert TP) not hidden behind compute
  double host = 0;  // the GPU waiting for the CPU to launch kernels (eager launch-bound)
  double offload = 0;  // activation copies to and from the host not hidden (offload.h)
  // Of tp, cp, zero3, ep, host and offload: what the forward pass exposes (each phase's communication
  // with the compute of its own pass), so a schedule's forward and backward blocks grow with
  // their own pass's work only.
  double forward_exposed = 0;
  double compute() const { return forward + backward + recompute; }
  double total() const { return compute() + tp + cp + zero3 + ep + host + offload; }
  // Each pass's wall time: its compute and what it exposes (the backward's with recompute).
  double forward_pass() const { return forward + forward_exposed; }
  double backward_pass() const { return total() - forward_pass(); }
  double input_grad_pass() const { return backward_pass() - weight_grad; }
};

// A stage's data-parallel collectives of one kind (the gradient reduce, or the distributed
// optimizer's parameter gather) over the dense and expert data-parallel groups, as one burst of
// back-to-back buckets (bucketed_overlap_s): the time that moves their bytes, one collective's
// start-up per group, and the buckets.
struct DpBurst {
  double transfer_s = 0, fixed_s = 0, buckets = 0;
  double whole_s() const { return transfer_s + fixed_s; }  // sent after the compute, in one go
};

// One value per virtual chunk of a stage: the first kInline in place, any further ones on the
// heap. A stage has 1 to a few chunks (the search tries vpp up to 4, NVIDIA's recipes run up to
// 8), so a StageCost, built and copied for every stage of every estimate, allocates nothing for
// them (its eight chunk lists were a fifth of a search's allocations).
class ChunkValues {
 public:
  static constexpr size_t kInline = 8;
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void push_back(double v) {
    if (size_ < kInline) inline_[size_] = v;
    else more_.push_back(v);
    ++size_;
  }
  double operator[](size_t k) const { return k < kInline ? inline_[k] : more_[k - kInline]; }
  double back() const { return (*this)[size_ - 1]; }

 private:
  std::array<double, kInline> inline_{};
  std::vector<double> more_;  // chunks kInline onwards
  size_t size_ = 0;
};

struct StageCost {
  StageTime time;
  DpBurst dp_reduce, dp_gather;
  // Each micro-batch's data-parallel collectives (ZeRO-3's parameter gathers and gradient
  // reduce-scatters, DeepSpeed ZeRO-2's gradient reduces), whole: a collective of every
  // data-parallel rank, so a replica set that runs fewer micro-batches than another still takes
  // part in the other's, with no compute of its own to hide them (tail.cpp).
  double dp_per_micro_batch_s = 0;
  double unit_s = 0;  // time per micro-batch in the schedule, with blocking send/receive
  bool profile_at_peak = false;  // a layer profile faster than the peak, taken at the peak
  // Each virtual chunk's share of the stage's forward and backward (sums to 1): its layers, and
  // the embedding on the model's first chunk and the output layer on its last.
  ChunkValues chunk_forward_share, chunk_backward_share;
  ChunkValues chunk_weight_grad_share;  // each chunk's share of StageTime::weight_grad
  // Each chunk's share of the stage's layers (sums to 1). A pass's exposed TP, CP and EP
  // communication and its MoE syncs' waits are the layers' own: they go with each chunk's
  // layers, while its compute goes by the compute shares above (stage_cost.cpp).
  ChunkValues chunk_layers_share;
  // Chunk k's part of a forward or backward pass of `pass_s` seconds (compute and what the pass
  // exposes beside it, its own waits and ZeRO-3 apart): its compute and its layers' share of the
  // rest.
  double chunk_forward_s(int k, double pass_s) const {
    return time.forward * chunk_forward_share[k] + (pass_s - time.forward) * chunk_layers_share[k];
  }
  double chunk_backward_s(int k, double pass_s) const {
    const double compute = time.backward + time.recompute;
    return compute * chunk_backward_share[k] + (pass_s - compute) * chunk_layers_share[k];
  }
  // ZeRO-3's exposed gathers (forward) and reduce-scatters (backward) of each chunk, apart from
  // the shares above (they follow the chunk's layers, not its compute); empty without ZeRO-3.
  ChunkValues chunk_zero3_forward, chunk_zero3_backward;
  // Each virtual chunk's wait for the CPU's launches per pass (stage_cost.cpp), of the time's host.
  ChunkValues chunk_launch_wait_forward, chunk_launch_wait_backward;
  // Of each chunk's backward wait, its W block's (the zero-bubble schedules'; 0 in the others).
  ChunkValues chunk_launch_wait_weight;
  // Megatron's EP overlap without pipelining (combined_1f1b_schedule_for_no_pipelining,
  // megatron/core/pipeline_parallel/combined_1f1b.py) runs the first micro-batch's forward alone
  // and then each forward paired with the previous micro-batch's backward, which leaves the last
  // backward alone: those two passes have no other pass to hide their token exchanges behind and
  // run as without the overlap. Their time per micro-batch (the stage costed with
  // plan.moe_overlap off) where that applies (pp 1, a stage with MoE layers); `time` holds the
  // paired passes. One micro-batch pairs nothing: the step is the one without the overlap.
  std::optional<StageTime> unpaired;
  // The first forward's and the last backward's wall time: the unpaired passes' where they apply.
  double first_forward_pass_s() const {
    return unpaired ? unpaired->forward_pass() : time.forward_pass();
  }
  double last_backward_pass_s() const {
    return unpaired ? unpaired->backward_pass() : time.backward_pass();
  }
  // Where every pass is paired (the EP overlap with pipelining: the interleaved schedule,
  // DualPipeV), the backward's wall time as its own compute runs (stage_cost.cpp): its compute
  // and the forward's exchanges that its blocks could not hide, which stall it, in place of its
  // own, which run beside the forward's compute (`time` puts each pass's own exchanges in its
  // block). The last backward's gradients reduce behind it (tail.cpp). The pair's time is the
  // same either way, but a TP overlap that hides the backward's TP collectives behind GEMMs the
  // exchanges then cannot use moves exposed time from the backward's block into the forward's:
  // behind the block, the gradient sync hid less and the TP overlap was 0.007 % slower than
  // none (issue 38's invariant suite, seed 96724: grok-1, pp 8, vpp 4, the EP overlap).
  std::optional<double> paired_backward_pass_s;
  // The window the last backward gives the gradient sync: the unpaired backward where it runs
  // alone, the paired one as its compute runs, else the backward pass.
  double sync_window_s() const {
    if (unpaired) return unpaired->backward_pass();
    return paired_backward_pass_s ? *paired_backward_pass_s : time.backward_pass();
  }
  // What the unpaired first forward and last backward add to the paired passes' pipeline.
  double unpaired_ends_s() const { return unpaired ? unpaired->total() - time.total() : 0.0; }
  // The stage's W blocks per micro-batch: the weight gradients and their launch waits.
  double weight_grad_block_s() const {
    double s = time.weight_grad;
    for (size_t k = 0; k < chunk_launch_wait_weight.size(); ++k) s += chunk_launch_wait_weight[k];
    return s;
  }
  StageReport report;
  // A stage costed as an earlier one of its pipeline (stage_costs) shares that stage's census:
  // its index there, whose report.communication this one's is (its own is left empty, and
  // filled only where a report is made: estimate.cpp; the tail reads it once); -1: its own.
  // (Copied with every such stage, the census was about 5 % of an MoE search's instructions.)
  int census_of = -1;
};

// One pipeline (a replica set) run through the schedule.
struct PipelineRun {
  Plan plan;  // the scenario's plan with this set's micro-batch count
  // The set's layout, not a copy: the replica sets outlive the runs inside estimate().
  const PipelineLayout* layout = nullptr;
  std::vector<StageCost> stages;
  double pipe_s = 0;  // forward-backward of all micro-batches, fill and drain included
  double fill_s = 0;  // send/receive of the fill and drain when the steady state hides it
  double bubble_s = 0;      // idle time of the bottleneck stage (fill and drain)
  double blocking_p2p_s = 0;  // blocking sends of the bottleneck stage
  int bottleneck = 0;
  std::vector<PipelineEvent> events;
  // Where the schedule was simulated: each stage's last compute block's end (its gradients
  // ready for the sync), on the pipe_s clock; empty where the closed form stands.
  std::vector<double> stage_end_s;
  // Of pipe_s, what the parameter gathers beside the fill add (first_forward_gathers_s), as the
  // breakdown counts them: the fill's delay (fill_delay_s), taken from the bubble where
  // simulated.
  double gather_s = 0;
};

// What follows the pipelines, per iteration.
struct Tail {
  std::vector<double> stage_sync_s;  // each stage's gradient sync after its last backward
  // How far the latest replica set, with the per-micro-batch collectives of the micro-batches it
  // does not run itself (StageCost::dp_per_micro_batch_s), ends past the critical pipeline.
  double lockstep_s = 0;
  double dp_exposed_s = 0;           // sync not hidden behind the drain
  double param_gather_s = 0;         // distributed optimizer's all-gather, exposed
  double other_s = 0;                // TP/embedding grad all-reduces, norms, loss
  double optimizer_s = 0;            // the slowest optimizer step
  double total() const {
    return lockstep_s + dp_exposed_s + param_gather_s + other_s + optimizer_s;
  }
};

// 1. replica_sets.cpp: the placement (scenario/placement.h) with its "auto" counts balanced by the
// stage costs of step 2.
std::vector<ReplicaSet> replica_sets(const Scenario& sc);

// 2. stage_cost.cpp
// Each kind of layer's compute (layer_compute) as the stages of one plan found it, by GPU group:
// a layer's cost depends on its kind, the plan and its GPU, not on the stage that holds it, so a
// plan's later stages on a group take it from here (stage_costs). Held in place (a handful of
// kinds and groups); one past its capacity is simply computed again.
class KnownLayers {
 public:
  const LayerCompute* find(int group, const LayerKind& kind) const {
    for (size_t i = 0; i < size_; ++i)
      if (entries_[i].group == group && entries_[i].kind == kind) return &entries_[i].compute;
    return nullptr;
  }
  void add(int group, const LayerKind& kind, const LayerCompute& compute) {
    if (size_ < entries_.size()) entries_[size_++] = {group, kind, compute};
  }

 private:
  struct Entry {
    int group = 0;
    LayerKind kind;
    LayerCompute compute;
  };
  std::array<Entry, 8> entries_;
  size_t size_ = 0;
};

// What stage `index` holds: its layers by kind (all chunks).
StageShape stage_shape(const ModelSpec& m, const Plan& p, int index, const LayerMix& layers);
StagePaths paths_for_stage(const Scenario& sc, const Plan& p, const PipelineLayout& lay, int i);
// `chunk_mix`: the stage's chunks' layers, which add up to `layers` (empty: vpp equal chunks of
// the stage's mix).
// `memory`: the stage's stage_memory where the caller has it already (a search's memory check),
// else null.
// `known`: the layer costs of the plan's other stages (read, and added to), or null.
StageCost stage_cost(const Scenario& sc, const Plan& p, const StageShape& shape,
                     const LayerMix& layers, int group, const StagePaths& paths,
                     std::span<const LayerMix> chunk_mix = {},
                     const MemoryBreakdown* memory = nullptr, KnownLayers* known = nullptr);
// The stage i of a layout: its shape and its cost.
StageCost stage_cost_of(const Scenario& sc, const Plan& p, const PipelineLayout& lay, int i,
                        const MemoryBreakdown* memory = nullptr, KnownLayers* known = nullptr);
// Every stage of a pipeline. A middle stage whose inputs are an earlier middle stage's (its group,
// the next stage's group, its chunks' layers) costs the same: that cost is copied, with the
// stage's own index and memory (fewer micro-batches in flight further down the pipeline), so a
// pipeline of 16 identical stages is costed three times, not sixteen.
// `memory`: each stage's stage_memory where the caller has them already (empty: found here).
std::vector<StageCost> stage_costs(const Scenario& sc, const Plan& p, const PipelineLayout& lay,
                                   std::span<const MemoryBreakdown> memory = {});
// One layer's TP collectives per micro-batch under sequence parallelism, whole and as Transformer
// Engine's userbuffers overlap them (stage_cost.cpp).
ByPass layer_tp_comm_s(const ModelSpec& m, const Plan& p, const CommPath& path);
// The exposed time per pass, and per pass the GEMM time of the attention block (a hybrid
// layer's attention or Mamba block) and of the MLP or MoE block that is busy hiding them: the
// EP overlap hides its exchanges behind what is left (moe_overlap, stage_cost.cpp).
struct TpOverlap {
  ByPass exposed, attention_busy, mlp_busy;
};
TpOverlap te_overlapped_tp_s(const ModelSpec& m, const Plan& p, const LayerCompute& layer,
                             const CommPath& path, double slowdown, const LayerKind& kind = {});
// Communication hidden behind a compute window: what exceeds the window stays exposed, and the
// compute it overlaps slows down (NCCL kernels take SMs and memory bandwidth).
double exposed_after_overlap(double comm, double window, double slowdown);
// Sum of op time per iteration for ops matching a group and phase.
double census_time(const std::vector<CommOp>& ops, CommGroup group, Phase phase);

// 3. run_pipeline.cpp. The plan's schedule (schedule.h) through its closed form, or its event
// simulation when `simulate` asks for it (or the schedule's closed form is not exact, unless
// `closed_form`) or `want_events`, within `block_budget` (the simulation takes the blocks it runs
// from it: the timeline's every block, the lean simulation those it does not extrapolate);
// otherwise the closed form stands.
inline uint64_t schedule_blocks(const Plan& p) { return schedule_blocks(schedule_shape(p)); }
PipelineRun run_pipeline(const Scenario& sc, Plan p, const PipelineLayout& lay,
                         bool simulate, bool closed_form, bool want_events,
                         uint64_t& block_budget, std::span<const MemoryBreakdown> memory = {});

// 4. tail.cpp
// A set's per-micro-batch data-parallel collectives (its slowest stage's): what each micro-batch
// it does not run, of the set that runs the most, costs it.
double lockstep_per_micro_batch_s(const std::vector<StageCost>& stages);
// How far a set's work runs past its pipeline's end, whatever its micro-batches: the
// distributed optimizer's parameter gather (ZeRO-1 and 2), and then its gradient sync's exposure
// after its last backward (`stage_sync`, when given: each stage's sync).
double param_gather_s(const Scenario& sc, const std::vector<StageCost>& stages);
// Where the stages' overlapped parameter gathers run beside the pipeline's fill (pp > 1), the
// earliest each stage's rank can start its first forward for its gather; empty elsewhere
// (param_gather_s then).
std::vector<double> first_forward_gathers_s(const Scenario& sc,
                                            const std::vector<StageCost>& stages);
// How much those starts delay the fill: the most any rank's start passes the time the first
// micro-batch would reach it (`fill_start`, each rank's first forward's start without them).
// On equal stages the fill lies on the critical path, so the pipeline's delay.
double fill_delay_s(const std::vector<double>& gathers, const std::vector<double>& fill_start);
// With a simulated run (`run`, its stage_end_s), each stage's slack is how long before the
// pipeline's end its own last block ended; otherwise the schedule's closed-form drain.
double exposed_sync_s(const Scenario& sc, const Plan& set_plan,
                      const std::vector<StageCost>& stages, std::vector<double>* stage_sync,
                      const PipelineRun* run = nullptr);
Tail tail(const Scenario& sc, const std::vector<PipelineRun>& runs, size_t critical);

// 5. breakdown.cpp
Breakdown breakdown(const PipelineRun& run, const Tail& tail);

// 6. timeline.cpp
void add_timeline(Report& r, const std::vector<PipelineRun>& runs, size_t critical,
                  const Tail& tail, const EstimateOptions& options);

// 1-4 and 7's figures, for a search: an estimate's time, throughput and memory without its
// report (no breakdown, replicas, warnings, timeline, nor the stages' reports moved out): what
// search_plans ranks plans by, exactly as estimate() finds them.
struct SearchFigures {
  double iteration_time_s = 0, mfu = 0, tokens_per_s = 0;
  double peak_memory_bytes = 0;  // the critical replica set's fullest stage (Report::stages)
  bool fits = true;              // every stage of every set (Report::fits)
  std::array<int64_t, 3> stage_layers{};  // first, second (or first) and last stage's layers
};
// `memory`: each replica set's stages' stage_memory, as replica_sets orders them, and `sets`
// the replica sets, where the search has found them already (empty, null: found here; for a
// DualPipe plan, those of the plan it runs as).
SearchFigures estimate_figures(const Scenario& sc, const EstimateOptions& options = {},
                               std::span<const std::vector<MemoryBreakdown>> memory = {},
                               const std::vector<ReplicaSet>* sets = nullptr);

// 7. summary.cpp
// The cluster's mean dense peak per GPU at the plan's precision, TFLOP/s (Report::peak_tflops).
double mean_peak_tflops(const Scenario& sc);
// Throughput and model FLOP/s of an iteration of `iteration_time_s` (the report's figures).
struct Throughput {
  double model_flops = 0;  // per iteration, Megatron-LM's count
  double tokens_per_s = 0, model_tflops_per_gpu = 0, mfu = 0;
};
Throughput throughput(const Scenario& sc, double iteration_time_s, double peak_tflops);
void summarise(Report& r, const Scenario& sc, const std::vector<ReplicaSet>& sets,
               const std::vector<PipelineRun>& runs);

}  // namespace stepcast::detail
