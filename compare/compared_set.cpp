#include "compare/compared_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "vm/exec/strings.h"
#include "vm/runtime/reload.h"

namespace scanback::compare {

namespace {

const Type* valueType(const Type* t) {
  while (t && t->kind == TypeKind::Subrange && t->base) t = t->base;
  return t;
}

uint32_t widthOf(const VariableLocation& v) { return v.bit >= 0 ? 1u : std::max<uint32_t>(v.type->size, 1); }

bool inArea(const IoArea& area, const VariableLocation& v) {
  return area.size && v.offset >= area.offset && v.offset - area.offset < area.size;
}

// "%QX0.3", "%QW1", "%QB5": a place in the %Q area (`byte` from its start).
std::string outputAddress(uint32_t byte, uint32_t size, int bit) {
  if (bit >= 0) return fmt::format("%QX{}.{}", byte, bit);
  if (size == 2 && byte % 2 == 0) return fmt::format("%QW{}", byte / 2);
  if (size == 4 && byte % 4 == 0) return fmt::format("%QD{}", byte / 4);
  if (size == 8 && byte % 8 == 0) return fmt::format("%QL{}", byte / 8);
  return fmt::format("%QB{}", byte);
}

// The items of a --vars list: split at the commas outside brackets (`M.g[1,2]` is one item).
std::vector<std::string> listItems(const std::string& list) {
  std::vector<std::string> items(1);
  int depth = 0;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth <= 0) {
      items.emplace_back();
      continue;
    }
    items.back() += c;
  }
  std::vector<std::string> out;
  for (std::string& item : items) {
    const size_t first = item.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    const size_t last = item.find_last_not_of(" \t");
    out.push_back(item.substr(first, last - first + 1));
  }
  return out;
}

class Builder {
 public:
  Builder(const Program& a, const Program& b, ComparedSet& out) : a_(a), b_(b), out_(out) {
    out_.programs[0] = &a;
    out_.programs[1] = &b;
  }

  // Both versions' values of one name: compared when their types agree.
  void pair(const VariableLocation& va, const VariableLocation& vb) {
    if (!names_.insert(upperCase(va.path)).second) return;
    const Type* ta = valueType(va.type);
    const Type* tb = valueType(vb.type);
    if (!ta || !tb || (va.bit >= 0) != (vb.bit >= 0) || !sameValueType(*va.type, *vb.type)) {
      out_.differentType.push_back(
          fmt::format("{} ({} in A, {} in B)", va.path, va.type ? va.type->name : "?", vb.type ? vb.type->name : "?"));
      return;
    }
    ComparedValue v;
    v.name = va.path;
    v.at[0] = va;
    v.at[1] = vb;
    v.output = inArea(a_.output, va) || inArea(b_.output, vb);
    v.kind = ta->kind == TypeKind::String ? ComparedValue::Kind::String
             : ta->kind == TypeKind::Ref  ? ComparedValue::Kind::Reference
                                          : ComparedValue::Kind::Bytes;
    add(std::move(v));
  }

  void onlyIn(Side side, const std::string& name) {
    if (!names_.insert(upperCase(name)).second) return;
    (side == Side::A ? out_.onlyInA : out_.onlyInB).push_back(name);
  }

  // The %Q area by address: A's located values there, each at the same address in B (named as B
  // names it when that differs), then B's located values at places A declares nothing. (Code
  // reaches the outputs only through located variables, so nothing else is ever written there.)
  void outputs(const std::vector<VariableLocation>& allA, const std::vector<VariableLocation>& allB) {
    const uint32_t common = std::min(a_.output.size, b_.output.size);
    auto at = [&](const std::vector<VariableLocation>& all, const IoArea& area, uint32_t rel,
                  int8_t bit) -> const VariableLocation* {
      for (const VariableLocation& v : all)
        if (inArea(area, v) && v.offset - area.offset == rel && v.bit == bit) return &v;
      return nullptr;
    };
    auto fits = [&](const VariableLocation& v, const IoArea& area) {
      return uint64_t{v.offset - area.offset} + (v.bit >= 0 ? 1 : widthOf(v)) <= common;
    };
    for (const VariableLocation& va : allA) {
      if (!inArea(a_.output, va)) continue;
      const uint32_t rel = va.offset - a_.output.offset;
      const std::string address = outputAddress(rel, widthOf(va), va.bit);
      if (!fits(va, a_.output)) {
        onlyIn(Side::A, fmt::format("{} ({}: B's %Q area has {} bytes)", va.path, address, b_.output.size));
        continue;
      }
      const VariableLocation* named = at(allB, b_.output, rel, va.bit);
      VariableLocation vb = va;
      vb.offset = b_.output.offset + rel;
      if (named && sameValueType(*named->type, *va.type)) vb = *named;
      addOutput(named && !equalsIgnoreCase(named->path, va.path)
                    ? fmt::format("{} ({}, in B {})", va.path, address, named->path)
                    : fmt::format("{} ({})", va.path, address),
                va, vb, named);
    }
    for (const VariableLocation& vb : allB) {
      if (!inArea(b_.output, vb)) continue;
      const uint32_t rel = vb.offset - b_.output.offset;
      if (at(allA, a_.output, rel, vb.bit)) continue;  // compared above
      const std::string address = outputAddress(rel, widthOf(vb), vb.bit);
      if (!fits(vb, b_.output)) {
        onlyIn(Side::B, fmt::format("{} ({}: A's %Q area has {} bytes)", vb.path, address, a_.output.size));
        continue;
      }
      VariableLocation va = vb;
      va.offset = a_.output.offset + rel;
      va.type = vb.bit >= 0 ? a_.types->elementary(TypeKind::Bool) : va.type;
      addOutput(fmt::format("{} ({}, declared in B only)", vb.path, address), va, vb, &vb);
    }
  }

  void finish() {
    // A sample holds the values in A's image order, not in the report's, and a run of values that
    // lie at the same distances from one another in both images is copied at once, with the few
    // bytes between them (padding, or what is not compared): gather() runs for every cycle of both
    // traces, and the plant's 262 values take 70 copies one by one, a handful so. The bytes between
    // belong to no value (same() never reads them); a sample of A and one of B that differ only
    // there are compared value by value and found equal.
    constexpr uint32_t kMostBetween = 64;
    std::vector<size_t> order(out_.values.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const VariableLocation& a = out_.values[x].at[0];
      const VariableLocation& b = out_.values[y].at[0];
      return a.offset != b.offset ? a.offset < b.offset : a.bit < b.bit;
    });
    uint32_t width = 0;
    // The last run of bytes copied (index into copies, on both sides), none after a bit.
    std::optional<size_t> run;
    for (const size_t i : order) {
      ComparedValue& v = out_.values[i];
      if (v.at[0].bit >= 0 || v.at[1].bit >= 0) {
        v.offset = width;
        width += v.width;
        for (size_t s = 0; s < 2; ++s) {
          const VariableLocation& at = v.at[s];
          if (at.bit >= 0)
            out_.copies[s].push_back({at.offset, v.offset, 0, at.bit});
          else
            out_.copies[s].push_back({at.offset, v.offset, v.width, -1});
        }
        run.reset();
        continue;
      }
      if (run) {
        const ComparedSet::Copy& ca = out_.copies[0][*run];
        const ComparedSet::Copy& cb = out_.copies[1][*run];
        const uint32_t endA = ca.from + ca.size, endB = cb.from + cb.size;
        if (v.at[0].offset >= endA && v.at[1].offset >= endB && v.at[0].offset - endA == v.at[1].offset - endB &&
            v.at[0].offset - endA <= kMostBetween) {
          const uint32_t between = v.at[0].offset - endA;
          v.offset = width + between;
          width += between + v.width;
          out_.copies[0][*run].size += between + v.width;
          out_.copies[1][*run].size += between + v.width;
          continue;
        }
      }
      v.offset = width;
      width += v.width;
      run = out_.copies[0].size();
      for (size_t s = 0; s < 2; ++s) out_.copies[s].push_back({v.at[s].offset, v.offset, v.width, -1});
    }
    out_.width = width;
  }

 private:
  void addOutput(std::string name, const VariableLocation& va, const VariableLocation& vb,
                 const VariableLocation* namedInB) {
    ComparedValue v;
    v.name = std::move(name);
    v.at[0] = va;
    v.at[1] = vb;
    v.output = true;
    names_.insert(upperCase(va.path));
    if (namedInB) names_.insert(upperCase(namedInB->path));
    add(std::move(v));
  }

  void add(ComparedValue v) {
    v.width = widthOf(v.at[0]);
    v.offset = out_.width;
    out_.width += v.width;
    out_.values.push_back(std::move(v));
  }

  const Program& a_;
  const Program& b_;
  ComparedSet& out_;
  std::set<std::string> names_;  // upper-case names already compared or listed
};

std::map<std::string, const VariableLocation*> byName(const std::vector<VariableLocation>& all) {
  std::map<std::string, const VariableLocation*> out;
  for (const VariableLocation& v : all) out.emplace(upperCase(v.path), &v);
  return out;
}

}  // namespace

std::vector<Watch> ComparedSet::watches(Side side) const {
  std::vector<Watch> out;
  for (const ComparedValue& v : values) {
    const VariableLocation& at = v.at[static_cast<size_t>(side)];
    out.push_back(Watch{at.offset, at.bit >= 0 ? 1u : v.width, at.bit});
  }
  return out;
}

void ComparedSet::gather(Side side, const uint8_t* image, uint8_t* sample) const {
  // Called for every cycle of both traces: the usual sizes are copied inline, not through a call.
  for (const Copy& c : copies[static_cast<size_t>(side)]) {
    uint8_t* to = sample + c.to;
    const uint8_t* from = image + c.from;
    switch (c.bit >= 0 ? 0u : c.size) {
      case 0: *to = static_cast<uint8_t>((*from >> c.bit) & 1); break;
      case 1: *to = *from; break;
      case 2: std::memcpy(to, from, 2); break;
      case 4: std::memcpy(to, from, 4); break;
      case 8: std::memcpy(to, from, 8); break;
      default: std::memcpy(to, from, c.size); break;
    }
  }
}

bool ComparedSet::same(size_t i, const uint8_t* a, const uint8_t* b) const {
  const ComparedValue& v = values[i];
  const uint8_t* x = a + v.offset;
  const uint8_t* y = b + v.offset;
  switch (v.kind) {
    case ComparedValue::Kind::Bytes: return std::memcmp(x, y, v.width) == 0;
    case ComparedValue::Kind::String: {
      const Type* t = valueType(v.at[0].type);
      // The characters up to the 0 (the bytes after it are not the value).
      const uint32_t unit = t->unitBytes();
      const uint32_t room = std::min<uint32_t>(t->capacity, v.width / unit);
      const size_t la = stringLengthWithin(x, room, t->wide);
      const size_t lb = stringLengthWithin(y, room, t->wide);
      return la == lb && std::memcmp(x, y, la * unit) == 0;
    }
    case ComparedValue::Kind::Reference: return format(Side::A, i, a) == format(Side::B, i, b);
  }
  return false;
}

std::string ComparedSet::format(Side side, size_t i, const uint8_t* sample) const {
  const ComparedValue& v = values[i];
  const VariableLocation& at = v.at[static_cast<size_t>(side)];
  return formatValue(*programs[static_cast<size_t>(side)], sample, v.offset, at.bit >= 0 ? 0 : -1, *at.type);
}

bool makeComparedSet(const Program& a, const Program& b, const CompareChoice& choice, ComparedSet& out,
                     std::string& error) {
  out = ComparedSet{};
  Builder builder(a, b, out);
  const std::vector<VariableLocation> allA = allScalars(a), allB = allScalars(b);
  if (!choice.vars.empty()) {
    for (const std::string& item : listItems(choice.vars)) {
      std::string whyA, whyB;
      const std::vector<VariableLocation> sa = selectScalars(a, item, whyA);
      const std::vector<VariableLocation> sb = selectScalars(b, item, whyB);
      if (sa.empty() && sb.empty()) {
        error = fmt::format("--vars: {} (in both traces' programs)", whyA);
        return false;
      }
      const auto inB = byName(sb);
      std::set<std::string> seen;
      for (const VariableLocation& va : sa) {
        const std::string key = upperCase(va.path);
        seen.insert(key);
        const auto it = inB.find(key);
        if (it == inB.end())
          builder.onlyIn(Side::A, va.path);
        else
          builder.pair(va, *it->second);
      }
      for (const VariableLocation& vb : sb)
        if (!seen.count(upperCase(vb.path))) builder.onlyIn(Side::B, vb.path);
    }
  } else {
    builder.outputs(allA, allB);
    if (!choice.outputs) {
      const auto inB = byName(allB);
      std::set<std::string> seen;
      for (const VariableLocation& va : allA) {
        const std::string key = upperCase(va.path);
        seen.insert(key);
        if (inArea(a.output, va)) continue;  // compared by address above
        if (va.constant) {                   // part of the program, not of its state
          ++out.constants;
          continue;
        }
        const auto it = inB.find(key);
        if (it == inB.end())
          builder.onlyIn(Side::A, va.path);
        else
          builder.pair(va, *it->second);
      }
      for (const VariableLocation& vb : allB)
        if (!seen.count(upperCase(vb.path)) && !inArea(b.output, vb) && !vb.constant) builder.onlyIn(Side::B, vb.path);
    }
  }
  builder.finish();
  if (out.values.empty() && error.empty()) {
    error = choice.vars.empty() ? "the two programs have no output and no variable in common to compare"
                                : fmt::format("--vars {}: no value both programs have", choice.vars);
    return false;
  }
  return true;
}

}  // namespace scanback::compare
