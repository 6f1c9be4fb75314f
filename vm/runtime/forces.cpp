#include "vm/runtime/forces.h"

#include <fmt/format.h>

#include <algorithm>

#include "vm/runtime/runtime.h"

namespace scanback {

std::optional<VariableLocation> findWritableScalar(const Program& program, std::string_view target,
                                                   std::string& error) {
  std::optional<VariableLocation> loc =
      target.rfind('%', 0) == 0 ? findAddress(program, target, error) : findVariable(program, target, error);
  if (!loc) return std::nullopt;
  if (loc->constant) {
    error = fmt::format("'{}' is a constant", target);
    return std::nullopt;
  }
  if (!loc->type->isScalar() && loc->type->kind != TypeKind::String) {
    error = fmt::format("'{}' is a {}; name one of its elements", target, loc->type->name);
    return std::nullopt;
  }
  return loc;
}

namespace {

// How the debugger shows a forced value of `loc` (a bit: TRUE or FALSE).
std::string forcedValueText(const Program& program, const VariableLocation& loc, const Type& type,
                            const std::vector<uint8_t>& bytes) {
  if (loc.bit >= 0) return !bytes.empty() && bytes[0] ? "TRUE" : "FALSE";
  return formatValue(program, bytes.data(), 0, -1, type);
}

}  // namespace

std::optional<Force> resolveForce(const Program& program, std::string_view target, std::string_view value,
                                  std::string& error) {
  std::string why;
  const std::optional<VariableLocation> loc = findWritableScalar(program, target, why);
  if (!loc) {
    error = fmt::format("cannot force '{}': {}", target, why);
    return std::nullopt;
  }
  Force f;
  // An address as the user spelt it (findAddress's path is the address itself); a path canonical.
  f.target = target.rfind('%', 0) == 0 || loc->path.empty() ? std::string(target) : loc->path;
  f.offset = loc->offset;
  f.bit = loc->bit;
  const Type& type = loc->bit >= 0 ? *program.types->elementary(TypeKind::Bool) : *loc->type;
  if (!encodeValue(program, value, type, f.bytes, why)) {
    error = fmt::format("cannot force '{}' to {}: {}", f.target, value, why);
    return std::nullopt;
  }
  f.value = forcedValueText(program, *loc, type, f.bytes);
  f.type = type.name;
  return f;
}

void describeForce(const Program& program, Force& force) {
  std::string ignored;  // (not found: shown as bytes, below)
  const std::optional<VariableLocation> loc = findWritableScalar(program, force.target, ignored);
  if (loc && loc->bit == force.bit && (loc->bit >= 0 || loc->type->size == force.bytes.size())) {
    const Type& type = loc->bit >= 0 ? *program.types->elementary(TypeKind::Bool) : *loc->type;
    force.value = forcedValueText(program, *loc, type, force.bytes);
    force.type = type.name;
    return;
  }
  std::string hex = "16#";
  for (const uint8_t b : force.bytes) hex += fmt::format("{:02X}", b);
  force.value = hex;
  force.type.clear();
}

bool ForceTable::change(const ForceChange& c) {
  auto same = std::find_if(forces_.begin(), forces_.end(), [&](const Force& f) { return f.sameStorage(c.force); });
  if (c.release) {
    if (same == forces_.end()) return false;
    forces_.erase(same);
    return true;
  }
  if (same != forces_.end())
    *same = c.force;
  else
    forces_.push_back(c.force);
  return true;
}

void ForceTable::apply(uint8_t* image, uint32_t imageSize) const {
  for (const Force& f : forces_) applyWrite(image, imageSize, ExternalWrite{f.offset, f.bit, f.bytes});
}

void ForceTable::applyToArea(std::vector<uint8_t>& area, uint32_t areaOffset) const {
  const uint32_t size = static_cast<uint32_t>(area.size());
  for (const Force& f : forces_) {
    if (f.offset < areaOffset || f.offset - areaOffset >= size) continue;
    applyWrite(area.data(), size, ExternalWrite{f.offset - areaOffset, f.bit, f.bytes});
  }
}

}  // namespace scanback
