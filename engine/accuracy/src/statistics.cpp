#include "stepcast/accuracy/statistics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "stepcast/accuracy/model_family.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/estimate.h"

namespace stepcast::accuracy {

Report estimate_case(const PreparedCase& c, const Calibration& calibration) {
  Scenario s = c.scenario;
  s.calibration = calibration;
  return estimate(s);
}

Prediction predict(const PreparedCase& c, const Calibration& calibration) {
  const Scenario& s = c.scenario;
  const Report r = estimate_case(c, calibration);
  Prediction p;
  p.id = c.data.id;
  p.source = c.data.source;
  p.measured_s = c.data.measured_iter_time_s;
  p.predicted_s = r.iteration_time_s;
  p.error_pct = (p.predicted_s - p.measured_s) / p.measured_s * 100;
  if (!std::isfinite(p.error_pct)) p.error_pct = 1e9;
  p.family = s.cluster.groups.front().gpu.arch;
  p.framework = s.plan.framework;
  p.parameters = r.parameters;
  p.moe = s.model.moe.enabled();
  p.model_family = std::string(name_of(model_family_of(s.model)));
  p.precision = to_string(s.plan.precision);
  return p;
}

namespace {

SourceAccuracy accumulate(const std::string& name, const std::vector<const Prediction*>& rows) {
  SourceAccuracy a;
  a.source = name;
  a.rows = static_cast<int>(rows.size());
  double sum = 0;
  for (const Prediction* p : rows) {
    sum += std::fabs(p->error_pct);
    if (a.worst_id.empty() || std::fabs(p->error_pct) > std::fabs(a.worst_pct)) {
      a.worst_pct = p->error_pct;
      a.worst_id = p->id;
    }
  }
  a.mape_pct = rows.empty() ? 0 : sum / static_cast<double>(rows.size());
  return a;
}

}  // namespace

Accuracy summarise(std::vector<Prediction> rows) {
  Accuracy acc;
  acc.rows = std::move(rows);
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Prediction*>> by_source;
  std::vector<const Prediction*> all, megatron;
  for (const auto& p : acc.rows) {
    if (!by_source.count(p.source)) order.push_back(p.source);
    by_source[p.source].push_back(&p);
    all.push_back(&p);
    if (is_megatron_source(p.source)) megatron.push_back(&p);
  }
  for (const auto& s : order) acc.sources.push_back(accumulate(s, by_source[s]));
  const auto& table = builtin_source_table();
  acc.megatron = accumulate(table ? table->megatron_lm_name() : "Megatron-LM", megatron);
  acc.overall = accumulate("overall", all);
  std::vector<std::string> families;
  std::map<std::string, std::vector<const Prediction*>> by_family;
  std::vector<const Prediction*> megatron_family, megatron_dense, blackwell, small, moe, dense;
  for (const auto& p : acc.rows) {
    if (!by_family.count(p.family)) families.push_back(p.family);
    by_family[p.family].push_back(&p);
    if (p.framework.rfind("megatron-", 0) == 0 && p.framework != "megatron-deepspeed") {
      megatron_family.push_back(&p);
      if (!p.moe) megatron_dense.push_back(&p);
    }
    if (p.family.rfind("blackwell", 0) == 0) blackwell.push_back(&p);
    if (p.parameters > 0 && p.parameters < 3e9) small.push_back(&p);
    (p.moe ? moe : dense).push_back(&p);
  }
  for (const auto& f : families) acc.groups.push_back(accumulate("GPU family " + f, by_family[f]));
  acc.groups.push_back(accumulate("Megatron software", megatron_family));
  // The training-stacks goal was set on dense rows, before the MoE rows joined.
  acc.groups.push_back(accumulate("Megatron software, dense rows", megatron_dense));
  acc.groups.push_back(accumulate("Blackwell GPUs", blackwell));
  acc.groups.push_back(accumulate("models under 3 B", small));
  acc.groups.push_back(accumulate("MoE rows", moe));
  acc.groups.push_back(accumulate("dense rows", dense));
  // Per model family and per precision on Blackwell (issue 34's figures), in a fixed order.
  for (std::string_view family : enum_names<ModelFamily>()) {
    std::vector<const Prediction*> rows;
    for (const auto& p : acc.rows)
      if (p.model_family == family) rows.push_back(&p);
    if (!rows.empty())
      acc.groups.push_back(accumulate(fmt::format("model family {}", family), rows));
  }
  for (std::string_view precision : EnumNames<Precision>::values) {
    std::vector<const Prediction*> rows;
    for (const Prediction* p : blackwell)
      if (p->precision == precision) rows.push_back(p);
    if (!rows.empty())
      acc.groups.push_back(accumulate(fmt::format("Blackwell {}", precision), rows));
  }
  return acc;
}

Accuracy evaluate(const std::vector<PreparedCase>& cases, const Calibration& calibration) {
  std::vector<Prediction> rows;
  rows.reserve(cases.size());
  for (const auto& c : cases) rows.push_back(predict(c, calibration));
  return summarise(std::move(rows));
}

namespace {

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    ma += ra[i];
    mb += rb[i];
  }
  ma /= n;
  mb /= n;
  double cov = 0, va = 0, vb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    cov += (ra[i] - ma) * (rb[i] - mb);
    va += (ra[i] - ma) * (ra[i] - ma);
    vb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (va <= 0 || vb <= 0) return std::nullopt;
  return cov / std::sqrt(va * vb);
}

std::vector<RankGroup> rank_correlations(const std::vector<PreparedCase>& cases,
                                         const Accuracy& accuracy) {
  std::map<std::string, const Prediction*> by_id;
  for (const auto& p : accuracy.rows) by_id[p.id] = &p;
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  auto add = [&](const std::string& name, const Prediction* p) {
    if (!groups.count(name)) order.push_back(name);
    groups[name].first.push_back(p->measured_s);
    groups[name].second.push_back(p->predicted_s);
  };
  for (const auto& c : cases) {
    auto it = by_id.find(c.data.id);
    if (it == by_id.end()) continue;
    add(c.data.source, it->second);
    add(c.data.source + " " + c.scenario.model.name, it->second);
  }
  std::vector<RankGroup> out;
  for (const auto& name : order) {
    const auto& [measured, predicted] = groups[name];
    const bool per_source = name.find(' ') == std::string::npos;
    // A source with several rows, or one model the source measures several ways.
    if (measured.size() < (per_source ? 3u : 2u)) continue;
    if (!per_source && groups[source_of(name.substr(0, name.find(' ')))].first.size() ==
                           measured.size())
      continue;  // the whole source is this one model: already reported
    if (auto rho = spearman(measured, predicted))
      out.push_back(RankGroup{name, static_cast<int>(measured.size()), *rho});
  }
  return out;
}

}  // namespace stepcast::accuracy
