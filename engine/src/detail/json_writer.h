// A streaming JSON writer into one string: the text nlohmann's dump() gives for the same tree
// (same number formatting, same escaping, same indentation), without building the tree. Keys
// must be written in the order dump() prints them (nlohmann::json sorts them). Private to the
// engine: reports are written with it (report_writer.cpp), thousands of values without one
// allocation each.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "stepcast/catalog.h"

namespace stepcast::detail {

class JsonWriter {
 public:
  // indent < 0: one line, as dump(-1); otherwise dump(indent).
  JsonWriter(std::string& out, int indent) : out_(out), indent_(indent) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // `name`: one of the engine's own keys, plain ASCII (nothing to escape).
  void key(std::string_view name) {
    separate();
    // One append, not three: keys are a third of a summary report's characters.
    std::array<char, 64> buffer;
    if (name.size() + 4 > buffer.size()) {
      out_ += '"';
      out_ += name;
      out_ += indent_ < 0 ? "\":" : "\": ";
    } else {
      char* p = buffer.data();
      *p++ = '"';
      p = std::copy(name.begin(), name.end(), p);
      *p++ = '"';
      *p++ = ':';
      if (indent_ >= 0) *p++ = ' ';
      out_.append(buffer.data(), p);
    }
    after_key_ = true;
  }

  void value(double v) {
    separate();
    if (!std::isfinite(v)) {
      non_finite_ = true;
      out_ += "null";
      return;
    }
    std::array<char, 64> buffer;
    char* end = whole_number(buffer.data(), v);
    if (!end) end = nlohmann::detail::to_chars(buffer.data(), buffer.data() + buffer.size(), v);
    out_.append(buffer.data(), end);
  }
  void value(int64_t v) {
    separate();
    const fmt::format_int digits(v);  // no format string to interpret
    out_.append(digits.data(), digits.size());
  }
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(bool v) {
    separate();
    out_ += v ? "true" : "false";
  }
  void value(std::string_view s) {
    separate();
    string(s);
  }
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  // Any nlohmann value (small parts built as trees elsewhere, such as the resolved plan).
  void value(const Json& j);

  template <typename T>
  void member(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

  // Whether a number written was NaN or infinite (written as null, as dump() does).
  bool non_finite() const { return non_finite_; }

 private:
  void open(char bracket) {
    separate();
    out_ += bracket;
    ++depth_;
    first_ = true;
  }
  void close(char bracket) {
    --depth_;
    if (!first_) newline();  // an empty container stays "[]" / "{}"
    out_ += bracket;
    first_ = false;
  }
  // Before a value or key: the comma after the previous element, and the line break.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ == 0) return;
    if (!first_) out_ += ',';
    first_ = false;
    newline();
  }
  void newline() {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(indent_) * static_cast<size_t>(depth_), ' ');
  }
  // A whole number below 10^15 (counts, bytes, parameters: a third of a report's numbers) as
  // dump() prints it, its integer digits and ".0", without Grisu2's digit search: below 10^15 a
  // double's spacing is at most 1/8, so its shortest round-trip digits are the integer's own and
  // dump() writes them in fixed notation (exponents up to 15). Null when `v` is not one.
  static char* whole_number(char* out, double v) {
    if (!(std::fabs(v) < 1e15) || v != std::trunc(v)) return nullptr;
    if (v == 0) {
      if (std::signbit(v)) *out++ = '-';
    }
    const fmt::format_int digits(static_cast<int64_t>(v));
    out = std::copy(digits.data(), digits.data() + digits.size(), out);
    *out++ = '.';
    *out++ = '0';
    return out;
  }
  // Plain printable ASCII is copied; anything else is escaped by nlohmann itself.
  void string(std::string_view s);

  std::string& out_;
  int indent_;
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
  bool non_finite_ = false;
};

}  // namespace stepcast::detail
