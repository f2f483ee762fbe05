// The plan's keys as the engine runs them (schema.h's resolved_plan_json; streamed into every
// report), written through the plan's key table.
#include "scenario/fields.h"
#include "stepcast/schema.h"

namespace stepcast {

using detail::plan_fields;
using detail::sorted_order;
using detail::stream_fields;

void detail::stream_resolved_plan(const Plan& plan, JsonWriter& w) {
  static const std::vector<size_t> order = sorted_order(plan_fields());  // the table is fixed
  const Plan p = plan.effective();  // what the estimate ran
  w.begin_object();
  stream_fields(plan_fields(), std::span<const size_t>(order), p, w, [&](std::string_view name) {
    return (name == "first_stage_layers" && p.first_stage_layers == 0) ||
           (name == "last_stage_layers" && p.last_stage_layers == 0);
  });
  w.end_object();
}

Json resolved_plan_json(const Plan& plan) {
  const Plan p = plan.effective();  // what the estimate ran
  Json out = Json::object();
  detail::write_fields(detail::plan_fields(), p, out);
  // 0 means "the even share": a plan without the key.
  if (p.first_stage_layers == 0) out.erase("first_stage_layers");
  if (p.last_stage_layers == 0) out.erase("last_stage_layers");
  return out;
}

}  // namespace stepcast
