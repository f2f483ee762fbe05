// A number written plainly in text the engine reads (tables of benchmarks): digits, an optional
// sign, fraction and exponent; no spaces, hex, "inf" or "nan". Private.
//
// strtod after the check: the WebAssembly build's libc++ (Emscripten 3.1.6) has no
// std::from_chars for double.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

namespace stepcast::detail {

inline bool plain_number(std::string_view s, double& v) {
  if (s.empty() || s.size() > 64) return false;
  const char first = s.front();
  if (!((first >= '0' && first <= '9') || first == '-' || first == '.')) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+'))
      return false;
  const std::string text(s);
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(v);
}

}  // namespace stepcast::detail
