#include "vm/syntax/parser.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vm/syntax/lexer.h"

namespace scanback {

namespace {

using namespace ast;
// The AST's kinds, not the bytecode's of the same names (vm/bytecode), when both are visible (a
// unity build).
using ast::ArrayDim;
using ast::PouKind;
using ast::VarSection;
using K = TokenKind;

struct SyntaxError {};

// Tokens by their index in the file, in blocks of kBlock: a reference stays valid as more are
// added, until the block holding it is released; indexing is a shift and a mask.
class TokenWindow {
 public:
  size_t end() const { return end_; }  // one past the last token added
  const Token& operator[](size_t i) const { return blocks_[(i >> kShift) - first_][i & kMask]; }
  // The slot of the next token (it may hold a released token: the lexer overwrites it).
  Token& append() {
    if ((end_ & kMask) == 0) {
      if (spare_) {
        blocks_.push_back(std::move(spare_));
      } else {
        blocks_.push_back(std::make_unique<Token[]>(kBlock));
      }
    }
    return blocks_.back()[end_++ & kMask];
  }
  // Drops the blocks wholly before index i (one is kept for reuse).
  void releaseBefore(size_t i) {
    size_t drop = 0;
    while (drop + 1 < blocks_.size() && ((first_ + drop + 1) << kShift) <= i) ++drop;
    if (drop == 0) return;
    spare_ = std::move(blocks_.front());
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_ += drop;
  }

 private:
  static constexpr size_t kShift = 10, kBlock = size_t{1} << kShift, kMask = kBlock - 1;
  std::vector<std::unique_ptr<Token[]>> blocks_;  // blocks_[b] holds the tokens of block first_ + b
  std::unique_ptr<Token[]> spare_;
  size_t first_ = 0;
  size_t end_ = 0;
};

constexpr int kMaxDepth = 200;        // parser recursion: nested statements, parentheses, types, ...
constexpr int kMaxExprHeight = 1000;  // height of an expression tree (a + b + ... chains included)
constexpr size_t kMaxErrors = 100;
constexpr size_t kNoToken = SIZE_MAX;

size_t idx(K k) { return static_cast<size_t>(k); }

bool isVarSectionKw(K k) {
  switch (k) {
    case K::KwVar:
    case K::KwVarInput:
    case K::KwVarOutput:
    case K::KwVarInOut:
    case K::KwVarTemp:
    case K::KwVarGlobal:
    case K::KwVarExternal:
    case K::KwVarConfig:
    case K::KwVarInst:
    case K::KwVarStat: return true;
    default: return false;
  }
}

// Keywords that belong to declarations and POU structure: statement lists never run past them.
bool isPouLevel(K k) {
  switch (k) {
    case K::KwProgram:
    case K::KwEndProgram:
    case K::KwFunction:
    case K::KwEndFunction:
    case K::KwFunctionBlock:
    case K::KwEndFunctionBlock:
    case K::KwMethod:
    case K::KwEndMethod:
    case K::KwType:
    case K::KwEndType:
    case K::KwStruct:
    case K::KwEndStruct:
    case K::KwUnion:
    case K::KwEndUnion:
    case K::KwEndVar:
    case K::KwConfiguration:
    case K::KwEndConfiguration:
    case K::KwResource:
    case K::KwEndResource:
    case K::KwInterface:
    case K::KwEndInterface:
    case K::KwClass:
    case K::KwEndClass:
    case K::KwProperty:
    case K::KwEndProperty:
    case K::KwEndGet:
    case K::KwEndSet:
    case K::KwTestProgram:
    case K::KwEndTestProgram:
    case K::KwTestFunctionBlock:
    case K::KwEndTestFunctionBlock:
    case K::KwAction:
    case K::KwEndAction: return true;
    default: return isVarSectionKw(k);
  }
}

// Keywords that end (part of) a block statement.
bool isCloser(K k) {
  switch (k) {
    case K::KwElsif:
    case K::KwElse:
    case K::KwEndIf:
    case K::KwEndCase:
    case K::KwEndFor:
    case K::KwEndWhile:
    case K::KwUntil:
    case K::KwEndRepeat: return true;
    default: return false;
  }
}

bool isStatementKw(K k) {
  switch (k) {
    case K::KwIf:
    case K::KwCase:
    case K::KwFor:
    case K::KwWhile:
    case K::KwRepeat:
    case K::KwExit:
    case K::KwContinue:
    case K::KwReturn: return true;
    default: return false;
  }
}

// Things that may start a top-level item.
bool isTopLevelItem(K k) {
  switch (k) {
    case K::KwType:
    case K::KwProgram:
    case K::KwFunction:
    case K::KwFunctionBlock:
    case K::KwVarGlobal:
    case K::KwVarConfig:
    case K::KwConfiguration:
    case K::KwClass:
    case K::KwInterface:
    case K::KwMethod: return true;
    default: return false;
  }
}

std::string quoted(K k) { return "'" + std::string(tokenKindName(k)) + "'"; }

std::string describe(const Token& tok) {
  switch (tok.kind) {
    case K::EndOfFile: return "end of file";
    case K::StringLiteral:
      return "string literal " +
             (tok.text.size() > 40 ? std::string(tok.text.substr(0, 37)) + "..." : std::string(tok.text));
    default: break;
  }
  std::string s(tok.text);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return "'" + s + "'";
}

std::string closerOwner(K k) {
  switch (k) {
    case K::KwElsif:
    case K::KwEndIf: return "'IF'";
    case K::KwElse: return "'IF' or 'CASE'";
    case K::KwEndCase: return "'CASE'";
    case K::KwEndFor: return "'FOR'";
    case K::KwEndWhile: return "'WHILE'";
    default: return "'REPEAT'";
  }
}

bool isWord(const Token& tok, std::string_view word) {
  return tok.kind == K::Identifier && equalsIgnoreCase(tok.text, word);
}

ExprPtr makeExpr(ExprKind k, const SourceSpan& s) { return std::make_unique<Expr>(k, s); }

ExprPtr nameExpr(const Token& tok) {
  ExprPtr e = makeExpr(ExprKind::Name, tok.span);
  e->text = tok.text;
  return e;
}

ExprPtr literalExpr(const Token& tok) {
  ExprKind k = ExprKind::IntLiteral;
  switch (tok.kind) {
    case K::IntLiteral: k = ExprKind::IntLiteral; break;
    case K::RealLiteral: k = ExprKind::RealLiteral; break;
    case K::BoolLiteral: k = ExprKind::BoolLiteral; break;
    case K::StringLiteral: k = ExprKind::StringLiteral; break;
    case K::TimeLiteral: k = ExprKind::TimeLiteral; break;
    case K::DateLiteral: k = ExprKind::DateLiteral; break;
    case K::TodLiteral: k = ExprKind::TodLiteral; break;
    case K::DtLiteral: k = ExprKind::DtLiteral; break;
    default: break;
  }
  ExprPtr e = makeExpr(k, tok.span);
  if (k == ExprKind::RealLiteral)
    e->realValue = tok.realValue;
  else
    e->intValue = tok.intValue;
  e->negative = tok.negative;
  e->boolValue = tok.boolValue;
  e->typePrefix = tok.typePrefix;
  if (k == ExprKind::StringLiteral) e->text = tok.stringValue;
  return e;
}

bool isLiteralToken(K k) {
  switch (k) {
    case K::IntLiteral:
    case K::RealLiteral:
    case K::BoolLiteral:
    case K::StringLiteral:
    case K::TimeLiteral:
    case K::DateLiteral:
    case K::TodLiteral:
    case K::DtLiteral: return true;
    default: return false;
  }
}

Location locationOf(const Token& tok) {
  Location loc;
  loc.area = tok.area;
  loc.size = tok.size;
  loc.parts = tok.parts;
  loc.span = tok.span;
  return loc;
}

int binaryPrecedence(K k, BinaryOp& op) {
  switch (k) {
    case K::KwOr:
    case K::KwOrElse: op = BinaryOp::Or; return 1;
    case K::KwXor: op = BinaryOp::Xor; return 2;
    case K::KwAnd:
    case K::KwAndThen:
    case K::Ampersand: op = BinaryOp::And; return 3;
    case K::Eq: op = BinaryOp::Eq; return 4;
    case K::Ne: op = BinaryOp::Ne; return 4;
    case K::Lt: op = BinaryOp::Lt; return 5;
    case K::Gt: op = BinaryOp::Gt; return 5;
    case K::Le: op = BinaryOp::Le; return 5;
    case K::Ge: op = BinaryOp::Ge; return 5;
    case K::Plus: op = BinaryOp::Add; return 6;
    case K::Minus: op = BinaryOp::Sub; return 6;
    case K::Star: op = BinaryOp::Mul; return 7;
    case K::Slash: op = BinaryOp::Div; return 7;
    case K::KwMod: op = BinaryOp::Mod; return 7;
    default: return 0;
  }
}

class Parser {
 public:
  Parser(std::string_view text, FileId file, Diagnostics& lexDiag, Diagnostics& diag)
      : lexer_(text, file, lexDiag), file_(file), diag_(diag) {}

  CompilationUnit parseUnit() {
    CompilationUnit unit;
    unit.file = file_;
    // The unit's nodes are made in its arena (ast::NodeArena).
    struct CurrentArena {
      NodeArena* outer = NodeArena::current();
      explicit CurrentArena(NodeArena* arena) { NodeArena::current() = arena; }
      ~CurrentArena() { NodeArena::current() = outer; }
    } current(unit.arena.get());
    while (!atEnd()) {
      release();
      size_t before = pos_;
      try {
        parseTopLevelItem(unit);
      } catch (const SyntaxError&) {
        skipToTopLevel();
      }
      if (pos_ == before && !atEnd()) advance();
    }
    return unit;
  }

  ExprPtr parseStandaloneExpression() {
    ExprPtr e;
    try {
      e = parseExpr();
    } catch (const SyntaxError&) {
      return nullptr;
    }
    if (!atEnd()) errorHere("unexpected " + describe(cur()) + " after the expression");
    return e;
  }

  // Lexes what is left of the file, for its lexical errors (the parser may stop early).
  void drain() {
    while (eof_ == kNoToken) lexOne(false);
  }
  const std::vector<ast::Attribute>& attributes() const { return lexer_.attributes(); }

 private:
  // The tokens, lexed as the parser reaches them (indexes count from the start of the file);
  // release() drops the ones before what is still needed, so the parse holds a window of the
  // file, not all of it. References into the window stay valid as it grows, and as it is released
  // up to tokens no one refers to any more.
  mutable TokenStream lexer_;
  mutable TokenWindow t_;
  mutable size_t eof_ = kNoToken;  // the index of the EndOfFile token once lexed
  mutable Token drained_;          // a token lexed only for its errors (drain())
  std::vector<size_t> pins_;       // indexes an error message or a second parse will come back to
  size_t pos_ = 0;
  FileId file_;
  Diagnostics& diag_;
  int depth_ = 0;
  int height_ = 0;  // height of the expression tree most recently returned by a parse function
  size_t errors_ = 0;
  size_t lastErrorPos_ = kNoToken;
  bool aborted_ = false;
  std::array<int, static_cast<size_t>(K::Count_)> open_{};

  // ------------------------------------------------------------------ helpers

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) {
        --p.depth_;
        p.errorHere("nesting is too deep (more than " + std::to_string(kMaxDepth) + " levels)");
        p.abort();
        throw SyntaxError{};
      }
    }
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

  // Marks block closers as expected while a block statement parses its bodies.
  struct OpenBlock {
    Parser& p;
    std::vector<K> kinds;
    OpenBlock(Parser& parser, std::initializer_list<K> ks) : p(parser), kinds(ks) {
      for (K k : kinds) ++p.open_[idx(k)];
    }
    ~OpenBlock() {
      for (K k : kinds) --p.open_[idx(k)];
    }
    OpenBlock(const OpenBlock&) = delete;
    OpenBlock& operator=(const OpenBlock&) = delete;
  };

  // Lexes one more token: kept at the end of t_, or (`keep` false, draining) dropped unless it is
  // the EndOfFile, which then follows the tokens kept.
  void lexOne(bool keep) const {
    if (!keep) {
      lexer_.next(drained_);
      if (drained_.kind != K::EndOfFile) return;
      t_.append() = drained_;
    } else {
      lexer_.next(t_.append());
    }
    if (t_[t_.end() - 1].kind == K::EndOfFile) eof_ = t_.end() - 1;
  }
  // The token at index i (the EndOfFile for any index past it). Never one released.
  const Token& tok(size_t i) const {
    if (i < t_.end()) [[likely]]
      return t_[i];  // lexed already (the EndOfFile is the last token lexed)
    while (eof_ == kNoToken && i >= t_.end()) lexOne(true);
    return t_[std::min(i, eof_)];
  }
  // Drops the tokens before the previous one (prevSpan) and before every pinned one. Called only
  // where no reference to an earlier token is held: between statements, declarations and
  // top-level items (block openers held across them are copies). Batched: each token is moved
  // once.
  void release() {
    size_t keep = pos_ > 0 ? pos_ - 1 : 0;
    for (size_t p : pins_) keep = std::min(keep, p);
    t_.releaseBefore(keep);
  }
  // Keeps the tokens from an index on while it lives.
  struct Pin {
    Parser& p;
    Pin(Parser& parser, size_t index) : p(parser) { p.pins_.push_back(index); }
    ~Pin() { p.pins_.pop_back(); }
    Pin(const Pin&) = delete;
    Pin& operator=(const Pin&) = delete;
  };

  const Token& cur() const { return tok(pos_); }
  const Token& peek(size_t n) const { return tok(pos_ + n); }
  K kind() const { return cur().kind; }
  bool at(K k) const { return kind() == k; }
  bool atEnd() const { return kind() == K::EndOfFile; }
  const Token& advance() {
    const Token& t = cur();
    if (t.kind != K::EndOfFile) ++pos_;
    return t;
  }
  bool accept(K k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  SourceSpan prevSpan() const { return pos_ > 0 ? tok(pos_ - 1).span : cur().span; }

  // The optional ';' after END_VAR, END_TYPE, END_STRUCT or END_<POU>: only on the same line, so
  // that a ';' on the next line stays an empty statement.
  void acceptTrailingSemicolon() {
    if (at(K::Semicolon) && pos_ > 0 && cur().span.line == tok(pos_ - 1).span.endLine) advance();
  }

  void abort() {
    aborted_ = true;
    drain();
    pos_ = eof_;
  }

  void report(const SourceSpan& span, std::string message, size_t tokenIndex) {
    if (aborted_) return;
    if (tokenIndex != kNoToken && tokenIndex == lastErrorPos_) return;  // one error per token
    lastErrorPos_ = tokenIndex;
    diag_.error(span, std::move(message));
    if (++errors_ >= kMaxErrors) {
      diag_.error(span, "too many errors; giving up on this file");
      abort();
    }
  }
  void errorHere(std::string message) { report(cur().span, std::move(message), pos_); }
  void errorAt(size_t tokenIndex, std::string message) { report(tok(tokenIndex).span, std::move(message), tokenIndex); }

  [[noreturn]] void fail(std::string message) {
    errorHere(std::move(message));
    throw SyntaxError{};
  }

  std::string expectedMsg(K k, std::string_view context) {
    std::string m = "expected " + quoted(k);
    if (!context.empty()) {
      m += ' ';
      m += context;
    }
    return m + ", found " + describe(cur());
  }

  void expect(K k, std::string_view context) {
    if (!accept(k)) fail(expectedMsg(k, context));
  }

  const Token& expectIdent(std::string_view what) {
    if (at(K::Identifier)) return advance();
    fail("expected " + std::string(what) + ", found " + describe(cur()));
  }

  // A missing ';' is reported where it is missing: just after the token before it, which is often
  // on the line before the token found (issue 31). Parsing goes on as if it were there when the next
  // token starts a new line or is a keyword that ends the construct, otherwise the caller
  // resynchronises.
  void expectSemicolon(std::string_view context) {
    if (accept(K::Semicolon)) return;
    if (pos_ > 0) {
      const SourceSpan& before = tok(pos_ - 1).span;
      const SourceSpan missing{before.file, before.endLine, before.endColumn, before.endLine, before.endColumn + 1};
      report(missing, expectedMsg(K::Semicolon, context), pos_);
    } else {
      errorHere(expectedMsg(K::Semicolon, context));
    }
    const Token& c = cur();
    bool newLine = pos_ > 0 && c.span.line > tok(pos_ - 1).span.endLine;
    if (newLine || atEnd() || isPouLevel(c.kind) || isCloser(c.kind)) return;
    throw SyntaxError{};
  }

  std::string missingEnd(K endKw, const Token& opener, std::string_view name = {}) {
    std::string m = "expected " + quoted(endKw) + " to close " + quoted(opener.kind);
    if (!name.empty()) m += " " + std::string(name);
    m += " at line " + std::to_string(opener.span.line);
    return m + ", found " + describe(cur());
  }

  // After an error: skip to the end of the statement. Its callers hold no reference to the tokens
  // skipped (the frames that did have unwound), so they are released as it goes: a statement of
  // millions of tokens is skipped in a window of a few thousand.
  void syncStatement() {
    while (!atEnd()) {
      release();
      K k = kind();
      if (k == K::Semicolon) {
        advance();
        return;
      }
      if (isPouLevel(k) || isCloser(k) || isStatementKw(k)) return;
      advance();
    }
  }

  // After an error in a declaration: skip to the end of the declaration.
  void syncDecl() {
    while (!atEnd()) {
      K k = kind();
      if (k == K::Semicolon) {
        advance();
        return;
      }
      if (isPouLevel(k) || isStatementKw(k)) return;
      advance();
    }
  }

  // After an error in a block header (IF ... THEN, FOR ... DO): find `after` if it is near,
  // otherwise drop the rest of the header line and let the body start on the next line.
  void recoverHeader(K after) {
    size_t save = pos_;
    while (!atEnd()) {
      K k = kind();
      if (k == after) {
        advance();
        return;
      }
      if (k == K::Semicolon || isPouLevel(k) || isCloser(k) || isStatementKw(k)) break;
      advance();
    }
    pos_ = save;
    uint32_t line = prevSpan().endLine;
    while (!atEnd() && cur().span.line == line) {
      K k = kind();
      if (k == K::Semicolon || isPouLevel(k) || isCloser(k) || isStatementKw(k)) break;
      advance();
    }
  }

  void skipToTopLevel() {
    while (!atEnd() && !isTopLevelItem(kind())) {
      release();  // as syncStatement()
      advance();
    }
  }

  // ------------------------------------------------------------------ expressions

  ExprPtr parseExpr() { return parseBinary(1); }

  // Records the height of a node just built; a tree taller than kMaxExprHeight is an error, so
  // later stages may walk expressions recursively.
  void setHeight(int h) {
    height_ = h;
    if (h > kMaxExprHeight)
      fail("expression is too complex (its tree would be more than " + std::to_string(kMaxExprHeight) +
           " levels deep); split it up");
  }

  ExprPtr parseBinary(int minPrec) {
    ExprPtr lhs = parseUnary();
    int h = height_;
    for (;;) {
      BinaryOp op = BinaryOp::Add;
      int prec = binaryPrecedence(kind(), op);
      if (prec == 0 || prec < minPrec) {
        height_ = h;
        return lhs;
      }
      const Token& opTok = advance();
      const bool shortCircuit = opTok.kind == K::KwAndThen || opTok.kind == K::KwOrElse;
      const SourceSpan opSpan = opTok.span;
      ExprPtr rhs = parseBinary(prec + 1);
      lhs = shortCircuit ? makeShortCircuit(op, opSpan, std::move(lhs), std::move(rhs))
                         : makeBinary(op, std::move(lhs), std::move(rhs));
      setHeight(std::max(h, height_) + 1);
      h = height_;
    }
  }

  static ExprPtr makeBinary(BinaryOp op, ExprPtr lhs, ExprPtr rhs) {
    ExprPtr e = makeExpr(ExprKind::Binary, SourceSpan::cover(lhs->span, rhs->span));
    e->binaryOp = op;
    e->operand = std::move(lhs);
    e->rhs = std::move(rhs);
    return e;
  }

  // IEC's functional forms of the operators (`ADD(a, b, c)`, `GT(a, b)`, `AND(x, y)`): the call
  // keeps its arguments (a user's FUNCTION of that name is called with them) and gets, in `rhs`,
  // the same expression written with the operator, which sema takes when no POU has the name.
  // ADD, MUL, AND, OR and XOR are extensible (folded left to right); GT, GE, EQ, LE and LT are too,
  // as IEC defines them: `GT(a, b, c)` is `a > b AND b > c`, so a middle operand is written twice
  // and must read the same both times (a name, a literal, a member or an element with constant
  // indices). Arguments are positional or IN1, IN2, ... in order; other calls get no `rhs` (sema
  // says what the functional form takes).
  ExprPtr operatorCall(ExprPtr call) {
    const Expr& callee = *call->operand;
    if (callee.kind != ExprKind::Name) return call;
    struct Form {
      const char* name;
      BinaryOp op;
      bool extensible;
      bool comparison;
    };
    static constexpr Form kForms[] = {
        {"ADD", BinaryOp::Add, true, false},  {"MUL", BinaryOp::Mul, true, false},
        {"SUB", BinaryOp::Sub, false, false}, {"DIV", BinaryOp::Div, false, false},
        {"MOD", BinaryOp::Mod, false, false}, {"AND", BinaryOp::And, true, false},
        {"OR", BinaryOp::Or, true, false},    {"XOR", BinaryOp::Xor, true, false},
        {"GT", BinaryOp::Gt, true, true},     {"GE", BinaryOp::Ge, true, true},
        {"EQ", BinaryOp::Eq, true, true},     {"LE", BinaryOp::Le, true, true},
        {"LT", BinaryOp::Lt, true, true},     {"NE", BinaryOp::Ne, false, true},
    };
    const Form* form = nullptr;
    for (const Form& f : kForms)
      if (equalsIgnoreCase(callee.text, f.name)) form = &f;
    if (!form) return call;
    const size_t n = call->args.size();
    for (size_t i = 0; i < n; ++i) {
      const Argument& a = call->args[i];
      if (a.isOutput || (!a.name.empty() && !equalsIgnoreCase(a.name, "IN" + std::to_string(i + 1)))) return call;
    }
    if (n < 2 || (!form->extensible && n > 2)) return call;
    auto arg = [&](size_t i) { return cloneExpr(*call->args[i].value); };
    ExprPtr result;
    if (form->comparison) {
      for (size_t i = 1; i + 1 < n; ++i)
        if (!readsSameTwice(*call->args[i].value)) return call;
      for (size_t i = 0; i + 1 < n; ++i) {
        ExprPtr cmp = makeBinary(form->op, arg(i), arg(i + 1));
        result = result ? makeBinary(BinaryOp::And, std::move(result), std::move(cmp)) : std::move(cmp);
      }
    } else {
      result = arg(0);
      for (size_t i = 1; i < n; ++i) result = makeBinary(form->op, std::move(result), arg(i));
    }
    result->span = call->span;
    call->rhs = std::move(result);
    return call;
  }

  // What a comparison's functional form may write twice: reading it twice reads the same value.
  static bool readsSameTwice(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: return true;
      case ExprKind::Member:
      case ExprKind::BitAccess: return readsSameTwice(*e.operand);
      case ExprKind::Index:
        for (const ExprPtr& i : e.indices)
          if (!isLiteral(i->kind)) return false;
        return readsSameTwice(*e.operand);
      default: return isLiteral(e.kind);
    }
  }

  // `a AND_THEN b`, `a OR_ELSE b` (CODESYS): a call of the standard function of that name, which
  // no source can spell as a call (the names are keywords); sema evaluates b only when needed.
  static ExprPtr makeShortCircuit(BinaryOp op, const SourceSpan& opSpan, ExprPtr lhs, ExprPtr rhs) {
    ExprPtr e = makeExpr(ExprKind::Call, SourceSpan::cover(lhs->span, rhs->span));
    ExprPtr callee = makeExpr(ExprKind::Name, opSpan);
    callee->text = op == BinaryOp::And ? "AND_THEN" : "OR_ELSE";
    e->operand = std::move(callee);
    for (ExprPtr* side : {&lhs, &rhs}) {
      Argument a;
      a.span = (*side)->span;
      a.value = std::move(*side);
      e->args.push_back(std::move(a));
    }
    return e;
  }

  static ExprPtr makeUnary(K opKind, const SourceSpan& opSpan, ExprPtr operand, bool literalNext) {
    if (opKind == K::Minus && literalNext && operand->typePrefix.empty() &&
        ((operand->kind == ExprKind::IntLiteral && !operand->negative) || operand->kind == ExprKind::RealLiteral)) {
      operand->span = SourceSpan::cover(opSpan, operand->span);
      if (operand->kind == ExprKind::IntLiteral)
        operand->negative = true;
      else
        operand->realValue = -operand->realValue;
      return operand;
    }
    ExprPtr e = makeExpr(ExprKind::Unary, SourceSpan::cover(opSpan, operand->span));
    e->unaryOp = opKind == K::Minus ? UnaryOp::Negate : opKind == K::Plus ? UnaryOp::Plus : UnaryOp::Not;
    e->operand = std::move(operand);
    return e;
  }

  ExprPtr finishUnary(K opKind, const SourceSpan& opSpan, ExprPtr operand, bool literalNext) {
    int h = height_;
    ExprPtr e = makeUnary(opKind, opSpan, std::move(operand), literalNext);
    setHeight(e->kind == ExprKind::Unary ? h + 1 : h);
    return e;
  }

  bool untypedNumberNext() const { return (at(K::IntLiteral) || at(K::RealLiteral)) && cur().typePrefix.empty(); }

  ExprPtr parseUnary() {
    DepthGuard guard(*this);
    K k = kind();
    if (k == K::Minus || k == K::Plus || k == K::KwNot) {
      SourceSpan opSpan = advance().span;
      bool literalNext = untypedNumberNext();
      ExprPtr operand = parseUnary();
      return finishUnary(k, opSpan, std::move(operand), literalNext);
    }
    return parsePower();
  }

  ExprPtr parsePower() {
    ExprPtr lhs = parsePostfix();
    int h = height_;
    while (at(K::Power)) {
      advance();
      ExprPtr rhs = parsePowerOperand();
      lhs = makeBinary(BinaryOp::Power, std::move(lhs), std::move(rhs));
      setHeight(std::max(h, height_) + 1);
      h = height_;
    }
    height_ = h;
    return lhs;
  }

  // The right operand of `**`: a postfix expression, optionally signed (`2 ** -1`).
  ExprPtr parsePowerOperand() {
    DepthGuard guard(*this);
    K k = kind();
    if (k == K::Minus || k == K::Plus || k == K::KwNot) {
      SourceSpan opSpan = advance().span;
      bool literalNext = untypedNumberNext();
      ExprPtr operand = parsePowerOperand();
      return finishUnary(k, opSpan, std::move(operand), literalNext);
    }
    return parsePostfix();
  }

  ExprPtr parsePostfix() {
    // A parenthesised expression may be dereferenced, indexed or selected from ((p + 2)^), not called.
    const bool parenthesised = at(K::LParen);
    ExprPtr e = parsePrimary();
    if (e->kind != ExprKind::Name && !parenthesised) return e;
    int h = height_;
    for (;;) {
      if (parenthesised && at(K::LParen)) {
        height_ = h;
        return e;
      }
      if (at(K::Dot)) {
        advance();
        const Token& m = cur();
        if (m.kind == K::Identifier) {
          advance();
          ExprPtr member = makeExpr(ExprKind::Member, SourceSpan::cover(e->span, m.span));
          member->text = m.text;
          member->operand = std::move(e);
          e = std::move(member);
          setHeight(h + 1);
        } else if (m.kind == K::IntLiteral && m.typePrefix.empty() &&
                   m.text.find_first_not_of("0123456789") == std::string::npos) {
          advance();
          ExprPtr bit = makeExpr(ExprKind::BitAccess, SourceSpan::cover(e->span, m.span));
          bit->intValue = m.intValue;
          bit->operand = std::move(e);
          e = std::move(bit);
          setHeight(h + 1);
        } else {
          fail("expected a member name or bit number after '.', found " + describe(m));
        }
      } else if (at(K::LBracket)) {
        advance();
        ExprPtr index = makeExpr(ExprKind::Index, e->span);
        int inner = h;
        do {
          index->indices.push_back(parseExpr());
          inner = std::max(inner, height_);
        } while (accept(K::Comma));
        SourceSpan close = cur().span;
        expect(K::RBracket, "to close the index");
        index->span = SourceSpan::cover(e->span, close);
        index->operand = std::move(e);
        e = std::move(index);
        setHeight(inner + 1);
      } else if (at(K::Caret)) {
        SourceSpan caret = advance().span;
        ExprPtr deref = makeExpr(ExprKind::Deref, SourceSpan::cover(e->span, caret));
        deref->operand = std::move(e);
        e = std::move(deref);
        setHeight(h + 1);
      } else if (at(K::LParen)) {
        ExprPtr call = makeExpr(ExprKind::Call, e->span);
        SourceSpan close;
        call->args = parseCallArgs(close);
        int inner = std::max(h, height_);
        call->span = SourceSpan::cover(e->span, close);
        call->operand = std::move(e);
        e = operatorCall(std::move(call));
        setHeight(inner + 1);
      } else {
        height_ = h;
        return e;
      }
      h = height_;
    }
  }

  ExprPtr parsePrimary() {
    const Token& tok = cur();
    height_ = 1;
    if (isLiteralToken(tok.kind)) {
      advance();
      return literalExpr(tok);
    }
    switch (tok.kind) {
      case K::Identifier: {
        advance();
        if (at(K::Hash) && peek(1).kind == K::Identifier) {  // State#Idle
          advance();
          const Token& value = advance();
          ExprPtr e = makeExpr(ExprKind::Name, SourceSpan::cover(tok.span, value.span));
          e->text = std::string(tok.text) + "#" + std::string(value.text);
          return e;
        }
        return nameExpr(tok);
      }
      case K::LParen: {
        advance();
        ExprPtr inner = parseExpr();
        SourceSpan close = cur().span;
        expect(K::RParen, "to close '('");
        inner->span = SourceSpan::cover(tok.span, close);
        return inner;
      }
      case K::KwAnd:
      case K::KwOr:
      case K::KwXor:
      case K::KwMod:
        // IEC's functional form of an operator, `AND(a, b, c)`: the standard function of that name.
        if (peek(1).kind == K::LParen) {
          advance();
          ExprPtr e = makeExpr(ExprKind::Name, tok.span);
          e->text = tokenKindName(tok.kind);
          return e;
        }
        fail("expected an expression, found " + describe(tok));
      case K::DirectAddress: fail("direct address " + describe(tok) + " can only be used after AT in a declaration");
      default: fail("expected an expression, found " + describe(tok));
    }
  }

  // At '('; parses the argument list through ')'. `close` receives the span of ')'.
  std::vector<Argument> parseCallArgs(SourceSpan& close) {
    advance();  // '('
    std::vector<Argument> args;
    int h = 0;
    if (!at(K::RParen)) {
      for (;;) {
        args.push_back(parseArgument());
        h = std::max(h, height_);
        if (!accept(K::Comma)) break;
      }
    }
    close = cur().span;
    expect(K::RParen, "to close the argument list");
    height_ = h;  // the tallest argument
    return args;
  }

  Argument parseArgument() {
    Argument a;
    SourceSpan start = cur().span;
    if (at(K::Identifier) && peek(1).kind == K::Assign) {
      a.name = advance().text;
      advance();
    } else if (at(K::Identifier) && peek(1).kind == K::Arrow) {
      a.name = advance().text;
      advance();
      a.isOutput = true;
    } else if (at(K::KwNot) && peek(1).kind == K::Identifier && peek(2).kind == K::Arrow) {
      advance();
      a.name = advance().text;
      advance();
      a.isOutput = true;
      a.negatedOutput = true;
    }
    a.value = parseExpr();
    a.span = SourceSpan::cover(start, a.value->span);
    return a;
  }

  // ------------------------------------------------------------------ statements

  StmtList parseStatementList(bool stopAtCaseLabel = false) {
    StmtList out;
    for (;;) {
      K k = kind();
      if (k == K::EndOfFile || isPouLevel(k)) break;
      if (isCloser(k)) {
        if (open_[idx(k)] > 0) break;
        errorHere(quoted(k) + " without a matching " + closerOwner(k));
        advance();
        continue;
      }
      if (stopAtCaseLabel && looksLikeCaseLabel()) break;
      release();
      size_t before = pos_;
      try {
        out.push_back(parseStatement());
      } catch (const SyntaxError&) {
        syncStatement();
      }
      if (pos_ == before && !atEnd() && !isPouLevel(kind()) && !isCloser(kind())) advance();
    }
    return out;
  }

  std::unique_ptr<Stmt> parseStatement() {
    DepthGuard guard(*this);
    const Token& tok = cur();
    switch (tok.kind) {
      case K::Semicolon: advance(); return std::make_unique<Stmt>(StmtKind::Empty, tok.span);
      case K::KwIf: return parseIf();
      case K::KwCase: return parseCase();
      case K::KwFor: return parseFor();
      case K::KwWhile: return parseWhile();
      case K::KwRepeat: return parseRepeat();
      case K::KwExit:
      case K::KwContinue:
      case K::KwReturn: {
        advance();
        StmtKind sk = tok.kind == K::KwExit       ? StmtKind::Exit
                      : tok.kind == K::KwContinue ? StmtKind::Continue
                                                  : StmtKind::Return;
        auto s = std::make_unique<Stmt>(sk, tok.span);
        expectSemicolon("after " + quoted(tok.kind));
        return s;
      }
      case K::Identifier:
      // `(p + i)^ := x;`, `(a)^.f := 1;` (CODESYS): a target that starts with a parenthesis.
      case K::LParen: return parseAssignOrCall();
      default: fail("expected a statement, found " + describe(tok));
    }
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseAssignOrCall() {
    ExprPtr target = parsePostfix();
    // `r REF= x` (CODESYS): binds the REFERENCE TO r to x.
    const bool refAssign = at(K::Identifier) && equalsIgnoreCase(cur().text, "REF") && peek(1).kind == K::Eq;
    if (refAssign) advance();
    if (refAssign ? accept(K::Eq) : accept(K::Assign)) {
      ExprPtr value = parseExpr();
      auto s = std::make_unique<Stmt>(StmtKind::Assign, SourceSpan::cover(target->span, value->span));
      s->target = std::move(target);
      s->value = std::move(value);
      s->refAssign = refAssign;
      expectSemicolon(refAssign ? "after REF=" : "after assignment");
      return s;
    }
    if (target->kind == ExprKind::Call) {
      auto s = std::make_unique<Stmt>(StmtKind::Call, target->span);
      s->value = std::move(target);
      expectSemicolon("after call");
      return s;
    }
    fail(expectedMsg(K::Assign, "in assignment"));
  }

  // `IF cond THEN` style header expression with local recovery.
  ExprPtr parseHeaderExpr(K after, std::string_view context) {
    ExprPtr e;
    try {
      e = parseExpr();
    } catch (const SyntaxError&) {
      recoverHeader(after);
      return e;
    }
    if (accept(after)) return e;
    errorHere(expectedMsg(after, context));
    recoverHeader(after);
    return e;
  }

  void closeBlock(Stmt& s, K endKw, const Token& opener) {
    if (at(endKw)) {
      s.span = SourceSpan::cover(s.span, advance().span);
      accept(K::Semicolon);
      return;
    }
    errorHere(missingEnd(endKw, opener));
    s.span = SourceSpan::cover(s.span, prevSpan());
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseIf() {
    const Token ifTok = advance();  // a copy: the body releases tokens
    auto s = std::make_unique<Stmt>(StmtKind::If, ifTok.span);
    OpenBlock open(*this, {K::KwElsif, K::KwElse, K::KwEndIf});
    IfBranch first;
    first.condition = parseHeaderExpr(K::KwThen, "after the IF condition");
    first.body = parseStatementList();
    s->branches.push_back(std::move(first));
    for (;;) {
      if (at(K::KwElsif)) {
        if (s->hasElse) errorHere("'ELSIF' after 'ELSE'");
        advance();
        IfBranch b;
        b.condition = parseHeaderExpr(K::KwThen, "after the ELSIF condition");
        b.body = parseStatementList();
        s->branches.push_back(std::move(b));
      } else if (at(K::KwElse)) {
        if (s->hasElse) {
          errorHere("second 'ELSE' in IF");
        } else {
          s->elseSpan = cur().span;
        }
        s->hasElse = true;
        advance();
        StmtList body = parseStatementList();
        for (auto& st : body) s->elseBody.push_back(std::move(st));
      } else {
        break;
      }
    }
    closeBlock(*s, K::KwEndIf, ifTok);
    return s;
  }

  bool looksLikeCaseLabel() const {
    K k = kind();
    if (isLiteralToken(k)) return true;
    if (k == K::Minus || k == K::Plus) return isLiteralToken(peek(1).kind);
    if (k == K::Identifier) {
      size_t n = 1;
      // Color#Red and Color.Red
      if ((peek(1).kind == K::Hash || peek(1).kind == K::Dot) && peek(2).kind == K::Identifier) n = 3;
      K next = peek(n).kind;
      return next == K::Colon || next == K::Comma || next == K::DotDot;
    }
    return false;
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseCase() {
    const Token caseTok = advance();  // a copy: the body releases tokens
    auto s = std::make_unique<Stmt>(StmtKind::Case, caseTok.span);
    OpenBlock open(*this, {K::KwElse, K::KwEndCase});
    s->value = parseHeaderExpr(K::KwOf, "after the CASE selector");
    for (;;) {
      K k = kind();
      if (k == K::EndOfFile || isPouLevel(k) || k == K::KwElse || k == K::KwEndCase) break;
      if (isCloser(k)) {
        if (open_[idx(k)] > 0) break;
        errorHere(quoted(k) + " without a matching " + closerOwner(k));
        advance();
        continue;
      }
      if (looksLikeCaseLabel()) {
        s->cases.push_back(parseCaseBranch());
        continue;
      }
      // A statement before the first label: report it and skip it.
      errorHere("expected a case label such as '1:' or 'Idle:', found " + describe(cur()));
      size_t before = pos_;
      try {
        parseStatement();
      } catch (const SyntaxError&) {
        syncStatement();
      }
      if (pos_ == before && !atEnd() && !isPouLevel(kind()) && !isCloser(kind())) advance();
    }
    if (at(K::KwElse)) {
      s->hasElse = true;
      s->elseSpan = advance().span;
      s->elseBody = parseStatementList();
    }
    closeBlock(*s, K::KwEndCase, caseTok);
    return s;
  }

  CaseBranch parseCaseBranch() {
    CaseBranch b;
    SourceSpan start = cur().span;
    try {
      for (;;) {
        CaseLabel label;
        label.lower = parseExpr();
        if (accept(K::DotDot)) label.upper = parseExpr();
        label.span = SourceSpan::cover(label.lower->span, (label.upper ? label.upper : label.lower)->span);
        b.labels.push_back(std::move(label));
        if (!accept(K::Comma)) break;
      }
      expect(K::Colon, "after the case label");
    } catch (const SyntaxError&) {
      while (!atEnd()) {
        K k = kind();
        if (k == K::Colon) {
          advance();
          break;
        }
        if (k == K::Semicolon || isPouLevel(k) || isCloser(k) || isStatementKw(k)) break;
        advance();
      }
    }
    b.body = parseStatementList(/*stopAtCaseLabel=*/true);
    b.span = SourceSpan::cover(start, b.body.empty() ? prevSpan() : b.body.back()->span);
    return b;
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseFor() {
    const Token forTok = advance();  // a copy: the body releases tokens
    auto s = std::make_unique<Stmt>(StmtKind::For, forTok.span);
    OpenBlock open(*this, {K::KwEndFor});
    try {
      // An element or field may be the control variable (`FOR a[1] := ...`, as TwinCAT compiles
      // it); the analyzer checks that it is a variable at a fixed place.
      if (!at(K::Identifier)) expectIdent("the FOR control variable");
      s->target = parsePostfix();
      expect(K::Assign, "after the FOR control variable");
      s->value = parseExpr();
      expect(K::KwTo, "after the FOR start value");
      s->to = parseExpr();
      if (accept(K::KwBy)) s->by = parseExpr();
      expect(K::KwDo, "after the FOR range");
    } catch (const SyntaxError&) {
      recoverHeader(K::KwDo);
    }
    s->body = parseStatementList();
    closeBlock(*s, K::KwEndFor, forTok);
    return s;
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseWhile() {
    const Token whileTok = advance();  // a copy: the body releases tokens
    auto s = std::make_unique<Stmt>(StmtKind::While, whileTok.span);
    OpenBlock open(*this, {K::KwEndWhile});
    s->value = parseHeaderExpr(K::KwDo, "after the WHILE condition");
    s->body = parseStatementList();
    closeBlock(*s, K::KwEndWhile, whileTok);
    return s;
  }

  // Not inlined into parseStatement: keeps the frames of nested statements small.
  [[gnu::noinline]] std::unique_ptr<Stmt> parseRepeat() {
    const Token repeatTok = advance();  // a copy: the body releases tokens
    auto s = std::make_unique<Stmt>(StmtKind::Repeat, repeatTok.span);
    OpenBlock open(*this, {K::KwUntil, K::KwEndRepeat});
    s->body = parseStatementList();
    if (accept(K::KwUntil)) {
      try {
        s->value = parseExpr();
      } catch (const SyntaxError&) {
        while (!atEnd() && !at(K::KwEndRepeat) && !at(K::Semicolon) && !isPouLevel(kind()) && !isStatementKw(kind()))
          advance();
      }
    } else {
      errorHere(expectedMsg(K::KwUntil, "to end the REPEAT body"));
    }
    closeBlock(*s, K::KwEndRepeat, repeatTok);
    return s;
  }

  // ------------------------------------------------------------------ types and initial values

  TypeRefPtr namedType(const Token& tok) {
    auto t = std::make_unique<TypeRef>();
    t->kind = TypeRefKind::Named;
    t->span = tok.span;
    t->name = tok.text;
    return t;
  }

  bool enumAhead() const {
    if (peek(1).kind != K::Identifier) return false;
    K k = peek(2).kind;
    return k == K::Comma || k == K::Assign || k == K::RParen;
  }

  TypeRefPtr parseTypeRef(bool inTypeDecl) {
    DepthGuard guard(*this);
    auto t = std::make_unique<TypeRef>();
    SourceSpan start = cur().span;
    switch (kind()) {
      case K::KwArray: {
        advance();
        t->kind = TypeRefKind::Array;
        expect(K::LBracket, "after 'ARRAY'");
        do {
          ArrayDim d;
          if (at(K::Star)) {  // ARRAY[*]: the bounds come with each call (VAR_IN_OUT)
            advance();
            t->open = true;
            t->dims.push_back(std::move(d));
            continue;
          }
          d.lower = parseExpr();
          expect(K::DotDot, "in the array range");
          d.upper = parseExpr();
          t->dims.push_back(std::move(d));
        } while (accept(K::Comma));
        if (t->open &&
            std::any_of(t->dims.begin(), t->dims.end(), [](const ArrayDim& d) { return d.lower != nullptr; }))
          errorHere("an ARRAY[*] has '*' for every dimension");
        expect(K::RBracket, "to close the array ranges");
        expect(K::KwOf, "after the array ranges");
        t->element = parseTypeRef(false);
        break;
      }
      case K::KwRefTo:
        advance();
        t->kind = TypeRefKind::RefTo;
        t->element = parseTypeRef(false);
        break;

      case K::KwStruct:
      case K::KwUnion: {
        // UNION ... END_UNION (CODESYS): a STRUCT whose fields all start at its first byte.
        const bool isUnion = at(K::KwUnion);
        if (!inTypeDecl)
          errorHere(std::string("a ") + (isUnion ? "UNION" : "STRUCT") + " can only be declared in a TYPE block");
        const Token& structTok = advance();
        t->kind = TypeRefKind::Struct;
        t->isUnion = isUnion;
        parseStructFields(*t, structTok);
        break;
      }
      case K::LParen:
        if (!inTypeDecl) errorHere("an enumeration can only be declared in a TYPE block");
        t->kind = TypeRefKind::Enum;
        parseEnumValues(*t);
        if (at(K::Identifier)) t->element = namedType(advance());
        break;
      case K::Identifier: {
        // POINTER TO T (CODESYS): a reference with byte arithmetic.
        if (equalsIgnoreCase(cur().text, "POINTER") && peek(1).kind == K::KwTo) {
          advance();
          advance();
          t->kind = TypeRefKind::PointerTo;
          t->element = parseTypeRef(false);
          break;
        }
        // REFERENCE TO T (CODESYS): an address every use dereferences, bound with REF=.
        if (equalsIgnoreCase(cur().text, "REFERENCE") && peek(1).kind == K::KwTo) {
          advance();
          advance();
          t->kind = TypeRefKind::Reference;
          t->element = parseTypeRef(false);
          break;
        }
        const Token& name = advance();
        const bool wide = equalsIgnoreCase(name.text, "WSTRING");
        if (wide || equalsIgnoreCase(name.text, "STRING")) {
          t->kind = TypeRefKind::String;
          t->wide = wide;
          if (accept(K::LBracket)) {
            t->length = parseExpr();
            expect(K::RBracket, "after the STRING length");
          } else if (accept(K::LParen)) {
            t->length = parseExpr();
            expect(K::RParen, "after the STRING length");
          }
          break;
        }
        if (at(K::LParen)) {
          if (enumAhead()) {  // INT (A, B := 5)
            if (!inTypeDecl) errorHere("an enumeration can only be declared in a TYPE block");
            t->kind = TypeRefKind::Enum;
            t->element = namedType(name);
            parseEnumValues(*t);
          } else {  // INT (0..100)
            advance();
            t->kind = TypeRefKind::Subrange;
            t->element = namedType(name);
            ArrayDim d;
            d.lower = parseExpr();
            // `o : Otg(0, 0)` (CODESYS): arguments of the block's FB_init, not a subrange.
            if (at(K::Comma) || at(K::RParen) || at(K::Assign))
              fail("instance initialisation arguments ('" + std::string(name.text) +
                   "(...)' calling FB_init) are not supported yet; set the inputs after the declaration");
            expect(K::DotDot, "in the subrange");
            d.upper = parseExpr();
            expect(K::RParen, "to close the subrange");
            t->dims.push_back(std::move(d));
          }
          break;
        }
        t->kind = TypeRefKind::Named;
        t->name = name.text;
        break;
      }
      default: fail("expected a type, found " + describe(cur()));
    }
    t->span = SourceSpan::cover(start, prevSpan());
    return t;
  }

  void parseEnumValues(TypeRef& t) {
    expect(K::LParen, "to start the enumeration");
    for (;;) {
      const Token& name = expectIdent("an enumeration value");
      EnumValue v;
      v.name = name.text;
      v.span = name.span;
      if (accept(K::Assign)) v.value = parseExpr();
      t.enumValues.push_back(std::move(v));
      if (!accept(K::Comma)) break;
    }
    expect(K::RParen, "to close the enumeration");
  }

  void parseStructFields(TypeRef& t, const Token& structTok) {
    for (;;) {
      K k = kind();
      const K endKw = t.isUnion ? K::KwEndUnion : K::KwEndStruct;
      if (k == endKw) {
        advance();
        return;
      }
      if (k == K::EndOfFile || (isPouLevel(k) && k != K::KwStruct && k != K::KwUnion)) {
        errorHere(missingEnd(endKw, structTok));
        return;
      }
      size_t before = pos_;
      try {
        parseVarDecl(t.fields, VarSection::Var, false, false);
      } catch (const SyntaxError&) {
        syncDecl();
      }
      if (pos_ == before && !atEnd()) advance();
    }
  }

  InitPtr parseInitializer() {
    DepthGuard guard(*this);
    auto init = std::make_unique<Initializer>();
    SourceSpan start = cur().span;
    if (at(K::LBracket)) {
      advance();
      init->kind = InitKind::Array;
      if (!at(K::RBracket)) {
        for (;;) {
          ArrayInitItem item;
          if (at(K::IntLiteral) && peek(1).kind == K::LParen) {  // 3(0)
            item.repeat = literalExpr(advance());
            advance();
            if (!at(K::RParen)) item.value = parseInitializer();
            expect(K::RParen, "to close the repeated value");
          } else {
            item.value = parseInitializer();
          }
          init->arrayItems.push_back(std::move(item));
          if (!accept(K::Comma)) break;
        }
      }
      expect(K::RBracket, "to close the array initializer");
    } else if (at(K::LParen) && peek(1).kind == K::Identifier && peek(2).kind == K::Assign) {
      advance();
      init->kind = InitKind::Struct;
      for (;;) {
        const Token& name = expectIdent("a member name");
        expect(K::Assign, "after the member name");
        StructInitItem item;
        item.name = name.text;
        item.span = name.span;
        item.value = parseInitializer();
        init->structItems.push_back(std::move(item));
        if (!accept(K::Comma)) break;
      }
      expect(K::RParen, "to close the structure initializer");
    } else {
      init->kind = InitKind::Expr;
      init->expr = parseExpr();
    }
    init->span = SourceSpan::cover(start, prevSpan());
    return init;
  }

  // ------------------------------------------------------------------ declarations

  static VarSection sectionFor(K k) {
    switch (k) {
      case K::KwVarInput: return VarSection::Input;
      case K::KwVarOutput: return VarSection::Output;
      case K::KwVarInOut: return VarSection::InOut;
      case K::KwVarTemp: return VarSection::Temp;
      case K::KwVarGlobal: return VarSection::Global;
      case K::KwVarExternal: return VarSection::External;
      case K::KwVarConfig: return VarSection::Config;
      default: return VarSection::Var;
    }
  }

  void closeSection(const Token& opener) {
    if (accept(K::KwEndVar)) {
      acceptTrailingSemicolon();
      return;
    }
    errorHere(missingEnd(K::KwEndVar, opener));
  }

  // A declaration line that is really a statement (END_VAR forgotten before the body)?
  bool statementAhead() const {
    K k = kind();
    if (isStatementKw(k) || isCloser(k)) return true;
    if (k != K::Identifier) return false;
    K n = peek(1).kind;
    return n == K::Assign || n == K::LParen || n == K::Dot || n == K::LBracket || n == K::Caret;
  }

  void parseVarSection(std::vector<VarDecl>& out) {
    const Token sectionTok = advance();  // a copy: the declarations release tokens
    VarSection section = sectionFor(sectionTok.kind);
    bool constant = false, retain = false;
    for (;;) {
      if (accept(K::KwConstant)) {
        constant = true;
      } else if (accept(K::KwRetain) || accept(K::KwPersistent)) {
        retain = true;
      } else if (accept(K::KwNonRetain)) {
        retain = false;
      } else {
        break;
      }
    }
    for (;;) {
      K k = kind();
      if (k == K::KwEndVar || k == K::EndOfFile || isPouLevel(k) || statementAhead()) break;
      release();
      size_t before = pos_;
      try {
        parseVarDecl(out, section, constant, retain);
      } catch (const SyntaxError&) {
        syncDecl();
      }
      if (pos_ == before && !atEnd() && !isPouLevel(kind())) advance();
    }
    closeSection(sectionTok);
  }

  void parseVarDecl(std::vector<VarDecl>& out, VarSection section, bool constant, bool retain) {
    std::vector<const Token*> names;
    names.push_back(&expectIdent("a variable name"));
    while (accept(K::Comma)) names.push_back(&expectIdent("a variable name after ','"));
    std::optional<Location> location;
    if (at(K::KwAt)) {
      size_t atIndex = pos_;
      advance();
      if (!at(K::DirectAddress)) fail("expected a direct address such as %IX0.0 after 'AT', found " + describe(cur()));
      location = locationOf(advance());
      if (names.size() > 1) errorAt(atIndex, "'AT' needs a single variable name");
    }
    expect(K::Colon, names.size() > 1 ? "after the variable names" : "after the variable name");
    TypeRefPtr type = parseTypeRef(false);
    InitPtr init;
    if (accept(K::Assign)) init = parseInitializer();
    for (size_t i = 0; i < names.size(); ++i) {
      bool last = i + 1 == names.size();
      VarDecl d;
      d.name = names[i]->text;
      d.span = names[i]->span;
      d.section = section;
      d.type = last ? std::move(type) : cloneType(type);
      d.init = last ? std::move(init) : cloneInit(init);
      d.location = location;
      d.constant = constant;
      d.retain = retain;
      out.push_back(std::move(d));
    }
    expectSemicolon("after the declaration");
  }

  void parseTypeBlock(CompilationUnit& unit) {
    const Token& typeTok = advance();
    for (;;) {
      K k = kind();
      if (k == K::KwEndType) {
        advance();
        acceptTrailingSemicolon();
        return;
      }
      if (k == K::EndOfFile || isPouLevel(k)) {
        errorHere(missingEnd(K::KwEndType, typeTok));
        return;
      }
      size_t before = pos_;
      try {
        const Token& name = expectIdent("a type name");
        expect(K::Colon, "after the type name");
        TypeDecl d;
        d.name = name.text;
        d.span = name.span;
        d.type = parseTypeRef(true);
        if (accept(K::Assign)) d.init = parseInitializer();
        bool isStruct = d.type->kind == TypeRefKind::Struct;
        unit.types.push_back(std::move(d));
        if (isStruct)
          acceptTrailingSemicolon();
        else
          expectSemicolon("after the type declaration");
      } catch (const SyntaxError&) {
        syncDecl();
      }
      if (pos_ == before && !atEnd() && !isPouLevel(kind())) advance();
    }
  }

  void parseVarConfig(std::vector<VarConfigEntry>& out) {
    const Token& sectionTok = advance();
    for (;;) {
      K k = kind();
      if (k == K::KwEndVar || k == K::EndOfFile || isPouLevel(k)) break;
      size_t before = pos_;
      try {
        VarConfigEntry e;
        const Token& first = expectIdent("an instance path");
        e.path.emplace_back(first.text);
        SourceSpan last = first.span;
        while (accept(K::Dot)) {
          const Token& n = expectIdent("a name after '.'");
          e.path.emplace_back(n.text);
          last = n.span;
        }
        e.span = SourceSpan::cover(first.span, last);
        // `path AT %IX0.1 : BOOL [:= init];` gives an address, `path : INT := 5;` an initial value.
        if (accept(K::KwAt)) {
          if (!at(K::DirectAddress))
            fail("expected a direct address such as %IX0.0 after 'AT', found " + describe(cur()));
          e.location = locationOf(advance());
          expect(K::Colon, "after the address");
        } else {
          expect(K::Colon, "or AT and an address after the instance path");
        }
        e.type = parseTypeRef(false);
        if (accept(K::Assign))
          e.init = parseInitializer();
        else if (!e.location)
          fail("expected ':=' and an initial value in a VAR_CONFIG entry without an address, found " + describe(cur()));
        out.push_back(std::move(e));
        expectSemicolon("after the VAR_CONFIG entry");
      } catch (const SyntaxError&) {
        syncDecl();
      }
      if (pos_ == before && !atEnd() && !isPouLevel(kind())) advance();
    }
    closeSection(sectionTok);
  }

  // ------------------------------------------------------------------ POUs

  static bool isModifier(const Token& tok) {
    return isWord(tok, "PUBLIC") || isWord(tok, "PRIVATE") || isWord(tok, "PROTECTED") || isWord(tok, "INTERNAL") ||
           isWord(tok, "ABSTRACT") || isWord(tok, "FINAL") || isWord(tok, "OVERRIDE");
  }

  // `PUBLIC ABSTRACT` and friends before a name (or before PROPERTY): access and inheritance.
  void parseModifiers(Pou& p, K next = K::Identifier) {
    while (isModifier(cur()) && (peek(1).kind == next || isModifier(peek(1)))) {
      const Token& m = advance();
      if (isWord(m, "PUBLIC"))
        p.access = Access::Public;
      else if (isWord(m, "PRIVATE"))
        p.access = Access::Private;
      else if (isWord(m, "PROTECTED"))
        p.access = Access::Protected;
      else if (isWord(m, "INTERNAL"))
        p.access = Access::Internal;
      else if (isWord(m, "ABSTRACT"))
        p.isAbstract = true;
      else if (isWord(m, "FINAL"))
        p.isFinal = true;
      else
        p.isOverride = true;
    }
  }

  std::vector<NameRef> parseNameList() {
    std::vector<NameRef> names;
    do {
      if (!at(K::Identifier)) {
        errorHere("expected a name, found " + describe(cur()));
        break;
      }
      names.push_back(NameRef{std::string(cur().text), cur().span});
      advance();
    } while (accept(K::Comma));
    return names;
  }

  // `prototype`: a method of an INTERFACE (declared, never implemented there). `test`: a
  // TEST_PROGRAM or TEST_FUNCTION_BLOCK.
  Pou parsePou(PouKind pouKind, bool isClass = false, bool prototype = false, bool test = false) {
    const Token kw = advance();  // a copy: the body releases tokens
    K endKw = pouKind == PouKind::Program         ? (test ? K::KwEndTestProgram : K::KwEndProgram)
              : pouKind == PouKind::Function      ? K::KwEndFunction
              : pouKind == PouKind::Interface     ? K::KwEndInterface
              : isClass                           ? K::KwEndClass
              : pouKind == PouKind::FunctionBlock ? (test ? K::KwEndTestFunctionBlock : K::KwEndFunctionBlock)
                                                  : K::KwEndMethod;
    Pou p;
    p.kind = pouKind;
    p.isClass = isClass;
    p.test = test;
    // CODESYS and TwinCAT write access specifiers on every POU (`FUNCTION INTERNAL F : INT`,
    // `FUNCTION_BLOCK PUBLIC FB`); a project is one namespace, so PUBLIC and INTERNAL are the same.
    const size_t modifiersAt = pos_;
    const Pin pin(*this, modifiersAt);  // the modifiers' tokens, named by the errors below
    parseModifiers(p);
    for (size_t i = modifiersAt; i < pos_; ++i) {
      const Token& m = tok(i);
      const char* word = isWord(m, "ABSTRACT")    ? "ABSTRACT"
                         : isWord(m, "FINAL")     ? "FINAL"
                         : isWord(m, "OVERRIDE")  ? "OVERRIDE"
                         : isWord(m, "PRIVATE")   ? "PRIVATE"
                         : isWord(m, "PROTECTED") ? "PROTECTED"
                                                  : nullptr;
      if (!word || pouKind == PouKind::Method) continue;
      const bool access = word[0] == 'P';
      if (access)
        errorAt(i, std::string(word) + " applies to methods and properties; a " + quoted(kw.kind) +
                       " is PUBLIC or INTERNAL");
      else if (pouKind != PouKind::FunctionBlock || word[0] == 'O')
        errorAt(i, "a " + quoted(kw.kind) + " cannot be " + word);
    }
    p.isPrototype = pouKind == PouKind::Method && (prototype || p.isAbstract);
    if (at(K::Identifier)) {
      p.name = cur().text;
      p.span = advance().span;
    } else {
      errorHere("expected a name after " + quoted(kw.kind) + ", found " + describe(cur()));
      p.span = kw.span;
    }
    if (pouKind == PouKind::FunctionBlock || pouKind == PouKind::Interface) {
      if (accept(K::KwExtends)) {
        p.extends = parseNameList();
        if (pouKind == PouKind::FunctionBlock && p.extends.size() > 1)
          report(p.extends[1].span, "a " + std::string(isClass ? "CLASS" : "FUNCTION_BLOCK") + " extends one base",
                 pos_);
      }
      if (pouKind == PouKind::FunctionBlock && accept(K::KwImplements)) p.implements = parseNameList();
    }
    if (pouKind == PouKind::Function || pouKind == PouKind::Method) {
      if (accept(K::Colon)) {
        try {
          p.returnType = parseTypeRef(false);
        } catch (const SyntaxError&) {
          uint32_t line = prevSpan().endLine;
          while (!atEnd() && cur().span.line == line && !isPouLevel(kind())) advance();
        }
      }
      // Without `: type` a FUNCTION returns nothing, as CODESYS allows (a call is a statement).
    }
    // TwinCAT ends a header with ';' at times (`METHOD PUBLIC SetBuffer : BOOL;`, TcUnit): it
    // ends nothing, and the declarations follow.
    accept(K::Semicolon);
    parsePouBody(p, endKw, kw);
    return p;
  }

  // `PROPERTY [access] Name : T  GET ... END_GET  SET ... END_SET  END_PROPERTY` (the access
  // specifier may also stand before PROPERTY): its accessors become methods of `owner` (a GET
  // returns T under the property's name, a SET has the input of that name).
  void parseProperty(Pou& owner, Pou modifiers) {
    const Token kw = advance();  // a copy: the accessors release tokens
    parseModifiers(modifiers);
    if (!at(K::Identifier)) {
      errorHere("expected a name after 'PROPERTY', found " + describe(cur()));
      while (!atEnd() && !at(K::KwEndProperty) && !isTopLevelItem(kind())) advance();
      accept(K::KwEndProperty);
      return;
    }
    const std::string name(cur().text);
    const SourceSpan nameSpan = advance().span;
    size_t typePos = pos_;
    const Pin pin(*this, typePos);  // parsed again for the second accessor (typeAgain)
    TypeRefPtr type;
    if (!accept(K::Colon)) {
      errorHere(expectedMsg(K::Colon, "and a type after the property name"));
    } else {
      typePos = pos_;
      const size_t errorsBefore = errors_;
      try {
        type = parseTypeRef(false);
      } catch (const SyntaxError&) {
      }
      if (errors_ != errorsBefore) type.reset();
    }
    // The second accessor gets its own copy of the type: parsed again from the same tokens.
    auto typeAgain = [&, parsed = type != nullptr]() -> TypeRefPtr {
      if (!parsed) return nullptr;
      const size_t resume = pos_;
      pos_ = typePos;
      TypeRefPtr again = parseTypeRef(false);
      pos_ = resume;
      return again;
    };
    auto accessor = [&](Accessor which, const SourceSpan& span) {
      Pou a;
      a.kind = PouKind::Method;
      a.name = name;
      a.span = span;
      a.accessor = which;
      a.access = modifiers.access;
      a.isAbstract = modifiers.isAbstract;
      a.isFinal = modifiers.isFinal;
      a.isOverride = modifiers.isOverride;
      a.isPrototype = owner.kind == PouKind::Interface || modifiers.isAbstract;
      return a;
    };
    bool sawGet = false, sawSet = false;
    std::vector<Pou> made;
    for (;;) {
      if (isWord(cur(), "GET") || isWord(cur(), "SET")) {
        const bool get = isWord(cur(), "GET");
        const Token opener = advance();  // a copy: the accessor's body releases tokens
        if ((get && sawGet) || (!get && sawSet))
          report(opener.span, std::string(get ? "GET" : "SET") + " is declared twice", pos_ - 1);
        (get ? sawGet : sawSet) = true;
        Pou a = accessor(get ? Accessor::Get : Accessor::Set, nameSpan);
        parsePouBody(a, get ? K::KwEndGet : K::KwEndSet, opener);
        made.push_back(std::move(a));
        continue;
      }
      if (at(K::KwEndProperty)) {
        advance();
        acceptTrailingSemicolon();
        break;
      }
      if (atEnd() || isPouLevel(kind())) {
        errorHere(missingEnd(K::KwEndProperty, kw, name));
        break;
      }
      errorHere("expected GET, SET or 'END_PROPERTY', found " + describe(cur()));
      advance();
    }
    if (!sawGet && !sawSet && owner.kind == PouKind::Interface) {
      made.push_back(accessor(Accessor::Get, nameSpan));
      made.push_back(accessor(Accessor::Set, nameSpan));
    }
    bool first = true;
    for (Pou& a : made) {
      TypeRefPtr t = first ? std::move(type) : typeAgain();
      first = false;
      if (a.accessor == Accessor::Get) {
        a.returnType = std::move(t);
      } else if (t) {
        VarDecl v;
        v.name = name;
        v.span = nameSpan;
        v.section = VarSection::Input;
        v.type = std::move(t);
        a.vars.insert(a.vars.begin(), std::move(v));
      }
      owner.methods.push_back(std::move(a));
    }
  }

  static bool isOopEnd(K k) {
    return k == K::KwEndInterface || k == K::KwEndClass || k == K::KwEndProperty || k == K::KwEndGet ||
           k == K::KwEndSet;
  }

  // `ACTION Name: statements END_ACTION` (the ':' is optional): statements only; it shares the
  // variables of the POU it stands in.
  Pou parseAction() {
    const Token kw = advance();  // a copy: the body releases tokens
    Pou a;
    a.kind = PouKind::Method;
    a.action = true;
    if (at(K::Identifier)) {
      a.name = cur().text;
      a.span = advance().span;
    } else {
      errorHere("expected a name after 'ACTION', found " + describe(cur()));
      a.span = kw.span;
    }
    accept(K::Colon);
    for (;;) {
      const K k = kind();
      if (k == K::KwEndAction) {
        a.endSpan = advance().span;
        acceptTrailingSemicolon();
        return a;
      }
      if (isVarSectionKw(k)) {
        errorHere("an ACTION has no variables of its own; declare them in its PROGRAM or FUNCTION_BLOCK");
        std::vector<VarDecl> ignored;
        parseVarSection(ignored);
        continue;
      }
      if (k == K::EndOfFile || isPouLevel(k)) {
        errorHere(missingEnd(K::KwEndAction, kw, a.name));
        return a;
      }
      size_t before = pos_;
      StmtList chunk = parseStatementList();
      for (auto& s : chunk) a.body.push_back(std::move(s));
      if (pos_ == before && !atEnd() && !isPouLevel(kind())) {
        errorHere("unexpected " + describe(cur()));
        advance();
      }
    }
  }

  void parsePouBody(Pou& p, K endKw, const Token& opener) {
    bool sawStatements = false;
    const bool bodyless = p.kind == PouKind::Interface || p.isPrototype;
    for (;;) {
      K k = kind();
      if (k == endKw) {
        p.endSpan = advance().span;
        acceptTrailingSemicolon();
        return;
      }
      if (k == K::EndOfFile) {
        errorHere(missingEnd(endKw, opener, p.name));
        return;
      }
      if (k == K::KwVarConfig) {
        errorHere("VAR_CONFIG is only allowed in a CONFIGURATION");
        std::vector<VarConfigEntry> ignored;
        parseVarConfig(ignored);
        continue;
      }
      if (isVarSectionKw(k)) {
        if (sawStatements) errorHere("variable declarations must come before the statements");
        if (p.kind == PouKind::Interface) errorHere("an INTERFACE declares no variables");
        if (k == K::KwVarInst) {
          // A method's VAR_INST (CODESYS) lives in the instance of its block and keeps its value
          // between calls: it becomes a variable of that block (under its own name).
          if (p.kind != PouKind::Method || p.action) errorHere("VAR_INST is only allowed in a METHOD");
          parseVarSection(p.kind == PouKind::Method ? methodInstanceVars_ : p.vars);
        } else if (k == K::KwVarStat && p.kind != PouKind::Program) {
          // VAR_STAT (CODESYS): one variable for every call and every instance, kept between
          // them: a global of the project (under its own name). In a PROGRAM, a VAR is the same.
          std::vector<VarDecl> statics;
          parseVarSection(statics);
          for (VarDecl& v : statics) {
            v.section = VarSection::Global;
            staticGlobals_.push_back(std::move(v));
          }
        } else {
          parseVarSection(p.vars);
        }
        continue;
      }
      const bool modifiedProperty = isModifier(cur()) && [&] {
        size_t i = 1;
        while (isModifier(peek(i))) ++i;
        return peek(i).kind == K::KwProperty;
      }();
      // A PROGRAM has methods and properties too (CODESYS): they run on its instance, as its
      // actions do.
      const bool hasMethods =
          p.kind == PouKind::FunctionBlock || p.kind == PouKind::Interface || p.kind == PouKind::Program;
      if (k == K::KwProperty || modifiedProperty) {
        if (!hasMethods) {
          if (p.kind == PouKind::Method) {  // END_METHOD forgotten
            errorHere(missingEnd(endKw, opener, p.name));
            return;
          }
          errorHere("PROPERTY is only allowed inside a PROGRAM, FUNCTION_BLOCK, CLASS or INTERFACE");
        }
        Pou modifiers;
        parseModifiers(modifiers, K::KwProperty);
        Pou sink;
        sink.kind = p.kind;
        parseProperty(hasMethods ? p : sink, std::move(modifiers));
        continue;
      }
      if (k == K::KwAction) {
        if (p.kind == PouKind::Method) {  // END_METHOD or END_ACTION forgotten
          errorHere(missingEnd(endKw, opener, p.name));
          return;
        }
        size_t actionIndex = pos_;
        const Pin pin(*this, actionIndex);  // for the error below, after its body
        Pou a = parseAction();
        if (p.kind == PouKind::Program || p.kind == PouKind::FunctionBlock)
          p.methods.push_back(std::move(a));
        else
          errorAt(actionIndex, "ACTION is only allowed inside a PROGRAM or FUNCTION_BLOCK");
        continue;
      }
      if (k == K::KwEndAction) {
        errorHere("'END_ACTION' without a matching 'ACTION'");
        advance();
        continue;
      }
      if (k == K::KwMethod) {
        if (p.kind == PouKind::Method) {  // END_METHOD forgotten
          errorHere(missingEnd(endKw, opener, p.name));
          return;
        }
        size_t methodIndex = pos_;
        const Pin pin(*this, methodIndex);  // for the error below, after its body
        const bool inInterface = p.kind == PouKind::Interface;
        Pou m = parsePou(PouKind::Method, false, inInterface);
        if (!methodInstanceVars_.empty() && (p.kind == PouKind::FunctionBlock || p.kind == PouKind::Program) &&
            !inInterface)
          for (VarDecl& v : methodInstanceVars_) p.vars.push_back(std::move(v));
        else if (!methodInstanceVars_.empty())
          report(methodInstanceVars_.front().span,
                 "VAR_INST is only allowed in a METHOD of a PROGRAM, FUNCTION_BLOCK or CLASS", kNoToken);
        methodInstanceVars_.clear();
        if (hasMethods)
          p.methods.push_back(std::move(m));
        else
          errorAt(methodIndex, "METHOD is only allowed inside a PROGRAM, FUNCTION_BLOCK, CLASS or INTERFACE");
        continue;
      }
      if (k == K::KwEndProgram || k == K::KwEndFunction || k == K::KwEndFunctionBlock || k == K::KwEndMethod ||
          k == K::KwEndTestProgram || k == K::KwEndTestFunctionBlock || isOopEnd(k)) {
        if (p.kind == PouKind::Method && (k == K::KwEndFunctionBlock || k == K::KwEndTestFunctionBlock ||
                                          k == K::KwEndInterface || k == K::KwEndClass || k == K::KwEndProperty)) {
          errorHere(missingEnd(endKw, opener, p.name));  // leave it to the FB
          return;
        }
        if (k == K::KwEndMethod) {
          errorHere("'END_METHOD' without a matching 'METHOD'");
          advance();
          continue;
        }
        if (k == K::KwEndGet || k == K::KwEndSet) {
          errorHere(quoted(k) + " without a matching " + (k == K::KwEndGet ? "GET" : "SET"));
          advance();
          continue;
        }
        errorHere(missingEnd(endKw, opener, p.name));
        if (k == K::KwEndProperty) return;
        p.endSpan = advance().span;
        acceptTrailingSemicolon();
        return;
      }
      if (k == K::KwProgram || k == K::KwFunction || k == K::KwFunctionBlock || k == K::KwType ||
          k == K::KwConfiguration || k == K::KwInterface || k == K::KwClass || k == K::KwTestProgram ||
          k == K::KwTestFunctionBlock) {
        errorHere(missingEnd(endKw, opener, p.name));
        return;
      }
      if (isPouLevel(k)) {
        errorHere("unexpected " + describe(cur()));
        advance();
        continue;
      }
      size_t before = pos_;
      StmtList chunk = parseStatementList();
      if (!chunk.empty()) {
        if (!sawStatements && bodyless)
          report(chunk.front()->span,
                 p.kind == PouKind::Interface ? "an INTERFACE has no statements"
                 : p.isAbstract               ? "an ABSTRACT method has no body"
                                              : "a method of an INTERFACE has no body",
                 before);
        if (!sawStatements && p.isClass)
          report(chunk.front()->span, "a CLASS has no body: only its methods run", before);
        sawStatements = true;
      }
      for (auto& s : chunk) p.body.push_back(std::move(s));
      if (pos_ == before && !atEnd() && !isPouLevel(kind())) {
        errorHere("unexpected " + describe(cur()));
        advance();
      }
    }
  }

  // ------------------------------------------------------------------ configurations

  // After an error inside a CONFIGURATION or RESOURCE.
  void syncConfig() {
    while (!atEnd()) {
      K k = kind();
      if (k == K::Semicolon) {
        advance();
        return;
      }
      if (isPouLevel(k) || isWord(cur(), "TASK")) return;
      advance();
    }
  }

  bool programInstanceAhead() const {
    return at(K::KwProgram) && peek(1).kind == K::Identifier && (peek(2).kind == K::Colon || isWord(peek(2), "WITH"));
  }
  bool taskAhead() const { return isWord(cur(), "TASK") && peek(1).kind == K::Identifier; }

  void parseTask(std::vector<TaskDecl>& out) {
    advance();  // TASK
    try {
      const Token& name = expectIdent("a task name");
      TaskDecl t;
      t.name = name.text;
      t.span = name.span;
      if (accept(K::LParen)) {
        if (!at(K::RParen)) {
          for (;;) {
            size_t propIndex = pos_;
            const Token& prop = expectIdent("a task property (INTERVAL, PRIORITY or SINGLE)");
            expect(K::Assign, "after the task property");
            ExprPtr value = parseExpr();
            if (isWord(prop, "INTERVAL"))
              t.interval = std::move(value);
            else if (isWord(prop, "PRIORITY"))
              t.priority = std::move(value);
            else if (isWord(prop, "SINGLE"))
              t.single = std::move(value);
            else
              errorAt(propIndex,
                      "unknown task property '" + std::string(prop.text) + "' (expected INTERVAL, PRIORITY or SINGLE)");
            if (!accept(K::Comma)) break;
          }
        }
        expect(K::RParen, "to close the task properties");
      }
      out.push_back(std::move(t));
      expectSemicolon("after the TASK declaration");
    } catch (const SyntaxError&) {
      syncConfig();
    }
  }

  void parseProgramInstance(std::vector<ProgramInstance>& out) {
    advance();  // PROGRAM
    try {
      const Token& name = expectIdent("a program instance name");
      ProgramInstance pi;
      pi.name = name.text;
      pi.span = name.span;
      if (isWord(cur(), "WITH")) {
        advance();
        pi.taskName = expectIdent("a task name after 'WITH'").text;
      }
      expect(K::Colon, "after the program instance name");
      pi.typeName = expectIdent("a program type name").text;
      if (at(K::LParen)) {
        SourceSpan close;
        pi.args = parseCallArgs(close);
      }
      out.push_back(std::move(pi));
      expectSemicolon("after the PROGRAM instance");
    } catch (const SyntaxError&) {
      syncConfig();
    }
  }

  Resource parseResource() {
    const Token kw = advance();  // a copy: VAR_GLOBAL sections release tokens
    Resource r;
    if (at(K::Identifier)) {
      r.name = cur().text;
      r.span = advance().span;
    } else {
      errorHere("expected a resource name after 'RESOURCE', found " + describe(cur()));
      r.span = kw.span;
    }
    if (isWord(cur(), "ON")) {
      advance();
      if (at(K::Identifier))
        advance();
      else
        errorHere("expected a resource type after 'ON', found " + describe(cur()));
    } else {
      errorHere("expected 'ON' after the resource name, found " + describe(cur()));
    }
    for (;;) {
      K k = kind();
      if (k == K::KwEndResource) {
        advance();
        acceptTrailingSemicolon();
        return r;
      }
      if (k == K::EndOfFile || k == K::KwEndConfiguration || k == K::KwResource ||
          (isTopLevelItem(k) && k != K::KwVarGlobal && !programInstanceAhead())) {
        errorHere(missingEnd(K::KwEndResource, kw, r.name));
        return r;
      }
      if (taskAhead()) {
        parseTask(r.tasks);
      } else if (programInstanceAhead()) {
        parseProgramInstance(r.programs);
      } else if (k == K::KwVarGlobal) {
        parseVarSection(r.globals);
      } else {
        errorHere("expected TASK, PROGRAM, VAR_GLOBAL or END_RESOURCE, found " + describe(cur()));
        advance();
        syncConfig();
      }
    }
  }

  Configuration parseConfiguration() {
    const Token kw = advance();  // a copy: VAR_GLOBAL sections release tokens
    Configuration c;
    if (at(K::Identifier)) {
      c.name = cur().text;
      c.span = advance().span;
    } else {
      errorHere("expected a configuration name after 'CONFIGURATION', found " + describe(cur()));
      c.span = kw.span;
    }
    size_t direct = SIZE_MAX;  // index of the unnamed resource for TASK/PROGRAM written directly here
    auto directResource = [&]() -> Resource& {
      if (direct == SIZE_MAX) {
        Resource r;
        r.span = cur().span;
        c.resources.push_back(std::move(r));
        direct = c.resources.size() - 1;
      }
      return c.resources[direct];
    };
    for (;;) {
      K k = kind();
      if (k == K::KwEndConfiguration) {
        advance();
        acceptTrailingSemicolon();
        return c;
      }
      if (k == K::EndOfFile) {
        errorHere(missingEnd(K::KwEndConfiguration, kw, c.name));
        return c;
      }
      if (k == K::KwVarGlobal) {
        parseVarSection(c.globals);
      } else if (k == K::KwVarConfig) {
        parseVarConfig(c.varConfig);
      } else if (k == K::KwResource) {
        c.resources.push_back(parseResource());
      } else if (taskAhead()) {
        parseTask(directResource().tasks);
      } else if (programInstanceAhead()) {
        parseProgramInstance(directResource().programs);
      } else if (isTopLevelItem(k)) {
        errorHere(missingEnd(K::KwEndConfiguration, kw, c.name));
        return c;
      } else {
        errorHere("expected VAR_GLOBAL, VAR_CONFIG, RESOURCE, TASK, PROGRAM or END_CONFIGURATION, found " +
                  describe(cur()));
        advance();
        syncConfig();
      }
    }
  }

  // ------------------------------------------------------------------ top level

  void parseTopLevelItem(CompilationUnit& unit) {
    parseTopLevelItemOnly(unit);
    methodInstanceVars_.clear();  // a METHOD outside a block (reported)
    for (VarDecl& v : staticGlobals_) unit.globals.push_back(std::move(v));
    staticGlobals_.clear();
  }

  // A method's VAR_INST declarations, until its block takes them; VAR_STAT declarations of the
  // current top-level item, until the file's globals take them.
  std::vector<VarDecl> methodInstanceVars_;
  std::vector<VarDecl> staticGlobals_;

  void parseTopLevelItemOnly(CompilationUnit& unit) {
    switch (kind()) {
      case K::KwType: parseTypeBlock(unit); return;
      case K::KwProgram: unit.pous.push_back(parsePou(PouKind::Program)); return;
      case K::KwFunction: unit.pous.push_back(parsePou(PouKind::Function)); return;
      case K::KwFunctionBlock: unit.pous.push_back(parsePou(PouKind::FunctionBlock)); return;
      case K::KwClass: unit.pous.push_back(parsePou(PouKind::FunctionBlock, true)); return;
      case K::KwInterface: unit.pous.push_back(parsePou(PouKind::Interface)); return;
      case K::KwProperty: {
        errorHere("PROPERTY is only allowed inside a FUNCTION_BLOCK, CLASS or INTERFACE");
        Pou sink;
        parseProperty(sink, Pou{});
        return;
      }
      case K::KwTestProgram: unit.pous.push_back(parsePou(PouKind::Program, false, false, true)); return;
      case K::KwTestFunctionBlock: unit.pous.push_back(parsePou(PouKind::FunctionBlock, false, false, true)); return;
      case K::KwVarGlobal: parseVarSection(unit.globals); return;
      case K::KwConfiguration: unit.configurations.push_back(parseConfiguration()); return;
      case K::KwMethod:
        errorHere("METHOD is only allowed inside a PROGRAM, FUNCTION_BLOCK, CLASS or INTERFACE");
        parsePou(PouKind::Method);
        return;
      case K::KwVarConfig: {
        errorHere("VAR_CONFIG is only allowed in a CONFIGURATION");
        std::vector<VarConfigEntry> ignored;
        parseVarConfig(ignored);
        return;
      }
      default:
        errorHere(
            "expected PROGRAM, FUNCTION, FUNCTION_BLOCK, CLASS, INTERFACE, TYPE, VAR_GLOBAL or CONFIGURATION, found " +
            describe(cur()));
        advance();
        skipToTopLevel();
        return;
    }
  }
};

}  // namespace

namespace {

// Lexer and parser diagnostics of one file, merged into source order.
void mergeInSourceOrder(const Diagnostics& lexed, const Diagnostics& parsed, Diagnostics& out) {
  std::vector<const Diagnostic*> all;
  for (const Diagnostic& d : lexed.items()) all.push_back(&d);
  for (const Diagnostic& d : parsed.items()) all.push_back(&d);
  std::stable_sort(all.begin(), all.end(), [](const Diagnostic* a, const Diagnostic* b) {
    return a->span.line != b->span.line ? a->span.line < b->span.line : a->span.column < b->span.column;
  });
  for (const Diagnostic* d : all) {
    if (d->severity == Severity::Error)
      out.error(d->span, d->message);
    else
      out.warning(d->span, d->message);
  }
}

}  // namespace

ast::CompilationUnit parseFile(const SourceSet& sources, FileId file, Diagnostics& diagnostics) {
  Diagnostics lexDiag, parseDiag;
  Parser parser(sources.file(file).text, file, lexDiag, parseDiag);
  ast::CompilationUnit unit = parser.parseUnit();
  parser.drain();
  unit.attributes = parser.attributes();
  mergeInSourceOrder(lexDiag, parseDiag, diagnostics);
  return unit;
}

ast::ExprPtr parseExpression(const SourceSet& sources, FileId file, Diagnostics& diagnostics) {
  Diagnostics lexDiag, parseDiag;
  Parser parser(sources.file(file).text, file, lexDiag, parseDiag);
  ast::ExprPtr e = parser.parseStandaloneExpression();
  parser.drain();
  bool failed = lexDiag.hasErrors() || parseDiag.hasErrors();
  mergeInSourceOrder(lexDiag, parseDiag, diagnostics);
  return failed ? nullptr : std::move(e);
}

}  // namespace scanback

namespace scanback::ast {

ExprPtr cloneExpr(const ExprPtr& expr) { return expr ? cloneExpr(*expr) : nullptr; }

Argument cloneArgument(const Argument& arg) {
  Argument a;
  a.name = arg.name;
  a.isOutput = arg.isOutput;
  a.negatedOutput = arg.negatedOutput;
  a.value = cloneExpr(arg.value);
  a.span = arg.span;
  return a;
}

ExprPtr cloneExpr(const Expr& expr) {
  auto e = std::make_unique<Expr>(expr.kind, expr.span);
  if (expr.kind == ExprKind::RealLiteral)
    e->realValue = expr.realValue;
  else
    e->intValue = expr.intValue;
  e->negative = expr.negative;
  e->boolValue = expr.boolValue;
  e->typePrefix = expr.typePrefix;
  e->text = expr.text;
  e->unaryOp = expr.unaryOp;
  e->binaryOp = expr.binaryOp;
  e->operand = cloneExpr(expr.operand);
  e->rhs = cloneExpr(expr.rhs);
  for (const ExprPtr& i : expr.indices) e->indices.push_back(cloneExpr(i));
  for (const Argument& a : expr.args) e->args.push_back(cloneArgument(a));
  return e;
}

InitPtr cloneInit(const InitPtr& init) { return init ? cloneInit(*init) : nullptr; }

InitPtr cloneInit(const Initializer& init) {
  auto i = std::make_unique<Initializer>();
  i->kind = init.kind;
  i->span = init.span;
  i->expr = cloneExpr(init.expr);
  for (const ArrayInitItem& item : init.arrayItems) {
    ArrayInitItem c;
    c.repeat = cloneExpr(item.repeat);
    c.value = cloneInit(item.value);
    i->arrayItems.push_back(std::move(c));
  }
  for (const StructInitItem& item : init.structItems) {
    StructInitItem c;
    c.name = item.name;
    c.span = item.span;
    c.value = cloneInit(item.value);
    i->structItems.push_back(std::move(c));
  }
  return i;
}

TypeRefPtr cloneType(const TypeRefPtr& type) { return type ? cloneType(*type) : nullptr; }

TypeRefPtr cloneType(const TypeRef& type) {
  auto t = std::make_unique<TypeRef>();
  t->kind = type.kind;
  t->span = type.span;
  t->name = type.name;
  t->open = type.open;
  t->isUnion = type.isUnion;
  t->length = cloneExpr(type.length);
  t->wide = type.wide;
  for (const ArrayDim& d : type.dims) {
    ArrayDim c;
    c.lower = cloneExpr(d.lower);
    c.upper = cloneExpr(d.upper);
    t->dims.push_back(std::move(c));
  }
  t->element = cloneType(type.element);
  for (const VarDecl& f : type.fields) t->fields.push_back(cloneVarDecl(f));
  for (const EnumValue& v : type.enumValues) {
    EnumValue c;
    c.name = v.name;
    c.span = v.span;
    c.value = cloneExpr(v.value);
    t->enumValues.push_back(std::move(c));
  }
  return t;
}

VarDecl cloneVarDecl(const VarDecl& decl) {
  VarDecl d;
  d.name = decl.name;
  d.span = decl.span;
  d.section = decl.section;
  d.type = cloneType(decl.type);
  d.init = cloneInit(decl.init);
  d.location = decl.location;
  d.constant = decl.constant;
  d.retain = decl.retain;
  return d;
}

}  // namespace scanback::ast
