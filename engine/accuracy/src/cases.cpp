#include "stepcast/accuracy/cases.h"

#include <fmt/format.h>

#include "cell_text.h"
#include "stepcast/accuracy/sources.h"
#include "stepcast/limits.h"

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
  j["measured_iter_time_s"] = c.measured_iter_time_s;
  j["iter_time"] = c.iter_time;
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
  auto t = j.find("measured_iter_time_s");
  if (t == j.end() || !t->is_number() || t->get<double>() <= 0)
    return Error{ErrorCode::missing_key, c.id + ".measured_iter_time_s",
                 c.id + ": measured_iter_time_s must be a positive number"};
  c.measured_iter_time_s = t->get<double>();
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

Result<std::vector<PreparedCase>> prepare(const std::vector<Case>& cases, const Catalog& catalog) {
  std::vector<PreparedCase> out;
  for (const auto& c : cases) {
    auto s = scenario_from_json(c.scenario, catalog);
    if (!s) return Error{s.error().code, c.id + ": " + s.error().path,
                         c.id + ": " + s.error().message};
    out.push_back(PreparedCase{c, std::move(s).value()});
  }
  return out;
}

}  // namespace stepcast::accuracy
