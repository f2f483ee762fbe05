// A CSV document as the published-runs table is written: RFC 4180 (quoted fields, "" escapes,
// newlines inside quotes, CRLF or LF line ends). Text in, table out; no I/O.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/result.h"

namespace stepcast::accuracy {

// A CSV document (RFC 4180: quoted fields, "" escapes, newlines inside quotes).
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // Column index of `name`, or -1.
  int column(std::string_view name) const;
  // The cell of row `r` in column `name`; empty when the column or cell is missing.
  std::string cell(size_t r, std::string_view name) const;
};

Result<CsvTable> parse_csv(std::string_view text);

}  // namespace stepcast::accuracy
