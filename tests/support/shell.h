// Running a command line from a test: quoting for the shell, and stdout, stderr and the exit code
// apart (stderr goes through a temporary file, so a command that writes much of both never blocks).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/files.h"

namespace scanback::test {

// `s` as one word for /bin/sh.
inline std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct ShellResult {
  int exitCode = -1;  // -1: it did not exit normally (a signal) or could not start
  std::string out, err;
};

// Runs `command` (already quoted) through the shell.
inline ShellResult runShell(const std::string& command) {
  static int counter = 0;
  const std::filesystem::path errFile =
      std::filesystem::temp_directory_path() /
      ("scanback_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".stderr");
  ShellResult r;
  FILE* pipe = popen((command + " 2>" + shellQuote(errFile.string())).c_str(), "r");
  if (!pipe) {
    ADD_FAILURE() << "popen failed: " << command;
    return r;
  }
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = readText(errFile);
  std::error_code ignored;
  std::filesystem::remove(errFile, ignored);
  return r;
}

#ifdef SCANBACK_BINARY
// Runs `scanback ARGS` (ARGS already quoted for the shell): the command built beside the tests.
inline ShellResult runScanback(const std::string& args) { return runShell(shellQuote(SCANBACK_BINARY) + " " + args); }
#endif

}  // namespace scanback::test
