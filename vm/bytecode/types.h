// The type model of a compiled program: sizes and layouts fixed by the compiler, read by the VM's
// users (state printing, stimulus, debugger) to interpret bytes of the flat image.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vm/bytecode/opcodes.h"
#include "vm/source/source.h"

namespace scanback {

enum class TypeKind : uint8_t {
  Bool,
  SInt,
  Int,
  DInt,
  LInt,
  USInt,
  UInt,
  UDInt,
  ULInt,
  Byte,
  Word,
  DWord,
  LWord,
  Real,
  LReal,
  Time,
  LTime,
  Date,
  Tod,
  Dt,
  WChar,   // one UTF-16 code unit (Ed.3): 2 bytes, no arithmetic
  String,  // STRING, or WSTRING when `wide`
  Enum,
  Subrange,
  Struct,
  Array,
  Ref,
  FunctionBlock,
  Void,
};

enum class VarSection : uint8_t { Var, Input, Output, InOut, Temp, Global, External, Config, Return };
const char* sectionName(VarSection s);

struct Type;

// A named slot: a struct field, an instance or frame variable, or a global.
struct Variable {
  std::string name;
  const Type* type = nullptr;
  uint32_t offset = 0;  // from the start of its container; absolute when `absolute`
  VarSection section = VarSection::Var;
  bool constant = false;
  bool retain = false;
  bool byReference = false;  // the slot holds a REF (VAR_IN_OUT)
  bool absolute = false;     // offset is an image offset (globals, located variables)
  bool hidden = false;       // implementation detail (internal state of standard FBs)
  int8_t bit = -1;           // a BOOL located on a single bit (%IX0.3): bit index at `offset`
  std::string location;      // "%IX0.3" for located variables
  SourceSpan span;
};

struct EnumMember {
  std::string name;
  int64_t value = 0;
};

struct ArrayDim {
  int64_t lower = 0;
  uint32_t count = 0;
};

struct Type {
  TypeKind kind = TypeKind::Void;
  std::string name;  // declared or canonical name ("INT", "STRING[20]", "ARRAY[1..3] OF INT")
  uint32_t size = 0;
  uint32_t align = 1;
  const Type* base = nullptr;       // Enum/Subrange: underlying elementary type; Array: element; Ref: target
  uint32_t capacity = 0;            // String: maximum length in characters (bytes; UTF-16 units when wide)
  bool wide = false;                // String: a WSTRING (UTF-16 code units of 2 bytes)
  int64_t lower = 0, upper = 0;     // Subrange bounds
  std::vector<EnumMember> members;  // Enum
  std::vector<Variable> fields;     // Struct fields; FunctionBlock instance variables (add with addField)
  std::vector<ArrayDim> dims;       // Array
  uint32_t pou = UINT32_MAX;        // FunctionBlock: its POU index
  bool pointer = false;             // Ref: POINTER TO (byte arithmetic, converts to and from DWORD)
  // Ref: REFERENCE TO (CODESYS): an address that every use dereferences (as a VAR_IN_OUT's slot),
  // bound with REF= (docs/language.md, "REFERENCE TO")
  bool reference = false;
  // The initial bytes of one value: `size` bytes, or none when they follow from the type: all
  // zero, or for an array each element its element type's initial value (so that an array of
  // 200 MB costs no memory as a type). writeInitialValue() writes them either way.
  std::vector<uint8_t> init;

  // Object orientation. A FunctionBlock that extends another starts with its base's layout
  // (`extends`); one that takes part in dynamic dispatch (it extends, is extended or implements an
  // interface) has a dispatch id `classId` (> 0), stored in a hidden UDINT at offset 0 of every
  // instance. An interface is a Ref with `interface` set: a 4-byte image offset of an instance (0:
  // NULL), `base` the interface itself (kind Void, `interface` set).
  const Type* extends = nullptr;
  uint32_t classId = 0;
  bool interface = false;
  bool abstract = false;                // FunctionBlock: ABSTRACT, never instantiated
  bool isClass = false;                 // FunctionBlock: a CLASS (no body, never called)
  std::vector<const Type*> interfaces;  // FunctionBlock: every interface it implements (inherited ones too);
                                        // interface: itself and every interface it extends
  bool isWideString() const { return kind == TypeKind::String && wide; }
  uint32_t unitBytes() const { return wide ? 2 : 1; }  // String: bytes per character
  bool isInterface() const { return kind == TypeKind::Ref && interface; }
  bool isReference() const { return kind == TypeKind::Ref && reference; }
  // This FunctionBlock type is `other` or extends it (directly or not).
  bool derivesFrom(const Type* other) const {
    for (const Type* t = this; t; t = t->extends)
      if (t == other) return true;
    return false;
  }
  // A FunctionBlock, or an interface, that can stand where the interface `itf` is expected.
  bool implements(const Type* itf) const {
    for (const Type* i : interfaces)
      if (i == itf) return true;
    return false;
  }

  bool isInteger() const { return kind >= TypeKind::SInt && kind <= TypeKind::LWord; }
  bool isBitString() const { return kind >= TypeKind::Byte && kind <= TypeKind::LWord; }
  bool isSigned() const { return kind >= TypeKind::SInt && kind <= TypeKind::LInt; }
  bool isReal() const { return kind == TypeKind::Real || kind == TypeKind::LReal; }
  bool isNumeric() const { return isInteger() || isReal(); }
  bool isTimeLike() const { return kind >= TypeKind::Time && kind <= TypeKind::Dt; }
  // Stored as one machine value (integer, real, time, enum, subrange, BOOL, REF).
  bool isScalar() const {
    return kind <= TypeKind::WChar || kind == TypeKind::Enum || kind == TypeKind::Subrange || kind == TypeKind::Ref;
  }
  void writeInitialValue(uint8_t* dst) const;          // `size` bytes at dst
  std::vector<uint8_t> initialValue() const;           // the same, as a vector
  bool zeroInitial() const;                            // whether every initial byte is 0
  uint64_t elementCount() const;                       // Array: product of dims
  std::vector<uint64_t> strides() const;               // Array: bytes per step of each dimension (row-major)
  const Variable* field(std::string_view name) const;  // case-insensitive
  const Variable* fieldByUpperName(const std::string& upperName) const;
  // Appends a field and indexes it by name, so that field() takes constant time however many
  // variables a POU declares (a linear search made compiling quadratic in their number).
  void addField(Variable v);

 private:
  std::unordered_map<std::string, uint32_t> fieldIndex_;  // upper-case name -> index in fields
};

// The storage type the VM uses for a scalar type.
Prim primOf(const Type& t);

// Owns all types of a program; elementary types are created once and found by name.
class TypeTable {
 public:
  // The types string() and refTo() hold, for tables of types kept elsewhere.
  static Type makeString(uint32_t capacity);
  static Type makeWideString(uint32_t capacity);
  static Type makeRef(const Type* target);
  static Type makePointer(const Type* target);
  static Type makeReference(const Type* target);
  TypeTable();
  const Type* elementary(TypeKind kind) const { return elementary_[static_cast<size_t>(kind)]; }
  const Type* findElementary(std::string_view upperName) const;  // "INT", "TOD", ... or null
  const Type* string(uint32_t capacity);
  const Type* wideString(uint32_t capacity);
  const Type* refTo(const Type* target);
  const Type* pointerTo(const Type* target);
  const Type* referenceTo(const Type* target);  // REFERENCE TO target
  const Type* array(const Type* element, std::vector<ArrayDim> dims);
  Type* add(Type t);  // user types (struct, enum, subrange, FB, alias result)

 private:
  std::deque<std::unique_ptr<Type>> owned_;
  const Type* elementary_[static_cast<size_t>(TypeKind::Void) + 1] = {};
  std::map<uint32_t, const Type*> strings_;        // by capacity
  std::map<uint32_t, const Type*> wideStrings_;    // by capacity
  std::map<const Type*, const Type*> references_;  // by target
  std::map<const Type*, const Type*> pointers_;    // by target
  std::map<const Type*, const Type*> aliases_;     // REFERENCE TO, by target
  // by element and bounds
  std::map<std::pair<const Type*, std::vector<std::pair<int64_t, uint32_t>>>, const Type*> arrays_;
};

}  // namespace scanback
