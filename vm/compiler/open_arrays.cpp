// ARRAY[*] in VAR_IN_OUT (docs/language.md): its type, the bounds a call stores into the
// parameter's slot beside the REF (vm/bytecode/open_arrays.h), and the code that indexes it and
// reads its bounds from there.
#include <fmt/format.h>

#include "vm/base/assert.h"
#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

const Type* Compiler::openArrayType(const ast::TypeRef& ref) {
  const Type* element = ref.element ? resolveType(*ref.element) : nullptr;
  if (!element) return nullptr;
  Type t;
  t.kind = TypeKind::Array;
  t.base = element;
  t.name = "ARRAY[";
  for (size_t i = 0; i < ref.dims.size(); ++i) t.name += i ? ", *" : "*";
  t.name += "] OF " + element->name;
  t.dims.assign(ref.dims.size(), ArrayDim{0, 0});
  t.size = 0;  // it has no storage of its own: only the slot of a VAR_IN_OUT refers to one
  t.align = element->align;
  return types_->add(std::move(t));
}

void Compiler::storeOpenArrayBounds(const std::function<Place(uint32_t)>& slotAt, const sema::Expr& arg,
                                    const Value& argValue) {
  const Type* udint = types_->elementary(TypeKind::UDInt);
  const Type* t = arg.type;
  if (isOpenArray(t)) {  // passed on: its own bounds, from its slot
    SB_ASSERT(argValue.place.kind == Place::Kind::Indirect, "an ARRAY[*] argument that is not its parameter");
    for (uint32_t k = kOpenArrayRefBytes; k < openArraySlotSize(t); k += 4)
      store(slotAt(k), directValue(udint, argValue.place.operand + k));
    return;
  }
  const std::vector<uint64_t> strides = t->strides();
  for (size_t i = 0; i < t->dims.size(); ++i) {
    const uint32_t at = kOpenArrayRefBytes + kOpenArrayDimBytes * static_cast<uint32_t>(i);
    const uint64_t values[3] = {static_cast<uint32_t>(static_cast<int32_t>(t->dims[i].lower)), t->dims[i].count,
                                strides[i]};
    for (uint32_t j = 0; j < 3; ++j)
      store(slotAt(at + 4 * j), Value{udint, true, ConstValue::ofInt(static_cast<int64_t>(values[j])), {}});
  }
}

// The parameter's own name is the base (sema): its slot holds the REF and the bounds. One ELEMPD
// per dimension moves the reference to the element, checking the index against the bounds.
Value Compiler::lowerOpenElement(const sema::Expr& e) {
  const Value base = lower(*e.a[0]);
  SB_ASSERT(base.place.kind == Place::Kind::Indirect, "an ARRAY[*] that is not a VAR_IN_OUT's slot");
  const Type* t = e.a[0]->type;
  std::vector<Value> idx;
  for (size_t i = 1; i < e.a.size(); ++i) idx.push_back(lowerBase(*e.a[i]));
  const Type* refType = types_->elementary(TypeKind::UDInt);
  const uint32_t slot = base.place.operand;
  uint32_t ref = slot;
  uint32_t refOffset = base.place.offset;
  for (size_t i = 0; i < idx.size(); ++i) {
    const uint32_t index = readConverted(*e.a[i + 1], idx[i], e.a[i + 1]->span);
    const uint32_t next = allocTemp(refType);
    emit(Op::ELEMPD, {o(next), o(ref), o(refOffset), o(index),
                      o(slot + kOpenArrayRefBytes + kOpenArrayDimBytes * static_cast<uint32_t>(i))});
    ref = next;
    refOffset = 0;
  }
  Value r;
  r.type = t->base;
  r.place.type = t->base;
  r.place.kind = Place::Kind::Indirect;
  r.place.operand = ref;
  r.place.offset = refOffset;
  return r;
}

// LOWER_BOUND is the slot's lower bound; UPPER_BOUND lower + count - 1.
Value Compiler::lowerOpenBound(const sema::Expr& e) {
  const Value array = lower(*e.a[0]);
  SB_ASSERT(array.place.kind == Place::Kind::Indirect, "an ARRAY[*] that is not a VAR_IN_OUT's slot");
  const Type* dint = types_->elementary(TypeKind::DInt);
  const uint32_t dim = array.place.operand + kOpenArrayRefBytes + kOpenArrayDimBytes * e.bit;
  const Value r = tempValue(dint);
  if (e.op == sema::Op::LowerBound) {
    emit(Op::MOV4, {o(r.place.operand), o(dim)});
    return r;
  }
  emit(opFor(Op::ADD_I8, Prim::I32), {o(r.place.operand), o(dim), o(dim + 4)});
  emit(opFor(Op::SUB_I8, Prim::I32),
       {o(r.place.operand), o(r.place.operand), o(constOperand(dint, ConstValue::ofInt(1), e.span))});
  return r;
}

}  // namespace scanback::compiler
