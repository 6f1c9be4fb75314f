// The semantic pass's view of the declarations (vm/sema/scope.h): program-wide names are resolved
// on demand, so a body may use a global, a type or a function whose declaration comes later.
#include <fmt/format.h>

#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

// ---------------------------------------------------------------- types

const Type* CompilerTypes::elementary(TypeKind kind) const { return c_.types_->elementary(kind); }
const Type* CompilerTypes::string(uint32_t capacity) { return c_.types_->string(capacity); }
const Type* CompilerTypes::wideString(uint32_t capacity) { return c_.types_->wideString(capacity); }
const Type* CompilerTypes::refTo(const Type* target) { return c_.types_->refTo(target); }
const Type* CompilerTypes::pointerTo(const Type* target) { return c_.types_->pointerTo(target); }
const Type* CompilerTypes::errorType() const { return c_.errorType_; }

// ---------------------------------------------------------------- program-wide names

bool CompilerDeclarations::codesysConversions() const { return c_.program_->codesysConversions; }
bool CompilerDeclarations::refPointers() const { return c_.program_->refPointers; }

std::optional<sema::VariableSymbol> CompilerDeclarations::global(std::string_view name) {
  auto it = c_.globals_.find(upperCase(name));
  if (it == c_.globals_.end()) return std::nullopt;
  GlobalDecl& g = *it->second;
  c_.resolveGlobal(g);
  sema::VariableSymbol s;
  s.variable = &g.var;
  s.storage = sema::Storage::Global;
  if (g.constant) s.value = &*g.constant;
  if (!g.list.empty()) s.list = &g.list;
  s.qualifiedOnly = g.qualifiedOnly;
  return s;
}

const std::string* CompilerDeclarations::globalList(std::string_view name) {
  auto it = c_.globalLists_.find(upperCase(name));
  return it == c_.globalLists_.end() ? nullptr : &it->second;
}

const ProgramInstanceInfo* CompilerDeclarations::programInstance(std::string_view name) {
  auto it = c_.instanceIndex_.find(upperCase(name));
  if (it == c_.instanceIndex_.end() || c_.program_->instances.empty()) return nullptr;
  return &c_.program_->instances[it->second];
}

const std::vector<EnumValueSymbol>* CompilerDeclarations::enumValues(const std::string& upperName) {
  auto it = c_.enumValues_.find(upperName);
  if (it == c_.enumValues_.end()) {
    // An enumeration whose type nothing has used yet: resolve the declared enumerations.
    for (const auto& [key, decl] : c_.typeDecls_)
      if (decl->type && decl->type->kind == ast::TypeRefKind::Enum) c_.resolveNamedType(decl->name, decl->span);
    it = c_.enumValues_.find(upperName);
  }
  return it == c_.enumValues_.end() ? nullptr : &it->second;
}

std::optional<const Type*> CompilerDeclarations::declaredType(const std::string& upperName, const SourceSpan& use) {
  return c_.resolveDeclaredType(upperName, use);
}

std::optional<PouKind> CompilerDeclarations::pouKind(const std::string& upperName) {
  auto it = c_.pous_.find(upperName);
  // A test POU is no name other code can use: only `scanback test` makes an instance of it.
  if (it == c_.pous_.end() || (it->second->ast && it->second->ast->test)) return std::nullopt;
  return it->second->kind;
}

const Type* CompilerDeclarations::functionBlockType(const std::string& upperName) {
  auto it = c_.pous_.find(upperName);
  if (it == c_.pous_.end() || (it->second->ast && it->second->ast->test)) return nullptr;
  return c_.layoutPou(*it->second);
}

const Type* CompilerDeclarations::programBlockType(const std::string& upperName) {
  auto it = c_.programBlocks_.find(upperName);
  return it == c_.programBlocks_.end() ? nullptr : c_.layoutPou(*it->second);
}

namespace {

sema::Callee calleeOf(Compiler& c, PouDecl& d) {
  c.resolveFrame(d);
  return sema::Callee{d.pouIndex, d.kind, d.name, &d.frameVars, d.returnType};
}

}  // namespace

std::optional<sema::Callee> CompilerDeclarations::function(const std::string& upperName) {
  auto it = c_.pous_.find(upperName);
  if (it == c_.pous_.end() || it->second->kind != PouKind::Function) return std::nullopt;
  return calleeOf(c_, *it->second);
}

std::optional<sema::Callee> CompilerDeclarations::method(const Type* functionBlock, const std::string& upperName) {
  if (functionBlock && functionBlock->isInterface()) {
    PouDecl* m = c_.interfaceMethod(c_.interfaceOf(functionBlock), upperName);
    if (!m) return std::nullopt;
    sema::Callee callee = calleeOf(c_, *m);
    callee.owner = m->interfaceOwner->type;
    callee.slot = c_.slotOf(upperName);
    return callee;
  }
  PouDecl* fb = c_.fbDeclOf(functionBlock);
  PouDecl* m = fb ? c_.findMethod(fb, upperName) : nullptr;  // its own, or inherited
  if (!m) return std::nullopt;
  sema::Callee callee = calleeOf(c_, *m);
  callee.owner = m->ownerDecl ? c_.layoutPou(*m->ownerDecl) : nullptr;
  callee.access = m->ast->access;
  callee.abstract = m->ast->isAbstract;
  return callee;
}

std::optional<PouKind> CompilerDeclarations::instanceKind(const Type* layout) {
  PouDecl* d = c_.fbDeclOf(layout);
  if (!d) return std::nullopt;
  return d->kind;
}

// ---------------------------------------------------------------- a body's names

namespace {

// The value of a CONSTANT of `decl` (or, in a method, of its function block).
const LocalConstant* localConstant(Compiler& c, PouDecl* decl, const std::string& upperName) {
  auto look = [&](PouDecl* d) -> const LocalConstant* {
    if (!d) return nullptr;
    auto it = d->constants.find(upperName);
    return it == d->constants.end() ? nullptr : &it->second;
  };
  if (const LocalConstant* k = look(decl)) return k;
  if (decl && decl->kind == PouKind::Method && decl->owner) return look(c.findPou(decl->owner->name));
  return nullptr;
}

}  // namespace

sema::Declarations& BodyScope::declarations() { return c_.declarations_; }

sema::Code BodyScope::code() const {
  switch (ctx_.mode) {
    case BodyContext::Mode::Function: return sema::Code::Function;
    case BodyContext::Mode::Method: return sema::Code::Method;
    case BodyContext::Mode::FbBody: return sema::Code::FunctionBlock;
    case BodyContext::Mode::Program: return sema::Code::Program;
  }
  return sema::Code::None;
}

std::optional<sema::VariableSymbol> BodyScope::local(std::string_view name) {
  const std::string key = upperCase(name);
  sema::VariableSymbol s;
  if (auto it = ctx_.frameVars.find(key); it != ctx_.frameVars.end()) {
    s.variable = it->second;
    s.storage = sema::Storage::Frame;
  } else if (ctx_.instanceType) {
    s.variable = ctx_.instanceType->fieldByUpperName(key);
    s.storage = sema::Storage::Instance;
  }
  if (!s.variable) return std::nullopt;
  if (const LocalConstant* k = localConstant(c_, ctx_.decl, key)) s.value = &k->value;
  return s;
}

std::string BodyScope::unknownName(std::string_view name) const {
  return fmt::format("undeclared identifier '{}'", name);
}

sema::Declarations& DeclarationScope::declarations() { return c_.declarations_; }

std::optional<sema::VariableSymbol> DeclarationScope::local(std::string_view name) {
  const std::string key = upperCase(name);
  const LocalConstant* k = localConstant(c_, decl_, key);
  // A CONSTANT declared further down (an array bound may use it before its declaration).
  if (!k && decl_) k = c_.foldLaterConstant(*decl_, key);
  if (!k && decl_ && decl_->kind == PouKind::Method && decl_->owner) {
    if (PouDecl* fb = c_.findPou(decl_->owner->name)) k = c_.foldLaterConstant(*fb, key);
  }
  // An initial value may use the initial values of the variables declared before it.
  if (!k && decl_) {
    if (auto it = decl_->initials.find(key); it != decl_->initials.end()) k = &it->second;
  }
  if (!k) return std::nullopt;
  return sema::VariableSymbol{&k->variable, sema::Storage::Frame, &k->value};
}

std::string DeclarationScope::unknownName(std::string_view name) const {
  return fmt::format("undeclared identifier '{}'", name);
}

}  // namespace scanback::compiler
