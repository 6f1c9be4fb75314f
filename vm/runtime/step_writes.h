// External writes made inside a cycle: a debugger's write while the task was paused at a statement
// boundary takes effect there, at once (docs/architecture.md: determinism). Whoever re-executes
// such a cycle (the recorder's writer, the replayer) applies each write when the run reaches its
// boundary, before anything else looks at that boundary.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "vm/exec/vm.h"
#include "vm/runtime/runtime.h"

namespace scanback {

struct StepWrite {
  uint64_t step = 0;  // the statement boundary of the cycle (before the statement there runs)
  ExternalWrite write;
};

// Runs a cycle's VM, applying `writes` (in the order they were made, so by step) at their
// boundaries. Wraps whatever observer the VM has: that observer sees each boundary after the
// writes made there, and may pause the run as usual; a later run() goes on where it stopped.
class StepWriter final : public VmObserver {
 public:
  StepWriter() = default;
  explicit StepWriter(std::vector<StepWrite> writes) : writes_(std::move(writes)) {}

  bool empty() const { return writes_.empty(); }
  // vm.run() with the writes applied on the way.
  RunStatus run(Vm& vm) {
    if (next_ >= writes_.size()) return vm.run();
    vm_ = &vm;
    inner_ = vm.observer();
    vm.setObserver(this);
    const RunStatus status = vm.run();
    vm.setObserver(inner_);
    return status;
  }

  bool onStatement(uint32_t statement, uint64_t step) override {
    for (; next_ < writes_.size() && writes_[next_].step <= step; ++next_)
      if (writes_[next_].step == step) applyWrite(vm_->image(), vm_->imageSize(), writes_[next_].write);
    return inner_ ? inner_->onStatement(statement, step) : false;
  }
  void onCall(uint32_t pou) override {
    if (inner_) inner_->onCall(pou);
  }
  void onReturn(uint32_t pou) override {
    if (inner_) inner_->onReturn(pou);
  }

 private:
  std::vector<StepWrite> writes_;
  size_t next_ = 0;
  Vm* vm_ = nullptr;
  VmObserver* inner_ = nullptr;
};

}  // namespace scanback
