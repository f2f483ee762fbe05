#include "stepcast/accuracy/report.h"

#include <fmt/format.h>

namespace stepcast::accuracy {

Json to_json(const Accuracy& a) {
  auto src = [](const SourceAccuracy& s) {
    return Json{{"source", s.source},     {"rows", s.rows},          {"mape_pct", s.mape_pct},
                {"worst_pct", s.worst_pct}, {"worst_id", s.worst_id}};
  };
  Json rows = Json::array();
  for (const auto& p : a.rows)
    rows.push_back(Json{{"id", p.id},
                        {"source", p.source},
                        {"measured_s", p.measured_s},
                        {"predicted_s", p.predicted_s},
                        {"error_pct", p.error_pct}});
  Json sources = Json::array();
  for (const auto& s : a.sources) sources.push_back(src(s));
  Json groups = Json::array();
  for (const auto& g : a.groups) groups.push_back(src(g));
  return Json{{"rows", rows},
              {"sources", sources},
              {"megatron", src(a.megatron)},
              {"overall", src(a.overall)},
              {"groups", groups}};
}

std::string to_text(const Accuracy& a) {
  std::string out = fmt::format("{:<44} {:>10} {:>10} {:>8}\n", "id", "measured s",
                                "predicted s", "error %");
  for (const auto& p : a.rows)
    out += fmt::format("{:<44} {:>10.3f} {:>10.3f} {:>+8.1f}\n", p.id, p.measured_s,
                       p.predicted_s, p.error_pct);
  out += fmt::format("\n{:<32} {:>5} {:>8} {:>9}  {}\n", "source", "rows", "MAPE %", "worst %",
                     "worst row");
  auto line = [&](const SourceAccuracy& s) {
    out += fmt::format("{:<32} {:>5} {:>8.1f} {:>+9.1f}  {}\n", s.source, s.rows, s.mape_pct,
                       s.worst_pct, s.worst_id);
  };
  for (const auto& s : a.sources) line(s);
  line(a.megatron);
  line(a.overall);
  out += "\n";
  for (const auto& g : a.groups) line(g);
  return out;
}

namespace {

Json skipped_json(const std::vector<Skipped>& skipped) {
  Json out = Json::array();
  for (const auto& s : skipped)
    out.push_back(Json{{"id", s.id}, {"source", s.source}, {"reason", s.reason}});
  return out;
}

Json ranks_json(const std::vector<RankGroup>& groups) {
  Json out = Json::array();
  for (const auto& g : groups) out.push_back(Json{{"group", g.name}, {"rows", g.rows}, {"spearman", g.rho}});
  return out;
}

std::string skipped_text(const std::vector<Skipped>& skipped) {
  if (skipped.empty()) return {};
  std::string out = "\nskipped rows\n";
  for (const auto& s : skipped) out += fmt::format("  {:<42} {}\n", s.id, s.reason);
  return out;
}

std::string ranks_text(const std::vector<RankGroup>& groups) {
  std::string out = "\nSpearman rank correlation, predicted vs measured time\n";
  for (const auto& g : groups) out += fmt::format("  {:<40} {:>3} rows  rho {:+.3f}\n", g.name, g.rows, g.rho);
  return out;
}

}  // namespace

Json to_json(const ValidationReport& r) {
  Json j = to_json(r.accuracy);
  j["skipped"] = skipped_json(r.skipped);
  j["rank_correlations"] = ranks_json(r.ranks);
  if (r.memory) j["memory"] = to_json(*r.memory);
  return j;
}

std::string to_text(const ValidationReport& r) {
  // A memory table alone has no time rows: its report is the memory accuracy.
  const bool time = !r.accuracy.rows.empty() || !r.memory;
  std::string out = time ? to_text(r.accuracy) : "";
  if (r.memory) {
    if (time) out += '\n';
    out += to_text(*r.memory);
  }
  return out + skipped_text(r.skipped) + (time ? ranks_text(r.ranks) : "");
}

Json to_json(const CalibrationReport& r) {
  const Json& written = r.written;
  Json fams = Json::array();
  for (const auto& f : r.fit.families) {
    fams.push_back(Json{{"arch", f.arch},
                        {"fitted_keys", f.fitted_keys},
                        {"bounds", [&] {
                           Json b = Json::array();
                           for (const auto& p : f.parameters)
                             b.push_back(Json{{"key", p.key}, {"lo", p.lo}, {"hi", p.hi},
                                              {"source", p.bound_source}});
                           return b;
                         }()},
                        {"fitted_on", f.fitted_on},
                        {"mape_pct", f.mape_pct},
                        {"constants", written.contains("families") ? written["families"].value(f.arch, Json()) : Json()}});
  }
  // One held-out table's rows: `group` names what was held out, `tag` its figures (loso, lofo).
  auto held_out_rows = [](const LosoResult& held, const char* group, const std::string& tag) {
    Json rows = Json::array();
    for (const auto& l : held.sources)
      rows.push_back(Json{{group, l.source},
                          {"rows", l.rows},
                          {"in_sample_mape_pct", l.in_sample_mape_pct},
                          {tag + "_mape_pct", l.loso_mape_pct},
                          {tag + "_worst_pct", l.loso_worst_pct},
                          {tag + "_worst_id", l.loso_worst_id}});
    return rows;
  };
  const Json loso_rows = held_out_rows(r.loso, "source", "loso");
  const Json lofo_rows = held_out_rows(r.lofo, "family", "lofo");
  Json at_bounds = Json::array();
  for (const auto& b : r.at_bounds)
    at_bounds.push_back(Json{{"arch", b.arch}, {"key", b.key}, {"value", b.value},
                             {"bound", b.bound}, {"upper", b.upper}});
  return Json{{"families", fams},
              {"calibration", written},
              {"constants_at_bounds", at_bounds},
              {"in_sample", to_json(r.in_sample)},
              {"leave_one_source_out", {{"sources", loso_rows}, {"predictions", to_json(r.loso.predictions)}}},
              {"leave_one_model_family_out", {{"families", lofo_rows}, {"predictions", to_json(r.lofo.predictions)}}},
              {"rank_correlations", ranks_json(r.ranks)},
              {"skipped", skipped_json(r.skipped)}};
}

std::string to_text(const CalibrationReport& r) {
  std::string out = "fitted constants (excluded sources:";
  for (const auto& s : r.excluded_sources) out += " " + s;
  out += r.excluded_sources.empty() ? " none" : "";
  out += ")\n";
  for (const auto& f : r.fit.families) {
    out += fmt::format("  {:<8} {} rows, in-sample MAPE {:.2f} %\n", f.arch, f.fitted_on.size(),
                       f.mape_pct);
    const ArchCalibration& c = f.constants;
    out += fmt::format(
        "           gemm_efficiency {:.3f}  fp8_gemm_efficiency {:.3f}  attention_efficiency "
        "{:.3f}\n           memory_efficiency {:.3f}  gemm_overhead_us {:.0f}  layer_overhead_us "
        "{:.0f}\n           grouped_gemm_factor {:.3f}  moe_host_us {:.0f}  moe_host_expert_us {:.0f}"
        "   (fitted: ",
        c.gemm_efficiency, c.fp8_gemm_efficiency, c.attention_efficiency, c.memory_efficiency,
        c.gemm_overhead_s * 1e6, c.layer_overhead_s * 1e6, c.grouped_gemm_factor,
        c.moe_host_s * 1e6, c.moe_host_expert_s * 1e6);
    for (size_t i = 0; i < f.fitted_keys.size(); ++i) out += (i ? ", " : "") + f.fitted_keys[i];
    out += ")\n";
    for (const auto& p : f.parameters)
      out += fmt::format("           {:<21} in [{}, {:.3f}]: {}\n", p.key, p.lo, p.hi,
                         p.bound_source);
  }
  out += "\nin sample (every row, fitted constants)\n" + to_text(r.in_sample);
  out += "\nleave one source out (fit without the source, predict it)\n";
  out += fmt::format("{:<14} {:>5} {:>12} {:>10} {:>9}  {}\n", "source", "rows", "in-sample %",
                     "LOSO %", "worst %", "worst row");
  for (const auto& l : r.loso.sources)
    out += fmt::format("{:<14} {:>5} {:>12.1f} {:>10.1f} {:>+9.1f}  {}\n", l.source, l.rows,
                       l.in_sample_mape_pct, l.loso_mape_pct, l.loso_worst_pct, l.loso_worst_id);
  const auto& lm = r.loso.predictions.megatron;
  const auto& lo = r.loso.predictions.overall;
  out += fmt::format("{:<14} {:>5} {:>12} {:>10.1f} {:>+9.1f}  {}\n", "Megatron-LM", lm.rows, "",
                     lm.mape_pct, lm.worst_pct, lm.worst_id);
  out += fmt::format("{:<14} {:>5} {:>12} {:>10.1f} {:>+9.1f}  {}\n", "overall", lo.rows, "",
                     lo.mape_pct, lo.worst_pct, lo.worst_id);
  // The same groups as in sample, over the predictions each made without its own source.
  for (size_t i = 0; i < r.loso.predictions.groups.size(); ++i) {
    const auto& g = r.loso.predictions.groups[i];
    const double in = i < r.in_sample.groups.size() ? r.in_sample.groups[i].mape_pct : 0;
    out += fmt::format("{:<32} {:>5} {:>12.1f} {:>10.1f} {:>+9.1f}  {}\n", g.source, g.rows, in,
                       g.mape_pct, g.worst_pct, g.worst_id);
  }
  out += "\nleave one model family out (fit without every row of the family, predict them)\n";
  out += fmt::format("{:<18} {:>5} {:>12} {:>10} {:>9}  {}\n", "model family", "rows",
                     "in-sample %", "LOFO %", "worst %", "worst row");
  for (const auto& l : r.lofo.sources)
    out += fmt::format("{:<18} {:>5} {:>12.1f} {:>10.1f} {:>+9.1f}  {}\n", l.source, l.rows,
                       l.in_sample_mape_pct, l.loso_mape_pct, l.loso_worst_pct, l.loso_worst_id);
  out += fmt::format("{:<18} {:>5} {:>12} {:>10.1f} {:>+9.1f}  {}\n", "overall",
                     r.lofo.predictions.overall.rows, "", r.lofo.predictions.overall.mape_pct,
                     r.lofo.predictions.overall.worst_pct, r.lofo.predictions.overall.worst_id);
  out += "\nfitted constants at a bound (missing physics; none is the goal)\n";
  if (r.at_bounds.empty()) out += "  none\n";
  for (const auto& b : r.at_bounds)
    out += fmt::format("  {:<16} {:<21} {:.3f} at its {} bound {:.3f}\n", b.arch, b.key, b.value,
                       b.upper ? "upper" : "lower", b.bound);
  return out + skipped_text(r.skipped) + ranks_text(r.ranks);
}

}  // namespace stepcast::accuracy
