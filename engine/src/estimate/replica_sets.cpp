// Step 1 of an estimate: where each pipeline runs (scenario/placement.h), with the counts a
// scenario leaves to the engine balanced: "auto" layers by stage speed within each stage's memory,
// "auto" micro-batches by replica speed (balance.cpp), both measured with the stage costs of step 2.
#include <algorithm>
#include <numeric>

#include "estimate/step.h"
#include "stepcast/balance.h"
#include "stepcast/limits.h"
#include "stepcast/pipeline.h"

namespace stepcast::detail {

namespace {

// Layers per stage of plan.stages: as given, or balanced by stage speed and memory where a
// stage leaves them to the engine (layers 0). Without plan.stages, Megatron's split decides.
std::vector<int64_t> stage_layers(const Scenario& sc, const std::vector<int>& groups) {
  const Plan& p = sc.plan;
  std::vector<int64_t> fixed;
  bool any_auto = false;
  for (const auto& s : p.stages) {
    fixed.push_back(s.layers);
    any_auto = any_auto || s.layers == 0;
  }
  if (!any_auto) return fixed;
  // Measure each stage with one and two layers per chunk: time and memory are affine in layers.
  PipelineLayout probe;
  probe.groups = groups;
  std::vector<double> per_layer, fixed_s;
  std::vector<int64_t> max_layers;
  for (int i = 0; i < p.pp; ++i) {
    probe.layers.assign(p.pp, p.vpp);
    const StagePaths paths = paths_for_stage(sc, p, probe, i);
    const LayerMix mix1 = average_mix(sc.model, p.vpp), mix2 = average_mix(sc.model, 2.0 * p.vpp);
    const StageCost one = stage_cost(sc, p, stage_shape(sc.model, p, i, mix1), mix1, groups[i], paths);
    const StageCost two = stage_cost(sc, p, stage_shape(sc.model, p, i, mix2), mix2, groups[i], paths);
    const double slope = (two.unit_s - one.unit_s) / p.vpp;
    per_layer.push_back(std::max(slope, 1e-12));
    fixed_s.push_back(one.unit_s - slope * p.vpp);
    const double mem_slope = (two.report.memory.total - one.report.memory.total) / p.vpp;
    const double room = one.report.memory.capacity - one.report.memory.headroom - one.report.memory.total;
    max_layers.push_back(
        mem_slope > 0 ? std::max<int64_t>(p.vpp, static_cast<int64_t>(room / mem_slope) + p.vpp)
                      : 0);
  }
  return balance_layers(per_layer, fixed_s, max_layers, fixed, sc.model.layers, p.vpp);
}

// A replica's pipeline time against its micro-batches m, by pipeline.h's closed form over its
// stages' times per micro-batch: m times the slowest stage's, plus the fill and drain; what
// each micro-batch it does not run of the busiest set costs it; and what runs past its pipeline
// whatever m, its parameter gather and its gradient sync's exposure (tail.cpp).
struct OneMicroBatch {
  PipelineTime time;
  double lockstep_s = 0;
  double after_s = 0;
};
OneMicroBatch one_micro_batch(const Scenario& sc, const Plan& q, const PipelineLayout& lay) {
  std::vector<double> unit;
  std::vector<StageCost> stages;
  for (int i = 0; i < q.pp; ++i) {
    stages.push_back(stage_cost_of(sc, q, lay, i));
    unit.push_back(stages.back().unit_s);
  }
  // The EP overlap's unpaired first forward and last backward add the same whatever m, and so
  // do the parameter gathers beside the fill (run_pipeline.cpp's closed form, each stage's
  // first chunk a 1/vpp share of its forward).
  std::vector<double> fill_start;
  double reached = 0;
  for (const StageCost& s : stages) {
    fill_start.push_back(reached);
    reached += s.time.forward_pass() / q.vpp + s.report.p2p_s;
  }
  return {pipeline_time(unit, 1, q.vpp), lockstep_per_micro_batch_s(stages),
          param_gather_s(sc, stages) +
              fill_delay_s(first_forward_gathers_s(sc, stages), fill_start) +
              exposed_sync_s(sc, q, stages, nullptr) + stages.front().unpaired_ends_s()};
}

// The iteration time of a split of the micro-batches over the sets: each set's pipeline through
// its schedule and the tail after the critical one (estimate.cpp's steps 3 and 4).
double iteration_of(const Scenario& sc, const std::vector<ReplicaSet>& sets, bool simulate) {
  uint64_t block_budget = kMaxSimulatedBlocks;
  std::vector<PipelineRun> runs;
  for (const auto& set : sets)
    runs.push_back(run_pipeline(sc, plan_for(sc.plan, set.micro_batches), set.layout, simulate,
                                false, false, block_budget));
  size_t critical = 0;
  for (size_t i = 0; i < runs.size(); ++i)
    if (runs[i].pipe_s + runs[i].fill_s > runs[critical].pipe_s + runs[critical].fill_s)
      critical = i;
  return runs[critical].pipe_s + runs[critical].fill_s + tail(sc, runs, critical).total();
}

// The balance above prices each set affinely in its micro-batches by the 1F1B closed form; the
// schedule a set runs (zero-bubble's W blocks in the bubbles, a simulated pipeline of uneven
// stages) and the tail (every set in each micro-batch's ZeRO-3 collectives, the gradient sync
// behind the last backward) are not affine, so its split could be slower than a neighbour, and
// slower hardware or a slower link that moved the split could finish sooner (issue 38: an H20
// and a GH200 set under DeepSpeed ZeRO-3 and ZB-H1, the GH200's HBM bandwidth x 0.660 3.9 %
// faster, its split 4/40 at 194.2 s against 5/38 at 184.8 s; 16 such violations in 100,000
// bases). From the balance, the engine moves micro-batches between the "auto" sets, the
// fewest that keep the global batch whole, while the estimate of the whole step gets shorter.
void refine_micro_batches(const Scenario& sc, std::vector<ReplicaSet>& sets) {
  const Plan& p = sc.plan;
  std::vector<size_t> free;
  for (size_t i = 0; i < sets.size() && i < p.replicas.size(); ++i)
    if (p.replicas[i].micro_batches == 0) free.push_back(i);
  if (free.size() < 2) return;
  bool simulate = false;
  for (const auto& s : p.stages)
    simulate = simulate || s.group != p.stages.front().group ||
               s.layers != p.stages.front().layers;
  double best = iteration_of(sc, sets, simulate);
  constexpr int kRounds = 32;  // each round moves the split by one step at least
  for (int round = 0; round < kRounds; ++round) {
    bool moved = false;
    for (size_t i : free)
      for (size_t j : free) {
        if (i == j) continue;
        // Set i gives `give` micro-batches a replica, set j takes `take`: give·count_i equals
        // take·count_j, the global batch unchanged.
        const int64_t g = std::gcd(sets[i].count, sets[j].count);
        const int64_t give = sets[j].count / g, take = sets[i].count / g;
        if (sets[i].micro_batches - give < 1) continue;
        sets[i].micro_batches -= give;
        sets[j].micro_batches += take;
        const double t = iteration_of(sc, sets, simulate);
        if (t < best * (1 - 1e-12)) {
          best = t;
          moved = true;
        } else {
          sets[i].micro_batches += give;
          sets[j].micro_batches -= take;
        }
      }
    if (!moved) break;
  }
}

}  // namespace

std::vector<ReplicaSet> replica_sets(const Scenario& sc) {
  const Plan& p = sc.plan;
  std::vector<int> replica_groups;
  std::vector<ReplicaSet> sets = declared_replica_sets(p, replica_groups);
  for (auto& set : sets) {
    const std::vector<int> groups = stage_groups(p, set.group);
    set.layout = layout_for(sc, set.group, replica_groups,
                            p.stages.empty() ? std::vector<int64_t>{} : stage_layers(sc, groups));
  }
  if (p.replicas.empty()) return sets;

  // Auto micro-batches: the sets finish as close together as whole micro-batches let them (each
  // its slowest stage per micro-batch, plus its fill and drain and what follows its pipeline,
  // its parameter gather and gradient sync: tail.cpp). Balancing the pipelines' ends alone
  // missed that sync, which under ZeRO-3 grows with the set's micro-batches: BLOOM-176B under
  // FSDP on an A800 and a B200 set ran 0.59 % slower than with the B200's HBM bandwidth x 0.444,
  // which moved one micro-batch (seed 2216 of the invariant suite, issue 38).
  std::vector<double> per_mb, fill, lockstep;
  std::vector<int> counts;
  std::vector<int64_t> fixed;
  for (const auto& set : sets) {
    const OneMicroBatch t = one_micro_batch(sc, plan_for(p, p.pp), set.layout);
    // Under ZeRO-3 what follows the pipeline grows with the set's own micro-batches: each one's
    // embedding and output gradients are reduce-scattered after the last backward (census.cpp).
    // Measured at pp and 2·pp micro-batches, its part per micro-batch goes with the pipeline's.
    double after_per_mb = 0;
    if (p.effective_zero_stage() >= 3)
      after_per_mb =
          (one_micro_batch(sc, plan_for(p, 2 * int64_t{p.pp}), set.layout).after_s - t.after_s) /
          p.pp;
    per_mb.push_back(t.time.steady_s + after_per_mb);
    fill.push_back(t.time.bubble_s + t.after_s - after_per_mb * p.pp);
    lockstep.push_back(t.lockstep_s);
    counts.push_back(set.count);
    fixed.push_back(set.micro_batches);
  }
  const int64_t total = p.global_batch / p.micro_batch;
  // Where every micro-batch's collectives span the sets (ZeRO-3), a set ends at
  // fill + m·t + (M - m)·g, M the busiest set's count (tail.cpp): balanced exactly over m and M
  // (balance.h). (A few rounds of the affine balance at the previous split's M, its slope floored,
  // landed on a slower split when the compute changed: Moonlight on two groups under
  // megatron-fsdp 1.6 % slower with a compute scale of 5 over 2, issue 38.)
  const bool lockstep_any = *std::max_element(lockstep.begin(), lockstep.end()) > 0;
  const std::vector<int64_t> m_r =
      lockstep_any ? balance_lockstep_micro_batches(per_mb, fill, lockstep, counts, fixed, total)
                   : balance_micro_batches(per_mb, fill, counts, fixed, total);
  for (size_t i = 0; i < sets.size(); ++i) sets[i].micro_batches = m_r[i];
  refine_micro_batches(sc, sets);
  return sets;
}

}  // namespace stepcast::detail
