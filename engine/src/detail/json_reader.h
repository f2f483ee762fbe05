// A small checked reader over one JSON object: typed getters that record the first error with its
// JSON path, and a check that rejects keys the schema does not know (typos would otherwise be
// silently ignored). Private to the engine.
#pragma once

#include <fmt/format.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "stepcast/catalog.h"
#include "stepcast/result.h"

namespace stepcast::detail {

class JsonReader {
 public:
  JsonReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object())
      fail(ErrorCode::type_error, path_, fmt::format("{} must be an object", display(path_)));
  }

  bool ok() const { return !error_; }
  const Error& error() const { return *error_; }
  std::optional<Error> take_error() const { return error_; }
  const std::string& path() const { return path_; }
  std::string field(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  bool has(std::string_view key) const { return ok() && object_.contains(key); }
  const Json* raw(std::string_view key) const {
    if (!ok()) return nullptr;
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  void reject_unknown_keys(std::initializer_list<std::string_view> known) {
    if (!ok()) return;
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      bool found = false;
      for (auto k : known) found = found || k == it.key();
      if (!found) {
        std::string list;
        for (auto k : known) {
          if (!list.empty()) list += ", ";
          list += k;
        }
        fail(ErrorCode::unknown_key, field(it.key()),
             fmt::format("{} is not a known key (known: {})", field(it.key()), list));
        return;
      }
    }
  }

  int64_t integer(std::string_view key, std::optional<int64_t> fallback, int64_t min = 1,
                  int64_t max = int64_t{1} << 50) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(min);
    if (!v->is_number_integer() && !(v->is_number_float() && is_whole(v->get<double>()))) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be an integer", field(key), v->dump()));
      return min;
    }
    const double d = v->get<double>();
    if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
      fail(ErrorCode::out_of_range, field(key),
           fmt::format("{}={} must be {}", field(key), v->dump(), range_text(min, max)));
      return min;
    }
    return static_cast<int64_t>(d);
  }

  double number(std::string_view key, std::optional<double> fallback, double min = 0,
                bool min_exclusive = true) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(min);
    if (!v->is_number()) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be a number", field(key), v->dump()));
      return min;
    }
    const double d = v->get<double>();
    if (!(min_exclusive ? d > min : d >= min) || !std::isfinite(d)) {
      fail(ErrorCode::out_of_range, field(key),
           fmt::format("{}={} must be {} {}", field(key), v->dump(), min_exclusive ? ">" : ">=",
                       min));
      return min;
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
           fmt::format("{}={} must be true or false", field(key), v->dump()));
      return false;
    }
    return v->get<bool>();
  }

  std::string string(std::string_view key, std::optional<std::string> fallback) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or("");
    if (!v->is_string()) {
      fail(ErrorCode::type_error, field(key),
           fmt::format("{}={} must be a string", field(key), v->dump()));
      return "";
    }
    return v->get<std::string>();
  }

  // A string that must be one of `allowed`; returns its index.
  int choice(std::string_view key, std::initializer_list<std::string_view> allowed,
             std::optional<int> fallback) {
    const Json* v = lookup(key, fallback.has_value());
    if (!v) return fallback.value_or(0);
    std::string list;
    for (auto a : allowed) {
      if (!list.empty()) list += '|';
      list += a;
    }
    if (v->is_string()) {
      int i = 0;
      for (auto a : allowed) {
        if (a == v->get_ref<const std::string&>()) return i;
        ++i;
      }
    }
    fail(v->is_string() ? ErrorCode::out_of_range : ErrorCode::type_error, field(key),
         fmt::format("{}={} must be one of {}", field(key), v->dump(), list));
    return 0;
  }

  void fail(ErrorCode code, std::string path, std::string message) {
    if (!error_) error_ = Error{code, std::move(path), std::move(message)};
  }

 private:
  static bool is_whole(double d) { return std::isfinite(d) && d == static_cast<double>(static_cast<int64_t>(d)); }
  static std::string display(const std::string& path) { return path.empty() ? "the document" : path; }
  static std::string range_text(int64_t min, int64_t max) {
    if (max >= (int64_t{1} << 50)) return fmt::format(">= {}", min);
    return fmt::format("between {} and {}", min, max);
  }
  const Json* lookup(std::string_view key, bool optional) {
    if (!ok()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || (optional && it->is_null())) {
      if (!optional)
        fail(ErrorCode::missing_key, field(key), fmt::format("{} is required", field(key)));
      return nullptr;
    }
    return &*it;
  }

  const Json& object_;
  std::string path_;
  std::optional<Error> error_;
};

}  // namespace stepcast::detail
