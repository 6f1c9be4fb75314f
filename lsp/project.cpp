#include "lsp/project.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "vm/bytecode/native_blocks.h"
#include "vm/source/declaration_comment.h"
#include "vm/syntax/parser.h"

namespace scanback::lsp {

namespace {

// How deep EXTENDS chains and type aliases are followed: a cycle (which the compiler reports) must
// not make a request loop.
constexpr int kMaxDepth = 32;

bool contains(const SourceSpan& outer, const SourceSpan& inner) {
  auto before = [](uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2) { return l1 < l2 || (l1 == l2 && c1 <= c2); };
  return before(outer.line, outer.column, inner.line, inner.column) &&
         before(inner.endLine, inner.endColumn, outer.endLine, outer.endColumn);
}

SourceSpan ending(const SourceSpan& start, const SourceSpan& end) {
  if (!end.valid() || !start.valid()) return start;
  SourceSpan s = SourceSpan::cover(start, end);
  if (!contains(s, start)) return start;
  return s;
}

SymbolKind pouKind(const ast::Pou& pou) {
  switch (pou.kind) {
    case ast::PouKind::Program: return SymbolKind::Program;
    case ast::PouKind::Function: return SymbolKind::Function;
    case ast::PouKind::FunctionBlock: return SymbolKind::FunctionBlock;
    case ast::PouKind::Method: return SymbolKind::Method;
    case ast::PouKind::Interface: return SymbolKind::Interface;
  }
  return SymbolKind::Program;
}

const char* sectionKeyword(ast::VarSection s) {
  switch (s) {
    case ast::VarSection::Var: return "VAR";
    case ast::VarSection::Input: return "VAR_INPUT";
    case ast::VarSection::Output: return "VAR_OUTPUT";
    case ast::VarSection::InOut: return "VAR_IN_OUT";
    case ast::VarSection::Temp: return "VAR_TEMP";
    case ast::VarSection::Global: return "VAR_GLOBAL";
    case ast::VarSection::External: return "VAR_EXTERNAL";
    case ast::VarSection::Config: return "VAR_CONFIG";
  }
  return "VAR";
}

const char* nativeSectionKeyword(VarSection s) {
  switch (s) {
    case VarSection::Input: return "VAR_INPUT";
    case VarSection::Output: return "VAR_OUTPUT";
    case VarSection::InOut: return "VAR_IN_OUT";
    default: return "VAR";
  }
}

std::string elementaryName(TypeKind kind) {
  switch (kind) {
    case TypeKind::Bool: return "BOOL";
    case TypeKind::SInt: return "SINT";
    case TypeKind::Int: return "INT";
    case TypeKind::DInt: return "DINT";
    case TypeKind::LInt: return "LINT";
    case TypeKind::USInt: return "USINT";
    case TypeKind::UInt: return "UINT";
    case TypeKind::UDInt: return "UDINT";
    case TypeKind::ULInt: return "ULINT";
    case TypeKind::Byte: return "BYTE";
    case TypeKind::Word: return "WORD";
    case TypeKind::DWord: return "DWORD";
    case TypeKind::LWord: return "LWORD";
    case TypeKind::Real: return "REAL";
    case TypeKind::LReal: return "LREAL";
    case TypeKind::Time: return "TIME";
    case TypeKind::LTime: return "LTIME";
    case TypeKind::Date: return "DATE";
    case TypeKind::Tod: return "TOD";
    case TypeKind::Dt: return "DT";
    default: return "";
  }
}

// A parameter a call may name: inputs, outputs and in-outs.
bool isParameter(const Symbol& s) {
  if (s.var)
    return s.var->section == ast::VarSection::Input || s.var->section == ast::VarSection::Output ||
           s.var->section == ast::VarSection::InOut;
  if (s.kind == SymbolKind::Field && !s.file)
    return s.nativeSection == VarSection::Input || s.nativeSection == VarSection::Output ||
           s.nativeSection == VarSection::InOut;
  return false;
}

// Tokens that end the search for a call's '(' backwards: a statement's or declaration's bounds.
bool endsStatement(TokenKind k) {
  if (k == TokenKind::Semicolon) return true;
  if (!isKeyword(k)) return false;
  return k != TokenKind::KwNot && k != TokenKind::KwAnd && k != TokenKind::KwOr && k != TokenKind::KwXor &&
         k != TokenKind::KwMod;
}

}  // namespace

// ------------------------------------------------------------------ FileIndex

FileIndex::FileIndex(std::string uri, std::string path, std::string text)
    : uri_(std::move(uri)), path_(std::move(path)), lines_("") {
  source_.add(path_, std::move(text));
  lines_ = LineMap(source_.file(0).text);
  Diagnostics ignored;  // the diagnostics the editor shows are the compiler's (lsp/server.cpp)
  unit_ = parseFile(source_, 0, ignored);
  // The tokens, a piece at a time: the lexer's whole-file vector of a large file is far bigger.
  Diagnostics lexIgnored;
  TokenStream stream(source_.file(0).text, 0, lexIgnored);
  Token t;
  for (;;) {
    stream.next(t);
    if (t.kind == TokenKind::EndOfFile) break;
    tokens_.push_back(LexToken{t.kind, t.span, t.text});
  }
  tokens_.shrink_to_fit();
  collectSymbols();
}

std::string_view FileIndex::slice(const SourceSpan& span) const {
  if (!span.valid()) return {};
  const size_t from = lines_.offset(Position{span.line - 1, span.column - 1}, PositionEncoding::Utf8);
  const size_t to = lines_.offset(
      Position{span.endLine ? span.endLine - 1 : span.line - 1, span.endColumn ? span.endColumn - 1 : span.column - 1},
      PositionEncoding::Utf8);
  if (to <= from) return {};
  return std::string_view(text()).substr(from, to - from);
}

int FileIndex::add(Symbol s) {
  s.file = this;
  symbols_.push_back(std::move(s));
  return static_cast<int>(symbols_.size() - 1);
}

void FileIndex::addPou(const ast::Pou& pou, const ast::Pou* owner, int parent) {
  Symbol s;
  s.name = pou.name;
  s.kind = pouKind(pou);
  s.span = pou.span;
  s.range = ending(pou.span, pou.endSpan);
  s.pou = &pou;
  s.ownerPou = owner;
  s.container = owner ? upperCase(owner->name) : "";
  s.parent = parent;
  const int self = add(std::move(s));
  const std::string key = owner ? upperCase(owner->name) + "." + upperCase(pou.name) : upperCase(pou.name);
  for (const ast::VarDecl& v : pou.vars) {
    Symbol var;
    var.name = v.name;
    var.kind = SymbolKind::Variable;
    var.span = v.span;
    var.range = ending(v.span, v.init ? v.init->span : v.type ? v.type->span : v.span);
    var.var = &v;
    var.ownerPou = &pou;
    var.container = key;
    var.parent = self;
    add(std::move(var));
  }
  for (const ast::Pou& m : pou.methods) addPou(m, &pou, self);
  const uint32_t last = pou.endSpan.valid() ? pou.endSpan.endLine : 0;
  pouLines_.push_back(PouLines{pou.span.line, last, &pou, owner});
}

void FileIndex::collectSymbols() {
  for (const ast::TypeDecl& t : unit_.types) {
    Symbol s;
    s.name = t.name;
    s.span = t.span;
    s.range = ending(t.span, t.init ? t.init->span : t.type ? t.type->span : t.span);
    s.type = &t;
    s.kind = !t.type                                    ? SymbolKind::TypeAlias
             : t.type->kind == ast::TypeRefKind::Struct ? SymbolKind::Struct
             : t.type->kind == ast::TypeRefKind::Enum   ? SymbolKind::Enum
                                                        : SymbolKind::TypeAlias;
    const int self = add(std::move(s));
    if (!t.type) continue;
    const std::string key = upperCase(t.name);
    for (const ast::VarDecl& f : t.type->fields) {
      Symbol field;
      field.name = f.name;
      field.kind = SymbolKind::Field;
      field.span = f.span;
      field.range = ending(f.span, f.init ? f.init->span : f.type ? f.type->span : f.span);
      field.var = &f;
      field.container = key;
      field.parent = self;
      add(std::move(field));
    }
    for (const ast::EnumValue& e : t.type->enumValues) {
      Symbol value;
      value.name = e.name;
      value.kind = SymbolKind::EnumValue;
      value.span = e.span;
      value.range = ending(e.span, e.value ? e.value->span : e.span);
      value.type = &t;
      value.enumValue = &e;
      value.container = key;
      value.parent = self;
      add(std::move(value));
    }
  }
  auto global = [this](const ast::VarDecl& v, int parent) {
    Symbol s;
    s.name = v.name;
    s.kind = SymbolKind::Variable;
    s.span = v.span;
    s.range = ending(v.span, v.init ? v.init->span : v.type ? v.type->span : v.span);
    s.var = &v;
    s.parent = parent;
    add(std::move(s));
  };
  for (const ast::VarDecl& v : unit_.globals) global(v, -1);
  for (const ast::Pou& p : unit_.pous) addPou(p, nullptr, -1);
  for (const ast::Configuration& c : unit_.configurations) {
    Symbol s;
    s.name = c.name;
    s.kind = SymbolKind::Configuration;
    s.span = c.span;
    s.range = c.span;
    const int config = add(std::move(s));
    for (const ast::VarDecl& v : c.globals) global(v, config);
    for (const ast::Resource& r : c.resources) {
      int parent = config;
      if (!r.name.empty()) {
        Symbol res;
        res.name = r.name;
        res.kind = SymbolKind::Resource;
        res.span = r.span;
        res.range = r.span;
        res.parent = config;
        parent = add(std::move(res));
      }
      for (const ast::VarDecl& v : r.globals) global(v, parent);
      for (const ast::TaskDecl& t : r.tasks) {
        Symbol task;
        task.name = t.name;
        task.kind = SymbolKind::Task;
        task.span = t.span;
        task.range = t.span;
        task.parent = parent;
        add(std::move(task));
      }
      for (const ast::ProgramInstance& p : r.programs) {
        Symbol instance;
        instance.name = p.name;
        instance.kind = SymbolKind::ProgramInstance;
        instance.span = p.span;
        instance.range = p.span;
        instance.instance = &p;
        instance.parent = parent;
        add(std::move(instance));
      }
    }
  }
  for (size_t i = 0; i < symbols_.size(); ++i)
    if (symbols_[i].span.valid()) declarations_.emplace(std::pair{symbols_[i].span.line, symbols_[i].span.column}, i);
  // A POU cut short by a syntax error has no END_ keyword: it runs to the next POU.
  std::sort(pouLines_.begin(), pouLines_.end(), [](const PouLines& a, const PouLines& b) { return a.first < b.first; });
  for (size_t i = 0; i < pouLines_.size(); ++i)
    if (pouLines_[i].last == 0) {
      uint32_t next = UINT32_MAX;
      for (size_t j = i + 1; j < pouLines_.size(); ++j)
        if (!pouLines_[j].owner || pouLines_[j].owner != pouLines_[i].pou) {
          next = pouLines_[j].first - 1;
          break;
        }
      pouLines_[i].last = next;
    }
}

const Symbol* FileIndex::declarationAt(uint32_t line, uint32_t column) const {
  auto it = declarations_.find({line, column});
  return it == declarations_.end() ? nullptr : &symbols_[it->second];
}

size_t FileIndex::tokenBefore(uint32_t line, uint32_t column) const {
  auto after = std::upper_bound(tokens_.begin(), tokens_.end(), std::pair{line, column},
                                [](const std::pair<uint32_t, uint32_t>& p, const LexToken& t) {
                                  return p.first < t.span.line || (p.first == t.span.line && p.second <= t.span.column);
                                });
  if (after == tokens_.begin()) return std::string::npos;
  return static_cast<size_t>(after - tokens_.begin()) - 1;
}

size_t FileIndex::tokenAt(uint32_t line, uint32_t column) const {
  // The token starting at or before the position, if it reaches it; else the one ending right
  // before it.
  auto first = std::upper_bound(tokens_.begin(), tokens_.end(), std::pair{line, column},
                                [](const std::pair<uint32_t, uint32_t>& p, const LexToken& t) {
                                  return p.first < t.span.line || (p.first == t.span.line && p.second < t.span.column);
                                });
  if (first == tokens_.begin()) return std::string::npos;
  const size_t i = static_cast<size_t>(first - tokens_.begin()) - 1;
  const LexToken& t = tokens_[i];
  const bool reaches = t.span.endLine > line || (t.span.endLine == line && t.span.endColumn >= column);
  return reaches ? i : std::string::npos;
}

FileIndex::PouAt FileIndex::pouAt(uint32_t line) const {
  PouAt best;
  for (const PouLines& p : pouLines_) {
    if (line < p.first || line > p.last) continue;
    // A method lies inside its block's lines: the innermost wins.
    if (!best.pou || p.owner) best = PouAt{p.pou, p.owner};
  }
  return best;
}

// ------------------------------------------------------------------ Project

Project::Project(std::vector<std::shared_ptr<const FileIndex>> files) : files_(std::move(files)) {
  for (const auto& f : files_)
    for (const Symbol& s : f->symbols()) {
      const std::string upper = upperCase(s.name);
      if (!s.container.empty()) {
        members_[s.container].push_back(&s);
        if (s.kind == SymbolKind::EnumValue) globals_.emplace(upper, &s);  // CODESYS: an enumeration value alone
        continue;
      }
      if (s.kind == SymbolKind::Configuration || s.kind == SymbolKind::Resource) continue;
      globals_.emplace(upper, &s);
      if (s.pou || s.type) types_.emplace(upper, &s);
    }
  // The standard function blocks' fields, as members of their names.
  for (const NativeBlock& block : nativeBlocks()) {
    const std::string name(block.name);
    for (const NativeField& field : block.fields) {
      if (field.hidden) continue;
      auto s = std::make_unique<Symbol>();
      s->name = std::string(field.name);
      s->kind = SymbolKind::Field;
      s->container = name;
      s->nativeType = elementaryName(field.kind);
      s->nativeSection = field.section;
      members_[name].push_back(s.get());
      native_.push_back(std::move(s));
    }
  }
}

const FileIndex* Project::file(std::string_view uri) const {
  for (const auto& f : files_)
    if (f->uri() == uri) return f.get();
  return nullptr;
}

bool Project::isStandardBlock(const std::string& upperName) const {
  for (const NativeBlock& block : nativeBlocks())
    if (block.name == upperName) return true;
  return false;
}

TypeView Project::reduce(TypeView view, int depth) const {
  if (depth > kMaxDepth) return {};
  if (view.ref) {
    // A REFERENCE TO is used as what it designates (`r.field`).
    if (view.ref->kind == ast::TypeRefKind::Reference && view.ref->element)
      return reduce(TypeView{view.ref->element.get(), ""}, depth + 1);
    if (view.ref->kind != ast::TypeRefKind::Named) return view;
    view.name = upperCase(view.ref->name);
    view.ref = nullptr;
  }
  if (view.name.empty()) return view;
  auto it = types_.find(view.name);
  if (it == types_.end()) return view;  // a standard block, or elementary
  const Symbol& s = *it->second;
  if (s.type && s.type->type) {
    if (s.type->type->kind == ast::TypeRefKind::Named) return reduce(TypeView{s.type->type.get(), ""}, depth + 1);
    return TypeView{s.type->type.get(), view.name};  // a structure or enumeration keeps its name
  }
  return view;
}

std::optional<TypeView> Project::typeOf(const Symbol& symbol) const {
  if (symbol.var && symbol.var->type) return reduce(TypeView{symbol.var->type.get(), ""});
  if (!symbol.nativeType.empty()) return TypeView{nullptr, symbol.nativeType};
  if (symbol.instance) return reduce(TypeView{nullptr, upperCase(symbol.instance->typeName)});
  // A POU or type named where a value is expected: a function's name is its result (inside it),
  // a program's name reaches its variables (`LineControl.state`).
  if (symbol.pou) {
    if (symbol.pou->returnType) return reduce(TypeView{symbol.pou->returnType.get(), ""});
    return TypeView{nullptr, upperCase(symbol.pou->name)};
  }
  if (symbol.type) return reduce(TypeView{nullptr, upperCase(symbol.type->name)});
  return std::nullopt;
}

void Project::addMembersOf(const std::string& upperPou, std::vector<const Symbol*>& out, int depth) const {
  if (depth > kMaxDepth) return;
  auto it = members_.find(upperPou);
  if (it != members_.end())
    for (const Symbol* s : it->second)
      if (!(s->var && s->var->section == ast::VarSection::Temp)) out.push_back(s);
  auto type = types_.find(upperPou);
  if (type != types_.end() && type->second->pou)
    for (const ast::NameRef& base : type->second->pou->extends) addMembersOf(upperCase(base.name), out, depth + 1);
}

std::vector<const Symbol*> Project::members(const TypeView& type) const {
  std::vector<const Symbol*> out;
  if (type.ref) {
    if (type.ref->kind == ast::TypeRefKind::Struct || type.ref->kind == ast::TypeRefKind::Enum) {
      auto it = members_.find(type.name);
      if (it != members_.end()) out = it->second;
    }
    return out;
  }
  addMembersOf(type.name, out, 0);
  return out;
}

const Symbol* Project::member(const TypeView& type, const std::string& upperName) const {
  for (const Symbol* s : members(type))
    if (upperCase(s->name) == upperName) return s;
  return nullptr;
}

const Symbol* Project::lookup(const FileIndex& file, uint32_t line, const std::string& upperName) const {
  const FileIndex::PouAt at = file.pouAt(line);
  auto inPou = [&](const ast::Pou* pou, const std::string& key) -> const Symbol* {
    auto it = members_.find(key);
    if (it != members_.end())
      for (const Symbol* s : it->second)
        if (s->ownerPou == pou && upperCase(s->name) == upperName) return s;
    return nullptr;
  };
  if (at.pou) {
    const std::string own =
        at.owner ? upperCase(at.owner->name) + "." + upperCase(at.pou->name) : upperCase(at.pou->name);
    if (const Symbol* s = inPou(at.pou, own)) return s;
    // A function's or method's name is its result variable inside it.
    if (upperCase(at.pou->name) == upperName) {
      for (const Symbol& s : file.symbols())
        if (s.pou == at.pou) return &s;
    }
    // A method's or action's block, then the blocks it extends (variables and methods).
    const ast::Pou* block = at.owner ? at.owner : at.pou;
    std::vector<const Symbol*> inherited;
    addMembersOf(upperCase(block->name), inherited, 0);
    for (const Symbol* s : inherited)
      if (upperCase(s->name) == upperName) return s;
  }
  // The project's names: a global variable first, then a POU or type, then the rest.
  auto [from, to] = globals_.equal_range(upperName);
  const Symbol* best = nullptr;
  auto rank = [](const Symbol* s) {
    if (s->kind == SymbolKind::Variable) return 0;
    if (s->pou || s->type) return s->kind == SymbolKind::EnumValue ? 2 : 1;
    return 3;
  };
  for (auto it = from; it != to; ++it)
    if (!best || rank(it->second) < rank(best)) best = it->second;
  return best;
}

std::vector<const Symbol*> Project::visible(const FileIndex& file, uint32_t line) const {
  std::vector<const Symbol*> out;
  std::unordered_set<std::string> seen;
  auto push = [&](const Symbol* s) {
    if (seen.insert(upperCase(s->name)).second) out.push_back(s);
  };
  const FileIndex::PouAt at = file.pouAt(line);
  if (at.pou) {
    const std::string own =
        at.owner ? upperCase(at.owner->name) + "." + upperCase(at.pou->name) : upperCase(at.pou->name);
    auto it = members_.find(own);
    if (it != members_.end())
      for (const Symbol* s : it->second)
        if (s->ownerPou == at.pou) push(s);
    std::vector<const Symbol*> inherited;
    addMembersOf(upperCase((at.owner ? at.owner : at.pou)->name), inherited, 0);
    for (const Symbol* s : inherited) push(s);
  }
  for (const auto& [name, s] : globals_) push(s);
  return out;
}

std::optional<TypeView> Project::typeOfExpression(const FileIndex& file, size_t last) const {
  const auto& t = file.tokens();
  if (last >= t.size()) return std::nullopt;
  auto matching = [&](size_t close, TokenKind open, TokenKind closeKind) -> std::optional<size_t> {
    int depth = 0;
    for (size_t i = close + 1; i-- > 0;) {
      if (t[i].kind == closeKind) ++depth;
      if (t[i].kind == open && --depth == 0) return i;
      if (t[i].kind == TokenKind::Semicolon) return std::nullopt;
    }
    return std::nullopt;
  };
  switch (t[last].kind) {
    case TokenKind::Identifier: {
      const Symbol* s = resolveChain(file, last, 0);
      if (!s) return std::nullopt;
      return typeOf(*s);
    }
    case TokenKind::RBracket: {
      const auto open = matching(last, TokenKind::LBracket, TokenKind::RBracket);
      if (!open || *open == 0) return std::nullopt;
      auto array = typeOfExpression(file, *open - 1);
      if (!array || !array->ref || array->ref->kind != ast::TypeRefKind::Array || !array->ref->element)
        return std::nullopt;
      return reduce(TypeView{array->ref->element.get(), ""});
    }
    case TokenKind::Caret: {
      if (last == 0) return std::nullopt;
      auto ref = typeOfExpression(file, last - 1);
      if (!ref || !ref->ref || !ref->ref->element ||
          (ref->ref->kind != ast::TypeRefKind::RefTo && ref->ref->kind != ast::TypeRefKind::PointerTo))
        return std::nullopt;
      return reduce(TypeView{ref->ref->element.get(), ""});
    }
    case TokenKind::RParen: {
      // A function's or method's result.
      const auto open = matching(last, TokenKind::LParen, TokenKind::RParen);
      if (!open || *open == 0 || t[*open - 1].kind != TokenKind::Identifier) return std::nullopt;
      const Symbol* callee = resolveChain(file, *open - 1, 0);
      if (!callee || !callee->pou || !callee->pou->returnType) return std::nullopt;
      return reduce(TypeView{callee->pou->returnType.get(), ""});
    }
    default: return std::nullopt;
  }
}

const Symbol* Project::resolveChain(const FileIndex& file, size_t index, int depth) const {
  const auto& t = file.tokens();
  if (depth > kMaxDepth || index >= t.size() || t[index].kind != TokenKind::Identifier) return nullptr;
  const std::string upper = upperCase(t[index].text);
  if (index >= 2 && t[index - 1].kind == TokenKind::Dot) {
    auto base = typeOfExpression(file, index - 2);
    if (!base) return nullptr;
    return member(*base, upper);
  }
  if (index >= 2 && t[index - 1].kind == TokenKind::Hash && t[index - 2].kind == TokenKind::Identifier) {
    // `Type#Value`
    return member(reduce(TypeView{nullptr, upperCase(t[index - 2].text)}), upper);
  }
  return lookup(file, t[index].span.line, upper);
}

std::optional<CallSite> Project::callAt(const FileIndex& file, size_t index) const {
  const auto& t = file.tokens();
  if (index >= t.size()) return std::nullopt;
  size_t commas = 0;
  int depth = 0;
  for (size_t i = index + 1; i-- > 0;) {
    const TokenKind k = t[i].kind;
    if (endsStatement(k)) return std::nullopt;
    if (k == TokenKind::RParen || k == TokenKind::RBracket) {
      if (i != index) ++depth;
    } else if (k == TokenKind::LBracket) {
      if (depth == 0) return std::nullopt;  // inside an index, not an argument list
      --depth;
    } else if (k == TokenKind::LParen) {
      if (depth > 0) {
        --depth;
        continue;
      }
      if (i == 0) return std::nullopt;
      CallSite site;
      site.open = i;
      site.argument = commas;
      if (t[i - 1].kind == TokenKind::Identifier) {
        // `f(`, `fb(`, `a.b.m(`
        const Symbol* s = resolveChain(file, i - 1, 0);
        if (s && s->pou) {
          site.callee = s;
          site.calleeType = s->ownerPou ? upperCase(s->ownerPou->name) + "." + upperCase(s->name) : upperCase(s->name);
        } else if (s) {
          auto type = typeOf(*s);
          if (!type || type->ref) return std::nullopt;
          site.callee = s;
          site.calleeType = type->name;
        } else if (isStandardBlock(upperCase(t[i - 1].text))) {
          site.calleeType = upperCase(t[i - 1].text);
        } else {
          return std::nullopt;
        }
        return site;
      }
      // An initial value `x : Block := (a := 1)`: the type's members, named like parameters.
      if (t[i - 1].kind == TokenKind::Assign && i >= 2 && t[i - 2].kind == TokenKind::Identifier) {
        site.calleeType = reduce(TypeView{nullptr, upperCase(t[i - 2].text)}).name;
        return site;
      }
      return std::nullopt;
    } else if (k == TokenKind::Comma && depth == 0) {
      ++commas;
    }
  }
  return std::nullopt;
}

std::vector<const Symbol*> Project::parameters(const std::string& upperType) const {
  std::vector<const Symbol*> out;
  auto it = members_.find(upperType);
  if (it == members_.end()) return out;
  for (const Symbol* s : it->second)
    if (isParameter(*s)) out.push_back(s);
  return out;
}

const Symbol* Project::resolve(const FileIndex& file, size_t index) const {
  const auto& t = file.tokens();
  if (index >= t.size() || t[index].kind != TokenKind::Identifier) return nullptr;
  if (const Symbol* d = file.declarationAt(t[index].span.line, t[index].span.column)) return d;
  // A parameter named in a call (`IN := x`, `Q => y`), or a member named in an initial value.
  if (index + 1 < t.size() && (t[index + 1].kind == TokenKind::Assign || t[index + 1].kind == TokenKind::Arrow) &&
      index > 0 && (t[index - 1].kind == TokenKind::LParen || t[index - 1].kind == TokenKind::Comma)) {
    if (auto call = callAt(file, index)) {
      auto members = call->callee && call->callee->pou ? members_.find(call->calleeType) : members_.end();
      const std::string upper = upperCase(t[index].text);
      if (members != members_.end()) {
        for (const Symbol* s : members->second)
          if (upperCase(s->name) == upper) return s;
      }
      if (const Symbol* s = member(reduce(TypeView{nullptr, call->calleeType}), upper)) return s;
    }
  }
  return resolveChain(file, index, 0);
}

std::vector<Project::Occurrence> Project::references(const Symbol& symbol) const {
  std::vector<Occurrence> out;
  const std::string upper = upperCase(symbol.name);
  for (const auto& f : files_) {
    const auto& t = f->tokens();
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].kind != TokenKind::Identifier || t[i].text.size() != symbol.name.size() || upperCase(t[i].text) != upper)
        continue;
      if (resolve(*f, i) == &symbol) out.push_back(Occurrence{f.get(), t[i].span});
    }
  }
  return out;
}

// ------------------------------------------------------------------ descriptions

std::string typeText(const Symbol& symbol) {
  if (!symbol.nativeType.empty()) return symbol.nativeType;
  if (symbol.var && symbol.var->type && symbol.file) {
    std::string text(symbol.file->slice(symbol.var->type->span));
    // A type written over several lines reads on one.
    std::string flat;
    bool space = false;
    for (const char c : text) {
      if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
        space = true;
        continue;
      }
      if (space && !flat.empty()) flat += ' ';
      space = false;
      flat += c;
    }
    return flat;
  }
  return "";
}

std::string declarationComment(const FileIndex& file, const SourceSpan& span) {
  const LineMap& lines = file.lines();
  return scanback::declarationComment([&](uint32_t line) { return lines.line(line); }, span);
}

std::string Project::detail(const Symbol& s) const {
  switch (s.kind) {
    case SymbolKind::Program: return "PROGRAM";
    case SymbolKind::FunctionBlock: return "FUNCTION_BLOCK";
    case SymbolKind::Function:
      return s.pou && s.pou->returnType && s.file ? "FUNCTION : " + std::string(s.file->slice(s.pou->returnType->span))
                                                  : "FUNCTION";
    case SymbolKind::Method: return s.pou && s.pou->action ? "ACTION" : "METHOD";
    case SymbolKind::Interface: return "INTERFACE";
    case SymbolKind::Struct: return "STRUCT";
    case SymbolKind::Enum: return "enumeration";
    case SymbolKind::TypeAlias: return "TYPE";
    case SymbolKind::EnumValue: return s.type ? s.type->name : "";
    case SymbolKind::Configuration: return "CONFIGURATION";
    case SymbolKind::Resource: return "RESOURCE";
    case SymbolKind::Task: return "TASK";
    case SymbolKind::ProgramInstance: return s.instance ? "PROGRAM " + s.instance->typeName : "PROGRAM";
    case SymbolKind::Variable:
    case SymbolKind::Field: return typeText(s);
  }
  return "";
}

std::string Project::describe(const Symbol& s) const {
  std::string code;
  switch (s.kind) {
    case SymbolKind::Variable:
    case SymbolKind::Field: {
      if (s.var) {
        code = fmt::format("({}) ", s.kind == SymbolKind::Field ? "STRUCT field" : sectionKeyword(s.var->section));
        if (s.var->constant) code += "CONSTANT ";
        code += s.name;
        if (s.var->location && s.file) code += fmt::format(" AT {}", s.file->slice(s.var->location->span));
        code += " : " + typeText(s);
        if (s.var->init && s.file) code += fmt::format(" := {}", s.file->slice(s.var->init->span));
      } else {
        code =
            fmt::format("({} of {}) {} : {}", nativeSectionKeyword(s.nativeSection), s.container, s.name, s.nativeType);
      }
      break;
    }
    case SymbolKind::EnumValue:
      code = fmt::format("{}#{}", s.type ? s.type->name : "", s.name);
      if (s.enumValue && s.enumValue->value && s.file)
        code += fmt::format(" := {}", s.file->slice(s.enumValue->value->span));
      break;
    case SymbolKind::Program:
    case SymbolKind::FunctionBlock:
    case SymbolKind::Function:
    case SymbolKind::Method:
    case SymbolKind::Interface: {
      code = detail(s).substr(0, detail(s).find(' ')) + " " + s.name;
      if (s.pou && s.pou->returnType && s.file) code += " : " + std::string(s.file->slice(s.pou->returnType->span));
      std::string params;
      for (const Symbol* p :
           parameters(s.ownerPou ? upperCase(s.ownerPou->name) + "." + upperCase(s.name) : upperCase(s.name)))
        if (p->var) params += fmt::format("\n  {} {} : {};", sectionKeyword(p->var->section), p->name, typeText(*p));
      code += params;
      break;
    }
    case SymbolKind::Struct:
    case SymbolKind::Enum:
    case SymbolKind::TypeAlias:
      code = "TYPE " + s.name;
      if (s.type && s.type->type && s.file) {
        std::string text(s.file->slice(s.type->type->span));
        if (text.size() > 400) text = text.substr(0, 400) + " ...";
        code += " : " + text;
      }
      break;
    case SymbolKind::ProgramInstance:
      code = fmt::format("PROGRAM {}{} : {}", s.name,
                         s.instance && !s.instance->taskName.empty() ? " WITH " + s.instance->taskName : "",
                         s.instance ? s.instance->typeName : "");
      break;
    case SymbolKind::Task: code = "TASK " + s.name; break;
    case SymbolKind::Configuration: code = "CONFIGURATION " + s.name; break;
    case SymbolKind::Resource: code = "RESOURCE " + s.name; break;
  }
  std::string out = "```iecst\n" + code + "\n```";
  if (s.ownerPou && s.kind == SymbolKind::Variable) out += fmt::format("\nin {}", s.ownerPou->name);
  if (s.file) {
    const std::string comment = declarationComment(*s.file, s.span);
    if (!comment.empty()) out += "\n\n" + comment;
  }
  return out;
}

}  // namespace scanback::lsp
