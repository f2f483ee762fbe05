// What every fuzz target checks besides "no crash, no leak, no undefined behaviour, no hang"
// (the sanitizers and libFuzzer's timeout see to those): an error is one short line of valid
// UTF-8, and a report holds only finite numbers. A broken promise aborts, which libFuzzer records
// as a finding with the input that caused it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "stepcast/estimate.h"
#include "stepcast/report.h"
#include "stepcast/limits.h"

namespace stepcast::fuzz {

[[noreturn]] inline void finding(const char* what, std::string_view detail) {
  std::fprintf(stderr, "FINDING: %s: %.*s\n", what, static_cast<int>(detail.size()), detail.data());
  std::abort();
}

inline void check_text(std::string_view text, size_t max_size) {
  if (text.size() > max_size) finding("text too long", text.substr(0, 200));
  if (!valid_utf8(text)) finding("text not UTF-8", text.substr(0, 200));
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7F) finding("control character in text", text.substr(0, 200));
}

inline void check_error(const Error& e) {
  if (e.message.empty()) finding("empty error message", e.path);
  check_text(e.message, 2000);
  check_text(e.path, 200);
  check_text(e.hint, 2000);
  for (const auto& r : e.related) check_text(r, 200);
  // The error as the bindings and --batch write it.
  (void)to_json(e).dump();
}

// A range oracle: a number the engine accepted must lie within [lo, hi] (a fit's bounds).
inline void in_range(const char* what, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi)) finding(what, std::to_string(v));
}

// The fuzzer's bytes as text.
inline std::string_view text_of(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A result's value, or nullptr once its error is checked.
template <class T>
const T* checked(const Result<T>& r) {
  if (r) return &r.value();
  check_error(r.error());
  return nullptr;
}

// What an entry point prints for a scenario: the checked report, as JSON and as text.
inline void check_estimate(const Scenario& s, const EstimateOptions& options, bool text) {
  const Report report = estimate(s, options);
  auto json = report_json(report);
  if (!json) finding("report with a number that is not finite", json.error().message);
  (void)json->dump();
  if (text) (void)to_text(report, s);
}

}  // namespace stepcast::fuzz
