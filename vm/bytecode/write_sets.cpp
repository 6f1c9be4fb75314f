#include "vm/bytecode/write_sets.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "vm/bytecode/open_arrays.h"
#include "vm/bytecode/program.h"

namespace scanback {

namespace {

// ---------------------------------------------------------------- what one opcode writes

struct Rule {
  enum class Kind : uint8_t {
    None,              // no store into memory
    Direct,            // the memory operand `at`
    Element,           // an element of the array at operand `at`: the whole array
    ThroughRef,        // at the reference in operand `at`, plus the offset in operand `offsetAt`
    Native,            // a standard function block's instance at operand `at` (its id is operand 0)
    NativeThroughRef,  // the same, at the reference in operand `at`
  };
  Kind kind = Kind::None;
  uint8_t at = 0;
  uint32_t width = 0;   // bytes stored; Element: bytes per element
  int8_t widthAt = -1;  // operand holding a byte count or a capacity: width = value * perUnit + extra
  uint8_t perUnit = 1;
  uint8_t extra = 0;
  int8_t countAt = -1;   // Element: operand holding the element count
  int8_t offsetAt = -1;  // ThroughRef: operand holding the offset added to the reference
};

Rule none() { return Rule{}; }
Rule direct(uint32_t width) {
  Rule r;
  r.kind = Rule::Kind::Direct;
  r.width = width;
  return r;
}
Rule directSized(int8_t widthAt, uint8_t perUnit = 1, uint8_t extra = 0) {
  Rule r;
  r.kind = Rule::Kind::Direct;
  r.widthAt = widthAt;
  r.perUnit = perUnit;
  r.extra = extra;
  return r;
}
// capacity units and the terminating 0 (vm/exec/strings.h).
Rule stringDest() { return directSized(1, 1, 1); }
Rule wideStringDest() { return directSized(1, 2, 2); }
Rule element(uint32_t width, int8_t countAt) {
  Rule r;
  r.kind = Rule::Kind::Element;
  r.width = width;
  r.countAt = countAt;
  return r;
}
Rule throughRef(uint32_t width, int8_t widthAt = -1) {
  Rule r;
  r.kind = Rule::Kind::ThroughRef;
  r.width = width;
  r.widthAt = widthAt;
  r.offsetAt = 1;
  return r;
}
Rule native(Rule::Kind kind) {
  Rule r;
  r.kind = kind;
  r.at = 1;
  return r;
}

// What `op` (unfused) stores; nullopt for an opcode this table does not know, which makes the
// statement write anywhere (sound, and the opcode test names it).
std::optional<Rule> ruleFor(Op op) {
  const auto n = static_cast<uint32_t>(op);
  auto in = [n](Op first, Op last) { return n >= static_cast<uint32_t>(first) && n <= static_cast<uint32_t>(last); };
  auto index = [n](Op first) { return n - static_cast<uint32_t>(first); };
  // Typed families run I8 .. U64 (then F32, F64) in Prim order; bit families 8 .. 64.
  auto prim = [&](Op first) { return direct(primSize(static_cast<Prim>(index(first)))); };
  auto real = [&](Op first) { return direct(index(first) == 0 ? 4u : 8u); };
  auto bits = [&](Op first) { return direct(1u << index(first)); };
#define SB_NUM_FAMILY(N) in(Op::N##_I8, Op::N##_F64)
#define SB_INT_FAMILY(N) in(Op::N##_I8, Op::N##_U64)
#define SB_REAL_FAMILY(N) in(Op::N##_F32, Op::N##_F64)
#define SB_BIT_FAMILY(N) in(Op::N##_8, Op::N##_64)
#define SB_ELEM_FAMILY(P, S) in(Op::P##1##S, Op::P##8##S)
  for (Op first : {Op::ADD_I8, Op::SUB_I8, Op::MUL_I8, Op::DIV_I8, Op::NEG_I8, Op::ABS_I8, Op::MIN_I8, Op::MAX_I8})
    if (in(first, static_cast<Op>(static_cast<uint32_t>(first) + kPrimCount - 1))) return prim(first);
  if (SB_NUM_FAMILY(EQ) || SB_NUM_FAMILY(NE) || SB_NUM_FAMILY(LT) || SB_NUM_FAMILY(LE)) return direct(1);
  if (SB_NUM_FAMILY(JEQ) || SB_NUM_FAMILY(JNE) || SB_NUM_FAMILY(JLT) || SB_NUM_FAMILY(JLE)) return none();
  if (SB_INT_FAMILY(MOD)) return prim(Op::MOD_I8);
  if (SB_INT_FAMILY(FORNEXT)) return prim(Op::FORNEXT_I8);
  if (SB_INT_FAMILY(FORINC)) return prim(Op::FORINC_I8);
  if (SB_INT_FAMILY(FORCHK) || SB_INT_FAMILY(CHK)) return none();
  if (in(Op::JEQE16_I8, Op::JGEE32_U64)) return none();  // the element comparisons and jumps
  if (SB_REAL_FAMILY(JNLT) || SB_REAL_FAMILY(JNLE)) return none();
  if (SB_REAL_FAMILY(TRUNC)) return direct(8);
  for (Op first : {Op::SQRT_F32, Op::LN_F32, Op::LOG_F32, Op::EXP_F32, Op::SIN_F32, Op::COS_F32, Op::TAN_F32,
                   Op::ASIN_F32, Op::ACOS_F32, Op::ATAN_F32, Op::EXPT_F32, Op::ATAN2_F32})
    if (in(first, static_cast<Op>(static_cast<uint32_t>(first) + 1))) return real(first);
  if (SB_BIT_FAMILY(GETBIT)) return direct(1);
  for (Op first : {Op::SETBIT_8, Op::AND_8, Op::OR_8, Op::XOR_8, Op::NOT_8, Op::SHL_8, Op::SHR_8, Op::ROL_8, Op::ROR_8})
    if (in(first, static_cast<Op>(static_cast<uint32_t>(first) + 3))) return bits(first);
  // CVT_<from>_<to>: ten targets per source, in Prim order.
  if (in(Op::CVT_I8_I8, Op::CVT_F64_F64)) return direct(primSize(static_cast<Prim>(index(Op::CVT_I8_I8) % kPrimCount)));
  if (SB_ELEM_FAMILY(ELD, _X16) || SB_ELEM_FAMILY(ELDK, _X16) || SB_ELEM_FAMILY(ELDK, _X32)) {
    const Op first = SB_ELEM_FAMILY(ELD, _X16)    ? Op::ELD1_X16
                     : SB_ELEM_FAMILY(ELDK, _X16) ? Op::ELDK1_X16
                                                  : Op::ELDK1_X32;
    return bits(first);  // 1, 2, 4, 8 bytes
  }
  if (SB_ELEM_FAMILY(EST, _X16)) return element(1u << index(Op::EST1_X16), 3);
  if (SB_ELEM_FAMILY(ESTK, _X16)) return element(1u << index(Op::ESTK1_X16), 4);
  if (SB_ELEM_FAMILY(ESTK, _X32)) return element(1u << index(Op::ESTK1_X32), 4);
#undef SB_NUM_FAMILY
#undef SB_INT_FAMILY
#undef SB_REAL_FAMILY
#undef SB_BIT_FAMILY
#undef SB_ELEM_FAMILY
  switch (op) {
    case Op::NOP:
    case Op::STMT:
    case Op::HALT:
    case Op::TICK:
    case Op::JMP:
    case Op::JT:
    case Op::JF:
    case Op::JTAB:
    case Op::CALLF:
    case Op::CALLI:
    case Op::CALLP:
    case Op::CALLV:
    case Op::RET:
    case Op::PCHK:
    case Op::RBOUND:
    case Op::JTE_X16:
    case Op::JFE_X16:
    case Op::JTE_X32:
    case Op::JFE_X32:
    case Op::ADVTIME:  // the cycle's virtual time, not the image
    case Op::AFAIL:
    case Op::FAULT: return none();
    case Op::NATFB: return native(Rule::Kind::Native);
    case Op::NATFBP: return native(Rule::Kind::NativeThroughRef);
    case Op::MOV1: return direct(1);
    case Op::MOV2: return direct(2);
    case Op::MOV4: return direct(4);
    case Op::MOV8: return direct(8);
    case Op::MOVN: return directSized(2);
    case Op::ADDR:
    case Op::ELEM:
    case Op::ELEMP:
    case Op::ELEMPD:
    case Op::IDX64: return direct(4);
    case Op::LD1: return direct(1);
    case Op::LD2: return direct(2);
    case Op::LD4: return direct(4);
    case Op::LD8: return direct(8);
    case Op::LDN: return directSized(3);
    case Op::ST1: return throughRef(1);
    case Op::ST2: return throughRef(2);
    case Op::ST4: return throughRef(4);
    case Op::ST8: return throughRef(8);
    case Op::STN: return throughRef(0, 3);
    case Op::PVALID: return direct(1);
    case Op::ELD1: return direct(1);
    case Op::ELD2: return direct(2);
    case Op::ELD4: return direct(4);
    case Op::ELD8: return direct(8);
    case Op::EST1: return element(1, 3);
    case Op::EST2: return element(2, 3);
    case Op::EST4: return element(4, 3);
    case Op::EST8: return element(8, 3);
    case Op::BNOT: return direct(1);
    case Op::MULADD_32: return direct(4);
    case Op::MULADD_64: return direct(8);
    case Op::MODP2_I8: return direct(1);
    case Op::MODP2_I16: return direct(2);
    case Op::MODP2_I32: return direct(4);
    case Op::MODP2_I64: return direct(8);
    // The control variable; the iterations run ahead store as the body's element store does, and
    // are the body statement's (it is logged for each).
    case Op::FORINCE_I16:
    case Op::FORNEXTE_I16: return direct(2);
    case Op::FORINCE_I32:
    case Op::FORNEXTE_I32: return direct(4);
    case Op::SMOV:
    case Op::SCAT:
    case Op::SLEFT:
    case Op::SRIGHT:
    case Op::SMID:
    case Op::SINS:
    case Op::SDEL:
    case Op::SREPL:
    case Op::SFROM_I64:
    case Op::SFROM_U64:
    case Op::SFROM_F32:
    case Op::SFROM_F64:
    case Op::SFROM_BOOL:
    case Op::SFROM_TIME:
    case Op::SFROM_LTIME:
    case Op::SFROM_DATE:
    case Op::SFROM_TOD:
    case Op::SFROM_DT:
    case Op::WSNARROW: return stringDest();
    case Op::SLEN:
    case Op::SFIND: return direct(2);
    case Op::SEQ:
    case Op::SNE:
    case Op::SLT:
    case Op::SLE: return direct(1);
    case Op::STO_I64:
    case Op::STO_U64:
    case Op::STO_F64: return direct(8);
    case Op::STO_BOOL: return direct(1);
    case Op::NOW: return direct(8);
    case Op::WSMOV:
    case Op::WSCAT:
    case Op::WSLEFT:
    case Op::WSRIGHT:
    case Op::WSMID:
    case Op::WSINS:
    case Op::WSDEL:
    case Op::WSREPL:
    case Op::WSWIDEN:
    case Op::WSFROMC: return wideStringDest();
    case Op::WSLEN:
    case Op::WSFIND: return direct(2);
    case Op::WSEQ:
    case Op::WSNE:
    case Op::WSLT:
    case Op::WSLE: return direct(1);
    case Op::WSTOC: return direct(2);
    default: return std::nullopt;
  }
}

// Control leaves the instruction only by its jumps (no fall-through).
bool endsFlow(Op op) {
  return op == Op::JMP || op == Op::RET || op == Op::HALT || op == Op::FAULT || op == Op::AFAIL || op == Op::JTAB;
}
// A FOR back edge that runs iterations ahead may go on at itself.
bool loopsOnItself(Op op) {
  return op == Op::FORINCE_I16 || op == Op::FORINCE_I32 || op == Op::FORNEXTE_I16 || op == Op::FORNEXTE_I32;
}

// ---------------------------------------------------------------- decoded code

struct Instr {
  uint32_t pc = 0;
  Op op = Op::NOP;                  // unfused
  uint32_t statement = UINT32_MAX;  // STMT or fused: the statement whose boundary it is
  const uint32_t* ops = nullptr;    // the operands of `op`
  uint32_t length = 0;              // words
  std::vector<uint32_t> targets;    // jump targets
};

// Decodes the instruction at pc; false when the code there is not a valid instruction.
bool decode(const std::vector<uint32_t>& code, uint32_t pc, uint32_t end, Instr& out) {
  if (pc >= end || code[pc] >= static_cast<uint32_t>(Op::Count)) return false;
  const Op raw = static_cast<Op>(code[pc]);
  out = Instr{};
  out.pc = pc;
  out.op = unfused(raw);
  uint32_t at = pc + 1;
  if (isFused(raw) || out.op == Op::STMT) {
    if (at >= end) return false;
    out.statement = code[at];
  }
  if (isFused(raw)) ++at;
  out.ops = code.data() + at;
  uint32_t lastK = 0;
  for (char letter : opInfo(out.op).operands) {
    if (letter == '*') {
      if (at + uint64_t{lastK} > end) return false;
      for (uint32_t i = 0; i < lastK; ++i) out.targets.push_back(code[at + i]);
      at += lastK;
      continue;
    }
    if (at >= end) return false;
    if (letter == 'j') out.targets.push_back(code[at]);
    if (letter == 'k') lastK = code[at];
    ++at;
  }
  if (loopsOnItself(out.op)) out.targets.push_back(pc);
  out.length = at - pc;
  return true;
}

// ---------------------------------------------------------------- places

// Where instances lie: first, first + stride, ..., last (stride >= 1; first == last: one place).
struct Group {
  uint64_t first = 0, last = 0, stride = 1;
  uint64_t count() const { return (last - first) / stride + 1; }
  auto operator<=>(const Group&) const = default;
};

constexpr uint64_t kExpandUpTo = 64;  // a group of at most this many places is expanded, else spanned

// The places `inner` (relative) designates inside each place of `outer`.
void compose(const Group& outer, const Group& inner, std::vector<Group>& out) {
  if (outer.first == outer.last) {
    out.push_back({outer.first + inner.first, outer.first + inner.last, inner.stride});
  } else if (inner.first == inner.last) {
    out.push_back({outer.first + inner.first, outer.last + inner.first, outer.stride});
  } else if (outer.count() <= kExpandUpTo) {
    for (uint64_t at = outer.first; at <= outer.last; at += outer.stride)
      out.push_back({at + inner.first, at + inner.last, inner.stride});
  } else {
    out.push_back({outer.first + inner.first, outer.last + inner.last, std::gcd(outer.stride, inner.stride)});
  }
}

// What a 4-byte reference in a frame slot designates: offsets from its base (Image: absolute).
struct AbsRef {
  Base base = Base::Image;
  Group at;
  bool operator==(const AbsRef&) const = default;
};

// The frame slots known to hold a reference the code computed, by frame offset.
using Slots = std::vector<std::pair<uint32_t, AbsRef>>;

const AbsRef* slotAt(const Slots& s, uint32_t offset) {
  auto it = std::lower_bound(s.begin(), s.end(), offset, [](const auto& e, uint32_t v) { return e.first < v; });
  return it != s.end() && it->first == offset ? &it->second : nullptr;
}
void killSlots(Slots& s, uint64_t begin, uint64_t end) {
  std::erase_if(s, [&](const auto& e) { return e.first < end && e.first + 4 > begin; });
}
void setSlot(Slots& s, uint32_t offset, const AbsRef& r) {
  killSlots(s, offset, uint64_t{offset} + 4);
  auto it = std::lower_bound(s.begin(), s.end(), offset, [](const auto& e, uint32_t v) { return e.first < v; });
  s.insert(it, {offset, r});
}
// The slots both states agree on.
Slots meet(const Slots& a, const Slots& b) {
  Slots r;
  for (const auto& e : a)
    if (const AbsRef* other = slotAt(b, e.first); other && *other == e.second) r.push_back(e);
  return r;
}

// ---------------------------------------------------------------- the analysis

// Writes relative to THIS: [THIS + at.first, THIS + at.last + width) for each place THIS may be.
struct RelWrite {
  Group at;
  uint64_t width = 0;
};

// What one statement (or the unowned code of one POU) may write, before THIS is resolved.
struct Pending {
  std::vector<ImageRange> image;
  std::vector<std::pair<uint32_t, RelWrite>> relative;  // (POU, write)
  std::vector<uint64_t> anyInstance;                    // [s, s + width) for every instance start s
  bool anywhere = false;
};

// A call that runs a POU with THIS somewhere.
struct Site {
  uint32_t callee = 0;
  enum class From : uint8_t { Fixed, Caller, AnyInstance } from = From::Fixed;
  uint32_t caller = 0;
  Group at;  // Fixed: absolute; Caller: relative to the caller's THIS
};

// Where a POU's THIS may be: its groups of places; beyond kMaxGroups one span that holds them all
// (it only grows, so that the propagation ends); or unknown.
struct ThisSet {
  std::set<Group> groups;
  std::optional<Group> span;
  bool unknown = false;
  static constexpr size_t kMaxGroups = 1024;

  // True when `g` was not already held.
  bool add(const Group& g) {
    if (unknown) return false;
    if (span) {
      if (g.first >= span->first && g.last <= span->last) return false;
      span = Group{std::min(span->first, g.first), std::max(span->last, g.last), 1};
      return true;
    }
    if (!groups.insert(g).second) return false;
    if (groups.size() > kMaxGroups) {
      Group all = *groups.begin();
      for (const Group& x : groups) all = Group{std::min(all.first, x.first), std::max(all.last, x.last), 1};
      span = all;
      groups.clear();
    }
    return true;
  }
  std::vector<Group> places() const {
    std::vector<Group> r(groups.begin(), groups.end());
    if (span) r.push_back(*span);
    return r;
  }
};

class Analysis {
 public:
  Analysis(const Program& p, std::span<const uint32_t> nativeSizes) : p_(p), nativeSizes_(nativeSizes) {
    pending_.resize(p.statements.size());
    unowned_.resize(p.pous.size());
  }

  void run() {
    enumerateInstances();
    std::vector<std::pair<uint32_t, uint32_t>> ranges;  // (entry, POU)
    for (uint32_t i = 0; i < p_.pous.size(); ++i)
      if (p_.pous[i].kind != PouKind::Native) ranges.push_back({p_.pous[i].entryPc, i});
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 0; i < ranges.size(); ++i) {
      const uint32_t end = i + 1 < ranges.size() ? ranges[i + 1].first : static_cast<uint32_t>(p_.code.size());
      analysePou(ranges[i].second, ranges[i].first, end);
    }
    for (const ProgramInstanceInfo& inst : p_.instances)
      if (inst.pou < p_.pous.size())
        sites_.push_back({inst.pou, Site::From::Fixed, 0, Group{inst.offset, inst.offset, 1}});
    for (uint32_t i = 0; i < p_.pous.size(); ++i)
      if (p_.pous[i].kind == PouKind::TaskEntry) sites_.push_back({i, Site::From::Fixed, 0, Group{0, 0, 1}});
    dispatchSites();
    propagateThis();
  }

  void finish(std::vector<uint32_t>& begins, std::vector<ImageRange>& ranges, std::vector<uint8_t>& anywhere,
              std::vector<ImageRange>& unowned, bool& unownedAnywhere) {
    const uint32_t imageSize = p_.imageSize();
    begins.assign(1, 0);
    for (Pending& s : pending_) {
      std::vector<ImageRange> r;
      const bool any = resolve(s, r);
      anywhere.push_back(any ? 1 : 0);
      if (!any) {
        normalizeRanges(r, imageSize, WriteSets::kMaxRanges);
        ranges.insert(ranges.end(), r.begin(), r.end());
      }
      begins.push_back(static_cast<uint32_t>(ranges.size()));
    }
    unownedAnywhere = false;
    for (Pending& s : unowned_) unownedAnywhere = resolve(s, unowned) || unownedAnywhere;
    if (unownedAnywhere) unowned.clear();
    normalizeRanges(unowned, imageSize, WriteSets::kMaxRanges);
  }

 private:
  // -------- the image's instances
  bool holdsInstances(const Type* t) {
    if (!t) return false;
    if (t->kind == TypeKind::FunctionBlock) return true;
    auto known = holds_.find(t);
    if (known != holds_.end()) return known->second;
    bool r = false;
    if (t->kind == TypeKind::Array)
      r = !isOpenArray(t) && holdsInstances(t->base);
    else if (t->kind == TypeKind::Struct)
      for (const Variable& f : t->fields) r = r || (!f.byReference && holdsInstances(f.type));
    holds_[t] = r;
    return r;
  }
  void walk(const Type* t, const Group& at) {
    if (!holdsInstances(t)) return;
    if (t->kind == TypeKind::FunctionBlock) {
      allInstances_.push_back(at);
      instancesOf_[t].push_back(at);
    }
    if (t->kind == TypeKind::FunctionBlock || t->kind == TypeKind::Struct) {
      for (const Variable& f : t->fields) {
        if (f.byReference || isOpenArray(f.type) || !holdsInstances(f.type)) continue;
        std::vector<Group> inner;
        compose(at, Group{f.offset, f.offset, 1}, inner);
        for (const Group& g : inner) walk(f.type, g);
      }
    } else if (t->kind == TypeKind::Array) {
      const uint64_t n = t->elementCount();
      const uint64_t size = t->base->size;
      if (n == 0 || size == 0) return;
      std::vector<Group> inner;
      compose(at, Group{0, (n - 1) * size, size}, inner);
      for (const Group& g : inner) walk(t->base, g);
    }
  }
  void enumerateInstances() {
    for (const Variable& g : p_.globals)
      if (!g.byReference && !isOpenArray(g.type)) walk(g.type, Group{g.offset, g.offset, 1});
    for (const ProgramInstanceInfo& inst : p_.instances) walk(inst.type, Group{inst.offset, inst.offset, 1});
    std::sort(allInstances_.begin(), allInstances_.end());
    allInstances_.erase(std::unique(allInstances_.begin(), allInstances_.end()), allInstances_.end());
  }

  // -------- one POU: blocks, dominators, references, writes
  void analysePou(uint32_t pou, uint32_t entry, uint32_t end) {
    std::vector<Instr> code;
    std::unordered_map<uint32_t, uint32_t> indexOf;  // pc -> instruction
    bool takesFrameAddress = false;
    for (uint32_t pc = entry; pc < end;) {
      Instr in;
      if (!decode(p_.code, pc, end, in)) {
        // Not code we emitted: whatever follows may write anything, whenever it runs.
        unowned_[pou].anywhere = true;
        break;
      }
      if ((in.op == Op::ADDR && operandBase(in.ops[1]) == Base::Frame) ||
          (in.op == Op::ELEM && operandBase(in.ops[1]) == Base::Frame) ||
          (in.op == Op::CALLI && operandBase(in.ops[2]) == Base::Frame))
        takesFrameAddress = true;
      indexOf[pc] = static_cast<uint32_t>(code.size());
      pc += in.length;
      code.push_back(std::move(in));
    }
    if (code.empty()) return;
    // Blocks: a leader is the entry, a jump target, or what follows a jump.
    std::vector<uint8_t> leader(code.size(), 0);
    leader[0] = 1;
    for (size_t i = 0; i < code.size(); ++i) {
      for (uint32_t t : code[i].targets)
        if (auto it = indexOf.find(t); it != indexOf.end()) leader[it->second] = 1;
      if ((!code[i].targets.empty() || endsFlow(code[i].op)) && i + 1 < code.size()) leader[i + 1] = 1;
    }
    std::vector<uint32_t> blockStart, blockOf(code.size());
    for (uint32_t i = 0; i < code.size(); ++i) {
      if (leader[i]) blockStart.push_back(i);
      blockOf[i] = static_cast<uint32_t>(blockStart.size() - 1);
    }
    const uint32_t blocks = static_cast<uint32_t>(blockStart.size());
    auto blockEnd = [&](uint32_t b) { return b + 1 < blocks ? blockStart[b + 1] : static_cast<uint32_t>(code.size()); };
    std::vector<std::vector<uint32_t>> succ(blocks), pred(blocks);
    for (uint32_t b = 0; b < blocks; ++b) {
      const Instr& last = code[blockEnd(b) - 1];
      auto edge = [&](uint32_t toInstr) {
        const uint32_t to = blockOf[toInstr];
        if (std::find(succ[b].begin(), succ[b].end(), to) == succ[b].end()) {
          succ[b].push_back(to);
          pred[to].push_back(b);
        }
      };
      for (uint32_t t : last.targets)
        if (auto it = indexOf.find(t); it != indexOf.end()) edge(it->second);
      if (!endsFlow(last.op) && blockEnd(b) < code.size()) edge(blockEnd(b));
    }
    // Reverse postorder from the entry; blocks it never reaches never run.
    std::vector<uint32_t> order, rpoIndex(blocks, UINT32_MAX);
    {
      std::vector<uint8_t> seen(blocks, 0);
      std::vector<std::pair<uint32_t, size_t>> stack{{0, 0}};
      seen[0] = 1;
      while (!stack.empty()) {
        auto& [b, next] = stack.back();
        if (next < succ[b].size()) {
          const uint32_t s = succ[b][next++];
          if (!seen[s]) {
            seen[s] = 1;
            stack.push_back({s, 0});
          }
        } else {
          order.push_back(b);
          stack.pop_back();
        }
      }
      std::reverse(order.begin(), order.end());
      for (uint32_t i = 0; i < order.size(); ++i) rpoIndex[order[i]] = i;
    }
    // Immediate dominators (Cooper, Harvey, Kennedy: "A simple, fast dominance algorithm").
    std::vector<uint32_t> idom(blocks, UINT32_MAX);
    idom[0] = 0;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 1; i < order.size(); ++i) {
        const uint32_t b = order[i];
        uint32_t best = UINT32_MAX;
        for (uint32_t q : pred[b]) {
          if (idom[q] == UINT32_MAX) continue;
          if (best == UINT32_MAX) {
            best = q;
            continue;
          }
          uint32_t x = q, y = best;
          while (x != y) {
            while (rpoIndex[x] > rpoIndex[y]) x = idom[x];
            while (rpoIndex[y] > rpoIndex[x]) y = idom[y];
          }
          best = x;
        }
        if (best != idom[b]) {
          idom[b] = best;
          changed = true;
        }
      }
    }
    // The statement whose boundary last passed at the end of each block (dominators first).
    std::vector<uint32_t> ownerAtEnd(blocks, UINT32_MAX);
    for (uint32_t b : order) {
      uint32_t owner = b == 0 ? UINT32_MAX : ownerAtEnd[idom[b]];
      for (uint32_t i = blockStart[b]; i < blockEnd(b); ++i)
        if (code[i].statement != UINT32_MAX) owner = code[i].statement;
      ownerAtEnd[b] = owner;
    }
    // References in frame slots, forwards to a fixed point.
    std::vector<std::optional<Slots>> entryState(blocks);
    entryState[0] = Slots{};
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t b : order) {
        if (!entryState[b]) continue;
        Slots s = *entryState[b];
        for (uint32_t i = blockStart[b]; i < blockEnd(b); ++i) step(code[i], s, takesFrameAddress, nullptr);
        for (uint32_t to : succ[b]) {
          Slots next = entryState[to] ? meet(*entryState[to], s) : s;
          if (!entryState[to] || next != *entryState[to]) {
            entryState[to] = std::move(next);
            changed = true;
          }
        }
      }
    }
    // The writes, each to the statement that owns it.
    for (uint32_t b : order) {
      Slots s = *entryState[b];
      uint32_t owner = b == 0 ? UINT32_MAX : ownerAtEnd[idom[b]];
      for (uint32_t i = blockStart[b]; i < blockEnd(b); ++i) {
        if (code[i].statement != UINT32_MAX) owner = code[i].statement;
        Sink sink{pou, owner < pending_.size() ? pending_[owner] : unowned_[pou]};
        step(code[i], s, takesFrameAddress, &sink);
      }
    }
  }

  struct Sink {
    uint32_t pou;
    Pending& to;
  };

  uint32_t operandWidth(const Rule& r, const Instr& in) const {
    if (r.widthAt < 0) return r.width;
    return in.ops[r.widthAt] * r.perUnit + r.extra;
  }

  // Writes `width` bytes at the memory operand `o`.
  void writeOperand(uint32_t o, uint64_t width, Slots& s, Sink* sink) {
    const uint32_t off = operandOffset(o);
    switch (operandBase(o)) {
      case Base::Image:
        if (sink) addImage(sink->to, off, off + width);
        break;
      case Base::This:
        if (sink) sink->to.relative.push_back({sink->pou, RelWrite{Group{off, off, 1}, width}});
        break;
      case Base::Frame: killSlots(s, off, off + width); break;
      case Base::Const: break;  // never a destination
    }
  }
  // Writes `width` bytes at `k` past the reference in operand `o`.
  void writeThrough(uint32_t o, uint64_t k, uint64_t width, Slots& s, Sink* sink) {
    const std::optional<AbsRef> r = refIn(o, s);
    if (!r) {
      if (sink) sink->to.anywhere = true;
      s.clear();  // the frame too
      return;
    }
    const AbsRef ref = *r;
    switch (ref.base) {
      case Base::Image:
        if (sink) addImage(sink->to, ref.at.first + k, ref.at.last + k + width);
        break;
      case Base::This:
        if (sink)
          sink->to.relative.push_back(
              {sink->pou, RelWrite{Group{ref.at.first + k, ref.at.last + k, ref.at.stride}, width}});
        break;
      case Base::Frame:
      case Base::Const: s.clear(); break;
    }
  }
  // What the reference in operand `o` designates, when this code computed it: a frame slot it
  // filled, or a constant address (REF(x) folded; or a number, which is never dereferenced).
  std::optional<AbsRef> refIn(uint32_t o, const Slots& s) const {
    if (operandBase(o) == Base::Frame) {
      if (const AbsRef* r = slotAt(s, operandOffset(o))) return *r;
    } else if (operandBase(o) == Base::Const && uint64_t{operandOffset(o)} + 4 <= p_.constants.size()) {
      uint32_t v;
      std::memcpy(&v, p_.constants.data() + operandOffset(o), 4);
      return AbsRef{Base::Image, Group{v, v, 1}};
    }
    return std::nullopt;
  }
  static void addImage(Pending& to, uint64_t begin, uint64_t end) {
    if (begin >= end || begin >= UINT32_MAX) return;
    end = std::min<uint64_t>(end, UINT32_MAX);
    to.image.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)});
  }
  std::optional<uint32_t> nativeSize(uint32_t id) const {
    if (id < nativeSizes_.size()) return nativeSizes_[id];
    return std::nullopt;
  }

  // One instruction: its writes (to the sink, when there is one), its effect on the frame slots
  // that hold references, and the calls it makes.
  void step(const Instr& in, Slots& s, bool takesFrameAddress, Sink* sink) {
    const std::optional<Rule> rule = ruleFor(in.op);
    if (!rule) {
      if (sink) sink->to.anywhere = true;
      s.clear();
      return;
    }
    // What a reference-computing instruction stores, read before its own store kills the slot.
    std::optional<AbsRef> defined;
    const uint32_t* op = in.ops;
    auto fromOperand = [](uint32_t o) -> std::optional<AbsRef> {
      if (operandBase(o) == Base::Const) return std::nullopt;
      return AbsRef{operandBase(o), Group{operandOffset(o), operandOffset(o), 1}};
    };
    switch (in.op) {
      case Op::ADDR: defined = fromOperand(op[1]); break;
      case Op::ELEM:
        // d = &base[i - lo], count op[4], stride op[5]
        if (op[4] > 0 && operandBase(op[1]) != Base::Const) {
          const uint64_t first = operandOffset(op[1]);
          defined = AbsRef{operandBase(op[1]), Group{first, first + uint64_t{op[4] - 1} * op[5], std::max(op[5], 1u)}};
        }
        break;
      case Op::ELEMP:
        // d = ref + k + (i - lo) * stride, count op[5], stride op[6]
        if (op[5] > 0)
          if (const std::optional<AbsRef> r = refIn(op[1], s)) {
            AbsRef d = *r;
            const uint64_t span = uint64_t{op[5] - 1} * op[6];
            d.at.first += op[2];
            d.at.stride =
                r->at.first == r->at.last ? std::max(op[6], 1u) : std::gcd(r->at.stride, uint64_t{std::max(op[6], 1u)});
            d.at.last += op[2] + span;
            defined = d;
          }
        break;
      case Op::MOV4: defined = refIn(op[1], s); break;
      default: break;
    }
    switch (rule->kind) {
      case Rule::Kind::None: break;
      case Rule::Kind::Direct: writeOperand(op[rule->at], operandWidth(*rule, in), s, sink); break;
      case Rule::Kind::Element: writeOperand(op[rule->at], uint64_t{op[rule->countAt]} * rule->width, s, sink); break;
      case Rule::Kind::ThroughRef:
        writeThrough(op[rule->at], op[rule->offsetAt], operandWidth(*rule, in), s, sink);
        break;
      case Rule::Kind::Native:
      case Rule::Kind::NativeThroughRef: {
        const std::optional<uint32_t> size = nativeSize(op[0]);
        if (!size) {
          if (sink) sink->to.anywhere = true;
          s.clear();
        } else if (rule->kind == Rule::Kind::Native) {
          writeOperand(op[rule->at], *size, s, sink);
        } else if (refIn(op[rule->at], s)) {
          writeThrough(op[rule->at], 0, *size, s, sink);
        } else {
          // A reference read from a variable designates an instance (it is checked as one when
          // built from a pointer, a typed one otherwise).
          if (sink) sink->to.anyInstance.push_back(*size);
          s.clear();
        }
        break;
      }
    }
    if (defined && operandBase(op[0]) == Base::Frame) setSlot(s, operandOffset(op[0]), *defined);
    // Calls: the callee's frame lies above `delta`; a callee may write this frame only through an
    // address of it that this POU took.
    auto afterCall = [&](uint32_t delta) {
      if (takesFrameAddress)
        s.clear();
      else
        killSlots(s, delta, UINT64_MAX);
    };
    switch (in.op) {
      case Op::CALLF:
        if (sink) sites_.push_back({op[0], Site::From::Caller, sink->pou, Group{0, 0, 1}});
        afterCall(op[1]);
        break;
      case Op::CALLI:
        if (sink) {
          const uint32_t o = op[2];
          if (operandBase(o) == Base::Image)
            sites_.push_back({op[0], Site::From::Fixed, 0, Group{operandOffset(o), operandOffset(o), 1}});
          else if (operandBase(o) == Base::This)
            sites_.push_back({op[0], Site::From::Caller, sink->pou, Group{operandOffset(o), operandOffset(o), 1}});
        }
        afterCall(op[1]);
        break;
      case Op::CALLP:
        if (sink) {
          const std::optional<AbsRef> r = refIn(op[2], s);
          if (!r)
            sites_.push_back({op[0], Site::From::AnyInstance, 0, {}});
          else if (r->base == Base::Image)
            sites_.push_back({op[0], Site::From::Fixed, 0, r->at});
          else if (r->base == Base::This)
            sites_.push_back({op[0], Site::From::Caller, sink->pou, r->at});
        }
        afterCall(op[1]);
        break;
      case Op::CALLV:
        if (sink) dynamicSlots_.insert(op[0]);
        afterCall(op[1]);
        break;
      default: break;
    }
  }

  // Dynamic calls: the instance's class picks the method, so each method in a slot a call uses
  // runs on the instances of the classes that dispatch that slot to it.
  void dispatchSites() {
    for (uint32_t slot : dynamicSlots_) {
      for (size_t c = 1; c < p_.classes.size(); ++c) {
        const uint64_t entry = uint64_t{c} * p_.dispatchSlots + slot;
        if (slot >= p_.dispatchSlots || entry >= p_.dispatch.size() || p_.dispatch[entry] == UINT32_MAX) continue;
        const Type* cls = p_.classes[c];
        for (const auto& [type, groups] : instancesOf_) {
          if (type != cls && (!cls || type->name != cls->name)) continue;
          for (const Group& g : groups) sites_.push_back({p_.dispatch[entry], Site::From::Fixed, 0, g});
        }
      }
    }
  }

  // THIS sets, grown along the calls to a fixed point.
  void propagateThis() {
    this_.assign(p_.pous.size(), ThisSet{});
    constexpr int kMaxRounds = 64;
    for (int round = 0;; ++round) {
      std::vector<uint8_t> changed(p_.pous.size(), 0);
      bool any = false;
      for (const Site& site : sites_) {
        if (site.callee >= this_.size()) continue;
        ThisSet& callee = this_[site.callee];
        bool grew = false;
        switch (site.from) {
          case Site::From::Fixed: grew = callee.add(site.at); break;
          case Site::From::AnyInstance:
            for (const Group& g : allInstances_) grew = callee.add(g) || grew;
            break;
          case Site::From::Caller: {
            if (this_[site.caller].unknown) {
              grew = !callee.unknown;
              callee.unknown = true;
              break;
            }
            std::vector<Group> places;
            for (const Group& g : this_[site.caller].places()) compose(g, site.at, places);
            for (const Group& g : places) grew = callee.add(g) || grew;
            break;
          }
        }
        if (grew) {
          changed[site.callee] = 1;
          any = true;
        }
      }
      if (!any) break;
      if (round == kMaxRounds) {
        // Calls that keep moving THIS (recursion through fields): where is not known.
        for (size_t i = 0; i < changed.size(); ++i)
          if (changed[i]) this_[i].unknown = true;
        break;
      }
    }
  }

  // The ranges of `s` with THIS resolved; true when it may write anywhere.
  bool resolve(const Pending& s, std::vector<ImageRange>& out) {
    if (s.anywhere) return true;
    out.insert(out.end(), s.image.begin(), s.image.end());
    auto place = [&](const Group& thisAt, const RelWrite& w) {
      std::vector<Group> places;
      compose(thisAt, w.at, places);
      for (const Group& g : places) {
        if (g.first == g.last || g.count() > kExpandUpTo) {
          addRange(out, g.first, g.last + w.width);
        } else {
          for (uint64_t at = g.first; at <= g.last; at += g.stride) addRange(out, at, at + w.width);
        }
      }
    };
    for (const auto& [pou, w] : s.relative) {
      const ThisSet& t = this_[pou];
      if (t.unknown) return true;
      for (const Group& g : t.places()) place(g, w);
    }
    for (uint64_t width : s.anyInstance)
      for (const Group& g : allInstances_) place(g, RelWrite{Group{0, 0, 1}, width});
    return false;
  }
  static void addRange(std::vector<ImageRange>& out, uint64_t begin, uint64_t end) {
    if (begin >= end || begin >= UINT32_MAX) return;
    end = std::min<uint64_t>(end, UINT32_MAX);
    out.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(end - begin)});
  }

  const Program& p_;
  std::span<const uint32_t> nativeSizes_;
  std::vector<Pending> pending_;  // by statement
  std::vector<Pending> unowned_;  // by POU
  std::vector<Site> sites_;
  std::set<uint32_t> dynamicSlots_;
  std::vector<ThisSet> this_;
  std::unordered_map<const Type*, bool> holds_;
  std::vector<Group> allInstances_;
  std::map<const Type*, std::vector<Group>> instancesOf_;
};

}  // namespace

bool writeSetsKnow(Op op) { return ruleFor(unfused(op)).has_value(); }

void normalizeRanges(std::vector<ImageRange>& ranges, uint32_t imageSize, size_t maxRanges) {
  std::erase_if(ranges, [&](ImageRange& r) {
    if (r.offset >= imageSize || r.size == 0) return true;
    r.size = std::min(r.size, imageSize - r.offset);
    return false;
  });
  std::sort(ranges.begin(), ranges.end(), [](const ImageRange& a, const ImageRange& b) { return a.offset < b.offset; });
  std::vector<ImageRange> merged;
  for (const ImageRange& r : ranges) {
    if (!merged.empty() && r.offset <= merged.back().offset + merged.back().size) {
      const uint32_t end = std::max(merged.back().offset + merged.back().size, r.offset + r.size);
      merged.back().size = end - merged.back().offset;
    } else {
      merged.push_back(r);
    }
  }
  if (maxRanges > 0 && merged.size() > maxRanges) {
    // Merge across the smallest gaps: those up to the gap that leaves maxRanges.
    std::vector<uint32_t> gaps;
    for (size_t i = 1; i < merged.size(); ++i)
      gaps.push_back(merged[i].offset - (merged[i - 1].offset + merged[i - 1].size));
    const size_t merges = merged.size() - maxRanges;
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(merges - 1), gaps.end());
    const uint32_t threshold = gaps[merges - 1];
    size_t left = merges;
    std::vector<ImageRange> fewer{merged[0]};
    for (size_t i = 1; i < merged.size(); ++i) {
      const uint32_t gap = merged[i].offset - (fewer.back().offset + fewer.back().size);
      if (left > 0 && gap <= threshold) {
        fewer.back().size = merged[i].offset + merged[i].size - fewer.back().offset;
        --left;
      } else {
        fewer.push_back(merged[i]);
      }
    }
    merged = std::move(fewer);
  }
  ranges = std::move(merged);
}

WriteSets::WriteSets(const Program& program, std::span<const uint32_t> nativeSizes) : imageSize_(program.imageSize()) {
  Analysis a(program, nativeSizes);
  a.run();
  a.finish(begins_, ranges_, anywhere_, unowned_, unownedAnywhere_);
}

}  // namespace scanback
