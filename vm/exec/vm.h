// The bytecode VM: executes one cycle of one task over the flat image, statement by statement.
// It can pause at any statement boundary (when its observer asks) and resume from there.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback {

// One active call. Frame 0 of a cycle is the task's entry code and is not shown to users.
struct Frame {
  uint32_t pou = 0;
  uint32_t returnPc = 0;     // where the caller continues
  uint32_t thisOffset = 0;   // the instance (FB, program, method's FB)
  uint32_t frameOffset = 0;  // the call frame (VAR_TEMP, function variables)
  uint32_t callPc = 0;       // pc of the call instruction in the caller
};

struct FaultInfo {
  FaultCode code = FaultCode::None;
  uint32_t pc = 0;
  uint32_t statement = UINT32_MAX;  // statement whose code faulted
  std::string detail;               // values that matter (index and bounds, ...)
};

// Called at statement boundaries and around calls while installed. With no observer the VM
// pays one predictable branch per statement (docs/architecture.md: statement boundaries).
class VmObserver {
 public:
  virtual ~VmObserver() = default;
  // Before `statement` executes; `step` is its 0-based boundary index in the cycle.
  // Return true to pause there: run() returns Paused and the next run() executes the statement.
  virtual bool onStatement(uint32_t statement, uint64_t step) = 0;
  virtual void onCall(uint32_t /*pou*/) {}
  virtual void onReturn(uint32_t /*pou*/) {}
};

enum class RunStatus { CycleDone, Paused, Faulted };

class Vm {
 public:
  static constexpr uint64_t kDefaultStatementBudget = 10'000'000;
  static constexpr size_t kMaxCallDepth = 256;

  explicit Vm(std::shared_ptr<const Program> program);

  const Program& program() const { return *program_; }
  const std::shared_ptr<const Program>& programPtr() const { return program_; }

  uint8_t* image() { return memory_.data(); }
  const uint8_t* image() const { return memory_.data(); }
  uint32_t imageSize() const { return imageSize_; }
  // Image plus stack: references may point anywhere inside it.
  uint32_t memorySize() const { return static_cast<uint32_t>(memory_.size() - kEndZeros); }
  const uint8_t* memory() const { return memory_.data(); }
  uint8_t* memory() { return memory_.data(); }

  // Back to the initial image, idle, no fault.
  void reset();

  // Starts a cycle of `task` whose virtual start time is `startNs`; run() executes it.
  void beginCycle(uint32_t task, int64_t startNs);
  RunStatus run();
  bool inCycle() const { return inCycle_; }
  uint32_t currentTask() const { return task_; }
  int64_t cycleTime() const { return now_; }
  // Statement boundaries passed in the current (or last) cycle.
  uint64_t steps() const { return steps_; }

  void setStatementBudget(uint64_t budget) { budget_ = budget; }
  uint64_t statementBudget() const { return budget_; }
  void setObserver(VmObserver* observer) { observer_ = observer; }
  VmObserver* observer() const { return observer_; }

  bool faulted() const { return fault_.code != FaultCode::None; }
  const FaultInfo& fault() const { return fault_; }

  // The user-visible call stack while paused or faulted inside a cycle, outermost first.
  std::vector<Frame> frames() const;
  // The statement a frame is at: the paused/faulting statement for the innermost frame, the
  // calling statement for the others.
  uint32_t frameStatement(const std::vector<Frame>& frames, size_t index) const;
  // The innermost user-visible frame (null between cycles): what frames().back() is, without a copy.
  const Frame* innermostFrame() const { return depth_ > 1 ? &stack_[depth_ - 1] : nullptr; }
  // Number of user-visible frames (0 between cycles; 1 in a program body).
  uint32_t callDepth() const { return depth_ > 1 ? depth_ - 1 : 0; }
  // Statement at which the VM is paused (UINT32_MAX when not paused at a statement).
  uint32_t pausedStatement() const { return pausedStatement_; }
  // Sub-cycle continuation state, for checkpoints taken mid-cycle.
  uint32_t pc() const { return pc_; }

  // Statement log (the recorder's): while set, each statement boundary appends its id at the log
  // position; a full log stops appending and reports overflow. run() dispatches through boundaries
  // that append only while there is a log; the one that would pass its end takes the watchdog's
  // slow path.
  void setStatementLog(uint32_t* begin, uint32_t* end) {
    logBegin_ = logPos_ = begin;
    logEnd_ = end;
    logOverflow_ = false;
  }
  void rewindStatementLog() {
    logPos_ = logBegin_;
    logOverflow_ = false;
  }
  const uint32_t* statementLogBegin() const { return logBegin_; }
  const uint32_t* statementLogEnd() const { return logPos_; }
  bool statementLogOverflowed() const { return logOverflow_; }

 private:
  RunStatus raise(FaultCode code, uint32_t pc, std::string detail);
  // Out of line and cold, so that the many element handlers of run() stay small.
  RunStatus indexFault(uint32_t pc, int64_t index, int32_t lower, uint32_t count);
  // Whether the `size` bytes at `addr` (inside VM memory) lie inside one variable: of the image,
  // or of an active call's frame (vm/exec/pointers.cpp). A whole function block instance counts
  // only for a dereference of an instance (`instance`).
  bool insideVariable(uint64_t addr, uint32_t size, bool instance) const;
  std::string outsideVariableDetail(uint64_t addr, uint32_t size) const;

  // Zero bytes after the stack, outside memorySize(): no variable and no frame reaches them, so
  // they end the search for a string's 0 (vm/exec/strings.h) whatever a program wrote.
  static constexpr uint32_t kEndZeros = 8;

  std::shared_ptr<const Program> program_;
  std::vector<uint8_t> memory_;
  uint32_t imageSize_ = 0;
  std::array<Frame, kMaxCallDepth> stack_{};
  uint32_t depth_ = 0;  // number of frames in stack_
  uint32_t pc_ = 0;
  uint32_t task_ = 0;
  int64_t now_ = 0;
  uint64_t steps_ = 0;
  uint64_t budget_ = kDefaultStatementBudget;
  uint64_t stackHigh_ = 0;  // end of the stack bytes used since the cycle began (zeroed at the next)
  bool inCycle_ = false;
  uint32_t pausedStatement_ = UINT32_MAX;
  Op resumeOp_ = Op::Count;  // paused at a fused statement boundary: the op still to run
  VmObserver* observer_ = nullptr;
  FaultInfo fault_;
  std::vector<char> scratch_;  // string operations that may alias their operands
  uint32_t* logBegin_ = nullptr;
  uint32_t* logPos_ = nullptr;
  uint32_t* logEnd_ = nullptr;
  bool logOverflow_ = false;
};

}  // namespace scanback
