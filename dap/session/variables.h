// Scopes and variables of a paused target: what each variablesReference stands for, and the
// DAP Variables of a container read from the VM's memory. References are valid until the target
// resumes (reset()).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "dap/protocol/protocol.h"
#include "vm/bytecode/program.h"
#include "vm/exec/vm.h"

namespace scanback::dap {

// What a variablesReference expands to.
struct Container {
  enum class Kind { Locals, Instance, Globals, Retain, Io, Value };
  Kind kind = Kind::Value;
  Frame frame;                 // Locals, Instance
  uint32_t offset = 0;         // Value: where it is in memory
  const Type* type = nullptr;  // Value: a struct, FB instance or array
  std::string evaluateName;    // Value: the expression that designates it
};

// A struct, FB instance or array: shown by its type's name and expanded through a reference.
inline bool isStructured(const Type& t) {
  return t.kind == TypeKind::Struct || t.kind == TypeKind::Array || t.kind == TypeKind::FunctionBlock;
}

// One variable the client may change: where it is and how it is named.
struct VariableSlot {
  std::string name;
  uint32_t offset = 0;
  int8_t bit = -1;
  const Type* type = nullptr;
  std::string evaluateName;
  bool constant = false;
  std::string location;    // "%IX0.3" for a located variable
  SourceSpan declaration;  // where it is declared (invalid: an element, a program instance)
  bool unbound = false;    // a REFERENCE TO that designates nothing: shown as "invalid reference"
};

class VariableStore {
 public:
  // Reads the program of the VM it is given: after a reload, that is the version the paused
  // cycle runs.
  VariableStore() = default;

  void reset() {
    containers_.clear();
    known_.clear();
  }
  int64_t add(Container container);
  const Container* find(int64_t reference) const;

  // The scopes of a frame (Locals, Instance when the POU has one, Globals, Retain, I/O).
  std::vector<Scope> scopes(const Frame& frame, const Vm& vm);
  // The variables of a container; `start`/`count` page the elements of an array.
  std::vector<Variable> variables(const Container& container, const Vm& vm, std::optional<int64_t> start,
                                  std::optional<int64_t> count);
  // The slots of a container's direct children (for setVariable), by name.
  std::optional<VariableSlot> child(const Container& container, const Vm& vm, const std::string& name);
  // A DAP Variable for one value (expandable when structured).
  Variable describe(const std::string& name, const VariableSlot& slot, const Vm& vm);
  // The storage of the forces held (offset, bit), marked `forced` in the variables described
  // (presentationHint.attributes, docs/dap.md) until the next call.
  void setForced(std::vector<std::pair<uint32_t, int8_t>> forced) { forced_ = std::move(forced); }
  // The display string of a value.
  std::string valueText(const Vm& vm, uint32_t offset, int8_t bit, const Type& type) const;

 private:
  std::vector<VariableSlot> slots(const Container& container, const Vm& vm) const;
  // The comment on the declaration at `span` of `program`'s sources, on one line ("" when none).
  std::string commentOf(const Program& program, const SourceSpan& span);
  std::vector<Container> containers_;  // reference = index + 1
  std::vector<std::pair<uint32_t, int8_t>> forced_;
  // Where each line of each source file starts, for commentOf(), of the program version at
  // linesProgram_ whose hash is linesOf_ (once per version: a request reads many declarations).
  const Program* linesProgram_ = nullptr;
  std::string linesOf_;
  std::vector<std::vector<size_t>> lineStarts_;  // by FileId
  // The same container asked for again (a client re-reading a scope) gets the same reference.
  std::map<std::tuple<int, uint32_t, uint32_t, uint32_t, uint32_t, const Type*>, int64_t> known_;
};

}  // namespace scanback::dap
