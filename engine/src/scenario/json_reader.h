// A small checked reader over one JSON object: typed getters that record errors with their JSON
// paths, and a check that rejects keys the schema does not know (typos would otherwise be
// silently ignored). Reading goes on after an error, so a document's every bad key is reported
// (the page marks them all); callers that want one error take the first. Private to the engine.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"
#include "stepcast/limits.h"
#include "stepcast/result.h"
#include "stepcast/schema.h"

namespace stepcast::detail {

// A value as an error message echoes it: JSON, cut to a few dozen characters (input can be huge).
std::string echo(const Json& value);

// The error of a text longer than its key's bound (schema.cpp: out of line, as every text key's
// reader would otherwise carry its own copy).
Error text_too_long(const std::string& field, size_t bytes, double max);

class JsonReader {
 public:
  JsonReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object())
      fail(ErrorCode::type_error, path_, fmt::format("{} must be an object", display(path_)));
    else
      index(object_);
  }

  bool ok() const { return errors_.empty(); }
  const Error& error() const { return errors_.front(); }
  const std::vector<Error>& errors() const { return errors_; }
  std::optional<Error> take_error() const {
    return errors_.empty() ? std::nullopt : std::optional<Error>(errors_.front());
  }
  const std::string& path() const { return path_; }
  std::string field(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  bool is_object() const { return object_.is_object(); }
  bool has(std::string_view key) const { return find(key) != nullptr; }
  const Json* raw(std::string_view key) const { return find(key); }

  // A reader of the same object that takes a key the object lacks from `defaults` (an object:
  // a framework profile's plan defaults), as if merged into it, without copying either. An
  // object that is not one reads as empty (its own reader reports that).
  JsonReader with_defaults(const Json& defaults) const {
    static const Json empty = Json::object();
    JsonReader m(object_.is_object() ? object_ : empty, path_);
    if (defaults.is_object()) m.index(defaults);
    return m;
  }

  void reject_unknown_keys(std::initializer_list<std::string_view> known) {
    reject_unknown(std::span<const std::string_view>(known.begin(), known.size()));
  }
  void reject_unknown(std::span<const std::string_view> known) {
    if (!object_.is_object()) return;
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      const std::string_view key = it.key();  // once per key, not once per known name
      bool found = false;
      for (auto k : known) found = found || same_text(k, key);
      if (found || errors_.size() >= kMaxErrors) continue;
      std::string list;
      for (auto k : known) {
        if (!list.empty()) list += ", ";
        list += k;
      }
      // A key can hold anything, a newline included: echo it as one short line.
      const std::string name = field(printable(it.key(), 40));
      fail(ErrorCode::unknown_key, name,
           fmt::format("{} is not a known key (known: {})", name, list));
    }
  }

  int64_t integer(std::string_view key, std::optional<int64_t> fallback, int64_t min = 1,
                  int64_t max = int64_t{1} << 50) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(min);
    if (!v->is_number_integer() && !(v->is_number_float() && is_whole(v->get<double>()))) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be an integer", field(key), echo(*v)));
      return fallback.value_or(min);
    }
    const double d = v->get<double>();
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(ErrorCode::out_of_range, field(key),
           fmt::format("{}={} must be {}", field(key), echo(*v), range_text(min, max)));
      return fallback.value_or(min);
    }
    return static_cast<int64_t>(d);
  }

  double number(std::string_view key, std::optional<double> fallback, double min = 0,
                bool min_exclusive = true, double max = 0) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(min);
    if (!v->is_number()) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be a number", field(key), echo(*v)));
      return fallback.value_or(min);
    }
    const double d = v->get<double>();
    const bool low = min_exclusive ? !(d > min) : !(d >= min);
    if (low || !std::isfinite(d) || (max > 0 && d > max)) {
      const std::string range =
          max > 0 ? fmt::format("{} {} and <= {}", min_exclusive ? ">" : ">=", number_text(min),
                                number_text(max))
                  : fmt::format("{} {}", min_exclusive ? ">" : ">=", number_text(min));
      fail(ErrorCode::out_of_range, field(key),
           fmt::format("{}={} must be {}", field(key), echo(*v), range));
      return fallback.value_or(min);
    }
    return d;
  }

  std::optional<double> optional_number(std::string_view key, double min = 0) {
    if (!has(key) || raw(key)->is_null()) return std::nullopt;
    return number(key, std::nullopt, min);
  }

  bool boolean(std::string_view key, std::optional<bool> fallback) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(false);
    if (!v->is_boolean()) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be true or false", field(key), echo(*v)));
      return fallback.value_or(false);
    }
    return v->get<bool>();
  }

  std::string string(std::string_view key, std::optional<std::string> fallback) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or("");
    if (!v->is_string()) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be a string", field(key), echo(*v)));
      return fallback.value_or("");
    }
    return v->get<std::string>();
  }

  // A string that must be one of `allowed`; returns its index.
  int choice(std::string_view key, std::span<const std::string_view> allowed,
             std::optional<int> fallback) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(0);
    if (v->is_string()) {
      for (size_t i = 0; i < allowed.size(); ++i)
        if (allowed[i] == v->get_ref<const std::string&>()) return static_cast<int>(i);
    }
    std::string list;
    for (auto a : allowed) {
      if (!list.empty()) list += '|';
      list += a;
    }
    fail(v->is_string() ? ErrorCode::out_of_range : ErrorCode::type_error, field(key),
         fmt::format("{}={} must be one of {}", field(key), echo(*v), list));
    return fallback.value_or(0);
  }
  int choice(std::string_view key, std::initializer_list<std::string_view> allowed,
             std::optional<int> fallback) {
    return choice(key, std::span<const std::string_view>(allowed.begin(), allowed.size()),
                  fallback);
  }

  // The same getters, driven by a key's description (name, range, choices, default, scale).
  // `rule` is the value of a default the engine derives from other keys (DefaultValue::rule).
  int64_t integer(const KeyInfo& k, std::optional<int64_t> rule = std::nullopt) {
    std::optional<int64_t> fallback = rule;
    if (k.fallback.kind == DefaultValue::Kind::number)
      fallback = static_cast<int64_t>(k.fallback.number);
    const int64_t max = k.max > 0 ? static_cast<int64_t>(k.max) : int64_t{1} << 50;
    return integer(k.name, fallback, static_cast<int64_t>(k.min), max);
  }
  double number(const KeyInfo& k, std::optional<double> rule = std::nullopt) {
    std::optional<double> fallback = rule;
    if (k.fallback.kind == DefaultValue::Kind::number) fallback = k.fallback.number;
    return number(k.name, fallback, k.min, k.min_exclusive, k.max) * k.scale;
  }
  bool boolean(const KeyInfo& k, std::optional<bool> rule = std::nullopt) {
    std::optional<bool> fallback = rule;
    if (k.fallback.kind == DefaultValue::Kind::boolean) fallback = k.fallback.flag;
    return boolean(k.name, fallback);
  }
  std::string string(const KeyInfo& k, std::optional<std::string> rule = std::nullopt) {
    std::optional<std::string> fallback = rule;
    if (k.fallback.kind == DefaultValue::Kind::text) fallback = std::string(k.fallback.text);
    if (k.fallback.kind == DefaultValue::Kind::none && !fallback) fallback = std::string();
    std::string text = string(k.name, fallback);
    // A text key with a bound (names: limits.h) is refused past it, so a link can carry it.
    if (k.max > 0 && text.size() > static_cast<size_t>(k.max))
      fail(text_too_long(field(k.name), text.size(), k.max));
    return text;
  }
  // A list of names (plan.recompute_modules): a string of names separated by spaces or commas,
  // or a JSON list of names as Megatron-Bridge's configs write it (recompute_modules=["moe",
  // "layernorm"]), read as the same string with commas between the names.
  std::string names(const KeyInfo& k) {
    const Json* v = has(k.name) ? raw(k.name) : nullptr;
    if (!v || !v->is_array()) return string(k);
    std::string text;
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& item = (*v)[i];
      if (!item.is_string()) {
        fail(ErrorCode::type_error, fmt::format("{}[{}]", field(k.name), i),
             fmt::format("{}[{}]={} must be a name (a string)", field(k.name), i, echo(item)));
        return std::string(k.fallback.text);
      }
      if (!text.empty()) text += ',';
      text += item.get_ref<const std::string&>();
    }
    if (k.max > 0 && text.size() > static_cast<size_t>(k.max))
      fail(text_too_long(field(k.name), text.size(), k.max));
    return text;
  }
  int choice(const KeyInfo& k, std::optional<int> rule = std::nullopt) {
    std::optional<int> fallback = rule;
    if (k.fallback.kind == DefaultValue::Kind::text)
      for (size_t i = 0; i < k.choices.size(); ++i)
        if (k.choices[i] == k.fallback.text) fallback = static_cast<int>(i);
    return choice(k.name, k.choices, fallback);
  }

  // Errors past kMaxErrors are dropped: a document of a million bad keys reports the first ones.
  void fail(ErrorCode code, std::string path, std::string message,
            std::vector<std::string> related = {}) {
    fail(Error{code, std::move(path), std::move(message), std::move(related)});
  }
  void fail(Error e) {
    if (errors_.size() < kMaxErrors) errors_.push_back(std::move(e));
  }
  void absorb(const std::vector<Error>& errors) {
    for (const Error& e : errors) fail(e);
  }

 private:
  static bool is_whole(double d) {
    return std::isfinite(d) && std::fabs(d) < 9.2e18 &&
           d == static_cast<double>(static_cast<int64_t>(d));
  }
  static std::string display(const std::string& path) {
    return path.empty() ? "the document" : path;
  }
  // 0.001, 1e+06, 1e-06, 1048576: a range's ends as people read them, exactly.
  static std::string number_text(double v) {
    std::string text = fmt::format("{:g}", v);
    if (std::strtod(text.c_str(), nullptr) == v) return text;
    return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{}", v);
  }
  static std::string range_text(int64_t min, int64_t max) {
    if (max >= (int64_t{1} << 50)) return fmt::format(">= {}", min);
    return fmt::format("between {} and {}", min, max);
  }
  // The object's keys (then the defaults'), listed once. A reader looks up every key its schema
  // knows, most of them absent: comparing lengths first, in a plain loop, is several times faster
  // than the object's own map in code compiled for size (the WebAssembly build), where each step
  // of a map search, and each string comparison, is a chain of calls.
  struct Entry {
    std::string_view key;
    const Json* value;
  };
  // (The first characters compared inline before memcmp: a plan's reader looks up a hundred keys
  // among a hundred, most of the same length, and the library call was a sixth of a parse.)
  static bool same_text(std::string_view a, std::string_view b) {
    return a.size() == b.size() && (a.empty() || a[0] == b[0]) &&
           std::memcmp(a.data(), b.data(), a.size()) == 0;
  }
  void index(const Json& object) {
    for (auto it = object.begin(); it != object.end(); ++it)
      entries_.push_back({it.key(), &*it});
  }
  // The object's value for `key`, else the defaults' (listed after it), else null.
  const Json* find(std::string_view key) const {
    for (const Entry& e : entries_)
      if (same_text(e.key, key)) return e.value;
    return nullptr;
  }
  const Json* lookup(std::string_view key, bool optional) {
    const Json* v = find(key);
    if (!v || (optional && v->is_null())) {
      if (!optional)
        fail(ErrorCode::missing_key, field(key), fmt::format("{} is required", field(key)));
      return nullptr;
    }
    return v;
  }

  const Json& object_;
  std::vector<Entry> entries_;  // the object's, then the defaults'
  std::string path_;
  std::vector<Error> errors_;
};

}  // namespace stepcast::detail
