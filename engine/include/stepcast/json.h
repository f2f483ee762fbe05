// JSON as the engine reads and writes it: the document type (nlohmann::json), a bounded parse for
// text the engine did not write, and the checks and escapes for echoing untrusted text in messages.
// The bottom room of the engine (engine/src/json/): everything else may include it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

#include "stepcast/result.h"

namespace stepcast {

using Json = nlohmann::json;

// Text: a scenario document (a file, a batch line, what the page sends) and how deeply its objects
// and arrays nest (a scenario needs 6 levels; nesting is what recursion in a JSON library follows).
inline constexpr size_t kMaxDocumentBytes = size_t{1} << 20;
inline constexpr int kMaxJsonDepth = 32;

// Reads JSON text the engine did not write: at most kMaxDocumentBytes, objects and arrays nested
// at most kMaxJsonDepth deep, strings of valid UTF-8 (nlohmann's lexer checks it). `what` names
// the text in the error ("the scenario"): "<what> is not valid JSON", or a parse_error naming the
// limit it passes. Never throws, whatever the text.
Result<Json> parse_json(std::string_view text, std::string_view what = "the scenario",
                        size_t max_bytes = kMaxDocumentBytes);

// Well-formed UTF-8: no overlong forms, surrogates or code points past U+10FFFF.
bool valid_utf8(std::string_view text);

// Untrusted text as a message echoes it: one line of valid UTF-8, whatever the bytes. Control
// characters (C0, DEL, C1, U+2028/2029) are written as JSON escapes ("\n", "\u001b"), bytes that
// are not UTF-8 as "\xff"; cut after about `max_bytes` bytes (a whole escape or character more at
// most) with "..." when longer.
std::string printable(std::string_view text, size_t max_bytes = 48);

}  // namespace stepcast
