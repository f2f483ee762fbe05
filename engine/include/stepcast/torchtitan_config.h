// A torchtitan job config (its TOML file, `--job.config_file`) in and out: the model by its
// torchtitan name and flavor (a preset), the plan from [parallelism], [training] and
// [activation_checkpoint], on the `torchtitan` framework profile (presets/frameworks/
// torchtitan.json). The fields and their defaults are those of torchtitan's JobConfig at
// pytorch/torchtitan 4a950eaa (torchtitan/config/job_config.py, 2026-04-13), the last release of
// the TOML configs: the next commit, 76d5c72e2, replaced them with Python dataclass configs.
// What the engine does not model is listed, not dropped (`ignored`, `notes`), as for a Megatron
// command line (import_megatron_args.h). Native builds only (the WebAssembly module has no TOML
// reader: toml++, Debian's libtomlplusplus-dev).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/json.h"
#include "stepcast/result.h"

namespace stepcast {

struct Catalog;
struct Scenario;

struct TorchtitanImport {
  Json scenario;                     // {"model": "<preset>", "cluster": {...}, "plan": {...}}
  std::vector<std::string> ignored;  // "optimizer.lr = 0.00015": settings the engine does not model
  std::vector<std::string> notes;    // what the import assumed or could not express
};

struct TorchtitanImportOptions {
  std::string node = "dgx-h100";  // the node preset the job runs on
  int nodes = 0;  // nodes of it; 0: from the degrees (every degree given, none -1)
};

// Errors (each naming the TOML key as its path): parse_error (not TOML, with its line),
// missing_key (model.flavor of a model it names), out_of_range (a model or flavor with no preset,
// a degree below 1 other than data_parallel_shard_degree = -1, a schedule torchtitan does not
// have, degrees that do not fill the nodes), type_error (a value of the wrong type).
Result<TorchtitanImport> scenario_from_torchtitan_toml(std::string_view toml, const Catalog& catalog,
                                                       const TorchtitanImportOptions& options = {});

// {"scenario": {...}, "ignored": [...], "notes": [...]}
Json to_json(const TorchtitanImport& imported);

// The plan as a torchtitan job config (TOML text; comments start with "#"): what torchtitan
// cannot run as the plan says (a model with no torchtitan flavor, Megatron-only settings) is a
// comment line, never dropped silently.
std::string export_torchtitan_toml(const Scenario& scenario);

}  // namespace stepcast
