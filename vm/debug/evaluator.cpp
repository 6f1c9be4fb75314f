#include "vm/debug/evaluator.h"

#include <fmt/format.h>

#include <cstring>

#include "vm/debug/expression_impl.h"
#include "vm/exec/strings.h"
#include "vm/runtime/values.h"

namespace scanback::debug {

using namespace detail;

Expression::Expression(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Expression::~Expression() = default;

std::unique_ptr<Expression> Expression::compile(const Program& program, uint32_t pou, std::string_view text,
                                                std::string& error) {
  std::unique_ptr<Impl> impl = compileExpression(program, pou, text, error);
  if (!impl) return nullptr;
  return std::unique_ptr<Expression>(new Expression(std::move(impl)));
}

const Type* Expression::type() const { return impl_->type; }

bool Expression::isBoolean() const {
  const Type* t = impl_->type;
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  return t && t->kind == TypeKind::Bool;
}

bool Expression::isStorage() const { return impl_->storage; }
const std::string& Expression::text() const { return impl_->text; }

namespace {

// Per-thread work areas: evaluating allocates nothing once they have grown to the largest need.
struct Scratch {
  std::vector<uint8_t> strings;
  std::unique_ptr<char[]> functions;
};
thread_local Scratch tScratch;

}  // namespace

bool Expression::evaluate(const uint8_t* memory, uint32_t memorySize, const EvalContext& context, EvalResult& out,
                          std::string& error) const {
  const Impl& impl = *impl_;
  if (impl.usesContext && context.pou != impl.pou) {
    const auto name = [&](uint32_t pou) {
      return pou < impl.program->pous.size() ? impl.program->pous[pou].name : fmt::format("#{}", pou);
    };
    error = fmt::format("'{}' was compiled for a frame of {}, not of {}", impl.text, name(impl.pou), name(context.pou));
    return false;
  }
  Ctx c;
  c.mem = memory;
  c.size = memory ? memorySize : 0;
  c.thisOffset = context.thisOffset;
  c.frameOffset = context.frameOffset;
  c.cycleTime = context.cycleTime;
  c.error = &error;
  if (impl.scratchSize) {
    if (tScratch.strings.size() < impl.scratchSize) tScratch.strings.resize(impl.scratchSize);
    c.scratch = tScratch.strings.data();
  }
  if (impl.stringFunctions) {
    if (!tScratch.functions) tScratch.functions = std::make_unique<char[]>(kStringScratchBytes);
    c.fnScratch = tScratch.functions.get();
  }

  const Node& root = *impl.root;
  const Type* type = impl.type;
  out.type = type;
  out.offset.reset();
  out.bit = -1;
  out.readOnly = false;
  switch (root.kind) {
    case NodeKind::Scalar: {
      uint64_t bits;
      if (!evalScalar(root, c, bits)) return false;
      const uint32_t n = primSize(root.prim);
      out.bytes.resize(n);
      std::memcpy(out.bytes.data(), &bits, n);  // little-endian: the low bytes
      return true;
    }
    case NodeKind::String: {
      std::string_view s;
      if (!evalString(root, c, s)) return false;
      // The characters and their 0, in at least the bytes of the expression's type.
      const uint32_t unit = root.wide ? 2 : 1;
      const uint32_t size = std::max<uint32_t>(type->size, static_cast<uint32_t>(s.size()) + unit);
      out.bytes.assign(size, 0);
      if (!s.empty()) std::memcpy(out.bytes.data(), s.data(), s.size());
      return true;
    }
    case NodeKind::Place: {
      Loc l;
      if (!evalPlace(root, c, l)) return false;
      if (l.bit >= 0) {
        if (!inMemory(root, c, l.offset, 1)) return false;
        out.bytes.assign(1, static_cast<uint8_t>((memory[l.offset] >> l.bit) & 1u));
      } else {
        if (!inMemory(root, c, l.offset, type->size)) return false;
        out.bytes.assign(memory + l.offset, memory + l.offset + type->size);
      }
      if (impl.storage) {
        out.offset = static_cast<uint32_t>(l.offset);
        out.bit = static_cast<int8_t>(l.bit);
        out.readOnly = impl.readOnly;
      }
      return true;
    }
  }
  return false;
}

bool encodeAssignment(const Program& program, const EvalResult& target, std::string_view text,
                      std::vector<uint8_t>& bytes, std::string& error) {
  if (!target.type || !target.offset) {
    error = "the expression is not a variable: only variables, fields, elements and bits can be assigned";
    return false;
  }
  if (target.readOnly) {
    error = "cannot assign to a constant";
    return false;
  }
  const uint32_t size = target.bit >= 0 ? 1 : target.type->size;
  if (*target.offset >= program.imageSize() || size > program.imageSize() - *target.offset) {
    error =
        "the variable lives in a call frame (a function's or method's variable, VAR_TEMP); only variables "
        "in the image (globals, program and FB instances) can be written";
    return false;
  }
  const Type* type = target.type;
  if (target.bit >= 0) type = program.types->elementary(TypeKind::Bool);
  // ST does not convert BOOL implicitly (the stimulus reader, which shares encodeValue, is
  // lenient with TRUE for a number; an assignment from the debugger is not).
  const std::string upper = upperCase(text);
  const size_t first = upper.find_first_not_of(" \t"), last = upper.find_last_not_of(" \t");
  const std::string word = first == std::string::npos ? "" : upper.substr(first, last - first + 1);
  if (type->kind != TypeKind::Bool && (word == "TRUE" || word == "FALSE" || word.rfind("BOOL#", 0) == 0)) {
    error = fmt::format("'{}' is a BOOL, not {}", word, target.type->name);
    return false;
  }
  std::vector<uint8_t> out;
  if (!encodeValue(program, text, *type, out, error)) return false;
  if (target.bit >= 0 && out.size() != 1) {
    error = fmt::format("'{}' is not a BOOL", text);
    return false;
  }
  bytes = std::move(out);
  return true;
}

}  // namespace scanback::debug
