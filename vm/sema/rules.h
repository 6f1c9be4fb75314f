// The typing rules of the dialect (docs/language.md) as pure functions: implicit conversions,
// literal ranges, and constant folding with the VM's arithmetic. The analyzer applies them; the
// stimulus reader and the debugger's assignments check values with them too.
#pragma once

#include <optional>

#include "vm/bytecode/constant.h"
#include "vm/bytecode/types.h"
#include "vm/syntax/ast.h"

namespace scanback::sema {

// The type a value of `t` is computed in: subranges are their base type.
const Type* valueBase(const Type* t);
// 1 (8 bits) .. 4 (64 bits) for integers and bit strings, 0 otherwise.
int intRank(const Type* t);
// Widening as IEC allows it (docs/language.md, "Expressions").
bool implicitlyConvertible(const Type* from, const Type* to);
// What CODESYS converts implicitly beyond that, with a warning: between any two integer, bit
// string and real types (BOOL, times, strings and enumerations excluded).
bool codesysConvertible(const Type* from, const Type* to);
// An untyped literal (ANY_INT, ANY_REAL) fits `t` without losing anything.
bool fitsLiteral(const ConstValue& c, const Type* t);
// The type an untyped literal takes without a context: DINT, else LINT, else ULINT; LREAL.
TypeKind literalKind(const ConstValue& c);
// `v` wrapped to the width and signedness of the integer type `t`, as the VM stores it.
Int128 wrapTo(Int128 v, const Type* t);
// A typed constant converted as the VM's CVT does (explicit) or value-preserving (implicit).
ConstValue convertConst(const ConstValue& c, const Type* to);

bool isComparison(ast::BinaryOp op);
const char* opText(ast::BinaryOp op);

enum class FoldError { None, DivisionByZero, Overflow };
// `a op b` at compile time, in type `t` (null: both untyped). Integers wrap at `t`'s width as the
// VM's arithmetic does; untyped integers fold exactly, and a result beyond 128 bits is an
// Overflow. Nullopt (with `error` None) when the operation is not folded.
std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue& a, const ConstValue& b, const Type* t,
                                     FoldError& error);

// Evaluating `e` cannot fault and has no effects, so skipping it changes no result and no fault.
bool safeToSkip(const ast::Expr& e);

}  // namespace scanback::sema
