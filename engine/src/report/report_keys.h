// The report's keys: one table per struct the report holds (Report, Breakdown, StageReport,
// MemoryBreakdown, CommOp, ReplicaReport, TimelineEvent, FitFix), each key its JSON name, unit, label,
// one-line doc and how its value is written. The streamed JSON (report_writer.cpp), the tree
// (parsed from it), the text table's labels (report.cpp), the report section of
// docs/scenario.md and the page's parts and labels (report_schema(), the `reportSchema` binding)
// all read these tables: adding a report part is the struct's member, one line here and the code
// that fills it. Private to the engine.
#pragma once

#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "json/json_writer.h"
#include "json/member_of.h"
#include "stepcast/report.h"

namespace stepcast::detail {

template <class Spec>
struct ReportKey {
  std::string_view name;
  std::string_view unit;   // "s", "bytes", "TFLOP/s", "tokens/s", "samples/s", "1" (a fraction);
                           // empty for counts, flags, names and containers
  std::string_view label;  // what the page and the text table call it (empty: not shown)
  std::string_view doc;
  // Writes the key's value (the caller has written the key).
  void (*write)(JsonWriter&, const Spec&, ReportKind) = nullptr;
  // The table of the object (or of each element of the array) the value is, by its name in
  // report_schema(); empty for scalars and for parts described elsewhere (the plan, the
  // calibration).
  std::string_view of = {};
  bool array = false;
  bool full_only = false;                   // left out of a summary report
  bool (*present)(const Spec&) = nullptr;   // nullptr: always present
  double (*number)(const Spec&) = nullptr;  // a numeric member's value (the text table's)
};

// A scalar value by its type, as nlohmann's tree would hold it: numbers, integers, flags, text
// and enums (by their names).
template <class T>
void write_scalar(JsonWriter& w, const T& v) {
  if constexpr (std::is_enum_v<T>)
    w.value(name_of(v));
  else if constexpr (std::is_same_v<T, bool>)
    w.value(v);
  else if constexpr (std::is_floating_point_v<T>)
    w.value(static_cast<double>(v));
  else if constexpr (std::is_integral_v<T>)
    w.value(static_cast<int64_t>(v));
  else
    w.value(std::string_view(v));
}

template <auto Member>
void write_member(JsonWriter& w, const typename MemberOf<Member>::spec& s, ReportKind) {
  write_scalar(w, s.*Member);
}

template <auto Member>
double number_of(const typename MemberOf<Member>::spec& s) {
  return static_cast<double>(s.*Member);
}

// A key holding a member's value.
template <auto Member>
constexpr ReportKey<typename MemberOf<Member>::spec> value(std::string_view name,
                                                               std::string_view unit,
                                                               std::string_view label,
                                                               std::string_view doc) {
  using T = typename MemberOf<Member>::type;
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
    return {name, unit, label, doc, &write_member<Member>, {}, false, false, nullptr,
            &number_of<Member>};
  else
    return {name, unit, label, doc, &write_member<Member>};
}

// The members of `spec` as an object, in the order nlohmann prints a tree's keys (sorted).
template <class Spec>
void write_object(JsonWriter& w, const Spec& spec, std::span<const ReportKey<Spec>> keys,
                  std::span<const size_t> order, ReportKind kind) {
  w.begin_object();
  for (const size_t i : order) {
    const ReportKey<Spec>& k = keys[i];
    if ((k.full_only && kind != ReportKind::full) || (k.present && !k.present(spec))) continue;
    w.key(k.name);
    k.write(w, spec, kind);
  }
  w.end_object();
}

// The indices of a table's keys in nlohmann's order (std::less on the names).
template <class Spec>
std::vector<size_t> key_order(std::span<const ReportKey<Spec>> keys) {
  std::vector<size_t> order;  // insertion: run once per table
  for (size_t i = 0; i < keys.size(); ++i) {
    auto at = order.begin();
    while (at != order.end() && keys[*at].name < keys[i].name) ++at;
    order.insert(at, i);
  }
  return order;
}

// The tables, each with its keys' order (computed once; immutable afterwards).
template <class Spec>
struct ReportTable {
  std::string_view name;  // "report", "breakdown_s", "stages[]", ...
  std::span<const ReportKey<Spec>> keys;
  std::vector<size_t> order;
};
// A table's rows as report_schema() gives them: name, unit, label, doc, and where the value is
// an object (or array of objects) of another table, that table's name (`of`, `array`).
template <class Spec>
void schema_rows(const ReportTable<Spec>& t, Json& out) {
  Json rows = Json::array();
  for (const auto& k : t.keys) {
    Json row{{"name", k.name}, {"unit", k.unit}, {"label", k.label}, {"doc", k.doc}};
    if (!k.of.empty()) row["of"] = k.of;
    if (k.array) row["array"] = true;
    if (k.full_only) row["summary"] = false;
    rows.push_back(std::move(row));
  }
  out[std::string(t.name)] = std::move(rows);
}

const ReportTable<Report>& report_table();
const ReportTable<Report>& timeline_table();
const ReportTable<Breakdown>& breakdown_table();
const ReportTable<StageReport>& stage_table();
const ReportTable<MemoryBreakdown>& memory_table();
const ReportTable<CommOp>& op_table();
const ReportTable<ReplicaReport>& replica_table();
const ReportTable<TimelineEvent>& event_table();
const ReportTable<FitFix>& fit_fix_table();

}  // namespace stepcast::detail
