// The variables' areas of a program: where a dereferenced pointer may read or write
// (docs/language.md, "Pointers"). An area is a declared variable — a global, a program's variable,
// a function block instance's field, a function's or method's local in its frame — and an array
// or structure is one area. Function block instances (and program instances) are areas that hold
// their fields' areas, so a pointer to a whole instance is as valid as one to one of its fields.
// The areas nest and never overlap otherwise, which lets one binary search and a walk up the
// enclosing areas answer "is [addr, addr + size) inside one variable?".
#pragma once

#include <cstdint>
#include <vector>

#include "vm/bytecode/types.h"

namespace scanback {

struct Program;

class VariableAreas {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // [begin, begin + size); call finish() once every area is added. An instance's area holds its
  // fields' areas and counts only for a dereference of a whole instance.
  void add(uint64_t begin, uint64_t size, bool instance = false);
  // A variable (its offset from `containerBegin` unless absolute), and, for an instance, each of
  // its fields.
  void addVariable(const Variable& v, uint64_t containerBegin);
  void finish();

  // Whether the bytes [addr, addr + size) all lie inside one area (size 0 counts as 1 byte); an
  // instance's area only when `instance` and it begins at addr.
  bool contains(uint64_t addr, uint64_t size, bool instance) const;
  bool empty() const { return areas_.empty(); }
  size_t size() const { return areas_.size(); }

 private:
  struct Area {
    uint64_t begin = 0, end = 0;
    uint32_t parent = kNone;  // the smallest area around it
    bool instance = false;
  };
  std::vector<Area> areas_;  // by begin; an enclosing area before the areas it holds
};

// The image's areas, and each POU's frame areas (frame-relative), built once per program.
struct ProgramAreas {
  VariableAreas image;
  std::vector<VariableAreas> frames;  // by POU index
};

ProgramAreas buildProgramAreas(const Program& program);

}  // namespace scanback
