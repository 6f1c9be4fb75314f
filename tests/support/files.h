// Reading a whole file in a test (a golden expectation, a command's output file, an export).
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace scanback::test {

// The bytes of the file at `path`; empty when it cannot be read.
inline std::string readText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace scanback::test
