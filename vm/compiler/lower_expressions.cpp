// Code for the typed IR of expressions (vm/sema/ir.h): places, conversions, operations and the
// jumps of conditions. Every check was made by the semantic pass; this only lays out temporaries
// and emits opcodes.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "vm/base/assert.h"
#include "vm/bytecode/limits.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/compiler/lowering.h"

namespace scanback::compiler {

Op opFor(Op first, Prim p) { return static_cast<Op>(static_cast<uint32_t>(first) + static_cast<uint32_t>(p)); }

Op bitsOp(Op first8, uint32_t size) {
  const uint32_t index = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return static_cast<Op>(static_cast<uint32_t>(first8) + index);
}
Op fltOp(Op firstF32, Prim p) { return static_cast<Op>(static_cast<uint32_t>(firstF32) + (p == Prim::F64 ? 1 : 0)); }

namespace {

Op sizedOp(Op op1, uint32_t size) { return bitsOp(op1, size); }  // LD1/LD2/LD4/LD8 and friends
bool scalarSize(uint32_t size) { return size == 1 || size == 2 || size == 4 || size == 8; }

}  // namespace

// ---------------------------------------------------------------- operands and temporaries

uint32_t Compiler::constBytes(const std::vector<uint8_t>& bytes, uint32_t align) {
  auto it = constPool_.find(bytes);
  if (it != constPool_.end() && it->second % std::max<uint32_t>(align, 1) == 0) return it->second;
  auto& pool = program_->constants;
  const uint64_t end = addSize(alignSize(pool.size(), std::max<uint32_t>(align, 1)), bytes.size());
  if (end > kMaxImageBytes) {
    // Frame templates fill it: functions with large variables. Reported once; the program has an
    // error and is never run, so the operand is never read.
    if (!constantsFull_)
      error(currentSpan(), fmt::format("the constant pool would need {}; scanback's limit is {}", layoutSizeText(end),
                                       imageLimitText()));
    constantsFull_ = true;
    return 0;
  }
  const uint32_t at = alignUp(static_cast<uint32_t>(pool.size()), std::max<uint32_t>(align, 1));
  pool.resize(at, 0);
  pool.insert(pool.end(), bytes.begin(), bytes.end());
  constPool_[bytes] = at;
  return at;
}

uint32_t Compiler::constOperand(const Type* type, const ConstValue& c, const SourceSpan& span) {
  std::vector<uint8_t> bytes(type->size, 0);
  if (type->kind == TypeKind::String) {
    // A string constant needs only its own characters and the 0 after them.
    const uint32_t unit = type->unitBytes();
    const size_t n = std::min<size_t>(c.stringUnits(), kMaxStringUnits);
    bytes.assign((n + 1) * unit, 0);
    std::memcpy(bytes.data(), c.s.data(), n * unit);
  } else {
    writeConst(bytes, 0, type, c, span);
  }
  return operand(Base::Const, constBytes(bytes, std::min<uint32_t>(type->align, 8)));
}

uint32_t Compiler::allocTemp(const Type* type) {
  SB_ASSERT(ctx_, "a temporary outside a body");
  const uint32_t align = std::max<uint32_t>(type->align, 1);
  const uint64_t end = addSize(alignSize(ctx_->tempTop, align), std::max<uint32_t>(type->size, 1));
  if (end > kMaxImageBytes) {
    // Temporaries of large values (function results, strings) in one statement. Reported once per
    // body; the program has an error and is never run, so the operand is never read.
    if (!ctx_->frameFull)
      error(currentSpan(), fmt::format("the frame of '{}' would need {} with the temporaries of this statement; "
                                       "scanback's limit is {}",
                                       ctx_->info->name, layoutSizeText(end), imageLimitText()));
    ctx_->frameFull = true;
    return operand(Base::Frame, 0);
  }
  const uint32_t at = alignUp(ctx_->tempTop, align);
  ctx_->tempTop = static_cast<uint32_t>(end);
  ctx_->frameMax = std::max(ctx_->frameMax, ctx_->tempTop);
  return operand(Base::Frame, at);
}

Value Compiler::resultPlace(const Type* type, const Place* dest) {
  if (dest && dest->kind == Place::Kind::Direct && dest->type == type) {
    Value r;
    r.type = type;
    r.place = *dest;
    return r;
  }
  return tempValue(type);
}

Value Compiler::directValue(const Type* type, uint32_t operandWord) {
  Value v;
  v.type = type;
  v.place.kind = Place::Kind::Direct;
  v.place.type = type;
  v.place.operand = operandWord;
  return v;
}

Value Compiler::tempValue(const Type* type) { return directValue(type, allocTemp(type)); }

void Compiler::move(uint32_t dst, uint32_t src, const Type* type) {
  if (dst == src) return;
  switch (type->size) {
    case 1: emit(Op::MOV1, {o(dst), o(src)}); break;
    case 2: emit(Op::MOV2, {o(dst), o(src)}); break;
    case 4: emit(Op::MOV4, {o(dst), o(src)}); break;
    case 8: emit(Op::MOV8, {o(dst), o(src)}); break;
    default: emit(Op::MOVN, {o(dst), o(src), o(type->size)}); break;
  }
}

uint32_t Compiler::readOperand(const Value& v, const SourceSpan& span) {
  const Type* type = v.type;
  if (v.isConst) {
    if (!type) type = types_->elementary(sema::literalKind(v.constant));
    return constOperand(type, v.constant, span);
  }
  const Place& p = v.place;
  switch (p.kind) {
    case Place::Kind::Direct: return p.operand;
    case Place::Kind::Bit: {
      const uint32_t t = allocTemp(types_->elementary(TypeKind::Bool));
      emit(bitsOp(Op::GETBIT_8, p.width), {o(t), o(p.operand), o(p.bit)});
      return t;
    }
    case Place::Kind::BitIndirect: {
      const uint32_t word = allocTemp(wordOfWidth(p.width));
      emit(sizedOp(Op::LD1, p.width), {o(word), o(p.operand), o(0)});
      const uint32_t t = allocTemp(types_->elementary(TypeKind::Bool));
      emit(bitsOp(Op::GETBIT_8, p.width), {o(t), o(word), o(p.bit)});
      return t;
    }
    case Place::Kind::Indirect:
    case Place::Kind::Element: {
      // A string converted to another capacity (a relabelling) is still stored with its own.
      const Type* stored = p.type && p.type->kind == TypeKind::String && type->kind == TypeKind::String ? p.type : type;
      const uint32_t t = allocTemp(stored->size > type->size ? stored : type);
      if (p.kind == Place::Kind::Indirect) {
        if (scalarSize(stored->size))
          emit(sizedOp(Op::LD1, stored->size), {o(t), o(p.operand), o(p.offset)});
        else
          emit(Op::LDN, {o(t), o(p.operand), o(p.offset), o(stored->size)});
      } else if (scalarSize(stored->size)) {
        loadElement(t, p, stored->size);
      } else {
        const uint32_t ref = allocTemp(types_->elementary(TypeKind::UDInt));
        emit(Op::ELEM, {o(ref), o(p.operand), o(elementIndex(p)), o(static_cast<uint32_t>(p.lower)), o(p.count),
                        o(stored->size)});
        emit(Op::LDN, {o(t), o(ref), o(0), o(stored->size)});
      }
      return t;
    }
  }
  return 0;
}

uint32_t Compiler::addressOf(const Place& p) {
  const Type* refType = types_->elementary(TypeKind::UDInt);
  switch (p.kind) {
    case Place::Kind::Direct:
      SB_ASSERT(operandBase(p.operand) != Base::Const, "the address of a constant");
      if (operandBase(p.operand) == Base::Image)
        return constOperand(refType, ConstValue::ofInt(operandOffset(p.operand)), {});
      {
        const uint32_t t = allocTemp(refType);
        emit(Op::ADDR, {o(t), o(p.operand)});
        return t;
      }
    case Place::Kind::Indirect:
      if (p.offset == 0) return p.operand;
      {
        const uint32_t t = allocTemp(refType);
        emit(Op::ADD_U32, {o(t), o(p.operand), o(constOperand(refType, ConstValue::ofInt(p.offset), {}))});
        return t;
      }
    case Place::Kind::Element: {
      const uint32_t index = elementIndex(p);
      const uint32_t t = allocTemp(refType);
      emit(Op::ELEM, {o(t), o(p.operand), o(index), o(static_cast<uint32_t>(p.lower)), o(p.count), o(p.type->size)});
      return t;
    }
    case Place::Kind::Bit:
    case Place::Kind::BitIndirect: SB_ASSERT(false, "the address of a bit"); return 0;
  }
  return 0;
}

// A variable at a fixed image offset (a global, a located variable), or one bit of it.
Place Compiler::absolutePlace(const Variable& v) {
  Place p;
  p.type = v.type;
  p.operand = operand(Base::Image, v.offset);
  if (v.bit >= 0) {
    p.kind = Place::Kind::Bit;
    p.bit = static_cast<uint8_t>(v.bit);
    p.width = 1;
  }
  return p;
}

Place Compiler::throughAddress(const Place& p) {
  if (p.kind != Place::Kind::Element) return p;
  Place r;
  r.kind = Place::Kind::Indirect;
  r.operand = addressOf(p);
  r.type = p.type;
  return r;
}

Place Compiler::subPlace(const Place& base, const Variable& field) {
  if (field.absolute) return absolutePlace(field);
  Place p;
  p.type = field.type;
  // A field of an array element: through the element's address, computed once.
  const Place b = throughAddress(base);
  if (field.byReference) {
    // The slot holds a REF to the actual variable.
    uint32_t refOperand;
    if (b.kind == Place::Kind::Direct) {
      refOperand = b.operand + field.offset;
    } else {
      refOperand = allocTemp(types_->elementary(TypeKind::UDInt));
      emit(Op::LD4, {o(refOperand), o(b.operand), o(b.offset + field.offset)});
    }
    p.kind = Place::Kind::Indirect;
    p.operand = refOperand;
    p.offset = 0;
    return p;
  }
  if (b.kind == Place::Kind::Direct) {
    p.kind = Place::Kind::Direct;
    p.operand = b.operand + field.offset;
  } else {
    p.kind = Place::Kind::Indirect;
    p.operand = b.operand;
    p.offset = b.offset + field.offset;
  }
  return p;
}

Value Compiler::variablePlace(const Variable& v, bool inFrame, bool inInstance) {
  Value r;
  r.type = v.type;
  Place& p = r.place;
  if (v.absolute) {
    p = absolutePlace(v);
    return r;
  }
  p.type = v.type;
  uint32_t slot;
  if (inFrame)
    slot = operand(Base::Frame, v.offset);
  else if (inInstance && ctx_->mode == BodyContext::Mode::Program)
    slot = operand(Base::Image, ctx_->programBase + v.offset);
  else
    slot = operand(Base::This, v.offset);
  if (v.byReference) {
    p.kind = Place::Kind::Indirect;
    p.operand = slot;
    p.offset = 0;
  } else {
    p.operand = slot;
  }
  return r;
}

// ---------------------------------------------------------------- conversions

Value Compiler::applyConversion(Value v, const sema::Expr& c) {
  const Type* to = c.type;
  if (c.kind == sema::ExprKind::RangeCheck) {
    const Type* base = to->base;
    const uint32_t src = readOperand(v, c.span);
    emit(opFor(Op::CHK_I8, primOf(*base)), {o(src), o(constOperand(base, ConstValue::ofInt(to->lower), c.span)),
                                            o(constOperand(base, ConstValue::ofInt(to->upper), c.span))});
    return directValue(to, src);
  }
  if (c.kind == sema::ExprKind::Operation) {  // Idx64: an array index clamped to DINT
    const uint32_t wide = readOperand(v, c.span);
    const uint32_t narrow = allocTemp(to);
    emit(Op::IDX64, {o(narrow), o(wide)});
    return directValue(to, narrow);
  }
  SB_ASSERT(c.kind == sema::ExprKind::Convert, "not a conversion");
  if (v.isConst) {
    // A typed constant converted by code: read from the constant pool like a variable.
    v = directValue(v.type, readOperand(v, c.span));
  }
  switch (c.conversion) {
    case sema::Conversion::Relabel:
      v.type = to;
      if (to->kind != TypeKind::String) v.place.type = to;  // a string keeps its stored capacity
      return v;
    case sema::Conversion::NotZero: {
      const uint32_t src = readOperand(v, c.span);
      Value r = tempValue(to);
      const Type* from = sema::valueBase(c.a[0]->type);
      if (from->kind == TypeKind::Enum) from = from->base;
      emit(opFor(Op::NE_I8, c.prim), {o(r.place.operand), o(src), o(constOperand(from, ConstValue::ofInt(0), c.span))});
      return r;
    }
    case sema::Conversion::Convert: {
      const uint32_t src = readOperand(v, c.span);
      Value r = tempValue(to);
      emit(static_cast<Op>(static_cast<uint32_t>(Op::CVT_I8_I8) + static_cast<uint32_t>(c.prim) * kPrimCount +
                           static_cast<uint32_t>(c.to)),
           {o(r.place.operand), o(src)});
      return r;
    }
  }
  return v;
}

Value Compiler::converted(const sema::Expr& operand, Value base) {
  for (const sema::Expr* c : sema::conversionsOf(&operand)) base = applyConversion(std::move(base), *c);
  return base;
}

// Stores a value converted and checked to the destination's type (the semantic pass saw to it).
void Compiler::store(const Place& dst, Value c) {
  const Type* type = dst.type;
  if (type->kind == TypeKind::String) {
    const uint32_t src = readOperand(c, {});
    if (dst.kind == Place::Kind::Direct) {
      if (src != dst.operand) emit(stringOp(Op::SMOV, type->wide), {o(dst.operand), o(type->capacity), o(src)});
      return;
    }
    // Through a reference: truncate into a temporary of the target's size, then copy it.
    const uint32_t t = allocTemp(type);
    emit(stringOp(Op::SMOV, type->wide), {o(t), o(type->capacity), o(src)});
    c = directValue(type, t);
  }
  if (dst.kind == Place::Kind::Direct && c.place.kind == Place::Kind::Element && !c.isConst && c.type &&
      c.type->kind != TypeKind::String && c.type->size == type->size && c.place.type &&
      c.place.type->size == type->size && scalarSize(type->size)) {
    loadElement(dst.operand, c.place, type->size);  // x := a[i]: one load, no temporary
    return;
  }
  const uint32_t src = readOperand(c, {});
  switch (dst.kind) {
    case Place::Kind::Direct: move(dst.operand, src, type); return;
    case Place::Kind::Bit: emit(bitsOp(Op::SETBIT_8, dst.width), {o(dst.operand), o(dst.bit), o(src)}); return;
    case Place::Kind::BitIndirect: {
      const uint32_t word = allocTemp(wordOfWidth(dst.width));
      emit(sizedOp(Op::LD1, dst.width), {o(word), o(dst.operand), o(0)});
      emit(bitsOp(Op::SETBIT_8, dst.width), {o(word), o(dst.bit), o(src)});
      emit(sizedOp(Op::ST1, dst.width), {o(dst.operand), o(0), o(word)});
      return;
    }
    case Place::Kind::Indirect:
      if (scalarSize(type->size))
        emit(sizedOp(Op::ST1, type->size), {o(dst.operand), o(dst.offset), o(src)});
      else
        emit(Op::STN, {o(dst.operand), o(dst.offset), o(src), o(type->size)});
      return;
    case Place::Kind::Element:
      if (scalarSize(type->size)) {
        storeElement(dst, src, type->size);
      } else {
        const uint32_t ref = addressOf(dst);
        emit(Op::STN, {o(ref), o(0), o(src), o(type->size)});
      }
      return;
  }
}

// ---------------------------------------------------------------- places

Value Compiler::lowerElement(const sema::Expr& e) {
  if (isOpenArray(e.a[0]->type)) return lowerOpenElement(e);
  const Value base = lower(*e.a[0]);
  const Type* t = e.a[0]->type;
  if (e.a.size() == 2 && base.place.kind == Place::Kind::Direct) {
    Value r;
    r.type = t->base;
    Place& element = r.place;
    element.type = t->base;
    if (narrowIndex(*e.a[1], element)) {
      element.kind = Place::Kind::Element;
      element.operand = base.place.operand;
      element.lower = static_cast<int32_t>(t->dims[0].lower);
      element.count = t->dims[0].count;
      return r;
    }
  }
  const std::vector<uint64_t> stride = t->strides();
  // Every index is computed before the first is converted and used.
  std::vector<Value> idx;
  for (size_t i = 1; i < e.a.size(); ++i) idx.push_back(lowerBase(*e.a[i]));
  auto indexOperand = [&](size_t i) { return readConverted(*e.a[i + 1], idx[i], e.a[i + 1]->span); };
  Value r;
  r.type = t->base;
  Place& result = r.place;
  result.type = t->base;
  if (idx.size() == 1 && base.place.kind == Place::Kind::Direct) {
    result.kind = Place::Kind::Element;
    result.operand = base.place.operand;
    result.index = indexOperand(0);
    result.lower = static_cast<int32_t>(t->dims[0].lower);
    result.count = t->dims[0].count;
    return r;
  }
  const Type* refType = types_->elementary(TypeKind::UDInt);
  uint32_t ref = 0;
  uint32_t refOffset = 0;
  size_t first = 0;
  if (base.place.kind == Place::Kind::Direct) {
    ref = allocTemp(refType);
    emit(Op::ELEM, {o(ref), o(base.place.operand), o(indexOperand(0)), o(static_cast<uint32_t>(t->dims[0].lower)),
                    o(t->dims[0].count), o(static_cast<uint32_t>(stride[0]))});
    first = 1;
  } else if (base.place.kind == Place::Kind::Indirect) {
    ref = base.place.operand;
    refOffset = base.place.offset;
  } else {
    ref = addressOf(base.place);
  }
  for (size_t i = first; i < idx.size(); ++i) {
    const uint32_t next = allocTemp(refType);
    emit(Op::ELEMP, {o(next), o(ref), o(refOffset), o(indexOperand(i)), o(static_cast<uint32_t>(t->dims[i].lower)),
                     o(t->dims[i].count), o(static_cast<uint32_t>(stride[i]))});
    ref = next;
    refOffset = 0;
  }
  result.kind = Place::Kind::Indirect;
  result.operand = ref;
  result.offset = refOffset;
  return r;
}

Value Compiler::lowerBit(const sema::Expr& e) {
  const Value base = lower(*e.a[0]);
  const Type* t = sema::valueBase(base.type);
  Value r;
  r.type = e.type;
  Place& p = r.place;
  p.type = r.type;
  if (base.place.kind == Place::Kind::Direct) {
    p.kind = Place::Kind::Bit;
    p.operand = base.place.operand;
    p.bit = static_cast<uint8_t>(e.bit);
    p.width = static_cast<uint8_t>(t->size);
    return r;
  }
  // Through a reference or array element: the word's address, computed once (read and written
  // as a whole word).
  p.kind = Place::Kind::BitIndirect;
  p.operand = addressOf(base.place);
  p.bit = static_cast<uint8_t>(e.bit);
  p.width = static_cast<uint8_t>(t->size);
  return r;
}

const Type* Compiler::wordOfWidth(uint32_t width) const {
  return types_->elementary(width == 1   ? TypeKind::Byte
                            : width == 2 ? TypeKind::Word
                            : width == 4 ? TypeKind::DWord
                                         : TypeKind::LWord);
}

// ---------------------------------------------------------------- operations

// a * b + c on 32- or 64-bit integers is one MULADD (seed := seed * 1664525 + 1013904223). Only
// where every operand is a variable, a constant or a converted variable: reading c before the
// product is computed instead of after it cannot change anything, nothing between can fault.
std::optional<Value> Compiler::lowerMultiplyAdd(const sema::Expr& e, const Place* dest) {
  const Prim p = e.prim;
  if (e.op != sema::Op::Add || e.a.size() != 2 ||
      (p != Prim::I32 && p != Prim::U32 && p != Prim::I64 && p != Prim::U64))
    return std::nullopt;
  const sema::Expr& product = *e.a[0];
  if (product.kind != sema::ExprKind::Operation || product.op != sema::Op::Mul || product.prim != p ||
      product.a.size() != 2)
    return std::nullopt;
  auto plain = [](const sema::Expr& x) {
    const sema::Expr* v = x.kind == sema::ExprKind::Convert ? x.a[0] : &x;
    return v->kind == sema::ExprKind::Variable || v->kind == sema::ExprKind::Constant;
  };
  if (!plain(*product.a[0]) || !plain(*product.a[1]) || !plain(*e.a[1])) return std::nullopt;
  const uint32_t a = lowerRead(*product.a[0]);
  const uint32_t b = lowerRead(*product.a[1]);
  const uint32_t c = lowerRead(*e.a[1]);
  Value r = e.fresh ? tempValue(e.type) : resultPlace(e.type, dest);
  emit(primSize(p) == 4 ? Op::MULADD_32 : Op::MULADD_64, {o(r.place.operand), o(a), o(b), o(c)});
  return r;
}

Value Compiler::lowerOperation(const sema::Expr& e, const Place* dest) {
  const SourceSpan& span = e.span;
  if (const std::optional<Value> fused = lowerMultiplyAdd(e, dest)) return *fused;
  // The operands: each read as it is computed, or all computed first and then read in order.
  std::vector<uint32_t> x;
  if (e.readEach) {
    for (const sema::Expr* a : e.a) x.push_back(lowerRead(*a));
  } else {
    std::vector<Value> bases;
    for (const sema::Expr* a : e.a) bases.push_back(lowerBase(*a));
    for (size_t i = 0; i < e.a.size(); ++i) x.push_back(readConverted(*e.a[i], bases[i], e.a[i]->span));
  }
  if (isStringResult(e.op)) return lowerString(e, x, dest);
  Value r = e.fresh ? tempValue(e.type) : resultPlace(e.type, dest);
  const uint32_t out = r.place.operand;
  const Prim p = e.prim;
  if ((e.op == sema::Op::Div || e.op == sema::Op::Mod) && !primIsSigned(p) &&
      e.a[1]->kind == sema::ExprKind::Constant && e.a[1]->constant.kind == ConstValue::Kind::Int &&
      e.a[1]->constant.i > 0 && (e.a[1]->constant.i & (e.a[1]->constant.i - 1)) == 0) {
    // An unsigned x / 2^k is a shift and x MOD 2^k a mask: no hardware division (seed / 65536).
    const Int128 divisor = e.a[1]->constant.i;
    const uint32_t width = primSize(p);
    if (e.op == sema::Op::Div) {
      int64_t shift = 0;
      while ((Int128{1} << shift) < divisor) ++shift;
      const uint32_t k = constOperand(types_->elementary(TypeKind::LInt), ConstValue::ofInt(shift), span);
      emit(bitsOp(Op::SHR_8, width), {o(out), o(x[0]), o(k)});
    } else {
      const uint32_t mask = constOperand(e.type, ConstValue::ofInt(divisor - 1), span);
      emit(bitsOp(Op::AND_8, width), {o(out), o(x[0]), o(mask)});
    }
    return r;
  }
  if (e.op == sema::Op::Mod && primIsSigned(p) && !primIsFloat(p) && e.a[1]->kind == sema::ExprKind::Constant &&
      e.a[1]->constant.kind == ConstValue::Kind::Int && e.a[1]->constant.i > 0 &&
      (e.a[1]->constant.i & (e.a[1]->constant.i - 1)) == 0) {
    // A signed x MOD 2^k: a mask with the sign of x (MODP2), no hardware division.
    const uint32_t mask = constOperand(e.type, ConstValue::ofInt(e.a[1]->constant.i - 1), span);
    emit(static_cast<Op>(static_cast<uint32_t>(Op::MODP2_I8) + static_cast<uint32_t>(p)), {o(out), o(x[0]), o(mask)});
    return r;
  }
  switch (e.op) {
    case sema::Op::Add:
    case sema::Op::Sub:
    case sema::Op::Mul:
    case sema::Op::Div:
    case sema::Op::Mod:
    case sema::Op::Min:
    case sema::Op::Max: emit(opFor(numberFamily(e.op), p), {o(out), o(x[0]), o(x[1])}); break;
    case sema::Op::Expt: emit(fltOp(Op::EXPT_F32, p), {o(out), o(x[0]), o(x[1])}); break;
    case sema::Op::Atan2: emit(fltOp(Op::ATAN2_F32, p), {o(out), o(x[0]), o(x[1])}); break;
    case sema::Op::Eq:
    case sema::Op::Ne:
    case sema::Op::Lt:
    case sema::Op::Le:
    case sema::Op::Gt:
    case sema::Op::Ge: {
      const Comparison cmp = comparison(e.op);
      emit(opFor(cmp.family, p), {o(out), o(x[cmp.swap ? 1 : 0]), o(x[cmp.swap ? 0 : 1])});
      break;
    }
    case sema::Op::StrEq:
    case sema::Op::StrNe:
    case sema::Op::StrLt:
    case sema::Op::StrLe:
    case sema::Op::StrGt:
    case sema::Op::StrGe: {
      const Comparison cmp = comparison(e.op);
      emit(stringOp(cmp.family, sema::valueBase(e.a[0]->type)->wide),
           {o(out), o(x[cmp.swap ? 1 : 0]), o(x[cmp.swap ? 0 : 1])});
      break;
    }
    case sema::Op::And:
    case sema::Op::Or:
    case sema::Op::Xor:
    case sema::Op::Shl:
    case sema::Op::Shr:
    case sema::Op::Rol:
    case sema::Op::Ror: emit(bitsOp(bitsFamily(e.op), e.size), {o(out), o(x[0]), o(x[1])}); break;
    case sema::Op::Neg: emit(opFor(Op::NEG_I8, p), {o(out), o(x[0])}); break;
    case sema::Op::Abs: emit(opFor(Op::ABS_I8, p), {o(out), o(x[0])}); break;
    case sema::Op::BitNot: emit(bitsOp(Op::NOT_8, e.size), {o(out), o(x[0])}); break;
    case sema::Op::BoolNot: emit(Op::BNOT, {o(out), o(x[0])}); break;
    case sema::Op::Trunc: emit(fltOp(Op::TRUNC_F32, p), {o(out), o(x[0])}); break;
    case sema::Op::Idx64: emit(Op::IDX64, {o(out), o(x[0])}); break;
    case sema::Op::Now: emit(Op::NOW, {o(out)}); break;
    case sema::Op::StrLen: emit(stringOp(Op::SLEN, sema::valueBase(e.a[0]->type)->wide), {o(out), o(x[0])}); break;
    case sema::Op::StrFind:
      emit(stringOp(Op::SFIND, sema::valueBase(e.a[0]->type)->wide), {o(out), o(x[0]), o(x[1])});
      break;
    case sema::Op::WideFromStr: emit(Op::WSWIDEN, {o(out), o(sema::valueBase(e.type)->capacity), o(x[0])}); break;
    case sema::Op::StrFromWide:
    case sema::Op::Utf8FromWide: {
      const Narrowing how = e.op == sema::Op::Utf8FromWide ? Narrowing::Utf8 : Narrowing::Ascii;
      emit(Op::WSNARROW, {o(out), o(sema::valueBase(e.type)->capacity), o(static_cast<uint32_t>(how)), o(x[0])});
      break;
    }
    case sema::Op::WideFromWChar: emit(Op::WSFROMC, {o(out), o(sema::valueBase(e.type)->capacity), o(x[0])}); break;
    case sema::Op::WCharFromWide: emit(Op::WSTOC, {o(out), o(x[0])}); break;
    case sema::Op::ToI64: emit(Op::STO_I64, {o(out), o(x[0])}); break;
    case sema::Op::ToU64: emit(Op::STO_U64, {o(out), o(x[0])}); break;
    case sema::Op::ToF64: emit(Op::STO_F64, {o(out), o(x[0])}); break;
    case sema::Op::ToBool: emit(Op::STO_BOOL, {o(out), o(x[0])}); break;
    default:
      if (std::optional<Op> fromOp = fromStringOp(e.op)) {  // number to STRING
        emit(*fromOp, {o(out), o(sema::valueBase(e.type)->capacity), o(x[0])});
        break;
      }
      emit(fltOp(mathFamily(e.op), p), {o(out), o(x[0])});  // SQRT .. ATAN
      break;
  }
  (void)span;
  return r;
}

// ---------------------------------------------------------------- dispatch

Value Compiler::lower(const sema::Expr& e, const Place* dest) {
  if (e.kind == sema::ExprKind::Field || e.kind == sema::ExprKind::Offset || e.kind == sema::ExprKind::Element)
    if (const sema::Expr* deref = narrowableDeref(e)) return lowerNarrowedDeref(e, *deref, dest);
  switch (e.kind) {
    case sema::ExprKind::Invalid: SB_ASSERT(false, "an invalid expression reached the code generator"); break;
    case sema::ExprKind::Constant: return Value{e.type, true, e.constant, {}};
    case sema::ExprKind::Variable:
      return variablePlace(*e.variable, e.storage == sema::Storage::Frame, e.storage == sema::Storage::Instance);
    case sema::ExprKind::ProgramInstance: return directValue(e.type, operand(Base::Image, e.offset));
    case sema::ExprKind::This: return directValue(e.type, operand(Base::This, 0));
    case sema::ExprKind::Field: {
      const Value base = lower(*e.a[0]);
      Value r;
      r.type = e.type;
      r.place = subPlace(base.place, *e.variable);
      return r;
    }
    case sema::ExprKind::Offset: {
      const Value base = lower(*e.a[0]);
      Variable element;
      element.type = e.type;
      element.offset = e.offset;
      Value r;
      r.type = e.type;
      r.place = subPlace(base.place, element);
      return r;
    }
    case sema::ExprKind::Element: return lowerElement(e);
    case sema::ExprKind::Bit: return lowerBit(e);
    case sema::ExprKind::Deref: return lowerDeref(e, true);
    case sema::ExprKind::AddressOf: {
      // ADR(p^) is p: nothing is read or written through it.
      const sema::Expr& of = *e.a[0];
      const Value v = of.kind == sema::ExprKind::Deref ? lowerDeref(of, false) : lower(of);
      return directValue(e.type, addressOf(v.place));
    }
    case sema::ExprKind::Convert:
    case sema::ExprKind::RangeCheck: {
      // A conversion the consumer applies when reading: the destination is still the operand's.
      // So it is for a scalar relabelled to a type of its size (r := UDINT_TO_DINT(x MOD 100)):
      // the same bits, computed straight into r.
      const bool sameBits = e.kind == sema::ExprKind::Convert && e.conversion == sema::Conversion::Relabel && e.type &&
                            e.a[0]->type && e.type->size == e.a[0]->type->size && scalarSize(e.type->size) &&
                            e.type->kind != TypeKind::String;
      if (sameBits && !e.atRead && dest && dest->kind == Place::Kind::Direct) {
        Place asOperand = *dest;
        asOperand.type = e.a[0]->type;
        return applyConversion(lower(*e.a[0], &asOperand), e);
      }
      return applyConversion(lower(*e.a[0], e.atRead ? dest : nullptr), e);
    }
    case sema::ExprKind::Operation:
      if (e.op == sema::Op::Idx64 && e.atRead) return applyConversion(lower(*e.a[0]), e);
      if (e.op == sema::Op::LowerBound || e.op == sema::Op::UpperBound) return lowerOpenBound(e);
      if (e.op == sema::Op::IsValidRef || e.op == sema::Op::QueryInterface || e.op == sema::Op::QueryPointer)
        return lowerPointerOperation(e);
      if (e.op == sema::Op::AdvanceTime) {
        lowerAdvanceTime(e);
        return Value{};
      }
      if (e.shortCircuit) return lowerShortCircuit(e);
      return lowerOperation(e, dest);
    case sema::ExprKind::ScaleDuration: return lowerScaleDuration(e, dest);
    case sema::ExprKind::MinMax:
    case sema::ExprKind::Limit: return lowerMinMax(e, dest);
    case sema::ExprKind::Select: return lowerSelect(e);
    case sema::ExprKind::Mux: return lowerMux(e);
    case sema::ExprKind::Call: return lowerCall(e, dest);
    case sema::ExprKind::Parameter: break;  // lowered by the call it belongs to
    case sema::ExprKind::Assertion: return lowerAssertion(e);
    case sema::ExprKind::AssertOperand: return assertOperands_.at(e.offset);
  }
  SB_ASSERT(false, "no code for expression kind {}", static_cast<int>(e.kind));
  return Value{};
}

// ---------------------------------------------------------------- conditions

void Compiler::lowerCondJump(const sema::Expr& cond, bool jumpIf, Label target) {
  if (cond.kind == sema::ExprKind::Constant) {
    if ((cond.constant.i != 0) == jumpIf) emit(Op::JMP, {lab(target)});
    return;
  }
  if (cond.jumpForm && cond.op == sema::Op::BoolNot) {
    lowerCondJump(*cond.a[0], !jumpIf, target);
    return;
  }
  if (cond.jumpForm && (cond.op == sema::Op::And || cond.op == sema::Op::Or)) {
    // Short-circuit: the right side is safe to skip.
    const bool isAnd = cond.op == sema::Op::And;
    const uint32_t x = readOperand(lower(*cond.a[0]), cond.span);
    if (isAnd != jumpIf) {
      // AND jump-if-false / OR jump-if-true: either side decides alone.
      emit(jumpIf ? Op::JT : Op::JF, {o(x), lab(target)});
      lowerCondJump(*cond.a[1], jumpIf, target);
    } else {
      Label skip = newLabel();
      emit(isAnd ? Op::JF : Op::JT, {o(x), lab(skip)});
      lowerCondJump(*cond.a[1], jumpIf, target);
      bind(skip);
    }
    return;
  }
  if (cond.jumpForm) {  // a comparison of scalars: one compare-and-jump
    const Value a = lowerBase(*cond.a[0]);
    const Value b = lowerBase(*cond.a[1]);
    if (jumpOnElements(cond, a, b, jumpIf, target)) return;
    uint32_t x = readConverted(*cond.a[0], a, cond.span), y = readConverted(*cond.a[1], b, cond.span);
    sema::Op op = cond.op;
    const Prim p = cond.prim;
    // Jump when (x op y) == jumpIf.
    bool negated = false;  // floats: NaN makes !(x<y) differ from y<=x
    if (!jumpIf) {
      if (op == sema::Op::Eq)
        op = sema::Op::Ne;
      else if (op == sema::Op::Ne)
        op = sema::Op::Eq;
      else
        negated = true;
    }
    const Comparison cmp = comparison(op);
    Op family = jumpFamily(cmp.family);
    if (cmp.swap) std::swap(x, y);
    if (negated) {
      if (primIsFloat(p)) {
        emit(fltOp(family == Op::JLT_I8 ? Op::JNLT_F32 : Op::JNLE_F32, p), {o(x), o(y), lab(target)});
        return;
      }
      // Integers: !(x < y) == (y <= x), !(x <= y) == (y < x).
      family = family == Op::JLT_I8 ? Op::JLE_I8 : Op::JLT_I8;
      std::swap(x, y);
    }
    emit(opFor(family, p), {o(x), o(y), lab(target)});
    return;
  }
  const Value v = lower(cond);
  if (cond.kind == sema::ExprKind::Element && jumpOnElement(v, jumpIf, target)) return;
  const uint32_t x = readOperand(v, cond.span);
  emit(jumpIf ? Op::JT : Op::JF, {o(x), lab(target)});
}

}  // namespace scanback::compiler
