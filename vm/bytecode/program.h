// A compiled program: immutable bytecode, the initial image and the debug information that maps
// code back to source. One Program is shared (read-only) by the live VM and any number of replay
// VMs (docs/architecture.md: immutable, shared bytecode).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/areas.h"
#include "vm/bytecode/constant.h"
#include "vm/bytecode/opcodes.h"
#include "vm/bytecode/symbols.h"
#include "vm/bytecode/types.h"
#include "vm/source/source.h"

namespace scanback {

struct PouInfo {
  std::string name;  // type name; methods "FB.Method"; program instances their type name
  PouKind kind = PouKind::Function;
  uint32_t entryPc = 0;
  uint32_t frameSize = 0;                // bytes of frame (VAR_TEMP, function variables, temporaries)
  uint32_t reach = 0;                    // frameSize + the largest frame it fills for a callee
  const Type* instanceType = nullptr;    // FB/program instance layout; a method's FB
  uint32_t instanceOffset = UINT32_MAX;  // program instances: absolute offset of the instance
  std::string instanceName;              // program instances: the instance name
  std::vector<Variable> frameVariables;  // frame-relative (functions, methods, VAR_TEMP)
  const Type* returnType = nullptr;
  uint32_t returnOffset = 0;  // frame-relative
  uint32_t nativeId = 0;      // Native
  SourceSpan span;
  SourceSpan endSpan;  // its END_PROGRAM (END_FUNCTION_BLOCK, ...) keyword; line 0 when there is none
  std::map<std::string, ConstValue> constants;  // upper-case name -> value of a folded CONSTANT of its own
};

struct StatementInfo {
  SourceSpan span;  // first token to end of the statement
  uint32_t pou = 0;
  uint32_t pc = 0;  // the STMT opcode
};

// From `pc` onwards (until the next entry) the code belongs to statement `statement`.
struct LineEntry {
  uint32_t pc = 0;
  uint32_t statement = 0;
};

struct TaskInfo {
  std::string name;
  int64_t intervalNs = 10'000'000;
  int32_t priority = 0;
  uint32_t entryPc = 0;             // runs the task's programs in order, then HALT
  std::vector<uint32_t> instances;  // indices into Program::instances
  SourceSpan span;
};

struct ProgramInstanceInfo {
  std::string name;
  const Type* type = nullptr;  // FunctionBlock-kind layout of the program
  uint32_t offset = 0;         // absolute
  uint32_t task = 0;
  uint32_t pou = 0;  // its code
};

struct IoArea {
  uint32_t offset = 0;
  uint32_t size = 0;
};

struct Program {
  SourceSet sources;
  std::shared_ptr<TypeTable> types;
  std::vector<uint32_t> code;
  std::vector<uint8_t> constants;
  std::vector<uint8_t> initialImage;  // the image before cycle 0
  uint32_t stackSize = 256 * 1024;    // bytes of call-frame memory after the image
  // Compiled with CODESYS's implicit conversions (CompileOptions::strict off): the debugger's
  // expressions accept them too.
  bool codesysConversions = false;
  // Compiled in the rusty dialect: a REF_TO is also a pointer (arithmetic, conversions between
  // REF_TO types); the debugger's expressions accept them too.
  bool refPointers = false;
  // Compiled to run this unit test (CompileOptions::test): a trace records it, so that its replay
  // compiles the same program. Empty: the project's own tasks.
  std::string test;
  std::vector<PouInfo> pous;
  std::vector<StatementInfo> statements;  // index = statement id
  std::vector<LineEntry> lineTable;       // sorted by pc
  std::vector<TaskInfo> tasks;            // declaration order
  std::vector<ProgramInstanceInfo> instances;
  std::vector<Variable> globals;  // absolute
  IoArea input, output, memory;   // %I, %Q, %M
  std::string hash;               // identity of the program version (hex)
  SymbolTable symbols;            // its names (debug information)
  // Dynamic dispatch (CALLV): the POU of method slot s for the function block of dispatch id c is
  // dispatch[c * dispatchSlots + s] (UINT32_MAX: none); classes[c] is that function block's layout.
  std::vector<uint32_t> dispatch;
  uint32_t dispatchSlots = 0;
  std::vector<const Type*> classes;  // index 0 unused
  // The variables' areas, where a dereferenced pointer may reach (PCHK, docs/language.md).
  ProgramAreas areas;

  uint32_t imageSize() const { return static_cast<uint32_t>(initialImage.size()); }
  // The statement owning the code at pc, or UINT32_MAX.
  uint32_t statementAt(uint32_t pc) const;
  // Whether a variable of the image or of a frame is, or holds, a STRING or WSTRING: only then
  // does the program's state depend on how strings are laid out (a trace's format version says
  // which layout recorded it: traces/trace_model.h).
  bool storesStrings() const;
  const StatementInfo& statement(uint32_t id) const { return statements.at(id); }
};

// Human-readable listing of the bytecode, one instruction per line, grouped by POU.
std::string disassemble(const Program& program);

}  // namespace scanback
