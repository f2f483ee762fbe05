// The changes that make an out-of-memory plan fit (fit_fixes.h): each candidate plan is checked
// against the rules (check_scenario: what Megatron-Core refuses is never offered) and estimated
// again, so its memory and its time are the engine's own, not a rule of thumb.
#include "estimate/fit_fixes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace stepcast::detail {

namespace {

struct Candidate {
  std::string change, settings;
  Plan plan;
  std::optional<Report> estimated = std::nullopt;  // its estimate, where finding it took one
};

// What the fullest stage needs against its GPU: total plus the headroom the plan keeps free.
double needed_bytes(const Report& r) {
  double most = 0;
  for (const StageReport& s : r.stages) most = std::max(most, s.memory.total + s.memory.headroom);
  return most;
}

// The plan's estimate under `plan`, when the rules accept it.
std::optional<Report> estimate_with(const Scenario& sc, const Plan& plan) {
  Scenario changed = sc;
  changed.plan = plan;
  if (!check_scenario(changed)) return std::nullopt;
  return estimate(changed);
}

// Selective recompute of one module more than the plan replays, or full recompute.
void recompute_candidates(const Plan& p, std::vector<Candidate>& out) {
  if (p.recompute == Recompute::full) return;
  for (const std::string_view module : kRecomputeModules) {
    if (p.recomputes(module)) continue;
    Plan q = p;
    q.recompute = Recompute::selective;
    q.recompute_modules = p.recompute == Recompute::selective
                              ? fmt::format("{} {}", p.recompute_modules, module)
                              : std::string(module);
    out.push_back({fmt::format("{} recomputed", module),
                   fmt::format("plan.recompute=selective plan.recompute_modules=\"{}\"",
                               q.recompute_modules),
                   q});
  }
  Plan q = p;
  q.recompute = Recompute::full;
  q.recompute_method = RecomputeMethod::uniform;
  q.recompute_num_layers = 1;
  out.push_back({"full recompute of every layer",
                 "plan.recompute=full plan.recompute_method=uniform plan.recompute_num_layers=1",
                 q});
}

// Megatron-Core's fine-grained activation offloading (plan.offload_modules): one module more
// than the plan offloads (attn_proj with core_attn, which it needs), then every module; what the
// rules refuse drops out at estimate_with (expert modules on a dense model, a framework that
// cannot, a node without a host link, modules replayed by recompute).
void offload_module_candidates(const Plan& p, std::vector<Candidate>& out) {
  auto add = [&](std::string modules, std::string change) {
    Plan q = p;
    q.offload_modules = std::move(modules);
    out.push_back({std::move(change),
                   fmt::format("plan.offload_modules=\"{}\"", q.offload_modules), q});
  };
  std::string all = p.offload_modules;
  for (const std::string_view module : kOffloadModules) {
    if (p.offloads(module)) continue;
    all += fmt::format("{}{}", all.empty() ? "" : " ", module);
    if (module == "core_attn") continue;  // with attn_proj below
    std::string one = module == "attn_proj" && !p.offloads("core_attn")
                          ? std::string("core_attn attn_proj")
                          : std::string(module);
    add(p.offload_modules.empty() ? one : fmt::format("{} {}", p.offload_modules, one),
        fmt::format("{} offloaded to host memory", one));
  }
  if (all != p.offload_modules) {
    add(all, "every module's activations offloaded to host memory");
    // Without the expert modules, which a dense model has not.
    std::string dense;
    for_each_recompute_module(all, [&](std::string_view name) {
      if (name != "expert_fc1" && name != "moe_act")
        dense += fmt::format("{}{}", dense.empty() ? "" : " ", name);
    });
    if (dense != all && dense != p.offload_modules)
      add(dense, "the attention's and norms' activations offloaded to host memory");
  }
}

// The allocator's cache given back before it runs out (plan.expandable_segments): no time.
void allocator_candidates(const Plan& p, std::vector<Candidate>& out) {
  if (p.expandable_segments) return;
  Plan q = p;
  q.expandable_segments = true;
  out.push_back({"expandable allocator segments", "plan.expandable_segments=true", q});
}

// The optimizer's state: bf16 moments (not beside remainders: rule master_weights), the
// distributed optimizer.
void optimizer_candidates(const Plan& p, std::vector<Candidate>& out) {
  if (p.optimizer == Optimizer::adam && !p.bf16_moments && p.precision != Precision::fp32 &&
      p.master_weights != MasterWeights::remainders) {
    Plan q = p;
    q.bf16_moments = true;
    out.push_back({"Adam's moments in bf16", "plan.bf16_moments=true", q});
  }
  if (p.effective_zero_stage() == 0 && int64_t{p.dp} * p.cp > 1) {
    Plan q = p;
    q.distributed_optimizer = true;
    q.zero_stage = 1;
    out.push_back({"the distributed optimizer", "plan.distributed_optimizer=true", q});
  }
}

// TP, PP or CP up to the smallest value the rules accept at which the plan fits, DP down by as
// much (the same GPUs). CP splits each sequence, so each GPU keeps 1/CP of a layer's activations
// where TP leaves some whole; at long sequences it is often the cheapest (Llama 3 8B at 2 x 8,192
// tokens a micro-batch on one DGX H100: CP 4 +2 % time, full recompute +30 %).
void parallel_candidates(const Scenario& sc, std::vector<Candidate>& out) {
  const Plan& p = sc.plan;
  auto next = [&](int Plan::*size, std::string_view name, std::string_view key) {
    const int64_t gpus = int64_t{p.*size} * p.dp;  // what the size and DP share
    for (int64_t n = p.*size + 1; n <= gpus; ++n) {
      if (gpus % n != 0) continue;
      Plan q = p;
      q.*size = static_cast<int>(n);
      q.dp = static_cast<int>(gpus / n);
      std::optional<Report> r = estimate_with(sc, q);
      if (!r || !r->fits) continue;
      out.push_back({fmt::format("{} {} (DP {})", name, n, q.dp),
                     fmt::format("plan.{}={} plan.dp={}", key, n, q.dp), q, std::move(r)});
      return;
    }
  };
  next(&Plan::tp, "TP", "tp");
  if (p.stages.empty() && p.pipeline_layout.empty()) next(&Plan::pp, "PP", "pp");  // no own layout
  next(&Plan::cp, "CP", "cp");
}

FitFix fix_of(const Candidate& c, const Report& with, const Report& without) {
  return {c.change, c.settings, with.iteration_time_s,
          with.iteration_time_s / without.iteration_time_s - 1, needed_bytes(with)};
}

// The smallest n in (lo, hi] at which plan_of(n) fits, and its estimate, where memory falls as n
// grows (lo does not fit): the range halved.
template <class PlanOf>
std::optional<std::pair<int64_t, Report>> smallest_fitting(const Scenario& sc, int64_t lo,
                                                           int64_t hi, PlanOf plan_of) {
  std::optional<Report> best = hi > lo ? estimate_with(sc, plan_of(hi)) : std::nullopt;
  if (!best || !best->fits) return std::nullopt;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    std::optional<Report> r = estimate_with(sc, plan_of(mid));
    if (r && r->fits) {
      hi = mid;
      best = std::move(r);
    } else {
      lo = mid;
    }
  }
  return std::make_pair(hi, std::move(*best));
}

// Activation offloading: the fewest layers (above the plan's own) whose offload fits. Memory
// falls with every layer offloaded.
std::optional<FitFix> offload_fix(const Scenario& sc, const Report& without) {
  const Plan& p = sc.plan;
  auto plan_of = [&](int64_t n) {
    Plan q = p;
    q.cpu_offloading_num_layers = n;
    return q;
  };
  const auto found =
      smallest_fitting(sc, p.cpu_offloading_num_layers, sc.model.layers - 1, plan_of);
  if (!found) return std::nullopt;
  const auto& [hi, best] = *found;
  return fix_of({fmt::format("activations of {} layers offloaded to host memory", hi),
                 fmt::format("plan.cpu_offloading_num_layers={}", hi), plan_of(hi)},
                best, without);
}

// Optimizer offloading (plan.optimizer_cpu_offload, its copies overlapped): the smallest share
// of the optimizer, in tenths, whose offload fits. The GPU's memory falls as the share grows, so
// the rules drop it where Megatron-Core cannot (not Adam or SGD, bf16 moments, ZeRO-2/3, no host
// link, a framework that cannot).
std::optional<FitFix> optimizer_offload_fix(const Scenario& sc, const Report& without) {
  const Plan& p = sc.plan;
  auto plan_of = [&](int64_t tenths) {
    Plan q = p;
    q.optimizer_cpu_offload = true;
    q.optimizer_offload_fraction = static_cast<double>(tenths) / 10;
    q.overlap_cpu_optimizer_d2h_h2d = true;
    return q;
  };
  const auto own = static_cast<int64_t>(std::floor(10 * p.optimizer_offloaded_share()));
  const auto found = smallest_fitting(sc, own, 10, plan_of);
  if (!found) return std::nullopt;
  const auto& [hi, best] = *found;
  return fix_of({fmt::format("{} % of the optimizer on the CPU", hi * 10),
                 fmt::format("plan.optimizer_cpu_offload=true plan.optimizer_offload_fraction={} "
                             "plan.overlap_cpu_optimizer_d2h_h2d=true",
                             static_cast<double>(hi) / 10),
                 plan_of(hi)},
                best, without);
}

}  // namespace

std::vector<FitFix> fit_fixes(const Scenario& sc, const Report& without) {
  std::vector<Candidate> candidates;
  recompute_candidates(sc.plan, candidates);
  offload_module_candidates(sc.plan, candidates);
  allocator_candidates(sc.plan, candidates);
  optimizer_candidates(sc.plan, candidates);
  parallel_candidates(sc, candidates);
  std::vector<FitFix> fixes;
  for (const Candidate& c : candidates)
    if (const std::optional<Report> r = c.estimated ? c.estimated : estimate_with(sc, c.plan);
        r && r->fits)
      fixes.push_back(fix_of(c, *r, without));
  if (std::optional<FitFix> f = offload_fix(sc, without)) fixes.push_back(std::move(*f));
  if (std::optional<FitFix> f = optimizer_offload_fix(sc, without)) fixes.push_back(std::move(*f));
  std::stable_sort(fixes.begin(), fixes.end(), [](const FitFix& a, const FitFix& b) {
    return a.iteration_time_s < b.iteration_time_s;
  });
  return fixes;
}

}  // namespace stepcast::detail

namespace stepcast {

std::vector<FitFix> fit_fixes_of(const Scenario& scenario, const Report& without) {
  return detail::fit_fixes(scenario, without);
}

}  // namespace stepcast
