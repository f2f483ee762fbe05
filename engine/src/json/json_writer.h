// A streaming JSON writer into one string: the text nlohmann's dump() gives for the same tree
// (same number formatting, same escaping, same indentation), without building the tree. Keys
// must be written in the order dump() prints them (nlohmann::json sorts them). Private to the
// engine: reports are written with it (report_writer.cpp), thousands of values without one
// allocation each. The string is written through a position of the writer's own (one capacity
// check per piece, fixed-size copies inlined) and cut to it by finish().
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"

namespace stepcast::detail {

// A key's name. A string literal's length is taken at compile time: code compiled for size
// (the WebAssembly build, ../CMakeLists.txt) otherwise calls strlen for every key of every
// report, a few per cent of an estimate there.
struct KeyName {
  template <size_t N>
  consteval KeyName(const char (&literal)[N]) : text(literal, N - 1) {}
  KeyName(std::string_view name) : text(name) {}
  KeyName(const std::string& name) : text(name) {}
  std::string_view text;
};

class JsonWriter {
 public:
  // indent < 0: one line, as dump(-1); otherwise dump(indent).
  JsonWriter(std::string& out, int indent) : out_(out), indent_(indent), pos_(out.size()) {
    out_.resize(pos_ + 512);  // (resize fills: grow by what is written, not to capacity)
  }
  // The string holds what was written, and nothing after it.
  void finish() { out_.resize(pos_); }

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // `name`: one of the engine's own keys, plain ASCII (nothing to escape).
  void key(KeyName key_name) {
    const std::string_view name = key_name.text;
    separate();
    if (tracking_) frames_.back().key = name;
    char* p = room(name.size() + 4);
    *p++ = '"';
    std::memcpy(p, name.data(), name.size());
    p += name.size();
    *p++ = '"';
    *p++ = ':';
    if (indent_ >= 0) *p++ = ' ';
    pos_ = static_cast<size_t>(p - out_.data());
    after_key_ = true;
  }

  void value(double v) {
    separate();
    if (!std::isfinite(v)) {
      if (tracking_ && !non_finite_) first_non_finite_ = path();
      non_finite_ = true;
      put("null");
      return;
    }
    char* p = room(64);
    char* end = whole_number(p, v);
    if (!end) end = shortest(p, v);
    pos_ = static_cast<size_t>(end - out_.data());
  }
  void value(int64_t v) {
    separate();
    const fmt::format_int digits(v);  // no format string to interpret
    put(std::string_view(digits.data(), digits.size()));
  }
  void value(int v) { value(static_cast<int64_t>(v)); }
  void value(bool v) {
    separate();
    // (KeyName for its compile-time length, as for keys: no strlen at -Oz.)
    put(v ? KeyName("true").text : KeyName("false").text);
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
  void member(KeyName name, const T& v) {
    key(name);
    value(v);
  }

  // Whether a number written was NaN or infinite (written as null, as dump() does).
  bool non_finite() const { return non_finite_; }

  // Keep track of where the writer is, so that the first NaN or infinity can be named by its
  // path ("breakdown_s.bubble", "stages[0].memory_bytes.total"): for the rare report that holds
  // one, written a second time to say where.
  void track_path() { tracking_ = true; }
  const std::string& first_non_finite_path() const { return first_non_finite_; }

 private:
  void open(char bracket) {
    separate();
    put(bracket);
    ++depth_;
    first_ = true;
    if (tracking_) frames_.push_back({bracket == '[', {}, -1});
  }
  void close(char bracket) {
    if (tracking_) frames_.pop_back();
    --depth_;
    if (!first_) newline();  // an empty container stays "[]" / "{}"
    put(bracket);
    first_ = false;
  }
  // Before a value or key: the comma after the previous element, and the line break.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (depth_ == 0) return;
    if (tracking_ && frames_.back().array) ++frames_.back().index;
    if (!first_) put(',');
    first_ = false;
    newline();
  }
  void newline() {
    if (indent_ < 0) return;
    const size_t n = static_cast<size_t>(indent_) * static_cast<size_t>(depth_);
    char* p = room(n + 1);
    *p = '\n';
    std::memset(p + 1, ' ', n);
    pos_ += n + 1;
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
  // nlohmann's shortest digits of v (grisu2, about 300 instructions a number), through a small
  // table of the numbers written last, by their bits: a report repeats its values (the middle
  // stages of a pipeline are often one stage's copies, and their reports' every time and byte
  // count with them), and the same bits always give the same text. Half of a summary report's
  // instructions were these conversions.
  char* shortest(char* p, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    Formatted& f = formatted_[(bits * 0x9E3779B97F4A7C15ull) >> (64 - kFormattedBits)];
    if (f.size == 0 || f.bits != bits) {
      char* end = nlohmann::detail::to_chars(p, p + 64, v);
      const size_t n = static_cast<size_t>(end - p);
      if (n > sizeof f.text) return end;  // (never: 24 characters at most)
      f.bits = bits;
      f.size = static_cast<uint8_t>(n);
      std::memcpy(f.text, p, n);
      return end;
    }
    std::memcpy(p, f.text, sizeof f.text);  // (room(64) made space: a fixed-size copy)
    return p + f.size;
  }
  // Room for `n` more characters at the write position (the string grows by doubling).
  char* room(size_t n) {
    if (pos_ + n > out_.size()) grow(n);  // rare: the test inlined, the growth not
    return out_.data() + pos_;
  }
  void grow(size_t n);
  void put(std::string_view text) {
    std::memcpy(room(text.size()), text.data(), text.size());
    pos_ += text.size();
  }
  void put(char c) {
    *room(1) = c;
    ++pos_;
  }
  // Plain printable ASCII is copied; anything else is escaped by nlohmann itself.
  void string(std::string_view s);
  // Where the writer is: each open object's current key, each open array's current index.
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.array) {
        out += fmt::format("[{}]", f.index);
      } else {
        if (!out.empty()) out += '.';
        out.append(f.key);
      }
    }
    return out;
  }

  struct Frame {
    bool array = false;
    std::string_view key;
    int64_t index = -1;
  };

  struct Formatted {
    uint64_t bits = 0;
    uint8_t size = 0;  // 0: empty
    char text[31] = {};
  };
  static constexpr int kFormattedBits = 6;
  std::array<Formatted, size_t{1} << kFormattedBits> formatted_{};

  std::string& out_;
  int indent_;
  size_t pos_;  // the end of what was written
  int depth_ = 0;
  bool first_ = true;
  bool after_key_ = false;
  bool non_finite_ = false;
  bool tracking_ = false;
  std::vector<Frame> frames_;
  std::string first_non_finite_;
};

}  // namespace stepcast::detail
