#include "stepcast/search.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <queue>
#include <string>

#include "estimate/step.h"
#include "stepcast/limits.h"
#include "stepcast/report.h"
#include "stepcast/rule_ids.h"
#include "stepcast/pipeline_layout.h"

namespace stepcast {

namespace {

std::vector<int> divisors_up_to(int64_t n, int64_t limit) {
  std::vector<int> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(static_cast<int>(d));
  return out;
}

std::vector<int> powers_of_two_up_to(int limit) {
  std::vector<int> out;
  for (int v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

// The candidates, plus the scenario's own value, so its plan is always in the space.
std::vector<int> with_own(std::vector<int> values, int64_t own) {
  if (std::find(values.begin(), values.end(), own) == values.end())
    values.push_back(static_cast<int>(own));
  return values;
}

struct ExpertPlan {
  int ep = 1, etp = 1;
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
};

// The expert layouts tried with one dense layout (tp, and stage_gpus = tp·cp·dp GPUs per
// stage): a dense model has one (ep 1, etp = tp); an MoE model every power-of-two ep that
// divides the experts and folds onto the stage's GPUs, etp 1 or tp, and each dispatcher.
std::vector<ExpertPlan> expert_plans(const ModelSpec& m, const Plan& base,
                                     const SearchOptions& options, int tp, int stage_gpus) {
  if (!m.moe.enabled()) return {{1, tp, base.moe_dispatcher}};
  std::vector<ExpertPlan> out;
  std::vector<MoeDispatcher> dispatchers = {base.moe_dispatcher};
  if (options.vary_dispatcher)
    dispatchers = {MoeDispatcher::alltoall, MoeDispatcher::allgather, MoeDispatcher::flex};
  for (int etp : tp > 1 ? std::vector<int>{1, tp} : std::vector<int>{1})
    for (int ep : with_own(powers_of_two_up_to(stage_gpus), base.ep)) {
      if (m.moe.experts % ep || stage_gpus % (etp * ep) || m.moe.ffn_hidden % etp) continue;
      for (MoeDispatcher d : dispatchers) {
        if (ep == 1 && d != dispatchers.front()) continue;  // no exchange to choose
        out.push_back({ep, etp, d});
      }
    }
  return out;
}

// The plan's memory as estimate() finds it (stage_cost.cpp: the same stage shapes and
// stage_memory), without timing anything: most plans a search admits do not fit. The first stage
// that does not fit ends the check (half the MoE search's plans: the rest is not needed).
struct MemoryCheck {
  double peak_bytes = 0;  // the fullest stage's total per GPU, of the stages checked
  bool fits = true;
};
// One plan's stages, for its memory checks: the plan and each fix fix_to_fit tries. The fixes
// (fix_to_fit) set where the optimizer's state and the activations live, never the layers'
// split, the schedule or the micro-batches, so the replica sets and each stage's shape are found
// once and kept (each shape when first checked: a plan's first stage often ends the check).
// The replica sets balance time only between the replicas a plan declares, which the search
// clears, so they do not move with a fix either. (Found again for every fix, the sets, their
// layouts and the shapes were nearly half of a fix's memory check: Llama 3 70B's search.)
class StageMemory {
  // (A `dualpipe` plan's stages are those of the plan it runs as: plan_as_run. Only such a plan
  // copies the scenario, which every plan's check once did.)
  static std::vector<detail::ReplicaSet> sets_as_run(const Scenario& s) {
    if (s.plan.effective_schedule() != PipelineSchedule::dualpipe || s.plan.pp < 2)
      return detail::replica_sets(s);
    Scenario r = s;
    r.plan = plan_as_run(s.plan);
    return detail::replica_sets(r);
  }

 public:
  explicit StageMemory(const Scenario& s) : s_(s), sets_(sets_as_run(s)) {
    shapes_.resize(sets_.size());
    memory_.resize(sets_.size());
    for (size_t k = 0; k < sets_.size(); ++k) {
      shapes_[k].resize(static_cast<size_t>(sets_[k].layout.groups.size()));
      memory_[k].resize(shapes_[k].size());
    }
  }
  // Each set's stages' memory as the last check found it: every stage's where that check fit,
  // what the plan's estimate finds again (estimate_figures takes them).
  std::span<const std::vector<MemoryBreakdown>> checked() const { return memory_; }
  // The plan's replica sets (as run), which its estimate finds again (estimate_figures).
  const std::vector<detail::ReplicaSet>& sets() const { return sets_; }
  // `plan`: the scenario's plan, or it with fixes (the same parallelism).
  MemoryCheck check(const Plan& plan) {
    MemoryCheck out;
    for (size_t k = 0; k < sets_.size(); ++k) {
      const detail::ReplicaSet& set = sets_[k];
      const Plan p = detail::plan_for(plan_as_run(plan), set.micro_batches);
      for (int i = 0; i < p.pp; ++i) {
        std::optional<StageShape>& shape = shapes_[k][static_cast<size_t>(i)];
        if (!shape) {
          detail::LayerMix mix;
          for (const auto& c : set.layout.chunks_of(i)) mix += c;
          shape = detail::stage_shape(s_.model, p, i, mix);
        }
        const MemoryBreakdown& m = memory_[k][static_cast<size_t>(i)] =
            stage_memory(s_.model, p, *shape, s_.cluster.groups[set.layout.groups[i]].gpu,
                         s_.calibration);
        // (std::max would drop a NaN: the caller refuses a non-finite peak)
        out.peak_bytes = std::isfinite(m.total) ? std::max(out.peak_bytes, m.total) : m.total;
        if (!m.fits()) {
          out.fits = false;
          return out;
        }
      }
    }
    return out;
  }

 private:
  const Scenario& s_;
  std::vector<detail::ReplicaSet> sets_;
  std::vector<std::vector<std::optional<StageShape>>> shapes_;  // [set][stage]
  std::vector<std::vector<MemoryBreakdown>> memory_;             // [set][stage]
};

// What makes a plan that does not fit fit without changing its parallelism (issue 35's "search
// that makes plans fit"): Adam's moments in bf16, every module's activations offloaded (the
// experts' only on an MoE model), then the smallest share of the optimizer on the CPU (tenths,
// overlapped), taken in that order (cheapest in time first) until the plan fits. Only plans that
// do not fit come here, and one rules check and one memory check with every fix at once rule out
// the ones no fix saves; the others' memory is checked fix by fix. Each fixed plan passes the
// same rules as a user's (what the framework or Megatron-Core refuses is never proposed).
struct Fixed {
  Plan plan;
  std::vector<std::string> needs;  // the settings, as fit_fixes says them
};
// What fix_to_fit offloads, the same for every plan of a search: made once.
struct OffloadAll {
  std::string modules;  // every module, the experts' only on an MoE model
  std::string needs;    // the setting, as `needs` says it
  explicit OffloadAll(const ModelSpec& m) {
    for (const std::string_view module : kOffloadModules)
      if (m.moe.enabled() || (module != "expert_fc1" && module != "moe_act"))
        modules += fmt::format("{}{}", modules.empty() ? "" : " ", module);
    needs = fmt::format("plan.offload_modules=\"{}\"", modules);
  }
};
// `t`: the scenario `s` is, but for its plan (the search's one copy, which a fix's plan is written
// into for the rules).
std::optional<Fixed> fix_to_fit(const Scenario& s, Scenario& t, StageMemory& memory,
                                const OffloadAll& all_of) {
  const Plan& p = s.plan;
  auto admitted = [&](const Plan& plan) {
    t.plan = plan;
    return check_scenario(t);
  };
  auto fits = [&](const Plan& plan) {
    const MemoryCheck m = memory.check(plan);
    return std::isfinite(m.peak_bytes) && m.fits;
  };
  std::vector<Fixed> tries;  // cheapest first, each with the fixes before it
  Fixed moments{p, {}};
  if (p.optimizer == Optimizer::adam && !p.bf16_moments && !p.optimizer_cpu_offload &&
      p.precision != Precision::fp32 && p.master_weights != MasterWeights::remainders) {
    moments.plan.bf16_moments = true;
    moments.needs.push_back("plan.bf16_moments=true");
    tries.push_back(moments);
  }
  const std::string& all = all_of.modules;
  const std::string& offload = all_of.needs;
  Fixed modules{p, {}};  // without the bf16 moments, which the CPU optimizer excludes
  if (p.offload_modules != all && p.cpu_offloading_num_layers == 0) {
    Fixed both = moments;
    both.plan.offload_modules = all;
    both.needs.push_back(offload);
    tries.push_back(both);
    modules.plan.offload_modules = all;
    modules.needs.push_back(offload);
  }
  Fixed cpu = modules;
  cpu.plan.optimizer_cpu_offload = true;
  cpu.plan.optimizer_offload_fraction = 1;
  cpu.plan.overlap_cpu_optimizer_d2h_h2d = true;
  const bool optimizer = p.optimizer_offloaded_share() < 1 &&
                         (p.optimizer == Optimizer::adam || p.optimizer == Optimizer::sgd);
  // What saves most first (the optimizer on the CPU frees more than bf16 moments), by memory
  // alone: a plan no fix saves costs one memory check and no rules check.
  if (optimizer ? !fits(cpu.plan) : tries.empty() || !fits(tries.back().plan)) return std::nullopt;
  for (const Fixed& f : tries)
    if (fits(f.plan) && admitted(f.plan)) return f;
  if (!optimizer) return std::nullopt;
  if (!admitted(cpu.plan)) {
    cpu = Fixed{p, {}};  // the modules refused: the optimizer alone
    cpu.plan.optimizer_cpu_offload = true;
    cpu.plan.optimizer_offload_fraction = 1;
    cpu.plan.overlap_cpu_optimizer_d2h_h2d = true;
    if (!fits(cpu.plan) || !admitted(cpu.plan)) return std::nullopt;
  }
  // The smallest share in tenths that fits (the GPU's memory falls as it grows).
  int lo = static_cast<int>(std::floor(10 * p.optimizer_offloaded_share())), hi = 10;
  auto share = [&](int tenths) {
    Plan r = cpu.plan;
    r.optimizer_offload_fraction = tenths / 10.0;
    return r;
  };
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (fits(share(mid))) hi = mid;
    else lo = mid;
  }
  cpu.plan = share(hi);
  cpu.needs.push_back(fmt::format("plan.optimizer_cpu_offload=true plan.optimizer_offload_fraction={} "
                                  "plan.overlap_cpu_optimizer_d2h_h2d=true",
                                  hi / 10.0));
  return cpu;
}

// Plans whose pipeline time the closed form only approximates (the simulation is exact).
// Whether the plan's schedule has no exact closed form: interleaved and zero-bubble stages are
// simulated.
bool simulated_schedule(const Plan& p) { return !schedule_of(plan_as_run(p)).closed_form_exact; }

}  // namespace

Result<SearchResult> search_plans(const Scenario& base, const SearchOptions& options) {
  SearchResult result;
  if (base.cluster.groups.size() != 1)
    return Error{ErrorCode::unsupported, "cluster.groups",
                 "search: clusters of several groups are not searched; give one group"};
  const ModelSpec& m = base.model;
  const int gpus = base.cluster.gpus();
  const int per_node = base.cluster.groups.front().gpus_per_node;
  std::vector<Error> own;
  if (check_scenario(base, &own))
    result.baseline_s = estimate(base).iteration_time_s;  // (checked finite below)
  else
    result.baseline_error = own.front();

  // Communication overlap, the framework flags a plan most depends on: TP collectives hidden
  // behind GEMMs (Transformer Engine), EP exchanges behind the other micro-batch's compute
  // (Megatron-Core's combined 1F1B). The engine never predicts either slower than leaving it off
  // (what it hides is at least what it costs: overlap.cpp), and neither changes memory, so the
  // search turns each on wherever the framework can do it and the rules admit it (TP > 1, under
  // the sequence parallelism the search always sets; EP as check_experts in scenario/rules.cpp says)
  // instead of doubling the space with plans that cannot win. Elsewhere the scenario's, EP
  // overlap off where the rules refuse it.
  // The schedules a pipeline can run (the rules' schedule_stages): with model chunks the
  // interleaved one; without, 1F1B and ZB-H1 when varied, else the one the plan's vpp implies.
  // ZB-H1 only where the plan states it already: no bundled training-software profile runs it
  // (Megatron-LM at d98e8a64 has no flag for it; --delay-wgrad-compute defers the weight
  // gradients inside the EP overlap only), and the search would rank first a schedule the user's
  // software cannot run.
  // ZB-V and DualPipeV likewise (PyTorch's and torchtitan's ZBVZeroBubble and DualPipeV;
  // Megatron-LM has neither), where the plan states it and a pipeline has its two chunks per rank.
  const auto states = [&](PipelineSchedule s) {
    return !base.plan.schedule_derived && base.plan.schedule == s;
  };
  const bool zero_bubble_runs = states(PipelineSchedule::zero_bubble);
  auto schedules = [&](int pp, int vpp) -> std::vector<PipelineSchedule> {
    for (PipelineSchedule v : {PipelineSchedule::zbv, PipelineSchedule::dualpipev})
      if (pp > 1 && vpp == 2 && options.vary_schedule && states(v))
        return {PipelineSchedule::interleaved, v};
    if (pp > 1 && vpp > 1) return {PipelineSchedule::interleaved};
    if (pp > 1 && vpp == 1 && options.vary_schedule && states(PipelineSchedule::dualpipe))
      return {PipelineSchedule::one_f_one_b, PipelineSchedule::dualpipe};
    if (pp > 1 && options.vary_schedule && zero_bubble_runs)
      return {PipelineSchedule::one_f_one_b, PipelineSchedule::zero_bubble};
    return {PipelineSchedule::one_f_one_b};
  };
  auto can = [&](std::string_view key) {
    return !base.framework || !base.framework->cannot_do(key);
  };
  const bool tp_on = options.overlap && can("tp_comm_overlap");
  const bool ep_on = options.overlap && can("moe_overlap");
  auto set_overlap = [&](Plan& p) {
    p.tp_comm_overlap = (p.tp > 1 && tp_on) || base.plan.tp_comm_overlap;
    p.moe_overlap = moe_overlap_admitted(m, p) && (ep_on || base.plan.moe_overlap);
  };

  // Gradient-reduce overlap where there is a data-parallel gradient reduce to overlap: DP > 1
  // below ZeRO-3 (ZeRO-3 reduce-scatters each layer's gradients in its backward whatever the
  // flag). There both settings are plans, the scenario's own first: the buckets of an overlapped
  // reduce each pay a collective's start-up, which once made it slower than one message after
  // the backward (issue 38), and the ranking, not the search, says which is faster. Kept on
  // where the parameter gather overlaps, which needs it (the rules' needs_grad_reduce_overlap).
  const int zero = base.plan.effective_zero_stage();
  auto grad_reduce_choices = [&](int dp) -> std::vector<bool> {
    const bool own = base.plan.overlap_grad_reduce;
    const bool gather_needs_it = base.plan.overlap_param_gather && (zero == 1 || zero == 2);
    if (dp > 1 && zero < 3 && can("overlap_grad_reduce") && !gather_needs_it) return {own, !own};
    return {own};
  };

  // Every plan of the space the rules admit, in order (the rest are counted as rejected). One
  // scenario, its plan rewritten for each: every field the search varies is set every time.
  // `sliced`: only the plans of options' slice. The distributed optimizer and the ZeRO stage
  // stay the scenario's: they are what the training software has (Megatron-LM 2.x has no
  // distributed optimizer, DeepSpeed and FSDP shard by their stage), and a plan that turns them
  // off has said so. The rules are checked once per plan, in the first (whole) pass, and their
  // verdicts read back in the sliced one (checking twice was 8 % of a dense search's
  // instructions).
  std::vector<bool> admitted_at;  // each plan's verdict, in enumeration order (the first pass)
  auto for_each_plan = [&](bool sliced, auto&& each) {
    int64_t tried = 0;
    Scenario s = base;
    s.plan.stages.clear();
    s.plan.replicas.clear();
    s.plan.pipeline_layout.clear();
    // TP stays inside a node (it talks every layer); CP (a K/V ring once per layer) may leave it,
    // where the training software has it (Megatron-LM 2.x, Megatron-DeepSpeed and DeepSpeed do
    // not: the rules would refuse every such plan, and the search would count them refused).
    const std::vector<int> cps =
        can("cp") ? with_own(powers_of_two_up_to(8), base.plan.cp) : std::vector<int>{1};
    for (int tp : divisors_up_to(gpus, per_node)) {
      if (m.heads % tp || m.kv_heads % tp || m.ffn_hidden % tp) continue;
      for (int cp : cps) {
        const int64_t tp_cp = int64_t{tp} * cp;
        if (gpus % tp_cp || (cp > 1 && m.seq_len % (2 * int64_t{cp}))) continue;
        for (int pp : divisors_up_to(gpus / tp_cp, m.layers)) {
          if ((gpus / tp_cp) % pp) continue;
          const int dp = static_cast<int>(gpus / (tp_cp * pp));
          for (int vpp : with_own(powers_of_two_up_to(options.max_vpp), base.plan.vpp)) {
            if (pp == 1 && vpp > 1) continue;
            // The layers split evenly where pp·vpp divides them, else as Megatron can split them
            // otherwise (pipeline_layout.h: the embedding and the loss counted as layers, else a
            // lighter first and last stage): how NVIDIA runs Llama 3.1 405B and DeepSeek-V3,
            // whose 126 and 61 layers no power of two divides.
            LayerSplit split;
            if (m.layers % (int64_t{pp} * vpp) != 0) {
              auto other = accounted_split(m.layers, pp, vpp);
              if (!other) other = uneven_split(m.layers, pp, vpp);
              if (!other) continue;
              split = *other;
            }
            for (int mb : with_own(powers_of_two_up_to(options.max_micro_batch),
                                   base.plan.micro_batch)) {
              for (const ExpertPlan& x :
                   expert_plans(m, base.plan, options, tp, static_cast<int>(tp_cp * dp))) {
                for (int rc = 0; rc < (options.vary_recompute ? 3 : 1); ++rc) {
                  for (const PipelineSchedule schedule : schedules(pp, vpp))
                  for (const bool grad_overlap : grad_reduce_choices(dp)) {
                    Plan& p = s.plan;
                    // 1F1B and interleaved as vpp implies them; the zero-bubble ones as given.
                    p.schedule = schedule;
                    p.schedule_derived = schedule == PipelineSchedule::one_f_one_b ||
                                         schedule == PipelineSchedule::interleaved;
                    p.tp = tp, p.pp = pp, p.cp = cp, p.dp = dp, p.vpp = vpp, p.micro_batch = mb;
                    p.embedding_in_split = split.embedding_in_split;
                    p.loss_in_split = split.loss_in_split;
                    p.first_stage_layers = split.first_stage_layers;
                    p.last_stage_layers = split.last_stage_layers;
                    p.ep = x.ep, p.etp = x.etp, p.moe_dispatcher = x.dispatcher;
                    p.dp_derived = true;
                    p.sequence_parallel = tp > 1;
                    p.recompute =
                        options.vary_recompute ? static_cast<Recompute>(rc) : base.plan.recompute;
                    set_overlap(p);
                    p.overlap_grad_reduce = grad_overlap;
                    const int64_t index = tried++;
                    if (sliced && (index < options.first_plan ||
                                   (options.plan_count >= 0 &&
                                    index - options.first_plan >= options.plan_count)))
                      continue;
                    if (!sliced) admitted_at.push_back(check_scenario(s));
                    each(s, static_cast<bool>(admitted_at[static_cast<size_t>(index)]));
                  }
                }
              }
            }
          }
        }
      }
    }
    return tried;
  };

  // What the search costs, before anything is estimated.
  int64_t plans = 0, evaluations = 0;
  uint64_t blocks = 0;
  result.space = for_each_plan(false, [&](const Scenario& s, bool admitted) {
    if (!admitted) return;
    ++plans;
    evaluations += s.plan.pp;
    // Ranked exactly, every interleaved or zero-bubble plan is simulated (estimate.cpp; closed
    // form above the per-estimate limit). Ranked by the closed form, only the leading ones are,
    // under the same budget (below).
    if (options.rank_exactly && simulated_schedule(s.plan) &&
        detail::schedule_blocks(plan_as_run(s.plan)) <= kMaxSimulatedBlocks)
      blocks += detail::schedule_blocks(plan_as_run(s.plan));
  });
  if (plans > options.max_plans || evaluations > options.max_stage_evaluations ||
      blocks > options.max_simulated_blocks)
    return Error{.code = ErrorCode::budget_exceeded,
                 .path = "cluster",
                 .message = fmt::format(
                     "search: the {} plans the rules admit cost {} stage evaluations and {} "
                     "simulated schedule blocks; a search makes at most {} plans, {} stage "
                     "evaluations and {} blocks (search a smaller cluster or model)",
                     plans, evaluations, blocks, options.max_plans, options.max_stage_evaluations,
                     options.max_simulated_blocks),
                 .related = {"cluster.nodes", "model.layers", "plan.global_batch"},
                 .rule = Rule::max_search,
                 .values = {{"plans", plans},
                            {"evaluations", evaluations},
                            {"blocks", blocks},
                            {"max_plans", options.max_plans},
                            {"max_stage_evaluations", options.max_stage_evaluations},
                            {"max_blocks", options.max_simulated_blocks}}};

  // (A report never holds a number that is not finite: report_json.)
  auto not_finite = [](std::string_view whose) {
    return Error{ErrorCode::unsupported, "",
                 fmt::format("search: {} estimate is not a finite number: the inputs are beyond "
                             "what the model computes",
                             whose)};
  };
  if (!std::isfinite(result.baseline_s)) return not_finite("the plan's");
  // Memory first; then the plans that fit, timed by the closed form (exact for 1F1B).
  // Each keeps its place in the enumeration: plans of equal time rank in that order.
  struct Ranked {
    SearchCandidate c;
    size_t order = 0;
  };
  std::vector<Ranked> fitting;
  std::optional<Error> non_finite;
  const OffloadAll offload_all(m);
  EstimateOptions ranking;
  ranking.closed_form = !options.rank_exactly;
  // `checked`: the plan's memory check where it fits: its stages' memory and its replica sets,
  // which the estimate would find again.
  auto timed = [&](const Scenario& s, const EstimateOptions& how,
                   const StageMemory* checked = nullptr) -> std::optional<SearchCandidate> {
    // The figures without a report: building one for every plan that fits (its replicas,
    // warnings and stages' reports) was 4 % of a search's instructions.
    const detail::SearchFigures r =
        checked ? detail::estimate_figures(s, how, checked->checked(), &checked->sets())
                : detail::estimate_figures(s, how);
    const double peak = r.peak_memory_bytes;
    if (!std::isfinite(r.iteration_time_s) || !std::isfinite(r.mfu) ||
        !std::isfinite(r.tokens_per_s) || !std::isfinite(peak)) {
      non_finite = not_finite("a plan's");
      return std::nullopt;
    }
    return SearchCandidate{s.plan, r.iteration_time_s, r.mfu, r.tokens_per_s, peak, r.fits,
                           r.stage_layers,
                           /*needs=*/{}};
  };
  // The scenario with a fixed plan (fix_to_fit, and the fixed plan's estimate): the plans'
  // scenario but for the plan, which each use writes (one copy, not one per plan that is fixed).
  Scenario fixing = base;
  for_each_plan(true, [&](const Scenario& s, bool admitted) {
    if (non_finite) return;
    if (!admitted) {
      ++result.rejected;
      return;
    }
    ++result.evaluated;
    StageMemory stages(s);
    const MemoryCheck memory = stages.check(s.plan);
    if (!std::isfinite(memory.peak_bytes)) {
      non_finite = not_finite("a plan's");
      return;
    }
    if (!memory.fits) {
      // Plans that fit take no extra work: the fixes run only here.
      std::optional<Fixed> fixed =
          options.fit_fixes ? fix_to_fit(s, fixing, stages, offload_all) : std::nullopt;
      if (!fixed) {
        ++result.out_of_memory;
        return;
      }
      fixing.plan = fixed->plan;
      auto c = timed(fixing, ranking);
      if (!c) return;
      c->needs = fmt::format("{}", fmt::join(fixed->needs, " "));
      ++result.fixed;
      fitting.push_back({std::move(*c), fitting.size()});
      return;
    }
    // (The memory the check found: a second stage_memory of every stage and the shapes of the
    // copied stages were a tenth of an MoE search's instructions; its replica sets found again, 4 %.)
    auto c = timed(s, ranking, &stages);
    if (!c) return;
    if (!c->fits) {  // (never: the same memory as above; kept so the two cannot drift apart)
      ++result.out_of_memory;
      return;
    }
    fitting.push_back({std::move(*c), fitting.size()});
  });
  if (non_finite) return *non_finite;
  const bool whole = options.first_plan <= 0 && options.plan_count < 0;
  if (result.evaluated == 0 && whole) {
    if (result.baseline_error) return *result.baseline_error;
    return Error{ErrorCode::invalid_plan, "plan",
                 fmt::format("search: none of the {} plans tried passes the rules for this model "
                             "and cluster",
                             result.rejected)};
  }
  // Fastest first; plans of equal time in the order they were enumerated.
  // (Ranked through their places in `fitting`: sorting the candidates themselves moved whole
  // plans, strings and vectors, in every swap: 5 % of an MoE search's instructions.)
  auto by_time = [&](size_t a, size_t b) {
    const Ranked &x = fitting[a], &y = fitting[b];
    return x.c.iteration_time_s != y.c.iteration_time_s
               ? x.c.iteration_time_s < y.c.iteration_time_s
               : x.order < y.order;
  };
  std::vector<size_t> ranked(fitting.size());
  for (size_t i = 0; i < ranked.size(); ++i) ranked[i] = i;
  std::sort(ranked.begin(), ranked.end(), by_time);
  if (!options.rank_exactly) {
    // In closed-form order, the simulated schedules' plans estimated again exactly, until the
    // next plan's closed-form time is beyond the top-th exact time by more than the closed
    // form's tolerance both ways: its exact time cannot reach the top.
    const double reach = (1 + kClosedFormTolerance) / (1 - kClosedFormTolerance);
    std::priority_queue<double> leading;  // the `top` smallest exact times so far
    size_t kept = 0;
    Scenario s = base;
    s.plan.stages.clear(), s.plan.replicas.clear(), s.plan.pipeline_layout.clear();
    uint64_t simulated = 0;  // blocks, within the search's budget: past it, the closed form's
    for (; kept < ranked.size(); ++kept) {
      SearchCandidate& c = fitting[ranked[kept]].c;
      if (leading.size() >= options.top && c.iteration_time_s > leading.top() * reach) break;
      const uint64_t blocks_of =
          simulated_schedule(c.plan) ? detail::schedule_blocks(plan_as_run(c.plan)) : 0;
      if (blocks_of > 0 && blocks_of <= kMaxSimulatedBlocks &&
          simulated + blocks_of <= options.max_simulated_blocks) {
        simulated += blocks_of;
        s.plan = c.plan;
        auto exact = timed(s, EstimateOptions{});
        if (!exact) return *non_finite;
        exact->needs = std::move(c.needs);
        c = std::move(*exact);
      }
      leading.push(c.iteration_time_s);
      if (leading.size() > options.top) leading.pop();
    }
    ranked.resize(kept);
    std::sort(ranked.begin(), ranked.end(), by_time);
  }
  if (ranked.size() > options.top) ranked.resize(options.top);
  for (const size_t i : ranked) result.best.push_back(std::move(fitting[i].c));
  return result;
}

SearchResult merge_searches(const std::vector<SearchResult>& parts, size_t top) {
  SearchResult out;
  if (parts.empty()) return out;
  out.baseline_s = parts.front().baseline_s;
  out.baseline_error = parts.front().baseline_error;
  out.space = parts.front().space;
  for (const auto& part : parts) {
    out.evaluated += part.evaluated;
    out.rejected += part.rejected;
    out.out_of_memory += part.out_of_memory;
    out.fixed += part.fixed;
    out.best.insert(out.best.end(), part.best.begin(), part.best.end());
  }
  std::stable_sort(out.best.begin(), out.best.end(), [](const auto& a, const auto& b) {
    return a.iteration_time_s < b.iteration_time_s;
  });
  if (out.best.size() > top) out.best.resize(top);
  return out;
}

namespace {
// The layers of each pipeline stage, first to last (the report's stages[].layers).
Json stage_layers_json(const SearchCandidate& c) {
  Json out = Json::array();
  for (int i = 0; i < c.plan.pp; ++i)
    out.push_back(i == 0 ? c.stage_layers[0]
                  : i == c.plan.pp - 1 ? c.stage_layers[2]
                                       : c.stage_layers[1]);
  return out;
}
}  // namespace

Json search_space_json(const SearchOptions& o) {
  // The lists for_each_plan and expert_plans enumerate, in words.
  auto list = [](const std::vector<int>& v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
    return out;
  };
  const std::string vpp = list(powers_of_two_up_to(o.max_vpp));
  const std::string mb = list(powers_of_two_up_to(o.max_micro_batch));
  Json varies = {
      {"plan.tp", "the divisors of the GPUs up to a node's GPUs that divide the attention heads, "
                  "the KV heads and the FFN size (TP stays inside a node)"},
      {"plan.cp", "1, 2, 4, 8 and the plan's own, where the training software has context "
                  "parallelism"},
      {"plan.pp", "the divisors of the GPUs left by TP x CP, up to the layers"},
      {"plan.vpp", vpp + " and the plan's own, with PP > 1; the layers split evenly, else with "
                   "the embedding and the loss counted as layers or a lighter first and last "
                   "stage, as Megatron can split them"},
      {"plan.micro_batch", mb + " and the plan's own"},
      {"plan.dp", "what the GPUs leave: GPUs / (TP x PP x CP)"},
      {"plan.sequence_parallel", "on with TP > 1"},
      {"plan.tp_comm_overlap", o.overlap ? "on with TP > 1 where the software can do it"
                                         : "the plan's own"},
      {"plan.moe_overlap", o.overlap ? "on where Megatron-Core admits it" : "the plan's own"},
      {"plan.overlap_grad_reduce", "on and off with DP > 1 below ZeRO-3 (off only where the "
                                   "parameter gather does not overlap); elsewhere the plan's own"},
  };
  if (o.vary_recompute) varies["plan.recompute"] = "none, selective, full";
  varies["plan.schedule"] = o.vary_schedule ? "1f1b, and zero_bubble where the plan states it "
                                              "(no bundled profile runs it); interleaved with "
                                              "VPP > 1"
                                            : "as VPP implies";
  varies["plan.ep"] = "mixture-of-experts models: the powers of two that divide the experts and "
                      "fold onto a stage's GPUs, and the plan's own";
  varies["plan.etp"] = "mixture-of-experts models: 1 or TP";
  if (o.vary_dispatcher)
    varies["plan.moe_dispatcher"] = "mixture-of-experts models: alltoall, allgather, flex";
  if (o.fit_fixes) {
    // What a plan that does not fit is given to fit (fix_to_fit): Apply carries it.
    const char* fix = "only for a plan that does not fit otherwise (its `needs`)";
    for (const char* key : {"plan.bf16_moments", "plan.offload_modules",
                            "plan.optimizer_cpu_offload", "plan.optimizer_offload_fraction",
                            "plan.overlap_cpu_optimizer_d2h_h2d"})
      varies[key] = fix;
  }
  const Json keeps = {"model", "cluster", "plan.global_batch", "seq_len", "plan.precision",
                      "plan.framework", "plan.optimizer", "plan.distributed_optimizer",
                      "plan.zero_stage",
                      "plan.overlap_param_gather",
                      "plan.overlap_p2p", "calibration"};
  const std::string doc = fmt::format(
      "The engine estimates the Megatron-LM plans the cluster admits for this model and ranks "
      "those that fit in memory by iteration time. It varies TP (inside a node, dividing the "
      "heads, KV heads and FFN size), CP (1-8, where the software has it), PP with VPP ({}; the "
      "layers split evenly, else as Megatron can split them: the embedding and the loss counted "
      "as layers, or a lighter first and last stage), the pipeline schedule{}, the micro-batch "
      "({}){}, and for a "
      "mixture-of-experts model EP, expert TP{}{}; DP is what the GPUs leave, sequence "
      "parallelism is on with TP > 1, TP and EP overlap are on wherever the software can do "
      "them, and the gradient-reduce overlap is tried on and off with DP > 1 below ZeRO-3. It "
      "keeps the model, the cluster, the global batch, the sequence length, the precision and "
      "the training software with its other flags (the optimizer, the distributed optimizer, "
      "the ZeRO stage, the parameter-gather and pipeline overlaps). One "
      "group of nodes; at most {} "
      "plans.",
      vpp,
      o.vary_schedule
          ? " (without VPP 1F1B, and zero bubble where the plan runs it)"
          : " VPP implies",
      mb,
      o.vary_recompute ? " and recompute (none, selective, full)" : "",
      o.vary_dispatcher ? " and the token dispatcher" : "",
      o.fit_fixes ? "; a plan that does not fit is tried with bf16 moments, its activations "
                    "offloaded by module and the optimizer on the CPU"
                  : "",
      o.max_plans);
  return Json{{"doc", doc},
              {"varies", std::move(varies)},
              {"keeps", keeps},
              {"max_plans", o.max_plans},
              {"max_stage_evaluations", o.max_stage_evaluations}};
}

Json to_json(const SearchResult& r) {
  Json best = Json::array();
  for (const auto& c : r.best) {
    best.push_back(Json{{"plan", to_json(c.plan)},
                        {"iteration_time_s", c.iteration_time_s},
                        {"mfu", c.mfu},
                        {"tokens_per_s", c.tokens_per_s},
                        {"peak_memory_bytes", c.peak_memory_bytes},
                        {"needs", c.needs},
                        {"stage_layers", stage_layers_json(c)}});
  }
  Json out = {{"best", std::move(best)},
              {"evaluated", r.evaluated},
              {"rejected", r.rejected},
              {"out_of_memory", r.out_of_memory},
              {"fixed", r.fixed},
              {"baseline_s", r.baseline_s}};
  if (r.baseline_error) out["baseline_error"] = to_json(*r.baseline_error)["error"];
  return out;
}

}  // namespace stepcast
