#include "vm/syntax/parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace scanback {
namespace {

using namespace ast;
// The AST's own kinds, not the bytecode's of the same names (vm/bytecode/types.h, symbols.h).
using ast::PouKind;
using ast::VarSection;

// ------------------------------------------------------------------ helpers

std::string opName(BinaryOp op) {
  switch (op) {
    case BinaryOp::Power: return "**";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "MOD";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "=";
    case BinaryOp::Ne: return "<>";
    case BinaryOp::And: return "AND";
    case BinaryOp::Xor: return "XOR";
    case BinaryOp::Or: return "OR";
  }
  return "?";
}

// A compact, fully parenthesised rendering of an expression.
std::string dump(const Expr* e) {
  if (!e) return "<null>";
  std::string prefix = e->typePrefix.empty() ? "" : std::string(e->typePrefix.str()) + "#";
  switch (e->kind) {
    case ExprKind::IntLiteral: return prefix + (e->negative ? "-" : "") + std::to_string(e->intValue);
    case ExprKind::RealLiteral: {
      char buf[64];
      snprintf(buf, sizeof buf, "%g", e->realValue);
      return prefix + buf + "r";
    }
    case ExprKind::BoolLiteral: return prefix + (e->boolValue ? "TRUE" : "FALSE");
    case ExprKind::StringLiteral: return "'" + e->text + "'";
    case ExprKind::TimeLiteral:
    case ExprKind::DateLiteral:
    case ExprKind::TodLiteral:
    case ExprKind::DtLiteral: return prefix + std::to_string(static_cast<int64_t>(e->intValue));
    case ExprKind::Name: return e->text;
    case ExprKind::Member: return dump(e->operand.get()) + "." + e->text;
    case ExprKind::BitAccess: return dump(e->operand.get()) + "." + std::to_string(e->intValue);
    case ExprKind::Index: {
      std::string s = dump(e->operand.get()) + "[";
      for (size_t i = 0; i < e->indices.size(); ++i) s += (i ? ", " : "") + dump(e->indices[i].get());
      return s + "]";
    }
    case ExprKind::Deref: return dump(e->operand.get()) + "^";
    case ExprKind::Unary: {
      const char* op = e->unaryOp == UnaryOp::Negate ? "NEG" : e->unaryOp == UnaryOp::Plus ? "PLUS" : "NOT";
      return std::string("(") + op + " " + dump(e->operand.get()) + ")";
    }
    case ExprKind::Binary:
      return "(" + opName(e->binaryOp) + " " + dump(e->operand.get()) + " " + dump(e->rhs.get()) + ")";
    case ExprKind::Call: {
      std::string s = dump(e->operand.get()) + "(";
      for (size_t i = 0; i < e->args.size(); ++i) {
        const Argument& a = e->args[i];
        if (i) s += ", ";
        if (a.negatedOutput) s += "NOT ";
        if (!a.name.empty()) s += a.name + (a.isOutput ? " => " : " := ");
        s += dump(a.value.get());
      }
      return s + ")";
    }
  }
  return "?";
}

std::string dumpInit(const Initializer* init) {
  if (!init) return "<null>";
  switch (init->kind) {
    case InitKind::Expr: return dump(init->expr.get());
    case InitKind::Array: {
      std::string s = "[";
      for (size_t i = 0; i < init->arrayItems.size(); ++i) {
        const ArrayInitItem& item = init->arrayItems[i];
        if (i) s += ", ";
        if (item.repeat)
          s += dump(item.repeat.get()) + "(" + (item.value ? dumpInit(item.value.get()) : "") + ")";
        else
          s += dumpInit(item.value.get());
      }
      return s + "]";
    }
    case InitKind::Struct: {
      std::string s = "(";
      for (size_t i = 0; i < init->structItems.size(); ++i)
        s += (i ? ", " : "") + init->structItems[i].name + " := " + dumpInit(init->structItems[i].value.get());
      return s + ")";
    }
  }
  return "?";
}

std::string dumpType(const TypeRef* t) {
  if (!t) return "<null>";
  switch (t->kind) {
    case TypeRefKind::Named: return t->name;
    case TypeRefKind::String: {
      const std::string name = t->wide ? "WSTRING" : "STRING";
      return t->length ? name + "[" + dump(t->length.get()) + "]" : name;
    }
    case TypeRefKind::Array: {
      std::string s = "ARRAY[";
      for (size_t i = 0; i < t->dims.size(); ++i)
        s += (i ? ", " : "") + dump(t->dims[i].lower.get()) + ".." + dump(t->dims[i].upper.get());
      return s + "] OF " + dumpType(t->element.get());
    }
    case TypeRefKind::RefTo: return "REF_TO " + dumpType(t->element.get());
    case TypeRefKind::PointerTo: return "POINTER TO " + dumpType(t->element.get());
    case TypeRefKind::Reference: return "REFERENCE TO " + dumpType(t->element.get());
    case TypeRefKind::Struct: {
      std::string s = "STRUCT";
      for (const VarDecl& f : t->fields) {
        s += " " + f.name + ":" + dumpType(f.type.get());
        if (f.init) s += ":=" + dumpInit(f.init.get());
        s += ";";
      }
      return s + " END_STRUCT";
    }
    case TypeRefKind::Enum: {
      std::string s = "(";
      for (size_t i = 0; i < t->enumValues.size(); ++i) {
        s += (i ? ", " : "") + t->enumValues[i].name;
        if (t->enumValues[i].value) s += " := " + dump(t->enumValues[i].value.get());
      }
      s += ")";
      if (t->element) s += " " + dumpType(t->element.get());
      return s;
    }
    case TypeRefKind::Subrange:
      return dumpType(t->element.get()) + " (" + dump(t->dims[0].lower.get()) + ".." + dump(t->dims[0].upper.get()) +
             ")";
  }
  return "?";
}

struct Parsed {
  SourceSet sources;
  Diagnostics diag;
  CompilationUnit unit;
  std::string errors() const { return diag.format(sources); }
};

std::unique_ptr<Parsed> parse(const std::string& text) {
  auto p = std::make_unique<Parsed>();
  FileId f = p->sources.add("t.st", text);
  p->unit = parseFile(p->sources, f, p->diag);
  return p;
}

std::unique_ptr<Parsed> parseOk(const std::string& text) {
  auto p = parse(text);
  EXPECT_FALSE(p->diag.hasErrors()) << text << "\n" << p->errors();
  return p;
}

struct ParsedExpr {
  SourceSet sources;
  Diagnostics diag;
  ExprPtr expr;
  std::string errors() const { return diag.format(sources); }
};

std::unique_ptr<ParsedExpr> parseExpr(const std::string& text) {
  auto p = std::make_unique<ParsedExpr>();
  FileId f = p->sources.add("expr", text);
  p->expr = parseExpression(p->sources, f, p->diag);
  return p;
}

std::string ex(const std::string& text) {
  auto p = parseExpr(text);
  EXPECT_FALSE(p->diag.hasErrors()) << text << "\n" << p->errors();
  return dump(p->expr.get());
}

// Wraps statements in a PROGRAM and returns the parsed body.
std::unique_ptr<Parsed> parseBody(const std::string& body) {
  return parseOk("PROGRAM P\nVAR x : INT; END_VAR\n" + body + "\nEND_PROGRAM\n");
}

bool hasError(const Parsed& p, const std::string& fragment) { return p.errors().find(fragment) != std::string::npos; }

void expectSpan(const SourceSpan& s, uint32_t line, uint32_t col, uint32_t endLine, uint32_t endCol) {
  EXPECT_EQ(s.line, line);
  EXPECT_EQ(s.column, col);
  EXPECT_EQ(s.endLine, endLine);
  EXPECT_EQ(s.endColumn, endCol);
}

// ------------------------------------------------------------------ expressions

TEST(ParserExpr, Literals) {
  EXPECT_EQ(ex("42"), "42");
  EXPECT_EQ(ex("16#FF"), "255");
  EXPECT_EQ(ex("1.5"), "1.5r");
  EXPECT_EQ(ex("TRUE"), "TRUE");
  EXPECT_EQ(ex("BOOL#0"), "BOOL#FALSE");
  EXPECT_EQ(ex("'a$Nb'"), "'a\nb'");
  EXPECT_EQ(ex("INT#-5"), "INT#-5");
  EXPECT_EQ(ex("BYTE#16#FF"), "BYTE#255");
  EXPECT_EQ(ex("REAL#1.5"), "REAL#1.5r");
  EXPECT_EQ(ex("T#1s500ms"), "TIME#1500000000");
  EXPECT_EQ(ex("LTIME#1us"), "LTIME#1000");
  EXPECT_EQ(ex("D#1970-01-02"), "DATE#86400000000000");
  EXPECT_EQ(ex("TOD#00:00:01"), "TOD#1000000000");
  EXPECT_EQ(ex("DT#1970-01-01-00:01:00"), "DT#60000000000");
}

TEST(ParserExpr, LiteralKinds) {
  auto p = parseExpr("T#-2m");
  ASSERT_TRUE(p->expr);
  EXPECT_EQ(p->expr->kind, ExprKind::TimeLiteral);
  EXPECT_EQ(static_cast<int64_t>(p->expr->intValue), -120'000'000'000LL);
  EXPECT_EQ(parseExpr("D#2024-01-15")->expr->kind, ExprKind::DateLiteral);
  EXPECT_EQ(parseExpr("TOD#08:30:15.25")->expr->kind, ExprKind::TodLiteral);
  EXPECT_EQ(parseExpr("DT#2024-01-15-08:30:00.5")->expr->kind, ExprKind::DtLiteral);
  EXPECT_EQ(parseExpr("'s'")->expr->kind, ExprKind::StringLiteral);
  EXPECT_EQ(parseExpr("FALSE")->expr->kind, ExprKind::BoolLiteral);
}

TEST(ParserExpr, NegativeLiteralsFold) {
  auto p = parseExpr("-5");
  ASSERT_TRUE(p->expr);
  EXPECT_EQ(p->expr->kind, ExprKind::IntLiteral);
  EXPECT_EQ(p->expr->intValue, 5u);
  EXPECT_TRUE(p->expr->negative);
  expectSpan(p->expr->span, 1, 1, 1, 3);
  EXPECT_EQ(ex("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(ex("-1.5"), "-1.5r");
  EXPECT_EQ(ex("- 3"), "-3");
  // not folded
  EXPECT_EQ(ex("-x"), "(NEG x)");
  EXPECT_EQ(ex("-(5)"), "(NEG 5)");
  EXPECT_EQ(ex("-INT#5"), "(NEG INT#5)");
  EXPECT_EQ(ex("-T#1s"), "(NEG TIME#1000000000)");
  EXPECT_EQ(ex("- -5"), "(NEG -5)");
  EXPECT_EQ(ex("+5"), "(PLUS 5)");
  EXPECT_EQ(ex("a - 5"), "(- a 5)");
  EXPECT_EQ(ex("a - -5"), "(- a -5)");
}

TEST(ParserExpr, Precedence) {
  EXPECT_EQ(ex("a OR b AND c"), "(OR a (AND b c))");
  EXPECT_EQ(ex("a AND b OR c"), "(OR (AND a b) c)");
  EXPECT_EQ(ex("a XOR b OR c XOR d"), "(OR (XOR a b) (XOR c d))");
  EXPECT_EQ(ex("a OR b XOR c AND d"), "(OR a (XOR b (AND c d)))");
  EXPECT_EQ(ex("a & b"), "(AND a b)");
  EXPECT_EQ(ex("-2**2"), "(NEG (** 2 2))");
  EXPECT_EQ(ex("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(ex("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(ex("NOT a = b"), "(= (NOT a) b)");
  EXPECT_EQ(ex("NOT (a = b)"), "(NOT (= a b))");
  EXPECT_EQ(ex("a = b AND c <> d"), "(AND (= a b) (<> c d))");
  EXPECT_EQ(ex("a < b = c > d"), "(= (< a b) (> c d))");
  EXPECT_EQ(ex("a + b < c * d"), "(< (+ a b) (* c d))");
  EXPECT_EQ(ex("a MOD b * c / d"), "(/ (* (MOD a b) c) d)");
  EXPECT_EQ(ex("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(ex("a ** b ** c"), "(** (** a b) c)");
  EXPECT_EQ(ex("2 ** -1"), "(** 2 -1)");
  EXPECT_EQ(ex("-a ** b"), "(NEG (** a b))");
  EXPECT_EQ(ex("a * -b"), "(* a (NEG b))");
  EXPECT_EQ(ex("NOT NOT a"), "(NOT (NOT a))");
  EXPECT_EQ(ex("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(ex("a <= b OR a >= c"), "(OR (<= a b) (>= a c))");
}

TEST(ParserExpr, Postfix) {
  EXPECT_EQ(ex("fb.Q"), "fb.Q");
  EXPECT_EQ(ex("a.b.c"), "a.b.c");
  EXPECT_EQ(ex("w.3"), "w.3");
  EXPECT_EQ(ex("s.w.15"), "s.w.15");
  EXPECT_EQ(ex("arr[i + 1]"), "arr[(+ i 1)]");
  EXPECT_EQ(ex("m[1, 2]"), "m[1, 2]");
  EXPECT_EQ(ex("a[1].b[2].c"), "a[1].b[2].c");
  EXPECT_EQ(ex("p^"), "p^");
  EXPECT_EQ(ex("p^.x"), "p^.x");
  EXPECT_EQ(ex("THIS^.x"), "THIS^.x");
  EXPECT_EQ(ex("THIS.x"), "THIS.x");
  EXPECT_EQ(ex("REF(x)^"), "REF(x)^");
  EXPECT_EQ(ex("f()"), "f()");
  EXPECT_EQ(ex("f(1, 2)"), "f(1, 2)");
  EXPECT_EQ(ex("f(IN1 := 1, IN2 := a + b)"), "f(IN1 := 1, IN2 := (+ a b))");
  EXPECT_EQ(ex("inst.Run(a := 1)"), "inst.Run(a := 1)");
  EXPECT_FALSE(parseExpr("inst.Method()")->expr);  // METHOD is a keyword
  EXPECT_EQ(ex("timers[i](IN := x)"), "timers[i](IN := x)");
  EXPECT_EQ(ex("f(x).y"), "f(x).y");
  EXPECT_EQ(ex("-a.b ** 2"), "(NEG (** a.b 2))");
  EXPECT_EQ(ex("State#Idle"), "State#Idle");
  EXPECT_EQ(ex("x = E#A"), "(= x E#A)");
}

TEST(ParserExpr, CallArguments) {
  auto p = parseExpr("fb(IN := x, PT := T#1s, Q => done, NOT ET => notDone, 5)");
  ASSERT_TRUE(p->expr) << p->errors();
  const Expr& call = *p->expr;
  ASSERT_EQ(call.kind, ExprKind::Call);
  ASSERT_EQ(call.args.size(), 5u);
  EXPECT_EQ(call.args[0].name, "IN");
  EXPECT_FALSE(call.args[0].isOutput);
  EXPECT_EQ(call.args[2].name, "Q");
  EXPECT_TRUE(call.args[2].isOutput);
  EXPECT_FALSE(call.args[2].negatedOutput);
  EXPECT_EQ(dump(call.args[2].value.get()), "done");
  EXPECT_EQ(call.args[3].name, "ET");
  EXPECT_TRUE(call.args[3].isOutput);
  EXPECT_TRUE(call.args[3].negatedOutput);
  EXPECT_TRUE(call.args[4].name.empty());
  expectSpan(call.args[3].span, 1, 36, 1, 53);
  expectSpan(call.span, 1, 1, 1, 57);
}

TEST(ParserExpr, Spans) {
  auto p = parseExpr("a + b * (c - 1)");
  ASSERT_TRUE(p->expr);
  const Expr& add = *p->expr;
  expectSpan(add.span, 1, 1, 1, 16);
  expectSpan(add.operand->span, 1, 1, 1, 2);
  const Expr& mul = *add.rhs;
  expectSpan(mul.span, 1, 5, 1, 16);
  expectSpan(mul.rhs->span, 1, 9, 1, 16);  // parentheses included
  expectSpan(mul.rhs->operand->span, 1, 10, 1, 11);

  auto q = parseExpr("(a + b) * c");
  expectSpan(q->expr->span, 1, 1, 1, 12);

  auto m = parseExpr("\n  x.y[1]^.z");
  ASSERT_TRUE(m->expr);
  expectSpan(m->expr->span, 2, 3, 2, 12);
  expectSpan(m->expr->operand->span, 2, 3, 2, 10);  // x.y[1]^

  auto n = parseExpr("NOT flag");
  expectSpan(n->expr->span, 1, 1, 1, 9);
}

TEST(ParserExpr, Errors) {
  auto p = parseExpr("a +");
  EXPECT_FALSE(p->expr);
  EXPECT_NE(p->errors().find("expr:1:4: error: expected an expression, found end of file"), std::string::npos)
      << p->errors();

  auto q = parseExpr("a b");
  EXPECT_FALSE(q->expr);
  EXPECT_NE(q->errors().find("expr:1:3: error: unexpected 'b' after the expression"), std::string::npos) << q->errors();

  auto r = parseExpr("");
  EXPECT_FALSE(r->expr);
  EXPECT_TRUE(r->diag.hasErrors());

  auto s = parseExpr("f(a, ");
  EXPECT_FALSE(s->expr);

  auto t = parseExpr("(a + b");
  EXPECT_FALSE(t->expr);
  EXPECT_NE(t->errors().find("expected ')' to close '(', found end of file"), std::string::npos) << t->errors();

  auto u = parseExpr("%IX0.0");
  EXPECT_FALSE(u->expr);

  auto v = parseExpr("'bad $q'");  // lexical error: still null
  EXPECT_FALSE(v->expr);
}

TEST(ParserExpr, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  deep += "1";
  deep += std::string(100000, ')');
  auto p = parseExpr(deep);
  EXPECT_FALSE(p->expr);
  EXPECT_EQ(p->diag.errorCount(), 1u) << p->errors().substr(0, 500);
  EXPECT_NE(p->errors().find("nesting is too deep"), std::string::npos);

  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "NOT ";
  auto q = parseExpr(nots + "a");
  EXPECT_FALSE(q->expr);
  EXPECT_EQ(q->diag.errorCount(), 1u);

  std::string minus(100000, '-');
  auto r = parseExpr(minus + "1");
  EXPECT_FALSE(r->expr);

  std::string calls;
  for (int i = 0; i < 50000; ++i) calls += "f(";
  auto s = parseExpr(calls);
  EXPECT_FALSE(s->expr);

  std::string idx;
  for (int i = 0; i < 50000; ++i) idx += "a[";
  auto t = parseExpr(idx);
  EXPECT_FALSE(t->expr);

  std::string pow = "a";
  for (int i = 0; i < 50000; ++i) pow += " ** -";
  auto u = parseExpr(pow + "b");
  EXPECT_FALSE(u->expr);

  // moderately deep nesting is fine
  std::string ok(100, '(');
  ok += "1" + std::string(100, ')');
  EXPECT_EQ(ex(ok), "1");

  // A long flat chain builds a tall tree: fine up to 1000 levels, an error (not a crash in a
  // later recursive walk or destructor) beyond.
  std::string chain = "a";
  for (int i = 0; i < 900; ++i) chain += " + a";
  auto c = parseExpr(chain);
  EXPECT_TRUE(c->expr) << c->errors().substr(0, 300);
  for (int i = 0; i < 200000; ++i) chain += " + a";
  auto d = parseExpr(chain);
  EXPECT_FALSE(d->expr);
  EXPECT_EQ(d->diag.errorCount(), 1u);
  EXPECT_NE(d->errors().find("expression is too complex"), std::string::npos);
  std::string members = "a";
  for (int i = 0; i < 5000; ++i) members += ".b";
  EXPECT_FALSE(parseExpr(members)->expr);
  std::string mixed = "x";
  for (int i = 0; i < 5000; ++i) mixed += " OR a AND NOT b ** c[1] + -d";
  EXPECT_FALSE(parseExpr(mixed)->expr);
  // in a statement the error is reported once and the next statement still parses
  auto p2 = parse("PROGRAM P x := " + chain + "; y := 1; END_PROGRAM");
  EXPECT_EQ(p2->diag.errorCount(), 1u);
  EXPECT_EQ(p2->unit.pous.at(0).body.size(), 1u);
}

// ------------------------------------------------------------------ statements

TEST(ParserStmt, Assignment) {
  auto p = parseBody("x := 1 + 2;\na.b[1]^ := -3;");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 2u);
  const Stmt& s = *pou.body[0];
  EXPECT_EQ(s.kind, StmtKind::Assign);
  EXPECT_EQ(dump(s.target.get()), "x");
  EXPECT_EQ(dump(s.value.get()), "(+ 1 2)");
  expectSpan(s.span, 3, 1, 3, 11);  // ';' excluded
  EXPECT_EQ(dump(pou.body[1]->target.get()), "a.b[1]^");
  EXPECT_EQ(dump(pou.body[1]->value.get()), "-3");
}

// `r REF= x` (CODESYS) is an assignment marked as binding a reference; `REF =` with a space too.
TEST(ParserStmt, RefAssignment) {
  auto p = parseBody("r REF= x;\nfb.r REF=a[2];\nr REF = 0;\ny := REF(x);");
  ASSERT_EQ(p->diag.errorCount(), 0u) << p->errors();
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 4u);
  EXPECT_TRUE(pou.body[0]->refAssign);
  EXPECT_EQ(dump(pou.body[0]->target.get()), "r");
  EXPECT_EQ(dump(pou.body[0]->value.get()), "x");
  EXPECT_TRUE(pou.body[1]->refAssign);
  EXPECT_EQ(dump(pou.body[1]->target.get()), "fb.r");
  EXPECT_EQ(dump(pou.body[1]->value.get()), "a[2]");
  EXPECT_TRUE(pou.body[2]->refAssign);
  EXPECT_FALSE(pou.body[3]->refAssign);
  auto bad = parse("PROGRAM P r REF x; END_PROGRAM");
  EXPECT_EQ(bad->diag.errorCount(), 1u) << bad->errors();
  auto decl = parse("PROGRAM P VAR r : REFERENCE TO ARRAY[0..1] OF INT; q : REFERENCE TO Point; END_VAR END_PROGRAM");
  ASSERT_EQ(decl->diag.errorCount(), 0u) << decl->errors();
  EXPECT_EQ(dumpType(decl->unit.pous.at(0).vars.at(0).type.get()), "REFERENCE TO ARRAY[0..1] OF INT");
  EXPECT_EQ(dumpType(decl->unit.pous.at(0).vars.at(1).type.get()), "REFERENCE TO Point");
}

TEST(ParserStmt, CallStatements) {
  auto p = parseBody("fb(IN := x, PT := T#5s, Q => done);\nf();\ninst.Run(1);\ntimers[2](IN := TRUE);");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 4u);
  EXPECT_EQ(pou.body[0]->kind, StmtKind::Call);
  EXPECT_EQ(dump(pou.body[0]->value.get()), "fb(IN := x, PT := TIME#5000000000, Q => done)");
  expectSpan(pou.body[0]->span, 3, 1, 3, 35);
  EXPECT_EQ(dump(pou.body[1]->value.get()), "f()");
  EXPECT_EQ(dump(pou.body[2]->value.get()), "inst.Run(1)");
  EXPECT_EQ(dump(pou.body[3]->value.get()), "timers[2](IN := TRUE)");
}

TEST(ParserStmt, If) {
  auto p = parseBody(
      "IF a THEN\n"
      "  x := 1;\n"
      "ELSIF b THEN\n"
      "  x := 2;\n"
      "  x := 3;\n"
      "ELSIF c THEN\n"
      "ELSE\n"
      "  x := 4;\n"
      "END_IF;");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 1u);
  const Stmt& s = *pou.body[0];
  EXPECT_EQ(s.kind, StmtKind::If);
  ASSERT_EQ(s.branches.size(), 3u);
  EXPECT_EQ(dump(s.branches[0].condition.get()), "a");
  EXPECT_EQ(s.branches[0].body.size(), 1u);
  EXPECT_EQ(s.branches[1].body.size(), 2u);
  EXPECT_EQ(s.branches[2].body.size(), 0u);
  EXPECT_TRUE(s.hasElse);
  EXPECT_EQ(s.elseBody.size(), 1u);
  expectSpan(s.elseSpan, 9, 1, 9, 5);
  expectSpan(s.span, 3, 1, 11, 7);  // IF .. END_IF
  expectSpan(s.branches[1].body[1]->span, 7, 3, 7, 9);
}

TEST(ParserStmt, IfWithoutElseAndWithoutSemicolon) {
  auto p = parseBody("IF a AND NOT b THEN x := 1; END_IF\nx := 2;");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 2u);
  EXPECT_FALSE(pou.body[0]->hasElse);
  EXPECT_EQ(dump(pou.body[0]->branches[0].condition.get()), "(AND a (NOT b))");
}

TEST(ParserStmt, NestedIf) {
  auto p = parseBody("IF a THEN IF b THEN x := 1; ELSE x := 2; END_IF; ELSE x := 3; END_IF;");
  const Stmt& outer = *p->unit.pous.at(0).body.at(0);
  ASSERT_EQ(outer.branches.at(0).body.size(), 1u);
  const Stmt& inner = *outer.branches[0].body[0];
  EXPECT_EQ(inner.kind, StmtKind::If);
  EXPECT_TRUE(inner.hasElse);
  EXPECT_EQ(outer.elseBody.size(), 1u);
}

TEST(ParserStmt, Case) {
  auto p = parseBody(
      "CASE state OF\n"
      "  1, 2: x := 1;\n"
      "  3..5: x := 2; x := 3;\n"
      "  -1: ;\n"
      "  Red, Green: x := 4;\n"
      "  State#Idle, E#A..E#C: x := 5;\n"
      "  INT#7: x := 6;\n"
      "  10:\n"
      "ELSE\n"
      "  x := 0;\n"
      "END_CASE;");
  const Stmt& s = *p->unit.pous.at(0).body.at(0);
  EXPECT_EQ(s.kind, StmtKind::Case);
  EXPECT_EQ(dump(s.value.get()), "state");
  ASSERT_EQ(s.cases.size(), 7u);
  ASSERT_EQ(s.cases[0].labels.size(), 2u);
  EXPECT_EQ(dump(s.cases[0].labels[0].lower.get()), "1");
  EXPECT_EQ(s.cases[0].labels[0].upper, nullptr);
  EXPECT_EQ(dump(s.cases[1].labels[0].lower.get()), "3");
  EXPECT_EQ(dump(s.cases[1].labels[0].upper.get()), "5");
  EXPECT_EQ(s.cases[1].body.size(), 2u);
  EXPECT_EQ(dump(s.cases[2].labels[0].lower.get()), "-1");
  EXPECT_EQ(s.cases[2].body.size(), 1u);
  EXPECT_EQ(s.cases[2].body[0]->kind, StmtKind::Empty);
  EXPECT_EQ(dump(s.cases[3].labels[1].lower.get()), "Green");
  EXPECT_EQ(s.cases[4].labels[0].lower->kind, ExprKind::Name);
  EXPECT_EQ(s.cases[4].labels[0].lower->text, "State#Idle");
  EXPECT_EQ(dump(s.cases[4].labels[1].lower.get()), "E#A");
  EXPECT_EQ(dump(s.cases[4].labels[1].upper.get()), "E#C");
  expectSpan(s.cases[4].labels[1].span, 8, 15, 8, 23);
  EXPECT_EQ(dump(s.cases[5].labels[0].lower.get()), "INT#7");
  EXPECT_EQ(s.cases[6].body.size(), 0u);
  EXPECT_TRUE(s.hasElse);
  EXPECT_EQ(s.elseBody.size(), 1u);
  expectSpan(s.cases[1].span, 5, 3, 5, 23);
  expectSpan(s.span, 3, 1, 13, 9);
}

TEST(ParserStmt, CaseWithNestedIfAndElse) {
  auto p = parseBody(
      "CASE x OF\n"
      "1: IF a THEN x := 1; ELSE x := 2; END_IF\n"
      "2: x := 3;\n"
      "END_CASE");
  const Stmt& s = *p->unit.pous.at(0).body.at(0);
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_FALSE(s.hasElse);
  ASSERT_EQ(s.cases[0].body.size(), 1u);
  EXPECT_TRUE(s.cases[0].body[0]->hasElse);
}

TEST(ParserStmt, Loops) {
  auto p = parseBody(
      "FOR i := 1 TO 10 BY 2 DO x := x + i; END_FOR;\n"
      "FOR i := n - 1 TO 0 BY -1 DO END_FOR\n"
      "FOR i := 0 TO 3 DO EXIT; END_FOR;\n"
      "WHILE x < 10 DO x := x + 1; CONTINUE; END_WHILE;\n"
      "REPEAT x := x - 1; UNTIL x <= 0 END_REPEAT;\n"
      "RETURN;");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 6u);
  const Stmt& f = *pou.body[0];
  EXPECT_EQ(f.kind, StmtKind::For);
  EXPECT_EQ(dump(f.target.get()), "i");
  EXPECT_EQ(f.target->kind, ExprKind::Name);
  EXPECT_EQ(dump(f.value.get()), "1");
  EXPECT_EQ(dump(f.to.get()), "10");
  EXPECT_EQ(dump(f.by.get()), "2");
  EXPECT_EQ(f.body.size(), 1u);
  expectSpan(f.span, 3, 1, 3, 45);
  EXPECT_EQ(dump(pou.body[1]->value.get()), "(- n 1)");
  EXPECT_EQ(dump(pou.body[1]->by.get()), "-1");
  EXPECT_EQ(pou.body[2]->by, nullptr);
  EXPECT_EQ(pou.body[2]->body.at(0)->kind, StmtKind::Exit);
  const Stmt& w = *pou.body[3];
  EXPECT_EQ(w.kind, StmtKind::While);
  EXPECT_EQ(dump(w.value.get()), "(< x 10)");
  EXPECT_EQ(w.body.size(), 2u);
  EXPECT_EQ(w.body[1]->kind, StmtKind::Continue);
  const Stmt& r = *pou.body[4];
  EXPECT_EQ(r.kind, StmtKind::Repeat);
  EXPECT_EQ(dump(r.value.get()), "(<= x 0)");
  EXPECT_EQ(r.body.size(), 1u);
  expectSpan(r.span, 7, 1, 7, 43);
  EXPECT_EQ(pou.body[5]->kind, StmtKind::Return);
  expectSpan(pou.body[5]->span, 8, 1, 8, 7);
}

TEST(ParserStmt, EmptyStatements) {
  auto p = parseBody(";;x := 1;;");
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 4u);
  EXPECT_EQ(pou.body[0]->kind, StmtKind::Empty);
  expectSpan(pou.body[0]->span, 3, 1, 3, 2);
  EXPECT_EQ(pou.body[2]->kind, StmtKind::Assign);
  EXPECT_EQ(pou.body[3]->kind, StmtKind::Empty);
}

// ------------------------------------------------------------------ declarations

TEST(ParserDecl, VariableForms) {
  auto p = parseOk(
      "PROGRAM Main\n"
      "VAR\n"
      "  a, b, c : INT := 5;\n"
      "  x AT %IX0.0 : BOOL;\n"
      "  w AT %QW2 : WORD;\n"
      "  io AT %I* : BOOL;\n"
      "  p : REF_TO INT;\n"
      "  arr : ARRAY[1..10, -2..2] OF INT := [1, 2, 3(0)];\n"
      "  s : STRING[20] := 'abc';\n"
      "  s2 : STRING;\n"
      "  s3 : STRING(10);\n"
      "  st : MyStruct := (a := 1, b := (c := 2));\n"
      "  t : TON := (PT := T#5s);\n"
      "  sa : ARRAY[0..1] OF MyStruct := [(a := 1), (a := 2)];\n"
      "  dyn : ARRAY[0..N-1] OF REAL;\n"
      "  sub : INT (0..100) := 50;\n"
      "  rep : ARRAY[0..9] OF INT := [10(7)];\n"
      "  strs : ARRAY[1..2] OF STRING[5] := ['a', 'b'];\n"
      "  nested : ARRAY[0..1] OF ARRAY[0..2] OF BOOL;\n"
      "  e : Color := Color#Red;\n"
      "  emptyRep : ARRAY[0..2] OF INT := [3()];\n"
      "  expr : INT := (1 + 2) * 3;\n"
      "END_VAR\n"
      "END_PROGRAM\n");
  const Pou& pou = p->unit.pous.at(0);
  EXPECT_EQ(pou.kind, PouKind::Program);
  EXPECT_EQ(pou.name, "Main");
  const auto& v = pou.vars;
  ASSERT_EQ(v.size(), 22u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(dumpType(v[i].type.get()), "INT");
    EXPECT_EQ(dumpInit(v[i].init.get()), "5");
    EXPECT_EQ(v[i].section, VarSection::Var);
  }
  EXPECT_EQ(v[0].name, "a");
  EXPECT_EQ(v[2].name, "c");
  EXPECT_NE(v[0].type.get(), v[1].type.get());  // each declaration owns its own copy
  EXPECT_NE(v[0].init.get(), v[1].init.get());
  expectSpan(v[1].span, 3, 6, 3, 7);
  ASSERT_TRUE(v[3].location);
  EXPECT_EQ(v[3].location->area, 'I');
  EXPECT_EQ(v[3].location->size, 'X');
  EXPECT_EQ(v[3].location->parts, (std::vector<uint32_t>{0, 0}));
  expectSpan(v[3].location->span, 4, 8, 4, 14);
  EXPECT_EQ(v[4].location->area, 'Q');
  EXPECT_EQ(v[4].location->size, 'W');
  EXPECT_TRUE(v[5].location->incomplete());
  EXPECT_FALSE(v[0].location);
  EXPECT_EQ(dumpType(v[6].type.get()), "REF_TO INT");
  EXPECT_EQ(dumpType(v[7].type.get()), "ARRAY[1..10, -2..2] OF INT");
  EXPECT_EQ(dumpInit(v[7].init.get()), "[1, 2, 3(0)]");
  EXPECT_EQ(v[7].init->kind, InitKind::Array);
  EXPECT_EQ(dumpType(v[8].type.get()), "STRING[20]");
  EXPECT_EQ(v[8].type->kind, TypeRefKind::String);
  EXPECT_EQ(dumpInit(v[8].init.get()), "'abc'");
  EXPECT_EQ(dumpType(v[9].type.get()), "STRING");
  EXPECT_EQ(dumpType(v[10].type.get()), "STRING[10]");
  EXPECT_EQ(dumpInit(v[11].init.get()), "(a := 1, b := (c := 2))");
  EXPECT_EQ(v[11].init->kind, InitKind::Struct);
  EXPECT_EQ(dumpInit(v[12].init.get()), "(PT := TIME#5000000000)");
  EXPECT_EQ(dumpInit(v[13].init.get()), "[(a := 1), (a := 2)]");
  EXPECT_EQ(dumpType(v[14].type.get()), "ARRAY[0..(- N 1)] OF REAL");
  EXPECT_EQ(dumpType(v[15].type.get()), "INT (0..100)");
  EXPECT_EQ(v[15].type->kind, TypeRefKind::Subrange);
  EXPECT_EQ(dumpInit(v[16].init.get()), "[10(7)]");
  EXPECT_EQ(dumpType(v[17].type.get()), "ARRAY[1..2] OF STRING[5]");
  EXPECT_EQ(dumpType(v[18].type.get()), "ARRAY[0..1] OF ARRAY[0..2] OF BOOL");
  EXPECT_EQ(dumpInit(v[19].init.get()), "Color#Red");
  EXPECT_EQ(dumpInit(v[20].init.get()), "[3()]");
  EXPECT_EQ(dumpInit(v[21].init.get()), "(* (+ 1 2) 3)");
  expectSpan(v[7].type->span, 8, 9, 8, 35);
  expectSpan(v[7].init->span, 8, 39, 8, 51);
}

TEST(ParserDecl, SectionsAndQualifiers) {
  auto p = parseOk(
      "FUNCTION_BLOCK FB\n"
      "VAR_INPUT in1 : BOOL; END_VAR\n"
      "VAR_OUTPUT out1 : BOOL; END_VAR\n"
      "VAR_IN_OUT io : INT; END_VAR\n"
      "VAR_TEMP t : INT; END_VAR\n"
      "VAR_EXTERNAL g : INT; END_VAR\n"
      "VAR_GLOBAL gl : INT; END_VAR\n"
      "VAR CONSTANT k : INT := 3; END_VAR\n"
      "VAR RETAIN r : INT; END_VAR\n"
      "VAR NON_RETAIN nr : INT; END_VAR\n"
      "VAR PERSISTENT ps : INT; END_VAR\n"
      "VAR CONSTANT RETAIN kr : INT; END_VAR\n"
      "END_FUNCTION_BLOCK\n");
  const auto& v = p->unit.pous.at(0).vars;
  ASSERT_EQ(v.size(), 11u);
  EXPECT_EQ(v[0].section, VarSection::Input);
  EXPECT_EQ(v[1].section, VarSection::Output);
  EXPECT_EQ(v[2].section, VarSection::InOut);
  EXPECT_EQ(v[3].section, VarSection::Temp);
  EXPECT_EQ(v[4].section, VarSection::External);
  EXPECT_EQ(v[5].section, VarSection::Global);
  EXPECT_TRUE(v[6].constant);
  EXPECT_FALSE(v[6].retain);
  EXPECT_TRUE(v[7].retain);
  EXPECT_FALSE(v[8].retain);
  EXPECT_TRUE(v[9].retain);
  EXPECT_TRUE(v[10].constant);
  EXPECT_TRUE(v[10].retain);
  EXPECT_FALSE(v[0].constant);
}

TEST(ParserDecl, TypeBlock) {
  auto p = parseOk(
      "TYPE\n"
      "  Point : STRUCT\n"
      "    x, y : REAL;\n"
      "    tag : STRING[8] := 'p';\n"
      "  END_STRUCT;\n"
      "  Color : (Red, Green := 5, Blue);\n"
      "  Wide : (A, B) DINT;\n"
      "  Prefixed : INT (Low, High := 10);\n"
      "  Percent : INT (0..100);\n"
      "  Speed : REAL;\n"
      "  Grid : ARRAY[0..2, 0..2] OF Point;\n"
      "  Name : STRING[20];\n"
      "  Level : INT := 5;\n"
      "  Mode : (Off, On) := On;\n"
      "  Ptr : REF_TO Point;\n"
      "END_TYPE\n"
      "TYPE Second : STRUCT a : INT; END_STRUCT END_TYPE\n");
  const auto& t = p->unit.types;
  ASSERT_EQ(t.size(), 12u);
  EXPECT_EQ(t[0].name, "Point");
  expectSpan(t[0].span, 2, 3, 2, 8);
  EXPECT_EQ(t[0].type->kind, TypeRefKind::Struct);
  EXPECT_EQ(dumpType(t[0].type.get()), "STRUCT x:REAL; y:REAL; tag:STRING[8]:='p'; END_STRUCT");
  EXPECT_EQ(t[1].type->kind, TypeRefKind::Enum);
  EXPECT_EQ(dumpType(t[1].type.get()), "(Red, Green := 5, Blue)");
  EXPECT_EQ(t[1].type->element, nullptr);
  expectSpan(t[1].type->enumValues[1].span, 6, 17, 6, 22);
  EXPECT_EQ(dumpType(t[2].type.get()), "(A, B) DINT");
  EXPECT_EQ(dumpType(t[3].type.get()), "(Low, High := 10) INT");
  EXPECT_EQ(t[3].type->kind, TypeRefKind::Enum);
  EXPECT_EQ(dumpType(t[4].type.get()), "INT (0..100)");
  EXPECT_EQ(dumpType(t[5].type.get()), "REAL");
  EXPECT_EQ(dumpType(t[6].type.get()), "ARRAY[0..2, 0..2] OF Point");
  EXPECT_EQ(dumpType(t[7].type.get()), "STRING[20]");
  EXPECT_EQ(dumpInit(t[8].init.get()), "5");
  EXPECT_EQ(dumpInit(t[9].init.get()), "On");
  EXPECT_EQ(dumpType(t[10].type.get()), "REF_TO Point");
  EXPECT_EQ(t[11].name, "Second");
}

TEST(ParserDecl, WStringTypes) {
  auto p = parse("PROGRAM P VAR w : WSTRING[10]; v, u : WSTRING; s : STRING(4); END_VAR END_PROGRAM");
  EXPECT_EQ(p->diag.errorCount(), 0u) << p->errors();
  const auto& vars = p->unit.pous.at(0).vars;
  ASSERT_EQ(vars.size(), 4u);
  EXPECT_EQ(dumpType(vars[0].type.get()), "WSTRING[10]");
  EXPECT_EQ(dumpType(vars[1].type.get()), "WSTRING");  // each name of a list has its own copy
  EXPECT_EQ(dumpType(vars[2].type.get()), "WSTRING");
  EXPECT_EQ(dumpType(vars[3].type.get()), "STRING[4]");
}

TEST(ParserDecl, StructAndEnumOnlyInTypeBlocks) {
  auto p = parse("PROGRAM P VAR s : STRUCT a : INT; END_STRUCT; e : (A, B); END_VAR END_PROGRAM");
  EXPECT_EQ(p->diag.errorCount(), 2u) << p->errors();
  EXPECT_TRUE(hasError(*p, "a STRUCT can only be declared in a TYPE block"));
  EXPECT_TRUE(hasError(*p, "an enumeration can only be declared in a TYPE block"));
}

// ------------------------------------------------------------------ POUs

TEST(ParserPou, FunctionAndProgram) {
  auto p = parseOk(
      "FUNCTION Add3 : INT\n"
      "VAR_INPUT a, b, c : INT; END_VAR\n"
      "Add3 := a + b + c;\n"
      "END_FUNCTION\n"
      "\n"
      "program main\n"
      "var x : int; end_var\n"
      "x := Add3(1, 2, 3);\n"
      "end_program\n");
  ASSERT_EQ(p->unit.pous.size(), 2u);
  const Pou& f = p->unit.pous[0];
  EXPECT_EQ(f.kind, PouKind::Function);
  EXPECT_EQ(f.name, "Add3");
  expectSpan(f.span, 1, 10, 1, 14);
  expectSpan(f.endSpan, 4, 1, 4, 13);
  EXPECT_EQ(dumpType(f.returnType.get()), "INT");
  EXPECT_EQ(f.vars.size(), 3u);
  EXPECT_EQ(f.body.size(), 1u);
  const Pou& m = p->unit.pous[1];
  EXPECT_EQ(m.kind, PouKind::Program);
  EXPECT_EQ(m.name, "main");
  EXPECT_EQ(m.returnType, nullptr);
}

TEST(ParserPou, FunctionBlockWithMethodsInBothLayouts) {
  auto p = parseOk(
      "FUNCTION_BLOCK Counter\n"
      "VAR_INPUT inc : BOOL; END_VAR\n"
      "VAR count : INT; END_VAR\n"
      "METHOD PUBLIC Reset\n"
      "  count := 0;\n"
      "END_METHOD\n"
      "METHOD Get : INT\n"
      "VAR_INPUT scale : INT; END_VAR\n"
      "  Get := THIS^.count * scale;\n"
      "END_METHOD\n"
      "IF inc THEN count := count + 1; END_IF\n"
      "END_FUNCTION_BLOCK\n"
      "\n"
      "FUNCTION_BLOCK Codesys\n"
      "VAR n : INT; END_VAR\n"
      "n := n + 1;\n"
      "METHOD PRIVATE Twice : INT\n"
      "Twice := THIS.n * 2;\n"
      "END_METHOD\n"
      "METHOD Nothing\n"
      "END_METHOD\n"
      "END_FUNCTION_BLOCK\n");
  ASSERT_EQ(p->unit.pous.size(), 2u);
  const Pou& fb = p->unit.pous[0];
  EXPECT_EQ(fb.kind, PouKind::FunctionBlock);
  ASSERT_EQ(fb.methods.size(), 2u);
  EXPECT_EQ(fb.methods[0].kind, PouKind::Method);
  EXPECT_EQ(fb.methods[0].name, "Reset");
  EXPECT_EQ(fb.methods[0].returnType, nullptr);
  EXPECT_EQ(fb.methods[0].body.size(), 1u);
  EXPECT_EQ(fb.methods[1].name, "Get");
  EXPECT_EQ(dumpType(fb.methods[1].returnType.get()), "INT");
  EXPECT_EQ(fb.methods[1].vars.size(), 1u);
  EXPECT_EQ(dump(fb.methods[1].body.at(0)->value.get()), "(* THIS^.count scale)");
  EXPECT_EQ(fb.body.size(), 1u);
  EXPECT_EQ(fb.vars.size(), 2u);
  expectSpan(fb.methods[1].endSpan, 10, 1, 10, 11);

  const Pou& cs = p->unit.pous[1];
  EXPECT_EQ(cs.body.size(), 1u);
  ASSERT_EQ(cs.methods.size(), 2u);
  EXPECT_EQ(cs.methods[0].name, "Twice");
  EXPECT_EQ(cs.methods[1].name, "Nothing");
  EXPECT_TRUE(cs.methods[1].body.empty());
}

// TwinCAT ends a header with ';' at times (TcUnit: `METHOD PUBLIC SetBuffer : BOOL;`, an
// interface's `METHOD GetTestSuiteResults : REFERENCE TO ST_TestSuiteResults;`).
TEST(ParserPou, ASemicolonAfterTheHeaderEndsNothing) {
  auto p = parseOk(
      "FUNCTION_BLOCK B\nMETHOD PUBLIC M : BOOL;\nVAR_INPUT x : INT; END_VAR\nM := x > 0;\nEND_METHOD\n"
      "END_FUNCTION_BLOCK\nINTERFACE I\nMETHOD R : REFERENCE TO INT;\nEND_METHOD\nEND_INTERFACE\n"
      "FUNCTION F : INT;\nVAR_INPUT a : INT; END_VAR\nF := a;\nEND_FUNCTION\n");
  ASSERT_EQ(p->unit.pous.size(), 3u);
  const Pou& m = p->unit.pous[0].methods.at(0);
  EXPECT_EQ(m.vars.size(), 1u);
  EXPECT_EQ(m.body.size(), 1u);
  EXPECT_EQ(dumpType(p->unit.pous[1].methods.at(0).returnType.get()), "REFERENCE TO INT");
  EXPECT_EQ(p->unit.pous[2].vars.size(), 1u);
  EXPECT_EQ(p->unit.pous[2].body.size(), 1u);
}

TEST(ParserPou, FileLevelGlobals) {
  auto p = parseOk(
      "VAR_GLOBAL CONSTANT N : INT := 10; END_VAR\n"
      "VAR_GLOBAL RETAIN total : LINT; lamp AT %QX0.1 : BOOL; END_VAR\n"
      "PROGRAM P x := N; END_PROGRAM\n");
  ASSERT_EQ(p->unit.globals.size(), 3u);
  EXPECT_EQ(p->unit.globals[0].section, VarSection::Global);
  EXPECT_TRUE(p->unit.globals[0].constant);
  EXPECT_TRUE(p->unit.globals[1].retain);
  EXPECT_EQ(p->unit.globals[2].location->parts, (std::vector<uint32_t>{0, 1}));
}

TEST(ParserPou, Configuration) {
  auto p = parseOk(
      "CONFIGURATION Plant\n"
      "  VAR_GLOBAL emergency : BOOL; END_VAR\n"
      "  RESOURCE Cpu ON PLC\n"
      "    VAR_GLOBAL speed : REAL; END_VAR\n"
      "    TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);\n"
      "    TASK Slow (INTERVAL := T#100ms, PRIORITY := 5, SINGLE := trigger);\n"
      "    PROGRAM Conveyor WITH Fast : ConveyorCtl;\n"
      "    PROGRAM Report WITH Slow : Reporter (limit := 5, alarm => emergency);\n"
      "  END_RESOURCE\n"
      "  TASK Direct (INTERVAL := T#1s);\n"
      "  PROGRAM Solo : Lonely;\n"
      "  VAR_CONFIG\n"
      "    Conveyor.fb.x AT %IX0.1 : BOOL := TRUE;\n"
      "    Report.y AT %QW4 : WORD;\n"
      "  END_VAR\n"
      "END_CONFIGURATION\n");
  ASSERT_EQ(p->unit.configurations.size(), 1u);
  const Configuration& c = p->unit.configurations[0];
  EXPECT_EQ(c.name, "Plant");
  ASSERT_EQ(c.globals.size(), 1u);
  EXPECT_EQ(c.globals[0].section, VarSection::Global);
  ASSERT_EQ(c.resources.size(), 2u);
  const Resource& r = c.resources[0];
  EXPECT_EQ(r.name, "Cpu");
  EXPECT_EQ(r.globals.size(), 1u);
  ASSERT_EQ(r.tasks.size(), 2u);
  EXPECT_EQ(r.tasks[0].name, "Fast");
  EXPECT_EQ(dump(r.tasks[0].interval.get()), "TIME#10000000");
  EXPECT_EQ(dump(r.tasks[0].priority.get()), "1");
  EXPECT_EQ(r.tasks[0].single, nullptr);
  EXPECT_EQ(dump(r.tasks[1].single.get()), "trigger");
  ASSERT_EQ(r.programs.size(), 2u);
  EXPECT_EQ(r.programs[0].name, "Conveyor");
  EXPECT_EQ(r.programs[0].taskName, "Fast");
  EXPECT_EQ(r.programs[0].typeName, "ConveyorCtl");
  ASSERT_EQ(r.programs[1].args.size(), 2u);
  EXPECT_EQ(r.programs[1].args[0].name, "limit");
  EXPECT_TRUE(r.programs[1].args[1].isOutput);
  const Resource& direct = c.resources[1];
  EXPECT_TRUE(direct.name.empty());
  ASSERT_EQ(direct.tasks.size(), 1u);
  EXPECT_EQ(direct.tasks[0].name, "Direct");
  ASSERT_EQ(direct.programs.size(), 1u);
  EXPECT_EQ(direct.programs[0].name, "Solo");
  EXPECT_TRUE(direct.programs[0].taskName.empty());
  EXPECT_EQ(direct.programs[0].typeName, "Lonely");
  ASSERT_EQ(c.varConfig.size(), 2u);
  EXPECT_EQ(c.varConfig[0].path, (std::vector<std::string>{"Conveyor", "fb", "x"}));
  EXPECT_EQ(c.varConfig[0].location->area, 'I');
  EXPECT_EQ(c.varConfig[0].location->parts, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(dumpType(c.varConfig[0].type.get()), "BOOL");
  EXPECT_EQ(dumpInit(c.varConfig[0].init.get()), "TRUE");
  expectSpan(c.varConfig[0].span, 13, 5, 13, 18);
  EXPECT_EQ(c.varConfig[1].location->size, 'W');
}

// VAR_CONFIG without an address gives an initial value; one without either is a syntax error.
TEST(ParserConfiguration, VarConfigInitialValuesWithoutAddress) {
  auto p = parseOk(
      "CONFIGURATION C\n"
      "  PROGRAM S1 : Station;\n"
      "  VAR_CONFIG\n"
      "    S1.c.step : INT := 5;\n"
      "    S1.speed AT %QW2 : INT := 40;\n"
      "  END_VAR\n"
      "END_CONFIGURATION\n");
  const Configuration& c = p->unit.configurations.at(0);
  ASSERT_EQ(c.varConfig.size(), 2u);
  EXPECT_EQ(c.varConfig[0].path, (std::vector<std::string>{"S1", "c", "step"}));
  EXPECT_FALSE(c.varConfig[0].location);
  EXPECT_EQ(dumpType(c.varConfig[0].type.get()), "INT");
  EXPECT_EQ(dumpInit(c.varConfig[0].init.get()), "5");
  ASSERT_TRUE(c.varConfig[1].location);
  EXPECT_EQ(c.varConfig[1].location->area, 'Q');
  EXPECT_EQ(dumpInit(c.varConfig[1].init.get()), "40");

  auto bad = parse("CONFIGURATION C\n  VAR_CONFIG\n    S1.x : INT;\n  END_VAR\nEND_CONFIGURATION\n");
  EXPECT_TRUE(hasError(*bad,
                       "t.st:3:15: error: expected ':=' and an initial value in a VAR_CONFIG entry without an "
                       "address, found ';'"))
      << bad->errors();
  auto noColon = parse("CONFIGURATION C\n  VAR_CONFIG\n    S1.x INT := 1;\n  END_VAR\nEND_CONFIGURATION\n");
  EXPECT_TRUE(hasError(*noColon, "t.st:3:10: error: expected ':' or AT and an address after the instance path"))
      << noColon->errors();
}

// `{attribute 'name'}` pragmas are kept (the name lower-case), in source order; other pragmas are
// not, and none of them is an error.
TEST(ParserPragmas, AttributesAreKept) {
  auto p = parseOk(
      "{attribute 'Qualified_Only'}\n{ attribute  'hide' }\n{region \"x\"}\n{warning 'w'}\n"
      "VAR_GLOBAL x : INT; END_VAR\n{attribute}\n{attribute 'unterminated}\n");
  ASSERT_EQ(p->unit.attributes.size(), 2u);
  EXPECT_EQ(p->unit.attributes[0].name, "qualified_only");
  expectSpan(p->unit.attributes[0].span, 1, 1, 1, 2);
  EXPECT_EQ(p->unit.attributes[1].name, "hide");
  EXPECT_EQ(p->unit.globals.size(), 1u);
}

TEST(ParserPou, ContextualWordsRemainUsableAsNames) {
  auto p = parseOk(
      "PROGRAM P\n"
      "VAR on, with, task, interval, priority, public : BOOL; END_VAR\n"
      "on := with AND task;\n"
      "END_PROGRAM\n");
  EXPECT_EQ(p->unit.pous.at(0).vars.size(), 6u);
}

TEST(ParserPou, CommentsPragmasAndCaseInsensitivity) {
  auto p = parseOk(
      "(* header *)\n"
      "{attribute 'qualified_only'}\n"
      "Program Main // trailing\n"
      "  Var /* c */ counter : Int; End_Var\n"
      "  counter := counter + 1; (* inc *)\n"
      "End_Program\n");
  ASSERT_EQ(p->unit.pous.size(), 1u);
  EXPECT_EQ(p->unit.pous[0].body.size(), 1u);
  expectSpan(p->unit.pous[0].body[0]->span, 5, 3, 5, 25);
}

// ------------------------------------------------------------------ errors and recovery

TEST(ParserErrors, MessageStyleAndLocation) {
  auto p = parse(
      "PROGRAM P\n"
      "VAR x : INT; END_VAR\n"
      "IF x > 0 THEN\n"
      "  x := 1\n"
      "END_IF;\n"
      "END_PROGRAM\n");
  EXPECT_EQ(p->diag.errorCount(), 1u) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:4:9: error: expected ';' after assignment, found 'END_IF'")) << p->errors();
  // the statement is kept
  const Stmt& s = *p->unit.pous.at(0).body.at(0);
  EXPECT_EQ(s.branches.at(0).body.size(), 1u);
}

TEST(ParserErrors, SeveralErrorsInOneRun) {
  auto p = parse(
      "PROGRAM A\n"                   // 1
      "VAR x : INT; y : ; END_VAR\n"  // 2: missing type
      "x := 1 +;\n"                   // 3: missing operand
      "y := 2;\n"                     // 4: fine
      "IF x THEN\n"                   // 5
      "  x := (1;\n"                  // 6: missing ')'
      "END_IF;\n"                     // 7
      "WHILE x DO x := 1; END_IF;\n"  // 8: wrong closer
      "z = 3;\n"                      // 9: '=' instead of ':='
      "END_PROGRAM\n"                 // 10
      "FUNCTION F : INT\n"            // 11
      "F := 1\n"                      // 12 (missing ';' before END_FUNCTION is reported after the 1)
      "END_FUNCTION\n");
  std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:2:18: error: expected a type, found ';'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:3:9: error: expected an expression, found ';'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:6:10: error: expected ')' to close '(', found ';'")) << e;
  // END_IF closes nothing that is open: reported and skipped, so WHILE runs on to END_PROGRAM
  EXPECT_TRUE(hasError(*p, "t.st:8:20: error: 'END_IF' without a matching 'IF'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:10:1: error: expected 'END_WHILE' to close 'WHILE' at line 8, found 'END_PROGRAM'"))
      << e;
  EXPECT_TRUE(hasError(*p, "t.st:9:3: error: expected ':=' in assignment, found '='")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:12:7: error: expected ';' after assignment, found 'END_FUNCTION'")) << e;
  ASSERT_EQ(p->unit.pous.size(), 2u);
  EXPECT_EQ(p->unit.pous[1].name, "F");
  EXPECT_EQ(p->unit.pous[0].vars.size(), 1u);  // y dropped, x kept
}

TEST(ParserErrors, RecoveryKeepsLaterPous) {
  auto p = parse(
      "PROGRAM Broken\n"
      "VAR a : INT END_VAR\n"
      "a := ;\n"
      "IF a THEN\n"
      "  a := 1;\n"
      // END_IF missing
      "END_PROGRAM\n"
      "FUNCTION_BLOCK Missing_End\n"
      "VAR b : INT; END_VAR\n"
      "b := 1;\n"
      // END_FUNCTION_BLOCK missing
      "PROGRAM Good\n"
      "VAR c : INT; END_VAR\n"
      "c := 2;\n"
      "END_PROGRAM\n"
      "TYPE T : INT; END_TYPE\n");
  std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:2:12: error: expected ';' after the declaration, found 'END_VAR'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:3:6: error: expected an expression, found ';'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:6:1: error: expected 'END_IF' to close 'IF' at line 4, found 'END_PROGRAM'")) << e;
  EXPECT_TRUE(hasError(*p,
                       "t.st:10:1: error: expected 'END_FUNCTION_BLOCK' to close 'FUNCTION_BLOCK' Missing_End at line "
                       "7, found 'PROGRAM'"))
      << e;
  ASSERT_EQ(p->unit.pous.size(), 3u);
  EXPECT_EQ(p->unit.pous[0].name, "Broken");
  EXPECT_EQ(p->unit.pous[1].name, "Missing_End");
  EXPECT_EQ(p->unit.pous[1].body.size(), 1u);
  EXPECT_EQ(p->unit.pous[2].name, "Good");
  EXPECT_FALSE(p->unit.pous[2].endSpan.line == 0);
  EXPECT_EQ(p->unit.pous[2].body.size(), 1u);
  EXPECT_EQ(p->unit.types.size(), 1u);
  EXPECT_EQ(p->diag.errorCount(), 4u) << e;
}

TEST(ParserErrors, MissingSemicolonOnNewLineContinues) {
  auto p = parse(
      "PROGRAM P\n"
      "VAR\n"
      "  a : INT\n"
      "  b : BOOL;\n"
      "END_VAR\n"
      "a := 1\n"
      "b := TRUE;\n"
      "END_PROGRAM\n");
  EXPECT_EQ(p->diag.errorCount(), 2u) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:3:10: error: expected ';' after the declaration, found 'b'"));
  EXPECT_TRUE(hasError(*p, "t.st:6:7: error: expected ';' after assignment, found 'b'"));
  EXPECT_EQ(p->unit.pous.at(0).vars.size(), 2u);
  EXPECT_EQ(p->unit.pous.at(0).body.size(), 2u);
}

// A missing ';' is located where it is missing: just after the token before it (its line and the
// column after it, a span of one column), not at the token found, which is often on the next line.
TEST(ParserErrors, AMissingSemicolonIsLocatedJustAfterTheTokenBeforeIt) {
  auto p = parse(
      "PROGRAM P\n"                 // 1
      "VAR\n"                       // 2
      "  a : INT (* a count *)\n"   // 3: after INT, not at the comment or at b
      "  b : BOOL;\n"               // 4
      "END_VAR\n"                   // 5
      "a := a + 1   // one more\n"  // 6
      "\n"                          // 7
      "b := TRUE;\n"                // 8
      "Fb(x := 1) b := FALSE;\n"    // 9: on one line
      "END_PROGRAM\n");
  const std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:3:10: error: expected ';' after the declaration, found 'b'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:6:11: error: expected ';' after assignment, found 'b'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:9:11: error: expected ';' after call, found 'b'")) << e;
  for (const Diagnostic& d : p->diag.items()) {
    if (d.message.find("expected ';'") == std::string::npos) continue;
    EXPECT_EQ(d.span.endLine, d.span.line) << d.message;
    EXPECT_EQ(d.span.endColumn, d.span.column + 1) << d.message;
  }
}

TEST(ParserErrors, LexicalAndSyntaxErrorsAreReportedInSourceOrder) {
  auto p = parse(
      "PROGRAM P\n"
      "x := ;\n"
      "s := 'bad $q';\n"
      "y := 1 +;\n"
      "t := T#5q;\n"
      "END_PROGRAM\n");
  EXPECT_EQ(p->errors(),
            "t.st:2:6: error: expected an expression, found ';'\n"
            "t.st:3:11: error: invalid escape '$q' in string (use $$ $' $L $N $P $R $T or $hh)\n"
            "t.st:4:9: error: expected an expression, found ';'\n"
            "t.st:5:6: error: invalid TIME literal 'T#5q': unknown unit 'q'\n");
}

TEST(ParserErrors, StrayClosersAndKeywords) {
  auto p = parse(
      "PROGRAM P\n"
      "x := 1;\n"
      "END_IF\n"
      "THEN\n"
      "x := 2;\n"
      "END_PROGRAM\n");
  EXPECT_TRUE(hasError(*p, "t.st:3:1: error: 'END_IF' without a matching 'IF'")) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:4:1: error: expected a statement, found 'THEN'")) << p->errors();
  EXPECT_EQ(p->diag.errorCount(), 2u) << p->errors();
  EXPECT_EQ(p->unit.pous.at(0).body.size(), 1u);  // the rest of the bad statement is skipped
}

TEST(ParserErrors, BadIfHeaderRecoversLocally) {
  auto p = parse(
      "PROGRAM P\n"
      "IF a b THEN\n"
      "  x := 1;\n"
      "END_IF;\n"
      "IF c\n"
      "  x := 2;\n"
      "END_IF;\n"
      "FOR i := 1 TO DO x := 3; END_FOR;\n"
      "y := 4;\n"
      "END_PROGRAM\n");
  std::string e = p->errors();
  EXPECT_EQ(p->diag.errorCount(), 3u) << e;
  EXPECT_TRUE(hasError(*p, "t.st:2:6: error: expected 'THEN' after the IF condition, found 'b'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:6:3: error: expected 'THEN' after the IF condition, found 'x'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:8:15: error: expected an expression, found 'DO'")) << e;
  const Pou& pou = p->unit.pous.at(0);
  ASSERT_EQ(pou.body.size(), 4u);
  EXPECT_EQ(pou.body[0]->branches.at(0).body.size(), 1u);
  EXPECT_EQ(pou.body[1]->branches.at(0).body.size(), 1u);
  EXPECT_EQ(pou.body[2]->body.size(), 1u);
  EXPECT_EQ(pou.body[3]->kind, StmtKind::Assign);
}

TEST(ParserErrors, MissingEndVarBeforeBody) {
  auto p = parse(
      "PROGRAM P\n"
      "VAR x : INT;\n"
      "x := 1;\n"
      "END_PROGRAM\n");
  EXPECT_EQ(p->diag.errorCount(), 1u) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:3:1: error: expected 'END_VAR' to close 'VAR' at line 2, found 'x'"));
  EXPECT_EQ(p->unit.pous.at(0).body.size(), 1u);
}

TEST(ParserErrors, CaseErrors) {
  auto p = parse(
      "PROGRAM P\n"
      "CASE x OF\n"
      "  y := 1;\n"
      "  1: y := 2;\n"
      "  2 y := 3;\n"
      "  3: y := 4;\n"
      "END_CASE;\n"
      "END_PROGRAM\n");
  std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:3:3: error: expected a case label such as '1:' or 'Idle:', found 'y'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:5:5: error: expected ':' after the case label, found 'y'")) << e;
  const Stmt& s = *p->unit.pous.at(0).body.at(0);
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(dump(s.cases[2].labels.at(0).lower.get()), "3");
}

TEST(ParserErrors, TopLevelGarbage) {
  auto p = parse("hello world;\nPROGRAM P END_PROGRAM\n");
  EXPECT_EQ(p->diag.errorCount(), 1u) << p->errors();
  EXPECT_TRUE(
      hasError(*p,
               "t.st:1:1: error: expected PROGRAM, FUNCTION, FUNCTION_BLOCK, CLASS, INTERFACE, TYPE, VAR_GLOBAL or "
               "CONFIGURATION, found 'hello'"));
  EXPECT_EQ(p->unit.pous.size(), 1u);
}

// The parser takes tokens from the lexer as it reaches them and releases those behind it (a
// window of a few thousand): what it comes back to must still be there, and nothing the lexer
// reports may be lost when the parse stops early.
TEST(ParserWindow, ConstructsThatComeBackToTheirFirstTokenAfterLongBodies) {
  // Far more statements than the window holds, between a token and its use.
  std::string body;
  for (int i = 0; i < 20000; ++i) body += "x := x + 1;\n";
  // A property's type is parsed again for its second accessor, after the first one's body.
  auto p = parseOk("FUNCTION_BLOCK Tank\nVAR x : INT; END_VAR\nPROPERTY Level : ARRAY[0..3] OF INT\nGET\n" + body +
                   "END_GET\nSET\n" + body + "END_SET\nEND_PROPERTY\nEND_FUNCTION_BLOCK\n");
  const Pou& tank = p->unit.pous.at(0);
  ASSERT_EQ(tank.methods.size(), 2u);
  ASSERT_TRUE(tank.methods[0].returnType);
  EXPECT_EQ(tank.methods[0].returnType->kind, TypeRefKind::Array);
  EXPECT_EQ(tank.methods[0].body.size(), 20000u);
  ASSERT_EQ(tank.methods[1].vars.size(), 1u);  // the SET's input, of the property's type
  EXPECT_EQ(tank.methods[1].vars[0].type->kind, TypeRefKind::Array);
  // A misplaced METHOD (in a FUNCTION) is reported at its first token, after its body is parsed.
  auto m = parse("FUNCTION P : INT\nVAR x : INT; END_VAR\nMETHOD Long\nVAR y : INT; END_VAR\n" + body + "END_METHOD\n" +
                 "END_FUNCTION\n");
  EXPECT_TRUE(hasError(*m, "t.st:3:1: error: METHOD is only allowed inside a PROGRAM, FUNCTION_BLOCK")) << m->errors();
  EXPECT_EQ(m->diag.errorCount(), 1u) << m->errors();
  // A block statement's end is matched to its opener after a long body.
  auto i = parse("PROGRAM P\nVAR x : INT; END_VAR\nIF x > 0 THEN\n" + body + "END_PROGRAM\n");
  EXPECT_TRUE(hasError(*i, "expected 'END_IF' to close 'IF' at line 3, found 'END_PROGRAM'")) << i->errors();
}

TEST(ParserWindow, AStatementOfMillionsOfTokensOnOneLine) {
  // 300,000 statements on one line, then an identifier of a million characters.
  std::string line;
  for (int i = 0; i < 300000; ++i) line += "x := x + 1; ";
  const std::string name(1000000, 'n');
  auto p = parseOk("PROGRAM P VAR x : INT; " + name + " : INT; END_VAR " + line + name + " := x; END_PROGRAM");
  ASSERT_EQ(p->unit.pous.size(), 1u);
  EXPECT_EQ(p->unit.pous[0].body.size(), 300001u);
  EXPECT_EQ(p->unit.pous[0].vars.at(1).name.size(), 1000000u);
  EXPECT_EQ(p->unit.pous[0].body.back()->target->text, name);
}

TEST(ParserWindow, LexicalErrorsAfterTheParseGivesUpAreStillReported) {
  // 100 syntax errors end the parse of the file; the lexer still reads it to its end, as it did
  // when it lexed the whole file first, and reports a bad character on the last line.
  std::string text = "PROGRAM P\nVAR x : INT; END_VAR\n";
  for (int i = 0; i < 150; ++i) text += "x := := 1;\n";
  text += "x := 1 @ 2;\nEND_PROGRAM\n";
  auto p = parse(text);
  EXPECT_TRUE(hasError(*p, "too many errors; giving up on this file")) << p->errors().substr(0, 300);
  EXPECT_TRUE(hasError(*p, "t.st:153:8: error: unexpected character '@'")) << p->errors();
  // And after a standalone expression (a debugger condition) that has tokens left over.
  auto e = parseExpr("a b $");
  EXPECT_FALSE(e->expr);
  EXPECT_NE(e->errors().find("unexpected character '$'"), std::string::npos) << e->errors();
}

TEST(ParserErrors, MisplacedConstructs) {
  auto p = parse(
      "METHOD M END_METHOD\n"
      "VAR_CONFIG a.b AT %IX0.0 : BOOL; END_VAR\n"
      "FUNCTION P : INT METHOD Q END_METHOD END_FUNCTION\n"
      "FUNCTION NoType VAR x : INT; END_VAR END_FUNCTION\n"  // valid: a FUNCTION without a return type
      "PROGRAM R x := 1; VAR y : INT; END_VAR END_PROGRAM\n");
  std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:1:1: error: METHOD is only allowed inside a PROGRAM, FUNCTION_BLOCK")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:2:1: error: VAR_CONFIG is only allowed in a CONFIGURATION")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:3:18: error: METHOD is only allowed inside a PROGRAM, FUNCTION_BLOCK")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:5:19: error: variable declarations must come before the statements")) << e;
  EXPECT_EQ(p->diag.errorCount(), 4u) << e;
  EXPECT_EQ(p->unit.pous.size(), 3u);
}

TEST(ParserErrors, ConfigurationErrors) {
  auto p = parse(
      "CONFIGURATION C\n"
      "  TASK T1 (INTERVAL := T#10ms, SPEED := 3);\n"
      "  RESOURCE R\n"
      "    PROGRAM I WITH T1 : Prog;\n"
      "  END_RESOURCE\n"
      "  foo;\n"
      "  PROGRAM J : Prog;\n"
      "END_CONFIGURATION\n"
      "PROGRAM Prog END_PROGRAM\n");
  std::string e = p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:2:32: error: unknown task property 'SPEED'")) << e;
  EXPECT_TRUE(hasError(*p, "t.st:4:5: error: expected 'ON' after the resource name, found 'PROGRAM'")) << e;
  EXPECT_TRUE(hasError(
      *p,
      "t.st:6:3: error: expected VAR_GLOBAL, VAR_CONFIG, RESOURCE, TASK, PROGRAM or END_CONFIGURATION, found 'foo'"))
      << e;
  EXPECT_EQ(p->diag.errorCount(), 3u) << e;
  const Configuration& c = p->unit.configurations.at(0);
  ASSERT_EQ(c.resources.size(), 2u);
  EXPECT_EQ(c.resources[0].tasks.size(), 1u);
  EXPECT_EQ(c.resources[0].programs.size(), 1u);  // J
  EXPECT_EQ(c.resources[1].programs.size(), 1u);  // I
  EXPECT_EQ(p->unit.pous.size(), 1u);
}

TEST(ParserErrors, UnterminatedEverything) {
  const char* cases[] = {
      "PROGRAM",
      "PROGRAM P",
      "PROGRAM P VAR",
      "PROGRAM P VAR x",
      "PROGRAM P VAR x :",
      "PROGRAM P VAR x : ARRAY[",
      "PROGRAM P VAR x : INT := [",
      "PROGRAM P VAR x : INT := (a := ",
      "PROGRAM P IF",
      "PROGRAM P IF x THEN",
      "PROGRAM P CASE x OF 1:",
      "PROGRAM P FOR i :=",
      "PROGRAM P REPEAT",
      "PROGRAM P REPEAT x := 1; UNTIL",
      "PROGRAM P f(",
      "PROGRAM P x := f(a := ",
      "TYPE",
      "TYPE T : STRUCT",
      "TYPE T : (",
      "CONFIGURATION",
      "CONFIGURATION C RESOURCE R ON X TASK",
      "CONFIGURATION C VAR_CONFIG a.",
      "FUNCTION_BLOCK F METHOD",
      "FUNCTION F :",
  };
  for (const char* text : cases) {
    auto p = parse(text);
    EXPECT_TRUE(p->diag.hasErrors()) << text;
    EXPECT_LE(p->diag.errorCount(), 4u) << text << "\n" << p->errors();
  }
}

TEST(ParserErrors, DeepStatementNesting) {
  std::string text = "PROGRAM P\n";
  for (int i = 0; i < 20000; ++i) text += "IF a THEN ";
  text += "x := 1;";
  for (int i = 0; i < 20000; ++i) text += " END_IF;";
  text += "\nEND_PROGRAM\nPROGRAM Q END_PROGRAM\n";
  auto p = parse(text);
  EXPECT_EQ(p->diag.errorCount(), 1u) << p->errors().substr(0, 500);
  EXPECT_TRUE(hasError(*p, "nesting is too deep"));

  // 50 levels are fine
  std::string ok = "PROGRAM P\n";
  for (int i = 0; i < 50; ++i) ok += "IF a THEN ";
  for (int i = 0; i < 50; ++i) ok += " END_IF;";
  ok += "\nEND_PROGRAM\n";
  parseOk(ok);
}

TEST(ParserErrors, DeepTypeAndInitializerNesting) {
  std::string t = "PROGRAM P VAR x : ";
  for (int i = 0; i < 50000; ++i) t += "REF_TO ";
  t += "INT; END_VAR END_PROGRAM";
  auto p = parse(t);
  EXPECT_EQ(p->diag.errorCount(), 1u);

  std::string init =
      "PROGRAM P VAR x : INT := " + std::string(50000, '[') + "1" + std::string(50000, ']') + "; END_VAR END_PROGRAM";
  auto q = parse(init);
  EXPECT_EQ(q->diag.errorCount(), 1u);
}

TEST(ParserErrors, ErrorFloodIsCapped) {
  std::string text = "PROGRAM P\n";
  for (int i = 0; i < 5000; ++i) text += "x := ;\n";
  text += "END_PROGRAM\n";
  auto p = parse(text);
  EXPECT_LE(p->diag.errorCount(), 101u);
  EXPECT_TRUE(hasError(*p, "too many errors"));
}

TEST(ParserErrors, GarbageNeverCrashes) {
  std::mt19937 rng(4242);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    size_t n = rng() % 600;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>(rng() & 0xFF);
    auto p = parse(text);
    (void)p;
  }
  // Token soup: real keywords and punctuation in random order exercises the recovery paths.
  const char* words[] = {"PROGRAM",
                         "END_PROGRAM",
                         "FUNCTION_BLOCK",
                         "END_FUNCTION_BLOCK",
                         "FUNCTION",
                         "END_FUNCTION",
                         "METHOD",
                         "END_METHOD",
                         "VAR",
                         "VAR_INPUT",
                         "VAR_CONFIG",
                         "END_VAR",
                         "TYPE",
                         "END_TYPE",
                         "STRUCT",
                         "END_STRUCT",
                         "IF",
                         "THEN",
                         "ELSIF",
                         "ELSE",
                         "END_IF",
                         "CASE",
                         "OF",
                         "END_CASE",
                         "FOR",
                         "TO",
                         "BY",
                         "DO",
                         "END_FOR",
                         "WHILE",
                         "END_WHILE",
                         "REPEAT",
                         "UNTIL",
                         "END_REPEAT",
                         "EXIT",
                         "RETURN",
                         "CONFIGURATION",
                         "END_CONFIGURATION",
                         "RESOURCE",
                         "ON",
                         "END_RESOURCE",
                         "TASK",
                         "WITH",
                         "AT",
                         "%IX0.1",
                         "ARRAY",
                         "REF_TO",
                         "STRING",
                         "x",
                         "y",
                         "1",
                         "2.5",
                         "T#1s",
                         "'s'",
                         ":=",
                         "=>",
                         ":",
                         ";",
                         ",",
                         ".",
                         "..",
                         "(",
                         ")",
                         "[",
                         "]",
                         "^",
                         "+",
                         "-",
                         "*",
                         "**",
                         "NOT",
                         "AND",
                         "=",
                         "#",
                         "E"};
  const size_t nWords = sizeof(words) / sizeof(words[0]);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    size_t n = rng() % 60;
    for (size_t i = 0; i < n; ++i) {
      text += words[rng() % nWords];
      text += (rng() % 4 == 0) ? "\n" : " ";
    }
    auto p = parse(text);
    auto e = parseExpr(text);
    if (!e->diag.hasErrors()) {
      EXPECT_TRUE(e->expr) << text;
    }
  }
}

// ------------------------------------------------------------------ clone helpers

TEST(ParserClone, DeepCopies) {
  auto p = parseOk(
      "TYPE S : STRUCT a : ARRAY[0..N] OF INT := [2(1)]; END_STRUCT; END_TYPE\n"
      "PROGRAM P VAR x : S := (a := [1, 2]); END_VAR\n"
      "x := f(a := 1, b => c)[2].d^;\n"
      "END_PROGRAM\n");
  const TypeRef& t = *p->unit.types.at(0).type;
  TypeRefPtr tc = cloneType(t);
  EXPECT_EQ(dumpType(tc.get()), dumpType(&t));
  EXPECT_NE(tc->fields.at(0).type.get(), t.fields.at(0).type.get());
  const VarDecl& v = p->unit.pous.at(0).vars.at(0);
  VarDecl vc = cloneVarDecl(v);
  EXPECT_EQ(dumpInit(vc.init.get()), dumpInit(v.init.get()));
  EXPECT_EQ(vc.name, "x");
  const Expr& e = *p->unit.pous.at(0).body.at(0)->value;
  ExprPtr ec = cloneExpr(e);
  EXPECT_EQ(dump(ec.get()), dump(&e));
  EXPECT_EQ(dump(ec.get()), "f(a := 1, b => c)[2].d^");
  expectSpan(ec->span, e.span.line, e.span.column, e.span.endLine, e.span.endColumn);
  EXPECT_EQ(cloneExpr(ExprPtr{}), nullptr);
}

// A realistic program exercising most of the dialect.
TEST(ParserPou, RealisticProgram) {
  auto p = parseOk(R"(
TYPE
  MotorState : (Stopped, Starting, Running := 10, Fault) DINT;
  Recipe : STRUCT
    name : STRING[32];
    setpoints : ARRAY[1..4] OF REAL := [4(0.0)];
    soak : TIME := T#1m30s;
  END_STRUCT
END_TYPE

VAR_GLOBAL
  gStart AT %IX0.0 : BOOL;
  gMotor AT %QX0.0 : BOOL;
END_VAR

FUNCTION_BLOCK Motor
VAR_INPUT
  start, stop : BOOL;
END_VAR
VAR_OUTPUT
  running : BOOL;
END_VAR
VAR
  state : MotorState := MotorState#Stopped;
  delay : TON := (PT := T#2s);
  edge : R_TRIG;
END_VAR
edge(CLK := start);
CASE state OF
  MotorState#Stopped:
    IF edge.Q AND NOT stop THEN state := Starting; END_IF
  Starting:
    delay(IN := TRUE);
    IF delay.Q THEN
      state := Running;
      delay(IN := FALSE);
    END_IF
  Running:
    IF stop THEN state := Stopped; END_IF
ELSE
  state := Fault;
END_CASE
running := state = Running;
END_FUNCTION_BLOCK

PROGRAM Main
VAR
  m : Motor;
  r : Recipe := (name := 'default', soak := T#45s);
  total : LREAL;
  i : INT;
END_VAR
m(start := gStart, stop := FALSE, running => gMotor);
total := 0.0;
FOR i := 1 TO 4 DO
  total := total + r.setpoints[i] * 2.0 ** i;
END_FOR
END_PROGRAM
)");
  EXPECT_EQ(p->unit.types.size(), 2u);
  EXPECT_EQ(p->unit.globals.size(), 2u);
  ASSERT_EQ(p->unit.pous.size(), 2u);
  const Pou& motor = p->unit.pous[0];
  ASSERT_EQ(motor.body.size(), 3u);
  EXPECT_EQ(motor.body[1]->kind, StmtKind::Case);
  EXPECT_EQ(motor.body[1]->cases.size(), 3u);
  EXPECT_EQ(motor.body[1]->cases[1].body.size(), 2u);
  EXPECT_EQ(dump(motor.body[2]->value.get()), "(= state Running)");
  const Pou& main = p->unit.pous[1];
  EXPECT_EQ(dump(main.body[2]->body.at(0)->value.get()), "(+ total (* r.setpoints[i] (** 2r i)))");
}

// ------------------------------------------------------------------ CODESYS and TwinCAT syntax (issue 30)

TEST(ParserCodesys, AccessSpecifiersOnEveryPou) {
  auto p = parseOk(
      "FUNCTION INTERNAL F : INT F := 1; END_FUNCTION\n"
      "FUNCTION_BLOCK PUBLIC FINAL Fb METHOD PRIVATE M : INT M := 2; END_METHOD END_FUNCTION_BLOCK\n"
      "PROGRAM PUBLIC Main END_PROGRAM\n");
  ASSERT_EQ(p->unit.pous.size(), 3u);
  EXPECT_EQ(p->unit.pous[0].name, "F");
  EXPECT_EQ(p->unit.pous[0].access, Access::Internal);
  EXPECT_EQ(p->unit.pous[1].name, "Fb");
  EXPECT_TRUE(p->unit.pous[1].isFinal);
  EXPECT_EQ(p->unit.pous[1].methods.at(0).access, Access::Private);
  EXPECT_EQ(p->unit.pous[2].name, "Main");
  // A name that looks like a specifier is still a name.
  auto named = parseOk("FUNCTION Public : INT Public := 1; END_FUNCTION\n");
  EXPECT_EQ(named->unit.pous.at(0).name, "Public");
}

TEST(ParserCodesys, SpecifiersThatDoNotApplyAreErrors) {
  auto p = parse(
      "FUNCTION PRIVATE F : INT F := 1; END_FUNCTION\n"
      "FUNCTION ABSTRACT G : INT G := 1; END_FUNCTION\n"
      "FUNCTION_BLOCK OVERRIDE Fb END_FUNCTION_BLOCK\n");
  EXPECT_TRUE(hasError(*p, "t.st:1:10: error: PRIVATE applies to methods and properties")) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:2:10: error: a 'FUNCTION' cannot be ABSTRACT")) << p->errors();
  EXPECT_TRUE(hasError(*p, "t.st:3:16: error: a 'FUNCTION_BLOCK' cannot be OVERRIDE")) << p->errors();
}

TEST(ParserCodesys, FunctionWithoutReturnType) {
  auto p = parseOk("FUNCTION Log VAR_INPUT x : INT; END_VAR END_FUNCTION\n");
  ASSERT_EQ(p->unit.pous.size(), 1u);
  EXPECT_EQ(p->unit.pous[0].returnType, nullptr);
  EXPECT_EQ(p->unit.pous[0].vars.size(), 1u);
}

TEST(ParserCodesys, AndThenOrElseAreCallsWithTheirOperatorsPrecedence) {
  EXPECT_EQ(ex("a AND_THEN b OR_ELSE c"), "OR_ELSE(AND_THEN(a, b), c)");
  EXPECT_EQ(ex("a OR_ELSE b AND_THEN c"), "OR_ELSE(a, AND_THEN(b, c))");
  EXPECT_EQ(ex("p <> 0 AND_THEN p^ > 0"), "AND_THEN((<> p 0), (> p^ 0))");
  EXPECT_EQ(ex("a AND b AND_THEN c"), "AND_THEN((AND a b), c)");
}

// The call keeps its arguments (a user's FUNCTION Add is called with them) and carries the same
// expression written with the operator in rhs.
std::string operatorForm(const std::string& text) {
  auto p = parseExpr(text);
  EXPECT_FALSE(p->diag.hasErrors()) << text << "\n" << p->errors();
  if (!p->expr || p->expr->kind != ExprKind::Call) return "<not a call>";
  EXPECT_EQ(dump(p->expr.get()), text);
  return p->expr->rhs ? dump(p->expr->rhs.get()) : "<none>";
}

TEST(ParserCodesys, OperatorFunctionsCarryTheOperatorsExpression) {
  EXPECT_EQ(operatorForm("ADD(1, 2, 3)"), "(+ (+ 1 2) 3)");
  EXPECT_EQ(operatorForm("AND(a, b, c)"), "(AND (AND a b) c)");
  EXPECT_EQ(operatorForm("OR(a, b)"), "(OR a b)");
  EXPECT_EQ(operatorForm("XOR(a, b)"), "(XOR a b)");
  EXPECT_EQ(operatorForm("MOD(a, 3)"), "(MOD a 3)");
  EXPECT_EQ(operatorForm("SUB(IN1 := a, IN2 := b)"), "(- a b)");
  EXPECT_EQ(operatorForm("GT(a, b)"), "(> a b)");
  EXPECT_EQ(operatorForm("GT(a, b, c[1].d)"), "(AND (> a b) (> b c[1].d))");
  EXPECT_EQ(operatorForm("LE(1, x, y, 9)"), "(AND (AND (<= 1 x) (<= x y)) (<= y 9))");
  EXPECT_EQ(ex("NOT(a)"), "(NOT a)");
  // Not the operator's form: plain calls (sema calls a user's function or says what the form takes).
  EXPECT_EQ(operatorForm("ADD(IN2 := a, IN1 := b)"), "<none>");
  EXPECT_EQ(operatorForm("SUB(a, b, c)"), "<none>");
  EXPECT_EQ(operatorForm("ADD(a)"), "<none>");
  EXPECT_EQ(operatorForm("GT(a, f(x), c)"), "<none>");
  EXPECT_EQ(operatorForm("MOVE(a)"), "<none>");
  EXPECT_EQ(ex("fb.ADD(a, b)"), "fb.ADD(a, b)");
  auto bare = parseExpr("AND");
  EXPECT_TRUE(bare->diag.hasErrors());
}

TEST(ParserCodesys, DoubledQuoteInStringLiterals) {
  auto p = parseExpr("'it''s'");
  ASSERT_FALSE(p->diag.hasErrors()) << p->errors();
  EXPECT_EQ(p->expr->text, "it's");
  EXPECT_EQ(parseExpr("''''")->expr->text, "'");
  EXPECT_EQ(parseExpr("''")->expr->text, "");
  auto w = parseExpr("\"a\"\"b\"");
  ASSERT_FALSE(w->diag.hasErrors()) << w->errors();
  EXPECT_EQ(w->expr->text, std::string("a\0\"\0b\0", 6));
}

TEST(ParserCodesys, PointerIndexParsesAsAnIndex) { EXPECT_EQ(ex("p[2]"), "p[2]"); }

TEST(ParserCodesys, VarInstBecomesTheBlocksAndVarStatAGlobal) {
  auto p = parseOk(
      "FUNCTION_BLOCK Fb VAR x : INT; END_VAR\n"
      "METHOD M : INT VAR_INST calls : INT := 3; END_VAR M := calls; END_METHOD END_FUNCTION_BLOCK\n"
      "FUNCTION F : INT VAR_STAT last : DINT; END_VAR F := 1; END_FUNCTION\n"
      "PROGRAM Main VAR_STAT seen : INT; END_VAR END_PROGRAM\n");
  ASSERT_EQ(p->unit.pous.size(), 3u);
  const Pou& fb = p->unit.pous[0];
  ASSERT_EQ(fb.vars.size(), 2u);
  EXPECT_EQ(fb.vars[1].name, "calls");
  EXPECT_EQ(fb.vars[1].section, VarSection::Var);
  EXPECT_EQ(dumpInit(fb.vars[1].init.get()), "3");
  EXPECT_TRUE(fb.methods.at(0).vars.empty());
  EXPECT_TRUE(p->unit.pous[1].vars.empty());
  ASSERT_EQ(p->unit.globals.size(), 1u);
  EXPECT_EQ(p->unit.globals[0].name, "last");
  EXPECT_EQ(p->unit.globals[0].section, VarSection::Global);
  ASSERT_EQ(p->unit.pous[2].vars.size(), 1u);
  EXPECT_EQ(p->unit.pous[2].vars[0].section, VarSection::Var);
  auto bad = parse("PROGRAM Main VAR_INST x : INT; END_VAR END_PROGRAM\n");
  EXPECT_TRUE(hasError(*bad, "VAR_INST is only allowed in a METHOD")) << bad->errors();
}

TEST(ParserCodesys, UnionIsAStructWhoseFieldsOverlap) {
  auto p = parseOk("TYPE U : UNION d : DINT; b : ARRAY[0..3] OF BYTE; END_UNION END_TYPE\n");
  const TypeRef& t = *p->unit.types.at(0).type;
  EXPECT_EQ(t.kind, TypeRefKind::Struct);
  EXPECT_TRUE(t.isUnion);
  EXPECT_EQ(t.fields.size(), 2u);
  auto bad = parse("TYPE U : UNION d : DINT; END_STRUCT END_TYPE\n");
  EXPECT_TRUE(bad->diag.hasErrors());
}

TEST(ParserCodesys, InstanceInitialisationArgumentsAreAPreciseError) {
  auto p = parse("PROGRAM Main VAR o : Otg(0, 0); x : INT; END_VAR x := 1; END_PROGRAM\n");
  EXPECT_TRUE(hasError(*p, "t.st:1:27: error: instance initialisation arguments ('Otg(...)' calling FB_init)"))
      << p->errors();
  EXPECT_FALSE(hasError(*p, "subrange")) << p->errors();
  auto one = parse("PROGRAM Main VAR o : Otg(5); END_VAR END_PROGRAM\n");
  EXPECT_TRUE(hasError(*one, "calling FB_init")) << one->errors();
}

}  // namespace
}  // namespace scanback
