// The semantic pass: AST in, typed IR (ir.h) out, errors to Diagnostics. It resolves every name
// through a Scope (scope.h), types every expression by the rules of docs/language.md (rules.h),
// makes every conversion an IR node and folds constant expressions. The compiler runs it on each
// POU body and on the constant expressions of declarations; the debugger's evaluator, stimulus
// files, `trace why` and the DAP server run it on an expression in a paused frame or the global
// scope. So an expression means the same wherever it is written.
//
// Errors are reported and the analysis goes on with an Invalid node, which later checks stay
// quiet about, so that one run reports many errors; a caller that wants one takes the first.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "vm/sema/ir.h"
#include "vm/sema/rules.h"
#include "vm/sema/scope.h"
#include "vm/source/source.h"
#include "vm/syntax/ast.h"

namespace scanback::sema {

class Analyzer {
 public:
  struct Options {
    // Calls of user functions, methods and function blocks are errors (the debugger: evaluating
    // must not change the program state). `sourceText` gives the text the message quotes.
    bool rejectCalls = false;
    std::function<std::string(const SourceSpan&)> sourceText;
    // A CONSTANT named alone is its value (folded), or the variable that holds it (paths that
    // designate storage: stimulus columns, `trace why`).
    bool foldNamedConstants = true;
    // Statement lists inside statements are left to the caller (Stmt::bodySource and friends),
    // who analyses them a statement at a time with listStatement(): the compiler, so that the IR
    // of a CASE of a hundred thousand branches is never held whole.
    bool deferLists = false;
  };

  Analyzer(Scope& scope, Diagnostics& diagnostics, Arena& arena, Options options);
  Analyzer(Scope& scope, Diagnostics& diagnostics, Arena& arena) : Analyzer(scope, diagnostics, arena, Options{}) {}

  // ---- expressions (expressions.cpp)
  // `hint`: the type the context expects (an assignment's target, a parameter's type); it types
  // untyped literals and enumeration value names, never converts.
  Expr* expression(const ast::Expr& e, const Type* hint = nullptr);
  // The value of a constant expression (a Constant node), or null when `e` is not one (nothing
  // reported for that; errors inside a constant expression are).
  Expr* constant(const ast::Expr& e, const Type* hint = nullptr);
  // `v` as a value of `to`: folded for constants, a Convert node otherwise. Reports conversions
  // the rules do not allow (any scalar conversion is allowed when explicit).
  Expr* convert(Expr* v, const Type* to, const SourceSpan& span, bool explicitConversion = false);
  // `v` as it is stored into a variable of `type`: converted, and checked against a subrange.
  Expr* stored(Expr* v, const Type* type, const SourceSpan& span);
  // A type by name: elementary, STRING, declared, or a function block's.
  const Type* typeNamed(const std::string& name, const SourceSpan& span);
  // An elementary type by upper-case name (TOD and DT included), or else (unless
  // `elementaryOnly`) a declared one; null when there is none, reporting nothing.
  const Type* typeNamedQuietly(const std::string& upperName, bool elementaryOnly = false);
  // The names of TwinCAT's system library a project uses without declaring them: T_MaxString,
  // PVOID, MAX_STRING_LENGTH (null when `upperName` is none of them).
  const Type* systemLibraryType(const std::string& upperName);
  Expr* systemLibraryConstant(const std::string& upperName, const SourceSpan& span);
  const Type* literalType(const ConstValue& c) const;
  bool isPoison(const Expr* e) const { return e && e->type == types().errorType(); }
  // A place the code may store into: not inside a CONSTANT.
  static bool assignable(const Expr* place) { return !place->readOnly; }
  // `e` designates a variable or a part of one (a place a value can be stored into), not a value
  // computed from it: `(a + 1) := 2` and `f(x) := 2` have no place to store into.
  static bool designatesPlace(const Expr* e);

  // ---- statements (statements.cpp)
  StmtList statements(const ast::StmtList& list);
  // One statement of a statement list (null for an empty one), as statements() analyses each: the
  // compiler analyses and lowers a body a statement at a time, so that the IR of a long body is
  // never held whole.
  // `loops`: the loops around it (Stmt::listLoops of the statement whose list it is in).
  const Stmt* listStatement(const ast::Stmt& s, int loops = 0) {
    loops_ = loops;
    return s.kind == ast::StmtKind::Empty ? nullptr : statement(s);
  }
  // A BOOL condition, in the forms a jump uses (Expr::jumpForm).
  Expr* condition(const ast::Expr& cond);

  TypeSource& types() const { return scope_.declarations().types(); }
  Scope& scope() const { return scope_; }

  // Internal helpers shared by the analyzer's translation units.
  Expr* make(ExprKind kind, const Type* type, const SourceSpan& span);
  Expr* constantNode(const Type* type, ConstValue c, const SourceSpan& span);
  Expr* operation(Op op, const Type* type, const SourceSpan& span, std::initializer_list<const Expr*> operands);
  Expr* invalid(const Type* type, const SourceSpan& span);
  Expr* poison(const SourceSpan& span) { return invalid(types().errorType(), span); }
  void error(const SourceSpan& span, std::string message) { diags_.error(span, std::move(message)); }
  const Type* elementary(TypeKind kind) const { return types().elementary(kind); }
  const Type* commonType(const Expr* a, const Expr* b, const SourceSpan& span);
  // The same bits read as `to` (the conversion functions' relabelling: no check).
  Expr* relabel(Expr* v, const Type* to, const SourceSpan& span);
  // `e` as it is used when its type is a REFERENCE TO: a dereference of it (references.cpp).
  Expr* dereferenced(Expr* e);
  // An implicit conversion IEC forbids and CODESYS accepts: warns and says yes, unless --strict.
  bool codesysImplicit(const Type* from, const Type* to, const SourceSpan& span);
  // convert(), applied where the consumer reads the operand (Expr::atRead).
  Expr* operandAs(Expr* v, const Type* to, const SourceSpan& span, bool explicitConversion = false);

 private:
  // ---- expressions.cpp
  Expr* literal(const ast::Expr& e);
  Expr* name(const ast::Expr& e);
  Expr* member(const ast::Expr& e);
  Expr* enumMember(const ast::Expr& e);
  const std::string* globalListNamed(const ast::Expr& e);
  Expr* listMember(const ast::Expr& e, bool constantOnly);
  Expr* index(const ast::Expr& e);
  Expr* deref(const ast::Expr& e);
  Expr* pointerIndex(const ast::Expr& e, Expr* pointer);
  Expr* bitAccess(const ast::Expr& e);
  Expr* unary(const ast::Expr& e, const Type* hint);
  Expr* binary(const ast::Expr& e, const Type* hint);
  Expr* binaryOperation(const ast::Expr& e, Expr* a, Expr* b);
  Expr* variable(const VariableSymbol& symbol, const SourceSpan& span);
  Expr* field(Expr* base, const Variable& f, const SourceSpan& span);
  Expr* constantName(const ast::Expr& e, const Type* hint);
  bool isVariable(std::string_view name);
  // ---- calls.cpp
  Expr* call(const ast::Expr& e, const Type* hint, bool statement);
  Expr* functionCall(const ast::Expr& e, const Callee& callee, Expr* self);
  Expr* functionBlockCall(const ast::Expr& e, Expr* instance, const Type* fbType);
  Expr* outputValue(const Variable& parameter, bool negated, const SourceSpan& span);
  Expr* inOutArgument(const ast::Expr& call, const ast::Argument* a, const Variable& p, const std::string& callee,
                      bool functionBlock);
  void outputs(const std::vector<const Variable*>& params, const std::vector<const ast::Argument*>& bound,
               CallInfo& info);
  bool callRejected(const ast::Expr& callee);
  // ---- objects.cpp
  static bool isSuper(const ast::Expr& e);
  Expr* thisNode(const SourceSpan& span);
  const Type* superType(const SourceSpan& span);
  bool accessible(const Callee& m, const std::string& what, const SourceSpan& span);
  Expr* methodCall(const ast::Expr& e, const Callee& m, Expr* self, bool onThis);
  Expr* propertyGet(const ast::Expr& e, Expr* self, const std::string& name, bool onThis);
  const Stmt* propertySet(const ast::Stmt& s);
  Expr* interfaceValue(Expr* v, const Type* to, const SourceSpan& span);
  // ---- builtins.cpp
  Expr* builtin(const ast::Expr& call, const std::string& upperName, const Type* hint);
  Expr* conversion(const ast::Expr& call, Expr* arg, const Type* from, const Type* to);
  // ---- assertions.cpp: ASSERT_* and ADVANCE_TIME of unit tests; null for any other name
  Expr* testBuiltin(const ast::Expr& call, const std::string& upperName);
  // ---- wide_strings.cpp: WSTRING and WCHAR
  Expr* stringLiteral(const ast::Expr& e);
  // A conversion to or from WSTRING or WCHAR (conversion() for the rest); null when neither is.
  Expr* wideConversion(const ast::Expr& call, Expr* arg, const Type* from, const Type* to);
  // A string of either width: the type of that width and capacity.
  const Type* stringType(bool wide, uint64_t capacity);
  // ---- bounds.cpp: LOWER_BOUND and UPPER_BOUND; null for any other name
  Expr* boundsBuiltin(const ast::Expr& call, const std::string& upperName);
  // ---- pointer_builtins.cpp: __ISVALIDREF, __QUERYINTERFACE, __QUERYPOINTER; null for any other name
  Expr* pointerBuiltin(const ast::Expr& call, const std::string& upperName);
  // Why the reference `from` does not convert to the reference `to`.
  static std::string referenceMismatch(const Type* from, const Type* to);
  // ---- references.cpp: REFERENCE TO
  // The address `value` binds a REFERENCE TO of type `reference` to (REF='s right side, an input's
  // argument): a variable of its type, another reference, or 0; `what` names the binding in errors.
  Expr* referenceBinding(const ast::Expr& value, const Type* reference, const std::string& what);
  const Stmt* refAssignment(const ast::Stmt& s);  // `r REF= x`
  // ---- statements.cpp
  const Stmt* statement(const ast::Stmt& s);
  const Stmt* assignment(const ast::Stmt& s);
  const Stmt* caseStatement(const ast::Stmt& s);
  const Stmt* forStatement(const ast::Stmt& s);
  // A nested statement list of `owner`: analysed into `out`, or deferred into `source`.
  void nestedList(Stmt* owner, const ast::StmtList& list, StmtList& out, const ast::StmtList*& source);

  Scope& scope_;
  Diagnostics& diags_;
  Arena& arena_;
  Options options_;
  int loops_ = 0;  // loops around the statement being analysed (EXIT, CONTINUE)

  friend class BuiltinAnalysis;
};

}  // namespace scanback::sema
