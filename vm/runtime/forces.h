// Forcing (issue 31): a variable or an address held at a value until released, as CODESYS, TwinCAT
// and truST distinguish a force (held) from a write (once). A force is a scan input
// (docs/architecture.md: determinism): the runtime writes every force into the image at each cycle
// start, after the field inputs are latched and the external writes applied, so neither the field
// nor a stimulus overrides it; and a forced output (%Q) also into the output image handed to the
// field after each cycle, so the field never sees what the program wrote there. A release leaves
// the last value in place: the program or the field overwrites it later.
//
// The recorder records each force and release once, at its cycle (and restates the forces held at
// each chunk's start, so that a chunk replays on its own); the replayer applies them as the runtime
// does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/program.h"
#include "vm/runtime/values.h"

namespace scanback {

// A variable or address held at a value.
struct Force {
  std::string target;   // as resolved: "Main.fb.x", "%IX0.2" (an address as the user spelt it)
  uint32_t offset = 0;  // image offset
  int8_t bit = -1;      // >= 0: a single bit at `offset`
  std::vector<uint8_t> bytes;
  uint64_t sinceCycle = 0;  // the cycle whose start first applied it
  // For display: the value as the runtime formats it, and the type's name.
  std::string value;
  std::string type;

  uint32_t size() const { return bit >= 0 ? 1u : static_cast<uint32_t>(bytes.size()); }
  // The same storage as `other` (a re-force replaces it, a release ends it).
  bool sameStorage(const Force& other) const { return offset == other.offset && bit == other.bit; }
};

// A force set or released. A release names the storage (offset, bit) and carries no bytes.
struct ForceChange {
  bool release = false;
  Force force;
};

// What a force, a stimulus column or a debugger write may name: a variable path ("Main.fb.x",
// "gVar", "Main.a[3]") or an address ("%IX0.2", "%QW2"), not a constant, a scalar or a string.
// Errors say which of those it is not.
[[nodiscard]] std::optional<VariableLocation> findWritableScalar(const Program& program, std::string_view target,
                                                                 std::string& error);

// A force of `target` to `value` (the value parsed as the debugger's Set Value and stimulus files
// parse it: encodeValue). Null with `error` ("'Main.x': ...") when either cannot be.
[[nodiscard]] std::optional<Force> resolveForce(const Program& program, std::string_view target, std::string_view value,
                                                std::string& error);

// Fills `force.value` and `force.type` from its bytes, by its target in `program`: a force read back
// from a trace, which records the storage and bytes, not how to show them. When the target names
// nothing of that size in `program` (a trace of another program version), the value is the bytes in
// hex ("16#0102") and the type empty.
void describeForce(const Program& program, Force& force);

// The forces held, in the order they were set (a re-force keeps its place).
class ForceTable {
 public:
  bool empty() const { return forces_.empty(); }
  const std::vector<Force>& forces() const { return forces_; }
  // Applies a change; false for a release of storage that is not forced.
  bool change(const ForceChange& change);
  void clear() { forces_.clear(); }
  void assign(std::vector<Force> forces) { forces_ = std::move(forces); }
  // Writes every force into `image` (cycle start).
  void apply(uint8_t* image, uint32_t imageSize) const;
  // Writes the forces inside [areaOffset, areaOffset + area.size()) into `area` (the output image
  // handed to the field).
  void applyToArea(std::vector<uint8_t>& area, uint32_t areaOffset) const;

 private:
  std::vector<Force> forces_;
};

}  // namespace scanback
