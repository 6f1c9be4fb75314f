// Statements, POU bodies, task entry code, code emission and the compiler driver.
#include <fmt/format.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "vm/base/int128.h"
#include "vm/base/out_of_memory.h"
#include "vm/bytecode/limits.h"
#include "vm/compiler/compiler_impl.h"
#include "vm/sema/reads.h"
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

SourceSpan Compiler::currentSpan() const {
  if (!ctx_) return SourceSpan{};
  if (!ctx_->statementStack.empty()) return program_->statements[ctx_->statementStack.back()].span;
  return ctx_->info ? ctx_->info->span : SourceSpan{};
}

void Compiler::lowerStatements(const sema::StmtList& list) {
  for (const sema::Stmt* s : list) lowerStatement(*s);
}

void Compiler::lowerSource(const ast::Stmt& s, int loops, const std::function<void()>& beforeCode) {
  // This statement's IR (its nested lists' not included) in the arena of its depth, reused from
  // statement to statement: the nodes' memory is taken once, not for each statement.
  if (arenaDepth_ == arenas_.size()) arenas_.push_back(std::make_unique<sema::Arena>());
  sema::Arena& arena = *arenas_[arenaDepth_];
  arena.reset();
  ++arenaDepth_;
  struct Leave {
    size_t& depth;
    ~Leave() { --depth; }
  } leave{arenaDepth_};
  sema::Analyzer::Options options;
  // Once there is an error no code is made: the statement is analysed whole, for its errors.
  const bool lowering = !diags_.hasErrors();
  options.deferLists = lowering;
  const sema::Stmt* st = sema::Analyzer(*ctx_->scope, diags_, arena, options).listStatement(s, loops);
  if (!st || !lowering) return;
  if (diags_.hasErrors()) {
    checkDeferred(*st);
    return;
  }
  if (beforeCode) beforeCode();
  lowerStatement(*st);
}

void Compiler::checkDeferred(const sema::Stmt& s) {
  auto check = [&](const ast::StmtList* list) {
    if (list)
      for (const std::unique_ptr<ast::Stmt>& nested : *list)
        if (nested) lowerSource(*nested, s.listLoops, nullptr);
  };
  for (const sema::IfBranch& b : s.branches) check(b.source);
  check(s.elseSource);
  check(s.bodySource);
}

void Compiler::lowerList(const sema::Stmt& owner, const sema::StmtList& analysed, const ast::StmtList* source) {
  if (!source) return lowerStatements(analysed);
  for (const std::unique_ptr<ast::Stmt>& s : *source)
    if (s) lowerSource(*s, owner.listLoops, nullptr);
}

bool Compiler::listEmpty(const sema::StmtList& analysed, const ast::StmtList* source) {
  if (!source) return analysed.empty();
  return std::none_of(source->begin(), source->end(),
                      [](const std::unique_ptr<ast::Stmt>& s) { return s && s->kind != ast::StmtKind::Empty; });
}

void Compiler::lowerStatement(const sema::Stmt& s) {
  const uint32_t id = static_cast<uint32_t>(program_->statements.size());
  program_->statements.push_back(StatementInfo{s.span, ctx_->pouIndex, here()});
  if (reads_) reads_->push_back(sema::readsOf(s));
  program_->lineTable.push_back(LineEntry{here(), id});
  emit(Op::STMT, {o(id)});
  ctx_->statementStack.push_back(id);
  const uint32_t tempMark = ctx_->tempTop;
  const bool outerIndexesAtUse = indexesAtUse_;
  indexesAtUse_ = !callsUserCode(s);
  switch (s.kind) {
    case sema::StmtKind::Assign: {
      const Value target = lower(*s.target);
      const Place* dest =
          target.place.kind == Place::Kind::Direct && target.type && target.type->kind != TypeKind::Subrange
              ? &target.place
              : nullptr;
      store(target.place, lower(*s.value, dest));
      break;
    }
    case sema::StmtKind::Call: lower(*s.value); break;
    case sema::StmtKind::If: lowerIf(s); break;
    case sema::StmtKind::Case: lowerCase(s); break;
    case sema::StmtKind::For: lowerFor(s); break;
    case sema::StmtKind::While:
    case sema::StmtKind::Repeat: {
      // The test is at the bottom (WHILE jumps to it first): one jump per iteration instead of two.
      const bool isWhile = s.kind == sema::StmtKind::While;
      Label body = newLabel(), test = newLabel(), exit = newLabel();
      if (isWhile) emit(Op::JMP, {lab(test)});
      bind(body);
      ctx_->loops.push_back({exit, test});
      lowerList(s, s.body, s.bodySource);
      // A loop whose body has no statement passes no statement boundary per iteration; it ticks
      // the watchdog instead, so that an endless empty loop still faults.
      if (listEmpty(s.body, s.bodySource)) emit(Op::TICK, {});
      ctx_->loops.pop_back();
      bind(test);
      const uint32_t mark = ctx_->tempTop;
      lowerCondJump(*s.value, isWhile, body);
      ctx_->tempTop = mark;
      bind(exit);
      break;
    }
    case sema::StmtKind::Exit: emit(Op::JMP, {lab(ctx_->loops.back().exit)}); break;
    case sema::StmtKind::Continue: emit(Op::JMP, {lab(ctx_->loops.back().next)}); break;
    case sema::StmtKind::Return: emit(Op::JMP, {lab(ctx_->returnLabel)}); break;
  }
  ctx_->tempTop = tempMark;
  indexesAtUse_ = outerIndexesAtUse;
  ctx_->statementStack.pop_back();
  // Code that follows belongs to the enclosing statement (e.g. the ELSIF test after a branch).
  const uint32_t owner = ctx_->statementStack.empty() ? id : ctx_->statementStack.back();
  program_->lineTable.push_back(LineEntry{here(), owner});
}

void Compiler::lowerIf(const sema::Stmt& s) {
  Label end = newLabel();
  for (size_t i = 0; i < s.branches.size(); ++i) {
    const sema::IfBranch& b = s.branches[i];
    Label next = newLabel();
    const uint32_t mark = ctx_->tempTop;
    lowerCondJump(*b.condition, false, next);
    ctx_->tempTop = mark;
    lowerList(s, b.body, b.source);
    const bool last = i + 1 == s.branches.size() && !s.hasElse;
    if (!last) emit(Op::JMP, {lab(end)});
    bind(next);
  }
  if (s.hasElse) lowerList(s, s.elseBody, s.elseSource);
  bind(end);
}

void Compiler::lowerCase(const sema::Stmt& s) {
  const Type* valueType = s.valueType;
  const uint32_t selOperand = lowerRead(*s.value);
  const std::vector<sema::CaseRange>& ranges = s.ranges;
  Label end = newLabel();
  Label elseLabel = newLabel();
  std::vector<Label> bodies;
  for (size_t b = 0; b < s.branches.size(); ++b) bodies.push_back(newLabel());
  Int128 minV = 0, maxV = 0;
  uint64_t covered = 0;
  for (size_t i = 0; i < ranges.size(); ++i) {
    minV = i ? std::min(minV, ranges[i].lower) : ranges[i].lower;
    maxV = i ? std::max(maxV, ranges[i].upper) : ranges[i].upper;
    covered += static_cast<uint64_t>(ranges[i].upper - ranges[i].lower + 1);
  }
  const Int128 span = ranges.empty() ? 0 : maxV - minV + 1;
  const Prim p = primOf(*valueType);
  const bool dense = !ranges.empty() && span <= 1024 && span <= 4 * static_cast<Int128>(covered) + 8 &&
                     minV >= INT32_MIN && maxV <= INT32_MAX && ranges.size() >= 4;
  if (dense) {
    uint32_t sel32 = selOperand;
    if (p != Prim::I32) {
      const Value sv = directValue(valueType, selOperand);
      // Values outside DINT cannot match a label; clamp instead of wrapping into range.
      const Type* dint = types_->elementary(TypeKind::DInt);
      auto cvt = [&](const Value& v, const Type* to) {
        const uint32_t src = readOperand(v, s.span);
        const Value r = tempValue(to);
        emit(static_cast<Op>(static_cast<uint32_t>(Op::CVT_I8_I8) +
                             static_cast<uint32_t>(primOf(*v.type)) * kPrimCount + static_cast<uint32_t>(primOf(*to))),
             {o(r.place.operand), o(src)});
        return r;
      };
      if (p == Prim::I64 || p == Prim::U64 || p == Prim::U32) {
        const Type* lint = types_->elementary(TypeKind::LInt);
        // Same width: the bits read as LINT; UDINT widens first.
        const uint32_t wide = p == Prim::U32 ? readOperand(cvt(sv, lint), s.span) : selOperand;
        sel32 = allocTemp(dint);
        emit(Op::IDX64, {o(sel32), o(wide)});
      } else {
        sel32 = readOperand(cvt(sv, dint), s.span);
      }
    }
    std::vector<Opnd> ops = {o(sel32), o(static_cast<uint32_t>(static_cast<int32_t>(minV))),
                             o(static_cast<uint32_t>(span)), lab(elseLabel)};
    std::vector<Label> table(static_cast<size_t>(span), elseLabel);
    for (const sema::CaseRange& r : ranges)
      for (Int128 v = r.lower; v <= r.upper; ++v) table[static_cast<size_t>(v - minV)] = bodies[r.branch];
    for (Label l : table) ops.push_back(lab(l));
    emitVec(Op::JTAB, ops);
  } else {
    for (const sema::CaseRange& r : ranges) {
      const uint32_t lo = constOperand(valueType, ConstValue::ofInt(r.lower), r.span);
      if (r.lower == r.upper) {
        emit(opFor(Op::JEQ_I8, p), {o(selOperand), o(lo), lab(bodies[r.branch])});
      } else {
        Label skip = newLabel();
        const uint32_t hi = constOperand(valueType, ConstValue::ofInt(r.upper), r.span);
        emit(opFor(Op::JLT_I8, p), {o(selOperand), o(lo), lab(skip)});
        emit(opFor(Op::JLE_I8, p), {o(selOperand), o(hi), lab(bodies[r.branch])});
        bind(skip);
      }
    }
    emit(Op::JMP, {lab(elseLabel)});
  }
  for (size_t b = 0; b < s.branches.size(); ++b) {
    bind(bodies[b]);
    lowerList(s, s.branches[b].body, s.branches[b].source);
    if (b + 1 < s.branches.size() || s.hasElse) emit(Op::JMP, {lab(end)});
  }
  bind(elseLabel);
  if (s.hasElse) lowerList(s, s.elseBody, s.elseSource);
  bind(end);
}

void Compiler::lowerFor(const sema::Stmt& s) {
  const Value var = lower(*s.target);
  const Type* t = sema::valueBase(var.type);
  store(var.place, lower(*s.value, var.type == t ? &var.place : nullptr));
  // The end value and step are evaluated once, before the first iteration.
  auto once = [&](const sema::Expr& e) -> uint32_t {
    if (e.kind == sema::ExprKind::Constant) return readOperand(lower(e), e.span);
    Value v = lowerBase(e);
    const Value tmp = tempValue(t);
    store(tmp.place, converted(e, std::move(v)));
    return tmp.place.operand;
  };
  const uint32_t limit = once(*s.limit);
  const uint32_t step = once(*s.step);
  const Prim p = primOf(*t);
  Label body = newLabel(), next = newLabel(), exit = newLabel();
  emit(opFor(Op::FORCHK_I8, p), {o(var.place.operand), o(step), o(limit), lab(exit)});
  bind(body);
  const uint32_t bodyPc = here();
  ctx_->loops.push_back({exit, next});
  lowerList(s, s.body, s.bodySource);
  // A loop whose body has no statement passes no statement boundary per iteration; it ticks the
  // watchdog instead, so that an endless empty loop still faults.
  if (listEmpty(s.body, s.bodySource)) emit(Op::TICK, {});
  ctx_->loops.pop_back();
  bind(next);
  const bool runsAhead = bodyRunsAhead(bodyPc, var.place.operand, p);
  if (s.step->kind == sema::ExprKind::Constant && s.step->constant.i == 1)
    emit(runsAhead ? (p == Prim::I16 ? Op::FORINCE_I16 : Op::FORINCE_I32) : opFor(Op::FORINC_I8, p),
         {o(var.place.operand), o(limit), lab(body)});  // no step to read
  else
    emit(runsAhead ? (p == Prim::I16 ? Op::FORNEXTE_I16 : Op::FORNEXTE_I32) : opFor(Op::FORNEXT_I8, p),
         {o(var.place.operand), o(step), o(limit), lab(body)});
  bind(exit);
}

// A FOR body that its back edge can run ahead (FORINCE/FORNEXTE, runLoopAhead in the VM): one
// statement that is one element store at the control variable (flags[i] := TRUE), or a body that
// starts with a jump on a BOOL element at the control variable straight to the back edge
// (IF flags[i] THEN ... END_IF), with an INT or DINT control variable as the index's width.
bool Compiler::bodyRunsAhead(uint32_t bodyPc, uint32_t controlVariable, Prim p) const {
  if (p != Prim::I16 && p != Prim::I32) return false;
  const auto& code = program_->code;
  const uint32_t end = here();
  if (bodyPc + 2 > end || !isFused(static_cast<Op>(code[bodyPc]))) return false;
  const Op op = unfused(static_cast<Op>(code[bodyPc]));
  const bool wide = p == Prim::I32;
  const bool store = wide ? (op == Op::EST1 || op == Op::EST2 || op == Op::EST4 || op == Op::EST8)
                          : (op == Op::EST1_X16 || op == Op::EST2_X16 || op == Op::EST4_X16 || op == Op::EST8_X16);
  if (store) return end == bodyPc + 7 && code[bodyPc + 3] == controlVariable;
  const bool jump = op == (wide ? Op::JFE_X32 : Op::JFE_X16);
  // [S_JFE s, array, index, k, lower, count, target]: the target is the back edge (here).
  return jump && bodyPc + 8 <= end && code[bodyPc + 3] == controlVariable && code[bodyPc + 4] == 0 &&
         code[bodyPc + 7] == end;
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
  for (const Variable& v : decl.frameVars) ctx.frameVars.emplace(upperCase(v.name), &v);
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
  info.endSpan = decl.ast->endSpan;

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

  // The code that starts the body, before its first statement.
  auto prologue = [&] {
    templateOf(decl);
    // FB and program bodies initialise their own VAR_TEMP; functions' frames are filled by callers.
    if ((mode == BodyContext::Mode::FbBody || mode == BodyContext::Mode::Program) && decl.frameVarsSize > 0)
      emit(Op::MOVN, {o(operand(Base::Frame, 0)), o(operand(Base::Const, decl.templateConst)), o(decl.frameVarsSize)});
    // A method a dynamic call may reach initialises its own locals: that caller fills only the
    // parameters (oop.cpp).
    const bool hasLocals = std::any_of(decl.frameVars.begin(), decl.frameVars.end(), [](const Variable& v) {
      return v.section == VarSection::Var || v.section == VarSection::Temp;
    });
    if (mode == BodyContext::Mode::Method && decl.ownerDecl && decl.ownerDecl->polymorphic && hasLocals)
      emit(Op::MOVN,
           {o(operand(Base::Frame, decl.paramsSize)), o(operand(Base::Const, decl.templateConst + decl.paramsSize)),
            o(decl.frameVarsSize - decl.paramsSize)});
  };
  // The semantic pass and the code for its IR, a statement at a time: the IR of one statement is
  // held at once, not the whole body's (a body of a million statements held gigabytes). Code is
  // made only while the program has no error. A frame that would pass the limit lacks variables:
  // its body is not analysed (it would only report them).
  BodyScope scope(*this, ctx);
  ctx.scope = &scope;
  bool started = false;
  const std::function<void()> start = [&] {
    if (!started) prologue();
    started = true;
  };
  if (!decl.frameFailed)
    for (const std::unique_ptr<ast::Stmt>& s : decl.ast->body)
      if (s) lowerSource(*s, 0, start);
  if (!started && !diags_.hasErrors()) prologue();
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
  p.areas = buildProgramAreas(p);

  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const SourceFile& f : p.sources.files()) {
    const uint64_t n = f.path.size(), m = f.text.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, f.path.data(), f.path.size());
    XXH3_128bits_update(state, &m, sizeof m);
    XXH3_128bits_update(state, f.text.data(), f.text.size());
  }
  if (!p.test.empty()) {  // a test's program differs from the project's on the same sources
    const uint64_t n = p.test.size();
    XXH3_128bits_update(state, &n, sizeof n);
    XXH3_128bits_update(state, p.test.data(), p.test.size());
  }
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  p.hash = fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

// ---------------------------------------------------------------- driver

std::shared_ptr<const Program> Compiler::run() {
  // The VM's memory is the image and the stack; both stay far below what a REF's 32 bits reach.
  if (options_.stackSize > kMaxImageBytes) {
    error(SourceSpan{},
          fmt::format("a stack of {} bytes is above scanback's limit of {}", options_.stackSize, imageLimitText()));
    return nullptr;
  }
  for (FileId id = 0; id < sources_.size(); ++id) {
    units_.push_back(std::make_unique<ast::CompilationUnit>(parseFile(sources_, id, diags_)));
    collect(*units_.back());
  }
  collectProgramBlocks();
  if (!diags_.hasErrors()) resolveHierarchy();
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
    byPouIndex_.push_back(&d);
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
    // A program's ACTIONs: methods of its layout, run on whichever instance calls them.
    if (d->kind == PouKind::Program)
      for (auto& [mkey, m] : d->methods) {
        (void)mkey;
        addPou(*m, PouKind::Method);
      }
  }
  for (auto& [key, d] : programBlocks_) {
    (void)key;
    addPou(*d, PouKind::FunctionBlock);
    layoutPou(*d);
    for (auto& [mkey, m] : d->methods) {
      (void)mkey;
      addPou(*m, PouKind::Method);
    }
  }
  for (auto& proto : prototypeDecls_) addPou(*proto, PouKind::Method);
  checkHierarchy();
  // Programs: one body per instance, addressed absolutely.
  std::vector<PouDecl*> instanceBodies;
  for (ProgramInstanceInfo& inst : program_->instances) {
    PouDecl* type = findPou(inst.type->name);
    if (type->ast && type->ast->test) {  // CompileOptions::test: the test's function block body, on its instance
      inst.pou = type->pouIndex;
      instanceBodies.push_back(nullptr);
      continue;
    }
    auto body = std::make_unique<PouDecl>(*type);
    body->frameResolved = false;
    body->frameFailed = false;
    body->frameVars.clear();
    body->frameVarDecls.clear();
    body->templateConst = UINT32_MAX;
    addPou(*body, PouKind::Program);
    inst.pou = body->pouIndex;
    instanceBodies.push_back(body.get());
    instanceDecls_.push_back(std::move(body));
  }
  // Bodies are analysed even after a declaration error, so that one run reports their errors too
  // (no code is generated once there is an error).

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
    } else if (d->kind == PouKind::Program && !d->methods.empty()) {
      Type* t = layoutPou(*d);
      if (!t) continue;
      for (auto& [mkey, m] : d->methods) {
        (void)mkey;
        genBody(*m, BodyContext::Mode::Method, 0, t, "");
      }
    }
  }
  for (auto& proto : prototypeDecls_) genPrototype(*proto);
  for (size_t i = 0; i < program_->instances.size(); ++i) {
    ProgramInstanceInfo& inst = program_->instances[i];
    if (!instanceBodies[i]) continue;
    PouDecl& body = *instanceBodies[i];
    collectConstants(body);
    genBody(body, BodyContext::Mode::Program, inst.offset, inst.type, inst.name);
  }
  // Programs that tests declare instances of, as blocks: after the programs' own bodies, whose
  // errors are the same and are reported once (no code is generated once there is an error).
  for (auto& [key, d] : programBlocks_) {
    (void)key;
    if (diags_.hasErrors()) break;
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
  resolveAllTypes();
  if (diags_.hasErrors()) return nullptr;
  buildSymbols();
  buildDispatch();
  finishProgram();
  return program_;
}

// The names of the program, kept with it (Program::symbols) for everything that resolves names
// after compiling: the debugger, stimulus files, `trace why`, the DAP server.
void Compiler::buildSymbols() {
  SymbolTable& table = program_->symbols;
  for (uint32_t i = 0; i < program_->globals.size(); ++i) {
    const std::string key = upperCase(program_->globals[i].name);
    table.globals.emplace(key, i);
    if (auto it = globals_.find(key); it != globals_.end() && !it->second->list.empty())
      table.globalListMembers.emplace(i, GlobalListMember{it->second->list, it->second->qualifiedOnly});
    if (auto it = globals_.find(key); it != globals_.end() && it->second->constant)
      table.globalConstants.emplace(i, *it->second->constant);
  }
  table.instances.insert(instanceIndex_.begin(), instanceIndex_.end());
  table.globalLists.insert(globalLists_.begin(), globalLists_.end());
  for (const auto& [key, type] : resolvedTypes_)
    if (type) table.types.emplace(key, type);
  table.enumValues.insert(enumValues_.begin(), enumValues_.end());
  for (const auto& [key, d] : pous_) {
    PouSymbol symbol{d->kind, UINT32_MAX, nullptr};
    if (d->kind == PouKind::Function || d->kind == PouKind::FunctionBlock) symbol.pou = d->pouIndex;
    if (d->kind != PouKind::Function) symbol.type = d->instanceType;
    table.pous.emplace(key, symbol);
    // Inherited methods are listed under the extending block too (the nearest one wins).
    for (PouDecl* owner = d.get(); owner && d->instanceType; owner = owner->base)
      for (const auto& [methodKey, m] : owner->methods)
        table.methods.emplace(std::make_pair(d->instanceType, methodKey), m->pouIndex);
  }
  for (const auto& [key, itf] : interfaces_)
    for (const Type* t : itf->type->interfaces)
      if (InterfaceDecl* owner = interfaceOf(t))
        for (const auto& [methodKey, m] : owner->methods)
          table.methods.emplace(std::make_pair(static_cast<const Type*>(itf->type), methodKey), m->pouIndex);
  for (uint32_t i = 0; i < byPouIndex_.size(); ++i)
    for (const auto& [key, k] : byPouIndex_[i]->constants) program_->pous[i].constants.emplace(key, k.value);
}

}  // namespace scanback::compiler

namespace scanback {

std::shared_ptr<const Program> compileProject(const SourceSet& sources, Diagnostics& diagnostics,
                                              const CompileOptions& options) {
  // The image, types and frames are limited (vm/bytecode/limits.h), but not the source: a large
  // one may still not fit in the memory there is.
  return allocating(
      [&] {
        compiler::Compiler c(sources, diagnostics, options);
        return c.run();
      },
      0,
      [&] {
        uint64_t bytes = 0;
        for (const SourceFile& f : sources.files()) bytes += f.text.size();
        return sources.size() == 1 ? fmt::format("compiling {} ({} bytes)", sources.file(0).path, bytes)
                                   : fmt::format("compiling {} files ({} bytes)", sources.size(), bytes);
      });
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
