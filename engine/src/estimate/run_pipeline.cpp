// Step 3 of an estimate: one replica set's pipeline through its schedule (schedule.h): the
// schedule's closed form where it is exact (1F1B; identical interleaved stages), the event
// simulation of its block order where stages differ or the timeline is asked for.
#include <algorithm>

#include "estimate/step.h"
#include "schedule/lean_simulation.h"
#include "schedule/runnable.h"

namespace stepcast::detail {

std::vector<StageCost> stage_costs(const Scenario& sc, const Plan& p, const PipelineLayout& lay,
                                   std::span<const MemoryBreakdown> memory) {
  const auto known = [&](int i) {
    return memory.empty() ? nullptr : &memory[static_cast<size_t>(i)];
  };
  std::vector<StageCost> out;
  out.reserve(static_cast<size_t>(p.pp));
  KnownLayers layers;  // the first stage's layer costs, for the others on its group
  const auto middle = [&](int i) { return i > 0 && i + 1 < p.pp; };
  const auto next = [&](int i) { return lay.groups[static_cast<size_t>((i + 1) % p.pp)]; };
  for (int i = 0; i < p.pp; ++i) {
    int same = -1;
    for (int j = 1; j < i && same < 0 && middle(i); ++j)
      if (lay.groups[j] == lay.groups[i] && next(j) == next(i) &&
          std::equal(lay.chunks_of(j).begin(), lay.chunks_of(j).end(),
                     lay.chunks_of(i).begin(), lay.chunks_of(i).end()))
        same = j;
    if (same < 0) {
      out.push_back(stage_cost_of(sc, p, lay, i, known(i), &layers));
      continue;
    }
    // Everything but the census, which the copy shares (StageCost::census_of).
    StageCost& earlier = out[static_cast<size_t>(same)];
    std::vector<CommOp> census = std::move(earlier.report.communication);
    StageCost c = earlier;
    earlier.report.communication = std::move(census);
    c.census_of = earlier.census_of < 0 ? same : earlier.census_of;
    LayerMix mix;
    for (const auto& m : lay.chunks_of(i)) mix += m;
    c.report.index = i;
    c.report.memory = known(i) ? *known(i)
                               : stage_memory(sc.model, p, stage_shape(sc.model, p, i, mix),
                                              sc.cluster.groups[lay.groups[i]].gpu,
                                              sc.calibration);
    out.push_back(std::move(c));
  }
  return out;
}

PipelineRun run_pipeline(const Scenario& sc, Plan plan, const PipelineLayout& lay,
                         bool simulate, bool closed_form, bool want_events,
                         uint64_t& block_budget, std::span<const MemoryBreakdown> memory) {
  PipelineRun run;
  run.plan = std::move(plan);
  const Plan& p = run.plan;
  run.layout = &lay;
  run.stages = stage_costs(sc, p, lay, memory);
  const bool p2p_hidden = p.vpp > 1 && p.overlap_p2p;
  const int64_t mb = p.micro_batches();
  const double mbd = static_cast<double>(mb);
  std::vector<StagePasses> unit;
  std::vector<double> p2p;
  unit.reserve(static_cast<size_t>(p.pp));  // (grown one stage at a time: a search's allocations)
  p2p.reserve(static_cast<size_t>(p.pp));
  const Schedule& schedule = schedule_of(p);
  const ScheduleShape shape = schedule_shape(p);
  // Block durations per virtual stage (chunk c of stage i is the schedule's virtual stage): a block
  // carries its chunk's share of the stage's compute and exposed communication; messages travel
  // on the edges between blocks.
  std::vector<double> fwd(static_cast<size_t>(p.pp) * p.vpp), bwd(fwd.size()), wgt(fwd.size());
  for (int i = 0; i < p.pp; ++i) {
    const StageCost& s = run.stages[i];
    const double f = s.time.forward_pass(), b = s.time.backward_pass(), w = s.time.weight_grad;
    // W's own launch waits go with W (StageCost::chunk_launch_wait_weight).
    const double w_block = s.weight_grad_block_s();
    unit.push_back({s.unit_s, f, b - w_block, w_block});
    p2p.push_back(s.report.p2p_s);
    // ZeRO-3's exposed communication and the launch waits go with each chunk (StageCost), the
    // rest of the pass by its compute and its layers (StageCost::chunk_forward_s).
    const auto own = [](const ChunkValues& per_chunk, int c) {
      return per_chunk.empty() ? 0.0 : per_chunk[static_cast<size_t>(c)];
    };
    double own_f = 0, own_b = 0;
    for (int c = 0; c < p.vpp; ++c) {
      own_f += own(s.chunk_zero3_forward, c) + own(s.chunk_launch_wait_forward, c);
      own_b += own(s.chunk_zero3_backward, c) + own(s.chunk_launch_wait_backward, c);
    }
    for (int c = 0; c < p.vpp; ++c) {
      const size_t vs = static_cast<size_t>(schedule.virtual_stage(shape, i, c));
      fwd[vs] = s.chunk_forward_s(c, f - own_f) + own(s.chunk_zero3_forward, c) +
                own(s.chunk_launch_wait_forward, c);
      bwd[vs] = s.chunk_backward_s(c, b - own_b) + own(s.chunk_zero3_backward, c) +
                own(s.chunk_launch_wait_backward, c);
      wgt[vs] = w * s.chunk_weight_grad_share[c] + own(s.chunk_launch_wait_weight, c);
    }
  }
  const PipelineTime closed = schedule.closed_form(unit, shape);
  run.bottleneck = closed.bottleneck;
  // The parameter gathers beside the fill (first_forward_gathers_s): each rank starts no earlier
  // than its gather lets it. The closed form adds how far that delays the first micro-batch's
  // forwards through the ranks (fill_delay_s; exact on equal stages, whose fill is critical),
  // the simulation below starts each rank there.
  const std::vector<double> gathers = first_forward_gathers_s(sc, run.stages);
  if (!gathers.empty()) {
    std::vector<double> fill_start;
    fill_start.reserve(static_cast<size_t>(p.pp) * p.vpp);
    double reached = 0;
    for (int k = 0; k < p.pp * p.vpp; ++k) {
      fill_start.push_back(reached);
      reached += fwd[static_cast<size_t>(k)] + detail::message_s(schedule, shape, p2p, k);
    }
    std::vector<double> rank_fill(static_cast<size_t>(p.pp));
    for (int i = 0; i < p.pp; ++i)
      rank_fill[i] = fill_start[static_cast<size_t>(schedule.virtual_stage(shape, i, 0))];
    run.gather_s = fill_delay_s(gathers, rank_fill);
  }
  run.pipe_s = closed.total_s + run.gather_s;
  run.bubble_s = closed.bubble_s;
  const StageCost& k = run.stages[closed.bottleneck];
  run.blocking_p2p_s = mbd * (k.unit_s - k.time.total());
  // Overlapped send/receive still delays the first micro-batch's forward and the last one's
  // backward through every virtual stage: each link as often as an edge between virtual stages
  // crosses it (in the loop each boundary v times, the wrap v - 1 times).
  if (p.pp > 1 && p2p_hidden) {
    std::vector<int> crossings(static_cast<size_t>(p.pp), 0);
    for (int k = 0; k + 1 < p.pp * p.vpp; ++k)
      if (const int link = schedule.link_after(shape, k); link >= 0) ++crossings[link];
    for (int i = 0; i < p.pp; ++i) run.fill_s += 2.0 * crossings[i] * p2p[i];
  }
  // The event simulation is the reference. A schedule's closed form is exact for 1F1B and for
  // identical interleaved stages (tests), and costs nothing; where it is not exact for every
  // stage time (interleaved stages that differ: embedding, output layer, uneven or mixed GPUs)
  // the schedule is simulated by the lean simulation (the event simulation's makespan within a
  // relative 1e-12, lean_simulation.cpp), within the estimate's block budget shared by its
  // replica sets (limits.h), counting the blocks it runs (its extrapolated steady state costs
  // none). Past the budget the closed form stands.
  simulate = simulate || (!schedule.closed_form_exact && !closed_form);
  const bool blocking = p.pp > 1 && !p2p_hidden;
  ScheduleTime timed;
  bool timed_ok = false;
  if (simulate) {
    timed_ok = simulate_schedule_time_within(fwd, bwd, p.pp, mb, p.vpp, p2p, blocking,
                                             run.bottleneck, &schedule, wgt, gathers,
                                             block_budget, timed);
    block_budget -= std::min(block_budget, static_cast<uint64_t>(timed.blocks_run));
  }
  // The timeline's blocks, by the event simulation, beside the numbers above and not instead of
  // them: a plan's report is the same, to the last bit, with its timeline or without (the page
  // asks for the events only while its Timeline card is on screen; issue 39). Their count is
  // bounded by EstimateOptions::max_timeline_events, not by the block budget.
  if (want_events) {
    double makespan_s = 0;
    run.events = simulate_virtual_pipeline(fwd, bwd, p.pp, mb, p.vpp, p2p, blocking, &makespan_s,
                                           &schedule, wgt, gathers);
  }
  if (simulate && timed_ok) {
    run.stage_end_s = std::move(timed.rank_end_s);
    run.pipe_s = timed.makespan_s;
    run.fill_s = 0;
    run.blocking_p2p_s = timed.sends_s;
    // The gathers' delay of the fill, of what the bottleneck waits.
    run.bubble_s = timed.makespan_s - timed.busy_s - timed.sends_s;
    run.gather_s = std::min(run.gather_s, std::max(0.0, run.bubble_s));
    run.bubble_s -= run.gather_s;
  }
  // The EP overlap's unpaired first forward and last backward (StageCost::unpaired; pp 1): the
  // passes above are all paired, so the first forward ends later, everything after it with it,
  // and the last backward takes longer.
  if (const StageCost& s = run.stages.front(); s.unpaired && mb > 0) {
    const double first = s.unpaired->forward_pass() - s.time.forward_pass();
    const double last = s.unpaired->backward_pass() - s.time.backward_pass();
    run.pipe_s += first + last;
    for (double& end : run.stage_end_s) end += first + last;
    for (PipelineEvent& e : run.events) {
      const bool first_forward = e.kind == PipelineEvent::Kind::forward && e.micro_batch == 0;
      const bool last_backward =
          e.kind == PipelineEvent::Kind::backward && e.micro_batch == mb - 1;
      if (!first_forward) e.start_s += first;
      e.end_s += first + (last_backward ? last : 0.0);
    }
  }
  return run;
}

}  // namespace stepcast::detail
