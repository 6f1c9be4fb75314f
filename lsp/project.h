// What the language server knows of a project: every file parsed by the front end's parser
// (vm/syntax), its declarations as symbols, its tokens, and the name resolution the editor's
// requests need (definition, references, hover, completion, signature help, rename).
//
// There is no second parser: the AST and tokens are the compiler's own. Names are resolved over
// the declarations the way the semantic pass scopes them (vm/sema, docs/language.md): a POU's own
// variables, then (in a method or action) its function block's, then those of the blocks it
// EXTENDS, then the project's globals, POUs, types and enumeration values. A member after `.` is
// looked up in the declared type of what stands before it (a structure's fields, a function
// block's or program's variables and methods, a standard block's fields); `[i]` takes an array's
// element and `^` a reference's target. Diagnostics do not come from here: they are the whole
// compiler's (lsp/server.cpp runs compileProject), so that the editor shows exactly what
// `scanback run` would say.
//
// A FileIndex is immutable once built, so the diagnostics thread may hold one while the
// server's thread replaces it with a newer version.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "lsp/text.h"
#include "vm/bytecode/types.h"
#include "vm/source/source.h"
#include "vm/syntax/ast.h"
#include "vm/syntax/lexer.h"

namespace scanback::lsp {

enum class SymbolKind {
  Program,
  FunctionBlock,
  Function,
  Method,
  Interface,
  Struct,
  Enum,
  TypeAlias,
  EnumValue,
  Variable,  // of a POU, or a global
  Field,     // of a structure, or of a standard function block
  Configuration,
  Resource,
  Task,
  ProgramInstance,
};

class FileIndex;

struct Symbol {
  std::string name;
  SymbolKind kind = SymbolKind::Variable;
  SourceSpan span;                  // the name (invalid for a standard function block's field)
  SourceSpan range;                 // the whole declaration, as far as the AST tells it
  const FileIndex* file = nullptr;  // null for a standard function block's field
  // Upper-case key of the POU or type that declares it ("PIDCTRL", "MOTORCTL.RESET" for a method's
  // variable); "" for what the project declares at its top level.
  std::string container;
  int parent = -1;  // index of the enclosing symbol in its file's symbols, for the outline

  const ast::Pou* pou = nullptr;        // Program .. Interface, and Method
  const ast::Pou* ownerPou = nullptr;   // Variable: the POU that declares it; Method: its block
  const ast::VarDecl* var = nullptr;    // Variable, Field (of a structure)
  const ast::TypeDecl* type = nullptr;  // Struct, Enum, TypeAlias; EnumValue: its enumeration
  const ast::EnumValue* enumValue = nullptr;
  const ast::ProgramInstance* instance = nullptr;
  // A standard block's field: its section and elementary type.
  std::string nativeType;
  VarSection nativeSection = VarSection::Var;
};

// A token as the index keeps it: its kind, span and text (a view of the file's text).
struct LexToken {
  TokenKind kind = TokenKind::EndOfFile;
  SourceSpan span;
  std::string_view text;
};

// One parsed file. Its spans have FileId 0: a FileIndex is its own one-file SourceSet.
class FileIndex {
 public:
  FileIndex(std::string uri, std::string path, std::string text);
  FileIndex(const FileIndex&) = delete;
  FileIndex& operator=(const FileIndex&) = delete;

  const std::string& uri() const { return uri_; }
  const std::string& path() const { return path_; }
  const std::string& text() const { return source_.file(0).text; }
  const LineMap& lines() const { return lines_; }
  const ast::CompilationUnit& unit() const { return unit_; }
  const std::vector<Symbol>& symbols() const { return symbols_; }
  const std::vector<LexToken>& tokens() const { return tokens_; }

  // The source text of a span of this file ("" for an invalid one).
  std::string_view slice(const SourceSpan& span) const;
  // The declaration whose name starts at (line, column), or null.
  const Symbol* declarationAt(uint32_t line, uint32_t column) const;
  // The token that holds (line, column) or ends right before it (the word being typed); npos if none.
  size_t tokenAt(uint32_t line, uint32_t column) const;
  // The last token that starts before (line, column); npos if none.
  size_t tokenBefore(uint32_t line, uint32_t column) const;

  // The POU around a 1-based line: the method or action when the line is inside one (then `owner`
  // is its function block), else the POU (owner null).
  struct PouAt {
    const ast::Pou* pou = nullptr;
    const ast::Pou* owner = nullptr;
  };
  PouAt pouAt(uint32_t line) const;

 private:
  void collectSymbols();
  void addPou(const ast::Pou& pou, const ast::Pou* owner, int parent);
  int add(Symbol s);

  std::string uri_;
  std::string path_;
  SourceSet source_;
  LineMap lines_;
  ast::CompilationUnit unit_;
  std::vector<Symbol> symbols_;
  std::vector<LexToken> tokens_;
  std::map<std::pair<uint32_t, uint32_t>, size_t> declarations_;  // (line, column) -> symbols_ index
  struct PouLines {
    uint32_t first = 0, last = 0;
    const ast::Pou* pou = nullptr;
    const ast::Pou* owner = nullptr;
  };
  std::vector<PouLines> pouLines_;
};

// What a name or member designates after `.`: a type as the declarations give it.
struct TypeView {
  const ast::TypeRef* ref = nullptr;  // as written, when there is one
  std::string name;                   // upper-case: a declared type, a POU or a standard block
};

// Where a call's parentheses are, seen from a token inside them.
struct CallSite {
  size_t open = 0;                 // the '(' token
  size_t argument = 0;             // 0-based: commas before the position, at the call's own depth
  const Symbol* callee = nullptr;  // a POU, or an instance (variable) of a function block
  std::string calleeType;          // upper-case: the function, function block or standard block
};

// The whole project: one FileIndex per file, and what is declared across them.
class Project {
 public:
  explicit Project(std::vector<std::shared_ptr<const FileIndex>> files);

  const std::vector<std::shared_ptr<const FileIndex>>& files() const { return files_; }
  const FileIndex* file(std::string_view uri) const;

  // The symbol the identifier token `index` of `file` designates (its declaration included); null
  // when it names nothing the project declares (a keyword, an elementary type, a standard function).
  const Symbol* resolve(const FileIndex& file, size_t index) const;
  // Every identifier of the project that designates `symbol`, its declaration included.
  struct Occurrence {
    const FileIndex* file;
    SourceSpan span;
  };
  std::vector<Occurrence> references(const Symbol& symbol) const;

  // A name in the scope of a 1-based line of `file` (upper-case).
  const Symbol* lookup(const FileIndex& file, uint32_t line, const std::string& upperName) const;
  // Every name visible at that line: the POU's, its block's and bases', the project's.
  std::vector<const Symbol*> visible(const FileIndex& file, uint32_t line) const;
  // The members `.` reaches in a value of `type` (fields, variables, methods), or the values of an
  // enumeration (`Type#`).
  std::vector<const Symbol*> members(const TypeView& type) const;
  // The type of the postfix expression that ends at token `last` (`a`, `a.b`, `a[i]`, `p^`, `f()`).
  std::optional<TypeView> typeOfExpression(const FileIndex& file, size_t last) const;
  // The declared type of a symbol, reduced through aliases to a structure, POU or standard block.
  std::optional<TypeView> typeOf(const Symbol& symbol) const;
  // The call whose parentheses hold token `index` of `file`, at the innermost level.
  std::optional<CallSite> callAt(const FileIndex& file, size_t index) const;
  // The parameters of a function, function block or standard block (upper-case name), in order.
  std::vector<const Symbol*> parameters(const std::string& upperType) const;

  // Project-level symbols by upper-case name (POUs, types, globals, enumeration values, tasks,
  // program instances), for workspace/symbol and completion.
  const std::unordered_multimap<std::string, const Symbol*>& globals() const { return globals_; }
  bool isStandardBlock(const std::string& upperName) const;

  // Hover: the declaration in Markdown (its kind, type, address, initial value, comment).
  std::string describe(const Symbol& symbol) const;
  // "name : TYPE" of a parameter, "TYPE" of a variable, the kind of a POU: completion's detail.
  std::string detail(const Symbol& symbol) const;

 private:
  TypeView reduce(TypeView view, int depth = 0) const;
  const Symbol* member(const TypeView& type, const std::string& upperName) const;
  const Symbol* resolveChain(const FileIndex& file, size_t index, int depth) const;
  void addMembersOf(const std::string& upperPou, std::vector<const Symbol*>& out, int depth) const;

  std::vector<std::shared_ptr<const FileIndex>> files_;
  std::unordered_multimap<std::string, const Symbol*> globals_;
  std::unordered_map<std::string, std::vector<const Symbol*>> members_;  // container -> its members
  std::unordered_map<std::string, const Symbol*> types_;                 // POUs and declared types
  std::vector<std::unique_ptr<Symbol>> native_;                          // standard blocks' fields
};

// The comment that documents the declaration at `span` of `file` (scanback::declarationComment,
// vm/source/declaration_comment.h, over the file's lines).
std::string declarationComment(const FileIndex& file, const SourceSpan& span);
// The declared type as written ("REAL", "ARRAY[1..3] OF AlarmLatch") of a variable or field.
std::string typeText(const Symbol& symbol);

}  // namespace scanback::lsp
