#include "vm/bytecode/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace scanback {

const char* pouKindName(PouKind kind) {
  switch (kind) {
    case PouKind::Program: return "PROGRAM";
    case PouKind::Function: return "FUNCTION";
    case PouKind::FunctionBlock: return "FUNCTION_BLOCK";
    case PouKind::Method: return "METHOD";
    case PouKind::Native: return "FUNCTION_BLOCK";
    case PouKind::TaskEntry: return "TASK";
  }
  return "?";
}

uint32_t Program::statementAt(uint32_t pc) const {
  auto it = std::upper_bound(lineTable.begin(), lineTable.end(), pc,
                             [](uint32_t value, const LineEntry& e) { return value < e.pc; });
  if (it == lineTable.begin()) return UINT32_MAX;
  return std::prev(it)->statement;
}

namespace {
std::string formatOperand(uint32_t o) {
  static constexpr const char* bases[] = {"@", "this+", "fp+", "k+"};
  return fmt::format("{}{}", bases[o >> 30], o & kOffsetMask);
}
}  // namespace

std::string disassemble(const Program& program) {
  std::string out;
  // Order POUs by entry so that the listing follows the code.
  std::vector<const PouInfo*> pous;
  for (const PouInfo& p : program.pous)
    if (p.kind != PouKind::Native) pous.push_back(&p);
  std::sort(pous.begin(), pous.end(), [](auto* a, auto* b) { return a->entryPc < b->entryPc; });
  std::vector<uint32_t> starts;
  for (auto* p : pous) starts.push_back(p->entryPc);
  starts.push_back(static_cast<uint32_t>(program.code.size()));
  for (size_t pi = 0; pi < pous.size(); ++pi) {
    const PouInfo& pou = *pous[pi];
    out += fmt::format("{} {}{} (frame {} bytes)\n", pouKindName(pou.kind), pou.name,
                       pou.instanceName.empty() ? "" : " instance " + pou.instanceName, pou.frameSize);
    uint32_t pc = pou.entryPc;
    while (pc < starts[pi + 1] && pc < program.code.size()) {
      const uint32_t raw = program.code[pc];
      if (raw >= static_cast<uint32_t>(Op::Count)) {
        out += fmt::format("  {:5}  <bad opcode {}>\n", pc, raw);
        ++pc;
        continue;
      }
      const OpInfo& info = opInfo(static_cast<Op>(raw));
      std::string line = fmt::format("  {:5}  {:<12}", pc, info.name);
      uint32_t at = pc + 1;
      uint32_t lastK = 0;
      for (char letter : info.operands) {
        if (letter == '*') {
          for (uint32_t i = 0; i < lastK && at < program.code.size(); ++i)
            line += fmt::format(" ->{}", program.code[at++]);
          continue;
        }
        if (at >= program.code.size()) break;
        const uint32_t v = program.code[at++];
        switch (letter) {
          case 'o': line += " " + formatOperand(v); break;
          case 'k':
            line += fmt::format(" #{}", static_cast<int32_t>(v));
            lastK = v;
            break;
          case 'j': line += fmt::format(" ->{}", v); break;
          case 'p': line += fmt::format(" {}", v < program.pous.size() ? program.pous[v].name : "?"); break;
          case 's':
            if (v < program.statements.size()) {
              const SourceSpan& s = program.statements[v].span;
              line += fmt::format(" s{} ({}:{})", v, s.line, s.column);
            }
            break;
          case 'n': line += fmt::format(" native{}", v); break;
        }
      }
      out += line + "\n";
      pc = at;
    }
  }
  return out;
}

namespace {
bool holdsString(const Type* t, std::set<const Type*>& seen) {
  if (!t || !seen.insert(t).second) return false;
  if (t->kind == TypeKind::String) return true;
  if (t->kind == TypeKind::Ref) return false;  // what it points to is a variable of its own
  if (holdsString(t->base, seen) || holdsString(t->extends, seen)) return true;
  for (const Variable& f : t->fields)
    if (holdsString(f.type, seen)) return true;
  return false;
}
}  // namespace

bool Program::storesStrings() const {
  std::set<const Type*> seen;
  for (const Variable& v : globals)
    if (holdsString(v.type, seen)) return true;
  for (const ProgramInstanceInfo& i : instances)
    if (holdsString(i.type, seen)) return true;
  for (const PouInfo& p : pous) {
    if (holdsString(p.instanceType, seen) || holdsString(p.returnType, seen)) return true;
    for (const Variable& v : p.frameVariables)
      if (holdsString(v.type, seen)) return true;
  }
  return false;
}

}  // namespace scanback
