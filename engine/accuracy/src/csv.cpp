#include "stepcast/accuracy/csv.h"

#include <fmt/format.h>

namespace stepcast::accuracy {

int CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

std::string CsvTable::cell(size_t r, std::string_view name) const {
  const int c = column(name);
  if (c < 0 || r >= rows.size() || static_cast<size_t>(c) >= rows[r].size()) return {};
  return rows[r][static_cast<size_t>(c)];
}

Result<CsvTable> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  size_t line = 1;
  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    const bool blank = record.size() == 1 && record[0].empty();
    if (!blank) records.push_back(std::move(record));
    record.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (ch == ',') {
      end_field();
    } else if (ch == '\n') {
      end_record();
      ++line;
    } else if (ch == '\r') {
      // CRLF line ends
    } else {
      field += ch;
      field_started = true;
    }
  }
  if (quoted)
    return Error{ErrorCode::parse_error, "", fmt::format("CSV: unterminated quote at line {}", line)};
  if (!field.empty() || !record.empty()) end_record();
  if (records.empty()) return Error{ErrorCode::parse_error, "", "CSV: no header row"};
  CsvTable t;
  t.header = std::move(records.front());
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size())
      return Error{ErrorCode::parse_error, "",
                   fmt::format("CSV: record {} has {} fields, the header has {}", r + 1,
                               records[r].size(), t.header.size())};
    t.rows.push_back(std::move(records[r]));
  }
  return t;
}

}  // namespace stepcast::accuracy
