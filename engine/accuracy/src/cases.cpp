#include "stepcast/accuracy/cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "cell_text.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/limits.h"
#include "stepcast/memory.h"

namespace stepcast::accuracy {

using detail::trim;

nlohmann::ordered_json to_json(const Case& c) {
  // Key order for people reading the file: identity, the measurement, its provenance, then the
  // scenario (name, model, cluster, plan).
  using Ordered = nlohmann::ordered_json;
  Ordered scenario = Ordered::object();
  for (const char* k : {"name", "model", "cluster", "plan", "seq_len"})
    if (c.scenario.is_object() && c.scenario.contains(k))
      scenario[k] = Ordered::parse(c.scenario[k].dump(), nullptr, false);
  Ordered j = Ordered::object();
  j["id"] = c.id;
  j["source"] = c.source;
  if (c.measured_iter_time_s > 0) {
    j["measured_iter_time_s"] = c.measured_iter_time_s;
    j["iter_time"] = c.iter_time;
  }
  if (c.peak) {
    if (c.peak->allocated_gib) j["measured_peak_allocated_gib"] = *c.peak->allocated_gib;
    if (c.peak->reserved_gib) j["measured_peak_reserved_gib"] = *c.peak->reserved_gib;
    j["peak_metric"] = c.peak->metric;
  }
  j["citation"] = c.citation;
  j["locator"] = c.locator;
  j["assumptions"] = c.assumptions;
  j["scenario"] = std::move(scenario);
  return j;
}

Result<Case> case_from_json(const Json& j) {
  if (!j.is_object()) return Error{ErrorCode::type_error, "", "a case must be a JSON object"};
  auto str = [&](const char* key, std::string& into) -> bool {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    into = it->get<std::string>();
    return true;
  };
  Case c;
  if (!str("id", c.id))
    return Error{ErrorCode::missing_key, "id", "a case needs a string \"id\""};
  if (!str("source", c.source)) c.source = source_of(c.id);
  str("citation", c.citation);
  str("locator", c.locator);
  str("iter_time", c.iter_time);
  // A measured quantity: present, a number, above zero (what the source measured, not a guess).
  auto positive = [&](const char* key, std::optional<double>& into) -> std::optional<Error> {
    auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (!it->is_number() || !(it->get<double>() > 0))
      return Error{ErrorCode::out_of_range, c.id + "." + key,
                   fmt::format("{}.{} = {}: a measured value must be a positive number", c.id, key,
                               printable(it->dump(), 40))};
    into = it->get<double>();
    return std::nullopt;
  };
  std::optional<double> time, allocated, reserved;
  for (auto [key, into] : {std::pair{"measured_iter_time_s", &time},
                           std::pair{"measured_peak_allocated_gib", &allocated},
                           std::pair{"measured_peak_reserved_gib", &reserved}})
    if (auto e = positive(key, *into)) return *e;
  if (!time && !allocated && !reserved)
    return Error{ErrorCode::missing_key, c.id + ".measured_iter_time_s",
                 c.id + ": a case needs measured_iter_time_s, or a measured peak "
                        "(measured_peak_allocated_gib, measured_peak_reserved_gib)"};
  c.measured_iter_time_s = time.value_or(0);
  if (allocated || reserved) {
    c.peak = MeasuredPeak{allocated, reserved, ""};
    str("peak_metric", c.peak->metric);
  }
  auto a = j.find("assumptions");
  if (a != j.end() && a->is_array())
    for (const auto& s : *a)
      if (s.is_string()) c.assumptions.push_back(s.get<std::string>());
  auto s = j.find("scenario");
  if (s == j.end() || !s->is_object())
    return Error{ErrorCode::missing_key, c.id + ".scenario", c.id + ": scenario object missing"};
  c.scenario = *s;
  return c;
}

Result<std::vector<Case>> parse_cases_jsonl(std::string_view text) {
  std::vector<Case> cases;
  size_t start = 0, line = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    const std::string_view l = text.substr(start, end - start);
    start = end + 1;
    if (trim(l).empty()) {
      if (end == text.size()) break;
      continue;
    }
    auto j = parse_json(l, "the line");  // bounded: a cases file is input like any other
    if (!j)
      return Error{ErrorCode::parse_error, "",
                   fmt::format("cases line {}: {}", line, j.error().message)};
    auto c = case_from_json(*j);
    if (!c) return Error{c.error().code, c.error().path,
                         fmt::format("cases line {}: {}", line, c.error().message)};
    cases.push_back(std::move(c).value());
    if (end == text.size()) break;
  }
  return cases;
}

std::string to_jsonl(const std::vector<Case>& cases) {
  std::string out;
  for (const auto& c : cases) out += to_json(c).dump() + "\n";
  return out;
}

namespace {

// A measured peak the run cannot have had: not above zero, reserved below allocated (the
// allocator holds every byte it hands out), or above the memory of every GPU the run used.
std::optional<Error> peak_error(const Case& c, const Scenario& s) {
  double capacity_gib = 0;
  for (const auto& g : s.cluster.groups)
    capacity_gib = std::max(capacity_gib, g.gpu.memory_bytes / kGiB);
  const MeasuredPeak& peak = *c.peak;
  for (auto [key, value] : {std::pair{"measured_peak_allocated_gib", peak.allocated_gib},
                            std::pair{"measured_peak_reserved_gib", peak.reserved_gib}}) {
    if (!value) continue;
    const std::string path = c.id + "." + key;
    if (!(*value > 0))
      return Error{ErrorCode::out_of_range, path,
                   fmt::format("{} = {}: a measured peak must be above zero", path, *value)};
    if (*value > capacity_gib)
      return Error{ErrorCode::out_of_range, path,
                   fmt::format("{} = {}: above the {} GiB of memory the run's GPU has", path,
                               *value, capacity_gib)};
  }
  if (peak.allocated_gib && peak.reserved_gib && *peak.reserved_gib < *peak.allocated_gib)
    return Error{ErrorCode::out_of_range, c.id + ".measured_peak_reserved_gib",
                 fmt::format("{}.measured_peak_reserved_gib = {}: below the peak allocated ({} "
                             "GiB); the allocator reserves every byte it allocates",
                             c.id, *peak.reserved_gib, *peak.allocated_gib)};
  return std::nullopt;
}

}  // namespace

Result<std::vector<PreparedCase>> prepare(const std::vector<Case>& cases, const Catalog& catalog) {
  std::vector<PreparedCase> out;
  for (const auto& c : cases) {
    auto s = scenario_from_json(c.scenario, catalog);
    if (!s) return Error{s.error().code, c.id + ": " + s.error().path,
                         c.id + ": " + s.error().message};
    if (c.peak)
      if (auto e = peak_error(c, *s)) return *e;
    out.push_back(PreparedCase{c, std::move(s).value()});
  }
  return out;
}

std::vector<PreparedCase> time_cases(const std::vector<PreparedCase>& cases) {
  std::vector<PreparedCase> out;
  for (const auto& c : cases)
    if (c.data.measured_iter_time_s > 0) out.push_back(c);
  return out;
}

std::vector<PreparedCase> memory_cases(const std::vector<PreparedCase>& cases) {
  std::vector<PreparedCase> out;
  for (const auto& c : cases)
    if (c.data.peak) out.push_back(c);
  return out;
}

}  // namespace stepcast::accuracy
