// What a statement reads at its own boundary: the places (variables, fields, elements,
// dereferences, bits) whose values its code uses, as the spans of their text. One rule, over the
// typed IR, applied by the compiler as it lowers each statement (vm/compiler/statement_reads.h) for
// whoever explains a value (`trace why`, DAP `scanback/why`): they evaluate each span's text with
// the debugger's evaluator in the statement's frame, so computed indexes and references resolve
// from the replayed state at that moment (docs/explain.md).
//
// A statement's own expressions only: the statements nested in an IF, CASE or loop have their own
// boundaries and their own reads. An IF reads all of its conditions (the ELSIF tests belong to
// the IF statement's code); a loop its condition, bounds and step.
//
// A place is reported whole (`fb.x.y`, `a[i]`, `p^`), and so is every place its address depends
// on (the index `i`, the reference `p`). The target of an assignment and an output binding are
// not read, but their indexes and references are. A place passed by reference (VAR_IN_OUT, REF())
// is not read by the statement: the callee reads it, at its own statements.
#pragma once

#include <vector>

#include "vm/sema/ir.h"

namespace scanback::sema {

// In evaluation order, each span once.
std::vector<SourceSpan> readsOf(const Stmt& s);

}  // namespace scanback::sema
