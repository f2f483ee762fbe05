// The data tables of the accuracy library (engine/accuracy/*.json), compiled in by
// embed_data.cmake, and what their readers share. Private to the accuracy library.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/json_reader.h"  // the engine's checked JSON reader (engine/src/scenario/)
#include "stepcast/result.h"

namespace stepcast::accuracy::detail {

std::string_view sources_json();       // engine/accuracy/sources.json
std::string_view hardware_map_json();  // engine/accuracy/hardware_map.json

// A table's text as JSON, or a parse error naming the table. Never throws.
inline Result<Json> parse_table(std::string_view text, std::string_view name) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Error{ErrorCode::parse_error, "", fmt::format("{}: not valid JSON", name)};
  return doc;
}

// Whether `key` is there and null: a table states every key of an entry, null for "not set".
inline bool is_null(const stepcast::detail::JsonReader& r, std::string_view key) {
  return r.has(key) && r.raw(key)->is_null();
}

// The value of a required key, or nullptr (and the reader's error) when it is absent.
inline const Json* required(stepcast::detail::JsonReader& r, std::string_view key) {
  const Json* v = r.raw(key);
  if (!v) r.fail(ErrorCode::missing_key, r.field(key), fmt::format("{} is required", r.field(key)));
  return v;
}

// A list of strings: required, possibly empty.
inline std::vector<std::string> strings(stepcast::detail::JsonReader& r, std::string_view key) {
  std::vector<std::string> out;
  const Json* v = required(r, key);
  if (!v) return out;
  for (size_t i = 0; v->is_array() && i < v->size(); ++i)
    if ((*v)[i].is_string()) out.push_back((*v)[i].get<std::string>());
  if (!v->is_array() || out.size() != v->size())
    r.fail(ErrorCode::type_error, r.field(key),
           fmt::format("{}={} must be a list of strings", r.field(key), v->dump()));
  return out;
}

// The list `key` of a table, each entry read by `read(entry, path)`; the first error, if any.
template <class Entry, class Read>
std::optional<Error> read_list(stepcast::detail::JsonReader& top, std::string_view key, Read read,
                               std::vector<Entry>& out) {
  const Json* list = required(top, key);
  if (!top.ok()) return top.error();
  if (!list->is_array())
    return Error{ErrorCode::type_error, std::string(key),
                 fmt::format("{} must be a list of objects", key)};
  for (size_t i = 0; i < list->size(); ++i) {
    auto entry = read((*list)[i], fmt::format("{}[{}]", key, i));
    if (!entry) return entry.error();
    out.push_back(std::move(entry).value());
  }
  return std::nullopt;
}

}  // namespace stepcast::accuracy::detail
