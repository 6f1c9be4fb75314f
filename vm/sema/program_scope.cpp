#include "vm/sema/program_scope.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

namespace scanback::sema {

namespace {

const Type* intern(const Type& t) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, const Type*>, std::unique_ptr<Type>> types;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = types[{t.name, t.base}];
  if (!slot) slot = std::make_unique<Type>(t);
  return slot.get();
}

}  // namespace

const Type* InternedTypes::string(uint32_t capacity) { return intern(TypeTable::makeString(capacity)); }
const Type* InternedTypes::wideString(uint32_t capacity) { return intern(TypeTable::makeWideString(capacity)); }

const Type* InternedTypes::refTo(const Type* target) { return intern(TypeTable::makeRef(target)); }
const Type* InternedTypes::pointerTo(const Type* target) { return intern(TypeTable::makePointer(target)); }

const Type* InternedTypes::errorType() const {
  Type t;
  t.kind = TypeKind::Void;
  t.name = "<error>";
  t.size = 8;
  t.align = 8;
  return intern(t);
}

// ---------------------------------------------------------------- program-wide names

std::optional<VariableSymbol> ProgramDeclarations::global(std::string_view name) {
  const auto& globals = program_.symbols.globals;
  auto it = globals.find(upperCase(name));
  if (it == globals.end()) return std::nullopt;
  VariableSymbol s;
  s.variable = &program_.globals.at(it->second);
  s.storage = Storage::Global;
  if (auto c = program_.symbols.globalConstants.find(it->second); c != program_.symbols.globalConstants.end())
    s.value = &c->second;
  if (auto l = program_.symbols.globalListMembers.find(it->second); l != program_.symbols.globalListMembers.end()) {
    s.list = &l->second.list;
    s.qualifiedOnly = l->second.qualifiedOnly;
  }
  return s;
}

const std::string* ProgramDeclarations::globalList(std::string_view name) {
  auto it = program_.symbols.globalLists.find(upperCase(name));
  return it == program_.symbols.globalLists.end() ? nullptr : &it->second;
}

const ProgramInstanceInfo* ProgramDeclarations::programInstance(std::string_view name) {
  auto it = program_.symbols.instances.find(upperCase(name));
  return it == program_.symbols.instances.end() ? nullptr : &program_.instances.at(it->second);
}

const std::vector<EnumValueSymbol>* ProgramDeclarations::enumValues(const std::string& upperName) {
  auto it = program_.symbols.enumValues.find(upperName);
  return it == program_.symbols.enumValues.end() ? nullptr : &it->second;
}

std::optional<const Type*> ProgramDeclarations::declaredType(const std::string& upperName, const SourceSpan&) {
  auto it = program_.symbols.types.find(upperName);
  if (it == program_.symbols.types.end()) return std::nullopt;
  return it->second;
}

std::optional<PouKind> ProgramDeclarations::pouKind(const std::string& upperName) {
  auto it = program_.symbols.pous.find(upperName);
  if (it == program_.symbols.pous.end()) return std::nullopt;
  return it->second.kind;
}

const Type* ProgramDeclarations::functionBlockType(const std::string& upperName) {
  auto it = program_.symbols.pous.find(upperName);
  return it == program_.symbols.pous.end() ? nullptr : it->second.type;
}

namespace {

Callee calleeOf(const Program& program, uint32_t index) {
  const PouInfo& info = program.pous.at(index);
  return Callee{index, info.kind, info.name, &info.frameVariables, info.returnType};
}

}  // namespace

std::optional<Callee> ProgramDeclarations::function(const std::string& upperName) {
  auto it = program_.symbols.pous.find(upperName);
  if (it == program_.symbols.pous.end() || it->second.kind != PouKind::Function) return std::nullopt;
  return calleeOf(program_, it->second.pou);
}

std::optional<Callee> ProgramDeclarations::method(const Type* functionBlock, const std::string& upperName) {
  auto it = program_.symbols.methods.find({functionBlock, upperName});
  if (it == program_.symbols.methods.end()) return std::nullopt;
  return calleeOf(program_, it->second);
}

std::optional<PouKind> ProgramDeclarations::instanceKind(const Type* layout) {
  if (!layout || layout->kind != TypeKind::FunctionBlock) return std::nullopt;
  return pouKind(upperCase(layout->name));
}

// ---------------------------------------------------------------- a POU's frame and instance

ProgramScope::ProgramScope(const Program& program, uint32_t pou) : declarations_(program) {
  if (pou == UINT32_MAX || pou >= program.pous.size()) return;
  const PouInfo& info = program.pous[pou];
  switch (info.kind) {
    case PouKind::Program: code_ = Code::Program; break;
    case PouKind::FunctionBlock:
    case PouKind::Native: code_ = Code::FunctionBlock; break;
    case PouKind::Method: code_ = Code::Method; break;
    case PouKind::Function: code_ = Code::Function; break;
    case PouKind::TaskEntry: return;
  }
  pou_ = &info;
  if (info.kind == PouKind::Method && info.instanceType) {
    auto it = program.symbols.pous.find(upperCase(info.instanceType->name));
    if (it != program.symbols.pous.end() && it->second.pou < program.pous.size())
      owner_ = &program.pous[it->second.pou];
  }
}

const ConstValue* ProgramScope::constantOf(const std::string& upperName) const {
  for (const PouInfo* p : {pou_, owner_}) {
    if (!p) continue;
    if (auto it = p->constants.find(upperName); it != p->constants.end()) return &it->second;
  }
  return nullptr;
}

std::optional<VariableSymbol> ProgramScope::local(std::string_view name) {
  if (!pou_) return std::nullopt;
  VariableSymbol s;
  for (const Variable& v : pou_->frameVariables)
    if (equalsIgnoreCase(v.name, name)) {
      s.variable = &v;
      s.storage = Storage::Frame;
      break;
    }
  if (!s.variable && pou_->instanceType) {
    s.variable = pou_->instanceType->field(name);
    s.storage = Storage::Instance;
  }
  if (!s.variable) return std::nullopt;
  s.value = constantOf(upperCase(name));
  return s;
}

std::string ProgramScope::unknownName(std::string_view name) const {
  std::string scope;
  if (pou_) {
    if (code_ == Code::Function || code_ == Code::Method || !pou_->frameVariables.empty())
      scope += fmt::format("a local variable of {}, ", pou_->name);
    if (pou_->instanceType)
      scope += fmt::format("an instance variable of {}, ", code_ == Code::Program && !pou_->instanceName.empty()
                                                               ? pou_->instanceName
                                                               : pou_->instanceType->name);
  }
  return fmt::format("unknown name '{}': not {}a global variable, a program instance or an enumeration value", name,
                     scope);
}

}  // namespace scanback::sema
