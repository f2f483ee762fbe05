// Step 7 of an estimate: what the step means for a person. Throughput, model and hardware
// FLOP/s against the cluster's peak, each replica set's pipeline and memory, and the warnings a
// careful engineer would give.
#include <fmt/format.h>

#include <algorithm>

#include "estimate/step.h"
#include "stepcast/json.h"
#include "stepcast/limits.h"

namespace stepcast::detail {

namespace {

constexpr double GiB = 1024.0 * 1024.0 * 1024.0;

void add_warnings(Report& r, const Scenario& sc, const std::vector<ReplicaSet>& sets,
                  const std::vector<PipelineRun>& runs) {
  const Plan& p = sc.plan;
  for (const auto& x : runs)
    for (const auto& s : x.stages) {
      const StageReport& st = s.report;
      if (st.memory.fits()) continue;
      r.fits = false;
      // Within the GPU but not within its headroom: the headroom is why, said with its share.
      const bool headroom_is_why = st.memory.total <= st.memory.capacity;
      r.warnings.push_back(fmt::format(
          "stage {} does not fit: needs {:.1f} GiB per GPU (weights {:.1f}, gradients {:.1f}, "
          "optimizer {:.1f}, activations {:.1f}, other {:.1f}); {} has {:.1f} GiB{}",
          st.index, st.memory.total / GiB, st.memory.weights / GiB, st.memory.gradients / GiB,
          st.memory.optimizer / GiB, st.memory.activations / GiB, st.memory.other / GiB, st.gpu,
          st.memory.capacity / GiB,
          headroom_is_why
              ? fmt::format(" less {:.3g} % headroom (plan.memory_headroom={}): {:.1f} GiB, "
                            "which the headroom alone makes too little",
                            100 * p.memory_headroom, p.memory_headroom,
                            (st.memory.capacity - st.memory.headroom) / GiB)
              : ""));
    }
  // A GPU whose preset's figures are not a datasheet's (confidence `low`: presets/README.md),
  // once each: the estimate is as uncertain as its peaks.
  std::vector<std::string> unsure;
  for (const auto& g : sc.cluster.groups) {
    const std::string& gpu = g.gpu.id.empty() ? g.gpu.name : g.gpu.id;  // a custom one: its name
    if (g.gpu.confidence != "low" || std::find(unsure.begin(), unsure.end(), gpu) != unsure.end())
      continue;
    unsure.push_back(gpu);
    r.warnings.push_back(fmt::format(
        "{}: its figures are of low confidence (confidence: low; no datasheet gives them, its "
        "source and notes say what is uncertain): the estimate is no surer than they are",
        printable(gpu, kNameInMessageBytes)));
  }
  std::vector<std::string> at_peak;  // GPUs whose layer profile beat the peak
  for (const auto& x : runs)
    for (const auto& s : x.stages)
      if (s.profile_at_peak &&
          std::find(at_peak.begin(), at_peak.end(), s.report.gpu) == at_peak.end())
        at_peak.push_back(s.report.gpu);
  for (const auto& gpu : at_peak)
    r.warnings.push_back(fmt::format(
        "calibration.layer_profiles: {}'s profile of this shape runs a layer faster than the "
        "GPU's dense peak allows for its FLOPs (another precision, model or GPU?); each pass is "
        "taken at the peak instead",
        gpu));
  for (const auto& g : sc.cluster.groups)
    if (p.tp > g.gpus_per_node)
      r.warnings.push_back(fmt::format("plan.tp={} spans nodes ({} GPUs per node): every "
                                       "layer's tensor-parallel collectives cross the network",
                                       p.tp, g.gpus_per_node));
  if (p.pp > 1 && r.micro_batches < p.pp)
    r.warnings.push_back(fmt::format("only {} micro-batches for {} pipeline stages: the pipeline "
                                     "never fills and most of the step is bubble",
                                     r.micro_batches, p.pp));
  if (p.sequence_parallel && p.tp == 1)
    r.warnings.push_back("plan.sequence_parallel has no effect with plan.tp=1");
  if (p.tp_comm_overlap && p.tp == 1)
    r.warnings.push_back("plan.tp_comm_overlap has no effect with plan.tp=1");
  if (p.overlap_param_gather && p.effective_zero_stage() == 0)
    r.warnings.push_back(
        "plan.overlap_param_gather has no effect with plan.zero_stage=0 and no distributed "
        "optimizer (no parameters to gather)");
  for (const auto& g : sc.cluster.groups)
    if (p.flash_attention && (g.gpu.arch == "volta" || g.gpu.arch == "turing"))
      r.warnings.push_back(fmt::format("FlashAttention needs Ampere or newer; {} runs unfused "
                                       "attention (set plan.flash_attention=false)",
                                       printable(g.gpu.name, kNameInMessageBytes)));
  if (!p.replicas.empty()) {
    int64_t taken = 0;
    for (const auto& set : sets) taken += set.count * set.micro_batches;
    if (taken != p.global_batch / p.micro_batch)
      r.warnings.push_back(fmt::format("the replicas take {} micro-batches per iteration, not "
                                       "global_batch / micro_batch = {}: no equal split exists "
                                       "for these replica counts",
                                       taken, p.global_batch / p.micro_batch));
  }
}

}  // namespace

double mean_peak_tflops(const Scenario& sc) {
  double peak = 0;
  for (const auto& g : sc.cluster.groups)
    peak += g.gpu.peak_flops(sc.plan.precision).value_or(0) * g.gpus() / 1e12;
  return peak / sc.cluster.gpus();  // the cluster's mean dense peak per GPU
}

Throughput throughput(const Scenario& sc, double iteration_time_s, double peak_tflops) {
  const double samples = static_cast<double>(sc.plan.global_batch);
  const double seq = static_cast<double>(sc.model.seq_len);
  Throughput t;
  t.model_flops = model_flops_per_sample(sc.model, seq) * samples;
  t.tokens_per_s = samples * seq / iteration_time_s;
  t.model_tflops_per_gpu = t.model_flops / iteration_time_s / sc.cluster.gpus() / 1e12;
  t.mfu = t.model_tflops_per_gpu / peak_tflops;
  return t;
}

void summarise(Report& r, const Scenario& sc, const std::vector<ReplicaSet>& sets,
               const std::vector<PipelineRun>& runs) {
  const ModelSpec& m = sc.model;
  const Plan& p = sc.plan;
  r.gpus = sc.cluster.gpus();
  r.peak_tflops = mean_peak_tflops(sc);
  r.parameters = count_parameters(m, m.vocab, m.seq_len).total;

  for (size_t i = 0; i < sets.size(); ++i) {
    const auto& g = sc.cluster.groups[runs[i].layout->groups.front()];
    ReplicaReport rep{sets[i].group, g.gpu.id.empty() ? g.gpu.name : g.gpu.id, sets[i].count,
                      sets[i].micro_batches, runs[i].pipe_s + runs[i].fill_s};
    for (const auto& s : runs[i].stages) {
      const MemoryBreakdown& mem = s.report.memory;
      if (mem.total / mem.capacity > rep.memory_bytes / std::max(rep.capacity_bytes, 1.0)) {
        rep.memory_bytes = mem.total;
        rep.capacity_bytes = mem.capacity;
      }
      rep.fits = rep.fits && mem.fits();
      // Pinned host memory for the offloaded activations and optimizer: every GPU of a node
      // holds its own.
      r.host_memory_bytes_per_node =
          std::max(r.host_memory_bytes_per_node,
                   (mem.offloaded + mem.optimizer_offloaded) * g.gpus_per_node);
    }
    r.replicas.push_back(rep);
  }

  // Throughput and utilisation.
  const double samples = static_cast<double>(p.global_batch);
  const double seq = static_cast<double>(m.seq_len);
  const Throughput rate = throughput(sc, r.iteration_time_s, r.peak_tflops);
  // Hardware FLOPs count the work the GPUs do, not Megatron-LM's count: the layers as they run
  // (the router's GEMM, a hybrid's Mamba mixer at its own width with its conv, where Megatron's
  // hybrid count takes the mixer 2 x hidden wide: model.cpp), 3 x forward, plus what recompute
  // re-runs: every layer's forward (full; the block method's share of the layers) or the
  // selective modules' (the attention core; the dense MLP or the MoE block; the shared experts
  // and MLA's up-projections are not told apart here), MTP modules included. Where Megatron's
  // count is the larger (Nemotron 3 Nano: a 5,376-wide mixer for 4,096), MFU can pass HFU.
  const double work_flops = 3 * layers_forward_flops(m, seq, true, /*chunked=*/true) * samples;
  double hardware_flops = work_flops;
  if (p.recompute != Recompute::none) {
    // One layer of each kind times how many there are; MTP modules run their layers.
    auto rerun_of = [&](const LayerKind& kind) {
      const LayerFlops f = layer_forward_flops(m, 1, seq, kind);
      // Causal attention runs half its matrix (a sliding window its band, chunked attention its
      // chunks), as counted above.
      const double attention =
          kind.windowed ? f.attention : 0.5 * m.chunked_attention_share(seq) * f.attention;
      if (p.recompute == Recompute::full)
        return full_recompute_share(m, p) * (f.linear() + attention + f.scan + f.conv);
      return (p.recomputes("core_attn") ? attention : 0) +
             (p.recomputes(kind.moe ? "moe" : "mlp") ? f.mlp : 0);
    };
    double rerun = m.layer_counts(0, m.layers).sum(rerun_of);
    if (m.mtp_layers > 0)
      for (const LayerKind& k : m.mtp_kinds())
        rerun += static_cast<double>(m.mtp_layers) * rerun_of(k);
    hardware_flops += rerun * samples;
  }
  r.samples_per_s = samples / r.iteration_time_s;
  r.tokens_per_s = rate.tokens_per_s;
  r.model_tflops_per_gpu = rate.model_tflops_per_gpu;
  r.mfu = rate.mfu;
  r.hfu = hardware_flops / r.iteration_time_s / r.gpus / 1e12 / r.peak_tflops;
  add_warnings(r, sc, sets, runs);
  if (r.mfu > 1)  // only a count above the work can pass the peak (invariants suite, seed 9750)
    r.warnings.push_back(fmt::format(
        "MFU {:.1f} % passes the GPUs' peak: the model FLOPs follow Megatron-LM's count ({}), "
        "which is {:.1f} % more than the work the GPUs do (HFU {:.1f} %)",
        100 * r.mfu,
        m.hybrid() ? "its hybrid count takes each Mamba mixer 2 x hidden wide"
        : m.chunked_attention_share(seq) < 1
            ? "it counts full causal attention where the layers attend within chunks"
            : "num_floating_point_operations",
        100 * (rate.model_flops / work_flops - 1),
        100 * r.hfu));
}

}  // namespace stepcast::detail
