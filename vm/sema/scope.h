// What the semantic pass asks about names: a Scope is where an expression stands (the body of a
// POU, a paused frame, the global scope), and its Declarations are the names of the whole
// program. The compiler implements both over the declarations it resolves on demand
// (vm/compiler/scopes.cpp); the debugger, stimulus files, `trace why` and the DAP server over a
// compiled Program's symbol table (program_scope.h). Name lookup itself, in its one order, is
// the analyzer's (Analyzer::name).
//
// The lookup is layered so that it can grow: a local lookup that walks base function blocks
// (EXTENDS) or a declaration lookup that finds names declared later in the file changes a scope,
// not the analyzer.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/sema/ir.h"
#include "vm/syntax/ast.h"

namespace scanback::sema {

// A name that designates a variable.
struct VariableSymbol {
  const Variable* variable = nullptr;  // its type is null when its declaration failed (reported)
  Storage storage = Storage::Global;
  const ConstValue* value = nullptr;  // a CONSTANT with a value known at compile time
  // A global of a global list (a VAR_GLOBAL list in a file of its own, named after the file, as
  // CODESYS and TwinCAT name a GVL after its object): the list's name, and whether its
  // `{attribute 'qualified_only'}` makes `List.name` the only way to write it.
  const std::string* list = nullptr;
  bool qualifiedOnly = false;
};

// A function or method as a call needs it.
struct Callee {
  uint32_t pou = UINT32_MAX;
  PouKind kind = PouKind::Function;
  std::string name;                              // "Calc", "Motor.Run"
  const std::vector<Variable>* frame = nullptr;  // its parameters are the inputs, outputs and in-outs
  const Type* returnType = nullptr;              // null: none
  // Object orientation: who declares it (a function block, or an interface for a prototype), its
  // access specifier, and whether it is ABSTRACT (no body to call statically).
  const Type* owner = nullptr;
  ast::Access access = ast::Access::Public;
  bool abstract = false;
  uint32_t slot = UINT32_MAX;  // an interface's method: its dispatch slot (always called dynamically)
};

// The code an expression belongs to.
enum class Code : uint8_t { None, Function, Method, FunctionBlock, Program };

// Types an analysis may need that no declaration names. The compiler adds them to the program's
// type table; a compiled program is immutable, so the debugger keeps its own.
class TypeSource {
 public:
  virtual ~TypeSource() = default;
  virtual const Type* elementary(TypeKind kind) const = 0;
  virtual const Type* string(uint32_t capacity) = 0;
  virtual const Type* wideString(uint32_t capacity) = 0;  // WSTRING[capacity]
  virtual const Type* refTo(const Type* target) = 0;
  virtual const Type* pointerTo(const Type* target) = 0;
  // The type of an expression whose error was reported: later checks stay quiet about it.
  virtual const Type* errorType() const = 0;
};

class Declarations {
 public:
  virtual ~Declarations() = default;
  virtual TypeSource& types() = 0;
  // The implicit conversions CODESYS accepts compile, with a warning (CompileOptions::strict off).
  virtual bool codesysConversions() const { return false; }
  // The rusty dialect: a REF_TO is also a pointer (byte arithmetic, conversions between REF_TO
  // types), as ruSTy treats it.
  virtual bool refPointers() const { return false; }
  // A global variable (with the value of a CONSTANT).
  virtual std::optional<VariableSymbol> global(std::string_view name) = 0;
  virtual const ProgramInstanceInfo* programInstance(std::string_view name) = 0;
  // A global list by name (any case): its name as declared, or null when there is none.
  virtual const std::string* globalList(std::string_view /*name*/) { return nullptr; }
  // The enumerations that have a value of that name; null when none.
  virtual const std::vector<EnumValueSymbol>* enumValues(const std::string& upperName) = 0;
  // A type declared in TYPE ... END_TYPE. Nullopt when there is no such declaration; null inside
  // when its declaration failed (reported).
  virtual std::optional<const Type*> declaredType(const std::string& upperName, const SourceSpan& use) = 0;
  // A POU by name: its kind, or nullopt when there is none.
  virtual std::optional<PouKind> pouKind(const std::string& upperName) = 0;
  // The instance layout of a function block (user or standard); null when it failed (reported).
  virtual const Type* functionBlockType(const std::string& upperName) = 0;
  // A PROGRAM's layout as a function block, for a variable of test code (Scope::inTest) that
  // declares an instance of it; null when there is none.
  virtual const Type* programBlockType(const std::string& /*upperName*/) { return nullptr; }
  virtual std::optional<Callee> function(const std::string& upperName) = 0;
  virtual std::optional<Callee> method(const Type* functionBlock, const std::string& upperName) = 0;
  // The kind of POU whose instances have this layout (FunctionBlock, Native or Program); nullopt
  // for layouts that are no POU's.
  virtual std::optional<PouKind> instanceKind(const Type* layout) = 0;
  // The dispatch slot of a method called on THIS, when an extending function block may override
  // it (the call is dynamic); nullopt for a static call. `upperKey`: "NAME", "PROP.GET", "PROP.SET".
  virtual std::optional<uint32_t> virtualSlot(const Type* /*functionBlock*/, const std::string& /*upperKey*/) {
    return std::nullopt;
  }
};

class Scope {
 public:
  virtual ~Scope() = default;
  virtual Declarations& declarations() = 0;
  virtual Code code() const = 0;
  // The function block or program whose instance the code runs on (FB bodies, methods, programs).
  virtual const Type* instanceType() const = 0;
  // A variable of the frame or of the instance (with the value of a CONSTANT of the POU's own).
  virtual std::optional<VariableSymbol> local(std::string_view name) = 0;
  // The message for a name nothing declares.
  virtual std::string unknownName(std::string_view name) const = 0;
  // The code of a TEST_PROGRAM or TEST_FUNCTION_BLOCK (or of its methods): where the assertions
  // and ADVANCE_TIME may be written.
  virtual bool inTest() const { return false; }
};

}  // namespace scanback::sema
