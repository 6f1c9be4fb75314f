// Object orientation in the compiler (docs/language.md, "Object orientation"): INTERFACEs,
// EXTENDS and IMPLEMENTS, the checks on overriding, abstract blocks and interface
// implementations, the inherited layout and dynamic dispatch.
//
// A function block that extends another starts with its base's layout and initial values, so a
// method compiled once for the base runs unchanged on a derived instance. Blocks that take part in
// dynamic dispatch carry their class id in a hidden UDINT at offset 0 of every instance (the
// flat image holds everything; no host address is involved): CALLV reads it and looks the method
// up in Program::dispatch. Methods lay out their parameters first, so every method one dynamic
// call may reach has them where the caller put them; each then initialises its own locals.
#include <fmt/format.h>

#include <cstring>

#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

namespace {

std::string accessorSuffix(const ast::Pou& m) {
  return m.accessor == ast::Accessor::Get ? ".GET" : m.accessor == ast::Accessor::Set ? ".SET" : "";
}

// "method 'Area'", "property 'Count' (GET)"
std::string describeMethod(const ast::Pou& m) {
  if (m.accessor == ast::Accessor::None) return fmt::format("method '{}'", m.name);
  return fmt::format("property '{}' ({})", m.name, m.accessor == ast::Accessor::Get ? "GET" : "SET");
}

const char* blockWord(const ast::Pou& p) { return p.isClass ? "CLASS" : "FUNCTION_BLOCK"; }

bool sameType(const Type* a, const Type* b) { return a == b || (a && b && equalsIgnoreCase(a->name, b->name)); }

// Why the method `m` cannot stand for `proto` (same return type, same parameters in the same
// order); empty when it can.
std::string signatureMismatch(const PouDecl& m, const PouDecl& proto) {
  if (!sameType(m.returnType, proto.returnType))
    return fmt::format("it returns {}, not {}", m.returnType ? m.returnType->name : "nothing",
                       proto.returnType ? proto.returnType->name : "nothing");
  auto parameters = [](const PouDecl& d) {
    std::vector<const Variable*> ps;
    for (const Variable& v : d.frameVars)
      if (v.section == VarSection::Input || v.section == VarSection::Output || v.section == VarSection::InOut)
        ps.push_back(&v);
    return ps;
  };
  const auto a = parameters(m), b = parameters(proto);
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    auto text = [](const Variable* v) {
      return v ? fmt::format("{} '{} : {}'", sectionName(v->section), v->name, v->type ? v->type->name : "?")
               : std::string("none");
    };
    const Variable* x = i < a.size() ? a[i] : nullptr;
    const Variable* y = i < b.size() ? b[i] : nullptr;
    if (!x || !y || !equalsIgnoreCase(x->name, y->name) || x->section != y->section || !sameType(x->type, y->type))
      return fmt::format("parameter {} is {}, not {}", i + 1, text(x), text(y));
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------- declarations

void Compiler::collectInterface(const ast::Pou& p) {
  auto itf = std::make_unique<InterfaceDecl>();
  itf->ast = &p;
  itf->name = p.name;
  Type d;
  d.kind = TypeKind::Void;
  d.name = p.name;
  d.interface = true;
  itf->descriptor = types_->add(std::move(d));
  Type r;
  r.kind = TypeKind::Ref;
  r.name = p.name;
  r.size = 4;
  r.align = 4;
  r.base = itf->descriptor;
  r.interface = true;
  r.init.assign(4, 0);
  itf->type = types_->add(std::move(r));
  for (const ast::Pou& m : p.methods) {
    auto md = std::make_unique<PouDecl>();
    md->ast = &m;
    md->kind = PouKind::Method;
    md->interfaceOwner = itf.get();
    const std::string suffix = accessorSuffix(m);
    md->name = p.name + "." + m.name + suffix;
    const std::string key = upperCase(m.name) + suffix;
    if (itf->methods.count(key))
      error(m.span, fmt::format("{} is already declared in '{}'", describeMethod(m), p.name));
    else
      itf->methods[key] = md.get();
    prototypeDecls_.push_back(std::move(md));
  }
  const std::string key = upperCase(p.name);
  interfaceByType_[itf->type] = itf.get();
  resolvedTypes_[key] = itf->type;
  interfaces_[key] = std::move(itf);
}

void Compiler::resolveInterface(InterfaceDecl& itf) {
  if (itf.state == 2) return;
  if (itf.state == 1) {
    error(itf.ast->span, fmt::format("interface '{}' extends itself", itf.name));
    return;
  }
  itf.state = 1;
  std::vector<const Type*> all{itf.type};
  for (const ast::NameRef& n : itf.ast->extends) {
    auto it = interfaces_.find(upperCase(n.name));
    if (it == interfaces_.end()) {
      error(n.span, fmt::format("'{}' is not an INTERFACE", n.name));
      continue;
    }
    resolveInterface(*it->second);
    itf.extends.push_back(it->second.get());
    for (const Type* t : it->second->type->interfaces)
      if (std::find(all.begin(), all.end(), t) == all.end()) all.push_back(t);
  }
  itf.type->interfaces = all;
  itf.state = 2;
}

void Compiler::resolveHierarchyOf(PouDecl& fb) {
  if (fb.hierarchyState == 2) return;
  if (fb.hierarchyState == 1) {
    error(fb.ast->span, fmt::format("'{}' extends itself", fb.name));
    return;
  }
  fb.hierarchyState = 1;
  const ast::Pou& p = *fb.ast;
  if (!p.extends.empty()) {
    const ast::NameRef& n = p.extends.front();
    PouDecl* base = findPou(n.name);
    if (!base || base->kind != PouKind::FunctionBlock || !base->ast) {
      error(n.span, base ? fmt::format("'{}' cannot be extended: only user function blocks and classes can", n.name)
                         : fmt::format("unknown function block '{}'", n.name));
    } else if (base->ast->isFinal) {
      error(n.span, fmt::format("'{}' is FINAL: it cannot be extended", base->name));
    } else if (base->ast->isClass != p.isClass) {
      error(n.span, fmt::format("a {} cannot extend the {} '{}'", blockWord(p), blockWord(*base->ast), base->name));
    } else {
      resolveHierarchyOf(*base);
      if (base->hierarchyState == 2) fb.base = base;
    }
  }
  for (const ast::NameRef& n : p.implements) {
    auto it = interfaces_.find(upperCase(n.name));
    if (it == interfaces_.end()) {
      error(n.span, fmt::format("'{}' is not an INTERFACE", n.name));
      continue;
    }
    fb.implements.push_back(it->second.get());
  }
  fb.hierarchyState = 2;
}

void Compiler::resolveHierarchy() {
  for (auto& [key, itf] : interfaces_) resolveInterface(*itf);
  for (auto& [key, d] : pous_)
    if (d->kind == PouKind::FunctionBlock && d->ast) resolveHierarchyOf(*d);
  for (auto& [key, d] : pous_) {
    if (d->kind != PouKind::FunctionBlock || !d->ast) continue;
    if (d->base || !d->implements.empty())
      for (PouDecl* x = d.get(); x; x = x->base) x->polymorphic = true;
  }
  classes_.assign(1, nullptr);
  for (auto& [key, d] : pous_)
    if (d->polymorphic) {
      d->classId = static_cast<uint32_t>(classes_.size());
      classes_.push_back(d.get());
    }
}

InterfaceDecl* Compiler::interfaceOf(const Type* t) {
  auto it = interfaceByType_.find(t);
  return it == interfaceByType_.end() ? nullptr : it->second;
}

PouDecl* Compiler::findMethod(PouDecl* fb, const std::string& key) {
  for (PouDecl* d = fb; d; d = d->base)
    if (auto it = d->methods.find(key); it != d->methods.end()) return it->second;
  return nullptr;
}

PouDecl* Compiler::interfaceMethod(InterfaceDecl* itf, const std::string& key) {
  if (!itf) return nullptr;
  if (auto it = itf->methods.find(key); it != itf->methods.end()) return it->second;
  for (InterfaceDecl* base : itf->extends)
    if (PouDecl* m = interfaceMethod(base, key)) return m;
  return nullptr;
}

uint32_t Compiler::slotOf(const std::string& key) {
  return slots_.emplace(key, static_cast<uint32_t>(slots_.size())).first->second;
}

// ---------------------------------------------------------------- layout

void Compiler::layoutInheritance(PouDecl& decl, Type& t, uint64_t& off) {
  if (decl.ast) {
    t.abstract = decl.ast->isAbstract;
    t.isClass = decl.ast->isClass;
  }
  t.classId = decl.classId;
  std::vector<const Type*> interfaces;
  auto add = [&](const Type* i) {
    if (std::find(interfaces.begin(), interfaces.end(), i) == interfaces.end()) interfaces.push_back(i);
  };
  if (decl.base) {
    const Type* bt = layoutPou(*decl.base);
    if (!bt) return;
    t.extends = bt;
    for (const Variable& v : bt->fields) t.addField(v);
    off = bt->size;
    t.align = bt->align;
    for (const Type* i : bt->interfaces) add(i);
  } else if (decl.polymorphic) {
    Variable id;
    id.name = "__CLASS";
    id.type = types_->elementary(TypeKind::UDInt);
    id.offset = 0;
    id.hidden = true;
    t.addField(id);
    off = 4;
    t.align = 4;
  }
  for (InterfaceDecl* i : decl.implements)
    for (const Type* x : i->type->interfaces) add(x);
  t.interfaces = std::move(interfaces);
}

void Compiler::initInheritance(PouDecl& decl, Type& t) {
  if (t.extends) t.extends->writeInitialValue(t.init.data());
  if (decl.polymorphic) std::memcpy(t.init.data(), &decl.classId, 4);
}

void Compiler::checkInstantiable(const Type* type, const SourceSpan& span) {
  while (type && type->kind == TypeKind::Array) type = type->base;
  if (type && type->kind == TypeKind::FunctionBlock && type->abstract)
    error(span, fmt::format("'{}' is ABSTRACT: it cannot be instantiated (declare an instance of a block that "
                            "extends it, or a variable of an interface it implements)",
                            type->name));
}

// ---------------------------------------------------------------- checks

void Compiler::checkHierarchy() {
  for (auto& [key, fbOwned] : pous_) {
    PouDecl& fb = *fbOwned;
    if (fb.kind != PouKind::FunctionBlock || !fb.ast || !fb.instanceType) continue;
    const ast::Pou& p = *fb.ast;
    if (p.isClass)
      for (const ast::VarDecl& v : p.vars)
        if (v.section == ast::VarSection::Input || v.section == ast::VarSection::Output ||
            v.section == ast::VarSection::InOut)
          error(v.span, fmt::format("a CLASS has no inputs or outputs ('{}'): use methods and properties", v.name));
    for (auto& [mkey, m] : fb.methods) {
      const ast::Pou& ma = *m->ast;
      resolveFrame(*m);
      PouDecl* overridden = fb.base ? findMethod(fb.base, mkey) : nullptr;
      if (overridden) {
        resolveFrame(*overridden);
        if (overridden->ast->isFinal)
          error(ma.span, fmt::format("{} is FINAL in '{}': it cannot be overridden", describeMethod(ma),
                                     overridden->ownerDecl ? overridden->ownerDecl->name : "?"));
        else if (std::string why = signatureMismatch(*m, *overridden); !why.empty())
          error(ma.span, fmt::format("{} of '{}' does not match the one of '{}' it overrides: {}", describeMethod(ma),
                                     fb.name, overridden->ownerDecl ? overridden->ownerDecl->name : "?", why));
      } else if (ma.isOverride) {
        error(ma.span, fmt::format("{} is declared OVERRIDE, but no base of '{}' has it", describeMethod(ma), fb.name));
      }
      if (ma.isAbstract && !p.isAbstract)
        error(ma.span, fmt::format("{} is ABSTRACT, so '{}' must be declared {} ABSTRACT", describeMethod(ma), fb.name,
                                   blockWord(p)));
    }
    if (p.isAbstract) continue;
    // A concrete block implements every abstract method it inherits and every method of its
    // interfaces.
    std::set<std::string> seen;
    for (PouDecl* d = fb.base; d; d = d->base)
      for (auto& [mkey, m] : d->methods) {
        if (!seen.insert(mkey).second) continue;
        PouDecl* impl = findMethod(&fb, mkey);
        if (impl && impl->ast->isAbstract)
          error(p.span, fmt::format("'{}' does not implement the ABSTRACT {} of '{}'", fb.name,
                                    describeMethod(*impl->ast), impl->ownerDecl ? impl->ownerDecl->name : "?"));
      }
    for (const Type* it : fb.instanceType->interfaces) {
      InterfaceDecl* itf = interfaceOf(it);
      if (!itf) continue;
      for (auto& [mkey, proto] : itf->methods) {
        resolveFrame(*proto);
        PouDecl* impl = findMethod(&fb, mkey);
        if (!impl) {
          error(p.span, fmt::format("'{}' does not implement {} of interface '{}'", fb.name,
                                    describeMethod(*proto->ast), itf->name));
          continue;
        }
        resolveFrame(*impl);
        if (std::string why = signatureMismatch(*impl, *proto); !why.empty())
          error(impl->ast->span, fmt::format("{} of '{}' does not match interface '{}': {}", describeMethod(*impl->ast),
                                             impl->ownerDecl ? impl->ownerDecl->name : fb.name, itf->name, why));
        else if (impl->ast->access == ast::Access::Private || impl->ast->access == ast::Access::Protected)
          error(impl->ast->span, fmt::format("{} of '{}' implements interface '{}': it must be PUBLIC",
                                             describeMethod(*impl->ast), fb.name, itf->name));
      }
    }
  }
}

// ---------------------------------------------------------------- code

// An interface's method has no code of its own: it is always called through CALLV.
void Compiler::genPrototype(PouDecl& decl) {
  resolveFrame(decl);
  PouInfo& info = program_->pous[decl.pouIndex];
  info.entryPc = here();
  info.frameVariables = decl.frameVars;
  info.returnType = decl.returnType;
  info.returnOffset = decl.returnOffset;
  info.instanceType = decl.interfaceOwner ? decl.interfaceOwner->type : nullptr;
  info.span = decl.ast->span;
  emit(Op::FAULT, {o(static_cast<uint32_t>(FaultCode::Unreachable))});
  emit(Op::RET, {});
  info.frameSize = alignUp(decl.frameVarsSize, 8);
  info.reach = info.frameSize;
  calleesOf_[decl.pouIndex] = {};
}

void Compiler::buildDispatch() {
  Program& p = *program_;
  p.dispatchSlots = static_cast<uint32_t>(slots_.size());
  p.classes.assign(classes_.size(), nullptr);
  p.dispatch.assign(classes_.size() * slots_.size(), UINT32_MAX);
  for (size_t id = 1; id < classes_.size(); ++id) {
    p.classes[id] = classes_[id]->instanceType;
    for (const auto& [key, slot] : slots_) {
      PouDecl* m = findMethod(classes_[id], key);
      if (m && !m->ast->isPrototype) p.dispatch[id * slots_.size() + slot] = m->pouIndex;
    }
  }
}

// ---------------------------------------------------------------- the semantic pass's view

std::optional<uint32_t> CompilerDeclarations::virtualSlot(const Type* functionBlock, const std::string& upperKey) {
  PouDecl* fb = c_.fbDeclOf(functionBlock);
  if (!fb || !fb->polymorphic || !fb->ast || fb->ast->isFinal) return std::nullopt;
  PouDecl* m = c_.findMethod(fb, upperKey);
  if (!m || m->ast->isFinal) return std::nullopt;
  // Dynamic only when a block that extends this one has another method of that name.
  for (size_t id = 1; id < c_.classes_.size(); ++id) {
    PouDecl* other = c_.classes_[id];
    if (other == fb) continue;
    bool derived = false;
    for (PouDecl* d = other->base; d && !derived; d = d->base) derived = d == fb;
    if (derived && c_.findMethod(other, upperKey) != m) return c_.slotOf(upperKey);
  }
  return std::nullopt;
}

}  // namespace scanback::compiler
