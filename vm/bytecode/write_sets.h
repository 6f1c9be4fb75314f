// The image bytes each statement may write: a superset computed once per program from its
// bytecode. The recorder's write index unions the sets of the statements that ran in a chunk, so
// that the index holds every byte a statement wrote — also one a cycle changed and restored before
// it ended, which no comparison at cycle boundaries sees (docs/replayer.md, "The write index").
//
// What a statement writes, by the operand of the store (vm/bytecode/opcodes.h: memory operands):
// - an image operand: exactly its bytes (the width the opcode stores, a string's capacity);
// - a THIS operand: those bytes in every instance the code can run on (the POU's THIS set, below);
// - a frame operand: nothing (frames live in the stack, after the image);
// - an element store: the whole array;
// - a store through a reference: where the reference may point, when the statement computed it
//   (ADDR, ELEM, ELEMP, or a constant address: a REF(x) the compiler folded); a reference read from
//   a variable (REF_TO, POINTER TO, VAR_IN_OUT) may point anywhere: the statement may write
//   anywhere in the image;
// - a standard function block: its whole instance.
//
// The code of a statement is the code its statement boundary dominates: whatever runs there, that
// boundary has passed in the same call, so the statement is in the cycle's path. Code no boundary
// dominates (a POU's prologue) is `unowned`: it may run in any cycle.
//
// A POU's THIS set is where its THIS may lie in the image: a program's instance; for the calls on
// an instance operand (CALLI), that instance (relative to the caller's THIS for a field of it);
// for a call through a reference (CALLP), where the statement computed it to point (an element of
// an array of instances), else any function block instance of the image; for a dynamic call
// (CALLV), the instances of each class whose dispatch slot names the method (the VM dispatches on
// the instance's class id). A function runs on its caller's THIS.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "vm/bytecode/opcodes.h"

namespace scanback {

struct Program;

struct ImageRange {
  uint32_t offset = 0;
  uint32_t size = 0;
  bool operator==(const ImageRange&) const = default;
};

class WriteSets {
 public:
  // Ranges kept per statement: beyond it the closest are merged (a superset).
  static constexpr size_t kMaxRanges = 64;

  // `nativeSizes`: the instance bytes of each standard function block, by native id (the VM's
  // table, vm/bytecode/native_blocks.h; a call of one not in it may write anywhere).
  WriteSets(const Program& program, std::span<const uint32_t> nativeSizes);

  uint32_t imageSize() const { return imageSize_; }
  size_t statementCount() const { return anywhere_.size(); }
  // What statement `id` may write: sorted, disjoint, not adjacent, inside the image.
  std::span<const ImageRange> of(uint32_t id) const {
    return {ranges_.data() + begins_[id], ranges_.data() + begins_[id + 1]};
  }
  // It may write anywhere in the image (a store through a reference it did not compute).
  bool anywhere(uint32_t id) const { return anywhere_[id] != 0; }
  // What code no statement owns may write, in any cycle.
  std::span<const ImageRange> unowned() const { return unowned_; }
  bool unownedAnywhere() const { return unownedAnywhere_; }

 private:
  uint32_t imageSize_ = 0;
  std::vector<uint32_t> begins_;  // statement id -> first range in ranges_; one more at the end
  std::vector<ImageRange> ranges_;
  std::vector<uint8_t> anywhere_;
  std::vector<ImageRange> unowned_;
  bool unownedAnywhere_ = false;
};

// Whether the analysis knows what `op` stores (an opcode it does not know makes its statement write
// anywhere).
bool writeSetsKnow(Op op);

// Sorts, merges overlapping and adjacent ranges, clips them to [0, imageSize), and merges across
// the smallest gaps until at most `maxRanges` remain (a superset).
void normalizeRanges(std::vector<ImageRange>& ranges, uint32_t imageSize, size_t maxRanges);

}  // namespace scanback
