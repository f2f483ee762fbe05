// One estimate: scenario in, report out. estimate() is a pure function of the resolved scenario;
// it composes the concepts (compute, census, pipeline, memory) and sums named time parts, so the
// breakdown adds up to the iteration time by construction.
#pragma once

#include <string>
#include <vector>

#include "stepcast/census.h"
#include "stepcast/memory.h"
#include "stepcast/scenario.h"

namespace stepcast {

// Exposed time on the critical path, seconds per iteration.
struct Breakdown {
  double forward = 0;    // forward compute of the bottleneck stage, all micro-batches
  double backward = 0;   // backward compute
  double recompute = 0;  // activation recomputation
  double tp_comm = 0;    // tensor-parallel collectives not hidden behind compute
  double cp_comm = 0;    // context-parallel K/V exchange not hidden behind attention
  double ep_comm = 0;    // MoE token exchange (expert-parallel all-to-alls, expert TP)
  double pp_comm = 0;    // pipeline send/receive on the critical path
  double bubble = 0;     // pipeline fill and drain
  double dp_comm = 0;    // data-parallel gradient / parameter sync not hidden
  double optimizer = 0;  // the optimizer step
  double other = 0;      // norm and embedding grad all-reduces, gradient norm, loss
  double host = 0;       // the GPU waiting for the CPU to launch kernels (eager, small work)
  double offload = 0;    // activation copies to and from host memory not hidden behind compute
  double sum() const {
    return forward + backward + recompute + tp_comm + cp_comm + ep_comm + pp_comm + bubble +
           dp_comm + optimizer + other + host + offload;
  }
};

struct StageReport {
  int index = 0;
  int64_t layers = 0;
  int group = 0;  // index into cluster.groups
  std::string gpu;
  double parameters = 0;  // held by one GPU of the stage (before ZeRO sharding)
  double forward_s = 0;   // one micro-batch, compute plus exposed TP/CP communication
  double backward_s = 0;
  double recompute_s = 0;
  double p2p_s = 0;       // one pipeline message
  double dp_sync_s = 0;   // the stage's gradient synchronisation, whole (before overlap)
  double optimizer_s = 0;
  // Of optimizer_s, Muon's Newton-Schulz iterations and the TP gathers of the matrices before
  // them (0 under Adam).
  double newton_schulz_s = 0;
  // Activation offloading's copies over the host link, one micro-batch, not hidden behind the
  // compute they overlap (plan.cpu_offloading_num_layers; physics/offload.h).
  double offload_s = 0;
  // The compute rates the stage's layers were priced at (its GPU, the plan's precision, the
  // calibration's family constants, any compute scale applied): a GEMM reaches gemm_efficiency
  // of the GPU's dense peak, gemm_tflops, unless its traffic binds; the attention core
  // attention_efficiency of the 16-bit peak (unfused: the 16-bit GEMM efficiency). What the page
  // shows beside forward and backward.
  double gemm_efficiency = 0;
  double gemm_tflops = 0;
  double attention_efficiency = 0;
  MemoryBreakdown memory;
  std::vector<CommOp> communication;
};

// What a bar of the timeline is: a forward or backward block, a blocking send, the stage's
// gradient sync, or its optimizer step; a schedule that splits the backward (zero bubble) draws
// its input-gradient (B) and weight-gradient (W) blocks apart.
enum class TimelineKind { forward, backward, send, dp_sync, optimizer, input_grad, weight_grad };
template <>
struct EnumNames<TimelineKind> {
  static constexpr std::array<std::string_view, 7> values = {
      "forward", "backward", "send", "dp_sync", "optimizer", "input_grad", "weight_grad"};
};

inline const char* to_string(TimelineKind v) { return name_of(v).data(); }

// One bar of the iteration timeline (stages as rows).
struct TimelineEvent {
  TimelineKind kind = TimelineKind::forward;
  int stage = 0;
  int chunk = 0;
  int64_t micro_batch = 0;
  double start_s = 0;
  double end_s = 0;
  int replica = 0;  // index into Report::replicas (one pipeline per replica set)
  int group = 0;    // cluster group the stage runs on (colours by GPU type)
};

// A set of identical data-parallel replicas and the pipeline they run.
struct ReplicaReport {
  int group = -1;  // the group all its stages run on; -1 when plan.stages spreads them
  std::string gpu;
  int count = 0;
  int64_t micro_batches = 0;  // per replica per iteration
  double pipeline_s = 0;      // its forward-backward time
  double memory_bytes = 0;    // the fullest stage's total per GPU
  double capacity_bytes = 0;  // that stage's GPU memory
  bool fits = true;           // every stage of the set fits
};

struct FitFix;
struct Report;

struct EstimateOptions {
  bool timeline = false;            // simulate the schedule and report every block (the
                                    // report's numbers are the same with it or without)
  bool simulate = false;            // take the pipeline time from the simulation even where
                                    // the closed form applies (identical stages)
  bool closed_form = false;         // take it from the closed form even for interleaved stages
                                    // that differ (the search ranks with it: search.cpp);
                                    // `simulate` takes precedence
  size_t max_timeline_events = 20000;  // larger schedules report `timeline_truncated`
  // Out of memory: the plan estimated again with each change that could make it fit
  // (Report::fit_fixes), by this function (fit_fixes_of below, or none). Off for the search and
  // the accuracy suites, which only need the verdict. A pointer, not a flag, so that a caller
  // that never asks links none of it (the WebAssembly module: 3 KB of the first visit).
  std::vector<FitFix> (*fit_fixes)(const Scenario& scenario, const Report& without) = nullptr;
};

// One change that makes an out-of-memory plan fit (estimate/fit_fixes.cpp): the plan keys it
// sets, the plan's time with it, and what its fullest stage then needs against its GPU.
struct FitFix {
  std::string change;          // for people: "activations of 20 layers offloaded"
  std::string settings;        // the plan keys: "plan.cpu_offloading_num_layers=20"
  double iteration_time_s = 0;
  double time_change = 0;      // (with - without) / without
  double memory_bytes = 0;     // the fullest stage's total plus memory_headroom, with it
};

struct Report {
  Plan plan;  // the plan as resolved (dp derived, zero stage, per-stage layers in `stages`)
  double iteration_time_s = 0;
  double tokens_per_s = 0;
  double samples_per_s = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  double hfu = 0;
  double parameters = 0;  // the model's parameter count (unpadded vocabulary)
  int gpus = 0;
  int64_t micro_batches = 0;  // per iteration per data-parallel replica
  double peak_tflops = 0;     // dense peak per GPU at the plan's precision
  int bottleneck_stage = 0;
  bool fits = true;
  // Host memory a node needs for the offloaded activations and optimizer: its GPUs' largest
  // offloaded bytes.
  double host_memory_bytes_per_node = 0;
  Breakdown breakdown;
  std::vector<StageReport> stages;  // of the slowest replica set
  std::vector<ReplicaReport> replicas;
  std::vector<std::string> warnings;
  // Out of memory (EstimateOptions::fit_fixes): the changes that make it fit, fastest first.
  std::vector<FitFix> fit_fixes;
  std::optional<CalibrationFit> calibration;  // the scenario's, when it has one
  std::vector<TimelineEvent> timeline;  // empty unless EstimateOptions::timeline
  bool timeline_truncated = false;
};

Report estimate(const Scenario& scenario, const EstimateOptions& options = {});

// The changes, one at a time, that make an out-of-memory plan fit, fastest first
// (estimate/fit_fixes.cpp); `without` is its estimate as it stands. EstimateOptions::fit_fixes.
std::vector<FitFix> fit_fixes_of(const Scenario& scenario, const Report& without);

}  // namespace stepcast
