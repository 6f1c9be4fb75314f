#include "dap/session/variables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "vm/runtime/state_json.h"
#include "vm/runtime/values.h"
#include "vm/source/declaration_comment.h"

namespace scanback::dap {

namespace {

// A VAR_IN_OUT slot holds a reference (an image offset): the variable is what it points to.
std::optional<uint32_t> dereference(const Vm& vm, uint32_t slot) {
  if (slot + 4 > vm.memorySize()) return std::nullopt;
  uint32_t target;
  std::memcpy(&target, vm.memory() + slot, 4);
  if (target == 0 || target >= vm.memorySize()) return std::nullopt;
  return target;
}

bool inMemory(const Vm& vm, uint32_t offset, const Type& type) {
  return offset <= vm.memorySize() && type.size <= vm.memorySize() - offset;
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace

int64_t VariableStore::add(Container container) {
  const auto key = std::make_tuple(static_cast<int>(container.kind), container.frame.pou, container.frame.thisOffset,
                                   container.frame.frameOffset, container.offset, container.type);
  if (auto it = known_.find(key); it != known_.end()) return it->second;
  containers_.push_back(std::move(container));
  const auto reference = static_cast<int64_t>(containers_.size());
  known_.emplace(key, reference);
  return reference;
}

const Container* VariableStore::find(int64_t reference) const {
  if (reference <= 0 || static_cast<uint64_t>(reference) > containers_.size()) return nullptr;
  return &containers_[static_cast<size_t>(reference - 1)];
}

std::string VariableStore::valueText(const Vm& vm, uint32_t offset, int8_t bit, const Type& type) const {
  if (!inMemory(vm, offset, type)) return "<outside the image>";
  if (isStructured(type)) return type.name;
  if (type.isInterface()) {
    uint32_t ref;
    std::memcpy(&ref, vm.memory() + offset, 4);
    return interfaceText(vm.program(), vm.memory(), ref);
  }
  if (type.kind == TypeKind::Ref) {
    const std::optional<uint32_t> target = dereference(vm, offset);
    if (!target || !type.base) return "NULL";
    return fmt::format("REF -> {}", valueText(vm, *target, -1, *type.base));
  }
  return formatValue(vm.program(), vm.memory(), offset, bit, type);
}

Variable VariableStore::describe(const std::string& name, const VariableSlot& slot, const Vm& vm) {
  Variable v;
  v.name = name;
  v.type = slot.type->name;
  v.value = slot.unbound ? "invalid reference" : valueText(vm, slot.offset, slot.bit, *slot.type);
  v.evaluateName = slot.evaluateName;
  if (slot.unbound) return v;
  if (isStructured(*slot.type) && inMemory(vm, slot.offset, *slot.type)) {
    Container c;
    c.kind = Container::Kind::Value;
    c.offset = slot.offset;
    c.type = slot.type;
    c.evaluateName = slot.evaluateName;
    v.variablesReference = add(std::move(c));
    if (slot.type->kind == TypeKind::Array)
      v.indexedVariables = static_cast<int64_t>(slot.type->elementCount());
    else
      v.namedVariables = static_cast<int64_t>(slot.type->fields.size());
  }
  // An interface expands to the instance it references, as that instance's block shows it.
  if (slot.type->isInterface() && inMemory(vm, slot.offset, *slot.type)) {
    const std::optional<uint32_t> target = dereference(vm, slot.offset);
    const Type* block = target ? interfaceTarget(vm.program(), vm.memory(), *target) : nullptr;
    if (block) {
      Container c;
      c.kind = Container::Kind::Value;
      c.offset = *target;
      c.type = block;
      c.evaluateName = pathOfOffset(vm.program(), *target, block);
      v.variablesReference = add(std::move(c));
      v.namedVariables = static_cast<int64_t>(block->fields.size());
    }
  }
  if (slot.constant) v.presentationHint = VariablePresentationHint{std::nullopt, {"readOnly"}};
  if (std::find(forced_.begin(), forced_.end(), std::pair{slot.offset, slot.bit}) != forced_.end()) {
    if (!v.presentationHint) v.presentationHint = VariablePresentationHint{};
    v.presentationHint->attributes.push_back("forced");
  }
  return v;
}

namespace {

// An FB's or program's body: its variables are its instance's.
bool ownsInstance(const PouInfo& pou) { return pou.kind == PouKind::FunctionBlock || pou.kind == PouKind::Program; }
bool isInput(const scanback::Variable& v) { return v.section == VarSection::Input || v.section == VarSection::InOut; }

}  // namespace

std::vector<Scope> VariableStore::scopes(const Frame& frame, const Vm& vm) {
  std::vector<Scope> out;
  const PouInfo& pou = vm.program().pous.at(frame.pou);
  Container locals;
  locals.kind = Container::Kind::Locals;
  locals.frame = frame;
  // A scope left empty is left out: VS Code expands the first scope, which must show something.
  const bool hasLocals = !slots(locals, vm).empty();
  std::optional<Scope> instanceScope;
  if (pou.instanceType) {
    Container instance;
    instance.kind = Container::Kind::Instance;
    instance.frame = frame;
    instanceScope = Scope{"Instance", std::nullopt, add(instance), std::nullopt, std::nullopt, false};
  }
  // A PROGRAM's variables are its instance's (Locals holds only VAR_TEMP and its inputs): the
  // Instance scope comes first, so that it is the one expanded (issue 31).
  if (pou.kind == PouKind::Program && instanceScope) out.push_back(*std::exchange(instanceScope, std::nullopt));
  if (hasLocals) out.push_back(Scope{"Locals", "locals", add(locals), std::nullopt, std::nullopt, false});
  if (instanceScope) out.push_back(*instanceScope);
  for (auto [kind, name] : {std::pair{Container::Kind::Globals, "Globals"},
                            std::pair{Container::Kind::Retain, "Retain"}, std::pair{Container::Kind::Io, "I/O"}}) {
    Container c;
    c.kind = kind;
    out.push_back(Scope{name, std::nullopt, add(c), std::nullopt, std::nullopt, false});
  }
  return out;
}

std::vector<VariableSlot> VariableStore::slots(const Container& c, const Vm& vm) const {
  std::vector<VariableSlot> out;
  auto addVariable = [&](const scanback::Variable& v, uint32_t base, const std::string& prefix) {
    if (v.hidden || !v.type) return;
    VariableSlot s;
    s.name = v.name;
    s.type = v.type;
    s.bit = v.bit;
    s.constant = v.constant;
    s.location = v.location;
    s.declaration = v.span;
    s.offset = v.absolute ? v.offset : base + v.offset;
    s.evaluateName = join(prefix, v.name);
    if (v.byReference) {
      const std::optional<uint32_t> target = dereference(vm, s.offset);
      if (!target) return;
      s.offset = *target;
    }
    // A REFERENCE TO is shown as the variable it designates, as the program reads it
    // (docs/language.md, "REFERENCE TO"); unbound, as an invalid reference.
    if (v.type->isReference() && v.type->base) {
      const std::optional<uint32_t> target = dereference(vm, s.offset);
      if (target && inMemory(vm, *target, *v.type->base)) {
        s.offset = *target;
        s.type = v.type->base;
      } else {
        s.unbound = true;
      }
    }
    out.push_back(std::move(s));
  };
  switch (c.kind) {
    case Container::Kind::Locals: {
      // VAR_TEMP and a function's or method's variables (the frame), and the inputs the call
      // passed to an FB or program (its instance): each variable is listed in one scope only.
      const PouInfo& pou = vm.program().pous.at(c.frame.pou);
      for (const scanback::Variable& v : pou.frameVariables) addVariable(v, c.frame.frameOffset, "");
      if (pou.instanceType && ownsInstance(pou))
        for (const scanback::Variable& v : pou.instanceType->fields)
          if (isInput(v)) addVariable(v, c.frame.thisOffset, "");
      break;
    }
    case Container::Kind::Instance: {
      // The rest of the instance (a method's: all of its FB's variables).
      const PouInfo& pou = vm.program().pous.at(c.frame.pou);
      if (pou.instanceType)
        for (const scanback::Variable& v : pou.instanceType->fields)
          if (!ownsInstance(pou) || !isInput(v)) addVariable(v, c.frame.thisOffset, "");
      break;
    }
    case Container::Kind::Globals: {
      // A global of a global list is shown, and evaluated, as `GVL.Eps`: the name that reaches it
      // even when the list is {attribute 'qualified_only'}.
      const auto& lists = vm.program().symbols.globalListMembers;
      const std::vector<scanback::Variable>& globals = vm.program().globals;
      for (uint32_t i = 0; i < globals.size(); ++i) {
        auto list = lists.find(i);
        addVariable(globals[i], 0, list == lists.end() ? "" : list->second.list);
        if (list != lists.end() && !out.empty() && out.back().evaluateName == list->second.list + "." + globals[i].name)
          out.back().name = out.back().evaluateName;
      }
      for (const ProgramInstanceInfo& p : vm.program().instances) {
        VariableSlot s;
        s.name = p.name;
        s.type = p.type;
        s.offset = p.offset;
        s.evaluateName = p.name;
        out.push_back(std::move(s));
      }
      break;
    }
    case Container::Kind::Retain:
      for (const scanback::Variable& v : vm.program().globals)
        if (v.retain) addVariable(v, 0, "");
      for (const ProgramInstanceInfo& p : vm.program().instances)
        for (const scanback::Variable& v : p.type->fields)
          if (v.retain) addVariable(v, p.offset, p.name);
      for (VariableSlot& s : out) s.name = s.evaluateName;
      break;
    case Container::Kind::Io:
      for (const scanback::Variable& v : vm.program().globals)
        if (!v.location.empty()) addVariable(v, 0, "");
      for (const ProgramInstanceInfo& p : vm.program().instances)
        for (const scanback::Variable& v : p.type->fields)
          if (!v.location.empty()) addVariable(v, p.offset, p.name);
      for (VariableSlot& s : out) s.name = s.evaluateName;
      break;
    case Container::Kind::Value:
      if (!c.type) break;
      if (c.type->kind == TypeKind::Struct || c.type->kind == TypeKind::FunctionBlock) {
        for (const scanback::Variable& v : c.type->fields) addVariable(v, c.offset, c.evaluateName);
      }
      break;
  }
  return out;
}

std::vector<Variable> VariableStore::variables(const Container& c, const Vm& vm, std::optional<int64_t> start,
                                               std::optional<int64_t> count) {
  std::vector<Variable> out;
  if (c.kind == Container::Kind::Value && c.type && c.type->kind == TypeKind::Array) {
    const Type& array = *c.type;
    const Type* element = array.base;
    if (!element || array.dims.empty()) return out;
    const uint64_t total = array.elementCount();
    const uint64_t first = static_cast<uint64_t>(std::max<int64_t>(start.value_or(0), 0));
    const uint64_t n = count && *count > 0 ? static_cast<uint64_t>(*count) : total;
    for (uint64_t i = first; i < total && i < first + n; ++i) {
      // Row-major: the last dimension varies fastest.
      std::vector<int64_t> index(array.dims.size());
      uint64_t rest = i;
      for (size_t d = array.dims.size(); d-- > 0;) {
        index[d] = array.dims[d].lower + static_cast<int64_t>(rest % array.dims[d].count);
        rest /= array.dims[d].count;
      }
      std::string subscript;
      for (size_t d = 0; d < index.size(); ++d) subscript += (d ? "," : "") + std::to_string(index[d]);
      VariableSlot s;
      s.name = "[" + subscript + "]";
      s.type = element;
      s.offset = c.offset + static_cast<uint32_t>(i * element->size);
      s.evaluateName = c.evaluateName + s.name;
      out.push_back(describe(s.name, s, vm));
    }
    return out;
  }
  for (const VariableSlot& s : slots(c, vm)) {
    Variable v = describe(s.name, s, vm);  // a dap::Variable
    // A located variable's address is part of what it is, in every scope: "BOOL AT %IX0.3".
    if (!s.location.empty()) v.type = fmt::format("{} AT {}", s.type->name, s.location);
    // And what its declaration's comment says of it: DAP's Variable has no field for a description,
    // and VS Code shows the type on hover (supportsVariableType): "INT AT %IW2 — tank level in mm".
    if (const std::string comment = commentOf(vm.program(), s.declaration); !comment.empty())
      v.type = fmt::format("{} — {}", v.type.value_or(s.type->name), comment);
    out.push_back(std::move(v));
  }
  return out;
}

std::string VariableStore::commentOf(const Program& program, const SourceSpan& span) {
  if (!span.valid() || span.file >= program.sources.size()) return "";
  if (linesProgram_ != &program || linesOf_ != program.hash) {
    linesProgram_ = &program;
    linesOf_ = program.hash;
    lineStarts_.assign(program.sources.size(), {});
    for (FileId f = 0; f < program.sources.size(); ++f) {
      const std::string& text = program.sources.file(f).text;
      lineStarts_[f].push_back(0);
      for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n') lineStarts_[f].push_back(i + 1);
    }
  }
  const std::string& text = program.sources.file(span.file).text;
  const std::vector<size_t>& starts = lineStarts_[span.file];
  const auto lineAt = [&](uint32_t line) -> std::string_view {
    if (line >= starts.size()) return {};
    const size_t end = line + 1 < starts.size() ? starts[line + 1] - 1 : text.size();
    return std::string_view(text).substr(starts[line], end - starts[line]);
  };
  std::string comment = declarationComment(lineAt, span);
  // One line: a comment of several lines reads as one sentence after the type.
  std::replace(comment.begin(), comment.end(), '\n', ' ');
  return comment;
}

std::optional<VariableSlot> VariableStore::child(const Container& c, const Vm& vm, const std::string& name) {
  if (c.kind == Container::Kind::Value && c.type && c.type->kind == TypeKind::Array) {
    // "[i]" or "[i,j]": the element's flat index, row-major.
    const Type& array = *c.type;
    if (!array.base || name.size() < 3 || name.front() != '[' || name.back() != ']') return std::nullopt;
    std::vector<int64_t> index;
    size_t at = 1;
    while (at < name.size() - 1) {
      size_t end = name.find(',', at);
      if (end == std::string::npos || end > name.size() - 1) end = name.size() - 1;
      try {
        index.push_back(std::stoll(name.substr(at, end - at)));
      } catch (const std::exception&) {
        return std::nullopt;
      }
      at = end + 1;
    }
    if (index.size() != array.dims.size()) return std::nullopt;
    uint64_t flat = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      const int64_t k = index[d] - array.dims[d].lower;
      if (k < 0 || static_cast<uint64_t>(k) >= array.dims[d].count) return std::nullopt;
      flat = flat * array.dims[d].count + static_cast<uint64_t>(k);
    }
    return VariableSlot{name,
                        c.offset + static_cast<uint32_t>(flat * array.base->size),
                        -1,
                        array.base,
                        c.evaluateName + name,
                        false,
                        {},
                        {}};
  }
  for (const VariableSlot& s : slots(c, vm))
    if (s.name == name) return s;
  return std::nullopt;
}

}  // namespace scanback::dap
