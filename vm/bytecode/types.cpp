#include "vm/bytecode/types.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace scanback {

const char* sectionName(VarSection s) {
  switch (s) {
    case VarSection::Var: return "VAR";
    case VarSection::Input: return "VAR_INPUT";
    case VarSection::Output: return "VAR_OUTPUT";
    case VarSection::InOut: return "VAR_IN_OUT";
    case VarSection::Temp: return "VAR_TEMP";
    case VarSection::Global: return "VAR_GLOBAL";
    case VarSection::External: return "VAR_EXTERNAL";
    case VarSection::Config: return "VAR_CONFIG";
    case VarSection::Return: return "return value";
  }
  return "VAR";
}

bool Type::zeroInitial() const {
  if (!init.empty()) return std::all_of(init.begin(), init.end(), [](uint8_t b) { return b == 0; });
  return kind != TypeKind::Array || !base || base->zeroInitial();
}

void Type::writeInitialValue(uint8_t* dst) const {
  if (size == 0) return;
  if (!init.empty()) {
    std::memcpy(dst, init.data(), size);
    return;
  }
  if (kind != TypeKind::Array || !base || base->size == 0 || base->zeroInitial()) {
    std::memset(dst, 0, size);
    return;
  }
  // The first element, then the elements written so far copied after them, doubling.
  base->writeInitialValue(dst);
  for (size_t filled = base->size; filled < size;) {
    const size_t n = std::min<size_t>(filled, size - filled);
    std::memcpy(dst + filled, dst, n);
    filled += n;
  }
}

std::vector<uint8_t> Type::initialValue() const {
  std::vector<uint8_t> bytes(size);
  writeInitialValue(bytes.data());
  return bytes;
}

uint64_t Type::elementCount() const {
  uint64_t n = 1;
  for (const ArrayDim& d : dims) n *= d.count;
  return n;
}

std::vector<uint64_t> Type::strides() const {
  // Dimension i advances by the product of the later dimensions.
  std::vector<uint64_t> stride(dims.size());
  uint64_t s = base ? base->size : 0;
  for (size_t i = dims.size(); i-- > 0;) {
    stride[i] = s;
    s *= dims[i].count;
  }
  return stride;
}

const Variable* Type::field(std::string_view fieldName) const { return fieldByUpperName(upperCase(fieldName)); }

const Variable* Type::fieldByUpperName(const std::string& upperName) const {
  auto it = fieldIndex_.find(upperName);
  return it == fieldIndex_.end() ? nullptr : &fields[it->second];
}

void Type::addField(Variable v) {
  fieldIndex_.emplace(upperCase(v.name), static_cast<uint32_t>(fields.size()));
  fields.push_back(std::move(v));
}

Prim primOf(const Type& t) {
  switch (t.kind) {
    case TypeKind::Bool: return Prim::U8;
    case TypeKind::SInt: return Prim::I8;
    case TypeKind::Int: return Prim::I16;
    case TypeKind::DInt: return Prim::I32;
    case TypeKind::LInt: return Prim::I64;
    case TypeKind::USInt:
    case TypeKind::Byte: return Prim::U8;
    case TypeKind::UInt:
    case TypeKind::WChar:
    case TypeKind::Word: return Prim::U16;
    case TypeKind::UDInt:
    case TypeKind::DWord:
    case TypeKind::Ref: return Prim::U32;
    case TypeKind::ULInt:
    case TypeKind::LWord: return Prim::U64;
    case TypeKind::Real: return Prim::F32;
    case TypeKind::LReal: return Prim::F64;
    case TypeKind::Time:
    case TypeKind::LTime:
    case TypeKind::Date:
    case TypeKind::Tod:
    case TypeKind::Dt: return Prim::I64;
    case TypeKind::Enum:
    case TypeKind::Subrange: return primOf(*t.base);
    default: return Prim::U8;
  }
}

namespace {
struct ElementaryDef {
  TypeKind kind;
  const char* name;
  uint32_t size;
};
constexpr ElementaryDef kElementary[] = {
    {TypeKind::Bool, "BOOL", 1},       {TypeKind::SInt, "SINT", 1},        {TypeKind::Int, "INT", 2},
    {TypeKind::DInt, "DINT", 4},       {TypeKind::LInt, "LINT", 8},        {TypeKind::USInt, "USINT", 1},
    {TypeKind::UInt, "UINT", 2},       {TypeKind::UDInt, "UDINT", 4},      {TypeKind::ULInt, "ULINT", 8},
    {TypeKind::Byte, "BYTE", 1},       {TypeKind::Word, "WORD", 2},        {TypeKind::DWord, "DWORD", 4},
    {TypeKind::LWord, "LWORD", 8},     {TypeKind::Real, "REAL", 4},        {TypeKind::LReal, "LREAL", 8},
    {TypeKind::Time, "TIME", 8},       {TypeKind::LTime, "LTIME", 8},      {TypeKind::Date, "DATE", 8},
    {TypeKind::Tod, "TIME_OF_DAY", 8}, {TypeKind::Dt, "DATE_AND_TIME", 8}, {TypeKind::WChar, "WCHAR", 2},
};
}  // namespace

TypeTable::TypeTable() {
  for (const ElementaryDef& d : kElementary) {
    Type t;
    t.kind = d.kind;
    t.name = d.name;
    t.size = d.size;
    t.align = d.size;
    t.init.assign(d.size, 0);
    elementary_[static_cast<size_t>(d.kind)] = add(std::move(t));
  }
  Type v;
  v.kind = TypeKind::Void;
  v.name = "VOID";
  elementary_[static_cast<size_t>(TypeKind::Void)] = add(std::move(v));
}

const Type* TypeTable::findElementary(std::string_view upper) const {
  if (upper == "TOD") return elementary(TypeKind::Tod);
  if (upper == "DT") return elementary(TypeKind::Dt);
  for (const ElementaryDef& d : kElementary)
    if (upper == d.name) return elementary(d.kind);
  return nullptr;
}

// CODESYS's layout: capacity + 1 bytes, the characters then a 0 byte (vm/exec/strings.h), aligned
// as the bytes they are.
Type TypeTable::makeString(uint32_t capacity) {
  Type t;
  t.kind = TypeKind::String;
  t.capacity = capacity;
  t.name = capacity == 80 ? "STRING" : fmt::format("STRING[{}]", capacity);
  t.size = capacity + 1;
  t.align = 1;
  t.init.assign(t.size, 0);
  return t;
}

// capacity + 1 UTF-16 code units: the text, then a 0 unit.
Type TypeTable::makeWideString(uint32_t capacity) {
  Type t;
  t.kind = TypeKind::String;
  t.wide = true;
  t.capacity = capacity;
  t.name = capacity == 80 ? "WSTRING" : fmt::format("WSTRING[{}]", capacity);
  t.size = 2 * (capacity + 1);
  t.align = 2;
  t.init.assign(t.size, 0);
  return t;
}

Type TypeTable::makeRef(const Type* target) {
  Type t;
  t.kind = TypeKind::Ref;
  t.base = target;
  t.name = "REF_TO " + target->name;
  t.size = 4;
  t.align = 4;
  t.init.assign(4, 0);
  return t;
}

Type TypeTable::makePointer(const Type* target) {
  Type t = makeRef(target);
  t.name = "POINTER TO " + target->name;
  t.pointer = true;
  return t;
}

Type TypeTable::makeReference(const Type* target) {
  Type t = makeRef(target);
  t.name = "REFERENCE TO " + target->name;
  t.reference = true;
  return t;
}

const Type* TypeTable::referenceTo(const Type* target) {
  if (auto it = aliases_.find(target); it != aliases_.end()) return it->second;
  return aliases_[target] = add(makeReference(target));
}

const Type* TypeTable::pointerTo(const Type* target) {
  if (auto it = pointers_.find(target); it != pointers_.end()) return it->second;
  return pointers_[target] = add(makePointer(target));
}

const Type* TypeTable::string(uint32_t capacity) {
  if (auto it = strings_.find(capacity); it != strings_.end()) return it->second;
  return strings_[capacity] = add(makeString(capacity));
}

const Type* TypeTable::wideString(uint32_t capacity) {
  if (auto it = wideStrings_.find(capacity); it != wideStrings_.end()) return it->second;
  return wideStrings_[capacity] = add(makeWideString(capacity));
}

const Type* TypeTable::refTo(const Type* target) {
  if (auto it = references_.find(target); it != references_.end()) return it->second;
  return references_[target] = add(makeRef(target));
}

const Type* TypeTable::array(const Type* element, std::vector<ArrayDim> dims) {
  // One type per element and bounds: two declarations of ARRAY[0..9] OF REAL are the same type
  // (REF_TO one accepts REF() of the other).
  std::vector<std::pair<int64_t, uint32_t>> key;
  for (const ArrayDim& d : dims) key.emplace_back(d.lower, d.count);
  auto found = arrays_.find({element, key});
  if (found != arrays_.end()) return found->second;
  Type t;
  t.kind = TypeKind::Array;
  t.base = element;
  t.name = "ARRAY[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) t.name += ", ";
    t.name += fmt::format("{}..{}", dims[i].lower, dims[i].lower + static_cast<int64_t>(dims[i].count) - 1);
  }
  t.name += "] OF " + element->name;
  t.dims = std::move(dims);
  const uint64_t total = t.elementCount() * element->size;
  t.size = static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
  t.align = element->align;
  // No initial bytes of its own: each element starts as the element type's initial value
  // (writeInitialValue), so an array type costs no memory for its size.
  const Type* r = add(std::move(t));
  arrays_.emplace(std::make_pair(element, std::move(key)), r);
  return r;
}

Type* TypeTable::add(Type t) {
  owned_.push_back(std::make_unique<Type>(std::move(t)));
  return owned_.back().get();
}

}  // namespace scanback
