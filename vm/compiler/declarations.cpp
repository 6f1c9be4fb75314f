// Declarations: collecting POUs, types and globals; resolving types; laying out FB instances,
// call frames and the flat image; initial values.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "vm/base/int128.h"
#include "vm/bytecode/limits.h"
#include "vm/bytecode/native_blocks.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/sema/rules.h"

namespace scanback::compiler {

int areaIndex(char area) { return area == 'I' ? 0 : area == 'Q' ? 1 : 2; }
uint32_t alignUp(uint32_t v, uint32_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

Compiler::Compiler(const SourceSet& sources, Diagnostics& diags, const CompileOptions& options)
    : sources_(sources), diags_(diags), options_(options), program_(std::make_shared<Program>()), declarations_(*this) {
  program_->sources = sources;
  program_->types = std::make_shared<TypeTable>();
  program_->stackSize = options.stackSize;
  program_->codesysConversions = !options.strict && options.dialect != Dialect::Iec;
  program_->refPointers = options.dialect == Dialect::Rusty;
  program_->test = options.test;
  types_ = program_->types.get();
  {
    Type err;
    err.kind = TypeKind::Void;
    err.name = "<error>";
    err.size = 8;
    err.align = 8;
    errorType_ = types_->add(std::move(err));
  }
  // Standard function blocks are POUs like any other, with native bodies.
  const auto natives = nativeBlocks();
  for (uint32_t id = 0; id < natives.size(); ++id) {
    const NativeBlock& n = natives[id];
    auto decl = std::make_unique<PouDecl>();
    decl->kind = PouKind::Native;
    decl->name = std::string(n.name);
    decl->nativeId = id;
    Type t;
    t.kind = TypeKind::FunctionBlock;
    t.name = decl->name;
    t.size = n.size;
    t.align = n.align;
    for (const NativeField& f : n.fields) {
      Variable v;
      v.name = std::string(f.name);
      v.type = types_->elementary(f.kind);
      v.offset = f.offset;
      v.section = f.section;
      v.hidden = f.hidden;
      t.addField(std::move(v));
    }
    auto init = n.initialBytes();
    t.init.assign(init.begin(), init.end());
    decl->instanceType = types_->add(std::move(t));
    fbDecls_[decl->instanceType] = decl.get();
    pous_[decl->name] = std::move(decl);
  }
}

PouDecl* Compiler::findPou(const std::string& name) {
  auto it = pous_.find(upperCase(name));
  return it == pous_.end() ? nullptr : it->second.get();
}

PouDecl* Compiler::fbDeclOf(const Type* t) {
  if (!t || t->kind != TypeKind::FunctionBlock) return nullptr;
  auto it = fbDecls_.find(t);
  return it != fbDecls_.end() ? it->second : findPou(t->name);
}

namespace {

// The name of the global list a file holds: its name without directories and extension, when that
// is an identifier ("plc/GVL.st" gives "GVL"); empty otherwise.
std::string globalListName(const std::string& path) {
  std::string name = path.substr(path.find_last_of("/\\") == std::string::npos ? 0 : path.find_last_of("/\\") + 1);
  if (const size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return {};
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return {};
  return name;
}

}  // namespace

void Compiler::collect(const ast::CompilationUnit& unit) {
  for (const ast::TypeDecl& t : unit.types) {
    const std::string key = upperCase(t.name);
    if (typeDecls_.count(key) || types_->findElementary(key) || pous_.count(key))
      error(t.span, fmt::format("'{}' is already declared", t.name));
    else {
      typeDecls_[key] = &t;
      typeOrder_.push_back(&t);
    }
  }
  for (const ast::Pou& p : unit.pous) {
    const std::string key = upperCase(p.name);
    if (pous_.count(key) || typeDecls_.count(key) || types_->findElementary(key) || interfaces_.count(key)) {
      error(p.span, fmt::format("'{}' is already declared", p.name));
      continue;
    }
    if (p.kind == ast::PouKind::Interface) {
      collectInterface(p);
      continue;
    }
    auto decl = std::make_unique<PouDecl>();
    decl->ast = &p;
    // A test POU is laid out and compiled as a function block; only `scanback test` instantiates it.
    decl->kind = p.test                                  ? PouKind::FunctionBlock
                 : p.kind == ast::PouKind::Program       ? PouKind::Program
                 : p.kind == ast::PouKind::FunctionBlock ? PouKind::FunctionBlock
                                                         : PouKind::Function;
    decl->name = p.name;
    for (const ast::Pou& m : p.methods) {
      auto md = std::make_unique<PouDecl>();
      md->ast = &m;
      md->owner = &p;
      md->kind = PouKind::Method;
      md->ownerDecl = decl.get();
      const std::string suffix = m.accessor == ast::Accessor::Get   ? ".GET"
                                 : m.accessor == ast::Accessor::Set ? ".SET"
                                                                    : "";
      md->name = p.name + "." + m.name + suffix;
      const std::string mkey = upperCase(m.name) + suffix;
      if (decl->methods.count(mkey))
        error(m.span, fmt::format("{} '{}' is already declared in '{}'", suffix.empty() ? "method" : "property",
                                  m.name + suffix, p.name));
      else
        decl->methods[mkey] = md.get();
      methodDecls_.push_back(std::move(md));
    }
    pous_[key] = std::move(decl);
  }
  // A file that holds VAR_GLOBAL blocks and nothing else is a global list named after the file, as
  // CODESYS and TwinCAT name a GVL after its object: GVL.st gives GVL.Eps. Its globals keep their
  // plain names too, unless the file says {attribute 'qualified_only'}.
  std::string list;
  bool qualifiedOnly = false;
  if (unit.pous.empty() && unit.types.empty() && unit.configurations.empty() && !unit.globals.empty()) {
    list = globalListName(sources_.file(unit.file).path);
    for (const ast::Attribute& a : unit.attributes) {
      if (a.name != "qualified_only") continue;
      if (list.empty())
        error(a.span,
              "{attribute 'qualified_only'} needs a global list named after its file, and this file's "
              "name is no identifier (name it like GVL.st)");
      qualifiedOnly = !list.empty();
    }
    if (!list.empty()) globalLists_.emplace(upperCase(list), list);
  }
  auto addGlobal = [&](const ast::VarDecl& v) {
    const std::string key = upperCase(v.name);
    if (globals_.count(key)) {
      error(v.span, fmt::format("global '{}' is already declared", v.name));
      return;
    }
    auto g = std::make_unique<GlobalDecl>();
    g->ast = &v;
    g->list = list;
    g->qualifiedOnly = qualifiedOnly;
    globalOrder_.push_back(g.get());
    globals_[key] = std::move(g);
  };
  for (const ast::VarDecl& v : unit.globals) addGlobal(v);
  for (const ast::Configuration& c : unit.configurations) {
    if (config_) {
      error(c.span, fmt::format("a project has one CONFIGURATION; '{}' is already declared", config_->name));
      continue;
    }
    config_ = &c;
    for (const ast::VarDecl& v : c.globals) addGlobal(v);
    for (const ast::Resource& r : c.resources)
      for (const ast::VarDecl& v : r.globals) addGlobal(v);
    for (const ast::VarConfigEntry& e : c.varConfig) {
      std::string key;
      for (const std::string& part : e.path) key += (key.empty() ? "" : ".") + upperCase(part);
      if (!varConfig_.emplace(key, &e).second) error(e.span, "VAR_CONFIG already has an entry for this variable");
    }
  }
}

// A PROGRAM that test code declares instances of (`VAR uut : Adder; END_VAR` in a TEST_PROGRAM)
// gets a twin declaration compiled as a function block, so that each such variable is an instance
// of its own and the test calls it like a block (the program's own instance, in a task, is not
// part of a test's program). Found from the declarations as written, before any layout.
void Compiler::collectProgramBlocks() {
  std::vector<const ast::TypeRef*> pending;
  auto scan = [&](const ast::Pou& p) {
    for (const ast::VarDecl& v : p.vars)
      if (v.type) pending.push_back(v.type.get());
  };
  for (const auto& [key, d] : pous_) {
    if (!d->ast || !d->ast->test) continue;
    scan(*d->ast);
    for (const ast::Pou& m : d->ast->methods) scan(m);
  }
  while (!pending.empty()) {
    const ast::TypeRef* t = pending.back();
    pending.pop_back();
    if (t->element) pending.push_back(t->element.get());
    if (t->kind != ast::TypeRefKind::Named) continue;
    const std::string key = upperCase(t->name);
    auto it = pous_.find(key);
    if (it == pous_.end() || it->second->kind != PouKind::Program || it->second->ast->test || programBlocks_.count(key))
      continue;
    const PouDecl& program = *it->second;
    auto block = std::make_unique<PouDecl>();
    block->ast = program.ast;
    block->kind = PouKind::FunctionBlock;
    block->name = program.name;
    block->programBlock = true;
    for (const auto& [mkey, m] : program.methods) {
      auto md = std::make_unique<PouDecl>();
      md->ast = m->ast;
      md->owner = m->owner;
      md->kind = PouKind::Method;
      md->ownerDecl = block.get();
      md->name = m->name;
      block->methods[mkey] = md.get();
      methodDecls_.push_back(std::move(md));
    }
    programBlocks_[key] = std::move(block);
  }
}

// ---------------------------------------------------------------- types

const Type* Compiler::resolveNamedType(const std::string& name, const SourceSpan& span) {
  DeclarationScope scope(*this, layoutDecl_);
  sema::Arena arena;
  return sema::Analyzer(scope, diags_, arena).typeNamed(name, span);
}

std::optional<const Type*> Compiler::resolveDeclaredType(const std::string& key, const SourceSpan& span) {
  if (auto it = resolvedTypes_.find(key); it != resolvedTypes_.end()) return it->second;
  auto it = typeDecls_.find(key);
  if (it == typeDecls_.end()) {
    // A name of TwinCAT's system library the project does not declare as anything.
    const ast::TypeDecl* system = pous_.count(key) || interfaces_.count(key) ? nullptr : systemLibraryType(key);
    if (!system) return std::nullopt;
    it = typeDecls_.emplace(key, system).first;
  }
  if (resolvingTypes_.count(key)) {
    error(span, fmt::format("type '{}' is defined in terms of itself", it->second->name));
    return nullptr;
  }
  resolvingTypes_.insert(key);
  const ast::TypeDecl& d = *it->second;
  // Its constant expressions see the program's names only, wherever the type is first used.
  PouDecl* outer = layoutDecl_;
  layoutDecl_ = nullptr;
  const Type* t = resolveType(*d.type);
  if (t) {
    const bool fresh = d.type->kind == ast::TypeRefKind::Struct || d.type->kind == ast::TypeRefKind::Enum ||
                       d.type->kind == ast::TypeRefKind::Subrange;
    if (fresh) {
      // Created for this declaration alone: it takes the declared name (and default) in place,
      // so that enumeration values registered for it keep pointing at it.
      Type* own = const_cast<Type*>(t);
      own->name = d.name;
      if (d.init) {
        if (own->init.empty()) own->init = t->initialValue();
        writeInitial(own->init, 0, t, d.init.get());
        keepInitial(own->init, d.span);
      }
    } else if (d.init) {
      // An alias with its own default value is a distinct type.
      Type copy = *t;
      copy.name = d.name;
      copy.init = t->initialValue();
      writeInitial(copy.init, 0, t, d.init.get());
      keepInitial(copy.init, d.span);
      t = types_->add(std::move(copy));
    }
  }
  layoutDecl_ = outer;
  resolvingTypes_.erase(key);
  resolvedTypes_[key] = t;
  return t;
}

// Types no variable uses are resolved too: their errors are reported, and the symbol table names
// every declared type (the debugger may name one in an expression).
void Compiler::resolveAllTypes() {
  for (const ast::TypeDecl* d : typeOrder_) resolveDeclaredType(upperCase(d->name), d->span);
}

std::optional<Folded> Compiler::constantOf(const ast::Expr& e, const Type* hint) {
  DeclarationScope scope(*this, layoutDecl_);
  sema::Arena arena;
  const sema::Expr* c = sema::Analyzer(scope, diags_, arena).constant(e, hint);
  if (!c) return std::nullopt;
  return Folded{c->type, c->constant};
}

std::optional<Folded> Compiler::convertConstant(const Folded& c, const Type* to, const SourceSpan& span) {
  DeclarationScope scope(*this, layoutDecl_);
  sema::Arena arena;
  sema::Analyzer analyzer(scope, diags_, arena);
  const sema::Expr* r = analyzer.convert(analyzer.constantNode(c.type, c.value, span), to, span);
  if (r->kind != sema::ExprKind::Constant) return std::nullopt;
  return Folded{r->type, r->constant};
}

std::optional<int64_t> Compiler::evalConstInt(const ast::Expr& e) {
  const std::optional<Folded> v = constantOf(e);
  if (!v || v->value.kind != ConstValue::Kind::Int) {
    error(e.span, "expected a constant integer expression");
    return std::nullopt;
  }
  return static_cast<int64_t>(v->value.i);
}

// CODESYS allows a REFERENCE TO as the type of a variable or a field only: never as what an
// array holds or a pointer or reference designates (docs/language.md, "REFERENCE TO").
bool Compiler::noReferenceIn(const Type* t, const char* what, const SourceSpan& span) {
  if (!t || !t->isReference()) return true;
  error(span, fmt::format("{} {} is not allowed: a REFERENCE TO is the type of a variable, a field or a result, "
                          "never what an array holds or a pointer or reference designates",
                          what, t->name));
  return false;
}

const Type* Compiler::resolveType(const ast::TypeRef& ref) {
  switch (ref.kind) {
    case ast::TypeRefKind::Named: return resolveNamedType(ref.name, ref.span);
    case ast::TypeRefKind::String: {
      int64_t cap = 80;
      if (ref.length) {
        auto n = evalConstInt(*ref.length);
        if (!n) return nullptr;
        if (*n < 1 || *n > 65535) {
          error(ref.length->span, fmt::format("string length {} is outside 1..65535", *n));
          return nullptr;
        }
        cap = *n;
      }
      return ref.wide ? types_->wideString(static_cast<uint32_t>(cap)) : types_->string(static_cast<uint32_t>(cap));
    }
    case ast::TypeRefKind::Array: {
      if (ref.open) return openArrayType(ref);
      const Type* elem = ref.element ? resolveType(*ref.element) : nullptr;
      if (!noReferenceIn(elem, "ARRAY OF", ref.span)) return nullptr;
      std::vector<ArrayDim> dims;
      // Bytes of the whole array, saturating: the product of the counts may pass 2^64.
      uint64_t total = elem ? elem->size : 0;
      std::string bounds;  // "1..10, 0..3", for the message
      for (const ast::ArrayDim& d : ref.dims) {
        auto lo = evalConstInt(*d.lower);
        auto hi = evalConstInt(*d.upper);
        if (!lo || !hi) return nullptr;
        if (*hi < *lo) {
          error(d.lower->span, fmt::format("array bounds {}..{} are empty", *lo, *hi));
          return nullptr;
        }
        if (*lo < INT32_MIN || *hi > INT32_MAX) {
          error(d.lower->span, "array bounds must fit in DINT");
          return nullptr;
        }
        const uint64_t count = static_cast<uint64_t>(*hi - *lo + 1);  // at most 2^32: DINT bounds
        dims.push_back(ArrayDim{*lo, static_cast<uint32_t>(count)});
        total = mulSize(total, count);
        bounds += fmt::format("{}{}..{}", bounds.empty() ? "" : ", ", *lo, *hi);
      }
      if (!elem) return nullptr;
      if (total > kMaxImageBytes) {
        error(ref.span, fmt::format("ARRAY[{}] OF {} would need {}; scanback's limit is {}", bounds, elem->name,
                                    layoutSizeText(total), imageLimitText()));
        return nullptr;
      }
      return types_->array(elem, std::move(dims));
    }
    case ast::TypeRefKind::RefTo: {
      const Type* target = ref.element ? resolveType(*ref.element) : nullptr;
      if (!noReferenceIn(target, "REF_TO", ref.span)) return nullptr;
      return target ? types_->refTo(target) : nullptr;
    }
    case ast::TypeRefKind::PointerTo: {
      const Type* target = ref.element ? resolveType(*ref.element) : nullptr;
      if (!noReferenceIn(target, "POINTER TO", ref.span)) return nullptr;
      return target ? types_->pointerTo(target) : nullptr;
    }
    case ast::TypeRefKind::Reference: {
      const Type* target = ref.element ? resolveType(*ref.element) : nullptr;
      if (!noReferenceIn(target, "REFERENCE TO", ref.span)) return nullptr;
      if (isOpenArray(target)) {
        error(ref.span, "REFERENCE TO ARRAY[*] is not allowed: an ARRAY[*] is a VAR_IN_OUT's type only");
        return nullptr;
      }
      return target ? types_->referenceTo(target) : nullptr;
    }
    case ast::TypeRefKind::Struct: {
      Type t;
      t.kind = TypeKind::Struct;
      t.name = ref.isUnion ? "UNION" : "STRUCT";
      uint64_t off = 0;
      uint64_t unionSize = 0;
      bool fieldInitial = false;  // a field whose type's initial bytes are not all 0 (F_TRIG, a class id)
      for (const ast::VarDecl& f : ref.fields) {
        const Type* ft = f.type ? resolveType(*f.type) : nullptr;
        if (!ft) continue;
        if (ft->kind == TypeKind::FunctionBlock && ref.isUnion) {
          error(f.span, "a UNION cannot contain function block instances");
          continue;
        }
        if (ft->kind == TypeKind::FunctionBlock && ft->abstract) {
          error(f.span, fmt::format("'{}' is ABSTRACT: it has no instances", ft->name));
          continue;
        }
        if (t.field(f.name)) {
          error(f.span, fmt::format("field '{}' is declared twice", f.name));
          continue;
        }
        // A UNION's fields all start at its first byte (CODESYS): writing one changes the others.
        if (ref.isUnion) off = 0;
        fieldInitial = fieldInitial || !ft->zeroInitial();
        const uint64_t at = alignSize(off, ft->align);
        const uint64_t end = alignSize(addSize(at, ft->size), std::max(t.align, ft->align));
        if (end > kMaxImageBytes) {
          error(f.span, fmt::format("the STRUCT would need {} with field '{}'; scanback's limit is {}",
                                    layoutSizeText(end), f.name, imageLimitText()));
          return nullptr;
        }
        Variable v;
        v.name = f.name;
        v.type = ft;
        v.offset = static_cast<uint32_t>(at);
        v.span = f.span;
        t.addField(v);
        off = at + ft->size;
        unionSize = std::max(unionSize, off);
        t.align = std::max(t.align, ft->align);
      }
      if (ref.isUnion) off = unionSize;
      t.size = static_cast<uint32_t>(alignSize(std::max<uint64_t>(off, 1), t.align));
      // Without initial values written its bytes are all zero: none are made (keepInitial).
      const bool initialised = fieldInitial || std::any_of(ref.fields.begin(), ref.fields.end(),
                                                           [](const ast::VarDecl& f) { return f.init != nullptr; });
      if (initialised) t.init.assign(t.size, 0);
      if (fieldInitial)
        for (const Variable& v : t.fields) v.type->writeInitialValue(t.init.data() + v.offset);
      for (size_t i = 0, k = 0; initialised && i < ref.fields.size(); ++i) {
        if (k >= t.fields.size() || !equalsIgnoreCase(t.fields[k].name, ref.fields[i].name)) continue;
        writeInitial(t.init, t.fields[k].offset, t.fields[k].type, ref.fields[i].init.get());
        ++k;
      }
      if (!keepInitial(t.init, ref.span)) return nullptr;
      return types_->add(std::move(t));
    }
    case ast::TypeRefKind::Enum: {
      Type t;
      t.kind = TypeKind::Enum;
      t.name = "ENUM";
      t.base = ref.element ? resolveType(*ref.element) : types_->elementary(TypeKind::Int);
      if (!t.base) return nullptr;
      if (!t.base->isInteger()) {
        error(ref.element->span, "the base type of an enumeration must be an integer type");
        return nullptr;
      }
      t.size = t.base->size;
      t.align = t.base->align;
      // A value must fit the base type (counted on from the previous one in 128 bits, so that the
      // value after the base type's largest is an error, not an overflow).
      Int128 next = 0;
      for (const ast::EnumValue& ev : ref.enumValues) {
        Int128 value = next;
        if (ev.value) {
          const std::optional<Folded> v = constantOf(*ev.value);
          if (v && v->value.kind == ConstValue::Kind::Int)
            value = v->value.i;
          else
            error(ev.value->span, "expected a constant integer expression");
        }
        for (const EnumMember& m : t.members)
          if (equalsIgnoreCase(m.name, ev.name)) error(ev.span, fmt::format("'{}' is listed twice", ev.name));
        if (!sema::fitsLiteral(ConstValue::ofInt(value), t.base)) {
          error(ev.value ? ev.value->span : ev.span,
                fmt::format("{} = {} does not fit {}, the base type of the enumeration", ev.name, int128Text(value),
                            t.base->name));
          value = 0;
        }
        t.members.push_back(EnumMember{ev.name, static_cast<int64_t>(value)});
        next = value + 1;
      }
      if (t.members.empty()) {
        error(ref.span, "an enumeration needs at least one value");
        return nullptr;
      }
      t.init.assign(t.size, 0);
      writeConst(t.init, 0, t.base, ConstValue::ofInt(t.members[0].value), ref.span);
      Type* added = types_->add(std::move(t));
      for (const EnumMember& m : added->members) enumValues_[upperCase(m.name)].push_back({added, m.value});
      return added;
    }
    case ast::TypeRefKind::Subrange: {
      const Type* base = ref.element ? resolveType(*ref.element) : nullptr;
      if (!base || ref.dims.empty()) return nullptr;
      if (!base->isInteger()) {
        error(ref.span, "a subrange needs an integer base type");
        return nullptr;
      }
      auto lo = evalConstInt(*ref.dims[0].lower);
      auto hi = evalConstInt(*ref.dims[0].upper);
      if (!lo || !hi) return nullptr;
      if (*hi < *lo) {
        error(ref.span, fmt::format("subrange {}..{} is empty", *lo, *hi));
        return nullptr;
      }
      Type t;
      t.kind = TypeKind::Subrange;
      t.name = fmt::format("{} ({}..{})", base->name, *lo, *hi);
      t.base = base;
      t.lower = *lo;
      t.upper = *hi;
      t.size = base->size;
      t.align = base->align;
      t.init.assign(t.size, 0);
      writeConst(t.init, 0, base, ConstValue::ofInt(*lo <= 0 && *hi >= 0 ? 0 : *lo), ref.span);
      return types_->add(std::move(t));
    }
  }
  return nullptr;
}

// ---------------------------------------------------------------- variables and layouts

Variable Compiler::makeVariable(const ast::VarDecl& d, VarSection section) {
  Variable v;
  v.name = d.name;
  v.section = section;
  v.constant = d.constant;
  v.retain = d.retain;
  v.span = d.span;
  v.type = d.type ? resolveType(*d.type) : nullptr;
  if (isOpenArray(v.type) && section != VarSection::InOut) {
    error(d.span, fmt::format("'{}': ARRAY[*] is only allowed in VAR_IN_OUT", d.name));
    v.type = nullptr;
  }
  if (v.type && v.type->isReference()) {
    // A REFERENCE TO is bound by REF= in the code (or by its input's argument in a call).
    if (section == VarSection::InOut) {
      error(d.span, fmt::format("'{}': a VAR_IN_OUT is passed by reference already; declare it {}", d.name,
                                v.type->base->name));
      v.type = nullptr;
    } else if (d.constant) {
      error(d.span, fmt::format("'{}': a REFERENCE TO cannot be CONSTANT (REF= binds it in the code)", d.name));
      v.type = nullptr;
    } else if (d.init) {
      error(d.init->span,
            fmt::format("'{}': a REFERENCE TO has no initial value; bind it with REF= in the code", d.name));
      v.type = nullptr;
    } else if (d.location) {
      error(d.span, fmt::format("'{}': a REFERENCE TO cannot be located (AT)", d.name));
      v.type = nullptr;
    }
  }
  if (section != VarSection::InOut && section != VarSection::External) checkInstantiable(v.type, d.span);
  return v;
}

bool Compiler::locate(const ast::Location& loc, Variable& v, const Type* type) {
  if (!type) return false;
  const char sizeLetter = loc.size;
  uint32_t unit = sizeLetter == 'X' ? 1 : sizeLetter == 'B' ? 1 : sizeLetter == 'W' ? 2 : sizeLetter == 'D' ? 4 : 8;
  if (!type->isScalar() || type->kind == TypeKind::Ref) {
    error(loc.span, fmt::format("a located variable must have an elementary type, not {}", type->name));
    return false;
  }
  if (sizeLetter == 'X') {
    if (type->kind != TypeKind::Bool) {
      error(loc.span, fmt::format("a bit address needs a BOOL variable, not {}", type->name));
      return false;
    }
  } else if (type->size != unit && !(type->kind == TypeKind::Bool && unit == 1)) {
    error(loc.span,
          fmt::format("%{}{} holds {} byte(s) but {} has {}", loc.area, sizeLetter, unit, type->name, type->size));
    return false;
  }
  if (loc.parts.empty()) {
    error(loc.span, "address has no number");
    return false;
  }
  uint64_t byte = static_cast<uint64_t>(loc.parts[0]) * unit;
  int bit = -1;
  if (sizeLetter == 'X') {
    bit = loc.parts.size() > 1 ? static_cast<int>(loc.parts[1]) : 0;
    if (loc.parts.size() == 1) {
      // %IX5 without a bit: bit 5 of byte 0 would surprise; IEC reads it as byte.bit with bit given
      byte = loc.parts[0] / 8;
      bit = static_cast<int>(loc.parts[0] % 8);
    }
    if (bit > 7) {
      error(loc.span, fmt::format("bit {} does not exist (0..7)", bit));
      return false;
    }
  }
  if (byte + type->size > 65536) {
    error(loc.span, "address is beyond the 64 KiB I/O area");
    return false;
  }
  const int a = areaIndex(loc.area);
  const IoArea& area = a == 0 ? program_->input : a == 1 ? program_->output : program_->memory;
  v.absolute = true;
  v.offset = area.offset + static_cast<uint32_t>(byte);
  v.bit = static_cast<int8_t>(bit);
  v.location = sizeLetter == 'X' ? fmt::format("%{}X{}.{}", loc.area, byte, bit)
                                 : fmt::format("%{}{}{}", loc.area, sizeLetter, loc.parts[0]);
  return true;
}

// Gives `v` the next offset of its container (`off` advances): in-outs hold a REF, the rest their
// value. False, reported, when the container (`container`: "an instance of 'Fb'") would pass the
// limit; `v` and `off` are then left as they were.
bool Compiler::placeVariable(Variable& v, uint64_t& off, const std::string& container) {
  const bool byReference = v.section == VarSection::InOut;
  const uint32_t size = isOpenArray(v.type) ? openArraySlotSize(v.type) : byReference ? 4 : v.type->size;
  const uint32_t align = byReference ? 4 : v.type->align;
  const uint64_t at = alignSize(off, align);
  // The container's own alignment (at most 8, and the limit is a multiple of it) adds no more.
  const uint64_t end = addSize(at, size);
  if (end > kMaxImageBytes) {
    error(v.span, fmt::format("{} would need {} with '{}'; scanback's limit is {}", container, layoutSizeText(end),
                              v.name, imageLimitText()));
    return false;
  }
  v.byReference = byReference;
  v.offset = static_cast<uint32_t>(at);
  off = end;
  return true;
}

Type* Compiler::layoutPou(PouDecl& decl) {
  if (decl.instanceType) return decl.instanceType;
  if (decl.layoutFailed) return nullptr;  // reported once
  if (decl.layingOut) {
    error(decl.ast->span, fmt::format("'{}' contains an instance of itself", decl.name));
    return nullptr;
  }
  decl.layingOut = true;
  PouDecl* outerDecl = layoutDecl_;
  layoutDecl_ = &decl;
  Type t;
  t.kind = TypeKind::FunctionBlock;
  t.name = decl.name;
  uint64_t off = 0;
  layoutInheritance(decl, t, off);
  if (decl.base && !t.extends) {  // the base failed (reported)
    decl.layingOut = false;
    layoutDecl_ = outerDecl;
    return nullptr;
  }
  const size_t inherited = t.fields.size();
  std::vector<const ast::VarDecl*> initDecls(inherited, nullptr);
  for (const ast::VarDecl& d : decl.ast->vars) {
    if (d.section == ast::VarSection::External || d.section == ast::VarSection::Temp) continue;
    if (d.section == ast::VarSection::Global || d.section == ast::VarSection::Config) {
      error(d.span, "VAR_GLOBAL belongs at file level or in a CONFIGURATION");
      continue;
    }
    const VarSection section = d.section == ast::VarSection::Input    ? VarSection::Input
                               : d.section == ast::VarSection::Output ? VarSection::Output
                               : d.section == ast::VarSection::InOut  ? VarSection::InOut
                                                                      : VarSection::Var;
    Variable v = makeVariable(d, section);
    if (!v.type) continue;
    foldLocalConstant(decl, d, v.type);
    if (const Variable* existing = t.field(v.name)) {
      if (&*existing < t.fields.data() + inherited)
        error(d.span, fmt::format("'{}' is already declared in '{}', which '{}' extends", d.name,
                                  t.extends ? t.extends->name : "?", decl.name));
      else
        error(d.span, fmt::format("'{}' is declared twice", d.name));
      continue;
    }
    // A program tested as a block has no instance path for VAR_CONFIG to bind `AT %I*` to: the
    // variable is one of the instance.
    if (d.location && !(decl.programBlock && d.location->incomplete())) {
      if (d.location->incomplete()) {
        if (decl.kind != PouKind::Program) {
          error(d.location->span, "AT %I* / %Q* / %M* is supported in PROGRAMs only");
          continue;
        }
        v.absolute = true;
        v.location = fmt::format("%{}*", d.location->area);
        v.offset = UINT32_MAX;  // bound per instance by VAR_CONFIG
      } else if (!locate(*d.location, v, v.type)) {
        continue;
      }
      initDecls.push_back(nullptr);  // initialised in the I/O area (layoutImage)
      t.addField(v);
      continue;
    }
    if (!placeVariable(v, off, fmt::format("an instance of '{}'", decl.name))) {
      decl.layoutFailed = true;
      decl.layingOut = false;
      layoutDecl_ = outerDecl;
      return nullptr;
    }
    if (!v.byReference) t.align = std::max(t.align, v.type->align);
    initDecls.push_back(v.byReference ? nullptr : &d);
    t.addField(v);
  }
  t.align = std::max<uint32_t>(t.align, 4);
  // At most the limit: it is a multiple of every alignment.
  t.size = static_cast<uint32_t>(alignSize(std::max<uint64_t>(off, 1), t.align));
  // An instance whose bytes all start at zero gets none made (a program of 200 MB would otherwise
  // need them to find that out); then no initial value reads an earlier one (rememberInitial).
  const bool zero =
      !decl.polymorphic && (!t.extends || t.extends->zeroInitial()) &&
      std::none_of(initDecls.begin(), initDecls.end(), [](const ast::VarDecl* d) { return d && d->init; }) &&
      std::all_of(t.fields.begin(), t.fields.end(),
                  [](const Variable& v) { return v.absolute || v.byReference || v.type->zeroInitial(); });
  if (!zero) t.init.assign(t.size, 0);
  for (const Variable& v : t.fields) {
    if (zero || v.absolute || v.byReference) continue;
    v.type->writeInitialValue(t.init.data() + v.offset);
  }
  if (!zero) initInheritance(decl, t);  // the base's initial values, then the derived block's below
  for (size_t i = 0; !zero && i < initDecls.size(); ++i) {
    if (initDecls[i] && initDecls[i]->init)
      writeInitial(t.init, t.fields[i].offset, t.fields[i].type, initDecls[i]->init.get());
    if (initDecls[i]) rememberInitial(decl, t.fields[i], t.init);
  }
  decl.initials.clear();
  if (!keepInitial(t.init, decl.ast->span)) {
    decl.layoutFailed = true;
    decl.layingOut = false;
    layoutDecl_ = outerDecl;
    return nullptr;
  }
  decl.instanceType = types_->add(std::move(t));
  fbDecls_[decl.instanceType] = &decl;
  decl.layingOut = false;
  layoutDecl_ = outerDecl;
  return decl.instanceType;
}

// Frame variables: all variables of functions and methods, VAR_TEMP of FB and program bodies.
void Compiler::resolveFrame(PouDecl& decl) {
  if (decl.frameResolved) return;
  decl.frameResolved = true;
  PouDecl* outerDecl = layoutDecl_;
  layoutDecl_ = &decl;
  uint64_t off = 0;
  const bool callable = decl.kind == PouKind::Function || decl.kind == PouKind::Method;
  if (callable && decl.ast->returnType) {
    decl.returnType = resolveType(*decl.ast->returnType);
    if (decl.returnType) {
      Variable r;
      r.name = decl.ast->name;
      r.type = decl.returnType;
      r.section = VarSection::Return;
      r.offset = 0;
      r.span = decl.ast->span;
      decl.frameVars.push_back(r);
      decl.frameVarDecls.push_back(nullptr);
      off = decl.returnType->size;
    }
  }
  std::set<std::string> names;
  for (const Variable& v : decl.frameVars) names.insert(upperCase(v.name));
  // A method's parameters come first, in declaration order, so that every method a dynamic call
  // may reach (the overrides, the implementations of an interface's method) has them at the same
  // offsets as the one the caller fills.
  std::vector<const ast::VarDecl*> ordered;
  auto isParameter = [](const ast::VarDecl& d) {
    return d.section == ast::VarSection::Input || d.section == ast::VarSection::Output ||
           d.section == ast::VarSection::InOut;
  };
  for (const ast::VarDecl& d : decl.ast->vars)
    if (decl.kind != PouKind::Method || isParameter(d)) ordered.push_back(&d);
  const size_t parameterCount = decl.kind == PouKind::Method ? ordered.size() : 0;
  if (decl.kind == PouKind::Method)
    for (const ast::VarDecl& d : decl.ast->vars)
      if (!isParameter(d)) ordered.push_back(&d);
  decl.paramsSize = static_cast<uint32_t>(off);
  for (size_t index = 0; index < ordered.size(); ++index) {
    if (index == parameterCount && decl.kind == PouKind::Method) decl.paramsSize = static_cast<uint32_t>(off);
    const ast::VarDecl& d = *ordered[index];
    if (d.section == ast::VarSection::External) continue;
    if (!callable && d.section != ast::VarSection::Temp) continue;
    const VarSection section = d.section == ast::VarSection::Input    ? VarSection::Input
                               : d.section == ast::VarSection::Output ? VarSection::Output
                               : d.section == ast::VarSection::InOut  ? VarSection::InOut
                               : d.section == ast::VarSection::Temp   ? VarSection::Temp
                                                                      : VarSection::Var;
    if (d.section == ast::VarSection::Global || d.section == ast::VarSection::Config) {
      error(d.span, "VAR_GLOBAL belongs at file level or in a CONFIGURATION");
      continue;
    }
    if (d.location) {
      error(d.location->span, "variables of functions, methods and VAR_TEMP cannot be located");
      continue;
    }
    Variable v = makeVariable(d, section);
    if (!v.type) continue;
    foldLocalConstant(decl, d, v.type);
    if (!names.insert(upperCase(v.name)).second) {
      error(d.span, fmt::format("'{}' is declared twice", d.name));
      continue;
    }
    if (!placeVariable(v, off, fmt::format("the frame of '{}'", decl.name))) {
      // The variables placed so far make the frame; the body is not analysed (genBody).
      decl.frameFailed = true;
      break;
    }
    decl.frameVars.push_back(v);
    decl.frameVarDecls.push_back(&d);
  }
  if (decl.kind == PouKind::Method && parameterCount == ordered.size()) decl.paramsSize = static_cast<uint32_t>(off);
  decl.frameVarsSize = static_cast<uint32_t>(alignSize(off, 8));
  if (decl.frameFailed) {  // no code is generated: no initial frame either
    decl.initials.clear();
    layoutDecl_ = outerDecl;
    return;
  }
  // A frame whose bytes all start at zero gets no template made (templateOf makes one for code).
  bool zero = true;
  for (size_t i = 0; i < decl.frameVars.size(); ++i) {
    const Variable& v = decl.frameVars[i];
    if (!v.byReference && (!v.type->zeroInitial() || (decl.frameVarDecls[i] && decl.frameVarDecls[i]->init)))
      zero = false;
  }
  if (!zero) decl.frameTemplate.assign(decl.frameVarsSize, 0);
  for (size_t i = 0; !zero && i < decl.frameVars.size(); ++i) {
    const Variable& v = decl.frameVars[i];
    if (v.byReference) continue;
    v.type->writeInitialValue(decl.frameTemplate.data() + v.offset);
    if (decl.frameVarDecls[i] && decl.frameVarDecls[i]->init)
      writeInitial(decl.frameTemplate, v.offset, v.type, decl.frameVarDecls[i]->init.get());
    rememberInitial(decl, v, decl.frameTemplate);
  }
  decl.initials.clear();
  // All zero, the template is made again when code needs it (templateOf).
  if (!keepInitial(decl.frameTemplate, decl.ast->span)) decl.frameFailed = true;
  layoutDecl_ = outerDecl;
}

bool Compiler::keepInitial(std::vector<uint8_t>& bytes, const SourceSpan& span) {
  if (std::all_of(bytes.begin(), bytes.end(), [](uint8_t b) { return b == 0; })) {
    std::vector<uint8_t>().swap(bytes);
    return true;
  }
  initialBytes_ = addSize(initialBytes_, bytes.size());
  if (initialBytes_ <= kMaxInitialBytes) return true;
  if (!initialsFull_)
    error(span, fmt::format("the initial values of the program's types and frames would need {} in all (those not "
                            "all zero); scanback's limit is {} bytes ({} MiB)",
                            layoutSizeText(initialBytes_), kMaxInitialBytes, kMaxInitialBytes >> 20));
  initialsFull_ = true;
  std::vector<uint8_t>().swap(bytes);
  return false;
}

const LocalConstant* Compiler::foldLaterConstant(PouDecl& decl, const std::string& upperName) {
  if (!decl.ast || decl.folding.count(upperName)) return nullptr;
  for (const ast::VarDecl& d : decl.ast->vars) {
    if (!d.constant || !d.type || upperCase(d.name) != upperName) continue;
    decl.folding.insert(upperName);
    PouDecl* outer = layoutDecl_;
    layoutDecl_ = &decl;
    if (const Type* type = resolveType(*d.type)) foldLocalConstant(decl, d, type);
    layoutDecl_ = outer;
    decl.folding.erase(upperName);
    auto it = decl.constants.find(upperName);
    return it == decl.constants.end() ? nullptr : &it->second;
  }
  return nullptr;
}

void Compiler::rememberInitial(PouDecl& decl, const Variable& v, const std::vector<uint8_t>& buf) {
  if (!v.type || v.byReference || v.absolute || !v.type->isScalar() || v.type->kind == TypeKind::Ref) return;
  if (v.offset + v.type->size > buf.size()) return;
  const uint8_t* p = buf.data() + v.offset;
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  ConstValue c;
  switch (primOf(*v.type)) {
    case Prim::I8: c = ConstValue::ofInt(get(int8_t{})); break;
    case Prim::I16: c = ConstValue::ofInt(get(int16_t{})); break;
    case Prim::I32: c = ConstValue::ofInt(get(int32_t{})); break;
    case Prim::I64: c = ConstValue::ofInt(get(int64_t{})); break;
    case Prim::U8: c = ConstValue::ofInt(get(uint8_t{})); break;
    case Prim::U16: c = ConstValue::ofInt(get(uint16_t{})); break;
    case Prim::U32: c = ConstValue::ofInt(get(uint32_t{})); break;
    case Prim::U64: c = ConstValue::ofInt(get(uint64_t{})); break;
    case Prim::F32: c = ConstValue::ofReal(get(float{})); break;
    case Prim::F64: c = ConstValue::ofReal(get(double{})); break;
  }
  if (v.type->kind == TypeKind::Bool) c = ConstValue::ofBool(c.i != 0);
  LocalConstant k;
  k.variable = v;
  k.value = std::move(c);
  decl.initials[upperCase(v.name)] = std::move(k);
}

void Compiler::foldLocalConstant(PouDecl& decl, const ast::VarDecl& d, const Type* type) {
  if (!d.constant || !d.init || d.init->kind != ast::InitKind::Expr || !d.init->expr) return;
  if (!(type->isScalar() || type->kind == TypeKind::String)) return;
  if (decl.constants.count(upperCase(d.name))) return;
  const std::optional<Folded> c = constantOf(*d.init->expr, type);
  if (!c) return;
  const std::optional<Folded> cv = convertConstant(*c, type, d.init->span);
  if (!cv) return;
  LocalConstant k;
  k.variable.name = d.name;
  k.variable.type = type;
  k.variable.constant = true;
  k.variable.span = d.span;
  k.value = cv->value;
  decl.constants.emplace(upperCase(d.name), std::move(k));
}

// ---------------------------------------------------------------- initial values

namespace {

// The first ADR(...) or REF(...) call in an expression, or null.
const ast::Expr* addressCallIn(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::Call && e.operand->kind == ast::ExprKind::Name &&
      (equalsIgnoreCase(e.operand->text, "ADR") || equalsIgnoreCase(e.operand->text, "REF")))
    return &e;
  for (const ast::Expr* part : {e.operand.get(), e.rhs.get()})
    if (part)
      if (const ast::Expr* found = addressCallIn(*part)) return found;
  for (const ast::Argument& a : e.args)
    if (a.value)
      if (const ast::Expr* found = addressCallIn(*a.value)) return found;
  for (const ast::ExprPtr& i : e.indices)
    if (const ast::Expr* found = addressCallIn(*i)) return found;
  return nullptr;
}

}  // namespace

void Compiler::writeConst(std::vector<uint8_t>& buf, uint32_t offset, const Type* type, const ConstValue& c,
                          const SourceSpan& span) {
  if (!type || offset + type->size > buf.size()) return;
  uint8_t* p = buf.data() + offset;
  if (type->kind == TypeKind::String) {
    if (c.kind != ConstValue::Kind::String) {
      error(span, fmt::format("expected a string for {}", type->name));
      return;
    }
    if (c.wide != type->wide) {
      error(span, fmt::format("expected a {} for {}", type->wide ? "WSTRING" : "STRING", type->name));
      return;
    }
    // The characters, then zeros: the 0 after them and the rest of the variable (buf may hold
    // the default of the type the value overrides: a STRUCT field's 'pt' under 'q').
    const size_t n = std::min<size_t>(c.stringUnits(), type->capacity);
    std::memset(p, 0, type->size);
    std::memcpy(p, c.s.data(), n * type->unitBytes());
    return;
  }
  if (!type->isScalar()) {
    error(span, fmt::format("a {} cannot be initialised from a single value", type->name));
    return;
  }
  const Prim prim = primOf(*type);
  auto put = [&](auto v) { std::memcpy(p, &v, sizeof v); };
  const bool real = primIsFloat(prim);
  const Int128 iv = c.kind == ConstValue::Kind::Real ? static_cast<Int128>(c.r) : c.i;
  const double rv = c.kind == ConstValue::Kind::Real ? c.r : static_cast<double>(c.i);
  if (c.kind == ConstValue::Kind::String || c.kind == ConstValue::Kind::None) {
    error(span, fmt::format("expected a value of type {}", type->name));
    return;
  }
  if (real) {
    if (prim == Prim::F32)
      put(static_cast<float>(rv));
    else
      put(rv);
    return;
  }
  switch (prim) {
    case Prim::I8: put(static_cast<int8_t>(iv)); break;
    case Prim::U8: put(static_cast<uint8_t>(iv)); break;
    case Prim::I16: put(static_cast<int16_t>(iv)); break;
    case Prim::U16: put(static_cast<uint16_t>(iv)); break;
    case Prim::I32: put(static_cast<int32_t>(iv)); break;
    case Prim::U32: put(static_cast<uint32_t>(iv)); break;
    case Prim::I64: put(static_cast<int64_t>(iv)); break;
    case Prim::U64: put(static_cast<uint64_t>(iv)); break;
    default: break;
  }
}

void Compiler::writeInitial(std::vector<uint8_t>& buf, uint32_t offset, const Type* type,
                            const ast::Initializer* init) {
  if (!type) return;
  if (!init) return;
  switch (init->kind) {
    case ast::InitKind::Expr: {
      if (!init->expr) return;
      if (const ast::Expr* address = addressCallIn(*init->expr)) {
        // An initial value is a constant of the type's template, laid out before any instance
        // has an address; CODESYS computes it when the instance is initialised.
        error(address->span, fmt::format("{}() in an initial value is not supported: an initial value is a constant, "
                                         "and an address is not one here; assign it in the body (on the first cycle)",
                                         upperCase(address->operand->text)));
        return;
      }
      const std::optional<Folded> v = constantOf(*init->expr, type);
      if (!v) {
        // Name what is wrong inside it (an undeclared name) rather than only that it is not constant.
        Diagnostics inner;
        DeclarationScope scope(*this, layoutDecl_);
        sema::Arena arena;
        sema::Analyzer(scope, inner, arena).expression(*init->expr, type);
        for (const Diagnostic& d : inner.items()) diags_.error(d.span, d.message);
        if (!inner.hasErrors())
          error(init->span, "an initial value must be a constant expression (constants and earlier variables)");
        return;
      }
      const std::optional<Folded> converted = convertConstant(*v, type, init->span);
      if (!converted) return;
      if (type->kind == TypeKind::Subrange && (converted->value.i < type->lower || converted->value.i > type->upper)) {
        error(init->span, fmt::format("initial value is outside {}", type->name));
        return;
      }
      writeConst(buf, offset, type, converted->value, init->span);
      return;
    }
    case ast::InitKind::Array: {
      if (type->kind != TypeKind::Array) {
        error(init->span, fmt::format("an array initialiser needs an array, not {}", type->name));
        return;
      }
      const uint64_t count = type->elementCount();
      const uint32_t size = type->base->size;
      uint64_t at = 0;
      for (const ast::ArrayInitItem& item : init->arrayItems) {
        int64_t repeat = 1;
        if (item.repeat) {
          auto n = evalConstInt(*item.repeat);
          if (!n) return;
          repeat = *n;
          if (repeat < 0) {
            error(item.repeat->span, "repeat count must not be negative");
            return;
          }
        }
        for (int64_t r = 0; r < repeat; ++r, ++at) {
          if (at >= count) {
            error(init->span, fmt::format("too many initial values for {} ({} elements)", type->name, count));
            return;
          }
          if (item.value) writeInitial(buf, offset + static_cast<uint32_t>(at * size), type->base, item.value.get());
        }
      }
      return;
    }
    case ast::InitKind::Struct: {
      if (type->kind != TypeKind::Struct && type->kind != TypeKind::FunctionBlock) {
        error(init->span, fmt::format("a structure initialiser needs a STRUCT or FB instance, not {}", type->name));
        return;
      }
      for (const ast::StructInitItem& item : init->structItems) {
        const Variable* f = type->field(item.name);
        if (!f || f->hidden) {
          error(item.span, fmt::format("{} has no member '{}'", type->name, item.name));
          continue;
        }
        if (f->absolute || f->byReference) {
          error(item.span, fmt::format("'{}' cannot be initialised here", item.name));
          continue;
        }
        writeInitial(buf, offset + f->offset, f->type, item.value.get());
      }
      return;
    }
  }
}

// ---------------------------------------------------------------- globals and the image

void Compiler::resolveGlobal(GlobalDecl& g) {
  if (g.resolved || g.resolving) return;
  g.resolving = true;
  g.var = makeVariable(*g.ast, VarSection::Global);
  if (g.var.type && g.ast->constant && g.ast->init && g.ast->init->kind == ast::InitKind::Expr &&
      g.var.type->isScalar()) {
    if (const std::optional<Folded> v = constantOf(*g.ast->init->expr, g.var.type)) {
      if (const std::optional<Folded> c = convertConstant(*v, g.var.type, g.ast->span)) g.constant = c->value;
    }
  }
  g.resolving = false;
  g.resolved = true;
}

void Compiler::layoutImage() {
  // Area extents from every complete location in the project.
  auto extent = [&](const ast::Location& loc, const ast::TypeRef* type) {
    if (loc.incomplete() || loc.parts.empty()) return;
    uint32_t unit = loc.size == 'W' ? 2 : loc.size == 'D' ? 4 : loc.size == 'L' ? 8 : 1;
    uint64_t end = loc.size == 'X' ? (loc.parts.size() > 1 ? loc.parts[0] : loc.parts[0] / 8) + 1
                                   : static_cast<uint64_t>(loc.parts[0]) * unit + unit;
    (void)type;
    uint32_t& size = areaSize_[areaIndex(loc.area)];
    size = static_cast<uint32_t>(std::min<uint64_t>(std::max<uint64_t>(size, end), 65536));
  };
  for (auto& unit : units_) {
    for (const ast::VarDecl& v : unit->globals)
      if (v.location) extent(*v.location, v.type.get());
    for (const ast::Pou& p : unit->pous)
      for (const ast::VarDecl& v : p.vars)
        if (v.location) extent(*v.location, v.type.get());
    for (const ast::Configuration& c : unit->configurations) {
      for (const ast::VarDecl& v : c.globals)
        if (v.location) extent(*v.location, v.type.get());
      for (const ast::Resource& r : c.resources)
        for (const ast::VarDecl& v : r.globals)
          if (v.location) extent(*v.location, v.type.get());
      for (const ast::VarConfigEntry& e : c.varConfig)
        if (e.location) extent(*e.location, e.type.get());
    }
  }
  std::vector<uint8_t>& image = program_->initialImage;
  uint32_t off = 8;  // offset 0 is the NULL reference
  IoArea* areas[3] = {&program_->input, &program_->output, &program_->memory};
  for (int a = 0; a < 3; ++a) {
    areas[a]->offset = off;
    areas[a]->size = areaSize_[a];
    off = alignUp(off + areaSize_[a], 8);
  }
  image.assign(off, 0);

  // The offset of `size` more bytes of the image, or nullopt once the image would pass the limit:
  // the first declaration that does so is reported (`what` names it), the ones after it are not,
  // and the image does not grow any more (the program has an error: it is never run).
  bool imageFull = false;
  const uint64_t limit =
      options_.recordedImageSize ? std::min<uint64_t>(options_.recordedImageSize, kMaxImageBytes) : kMaxImageBytes;
  const std::string limitText = options_.recordedImageSize
                                    ? fmt::format("the trace recorded an image of {} bytes", options_.recordedImageSize)
                                    : fmt::format("scanback's limit is {}", imageLimitText());
  auto place = [&](uint32_t size, uint32_t align, const SourceSpan& span,
                   const std::string& what) -> std::optional<uint32_t> {
    if (imageFull) return std::nullopt;
    const uint64_t at = alignSize(image.size(), std::max<uint32_t>(align, 1));
    const uint64_t end = alignSize(addSize(at, size), 8);  // the image ends 8-aligned
    if (end > limit) {
      error(span, fmt::format("the image would need {} with {}; {}", layoutSizeText(end), what, limitText));
      imageFull = true;
      return std::nullopt;
    }
    image.resize(at + size, 0);
    return static_cast<uint32_t>(at);
  };

  // The image grows by what is placed: reserved ahead (at most the limit), so that a large image
  // is not copied at each doubling of its vector. The globals' types and the programs' layouts
  // (setupTasks) are resolved first to know its size.
  uint64_t bytes = image.size();
  for (GlobalDecl* g : globalOrder_) {
    resolveGlobal(*g);
    if (g->var.type && !g->ast->location) bytes = addSize(bytes, alignSize(g->var.type->size, 8));
  }
  setupTasks();
  for (const ProgramInstanceInfo& inst : program_->instances) bytes = addSize(bytes, alignSize(inst.type->size, 8));
  image.reserve(static_cast<size_t>(std::min(bytes, limit)));

  for (GlobalDecl* g : globalOrder_) {
    resolveGlobal(*g);
    Variable& v = g->var;
    if (!v.type) continue;
    v.absolute = true;
    if (g->ast->location) {
      if (g->ast->location->incomplete()) {
        error(g->ast->location->span, "a global needs a complete address");
        continue;
      }
      if (!locate(*g->ast->location, v, v.type)) continue;
      if (v.bit < 0) v.type->writeInitialValue(image.data() + v.offset);
      if (g->ast->init && v.bit < 0) writeInitial(image, v.offset, v.type, g->ast->init.get());
    } else {
      const std::optional<uint32_t> at =
          place(v.type->size, v.type->align, g->ast->span, fmt::format("global '{}'", v.name));
      // Past the limit the global is still declared (its uses are checked), at no place.
      v.offset = at.value_or(0);
      if (at) {
        v.type->writeInitialValue(image.data() + v.offset);
        if (g->ast->init) writeInitial(image, v.offset, v.type, g->ast->init.get());
      }
    }
    program_->globals.push_back(v);
  }

  // Program instances: each gets its own copy of the program's layout with its VAR_CONFIG bindings:
  // an address for a variable declared AT %I* (which needs one), or for one declared without AT
  // (which then lives at that address, in this instance only). Instances without either share the
  // program's layout.
  std::set<const ast::VarConfigEntry*> used;  // entries with an address that an instance's variable took
  auto joined = [](const std::vector<std::string>& path) {
    std::string text;
    for (const std::string& part : path) text += (text.empty() ? "" : ".") + part;
    return text;
  };
  auto configEntry = [&](const std::string& instance, const Variable& f) -> const ast::VarConfigEntry* {
    auto it = varConfig_.find(upperCase(instance) + "." + upperCase(f.name));
    return it == varConfig_.end() || !it->second->location ? nullptr : it->second;
  };
  for (ProgramInstanceInfo& inst : program_->instances) {
    PouDecl* decl = findPou(inst.type->name);
    const bool bound = std::any_of(inst.type->fields.begin(), inst.type->fields.end(), [&](const Variable& f) {
      return (f.absolute && f.offset == UINT32_MAX) || (!f.hidden && !f.absolute && configEntry(inst.name, f));
    });
    Type copy = bound ? *inst.type : Type{};
    copy.name = decl->name;
    std::set<std::string> relocated;  // upper names of variables declared without AT that VAR_CONFIG places
    for (Variable& f : copy.fields) {
      const bool open = f.absolute && f.offset == UINT32_MAX;
      if (!open && (f.hidden || f.absolute)) continue;
      const ast::VarConfigEntry* e = configEntry(inst.name, f);
      if (!e) {
        if (open)
          error(f.span, fmt::format("'{}.{}' is declared AT {} but VAR_CONFIG gives it no address", inst.name, f.name,
                                    f.location));
        continue;
      }
      used.insert(e);
      if (e->location->incomplete() || (open && e->location->area != f.location[1])) {
        error(e->location->span, open ? fmt::format("'{}' needs a complete %{} address", f.name, f.location[1])
                                      : fmt::format("'{}' needs a complete address", f.name));
        continue;
      }
      if (f.byReference) {
        error(e->span, fmt::format("'{}.{}' is a VAR_IN_OUT: it refers to a variable and has no address of its own",
                                   inst.name, f.name));
        continue;
      }
      if (e->type) {
        const Type* t = resolveType(*e->type);
        if (t && t != f.type) {
          error(e->span, fmt::format("VAR_CONFIG says {} but '{}' is {}", t->name, f.name, f.type->name));
          continue;
        }
      }
      if (!locate(*e->location, f, f.type)) continue;
      f.absolute = true;
      if (!open) relocated.insert(upperCase(f.name));
    }
    if (bound) inst.type = types_->add(std::move(copy));
    fbDecls_[inst.type] = decl;
    const std::optional<uint32_t> at =
        place(inst.type->size, inst.type->align, instanceSpans_[&inst - program_->instances.data()],
              fmt::format("program instance '{}'", inst.name));
    inst.offset = at.value_or(0);
    if (at) inst.type->writeInitialValue(image.data() + inst.offset);
    // Initial values of located variables of the program live in the I/O areas.
    std::map<std::string, const ast::VarDecl*> located;  // the first declaration of each name
    for (const ast::VarDecl& d : decl->ast->vars)
      if (d.location || relocated.count(upperCase(d.name))) located.emplace(upperCase(d.name), &d);
    for (const Variable& f : inst.type->fields) {
      if (!f.absolute || f.offset == UINT32_MAX || f.bit >= 0) continue;
      auto it = located.find(upperCase(f.name));
      if (it == located.end()) continue;
      f.type->writeInitialValue(image.data() + f.offset);
      if (it->second->init) writeInitial(image, f.offset, f.type, it->second->init.get());
    }
  }
  // An entry that binds nothing is an error, never ignored: its input would never arrive. (A test
  // runs without the project's program instances.) Initial values of entries are written last:
  // they are the instance's, over the declaration's.
  for (auto& [key, entry] : varConfig_) {
    if (!options_.test.empty()) break;
    const std::string inst = upperCase(entry->path.front());
    auto it = instanceIndex_.find(inst);
    if (it == instanceIndex_.end()) {
      error(entry->span, fmt::format("VAR_CONFIG names '{}', which is not a program instance", entry->path.front()));
      continue;
    }
    if (entry->path.size() < 2) {
      error(entry->span, "VAR_CONFIG names a variable of a program instance (Instance.variable or a longer path)");
      continue;
    }
    const ProgramInstanceInfo& info = program_->instances[it->second];
    if (entry->location && entry->path.size() != 2) {
      error(entry->location->span,
            fmt::format("VAR_CONFIG gives addresses to variables of program instances (Instance.variable); '{}' is "
                        "inside an instance: give it an initial value without AT",
                        joined(entry->path)));
      continue;
    }
    // The variable the path names, and where it is.
    const Type* container = info.type;
    const Variable* f = nullptr;
    uint64_t offset = info.offset;
    std::string path = info.name;
    for (size_t i = 1; i < entry->path.size(); ++i) {
      if (!container || (container->kind != TypeKind::FunctionBlock && container->kind != TypeKind::Struct)) {
        error(entry->span,
              fmt::format("'{}' is {}: it has no variable '{}'", path, f ? f->type->name : "?", entry->path[i]));
        f = nullptr;
        break;
      }
      f = container->field(entry->path[i]);
      if (!f || f->hidden) {
        error(entry->span, fmt::format("{} '{}' has no variable '{}'", i == 1 ? "program instance" : "instance", path,
                                       entry->path[i]));
        f = nullptr;
        break;
      }
      if (f->byReference) {
        error(entry->span, fmt::format("'{}.{}' is a VAR_IN_OUT: it refers to a variable and holds no value of its own",
                                       path, f->name));
        f = nullptr;
        break;
      }
      offset = f->absolute ? f->offset : offset + f->offset;
      container = f->type;
      path += "." + f->name;
    }
    if (!f) continue;
    if (entry->location) {  // bound above, with its type checked
      if (!used.count(entry))
        error(entry->location->span,
              fmt::format("'{}' is declared AT {}: VAR_CONFIG gives it no other address", path, f->location));
      else if (entry->init && f->bit >= 0)
        error(entry->init->span,
              fmt::format("'{}' is a bit of {}: VAR_CONFIG gives it no initial value", path, f->location));
      else if (entry->init && f->offset != UINT32_MAX)
        writeInitial(image, f->offset, f->type, entry->init.get());
      continue;
    }
    if (entry->type) {
      const Type* t = resolveType(*entry->type);
      if (t && t != f->type) {
        error(entry->span, fmt::format("VAR_CONFIG says {} but '{}' is {}", t->name, path, f->type->name));
        continue;
      }
    }
    if (f->absolute && f->offset == UINT32_MAX) continue;  // its missing address is reported above
    if (f->bit >= 0) {
      error(entry->span, fmt::format("'{}' is a bit of {}: VAR_CONFIG gives it no initial value", path, f->location));
      continue;
    }
    if (f->type->kind == TypeKind::FunctionBlock) {
      error(entry->span, fmt::format("'{}' is a function block instance: give its variables initial values", path));
      continue;
    }
    if (entry->init) writeInitial(image, static_cast<uint32_t>(offset), f->type, entry->init.get());
  }
  image.resize(alignUp(static_cast<uint32_t>(image.size()), 8), 0);
}

void Compiler::setupTasks() {
  if (!options_.test.empty()) {
    setupTestTask();
    return;
  }
  auto addInstance = [&](const std::string& name, const std::string& typeName, uint32_t task, const SourceSpan& span) {
    PouDecl* decl = findPou(typeName);
    if (!decl || decl->kind != PouKind::Program) {
      error(span, fmt::format("'{}' is not a PROGRAM", typeName));
      return;
    }
    if (instanceIndex_.count(upperCase(name))) {
      error(span, fmt::format("program instance '{}' is declared twice", name));
      return;
    }
    Type* t = layoutPou(*decl);
    if (!t) return;
    ProgramInstanceInfo info;
    info.name = name;
    info.type = t;
    info.task = task;
    instanceIndex_[upperCase(name)] = static_cast<uint32_t>(program_->instances.size());
    program_->instances.push_back(info);
    instanceSpans_.push_back(span);
    program_->tasks[task].instances.push_back(static_cast<uint32_t>(program_->instances.size() - 1));
  };

  if (!config_) {
    for (auto& [key, decl] : pous_) {
      (void)key;
      if (decl->kind != PouKind::Program) continue;
      TaskInfo task;
      task.name = decl->name;
      task.intervalNs = 10'000'000;
      task.priority = 0;
      task.span = decl->ast->span;
      program_->tasks.push_back(task);
    }
    // Declaration order, not alphabetical: sort tasks by source position.
    std::sort(program_->tasks.begin(), program_->tasks.end(), [](const TaskInfo& a, const TaskInfo& b) {
      return std::tie(a.span.file, a.span.line, a.span.column) < std::tie(b.span.file, b.span.line, b.span.column);
    });
    for (uint32_t i = 0; i < program_->tasks.size(); ++i)
      addInstance(program_->tasks[i].name, program_->tasks[i].name, i, program_->tasks[i].span);
    if (program_->tasks.empty()) {
      const bool tests =
          std::any_of(pous_.begin(), pous_.end(), [](const auto& p) { return p.second->ast && p.second->ast->test; });
      error(SourceSpan{}, tests ? "the project has no PROGRAM to run (its tests run with scanback test)"
                                : "the project has no PROGRAM to run");
    }
    return;
  }

  std::map<std::string, uint32_t> taskIndex;
  for (const ast::Resource& r : config_->resources) {
    for (const ast::TaskDecl& t : r.tasks) {
      TaskInfo task;
      task.name = t.name;
      task.span = t.span;
      if (taskIndex.count(upperCase(t.name))) {
        error(t.span, fmt::format("task '{}' is declared twice", t.name));
        continue;
      }
      if (t.single) error(t.single->span, "event tasks (SINGLE) are not supported; give the task an INTERVAL");
      if (t.interval) {
        const std::optional<Folded> v = constantOf(*t.interval);
        if (!v || !v->type || (v->type->kind != TypeKind::Time && v->type->kind != TypeKind::LTime)) {
          error(t.interval->span, "INTERVAL must be a constant TIME");
        } else if (v->value.i <= 0) {
          error(t.interval->span, "INTERVAL must be positive");
        } else {
          task.intervalNs = static_cast<int64_t>(v->value.i);
        }
      } else if (!t.single) {
        error(t.span, fmt::format("task '{}' needs an INTERVAL", t.name));
      }
      if (t.priority) {
        auto p = evalConstInt(*t.priority);
        if (p) task.priority = static_cast<int32_t>(*p);
      }
      taskIndex[upperCase(t.name)] = static_cast<uint32_t>(program_->tasks.size());
      program_->tasks.push_back(task);
    }
  }
  // A program instance without WITH runs in an implicit task of its own, named after it, with the
  // default interval and after every declared task (one priority below the lowest).
  int32_t implicitPriority = 0;
  for (const TaskInfo& t : program_->tasks) implicitPriority = std::max(implicitPriority, t.priority + 1);
  for (const ast::Resource& r : config_->resources) {
    for (const ast::ProgramInstance& p : r.programs) {
      if (p.taskName.empty()) {
        if (taskIndex.count(upperCase(p.name))) {
          error(p.span, fmt::format("program instance '{}' without WITH needs a task of its name, and '{}' is a task",
                                    p.name, p.name));
          continue;
        }
        if (!p.args.empty()) error(p.args.front().span, "program instance arguments are not supported");
        TaskInfo task;
        task.name = p.name;
        task.span = p.span;
        task.intervalNs = 10'000'000;
        task.priority = implicitPriority;
        taskIndex[upperCase(p.name)] = static_cast<uint32_t>(program_->tasks.size());
        program_->tasks.push_back(task);
        addInstance(p.name, p.typeName, static_cast<uint32_t>(program_->tasks.size() - 1), p.span);
        continue;
      }
      auto it = taskIndex.find(upperCase(p.taskName));
      if (it == taskIndex.end()) {
        error(p.span, fmt::format("unknown task '{}'", p.taskName));
        continue;
      }
      if (!p.args.empty()) error(p.args.front().span, "program instance arguments are not supported");
      addInstance(p.name, p.typeName, it->second, p.span);
    }
  }
  if (program_->instances.empty()) error(config_->span, "the configuration runs no program");
}

}  // namespace scanback::compiler
