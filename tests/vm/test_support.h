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
inline Compiled compileFiles(const std::vector<std::pair<std::string, std::string>>& files,
                             const CompileOptions& options = {}) {
  Compiled c;
  for (const auto& [path, text] : files) c.sources.add(path, text);
  c.program = compileProject(c.sources, c.diags, options);
  return c;
}

inline Compiled compile(std::string_view text, std::string path = "main.st") {
  return compileFiles({{std::move(path), std::string(text)}});
}

// IEC's conversion rules only (scanback --strict).
inline Compiled compileStrict(std::string_view text, std::string path = "main.st") {
  CompileOptions options;
  options.strict = true;
  return compileFiles({{std::move(path), std::string(text)}}, options);
}

// Compiles text that must be valid; reports the diagnostics as a test failure otherwise.
inline std::shared_ptr<const Program> mustCompile(std::string_view text, std::string path = "main.st") {
  Compiled c = compile(text, std::move(path));
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

// ------------------------------------------------------------------ decoding code

// One decoded instruction. A fused S_<op> (statement boundary + op) decodes as two instructions at
// the same pc: a STMT carrying the statement id, then the plain op.
struct Instruction {
  uint32_t pc = 0;
  Op op = Op::NOP;
  std::vector<uint32_t> operands;   // the op's own operands (a fused op's statement id excluded)
  uint32_t statement = UINT32_MAX;  // STMT: the statement it starts
};

inline std::vector<Instruction> decode(const Program& p, uint32_t begin, uint32_t end) {
  std::vector<Instruction> out;
  uint32_t pc = begin;
  while (pc < end && pc < p.code.size()) {
    const Op raw = static_cast<Op>(p.code[pc]);
    if (p.code[pc] >= static_cast<uint32_t>(Op::Count)) {
      ADD_FAILURE() << "bad opcode " << p.code[pc] << " at " << pc;
      break;
    }
    const OpInfo& info = opInfo(raw);
    std::vector<uint32_t> words;
    uint32_t at = pc + 1, lastK = 0;
    for (char l : info.operands) {
      if (l == '*') {
        for (uint32_t i = 0; i < lastK && at < p.code.size(); ++i) words.push_back(p.code[at++]);
        continue;
      }
      if (at >= p.code.size()) break;
      if (l == 'k') lastK = p.code[at];
      words.push_back(p.code[at++]);
    }
    if (isFused(raw)) {
      out.push_back(Instruction{pc, Op::STMT, {words.at(0)}, words.at(0)});
      words.erase(words.begin());
      out.push_back(Instruction{pc, unfused(raw), std::move(words), UINT32_MAX});
    } else {
      const uint32_t stmt = raw == Op::STMT ? words.at(0) : UINT32_MAX;
      out.push_back(Instruction{pc, raw, std::move(words), stmt});
    }
    pc = at;
  }
  return out;
}

// The code of one POU: from its entry to the next POU's entry.
inline std::vector<Instruction> decodePou(const Program& p, uint32_t pou) {
  const uint32_t begin = p.pous.at(pou).entryPc;
  uint32_t end = static_cast<uint32_t>(p.code.size());
  for (const PouInfo& other : p.pous)
    if (other.kind != PouKind::Native && other.entryPc > begin && other.entryPc < end) end = other.entryPc;
  return decode(p, begin, end);
}

// The instructions of statement `id` up to the next statement boundary or the end of its POU
// (the trailing RET excluded).
inline std::vector<Instruction> statementCode(const Program& p, uint32_t id) {
  std::vector<Instruction> all = decodePou(p, p.statement(id).pou);
  std::vector<Instruction> out;
  bool inside = false;
  for (const Instruction& i : all) {
    if (i.op == Op::STMT) {
      if (inside) break;
      inside = i.statement == id;
      continue;
    }
    if (inside) out.push_back(i);
  }
  if (!out.empty() && out.back().op == Op::RET) out.pop_back();
  return out;
}

inline std::vector<std::string> opNames(const std::vector<Instruction>& code) {
  std::vector<std::string> out;
  for (const Instruction& i : code) out.emplace_back(opInfo(i.op).name);
  return out;
}

}  // namespace scanback::test
