// The schema's keys bound to the structs they fill: each Field is a key's description plus how
// to read it into (and write it from) a member. Adding a plain key is one line in fields.cpp and
// the member the physics reads. Private to the engine.
#pragma once

#include <span>
#include <vector>
#include <type_traits>

#include "scenario/json_reader.h"
#include "json/json_writer.h"
#include "json/member_of.h"
#include "stepcast/hardware.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"
#include "stepcast/schema.h"

namespace stepcast::detail {

template <class Spec>
struct Field {
  KeyInfo info;
  // Reads the key into the spec (nullptr: the parser handles it by hand).
  void (*read)(JsonReader&, const KeyInfo&, Spec&) = nullptr;
  // Writes the resolved value (nullptr: written by hand, or not at all).
  void (*write)(const Spec&, const KeyInfo&, Json&) = nullptr;
  // The same value streamed (reports: no tree); nullptr: `write` into a small tree instead.
  void (*stream)(const Spec&, const KeyInfo&, JsonWriter&) = nullptr;
  // Whether the value `write` writes is `value` (a string's), or with `value` empty is "on": a
  // flag set, a number or a string away from the key's default (a framework's `cannot`
  // entries, rules.cpp); nullptr: read back from `write`'s tree instead.
  bool (*holds)(const Spec&, const KeyInfo&, std::string_view value) = nullptr;
};

// Reads a member by its type: integers, numbers (times the key's scale), booleans, strings and
// enums (by their EnumNames).
template <auto Member>
void read_member(JsonReader& r, const KeyInfo& k, typename MemberOf<Member>::spec& s) {
  using T = typename MemberOf<Member>::type;
  if constexpr (std::is_same_v<T, bool>) {
    s.*Member = r.boolean(k);
  } else if constexpr (std::is_enum_v<T>) {
    s.*Member = static_cast<T>(r.choice(k));
  } else if constexpr (std::is_integral_v<T>) {
    s.*Member = static_cast<T>(r.integer(k));
  } else if constexpr (std::is_floating_point_v<T>) {
    s.*Member = r.number(k);
  } else {
    s.*Member = r.string(k);
  }
}

template <auto Member>
void write_member(const typename MemberOf<Member>::spec& s, const KeyInfo& k, Json& out) {
  using T = typename MemberOf<Member>::type;
  if constexpr (std::is_enum_v<T>) {
    out[std::string(k.name)] = std::string(name_of(s.*Member));
  } else if constexpr (std::is_floating_point_v<T>) {
    out[std::string(k.name)] = s.*Member / k.scale;
  } else {
    out[std::string(k.name)] = s.*Member;
  }
}

// What write_member writes, as the member of an object being streamed.
template <auto Member>
void stream_member(const typename MemberOf<Member>::spec& s, const KeyInfo& k, JsonWriter& w) {
  using T = typename MemberOf<Member>::type;
  if constexpr (std::is_enum_v<T>) {
    w.member(k.name, name_of(s.*Member));
  } else if constexpr (std::is_floating_point_v<T>) {
    w.member(k.name, static_cast<double>(s.*Member / k.scale));
  } else if constexpr (std::is_same_v<T, bool>) {
    w.member(k.name, s.*Member);
  } else if constexpr (std::is_integral_v<T>) {
    static_assert(std::is_signed_v<T>, "a member the tree would write as unsigned");
    w.member(k.name, static_cast<int64_t>(s.*Member));
  } else {
    w.member(k.name, std::string_view(s.*Member));
  }
}

// Field::holds of what write_member writes, without its tree (the rules check every plan a
// search tries against its framework's entries: through the tree, 13 % of a dense search's
// instructions). As the tree reads: an enum and a string are strings, a flag a boolean, the
// other members numbers (an integer's as a double).
template <auto Member>
bool holds_member(const typename MemberOf<Member>::spec& s, const KeyInfo& k,
                  std::string_view value) {
  using T = typename MemberOf<Member>::type;
  const DefaultValue& d = k.fallback;
  if constexpr (std::is_enum_v<T> || std::is_same_v<T, std::string>) {
    std::string_view text;
    if constexpr (std::is_enum_v<T>)
      text = name_of(s.*Member);
    else
      text = s.*Member;
    if (!value.empty()) return text == value;
    return d.kind == DefaultValue::Kind::text && text != d.text;
  } else if constexpr (std::is_same_v<T, bool>) {
    return value.empty() && s.*Member;
  } else if constexpr (std::is_floating_point_v<T>) {
    return value.empty() && d.kind == DefaultValue::Kind::number &&
           static_cast<double>(s.*Member / k.scale) != d.number;
  } else {
    return value.empty() && d.kind == DefaultValue::Kind::number &&
           static_cast<double>(s.*Member) != d.number;
  }
}

// A key bound to a member, read and written by its type. Only the plan is streamed (in every
// report) and checked against frameworks; the other tables' streamers would only add to the
// WebAssembly's size.
template <auto Member>
constexpr Field<typename MemberOf<Member>::spec> member(KeyInfo info) {
  using Spec = typename MemberOf<Member>::spec;
  if constexpr (std::is_same_v<Spec, Plan>)
    return {info, &read_member<Member>, &write_member<Member>, &stream_member<Member>,
            &holds_member<Member>};
  else
    return {info, &read_member<Member>, &write_member<Member>};
}

// The same field read by hand (a key that takes more than its member's type: a list of names).
template <class Spec>
constexpr Field<Spec> read_by(Field<Spec> f,
                              void (*read)(JsonReader&, const KeyInfo&, std::type_identity_t<Spec>&)) {
  f.read = read;
  return f;
}

// Streams the fields of `spec` as the members of an object (the writer's current one), in the
// order nlohmann prints a tree's keys (sorted), skipping those `skip` names: the same members
// and text as every `write` into a tree. `order` holds the fields' indices sorted by name.
template <class Spec, class Skip>
void stream_fields(std::span<const Field<Spec>> fields, std::span<const size_t> order,
                   const Spec& spec, JsonWriter& w, Skip skip) {
  for (const size_t i : order) {
    const Field<Spec>& f = fields[i];
    if (!f.write || skip(f.info.name)) continue;
    if (f.stream) {
      f.stream(spec, f.info, w);
      continue;
    }
    Json one = Json::object();  // a hand-written key: its tree of one member (or none)
    f.write(spec, f.info, one);
    for (auto it = one.begin(); it != one.end(); ++it) {
      w.key(it.key());
      w.value(*it);
    }
  }
}

// The indices of a table's fields in key order (nlohmann's: std::less on the names).
template <class Spec>
std::vector<size_t> sorted_order(std::span<const Field<Spec>> fields) {
  std::vector<size_t> order;  // insertion: run once per table, less code than std::sort
  for (size_t i = 0; i < fields.size(); ++i) {
    auto at = order.begin();
    while (at != order.end() && fields[*at].info.name < fields[i].info.name) ++at;
    order.insert(at, i);
  }
  return order;
}

// Reads every key of a member-bound table into `spec` (keys without a reader are accepted and
// ignored: sources, notes), after rejecting keys the table does not have.
template <class Spec>
void read_fields(JsonReader& r, std::span<const Field<Spec>> fields, Spec& spec) {
  static const std::vector<std::string_view> names = [&] {
    std::vector<std::string_view> out;  // one table per spec type: built once
    for (const auto& f : fields) out.push_back(f.info.name);
    return out;
  }();
  r.reject_unknown(names);
  for (const auto& f : fields)
    if (f.read) f.read(r, f.info, spec);
}

// The typed tables (fields.cpp), in documentation order.
std::span<const Field<ModelSpec>> model_fields();
std::span<const Field<AttentionSpec>> attention_fields();
std::span<const Field<MoeSpec>> moe_fields();
std::span<const Field<MambaSpec>> mamba_fields();
std::span<const Field<GdnSpec>> gdn_fields();
std::span<const Field<Plan>> plan_fields();
std::span<const std::string_view> framework_ids();
std::span<const Field<GpuSpec>> gpu_fields();
std::span<const Field<LinkSpec>> link_fields();
// Keys read by hand (structure rather than a member): the scenario's top level, a cluster group,
// the entries of plan.stages and plan.replicas, a GPU's peaks, and the page's link settings.
std::span<const KeyInfo> scenario_keys();
std::span<const KeyInfo> cluster_keys();
std::span<const KeyInfo> stage_keys();
std::span<const KeyInfo> replica_keys();
std::span<const KeyInfo> peak_keys();
std::span<const KeyInfo> page_keys();
std::span<const KeyInfo> calibration_keys();
std::span<const KeyInfo> calibration_run_keys();
std::span<const KeyInfo> calibration_gemm_keys();
std::span<const KeyInfo> calibration_layer_keys();
std::span<const KeyInfo> calibration_memory_keys();

// The names of a table's keys (for unknown-key checks), built once.
template <class Table>
std::vector<std::string_view> names_of(const Table& table) {
  std::vector<std::string_view> names;
  for (const auto& f : table) {
    if constexpr (std::is_same_v<std::decay_t<decltype(f)>, KeyInfo>)
      names.push_back(f.name);
    else
      names.push_back(f.info.name);
  }
  return names;
}

// Every key of a member-bound table with a writer, into `out`.
template <class Spec>
void write_fields(std::span<const Field<Spec>> fields, const Spec& spec, Json& out) {
  for (const auto& f : fields)
    if (f.write) f.write(spec, f.info, out);
}

// The resolved plan (resolved_plan_json's object) streamed: reports write it with every estimate.
void stream_resolved_plan(const Plan& plan, JsonWriter& w);

// The key `name` of a hand-read table (a programming error when absent: the tables are fixed).
const KeyInfo& key_in(std::span<const KeyInfo> table, std::string_view name);

}  // namespace stepcast::detail
