// Shared helpers for the per-module VM tests: compile ST text, run cycles, read variables by path.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/values.h"

namespace scanback::test {

// The result of compiling one project: the sources (for formatting diagnostics), the diagnostics
// and the program (null when an error was reported).
struct Compiled {
  SourceSet sources;
  Diagnostics diags;
  std::shared_ptr<const Program> program;

  explicit operator bool() const { return program != nullptr; }
  // "file:line:col: error: message" lines.
  std::string messages() const { return diags.format(sources); }
  size_t errorCount() const { return diags.errorCount(); }
};

// Compiles several files as one project.
inline Compiled compileFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  Compiled c;
  for (const auto& [path, text] : files) c.sources.add(path, text);
  c.program = compileProject(c.sources, c.diags);
  return c;
}

inline Compiled compile(std::string_view text, std::string path = "main.st") {
  return compileFiles({{std::move(path), std::string(text)}});
}

// Compiles text that must be valid; reports the diagnostics as a test failure otherwise.
inline std::shared_ptr<const Program> mustCompile(std::string_view text) {
  Compiled c = compile(text);
  EXPECT_TRUE(c.program) << "compile failed:\n" << c.messages() << "\nsource:\n" << text;
  EXPECT_FALSE(c.diags.hasErrors()) << c.messages();
  return c.program;
}

// The diagnostics of text that must NOT compile (empty string and a test failure if it does).
inline std::string compileErrors(std::string_view text) {
  Compiled c = compile(text);
  EXPECT_FALSE(c.program) << "expected a compile error for:\n" << text;
  EXPECT_TRUE(c.diags.hasErrors()) << text;
  return c.messages();
}

// The display text ("42", "TRUE", "T#1s") of the scalar variable at `path` in `memory`.
inline std::string valueAt(const Program& program, const uint8_t* memory, std::string_view path) {
  std::string error;
  std::optional<VariableLocation> loc = findVariable(program, path, error);
  if (!loc) {
    ADD_FAILURE() << "findVariable(" << path << "): " << error;
    return "<" + error + ">";
  }
  return formatValue(program, memory, loc->offset, loc->bit, *loc->type);
}

inline std::string valueOf(const Vm& vm, std::string_view path) { return valueAt(vm.program(), vm.image(), path); }
inline std::string valueOf(const Runtime& rt, std::string_view path) { return valueOf(rt.vm(), path); }

// Runs `n` cycles (or until a fault); returns the status of the last one.
inline RunStatus runCycles(Runtime& rt, uint64_t n) {
  RunStatus s = RunStatus::CycleDone;
  for (uint64_t i = 0; i < n; ++i) {
    s = rt.runCycle();
    if (s != RunStatus::CycleDone) break;
  }
  return s;
}

// A runtime over freshly compiled text, already run for `cycles` cycles.
struct Running {
  std::shared_ptr<const Program> program;
  std::unique_ptr<Runtime> rt;
  RunStatus status = RunStatus::CycleDone;

  std::string operator[](std::string_view path) const { return valueOf(*rt, path); }
};

inline Running run(std::string_view text, uint64_t cycles = 1) {
  Running r;
  r.program = mustCompile(text);
  if (!r.program) return r;
  r.rt = std::make_unique<Runtime>(r.program);
  r.status = runCycles(*r.rt, cycles);
  return r;
}

// The first statement whose span starts on `line` (UINT32_MAX if none).
inline uint32_t statementOnLine(const Program& program, uint32_t line) {
  for (uint32_t i = 0; i < program.statements.size(); ++i)
    if (program.statements[i].span.line == line) return i;
  return UINT32_MAX;
}

// The index of the POU named `name` (case-insensitive; UINT32_MAX if none).
inline uint32_t pouIndex(const Program& program, std::string_view name) {
  for (uint32_t i = 0; i < program.pous.size(); ++i)
    if (equalsIgnoreCase(program.pous[i].name, name)) return i;
  return UINT32_MAX;
}

}  // namespace scanback::test
