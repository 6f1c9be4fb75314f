#include "replayer/signals.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "vm/base/assert.h"

namespace scanback::replay {

Watch Signal::watch() const {
  return Watch{where.offset, where.bit >= 0 ? 1u : std::max<uint32_t>(where.type->size, 1), where.bit};
}

Signal signalOf(const VariableLocation& v) { return Signal{v, signalKind(*v.type)}; }

std::optional<Signal> resolveSignal(const Program& program, const std::string& name, std::string& error) {
  std::string why;
  const std::optional<VariableLocation> v =
      name.starts_with('%') ? findAddress(program, name, why) : findVariable(program, name, why);
  if (v && v->type && !(v->type->isScalar() || v->type->kind == TypeKind::String))
    why = fmt::format("'{}' is a {} ({}), not one value: add one of its members or elements", name,
                      v->type->kind == TypeKind::Array ? "array" : "structure", v->type->name);
  else if (v && v->type && v->type->kind == TypeKind::Ref)
    why = fmt::format("'{}' is a reference: add what it refers to", name);
  if (!v || !v->type || !why.empty()) {
    error = why.empty() ? fmt::format("'{}' cannot be found", name) : why;
    return std::nullopt;
  }
  return signalOf(*v);
}

std::optional<CycleRange> recordedRange(const History& history, std::optional<uint64_t> first,
                                        std::optional<uint64_t> last, std::string& error) {
  if (history.empty()) {
    error = "the recording holds no cycle yet";
    return std::nullopt;
  }
  CycleRange range;
  range.first = std::max<uint64_t>(history.firstCycle(), first.value_or(0));
  range.last = std::min<uint64_t>(history.endCycle() - 1, last.value_or(UINT64_MAX));
  if (range.first > range.last) {
    error = fmt::format("cycles {}..{} are outside the recorded cycles {}..{}", first.value_or(0), last.value_or(0),
                        history.firstCycle(), history.endCycle() - 1);
    return std::nullopt;
  }
  return range;
}

// ---------------------------------------------------------------- Downsampler

Downsampler::Downsampler(CycleRange range, uint64_t maxPoints) : range_(range), maxPoints_(maxPoints) {
  SB_ASSERT(range.first <= range.last, "cycles {}..{}", range.first, range.last);
  SB_ASSERT(maxPoints >= 1);
  // Three points a bucket (first, min, max), so that about maxPoints are kept.
  buckets_.resize(std::max<uint64_t>(1, std::min<uint64_t>(maxPoints / 3, range.last - range.first + 1)));
}

void Downsampler::add(Change&& c, std::optional<double> value) {
  SB_ASSERT(range_.first <= c.position.cycle && c.position.cycle <= range_.last, "a change at cycle {} of {}..{}",
            c.position.cycle, range_.first, range_.last);
  const uint64_t span = range_.last - range_.first + 1;
  Bucket& b = buckets_[(c.position.cycle - range_.first) * buckets_.size() / span];
  if (!b.first) b.first = c;
  if (value) {
    if (!b.min || *value < b.minValue) {
      b.min = c;
      b.minValue = *value;
    }
    if (!b.max || *value > b.maxValue) {
      b.max = c;
      b.maxValue = *value;
    }
  }
  if (complete_) {
    if (all_.size() < maxPoints_) {
      all_.push_back(std::move(c));
    } else {
      complete_ = false;
      all_.clear();
      all_.shrink_to_fit();
    }
  }
}

std::vector<Change> Downsampler::take() {
  if (complete_) return std::move(all_);
  std::vector<Change> kept;
  for (Bucket& b : buckets_) {
    std::vector<Change> here;
    for (std::optional<Change>* c : {&b.first, &b.min, &b.max})
      if (*c && std::none_of(here.begin(), here.end(), [&](const Change& k) { return k.position == (*c)->position; }))
        here.push_back(std::move(**c));
    std::sort(here.begin(), here.end(), [](const Change& a, const Change& b2) { return a.position < b2.position; });
    for (Change& c : here) kept.push_back(std::move(c));
  }
  return kept;
}

// ---------------------------------------------------------------- signalChanges

bool signalChanges(Replayer& r, const std::vector<Signal>& signals, CycleRange range, uint64_t maxPoints,
                   std::vector<SignalChanges>& out, std::string& error) {
  out.clear();
  if (range.first > range.last) {
    error = fmt::format("cycles {}..{} are an empty range", range.first, range.last);
    return false;
  }
  if (maxPoints < 1) {
    error = "at least one point a signal is needed";
    return false;
  }
  out.resize(signals.size());
  if (signals.empty()) return true;
  std::vector<Watch> watches;
  std::vector<Downsampler> kept;
  for (const Signal& s : signals) {
    watches.push_back(s.watch());
    kept.emplace_back(range, maxPoints);
  }
  SignalValues values(r.program());
  std::vector<std::vector<uint8_t>> initial;
  const bool ok = r.changesFrom(
      watches, range.first, Position{range.last + 1, 0}, initial,
      [&](size_t watch, Change&& c) {
        const std::optional<double> n = values.number(signals[watch], c.after);
        kept[watch].add(std::move(c), n);
        return true;
      },
      error);
  if (!ok) return false;

  // The virtual start time of each cycle a change is in (in order: the chunk stays cached).
  History& h = r.history();
  auto startOf = [&h](uint64_t cycle) {
    std::shared_ptr<const trace::ChunkData> held;
    CycleRecord record;
    std::string ignored;
    return h.cycle(cycle, held, record, ignored) ? record.startNs : int64_t{0};
  };
  for (size_t i = 0; i < signals.size(); ++i) {
    SignalChanges& s = out[i];
    s.initial = std::move(initial[i]);
    s.complete = kept[i].complete();
    uint64_t timeCycle = UINT64_MAX;
    int64_t timeNs = 0;
    for (Change& c : kept[i].take()) {
      if (c.position.cycle != timeCycle) {
        timeCycle = c.position.cycle;
        timeNs = startOf(timeCycle);
      }
      s.points.push_back(SignalChanges::Point{std::move(c), timeNs});
    }
  }
  return true;
}

// ---------------------------------------------------------------- SignalValues

const uint8_t* SignalValues::place(const VariableLocation& v, const std::vector<uint8_t>& bytes) {
  if (v.bit >= 0) {
    const uint8_t mask = static_cast<uint8_t>(1u << v.bit);
    image_[v.offset] = static_cast<uint8_t>((image_[v.offset] & ~mask) | (!bytes.empty() && bytes[0] ? mask : 0));
  } else {
    std::memcpy(image_.data() + v.offset, bytes.data(), std::min<size_t>(bytes.size(), v.type->size));
  }
  return image_.data();
}

std::string SignalValues::text(const Signal& s, const std::vector<uint8_t>& bytes) {
  const VariableLocation& v = s.where;
  return formatValue(program_, place(v, bytes), v.offset, v.bit, *v.type);
}

std::optional<double> SignalValues::number(const Signal& s, const std::vector<uint8_t>& bytes) {
  const VariableLocation& v = s.where;
  return numericValue(place(v, bytes), v.offset, v.bit, *v.type);
}

}  // namespace scanback::replay
