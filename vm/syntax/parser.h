// The Structured Text parser: tokens -> ast::CompilationUnit. See docs/language.md.
//
// Recursive descent. Expression precedence, highest first: postfix (call, `.member`, `.3` bit
// access, `[index]`, `^`), `**` (left-associative), unary `-` `+` `NOT`, `* / MOD`, `+ -`,
// `< > <= >=`, `= <>`, `AND &`, `XOR`, `OR`.  So `-2**2` is -(2**2) and `NOT a = b` is
// `(NOT a) = b`. The right operand of `**` may itself carry a sign: `2 ** -1`.
//
// Choices made here (later stages rely on them):
// - Unary minus directly applied to an untyped integer or real literal is folded into the
//   literal: `-5` is an IntLiteral with intValue 5 and negative = true (so -9223372036854775808
//   is representable), `-1.5` a RealLiteral with realValue -1.5. The literal's span then covers
//   the '-'. Anything else (`-x`, `-(5)`, `-INT#5`, `-T#1s`, `- -5`'s outer minus, `-2**2`) stays a
//   Unary node. Unary `+` is never folded.
// - Typed literal values: IntLiteral keeps the magnitude in intValue and the sign in `negative`
//   (INT#-5); RealLiteral holds the signed value; Time/Date/Tod/Dt literals hold signed
//   nanoseconds in intValue (read it as static_cast<int64_t>(intValue)); typePrefix is upper-case
//   and normalised: "TIME"/"LTIME", "DATE", "TOD", "DT", "INT", "REAL", "BOOL", ...
// - A qualified enum value `State#Idle` is a Name expression whose text is "State#Idle".
// - `THIS` is a Name; `THIS^.x` is Member(Deref(Name THIS), x).
// - A Call's operand is the callee expression: a Name, a Member (method / instance path), or an
//   Index / Deref (e.g. `timers[i](IN := x)`); sema decides what may be called.
// - A parenthesised expression has no node of its own; the inner expression's span is widened to
//   include the parentheses.
// - Spans: every Expr span covers its source text. Stmt::span runs from the statement's first
//   token to its last token, excluding the terminating ';' (an IF ends at END_IF; an empty
//   statement is the ';' itself). The ';' after END_IF/END_CASE/END_FOR/END_WHILE/END_REPEAT is
//   optional; after END_STRUCT, END_VAR, END_TYPE and END_<POU> an optional ';' is accepted on the
//   same line only (one on the next line is an empty statement / an error).
// - Declarations listing several names (`a, b : INT := 5;`) give each VarDecl its own deep copy of
//   the type and initializer. VarDecl::span is the name.
// - PERSISTENT sets VarDecl::retain; NON_RETAIN clears it.
// - Tasks and program instances written directly in a CONFIGURATION go into a Resource with an
//   empty name (created when the first one is seen).
// - METHOD access specifiers (PUBLIC, PRIVATE, PROTECTED, INTERNAL) and ABSTRACT/FINAL are
//   accepted and dropped. Methods may come before or after the FB body. The resource type after
//   `RESOURCE name ON` is accepted and dropped.
//
// Errors: reported to Diagnostics as "expected ';' after assignment, found 'END_IF'" with the
// location of the offending token; lexical and syntax errors of a file are added in source order. The parser then
// resynchronises (to the next ';', statement keyword, END_* keyword, section or POU keyword) so that later errors and
// later POUs are still found. At most 100 parser errors (and 100 lexer errors) are reported per file. Nesting deeper
// than 200 levels (parentheses, unary operators, statements, types, initializers) is reported once
// and stops the parse of that file. An expression whose tree would be more than 1000 levels high
// (e.g. `a + a + ...` with over 1000 terms) is an error, so later stages may walk the AST
// recursively: no expression in a returned AST is taller than 1000 levels and statements nest at
// most 200 deep. When errors were reported the returned AST is partial: failed statements and
// declarations are dropped and some required pointers (a condition, a type) may be null, so
// later stages must not run on it.
#pragma once

#include "vm/source/source.h"
#include "vm/syntax/ast.h"

namespace scanback {

// Parses one whole file.
ast::CompilationUnit parseFile(const SourceSet& sources, FileId file, Diagnostics& diagnostics);

// Parses a file holding exactly one expression (debugger conditions, stimulus values). Returns
// null if and only if this call reported an error (including tokens after the expression).
ast::ExprPtr parseExpression(const SourceSet& sources, FileId file, Diagnostics& diagnostics);

}  // namespace scanback

namespace scanback::ast {

// Deep copies.
ExprPtr cloneExpr(const Expr& expr);
ExprPtr cloneExpr(const ExprPtr& expr);  // null -> null
TypeRefPtr cloneType(const TypeRef& type);
TypeRefPtr cloneType(const TypeRefPtr& type);  // null -> null
InitPtr cloneInit(const Initializer& init);
InitPtr cloneInit(const InitPtr& init);  // null -> null
VarDecl cloneVarDecl(const VarDecl& decl);
Argument cloneArgument(const Argument& arg);

}  // namespace scanback::ast
