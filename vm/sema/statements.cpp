// Statements and conditions.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "vm/sema/analyzer.h"

namespace scanback::sema {

StmtList Analyzer::statements(const ast::StmtList& list) {
  StmtList out;
  for (const auto& s : list)
    if (s && s->kind != ast::StmtKind::Empty)
      if (const Stmt* st = statement(*s)) out.push_back(st);
  return out;
}

const Stmt* Analyzer::statement(const ast::Stmt& s) {
  Stmt* st = arena_.stmt();
  st->span = s.span;
  switch (s.kind) {
    case ast::StmtKind::Assign: return s.refAssign ? refAssignment(s) : assignment(s);
    case ast::StmtKind::Call:
      st->kind = StmtKind::Call;
      st->value = call(*s.value, nullptr, true);
      return st;
    case ast::StmtKind::If:
      st->kind = StmtKind::If;
      for (const ast::IfBranch& b : s.branches) {
        IfBranch branch;
        if (b.condition) branch.condition = condition(*b.condition);
        nestedList(st, b.body, branch.body, branch.source);
        st->branches.push_back(std::move(branch));
      }
      st->hasElse = s.hasElse;
      if (s.hasElse) nestedList(st, s.elseBody, st->elseBody, st->elseSource);
      return st;
    case ast::StmtKind::Case: return caseStatement(s);
    case ast::StmtKind::For: return forStatement(s);
    case ast::StmtKind::While:
    case ast::StmtKind::Repeat:
      st->kind = s.kind == ast::StmtKind::While ? StmtKind::While : StmtKind::Repeat;
      // The code tests the condition after the body (WHILE jumps to the test first).
      ++loops_;
      nestedList(st, s.body, st->body, st->bodySource);
      --loops_;
      st->value = condition(*s.value);
      return st;
    case ast::StmtKind::Exit:
    case ast::StmtKind::Continue:
      st->kind = s.kind == ast::StmtKind::Exit ? StmtKind::Exit : StmtKind::Continue;
      if (loops_ == 0) error(s.span, s.kind == ast::StmtKind::Exit ? "EXIT outside a loop" : "CONTINUE outside a loop");
      return st;
    case ast::StmtKind::Return: st->kind = StmtKind::Return; return st;
    case ast::StmtKind::Empty: return nullptr;
  }
  return nullptr;
}

const Stmt* Analyzer::assignment(const ast::Stmt& s) {
  Stmt* st = arena_.stmt();
  st->kind = StmtKind::Assign;
  st->span = s.span;
  if (const Stmt* set = propertySet(s)) return set;
  Expr* target = expression(*s.target);
  if (target->kind == ExprKind::Constant || !assignable(target)) {
    error(s.target->span, "cannot assign to a constant");
    return st;
  }
  if (!isPoison(target) && !designatesPlace(target)) {
    error(s.target->span, "cannot assign to the value of an expression; assign to a variable");
    return st;
  }
  st->target = target;
  Expr* v = expression(*s.value, target->type);
  st->value = stored(v, target->type, s.value->span);
  return st;
}

bool Analyzer::designatesPlace(const Expr* e) {
  switch (e->kind) {
    case ExprKind::Variable:
    case ExprKind::ProgramInstance:
    case ExprKind::This:
    case ExprKind::Field:
    case ExprKind::Offset:
    case ExprKind::Element:
    case ExprKind::Bit:
    case ExprKind::Deref:
    case ExprKind::Invalid: return true;  // reported already
    case ExprKind::Convert: return e->conversion == Conversion::Relabel && designatesPlace(e->a[0]);
    default: return false;
  }
}

const Stmt* Analyzer::caseStatement(const ast::Stmt& s) {
  Stmt* st = arena_.stmt();
  st->kind = StmtKind::Case;
  st->span = s.span;
  Expr* sel = expression(*s.value);
  const Type* t = sel->type ? sel->type : (sel->kind == ExprKind::Constant ? literalType(sel->constant) : nullptr);
  const Type* base = valueBase(t);
  if (!base || !(base->isInteger() || base->kind == TypeKind::Enum)) {
    error(s.value->span, fmt::format("CASE needs an integer or enumeration selector, not {}", t ? t->name : "?"));
    return st;
  }
  const Type* valueType = base->kind == TypeKind::Enum ? base->base : base;
  st->value = operandAs(sel, t, s.value->span);
  st->valueType = valueType;
  auto labelValue = [&](const ast::Expr& e) -> std::optional<Int128> {
    const Expr* v = constant(e, base);
    if (!v || (v->constant.kind != ConstValue::Kind::Int && v->constant.kind != ConstValue::Kind::Bool)) {
      error(e.span, "a CASE label must be a constant");
      return std::nullopt;
    }
    if (base->kind == TypeKind::Enum && v->type != base) {
      error(e.span, fmt::format("label is not a value of {}", base->name));
      return std::nullopt;
    }
    if (base->kind != TypeKind::Enum && !v->type && !fitsLiteral(v->constant, valueType)) {
      error(e.span, fmt::format("label {} does not fit {}", int128Text(v->constant.i), valueType->name));
      return std::nullopt;
    }
    return v->constant.i;
  };
  // The values the labels so far cover, as disjoint ranges by their lower bound: a label is
  // checked against its neighbours there, not against every earlier label (a CASE of 100,000
  // labels took seconds).
  std::map<Int128, Int128> covered;
  for (size_t b = 0; b < s.cases.size(); ++b) {
    for (const ast::CaseLabel& l : s.cases[b].labels) {
      std::optional<Int128> lo = labelValue(*l.lower);
      if (!lo) continue;
      std::optional<Int128> hi = l.upper ? labelValue(*l.upper) : lo;
      if (!hi) continue;
      if (*hi < *lo) {
        error(l.span, "empty CASE range");
        continue;
      }
      // The first covered range that ends at or after lo overlaps when it starts at or before hi.
      auto next = covered.upper_bound(*lo);
      if (next != covered.begin() && std::prev(next)->second >= *lo) --next;
      if (next != covered.end() && next->first <= *hi) error(l.span, "CASE label overlaps an earlier one");
      Int128 from = *lo, to = *hi;
      while (next != covered.end() && next->first <= to) {  // merged into one covered range
        from = std::min(from, next->first);
        to = std::max(to, next->second);
        next = covered.erase(next);
      }
      covered.emplace(from, to);
      st->ranges.push_back(CaseRange{*lo, *hi, b, l.span});
    }
  }
  for (const ast::CaseBranch& b : s.cases) {
    IfBranch branch;
    nestedList(st, b.body, branch.body, branch.source);
    st->branches.push_back(std::move(branch));
  }
  st->hasElse = s.hasElse;
  if (s.hasElse) nestedList(st, s.elseBody, st->elseBody, st->elseSource);
  return st;
}

const Stmt* Analyzer::forStatement(const ast::Stmt& s) {
  Stmt* st = arena_.stmt();
  st->kind = StmtKind::For;
  st->span = s.span;
  Expr* var = expression(*s.target);
  if (isPoison(var)) return st;
  if (var->kind == ExprKind::Constant && s.target->kind == ast::ExprKind::Name) {
    error(s.target->span, "the FOR control variable cannot be a constant");
    return st;
  }
  const Type* t = valueBase(var->type);
  if (var->kind == ExprKind::Constant || !t || !t->isInteger() || !designatesPlace(var)) {
    error(s.target->span, "the FOR control variable must be an integer variable");
    return st;
  }
  if (!isDirect(var)) {
    // a[i] would move while the loop runs (IEC allows only a name; TwinCAT an element too).
    error(s.target->span, unconverted(var)->kind == ExprKind::Element
                              ? "the FOR control variable can be an element only at constant indexes"
                              : "the FOR control variable must be an integer variable");
    return st;
  }
  st->target = var;
  if (var->readOnly) {
    error(s.target->span, "the FOR control variable cannot be a constant");
    if (!isPoison(expression(*s.value, t))) error(s.value->span, "cannot assign to a constant");
  } else {
    st->value = stored(expression(*s.value, t), var->type, s.value->span);
  }
  // The end value and step are evaluated once, before the first iteration.
  auto once = [&](const ast::Expr* e, int64_t deflt) -> const Expr* {
    if (!e) return constantNode(t, ConstValue::ofInt(deflt), s.span);
    Expr* v = expression(*e, t);
    if (v->kind == ExprKind::Constant) return convert(v, t, e->span);
    return stored(v, t, e->span);
  };
  st->limit = once(s.to.get(), 0);
  st->step = once(s.by.get(), 1);
  ++loops_;
  nestedList(st, s.body, st->body, st->bodySource);
  --loops_;
  return st;
}

void Analyzer::nestedList(Stmt* owner, const ast::StmtList& list, StmtList& out, const ast::StmtList*& source) {
  if (options_.deferLists) {
    source = &list;
    owner->listLoops = loops_;
  } else {
    out = statements(list);
  }
}

Expr* Analyzer::condition(const ast::Expr& cond) {
  const Type* boolType = elementary(TypeKind::Bool);
  if (Expr* c = constant(cond, boolType)) {
    if (c->constant.kind != ConstValue::Kind::Bool && !(c->type && c->type->kind == TypeKind::Bool)) {
      error(cond.span, "condition must be BOOL");
      return invalid(boolType, cond.span);
    }
    return c;
  }
  // NOT of a comparison flips the jump (NOT on bit strings is arithmetic, handled below).
  if (cond.kind == ast::ExprKind::Unary && cond.unaryOp == ast::UnaryOp::Not &&
      cond.operand->kind == ast::ExprKind::Binary && isComparison(cond.operand->binaryOp)) {
    Expr* r = operation(Op::BoolNot, boolType, cond.span, {condition(*cond.operand)});
    r->jumpForm = true;
    return r;
  }
  if (cond.kind == ast::ExprKind::Binary &&
      (cond.binaryOp == ast::BinaryOp::And || cond.binaryOp == ast::BinaryOp::Or) && safeToSkip(*cond.rhs)) {
    // Short-circuit only where skipping the right side cannot change a result or a fault.
    Expr* left = expression(*cond.operand);
    if (left->type && valueBase(left->type)->kind == TypeKind::Bool) {
      Expr* r = operation(cond.binaryOp == ast::BinaryOp::And ? Op::And : Op::Or, boolType, cond.span,
                          {left, condition(*cond.rhs)});
      r->jumpForm = true;
      return r;
    }
  }
  if (cond.kind == ast::ExprKind::Binary && isComparison(cond.binaryOp)) {
    Expr* a = expression(*cond.operand);
    Expr* b = expression(*cond.rhs, a->type);
    if (isPoison(a) || isPoison(b)) return invalid(boolType, cond.span);
    if (a->kind == ExprKind::Constant && !a->type && b->type) a = expression(*cond.operand, b->type);
    const Type* ta = a->type ? valueBase(a->type) : nullptr;
    const Type* tb = b->type ? valueBase(b->type) : nullptr;
    const bool stringy = (ta && ta->kind == TypeKind::String) || (tb && tb->kind == TypeKind::String) ||
                         (a->kind == ExprKind::Constant && a->constant.kind == ConstValue::Kind::String);
    if (!stringy) {
      const Type* t = commonType(a, b, cond.span);
      const Type* ct = valueBase(t);
      if (ct->kind == TypeKind::Enum) ct = ct->base;
      if (ct->isScalar()) {
        static constexpr Op kOps[] = {Op::Expt, Op::Mul, Op::Div, Op::Mod, Op::Add, Op::Sub, Op::Lt, Op::Gt,
                                      Op::Le,   Op::Ge,  Op::Eq,  Op::Ne,  Op::And, Op::Xor, Op::Or};
        Expr* r = operation(kOps[static_cast<int>(cond.binaryOp)], boolType, cond.span,
                            {operandAs(a, ct, cond.span), operandAs(b, ct, cond.span)});
        r->prim = primOf(*ct);
        r->jumpForm = true;
        return r;
      }
    }
  }
  Expr* v = expression(cond, boolType);
  if (isPoison(v)) return v;
  if (!v->type || valueBase(v->type)->kind != TypeKind::Bool) {
    error(cond.span, fmt::format("condition must be BOOL, not {}", v->type ? v->type->name : "a number"));
    return invalid(boolType, cond.span);
  }
  return v;
}

}  // namespace scanback::sema
