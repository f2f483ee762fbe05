// Reading the cells of the published-runs table: they mix numbers with prose ("8192 (assumed
// 4h)", "~50257", "not stated"). Private to the accuracy library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepcast::accuracy::detail {

bool contains(std::string_view text, std::string_view what);
bool contains_nocase(std::string_view text, std::string_view what);
std::string trim(std::string_view s);

// A cell that states nothing: empty, "not stated", "not in table", "n/a".
bool unstated(std::string_view cell);

// The leading integer of a cell ("8192 (assumed 4h)" -> 8192, "~50257" -> 50257).
std::optional<int64_t> leading_integer(std::string_view cell);
// The leading number of a cell ("3.53", "137 (hardware FLOPs)").
std::optional<double> leading_number(std::string_view cell);

}  // namespace stepcast::accuracy::detail
