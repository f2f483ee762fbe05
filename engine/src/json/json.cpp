// Bounded JSON reading: nlohmann's DOM builder behind a SAX filter that stops at the depth limit,
// so a hostile document never reaches the recursive parts of the library (copy, dump, compare).
#include "stepcast/json.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepcast {

namespace {

// The code point starting at text[i] and its length in bytes; -1 (length 1) when the bytes there
// are not well-formed UTF-8.
std::pair<int32_t, size_t> decode_utf8(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {c, 1};
  size_t n = 0;  // continuation bytes
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0)
    n = 1, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0)
    n = 2, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0)
    n = 3, cp = c & 0x07;
  else
    return {-1, 1};
  if (s.size() - i <= n) return {-1, 1};
  for (size_t k = 1; k <= n; ++k) {
    const auto d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return {-1, 1};
    cp = (cp << 6) | (d & 0x3F);
  }
  constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {-1, 1};
  return {static_cast<int32_t>(cp), n + 1};
}

// Forwards every event to nlohmann's DOM builder, counting open objects and arrays; one too many
// stops the parse at once (sax_parse returns false), before anything deeper is built.
class BoundedDom {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit BoundedDom(Json& result) : dom_(result, /*allow_exceptions=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool v) { return dom_.boolean(v); }
  bool number_integer(number_integer_t v) { return dom_.number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return dom_.number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) { return dom_.number_float(v, s); }
  bool string(string_t& v) { return dom_.string(v); }
  bool binary(binary_t& v) { return dom_.binary(v); }
  // A key an object already has stops the parse: nlohmann keeps the last value, silently, where
  // a link with a repeated key is refused (share_link.cpp); one rule for both.
  bool key(string_t& v) {
    if (!keys_.empty()) {
      Json::object_t& seen = keys_.back();
      if (seen.find(v) != seen.end()) {
        duplicate_ = v;
        return false;
      }
      seen[v];
    }
    return dom_.key(v);
  }
  bool start_object(std::size_t n) {
    if (!open()) return false;
    keys_.emplace_back();
    return dom_.start_object(n);
  }
  bool end_object() {
    keys_.pop_back();
    return close() && dom_.end_object();
  }
  bool start_array(std::size_t n) { return open() && dom_.start_array(n); }
  bool end_array() { return close() && dom_.end_array(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

  bool too_deep() const { return too_deep_; }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  bool open() {
    if (++depth_ <= kMaxJsonDepth) return true;
    too_deep_ = true;
    return false;
  }
  bool close() {
    --depth_;
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  int depth_ = 0;
  bool too_deep_ = false;
  // The keys of each open object, as a JSON object of nulls: the map nlohmann builds objects with
  // anyway, so no other container's code goes into the WebAssembly module.
  std::vector<Json::object_t> keys_;
  std::optional<std::string> duplicate_;
};

}  // namespace

Result<Json> parse_json(std::string_view text, std::string_view what, size_t max_bytes) {
  if (text.size() > max_bytes)
    return Error{ErrorCode::parse_error, "",
                 fmt::format("{} is {} bytes; at most {} are read", what, text.size(), max_bytes)};
  Json result;
  BoundedDom dom(result);
  const bool ok = Json::sax_parse(text, &dom, Json::input_format_t::json, /*strict=*/true);
  if (dom.too_deep())
    return Error{
        ErrorCode::parse_error, "",
        fmt::format("{} nests objects and arrays more than {} levels deep", what, kMaxJsonDepth)};
  if (dom.duplicate())
    return Error{ErrorCode::duplicate_key, "",
                 fmt::format("{} has the key \"{}\" twice in one object: give it once",
                             what, printable(*dom.duplicate(), 80))};
  if (!ok || result.is_discarded())
    return Error{ErrorCode::parse_error, "", fmt::format("{} is not valid JSON", what)};
  return result;
}

bool valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto [cp, n] = decode_utf8(text, i);
    if (cp < 0) return false;
    i += n;
  }
  return true;
}

std::string printable(std::string_view text, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (out.size() >= max_bytes) return out + "...";
    const auto [cp, n] = decode_utf8(text, i);
    if (cp < 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) || cp == 0x2028 || cp == 0x2029) {
      out += fmt::format("\\u{:04x}", cp);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace stepcast
