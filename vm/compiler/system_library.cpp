// The types of TwinCAT's system library (Tc2_System) that libraries written for TwinCAT use
// without declaring them, built as the parser builds their declarations: every library exported
// from TwinCAT has a global ST_LibVersion (Beckhoff Infosys, "ST_LibVersion"). Sema knows the
// ones that are another type under a new name (T_MaxString, PVOID: sema/expressions.cpp).
#include "vm/compiler/compiler_impl.h"

namespace scanback::compiler {

namespace {

ast::TypeRefPtr named(const char* name) {
  auto t = std::make_unique<ast::TypeRef>();
  t->kind = ast::TypeRefKind::Named;
  t->name = name;
  return t;
}

ast::TypeRefPtr string(uint64_t capacity) {
  auto t = std::make_unique<ast::TypeRef>();
  t->kind = ast::TypeRefKind::String;
  t->length = std::make_unique<ast::Expr>(ast::ExprKind::IntLiteral, SourceSpan{});
  t->length->intValue = capacity;
  return t;
}

void field(ast::TypeRef& s, const char* name, ast::TypeRefPtr type) {
  ast::VarDecl f;
  f.name = name;
  f.type = std::move(type);
  s.fields.push_back(std::move(f));
}

}  // namespace

const ast::TypeDecl* Compiler::systemLibraryType(const std::string& upperName) {
  if (upperName != "ST_LIBVERSION") return nullptr;
  // No source position: the type is in no file of the project.
  auto d = std::make_unique<ast::TypeDecl>();
  d->name = "ST_LibVersion";
  d->type = std::make_unique<ast::TypeRef>();
  d->type->kind = ast::TypeRefKind::Struct;
  for (const char* n : {"iMajor", "iMinor", "iBuild", "iRevision"}) field(*d->type, n, named("UINT"));
  field(*d->type, "nFlags", named("DWORD"));
  field(*d->type, "sVersion", string(23));
  systemTypes_.push_back(std::move(d));
  return systemTypes_.back().get();
}

}  // namespace scanback::compiler
