// The presets: GPUs, links, nodes, models and calibration constants, parsed from the JSON files in
// presets/ (embedded into the binary at build time, so the engine does no I/O).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/hardware.h"
#include "stepcast/json.h"
#include "stepcast/model.h"
#include "stepcast/plan.h"
#include "stepcast/result.h"

namespace stepcast {

struct NodePreset {
  std::string id;
  std::string name;
  std::string gpu;
  int gpus_per_node = 0;
  std::string intra_node_link;
  std::string inter_node_link;
  int nics_per_node = 0;
  double host_link_Bps_per_dir = 0;  // GPU to host memory, per direction; 0: not stated
};

// A training stack's profile (presets/frameworks/<id>.json): the plan flags it sets when the
// scenario leaves them out, how it executes (kernels, ZeRO-3 fetches, gradient reduction), and the
// plan keys it cannot honour (a flag on, or a size such as cp above 1). Every setting carries its
// source in the file.
struct FrameworkProfile {
  std::string id;
  std::string name;
  Json plan_defaults = Json::object();  // plan key -> value
  Execution execution;
  // What it cannot do -> why. An entry is a plan key ("cp": any value but the key's default, a
  // flag on), a key and the one value it refuses ("optimizer=muon"), and either may end in
  // " with " another key that must be on too ("optimizer=sgd with distributed_optimizer"), or
  // hold a value ("bf16_moments with master_weights=fp32").
  std::vector<std::pair<std::string, std::string>> cannot;
  struct Cannot {
    std::string_view key, value, with, with_value;
  };
  static Cannot cannot_of(std::string_view entry) {
    Cannot out;
    const size_t with = entry.find(" with ");
    if (with != std::string_view::npos) {
      out.with = entry.substr(with + 6);
      entry = entry.substr(0, with);
      if (const size_t eq = out.with.find('='); eq != std::string_view::npos) {
        out.with_value = out.with.substr(eq + 1);
        out.with = out.with.substr(0, eq);
      }
    }
    const size_t eq = entry.find('=');
    out.key = entry.substr(0, eq);
    if (eq != std::string_view::npos) out.value = entry.substr(eq + 1);
    return out;
  }
  // Whether it cannot do key `key` at all (any value away from its default).
  bool cannot_do(std::string_view key) const {
    for (const auto& c : cannot)
      if (c.first == key) return true;
    return false;
  }
  // The values of choice `key` it refuses, alone or with another key ("muon, sgd with
  // distributed_optimizer"); empty if none.
  std::string refused_values(std::string_view key) const {
    std::string out;
    for (const auto& c : cannot) {
      const Cannot x = cannot_of(c.first);
      if (x.key != key || x.value.empty()) continue;
      if (!out.empty()) out += ", ";
      out += x.value;
      if (!x.with.empty()) (out += " with ") += x.with;
    }
    return out;
  }
};

struct Catalog {
  std::vector<FrameworkProfile> frameworks;
  std::vector<GpuSpec> gpus;
  std::vector<LinkSpec> links;
  std::vector<NodePreset> nodes;
  std::vector<ModelSpec> models;
  Calibration calibration;
  // {"gpus": [...], "links": [...], "nodes": [...], "models": [...], "frameworks": [...]} as written
  Json documents;

  const GpuSpec* find_gpu(std::string_view id) const;
  const LinkSpec* find_link(std::string_view id) const;
  const NodePreset* find_node(std::string_view id) const;
  const ModelSpec* find_model(std::string_view id) const;
  const FrameworkProfile* find_framework(std::string_view id) const;
};

// One preset file: its path relative to presets/ ("gpus/h100-sxm5-80gb.json") and its text.
struct PresetFile {
  std::string_view path;
  std::string_view text;
};

// Parses every file; the kind of each follows from its folder. "calibration.json" holds the
// fitted constants. Errors carry "<path>: <json path>".
Result<Catalog> load_catalog(std::span<const PresetFile> files);

// The presets compiled into this build, parsed once on first use (immutable afterwards).
const Catalog& builtin_catalog();

// The embedded files themselves (generated at build time from presets/index.json).
std::span<const PresetFile> builtin_preset_files();

}  // namespace stepcast
