// What every binding of the two WebAssembly modules (bindings.cpp, the page's engine; and
// tool_bindings.cpp, the tools a user's action loads) answers with: JSON text that cannot abort
// the module, errors as {"error": ...} values, and text handed to JavaScript in one call.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "stepcast/json.h"
#include "stepcast/report.h"  // to_json(Error), non_finite_path
#include "stepcast/result.h"

namespace stepcast_wasm {

// JSON out: whatever a string holds, the serialiser cannot abort the module.
inline std::string text(const stepcast::Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, stepcast::Json::error_handler_t::replace);
}
inline std::string error_text(const stepcast::Error& e) { return text(stepcast::to_json(e)); }
// A tool's answer, checked: JSON has no word for a number that is not finite (`what`: whose).
inline std::string finite_text(const stepcast::Json& j, const char* what) {
  if (auto bad = stepcast::non_finite_path(j))
    return error_text(stepcast::Error{stepcast::ErrorCode::unsupported, *bad,
                                      std::string(what) + ": a number is not finite"});
  return text(j);
}

// Text out as a JavaScript string in one TextDecoder call: Embind's std::string result walks the
// bytes one at a time in JavaScript (web/README.md, "Size and first load"). The same string,
// invalid UTF-8 replaced the same way (U+FFFD).
inline emscripten::val js_string(const std::string& s) {
  static const emscripten::val decoder = emscripten::val::global("TextDecoder").new_();
  return decoder.call<emscripten::val>(
      "decode", emscripten::val(emscripten::typed_memory_view(
                    s.size(), reinterpret_cast<const unsigned char*>(s.data()))));
}
// A binding that returns text, returning it as js_string does.
template <auto F, class... Args>
emscripten::val as_js(Args... args) {
  return js_string(F(args...));
}

}  // namespace stepcast_wasm
