#include "vm/runtime/state_json.h"
#include "vm/runtime/wide_values.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "vm/exec/iec_text.h"
#include "vm/exec/strings.h"
#include "vm/runtime/values.h"

namespace scanback {

namespace {

template <class T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

nlohmann::ordered_json realJson(double v, bool single) {
  if (std::isnan(v) || std::isinf(v)) return formatReal(v, single);
  // The shortest decimal text of the stored value, so that REAL 0.1 prints as 0.1.
  return std::stod(formatReal(v, single));
}

bool visible(const Variable& f) {
  return !f.hidden && !f.byReference && f.section != VarSection::Temp && f.section != VarSection::External;
}

bool searchPath(const Program& program, uint32_t base, const Type* t, uint32_t target, const Type* want,
                std::string& path, int depth) {
  if (depth > 32) return false;
  // An instance of a block that extends `want` is one too (a base's method runs on it).
  if (base == target && (!want || want == t || (want->kind == TypeKind::FunctionBlock && t->derivesFrom(want))))
    return true;
  if (t->kind == TypeKind::Struct || t->kind == TypeKind::FunctionBlock) {
    for (const Variable& f : t->fields) {
      if (f.byReference || f.hidden) continue;
      const uint32_t at = f.absolute ? f.offset : base + f.offset;
      if (target < at || target >= at + std::max<uint32_t>(f.type->size, 1)) continue;
      std::string sub = path + "." + f.name;
      if (searchPath(program, at, f.type, target, want, sub, depth + 1)) {
        path = sub;
        return true;
      }
    }
  } else if (t->kind == TypeKind::Array && t->base->size > 0) {
    const uint64_t flat = (target - base) / t->base->size;
    if (flat >= t->elementCount()) return false;
    std::string idx;
    uint64_t rest = flat;
    std::vector<int64_t> parts(t->dims.size());
    for (size_t d = t->dims.size(); d-- > 0;) {
      parts[d] = t->dims[d].lower + static_cast<int64_t>(rest % t->dims[d].count);
      rest /= t->dims[d].count;
    }
    for (size_t d = 0; d < parts.size(); ++d) idx += (d ? "," : "") + std::to_string(parts[d]);
    std::string sub = path + "[" + idx + "]";
    if (searchPath(program, base + static_cast<uint32_t>(flat * t->base->size), t->base, target, want, sub,
                   depth + 1)) {
      path = sub;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string pathOfOffset(const Program& program, uint32_t offset, const Type* type) {
  for (const ProgramInstanceInfo& inst : program.instances) {
    std::string path = inst.name;
    if (searchPath(program, inst.offset, inst.type, offset, type, path, 0)) return path;
  }
  for (const Variable& g : program.globals) {
    std::string path = g.name;
    if (g.bit < 0 && searchPath(program, g.offset, g.type, offset, type, path, 0)) return path;
  }
  return "";
}

const Type* interfaceTarget(const Program& program, const uint8_t* image, uint32_t ref) {
  if (ref == 0 || uint64_t{ref} + 4 > program.imageSize()) return nullptr;
  const uint32_t classId = get<uint32_t>(image + ref);
  if (classId == 0 || classId >= program.classes.size()) return nullptr;
  const Type* t = program.classes[classId];
  return t && uint64_t{ref} + t->size <= program.imageSize() ? t : nullptr;
}

std::string interfaceText(const Program& program, const uint8_t* image, uint32_t ref) {
  if (ref == 0) return "NULL";
  const Type* target = interfaceTarget(program, image, ref);
  const std::string path = target ? pathOfOffset(program, ref, target) : std::string();
  if (path.empty()) return fmt::format("REF(@{})", ref);
  return fmt::format("REF({}) : {}", path, target->name);
}

nlohmann::ordered_json valueToJson(const Program& program, const uint8_t* image, uint32_t offset, int bit,
                                   const Type& declared) {
  const Type* type = &declared;
  while (type->kind == TypeKind::Subrange) type = type->base;
  const uint8_t* p = image + offset;
  if (bit >= 0) return ((p[0] >> bit) & 1) != 0;
  switch (type->kind) {
    case TypeKind::Bool: return p[0] != 0;
    case TypeKind::SInt: return get<int8_t>(p);
    case TypeKind::Int: return get<int16_t>(p);
    case TypeKind::DInt: return get<int32_t>(p);
    case TypeKind::LInt: return get<int64_t>(p);
    case TypeKind::USInt:
    case TypeKind::Byte: return get<uint8_t>(p);
    case TypeKind::UInt:
    case TypeKind::Word: return get<uint16_t>(p);
    case TypeKind::UDInt:
    case TypeKind::DWord: return get<uint32_t>(p);
    case TypeKind::ULInt:
    case TypeKind::LWord: return get<uint64_t>(p);
    case TypeKind::Real: return realJson(get<float>(p), true);
    case TypeKind::LReal: return realJson(get<double>(p), false);
    case TypeKind::Time: return formatDuration(get<int64_t>(p), false);
    case TypeKind::LTime: return formatDuration(get<int64_t>(p), true);
    case TypeKind::Date: return formatDate(get<int64_t>(p));
    case TypeKind::Tod: return formatTimeOfDay(get<int64_t>(p));
    case TypeKind::Dt: return formatDateAndTime(get<int64_t>(p));
    case TypeKind::WChar: return wideText(p, *type);
    case TypeKind::String: {
      if (type->wide) return wideText(p, *type);
      return std::string(reinterpret_cast<const char*>(p), stringLengthWithin(p, type->capacity, false));
    }
    case TypeKind::Enum: {
      const std::string text = formatValue(program, image, offset, -1, *type);
      return text;
    }
    case TypeKind::Ref: {
      const uint32_t r = get<uint32_t>(p);
      if (r == 0) return nullptr;
      const Type* target = type->isInterface() ? interfaceTarget(program, image, r) : type->base;
      const std::string path = target ? pathOfOffset(program, r, target) : std::string();
      return path.empty() ? fmt::format("REF(@{})", r) : "REF(" + path + ")";
    }
    case TypeKind::Struct:
    case TypeKind::FunctionBlock: {
      nlohmann::ordered_json obj = nlohmann::ordered_json::object();
      for (const Variable& f : type->fields) {
        if (!visible(f)) continue;
        if (f.absolute && f.offset == UINT32_MAX) continue;
        obj[f.name] = valueToJson(program, image, f.absolute ? f.offset : offset + f.offset, f.bit, *f.type);
      }
      return obj;
    }
    case TypeKind::Array: {
      // Nested arrays, first index outermost.
      std::function<nlohmann::ordered_json(size_t, uint32_t)> dim = [&](size_t d, uint32_t at) {
        nlohmann::ordered_json arr = nlohmann::ordered_json::array();
        uint64_t stride = type->base->size;
        for (size_t k = d + 1; k < type->dims.size(); ++k) stride *= type->dims[k].count;
        for (uint32_t i = 0; i < type->dims[d].count; ++i) {
          const uint32_t elem = at + static_cast<uint32_t>(i * stride);
          arr.push_back(d + 1 == type->dims.size() ? valueToJson(program, image, elem, -1, *type->base)
                                                   : dim(d + 1, elem));
        }
        return arr;
      };
      return dim(0, offset);
    }
    default: return nullptr;
  }
}

nlohmann::ordered_json stateToJson(const Program& program, const uint8_t* image) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const ProgramInstanceInfo& inst : program.instances)
    out[inst.name] = valueToJson(program, image, inst.offset, -1, *inst.type);
  for (const Variable& g : program.globals) out[g.name] = valueToJson(program, image, g.offset, g.bit, *g.type);
  return out;
}

std::string frameName(const Program& program, const Frame& frame) {
  const PouInfo& pou = program.pous[frame.pou];
  std::string instance = pou.instanceName;
  if (instance.empty() && (pou.kind == PouKind::FunctionBlock || pou.kind == PouKind::Method) && pou.instanceType)
    instance = pathOfOffset(program, frame.thisOffset, pou.instanceType);
  if (instance.empty() || instance == pou.name) return pou.name;
  return fmt::format("{} ({})", instance, pou.name);
}

}  // namespace scanback
