#include "stepcast/share_link.h"

#include "stepcast/limits.h"
#include "stepcast/rule_ids.h"
#include "stepcast/schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace stepcast {

namespace {

enum class Kind { integer, number, boolean, text, json, layout };

struct Key {
  std::string json;  // key in the scenario (or page) object
  std::string link;  // key in the fragment
  Kind kind;
  Json fallback;     // left out of the link when equal (null: always written)
  const KeyInfo* info = nullptr;  // its schema entry (range of numbers)
};

// The keys of one schema object that links carry on their own (schema.h: KeyInfo::link), with
// the value left out of a link when it equals the key's fixed default.
std::vector<Key> link_keys(std::string_view object, std::initializer_list<std::string_view> skip) {
  std::vector<Key> keys;
  for (const KeyInfo& k : schema_keys()) {
    if (k.object != object || k.link.empty()) continue;
    if (std::find(skip.begin(), skip.end(), k.name) != skip.end()) continue;
    Kind kind = Kind::text;
    switch (k.type) {
      case ValueType::integer: kind = Kind::integer; break;
      case ValueType::number: kind = Kind::number; break;
      case ValueType::boolean: kind = Kind::boolean; break;
      case ValueType::choice:
      case ValueType::text: kind = Kind::text; break;
      case ValueType::reference:
      case ValueType::object: kind = Kind::json; break;
      case ValueType::list: kind = Kind::layout; break;
    }
    Json fallback = nullptr;
    switch (k.fallback.kind) {
      case DefaultValue::Kind::number:
        fallback = k.type == ValueType::integer ? Json(static_cast<int64_t>(k.fallback.number))
                                                : Json(k.fallback.number);
        break;
      case DefaultValue::Kind::boolean: fallback = k.fallback.flag; break;
      case DefaultValue::Kind::text: fallback = std::string(k.fallback.text); break;
      default: break;
    }
    keys.push_back({std::string(k.name), std::string(k.link), kind, std::move(fallback), &k});
  }
  return keys;
}

// A custom model's text for people and a preset's recipe, which links leave out (link_leaves_out):
// no estimate reads them.
constexpr const char* kModelTextForPeople[] = {"source", "notes", "recipe"};

// Short names are part of the link format: never rename one (schema: fields.cpp).
const std::vector<Key>& plan_keys() {
  static const std::vector<Key> keys = link_keys("plan", {});
  return keys;
}
const std::vector<Key>& model_keys() {
  static const std::vector<Key> keys = link_keys("model", {});
  return keys;
}
// Groups of nodes and the link between them have a format of their own (below).
const std::vector<Key>& cluster_keys() {
  static const std::vector<Key> keys = link_keys("cluster", {"groups", "inter_group_link"});
  return keys;
}
// The model has a format of its own (a preset id, or "custom" and the m.* keys).
const std::vector<Key>& top_keys() {
  static const std::vector<Key> keys = link_keys("scenario", {"model"});
  return keys;
}
const std::vector<Key>& page_keys() {
  static const std::vector<Key> keys = link_keys("page", {});
  return keys;
}

// Digits (at most 18, checked by the caller) as a number; never throws.
int64_t whole_number(std::string_view digits) {
  int64_t v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v;
}

// "a,b,,c" -> {"a", "b", "", "c"}: the pieces between separators, empty ones kept.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find(separator, pos);
    parts.push_back(text.substr(pos, at == std::string_view::npos ? std::string_view::npos : at - pos));
    if (at == std::string_view::npos) return parts;
    pos = at + 1;
  }
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '~';
}

// A piece of an untrusted link as a message quotes it: printable ASCII as it is, every other
// byte percent-encoded (no control character reaches a terminal or a page), cut to a few dozen
// characters.
std::string short_text(std::string_view s) {
  const std::string_view head = s.substr(0, 40);
  std::string out;
  for (unsigned char c : head) {
    if (c >= 0x20 && c < 0x7F)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out + (s.size() > head.size() ? "..." : "");
}

std::string percent_encode(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (unreserved(c))
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (s[i] == '+') {
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

// What a plan flag left out of a format 0 or 1 link meant: the engine's fixed defaults before
// framework profiles (they are the defaults of the megatron-core profile's Megatron-LM ancestors).
void fill_legacy_defaults(Json& scenario) {
  if (!scenario.is_object() || !scenario.contains("plan") || !scenario["plan"].is_object()) return;
  Json& plan = scenario["plan"];
  const std::pair<const char*, Json> kLegacy[] = {
      {"sequence_parallel", false},
      {"flash_attention", true},    {"overlap_grad_reduce", true},    {"tp_comm_overlap", false},
      {"overlap_p2p", true},        {"grad_reduce_in_fp32", true},    {"pp_scatter_gather", false},
      {"fp8_param_gather", false},  {"cuda_graphs", false},         {"hidden_dropout", 0.1}};
  // overlap_param_gather is left to the profile (megatron-core's: on, as the old default was,
  // wherever there is a gather to overlap; parse_plan turns it off elsewhere), so that a link
  // does not open with a warning or an error about a flag it never set.
  for (const auto& [key, value] : kLegacy)
    if (!plan.contains(key)) plan[key] = value;
  // zero_stage and distributed_optimizer (defaults 0 and false): the engine of formats 0 and 1
  // ran the larger sharding of the two, which today's reader calls a contradiction
  // (optimizer_sharding) when both are stated: both written as that larger sharding. Values of
  // the wrong type are left for the reader to refuse.
  const Json zero = plan.value("zero_stage", Json(0));
  const Json sharded = plan.value("distributed_optimizer", Json(false));
  if (zero.is_number_integer() && sharded.is_boolean()) {
    const int64_t stage = std::max<int64_t>(zero.get<int64_t>(), sharded.get<bool>() ? 1 : 0);
    plan["zero_stage"] = stage;
    plan["distributed_optimizer"] = stage >= 1;
  } else {
    if (!plan.contains("zero_stage")) plan["zero_stage"] = 0;
    if (!plan.contains("distributed_optimizer")) plan["distributed_optimizer"] = false;
  }
}

Error link_error(std::string message, ErrorCode code = ErrorCode::parse_error) {
  return Error{code, "link", "link: " + std::move(message)};
}

// A format 3 link without its end marker: cut when it was copied. Its rule id lets the page say so
// in its own words and keep the plan it shows; the last part read says where the cut fell.
Error incomplete_error(std::span<const std::string_view> pairs) {
  const std::string_view last = pairs.empty() ? std::string_view() : pairs.back();
  Error e = link_error(fmt::format("this link is incomplete: it stops after '{}' without the "
                                   "'&{}' that ends every link Stepcast writes; copy the whole "
                                   "link again",
                                   short_text(last), kLinkEndMarker));
  e.rule = Rule::link_incomplete;
  e.values = Json::object();
  e.values["last"] = short_text(last);
  e.values["parts"] = pairs.size();
  return e;
}

// Numbers as people and JavaScript write them: digits, an optional sign, fraction and exponent;
// no spaces, "+", hex, "inf" or "nan" (strtod would take them all).
bool plain_number(std::string_view t, bool integer) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') ++i;
  const size_t digits = i;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
  if (i == digits) return false;
  if (integer) return i == t.size();
  if (i < t.size() && t[i] == '.') {
    const size_t frac = ++i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == frac) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    const size_t exp = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == exp) return false;
  }
  return i == t.size();
}

// Heterogeneous layouts in a readable form: entries separated by ',' and fields by ':', in the
// order of `fields`; "auto" where the engine balances. Anything else is written as JSON.
constexpr const char* kStageFields[] = {"group", "layers"};
constexpr const char* kReplicaFields[] = {"group", "count", "micro_batches"};

std::span<const char* const> layout_fields(std::string_view key) {
  if (key == "replicas") return kReplicaFields;
  return kStageFields;
}

std::optional<std::string> write_layout(const Json& entries, std::span<const char* const> fields) {
  if (!entries.is_array() || entries.empty()) return std::nullopt;
  std::string out;
  for (const auto& e : entries) {
    if (!e.is_object()) return std::nullopt;
    size_t known = 0;
    std::string entry;
    for (size_t f = 0; f < fields.size(); ++f) {
      auto it = e.find(fields[f]);
      std::string text = f == 1 && fields.size() == 3 ? "1" : "auto";  // count defaults to 1
      if (f == 0) text = "0";
      if (it != e.end()) {
        ++known;
        if (it->is_number_integer() && it->get<int64_t>() >= 0) text = it->dump();
        else if (!(it->is_string() && it->get_ref<const std::string&>() == "auto" && f > 0))
          return std::nullopt;
      }
      entry += (f ? ":" : "") + text;
    }
    if (known != e.size()) return std::nullopt;  // keys the short form does not carry
    out += (out.empty() ? "" : ",") + entry;
  }
  return out;
}

std::optional<Json> read_layout(const std::string& text, std::string_view key) {
  if (!text.empty() && text[0] == '[') {
    auto j = parse_json(text, key);
    if (!j || !j->is_array()) return std::nullopt;
    return std::move(j).value();
  }
  const std::span<const char* const> fields = layout_fields(key);
  Json out = Json::array();
  for (const std::string_view piece : split(text, ',')) {
    const std::string entry(piece);
    Json e = Json::object();
    size_t start = 0;
    for (size_t f = 0; f < fields.size(); ++f) {
      size_t colon = entry.find(':', start);
      if ((colon == std::string::npos) != (f + 1 == fields.size())) return std::nullopt;
      if (colon == std::string::npos) colon = entry.size();
      const std::string part = entry.substr(start, colon - start);
      start = colon + 1;
      if (part == "auto" && f > 0) {
        e[fields[f]] = "auto";
        continue;
      }
      if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
      e[fields[f]] = whole_number(part);
    }
    out.push_back(std::move(e));
  }
  return out;
}

// Writes one value; nullopt when the value does not have the key's type.
std::optional<std::string> write_value(const Json& v, Kind kind, std::string_view key) {
  switch (kind) {
    case Kind::integer:
      if (v.is_number_integer()) return v.dump();
      if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())
        return fmt::format("{:.0f}", v.get<double>());
      return std::nullopt;
    case Kind::number: {
      if (!v.is_number()) return std::nullopt;
      // Shortest text, as JavaScript writes it: whole numbers without ".0".
      const double d = v.get<double>();
      if (std::floor(d) == d && std::fabs(d) < 9007199254740992.0) return fmt::format("{:.0f}", d);
      // Past 2^53 and in fractions, the shortest text that reads back to the same double, with
      // its exponent's sign left out ("1e16", not "1e+16": a fragment reads '+' as a space).
      std::string text = fmt::format("{}", d);
      if (const size_t plus = text.find("e+"); plus != std::string::npos) text.erase(plus + 1, 1);
      return text;
    }
    case Kind::boolean:
      if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
      return std::nullopt;
    case Kind::text:
      if (v.is_string()) return percent_encode(v.get_ref<const std::string&>());
      return std::nullopt;
    case Kind::json:
      if (v.is_string()) return percent_encode(v.get_ref<const std::string&>());
      return percent_encode(v.dump());
    case Kind::layout:
      if (auto compact = write_layout(v, layout_fields(key))) return compact;
      return percent_encode(v.dump());
  }
  return std::nullopt;
}

std::optional<Json> read_value(const std::string& text, Kind kind, std::string_view key) {
  switch (kind) {
    case Kind::layout: return read_layout(text, key);
    case Kind::integer: {
      if (text.size() > 18 || !plain_number(text, true)) return std::nullopt;
      char* end = nullptr;
      const long long n = std::strtoll(text.c_str(), &end, 10);
      if (*end != '\0') return std::nullopt;
      return Json(static_cast<int64_t>(n));
    }
    case Kind::number: {
      if (text.size() > 32 || !plain_number(text, false)) return std::nullopt;
      char* end = nullptr;
      const double d = std::strtod(text.c_str(), &end);
      if (*end != '\0' || !std::isfinite(d)) return std::nullopt;
      return Json(d);
    }
    case Kind::boolean:
      if (text == "1" || text == "true") return Json(true);
      if (text == "0" || text == "false") return Json(false);
      return std::nullopt;
    case Kind::text: return Json(text);
    case Kind::json: {
      if (!text.empty() && (text[0] == '{' || text[0] == '[')) {
        auto j = parse_json(text, key);
        if (!j) return std::nullopt;
        return std::move(j).value();
      }
      return Json(text);
    }
  }
  return std::nullopt;
}

// The page's settings are not scenario keys (parse_scenario checks those): their range, which
// the reader checks and the writer checks before it writes (a link that would not open again is
// refused when it is made, not when it is opened).
std::optional<Error> page_range_error(const Key& k, const Json& v, std::string_view shown) {
  const KeyInfo& info = *k.info;
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (d < info.min || (info.max > 0 && d > info.max))
    return link_error(fmt::format("{}={} must be between {:g} and {:g}", k.link, shown, info.min,
                                  info.max),
                      ErrorCode::out_of_range);
  return std::nullopt;
}

// Whether `text`, as written, reads back to `value`: the reader's limits on the length of a
// number (18 digits for an integer, 32 characters for a number) and its syntax.
bool reads_back(const std::string& text, const Json& value, Kind kind, std::string_view key) {
  const auto decoded = percent_decode(text);
  if (!decoded) return false;
  const auto read = read_value(*decoded, kind, key);
  if (!read) return false;
  if (read->is_number() && value.is_number()) return read->get<double>() == value.get<double>();
  return true;  // text, booleans and JSON are written as they are
}

// Appends the keys of `table` found in `object`; fails on a value of the wrong type, one the
// reader would not read back, and (`page`) a page setting out of its range.
std::optional<Error> encode_keys(const Json& object, std::span<const Key> table,
                                 std::string_view where, std::string& out, bool page = false) {
  for (const Key& k : table) {
    auto it = object.find(k.json);
    if (it == object.end()) continue;
    if (!k.fallback.is_null() && *it == k.fallback) continue;  // defaults stay out of the link
    if (page)
      if (auto e = page_range_error(k, *it, short_text(it->dump()))) return e;
    auto text = write_value(*it, k.kind, k.json);
    if (!text || !reads_back(*text, *it, k.kind, k.json))
      return link_error(fmt::format("{}.{}={} cannot be written in a link", where, k.json,
                                    short_text(it->dump())),
                        text ? ErrorCode::out_of_range : ErrorCode::type_error);
    out += fmt::format("&{}={}", k.link, *text);
  }
  return std::nullopt;
}

// The address a link is written after: a URL or nothing, one line. A control character would
// end the link early in a terminal or a page (a newline makes a second, forged line) and a '#'
// would start the fragment early.
std::optional<Error> base_error(std::string_view base) {
  for (size_t i = 0; i < base.size(); ++i) {
    const auto c = static_cast<unsigned char>(base[i]);
    if (c < 0x20 || c == 0x7F || c == '#')
      return Error{ErrorCode::type_error, "base",
                   fmt::format("link: the base address {} holds {} at byte {}; it must be a "
                               "URL without control characters or '#'",
                               short_text(base), c == '#' ? "'#'" : fmt::format("byte 0x{:02X}", c),
                               i)};
  }
  return std::nullopt;
}

// A link longer than readers take is refused when written, naming its longest part (a long name
// or a cluster written out as JSON), so the user knows what to shorten.
std::optional<Error> length_error(std::string_view link) {
  if (link.size() <= kMaxLinkLength) return std::nullopt;
  std::string_view longest;
  for (const std::string_view part : split(link.substr(link.find('#') + 1), '&'))
    if (part.size() > longest.size()) longest = part;
  return link_error(fmt::format("the link would be {} characters, over the {} readers take; its "
                                "longest part is {} ({} characters)",
                                link.size(), kMaxLinkLength,
                                short_text(longest.substr(0, longest.find('='))), longest.size()),
                    ErrorCode::out_of_range);
}

std::optional<Error> reject_unknown(const Json& object, std::span<const Key> table,
                                    std::string_view where) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const Key& k : table) known = known || it.key() == k.json;
    if (!known)
      return link_error(fmt::format("{}.{} cannot be carried by a link", where,
                                    short_text(it.key())),
                        ErrorCode::unsupported);
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::string> link_leaves_out(const Json& scenario) {
  std::vector<std::string> paths;
  if (!scenario.is_object()) return paths;
  const auto m = scenario.find("model");
  if (m == scenario.end() || !m->is_object()) return paths;
  for (const char* key : kModelTextForPeople)
    if (m->contains(key)) paths.push_back(fmt::format("model.{}", key));
  return paths;
}

Result<std::string> scenario_to_link(const LinkDocument& doc, std::string_view base) {
  const Json& s = doc.scenario;
  if (!s.is_object()) return link_error("the scenario must be a JSON object");
  if (auto e = base_error(base)) return *e;
  std::string out = fmt::format("{}#v={}", base, kLinkFormatVersion);
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    if (key != "model" && key != "cluster" && key != "plan" && key != "seq_len" && key != "name" &&
        key != "calibration")  // calibration: as JSON (`cal`), calibrate.h
      return link_error(fmt::format("{} cannot be carried by a link", short_text(key)),
                        ErrorCode::unsupported);
  }
  if (auto m = s.find("model"); m != s.end()) {
    if (m->is_string()) {
      out += "&model=" + percent_encode(m->get_ref<const std::string&>());
    } else if (m->is_object()) {
      out += "&model=custom";
      Json shape = *m;
      for (const char* key : kModelTextForPeople) shape.erase(key);
      if (auto e = reject_unknown(shape, model_keys(), "model")) return *e;
      if (auto e = encode_keys(shape, model_keys(), "model", out)) return *e;
    } else {
      return link_error("model must be a preset id or an object");
    }
  }
  if (auto c = s.find("cluster"); c != s.end()) {
    if (!c->is_object()) return link_error("cluster must be an object");
    if (c->contains("groups")) {
      // Groups of node presets read "dgx-a100:4,dgx-h100:2"; anything else goes as JSON.
      std::string groups;
      bool presets = c->size() <= 2 && (c->size() == 1 || c->contains("inter_group_link")) &&
                     (*c)["groups"].is_array() && !(*c)["groups"].empty();
      if (presets)
        for (const auto& g : (*c)["groups"]) {
          presets = presets && g.is_object() && g.size() == 2 && g.contains("node") &&
                    g["node"].is_string() && g.contains("nodes") && g["nodes"].is_number_integer();
          if (presets)
            groups += fmt::format("{}{}:{}", groups.empty() ? "" : ",",
                                  percent_encode(g["node"].get_ref<const std::string&>()),
                                  g["nodes"].get<int64_t>());
        }
      const Json* igl = c->contains("inter_group_link") ? &(*c)["inter_group_link"] : nullptr;
      if (presets && (!igl || igl->is_string())) {
        out += "&groups=" + groups;
        if (igl) out += "&igl=" + percent_encode(igl->get_ref<const std::string&>());
      } else {
        out += "&cluster=" + percent_encode(c->dump());
      }
    } else {
      if (auto e = reject_unknown(*c, cluster_keys(), "cluster")) return *e;
      if (auto e = encode_keys(*c, cluster_keys(), "cluster", out)) return *e;
    }
  }
  if (auto p = s.find("plan"); p != s.end()) {
    if (!p->is_object()) return link_error("plan must be an object");
    if (auto e = reject_unknown(*p, plan_keys(), "plan")) return *e;
    if (auto e = encode_keys(*p, plan_keys(), "plan", out)) return *e;
  }
  if (auto e = encode_keys(s, top_keys(), "scenario", out)) return *e;
  if (!doc.page.is_object()) return link_error("page settings must be an object");
  if (auto e = reject_unknown(doc.page, page_keys(), "page")) return *e;
  if (auto e = encode_keys(doc.page, page_keys(), "page", out, true)) return *e;
  out += fmt::format("&{}", kLinkEndMarker);
  if (auto e = length_error(out)) return *e;
  return out;
}

Result<LinkDocument> scenario_from_link(std::string_view url) {
  // The page's comparison pins follow its plan's link as a fragment part of their own
  // ("#v=3&...&end#compare=...", web/src/app/address.js): the scenario is what comes before
  // them, and its limit is the link's alone (a '#' inside a link is always percent-encoded).
  if (const auto pins = url.find("#compare="); pins != std::string_view::npos)
    url = url.substr(0, pins);
  if (url.size() > kMaxLinkLength)
    return link_error(fmt::format("the link is {} characters; links over {} are refused",
                                  url.size(), kMaxLinkLength));
  std::string_view fragment = url;
  if (const auto hash = url.find('#'); hash != std::string_view::npos)
    fragment = url.substr(hash + 1);
  else if (url.find("://") != std::string_view::npos)
    return link_error("the link has no '#' part holding a scenario");
  if (fragment.empty()) return link_error("the link holds no scenario");

  LinkDocument doc;
  // Format 0: the scenario JSON itself, percent-encoded.
  if (fragment[0] == '{' || fragment.substr(0, 3) == "%7B" || fragment.substr(0, 3) == "%7b") {
    auto text = percent_decode(fragment);
    if (!text) return link_error("bad percent-encoding");
    auto scenario = parse_json(*text, "the scenario in the link");
    if (!scenario) return link_error(scenario.error().message);
    if (!scenario->is_object()) return link_error("the scenario in the link is not a JSON object");
    doc.scenario = std::move(scenario).value();
    fill_legacy_defaults(doc.scenario);
    return doc;
  }

  doc.scenario = Json::object();
  Json model = Json::object(), cluster = Json::object(), plan = Json::object();
  bool custom_model = false, cluster_json = false;
  int version = 0;
  std::vector<std::string> seen;  // one rule for every key: it appears once
  std::vector<std::string_view> pairs = split(fragment, '&');
  std::erase_if(pairs, [](std::string_view p) { return p.empty(); });
  // Format 3 ends with its marker; a link without it was cut (or is of an older format, which
  // `v` says below). The marker anywhere else is an error of its own.
  const bool ended = !pairs.empty() && pairs.back() == kLinkEndMarker;
  if (ended) pairs.pop_back();
  // A cut link is incomplete before anything else: the cut may fall inside a pair ("&en").
  if (!ended && std::find(pairs.begin(), pairs.end(), "v=3") != pairs.end())
    return incomplete_error(pairs);
  for (const std::string_view pair : pairs) {
    if (pair == kLinkEndMarker)
      return link_error("'end' is the end marker and comes last, once");
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos)
      return link_error(fmt::format("'{}' is not key=value", short_text(pair)));
    const std::string key(pair.substr(0, eq));
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      return link_error(fmt::format("'{}' appears twice", short_text(key)),
                        ErrorCode::duplicate_key);
    seen.push_back(key);
    auto value = percent_decode(pair.substr(eq + 1));
    if (!value) return link_error(fmt::format("bad percent-encoding in {}", short_text(key)));
    if (!valid_utf8(*value))
      return link_error(fmt::format("the value of {} is not UTF-8 text", short_text(key)));
    const bool is_cluster_key = key == "cluster" || key == "groups" || key == "igl" ||
                                std::any_of(cluster_keys().begin(), cluster_keys().end(),
                                            [&](const Key& k) { return k.link == key; });
    if (is_cluster_key && (cluster_json || (key == "cluster" && !cluster.empty())))
      return link_error("'cluster' (a JSON cluster) and other cluster keys together",
                        ErrorCode::duplicate_key);
    if (key == "v") {
      if (*value != "1" && *value != "2" && *value != "3")
        return link_error(fmt::format("format version {} is not one this Stepcast reads (1, 2, 3)",
                                      short_text(*value)),
                          ErrorCode::unsupported);
      version = (*value)[0] - '0';
      continue;
    }
    if (key == "model") {
      if (*value == "custom")
        custom_model = true;
      else
        doc.scenario["model"] = *value;
      continue;
    }
    if (key == "groups") {
      Json groups = Json::array();
      for (const std::string_view piece : split(*value, ',')) {
        const std::string entry(piece);
        const size_t colon = entry.rfind(':');
        const std::string count = colon == std::string::npos ? "" : entry.substr(colon + 1);
        if (colon == 0 || count.empty() || count.size() > 9 ||
            count.find_first_not_of("0123456789") != std::string::npos)
          return link_error(fmt::format("groups={} is not node:count,...", short_text(*value)),
                            ErrorCode::type_error);
        groups.push_back(Json{{"node", entry.substr(0, colon)}, {"nodes", whole_number(count)}});
      }
      cluster["groups"] = std::move(groups);
      continue;
    }
    if (key == "igl") {
      cluster["inter_group_link"] = *value;
      continue;
    }
    if (key == "cluster") {
      auto c = parse_json(*value, "cluster");
      if (!c) return link_error(c.error().message);
      if (!c->is_object()) return link_error("cluster is not a JSON object", ErrorCode::type_error);
      cluster = std::move(c).value();
      cluster_json = true;
      continue;
    }
    const Key* found = nullptr;
    Json* target = nullptr;
    for (const auto& [table, into] :
         {std::pair<std::span<const Key>, Json*>{plan_keys(), &plan}, {model_keys(), &model},
          {cluster_keys(), &cluster}, {top_keys(), &doc.scenario}, {page_keys(), &doc.page}})
      for (const Key& k : table)
        if (key == k.link) found = &k, target = into;
    if (!found)
      return link_error(fmt::format("unknown key '{}'", short_text(key)), ErrorCode::unknown_key);
    auto v = read_value(*value, found->kind, found->json);
    if (!v)
      return link_error(fmt::format("{}={} is not a valid value", key, short_text(*value)),
                        ErrorCode::type_error);
    if (target == &doc.page)
      if (auto e = page_range_error(*found, *v, short_text(*value))) return *e;
    (*target)[found->json] = std::move(*v);
  }
  if (version == 0) return link_error("the link has no format version (v=3)");
  if (version == 3 && !ended) return incomplete_error(pairs);
  if (version < 3 && ended)
    return link_error(fmt::format("'end' ends links of format 3, and this one is format {}",
                                  version));
  if (custom_model) doc.scenario["model"] = std::move(model);
  else if (!model.empty()) return link_error("m.* keys need model=custom", ErrorCode::type_error);
  if (!cluster.empty()) doc.scenario["cluster"] = std::move(cluster);
  if (!plan.empty()) doc.scenario["plan"] = std::move(plan);
  if (version == 1) fill_legacy_defaults(doc.scenario);
  return doc;
}

}  // namespace stepcast
