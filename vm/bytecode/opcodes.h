// The one opcode table. The compiler, the VM dispatch loop, the disassembler and the tests all
// expand SB_OPCODES, so an opcode added here is everywhere at once (a missing VM handler fails
// to compile).
//
// An instruction is one opcode word followed by operand words. Operand letters:
//   o  memory operand: bits 31..30 select the base (0 image/absolute, 1 this instance,
//      2 frame, 3 constant pool), bits 29..0 the byte offset from it
//   k  immediate 32-bit value (signed where the meaning says so)
//   j  jump target: index of an opcode word in Program::code
//   p  POU index          s  statement id          n  native function-block id
//   *  a jump table: as many jump targets as the preceding `k` operand says
//
// Typed families end in the storage type they work on: I8..I64 signed, U8..U64 unsigned,
// F32/F64 IEEE, or 8..64 for bit widths. Integer arithmetic wraps at the type's width.
#pragma once

#include <cstdint>
#include <string_view>

// The opcode tables are laid out by hand, one opcode a line.
// clang-format off
#define SB_FAM_INT(X, N, SIG, M)                                                     \
  X(N##_I8, SIG, M) X(N##_I16, SIG, M) X(N##_I32, SIG, M) X(N##_I64, SIG, M)        \
  X(N##_U8, SIG, M) X(N##_U16, SIG, M) X(N##_U32, SIG, M) X(N##_U64, SIG, M)
#define SB_FAM_FLT(X, N, SIG, M) X(N##_F32, SIG, M) X(N##_F64, SIG, M)
#define SB_FAM_NUM(X, N, SIG, M) SB_FAM_INT(X, N, SIG, M) SB_FAM_FLT(X, N, SIG, M)
#define SB_FAM_BITS(X, N, SIG, M) X(N##_8, SIG, M) X(N##_16, SIG, M) X(N##_32, SIG, M) X(N##_64, SIG, M)
#define SB_CVT_TO(X, F)                                                              \
  X(CVT_##F##_I8, "oo", "d = convert a") X(CVT_##F##_I16, "oo", "d = convert a")     \
  X(CVT_##F##_I32, "oo", "d = convert a") X(CVT_##F##_I64, "oo", "d = convert a")    \
  X(CVT_##F##_U8, "oo", "d = convert a") X(CVT_##F##_U16, "oo", "d = convert a")     \
  X(CVT_##F##_U32, "oo", "d = convert a") X(CVT_##F##_U64, "oo", "d = convert a")    \
  X(CVT_##F##_F32, "oo", "d = convert a") X(CVT_##F##_F64, "oo", "d = convert a")
// Element loads and stores by element size: P1S .. P8S (ELD4_X16, ELDK8_X32, ...).
#define SB_FAM_ELEM(X, P, S, SIG, M) X(P##1##S, SIG, M) X(P##2##S, SIG, M) X(P##4##S, SIG, M) X(P##8##S, SIG, M)
#define SB_FAM_CVT(X)                                                                \
  SB_CVT_TO(X, I8) SB_CVT_TO(X, I16) SB_CVT_TO(X, I32) SB_CVT_TO(X, I64)             \
  SB_CVT_TO(X, U8) SB_CVT_TO(X, U16) SB_CVT_TO(X, U32) SB_CVT_TO(X, U64)             \
  SB_CVT_TO(X, F32) SB_CVT_TO(X, F64)

// X(name, operand letters, one-line meaning)
#define SB_OPCODES(X)                                                                         \
  X(NOP, "", "do nothing")                                                                    \
  X(STMT, "s", "statement boundary: count it, check the watchdog, call the observer if any")  \
  X(HALT, "", "end of the task's cycle")                                                      \
  X(TICK, "", "one iteration of a loop with an empty body: counts toward the watchdog")        \
  X(JMP, "j", "jump")                                                                         \
  X(JT, "oj", "jump if the BOOL a is TRUE")                                                   \
  X(JF, "oj", "jump if the BOOL a is FALSE")                                                  \
  X(JTAB, "okkj*", "jump table: a (I32) - lo selects one of k targets, else jump j")      \
  X(CALLF, "pk", "call function p with its frame k bytes above the current frame")            \
  X(CALLI, "pko", "call FB/method/program p with THIS = address of o")                        \
  X(CALLP, "pko", "call FB/method p with THIS = the reference held in o")                     \
  X(RET, "", "return to the caller")                                                          \
  X(NATFB, "no", "run native function block n on the instance at o")                          \
  X(NATFBP, "no", "run native function block n on the instance referenced by o")              \
  X(MOV1, "oo", "copy 1 byte") X(MOV2, "oo", "copy 2 bytes")                                  \
  X(MOV4, "oo", "copy 4 bytes") X(MOV8, "oo", "copy 8 bytes")                                 \
  X(MOVN, "ook", "copy k bytes")                                                              \
  X(ADDR, "oo", "d (REF) = image offset of operand a")                                        \
  X(ELEM, "oookkk", "d (REF) = &base[idx - lo], count k, stride k; fault when out of range")  \
  X(ELEMP, "ookokkk", "d (REF) = ref+k + (idx - lo) * stride; fault when out of range")       \
  X(IDX64, "oo", "d (I32) = a (I64) clamped, for array indexes")                              \
  X(LD1, "ook", "d = 1 byte at ref a + k") X(LD2, "ook", "d = 2 bytes at ref a + k")          \
  X(LD4, "ook", "d = 4 bytes at ref a + k") X(LD8, "ook", "d = 8 bytes at ref a + k")         \
  X(LDN, "ookk", "d = k bytes at ref a + k")                                                  \
  X(ST1, "oko", "1 byte at ref + k = s") X(ST2, "oko", "2 bytes at ref + k = s")              \
  X(ST4, "oko", "4 bytes at ref + k = s") X(ST8, "oko", "8 bytes at ref + k = s")             \
  X(STN, "okok", "k bytes at ref + k = s")                                                    \
  X(PCHK, "okkk", "a dereference: fault unless ref a is NULL or the k2 bytes at a + k1 lie inside one variable (an instance if k3)") \
  X(RBOUND, "oo", "a REFERENCE TO's use: fault unless ref a is bound (not NULL); b: its name (a STRING constant), for the message") \
  X(PVALID, "ookk", "d (BOOL) = ref a is not NULL and its k bytes lie inside one variable (an instance if k2)") \
  X(ELD1, "oookk", "d = base[idx - lo] (1-byte elements, count k)")                           \
  X(ELD2, "oookk", "d = base[idx - lo] (2-byte elements)")                                    \
  X(ELD4, "oookk", "d = base[idx - lo] (4-byte elements)")                                    \
  X(ELD8, "oookk", "d = base[idx - lo] (8-byte elements)")                                    \
  X(EST1, "ookko", "base[idx - lo] = s (1-byte elements, count k)")                           \
  X(EST2, "ookko", "base[idx - lo] = s (2-byte elements)")                                    \
  X(EST4, "ookko", "base[idx - lo] = s (4-byte elements)")                                    \
  X(EST8, "ookko", "base[idx - lo] = s (8-byte elements)")                                    \
  /* The index in other widths, and the index plus a constant computed at the index's width */ \
  /* (a[j + 1] with j an INT wraps as INT + INT does), with no conversion instruction.        */ \
  SB_FAM_ELEM(X, ELD, _X16, "oookk", "d = base[idx (INT) - lo] (count k)")                   \
  SB_FAM_ELEM(X, EST, _X16, "ookko", "base[idx (INT) - lo] = s (count k)")                   \
  SB_FAM_ELEM(X, ELDK, _X16, "oookkk", "d = base[INT(idx + k) - lo] (count k)")              \
  SB_FAM_ELEM(X, ESTK, _X16, "ookkko", "base[INT(idx + k) - lo] = s (count k)")              \
  SB_FAM_ELEM(X, ELDK, _X32, "oookkk", "d = base[DINT(idx + k) - lo] (count k)")             \
  SB_FAM_ELEM(X, ESTK, _X32, "ookkko", "base[DINT(idx + k) - lo] = s (count k)")             \
  /* Two elements of one array at the same index variable plus constants, compared: jump to j   */ \
  /* if base[idx + k1] <op> base[idx + k2] (IF a[j] > a[j + 1]: one instruction instead of 3)   */ \
  SB_FAM_INT(X, JEQE16, "ookkkkj", "jump if a[INT(i + k1)] = a[INT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JNEE16, "ookkkkj", "jump if a[INT(i + k1)] <> a[INT(i + k2)] (lo k, count k)") \
  SB_FAM_INT(X, JLTE16, "ookkkkj", "jump if a[INT(i + k1)] < a[INT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JLEE16, "ookkkkj", "jump if a[INT(i + k1)] <= a[INT(i + k2)] (lo k, count k)") \
  SB_FAM_INT(X, JGTE16, "ookkkkj", "jump if a[INT(i + k1)] > a[INT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JGEE16, "ookkkkj", "jump if a[INT(i + k1)] >= a[INT(i + k2)] (lo k, count k)") \
  SB_FAM_INT(X, JEQE32, "ookkkkj", "jump if a[DINT(i + k1)] = a[DINT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JNEE32, "ookkkkj", "jump if a[DINT(i + k1)] <> a[DINT(i + k2)] (lo k, count k)") \
  SB_FAM_INT(X, JLTE32, "ookkkkj", "jump if a[DINT(i + k1)] < a[DINT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JLEE32, "ookkkkj", "jump if a[DINT(i + k1)] <= a[DINT(i + k2)] (lo k, count k)") \
  SB_FAM_INT(X, JGTE32, "ookkkkj", "jump if a[DINT(i + k1)] > a[DINT(i + k2)] (lo k, count k)")  \
  SB_FAM_INT(X, JGEE32, "ookkkkj", "jump if a[DINT(i + k1)] >= a[DINT(i + k2)] (lo k, count k)") \
  X(JTE_X16, "ookkkj", "jump if the BOOL base[INT(idx + k) - lo] is TRUE (count k)")             \
  X(JFE_X16, "ookkkj", "jump if the BOOL base[INT(idx + k) - lo] is FALSE (count k)")            \
  X(JTE_X32, "ookkkj", "jump if the BOOL base[DINT(idx + k) - lo] is TRUE (count k)")            \
  X(JFE_X32, "ookkkj", "jump if the BOOL base[DINT(idx + k) - lo] is FALSE (count k)")           \
  X(BNOT, "oo", "d = NOT a for BOOL")                                                         \
  SB_FAM_BITS(X, GETBIT, "ook", "d (BOOL) = bit k of a")                                      \
  SB_FAM_BITS(X, SETBIT, "oko", "bit k of d = BOOL s")                                        \
  SB_FAM_BITS(X, AND, "ooo", "d = a AND b (bitwise)")                                         \
  SB_FAM_BITS(X, OR, "ooo", "d = a OR b (bitwise)")                                           \
  SB_FAM_BITS(X, XOR, "ooo", "d = a XOR b (bitwise)")                                         \
  SB_FAM_BITS(X, NOT, "oo", "d = NOT a (bitwise)")                                            \
  SB_FAM_BITS(X, SHL, "ooo", "d = SHL(a, b)")                                                 \
  SB_FAM_BITS(X, SHR, "ooo", "d = SHR(a, b)")                                                 \
  SB_FAM_BITS(X, ROL, "ooo", "d = ROL(a, b)")                                                 \
  SB_FAM_BITS(X, ROR, "ooo", "d = ROR(a, b)")                                                 \
  SB_FAM_NUM(X, ADD, "ooo", "d = a + b")                                                      \
  SB_FAM_NUM(X, SUB, "ooo", "d = a - b")                                                      \
  SB_FAM_NUM(X, MUL, "ooo", "d = a * b")                                                      \
  SB_FAM_NUM(X, DIV, "ooo", "d = a / b (toward zero); fault when b = 0")                      \
  SB_FAM_INT(X, MOD, "ooo", "d = a MOD b (sign of a); fault when b = 0")                      \
  /* a * b + c at 32 or 64 bits: the same bits signed or unsigned (seed := seed * k1 + k2) */ \
  X(MULADD_32, "oooo", "d = a * b + c (32 bits, wraps)")                                      \
  X(MULADD_64, "oooo", "d = a * b + c (64 bits, wraps)")                                      \
  /* MOD by a constant power of two, signed: a mask and a sign fix instead of a division */   \
  X(MODP2_I8, "ooo", "d = a MOD (b + 1) for the mask b = 2^k - 1 (sign of a)")                \
  X(MODP2_I16, "ooo", "d = a MOD (b + 1) for the mask b = 2^k - 1 (sign of a)")               \
  X(MODP2_I32, "ooo", "d = a MOD (b + 1) for the mask b = 2^k - 1 (sign of a)")               \
  X(MODP2_I64, "ooo", "d = a MOD (b + 1) for the mask b = 2^k - 1 (sign of a)")               \
  SB_FAM_NUM(X, NEG, "oo", "d = -a")                                                          \
  SB_FAM_NUM(X, ABS, "oo", "d = ABS(a)")                                                      \
  SB_FAM_NUM(X, MIN, "ooo", "d = MIN(a, b)")                                                  \
  SB_FAM_NUM(X, MAX, "ooo", "d = MAX(a, b)")                                                  \
  SB_FAM_NUM(X, EQ, "ooo", "d (BOOL) = a = b")                                                \
  SB_FAM_NUM(X, NE, "ooo", "d (BOOL) = a <> b")                                               \
  SB_FAM_NUM(X, LT, "ooo", "d (BOOL) = a < b")                                                \
  SB_FAM_NUM(X, LE, "ooo", "d (BOOL) = a <= b")                                               \
  SB_FAM_NUM(X, JEQ, "ooj", "jump if a = b")                                                  \
  SB_FAM_NUM(X, JNE, "ooj", "jump if a <> b")                                                 \
  SB_FAM_NUM(X, JLT, "ooj", "jump if a < b")                                                  \
  SB_FAM_NUM(X, JLE, "ooj", "jump if a <= b")                                                 \
  SB_FAM_FLT(X, JNLT, "ooj", "jump unless a < b")                                             \
  SB_FAM_FLT(X, JNLE, "ooj", "jump unless a <= b")                                            \
  SB_FAM_INT(X, FORCHK, "oooj", "FOR entry: jump to j when var a is already past limit c (step b)") \
  SB_FAM_INT(X, FORNEXT, "oooj", "FOR step: a += b; jump to j unless that passed limit c")    \
  SB_FAM_INT(X, FORINC, "ooj", "FOR step of 1: a += 1; jump to j unless a was already at limit b") \
  SB_FAM_INT(X, CHK, "ooo", "fault unless lo b <= a <= hi c (subrange)")                      \
  /* A FOR's back edge whose body (at j) is one element store at the control variable, or an IF */ \
  /* on such an element that skips to this back edge: it also runs the following iterations     */ \
  /* itself while none of them needs a statement boundary's slow path or faults (issue 17).     */ \
  X(FORINCE_I16, "ooj", "FORINC, then the next iterations of the element body at j (INT)")     \
  X(FORINCE_I32, "ooj", "FORINC, then the next iterations of the element body at j (DINT)")    \
  X(FORNEXTE_I16, "oooj", "FORNEXT, then the next iterations of the element body at j (INT)")  \
  X(FORNEXTE_I32, "oooj", "FORNEXT, then the next iterations of the element body at j (DINT)") \
  SB_FAM_CVT(X)                                                                               \
  SB_FAM_FLT(X, TRUNC, "oo", "d (I64) = a truncated toward zero, saturated")                  \
  SB_FAM_FLT(X, SQRT, "oo", "d = SQRT(a)") SB_FAM_FLT(X, LN, "oo", "d = LN(a)")              \
  SB_FAM_FLT(X, LOG, "oo", "d = LOG(a)") SB_FAM_FLT(X, EXP, "oo", "d = EXP(a)")              \
  SB_FAM_FLT(X, SIN, "oo", "d = SIN(a)") SB_FAM_FLT(X, COS, "oo", "d = COS(a)")              \
  SB_FAM_FLT(X, TAN, "oo", "d = TAN(a)") SB_FAM_FLT(X, ASIN, "oo", "d = ASIN(a)")            \
  SB_FAM_FLT(X, ACOS, "oo", "d = ACOS(a)") SB_FAM_FLT(X, ATAN, "oo", "d = ATAN(a)")          \
  SB_FAM_FLT(X, EXPT, "ooo", "d = a ** b")                                                    \
  SB_FAM_FLT(X, ATAN2, "ooo", "d = ATAN2(a, b): the angle of the point (b, a)")               \
  X(SMOV, "oko", "string d (capacity k) = s, truncated")                                      \
  X(SCAT, "okoo", "string d = CONCAT(a, b)")                                                  \
  X(SLEN, "oo", "d (INT) = LEN(s)")                                                           \
  X(SLEFT, "okoo", "string d = LEFT(s, n (I64))")                                            \
  X(SRIGHT, "okoo", "string d = RIGHT(s, n (I64))")                                          \
  X(SMID, "okooo", "string d = MID(s, len, pos) (I64)")                                      \
  X(SINS, "okooo", "string d = INSERT(a, b, pos)")                                           \
  X(SDEL, "okooo", "string d = DELETE(s, len, pos)")                                         \
  X(SREPL, "okoooo", "string d = REPLACE(a, b, len, pos)")                                   \
  X(SFIND, "ooo", "d (INT) = FIND(a, b)")                                                     \
  X(SEQ, "ooo", "d = a = b (strings)") X(SNE, "ooo", "d = a <> b (strings)")                 \
  X(SLT, "ooo", "d = a < b (strings)") X(SLE, "ooo", "d = a <= b (strings)")                 \
  X(SFROM_I64, "oko", "string d = decimal a") X(SFROM_U64, "oko", "string d = decimal a")    \
  X(SFROM_F32, "oko", "string d = REAL a") X(SFROM_F64, "oko", "string d = LREAL a")         \
  X(SFROM_BOOL, "oko", "string d = TRUE/FALSE")                                              \
  X(SFROM_TIME, "oko", "string d = T# literal") X(SFROM_LTIME, "oko", "string d = LTIME#")   \
  X(SFROM_DATE, "oko", "string d = D# literal") X(SFROM_TOD, "oko", "string d = TOD#")       \
  X(SFROM_DT, "oko", "string d = DT# literal")                                               \
  X(STO_I64, "oo", "d (I64) = number in string a (0 when not a number)")                     \
  X(STO_U64, "oo", "d (U64) = number in string a")                                           \
  X(STO_F64, "oo", "d (F64) = number in string a")                                           \
  X(STO_BOOL, "oo", "d (BOOL) = string a is TRUE or a non-zero number")                      \
  X(NOW, "o", "d (TIME) = start time of the current cycle")                                   \
  X(ADVTIME, "o", "a test's ADVANCE_TIME: the cycle's virtual time += a (TIME); fault when a < 0") \
  X(AFAIL, "kooo", "a test's failed assertion k: fault with the texts (STRING) of its operands") \
  X(ELEMPD, "ookoo", "d (REF) = ref+k + (idx - lo) * stride, lo/count/stride at e (ARRAY[*]); fault when out of range") \
  X(FAULT, "k", "raise fault k (reached code that must not run)") \
  X(CALLV, "kko", "call method slot k, frame k bytes up, THIS = the instance referenced by o") \
  X(WSMOV, "oko", "WSTRING d (capacity k) = s, truncated")                                    \
  X(WSCAT, "okoo", "WSTRING d = CONCAT(a, b)")                                                \
  X(WSLEN, "oo", "d (INT) = LEN(WSTRING s)")                                                  \
  X(WSLEFT, "okoo", "WSTRING d = LEFT(s, n (I64))")                                          \
  X(WSRIGHT, "okoo", "WSTRING d = RIGHT(s, n (I64))")                                        \
  X(WSMID, "okooo", "WSTRING d = MID(s, len, pos) (I64)")                                    \
  X(WSINS, "okooo", "WSTRING d = INSERT(a, b, pos)")                                         \
  X(WSDEL, "okooo", "WSTRING d = DELETE(s, len, pos)")                                       \
  X(WSREPL, "okoooo", "WSTRING d = REPLACE(a, b, len, pos)")                                 \
  X(WSFIND, "ooo", "d (INT) = FIND(a, b) (WSTRING)")                                          \
  X(WSEQ, "ooo", "d = a = b (WSTRING)") X(WSNE, "ooo", "d = a <> b (WSTRING)")               \
  X(WSLT, "ooo", "d = a < b (WSTRING, by code units)") X(WSLE, "ooo", "d = a <= b (WSTRING)") \
  X(WSWIDEN, "oko", "WSTRING d = STRING s (UTF-8 decoded)")                                   \
  X(WSNARROW, "okko", "STRING d = WSTRING s: k 0 non-ASCII as '?', 1 UTF-8")                 \
  X(WSFROMC, "oko", "WSTRING d = the WCHAR s")                                                \
  X(WSTOC, "oo", "d (WCHAR) = first unit of WSTRING s, 0 when empty")
// clang-format on

namespace scanback {

// Every opcode also exists fused with the statement boundary that precedes it: S_<op> takes the
// statement id, then <op>'s operands, and does STMT's work before <op>'s. The compiler fuses a
// statement's STMT with its first instruction, saving one dispatch per statement.
enum class Op : uint32_t {
#define SB_ENUM(name, sig, meaning) name,
#define SB_FUSED_ENUM(name, sig, meaning) S_##name,
  SB_OPCODES(SB_ENUM) SB_OPCODES(SB_FUSED_ENUM)
#undef SB_ENUM
#undef SB_FUSED_ENUM
      Count
};

inline constexpr uint32_t kPlainOpCount = static_cast<uint32_t>(Op::S_NOP);
inline constexpr bool isFused(Op op) { return static_cast<uint32_t>(op) >= kPlainOpCount; }
inline constexpr Op fusedWithStatement(Op op) { return static_cast<Op>(static_cast<uint32_t>(op) + kPlainOpCount); }
inline constexpr Op unfused(Op op) {
  return isFused(op) ? static_cast<Op>(static_cast<uint32_t>(op) - kPlainOpCount) : op;
}

struct OpInfo {
  std::string_view name;
  std::string_view operands;
  std::string_view meaning;
};

inline constexpr OpInfo kOpInfo[] = {
#define SB_INFO(name, sig, meaning) OpInfo{#name, sig, meaning},
#define SB_FUSED_INFO(name, sig, meaning) OpInfo{"S_" #name, "s" sig, "statement boundary, then: " meaning},
    SB_OPCODES(SB_INFO) SB_OPCODES(SB_FUSED_INFO)
#undef SB_INFO
#undef SB_FUSED_INFO
};

inline const OpInfo& opInfo(Op op) { return kOpInfo[static_cast<uint32_t>(op)]; }

// Memory operand encoding.
enum class Base : uint32_t { Image = 0, This = 1, Frame = 2, Const = 3 };
inline constexpr uint32_t kOffsetMask = 0x3FFFFFFFu;
inline constexpr uint32_t operand(Base base, uint32_t offset) {
  return (static_cast<uint32_t>(base) << 30) | (offset & kOffsetMask);
}
inline constexpr Base operandBase(uint32_t o) { return static_cast<Base>(o >> 30); }
inline constexpr uint32_t operandOffset(uint32_t o) { return o & kOffsetMask; }

// Storage types of the typed families, in family order (I8 first), so that
// `Op(base + static_cast<int>(prim))` picks the member of a family.
enum class Prim : uint8_t { I8, I16, I32, I64, U8, U16, U32, U64, F32, F64 };
inline constexpr int kPrimCount = 10;
inline constexpr uint32_t primSize(Prim p) {
  constexpr uint32_t sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
  return sizes[static_cast<int>(p)];
}
inline constexpr bool primIsFloat(Prim p) { return p == Prim::F32 || p == Prim::F64; }
inline constexpr bool primIsSigned(Prim p) { return p <= Prim::I64 || primIsFloat(p); }

// Fault causes raised by the VM.
enum class FaultCode : uint32_t {
  None = 0,
  DivisionByZero,
  IndexOutOfRange,
  NullReference,
  BadReference,  // a reference outside the image
  Subrange,
  Watchdog,
  StackOverflow,
  Unreachable,
  AssertionFailed,  // a unit test's ASSERT_* (the detail is its message)
  BadTimeAdvance,   // a unit test's ADVANCE_TIME by a negative time, or past the clock's end
  OutsideVariable,  // a dereferenced pointer's bytes are not all inside one variable
};
std::string_view faultText(FaultCode code);

// WSNARROW's k operand: how a WSTRING becomes a STRING. Ascii: every character outside ASCII
// becomes '?' (WSTRING_TO_STRING); Utf8: its UTF-8 encoding (how scanback shows a WSTRING).
enum class Narrowing : uint32_t { Ascii = 0, Utf8 = 1 };

}  // namespace scanback
