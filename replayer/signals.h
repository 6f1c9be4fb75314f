// Signals: variables followed over recorded cycles. Which variable a signal names and the watch
// that reads it (trace export, replayer/export.h, and the Scan Timeline's lanes alike); for the
// timeline (`scanback/signals`, docs/timeline-protocol.md) also their changes over a range of
// cycles, downsampled to about a number of points. The DAP handler only reads its arguments and
// writes the reply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "replayer/replayer.h"
#include "vm/runtime/values.h"

namespace scanback::replay {

// One value followed: where it is in the image, and how it is drawn.
struct Signal {
  VariableLocation where;
  SignalKind kind = SignalKind::Integer;
  // The watch that reads it: its bytes (at least one), or the byte of its bit.
  Watch watch() const;
};

// A signal of `v`, a scalar or string (allScalars, selectScalars, resolveSignal).
Signal signalOf(const VariableLocation& v);

// The signal `name` names: a variable path ("Main.c.count", findVariable) or a direct address
// ("%IX0.1", findAddress) of one value — not an array, a structure or a reference. Nullopt with
// `error` saying why.
[[nodiscard]] std::optional<Signal> resolveSignal(const Program& program, const std::string& name, std::string& error);

// Recorded cycles, both ends included.
struct CycleRange {
  uint64_t first = 0, last = 0;
};

// The cycles of first..last (each end, when not given, the recording's) that `history` holds.
// Nullopt with `error` when it holds no cycle yet, or none of these.
[[nodiscard]] std::optional<CycleRange> recordedRange(const History& history, std::optional<uint64_t> first,
                                                      std::optional<uint64_t> last, std::string& error);

// Without a maxPoints: about this many changes per signal at most.
constexpr uint64_t kDefaultMaxPoints = 5000;

// Keeps a signal's changes within about `maxPoints` (at least 1). Every change while they fit;
// past that, the range is cut into buckets of cycles — maxPoints / 3 of them, at least one and at
// most one per cycle — and each bucket keeps its first change and those with the smallest and the
// largest value (a value that is no number, a string, keeps only the first): three points a
// bucket, so that a plot keeps its spikes.
class Downsampler {
 public:
  Downsampler(CycleRange range, uint64_t maxPoints);
  // The next change (in position order, within the range) and its value as a number, if it is one.
  void add(Change&& change, std::optional<double> value);
  // True while every change added is kept.
  bool complete() const { return complete_; }
  uint64_t bucketCount() const { return buckets_.size(); }
  // The changes kept, oldest first.
  std::vector<Change> take();

 private:
  struct Bucket {
    std::optional<Change> first, min, max;
    double minValue = 0, maxValue = 0;
  };
  CycleRange range_;
  uint64_t maxPoints_;
  std::vector<Bucket> buckets_;
  std::vector<Change> all_;  // every change while they fit in maxPoints; dropped once they do not
  bool complete_ = true;
};

// A signal's changes over a range, as the timeline draws them.
struct SignalChanges {
  std::vector<uint8_t> initial;  // its bytes before the range's first cycle
  struct Point {
    Change change;
    int64_t timeNs = 0;  // the virtual start time of the change's cycle
  };
  std::vector<Point> points;  // oldest first
  bool complete = true;       // false: downsampled (Downsampler)
};

// The changes of each of `signals` over `range`, downsampled to about `maxPoints` each; `out` has
// one entry per signal. Runs on the replayer's scratch VM: its position does not move. False with
// `error` when the range is empty or the trace cannot be replayed.
[[nodiscard]] bool signalChanges(Replayer& replayer, const std::vector<Signal>& signals, CycleRange range,
                                 uint64_t maxPoints, std::vector<SignalChanges>& out, std::string& error);

// A signal's value from its bytes alone (a change's `before` or `after`, SignalChanges::initial),
// as the Variables view shows it: read from a scratch image that holds them.
class SignalValues {
 public:
  explicit SignalValues(const Program& program) : program_(program), image_(program.initialImage) {}
  std::string text(const Signal& signal, const std::vector<uint8_t>& bytes);
  std::optional<double> number(const Signal& signal, const std::vector<uint8_t>& bytes);

 private:
  const uint8_t* place(const VariableLocation& v, const std::vector<uint8_t>& bytes);
  const Program& program_;
  std::vector<uint8_t> image_;
};

}  // namespace scanback::replay
