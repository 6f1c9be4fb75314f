#include "vm/bytecode/areas.h"

#include <algorithm>

#include "vm/bytecode/open_arrays.h"
#include "vm/bytecode/program.h"

namespace scanback {

void VariableAreas::add(uint64_t begin, uint64_t size, bool instance) {
  if (size == 0) return;
  areas_.push_back(Area{begin, begin + size, kNone, instance});
}

void VariableAreas::addVariable(const Variable& v, uint64_t containerBegin) {
  if (!v.type) return;
  const uint64_t begin = v.absolute ? v.offset : containerBegin + v.offset;
  // A VAR_IN_OUT slot holds a REF (an ARRAY[*] one its bounds too), not the variable.
  if (isOpenArray(v.type)) return add(begin, openArraySlotSize(v.type));
  if (v.byReference) return add(begin, 4);
  const bool instance = v.type->kind == TypeKind::FunctionBlock;
  add(begin, v.type->size, instance);
  // An instance's fields are areas of their own inside it; an array's elements and a structure's
  // fields are not (a pointer walks them). Hidden fields (the dispatch id, a standard block's
  // state) are no one's to point into.
  if (instance)
    for (const Variable& field : v.type->fields)
      if (!field.hidden) addVariable(field, begin);
}

void VariableAreas::finish() {
  std::sort(areas_.begin(), areas_.end(),
            [](const Area& a, const Area& b) { return a.begin != b.begin ? a.begin < b.begin : a.end > b.end; });
  std::vector<Area> kept;
  kept.reserve(areas_.size());
  std::vector<uint32_t> open;  // the areas around the current one, outermost first
  for (const Area& a : areas_) {
    while (!open.empty() && kept[open.back()].end <= a.begin) open.pop_back();
    if (!open.empty()) {
      Area& around = kept[open.back()];
      if (around.begin == a.begin && around.end == a.end) {  // an instance's only field, ...
        around.instance = around.instance && a.instance;
        continue;
      }
      // Located variables may overlap without one holding the other (%MW1 and %MD0): the first
      // stays an area; the other is still inside the enclosing %M area.
      if (a.end > around.end) continue;
    }
    kept.push_back(Area{a.begin, a.end, open.empty() ? kNone : open.back(), a.instance});
    open.push_back(static_cast<uint32_t>(kept.size() - 1));
  }
  areas_ = std::move(kept);
}

bool VariableAreas::contains(uint64_t addr, uint64_t size, bool instance) const {
  const uint64_t end = addr + std::max<uint64_t>(size, 1);
  // The last area that begins at or before addr: any area holding addr is it or one around it.
  auto it = std::upper_bound(areas_.begin(), areas_.end(), addr,
                             [](uint64_t value, const Area& a) { return value < a.begin; });
  if (it == areas_.begin()) return false;
  for (uint32_t i = static_cast<uint32_t>(it - areas_.begin() - 1); i != kNone; i = areas_[i].parent) {
    const Area& a = areas_[i];
    // An instance's area holds a dereferenced instance that starts where it starts (a block's
    // own, or its base's: an extending block's layout begins with its base's).
    if (addr < a.end && end <= a.end && (!a.instance || (instance && addr == a.begin))) return true;
  }
  return false;
}

ProgramAreas buildProgramAreas(const Program& program) {
  ProgramAreas r;
  // %I, %Q and %M hold their located variables, and a pointer may walk them.
  for (const IoArea* io : {&program.input, &program.output, &program.memory}) r.image.add(io->offset, io->size);
  for (const Variable& g : program.globals) r.image.addVariable(g, 0);
  for (const ProgramInstanceInfo& p : program.instances) {
    Variable instance;
    instance.type = p.type;
    instance.offset = p.offset;
    r.image.addVariable(instance, 0);
  }
  r.image.finish();
  r.frames.resize(program.pous.size());
  for (size_t i = 0; i < program.pous.size(); ++i) {
    const PouInfo& pou = program.pous[i];
    VariableAreas& frame = r.frames[i];
    for (const Variable& v : pou.frameVariables)
      if (!v.absolute) frame.addVariable(v, 0);
    if (pou.returnType) frame.add(pou.returnOffset, pou.returnType->size);
    frame.finish();
  }
  return r;
}

}  // namespace scanback
