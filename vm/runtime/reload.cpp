#include "vm/runtime/reload.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace scanback {

bool sameValueType(const Type& a, const Type& b) {
  if (a.kind != b.kind || a.size != b.size) return false;
  switch (a.kind) {
    case TypeKind::String: return a.capacity == b.capacity && a.wide == b.wide;
    case TypeKind::Enum:
      if (!equalsIgnoreCase(a.name, b.name) || a.members.size() != b.members.size()) return false;
      for (size_t i = 0; i < a.members.size(); ++i)
        if (!equalsIgnoreCase(a.members[i].name, b.members[i].name) || a.members[i].value != b.members[i].value)
          return false;
      return true;
    case TypeKind::Subrange:
      return a.lower == b.lower && a.upper == b.upper && a.base && b.base && a.base->kind == b.base->kind;
    case TypeKind::Ref: return a.base && b.base && equalsIgnoreCase(a.base->name, b.base->name);
    default: return true;
  }
}

namespace {

std::string typeText(const Type& t) { return t.name.empty() ? "?" : t.name; }

class Planner {
 public:
  explicit Planner(ReloadPlan& plan) : plan_(plan) {}

  // One slot of the old image (offset `from`) and the new (offset `to`) with the same name.
  // `report`: say what is reset (off for the second and later elements of an array).
  void slot(const std::string& path, const Type& oldType, uint32_t from, int8_t fromBit, const Type& newType,
            uint32_t to, int8_t toBit, bool report) {
    if (oldType.kind == TypeKind::Struct || oldType.kind == TypeKind::FunctionBlock) {
      if (newType.kind != oldType.kind || !equalsIgnoreCase(oldType.name, newType.name))
        return changed(path, oldType, newType, report);
      fields(path, oldType.fields, from, newType.fields, to, report);
      return;
    }
    if (oldType.kind == TypeKind::Array) return array(path, oldType, from, newType, to, report);
    if (!sameValueType(oldType, newType) || (fromBit >= 0) != (toBit >= 0))
      return changed(path, oldType, newType, report);
    plan_.copies.push_back(ReloadPlan::Copy{from, to, fromBit >= 0 ? 1u : oldType.size, fromBit, toBit});
    if (oldType.kind == TypeKind::Ref) plan_.references.push_back(to);
    ++plan_.kept;
  }

  // The variables of a container (instance, struct): matched by name. Absolute ones (located,
  // VAR_CONFIG) sit at image offsets.
  void fields(const std::string& path, const std::vector<Variable>& oldFields, uint32_t from,
              const std::vector<Variable>& newFields, uint32_t to, bool report) {
    for (const Variable& n : newFields) {
      const Variable* o = find(oldFields, n.name);
      const std::string name = path.empty() ? n.name : path + "." + n.name;
      if (!o) {
        if (report && !n.hidden) plan_.reset.push_back(name + " (new)");
        continue;
      }
      if (!o->type || !n.type) continue;
      // The class id (object orientation) is the new program's: its initial value stays (the
      // copy still relocates references to the instance).
      if (n.hidden && n.offset == 0 && equalsIgnoreCase(n.name, "__CLASS")) plan_.classIds.push_back(to);
      if (o->byReference != n.byReference) {
        changed(name, *o->type, *n.type, report);
        continue;
      }
      const uint32_t oldAt = o->absolute ? o->offset : from + o->offset;
      const uint32_t newAt = n.absolute ? n.offset : to + n.offset;
      if (n.byReference) {  // the slot holds a REF to the argument
        plan_.copies.push_back(ReloadPlan::Copy{oldAt, newAt, 4, -1, -1});
        plan_.references.push_back(newAt);
        ++plan_.kept;
        continue;
      }
      slot(name, *o->type, oldAt, o->bit, *n.type, newAt, n.bit, report);
    }
    if (!report) return;
    for (const Variable& o : oldFields)
      if (!o.hidden && !find(newFields, o.name)) plan_.removed.push_back(path.empty() ? o.name : path + "." + o.name);
  }

 private:
  static const Variable* find(const std::vector<Variable>& list, const std::string& name) {
    for (const Variable& v : list)
      if (equalsIgnoreCase(v.name, name)) return &v;
    return nullptr;
  }

  void changed(const std::string& path, const Type& oldType, const Type& newType, bool report) {
    if (report) plan_.reset.push_back(fmt::format("{} ({} -> {})", path, typeText(oldType), typeText(newType)));
  }

  // Arrays keep the elements whose indexes both versions have (one dimension), or all of them
  // when the bounds are unchanged.
  void array(const std::string& path, const Type& oldType, uint32_t from, const Type& newType, uint32_t to,
             bool report) {
    if (newType.kind != TypeKind::Array || !oldType.base || !newType.base || oldType.dims.size() != newType.dims.size())
      return changed(path, oldType, newType, report);
    const Type& oldElement = *oldType.base;
    const Type& newElement = *newType.base;
    const bool sameBounds =
        std::equal(oldType.dims.begin(), oldType.dims.end(), newType.dims.begin(),
                   [](const ArrayDim& a, const ArrayDim& b) { return a.lower == b.lower && a.count == b.count; });
    uint64_t oldFirst = 0, newFirst = 0, count = 0;
    if (sameBounds) {
      count = oldType.elementCount();
    } else if (oldType.dims.size() == 1) {
      const int64_t lower = std::max(oldType.dims[0].lower, newType.dims[0].lower);
      const int64_t upper = std::min(oldType.dims[0].lower + int64_t{oldType.dims[0].count},
                                     newType.dims[0].lower + int64_t{newType.dims[0].count});
      if (upper <= lower) return changed(path, oldType, newType, report);
      oldFirst = static_cast<uint64_t>(lower - oldType.dims[0].lower);
      newFirst = static_cast<uint64_t>(lower - newType.dims[0].lower);
      count = static_cast<uint64_t>(upper - lower);
      if (report)
        plan_.reset.push_back(
            fmt::format("{} ({} -> {}: the common elements are kept)", path, typeText(oldType), typeText(newType)));
      report = false;
    } else {
      return changed(path, oldType, newType, report);
    }
    const uint32_t oldStride = oldElement.size, newStride = newElement.size;
    if (sameValueType(oldElement, newElement) && oldElement.kind != TypeKind::Ref &&
        oldElement.kind != TypeKind::Struct && oldElement.kind != TypeKind::FunctionBlock &&
        oldElement.kind != TypeKind::Array) {
      // One block for the whole run of elements.
      plan_.copies.push_back(ReloadPlan::Copy{from + static_cast<uint32_t>(oldFirst * oldStride),
                                              to + static_cast<uint32_t>(newFirst * newStride),
                                              static_cast<uint32_t>(count * oldStride), -1, -1});
      plan_.kept += count;
      return;
    }
    for (uint64_t i = 0; i < count; ++i) {
      slot(fmt::format("{}[{}]", path, i == 0 ? "*" : std::to_string(i)), oldElement,
           from + static_cast<uint32_t>((oldFirst + i) * oldStride), -1, newElement,
           to + static_cast<uint32_t>((newFirst + i) * newStride), -1, report && i == 0);
    }
  }

  ReloadPlan& plan_;
};

}  // namespace

std::optional<uint32_t> ReloadPlan::relocate(uint32_t offset, uint32_t size) const {
  // The last copy starting at or before `offset`.
  auto it = std::upper_bound(copies.begin(), copies.end(), offset,
                             [](uint32_t value, const Copy& c) { return value < c.from; });
  if (it == copies.begin()) return std::nullopt;
  --it;
  if (it->fromBit >= 0 || uint64_t{offset} + size > uint64_t{it->from} + it->size) return std::nullopt;
  return it->to + (offset - it->from);
}

std::string reloadBlocker(const Program& from, const Program& to) {
  auto list = [](const Program& p) {
    std::string out;
    for (const TaskInfo& t : p.tasks) out += fmt::format("{}{}", out.empty() ? "" : ", ", t.name);
    return out;
  };
  if (from.tasks.size() != to.tasks.size()) return fmt::format("the tasks changed ({} -> {})", list(from), list(to));
  for (size_t i = 0; i < from.tasks.size(); ++i) {
    const TaskInfo &a = from.tasks[i], &b = to.tasks[i];
    if (!equalsIgnoreCase(a.name, b.name)) return fmt::format("the tasks changed ({} -> {})", list(from), list(to));
    if (a.intervalNs != b.intervalNs)
      return fmt::format("the interval of task {} changed ({} ns -> {} ns)", a.name, a.intervalNs, b.intervalNs);
    if (a.priority != b.priority)
      return fmt::format("the priority of task {} changed ({} -> {})", a.name, a.priority, b.priority);
  }
  return "";
}

ReloadPlan planReload(const Program& from, const Program& to) {
  ReloadPlan plan;
  Planner planner(plan);
  planner.fields("", from.globals, 0, to.globals, 0, true);
  for (const ProgramInstanceInfo& n : to.instances) {
    const ProgramInstanceInfo* o = nullptr;
    for (const ProgramInstanceInfo& candidate : from.instances)
      if (equalsIgnoreCase(candidate.name, n.name)) o = &candidate;
    if (!o) {
      plan.reset.push_back(n.name + " (new)");
      continue;
    }
    if (o->type && n.type) planner.fields(n.name, o->type->fields, o->offset, n.type->fields, n.offset, true);
  }
  for (const ProgramInstanceInfo& o : from.instances) {
    bool gone = true;
    for (const ProgramInstanceInfo& n : to.instances) gone = gone && !equalsIgnoreCase(n.name, o.name);
    if (gone) plan.removed.push_back(o.name);
  }
  std::sort(plan.copies.begin(), plan.copies.end(),
            [](const ReloadPlan::Copy& a, const ReloadPlan::Copy& b) { return a.from < b.from; });
  return plan;
}

void applyReload(const ReloadPlan& plan, const uint8_t* fromImage, uint32_t fromSize, uint8_t* toImage,
                 uint32_t toSize) {
  std::vector<uint32_t> classIds;
  for (uint32_t at : plan.classIds) {
    uint32_t id = 0;
    if (at <= toSize && toSize - at >= 4) std::memcpy(&id, toImage + at, 4);
    classIds.push_back(id);
  }
  for (const ReloadPlan::Copy& c : plan.copies) {
    if (c.from >= fromSize || c.size > fromSize - c.from || c.to >= toSize || c.size > toSize - c.to) continue;
    if (c.fromBit >= 0 && c.toBit >= 0) {
      const bool on = (fromImage[c.from] >> c.fromBit) & 1;
      const auto mask = static_cast<uint8_t>(1u << c.toBit);
      toImage[c.to] = on ? (toImage[c.to] | mask) : (toImage[c.to] & ~mask);
      continue;
    }
    std::memcpy(toImage + c.to, fromImage + c.from, c.size);
  }
  for (uint32_t at : plan.references) {
    if (at > toSize || toSize - at < 4) continue;
    uint32_t target = 0;
    std::memcpy(&target, toImage + at, 4);
    if (target == 0) continue;  // NULL stays NULL
    const uint32_t moved = plan.relocate(target, 1).value_or(0);
    std::memcpy(toImage + at, &moved, 4);
  }
  for (size_t i = 0; i < classIds.size(); ++i)
    if (plan.classIds[i] <= toSize && toSize - plan.classIds[i] >= 4)
      std::memcpy(toImage + plan.classIds[i], &classIds[i], 4);
}

}  // namespace scanback
