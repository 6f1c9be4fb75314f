#include "vm/sema/reads.h"

#include <algorithm>

namespace scanback::sema {

namespace {

bool isReadPlace(ExprKind k) {
  switch (k) {
    case ExprKind::Variable:
    case ExprKind::Field:
    case ExprKind::Offset:
    case ExprKind::Element:
    case ExprKind::Bit:
    case ExprKind::Deref: return true;
    default: return false;
  }
}

class ReadCollector {
 public:
  std::vector<SourceSpan> spans;

  // `e` is computed for its value.
  void value(const Expr* e) {
    if (!e) return;
    if (isReadPlace(e->kind)) {
      add(e->span);
      address(e);
      return;
    }
    switch (e->kind) {
      case ExprKind::AddressOf: address(operand(e, 0)); return;
      case ExprKind::Call: call(*e->call); return;
      case ExprKind::Assertion:
        for (const Expr* o : e->assertion->operands) value(o);
        return;
      // Whole instances (an FB passed as a whole, THIS): no value of their own to explain.
      case ExprKind::ProgramInstance:
      case ExprKind::This:
      // Computed by the callee, or already counted (an assertion's operand).
      case ExprKind::Parameter:
      case ExprKind::AssertOperand:
      case ExprKind::Constant:
      case ExprKind::Invalid: return;
      default:
        for (const Expr* o : e->a) value(o);
    }
  }

  // `e` designates storage: what its address depends on (indexes, references) is read, the place
  // itself is not.
  void address(const Expr* e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Variable:
      case ExprKind::ProgramInstance:
      case ExprKind::This: return;
      case ExprKind::Field:
      case ExprKind::Offset:
      case ExprKind::Bit: address(operand(e, 0)); return;
      case ExprKind::Element:
        address(operand(e, 0));
        for (size_t i = 1; i < e->a.size(); ++i) value(e->a[i]);
        return;
      case ExprKind::Deref: value(operand(e, 0)); return;
      default: value(e);  // a computed instance (a call's result), a conversion of a place
    }
  }

 private:
  static const Expr* operand(const Expr* e, size_t i) { return i < e->a.size() ? e->a[i] : nullptr; }

  void call(const CallInfo& c) {
    if (c.instance) address(c.instance);
    for (const Binding& b : c.inputs) {
      if (b.role == Binding::Role::InOut)
        address(b.value);
      else
        value(b.value);
    }
    for (const Binding& b : c.outputs) address(b.target);
  }

  void add(const SourceSpan& span) {
    if (!span.valid()) return;
    const bool seen = std::any_of(spans.begin(), spans.end(), [&](const SourceSpan& s) {
      return s.file == span.file && s.line == span.line && s.column == span.column && s.endLine == span.endLine &&
             s.endColumn == span.endColumn;
    });
    if (!seen) spans.push_back(span);
  }
};

}  // namespace

std::vector<SourceSpan> readsOf(const Stmt& s) {
  ReadCollector r;
  switch (s.kind) {
    case StmtKind::Assign:
      r.address(s.target);
      r.value(s.value);
      break;
    case StmtKind::Call:
    case StmtKind::Case:
    case StmtKind::While:
    case StmtKind::Repeat: r.value(s.value); break;
    case StmtKind::If:
      for (const IfBranch& b : s.branches) r.value(b.condition);
      break;
    case StmtKind::For:
      r.address(s.target);
      r.value(s.value);
      r.value(s.limit);
      r.value(s.step);
      break;
    case StmtKind::Exit:
    case StmtKind::Continue:
    case StmtKind::Return: break;
  }
  return std::move(r.spans);
}

}  // namespace scanback::sema
