// Unit tests (TEST_PROGRAM, TEST_FUNCTION_BLOCK; `scanback test`): the task that runs one test
// (CompileOptions::test), and the code of the assertions and of ADVANCE_TIME.
#include <fmt/format.h>

#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

// One task, named after the test, runs one instance of the test's function block in each cycle
// (`scanback test` runs one). The project's tasks and program instances are left out: a test
// exercises functions and function blocks, and starts from the initial image.
void Compiler::setupTestTask() {
  PouDecl* decl = findPou(options_.test);
  if (!decl || !decl->ast || !decl->ast->test) {
    error(SourceSpan{}, fmt::format("there is no TEST_PROGRAM or TEST_FUNCTION_BLOCK named '{}'", options_.test));
    return;
  }
  Type* layout = layoutPou(*decl);
  if (!layout) return;
  TaskInfo task;
  task.name = decl->name;
  task.span = decl->ast->span;
  task.intervalNs = 10'000'000;
  task.priority = 0;
  program_->tasks.push_back(task);
  ProgramInstanceInfo instance;
  instance.name = decl->name;
  instance.type = layout;
  instance.task = 0;
  testInstance_ = static_cast<uint32_t>(program_->instances.size());
  instanceIndex_[upperCase(decl->name)] = testInstance_;
  program_->instances.push_back(instance);
  instanceSpans_.push_back(task.span);
  program_->tasks.back().instances.push_back(testInstance_);
}

// The operands once, in order; then the condition; only when it is FALSE the texts and AFAIL,
// which ends the cycle with the assertion's fault at this statement.
Value Compiler::lowerAssertion(const sema::Expr& e) {
  const sema::AssertInfo& a = *e.assertion;
  std::vector<Value> outer = std::move(assertOperands_);
  assertOperands_.clear();
  for (const sema::Expr* x : a.operands) {
    if (x->kind == sema::ExprKind::Constant) {
      assertOperands_.push_back(lower(*x));
      continue;
    }
    assertOperands_.push_back(directValue(x->type, lowerRead(*x)));
  }
  const Label holds = newLabel();
  lowerCondJump(*a.condition, true, holds);
  std::vector<Opnd> operands{o(assertWord(a.kind, a.quoted, a.wide))};
  for (const sema::Expr* text : a.texts) operands.push_back(o(lowerRead(*text)));
  while (operands.size() < 4) operands.push_back(o(0));  // texts the kind has not: never read
  emitVec(Op::AFAIL, operands);
  bind(holds);
  assertOperands_ = std::move(outer);
  return Value{};
}

void Compiler::lowerAdvanceTime(const sema::Expr& e) { emit(Op::ADVTIME, {o(lowerRead(*e.a[0]))}); }

}  // namespace scanback::compiler
