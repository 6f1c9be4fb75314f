#include "replayer/export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "replayer/signals.h"
#include "vm/base/version.h"
#include "vm/exec/strings.h"
#include "vm/runtime/wide_values.h"

namespace scanback::replay {

namespace {

// A CSV field: quoted when it holds a separator, a quote or a line break.
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// VCD identifiers: printable ASCII from '!' to '~', shortest first.
std::string vcdId(size_t n) {
  std::string id;
  do {
    id += static_cast<char>('!' + n % 94);
    n /= 94;
  } while (n > 0);
  return id;
}

// A VCD name or string value holds no white space: it, control characters, bytes above 126,
// backslashes and double quotes are written as \xHH, and an empty string as "" (a token must not
// be empty).
std::string vcdText(std::string_view text) {
  std::string out;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u <= ' ' || u >= 0x7F || c == '\\' || c == '"')
      out += fmt::format("\\x{:02X}", u);
    else
      out += c;
  }
  return out.empty() ? std::string("\"\"") : out;
}

// A STRING's characters as stored (up to its 0, at most its capacity).
std::string stringText(const uint8_t* image, uint32_t offset, const Type& type) {
  if (type.isWideString() || type.kind == TypeKind::WChar) return wideText(image + offset, type);  // as UTF-8
  const uint8_t* p = image + offset;
  return std::string(reinterpret_cast<const char*>(p), stringLengthWithin(p, type.capacity, false));
}

// Splits "Line.filler.count" / "Main.a[3].b" at the dots outside brackets.
std::vector<std::string> pathParts(const std::string& path) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : path) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == '.' && depth == 0)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  return parts;
}

// A signal as a column (CSV) or a VCD variable.
struct Column {
  Signal signal;
  uint32_t bits = 1;  // integers: the VCD vector width
  std::string id;     // VCD
  std::string last;   // the last value, formatted (CSV text or VCD value change)
  std::vector<uint8_t> lastBytes, bytes;
  // Reads the value's bytes from `image`: true when they differ from the last ones (or on the
  // first read). Formatting only what changed keeps a long export fast.
  bool changed(const replay::Watch& w, const uint8_t* image, bool first) {
    bytes.resize(w.bit >= 0 ? 1 : w.size);
    w.read(image, bytes.data());
    if (!first && bytes == lastBytes) return false;
    lastBytes.swap(bytes);
    return true;
  }
};

// The VCD value change of `s` as read from `image` ("1!", "b101 \"", "r2.5 #", "sRed $").
std::string vcdValue(const Program& program, const Column& s, const uint8_t* image) {
  const VariableLocation& v = s.signal.where;
  switch (s.signal.kind) {
    case SignalKind::Bool:
      return fmt::format("{}{}", *numericValue(image, v.offset, v.bit, *v.type) != 0 ? 1 : 0, s.id);
    case SignalKind::Real: {
      // The shortest text that reads back as the stored value (a REAL as binary32: 0.1, not
      // 0.10000000149011612).
      const double x = *numericValue(image, v.offset, v.bit, *v.type);
      if (s.bits == 32) return fmt::format("r{} {}", static_cast<float>(x), s.id);
      return fmt::format("r{} {}", x, s.id);
    }
    case SignalKind::Enum:
      return fmt::format("s{} {}", vcdText(formatValue(program, image, v.offset, -1, *v.type)), s.id);
    case SignalKind::String: {
      const Type* t = v.type;
      while (t->kind == TypeKind::Subrange) t = t->base;
      return fmt::format("s{} {}", vcdText(stringText(image, v.offset, *t)), s.id);
    }
    case SignalKind::Integer: break;
  }
  uint64_t raw = 0;
  std::memcpy(&raw, image + v.offset, std::min<uint32_t>(s.bits / 8, 8));
  std::string digits;
  for (int b = static_cast<int>(s.bits) - 1; b >= 0; --b) {
    const bool one = (raw >> b) & 1;
    if (digits.empty() && !one && b > 0) continue;  // leading zeros (a leading 1 is kept: sign)
    digits += one ? '1' : '0';
  }
  return fmt::format("b{} {}", digits, s.id);
}

// Scopes of the VCD: program instances and function block instances (and structures) nest.
struct Scope {
  std::string name;
  std::vector<std::unique_ptr<Scope>> children;
  std::vector<std::pair<std::string, Column*>> variables;
  Scope* child(const std::string& childName) {
    for (auto& c : children)
      if (c->name == childName) return c.get();
    children.push_back(std::make_unique<Scope>());
    children.back()->name = childName;
    return children.back().get();
  }
};

void writeScope(std::ostream& out, const Scope& scope) {
  out << "$scope module " << vcdText(scope.name) << " $end\n";
  for (const auto& [name, s] : scope.variables) {
    switch (s->signal.kind) {
      case SignalKind::Bool: out << "$var wire 1 " << s->id << " " << vcdText(name) << " $end\n"; break;
      case SignalKind::Integer:
        out << "$var integer " << s->bits << " " << s->id << " " << vcdText(name) << " $end\n";
        break;
      case SignalKind::Real: out << "$var real 64 " << s->id << " " << vcdText(name) << " $end\n"; break;
      case SignalKind::Enum:
      case SignalKind::String: out << "$var string 1 " << s->id << " " << vcdText(name) << " $end\n"; break;
    }
  }
  for (const auto& c : scope.children) writeScope(out, *c);
  out << "$upscope $end\n";
}

}  // namespace

bool exportSignals(Replayer& r, const ExportOptions& options, std::ostream& out, std::string& error) {
  const Program& program = r.program();
  std::vector<Column> signals;
  std::vector<Watch> watches;
  for (const VariableLocation& v : options.variables) {
    Column s;
    s.signal = signalOf(v);
    s.bits = std::max<uint32_t>(8, v.type->size * 8);
    s.id = vcdId(signals.size());
    watches.push_back(s.signal.watch());
    signals.push_back(std::move(s));
  }
  const uint64_t first = options.firstCycle, last = options.lastCycle;
  auto progress = [&](uint64_t cycle) {
    if (options.progress) options.progress(cycle);
  };
  bool ok = false;
  auto aliasOf = [&](size_t i) -> const std::string& {
    static const std::string none;
    return i < options.aliases.size() ? options.aliases[i] : none;
  };
  if (options.format == ExportFormat::Csv) {
    out << "cycle,time";
    for (size_t i = 0; i < signals.size(); ++i) {
      const std::string& path = signals[i].signal.where.path;
      const std::string& alias = aliasOf(i);
      out << ',' << csvField(alias.empty() ? path : options.aliasesOnly ? alias : fmt::format("{} ({})", path, alias));
    }
    out << '\n';
    std::string row;
    bool firstRow = true;
    ok = r.cycleEnds(
        watches, first, last,
        [&](uint64_t cycle, int64_t startNs, const uint8_t* image) {
          row = fmt::format("{},{}", cycle, startNs);
          for (size_t i = 0; i < signals.size(); ++i) {
            Column& s = signals[i];
            const VariableLocation& v = s.signal.where;
            if (s.changed(watches[i], image, firstRow))
              s.last = csvField(formatValue(program, image, v.offset, v.bit, *v.type));
            row += ',';
            row += s.last;
          }
          firstRow = false;
          row += '\n';
          out << row;
          progress(cycle);
          return static_cast<bool>(out);
        },
        error);
  } else {
    out << "$comment scanback trace export of " << vcdText(options.title) << " $end\n";
    out << "$version scanback " << kScanbackVersion << " $end\n";
    out << "$timescale 1ns $end\n";
    Scope root;
    Scope* globals = nullptr;
    // Declares the signal at a dotted path from the root (aliases: one identifier code, two names).
    auto declareAt = [&root](const std::string& path, Column& s) {
      std::vector<std::string> parts = pathParts(path);
      Scope* scope = &root;
      for (size_t i = 0; i + 1 < parts.size(); ++i) scope = scope->child(parts[i]);
      scope->variables.emplace_back(parts.back(), &s);
    };
    for (size_t c = 0; c < signals.size(); ++c) {
      Column& s = signals[c];
      const std::string& alias = aliasOf(c);
      if (!alias.empty()) {
        declareAt(options.aliasesOnly || options.aliasScope.empty() ? alias : options.aliasScope + "." + alias, s);
        if (options.aliasesOnly) continue;
      }
      std::vector<std::string> parts = pathParts(s.signal.where.path);
      Scope* scope = &root;
      // A global is not inside a program instance: they share one scope.
      bool inInstance = false;
      for (const ProgramInstanceInfo& inst : program.instances) inInstance |= equalsIgnoreCase(inst.name, parts[0]);
      if (!inInstance || parts.size() == 1) {
        if (!globals) globals = root.child("GLOBALS");
        scope = globals;
      }
      for (size_t i = 0; i + 1 < parts.size(); ++i) scope = scope->child(parts[i]);
      scope->variables.emplace_back(parts.back(), &s);
    }
    for (const auto& c : root.children) writeScope(out, *c);
    out << "$enddefinitions $end\n";
    bool dumped = false;
    int64_t lastTime = -1;
    ok = r.cycleEnds(
        watches, first, last,
        [&](uint64_t cycle, int64_t startNs, const uint8_t* image) {
          // Several cycles may start at the same virtual time (tasks released together): one
          // timestamp, the last value of each.
          std::string changes;
          for (size_t i = 0; i < signals.size(); ++i) {
            Column& s = signals[i];
            if (!s.changed(watches[i], image, !dumped)) continue;
            std::string value = vcdValue(program, s, image);
            if (dumped && value == s.last) continue;
            changes += value;
            changes += '\n';
            s.last = std::move(value);
          }
          if (!dumped) {
            out << "#" << startNs << "\n$dumpvars\n" << changes << "$end\n";
            dumped = true;
            lastTime = startNs;
          } else if (!changes.empty()) {
            if (startNs != lastTime) out << "#" << startNs << "\n";
            lastTime = startNs;
            out << changes;
          }
          progress(cycle);
          return static_cast<bool>(out);
        },
        error);
  }
  if (!ok) return false;
  if (!out) {
    error = "the output cannot be written";
    return false;
  }
  return true;
}

}  // namespace scanback::replay
