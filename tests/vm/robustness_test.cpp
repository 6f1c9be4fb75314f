// Malformed ST must give diagnostics, never a crash or a hang: every golden program is mutated at
// random (seeded, so failures reproduce), compiled, and when it still compiles, run a few cycles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "tests/support/files.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"

namespace fs = std::filesystem;
using namespace scanback;

namespace {

using test::readText;

std::string mutate(std::string text, std::mt19937& rng) {
  static const char* const kTokens[] = {"(",      ")",
                                        ";",      ":=",
                                        "END_IF", "IF",
                                        "VAR",    "END_VAR",
                                        "[",      "]",
                                        "..",     "'",
                                        "(*",     "16#",
                                        "T#",     "^",
                                        "REF(",   "FUNCTION_BLOCK",
                                        ".",      ",",
                                        "=>",     "99999999999999999999",
                                        "%IX",    "ARRAY[",
                                        "OF",     "#",
                                        "\"",     "\n"};
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !text.empty(); ++e) {
    const size_t at = rng() % text.size();
    switch (rng() % 5) {
      case 0: text.erase(at, 1 + rng() % 12); break;
      case 1: text.insert(at, kTokens[rng() % (sizeof kTokens / sizeof *kTokens)]); break;
      case 2: text[at] = static_cast<char>(rng() % 256); break;
      case 3: {
        const size_t len = std::min<size_t>(1 + rng() % 40, text.size() - at);
        text.insert(rng() % text.size(), text.substr(at, len));
        break;
      }
      case 4: text.insert(at, std::string(1 + rng() % 3, "()[]"[rng() % 4])); break;
    }
  }
  return text;
}

TEST(Robustness, MutatedProgramsCompileOrReportErrorsAndNeverCrash) {
  const fs::path dir = fs::path(SCANBACK_SOURCE_DIR) / "tests" / "golden";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".st") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  std::mt19937 rng(20261121);
  size_t compiled = 0, rejected = 0;
  for (const fs::path& f : files) {
    const std::string original = readText(f);
    for (int i = 0; i < 150; ++i) {
      SourceSet sources;
      sources.add(f.filename().string(), mutate(original, rng));
      Diagnostics diags;
      std::shared_ptr<const Program> program = compileProject(sources, diags);
      if (!program) {
        ASSERT_TRUE(diags.hasErrors()) << "no program and no error for a mutation of " << f;
        // Every error has a location inside the file.
        for (const Diagnostic& d : diags.items()) {
          if (d.severity == Severity::Error && d.span.valid()) {
            EXPECT_EQ(d.span.file, 0u);
          }
        }
        ++rejected;
        continue;
      }
      ++compiled;
      Runtime rt(program);
      rt.vm().setStatementBudget(20000);
      for (int c = 0; c < 3; ++c)
        if (rt.runCycle() == RunStatus::Faulted) break;
    }
  }
  EXPECT_GT(rejected, 0u);
  EXPECT_GT(compiled, 0u);
}

}  // namespace
