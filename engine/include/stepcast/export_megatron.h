// A scenario's plan as the training software's own input: Megatron-LM command-line arguments, a
// Megatron-Bridge (NeMo) recipe override snippet, or a torchrun launch line. What the target
// cannot express (a heterogeneous placement, the expert load imbalance, another framework's
// profile) is stated in a comment line, never dropped silently. import_megatron_args.h reads
// the Megatron arguments and the torchrun line back into the same scenario.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stepcast/scenario.h"

namespace stepcast {

enum class PlanExport { megatron_args, bridge_recipe, torchrun };
template <>
struct EnumNames<PlanExport> {
  static constexpr std::array<std::string_view, 3> values = {"megatron-args", "bridge-recipe",
                                                             "torchrun"};
};

// The kind named as the CLI names it ("megatron-args", ...), or nullopt.
std::optional<PlanExport> plan_export_kind(std::string_view name);

// The flag table the importer and the exporters read (engine/src/formats/megatron_flags.cpp),
// one object per Megatron-LM flag in the order the arguments are written: {"flag" (without
// "--"), "key" (the scenario key it says, by schema path), "value" (whether it takes one),
// "by_hand" (read by a rule of its own rather than copied), "bridge" (the Megatron-Bridge
// attributes that hold the key, ", " between several; "" for none)}.
Json megatron_flag_table();

// The text of one export of a parsed scenario (every default already resolved): lines ending in
// "\n"; comments start with "#".
std::string export_plan(const Scenario& scenario, PlanExport kind);

}  // namespace stepcast
