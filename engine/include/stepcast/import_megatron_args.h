// A Megatron-LM command line (a pretrain_gpt.py launch script) -> a scenario: the model object
// from the network-size flags, the plan from the parallelism and training flags, and the cluster
// when a torchrun prefix gives the node and GPU counts. What the engine does not model is
// listed, not dropped: `ignored` holds every flag it does not read, `notes` every assumption.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"
#include "stepcast/result.h"

namespace stepcast {

struct Catalog;

struct MegatronImport {
  Json scenario;                     // {"model": {...}, "plan": {...}[, "cluster": {...}]}
  std::vector<std::string> ignored;  // "--lr 3e-4": flags the engine does not model
  std::vector<std::string> notes;    // assumptions ("cluster: 4 nodes of dgx-h100 (default)")
};

struct MegatronImportOptions {
  // The node a torchrun prefix's --nnodes counts (its GPU count need not match
  // --nproc-per-node: the cluster is then that node's GPU and links, nproc GPUs a node).
  std::string node = "dgx-h100";
};

// The command line as a shell would split it: backslash-newline continuations, '...' and "..."
// quotes, backslash escapes, # comments; leading VAR=value assignments are dropped. Everything
// up to the first word ending in ".py" is the launcher (torchrun and its options, python); with
// no such word every word is a training argument. `--flag=value` and `--flag value` both read.
//
// Errors (each naming the flag as its path): parse_error (an unclosed quote), missing_key (a
// required flag: --num-layers, --hidden-size, --num-attention-heads, --seq-length,
// --vocab-size or --padded-vocab-size, --global-batch-size), type_error (a value that is not a
// number, a $VARIABLE the importer cannot expand), out_of_range (a choice Megatron does not
// have, a count out of range).
Result<MegatronImport> scenario_from_megatron_args(std::string_view command_line,
                                                   const Catalog& catalog,
                                                   const MegatronImportOptions& options = {});

// {"scenario": {...}, "ignored": [...], "notes": [...]}
Json to_json(const MegatronImport& imported);

// The shell words of a command line (as above), or a parse_error.
Result<std::vector<std::string>> split_command_line(std::string_view text);

}  // namespace stepcast
