// stepcast import / export: other tools' descriptions of a model or a plan in, the plan out as
// other tools' arguments. Thin: read, call the engine's importers and exporters, print.
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli_io.h"
#include "stepcast/import_hf_config.h"

using namespace stepcast;
using stepcast::cli::dump;
using stepcast::cli::fail;
using stepcast::cli::read_input;

namespace {

struct IoArgs {
  std::vector<std::string> positional;
  std::string format;
  std::string error;
};

IoArgs parse_io_args(int argc, char** argv, int first) {
  IoArgs a;
  for (int i = first; i < argc && a.error.empty(); ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string& into) {
      if (i + 1 >= argc) a.error = arg + " needs a value";
      else into = argv[++i];
    };
    if (arg == "--format") value(a.format);
    else if (arg.size() > 1 && arg[0] == '-') a.error = "unknown option " + arg;
    else a.positional.push_back(arg);
  }
  return a;
}

int import_hf_config(const IoArgs& args) {
  const std::string format = args.format.empty() ? "model" : args.format;
  if (format != "model" && format != "scenario")
    return fail(fmt::format("--format={} must be model or scenario", format));
  std::string text;
  if (!read_input(args.positional[1], text))
    return fail(fmt::format("cannot read {}", args.positional[1]));
  auto model = model_from_hf_config(text);
  if (!model) return fail(model.error().message);
  std::cout << dump(format == "model" ? *model : scenario_with_model(*model), 2) << "\n";
  return 0;
}

}  // namespace

// `stepcast import KIND FILE`.
int run_io_command(const std::string& command, int argc, char** argv) {
  const IoArgs args = parse_io_args(argc, argv, 2);
  if (!args.error.empty()) return fail(args.error);
  if (command == "import") {
    if (args.positional.size() != 2)
      return fail("import takes a kind (hf-config) and one file (or '-')");
    if (args.positional[0] == "hf-config") return import_hf_config(args);
    return fail(fmt::format("import {}: the kinds are hf-config", printable(args.positional[0])));
  }
  return fail("unknown command " + printable(command));
}
