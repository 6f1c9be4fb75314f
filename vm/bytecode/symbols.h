// The names of a compiled program, kept with it as its debug information: what the debugger's
// evaluator, stimulus files, `trace why` and the DAP server resolve names against (through the
// semantic pass, vm/sema), so that a name means there what it meant to the compiler. Keys are
// upper-case (IEC names are case-insensitive).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "vm/bytecode/constant.h"
#include "vm/bytecode/types.h"

namespace scanback {

enum class PouKind : uint8_t { Program, Function, FunctionBlock, Method, Native, TaskEntry };
const char* pouKindName(PouKind kind);

struct EnumValueSymbol {
  const Type* type = nullptr;
  int64_t value = 0;
};

// A POU by its name: a function (its code), a function block (its layout; user ones also their
// code) or a program (its layout).
struct PouSymbol {
  PouKind kind = PouKind::Function;
  uint32_t pou = UINT32_MAX;   // Program::pous: functions and user function blocks
  const Type* type = nullptr;  // function blocks (standard ones too) and programs: the instance layout
};

// A global of a global list (a file of VAR_GLOBAL blocks only, named after the file).
struct GlobalListMember {
  std::string list;            // as named by its file
  bool qualifiedOnly = false;  // {attribute 'qualified_only'}: only `list.name` reaches it
};

struct SymbolTable {
  std::map<std::string, uint32_t> globals;                 // -> Program::globals
  std::map<uint32_t, GlobalListMember> globalListMembers;  // Program::globals index -> its list
  std::map<std::string, std::string> globalLists;          // upper list name -> as named by its file
  std::map<uint32_t, ConstValue> globalConstants;          // Program::globals index -> value of a folded CONSTANT
  std::map<std::string, uint32_t> instances;               // -> Program::instances
  // Every declared type (structures, enumerations, subranges, arrays, aliases), used or not, and
  // the function block types.
  std::map<std::string, const Type*> types;
  std::map<std::string, std::vector<EnumValueSymbol>> enumValues;  // a value name -> the enumerations that have it
  std::map<std::string, PouSymbol> pous;
  std::map<std::pair<const Type*, std::string>, uint32_t> methods;  // (FB layout, method name) -> Program::pous
};

}  // namespace scanback
