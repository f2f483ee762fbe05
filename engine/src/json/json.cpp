// Bounded JSON reading: nlohmann's lexer and parser driving the engine's own tree builder, which
// stops at the depth limit (so a hostile document never reaches the recursive parts of the
// library: copy, dump, compare) and at a repeated key.
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

// Builds the tree from the parser's events (as nlohmann's own DOM builder does), counting open
// objects and arrays: one too many stops the parse at once (sax_parse returns false), before
// anything deeper is built. A key an object already has stops it too: nlohmann keeps the last
// value, silently, where a link with a repeated key is refused (share_link.cpp); one rule for
// both. (Built here rather than behind a filter over nlohmann's builder, which cannot say whether
// its object holds a key: a second map of each object's keys was a sixth of a scenario's parse.)
class BoundedDom {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit BoundedDom(Json& root) : root_(root) {}

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) { return put(Json(v)); }
  bool string(string_t& v) { return put(Json(std::move(v))); }
  bool binary(binary_t& v) { return put(Json::binary(std::move(v))); }  // (never from JSON text)
  bool key(string_t& v) {
    auto [at, added] = open_.back()->get_ref<Json::object_t&>().emplace(std::move(v), nullptr);
    if (!added) {
      duplicate_ = at->first;
      return false;
    }
    member_ = &at->second;
    return true;
  }
  bool start_object(std::size_t) { return open(Json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(Json::array()); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception&) {
    return false;
  }

  bool too_deep() const { return too_deep_; }
  const std::optional<std::string>& duplicate() const { return duplicate_; }

 private:
  // A value where the parse is: the document itself, the next element of the open array, or the
  // member whose key came last.
  Json* place(Json&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    if (Json& top = *open_.back(); top.is_array()) {
      auto& elements = top.get_ref<Json::array_t&>();
      elements.push_back(std::move(v));
      return &elements.back();
    }
    *member_ = std::move(v);
    return member_;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& empty) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      too_deep_ = true;
      return false;
    }
    open_.push_back(place(std::move(empty)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  Json& root_;
  std::vector<Json*> open_;  // the open objects and arrays, innermost last
  Json* member_ = nullptr;   // the member the last key named
  bool too_deep_ = false;
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
  if (!ok)
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
