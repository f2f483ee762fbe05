// The command line's shared plumbing: the one-line error contract and reading inputs.
#pragma once

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "stepcast/catalog.h"
#include "stepcast/limits.h"

namespace stepcast::cli {

// Bad input: one line on stderr, exit status 2. The message may quote arguments or input: no
// control character or invalid UTF-8 in it reaches the terminal, so it stays one line.
inline int fail(const std::string& message) {
  std::cerr << "error: " << printable(message, 2000) << "\n";
  return 2;
}

// JSON for stdout: text the engine did not check (names from a document are UTF-8 already) can
// never abort the serialiser.
inline std::string dump(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

// Reads a whole file, or standard input for "-".
inline bool read_input(const std::string& path, std::string& out) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    ss << in.rdbuf();
  }
  out = ss.str();
  return true;
}

}  // namespace stepcast::cli
