// Report -> JSON (the contract other tools read) and -> a text table for people.
#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "report/report_keys.h"
#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/limits.h"
#include "stepcast/rule_ids.h"
#include "stepcast/schema.h"

namespace stepcast {

Json to_json(const Plan& p) { return resolved_plan_json(p); }

Json to_json(const Error& e) {
  Json error = {{"code", to_string(e.code)}, {"path", e.path}, {"message", e.message}};
  if (!e.related.empty()) error["related"] = e.related;
  if (!e.hint.empty()) error["hint"] = e.hint;
  // The rule broken and its values (rule_ids.h), for a caller that words the error itself.
  if (e.rule != Rule::none) {
    error["rule"] = name_of(e.rule);
    error["values"] = e.values.is_object() ? e.values : Json::object();
  }
  return Json{{"error", std::move(error)}};
}

Json to_json(const Report& r) {
  // The streamed report read back: the tree and the text come from the same key table, and a
  // number that is not finite reads as null (what dump() would have written for it).
  std::string text;
  const auto& t = detail::report_table();
  detail::JsonWriter w(text, -1);
  detail::write_object<Report>(w, r, t.keys, t.order, ReportKind::full);
  w.finish();
  return Json::parse(text, nullptr, /*allow_exceptions=*/false);
}

Json report_schema() {
  Json out = Json::object();
  detail::schema_rows(detail::report_table(), out);
  detail::schema_rows(detail::breakdown_table(), out);
  detail::schema_rows(detail::stage_table(), out);
  detail::schema_rows(detail::memory_table(), out);
  detail::schema_rows(detail::op_table(), out);
  detail::schema_rows(detail::replica_table(), out);
  detail::schema_rows(detail::timeline_table(), out);
  detail::schema_rows(detail::event_table(), out);
  detail::schema_rows(detail::fit_fix_table(), out);
  return out;
}

std::string fill_report_tables(std::string_view doc) {
  return fill_report_tables(doc, report_schema());
}

std::string fill_report_tables(std::string_view doc, const Json& schema) {
  constexpr std::string_view open = "<!-- report: ", close = "<!-- /report -->";
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t start = doc.find(open, at);
    if (start == std::string_view::npos) break;
    const size_t name_end = doc.find(" -->", start);
    const size_t end = doc.find(close, start);
    if (name_end == std::string_view::npos || end == std::string_view::npos) break;
    const std::string name(doc.substr(start + open.size(), name_end - start - open.size()));
    if (!schema.contains(name)) {  // another schema's table (the traffic's): kept as it is
      out.append(doc.substr(at, end + close.size() - at));
      at = end + close.size();
      continue;
    }
    out.append(doc.substr(at, name_end + 4 - at));
    out += "\n| key | unit | meaning |\n|---|---|---|\n";
    for (const auto& row : schema[name]) {
      std::string meaning = row["doc"].get<std::string>();
      if (row.contains("of"))
        meaning += fmt::format(" (`{}`{})", row["of"].get<std::string>(),
                               row.value("array", false) ? ": one object each" : "");
      if (!row.value("summary", true)) meaning += "; not in a summary report";
      out += fmt::format("| `{}` | {} | {} |\n", row["name"].get<std::string>(),
                         row["unit"].get<std::string>(), meaning);
    }
    out.append(close);
    at = end + close.size();
  }
  out.append(doc.substr(at));
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
  auto text = report_text(report);
  if (!text) return text.error();
  return Json::parse(*text, nullptr, /*allow_exceptions=*/false);
}

std::string to_text(const Report& r, const Scenario& sc) {
  constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
  const Plan p = sc.plan.effective();  // as the resolved plan shows it
  std::string out;
  auto it = std::back_inserter(out);
  std::string where;
  for (const auto& grp : sc.cluster.groups)
    where += fmt::format("{}{} x {} ({} node{})", where.empty() ? "" : " + ", grp.gpus(),
                         printable(grp.gpu.name, 80), grp.nodes, grp.nodes == 1 ? "" : "s");
  // Names come from the document: printed as one line whatever they hold.
  fmt::format_to(it, "{} ({:.2f} B parameters) on {}\n", printable(sc.model.name, 80),
                 r.parameters / 1e9, where);
  fmt::format_to(it, "plan: tp={} pp={} dp={} cp={} vpp={} micro_batch={} global_batch={} ({} micro-batch{}), "
       "sp={} recompute={} zero={} {}\n",
       p.tp, p.pp, p.dp, p.cp, p.vpp, p.micro_batch, p.global_batch, r.micro_batches,
       r.micro_batches == 1 ? "" : "es",
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
  // The breakdown's parts in the key table's order, by its labels (lower case).
  for (const auto& part : detail::breakdown_table().keys) {
    const double value = part.number(r.breakdown);
    if (value <= 0) continue;
    std::string name(part.label);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    fmt::format_to(it, "  {:<16} {:9.3f} s  {:5.1f} %\n", name, value,
                   100 * value / r.iteration_time_s);
  }
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
  // Out of memory: what the engine found makes it fit, fastest first (estimate/fit_fixes.cpp).
  for (const FitFix& f : r.fit_fixes)
    fmt::format_to(it, "fits with {}, {:+.1f} % time, needs {:.1f} GiB with the headroom ({})\n",
                   printable(f.change, 200), 100 * f.time_change, f.memory_bytes / GiB,
                   printable(f.settings, 200));
  return out;
}

}  // namespace stepcast
