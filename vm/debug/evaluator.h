// The debugger's expression evaluator: any ST expression, evaluated in the context of a paused
// frame over the VM's memory (image + stack), with exactly the value the VM would compute for the
// same expression in that frame.
//
// The program's bytecode is immutable and shared (docs/architecture.md: immutable, shared bytecode), so expressions are
// not compiled into it: Expression::compile parses the text with the ST parser and runs the compiler's own semantic
// pass (vm/sema) on it, in the scope of the frame's POU over the program's symbol table (the frame's variables, then
// the instance's, then globals, program instances and enumeration values), so that names resolve, operands type,
// literals take their types, conversions apply and constants fold exactly as in the program's code. It then lowers
// the typed IR to a small tree of typed operations (compile.cpp, where the compiler emits opcodes). evaluate() walks
// that tree over a read-only view of memory: it never writes memory, never reads outside [0, memorySize), and
// allocates nothing for a scalar result when `out` is reused.
//
// Supported: literals of every elementary type, variables (locals, VAR_TEMP, instance variables,
// in-outs, globals and VAR_EXTERNAL, located variables, `Main.x` program instance paths, THIS),
// members, array indexes (multi-dimensional, any lower bound; bounds checked), bit access `w.3`,
// REF()/ADR() and `r^`, enumeration values (`Red`, `Color#Red`), every declared type by name
// (`TO_Speed(x)`, `Mode#Run`, used by a variable or not), CONSTANTs (folded, the frame's too, as
// the compiler folds them), every operator, and the pure standard functions the compiler knows
// (conversions, TRUNC, numeric, MIN/MAX/LIMIT/SEL/MUX/MOVE, shifts and rotates, string and time
// functions). Calls to user functions, function blocks and
// methods are rejected: they would change the program's state.
//
// Where the result can differ from the program's own code:
// - An expression is typed without a context type, as a condition is. An assignment gives its
//   right side the target's type, which changes how untyped literals inside some standard
//   functions type (`x := SIN(SHR(ABS(16#FF), 1))` with an LREAL x types ABS as LREAL).
// - When one expression holds several faults, the one reported is the VM's except in rare orders
//   of evaluation (an index through a NULL reference whose index also faults).
// - REF() of a computed value (not a variable) is rejected; references are checked against NULL
//   and the end of memory only (a REF to a returned call's VAR_TEMP reads what the stack holds,
//   as in the VM).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback::debug {

// Where an expression is evaluated: a VM frame (vm/exec/vm.h Frame gives all three fields), or
// the global scope (pou = UINT32_MAX: globals, program instances and enumeration values only).
struct EvalContext {
  uint32_t pou = UINT32_MAX;
  uint32_t thisOffset = 0;   // the instance (FB, program, a method's FB)
  uint32_t frameOffset = 0;  // the call frame (function and method variables, VAR_TEMP)
  int64_t cycleTime = 0;     // the virtual start time of the cycle (TIME(), LTIME()): Vm::cycleTime()
};

struct EvalResult {
  // The value's type: the program's (valid while it lives), or for a STRING[n] or REF_TO the
  // program has not got, one the evaluator keeps for the whole process.
  const Type* type = nullptr;
  // The value, type->size bytes as in the image (little-endian). A single bit: one byte 0/1.
  // A computed STRING: the length, the bytes and zero padding up to type->size.
  std::vector<uint8_t> bytes;
  // Set when the expression designates storage (a variable, field, element, dereference, bit):
  // its memory offset (image or stack).
  std::optional<uint32_t> offset;
  int8_t bit = -1;        // with offset: a single bit of the byte at `offset`
  bool readOnly = false;  // with offset: a CONSTANT (or part of one); must not be written
};

// Compiled once (breakpoint conditions, watches), evaluated many times. Immutable after
// compile(); evaluate() may run concurrently on several threads.
class Expression {
 public:
  // `pou`: the POU whose frame the expression will be evaluated in (Frame::pou), or UINT32_MAX for
  // the global scope. Returns null and sets `error` to "column N: message" (N is the 1-based
  // column within `text`) when the text does not parse, names something unknown, does not type,
  // or calls a user POU.
  [[nodiscard]] static std::unique_ptr<Expression> compile(const Program& program, uint32_t pou, std::string_view text,
                                                           std::string& error);
  ~Expression();
  Expression(const Expression&) = delete;
  Expression& operator=(const Expression&) = delete;

  const Type* type() const;
  // The expression is BOOL (a breakpoint condition must be).
  bool isBoolean() const;
  // The expression designates storage (evaluate() sets EvalResult::offset).
  bool isStorage() const;
  const std::string& text() const;

  // Evaluates over `memory` (Vm::memory(), Vm::memorySize()) in `context` (a frame of the POU the
  // expression was compiled for, or any context for a global-scope expression). Returns false
  // with `error` set ("column N: division by zero", "column N: array index out of range: index
  // 11 outside 1..10", "column N: null reference", ...) when the VM would fault, or when a
  // reference or the context points outside memory. Never writes memory.
  [[nodiscard]] bool evaluate(const uint8_t* memory, uint32_t memorySize, const EvalContext& context, EvalResult& out,
                              std::string& error) const;

  struct Impl;

 private:
  explicit Expression(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The bytes that write `text` (a literal: TRUE, 42, 16#FF, -3.5, T#2s, D#2024-01-15, an
// enumeration name, 'text'; validated against the target's type by encodeValue in
// vm/runtime/values.h) to the storage `target` designates (a result of Expression::evaluate with
// `offset` set). The caller builds the ExternalWrite {*target.offset, target.bit, bytes}. Fails
// with `error` when the target is not storage, is a constant, lives outside the image (a call
// frame's variable: external writes apply to the image at a cycle start), or when the text is not
// a valid value of its type.
[[nodiscard]] bool encodeAssignment(const Program& program, const EvalResult& target, std::string_view text,
                                    std::vector<uint8_t>& bytes, std::string& error);

}  // namespace scanback::debug
