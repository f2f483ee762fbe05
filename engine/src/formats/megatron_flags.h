// Megatron-LM's flags, each with the scenario key it says, in one table (megatron_flags.cpp):
// the importer (import_megatron_args.cpp) reads the flags it knows and copies the plain ones
// into the scenario from it, the exporter (export_megatron.cpp) writes its arguments in the
// table's order from it, and the Megatron-Bridge recipe takes its attributes' names from it.
// Flag names are Megatron-LM's (megatron/training/arguments.py and the TransformerConfig /
// ModelParallelConfig fields it turns into flags); attribute names Megatron-Bridge's
// ConfigContainer's (cfg.model, cfg.train, cfg.ddp, cfg.optimizer, cfg.dataset,
// cfg.mixed_precision, cfg.comm_overlap). Private to the engine.
//
// Why a table of its own, keyed by schema path, rather than a column of the input key table
// (scenario/fields.cpp): one key is several flags (plan.precision is --bf16, --fp16,
// --fp8-format, --fp8-recipe and --fp4-format), a flag may say a key only in one direction
// (--padded-vocab-size), and Megatron's defaults differ from the scenario's (the MoE token
// dispatcher is allgather there, alltoall here): rows per flag in the formats room, where the
// page's schema does not carry them.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "stepcast/json.h"
#include "stepcast/scenario.h"
#include "stepcast/schema.h"

namespace stepcast::detail {

// A flag takes a value, or is a switch: present means the key is true (`on`), false (`off`), or
// holds the row's `is` text (--multi-latent-attention: model.attention.type "mla").
enum class FlagForm { value, on, off };

// The flag's value as the exporter writes it, where it is not the key's own: nullopt leaves the
// flag out, "" writes the switch (or a flag without a value).
using ExportedValue = std::optional<std::string> (*)(const Scenario&, const Plan& effective);

struct MegatronFlag {
  std::string_view flag;  // without the leading "--"
  std::string_view key;   // the scenario key it says, by schema path ("plan.tp")
  FlagForm form = FlagForm::value;
  // What the flag's absence means to Megatron-LM, in the key's terms; the importer copies the
  // flag by it. required(): the importer stops without it; of(v): Megatron's default, written
  // into the scenario; absent(): nothing written (the scenario's own default stands). A switch
  // copied this way writes true or false either way (an `is` switch writes only when present).
  // rule(how): read by hand in the importer, `how` saying the rule.
  DefaultValue absent = DefaultValue::absent();
  // Exported only where the value is not `absent`'s (--context-parallel-size 1 is left out).
  // An absent() value flag is always left out where the key is unset (0, empty, null).
  bool quiet = false;
  std::string_view is = {};
  ExportedValue exported = nullptr;  // nullptr: the key's value, by `form`
  // The Megatron-Bridge ConfigContainer attributes that hold the key's value where the recipe
  // writes it (", " between several).
  std::string_view bridge = {};
  // The flag takes a list (argparse nargs='*'): every word up to the next flag, joined by
  // spaces (--recompute-modules core_attn mlp).
  bool many = false;

  bool by_hand() const { return absent.kind == DefaultValue::Kind::rule; }
  bool takes_value() const { return form == FlagForm::value; }
};

// Every flag the importer reads and the exporter writes, in the exporter's order.
std::span<const MegatronFlag> megatron_flags();

// The row of `flag` (a programming error when absent: hand-written code names a table flag).
const MegatronFlag& megatron_flag(std::string_view flag);
// The row of `flag`, or null (for the command line's words).
const MegatronFlag* find_megatron_flag(std::string_view flag);

// The schema's description of the row's key (a programming error when absent).
const KeyInfo& key_of(const MegatronFlag& row);

// The value at a schema path ("model.moe.top_k") of a scenario document, or null.
const Json* value_at(const Json& document, std::string_view path);
// Whether the key at `path` means something in the document: its object is there (a dense
// model has no model.moe) and the schema's condition on it holds (KeyInfo::needs).
bool applies(const Json& document, std::string_view path);

// A value as one shell word, never split or expanded: in single quotes unless it is plain, an
// embedded quote written '\'' (what the importer's splitter reads back).
std::string shell_word(const std::string& value);

}  // namespace stepcast::detail
