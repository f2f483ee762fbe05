// What converting a published table row by row shares between the tables (runs.cpp,
// modern_runs.cpp, moe_rows.cpp): a step's result or the reason the row is skipped, reading a
// row's cells by column name, converting a row of the modern schema, and the loop over the rows.
// Private to the accuracy library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "stepcast/accuracy/csv.h"
#include "stepcast/accuracy/hardware_map.h"
#include "stepcast/accuracy/runs.h"
#include "stepcast/accuracy/sources.h"

namespace stepcast::accuracy::detail {

// Why a row cannot become a case.
struct Skip {
  std::string reason;
};

// One step of converting a row: its result, or why the row is skipped.
template <class T>
struct Step {
  Step(T v) : value(std::move(v)) {}
  Step(Skip s) : skip(std::move(s.reason)) {}
  std::optional<T> value;
  std::string skip;
};

// The cells of one row, by column name: cell("layers").
struct CellReader {
  virtual std::string operator()(std::string_view column) const = 0;
  virtual ~CellReader() = default;
};

// What a row's case measures: its iteration time (modern-runs.csv, published-runs.csv), or its
// peak memory per GPU (memory-runs.csv).
enum class Measured { iteration_time, peak_memory };

// A row in modern-runs.csv's column names (modern_runs.cpp): dense Llama rows from their cells,
// MoE rows from their model's preset and their source's recipes. published-runs.csv's MoE rows
// come here too, their cells renamed; memory-runs.csv's rows are in the same columns plus their
// peaks.
Step<Case> convert_modern_row(const CellReader& cell, const SourceTable& sources,
                              const HardwareMap& hardware, const Catalog& catalog,
                              Measured measured = Measured::iteration_time);

// Every row of `table` through `convert(row, sources, hardware)` -> Step<Case>: the cases, and
// the rows skipped with their reasons (every row, when a built-in table does not read).
template <class Convert>
Conversion convert_each(const CsvTable& table, Convert convert) {
  const auto& sources = builtin_source_table();
  const auto& hardware = builtin_hardware_map();
  Conversion out;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    Step<Case> row = !sources    ? Step<Case>(Skip{"built-in sources.json: " + sources.error().message})
                     : !hardware ? Step<Case>(Skip{"built-in hardware_map.json: " +
                                                   hardware.error().message})
                                 : convert(r, *sources, *hardware);
    if (row.value) {
      out.cases.push_back(std::move(*row.value));
    } else {
      const std::string id = table.cell(r, "id");
      out.skipped.push_back(Skipped{id, source_of(id), row.skip});
    }
  }
  return out;
}

}  // namespace stepcast::accuracy::detail
