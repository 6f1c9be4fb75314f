// The area check of a pointer dereference (PCHK, PVALID): kept out of the dispatch loop, which
// only calls it for dereferences the compiler could not prove safe (docs/language.md, "Pointers").
#include <fmt/format.h>

#include "vm/exec/vm.h"

namespace scanback {

bool Vm::insideVariable(uint64_t addr, uint32_t size, bool instance) const {
  const ProgramAreas& areas = program_->areas;
  if (addr < imageSize_) return areas.image.contains(addr, size, instance);
  // The call stack: a variable of an active call's frame. Frames grow upwards, so the innermost
  // frame that starts at or below addr is the one it can be in; frame 0 (the task's entry code)
  // holds no variables.
  for (uint32_t depth = depth_; depth > 1; --depth) {
    const Frame& f = stack_[depth - 1];
    if (addr < f.frameOffset) continue;
    const uint64_t relative = addr - f.frameOffset;
    if (f.pou < areas.frames.size() && areas.frames[f.pou].contains(relative, size, instance)) return true;
    // Past this frame's own bytes lie its temporaries and the frames of calls that returned.
    if (relative < program_->pous[f.pou].frameSize) return false;
  }
  return false;
}

std::string Vm::outsideVariableDetail(uint64_t addr, uint32_t size) const {
  if (addr >= imageSize_)
    return fmt::format("the {} bytes at {} are not inside one variable of an active call's frame", size, addr);
  return fmt::format("the {} bytes at {} are not inside one variable", size, addr);
}

}  // namespace scanback
