// One description per input key: its JSON name, the short name links use, its type, range or
// choices, default, unit, a one-line doc and the page control that shows it. The scenario parser,
// the resolved-scenario writer, the link codec, docs/scenario.md and the web page's form (through
// the schema() binding) all read these tables, so a rule or a default lives in one place.
//
// The typed tables that bind each key to a struct member live next to the parser
// (engine/src/scenario/fields.h); this header is the plain data every reader shares.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"

namespace stepcast {

struct Catalog;
struct Plan;

// How a value is written in JSON.
enum class ValueType {
  integer,    // a whole number (a float with no fraction is accepted)
  number,     // any finite number
  boolean,
  choice,     // one of `choices`
  text,       // free text
  reference,  // a preset id, or an inline object of the preset's schema
  list,       // an array of objects (plan.stages, plan.replicas, cluster.groups)
  object,     // an object of its own keys (model, cluster, plan)
};
template <>
struct EnumNames<ValueType> {
  static constexpr std::array<std::string_view, 8> values = {
      "integer", "number", "boolean", "choice", "text", "reference", "list", "object"};
};

// Where the page shows a key: its fieldset, or nowhere (a key only files and links carry).
enum class Control { none, model, cluster, plan, advanced, placement, page };
template <>
struct EnumNames<Control> {
  static constexpr std::array<std::string_view, 7> values = {
      "none", "model", "cluster", "plan", "advanced", "placement", "page"};
};

// What a key is when a document leaves it out.
struct DefaultValue {
  enum class Kind {
    required,  // no default: the key must be given
    none,      // optional, and absent means absent (a name, a layout)
    number,    // `number`
    boolean,   // `flag`
    text,      // `text`
    rule,      // derived from other keys by the rule `text` says (dp, kv_heads, bias, ...)
  };
  Kind kind = Kind::none;
  double number = 0;
  bool flag = false;
  std::string_view text = {};

  static constexpr DefaultValue required() { return {Kind::required}; }
  static constexpr DefaultValue absent() { return {Kind::none}; }
  static constexpr DefaultValue of(double v) { return {Kind::number, v}; }
  static constexpr DefaultValue of(bool v) { return {Kind::boolean, 0, v}; }
  static constexpr DefaultValue of(const char* v) { return {Kind::text, 0, false, v}; }
  static constexpr DefaultValue rule(const char* how) { return {Kind::rule, 0, false, how}; }
};

struct KeyInfo {
  std::string_view object;  // the object holding the key: "plan", "model", "plan.stages[]", ...
  std::string_view name;    // the key inside it: "tp"
  std::string_view link;    // its name in share links ("" when links do not carry it alone)
  ValueType type = ValueType::integer;
  DefaultValue fallback = {};
  double min = 0, max = 0;  // integer and number ranges, inclusive (number: min exclusive when
  bool min_exclusive = false;  // min_exclusive; max 0 = no upper bound)
  std::span<const std::string_view> choices = {};
  std::string_view unit = {};   // the unit of the JSON value ("GPUs", "GiB", "tokens")
  std::string_view label = {};  // the page's label
  std::string_view doc = {};    // one line: what it means and the rules it obeys
  Control control = Control::none;
  double scale = 1;  // the JSON value times scale is the engine's value (GiB -> bytes)
  // The key means something only when this input is given: a path ("model.moe") or a path and
  // the value it must have ("model.attention.type=mla"); "" = always. For the page, which hides
  // a control that does not apply (expert parallelism for a dense model).
  std::string_view needs = {};

  // "plan.tp"; "plan.stages[].layers" for keys of list entries.
  std::string path() const;
};

// Every key, grouped by object in the order the documentation lists them.
std::span<const KeyInfo> schema_keys();

// The key `name` of `object`, or nullptr.
const KeyInfo* find_key(std::string_view object, std::string_view name);

// The objects the schema describes, in documentation order.
std::span<const std::string_view> schema_objects();

// The schema as JSON for the web page: {"version", "objects": [...], "keys": [{"path", "object",
// "name", "link", "type", "default", "min", "max", "choices", "unit", "label", "doc",
// "control", "needs" (only for a key with a condition)}]}. "default" is a value, null
// (absent), "required" or {"rule": "..."}.
Json schema_json();

// docs/scenario.md's table of one object's keys (markdown), generated from the schema.
std::string schema_markdown(std::string_view object);

// The framework profiles' settings as one table (a column per profile), for docs/scenario.md.
std::string framework_markdown(const Catalog& catalog);

// The rule ids of errors (rule_ids.h's kRules) as a table: id, meaning, values.
std::string rules_markdown();

// A markdown document with every block between "<!-- schema: OBJECT -->" and "<!-- /schema -->"
// replaced by schema_markdown(OBJECT) ("frameworks": framework_markdown of the built-in
// presets; "errors": rules_markdown()): how docs/scenario.md is kept equal to the schema (a test
// fails when it is not; `stepcast schema --write-docs docs/scenario.md` rewrites it).
std::string fill_schema_tables(std::string_view markdown);

// The plan's keys as the engine runs them (the report's "plan"): every key of the schema's plan
// table, with sequence_parallel off at tp = 1 and the ZeRO stage and distributed optimizer made
// consistent. Layouts (stages, replicas) are not included.
Json resolved_plan_json(const Plan& plan);

}  // namespace stepcast
