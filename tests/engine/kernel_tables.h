// Reading the measured kernel tables of tests/validation/gemm/ (CSV with a header row, quoted
// cells may hold commas): shared by the GEMM shape and attention kernel tests.
#pragma once

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace stepcast::test {

inline std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

inline std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  const std::vector<std::string> header = csv_cells(line);
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = csv_cells(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// A numeric cell, 0 where absent or empty.
inline double num(const std::map<std::string, std::string>& r, const std::string& key) {
  const auto it = r.find(key);
  return it == r.end() || it->second.empty() ? 0 : std::stod(it->second);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace stepcast::test
