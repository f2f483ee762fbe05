// The struct and the type of a pointer to member, for the key tables that bind a key to a member
// (the scenario's input keys, scenario/fields.h; the report's keys, report/report_keys.h).
// Private to the engine.
#pragma once

namespace stepcast::detail {

template <auto Member>
struct MemberOf;
template <class Spec, class T, T Spec::*M>
struct MemberOf<M> {
  using spec = Spec;
  using type = T;
};

}  // namespace stepcast::detail
