// Internals of the compiler, shared by its translation units:
//   declarations.cpp       collecting declarations, resolving types, laying out the image, initial values
//   scopes.cpp             the semantic pass's view of the declarations (vm/sema/scope.h), resolved on demand
//   lower_expressions.cpp  code for the typed IR of expressions and conditions
//   lower_functions.cpp    code for standard functions and calls
//   statements.cpp         code for statements and POU bodies, task entry code, the symbol table, the driver
//
// Each POU body is analysed by the semantic pass (vm/sema) into typed IR, then lowered here to
// bytecode; the debugger lowers the same IR to its evaluation nodes (vm/debug).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "vm/base/int128.h"
#include "vm/bytecode/limits.h"
#include "vm/bytecode/open_arrays.h"
#include "vm/bytecode/program.h"
#include "vm/compiler/compiler.h"
#include "vm/sema/analyzer.h"
#include "vm/syntax/ast.h"

namespace scanback::compiler {

// Where a value lives in memory.
struct Place {
  enum class Kind : uint8_t { Direct, Bit, BitIndirect, Indirect, Element };
  Kind kind = Kind::Direct;
  const Type* type = nullptr;
  uint32_t operand = 0;  // Direct: the value; Bit: the containing word; Indirect, BitIndirect: holds a REF
                         // (BitIndirect: to the containing word);
                         // Element: the array's first byte (a Direct operand)
  uint32_t offset = 0;   // Indirect: added to the REF
  uint8_t bit = 0;       // Bit, BitIndirect: index
  uint8_t width = 1;     // Bit, BitIndirect: bytes of the containing word
  uint32_t index = 0;    // Element: operand holding the I32 index
  int32_t lower = 0;     // Element: lower bound
  uint32_t count = 0;    // Element: element count

  // Element, lower_elements.cpp: `index` holds an INT (indexPrim I16), and/or the index is
  // `index` + indexAdd wrapped at indexPrim's width.
  Prim indexPrim = Prim::I32;
  bool indexAdds = false;
  uint32_t indexAdd = 0;
};

// The result of lowering an expression: a constant (possibly untyped: type == nullptr for
// ANY_INT/ANY_REAL literals) or a place.
struct Value {
  const Type* type = nullptr;
  bool isConst = false;
  ConstValue constant;
  Place place;
};

struct Label {
  uint32_t id = UINT32_MAX;
};

// An operand word as emitted; fixed up when the POU or the label is complete.
struct Opnd {
  enum class Fix : uint8_t { None, CalleeFrame, Label };
  uint32_t value = 0;
  Fix fix = Fix::None;
};

// The value of a declaration's constant expression (type null: an untyped literal).
struct Folded {
  const Type* type = nullptr;
  ConstValue value;
};

// A CONSTANT variable of a POU whose value is known at compile time.
struct LocalConstant {
  Variable variable;  // its name and type (for declaration scopes, where no layout exists yet)
  ConstValue value;
};

struct PouDecl;

// An INTERFACE (oop.cpp): its value type and its method prototypes (accessors of its properties
// are methods named "NAME.GET" and "NAME.SET").
struct InterfaceDecl {
  const ast::Pou* ast = nullptr;
  std::string name;
  Type* type = nullptr;        // the interface value (Type::isInterface)
  Type* descriptor = nullptr;  // type->base
  std::vector<InterfaceDecl*> extends;
  std::map<std::string, PouDecl*> methods;  // its own prototypes, by upper-case key
  int state = 0;                            // 0 unresolved, 1 resolving, 2 resolved
};

// A POU as declared, with its resolved layout.
struct PouDecl {
  const ast::Pou* ast = nullptr;
  const ast::Pou* owner = nullptr;  // methods: their FB
  PouKind kind = PouKind::Function;
  std::string name;              // "FB.Method" for methods
  Type* instanceType = nullptr;  // FB / program layout (null until laid out)
  bool layingOut = false;
  bool layoutFailed = false;  // its instance would pass the image limit (reported once)
  bool frameFailed = false;   // its frame would pass the limit (reported; the body is not analysed)
  const Type* returnType = nullptr;
  std::vector<Variable> frameVars;  // functions/methods: all variables; FB/program: VAR_TEMP
  std::vector<const ast::VarDecl*> frameVarDecls;
  uint32_t frameVarsSize = 0;
  uint32_t returnOffset = 0;
  std::vector<uint8_t> frameTemplate;   // initial bytes of frameVarsSize
  uint32_t templateConst = UINT32_MAX;  // constant-pool offset of frameTemplate, once code uses it
  uint32_t pouIndex = UINT32_MAX;       // in Program::pous (functions, FB bodies, methods)
  uint32_t nativeId = UINT32_MAX;
  std::map<std::string, PouDecl*> methods;  // upper-case name
  bool frameResolved = false;
  std::map<std::string, LocalConstant> constants;  // upper name -> CONSTANT variables with a foldable value
  std::set<std::string> folding;                   // CONSTANTs being folded (a cycle is an error)
  // While initial values are written: the scalar variables already initialised, by upper name.
  std::map<std::string, LocalConstant> initials;

  // Object orientation (oop.cpp).
  PouDecl* base = nullptr;                  // FB: what it EXTENDS
  std::vector<InterfaceDecl*> implements;   // FB: what it IMPLEMENTS, as written
  PouDecl* ownerDecl = nullptr;             // methods: their FB (null for interface prototypes)
  InterfaceDecl* interfaceOwner = nullptr;  // methods: the INTERFACE of a prototype
  bool polymorphic = false;                 // FB: takes part in dynamic dispatch (has a class id)
  uint32_t classId = 0;
  int hierarchyState = 0;   // 0 unresolved, 1 resolving, 2 resolved
  uint32_t paramsSize = 0;  // methods: bytes of the return value and the parameters (laid out first)
  // A PROGRAM laid out and compiled as a function block, for the variables of a test POU that
  // declare instances of it (`VAR uut : Adder; END_VAR` in a TEST_PROGRAM): each such variable is
  // an instance of its own.
  bool programBlock = false;
};

struct GlobalDecl {
  const ast::VarDecl* ast = nullptr;
  std::string list;            // its global list (a file of VAR_GLOBAL blocks only, named after the file); empty: none
  bool qualifiedOnly = false;  // the list's `{attribute 'qualified_only'}`
  Variable var;
  std::optional<ConstValue> constant;  // CONSTANT with a foldable initial value
  bool resolving = false;
  bool resolved = false;
};

struct LoopLabels {
  Label exit;
  Label next;
};

// State while generating one body.
class BodyScope;

struct BodyContext {
  PouDecl* decl = nullptr;
  BodyScope* scope = nullptr;  // the names its statements see
  PouInfo* info = nullptr;
  uint32_t pouIndex = 0;
  enum class Mode { Function, Method, FbBody, Program } mode = Mode::Function;
  const Type* instanceType = nullptr;                          // FB or program layout
  uint32_t programBase = 0;                                    // Program: absolute offset of the instance
  std::unordered_map<std::string, const Variable*> frameVars;  // upper-case name
  uint32_t tempTop = 0;                                        // next free frame byte
  uint32_t frameMax = 0;                                       // high-water mark
  bool frameFull = false;                                      // temporaries would pass the limit (reported once)
  std::vector<LoopLabels> loops;
  Label returnLabel;
  std::vector<uint32_t> calleeFixups;  // code indices holding callee-frame-relative operands
  std::vector<uint32_t> statementStack;
  std::set<uint32_t> callees;  // functions and methods whose frames this body fills
};

// Operands in the callee's frame are written before the caller's frame size is known; they are
// emitted as frame offsets above this bias and fixed up when the body is complete.
inline constexpr uint32_t kCalleeBias = 1u << 29;

class Compiler;

// The semantic pass's view of the compiler's declarations (scopes.cpp).
class CompilerTypes : public sema::TypeSource {
 public:
  explicit CompilerTypes(Compiler& c) : c_(c) {}
  const Type* elementary(TypeKind kind) const override;
  const Type* string(uint32_t capacity) override;
  const Type* wideString(uint32_t capacity) override;
  const Type* refTo(const Type* target) override;
  const Type* pointerTo(const Type* target) override;
  const Type* errorType() const override;

 private:
  Compiler& c_;
};

class CompilerDeclarations : public sema::Declarations {
 public:
  explicit CompilerDeclarations(Compiler& c) : c_(c), types_(c) {}
  sema::TypeSource& types() override { return types_; }
  bool codesysConversions() const override;
  bool refPointers() const override;
  std::optional<sema::VariableSymbol> global(std::string_view name) override;
  const ProgramInstanceInfo* programInstance(std::string_view name) override;
  const std::string* globalList(std::string_view name) override;
  const std::vector<EnumValueSymbol>* enumValues(const std::string& upperName) override;
  std::optional<const Type*> declaredType(const std::string& upperName, const SourceSpan& use) override;
  std::optional<PouKind> pouKind(const std::string& upperName) override;
  const Type* functionBlockType(const std::string& upperName) override;
  const Type* programBlockType(const std::string& upperName) override;
  std::optional<sema::Callee> function(const std::string& upperName) override;
  std::optional<sema::Callee> method(const Type* functionBlock, const std::string& upperName) override;
  std::optional<PouKind> instanceKind(const Type* layout) override;
  std::optional<uint32_t> virtualSlot(const Type* functionBlock, const std::string& upperKey) override;

 private:
  Compiler& c_;
  CompilerTypes types_;
};

// A TEST_PROGRAM or TEST_FUNCTION_BLOCK, or a method of one.
inline bool isTestCode(const PouDecl* d) { return d && d->ast && (d->ast->test || (d->owner && d->owner->test)); }

// The names a POU body sees: its frame, its instance (and its CONSTANTs' values), then the
// program's.
class BodyScope : public sema::Scope {
 public:
  BodyScope(Compiler& c, BodyContext& ctx) : c_(c), ctx_(ctx) {}
  sema::Declarations& declarations() override;
  sema::Code code() const override;
  const Type* instanceType() const override { return ctx_.instanceType; }
  std::optional<sema::VariableSymbol> local(std::string_view name) override;
  std::string unknownName(std::string_view name) const override;
  bool inTest() const override { return isTestCode(ctx_.decl); }

 private:
  Compiler& c_;
  BodyContext& ctx_;
};

// The names a declaration's constant expressions see (array bounds, initial values): the
// CONSTANTs of the POU being declared (none outside a POU), then the program's.
class DeclarationScope : public sema::Scope {
 public:
  DeclarationScope(Compiler& c, PouDecl* decl) : c_(c), decl_(decl) {}
  sema::Declarations& declarations() override;
  sema::Code code() const override { return sema::Code::None; }
  const Type* instanceType() const override { return nullptr; }
  std::optional<sema::VariableSymbol> local(std::string_view name) override;
  std::string unknownName(std::string_view name) const override;
  bool inTest() const override { return isTestCode(decl_); }

 private:
  Compiler& c_;
  PouDecl* decl_;
};

class Compiler {
 public:
  Compiler(const SourceSet& sources, Diagnostics& diags, const CompileOptions& options);
  std::shared_ptr<const Program> run();
  // Each lowered statement's reads (vm/sema/reads.h) are appended to `out`, by statement id
  // (statement_reads.cpp).
  void collectReads(std::vector<std::vector<SourceSpan>>* out) { reads_ = out; }

  // ---- declarations.cpp
  void collect(const ast::CompilationUnit& unit);
  void collectProgramBlocks();

  // ---- oop.cpp: EXTENDS, IMPLEMENTS, INTERFACE, PROPERTY, dynamic dispatch
  void collectInterface(const ast::Pou& p);
  void resolveHierarchy();
  void resolveHierarchyOf(PouDecl& fb);
  void resolveInterface(InterfaceDecl& itf);
  void checkHierarchy();
  void layoutInheritance(PouDecl& decl, Type& t, uint64_t& off);
  void initInheritance(PouDecl& decl, Type& t);
  void genPrototype(PouDecl& decl);
  void buildDispatch();
  void checkInstantiable(const Type* type, const SourceSpan& span);
  PouDecl* findMethod(PouDecl* fb, const std::string& key);
  PouDecl* interfaceMethod(InterfaceDecl* itf, const std::string& key);
  InterfaceDecl* interfaceOf(const Type* t);
  uint32_t slotOf(const std::string& key);
  std::map<std::string, std::unique_ptr<InterfaceDecl>> interfaces_;
  std::map<const Type*, InterfaceDecl*> interfaceByType_;
  std::map<std::string, uint32_t> slots_;  // method key -> dispatch slot
  std::vector<PouDecl*> classes_;          // by class id (index 0 unused)
  std::vector<std::unique_ptr<PouDecl>> prototypeDecls_;
  const Type* resolveType(const ast::TypeRef& ref);
  // False, reported, when `t` is a REFERENCE TO: `what` (ARRAY OF, POINTER TO, ...) cannot hold one.
  bool noReferenceIn(const Type* t, const char* what, const SourceSpan& span);
  const Type* openArrayType(const ast::TypeRef& ref);  // ARRAY[*] (open_arrays.cpp)
  const Type* resolveNamedType(const std::string& name, const SourceSpan& span);
  std::optional<const Type*> resolveDeclaredType(const std::string& key, const SourceSpan& span);
  // The declaration of a type of TwinCAT's system library the project uses without declaring it
  // (system_library.cpp); null for any other name.
  const ast::TypeDecl* systemLibraryType(const std::string& upperName);
  Type* layoutPou(PouDecl& decl);
  void resolveFrame(PouDecl& decl);
  void resolveGlobal(GlobalDecl& g);
  void resolveAllTypes();
  Variable makeVariable(const ast::VarDecl& d, VarSection section);
  // A type's or frame's initial bytes, once built: dropped when all zero (Type::writeInitialValue
  // and templateOf make them again), otherwise counted against kMaxInitialBytes. False, reported
  // once, past that limit (the bytes are dropped too).
  bool keepInitial(std::vector<uint8_t>& bytes, const SourceSpan& span);
  bool placeVariable(Variable& v, uint64_t& off, const std::string& container);
  void writeInitial(std::vector<uint8_t>& buf, uint32_t offset, const Type* type, const ast::Initializer* init);
  void writeConst(std::vector<uint8_t>& buf, uint32_t offset, const Type* type, const ConstValue& c,
                  const SourceSpan& span);
  std::optional<int64_t> evalConstInt(const ast::Expr& e);
  // The semantic pass over a declaration's constant expressions (in the scope of layoutDecl_): the
  // value, or nullopt when `e` is not constant (reported only for errors inside it).
  std::optional<Folded> constantOf(const ast::Expr& e, const Type* hint = nullptr);
  // The value converted to `to`; nullopt when it does not convert to a constant (reported).
  std::optional<Folded> convertConstant(const Folded& c, const Type* to, const SourceSpan& span);
  void layoutImage();
  bool locate(const ast::Location& loc, Variable& v, const Type* type);
  void setupTasks();
  // CompileOptions::test: the one task that runs the test (tests.cpp).
  void setupTestTask();
  PouDecl* findPou(const std::string& name);
  PouDecl* fbDeclOf(const Type* t);
  void foldLocalConstant(PouDecl& decl, const ast::VarDecl& d, const Type* type);
  // The CONSTANT `upperName` of `decl` folded ahead of its declaration; null when there is none.
  const LocalConstant* foldLaterConstant(PouDecl& decl, const std::string& upperName);
  // Records the initial value of a scalar variable for the initial values declared after it.
  void rememberInitial(PouDecl& decl, const Variable& v, const std::vector<uint8_t>& buf);

  // ---- lower_expressions.cpp
  Value lower(const sema::Expr& e, const Place* dest = nullptr);
  // The value of `operand` once its own conversions (sema::conversionsOf) are applied to `base`,
  // the lowered sema::unconverted(operand).
  Value converted(const sema::Expr& operand, Value base);
  uint32_t readConverted(const sema::Expr& operand, Value base, const SourceSpan& span) {
    return readOperand(converted(operand, std::move(base)), span);
  }
  Value lowerBase(const sema::Expr& operand) { return lower(*sema::unconverted(&operand)); }
  uint32_t lowerRead(const sema::Expr& operand) { return readConverted(operand, lowerBase(operand), operand.span); }
  Value applyConversion(Value v, const sema::Expr& conversion);
  std::optional<Value> lowerMultiplyAdd(const sema::Expr& e, const Place* dest);
  Value lowerOperation(const sema::Expr& e, const Place* dest);
  Value lowerElement(const sema::Expr& e);
  // ---- lower_elements.cpp: element indexes of other widths, and index plus constant
  bool narrowIndex(const sema::Expr& index, Place& element);
  uint32_t elementIndex(const Place& element);  // the I32 index, computed if need be
  void loadElement(uint32_t dst, const Place& element, uint32_t size);
  void storeElement(const Place& element, uint32_t src, uint32_t size);
  // A comparison of two elements of one array at one index variable: one compare-and-jump.
  bool jumpOnElements(const sema::Expr& cond, const Value& a, const Value& b, bool jumpIf, Label target);
  bool jumpOnElement(const Value& element, bool jumpIf, Label target);  // IF flags[i] THEN
  Value lowerBit(const sema::Expr& e);
  // ---- pointers.cpp
  // `e` (a Deref): the place its REF designates, checked to lie inside one variable (PCHK)
  // unless `checked` is false or the compiler can prove it.
  Value lowerDeref(const sema::Expr& e, bool checked);
  // A dereference's area check (PCHK) that an operand of SEL or MUX emits only once chosen.
  struct DeferredCheck {
    uint32_t ref = 0;
    uint32_t offset = 0;  // the bytes checked start at ref + offset
    uint32_t size = 0;    // 0: none
    bool instance = false;
  };
  static const sema::Expr* outermostDeref(const sema::Expr* e);
  // lowerBase(operand), its outermost dereference's check left in `check` (for emitCheck()).
  Value lowerDeferringCheck(const sema::Expr& operand, DeferredCheck& check);
  void emitCheck(const DeferredCheck& check);
  const sema::Expr* deferredDeref_ = nullptr;
  DeferredCheck deferredCheck_;
  // `p^[i]`, `p^.x` (fields, elements, offsets from a dereference): the dereference below `e`
  // whose check is of the bytes `e` designates rather than of the whole target, if any.
  const sema::Expr* narrowableDeref(const sema::Expr& e) const;
  // lower(e) for such an `e`: the dereference `deref` unchecked, then the check of e's bytes.
  Value lowerNarrowedDeref(const sema::Expr& e, const sema::Expr& deref, const Place* dest);
  const sema::Expr* narrowedDeref_ = nullptr;
  // __ISVALIDREF, __QUERYINTERFACE, __QUERYPOINTER (sema::Op): a BOOL.
  Value lowerPointerOperation(const sema::Expr& e);
  Value variablePlace(const Variable& v, bool inFrame, bool inInstance);
  Place subPlace(const Place& base, const Variable& field);
  Place absolutePlace(const Variable& v);
  // An array element's place as its address (a reference computed once), other places as they are.
  Place throughAddress(const Place& p);
  uint32_t readOperand(const Value& v, const SourceSpan& span);  // v must be typed
  void store(const Place& dst, Value v);
  uint32_t addressOf(const Place& p);
  uint32_t constOperand(const Type* type, const ConstValue& c, const SourceSpan& span);
  uint32_t constBytes(const std::vector<uint8_t>& bytes, uint32_t align);
  uint32_t allocTemp(const Type* type);
  const Type* wordOfWidth(uint32_t width) const;  // BYTE, WORD, DWORD or LWORD
  Value tempValue(const Type* type);
  Value directValue(const Type* type, uint32_t operand);
  // Where an operation producing `type` writes: straight into `dest` when it is a direct place of
  // exactly that type (x := a + b is one ADD), otherwise a new temporary.
  Value resultPlace(const Type* type, const Place* dest);
  void lowerCondJump(const sema::Expr& cond, bool jumpIf, Label target);

  // ---- lower_functions.cpp
  Value lowerScaleDuration(const sema::Expr& e, const Place* dest);
  Value lowerMinMax(const sema::Expr& e, const Place* dest);
  Value lowerSelect(const sema::Expr& e);
  Value lowerMux(const sema::Expr& e);
  Value lowerShortCircuit(const sema::Expr& e);
  Value lowerString(const sema::Expr& e, const std::vector<uint32_t>& operands, const Place* dest);
  Value lowerOutput(const sema::Expr& value, Value parameter);
  Value lowerCall(const sema::Expr& e, const Place* dest);
  // ---- open_arrays.cpp: ARRAY[*]
  Value lowerOpenElement(const sema::Expr& e);
  Value lowerOpenBound(const sema::Expr& e);
  // Fills the bounds of an ARRAY[*] parameter's slot, `slotAt(k)` being the place k bytes into it,
  // from the array passed (`arg`, lowered to `argValue`).
  void storeOpenArrayBounds(const std::function<Place(uint32_t)>& slotAt, const sema::Expr& arg, const Value& argValue);
  // ---- tests.cpp
  Value lowerAssertion(const sema::Expr& e);
  void lowerAdvanceTime(const sema::Expr& e);
  Value lowerFunctionCall(const sema::Expr& e, const Place* dest);
  void lowerFbCall(const sema::Expr& e);
  uint32_t templateOf(PouDecl& decl);

  // ---- statements.cpp
  void lowerStatements(const sema::StmtList& list);
  // One statement of a body or nested list, as written: analysed (its nested lists deferred), then
  // lowered, after `beforeCode` (the body's prologue) when not null; once there is an error, only
  // analysed (whole). So the IR of one statement is held at a time, never a body's.
  void lowerSource(const ast::Stmt& s, int loops, const std::function<void()>& beforeCode);
  // Analyses the lists `s` left deferred, for their errors (its analysis reported one).
  void checkDeferred(const sema::Stmt& s);
  // A nested list of `owner`: `analysed`, or else `source` (deferred) a statement at a time.
  void lowerList(const sema::Stmt& owner, const sema::StmtList& analysed, const ast::StmtList* source);
  static bool listEmpty(const sema::StmtList& analysed, const ast::StmtList* source);
  void lowerStatement(const sema::Stmt& s);
  void lowerIf(const sema::Stmt& s);
  void lowerCase(const sema::Stmt& s);
  void lowerFor(const sema::Stmt& s);
  bool bodyRunsAhead(uint32_t bodyPc, uint32_t controlVariable, Prim p) const;
  void genBody(PouDecl& decl, BodyContext::Mode mode, uint32_t programBase, const Type* instanceType,
               const std::string& instanceName);
  void buildSymbols();
  void finishProgram();

  // ---- emission (statements.cpp)
  uint32_t here() const { return static_cast<uint32_t>(program_->code.size()); }
  void emit(Op op, std::initializer_list<Opnd> operands);
  void emitVec(Op op, const std::vector<Opnd>& operands);
  Label newLabel();
  void bind(Label l);
  static Opnd o(uint32_t v) { return Opnd{v, Opnd::Fix::None}; }
  static Opnd lab(Label l) { return Opnd{l.id, Opnd::Fix::Label}; }
  static Opnd frameDelta() { return Opnd{0, Opnd::Fix::CalleeFrame}; }
  static uint32_t calleeOperand(uint32_t offset) { return operand(Base::Frame, kCalleeBias + offset); }
  void move(uint32_t dst, uint32_t src, const Type* type);

  void error(const SourceSpan& span, std::string message) { diags_.error(span, std::move(message)); }
  // Where code being generated comes from: the statement being lowered, else the body's POU.
  SourceSpan currentSpan() const;

  const SourceSet& sources_;
  Diagnostics& diags_;
  CompileOptions options_;
  std::shared_ptr<Program> program_;
  std::vector<std::vector<SourceSpan>>* reads_ = nullptr;
  TypeTable* types_ = nullptr;
  const Type* errorType_ = nullptr;
  CompilerDeclarations declarations_;

  std::vector<std::unique_ptr<ast::CompilationUnit>> units_;
  std::map<std::string, const ast::TypeDecl*> typeDecls_;
  std::vector<std::unique_ptr<ast::TypeDecl>> systemTypes_;  // systemLibraryType's, made on first use
  std::vector<const ast::TypeDecl*> typeOrder_;              // declaration order
  std::map<std::string, const Type*> resolvedTypes_;
  std::set<std::string> resolvingTypes_;
  std::map<std::string, std::unique_ptr<PouDecl>> pous_;  // functions, FBs, programs, natives
  std::vector<std::unique_ptr<PouDecl>> methodDecls_;
  std::vector<std::unique_ptr<PouDecl>> instanceDecls_;  // per program instance
  std::vector<PouDecl*> byPouIndex_;                     // Program::pous index -> its declaration
  std::map<std::string, std::unique_ptr<GlobalDecl>> globals_;
  std::vector<GlobalDecl*> globalOrder_;
  std::map<std::string, std::string> globalLists_;                  // upper list name -> as named by its file
  std::map<std::string, std::unique_ptr<PouDecl>> programBlocks_;   // upper program name -> PouDecl::programBlock
  std::map<std::string, std::vector<EnumValueSymbol>> enumValues_;  // upper name
  const ast::Configuration* config_ = nullptr;
  std::map<std::string, const ast::VarConfigEntry*> varConfig_;  // "INST.VAR"
  std::map<std::string, uint32_t> instanceIndex_;                // upper instance name -> Program::instances
  std::vector<SourceSpan> instanceSpans_;                        // by Program::instances index: its declaration
  std::map<std::vector<uint8_t>, uint32_t> constPool_;
  bool constantsFull_ = false;  // the constant pool would pass the limit (reported once)
  uint64_t initialBytes_ = 0;   // initial bytes of types and frames kept (keepInitial)
  bool initialsFull_ = false;   // they passed kMaxInitialBytes (reported once)
  std::map<const Type*, PouDecl*> fbDecls_;
  std::map<uint32_t, std::vector<uint32_t>> calleesOf_;  // POU index -> functions/methods it calls
  PouDecl* layoutDecl_ = nullptr;                        // the POU whose declarations are being resolved

  // Extents of the located areas, computed before layout.
  uint32_t areaSize_[3] = {0, 0, 0};  // I, Q, M

  uint32_t pendingStatement_ = UINT32_MAX;  // pc of a STMT the next op may fuse with
  // The statement being lowered calls no user code, so a variable that an array index names
  // cannot change between the element's place and its use: the load or store may read it then.
  bool indexesAtUse_ = false;
  std::vector<uint32_t> labelPos_;
  std::vector<std::vector<uint32_t>> labelUses_;
  BodyContext* ctx_ = nullptr;
  // The IR arenas of lowerSource, by the depth of nested statement lists.
  std::vector<std::unique_ptr<sema::Arena>> arenas_;
  size_t arenaDepth_ = 0;
  uint32_t testInstance_ = UINT32_MAX;  // CompileOptions::test: its index in Program::instances
  std::vector<Value> assertOperands_;   // while an assertion is lowered: its operands' values
};

int areaIndex(char area);  // I=0 Q=1 M=2
uint32_t alignUp(uint32_t v, uint32_t a);
Op opFor(Op first, Prim p);  // member of a NUM/INT family
// Whether evaluating the statement's own expressions may run user code (lower_elements.cpp).
bool callsUserCode(const sema::Stmt& s);

}  // namespace scanback::compiler
