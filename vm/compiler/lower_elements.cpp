// Array elements at an index of another width than DINT, or at a variable plus a constant
// (issue 17): a[j] and a[j + 1] with j an INT are one ELD4_X16 and one ELDK4_X16, where the plain
// lowering would emit CVT_I16_I32, ADD_I16, CVT_I16_I32 and two ELD4. The index is read when the
// element is loaded or stored, so this applies only where nothing can change it in between
// (Compiler::indexesAtUse_).
#include "vm/base/assert.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/compiler/lowering.h"

namespace scanback::compiler {

namespace {

Op sizedElementOp(Op op1, uint32_t size) { return bitsOp(op1, size); }

// The integer storage type an index converts from, when the conversion to DINT is exact and the
// VM has element opcodes for it.
std::optional<Prim> indexWidth(const sema::Expr& index) {
  const std::vector<const sema::Expr*> conversions = sema::conversionsOf(&index);
  const sema::Expr* raw = sema::unconverted(&index);
  if (conversions.empty()) {
    if (raw->type && raw->kind != sema::ExprKind::Constant && sema::valueBase(raw->type)->kind == TypeKind::DInt)
      return Prim::I32;
    return std::nullopt;
  }
  if (conversions.size() != 1) return std::nullopt;
  const sema::Expr& c = *conversions[0];
  if (c.kind == sema::ExprKind::Convert && c.conversion == sema::Conversion::Convert && c.prim == Prim::I16 &&
      c.to == Prim::I32)
    return Prim::I16;
  return std::nullopt;
}

bool callsUserCode(const sema::Expr* e) {
  if (!e) return false;
  if (e->kind == sema::ExprKind::Call) return true;
  for (const sema::Expr* a : e->a)
    if (callsUserCode(a)) return true;
  return false;
}

}  // namespace

// Only the statement's own expressions: nested statements decide for themselves.
bool callsUserCode(const sema::Stmt& s) {
  if (s.kind == sema::StmtKind::Call) return true;
  if (callsUserCode(s.target) || callsUserCode(s.value) || callsUserCode(s.limit) || callsUserCode(s.step)) return true;
  for (const sema::IfBranch& b : s.branches)
    if (callsUserCode(b.condition)) return true;
  return false;
}

bool Compiler::narrowIndex(const sema::Expr& index, Place& element) {
  if (!indexesAtUse_) return false;
  const std::optional<Prim> width = indexWidth(index);
  if (!width) return false;
  const sema::Expr* raw = sema::unconverted(&index);
  // x + c, x - c, c + x: the index register plus a constant, wrapped at the index's width.
  if (raw->kind == sema::ExprKind::Operation && (raw->op == sema::Op::Add || raw->op == sema::Op::Sub) &&
      raw->prim == *width && raw->a.size() == 2) {
    const sema::Expr* x = raw->a[0];
    const sema::Expr* c = raw->a[1];
    if (raw->op == sema::Op::Add && x->kind == sema::ExprKind::Constant) std::swap(x, c);
    if (c->kind == sema::ExprKind::Constant && x->kind == sema::ExprKind::Variable && sema::isDirect(x)) {
      const Value v = lower(*x);
      if (v.place.kind == Place::Kind::Direct) {
        const uint32_t k = static_cast<uint32_t>(static_cast<uint64_t>(c->constant.i));
        element.index = v.place.operand;
        element.indexPrim = *width;
        element.indexAdds = true;
        element.indexAdd = raw->op == sema::Op::Add ? k : 0u - k;
        return true;
      }
    }
  }
  if (*width == Prim::I32) return false;  // the plain lowering already reads a DINT in place
  element.index = readOperand(lower(*raw), index.span);
  element.indexPrim = *width;
  return true;
}

uint32_t Compiler::elementIndex(const Place& p) {
  if (p.indexPrim == Prim::I32 && !p.indexAdds) return p.index;
  const Type* indexType = types_->elementary(p.indexPrim == Prim::I16 ? TypeKind::Int : TypeKind::DInt);
  uint32_t index = p.index;
  if (p.indexAdds) {
    const uint32_t sum = allocTemp(indexType);
    const Int128 k =
        p.indexPrim == Prim::I16 ? Int128{static_cast<int16_t>(p.indexAdd)} : Int128{static_cast<int32_t>(p.indexAdd)};
    emit(opFor(Op::ADD_I8, p.indexPrim), {o(sum), o(index), o(constOperand(indexType, ConstValue::ofInt(k), {}))});
    index = sum;
  }
  if (p.indexPrim == Prim::I16) {
    const uint32_t wide = allocTemp(types_->elementary(TypeKind::DInt));
    emit(Op::CVT_I16_I32, {o(wide), o(index)});
    index = wide;
  }
  return index;
}

void Compiler::loadElement(uint32_t dst, const Place& p, uint32_t size) {
  const uint32_t lower = static_cast<uint32_t>(p.lower);
  if (p.indexAdds)
    emit(sizedElementOp(p.indexPrim == Prim::I16 ? Op::ELDK1_X16 : Op::ELDK1_X32, size),
         {o(dst), o(p.operand), o(p.index), o(p.indexAdd), o(lower), o(p.count)});
  else if (p.indexPrim == Prim::I16)
    emit(sizedElementOp(Op::ELD1_X16, size), {o(dst), o(p.operand), o(p.index), o(lower), o(p.count)});
  else
    emit(sizedElementOp(Op::ELD1, size), {o(dst), o(p.operand), o(p.index), o(lower), o(p.count)});
}

void Compiler::storeElement(const Place& p, uint32_t src, uint32_t size) {
  const uint32_t lower = static_cast<uint32_t>(p.lower);
  if (p.indexAdds)
    emit(sizedElementOp(p.indexPrim == Prim::I16 ? Op::ESTK1_X16 : Op::ESTK1_X32, size),
         {o(p.operand), o(p.index), o(p.indexAdd), o(lower), o(p.count), o(src)});
  else if (p.indexPrim == Prim::I16)
    emit(sizedElementOp(Op::EST1_X16, size), {o(p.operand), o(p.index), o(lower), o(p.count), o(src)});
  else
    emit(sizedElementOp(Op::EST1, size), {o(p.operand), o(p.index), o(lower), o(p.count), o(src)});
}

bool Compiler::jumpOnElements(const sema::Expr& cond, const Value& a, const Value& b, bool jumpIf, Label target) {
  const Place& x = a.place;
  const Place& y = b.place;
  if (a.isConst || b.isConst || x.kind != Place::Kind::Element || y.kind != Place::Kind::Element) return false;
  if (!sema::conversionsOf(cond.a[0]).empty() || !sema::conversionsOf(cond.a[1]).empty()) return false;
  if (primIsFloat(cond.prim) || x.operand != y.operand || x.index != y.index || x.indexPrim != y.indexPrim ||
      x.lower != y.lower || x.count != y.count || !x.type || x.type->size != primSize(cond.prim))
    return false;
  sema::Op op = cond.op;
  if (!jumpIf) {  // integers: the negation is exact
    switch (op) {
      case sema::Op::Eq: op = sema::Op::Ne; break;
      case sema::Op::Ne: op = sema::Op::Eq; break;
      case sema::Op::Lt: op = sema::Op::Ge; break;
      case sema::Op::Le: op = sema::Op::Gt; break;
      case sema::Op::Gt: op = sema::Op::Le; break;
      case sema::Op::Ge: op = sema::Op::Lt; break;
      default: return false;
    }
  }
  const bool narrow = x.indexPrim == Prim::I16;
  Op family;
  switch (op) {
    case sema::Op::Eq: family = narrow ? Op::JEQE16_I8 : Op::JEQE32_I8; break;
    case sema::Op::Ne: family = narrow ? Op::JNEE16_I8 : Op::JNEE32_I8; break;
    case sema::Op::Lt: family = narrow ? Op::JLTE16_I8 : Op::JLTE32_I8; break;
    case sema::Op::Le: family = narrow ? Op::JLEE16_I8 : Op::JLEE32_I8; break;
    case sema::Op::Gt: family = narrow ? Op::JGTE16_I8 : Op::JGTE32_I8; break;
    case sema::Op::Ge: family = narrow ? Op::JGEE16_I8 : Op::JGEE32_I8; break;
    default: return false;
  }
  const uint32_t k1 = x.indexAdds ? x.indexAdd : 0;
  const uint32_t k2 = y.indexAdds ? y.indexAdd : 0;
  emit(opFor(family, cond.prim),
       {o(x.operand), o(x.index), o(k1), o(k2), o(static_cast<uint32_t>(x.lower)), o(x.count), lab(target)});
  return true;
}

bool Compiler::jumpOnElement(const Value& v, bool jumpIf, Label target) {
  const Place& p = v.place;
  if (v.isConst || p.kind != Place::Kind::Element || !p.type || p.type->kind != TypeKind::Bool) return false;
  const bool narrow = p.indexPrim == Prim::I16;
  const Op op = jumpIf ? (narrow ? Op::JTE_X16 : Op::JTE_X32) : (narrow ? Op::JFE_X16 : Op::JFE_X32);
  emit(op, {o(p.operand), o(p.index), o(p.indexAdds ? p.indexAdd : 0u), o(static_cast<uint32_t>(p.lower)), o(p.count),
            lab(target)});
  return true;
}

}  // namespace scanback::compiler
