// What `scanback trace diff` (and a rerun that stops at a divergence) compares between two runs: the
// values both versions have, each located in each version's image. By default the outputs (%Q, by
// address, whatever each version calls them) and every variable both versions have with the same
// type, by name; or the outputs alone; or the paths and globs the user names (as `trace export
// --vars`). What cannot be compared is listed, with the reason.
//
// A sample is the compared values of one image, one after the other (a bit as one 0/1 byte):
// gather() copies them out of an image in as few copies as the layout allows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/runtime/values.h"
#include "vm/runtime/watch.h"

namespace scanback::compare {

enum class Side { A = 0, B = 1 };

struct ComparedValue {
  std::string name;        // "Line.state"; an output "Line.conveyorOut (%QX0.0)"
  VariableLocation at[2];  // in A's image and in B's
  uint32_t width = 0;      // bytes in a sample
  uint32_t offset = 0;     // where in a sample
  bool output = false;     // part of the %Q area
  // How two values are compared: their bytes; a string by its characters (bytes past its length
  // do not count); a reference by what it designates (the offsets differ between versions).
  enum class Kind { Bytes, String, Reference } kind = Kind::Bytes;
};

struct ComparedSet {
  std::vector<ComparedValue> values;
  uint32_t width = 0;  // bytes of one sample
  // Not compared: "Line.oldLimit" (only in A), "Line.count (INT in A, DINT in B)".
  std::vector<std::string> onlyInA, onlyInB, differentType;
  // Constants (VAR CONSTANT) left out of the default comparison: they are part of the program, not
  // of its state (a changed constant shows where it changes what the program does). --vars
  // compares one it names.
  uint64_t constants = 0;

  // The watched ranges of one side (for the write index and data searches), in `values` order.
  std::vector<Watch> watches(Side side) const;
  // Copies the compared values of `image` (of `side`'s program) into `sample` (width bytes).
  void gather(Side side, const uint8_t* image, uint8_t* sample) const;
  // Whether value `i` is the same in two samples (`a` of A's, `b` of B's).
  bool same(size_t i, const uint8_t* a, const uint8_t* b) const;
  // Value `i` of a sample as the Variables view shows it.
  std::string format(Side side, size_t i, const uint8_t* sample) const;

  // Built by makeComparedSet: the gathers, as runs of bytes copied at once (a bit: size 0).
  struct Copy {
    uint32_t from = 0, to = 0, size = 0;
    int8_t bit = -1;
  };
  std::vector<Copy> copies[2];
  const Program* programs[2] = {nullptr, nullptr};
};

struct CompareChoice {
  std::string vars;      // comma-separated paths and globs (empty: the default)
  bool outputs = false;  // only the outputs
};

// The compared values of A and B. False with `error` when `vars` names something neither has.
[[nodiscard]] bool makeComparedSet(const Program& a, const Program& b, const CompareChoice& choice, ComparedSet& out,
                                   std::string& error);

}  // namespace scanback::compare
