// stepcast import / export: other tools' descriptions of a model or a plan in, the plan out as
// other tools' arguments. Thin: read, call the engine's importers and exporters, print.
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli_io.h"
#include "stepcast/export_megatron.h"
#include "stepcast/import_hf_config.h"
#include "stepcast/import_megatron_args.h"
#include "stepcast/share_link.h"
#include "stepcast/torchtitan_config.h"

using namespace stepcast;
using stepcast::cli::dump;
using stepcast::cli::fail;
using stepcast::cli::read_input;

namespace {

struct IoArgs {
  std::vector<std::string> positional;
  std::string format;
  std::string link;
  std::string node;
  std::string nodes;  // import torchtitan: the node count
  std::string error;
};

IoArgs parse_io_args(int argc, char** argv, int first) {
  IoArgs a;
  a.error = stepcast::cli::read_options(
      argc, argv, first, {{"--format", &a.format}, {"--link", &a.link}, {"--node", &a.node},
                              {"--nodes", &a.nodes}},
      a.positional);
  return a;
}

// An import's --format (one of two, the first the default) and its input file: an empty
// `format` after a failure, whose message is printed.
std::string import_input(const IoArgs& args, const char* first, const char* second, std::string& text) {
  const std::string format = args.format.empty() ? first : args.format;
  if (format != first && format != second) {
    fail(fmt::format("--format={} must be {} or {}", format, first, second));
    return {};
  }
  if (auto e = read_input(args.positional[1], text); !e.empty()) {
    fail(e);
    return {};
  }
  return format;
}

int import_hf_config(const IoArgs& args) {
  std::string text;
  const std::string format = import_input(args, "model", "scenario", text);
  if (format.empty()) return 2;
  auto model = model_from_hf_config(text);
  if (!model) return fail(model.error());
  std::cout << dump(format == "model" ? *model : scenario_with_model(*model), 2) << "\n";
  return 0;
}

// JSON {"scenario", "ignored", "notes"} (the page's binding returns the same), or the scenario
// alone with each ignored flag and note as a "warning:" line on stderr.
int import_megatron_args(const IoArgs& args, const Catalog& catalog) {
  std::string text;
  const std::string format = import_input(args, "json", "scenario", text);
  if (format.empty()) return 2;
  MegatronImportOptions options;
  if (!args.node.empty()) options.node = args.node;
  auto imported = scenario_from_megatron_args(text, catalog, options);
  if (!imported) return fail(imported.error());
  if (format == "json") {
    std::cout << dump(to_json(*imported), 2) << "\n";
    return 0;
  }
  for (const auto& flag : imported->ignored)
    std::cerr << "warning: not modelled, ignored: " << printable(flag, 200) << "\n";
  for (const auto& note : imported->notes) std::cerr << "warning: " << printable(note, 400) << "\n";
  std::cout << dump(imported->scenario, 2) << "\n";
  return 0;
}

// A torchtitan job config: JSON {"scenario", "ignored", "notes"}, or the scenario alone with
// each ignored setting and note as a "warning:" line on stderr.
int import_torchtitan(const IoArgs& args, const Catalog& catalog) {
  std::string text;
  const std::string format = import_input(args, "json", "scenario", text);
  if (format.empty()) return 2;
  TorchtitanImportOptions options;
  if (!args.node.empty()) options.node = args.node;
  if (!args.nodes.empty()) {
    char* end = nullptr;
    const long n = std::strtol(args.nodes.c_str(), &end, 10);
    if (*end != '\0' || n < 1 || n > 1 << 20)
      return fail(fmt::format("--nodes={} must be a whole number from 1", printable(args.nodes, 40)));
    options.nodes = static_cast<int>(n);
  }
  auto imported = scenario_from_torchtitan_toml(text, catalog, options);
  if (!imported) return fail(imported.error());
  if (format == "json") {
    std::cout << dump(to_json(*imported), 2) << "\n";
    return 0;
  }
  for (const auto& s : imported->ignored)
    std::cerr << "warning: not modelled, ignored: " << printable(s, 200) << "\n";
  for (const auto& note : imported->notes) std::cerr << "warning: " << printable(note, 400) << "\n";
  std::cout << dump(imported->scenario, 2) << "\n";
  return 0;
}

int export_plan_text(const IoArgs& args, const Catalog& catalog) {
  const auto kind = plan_export_kind(args.positional[0]);
  const bool torchtitan = args.positional[0] == "torchtitan";
  if (!kind && !torchtitan)
    return fail(fmt::format("export {}: the kinds are megatron-args, bridge-recipe, torchrun, "
                            "torchtitan",
                            printable(args.positional[0])));
  std::string text;
  if (!args.link.empty()) {  // a link and a JSON file are interchangeable, as for estimate
    auto doc = scenario_from_link(args.link);
    if (!doc) return fail(doc.error());
    text = dump(doc->scenario);
  } else if (auto e = read_input(args.positional[1], text); !e.empty()) {
    return fail(e);
  }
  auto scenario = parse_scenario(text, catalog);
  if (!scenario) return fail(scenario.error());
  std::cout << (torchtitan ? export_torchtitan_toml(*scenario) : export_plan(*scenario, *kind));
  return 0;
}

}  // namespace

// `stepcast import KIND FILE` and `stepcast export KIND SCENARIO.json`.
int run_io_command(const std::string& command, int argc, char** argv) {
  const IoArgs args = parse_io_args(argc, argv, 2);
  if (!args.error.empty()) return fail(args.error);
  auto loaded = load_catalog(builtin_preset_files());
  if (!loaded) return fail("built-in presets: " + loaded.error().message);
  if (command == "import") {
    if (args.positional.size() != 2)
      return fail("import takes a kind (hf-config, megatron-args, torchtitan) and one file (or '-')");
    if (args.positional[0] == "hf-config") return import_hf_config(args);
    if (args.positional[0] == "megatron-args") return import_megatron_args(args, *loaded);
    if (args.positional[0] == "torchtitan") return import_torchtitan(args, *loaded);
    return fail(fmt::format("import {}: the kinds are hf-config, megatron-args, torchtitan",
                            printable(args.positional[0])));
  }
  if (args.positional.size() != (args.link.empty() ? 2u : 1u))
    return fail("export takes a kind (megatron-args, bridge-recipe, torchrun, torchtitan) and one "
                "scenario "
                "file (or '-'), or --link URL");
  return export_plan_text(args, *loaded);
}
