#include "replayer/why.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "vm/compiler/statement_reads.h"
#include "vm/debug/evaluator.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"

namespace scanback::replay {

const char* whyOriginName(WhyOrigin origin) {
  switch (origin) {
    case WhyOrigin::Statement: return "statement";
    case WhyOrigin::Input: return "input";
    case WhyOrigin::Force: return "force";
    case WhyOrigin::Stimulus: return "stimulus";
    case WhyOrigin::Write: return "write";
    case WhyOrigin::Initial: return "initial";
    case WhyOrigin::Constant: return "constant";
  }
  return "?";
}

namespace {

// The first line of what `span` covers, trimmed: a statement as a one-line summary.
std::string firstLineOf(const Program& program, const SourceSpan& span) {
  if (!span.valid() || span.file >= program.sources.size()) return "";
  SourceSpan line = span;
  if (line.endLine != line.line) {
    line.endLine = line.line;
    const std::string& text = program.sources.file(span.file).text;
    size_t at = 0;
    for (uint32_t l = 1; l < span.line && at != std::string::npos; ++l) {
      at = text.find('\n', at);
      if (at != std::string::npos) ++at;
    }
    if (at == std::string::npos) return "";
    const size_t end = text.find('\n', at);
    line.endColumn = static_cast<uint32_t>((end == std::string::npos ? text.size() : end) - at + 1);
  }
  std::string out = spanText(program.sources, line);
  const size_t first = out.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

bool overlaps(const trace::ImageWriteData& w, uint32_t offset, int8_t bit, uint32_t size) {
  const uint32_t end = w.offset + static_cast<uint32_t>(w.bytes.size());
  if (w.offset >= offset + size || end <= offset) return false;
  return bit < 0 || w.bit < 0 || w.bit == bit;
}

// Whether force `f` covers the storage (offset, bit, size): any part of it, or all of it (`whole`).
bool overlaps(const trace::ForceData& f, uint32_t offset, int8_t bit, uint32_t size, bool whole) {
  const uint32_t fSize = f.bit >= 0 ? 1u : static_cast<uint32_t>(f.bytes.size());
  if (whole) {
    if (f.offset > offset || offset + size > f.offset + fSize) return false;
    return f.bit < 0 || f.bit == bit;
  }
  if (f.offset >= offset + size || f.offset + fSize <= offset) return false;
  return bit < 0 || f.bit < 0 || f.bit == bit;
}

class Explainer {
 public:
  Explainer(Replayer& r, unsigned depth, std::shared_ptr<const StatementReads> reads, std::string& error)
      : r_(r), program_(r.program()), depth_(depth), reads_(std::move(reads)), error_(error) {}

  // As the Variables view shows a value (formatValue); a reference as what it points at
  // (`REF(Main.a[3])`), a structure or array as its JSON.
  std::string format(const uint8_t* memory, uint32_t offset, int bit, const Type& type) const {
    if (bit < 0 && (type.kind == TypeKind::Ref || type.kind == TypeKind::Struct ||
                    type.kind == TypeKind::FunctionBlock || type.kind == TypeKind::Array)) {
      const nlohmann::ordered_json j = valueToJson(program_, memory, offset, bit, type);
      if (j.is_null()) return "NULL";
      if (j.is_string()) return j.get<std::string>();
      return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    return formatValue(program_, memory, offset, bit, type);
  }

  // Fills `node`'s origin (and, below `depth`, its reads) for the value the storage (offset, bit,
  // size) has at `at`.
  bool explain(WhyNode& node, uint32_t offset, int8_t bit, uint32_t size, Position at, unsigned level) {
    const Watch watch{offset, size, bit};
    // The value at a position includes the change reported at that very position (made by the
    // statement just before it, or by the scan inputs at step 0): search up to one step after it.
    const Position bound{at.cycle, at.step + 1};
    const bool inFrame = offset >= program_.imageSize();
    std::optional<Change> last;
    if (inFrame) {
      // A call frame's variable lives in the stack, zeroed at every cycle start and outside the
      // write index: its last change is in this cycle.
      std::vector<std::vector<uint8_t>> initial;
      if (!r_.changesFrom(
              {watch}, at.cycle, bound, initial,
              [&](size_t, Change&& c) {
                if (c.position < bound) last = std::move(c);
                return true;
              },
              error_))
        return false;
      if (last && (last->byScanInputs || last->statement == UINT32_MAX)) last.reset();
    } else {
      std::vector<Change> changes = r_.lastChanges(watch, bound, 1, error_);
      if (!error_.empty()) return false;
      if (!changes.empty()) last = std::move(changes.front());
    }
    // A force held over the whole value in this cycle, and not overwritten by a statement of the
    // cycle before the position: the force holds the value, though its start may have changed
    // nothing (the value was already the forced one; a last change in an earlier cycle).
    if (!inFrame && (!last || last->position.cycle < at.cycle)) {
      const trace::ForceData* force = nullptr;
      if (!forceOver(at.cycle, offset, bit, size, true, force)) return false;
      if (force) {
        node.origin = WhyOrigin::Force;
        node.position = Position{std::max(force->sinceCycle, last ? last->position.cycle + 1 : 0), 0};
        if (std::optional<Position> start = r_.start(); start && node.position < *start) node.position = *start;
        return true;
      }
    }
    if (!last) {
      node.origin = WhyOrigin::Initial;
      if (inFrame)
        node.position = Position{at.cycle, 0};
      else if (std::optional<Position> start = r_.start())
        node.position = *start;
      return true;
    }
    const Position changed = last->position;
    if (!seen_.insert({offset, bit, changed.cycle, changed.step}).second) node.repeated = true;

    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (!r_.history().cycle(changed.cycle, held, record, error_)) return false;
    if (last->byScanInputs || last->statement == UINT32_MAX) {
      node.position = Position{changed.cycle, 0};
      node.origin = WhyOrigin::Input;
      // Who changed the %I bytes, when the recording says (a Modbus server's peer, a stimulus's %I column).
      for (const trace::ImageWriteData* w : record.inputChanges)
        if (overlaps(*w, offset, bit, size)) node.author = w->author;
      // (Applied in order: the last one over the value made it.)
      for (const trace::ImageWriteData* w : record.writes)
        if (w->atStep == trace::ImageWriteData::kAtCycleStart && overlaps(*w, offset, bit, size)) {
          node.origin = WhyOrigin::Stimulus;
          node.author = w->author;
        }
      // Forces are applied last at a cycle start (vm/runtime/forces.h): over the inputs and writes.
      for (const trace::ForceData* f : record.forces)
        if (overlaps(*f, offset, bit, size, false)) {
          node.origin = WhyOrigin::Force;
          node.author = WriteAuthor::Unknown;
        }
      // A debugger's write at the cycle's first boundary (paused before its first statement) is
      // applied there, after all of the above, and its change is seen at step 0 as theirs.
      for (const trace::ImageWriteData* w : record.writes)
        if (w->atStep == 0 && overlaps(*w, offset, bit, size)) {
          node.origin = WhyOrigin::Write;
          node.author = w->author;
        }
      return true;
    }
    // A debugger's write at a boundary of the cycle, applied before the statement there runs.
    for (const trace::ImageWriteData* w : record.writes) {
      if (w->atStep >= 0 && overlaps(*w, offset, bit, size) &&
          (static_cast<uint64_t>(w->atStep) == changed.step || static_cast<uint64_t>(w->atStep) + 1 == changed.step)) {
        node.origin = WhyOrigin::Write;
        node.author = w->author;
        node.position = Position{changed.cycle, static_cast<uint64_t>(w->atStep)};
        return true;
      }
    }
    node.origin = WhyOrigin::Statement;
    node.statement = last->statement;
    node.position = Position{changed.cycle, changed.step - 1};
    const StatementInfo& s = program_.statement(last->statement);
    if (s.span.file < program_.sources.size()) node.file = program_.sources.file(s.span.file).path;
    node.line = s.span.line;
    node.text = firstLineOf(program_, s.span);
    if (node.repeated || level >= depth_) return true;
    return expandReads(node, reads_->of.at(last->statement), level);
  }

  // The children of a statement's node: what it read where it ran, each explained in turn.
  bool expandReads(WhyNode& node, const std::vector<SourceSpan>& reads, unsigned level) {
    if (reads.empty()) return true;
    if (!r_.seek(node.position, error_)) return false;
    const Frame* frame = r_.vm().innermostFrame();
    if (!frame) return true;  // not inside a cycle: nothing to evaluate in (cannot be: a statement ran there)
    const debug::EvalContext context{frame->pou, frame->thisOffset, frame->frameOffset, r_.vm().cycleTime()};
    struct Pending {
      uint32_t offset = 0;
      int8_t bit = -1;
      uint32_t size = 0;
    };
    std::vector<std::optional<Pending>> pending;
    for (const SourceSpan& span : reads) {
      WhyNode child;
      const std::string text = spanText(program_.sources, span);
      child.variable = text;
      child.position = node.position;
      std::string why;
      const debug::Expression* e = compiled(frame->pou, text, why);
      debug::EvalResult value;
      if (!e || !e->evaluate(r_.vm().memory(), r_.vm().memorySize(), context, value, why)) {
        child.origin = WhyOrigin::Constant;
        child.value = "?";
        child.error = why;
        node.reads.push_back(std::move(child));
        pending.emplace_back();
        continue;
      }
      // Storage is formatted where it lies (a structure's absolute fields are image offsets).
      child.value = value.offset && *value.offset < r_.vm().memorySize()
                        ? format(r_.vm().memory(), *value.offset, value.bit, *value.type)
                        : format(value.bytes.data(), 0, -1, *value.type);
      if (value.offset && *value.offset < program_.imageSize() && value.bit < 0) {
        const std::string path = pathOfOffset(program_, *value.offset, value.type);
        if (!path.empty()) child.variable = path;
      }
      if (value.readOnly || !value.offset) {
        child.origin = WhyOrigin::Constant;
        pending.emplace_back();
      } else {
        pending.push_back(
            Pending{*value.offset, value.bit, value.bit >= 0 ? 1u : std::max<uint32_t>(value.type->size, 1)});
      }
      node.reads.push_back(std::move(child));
    }
    // Explaining a read moves the replayer: every read was evaluated first.
    for (size_t i = 0; i < node.reads.size(); ++i)
      if (pending[i] &&
          !explain(node.reads[i], pending[i]->offset, pending[i]->bit, pending[i]->size, node.position, level + 1))
        return false;
    return true;
  }

 private:
  const debug::Expression* compiled(uint32_t pou, const std::string& text, std::string& error) {
    auto key = std::make_pair(pou, text);
    auto it = expressions_.find(key);
    if (it == expressions_.end()) {
      std::string why;
      std::unique_ptr<debug::Expression> e = debug::Expression::compile(program_, pou, text, why);
      it = expressions_.emplace(key, std::make_pair(std::move(e), why)).first;
    }
    if (!it->second.first) error = it->second.second;
    return it->second.first.get();
  }

  // The last force held in `cycle` over the storage (`whole`: over all of it), or null.
  bool forceOver(uint64_t cycle, uint32_t offset, int8_t bit, uint32_t size, bool whole,
                 const trace::ForceData*& force) {
    force = nullptr;
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    if (!r_.history().cycle(cycle, held, record, error_)) return false;
    for (const trace::ForceData* f : record.forces)
      if (overlaps(*f, offset, bit, size, whole)) force = f;
    return true;
  }

  Replayer& r_;
  const Program& program_;
  unsigned depth_;
  std::shared_ptr<const StatementReads> reads_;
  std::string& error_;
  std::set<std::tuple<uint32_t, int, uint64_t, uint64_t>> seen_;  // (offset, bit, change position)
  std::map<std::pair<uint32_t, std::string>, std::pair<std::unique_ptr<debug::Expression>, std::string>> expressions_;
};

}  // namespace

std::optional<WhyNode> explainValue(Replayer& replayer, const WhyTarget& target, Position at, unsigned depth,
                                    std::string& error) {
  if (!target.type) {
    error = fmt::format("{} has no type", target.name);
    return std::nullopt;
  }
  std::shared_ptr<const StatementReads> reads = statementReads(replayer.program(), error);
  if (!reads) return std::nullopt;
  if (!replayer.seek(at, error)) return std::nullopt;
  Explainer explainer(replayer, std::max(depth, 1u), std::move(reads), error);
  WhyNode root;
  root.variable = target.name;
  root.value = explainer.format(replayer.vm().memory(), target.offset, target.bit, *target.type);
  root.position = at;
  const uint32_t size = target.bit >= 0 ? 1u : std::max<uint32_t>(target.type->size, 1);
  if (!explainer.explain(root, target.offset, target.bit, size, at, 1)) return std::nullopt;
  return root;
}

nlohmann::ordered_json whyToJson(const WhyNode& node) {
  nlohmann::ordered_json j;
  j["value"] = node.value;
  j["variable"] = node.variable;
  j["cycle"] = node.position.cycle;
  j["step"] = node.position.step;
  if (node.origin == WhyOrigin::Statement) {
    j["file"] = node.file;
    j["line"] = node.line;
    j["text"] = node.text;
  }
  j["origin"] = whyOriginName(node.origin);
  if (node.author != WriteAuthor::Unknown) j["author"] = writeAuthorName(node.author);
  nlohmann::ordered_json reads = nlohmann::ordered_json::array();
  for (const WhyNode& r : node.reads) reads.push_back(whyToJson(r));
  j["reads"] = std::move(reads);
  if (node.repeated) j["repeated"] = true;
  if (!node.error.empty()) j["error"] = node.error;
  return j;
}

}  // namespace scanback::replay
