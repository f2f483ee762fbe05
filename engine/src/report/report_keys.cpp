// The report's key tables (report_keys.h): every key a report holds, its unit, label and doc.
// Keys are listed in reading order (the page's and the text table's); the writers take them in
// the order nlohmann prints a tree's (key_order).
#include "report/report_keys.h"

#include "scenario/fields.h"

namespace stepcast::detail {

namespace {

template <class Spec>
ReportTable<Spec> table(std::string_view name, std::span<const ReportKey<Spec>> keys) {
  return {name, keys, key_order(keys)};
}

// A nested object or array of objects, written through its table.
template <class Spec, class Child, const ReportTable<Child>& (*Table)(), auto Get>
void write_child(JsonWriter& w, const Spec& s, ReportKind kind) {
  const ReportTable<Child>& t = Table();
  write_object<Child>(w, Get(s), t.keys, t.order, kind);
}
template <class Spec, class Child, const ReportTable<Child>& (*Table)(), auto Get>
void write_children(JsonWriter& w, const Spec& s, ReportKind kind) {
  const ReportTable<Child>& t = Table();
  w.begin_array();
  for (const Child& c : Get(s)) write_object<Child>(w, c, t.keys, t.order, kind);
  w.end_array();
}

// --- The breakdown: exposed time on the critical path, parts that sum to the iteration time.

constexpr ReportKey<Breakdown> kBreakdown[] = {
    value<&Breakdown::forward>("forward", "s", "Forward",
                               "forward compute of the bottleneck stage, all micro-batches (GEMMs, "
                               "attention, element-wise kernels)"),
    value<&Breakdown::backward>("backward", "s", "Backward",
                                "backward compute of the bottleneck stage: a data- and a "
                                "weight-gradient GEMM per forward GEMM, attention's backward"),
    value<&Breakdown::recompute>("recompute", "s", "Recompute",
                                 "forward work repeated during the backward to save activation "
                                 "memory (plan.recompute)"),
    value<&Breakdown::tp_comm>("tp_comm", "s", "TP comm",
                               "tensor-parallel collectives inside each layer not hidden behind "
                               "compute"),
    value<&Breakdown::cp_comm>("cp_comm", "s", "CP comm",
                               "context-parallel K/V exchange not hidden behind attention"),
    value<&Breakdown::ep_comm>("ep_comm", "s", "Expert comm",
                               "the token exchange of MoE layers (all-to-alls, expert-TP gathers) "
                               "not hidden behind compute"),
    value<&Breakdown::pp_comm>("pp_comm", "s", "PP send/recv",
                               "pipeline activations and gradients sent between stages, on the "
                               "critical path"),
    value<&Breakdown::bubble>("bubble", "s", "Pipeline bubble",
                              "idle time of the bottleneck stage while the pipeline fills and "
                              "drains"),
    value<&Breakdown::dp_comm>("dp_comm", "s", "DP sync",
                               "data-parallel gradient reduction and parameter gather not hidden "
                               "by the backward"),
    value<&Breakdown::optimizer>("optimizer", "s", "Optimizer",
                                 "the optimizer step over this GPU's (sharded) state"),
    value<&Breakdown::other>("other", "s", "Other comm",
                             "norm and embedding gradient all-reduces, gradient norm, loss"),
    value<&Breakdown::host>("host", "s", "CPU launches",
                            "the GPU waiting for the CPU to launch its kernels (eager launches "
                            "of small work, a dropless MoE layer's host sync)"),
    value<&Breakdown::offload>("offload", "s", "Offload copies",
                               "activation copies to and from host memory "
                               "(plan.cpu_offloading_num_layers, plan.offload_modules) not "
                               "hidden behind the layers' "
                               "compute"),
};

// --- Memory per GPU of a stage.

constexpr ReportKey<MemoryBreakdown> kMemory[] = {
    value<&MemoryBreakdown::weights>("weights", "bytes", "Weights",
                                     "model parameters held by one GPU of the stage"),
    value<&MemoryBreakdown::gradients>("gradients", "bytes", "Gradients",
                                       "gradient buffers (sharded under ZeRO-2/3)"),
    value<&MemoryBreakdown::optimizer>("optimizer", "bytes", "Optimizer state",
                                       "master weights and optimizer moments (sharded by the "
                                       "distributed optimizer and ZeRO)"),
    value<&MemoryBreakdown::activations>("activations", "bytes", "Activations",
                                         "activations of the micro-batches in flight at the "
                                         "stage's peak"),
    value<&MemoryBreakdown::moe_dispatch>("moe_dispatch", "bytes", "MoE dispatch",
                                          "one MoE layer's token-dispatch buffers in flight: "
                                          "alltoall's permuted send buffer, allgather's "
                                          "gathered tokens"),
    value<&MemoryBreakdown::ep_overlap>("ep_overlap", "bytes", "EP overlap",
                                        "the activations plan.moe_overlap holds ahead: one "
                                        "model chunk of the extra micro-batch it schedules "
                                        "(pipelined), one layer's (not)"),
    value<&MemoryBreakdown::wgrad_dummies>("wgrad_dummies", "bytes", "Dummy weight grads",
                                           "the dummy weight gradients Transformer Engine "
                                           "caches, one of each weight shape of the stage, in "
                                           "the weights' dtype (gradient-accumulation fusion)"),
    value<&MemoryBreakdown::allocator>("allocator", "bytes", "Allocator",
                                       "the caching allocator's rounding and fragmentation "
                                       "(reserved - allocated)"),
    value<&MemoryBreakdown::userbuffers>("userbuffers", "bytes", "TE userbuffers",
                                         "Transformer Engine's communication buffers for "
                                         "plan.tp_comm_overlap, outside the allocator"),
    value<&MemoryBreakdown::deepep>("deepep", "bytes", "DeepEP buffers",
                                    "DeepEP's NVLink and RDMA buffers for the flex dispatcher, "
                                    "outside the allocator"),
    value<&MemoryBreakdown::nccl>("nccl", "bytes", "NCCL buffers",
                                  "NCCL's per-channel buffers of each communicator the GPU "
                                  "uses, outside the allocator"),
    value<&MemoryBreakdown::other>("other", "bytes", "Other",
                                   "the rest of the allowance outside PyTorch's allocator (CUDA "
                                   "context, NCCL) beyond the NCCL buffers"),
    value<&MemoryBreakdown::total>("total", "bytes", "Total", "the sum of the parts above"),
    value<&MemoryBreakdown::allocated>("allocated", "bytes", "Allocated",
                                       "weights, gradients, optimizer state, activations and "
                                       "the buffers inside the allocator: "
                                       "torch.cuda.max_memory_allocated"),
    value<&MemoryBreakdown::reserved>("reserved", "bytes", "Reserved",
                                      "allocated plus the allocator's share: "
                                      "torch.cuda.max_memory_reserved"),
    value<&MemoryBreakdown::capacity>("capacity", "bytes", "Capacity", "the GPU's memory"),
    value<&MemoryBreakdown::headroom>("headroom", "bytes", "Headroom",
                                      "the bytes plan.memory_headroom keeps free"),
    value<&MemoryBreakdown::offloaded>("offloaded", "bytes", "Offloaded",
                                       "activations held in host memory instead "
                                       "(plan.cpu_offloading_num_layers, "
                                       "plan.offload_modules): not in the total"),
    value<&MemoryBreakdown::optimizer_offloaded>(
        "optimizer_offloaded", "bytes", "Optimizer offloaded",
        "the optimizer's share held in host memory instead (plan.optimizer_cpu_offload): fp32 "
        "parameter copies, state and gradients; not in the total"),
};

// --- One operation of the communication census.

constexpr ReportKey<CommOp> kOp[] = {
    value<&CommOp::kind>("kind", "", "Kind",
                         "all_reduce, all_gather, reduce_scatter, send_recv, broadcast or "
                         "all_to_all"),
    value<&CommOp::group>("group", "", "Group",
                          "tp, cp, pp, dp, embedding, model_parallel, ep, etp or edp (expert "
                          "parallel, expert TP, expert DP)"),
    value<&CommOp::phase>("phase", "", "Phase",
                          "forward, backward, recompute, gradient_sync or optimizer"),
    value<&CommOp::what>("what", "", "What", "what the operation carries"),
    value<&CommOp::count>("count", "", "Count", "operations per GPU per iteration"),
    value<&CommOp::bytes>("bytes", "bytes", "Bytes", "bytes of one operation"),
    value<&CommOp::group_size>("group_size", "", "GPUs", "GPUs of the group"),
    value<&CommOp::link>("link", "", "Link", "the link the operation's slowest hop crosses"),
    value<&CommOp::time_s>("time_s", "s", "Time", "one operation"),
    {"total_time_s", "s", "Total", "count x time_s",
     [](JsonWriter& w, const CommOp& op, ReportKind) { w.value(op.total_s()); }},
};

// --- One pipeline stage of the slowest replica set.

constexpr ReportKey<StageReport> kStage[] = {
    value<&StageReport::index>("index", "", "Stage", "the stage's place in the pipeline"),
    value<&StageReport::layers>("layers", "", "Layers", "transformer layers of the stage"),
    value<&StageReport::group>("group", "", "Group", "the cluster group it runs on"),
    value<&StageReport::gpu>("gpu", "", "GPU", "the GPU it runs on"),
    value<&StageReport::parameters>("parameters", "", "Parameters",
                                    "held by one GPU of the stage (before ZeRO sharding)"),
    value<&StageReport::forward_s>("forward_s", "s", "Forward",
                                   "one micro-batch's forward, compute plus exposed TP/CP "
                                   "communication"),
    value<&StageReport::backward_s>("backward_s", "s", "Backward", "one micro-batch's backward"),
    value<&StageReport::recompute_s>("recompute_s", "s", "Recompute",
                                     "one micro-batch's recomputation"),
    value<&StageReport::p2p_s>("p2p_s", "s", "Send/recv", "one pipeline message"),
    value<&StageReport::dp_sync_s>("dp_sync_s", "s", "DP sync",
                                   "the stage's gradient synchronisation, whole (before overlap)"),
    value<&StageReport::optimizer_s>("optimizer_s", "s", "Optimizer", "the stage's optimizer step"),
    value<&StageReport::newton_schulz_s>("newton_schulz_s", "s", "Newton-Schulz",
                                         "of the optimizer step, Muon's Newton-Schulz iterations "
                                         "on whole matrices and the TP gathers before them (0 "
                                         "under Adam)"),
    value<&StageReport::offload_s>("offload_s", "s", "Offload copies",
                                   "one micro-batch's activation copies to and from the host "
                                   "not hidden behind compute"),
    value<&StageReport::gemm_efficiency>("gemm_efficiency", "1", "GEMM efficiency",
                                         "the share of the GPU's dense peak at the plan's "
                                         "precision a GEMM reaches (the calibration's constant "
                                         "for the GPU's family, compute scale applied)"),
    value<&StageReport::gemm_tflops>("gemm_tflops", "TFLOP/s", "GEMM rate",
                                     "dense peak x gemm_efficiency: a GEMM's rate unless its "
                                     "traffic binds"),
    value<&StageReport::attention_efficiency>("attention_efficiency", "1", "Attention efficiency",
                                              "the share of the 16-bit dense peak the attention "
                                              "core reaches forward on a full-attention layer "
                                              "(FlashAttention's constant times the kernel's "
                                              "share on the sequence and head dimension; unfused "
                                              "attention runs at the 16-bit GEMM efficiency)"),
    {"memory_bytes", "bytes", "Memory", "memory per GPU of the stage, by part",
     &write_child<StageReport, MemoryBreakdown, &memory_table,
                  +[](const StageReport& s) -> const MemoryBreakdown& { return s.memory; }>,
     "memory_bytes"},
    {"fits", "", "Fits", "total (reserved + outside the allocator) + headroom <= capacity",
     [](JsonWriter& w, const StageReport& s, ReportKind) { w.value(s.memory.fits()); }},
    {"communication", "", "Census",
     "every collective and send the stage's GPU issues per iteration (not in a summary report)",
     &write_children<StageReport, CommOp, &op_table,
                     +[](const StageReport& s) -> const std::vector<CommOp>& {
                       return s.communication;
                     }>,
     "communication[]", /*array=*/true, /*full_only=*/true},
};

// --- A set of identical data-parallel replicas.

constexpr ReportKey<ReplicaReport> kReplica[] = {
    value<&ReplicaReport::group>("group", "", "Group",
                                 "the group all its stages run on; -1 when plan.stages spreads "
                                 "them"),
    value<&ReplicaReport::gpu>("gpu", "", "GPU", "its GPU"),
    value<&ReplicaReport::count>("count", "", "Replicas", "replicas in the set"),
    value<&ReplicaReport::micro_batches>("micro_batches", "", "Micro-batches",
                                         "per replica per iteration"),
    value<&ReplicaReport::pipeline_s>("pipeline_s", "s", "Pipeline",
                                      "its forward-backward time"),
    value<&ReplicaReport::memory_bytes>("memory_bytes", "bytes", "Memory",
                                        "the fullest stage's total per GPU"),
    value<&ReplicaReport::capacity_bytes>("capacity_bytes", "bytes", "Capacity",
                                          "that stage's GPU memory"),
    value<&ReplicaReport::fits>("fits", "", "Fits", "every stage of the set fits"),
};

// --- One bar of the timeline.

constexpr ReportKey<TimelineEvent> kEvent[] = {
    value<&TimelineEvent::kind>("kind", "", "Kind",
                                "forward, backward, send, dp_sync, optimizer, or a zero-bubble "
                                "schedule's input_grad (B) and weight_grad (W)"),
    value<&TimelineEvent::stage>("stage", "", "Stage", "the pipeline stage (the timeline's row)"),
    value<&TimelineEvent::chunk>("chunk", "", "Chunk", "the virtual pipeline chunk"),
    value<&TimelineEvent::micro_batch>("micro_batch", "", "Micro-batch", "the micro-batch"),
    value<&TimelineEvent::start_s>("start_s", "s", "Start", "from the start of the iteration"),
    value<&TimelineEvent::end_s>("end_s", "s", "End", "from the start of the iteration"),
    value<&TimelineEvent::replica>("replica", "", "Replica set", "index into replicas"),
    value<&TimelineEvent::group>("group", "", "Group", "the cluster group the stage runs on"),
};

// --- A change that makes an out-of-memory plan fit (estimate/fit_fixes.cpp).

constexpr ReportKey<FitFix> kFitFix[] = {
    value<&FitFix::change>("change", "", "Change", "what changes, for people"),
    value<&FitFix::settings>("settings", "", "Settings", "the plan keys it sets"),
    value<&FitFix::iteration_time_s>("iteration_time_s", "s", "Iteration time",
                                     "the plan's iteration time with the change"),
    value<&FitFix::time_change>("time_change", "1", "Time change",
                                "(with - without) / without: what fitting costs in time"),
    value<&FitFix::memory_bytes>("memory_bytes", "bytes", "Memory",
                                 "the fullest stage's total plus plan.memory_headroom, with the "
                                 "change"),
};

constexpr ReportKey<Report> kTimeline[] = {
    {"events", "", "Events",
     "every forward/backward block of the simulated schedule, blocking sends, then dp_sync and "
     "optimizer",
     &write_children<Report, TimelineEvent, &event_table,
                     +[](const Report& r) -> const std::vector<TimelineEvent>& {
                       return r.timeline;
                     }>,
     "timeline.events[]", /*array=*/true},
    value<&Report::timeline_truncated>("truncated", "", "Truncated",
                                       "the schedule had more blocks than the timeline holds"),
};

// --- The report.

constexpr ReportKey<Report> kReport[] = {
    value<&Report::iteration_time_s>("iteration_time_s", "s", "Iteration time",
                                     "one training iteration"),
    value<&Report::tokens_per_s>("tokens_per_s", "tokens/s", "Throughput",
                                 "global_batch x seq_len / iteration time"),
    value<&Report::samples_per_s>("samples_per_s", "samples/s", "Samples per second",
                                  "global_batch / iteration time"),
    value<&Report::model_tflops_per_gpu>("model_tflops_per_gpu", "TFLOP/s", "Model TFLOP/s",
                                         "model FLOPs (3 x forward, no recompute; causal "
                                         "attention as half the s x s matrix, dropped tokens "
                                         "not counted: Megatron-LM's "
                                         "num_floating_point_operations) / iteration time / GPUs"),
    value<&Report::mfu>("mfu", "1", "MFU",
                        "model FLOP/s over the dense peak at the plan's precision"),
    value<&Report::hfu>("hfu", "1", "HFU",
                        "hardware FLOP/s over the dense peak at the plan's precision: the work "
                        "the GPUs run (the router, a hybrid's mixers at their own width), "
                        "recompute included"),
    value<&Report::parameters>("parameters", "", "Parameters",
                               "the model's parameter count (unpadded vocabulary)"),
    {"plan", "", "Plan",
     "the plan as resolved (dp derived, the effective ZeRO stage, the framework's flags): every "
     "key of the plan table",
     [](JsonWriter& w, const Report& r, ReportKind) { stream_resolved_plan(r.plan, w); }},
    value<&Report::gpus>("gpus", "", "GPUs", "GPUs of the cluster"),
    value<&Report::micro_batches>("micro_batches", "", "Micro-batches",
                                  "per iteration per data-parallel replica (of the slowest "
                                  "replica set)"),
    value<&Report::peak_tflops>("peak_tflops_per_gpu", "TFLOP/s", "Peak TFLOP/s",
                                "dense peak per GPU at the plan's precision (the cluster's mean)"),
    value<&Report::bottleneck_stage>("bottleneck_stage", "", "Bottleneck stage",
                                     "the stage with the largest time per micro-batch"),
    value<&Report::fits>("fits", "", "Fits in memory",
                         "every stage leaves plan.memory_headroom of its GPU free"),
    value<&Report::host_memory_bytes_per_node>("host_memory_bytes_per_node", "bytes",
                                               "Host memory per node",
                                               "pinned host memory a node's GPUs hold the "
                                               "offloaded activations and optimizer state in "
                                               "(0 without offloading)"),
    {"breakdown_s", "s", "Where the step goes",
     "exposed time on the critical path: each part computed from the step that produces it, "
     "summing to iteration_time_s",
     &write_child<Report, Breakdown, &breakdown_table,
                  +[](const Report& r) -> const Breakdown& { return r.breakdown; }>,
     "breakdown_s"},
    {"stages", "", "Stages", "per pipeline stage of the slowest replica set",
     &write_children<Report, StageReport, &stage_table,
                     +[](const Report& r) -> const std::vector<StageReport>& { return r.stages; }>,
     "stages[]", /*array=*/true},
    {"replicas", "", "Replica sets", "per set of identical data-parallel replicas",
     &write_children<Report, ReplicaReport, &replica_table,
                     +[](const Report& r) -> const std::vector<ReplicaReport>& {
                       return r.replicas;
                     }>,
     "replicas[]", /*array=*/true},
    {"warnings", "", "Warnings",
     "out of memory (naming the stage and its numbers), TP across nodes, a pipeline that never "
     "fills, ...",
     [](JsonWriter& w, const Report& r, ReportKind) {
       w.begin_array();
       for (const auto& text : r.warnings) w.value(text);
       w.end_array();
     }},
    {"fit_fixes", "", "Changes that fit",
     "only out of memory (stepcast estimate): the changes, one at a time, that make every stage "
     "fit, each estimated again (recompute of one more module or full, activation offloading, "
     "expandable allocator segments, bf16 moments, the distributed optimizer, TP, PP or CP up), "
     "fastest first; none that the plan already has or the rules refuse",
     &write_children<Report, FitFix, &fit_fix_table,
                     +[](const Report& r) -> const std::vector<FitFix>& { return r.fit_fixes; }>,
     "fit_fixes[]", /*array=*/true, /*full_only=*/false,
     [](const Report& r) { return !r.fit_fixes.empty(); }},
    {"calibration", "", "Calibration",
     "only with a scenario calibration: the fitted scales, the links and GEMM values put in, "
     "each measured run (docs/scenario.md, \"calibration\")",
     [](JsonWriter& w, const Report& r, ReportKind) { w.value(calibration_json(*r.calibration)); },
     {}, false, false, [](const Report& r) { return r.calibration.has_value(); }},
    {"timeline", "", "Timeline",
     "the schedule's blocks (--timeline on the CLI; always from WebAssembly)",
     &write_child<Report, Report, &timeline_table, +[](const Report& r) -> const Report& {
       return r;
     }>,
     "timeline"},
};

}  // namespace

const ReportTable<Report>& report_table() {
  static const ReportTable<Report> t = table<Report>("report", kReport);
  return t;
}
const ReportTable<Report>& timeline_table() {
  static const ReportTable<Report> t = table<Report>("timeline", kTimeline);
  return t;
}
const ReportTable<Breakdown>& breakdown_table() {
  static const ReportTable<Breakdown> t = table<Breakdown>("breakdown_s", kBreakdown);
  return t;
}
const ReportTable<StageReport>& stage_table() {
  static const ReportTable<StageReport> t = table<StageReport>("stages[]", kStage);
  return t;
}
const ReportTable<MemoryBreakdown>& memory_table() {
  static const ReportTable<MemoryBreakdown> t = table<MemoryBreakdown>("memory_bytes", kMemory);
  return t;
}
const ReportTable<CommOp>& op_table() {
  static const ReportTable<CommOp> t = table<CommOp>("communication[]", kOp);
  return t;
}
const ReportTable<ReplicaReport>& replica_table() {
  static const ReportTable<ReplicaReport> t = table<ReplicaReport>("replicas[]", kReplica);
  return t;
}
const ReportTable<TimelineEvent>& event_table() {
  static const ReportTable<TimelineEvent> t = table<TimelineEvent>("timeline.events[]", kEvent);
  return t;
}

const ReportTable<FitFix>& fit_fix_table() {
  static const ReportTable<FitFix> t = table<FitFix>("fit_fixes[]", kFitFix);
  return t;
}

}  // namespace stepcast::detail
