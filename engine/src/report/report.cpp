// Report -> JSON (the contract other tools read) and -> a text table for people.
#include <fmt/format.h>

#include <cmath>

#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/limits.h"
#include "stepcast/schema.h"

namespace stepcast {

namespace {

Json memory_json(const MemoryBreakdown& m) {
  return Json{{"weights", m.weights},         {"gradients", m.gradients},
              {"optimizer", m.optimizer},     {"activations", m.activations},
              {"other", m.other},             {"total", m.total},
              {"capacity", m.capacity},       {"headroom", m.headroom}};
}

Json op_json(const CommOp& op) {
  return Json{{"kind", to_string(op.kind)},   {"group", to_string(op.group)},
              {"phase", to_string(op.phase)}, {"what", op.what},
              {"count", op.count},            {"bytes", op.bytes},
              {"group_size", op.group_size},  {"link", op.link},
              {"time_s", op.time_s},          {"total_time_s", op.total_s()}};
}

Json replicas_json(const Report& r) {
  Json out = Json::array();
  for (const auto& x : r.replicas)
    out.push_back(Json{{"group", x.group},
                       {"gpu", x.gpu},
                       {"count", x.count},
                       {"micro_batches", x.micro_batches},
                       {"pipeline_s", x.pipeline_s},
                       {"memory_bytes", x.memory_bytes},
                       {"capacity_bytes", x.capacity_bytes},
                       {"fits", x.fits}});
  return out;
}

Json timeline_json(const Report& r) {
  Json events = Json::array();
  for (const auto& e : r.timeline)
    events.push_back(Json{{"kind", to_string(e.kind)},         {"stage", e.stage},
                          {"chunk", e.chunk},       {"micro_batch", e.micro_batch},
                          {"start_s", e.start_s},   {"end_s", e.end_s},
                          {"replica", e.replica},   {"group", e.group}});
  return Json{{"events", std::move(events)}, {"truncated", r.timeline_truncated}};
}

}  // namespace

Json to_json(const Plan& p) { return resolved_plan_json(p); }

Json to_json(const Error& e) {
  Json error = {{"code", to_string(e.code)}, {"path", e.path}, {"message", e.message}};
  if (!e.related.empty()) error["related"] = e.related;
  if (!e.hint.empty()) error["hint"] = e.hint;
  return Json{{"error", std::move(error)}};
}

Json to_json(const Report& r) {
  const Breakdown& b = r.breakdown;
  Json stages = Json::array();
  for (const auto& st : r.stages) {
    Json ops = Json::array();
    for (const auto& op : st.communication) ops.push_back(op_json(op));
    stages.push_back(Json{{"index", st.index},
                          {"layers", st.layers},
                          {"group", st.group},
                          {"gpu", st.gpu},
                          {"parameters", st.parameters},
                          {"forward_s", st.forward_s},
                          {"backward_s", st.backward_s},
                          {"recompute_s", st.recompute_s},
                          {"p2p_s", st.p2p_s},
                          {"dp_sync_s", st.dp_sync_s},
                          {"optimizer_s", st.optimizer_s},
                          {"memory_bytes", memory_json(st.memory)},
                          {"fits", st.memory.fits()},
                          {"communication", std::move(ops)}});
  }
  Json out{{"plan", to_json(r.plan)},
              {"iteration_time_s", r.iteration_time_s},
              {"tokens_per_s", r.tokens_per_s},
              {"samples_per_s", r.samples_per_s},
              {"model_tflops_per_gpu", r.model_tflops_per_gpu},
              {"mfu", r.mfu},
              {"hfu", r.hfu},
              {"parameters", r.parameters},
              {"gpus", r.gpus},
              {"micro_batches", r.micro_batches},
              {"peak_tflops_per_gpu", r.peak_tflops},
              {"bottleneck_stage", r.bottleneck_stage},
              {"fits", r.fits},
              {"breakdown_s",
               {{"forward", b.forward},
                {"backward", b.backward},
                {"recompute", b.recompute},
                {"tp_comm", b.tp_comm},
                {"cp_comm", b.cp_comm},
                {"ep_comm", b.ep_comm},
                {"pp_comm", b.pp_comm},
                {"bubble", b.bubble},
                {"dp_comm", b.dp_comm},
                {"optimizer", b.optimizer},
                {"other", b.other},
                {"host", b.host}}},
              {"stages", std::move(stages)},
              {"replicas", replicas_json(r)},
              {"warnings", r.warnings},
              {"timeline", timeline_json(r)}};
  if (r.calibration) out["calibration"] = calibration_json(*r.calibration);  // report/calibration_json.cpp
  return out;
}

std::optional<std::string> non_finite_path(const Json& j) {
  // "key" or "[i]" in front of what was found inside.
  auto inside = [](std::string step, const std::string& rest) {
    return rest.empty() || rest.front() == '[' ? step + rest : step + "." + rest;
  };
  if (j.is_number_float() && !std::isfinite(j.get<double>())) return std::string();
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (auto path = non_finite_path(*it)) return inside(it.key(), *path);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      if (auto path = non_finite_path(j[i])) return inside(fmt::format("[{}]", i), *path);
  }
  return std::nullopt;
}

Result<Json> report_json(const Report& report) {
  Json j = to_json(report);
  if (auto path = non_finite_path(j))
    return Error{ErrorCode::unsupported, "",
                 fmt::format("the estimate's {} is not a finite number: the inputs are beyond "
                             "what the model computes",
                             *path)};
  return j;
}

std::string to_text(const Report& r, const Scenario& sc) {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  const Plan p = sc.plan.effective();  // as the resolved plan shows it
  std::string out;
  auto it = std::back_inserter(out);
  std::string where;
  for (const auto& grp : sc.cluster.groups)
    where += fmt::format("{}{} x {} ({} nodes)", where.empty() ? "" : " + ", grp.gpus(),
                         printable(grp.gpu.name, 80), grp.nodes);
  // Names come from the document: printed as one line whatever they hold.
  fmt::format_to(it, "{} ({:.2f} B parameters) on {}\n", printable(sc.model.name, 80),
                 r.parameters / 1e9, where);
  fmt::format_to(it, "plan: tp={} pp={} dp={} cp={} vpp={} micro_batch={} global_batch={} ({} micro-batches), "
       "sp={} recompute={} zero={} {}\n",
       p.tp, p.pp, p.dp, p.cp, p.vpp, p.micro_batch, p.global_batch, r.micro_batches,
       p.sequence_parallel ? "on" : "off", to_string(p.recompute), p.effective_zero_stage(),
       to_string(p.precision));
  if (sc.model.moe.enabled())
    fmt::format_to(it, "experts: ep={} etp={} expert dp={} dispatcher={}{}\n", p.ep, p.etp,
                   p.edp(), to_string(p.moe_dispatcher), p.moe_overlap ? " (overlapped)" : "");
  fmt::format_to(it, "\n");
  fmt::format_to(it, "iteration time   {:10.3f} s\n", r.iteration_time_s);
  fmt::format_to(it, "throughput       {:10.0f} tokens/s   {:.2f} samples/s\n", r.tokens_per_s, r.samples_per_s);
  fmt::format_to(it, "model TFLOP/s    {:10.1f} per GPU    MFU {:.1f} %   HFU {:.1f} %\n", r.model_tflops_per_gpu,
       100 * r.mfu, 100 * r.hfu);
  fmt::format_to(it, "\n");
  fmt::format_to(it, "where the step goes (critical path, bottleneck stage {})\n", r.bottleneck_stage);
  const Breakdown& b = r.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"forward", b.forward},     {"backward", b.backward},   {"recompute", b.recompute},
      {"tp comm", b.tp_comm},     {"cp comm", b.cp_comm},     {"expert comm", b.ep_comm},
      {"pp send/recv", b.pp_comm},
      {"pipeline bubble", b.bubble}, {"dp sync", b.dp_comm}, {"optimizer", b.optimizer},
      {"other comm", b.other},    {"cpu launches", b.host}};
  for (const auto& [name, value] : parts)
    if (value > 0)
      fmt::format_to(it, "  {:<16} {:9.3f} s  {:5.1f} %\n", name, value, 100 * value / r.iteration_time_s);
  fmt::format_to(it, "\n");
  fmt::format_to(it, "{:>5} {:>6} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}  {}\n", "stage", "layers",
       "fwd ms/mb", "bwd ms/mb", "params M", "weights", "grads", "optim", "activ", "total",
       "fits (GiB)");
  for (const auto& st : r.stages)
    fmt::format_to(it, "{:>5} {:>6} {:>10.2f} {:>10.2f} {:>10.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f} {:>9.1f}  "
         "{} / {:.0f}\n",
         st.index, st.layers, 1e3 * st.forward_s, 1e3 * st.backward_s, st.parameters / 1e6,
         st.memory.weights / GiB, st.memory.gradients / GiB, st.memory.optimizer / GiB,
         st.memory.activations / GiB, st.memory.total / GiB, st.memory.fits() ? "yes" : "NO",
         st.memory.capacity / GiB);
  fmt::format_to(it, "\n");
  fmt::format_to(it, "communication census, stage 0 (per GPU per iteration)\n");
  fmt::format_to(it, "  {:<15} {:<15} {:<14} {:>8} {:>11} {:>5} {:<12} {:>10}\n", "kind", "group", "phase", "count",
       "MiB each", "n", "link", "total s");
  for (const auto& op : r.stages.front().communication)
    fmt::format_to(it, "  {:<15} {:<15} {:<14} {:>8} {:>11.3f} {:>5} {:<12} {:>10.4f}\n", to_string(op.kind),
         to_string(op.group), to_string(op.phase), op.count, op.bytes / (1024.0 * 1024.0),
         op.group_size, printable(op.link, 80), op.total_s());
  if (const auto& c = r.calibration)
    fmt::format_to(it, "calibrated: compute scale {:.3f} ({:+.1f} %{}), network scale {:.3f} ({:+.1f} %{})\n",
                   c->compute_scale, 100 * (c->compute_scale - 1), c->compute_fitted ? ", fitted" : "",
                   c->network_scale, 100 * (c->network_scale - 1), c->network_fitted ? ", fitted" : "");
  if (const auto& c = r.calibration; c && !c->gemm.empty()) {
    fmt::format_to(it, "calibrated GEMMs:");
    for (const auto& g : c->gemm)
      fmt::format_to(it, " {} {:.4g} (preset {:.4g}){}", g.key, g.value, g.preset,
                     &g == &c->gemm.back() ? "\n" : ",");
  }
  if (const auto& c = r.calibration; c && c->layer_profiles > 0)
    fmt::format_to(it, "measured layers: {} of {} layer profiles of this plan's shape\n",
                   c->layer_profiles_used, c->layer_profiles);
  for (const auto& w : r.warnings) fmt::format_to(it, "warning: {}\n", printable(w, 400));
  return out;
}

}  // namespace stepcast
