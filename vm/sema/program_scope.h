// Scopes over a compiled Program: its symbol table (Program::symbols) for the program-wide names,
// the frame and instance of one of its POUs for the local ones. The debugger's evaluator, the
// stimulus reader, `trace why` and the DAP server analyse expressions in them, so that a name
// means what it meant to the compiler.
#pragma once

#include <cstdint>
#include <string>

#include "vm/bytecode/program.h"
#include "vm/sema/scope.h"

namespace scanback::sema {

// A compiled program is immutable and shared between threads: the STRING[n] and REF_TO types an
// expression needs beyond the program's own are kept for the whole process (a handful of small
// objects), so that a result's type outlives the expression.
class InternedTypes : public TypeSource {
 public:
  explicit InternedTypes(const TypeTable& table) : table_(table) {}
  const Type* elementary(TypeKind kind) const override { return table_.elementary(kind); }
  const Type* string(uint32_t capacity) override;
  const Type* wideString(uint32_t capacity) override;
  const Type* refTo(const Type* target) override;
  const Type* pointerTo(const Type* target) override;
  const Type* errorType() const override;

 private:
  const TypeTable& table_;
};

class ProgramDeclarations : public Declarations {
 public:
  explicit ProgramDeclarations(const Program& program) : program_(program), types_(*program.types) {}
  TypeSource& types() override { return types_; }
  bool codesysConversions() const override { return program_.codesysConversions; }
  bool refPointers() const override { return program_.refPointers; }
  std::optional<VariableSymbol> global(std::string_view name) override;
  const ProgramInstanceInfo* programInstance(std::string_view name) override;
  const std::string* globalList(std::string_view name) override;
  const std::vector<EnumValueSymbol>* enumValues(const std::string& upperName) override;
  std::optional<const Type*> declaredType(const std::string& upperName, const SourceSpan& use) override;
  std::optional<PouKind> pouKind(const std::string& upperName) override;
  const Type* functionBlockType(const std::string& upperName) override;
  std::optional<Callee> function(const std::string& upperName) override;
  std::optional<Callee> method(const Type* functionBlock, const std::string& upperName) override;
  std::optional<PouKind> instanceKind(const Type* layout) override;

  const Program& program() const { return program_; }

 private:
  const Program& program_;
  InternedTypes types_;
};

// The scope of code of POU `pou` (Program::pous), or the global scope for UINT32_MAX (globals,
// program instances and enumeration values only). An unknown name is reported as "unknown name
// 'x': not a local variable of F, ..., a global variable, a program instance or an enumeration
// value".
class ProgramScope : public Scope {
 public:
  ProgramScope(const Program& program, uint32_t pou);
  Declarations& declarations() override { return declarations_; }
  Code code() const override { return code_; }
  const Type* instanceType() const override { return pou_ ? pou_->instanceType : nullptr; }
  std::optional<VariableSymbol> local(std::string_view name) override;
  std::string unknownName(std::string_view name) const override;

  const PouInfo* pou() const { return pou_; }

 private:
  const ConstValue* constantOf(const std::string& upperName) const;

  ProgramDeclarations declarations_;
  const PouInfo* pou_ = nullptr;    // null: the global scope
  const PouInfo* owner_ = nullptr;  // a method's function block
  Code code_ = Code::None;
};

}  // namespace scanback::sema
