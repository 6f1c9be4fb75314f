// The opcodes of the semantic pass's operations (vm/sema/ir.h Op), for the code generator.
#pragma once

#include <optional>

#include "vm/bytecode/opcodes.h"
#include "vm/sema/ir.h"

namespace scanback::compiler {

Op bitsOp(Op first8, uint32_t size);  // the member of an 8..64 family for `size` bytes
Op fltOp(Op firstF32, Prim p);        // the member of an F32/F64 family

// Comparisons are EQ, NE, LT and LE: > and >= swap their operands.
struct Comparison {
  Op family;  // EQ_I8 .. LE_I8, or SEQ .. SLE for strings
  bool swap;
};

inline Comparison comparison(sema::Op op) {
  switch (op) {
    case sema::Op::Eq: return {Op::EQ_I8, false};
    case sema::Op::Ne: return {Op::NE_I8, false};
    case sema::Op::Lt: return {Op::LT_I8, false};
    case sema::Op::Le: return {Op::LE_I8, false};
    case sema::Op::Gt: return {Op::LT_I8, true};
    case sema::Op::Ge: return {Op::LE_I8, true};
    case sema::Op::StrEq: return {Op::SEQ, false};
    case sema::Op::StrNe: return {Op::SNE, false};
    case sema::Op::StrLt: return {Op::SLT, false};
    case sema::Op::StrLe: return {Op::SLE, false};
    case sema::Op::StrGt: return {Op::SLT, true};
    default: return {Op::SLE, true};  // StrGe
  }
}

// The compare-and-jump family of a comparison family.
inline Op jumpFamily(Op comparisonFamily) {
  switch (comparisonFamily) {
    case Op::EQ_I8: return Op::JEQ_I8;
    case Op::NE_I8: return Op::JNE_I8;
    case Op::LT_I8: return Op::JLT_I8;
    default: return Op::JLE_I8;
  }
}

inline Op numberFamily(sema::Op op) {
  switch (op) {
    case sema::Op::Add: return Op::ADD_I8;
    case sema::Op::Sub: return Op::SUB_I8;
    case sema::Op::Mul: return Op::MUL_I8;
    case sema::Op::Div: return Op::DIV_I8;
    case sema::Op::Mod: return Op::MOD_I8;
    case sema::Op::Min: return Op::MIN_I8;
    default: return Op::MAX_I8;
  }
}

inline Op bitsFamily(sema::Op op) {
  switch (op) {
    case sema::Op::And: return Op::AND_8;
    case sema::Op::Or: return Op::OR_8;
    case sema::Op::Xor: return Op::XOR_8;
    case sema::Op::Shl: return Op::SHL_8;
    case sema::Op::Shr: return Op::SHR_8;
    case sema::Op::Rol: return Op::ROL_8;
    default: return Op::ROR_8;
  }
}

inline Op mathFamily(sema::Op op) {
  switch (op) {
    case sema::Op::Sqrt: return Op::SQRT_F32;
    case sema::Op::Ln: return Op::LN_F32;
    case sema::Op::Log: return Op::LOG_F32;
    case sema::Op::Exp: return Op::EXP_F32;
    case sema::Op::Sin: return Op::SIN_F32;
    case sema::Op::Cos: return Op::COS_F32;
    case sema::Op::Tan: return Op::TAN_F32;
    case sema::Op::Asin: return Op::ASIN_F32;
    case sema::Op::Acos: return Op::ACOS_F32;
    default: return Op::ATAN_F32;
  }
}

inline std::optional<Op> fromStringOp(sema::Op op) {
  switch (op) {
    case sema::Op::FromI64: return Op::SFROM_I64;
    case sema::Op::FromU64: return Op::SFROM_U64;
    case sema::Op::FromF32: return Op::SFROM_F32;
    case sema::Op::FromF64: return Op::SFROM_F64;
    case sema::Op::FromBool: return Op::SFROM_BOOL;
    case sema::Op::FromTime: return Op::SFROM_TIME;
    case sema::Op::FromLTime: return Op::SFROM_LTIME;
    case sema::Op::FromDate: return Op::SFROM_DATE;
    case sema::Op::FromTod: return Op::SFROM_TOD;
    case sema::Op::FromDt: return Op::SFROM_DT;
    default: return std::nullopt;
  }
}

// The STRING opcode, or its WSTRING twin (the same operands, in UTF-16 units) when `wide`.
inline Op stringOp(Op narrow, bool wide) {
  if (!wide) return narrow;
  switch (narrow) {
    case Op::SMOV: return Op::WSMOV;
    case Op::SCAT: return Op::WSCAT;
    case Op::SLEN: return Op::WSLEN;
    case Op::SLEFT: return Op::WSLEFT;
    case Op::SRIGHT: return Op::WSRIGHT;
    case Op::SMID: return Op::WSMID;
    case Op::SINS: return Op::WSINS;
    case Op::SDEL: return Op::WSDEL;
    case Op::SREPL: return Op::WSREPL;
    case Op::SFIND: return Op::WSFIND;
    case Op::SEQ: return Op::WSEQ;
    case Op::SNE: return Op::WSNE;
    case Op::SLT: return Op::WSLT;
    case Op::SLE: return Op::WSLE;
    default: return narrow;
  }
}

// A string function whose result is a string (written into the destination when that is one).
inline bool isStringResult(sema::Op op) {
  return op == sema::Op::StrLeft || op == sema::Op::StrRight || op == sema::Op::StrMid || op == sema::Op::StrConcat ||
         op == sema::Op::StrInsert || op == sema::Op::StrDelete || op == sema::Op::StrReplace;
}

}  // namespace scanback::compiler
