#include "stepcast/accuracy/memory_accuracy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "stepcast/accuracy/statistics.h"

namespace stepcast::accuracy {

MemoryPrediction predict_memory(const PreparedCase& c, const Calibration& calibration) {
  const Report r = estimate_case(c, calibration);
  MemoryPrediction p;
  p.id = c.data.id;
  p.source = c.data.source;
  p.fits = r.fits;
  // The fullest stage of each measure: what the largest over the run's ranks measures.
  for (const auto& st : r.stages) {
    const MemoryBreakdown& m = st.memory;
    p.predicted_allocated_gib = std::max(p.predicted_allocated_gib, m.allocated / kGiB);
    p.predicted_reserved_gib = std::max(p.predicted_reserved_gib, m.reserved / kGiB);
    p.capacity_gib = std::max(p.capacity_gib, m.capacity / kGiB);
  }
  const MeasuredPeak& peak = *c.data.peak;
  p.measured_allocated_gib = peak.allocated_gib;
  p.measured_reserved_gib = peak.reserved_gib;
  auto error = [](double predicted, double measured) {
    return (predicted - measured) / measured * 100;
  };
  if (peak.allocated_gib) p.allocated_error_pct = error(p.predicted_allocated_gib, *peak.allocated_gib);
  if (peak.reserved_gib) p.reserved_error_pct = error(p.predicted_reserved_gib, *peak.reserved_gib);
  return p;
}

namespace {

PeakErrors errors_of(const std::vector<const MemoryPrediction*>& rows,
                     std::optional<double> MemoryPrediction::*error) {
  PeakErrors e;
  std::vector<double> abs;
  double sum = 0;
  for (const MemoryPrediction* p : rows) {
    if (!(p->*error)) continue;
    const double v = *(p->*error);
    abs.push_back(std::fabs(v));
    sum += std::fabs(v);
    if (e.worst_id.empty() || std::fabs(v) > std::fabs(e.worst_pct)) {
      e.worst_pct = v;
      e.worst_id = p->id;
    }
  }
  e.rows = static_cast<int>(abs.size());
  if (abs.empty()) return e;
  std::sort(abs.begin(), abs.end());
  const size_t n = abs.size();
  e.median_pct = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2;
  e.p90_pct = abs[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1];
  e.mape_pct = sum / static_cast<double>(n);
  return e;
}

MemorySourceAccuracy accumulate(const std::string& name,
                                const std::vector<const MemoryPrediction*>& rows) {
  return {name, static_cast<int>(rows.size()),
          errors_of(rows, &MemoryPrediction::allocated_error_pct),
          errors_of(rows, &MemoryPrediction::reserved_error_pct)};
}

}  // namespace

MemoryAccuracy summarise_memory(std::vector<MemoryPrediction> rows) {
  MemoryAccuracy acc;
  acc.rows = std::move(rows);
  std::vector<std::string> order;
  std::map<std::string, std::vector<const MemoryPrediction*>> by_source;
  std::vector<const MemoryPrediction*> all;
  for (const auto& p : acc.rows) {
    if (!by_source.count(p.source)) order.push_back(p.source);
    by_source[p.source].push_back(&p);
    all.push_back(&p);
  }
  for (const auto& s : order) acc.sources.push_back(accumulate(s, by_source[s]));
  acc.overall = accumulate("overall", all);
  return acc;
}

MemoryAccuracy evaluate_memory(const std::vector<PreparedCase>& cases,
                               const Calibration& calibration) {
  std::vector<MemoryPrediction> rows;
  for (const auto& c : cases)
    if (c.data.peak) rows.push_back(predict_memory(c, calibration));
  return summarise_memory(std::move(rows));
}

namespace {

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

Json errors_json(const PeakErrors& e) {
  return Json{{"rows", e.rows},         {"median_pct", e.median_pct}, {"p90_pct", e.p90_pct},
              {"mape_pct", e.mape_pct}, {"worst_pct", e.worst_pct},   {"worst_id", e.worst_id}};
}

Json source_json(const MemorySourceAccuracy& s) {
  return Json{{"source", s.source},
              {"rows", s.rows},
              {"allocated", errors_json(s.allocated)},
              {"reserved", errors_json(s.reserved)}};
}

std::string cell(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string errors_text(const PeakErrors& e) {
  if (e.rows == 0) return fmt::format("{:>4} {:>7} {:>7} {:>8}  {}", 0, "-", "-", "-", "");
  return fmt::format("{:>4} {:>7.1f} {:>7.1f} {:>+8.1f}  {}", e.rows, e.median_pct, e.p90_pct,
                     e.worst_pct, e.worst_id);
}

}  // namespace

Json to_json(const MemoryAccuracy& a) {
  Json rows = Json::array();
  for (const auto& p : a.rows)
    rows.push_back(Json{{"id", p.id},
                        {"source", p.source},
                        {"measured_allocated_gib", optional_number(p.measured_allocated_gib)},
                        {"predicted_allocated_gib", p.predicted_allocated_gib},
                        {"allocated_error_pct", optional_number(p.allocated_error_pct)},
                        {"measured_reserved_gib", optional_number(p.measured_reserved_gib)},
                        {"predicted_reserved_gib", p.predicted_reserved_gib},
                        {"reserved_error_pct", optional_number(p.reserved_error_pct)},
                        {"capacity_gib", p.capacity_gib},
                        {"fits", p.fits}});
  Json sources = Json::array();
  for (const auto& s : a.sources) sources.push_back(source_json(s));
  return Json{{"rows", rows}, {"sources", sources}, {"overall", source_json(a.overall)}};
}

std::string to_text(const MemoryAccuracy& a) {
  std::string out = fmt::format("peak memory per GPU, GiB (allocated: live tensors; reserved: what "
                                "the caching allocator holds)\n{:<58} {:>8} {:>8} {:>7}  {:>8} "
                                "{:>8} {:>7}  {}\n",
                                "id", "alloc", "pred", "err %", "reserved", "pred", "err %",
                                "fits");
  for (const auto& p : a.rows)
    out += fmt::format("{:<58} {:>8} {:>8.2f} {:>7}  {:>8} {:>8.2f} {:>7}  {}\n", p.id,
                       cell(p.measured_allocated_gib, "{:.2f}"), p.predicted_allocated_gib,
                       cell(p.allocated_error_pct, "{:+.1f}"),
                       cell(p.measured_reserved_gib, "{:.2f}"), p.predicted_reserved_gib,
                       cell(p.reserved_error_pct, "{:+.1f}"), p.fits ? "yes" : "no");
  out += fmt::format("\n{:<14} {:>4}  allocated: {:>4} {:>7} {:>7} {:>8}  {:<40}  reserved: {:>4} "
                     "{:>7} {:>7} {:>8}  {}\n",
                     "source", "rows", "rows", "median", "p90", "worst %", "worst row", "rows",
                     "median", "p90", "worst %", "worst row");
  auto line = [&](const MemorySourceAccuracy& s) {
    out += fmt::format("{:<14} {:>4}  allocated: {:<62}  reserved: {}\n", s.source, s.rows,
                       errors_text(s.allocated), errors_text(s.reserved));
  };
  for (const auto& s : a.sources) line(s);
  line(a.overall);
  return out;
}

}  // namespace stepcast::accuracy
