#include "vm/exec/vm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "vm/base/int128.h"
#include "vm/base/out_of_memory.h"
#include "vm/bytecode/assertions.h"
#include "vm/exec/arith.h"
#include "vm/exec/iec_text.h"
#include "vm/exec/natives.h"
#include "vm/exec/strings.h"

namespace scanback {

namespace {

using namespace arith;

template <class T>
inline T ld(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void st(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T>
inline bool forPassed(T value, T step, T limit) {
  if constexpr (std::is_signed_v<T>)
    return step >= 0 ? value > limit : value < limit;
  else
    return value > limit;
}
// Adds step to the control variable (wrapping at its width) and reports whether the loop goes on;
// computed without overflow so that a loop up to the type's maximum ends.
// Types up to 32 bits add in 64 bits, which cannot overflow (and is several instructions fewer
// than 128-bit arithmetic in the sieve's inner loop).
template <class T>
inline bool forStep(T& value, T step, T limit) {
  using Sum = std::conditional_t<(sizeof(T) < 8), int64_t, Int128>;
  const Sum next = static_cast<Sum>(value) + static_cast<Sum>(step);
  value = static_cast<T>(static_cast<Wide<T>>(static_cast<uint64_t>(next)));
  if constexpr (std::is_signed_v<T>)
    return step >= 0 ? next <= limit : next >= limit;
  else
    return next <= limit;
}

// The body of a FOR that a back edge FORINCE/FORNEXTE runs ahead (issue 17): its first instruction,
// a fused statement boundary with one element store at the control variable, or a jump on such a
// BOOL element when FALSE to the back edge (IF flags[i] THEN ... END_IF: the iterations it skips).
// Runs the iterations at first, first + step, ... (none past last, at most `most`) that the
// ordinary code would run without a fault and without reading anything the run changes, and
// returns how many it ran; 0 leaves every one to the ordinary code. `guards` are the control
// variable, the limit and the step: a store that could change one of them is not run ahead.
[[gnu::noinline]] uint64_t runLoopAhead(const uintptr_t* B, const uint32_t* body, int64_t first, int64_t step,
                                        int64_t last, uint64_t most, const uint8_t* const (&guards)[3],
                                        const uint32_t (&guardSizes)[3]) {
  auto adr = [B](uint32_t o) { return reinterpret_cast<uint8_t*>(B[o >> 30] + o); };
  const Op op = unfused(static_cast<Op>(body[0]));
  const bool isJump = op == Op::JFE_X16 || op == Op::JFE_X32;
  // Operands after the statement id: the array, the index, [k,] lower bound, count.
  const uint32_t* ops = body + 2;
  if (isJump && ops[2] != 0) return 0;  // only the control variable itself as the index
  const int64_t lower = static_cast<int32_t>(ops[isJump ? 3 : 2]);
  const uint32_t count = ops[isJump ? 4 : 3];
  const int64_t upper = lower + count - 1;
  uint64_t n = most;
  if (step > 0) {
    n = std::min<uint64_t>(n, static_cast<uint64_t>((last - first) / step) + 1);
    if (first < lower) return 0;
    n = first > upper ? 0 : std::min<uint64_t>(n, static_cast<uint64_t>((upper - first) / step) + 1);
  } else if (step < 0) {
    n = std::min<uint64_t>(n, static_cast<uint64_t>((first - last) / -step) + 1);
    if (first > upper) return 0;
    n = first < lower ? 0 : std::min<uint64_t>(n, static_cast<uint64_t>((first - lower) / -step) + 1);
  } else if (first < lower || first > upper) {
    return 0;
  }
  if (n == 0) return 0;
  uint8_t* const elements = adr(ops[0]);  // the element at index is at elements + (index - lower) * size
  if (isJump) {
    // Skips the iterations whose element is FALSE: the jump to the back edge is taken.
    uint64_t k = 0;
    for (int64_t index = first - lower; k < n && elements[index] == 0; ++k) index += step;
    return k;
  }
  uint32_t size = 1;
  switch (op) {
    case Op::EST2:
    case Op::EST2_X16: size = 2; break;
    case Op::EST4:
    case Op::EST4_X16: size = 4; break;
    case Op::EST8:
    case Op::EST8_X16: size = 8; break;
    default: break;
  }
  const uint8_t* const arrayEnd = elements + uint64_t{count} * size;
  for (int g = 0; g < 3; ++g)
    if (guards[g] && guards[g] < arrayEnd && guards[g] + guardSizes[g] > elements) return 0;
  // The source is read for every element: it may be an element of the array itself.
  const uint8_t* const source = adr(ops[4]);
  // a[i] := i: the value changes with every iteration, which the ordinary code does.
  if (source < guards[0] + guardSizes[0] && source + size > guards[0]) return 0;
  uint8_t* at = elements + (first - lower) * static_cast<int64_t>(size);
  const int64_t stride = step * static_cast<int64_t>(size);
  const bool sourceInside = source < arrayEnd && source + size > elements;
  if (size == 1 && step == 1 && !sourceInside) {
    std::memset(at, *source, n);
    return n;
  }
  switch (size) {
    case 1:
      for (uint64_t k = 0; k < n; ++k, at += stride) std::memcpy(at, source, 1);
      break;
    case 2:
      for (uint64_t k = 0; k < n; ++k, at += stride) std::memcpy(at, source, 2);
      break;
    case 4:
      for (uint64_t k = 0; k < n; ++k, at += stride) std::memcpy(at, source, 4);
      break;
    default:
      for (uint64_t k = 0; k < n; ++k, at += stride) std::memcpy(at, source, 8);
      break;
  }
  return n;
}

struct BackEdge {
  const uint32_t* next;  // the back edge again (iterations ran), the body, or past the loop
  uint64_t iterations;   // statement boundaries passed (one per iteration run ahead)
};

// FORINCE/FORNEXTE at ip: steps the control variable as FORINC/FORNEXT would; while the loop goes
// on, runs the next iterations ahead (at most `room`, the boundaries left before the slow path)
// and appends their statement id at `log` (null: no statement log). Out of line and shared by the
// four opcodes, so that it adds almost nothing to run() (see jump_elements).
template <class T>
[[gnu::noinline]] BackEdge stepBackEdge(const uint32_t* ip, const uint32_t* code, const uintptr_t* B, uint64_t room,
                                        uint32_t* log) {
  auto adr = [B](uint32_t o) { return reinterpret_cast<uint8_t*>(B[o >> 30] + o); };
  const bool stepped =
      unfused(static_cast<Op>(ip[0])) == Op::FORNEXTE_I16 || unfused(static_cast<Op>(ip[0])) == Op::FORNEXTE_I32;
  // FORINCE: var, limit, body; FORNEXTE: var, step, limit, body.
  const uint32_t limitOperand = stepped ? ip[3] : ip[2];
  const uint32_t* const body = code + (stepped ? ip[4] : ip[3]);
  uint8_t* const var = adr(ip[1]);
  const T step = stepped ? ld<T>(adr(ip[2])) : T{1};
  const T limit = ld<T>(adr(limitOperand));
  T v = ld<T>(var);
  const bool again = forStep<T>(v, step, limit);
  st<T>(var, v);
  if (!again) return {ip + (stepped ? 5 : 4), 0};
  const uint8_t* const guards[3] = {var, adr(limitOperand), stepped ? adr(ip[2]) : nullptr};
  static constexpr uint32_t guardSizes[3] = {sizeof(T), sizeof(T), sizeof(T)};
  const uint64_t n = runLoopAhead(B, body, v, step, limit, room, guards, guardSizes);
  if (n == 0) return {body, 0};
  if (log) std::fill_n(log, n, body[1]);
  // At the last iteration run: the back edge goes on from there.
  st<T>(var, static_cast<T>(v + static_cast<int64_t>(n - 1) * step));
  return {ip, n};
}

}  // namespace

std::string_view faultText(FaultCode code) {
  switch (code) {
    case FaultCode::None: return "no fault";
    case FaultCode::DivisionByZero: return "division by zero";
    case FaultCode::IndexOutOfRange: return "array index out of range";
    case FaultCode::NullReference: return "null reference";
    case FaultCode::BadReference: return "reference outside the image";
    case FaultCode::Subrange: return "subrange violation";
    case FaultCode::Watchdog: return "watchdog: statement budget of the cycle exceeded";
    case FaultCode::StackOverflow: return "stack overflow";
    case FaultCode::Unreachable: return "unreachable code";
    case FaultCode::AssertionFailed: return "assertion failed";
    case FaultCode::BadTimeAdvance: return "ADVANCE_TIME out of range";
    case FaultCode::OutsideVariable: return "pointer outside its variable";
  }
  return "unknown fault";
}

Vm::Vm(std::shared_ptr<const Program> program) : program_(std::move(program)) {
  imageSize_ = program_->imageSize();
  const uint64_t bytes = uint64_t{imageSize_} + program_->stackSize + kEndZeros;
  allocating([&] { memory_.assign(bytes, 0); }, bytes,
             [&] {
               return fmt::format("allocating the VM's memory (an image of {} bytes and a stack of {})", imageSize_,
                                  program_->stackSize);
             });
  scratch_.resize(kStringScratchBytes);
  reset();
}

void Vm::reset() {
  std::memcpy(memory_.data(), program_->initialImage.data(), imageSize_);
  std::fill(memory_.begin() + imageSize_, memory_.end(), 0);
  stackHigh_ = imageSize_;
  depth_ = 0;
  pc_ = 0;
  steps_ = 0;
  inCycle_ = false;
  pausedStatement_ = UINT32_MAX;
  resumeOp_ = Op::Count;
  fault_ = FaultInfo{};
}

void Vm::beginCycle(uint32_t task, int64_t startNs) {
  const TaskInfo& t = program_->tasks.at(task);
  // The stack starts every cycle zeroed, so that whatever a frame's unwritten bytes hold (and a
  // whole-buffer copy may carry into the image, e.g. a string's bytes past its length) depends
  // only on the cycle itself: a replay that starts from a checkpoint of the image alone computes
  // the same image (docs/architecture.md: determinism).
  std::memset(memory_.data() + imageSize_, 0, stackHigh_ - imageSize_);
  stackHigh_ = imageSize_;
  task_ = task;
  now_ = startNs;
  steps_ = 0;
  pausedStatement_ = UINT32_MAX;
  resumeOp_ = Op::Count;
  depth_ = 1;
  stack_[0] = Frame{UINT32_MAX, 0, 0, imageSize_, 0};
  pc_ = t.entryPc;
  inCycle_ = true;
}

RunStatus Vm::raise(FaultCode code, uint32_t pc, std::string detail) {
  pc_ = pc;
  fault_.code = code;
  fault_.pc = pc;
  fault_.statement = program_->statementAt(pc);
  fault_.detail = std::move(detail);
  pausedStatement_ = UINT32_MAX;
  return RunStatus::Faulted;
}

[[gnu::cold]] [[gnu::noinline]] RunStatus Vm::indexFault(uint32_t pc, int64_t index, int32_t lower, uint32_t count) {
  return raise(FaultCode::IndexOutOfRange, pc,
               fmt::format("index {} outside {}..{}", index, lower, static_cast<int64_t>(lower) + count - 1));
}

std::vector<Frame> Vm::frames() const {
  if (depth_ <= 1) return {};
  return std::vector<Frame>(stack_.begin() + 1, stack_.begin() + depth_);
}

uint32_t Vm::frameStatement(const std::vector<Frame>& frames, size_t index) const {
  if (index + 1 < frames.size()) return program_->statementAt(frames[index + 1].callPc);
  if (faulted()) return fault_.statement;
  if (pausedStatement_ != UINT32_MAX) return pausedStatement_;
  return program_->statementAt(pc_);
}

// The dispatch loop is macro-heavy and laid out by hand. It is threaded code: a table of label
// addresses and computed gotos (a GNU extension that GCC and clang share), which -Wpedantic
// would report at every handler.
// clang-format off
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
RunStatus Vm::run() {
  if (faulted()) return RunStatus::Faulted;
  if (!inCycle_) return RunStatus::CycleDone;

  const Program& prog = *program_;
  const uint32_t* const code = prog.code.data();
  uint8_t* const mem = memory_.data();
  const uint64_t memSize = memorySize();
  // The operand bases, each less its selector bits (k << 30): an operand's address is then
  // B[o >> 30] + o, with no masking of the offset (unsigned arithmetic, so the bias wraps).
  auto biased = [](uint32_t k, const uint8_t* p) { return reinterpret_cast<uintptr_t>(p) - (uintptr_t{k} << 30); };
  uintptr_t B[4] = {biased(0, mem), biased(1, mem + stack_[depth_ - 1].thisOffset),
                    biased(2, mem + stack_[depth_ - 1].frameOffset), biased(3, prog.constants.data())};
  // The instruction pointer: operands are ip[1], ip[2], ... (an index into code would cost an
  // addition per operand).
  const uint32_t* ip = code + pc_;
  uint64_t steps = steps_;
  // One comparison per statement covers both the watchdog and the observer.
  const uint64_t budget = budget_;
  uint64_t ticks = 0;  // empty-loop iterations in this run() call
  pausedStatement_ = UINT32_MAX;
  char* const scratch = scratch_.data();
  // The statement log: the fast path tests only whether there is one (a register); the boundary
  // that would pass the log's end takes the slow path, like the watchdog, which stops logging.
  uint32_t* logPos = logPos_;
  bool logging = logPos_ != nullptr;
  uint32_t* const logEnd = logEnd_;
  auto slowLimit = [&] {
    const uint64_t at = observer_ ? 0 : budget;
    return logging ? std::min<uint64_t>(at, steps + static_cast<uint64_t>(logEnd - logPos)) : at;
  };
  uint64_t slowAt = slowLimit();

  // Two tables that differ in the statement boundaries only: while there is a statement log, they
  // append to it (LL_ handlers); without one, a boundary is one comparison and no test of the log.
  static void* const plainLabels[] = {
#define SB_LABEL(name, sig, meaning) &&L_##name,
#define SB_FUSED_LABEL(name, sig, meaning) &&L_S_##name,
      SB_OPCODES(SB_LABEL) SB_OPCODES(SB_FUSED_LABEL)
#undef SB_FUSED_LABEL
  };
  static void* const loggingLabels[] = {
#define SB_LOGGING_LABEL(name, sig, meaning) (Op::name == Op::STMT ? &&LL_STMT : &&L_##name),
#define SB_FUSED_LABEL(name, sig, meaning) &&LL_S_##name,
      SB_OPCODES(SB_LOGGING_LABEL) SB_OPCODES(SB_FUSED_LABEL)
#undef SB_LOGGING_LABEL
#undef SB_LABEL
#undef SB_FUSED_LABEL
  };
  void* const* labels = logging ? loggingLabels : plainLabels;
  Op slowOp = Op::STMT;  // which boundary took the slow path: STMT, or the op fused with it
  uint32_t elementCompare = 0;  // which of the JxxE families jump_elements runs

#define OPND(i) ip[1 + (i)]
#define PC() static_cast<uint32_t>(ip - code)
#define ADR(o) reinterpret_cast<uint8_t*>(B[(o) >> 30] + (o))
#define RD(T, i) ld<T>(ADR(OPND(i)))
#define WR(T, i, v) st<T>(ADR(OPND(i)), (v))
#define DISPATCH() goto* labels[*ip]
#define NEXT(n) \
  do {          \
    ip += (n);  \
    DISPATCH(); \
  } while (0)
#define SAVE_LOG()                 \
  do {                             \
    if (logging) logPos_ = logPos; \
  } while (0)
#define FAULT(code_, detail_)                          \
  do {                                                 \
    steps_ = steps;                                    \
    SAVE_LOG();                                        \
    return raise(FaultCode::code_, PC(), (detail_));     \
  } while (0)
#define REF_CHECK(addr, size)                                                                     \
  do {                                                                                            \
    if ((addr) == 0) FAULT(NullReference, "");                                                    \
    if (static_cast<uint64_t>(addr) + (size) > memSize)                                           \
      FAULT(BadReference, fmt::format("reference {} + {} bytes is past the end ({})", (addr), (size), memSize)); \
  } while (0)
#define REF_CHECK_ZERO_OK(addr, size)                                                             \
  do {                                                                                            \
    if (static_cast<uint64_t>(addr) + (size) > memSize)                                           \
      FAULT(BadReference, fmt::format("reference {} + {} bytes is past the end ({})", (addr), (size), memSize)); \
  } while (0)

  if (resumeOp_ != Op::Count) {
    // Paused at a fused statement boundary: continue with the fused op's own work.
    const Op op = resumeOp_;
    resumeOp_ = Op::Count;
    goto* labels[static_cast<uint32_t>(op)];
  }
  DISPATCH();

L_NOP:
  NEXT(1);

  // The slow path's: a full log stops logging and reports the overflow.
#define LOG_STATEMENT_CHECKED()  \
  do {                           \
    if (!logging) break;         \
    if (logPos != logEnd) {      \
      *logPos++ = OPND(0);       \
    } else {                     \
      logOverflow_ = true;       \
      logPos_ = logPos;          \
      logging = false;           \
      labels = plainLabels;      \
    }                            \
  } while (0)
L_STMT:
  if (__builtin_expect(++steps > slowAt, 0)) {
    slowOp = Op::STMT;
    goto statement_slow;
  }
  NEXT(2);
LL_STMT:
  if (__builtin_expect(++steps > slowAt, 0)) {
    slowOp = Op::STMT;
    goto statement_slow;
  }
  *logPos++ = OPND(0);
  NEXT(2);

#define SB_FUSED_HANDLER(name, sig, meaning)       \
  L_S_##name : if (__builtin_expect(++steps > slowAt, 0)) { \
    slowOp = Op::name;                             \
    goto statement_slow;                           \
  }                                                \
  ++ip;                                            \
  goto L_##name;                                   \
  LL_S_##name : if (__builtin_expect(++steps > slowAt, 0)) { \
    slowOp = Op::name;                             \
    goto statement_slow;                           \
  }                                                \
  *logPos++ = OPND(0);                             \
  ++ip;                                            \
  goto L_##name;
  SB_OPCODES(SB_FUSED_HANDLER)
#undef SB_FUSED_HANDLER

  // The watchdog and the observer: rare (budget exhausted) or debugging (observer installed).
statement_slow : {
  if (steps > budget) {
    --steps;  // the statement did not run
    FAULT(Watchdog, fmt::format("more than {} statements in one cycle", budget));
  }
  if (observer_) {
    const uint32_t id = OPND(0);
    pc_ = PC();
    steps_ = steps;
    SAVE_LOG();
    pausedStatement_ = id;
    if (observer_->onStatement(id, steps - 1)) {
      LOG_STATEMENT_CHECKED();  // it runs when resumed, without passing this boundary again
      SAVE_LOG();
      if (slowOp == Op::STMT) {
        pc_ = PC() + 2;
      } else {
        pc_ = PC() + 1;
        resumeOp_ = slowOp;
      }
      return RunStatus::Paused;
    }
    pausedStatement_ = UINT32_MAX;
  }
  LOG_STATEMENT_CHECKED();
  slowAt = slowLimit();  // the observer may have removed itself; the log may have filled up
  if (slowOp == Op::STMT) NEXT(2);
  ++ip;
  goto* labels[static_cast<uint32_t>(slowOp)];
}

L_TICK:
  // Empty loop bodies pass no statement boundary; they share the statement budget instead.
  if (__builtin_expect(++ticks > budget, 0)) FAULT(Watchdog, fmt::format("a loop with an empty body ran more than {} times in one cycle", budget));
  NEXT(1);

L_HALT:
  pc_ = PC();
  steps_ = steps;
  SAVE_LOG();
  depth_ = 0;
  inCycle_ = false;
  return RunStatus::CycleDone;

L_JMP:
  ip = code + OPND(0);
  DISPATCH();
L_JT:
  ip = RD(uint8_t, 0) ? code + OPND(1) : ip + 3;
  DISPATCH();
L_JF:
  ip = RD(uint8_t, 0) ? ip + 3 : code + OPND(1);
  DISPATCH();
L_JTAB : {
  const int64_t i = static_cast<int64_t>(RD(int32_t, 0)) - static_cast<int32_t>(OPND(1));
  const uint32_t n = OPND(2);
  ip = code + ((i >= 0 && i < n) ? ip[5 + i] : OPND(3));
  DISPATCH();
}

#define SB_DO_CALL(newThis, width) SB_DO_CALL_TO(OPND(0), newThis, width)
#define SB_DO_CALL_TO(pouIndex, newThis, width)                                                 \
  {                                                                                             \
    const PouInfo& callee = prog.pous[pouIndex];                                                \
    const uint64_t newFp = stack_[depth_ - 1].frameOffset + uint64_t{OPND(1)};                  \
    if (depth_ >= kMaxCallDepth || newFp + callee.reach > memSize)                             \
      FAULT(StackOverflow, fmt::format("calling {} at depth {}", callee.name, depth_));         \
    stack_[depth_] = Frame{(pouIndex), PC() + (width), (newThis), static_cast<uint32_t>(newFp), PC()}; \
    ++depth_;                                                                                   \
    if (newFp + callee.reach > stackHigh_) stackHigh_ = newFp + callee.reach;                  \
    B[1] = biased(1, mem + stack_[depth_ - 1].thisOffset);                                      \
    B[2] = biased(2, mem + newFp);                                                              \
    ip = code + callee.entryPc;                                                                  \
    if (observer_) {                                                                            \
      pc_ = PC();                                                                               \
      observer_->onCall(stack_[depth_ - 1].pou);                                                \
    }                                                                                           \
    DISPATCH();                                                                                 \
  }

L_CALLF:
  SB_DO_CALL(stack_[depth_ - 1].thisOffset, 3)
L_CALLI:
  SB_DO_CALL(static_cast<uint32_t>(ADR(OPND(2)) - mem), 4)
L_CALLP : {
  const uint32_t ref = RD(uint32_t, 2);
  REF_CHECK(ref, 1);
  SB_DO_CALL(ref, 4)
}
L_RET : {
  if (observer_) {
    pc_ = PC();
    observer_->onReturn(stack_[depth_ - 1].pou);
  }
  ip = code + stack_[depth_ - 1].returnPc;
  --depth_;
  B[1] = biased(1, mem + stack_[depth_ - 1].thisOffset);
  B[2] = biased(2, mem + stack_[depth_ - 1].frameOffset);
  DISPATCH();
}
L_NATFB:
  nativeBodies()[OPND(0)].run(ADR(OPND(1)), now_);
  NEXT(3);
L_NATFBP : {
  const uint32_t ref = RD(uint32_t, 1);
  REF_CHECK(ref, nativeBlocks()[OPND(0)].size);
  nativeBodies()[OPND(0)].run(mem + ref, now_);
  NEXT(3);
}

L_MOV1:
  std::memcpy(ADR(OPND(0)), ADR(OPND(1)), 1);
  NEXT(3);
L_MOV2:
  std::memcpy(ADR(OPND(0)), ADR(OPND(1)), 2);
  NEXT(3);
L_MOV4:
  std::memcpy(ADR(OPND(0)), ADR(OPND(1)), 4);
  NEXT(3);
L_MOV8:
  std::memcpy(ADR(OPND(0)), ADR(OPND(1)), 8);
  NEXT(3);
L_MOVN:
  std::memmove(ADR(OPND(0)), ADR(OPND(1)), OPND(2));
  NEXT(4);
L_ADDR:
  WR(uint32_t, 0, static_cast<uint32_t>(ADR(OPND(1)) - mem));
  NEXT(3);
#define SB_INDEX_FAULT_AT(index, loOperand, countOperand)                                          \
  do {                                                                                             \
    steps_ = steps;                                                                                \
    SAVE_LOG();                                                                                    \
    return indexFault(PC(), (index), static_cast<int32_t>(OPND(loOperand)), OPND(countOperand));     \
  } while (0)
#define SB_INDEX_FAULT(idxOperand, loOperand, countOperand) \
  SB_INDEX_FAULT_AT(RD(int32_t, idxOperand), loOperand, countOperand)
L_ELEM : {
  const int64_t i = static_cast<int64_t>(RD(int32_t, 2)) - static_cast<int32_t>(OPND(3));
  if (static_cast<uint64_t>(i) >= OPND(4)) SB_INDEX_FAULT(2, 3, 4);
  WR(uint32_t, 0, static_cast<uint32_t>(ADR(OPND(1)) - mem + static_cast<uint64_t>(i) * OPND(5)));
  NEXT(7);
}
L_ELEMP : {
  const uint32_t ref = RD(uint32_t, 1);
  if (ref == 0) FAULT(NullReference, "");
  const int64_t i = static_cast<int64_t>(RD(int32_t, 3)) - static_cast<int32_t>(OPND(4));
  if (static_cast<uint64_t>(i) >= OPND(5)) SB_INDEX_FAULT(3, 4, 5);
  WR(uint32_t, 0, static_cast<uint32_t>(ref + OPND(2) + static_cast<uint64_t>(i) * OPND(6)));
  NEXT(8);
}
L_IDX64 : {
  const int64_t v = RD(int64_t, 1);
  WR(int32_t, 0, static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));
  NEXT(3);
}

#define SB_LD(N)                                            \
  L_LD##N : {                                               \
    const uint64_t a = uint64_t{RD(uint32_t, 1)} + OPND(2); \
    if (RD(uint32_t, 1) == 0) FAULT(NullReference, "");     \
    REF_CHECK_ZERO_OK(a, N);                                \
    std::memcpy(ADR(OPND(0)), mem + a, N);                  \
    NEXT(4);                                                \
  }
#define SB_ST(N)                                            \
  L_ST##N : {                                               \
    const uint64_t a = uint64_t{RD(uint32_t, 0)} + OPND(1); \
    if (RD(uint32_t, 0) == 0) FAULT(NullReference, "");     \
    REF_CHECK_ZERO_OK(a, N);                                \
    std::memcpy(mem + a, ADR(OPND(2)), N);                  \
    NEXT(4);                                                \
  }
  SB_LD(1) SB_LD(2) SB_LD(4) SB_LD(8) SB_ST(1) SB_ST(2) SB_ST(4) SB_ST(8)

L_LDN : {
  const uint64_t a = uint64_t{RD(uint32_t, 1)} + OPND(2);
  if (RD(uint32_t, 1) == 0) FAULT(NullReference, "");
  REF_CHECK_ZERO_OK(a, OPND(3));
  std::memmove(ADR(OPND(0)), mem + a, OPND(3));
  NEXT(5);
}
L_STN : {
  const uint64_t a = uint64_t{RD(uint32_t, 0)} + OPND(1);
  if (RD(uint32_t, 0) == 0) FAULT(NullReference, "");
  REF_CHECK_ZERO_OK(a, OPND(3));
  std::memmove(mem + a, ADR(OPND(2)), OPND(3));
  NEXT(5);
}
// Pointer dereferences (docs/language.md, "Pointers"): the area search is in vm/exec/pointers.cpp.
L_PCHK : {
  // NULL is left to the load or store that reads through it, where the evaluator faults too.
  // The bytes read or written are those at ref + offset (a field's, an element's: `p^.x`).
  const uint32_t ref = RD(uint32_t, 0);
  if (ref != 0) {
    const uint64_t at = uint64_t{ref} + OPND(1);
    REF_CHECK_ZERO_OK(at, OPND(2));
    if (!insideVariable(at, OPND(2), OPND(3) != 0)) FAULT(OutsideVariable, outsideVariableDetail(at, OPND(2)));
  }
  NEXT(5);
}
L_RBOUND : {
  // A REFERENCE TO that REF= has not bound (docs/language.md, "REFERENCE TO"): named in the fault.
  if (RD(uint32_t, 0) == 0)
    FAULT(NullReference, fmt::format("REFERENCE TO '{}' is not bound; REF= binds it",
                                     reinterpret_cast<const char*>(ADR(OPND(1)))));
  NEXT(3);
}
L_PVALID : {
  const uint32_t ref = RD(uint32_t, 1);
  WR(uint8_t, 0, static_cast<uint8_t>(ref != 0 && uint64_t{ref} + OPND(2) <= memSize && insideVariable(ref, OPND(2), OPND(3) != 0)));
  NEXT(5);
}

#define SB_ELD(N)                                                                        \
  L_ELD##N : {                                                                           \
    const int64_t i = static_cast<int64_t>(RD(int32_t, 2)) - static_cast<int32_t>(OPND(3)); \
    if (static_cast<uint64_t>(i) >= OPND(4)) SB_INDEX_FAULT(2, 3, 4);                    \
    std::memcpy(ADR(OPND(0)), ADR(OPND(1)) + i * N, N);                                  \
    NEXT(6);                                                                             \
  }
#define SB_EST(N)                                                                        \
  L_EST##N : {                                                                           \
    const int64_t i = static_cast<int64_t>(RD(int32_t, 1)) - static_cast<int32_t>(OPND(2)); \
    if (static_cast<uint64_t>(i) >= OPND(3)) SB_INDEX_FAULT(1, 2, 3);                    \
    std::memcpy(ADR(OPND(0)) + i * N, ADR(OPND(4)), N);                                  \
    NEXT(6);                                                                             \
  }
  SB_ELD(1) SB_ELD(2) SB_ELD(4) SB_ELD(8) SB_EST(1) SB_EST(2) SB_EST(4) SB_EST(8)

  // The same with an INT index, and with the index plus a constant, wrapped at the index's width
  // as the ST addition would (the compiler emits these instead of ADD + CVT + ELD).
#define SB_ELD_AT(NAME, N, IT, ADD, OPS)                                                         \
  L_##NAME : {                                                                                   \
    const IT index = static_cast<IT>(static_cast<uint32_t>(RD(IT, 2)) + ADD);                    \
    const int64_t i = static_cast<int64_t>(index) - static_cast<int32_t>(OPND(OPS - 2));         \
    if (static_cast<uint64_t>(i) >= OPND(OPS - 1)) SB_INDEX_FAULT_AT(index, OPS - 2, OPS - 1);   \
    std::memcpy(ADR(OPND(0)), ADR(OPND(1)) + i * N, N);                                          \
    NEXT(OPS + 1);                                                                               \
  }
#define SB_EST_AT(NAME, N, IT, ADD, OPS)                                                         \
  L_##NAME : {                                                                                   \
    const IT index = static_cast<IT>(static_cast<uint32_t>(RD(IT, 1)) + ADD);                    \
    const int64_t i = static_cast<int64_t>(index) - static_cast<int32_t>(OPND(OPS - 3));         \
    if (static_cast<uint64_t>(i) >= OPND(OPS - 2)) SB_INDEX_FAULT_AT(index, OPS - 3, OPS - 2);   \
    std::memcpy(ADR(OPND(0)) + i * N, ADR(OPND(OPS - 1)), N);                                    \
    NEXT(OPS + 1);                                                                               \
  }
#define SB_ELEM_AT(N)                                          \
  SB_ELD_AT(ELD##N##_X16, N, int16_t, 0u, 5)                   \
  SB_EST_AT(EST##N##_X16, N, int16_t, 0u, 5)                   \
  SB_ELD_AT(ELDK##N##_X16, N, int16_t, OPND(3), 6)             \
  SB_ELD_AT(ELDK##N##_X32, N, int32_t, OPND(3), 6)             \
  SB_EST_AT(ESTK##N##_X16, N, int16_t, OPND(2), 6)             \
  SB_EST_AT(ESTK##N##_X32, N, int32_t, OPND(2), 6)
  SB_ELEM_AT(1) SB_ELEM_AT(2) SB_ELEM_AT(4) SB_ELEM_AT(8)

  // IF flags[i] THEN: the element is the condition, no temporary.
#define SB_JUMP_ELEMENT(NAME, IT, WHEN)                                                       \
  L_##NAME : {                                                                                \
    const IT index = static_cast<IT>(static_cast<uint32_t>(RD(IT, 1)) + OPND(2));            \
    const int64_t i = static_cast<int64_t>(index) - static_cast<int32_t>(OPND(3));           \
    if (static_cast<uint64_t>(i) >= OPND(4)) SB_INDEX_FAULT_AT(index, 3, 4);                  \
    ip = (ADR(OPND(0))[i] != 0) == WHEN ? code + OPND(5) : ip + 7;                                   \
    DISPATCH();                                                                               \
  }
  SB_JUMP_ELEMENT(JTE_X16, int16_t, true)
  SB_JUMP_ELEMENT(JFE_X16, int16_t, false)
  SB_JUMP_ELEMENT(JTE_X32, int32_t, true)
  SB_JUMP_ELEMENT(JFE_X32, int32_t, false)

L_BNOT:
  WR(uint8_t, 0, static_cast<uint8_t>(RD(uint8_t, 1) ? 0 : 1));
  NEXT(3);

#define SB_BITS_IMPL(W, U)                                                                              \
  L_GETBIT_##W : WR(uint8_t, 0, static_cast<uint8_t>((RD(U, 1) >> OPND(2)) & 1u));                     \
  NEXT(4);                                                                                              \
  L_SETBIT_##W : {                                                                                      \
    const U mask = static_cast<U>(Wide<U>(1) << OPND(1));                                               \
    const U v = RD(U, 0);                                                                               \
    WR(U, 0, static_cast<U>(RD(uint8_t, 2) ? (v | mask) : (v & static_cast<U>(~mask))));                \
    NEXT(4);                                                                                            \
  }                                                                                                     \
  L_AND_##W : WR(U, 0, static_cast<U>(RD(U, 1) & RD(U, 2)));                                            \
  NEXT(4);                                                                                              \
  L_OR_##W : WR(U, 0, static_cast<U>(RD(U, 1) | RD(U, 2)));                                             \
  NEXT(4);                                                                                              \
  L_XOR_##W : WR(U, 0, static_cast<U>(RD(U, 1) ^ RD(U, 2)));                                            \
  NEXT(4);                                                                                              \
  L_NOT_##W : WR(U, 0, static_cast<U>(~RD(U, 1)));                                                      \
  NEXT(3);                                                                                              \
  L_SHL_##W : WR(U, 0, opShl<U>(RD(U, 1), RD(int64_t, 2)));                                             \
  NEXT(4);                                                                                              \
  L_SHR_##W : WR(U, 0, opShr<U>(RD(U, 1), RD(int64_t, 2)));                                             \
  NEXT(4);                                                                                              \
  L_ROL_##W : WR(U, 0, opRol<U>(RD(U, 1), RD(int64_t, 2)));                                             \
  NEXT(4);                                                                                              \
  L_ROR_##W : WR(U, 0, opRor<U>(RD(U, 1), RD(int64_t, 2)));                                             \
  NEXT(4);
  SB_BITS_IMPL(8, uint8_t)
  SB_BITS_IMPL(16, uint16_t)
  SB_BITS_IMPL(32, uint32_t)
  SB_BITS_IMPL(64, uint64_t)

#define SB_NUM_IMPL(S, T)                                                          \
  L_ADD_##S : WR(T, 0, opAdd<T>(RD(T, 1), RD(T, 2)));                              \
  NEXT(4);                                                                         \
  L_SUB_##S : WR(T, 0, opSub<T>(RD(T, 1), RD(T, 2)));                              \
  NEXT(4);                                                                         \
  L_MUL_##S : WR(T, 0, opMul<T>(RD(T, 1), RD(T, 2)));                              \
  NEXT(4);                                                                         \
  L_DIV_##S : {                                                                    \
    T r;                                                                           \
    if (!opDiv<T>(RD(T, 1), RD(T, 2), r)) FAULT(DivisionByZero, "");              \
    WR(T, 0, r);                                                                   \
    NEXT(4);                                                                       \
  }                                                                                \
  L_NEG_##S : WR(T, 0, opNeg<T>(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_ABS_##S : WR(T, 0, opAbs<T>(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_MIN_##S : WR(T, 0, std::min<T>(RD(T, 1), RD(T, 2)));                           \
  NEXT(4);                                                                         \
  L_MAX_##S : WR(T, 0, std::max<T>(RD(T, 1), RD(T, 2)));                           \
  NEXT(4);                                                                         \
  L_EQ_##S : WR(uint8_t, 0, static_cast<uint8_t>(RD(T, 1) == RD(T, 2)));           \
  NEXT(4);                                                                         \
  L_NE_##S : WR(uint8_t, 0, static_cast<uint8_t>(RD(T, 1) != RD(T, 2)));           \
  NEXT(4);                                                                         \
  L_LT_##S : WR(uint8_t, 0, static_cast<uint8_t>(RD(T, 1) < RD(T, 2)));            \
  NEXT(4);                                                                         \
  L_LE_##S : WR(uint8_t, 0, static_cast<uint8_t>(RD(T, 1) <= RD(T, 2)));           \
  NEXT(4);                                                                         \
  L_JEQ_##S : ip = (RD(T, 0) == RD(T, 1)) ? code + OPND(2) : ip + 4;                      \
  DISPATCH();                                                                      \
  L_JNE_##S : ip = (RD(T, 0) != RD(T, 1)) ? code + OPND(2) : ip + 4;                      \
  DISPATCH();                                                                      \
  L_JLT_##S : ip = (RD(T, 0) < RD(T, 1)) ? code + OPND(2) : ip + 4;                       \
  DISPATCH();                                                                      \
  L_JLE_##S : ip = (RD(T, 0) <= RD(T, 1)) ? code + OPND(2) : ip + 4;                      \
  DISPATCH();

// Two elements of one array compared (JLTE16_I32 ...): every member of the families only notes
// which it is and shares one handler (jump_elements), so that they add almost nothing to run()
// (a handler each grew every other handler's code by a sixth: register allocation over the whole
// function).
#define SB_JUMP_ELEMENTS(NAME)                                                                     \
  L_##NAME : elementCompare = static_cast<uint32_t>(Op::NAME) - static_cast<uint32_t>(Op::JEQE16_I8); \
  goto jump_elements;
#define SB_JUMP_ELEMENTS_ALL(S)                                                                    \
  SB_JUMP_ELEMENTS(JEQE16_##S) SB_JUMP_ELEMENTS(JNEE16_##S) SB_JUMP_ELEMENTS(JLTE16_##S)          \
  SB_JUMP_ELEMENTS(JLEE16_##S) SB_JUMP_ELEMENTS(JGTE16_##S) SB_JUMP_ELEMENTS(JGEE16_##S)          \
  SB_JUMP_ELEMENTS(JEQE32_##S) SB_JUMP_ELEMENTS(JNEE32_##S) SB_JUMP_ELEMENTS(JLTE32_##S)          \
  SB_JUMP_ELEMENTS(JLEE32_##S) SB_JUMP_ELEMENTS(JGTE32_##S) SB_JUMP_ELEMENTS(JGEE32_##S)

#define SB_INT_IMPL(S, T)                                                          \
  SB_NUM_IMPL(S, T)                                                                \
  SB_JUMP_ELEMENTS_ALL(S)                                                          \
  L_MOD_##S : {                                                                    \
    T r;                                                                           \
    if (!opMod<T>(RD(T, 1), RD(T, 2), r)) FAULT(DivisionByZero, "");              \
    WR(T, 0, r);                                                                   \
    NEXT(4);                                                                       \
  }                                                                                \
  L_FORCHK_##S : ip = forPassed<T>(RD(T, 0), RD(T, 1), RD(T, 2)) ? code + OPND(3) : ip + 5; \
  DISPATCH();                                                                      \
  L_FORNEXT_##S : {                                                                \
    T v = RD(T, 0);                                                                \
    const bool again = forStep<T>(v, RD(T, 1), RD(T, 2));                          \
    WR(T, 0, v);                                                                   \
    ip = again ? code + OPND(3) : ip + 5;                                                 \
    DISPATCH();                                                                    \
  }                                                                                \
  L_FORINC_##S : {                                                                 \
    const T v = RD(T, 0);                                                          \
    WR(T, 0, static_cast<T>(static_cast<Wide<T>>(v) + 1u));                        \
    ip = v < RD(T, 1) ? code + OPND(2) : ip + 4;                                          \
    DISPATCH();                                                                    \
  }                                                                                \
  L_CHK_##S : {                                                                    \
    const T v = RD(T, 0);                                                          \
    if (v < RD(T, 1) || v > RD(T, 2))                                              \
      FAULT(Subrange, fmt::format("value {} outside {}..{}", +v, +RD(T, 1), +RD(T, 2))); \
    NEXT(4);                                                                       \
  }

#define SB_FLT_IMPL(S, T)                                                          \
  SB_NUM_IMPL(S, T)                                                                \
  L_JNLT_##S : ip = !(RD(T, 0) < RD(T, 1)) ? code + OPND(2) : ip + 4;                     \
  DISPATCH();                                                                      \
  L_JNLE_##S : ip = !(RD(T, 0) <= RD(T, 1)) ? code + OPND(2) : ip + 4;                    \
  DISPATCH();                                                                      \
  L_TRUNC_##S : WR(int64_t, 0, truncateToI64<T>(RD(T, 1)));                        \
  NEXT(3);                                                                         \
  L_SQRT_##S : WR(T, 0, std::sqrt(RD(T, 1)));                                      \
  NEXT(3);                                                                         \
  L_LN_##S : WR(T, 0, std::log(RD(T, 1)));                                         \
  NEXT(3);                                                                         \
  L_LOG_##S : WR(T, 0, std::log10(RD(T, 1)));                                      \
  NEXT(3);                                                                         \
  L_EXP_##S : WR(T, 0, std::exp(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_SIN_##S : WR(T, 0, std::sin(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_COS_##S : WR(T, 0, std::cos(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_TAN_##S : WR(T, 0, std::tan(RD(T, 1)));                                        \
  NEXT(3);                                                                         \
  L_ASIN_##S : WR(T, 0, std::asin(RD(T, 1)));                                      \
  NEXT(3);                                                                         \
  L_ACOS_##S : WR(T, 0, std::acos(RD(T, 1)));                                      \
  NEXT(3);                                                                         \
  L_ATAN_##S : WR(T, 0, std::atan(RD(T, 1)));                                      \
  NEXT(3);                                                                         \
  L_EXPT_##S : WR(T, 0, std::pow(RD(T, 1), RD(T, 2)));                             \
  NEXT(4);                                                                         \
  L_ATAN2_##S : WR(T, 0, std::atan2(RD(T, 1), RD(T, 2)));                          \
  NEXT(4);

  SB_INT_IMPL(I8, int8_t)
  SB_INT_IMPL(I16, int16_t)
  SB_INT_IMPL(I32, int32_t)
  SB_INT_IMPL(I64, int64_t)
  SB_INT_IMPL(U8, uint8_t)
  SB_INT_IMPL(U16, uint16_t)
  SB_INT_IMPL(U32, uint32_t)
  SB_INT_IMPL(U64, uint64_t)
  SB_FLT_IMPL(F32, float)
  SB_FLT_IMPL(F64, double)

#define SB_CVT1(F, FT, S, T)                     \
  L_CVT_##F##_##S : WR(T, 0, (convert<T, FT>(RD(FT, 1)))); \
  NEXT(3);
#define SB_CVT_FROM(F, FT)                                                                              \
  SB_CVT1(F, FT, I8, int8_t) SB_CVT1(F, FT, I16, int16_t) SB_CVT1(F, FT, I32, int32_t)                  \
  SB_CVT1(F, FT, I64, int64_t) SB_CVT1(F, FT, U8, uint8_t) SB_CVT1(F, FT, U16, uint16_t)                \
  SB_CVT1(F, FT, U32, uint32_t) SB_CVT1(F, FT, U64, uint64_t) SB_CVT1(F, FT, F32, float)                \
  SB_CVT1(F, FT, F64, double)
  SB_CVT_FROM(I8, int8_t)
  SB_CVT_FROM(I16, int16_t)
  SB_CVT_FROM(I32, int32_t)
  SB_CVT_FROM(I64, int64_t)
  SB_CVT_FROM(U8, uint8_t)
  SB_CVT_FROM(U16, uint16_t)
  SB_CVT_FROM(U32, uint32_t)
  SB_CVT_FROM(U64, uint64_t)
  SB_CVT_FROM(F32, float)
  SB_CVT_FROM(F64, double)

  // ---- strings: operands point at the characters, 0-terminated (vm/exec/strings.h)
L_SMOV:
  stringAssign(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))));
  NEXT(4);
L_SCAT:
  stringConcat(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), stringView(ADR(OPND(3))), scratch);
  NEXT(5);
L_SLEN:
  WR(int16_t, 0, static_cast<int16_t>(stringView(ADR(OPND(1))).size()));
  NEXT(3);
L_SLEFT:
  stringLeft(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), RD(int64_t, 3), scratch);
  NEXT(5);
L_SRIGHT:
  stringRight(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), RD(int64_t, 3), scratch);
  NEXT(5);
L_SMID:
  stringMid(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), RD(int64_t, 3), RD(int64_t, 4), scratch);
  NEXT(6);
L_SINS:
  stringInsert(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), stringView(ADR(OPND(3))), RD(int64_t, 4), scratch);
  NEXT(6);
L_SDEL:
  stringDelete(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), RD(int64_t, 3), RD(int64_t, 4), scratch);
  NEXT(6);
L_SREPL:
  stringReplace(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), stringView(ADR(OPND(3))), RD(int64_t, 4),
                RD(int64_t, 5), scratch);
  NEXT(7);
L_SFIND:
  WR(int16_t, 0, static_cast<int16_t>(stringFind(stringView(ADR(OPND(1))), stringView(ADR(OPND(2))))));
  NEXT(4);
L_SEQ:
  WR(uint8_t, 0, static_cast<uint8_t>(stringView(ADR(OPND(1))) == stringView(ADR(OPND(2)))));
  NEXT(4);
L_SNE:
  WR(uint8_t, 0, static_cast<uint8_t>(stringView(ADR(OPND(1))) != stringView(ADR(OPND(2)))));
  NEXT(4);
L_SLT:
  WR(uint8_t, 0, static_cast<uint8_t>(stringView(ADR(OPND(1))) < stringView(ADR(OPND(2)))));
  NEXT(4);
L_SLE:
  WR(uint8_t, 0, static_cast<uint8_t>(stringView(ADR(OPND(1))) <= stringView(ADR(OPND(2)))));
  NEXT(4);

#define SB_SFROM(NAME, EXPR)                                   \
  L_SFROM_##NAME : {                                           \
    char buf[64];                                              \
    const size_t n = (EXPR);                                   \
    stringAssign(ADR(OPND(0)), OPND(1), std::string_view(buf, n)); \
    NEXT(4);                                                   \
  }
  SB_SFROM(I64, formatInteger(buf, RD(int64_t, 2)))
  SB_SFROM(U64, formatUnsigned(buf, RD(uint64_t, 2)))
  SB_SFROM(F32, copyText(buf, formatReal(RD(float, 2), true)))
  SB_SFROM(F64, copyText(buf, formatReal(RD(double, 2), false)))
  SB_SFROM(BOOL, copyText(buf, RD(uint8_t, 2) ? "TRUE" : "FALSE"))
  SB_SFROM(TIME, copyText(buf, formatDuration(RD(int64_t, 2), false)))
  SB_SFROM(LTIME, copyText(buf, formatDuration(RD(int64_t, 2), true)))
  SB_SFROM(DATE, copyText(buf, formatDate(RD(int64_t, 2))))
  SB_SFROM(TOD, copyText(buf, formatTimeOfDay(RD(int64_t, 2))))
  SB_SFROM(DT, copyText(buf, formatDateAndTime(RD(int64_t, 2))))

L_STO_I64:
  WR(int64_t, 0, parseStringInteger(stringView(ADR(OPND(1)))));
  NEXT(3);
L_STO_U64:
  WR(uint64_t, 0, static_cast<uint64_t>(parseStringInteger(stringView(ADR(OPND(1))))));
  NEXT(3);
L_STO_F64:
  WR(double, 0, parseStringReal(stringView(ADR(OPND(1)))));
  NEXT(3);
L_STO_BOOL:
  WR(uint8_t, 0, static_cast<uint8_t>(parseStringBool(stringView(ADR(OPND(1))))));
  NEXT(3);
L_NOW:
  WR(int64_t, 0, now_);
  NEXT(2);
jump_elements : {
  // elementCompare = family * 8 + storage type; families: =, <>, <, <=, >, >= with INT indexes,
  // then the same with DINT indexes.
  const uint32_t family = elementCompare / 8;
  const Prim prim = static_cast<Prim>(elementCompare % 8);
  int64_t first, second;
  if (family < 6) {
    first = static_cast<int16_t>(static_cast<uint32_t>(RD(int16_t, 1)) + OPND(2));
    second = static_cast<int16_t>(static_cast<uint32_t>(RD(int16_t, 1)) + OPND(3));
  } else {
    first = static_cast<int32_t>(static_cast<uint32_t>(RD(int32_t, 1)) + OPND(2));
    second = static_cast<int32_t>(static_cast<uint32_t>(RD(int32_t, 1)) + OPND(3));
  }
  const int64_t i = first - static_cast<int32_t>(OPND(4));
  if (static_cast<uint64_t>(i) >= OPND(5)) SB_INDEX_FAULT_AT(first, 4, 5);
  const int64_t k = second - static_cast<int32_t>(OPND(4));
  if (static_cast<uint64_t>(k) >= OPND(5)) SB_INDEX_FAULT_AT(second, 4, 5);
  const uint8_t* const elements = ADR(OPND(0));
  // Both widened to 64 bits with the element's signedness; compared as such.
  const uint32_t size = primSize(prim);
  const bool isSigned = primIsSigned(prim);
  auto widen = [&](int64_t index) -> uint64_t {
    const uint8_t* e = elements + index * size;
    switch (size) {
      case 1: return isSigned ? static_cast<uint64_t>(int64_t{ld<int8_t>(e)}) : ld<uint8_t>(e);
      case 2: return isSigned ? static_cast<uint64_t>(int64_t{ld<int16_t>(e)}) : ld<uint16_t>(e);
      case 4: return isSigned ? static_cast<uint64_t>(int64_t{ld<int32_t>(e)}) : ld<uint32_t>(e);
      default: return ld<uint64_t>(e);
    }
  };
  const uint64_t x = widen(i), y = widen(k);
  // Signed order as unsigned order: flip the sign bit.
  const uint64_t bias = isSigned ? uint64_t{1} << 63 : 0;
  const uint64_t a = x ^ bias, b = y ^ bias;
  bool holds;
  switch (family % 6) {
    case 0: holds = a == b; break;
    case 1: holds = a != b; break;
    case 2: holds = a < b; break;
    case 3: holds = a <= b; break;
    case 4: holds = a > b; break;
    default: holds = a >= b; break;
  }
  ip = holds ? code + OPND(6) : ip + 8;
  DISPATCH();
}

L_ADVTIME: {
  // Tests only: the timers called after it in this cycle see the time gone by.
  const int64_t by = RD(int64_t, 0);
  if (by < 0) FAULT(BadTimeAdvance, fmt::format("by {} ns: time only moves forward", by));
  if (by > std::numeric_limits<int64_t>::max() - now_) FAULT(BadTimeAdvance, "past the end of the virtual clock");
  now_ += by;
  NEXT(2);
}
L_ELEMPD: {
  // ARRAY[*]: the dimension's lower bound, count and stride come from the parameter's slot.
  const uint32_t ref = RD(uint32_t, 1);
  if (ref == 0) FAULT(NullReference, "");
  const uint8_t* dim = ADR(OPND(4));
  const int32_t lower = ld<int32_t>(dim);
  const uint32_t count = ld<uint32_t>(dim + 4);
  const int64_t i = static_cast<int64_t>(RD(int32_t, 3)) - lower;
  if (static_cast<uint64_t>(i) >= count)
    FAULT(IndexOutOfRange, fmt::format("index {} outside {}..{}", RD(int32_t, 3), lower, int64_t{lower} + count - 1));
  WR(uint32_t, 0, static_cast<uint32_t>(ref + OPND(2) + static_cast<uint64_t>(i) * ld<uint32_t>(dim + 8)));
  NEXT(6);
}
L_AFAIL: {
  // Only the texts the kind has are operands that exist.
  const AssertKind kind = assertKindOf(OPND(0));
  const int texts = kind == AssertKind::True || kind == AssertKind::False ? 0 : assertOperandCount(kind);
  std::string_view text[3];
  for (int i = 0; i < texts; ++i) text[i] = stringView(ADR(OPND(1 + i)));
  FAULT(AssertionFailed, assertionMessage(kind, assertQuoted(OPND(0)), text[0], text[1], text[2], assertQuote(OPND(0))));
}
L_FAULT:
  FAULT(Unreachable, fmt::format("code {}", OPND(0)));
// Dynamic dispatch (interfaces, overridden methods): the instance's dispatch id picks the method.
L_CALLV : {
  const uint32_t ref = RD(uint32_t, 2);
  REF_CHECK(ref, 4);
  const uint32_t classId = ld<uint32_t>(mem + ref);
  const uint64_t entry = uint64_t{classId} * prog.dispatchSlots + OPND(0);
  const uint32_t target = entry < prog.dispatch.size() ? prog.dispatch[entry] : UINT32_MAX;
  if (target == UINT32_MAX) FAULT(Unreachable, fmt::format("no method in slot {} for class {}", OPND(0), classId));
  SB_DO_CALL_TO(target, ref, 4)
}
// WSTRING: the STRING functions' templates at UTF-16 units (vm/exec/strings.h).
L_WSMOV:
  stringAssign(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))));
  NEXT(4);
L_WSCAT:
  stringConcat(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), wideStringView(ADR(OPND(3))), scratch);
  NEXT(5);
L_WSLEN:
  WR(int16_t, 0, static_cast<int16_t>(wideStringView(ADR(OPND(1))).size()));
  NEXT(3);
L_WSLEFT:
  stringLeft(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), RD(int64_t, 3), scratch);
  NEXT(5);
L_WSRIGHT:
  stringRight(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), RD(int64_t, 3), scratch);
  NEXT(5);
L_WSMID:
  stringMid(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), RD(int64_t, 3), RD(int64_t, 4), scratch);
  NEXT(6);
L_WSINS:
  stringInsert(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), wideStringView(ADR(OPND(3))), RD(int64_t, 4),
               scratch);
  NEXT(6);
L_WSDEL:
  stringDelete(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), RD(int64_t, 3), RD(int64_t, 4), scratch);
  NEXT(6);
L_WSREPL:
  stringReplace(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(2))), wideStringView(ADR(OPND(3))), RD(int64_t, 4),
                RD(int64_t, 5), scratch);
  NEXT(7);
L_WSFIND:
  WR(int16_t, 0, static_cast<int16_t>(stringFind(wideStringView(ADR(OPND(1))), wideStringView(ADR(OPND(2))))));
  NEXT(4);
L_WSEQ:
  WR(uint8_t, 0, static_cast<uint8_t>(wideStringView(ADR(OPND(1))) == wideStringView(ADR(OPND(2)))));
  NEXT(4);
L_WSNE:
  WR(uint8_t, 0, static_cast<uint8_t>(wideStringView(ADR(OPND(1))) != wideStringView(ADR(OPND(2)))));
  NEXT(4);
L_WSLT:
  WR(uint8_t, 0, static_cast<uint8_t>(wideStringView(ADR(OPND(1))) < wideStringView(ADR(OPND(2)))));
  NEXT(4);
L_WSLE:
  WR(uint8_t, 0, static_cast<uint8_t>(wideStringView(ADR(OPND(1))) <= wideStringView(ADR(OPND(2)))));
  NEXT(4);
L_WSWIDEN:
  wideFromString(ADR(OPND(0)), OPND(1), stringView(ADR(OPND(2))), scratch);
  NEXT(4);
L_WSNARROW:
  stringFromWide(ADR(OPND(0)), OPND(1), wideStringView(ADR(OPND(3))), static_cast<Narrowing>(OPND(2)), scratch);
  NEXT(5);
L_WSFROMC: {
  const char16_t unit = RD(char16_t, 2);
  stringAssign(ADR(OPND(0)), OPND(1), std::u16string_view(&unit, 1));
  NEXT(4);
}
L_WSTOC: {
  const std::u16string_view s = wideStringView(ADR(OPND(1)));
  WR(uint16_t, 0, s.empty() ? uint16_t{0} : static_cast<uint16_t>(s[0]));
  NEXT(3);
}

// A FOR's back edge that also runs the next iterations of a one-instruction body (runLoopAhead):
// as many as end before the next statement boundary that takes the slow path (watchdog, observer,
// a full log) and before any that would fault, each counted (and logged) as that boundary would.
// The rest, if any, are the ordinary code's: the back edge jumps to the body. Last in run(), so that
// the other handlers keep their places (pid read 4 % slower with these among the FOR handlers).
#define SB_FOR_RUN_AHEAD_I16                                                                      \
  L_FORINCE_I16 : L_FORNEXTE_I16 : {                                                              \
    const BackEdge edge = stepBackEdge<int16_t>(ip, code, B, slowAt > steps ? slowAt - steps : 0, logging ? logPos : nullptr); \
    steps += edge.iterations;                                                                     \
    if (logging) logPos += edge.iterations;                                                       \
    ip = edge.next;                                                                               \
    DISPATCH();                                                                                   \
  }
#define SB_FOR_RUN_AHEAD_I32                                                                      \
  L_FORINCE_I32 : L_FORNEXTE_I32 : {                                                              \
    const BackEdge edge = stepBackEdge<int32_t>(ip, code, B, slowAt > steps ? slowAt - steps : 0, logging ? logPos : nullptr); \
    steps += edge.iterations;                                                                     \
    if (logging) logPos += edge.iterations;                                                       \
    ip = edge.next;                                                                               \
    DISPATCH();                                                                                   \
  }

  SB_FOR_RUN_AHEAD_I16
  SB_FOR_RUN_AHEAD_I32

  // x MOD 2^k with the sign of x: the low bits, and for a negative x with a remainder the bits
  // above them set (head := (head + 1) MOD 64 without a hardware division).
#define SB_MODP2(S, T)                                                                 \
  L_MODP2_##S : {                                                                      \
    const T a = RD(T, 1), mask = RD(T, 2);                                             \
    const T low = static_cast<T>(a & mask);                                            \
    WR(T, 0, static_cast<T>(a < 0 && low != 0 ? low | static_cast<T>(~mask) : low));   \
    NEXT(4);                                                                           \
  }
  SB_MODP2(I8, int8_t)
  SB_MODP2(I16, int16_t)
  SB_MODP2(I32, int32_t)
  SB_MODP2(I64, int64_t)
  // Unsigned, so that the product wraps as the separate MUL and ADD would.
L_MULADD_32:
  WR(uint32_t, 0, RD(uint32_t, 1) * RD(uint32_t, 2) + RD(uint32_t, 3));
  NEXT(5);
L_MULADD_64:
  WR(uint64_t, 0, RD(uint64_t, 1) * RD(uint64_t, 2) + RD(uint64_t, 3));
  NEXT(5);

#undef OPND
#undef PC
#undef ADR
#undef RD
#undef WR
#undef DISPATCH
#undef NEXT
#undef FAULT
#undef SAVE_LOG
#undef LOG_STATEMENT_CHECKED
}
#pragma GCC diagnostic pop
// clang-format on

}  // namespace scanback
