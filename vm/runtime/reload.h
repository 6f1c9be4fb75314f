// Hot reload: a new version of the program replaces the running one at a cycle boundary (a
// program-version change is a scan input, docs/architecture.md: determinism), keeping the value of every
// variable whose name and type are unchanged. The plan depends only on the two programs, so it is
// made (and reported to the user) before the swap, and applied to the image at the swap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback {

struct ReloadPlan {
  // Bytes (or one bit, when bit >= 0) that keep their value: old image offset → new offset.
  struct Copy {
    uint32_t from = 0;
    uint32_t to = 0;
    uint32_t size = 0;
    int8_t fromBit = -1;
    int8_t toBit = -1;
  };
  std::vector<Copy> copies;          // sorted by `from` once planned
  std::vector<uint32_t> references;  // new offsets of kept REF slots: their targets are relocated
  // New offsets of the class ids of kept instances (object orientation): ids are numbered per
  // program version, so each keeps the new program's value.
  std::vector<uint32_t> classIds;
  uint64_t kept = 0;                 // variables (and fields, elements) that keep their value
  std::vector<std::string> reset;    // "Main.x (new)", "Main.y (INT -> DINT)": start from their initial value
  std::vector<std::string> removed;  // variables of the old version that are gone

  // Where the old bytes [offset, offset + size) are in the new image, when they are kept whole.
  std::optional<uint32_t> relocate(uint32_t offset, uint32_t size) const;
};

// Why `to` cannot replace `from` while it runs ("" when it can): the task table (names, intervals,
// priorities) must stay, because cycles are scheduled and numbered by it.
std::string reloadBlocker(const Program& from, const Program& to);

ReloadPlan planReload(const Program& from, const Program& to);

// Whether a value of type `a` keeps its meaning as a value of type `b`: the same storage and kind
// for a value stored as one machine value or a string (enumerations: the same members and values).
// What the plan keeps, and what `scanback trace diff` compares between two versions.
bool sameValueType(const Type& a, const Type& b);

// Fills `toImage` (the new program's image size, holding its initial image) with the kept values
// of `fromImage`. REF slots that pointed at kept storage point at its new place; others become
// NULL.
void applyReload(const ReloadPlan& plan, const uint8_t* fromImage, uint32_t fromSize, uint8_t* toImage,
                 uint32_t toSize);

}  // namespace scanback
