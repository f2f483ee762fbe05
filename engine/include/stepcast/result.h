// Errors as values. The engine never throws: Emscripten builds abort on a throw, and a web page
// needs an error it can show next to the control that caused it.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace stepcast {

enum class ErrorCode {
  parse_error,     // not JSON, or a file that is not what it claims to be
  unknown_key,     // a key the schema does not have (usually a typo)
  missing_key,     // a required key is absent
  type_error,      // a value of the wrong JSON type
  out_of_range,    // a number outside its allowed range (zero layers, negative batch, ...)
  unknown_preset,  // a preset id that is not in the catalog
  invalid_plan,    // a well-formed plan that Megatron-LM cannot run (tp does not divide heads, ...)
};

const char* to_string(ErrorCode code);

struct Error {
  ErrorCode code;
  std::string path;     // the JSON path of the offending value, e.g. "plan.tp"
  std::string message;  // one line naming the field, the value and the rule
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
