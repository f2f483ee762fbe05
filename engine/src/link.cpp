#include "stepcast/link.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <vector>

namespace stepcast {

namespace {

enum class Kind { integer, number, boolean, text, json, layout };

struct Key {
  const char* json;  // key in the scenario (or page) object
  const char* link;  // key in the fragment
  Kind kind;
  Json fallback;     // left out of the link when equal (null: always written)
};

// The plan's keys with the engine's defaults (engine/src/scenario.cpp, parse_plan). Short names
// are part of the link format: never rename one; add new keys at the end.
const Key kPlanKeys[] = {
    {"tp", "tp", Kind::integer, 1},
    {"pp", "pp", Kind::integer, 1},
    {"dp", "dp", Kind::integer, nullptr},
    {"cp", "cp", Kind::integer, 1},
    {"vpp", "vpp", Kind::integer, 1},
    {"micro_batch", "mb", Kind::integer, 1},
    {"global_batch", "gbs", Kind::integer, nullptr},
    {"sequence_parallel", "sp", Kind::boolean, false},
    {"recompute", "rc", Kind::text, "none"},
    {"distributed_optimizer", "do", Kind::boolean, false},
    {"zero_stage", "zero", Kind::integer, 0},
    {"precision", "prec", Kind::text, "bf16"},
    {"flash_attention", "fa", Kind::boolean, true},
    {"overlap_grad_reduce", "ogr", Kind::boolean, true},
    {"overlap_param_gather", "opg", Kind::boolean, true},
    {"tp_comm_overlap", "tpo", Kind::boolean, false},
    {"overlap_p2p", "op2p", Kind::boolean, true},
    {"grad_reduce_in_fp32", "gr32", Kind::boolean, true},
    {"pp_scatter_gather", "ppsg", Kind::boolean, false},
    {"stages", "stages", Kind::layout, nullptr},    // "0:auto,1:16" (group:layers)
    {"replicas", "replicas", Kind::layout, nullptr},  // "0:1:auto,1:2:16" (group:count:micro_batches)
};

const Key kModelKeys[] = {
    {"name", "m.name", Kind::text, nullptr},         {"layers", "m.layers", Kind::integer, nullptr},
    {"hidden", "m.hidden", Kind::integer, nullptr},  {"heads", "m.heads", Kind::integer, nullptr},
    {"kv_heads", "m.kv", Kind::integer, nullptr},    {"ffn_hidden", "m.ffn", Kind::integer, nullptr},
    {"vocab", "m.vocab", Kind::integer, nullptr},    {"seq_len", "m.seq", Kind::integer, nullptr},
    {"ffn_type", "m.act", Kind::text, nullptr},      {"position", "m.pos", Kind::text, nullptr},
    {"tied_embeddings", "m.tied", Kind::boolean, nullptr},
    {"norm", "m.norm", Kind::text, nullptr},         {"bias", "m.bias", Kind::boolean, nullptr},
};

const Key kClusterKeys[] = {
    {"node", "node", Kind::text, nullptr},
    {"nodes", "nodes", Kind::integer, nullptr},
    {"gpu", "gpu", Kind::json, nullptr},  // an id, or an inline GPU object
    {"gpus_per_node", "gpn", Kind::integer, nullptr},
    {"intra_node_link", "intra", Kind::json, nullptr},
    {"inter_node_link", "inter", Kind::json, nullptr},
    {"nics_per_node", "nics", Kind::integer, nullptr},
};

const Key kTopKeys[] = {
    {"seq_len", "seq", Kind::integer, nullptr},
    {"name", "name", Kind::text, nullptr},
};

const Key kPageKeys[] = {
    {"tokens", "tokens", Kind::number, nullptr},
    {"price_per_gpu_hour", "price", Kind::number, nullptr},
};

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

Error link_error(std::string message) {
  return Error{ErrorCode::parse_error, "link", "link: " + std::move(message)};
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

std::optional<Json> read_layout(const std::string& text, const char* key) {
  if (!text.empty() && text[0] == '[') {
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_array()) return std::nullopt;
    return j;
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
      e[fields[f]] = static_cast<int64_t>(std::stoll(part));
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
      return fmt::format("{}", d);
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

std::optional<Json> read_value(const std::string& text, Kind kind, const char* key) {
  switch (kind) {
    case Kind::layout: return read_layout(text, key);
    case Kind::integer: {
      if (text.empty() || text.size() > 18) return std::nullopt;
      char* end = nullptr;
      const long long n = std::strtoll(text.c_str(), &end, 10);
      if (*end != '\0') return std::nullopt;
      return Json(static_cast<int64_t>(n));
    }
    case Kind::number: {
      if (text.empty() || text.size() > 32) return std::nullopt;
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
        Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) return std::nullopt;
        return j;
      }
      return Json(text);
    }
  }
  return std::nullopt;
}

// Appends the keys of `table` found in `object`; fails on a value of the wrong type.
std::optional<Error> encode_keys(const Json& object, std::span<const Key> table,
                                 std::string_view where, std::string& out) {
  for (const Key& k : table) {
    auto it = object.find(k.json);
    if (it == object.end()) continue;
    if (!k.fallback.is_null() && *it == k.fallback) continue;  // defaults stay out of the link
    auto text = write_value(*it, k.kind, k.json);
    if (!text)
      return link_error(fmt::format("{}.{}={} cannot be written in a link", where, k.json,
                                    it->dump()));
    out += fmt::format("&{}={}", k.link, *text);
  }
  return std::nullopt;
}

std::optional<Error> reject_unknown(const Json& object, std::span<const Key> table,
                                    std::string_view where) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool known = false;
    for (const Key& k : table) known = known || it.key() == k.json;
    if (!known)
      return link_error(fmt::format("{}.{} cannot be carried by a link", where, it.key()));
  }
  return std::nullopt;
}

}  // namespace

Result<std::string> scenario_to_link(const LinkDocument& doc, std::string_view base) {
  const Json& s = doc.scenario;
  if (!s.is_object()) return link_error("the scenario must be a JSON object");
  std::string out = fmt::format("{}#v={}", base, kLinkFormatVersion);
  for (auto it = s.begin(); it != s.end(); ++it) {
    const std::string& key = it.key();
    if (key != "model" && key != "cluster" && key != "plan" && key != "seq_len" && key != "name")
      return link_error(fmt::format("{} cannot be carried by a link", key));
  }
  if (auto m = s.find("model"); m != s.end()) {
    if (m->is_string()) {
      out += "&model=" + percent_encode(m->get_ref<const std::string&>());
    } else if (m->is_object()) {
      out += "&model=custom";
      if (auto e = reject_unknown(*m, kModelKeys, "model")) return *e;
      if (auto e = encode_keys(*m, kModelKeys, "model", out)) return *e;
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
      if (auto e = reject_unknown(*c, kClusterKeys, "cluster")) return *e;
      if (auto e = encode_keys(*c, kClusterKeys, "cluster", out)) return *e;
    }
  }
  if (auto p = s.find("plan"); p != s.end()) {
    if (!p->is_object()) return link_error("plan must be an object");
    if (auto e = reject_unknown(*p, kPlanKeys, "plan")) return *e;
    if (auto e = encode_keys(*p, kPlanKeys, "plan", out)) return *e;
  }
  if (auto e = encode_keys(s, kTopKeys, "scenario", out)) return *e;
  if (!doc.page.is_object()) return link_error("page settings must be an object");
  if (auto e = reject_unknown(doc.page, kPageKeys, "page")) return *e;
  if (auto e = encode_keys(doc.page, kPageKeys, "page", out)) return *e;
  return out;
}

Result<LinkDocument> scenario_from_link(std::string_view url) {
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
    doc.scenario = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (doc.scenario.is_discarded() || !doc.scenario.is_object())
      return link_error("the scenario in the link is not a JSON object");
    return doc;
  }

  doc.scenario = Json::object();
  Json model = Json::object(), cluster = Json::object(), plan = Json::object();
  bool custom_model = false, have_version = false;
  for (const std::string_view pair : split(fragment, '&')) {
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos)
      return link_error(fmt::format("'{}' is not key=value", percent_encode(pair)));
    const std::string key(pair.substr(0, eq));
    auto value = percent_decode(pair.substr(eq + 1));
    if (!value) return link_error(fmt::format("bad percent-encoding in {}", percent_encode(key)));
    if (key == "v") {
      if (*value != "1")
        return link_error(fmt::format("format version {} is not one this Stepcast reads (1)",
                                      percent_encode(*value)));
      have_version = true;
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
      if (cluster.contains("groups")) return link_error("'groups' appears twice");
      Json groups = Json::array();
      for (const std::string_view piece : split(*value, ',')) {
        const std::string entry(piece);
        const size_t colon = entry.rfind(':');
        const std::string count = colon == std::string::npos ? "" : entry.substr(colon + 1);
        if (colon == 0 || count.empty() || count.size() > 9 ||
            count.find_first_not_of("0123456789") != std::string::npos)
          return link_error(fmt::format("groups={} is not node:count,...", percent_encode(*value)));
        groups.push_back(Json{{"node", entry.substr(0, colon)}, {"nodes", std::stoll(count)}});
      }
      cluster["groups"] = std::move(groups);
      continue;
    }
    if (key == "igl") {
      if (cluster.contains("inter_group_link")) return link_error("'igl' appears twice");
      cluster["inter_group_link"] = *value;
      continue;
    }
    if (key == "cluster") {
      Json c = Json::parse(*value, nullptr, /*allow_exceptions=*/false);
      if (c.is_discarded() || !c.is_object()) return link_error("cluster is not a JSON object");
      cluster = std::move(c);
      continue;
    }
    const Key* found = nullptr;
    Json* target = nullptr;
    for (const auto& [table, into] :
         {std::pair<std::span<const Key>, Json*>{kPlanKeys, &plan}, {kModelKeys, &model},
          {kClusterKeys, &cluster}, {kTopKeys, &doc.scenario}, {kPageKeys, &doc.page}})
      for (const Key& k : table)
        if (key == k.link) found = &k, target = into;
    if (!found) return link_error(fmt::format("unknown key '{}'", percent_encode(key)));
    if (target->contains(found->json))
      return link_error(fmt::format("'{}' appears twice", key));
    auto v = read_value(*value, found->kind, found->json);
    if (!v)
      return link_error(fmt::format("{}={} is not a valid value", key, percent_encode(*value)));
    (*target)[found->json] = std::move(*v);
  }
  if (!have_version) return link_error("the link has no format version (v=1)");
  if (custom_model) doc.scenario["model"] = std::move(model);
  else if (!model.empty()) return link_error("m.* keys need model=custom");
  if (!cluster.empty()) doc.scenario["cluster"] = std::move(cluster);
  if (!plan.empty()) doc.scenario["plan"] = std::move(plan);
  return doc;
}

}  // namespace stepcast
