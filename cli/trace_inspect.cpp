#include "cli/trace_inspect.h"

#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/io/config.h"
#include "vm/compiler/compiler.h"
#include "vm/exec/iec_text.h"
#include "vm/runtime/forces.h"

namespace scanback::cli {

using namespace trace;  // (this file reads every kind of trace record)

namespace {

// One force as the trace held it: from the cycle whose start first applied it to the last cycle
// it was held in.
struct ForcedSpan {
  Force force;                 // target, storage, bytes; value and type once described
  uint64_t from = 0;           // its sinceCycle (before the first recorded cycle: forced before)
  std::optional<uint64_t> to;  // nullopt: still held at the end of the recording
  // Its release was not recorded: the chunk after a gap or a damaged part no longer held it, so it
  // was released in the cycles not recorded; `to` is the last recorded cycle that held it.
  bool endUnseen = false;
};

// Everything `info` reports, gathered once for the text and the JSON form.
struct Summary {
  uint64_t chunks = 0;
  uint64_t cycles = 0;  // recorded
  std::optional<uint64_t> firstCycle, lastCycle;
  uint64_t gaps = 0, gapCycles = 0;
  uint64_t programChanges = 0;
  std::optional<int64_t> firstStartNs, lastStartNs;
  std::optional<FaultData> fault;
  bool endsInFault = false;
  std::optional<OpenCycleData> open;  // the trace ends inside this cycle (a task paused there)
  uint64_t rawBytes = 0, storedBytes = 0;
  // Forces (issue 31): the sets and releases recorded (not the restatements at chunk starts), and
  // every force's span in the order they began.
  uint64_t forceChanges = 0;
  std::vector<ForcedSpan> forced;
  std::vector<std::string> errors;  // blocks that could not be read for the summary
};

// The forces of the recording: every chunk's (Chunk.forces: its sets and releases at their cycles,
// the forces held before it restated at its start), followed through the chunks in order. Reads
// every chunk (the forces are inside them), which `info` otherwise does not.
void collectForces(const TraceReader& reader, Summary& s) {
  std::vector<size_t> held;  // indexes into s.forced of the spans not ended
  const auto heldAt = [&](uint32_t offset, int8_t bit) {
    return std::find_if(held.begin(), held.end(),
                        [&](size_t i) { return s.forced[i].force.offset == offset && s.forced[i].force.bit == bit; });
  };
  ChunkData c;
  uint64_t previousLast = 0;  // the last cycle of the chunk before
  for (const BlockInfo& b : reader.blocks()) {
    if (b.kind != BlockKind::Chunk) continue;
    std::string error;
    if (!reader.readChunk(b, c, error)) {
      s.errors.push_back(error);
      continue;
    }
    if (c.cycleCount() == 0) continue;
    // A chunk restates every force held before it: one it does not ended in between unrecorded.
    for (auto it = held.begin(); it != held.end();) {
      ForcedSpan& span = s.forced[*it];
      const bool restated = std::any_of(c.forces.begin(), c.forces.end(), [&](const ForceData& f) {
        return f.restated && f.offset == span.force.offset && f.bit == span.force.bit;
      });
      if (restated) {
        ++it;
        continue;
      }
      span.to = previousLast;
      span.endUnseen = true;
      it = held.erase(it);
    }
    for (const ForceData& f : c.forces) {
      const uint64_t cycle = c.firstCycle + f.cycleIndex;
      auto same = heldAt(f.offset, f.bit);
      if (f.restated && same != held.end()) continue;  // (held already)
      if (!f.restated) {
        ++s.forceChanges;
        if (same != held.end()) {  // released, or forced again to another value
          s.forced[*same].to = cycle > 0 ? cycle - 1 : 0;
          held.erase(same);
        }
        if (f.release) continue;
      }
      ForcedSpan span;
      span.force.target = f.target;
      span.force.offset = f.offset;
      span.force.bit = f.bit;
      span.force.bytes = f.bytes;
      span.force.sinceCycle = f.sinceCycle;
      span.from = f.restated ? f.sinceCycle : cycle;
      held.push_back(s.forced.size());
      s.forced.push_back(std::move(span));
    }
    previousLast = c.firstCycle + c.cycleCount() - 1;
  }
  if (s.forced.empty()) return;
  // The values as the debugger shows them, by the recorded program (hex when it does not compile
  // here, or a force's target is not in it).
  SourceSet sources;
  for (const SourceFile& f : reader.header().sources) sources.add(f.path, f.text);
  Diagnostics diagnostics;
  CompileOptions options;
  options.test = reader.header().options.test;
  options.recordedImageSize = reader.header().imageSize;
  options.dialect = Dialect::Rusty;  // as a replay compiles it (replayer.cpp)
  const std::shared_ptr<const Program> program = compileProject(sources, diagnostics, options);
  for (ForcedSpan& span : s.forced) {
    if (program) {
      describeForce(*program, span.force);
    } else {
      span.force.value = "16#";
      for (const uint8_t byte : span.force.bytes) span.force.value += fmt::format("{:02X}", byte);
    }
  }
}

Summary summarize(const TraceReader& reader) {
  Summary s;
  s.rawBytes = reader.headerBlock().rawSize;
  s.storedBytes = reader.headerBlock().storedSize;
  if (reader.indexBlock()) {
    s.rawBytes += reader.indexBlock()->rawSize;
    s.storedBytes += reader.indexBlock()->storedSize;
  }
  const BlockInfo* firstChunk = nullptr;
  const BlockInfo* lastChunk = nullptr;
  for (const BlockInfo& b : reader.blocks()) {
    s.rawBytes += b.rawSize;
    s.storedBytes += b.storedSize;
    switch (b.kind) {
      case BlockKind::Chunk:
        ++s.chunks;
        s.cycles += b.cycleCount;
        if (b.cycleCount) {
          if (!s.firstCycle) s.firstCycle = b.firstCycle;
          s.lastCycle = b.firstCycle + b.cycleCount - 1;
          if (!firstChunk) firstChunk = &b;
          lastChunk = &b;
        }
        break;
      case BlockKind::Gap:
        ++s.gaps;
        s.gapCycles += b.cycleCount;
        break;
      case BlockKind::ProgramChange: ++s.programChanges; break;
      case BlockKind::Fault: {
        FaultData f;
        std::string error;
        if (reader.readFault(b, f, error)) {
          s.fault = f;
        } else {
          s.errors.push_back(error);
        }
        break;
      }
      case BlockKind::OpenCycle: {
        OpenCycleData o;
        std::string error;
        if (reader.readOpenCycle(b, o, error)) {
          s.open = std::move(o);
        } else {
          s.errors.push_back(error);
        }
        break;
      }
      default: break;
    }
  }
  s.endsInFault = !reader.blocks().empty() && reader.blocks().back().kind == BlockKind::Fault;
  collectForces(reader, s);
  std::string error;
  ChunkData chunk;
  if (firstChunk) {
    if (reader.readChunk(*firstChunk, chunk, error)) {
      s.firstStartNs = chunk.startTimes.front();
    } else {
      s.errors.push_back(error);
    }
  }
  if (lastChunk) {
    if (lastChunk == firstChunk && s.firstStartNs) {
      s.lastStartNs = chunk.startTimes.back();
    } else if (reader.readChunk(*lastChunk, chunk, error)) {
      s.lastStartNs = chunk.startTimes.back();
    } else {
      s.errors.push_back(error);
    }
  }
  return s;
}

size_t lineCount(const std::string& text) {
  if (text.empty()) return 0;
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + (text.back() != '\n');
}

std::string bytesText(uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (1u << 20)) return fmt::format("{:.1f} KiB", n / 1024.0);
  if (n < (1u << 30)) return fmt::format("{:.1f} MiB", n / 1048576.0);
  return fmt::format("{:.2f} GiB", n / 1073741824.0);
}

double ratio(uint64_t raw, uint64_t stored) { return stored ? static_cast<double>(raw) / stored : 0.0; }

std::string hex(const std::vector<uint8_t>& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

// `OFFSET=HEX` or `OFFSET.BIT=0|1`, ` at step N` for a write inside the cycle, then who made it
// when the trace says (` by debugger`).
std::string writeText(const ImageWriteData& w) {
  std::string out = w.bit >= 0 ? fmt::format("{}.{}={}", w.offset, w.bit, (!w.bytes.empty() && w.bytes[0]) ? 1 : 0)
                               : fmt::format("{}={}", w.offset, hex(w.bytes));
  if (w.atStep >= 0) out += fmt::format(" at step {}", w.atStep);
  if (w.author != WriteAuthor::Unknown) out += fmt::format(" by {}", writeAuthorName(w.author));
  return out;
}

std::string taskName(const HeaderData& h, uint16_t task) {
  if (task < h.tasks.size()) return h.tasks[task].name;
  return fmt::format("task#{}", task);
}

uint32_t imageHash32(const std::vector<uint8_t>& image) {
  return static_cast<uint32_t>(XXH3_64bits(image.data(), image.size()));
}

std::string optionsText(const RecordingOptions& o) {
  std::string out = fmt::format("keyframe every {} cycles, zstd level {}, statement paths {}", o.keyframeEvery,
                                o.zstdLevel, o.statements ? "recorded" : "not recorded");
  if (o.ringBytes || o.ringDurationNs) {
    out += ", flight recorder";
    if (o.ringBytes) out += fmt::format(" {}", bytesText(o.ringBytes));
    if (o.ringDurationNs) out += fmt::format(" {}", formatDuration(o.ringDurationNs));
  }
  if (o.statementBudget) out += fmt::format(", statement budget {}", o.statementBudget);
  return out;
}

// Text from the trace as valid UTF-8 (invalid sequences become U+FFFD): JSON needs it, and the
// recorded sources, names and messages are not guaranteed to be UTF-8 (ST files are often Latin-1).
std::string utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if ((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F;
    else if ((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F;
    else if ((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07;
    bool ok = len != 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (p[i + k] & 0xC0) == 0x80;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // No overlong forms, surrogates or code points past U+10FFFF.
    ok = ok && !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) && !(len == 4 && cp < 0x10000) &&
         !(cp >= 0xD800 && cp <= 0xDFFF) && cp <= 0x10FFFF;
    if (ok) {
      out.append(text, i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

std::vector<std::string> utf8(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  for (const std::string& t : texts) out.push_back(utf8(t));
  return out;
}

}  // namespace

// ----------------------------------------------------------------------------------------------
// info

std::vector<std::string> damageLines(const TraceReader& reader) {
  std::vector<std::string> lines;
  for (const DamageData& d : reader.damage()) lines.push_back(d.what);
  if (const auto& index = reader.unusableIndex()) {
    lines.push_back(
        fmt::format("the index block at offset {} is unusable ({}): the blocks were found by scanning the file{}",
                    index->offset, index->why, reader.onlyTheIndexIsCorrupt() ? ", every one before it" : ""));
  }
  if (reader.corruptOffset() && !reader.onlyTheIndexIsCorrupt())
    lines.push_back(fmt::format("a corrupt block at offset {}: what follows it is unreadable ({})",
                                *reader.corruptOffset(), reader.corruptError()));
  return lines;
}

std::string traceInfoText(const TraceReader& reader) {
  const HeaderData& h = reader.header();
  const Summary s = summarize(reader);
  std::string out;
  auto line = [&](const char* label, const std::string& value) { out += fmt::format("{:<18}{}\n", label, value); };
  line("format", fmt::format("version {} (readers from version {}), recorded by scanback {}", h.formatVersion,
                             h.minReaderVersion, h.scanbackVersion.empty() ? "?" : h.scanbackVersion));
  line("started", fmt::format("{} (wall clock, informational)", formatDateAndTime(h.startWallTimeNs)));
  line("program", fmt::format("hash {}, {} file{}, image {} bytes, {} statements", h.programHash, h.sources.size(),
                              h.sources.size() == 1 ? "" : "s", h.imageSize, h.statementCount));
  for (const SourceFile& f : h.sources) {
    line("", fmt::format("{} ({} lines, {} bytes)", f.path, lineCount(f.text), f.text.size()));
  }
  line("tasks", h.tasks.empty() ? std::string("none") : fmt::format("{}", h.tasks.size()));
  for (const TaskData& t : h.tasks) {
    line("", fmt::format("{} (interval {}, priority {})", t.name, formatDuration(t.intervalNs), t.priority));
  }
  line("options", optionsText(h.options));
  if (!h.ioConfig.empty()) {
    // The devices the run exchanged %I and %Q with (informational: their data are scan inputs).
    std::string error;
    const std::optional<runtime::io::IoConfig> io =
        runtime::io::parseIoConfig(h.ioConfig, h.ioConfigPath, nullptr, error);
    if (!io) {
      line("I/O", fmt::format("{} (not readable here: {})", h.ioConfigPath, error));
    } else {
      line("I/O",
           fmt::format("{}, {} device{}", h.ioConfigPath, io->devices.size(), io->devices.size() == 1 ? "" : "s"));
      for (const runtime::io::Device& d : io->devices) line("", runtime::io::describeDevice(d));
    }
  }
  uint64_t missing = 0;
  for (const DamageData& d : reader.damage()) missing += d.cycleCount;
  if (s.firstCycle) {
    line("cycles", fmt::format("{} recorded (cycles {}..{}{})", s.cycles, *s.firstCycle, *s.lastCycle,
                               missing ? fmt::format(", {} of them missing", missing) : std::string()));
  } else {
    line("cycles", "0 recorded");
  }
  if (s.firstStartNs && s.lastStartNs) {
    line("virtual time", fmt::format("{} .. {} (duration {})", formatDuration(*s.firstStartNs),
                                     formatDuration(*s.lastStartNs), formatDuration(*s.lastStartNs - *s.firstStartNs)));
  }
  line("chunks", fmt::format("{}", s.chunks));
  line("gaps", s.gaps ? fmt::format("{} ({} cycles not recorded)", s.gaps, s.gapCycles) : std::string("none"));
  // Damage is a part missing from the file (or there twice), a corrupt block or an unusable index:
  // not cycles the recorder dropped.
  const std::vector<std::string> damage = damageLines(reader);
  if (damage.empty()) line("damage", "none");
  if (!reader.damage().empty())
    line("damage", fmt::format("{} part{} missing or repeated{} (see the warnings)", reader.damage().size(),
                               reader.damage().size() == 1 ? "" : "s",
                               missing ? fmt::format(", {} cycles lost", missing) : std::string()));
  for (size_t i = reader.damage().size(); i < damage.size(); ++i) line("damage", damage[i]);
  if (s.programChanges) line("program changes", fmt::format("{}", s.programChanges));
  line("forces", s.forced.empty() && !s.forceChanges ? std::string("none")
                                                     : fmt::format("{} change{} recorded, {} forced", s.forceChanges,
                                                                   s.forceChanges == 1 ? "" : "s", s.forced.size()));
  for (const ForcedSpan& f : s.forced) {
    std::string until = f.to ? fmt::format("{}", *f.to) : std::string();
    std::string note = !f.to         ? " (held at the end)"
                       : f.endUnseen ? " (released in cycles not recorded: a gap or a damaged part follows)"
                                     : "";
    if (f.from < s.firstCycle.value_or(0)) note += " (forced before the recording began)";
    line("",
         fmt::format("{} = {}{}: cycles {}..{}{}", utf8(f.force.target), f.force.value,
                     f.force.type.empty() ? std::string() : fmt::format(" ({})", f.force.type), f.from, until, note));
  }
  if (s.endsInFault && s.fault) {
    line("end", fmt::format("fault in cycle {} (step {}): {}", s.fault->cycle, s.fault->step, s.fault->message));
  } else if (s.endsInFault) {
    line("end", "fault (unreadable)");
  } else if (s.open) {
    line("end", fmt::format("inside cycle {} (task {}), paused at step {}: the recording finished there", s.open->cycle,
                            taskName(h, static_cast<uint16_t>(s.open->task)), s.open->untilStep));
  } else if (reader.onlyTheIndexIsCorrupt()) {
    line("end", fmt::format("closed (it has a trailer), but its index block at offset {} is corrupt",
                            *reader.corruptOffset()));
  } else if (reader.corruptOffset()) {
    line("end", fmt::format("unknown: a corrupt block at offset {} stops the trace there", *reader.corruptOffset()));
  } else if (reader.complete()) {
    line("end", "closed normally (no fault)");
  } else {
    line("end", "no index or trailer: still being written, or the recorder stopped without closing");
  }
  line("file size", fmt::format("{} ({} bytes)", bytesText(reader.fileSize()), reader.fileSize()));
  line("payload", fmt::format("{} raw, {} stored", bytesText(s.rawBytes), bytesText(s.storedBytes)));
  line("compression ratio", s.storedBytes ? fmt::format("{:.2f}x", ratio(s.rawBytes, s.storedBytes)) : "-");
  line("bytes per cycle",
       s.cycles ? fmt::format("{:.1f}", static_cast<double>(reader.fileSize()) / s.cycles) : std::string("-"));
  for (const std::string& w : reader.warnings()) line("warning", w);
  for (const std::string& e : s.errors) line("error", e);
  return out;
}

nlohmann::ordered_json traceInfoJson(const TraceReader& reader) {
  using nlohmann::ordered_json;
  const HeaderData& h = reader.header();
  const Summary s = summarize(reader);
  ordered_json j;
  j["formatVersion"] = h.formatVersion;
  j["minReaderVersion"] = h.minReaderVersion;
  j["scanbackVersion"] = utf8(h.scanbackVersion);
  j["startWallTimeNs"] = h.startWallTimeNs;
  ordered_json files = ordered_json::array();
  for (const SourceFile& f : h.sources) {
    files.push_back({{"path", utf8(f.path)}, {"lines", lineCount(f.text)}, {"bytes", f.text.size()}});
  }
  j["program"] = {{"hash", utf8(h.programHash)},
                  {"files", files},
                  {"imageSize", h.imageSize},
                  {"statementCount", h.statementCount}};
  ordered_json tasks = ordered_json::array();
  for (const TaskData& t : h.tasks) {
    tasks.push_back({{"name", utf8(t.name)}, {"intervalNs", t.intervalNs}, {"priority", t.priority}});
  }
  j["tasks"] = tasks;
  j["options"] = {{"keyframeEvery", h.options.keyframeEvery},   {"zstdLevel", h.options.zstdLevel},
                  {"statements", h.options.statements},         {"ringBytes", h.options.ringBytes},
                  {"ringDurationNs", h.options.ringDurationNs}, {"statementBudget", h.options.statementBudget}};
  if (!h.ioConfig.empty()) j["io"] = {{"path", utf8(h.ioConfigPath)}, {"text", utf8(h.ioConfig)}};
  j["cycles"] = {{"recorded", s.cycles},
                 {"first", s.firstCycle ? ordered_json(*s.firstCycle) : ordered_json()},
                 {"last", s.lastCycle ? ordered_json(*s.lastCycle) : ordered_json()}};
  if (s.firstStartNs && s.lastStartNs) {
    j["virtualTime"] = {{"startNs", *s.firstStartNs},
                        {"lastCycleStartNs", *s.lastStartNs},
                        {"durationNs", *s.lastStartNs - *s.firstStartNs}};
  } else {
    j["virtualTime"] = nullptr;
  }
  j["chunks"] = s.chunks;
  j["gaps"] = {{"count", s.gaps}, {"cycles", s.gapCycles}};
  ordered_json damage = ordered_json::array();
  for (const DamageData& d : reader.damage())
    damage.push_back(
        {{"firstCycle", d.firstCycle}, {"cycleCount", d.cycleCount}, {"offset", d.offset}, {"what", utf8(d.what)}});
  j["damage"] = damage;
  if (reader.corruptOffset())
    j["corruptBlock"] = {{"offset", *reader.corruptOffset()},
                         {"index", reader.onlyTheIndexIsCorrupt()},
                         {"why", utf8(reader.corruptError())}};
  else
    j["corruptBlock"] = nullptr;
  if (const auto& index = reader.unusableIndex())
    j["unusableIndex"] = {{"offset", index->offset}, {"why", utf8(index->why)}, {"fallback", "scan"}};
  else
    j["unusableIndex"] = nullptr;
  j["programChanges"] = s.programChanges;
  ordered_json forced = ordered_json::array();
  for (const ForcedSpan& f : s.forced)
    forced.push_back({{"target", utf8(f.force.target)},
                      {"value", utf8(f.force.value)},
                      {"type", f.force.type},
                      {"fromCycle", f.from},
                      {"toCycle", f.to ? ordered_json(*f.to) : ordered_json()},
                      {"releaseRecorded", f.to && !f.endUnseen}});
  j["forces"] = {{"changes", s.forceChanges}, {"forced", forced}};
  j["endsInFault"] = s.endsInFault;
  if (s.fault) {
    j["fault"] = {{"cycle", s.fault->cycle},
                  {"step", s.fault->step},
                  {"statement", s.fault->statement},
                  {"code", s.fault->code},
                  {"message", utf8(s.fault->message)}};
  } else {
    j["fault"] = nullptr;
  }
  if (s.open) {
    j["openCycle"] = {{"cycle", s.open->cycle}, {"task", s.open->task}, {"untilStep", s.open->untilStep}};
  } else {
    j["openCycle"] = nullptr;
  }
  j["complete"] = reader.complete();
  j["sizes"] = {{"fileBytes", reader.fileSize()}, {"rawBytes", s.rawBytes}, {"storedBytes", s.storedBytes}};
  j["compressionRatio"] = ratio(s.rawBytes, s.storedBytes);
  j["bytesPerCycle"] = s.cycles ? static_cast<double>(reader.fileSize()) / s.cycles : 0.0;
  j["warnings"] = utf8(reader.warnings());
  j["corruptOffset"] = reader.corruptOffset() ? ordered_json(*reader.corruptOffset()) : ordered_json();
  j["errors"] = utf8(s.errors);
  return j;
}

// ----------------------------------------------------------------------------------------------
// dump

bool narrowToCycles(const std::string& text, const std::string& trace, uint64_t& first, uint64_t& last,
                    std::string& error) {
  if (text.empty()) return true;
  uint64_t from = 0, to = UINT64_MAX;
  if (!parseCycleRange(text, from, to, error)) {
    error = "--cycles: " + error;
    return false;
  }
  if (to < first || from > last || from > to) {
    error = fmt::format("{}: --cycles {} is outside the recorded cycles {}..{}", trace, text, first, last);
    return false;
  }
  first = std::max(first, from);
  last = std::min(last, to);
  return true;
}

bool parseCycleRange(const std::string& text, uint64_t& fromCycle, uint64_t& toCycle, std::string& error) {
  auto number = [](std::string_view s, uint64_t& v) {
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  const size_t dots = text.find("..");
  fromCycle = 0;
  toCycle = UINT64_MAX;
  bool ok;
  if (dots == std::string::npos) {
    ok = number(text, fromCycle);
    toCycle = fromCycle;
  } else {
    const std::string_view a = std::string_view(text).substr(0, dots);
    const std::string_view b = std::string_view(text).substr(dots + 2);
    ok = (a.empty() || number(a, fromCycle)) && (b.empty() || number(b, toCycle)) && !(a.empty() && b.empty());
  }
  if (!ok) {
    error = fmt::format("bad cycle range '{}' (expected A..B, A.., ..B or A)", text);
    return false;
  }
  if (fromCycle > toCycle) {
    error = fmt::format("empty cycle range '{}': {} > {}", text, fromCycle, toCycle);
    return false;
  }
  return true;
}

void traceDump(TraceReader& reader, uint64_t fromCycle, uint64_t toCycle, std::ostream& out) {
  const HeaderData& h = reader.header();
  out << fmt::format("header @{}: format {} (readers from {}), scanback {}\n", reader.headerBlock().offset,
                     h.formatVersion, h.minReaderVersion, h.scanbackVersion);
  out << fmt::format("  program {}, image {} bytes, {} statements\n", h.programHash, h.imageSize, h.statementCount);
  for (const SourceFile& f : h.sources) out << fmt::format("  source {} ({} bytes)\n", f.path, f.text.size());
  for (size_t i = 0; i < h.tasks.size(); ++i) {
    const TaskData& t = h.tasks[i];
    out << fmt::format("  task {} {} interval {} priority {}\n", i, t.name, formatDuration(t.intervalNs), t.priority);
  }
  out << fmt::format("  options {}\n", optionsText(h.options));
  out << fmt::format("  started {} (wall clock)\n", formatDateAndTime(h.startWallTimeNs));

  auto inRange = [&](uint64_t first, uint64_t count) {
    const uint64_t last = count ? first + count - 1 : first;
    return first <= toCycle && last >= fromCycle;
  };
  // Whether a block was read; when it was not, the error is shown in its place and the dump goes on.
  auto readable = [&](const BlockInfo& b, const char* what, bool read, const std::string& error) {
    if (!read) out << fmt::format("{} @{}: ERROR {}\n", what, b.offset, error);
    return read;
  };
  for (const BlockInfo& b : reader.blocks()) {
    std::string error;
    switch (b.kind) {
      case BlockKind::Chunk: {
        if (!inRange(b.firstCycle, b.cycleCount)) break;
        ChunkData c;
        if (!reader.readChunk(b, c, error)) {
          out << fmt::format("chunk @{}: cycles {}+{}: ERROR {}\n", b.offset, b.firstCycle, b.cycleCount, error);
          break;
        }
        out << fmt::format("chunk @{}: cycles {}..{} ({} cycles), {} bytes stored, {} raw\n", b.offset, c.firstCycle,
                           c.firstCycle + c.cycleCount() - (c.cycleCount() ? 1 : 0), c.cycleCount(), b.storedSize,
                           b.rawSize);
        out << fmt::format("  keyframe {} bytes, hash {:08x}\n", c.keyframe.size(), imageHash32(c.keyframe));
        out << fmt::format("  paths {} distinct, input changes {}, writes {}\n", c.pathTable.size(),
                           c.inputChanges.size(), c.writes.size());
        size_t in = 0, wr = 0;
        for (uint32_t i = 0; i < c.cycleCount(); ++i) {
          const uint64_t cycle = c.firstCycle + i;
          const bool show = cycle >= fromCycle && cycle <= toCycle;
          std::string path = "-";
          if (!c.paths.empty() && c.paths[i] != kNoPath) {
            path = fmt::format("{} len {}", c.paths[i], c.pathTable[c.paths[i]].size());
          }
          if (show) {
            out << fmt::format("  cycle {} task {} start {} steps {} hash {:08x} path {}\n", cycle,
                               taskName(h, c.tasks[i]), formatDuration(c.startTimes[i]), c.stepCounts[i],
                               c.imageHashes[i], path);
          }
          for (; in < c.inputChanges.size() && c.inputChanges[in].cycleIndex == i; ++in) {
            if (show) out << "    input " << writeText(c.inputChanges[in]) << "\n";
          }
          for (; wr < c.writes.size() && c.writes[wr].cycleIndex == i; ++wr) {
            if (show) out << "    write " << writeText(c.writes[wr]) << "\n";
          }
        }
        break;
      }
      case BlockKind::Gap: {
        GapData g;
        if (!inRange(b.firstCycle, b.cycleCount) || !readable(b, "gap", reader.readGap(b, g, error), error)) break;
        out << fmt::format("gap @{}: cycles {}..{} not recorded ({} cycles)\n", b.offset, g.firstCycle,
                           g.firstCycle + g.cycleCount - (g.cycleCount ? 1 : 0), g.cycleCount);
        break;
      }
      case BlockKind::ProgramChange: {
        ProgramChangeData p;
        if (!inRange(b.firstCycle, 1) || !readable(b, "program change", reader.readProgramChange(b, p, error), error))
          break;
        out << fmt::format("program change @{}: from cycle {}: program {}, {} files, image {} bytes, {} statements\n",
                           b.offset, p.atCycle, p.programHash, p.sources.size(), p.imageSize, p.statementCount);
        break;
      }
      case BlockKind::Fault: {
        FaultData f;
        if (!inRange(b.firstCycle, 1) || !readable(b, "fault", reader.readFault(b, f, error), error)) break;
        out << fmt::format("fault @{}: cycle {} step {} statement {} code {}: {}\n", b.offset, f.cycle, f.step,
                           f.statement, f.code, f.message);
        break;
      }
      case BlockKind::OpenCycle: {
        OpenCycleData o;
        if (!inRange(b.firstCycle, 1) || !readable(b, "open cycle", reader.readOpenCycle(b, o, error), error)) break;
        out << fmt::format("open cycle @{}: cycle {} task {} start {}, up to step {} (the recording finished there)\n",
                           b.offset, o.cycle, taskName(h, static_cast<uint16_t>(o.task)), formatDuration(o.startNs),
                           o.untilStep);
        out << fmt::format("  keyframe {} bytes, hash {:08x}\n", o.keyframe.size(), imageHash32(o.keyframe));
        for (const ImageWriteData& w : o.inputChanges) out << "    input " << writeText(w) << "\n";
        for (const ImageWriteData& w : o.writes) out << "    write " << writeText(w) << "\n";
        break;
      }
      default: break;
    }
  }
  if (reader.indexBlock()) {
    out << fmt::format("index @{}: {} bytes stored\n", reader.indexBlock()->offset, reader.indexBlock()->storedSize);
  }
  for (const std::string& w : reader.warnings()) out << "warning: " << w << "\n";
}

std::string traceDump(TraceReader& reader, uint64_t fromCycle, uint64_t toCycle) {
  std::ostringstream out;
  traceDump(reader, fromCycle, toCycle, out);
  return out.str();
}

// ----------------------------------------------------------------------------------------------
// hits

namespace {

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of("/\\");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool endsWithPath(const std::string& path, const std::string& tail) {
  return path.size() > tail.size() && path.compare(path.size() - tail.size(), tail.size(), tail) == 0 &&
         (path[path.size() - tail.size() - 1] == '/' || path[path.size() - tail.size() - 1] == '\\');
}

// The file of `sources` that `file` names, or an error.
[[nodiscard]] std::optional<size_t> findFile(const std::vector<SourceFile>& sources, const std::string& file,
                                             std::string& error) {
  std::vector<size_t> found;
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].path == file) found.push_back(i);
  }
  if (found.empty()) {
    for (size_t i = 0; i < sources.size(); ++i) {
      if (endsWithPath(sources[i].path, file) || endsWithPath(file, sources[i].path)) found.push_back(i);
    }
  }
  if (found.empty()) {
    for (size_t i = 0; i < sources.size(); ++i) {
      if (baseName(sources[i].path) == baseName(file)) found.push_back(i);
    }
  }
  if (found.size() == 1) return found[0];
  std::string names;
  for (size_t i = 0; i < (found.empty() ? sources.size() : found.size()); ++i) {
    names += (i ? ", " : "") + sources[found.empty() ? i : found[i]].path;
  }
  error = found.empty() ? fmt::format("the trace's program has no file '{}' (its files: {})", file, names)
                        : fmt::format("'{}' is ambiguous: it names {}", file, names);
  return std::nullopt;
}

// "main.st:12" -> "main.st" (the part before the last colon).
std::string fileOf(const std::string& fileLine) {
  const size_t colon = fileLine.find_last_of(':');
  return colon == std::string::npos ? fileLine : fileLine.substr(0, colon);
}

struct ProgramLine {
  std::vector<uint32_t> statements;  // starting on the line
  std::string error;                 // when none do, why
  std::string path;
};

// The statements starting on `file`:`line` of the program of `files`, compiled as recorded: to an
// image of `imageSize` bytes with `statementCount` statements (the trace's header or program
// change), or an error.
ProgramLine resolveLine(const std::vector<SourceFile>& files, const std::string& file, uint32_t line,
                        const std::string& test, uint32_t imageSize, uint32_t statementCount) {
  ProgramLine r;
  const std::optional<size_t> id = findFile(files, file, r.error);
  if (!id) return r;
  r.path = files[*id].path;
  SourceSet sources;
  for (const SourceFile& f : files) sources.add(f.path, f.text);
  Diagnostics diagnostics;
  CompileOptions options;
  options.test = test;  // a unit test's recording runs the program compiled for it
  options.recordedImageSize = imageSize;
  options.dialect = Dialect::Rusty;  // as a replay compiles it (replayer.cpp)
  const std::shared_ptr<const Program> program = compileProject(sources, diagnostics, options);
  if (!program) {
    r.error = fmt::format("the trace's program does not compile:\n{}", diagnostics.format(sources));
    return r;
  }
  if (program->imageSize() != imageSize || program->statements.size() != statementCount) {
    r.error = fmt::format(
        "the program compiles differently from the recording: image {} bytes and {} statements recorded, {} bytes "
        "and {} statements now",
        imageSize, statementCount, program->imageSize(), program->statements.size());
    return r;
  }
  uint32_t below = 0, above = UINT32_MAX;
  for (uint32_t s = 0; s < program->statements.size(); ++s) {
    const SourceSpan& span = program->statements[s].span;
    if (span.file != *id) continue;
    if (span.line == line) r.statements.push_back(s);
    if (span.line < line) below = std::max(below, span.line);
    if (span.line > line) above = std::min(above, span.line);
  }
  const size_t lines = lineCount(files[*id].text);
  if (r.statements.empty() && line > lines) {
    r.error = fmt::format("line {} is past the end of {} as recorded (it has {} line{})", line, r.path, lines,
                          lines == 1 ? "" : "s");
  } else if (r.statements.empty()) {
    std::string nearby;
    if (below && above != UINT32_MAX) {
      nearby = fmt::format("; the nearest statements start on lines {} and {}", below, above);
    } else if (below) {
      nearby = fmt::format("; the nearest statement starts on line {}", below);
    } else if (above != UINT32_MAX) {
      nearby = fmt::format("; the nearest statement starts on line {}", above);
    }
    r.error = fmt::format("no statement starts on line {} of {}{}", line, r.path, nearby);
  }
  return r;
}

}  // namespace

std::optional<std::string> recordedSource(const TraceReader& reader, const std::string& file, std::string& error) {
  const std::vector<SourceFile>& sources = reader.header().sources;
  const std::optional<size_t> id = findFile(sources, file, error);
  if (!id) return std::nullopt;
  return sources[*id].text;
}

std::string editedSourceNotice(const TraceReader& reader, const std::string& fileLine, const std::string& tracePath) {
  const std::string file = fileOf(fileLine);
  std::error_code ec;
  if (file.empty() || !std::filesystem::is_regular_file(file, ec)) return {};
  std::string ignored;
  const std::optional<size_t> id = findFile(reader.header().sources, file, ignored);
  if (!id) return {};
  std::ifstream in(file, std::ios::binary);
  std::ostringstream onDisk;
  onDisk << in.rdbuf();
  if (!in || onDisk.str() == reader.header().sources[*id].text) return {};
  return fmt::format(
      "{} on disk differs from the version recorded in the trace: line numbers are the recorded version's (see it "
      "with: scanback trace dump {} --source {})",
      file, tracePath, reader.header().sources[*id].path);
}

std::optional<HitsResult> traceHits(TraceReader& reader, const std::string& fileLine, std::string& error) {
  const size_t colon = fileLine.find_last_of(':');
  uint32_t line = 0;
  if (colon == std::string::npos || colon == 0 ||
      std::from_chars(fileLine.data() + colon + 1, fileLine.data() + fileLine.size(), line).ptr !=
          fileLine.data() + fileLine.size() ||
      colon + 1 == fileLine.size() || line == 0) {
    error = fmt::format("expected FILE:LINE, got '{}'", fileLine);
    return std::nullopt;
  }
  const std::string file = fileLine.substr(0, colon);
  const HeaderData& h = reader.header();
  if (!h.options.statements) {
    error = "the trace has no statement paths (it was recorded without them)";
    return std::nullopt;
  }
  HitsResult result;
  result.line = line;
  ProgramLine current = resolveLine(h.sources, file, line, h.options.test, h.imageSize, h.statementCount);
  if (!current.error.empty()) {
    error = current.error;
    return std::nullopt;
  }
  result.file = current.path;
  result.statements = current.statements;
  size_t version = 0;
  for (const BlockInfo& b : reader.blocks()) {
    std::string why;
    if (b.kind == BlockKind::ProgramChange) {
      ProgramChangeData change;
      ++version;
      if (!reader.readProgramChange(b, change, why)) {
        result.warnings.push_back(why);
        current = ProgramLine{};
        continue;
      }
      current = resolveLine(change.sources, file, line, h.options.test, change.imageSize, change.statementCount);
      if (!current.error.empty()) {
        result.warnings.push_back(
            fmt::format("program version {} (from cycle {}): {}", version, change.atCycle, current.error));
      }
      continue;
    }
    if (b.kind != BlockKind::Chunk) continue;
    ChunkData chunk;
    if (!reader.readChunk(b, chunk, why)) {
      result.warnings.push_back(why);
      continue;
    }
    uint64_t withPath = 0;
    for (uint32_t p : chunk.paths) withPath += p != kNoPath;
    result.cyclesSearched += withPath;
    result.cyclesWithoutPath += chunk.cycleCount() - withPath;
    for (const auto& hit : cyclesExecuting(chunk, current.statements)) {
      result.cycles.push_back(hit);
      result.totalHits += hit.second;
    }
  }
  if (result.cyclesSearched == 0 && result.cyclesWithoutPath > 0) {
    error = "the trace has no statement paths (none of its cycles has one)";
    return std::nullopt;
  }
  return result;
}

std::string hitsText(const HitsResult& hits) {
  std::string ids;
  for (size_t i = 0; i < hits.statements.size(); ++i) ids += fmt::format("{}{}", i ? ", " : "", hits.statements[i]);
  std::string out = fmt::format("{}:{} (statement{} {}): executed {} time{} in {} of {} cycles\n", hits.file, hits.line,
                                hits.statements.size() == 1 ? "" : "s", ids, hits.totalHits,
                                hits.totalHits == 1 ? "" : "s", hits.cycles.size(), hits.cyclesSearched);
  if (hits.cyclesWithoutPath) {
    out += fmt::format("({} recorded cycles have no statement path and were not searched)\n", hits.cyclesWithoutPath);
  }
  for (const auto& [cycle, count] : hits.cycles) out += fmt::format("  cycle {} x{}\n", cycle, count);
  for (const std::string& w : hits.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

nlohmann::ordered_json hitsJson(const HitsResult& hits) {
  nlohmann::ordered_json j;
  j["file"] = utf8(hits.file);
  j["line"] = hits.line;
  j["statements"] = hits.statements;
  j["totalHits"] = hits.totalHits;
  j["cyclesSearched"] = hits.cyclesSearched;
  j["cyclesWithoutPath"] = hits.cyclesWithoutPath;
  nlohmann::ordered_json cycles = nlohmann::ordered_json::array();
  for (const auto& [cycle, count] : hits.cycles) cycles.push_back({{"cycle", cycle}, {"count", count}});
  j["cycles"] = cycles;
  j["warnings"] = utf8(hits.warnings);
  return j;
}

}  // namespace scanback::cli
