// The command line's shared plumbing: the one-line error contract and reading inputs.
#pragma once

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace stepcast::cli {

// Bad input: one line on stderr, exit status 2.
inline int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return 2;
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
