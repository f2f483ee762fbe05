// The command line's shared plumbing: the one-line error contract and reading inputs.
#pragma once

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>
#include <initializer_list>

#include "stepcast/catalog.h"
#include "stepcast/json.h"
#include "stepcast/limits.h"
#include "stepcast/result.h"

namespace stepcast::cli {

// Bad input: one line on stderr, exit status 2. The message may quote arguments or input: no
// control character or invalid UTF-8 in it reaches the terminal, so it stays one line.
inline int fail(const std::string& message) {
  std::cerr << "error: " << printable(message, 2000) << "\n";
  return 2;
}
// An engine error: its message, and the values that would satisfy its rule where the engine
// says (the hint the page shows under the control), on the same line.
inline int fail(const std::string& message, const std::string& hint) {
  return fail(hint.empty() ? message : message + " (try: " + hint + ")");
}
inline int fail(const Error& e) { return fail(e.message, e.hint); }

// JSON for stdout: text the engine did not check (names from a document are UTF-8 already) can
// never abort the serialiser.
inline std::string dump(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// What one input may weigh: a scenario, a calibration, nccl-tests output or Megatron-LM
// arguments are read as one document (json.h: kMaxDocumentBytes, the module's limit too); a GEMM
// table holds up to 100,000 rows (gemm_fit.cpp) of at most ~80 bytes; a batch holds many
// scenarios, one a line.
inline constexpr size_t kMaxGemmTableBytes = size_t{8} << 20;
inline constexpr size_t kMaxBatchBytes = size_t{256} << 20;

// Reads a whole file, or standard input for "-", of at most `max_bytes`: nothing past that is
// read (a 600 MB standard input is refused after its first MiB, a file by its size before any of
// it). Empty on success, else the one-line reason.
inline std::string read_input(const std::string& path, std::string& out,
                              size_t max_bytes = kMaxDocumentBytes) {
  const std::string shown = path == "-" ? std::string("standard input") : printable(path, 200);
  const auto too_large = [&] {
    return fmt::format("{} is over {} bytes, the most this command reads", shown, max_bytes);
  };
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary | std::ios::ate);
    if (!file) return fmt::format("cannot read {}", shown);
    const auto size = file.tellg();
    if (size > 0 && static_cast<size_t>(size) > max_bytes) return too_large();
    file.seekg(0);
  }
  std::istream& in = path == "-" ? std::cin : file;
  out.clear();
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    out.append(chunk, static_cast<size_t>(in.gcount()));
    if (out.size() > max_bytes) return too_large();  // a file that grew, or a pipe
  }
  if (in.bad()) return fmt::format("cannot read {}", shown);
  return "";
}

// One option of a command: a flag with a value (the last one given counts, or every one in
// `all`), or a switch (`on`).
struct Option {
  std::string_view flag;
  std::string* value = nullptr;
  bool* on = nullptr;
  std::vector<std::string>* all = nullptr;
};

// Reads argv[first..] against a command's options; anything else not starting with '-' ("-" is
// standard input) goes to `positional`. Returns the error, empty when none: a flag without its
// value, or an option the command does not have (with `hint`, the options it has).
inline std::string read_options(int argc, char** argv, int first,
                                std::initializer_list<Option> options,
                                std::vector<std::string>& positional,
                                std::string_view hint = {}) {
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    const Option* o = nullptr;
    for (const auto& option : options)
      if (option.flag == arg) o = &option;
    if (!o && arg.size() > 1 && arg[0] == '-')
      return "unknown option " + arg + (hint.empty() ? "" : " (" + std::string(hint) + ")");
    if (!o) {
      positional.push_back(arg);
    } else if (o->on) {
      *o->on = true;
    } else if (i + 1 >= argc) {
      return arg + " needs a value";
    } else if (o->all) {
      o->all->push_back(argv[++i]);
    } else {
      *o->value = argv[++i];
    }
  }
  return "";
}

}  // namespace stepcast::cli
