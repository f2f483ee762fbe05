#include "cell_text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace stepcast::accuracy::detail {

bool contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

bool contains_nocase(std::string_view text, std::string_view what) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return lower(text).find(lower(what)) != std::string::npos;
}

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

bool unstated(std::string_view cell) {
  const std::string t = trim(cell);
  return t.empty() || t.rfind("not", 0) == 0 || t.rfind("n/a", 0) == 0;
}

std::optional<int64_t> leading_integer(std::string_view cell) {
  std::string t = trim(cell);
  if (unstated(t)) return std::nullopt;
  size_t i = 0;
  if (i < t.size() && t[i] == '~') ++i;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(t.data() + i, t.data() + t.size(), v);
  if (ec != std::errc() || ptr == t.data() + i) return std::nullopt;
  return v;
}

std::optional<double> leading_number(std::string_view cell) {
  std::string t = trim(cell);
  if (unstated(t)) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace stepcast::accuracy::detail
