// Statements, POU bodies, task entry code, code emission and the compiler driver.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vm/base/int128.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/syntax/parser.h"

namespace scanback::compiler {

// ---------------------------------------------------------------- emission

void Compiler::emitVec(Op op, const std::vector<Opnd>& operands) {
  const OpInfo& info = opInfo(op);
  auto& code = program_->code;
  if (pendingStatement_ != UINT32_MAX && op != Op::STMT && here() == pendingStatement_ + 2) {
    // [STMT id] + [op operands...] -> [S_op id operands...]: one dispatch less per statement.
    code[pendingStatement_] = static_cast<uint32_t>(fusedWithStatement(op));
  } else {
    code.push_back(static_cast<uint32_t>(op));
  }
  pendingStatement_ = op == Op::STMT ? here() - 1 : UINT32_MAX;
  size_t letter = 0;
  for (const Opnd& x : operands) {
    const char kind = letter < info.operands.size() ? info.operands[letter] : '*';
    if (kind != '*') ++letter;
    uint32_t value = x.value;
    switch (x.fix) {
      case Opnd::Fix::None:
        if (kind == 'o' && operandBase(value) == Base::Frame && operandOffset(value) >= kCalleeBias && ctx_)
          ctx_->calleeFixups.push_back(here());
        break;
      case Opnd::Fix::CalleeFrame:
        if (ctx_) ctx_->calleeFixups.push_back(here());
        value = kCalleeBias;  // becomes the frame size
        break;
      case Opnd::Fix::Label:
        if (labelPos_[x.value] != UINT32_MAX) {
          value = labelPos_[x.value];
        } else {
          labelUses_[x.value].push_back(here());
          value = 0;
        }
        break;
    }
    code.push_back(value);
  }
}

void Compiler::emit(Op op, std::initializer_list<Opnd> operands) { emitVec(op, std::vector<Opnd>(operands)); }

Label Compiler::newLabel() {
  labelPos_.push_back(UINT32_MAX);
  labelUses_.emplace_back();
  return Label{static_cast<uint32_t>(labelPos_.size() - 1)};
}

void Compiler::bind(Label l) {
  pendingStatement_ = UINT32_MAX;  // code may jump here: the next op starts an instruction of its own
  labelPos_[l.id] = here();
  for (uint32_t use : labelUses_[l.id]) program_->code[use] = here();
  labelUses_[l.id].clear();
}

// ---------------------------------------------------------------- statements

void Compiler::genStatements(const ast::StmtList& list) {
  for (const auto& s : list)
    if (s) genStatement(*s);
}

void Compiler::genStatement(const ast::Stmt& s) {
  if (s.kind == ast::StmtKind::Empty) return;
  const uint32_t id = static_cast<uint32_t>(program_->statements.size());
  program_->statements.push_back(StatementInfo{s.span, ctx_->pouIndex, here()});
  program_->lineTable.push_back(LineEntry{here(), id});
  emit(Op::STMT, {o(id)});
  ctx_->statementStack.push_back(id);
  const uint32_t tempMark = ctx_->tempTop;
  switch (s.kind) {
    case ast::StmtKind::Assign: genAssign(s); break;
    case ast::StmtKind::Call: genCall(*s.value, nullptr, nullptr, true); break;
    case ast::StmtKind::If: genIf(s); break;
    case ast::StmtKind::Case: genCase(s); break;
    case ast::StmtKind::For: genFor(s); break;
    case ast::StmtKind::While: genWhile(s); break;
    case ast::StmtKind::Repeat: genRepeat(s); break;
    case ast::StmtKind::Exit:
      if (ctx_->loops.empty())
        error(s.span, "EXIT outside a loop");
      else
        emit(Op::JMP, {lab(ctx_->loops.back().exit)});
      break;
    case ast::StmtKind::Continue:
      if (ctx_->loops.empty())
        error(s.span, "CONTINUE outside a loop");
      else
        emit(Op::JMP, {lab(ctx_->loops.back().next)});
      break;
    case ast::StmtKind::Return: emit(Op::JMP, {lab(ctx_->returnLabel)}); break;
    case ast::StmtKind::Empty: break;
  }
  ctx_->tempTop = tempMark;
  ctx_->statementStack.pop_back();
  // Code that follows belongs to the enclosing statement (e.g. the ELSIF test after a branch).
  const uint32_t owner = ctx_->statementStack.empty() ? id : ctx_->statementStack.back();
  program_->lineTable.push_back(LineEntry{here(), owner});
}

void Compiler::genAssign(const ast::Stmt& s) {
  Value target = genExpr(*s.target);
  if (target.isConst) {
    error(s.target->span, "cannot assign to a constant");
    return;
  }
  if (target.place.readOnly) {
    error(s.target->span, "cannot assign to a constant");
    return;
  }
  const Place* dest =
      (target.place.kind == Place::Kind::Direct && target.type && target.type->kind != TypeKind::Subrange)
          ? &target.place
          : nullptr;
  Value v = genExpr(*s.value, target.type, dest);
  store(target.place, std::move(v), s.value->span);
}

void Compiler::genIf(const ast::Stmt& s) {
  Label end = newLabel();
  for (size_t i = 0; i < s.branches.size(); ++i) {
    const ast::IfBranch& b = s.branches[i];
    Label next = newLabel();
    const uint32_t mark = ctx_->tempTop;
    if (b.condition) genCondJump(*b.condition, false, next);
    ctx_->tempTop = mark;
    genStatements(b.body);
    const bool last = i + 1 == s.branches.size() && !s.hasElse;
    if (!last) emit(Op::JMP, {lab(end)});
    bind(next);
  }
  if (s.hasElse) genStatements(s.elseBody);
  bind(end);
}

void Compiler::genCase(const ast::Stmt& s) {
  Value sel = genExpr(*s.value);
  const Type* t = sel.type ? sel.type : (sel.isConst ? literalType(sel.constant) : nullptr);
  const Type* base = t;
  while (base && base->kind == TypeKind::Subrange) base = base->base;
  if (!base || !(base->isInteger() || base->kind == TypeKind::Enum)) {
    error(s.value->span, fmt::format("CASE needs an integer or enumeration selector, not {}", t ? t->name : "?"));
    return;
  }
  const Type* valueType = base->kind == TypeKind::Enum ? base->base : base;
  const uint32_t selOperand = operandAs(sel, t, s.value->span);
  struct Range {
    Int128 lo, hi;
    size_t branch;
    SourceSpan span;
  };
  std::vector<Range> ranges;
  auto labelValue = [&](const ast::Expr& e) -> std::optional<Int128> {
    std::optional<Value> v = constantOf(e, base);
    if (!v || !v->isConst ||
        (v->constant.kind != ConstValue::Kind::Int && v->constant.kind != ConstValue::Kind::Bool)) {
      error(e.span, "a CASE label must be a constant");
      return std::nullopt;
    }
    if (base->kind == TypeKind::Enum && v->type != base) {
      error(e.span, fmt::format("label is not a value of {}", base->name));
      return std::nullopt;
    }
    if (base->kind != TypeKind::Enum && !v->type && !fitsLiteral(v->constant, valueType)) {
      error(e.span, fmt::format("label {} does not fit {}", static_cast<int64_t>(v->constant.i), valueType->name));
      return std::nullopt;
    }
    return v->constant.i;
  };
  for (size_t b = 0; b < s.cases.size(); ++b) {
    for (const ast::CaseLabel& l : s.cases[b].labels) {
      auto lo = labelValue(*l.lower);
      if (!lo) continue;
      auto hi = l.upper ? labelValue(*l.upper) : lo;
      if (!hi) continue;
      if (*hi < *lo) {
        error(l.span, "empty CASE range");
        continue;
      }
      for (const Range& r : ranges)
        if (*lo <= r.hi && r.lo <= *hi) error(l.span, "CASE label overlaps an earlier one");
      ranges.push_back(Range{*lo, *hi, b, l.span});
    }
  }
  Label end = newLabel();
  Label elseLabel = newLabel();
  std::vector<Label> bodies;
  for (size_t b = 0; b < s.cases.size(); ++b) bodies.push_back(newLabel());
  Int128 minV = 0, maxV = 0;
  uint64_t covered = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    minV = i ? std::min(minV, ranges[i].lo) : ranges[i].lo;
    maxV = i ? std::max(maxV, ranges[i].hi) : ranges[i].hi;
    covered += static_cast<uint64_t>(ranges[i].hi - ranges[i].lo + 1);
  }
  const Int128 span = ranges.empty() ? 0 : maxV - minV + 1;
  const Prim p = primOf(*valueType);
  const bool dense = !ranges.empty() && span <= 1024 && span <= 4 * static_cast<Int128>(covered) + 8 &&
                     minV >= INT32_MIN && maxV <= INT32_MAX && ranges.size() >= 4;
  if (dense) {
    uint32_t sel32 = selOperand;
    if (p != Prim::I32) {
      Value sv;
      sv.type = valueType;
      sv.place.kind = Place::Kind::Direct;
      sv.place.type = valueType;
      sv.place.operand = selOperand;
      // Values outside DINT cannot match a label; clamp instead of wrapping into range.
      if (p == Prim::I64 || p == Prim::U64 || p == Prim::U32) {
        const uint32_t wide = operandAs(sv, types_->elementary(TypeKind::LInt), s.value->span, true);
        sel32 = allocTemp(types_->elementary(TypeKind::DInt));
        emit(Op::IDX64, {o(sel32), o(wide)});
      } else {
        sel32 = operandAs(sv, types_->elementary(TypeKind::DInt), s.value->span, true);
      }
    }
    std::vector<Opnd> ops = {o(sel32), o(static_cast<uint32_t>(static_cast<int32_t>(minV))),
                             o(static_cast<uint32_t>(span)), lab(elseLabel)};
    std::vector<Label> table(static_cast<size_t>(span), elseLabel);
    for (const Range& r : ranges)
      for (Int128 v = r.lo; v <= r.hi; ++v) table[static_cast<size_t>(v - minV)] = bodies[r.branch];
    for (Label l : table) ops.push_back(lab(l));
    emitVec(Op::JTAB, ops);
  } else {
    for (const Range& r : ranges) {
      const uint32_t lo = constOperand(valueType, ConstValue::ofInt(r.lo), r.span);
      if (r.lo == r.hi) {
        emit(opFor(Op::JEQ_I8, p), {o(selOperand), o(lo), lab(bodies[r.branch])});
      } else {
        Label skip = newLabel();
        const uint32_t hi = constOperand(valueType, ConstValue::ofInt(r.hi), r.span);
        emit(opFor(Op::JLT_I8, p), {o(selOperand), o(lo), lab(skip)});
        emit(opFor(Op::JLE_I8, p), {o(selOperand), o(hi), lab(bodies[r.branch])});
        bind(skip);
      }
    }
    emit(Op::JMP, {lab(elseLabel)});
  }
  for (size_t b = 0; b < s.cases.size(); ++b) {
    bind(bodies[b]);
    genStatements(s.cases[b].body);
    if (b + 1 < s.cases.size() || s.hasElse) emit(Op::JMP, {lab(end)});
  }
  bind(elseLabel);
  if (s.hasElse) genStatements(s.elseBody);
  bind(end);
}

// A loop whose body has no statement passes no statement boundary per iteration; it ticks the
// watchdog instead, so that an endless empty loop still faults.
static bool hasStatements(const ast::StmtList& body) {
  for (const auto& st : body)
    if (st && st->kind != ast::StmtKind::Empty) return true;
  return false;
}

void Compiler::genFor(const ast::Stmt& s) {
  Value var = genExpr(*s.target);
  if (isPoison(var)) return;
  if (var.isConst && s.target->kind == ast::ExprKind::Name) {
    error(s.target->span, "the FOR control variable cannot be a constant");
    return;
  }
  const Type* t = var.type;
  while (t && t->kind == TypeKind::Subrange) t = t->base;
  if (var.isConst || !t || !t->isInteger() || var.place.kind != Place::Kind::Direct) {
    error(s.target->span, "the FOR control variable must be an integer variable");
    return;
  }
  if (var.place.readOnly) error(s.target->span, "the FOR control variable cannot be a constant");
  store(var.place, genExpr(*s.value, t, var.type == t ? &var.place : nullptr), s.value->span);
  // The end value and step are evaluated once, before the first iteration.
  auto once = [&](const ast::Expr* e, int64_t deflt) -> uint32_t {
    if (!e) return constOperand(t, ConstValue::ofInt(deflt), s.span);
    Value v = genExpr(*e, t);
    if (v.isConst) return operandAs(v, t, e->span);
    Value tmp = tempValue(t);
    store(tmp.place, v, e->span);
    return tmp.place.operand;
  };
  const uint32_t limit = once(s.to.get(), 0);
  const uint32_t step = once(s.by.get(), 1);
  const Prim p = primOf(*t);
  Label body = newLabel(), next = newLabel(), exit = newLabel();
  emit(opFor(Op::FORCHK_I8, p), {o(var.place.operand), o(step), o(limit), lab(exit)});
  bind(body);
  ctx_->loops.push_back({exit, next});
  genStatements(s.body);
  if (!hasStatements(s.body)) emit(Op::TICK, {});
  ctx_->loops.pop_back();
  bind(next);
  emit(opFor(Op::FORNEXT_I8, p), {o(var.place.operand), o(step), o(limit), lab(body)});
  bind(exit);
}

void Compiler::genWhile(const ast::Stmt& s) {
  // Test at the bottom: one jump per iteration instead of two.
  Label body = newLabel(), test = newLabel(), exit = newLabel();
  emit(Op::JMP, {lab(test)});
  bind(body);
  ctx_->loops.push_back({exit, test});
  genStatements(s.body);
  if (!hasStatements(s.body)) emit(Op::TICK, {});
  ctx_->loops.pop_back();
  bind(test);
  const uint32_t mark = ctx_->tempTop;
  genCondJump(*s.value, true, body);
  ctx_->tempTop = mark;
  bind(exit);
}

void Compiler::genRepeat(const ast::Stmt& s) {
  Label body = newLabel(), test = newLabel(), exit = newLabel();
  bind(body);
  ctx_->loops.push_back({exit, test});
  genStatements(s.body);
  if (!hasStatements(s.body)) emit(Op::TICK, {});
  ctx_->loops.pop_back();
  bind(test);
  const uint32_t mark = ctx_->tempTop;
  genCondJump(*s.value, false, body);
  ctx_->tempTop = mark;
  bind(exit);
}

// ---------------------------------------------------------------- bodies

void Compiler::genBody(PouDecl& decl, BodyContext::Mode mode, uint32_t programBase, const Type* instanceType,
                       const std::string& instanceName) {
  resolveFrame(decl);
  BodyContext ctx;
  ctx.decl = &decl;
  ctx.pouIndex = decl.pouIndex;
  ctx.mode = mode;
  ctx.programBase = programBase;
  ctx.instanceType = instanceType;
  ctx.info = &program_->pous[decl.pouIndex];
  for (const Variable& v : decl.frameVars) ctx.frameVars[upperCase(v.name)] = &v;
  ctx.tempTop = decl.frameVarsSize;
  ctx.frameMax = decl.frameVarsSize;
  ctx_ = &ctx;
  ctx.returnLabel = newLabel();

  PouInfo& info = *ctx.info;
  info.entryPc = here();
  info.frameVariables = decl.frameVars;
  info.returnType = decl.returnType;
  info.returnOffset = decl.returnOffset;
  info.instanceType = instanceType;
  info.instanceName = instanceName;
  if (mode == BodyContext::Mode::Program) info.instanceOffset = programBase;
  info.span = decl.ast->span;

  // VAR_EXTERNAL must name a global of the same type.
  for (const ast::VarDecl& d : decl.ast->vars) {
    if (d.section != ast::VarSection::External) continue;
    auto it = globals_.find(upperCase(d.name));
    if (it == globals_.end()) {
      error(d.span, fmt::format("VAR_EXTERNAL '{}' names no global variable", d.name));
      continue;
    }
    resolveGlobal(*it->second);
    const Type* declared = d.type ? resolveType(*d.type) : nullptr;
    const Type* actual = it->second->var.type;
    if (declared && actual && declared != actual && declared->name != actual->name)
      error(d.span,
            fmt::format("VAR_EXTERNAL '{}' is declared {} but the global is {}", d.name, declared->name, actual->name));
  }

  // FB and program bodies initialise their own VAR_TEMP; functions' frames are filled by callers.
  if ((mode == BodyContext::Mode::FbBody || mode == BodyContext::Mode::Program) && decl.frameVarsSize > 0)
    emit(Op::MOVN, {o(operand(Base::Frame, 0)), o(operand(Base::Const, decl.templateConst)), o(decl.frameVarsSize)});

  genStatements(decl.ast->body);
  bind(ctx.returnLabel);
  emit(Op::RET, {});

  info.frameSize = alignUp(ctx.frameMax, 8);
  for (uint32_t at : ctx.calleeFixups) {
    const uint32_t w = program_->code[at];
    if (w == kCalleeBias)
      program_->code[at] = info.frameSize;  // frame delta of a call
    else
      program_->code[at] = operand(Base::Frame, info.frameSize + (operandOffset(w) - kCalleeBias));
  }
  // reach is completed in finishProgram, once every callee's frame size is known
  info.reach = info.frameSize;
  std::vector<uint32_t> callees(ctx.callees.begin(), ctx.callees.end());
  calleesOf_[decl.pouIndex] = std::move(callees);
  ctx_ = nullptr;
}

// Jumps to an unconditional jump go straight to its target (CASE and IF branches end in chains).
static void threadJumps(std::vector<uint32_t>& code) {
  auto finalTarget = [&](uint32_t t) {
    for (int hops = 0; hops < 16 && t < code.size() && code[t] == static_cast<uint32_t>(Op::JMP); ++hops)
      t = code[t + 1];
    return t;
  };
  uint32_t pc = 0;
  while (pc < code.size()) {
    const OpInfo& info = opInfo(static_cast<Op>(code[pc]));
    uint32_t at = pc + 1;
    uint32_t lastK = 0;
    for (char letter : info.operands) {
      if (letter == '*') {
        for (uint32_t i = 0; i < lastK; ++i, ++at) code[at] = finalTarget(code[at]);
        continue;
      }
      if (letter == 'j') code[at] = finalTarget(code[at]);
      if (letter == 'k') lastK = code[at];
      ++at;
    }
    pc = at;
  }
}

void Compiler::finishProgram() {
  Program& p = *program_;
  threadJumps(p.code);
  for (auto& [pou, callees] : calleesOf_) {
    uint32_t largest = 0;
    for (uint32_t c : callees) largest = std::max(largest, p.pous[c].frameSize);
    p.pous[pou].reach = p.pous[pou].frameSize + largest;
  }
  // Stable: of the entries that share a pc, the one pushed last describes the code there.
  std::stable_sort(p.lineTable.begin(), p.lineTable.end(),
                   [](const LineEntry& a, const LineEntry& b) { return a.pc < b.pc; });
  // Keep the last entry for each pc: it describes the code that actually starts there.
  std::vector<LineEntry> dedup;
  for (const LineEntry& e : p.lineTable) {
    if (!dedup.empty() && dedup.back().pc == e.pc)
      dedup.back() = e;
    else
      dedup.push_back(e);
  }
  p.lineTable = std::move(dedup);

  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const SourceFile& f : p.sources.files()) {
    const uint64_t n = f.path.size(), m = f.text.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, f.path.data(), f.path.size());
    XXH3_128bits_update(state, &m, sizeof m);
    XXH3_128bits_update(state, f.text.data(), f.text.size());
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  p.hash = fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

// ---------------------------------------------------------------- driver

std::shared_ptr<const Program> Compiler::run() {
  for (FileId id = 0; id < sources_.size(); ++id) {
    units_.push_back(std::make_unique<ast::CompilationUnit>(parseFile(sources_, id, diags_)));
    collect(*units_.back());
  }
  if (diags_.hasErrors()) {
    // Keep checking declarations and bodies that parsed, so one run reports more errors; but a
    // syntax error often cascades, so stop at the parse stage.
    return nullptr;
  }
  layoutImage();

  // Every callable body gets its POU index before any body is generated, so calls can refer to it.
  auto addPou = [&](PouDecl& d, PouKind kind) {
    d.pouIndex = static_cast<uint32_t>(program_->pous.size());
    PouInfo info;
    info.name = d.name;
    info.kind = kind;
    program_->pous.push_back(info);
  };
  for (auto& [key, d] : pous_) {
    (void)key;
    if (d->kind == PouKind::Function || d->kind == PouKind::FunctionBlock) {
      addPou(*d, d->kind);
      if (d->kind == PouKind::FunctionBlock) layoutPou(*d);
      for (auto& [mkey, m] : d->methods) {
        (void)mkey;
        addPou(*m, PouKind::Method);
      }
    }
  }
  // Programs: one body per instance, addressed absolutely.
  std::vector<PouDecl*> instanceBodies;
  for (ProgramInstanceInfo& inst : program_->instances) {
    PouDecl* type = findPou(inst.type->name);
    auto body = std::make_unique<PouDecl>(*type);
    body->frameResolved = false;
    body->frameVars.clear();
    body->frameVarDecls.clear();
    addPou(*body, PouKind::Program);
    inst.pou = body->pouIndex;
    instanceBodies.push_back(body.get());
    instanceDecls_.push_back(std::move(body));
  }
  if (diags_.hasErrors()) return nullptr;

  auto collectConstants = [&](PouDecl& d) {
    PouDecl* outer = layoutDecl_;
    layoutDecl_ = &d;
    for (const ast::VarDecl& v : d.ast->vars)
      if (v.constant && v.type) {
        const Type* t = resolveType(*v.type);
        if (t) foldLocalConstant(d, v, t);
      }
    layoutDecl_ = outer;
  };

  for (auto& [key, d] : pous_) {
    (void)key;
    if (d->kind == PouKind::Function) {
      collectConstants(*d);
      genBody(*d, BodyContext::Mode::Function, 0, nullptr, "");
    } else if (d->kind == PouKind::FunctionBlock) {
      collectConstants(*d);
      Type* t = layoutPou(*d);
      if (!t) continue;
      genBody(*d, BodyContext::Mode::FbBody, 0, t, "");
      program_->pous[d->pouIndex].instanceType = t;
      for (auto& [mkey, m] : d->methods) {
        (void)mkey;
        collectConstants(*m);
        genBody(*m, BodyContext::Mode::Method, 0, t, "");
      }
    }
  }
  for (size_t i = 0; i < program_->instances.size(); ++i) {
    ProgramInstanceInfo& inst = program_->instances[i];
    PouDecl& body = *instanceBodies[i];
    collectConstants(body);
    genBody(body, BodyContext::Mode::Program, inst.offset, inst.type, inst.name);
  }
  // Task entry code: run the task's programs in order, then end the cycle.
  for (TaskInfo& task : program_->tasks) {
    PouInfo info;
    info.name = task.name;
    info.kind = PouKind::TaskEntry;
    info.entryPc = here();
    const uint32_t index = static_cast<uint32_t>(program_->pous.size());
    program_->pous.push_back(info);
    task.entryPc = here();
    for (uint32_t inst : task.instances) {
      const ProgramInstanceInfo& pi = program_->instances[inst];
      emit(Op::CALLI, {o(pi.pou), o(0), o(operand(Base::Image, pi.offset))});
    }
    emit(Op::HALT, {});
    calleesOf_[index] = {};
  }
  for (size_t i = 0; i < labelUses_.size(); ++i)
    if (!labelUses_[i].empty()) error(SourceSpan{}, "internal error: unbound label");
  if (diags_.hasErrors()) return nullptr;
  finishProgram();
  return program_;
}

}  // namespace scanback::compiler

namespace scanback {

std::shared_ptr<const Program> compileProject(const SourceSet& sources, Diagnostics& diagnostics,
                                              const CompileOptions& options) {
  compiler::Compiler c(sources, diagnostics, options);
  return c.run();
}

SourceSet loadSourceFiles(const std::vector<std::string>& paths, Diagnostics& diagnostics) {
  SourceSet set;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      diagnostics.error(SourceSpan{}, fmt::format("cannot read '{}'", path));
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    set.add(path, text.str());
  }
  return set;
}

}  // namespace scanback
