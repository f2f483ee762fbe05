// Helpers shared by the engine tests: scenarios from JSON text against the built-in presets.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "stepcast/estimate.h"
#include "stepcast/report.h"

namespace stepcast::test {

inline const Catalog& catalog() { return builtin_catalog(); }

inline Scenario scenario(const std::string& json) {
  auto s = parse_scenario(json, catalog());
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message) << "\n" << json;
  return s.ok() ? s.value() : Scenario{};
}

// A scenario document: its plan, model and cluster (Llama 3 70B on 8 DGX H100 unless given), and
// `extra` top-level keys (", \"seq_len\": 4096").
inline std::string doc(const std::string& plan,
                       const std::string& model = R"("llama3-70b")",
                       const std::string& cluster = R"({"node": "dgx-h100", "nodes": 8})",
                       const std::string& extra = "") {
  return R"({"model": )" + model + R"(, "cluster": )" + cluster + R"(, "plan": )" + plan + extra +
         "}";
}

inline Error error_of(const std::string& json) {
  auto s = parse_scenario(json, catalog());
  EXPECT_FALSE(s.ok()) << "expected an error for " << json;
  return s.ok() ? Error{} : s.error();
}

// A Llama-2-7B-like model, the worked example of census_test.cpp.
inline ModelSpec llama2_7b_like() {
  ModelSpec m;
  m.name = "llama2-7b-like";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn_hidden = 11008;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.ffn_type = FfnType::swiglu;
  m.position = Position::rope;
  m.tied_embeddings = false;
  m.norm = Norm::rmsnorm;
  m.bias = false;
  return m;
}

// A file of the source tree ("docs/scenario.md"), or of anywhere by its full path.
inline std::string source_file(const std::filesystem::path& path) {
  std::ifstream in(std::filesystem::path(STEPCAST_SOURCE_DIR) / path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The page's example scenarios (web/examples/scenarios, by name) and the golden reports'
// (tests/engine/reports/scenarios.jsonl, one a line).
inline std::vector<std::string> example_scenarios() {
  const std::filesystem::path root = STEPCAST_SOURCE_DIR;
  std::vector<std::string> out;
  std::vector<std::filesystem::path> examples;
  for (const auto& entry : std::filesystem::directory_iterator(root / "web/examples/scenarios"))
    examples.push_back(entry.path());
  std::sort(examples.begin(), examples.end());
  for (const auto& path : examples) out.push_back(source_file(path));
  std::istringstream lines(source_file("tests/engine/reports/scenarios.jsonl"));
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// A key table set (report_schema(), traffic_schema()) names exactly the keys a JSON holds, table
// by table: collect_keys fails on a key of `object` missing from `table` (following `of` into
// nested tables) and gathers the keys seen; expect_every_key_seen fails on a table key that no
// JSON held.
inline void collect_keys(const Json& object, const std::string& table, const Json& schema,
                         std::map<std::string, std::set<std::string>>& seen) {
  ASSERT_TRUE(schema.contains(table)) << table;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const auto& rows = schema[table];
    const auto row = std::find_if(rows.begin(), rows.end(),
                                  [&](const Json& r) { return r["name"] == it.key(); });
    ASSERT_NE(row, rows.end()) << table << " has no key " << it.key();
    seen[table].insert(it.key());
    if (!row->contains("of") || it->is_null()) continue;
    const std::string of = (*row)["of"];
    if (row->value("array", false)) {
      for (const auto& element : *it) collect_keys(element, of, schema, seen);
    } else {
      collect_keys(*it, of, schema, seen);
    }
  }
}

inline void expect_every_key_seen(const Json& schema,
                                  const std::map<std::string, std::set<std::string>>& seen,
                                  const std::string& what) {
  for (auto it = schema.begin(); it != schema.end(); ++it)
    for (const auto& row : *it) {
      const auto table = seen.find(it.key());
      EXPECT_TRUE(table != seen.end() && table->second.count(row["name"]))
          << it.key() << "." << row["name"] << " is in no " << what;
    }
}

}  // namespace stepcast::test
