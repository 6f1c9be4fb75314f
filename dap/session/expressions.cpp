#include "dap/session/expressions.h"

#include <fmt/format.h>

#include <cstring>

#include "dap/session/session.h"
#include "vm/debug/evaluator.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"

namespace scanback::dap {

namespace {

debug::EvalContext contextOf(const Vm& vm, const Frame* frame) {
  debug::EvalContext context;
  if (frame) context = debug::EvalContext{frame->pou, frame->thisOffset, frame->frameOffset};
  context.cycleTime = vm.cycleTime();
  return context;
}

// A result as the Variables view shows values.
std::string formatResult(const Program& program, const Vm& vm, const debug::EvalResult& r) {
  if (!r.type) return "?";
  if (isStructured(*r.type)) return r.type->name;
  if (r.bit >= 0 || r.type->kind == TypeKind::Bool) return !r.bytes.empty() && r.bytes[0] ? "TRUE" : "FALSE";
  if (r.type->isInterface() && r.bytes.size() >= 4) {  // the instance it references, in the image
    uint32_t ref;
    std::memcpy(&ref, r.bytes.data(), 4);
    return interfaceText(program, vm.memory(), ref);
  }
  if (r.bytes.size() >= r.type->size) return formatValue(program, r.bytes.data(), 0, -1, *r.type);
  if (r.offset) return formatValue(program, vm.memory(), *r.offset, -1, *r.type);
  return "?";
}

}  // namespace

std::function<std::optional<bool>(const Vm&, std::string&)> compileCondition(const Program& program, uint32_t statement,
                                                                             const std::string& text,
                                                                             std::string& error) {
  std::shared_ptr<const debug::Expression> condition =
      debug::Expression::compile(program, program.statements.at(statement).pou, text, error);
  if (!condition) return nullptr;
  if (!condition->isBoolean()) {
    error = fmt::format("the condition must be BOOL, not {}", condition->type() ? condition->type()->name : "?");
    return nullptr;
  }
  return [condition](const Vm& vm, std::string& why) -> std::optional<bool> {
    debug::EvalResult result;
    if (!condition->evaluate(vm.memory(), vm.memorySize(), contextOf(vm, vm.innermostFrame()), result, why))
      return std::nullopt;
    return !result.bytes.empty() && result.bytes[0] != 0;
  };
}

std::function<std::string(const Vm&)> compileLogMessage(const Program& program, uint32_t statement,
                                                        const std::string& text, std::string& error) {
  // Literal text and {expression} parts, in order.
  struct Part {
    std::string text;
    std::shared_ptr<const debug::Expression> expression;
  };
  std::vector<Part> parts;
  std::string literal;
  const uint32_t pou = program.statements.at(statement).pou;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      literal += c;  // "{{" and "}}" are braces
      ++i;
      continue;
    }
    if (c == '}') {
      error = fmt::format("column {}: '}}' without '{{' (write '}}}}' for a brace)", i + 1);
      return nullptr;
    }
    if (c != '{') {
      literal += c;
      continue;
    }
    const size_t end = text.find('}', i + 1);
    if (end == std::string::npos) {
      error = fmt::format("column {}: '{{' without '}}' (write '{{{{' for a brace)", i + 1);
      return nullptr;
    }
    const std::string source = text.substr(i + 1, end - i - 1);
    std::string why;
    std::shared_ptr<const debug::Expression> e = debug::Expression::compile(program, pou, source, why);
    if (!e) {
      error = fmt::format("{{{}}}: {}", source, why);
      return nullptr;
    }
    if (!literal.empty()) parts.push_back(Part{std::move(literal), nullptr});
    literal.clear();
    parts.push_back(Part{source, std::move(e)});
    i = end;
  }
  if (!literal.empty()) parts.push_back(Part{std::move(literal), nullptr});
  const Program* p = &program;
  return [parts, p](const Vm& vm) {
    std::string out;
    for (const Part& part : parts) {
      if (!part.expression) {
        out += part.text;
        continue;
      }
      debug::EvalResult result;
      std::string why;
      if (part.expression->evaluate(vm.memory(), vm.memorySize(), contextOf(vm, vm.innermostFrame()), result, why))
        out += formatResult(*p, vm, result);
      else
        out += fmt::format("<error: {}>", why);
    }
    return out;
  };
}

std::optional<Evaluated> evaluateExpression(const Program& program, const Vm& vm, const Frame* frame,
                                            const std::string& text, std::string& error) {
  std::unique_ptr<debug::Expression> e =
      debug::Expression::compile(program, frame ? frame->pou : UINT32_MAX, text, error);
  if (!e) return std::nullopt;
  debug::EvalResult result;
  if (!e->evaluate(vm.memory(), vm.memorySize(), contextOf(vm, frame), result, error)) return std::nullopt;
  Evaluated out;
  out.type = result.type;
  out.value = formatResult(program, vm, result);
  if (result.offset && result.type) {
    out.slot = VariableSlot{text, *result.offset, result.bit, result.type, text, result.readOnly, {}, {}};
  }
  return out;
}

std::optional<DataWatch> locateWatch(const Program& program, const std::string& name, std::string& error) {
  std::unique_ptr<debug::Expression> e = debug::Expression::compile(program, UINT32_MAX, name, error);
  if (!e) return std::nullopt;
  // Index expressions read the initial image: a watch's name has constant indexes.
  debug::EvalResult result;
  if (!e->evaluate(program.initialImage.data(), program.imageSize(), {}, result, error)) return std::nullopt;
  if (!result.offset || !result.type || *result.offset >= program.imageSize()) {
    error = fmt::format("'{}' is not a variable", name);
    return std::nullopt;
  }
  DataWatch w;
  w.offset = *result.offset;
  w.bit = result.bit;
  w.size = result.bit >= 0 ? 1u : std::max<uint32_t>(result.type->size, 1);
  if (w.size > program.imageSize() - w.offset) {
    error = fmt::format("'{}' is not in the image", name);
    return std::nullopt;
  }
  w.name = name;
  return w;
}

json writeValue(Session& session, Target& target, const VariableSlot& slot, const std::string& value) {
  if (target.readOnly()) throw DapError(target.readOnlyReason());
  const Program& program = target.vm().program();
  debug::EvalResult where;
  where.type = slot.type;
  where.offset = slot.offset;
  where.bit = slot.bit;
  where.readOnly = slot.constant;
  std::vector<uint8_t> bytes;
  std::string error;
  if (!debug::encodeAssignment(program, where, value, bytes, error))
    throw DapError(fmt::format("cannot set {}: {}", slot.evaluateName.empty() ? slot.name : slot.evaluateName, error));
  // Paused inside a cycle the target writes at once, at this statement boundary; between cycles
  // with the next cycle's scan inputs (Target::write).
  const bool now = target.vm().inCycle() && target.vm().steps() > 0;
  if (!target.write(ExternalWrite{slot.offset, slot.bit, bytes, WriteAuthor::Debugger}, error)) throw DapError(error);
  std::string shown;
  if (slot.bit >= 0 || slot.type->kind == TypeKind::Bool)
    shown = !bytes.empty() && bytes[0] ? "TRUE" : "FALSE";
  else
    shown = formatValue(program, bytes.data(), 0, -1, *slot.type);
  session.output("console",
                 fmt::format("{} := {} {}\n", slot.evaluateName.empty() ? slot.name : slot.evaluateName, shown,
                             now ? "is written now, at this statement (and recorded here)"
                                 : "is written at the start of the next cycle"));
  return json{{"value", shown}, {"type", slot.type->name}};
}

}  // namespace scanback::dap
