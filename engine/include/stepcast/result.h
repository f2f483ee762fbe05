// Errors as values. The engine never throws: Emscripten builds abort on a throw, and a web page
// needs an error it can show next to the control that caused it.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "stepcast/enum_names.h"

namespace stepcast {

enum class ErrorCode {
  parse_error,      // not JSON (or not a link, a CSV, ...): the text itself cannot be read
  unknown_key,      // a key the schema does not have (usually a typo)
  missing_key,      // a required key is absent
  type_error,       // a value of the wrong JSON type
  out_of_range,     // a value outside its allowed range or choices (zero layers, "some", ...)
  unknown_preset,   // a preset id that is not in the catalog
  invalid_plan,     // a well-formed plan that Megatron-LM cannot run (tp does not divide heads, ...)
  invalid_model,    // a model whose shape is inconsistent (hidden not divisible by heads, ...)
  invalid_cluster,  // a cluster that cannot exist (a network link used inside a node, ...)
  duplicate_key,    // a key given twice (links, where JSON objects cannot say it)
  unsupported,      // well-formed and valid, but outside what this entry point covers
  budget_exceeded,  // more work than one call may do (limits.h: stages, list entries, plans)
};
template <>
struct EnumNames<ErrorCode> {
  static constexpr std::array<std::string_view, 12> values = {
      "parse_error",     "unknown_key",   "missing_key",   "type_error",
      "out_of_range",    "unknown_preset", "invalid_plan", "invalid_model",
      "invalid_cluster", "duplicate_key", "unsupported",  "budget_exceeded"};
};
inline const char* to_string(ErrorCode code) { return name_of(code).data(); }

// The rules an input can break (rule_ids.h: the ids and their table; 0 is none).
enum class Rule;

struct Error {
  ErrorCode code;
  std::string path;     // the JSON path of the offending value, e.g. "plan.tp"
  std::string message;  // one line naming the field, the value and the rule
  // Other inputs the rule involves ("plan.tp" breaks a rule with "model.heads"): a page marks the
  // one its user changed.
  std::vector<std::string> related = {};
  // Values that would satisfy the rule, in words ("tp 1, 2, 4 or 8 divides the model"); may be
  // empty.
  std::string hint = {};
  // The rule broken (rule_ids.h; none for an error of reading) and the values it involves, by the
  // names its line in kRules gives ({"divisor": 3, "dividend": 64, ...}): what a caller words the
  // error from without reading the message. A JSON object rather than typed fields: each rule has
  // its own values (counts, lists of values that would do, a precision's name), and a caller
  // reads them as JSON.
  Rule rule = Rule{};
  nlohmann::json values = {};
};

// Result<T> holds either a T or an Error.
template <class T>
class Result {
 public:
  Result(T value) : data_(std::move(value)) {}
  Result(Error error) : data_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(data_); }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<Error>(data_); }

 private:
  std::variant<T, Error> data_;
};

}  // namespace stepcast
