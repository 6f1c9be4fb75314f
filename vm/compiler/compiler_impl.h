// Internals of the compiler, shared by its translation units:
//   declarations.cpp  collecting declarations, resolving types, laying out the image, initial values
//   expressions.cpp   typing, constant folding and code for expressions
//   builtins.cpp      standard functions and conversions
//   statements.cpp    statements, POU bodies, task entry code, the driver
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "vm/base/int128.h"
#include "vm/bytecode/program.h"
#include "vm/compiler/compiler.h"
#include "vm/syntax/ast.h"

namespace scanback::compiler {

// A compile-time constant. Integers are held wide enough for every IEC integer type.
struct ConstValue {
  enum class Kind : uint8_t { None, Int, Real, Bool, String };
  Kind kind = Kind::None;
  Int128 i = 0;
  double r = 0.0;
  std::string s;

  static ConstValue ofInt(Int128 v) {
    ConstValue c;
    c.kind = Kind::Int;
    c.i = v;
    return c;
  }
  static ConstValue ofReal(double v) {
    ConstValue c;
    c.kind = Kind::Real;
    c.r = v;
    return c;
  }
  static ConstValue ofBool(bool v) {
    ConstValue c;
    c.kind = Kind::Bool;
    c.i = v;
    return c;
  }
  static ConstValue ofString(std::string v) {
    ConstValue c;
    c.kind = Kind::String;
    c.s = std::move(v);
    return c;
  }
};

// Where a value lives in memory.
struct Place {
  enum class Kind : uint8_t { Direct, Bit, Indirect, Element };
  Kind kind = Kind::Direct;
  const Type* type = nullptr;
  uint32_t operand = 0;  // Direct: the value; Bit: the containing word; Indirect: holds a REF;
                         // Element: the array's first byte (a Direct operand)
  uint32_t offset = 0;   // Indirect: added to the REF
  uint8_t bit = 0;       // Bit: index
  uint8_t width = 1;     // Bit: bytes of the containing word
  uint32_t index = 0;    // Element: operand holding the I32 index
  int32_t lower = 0;     // Element: lower bound
  uint32_t count = 0;    // Element: element count
  bool readOnly = false;
};

// The result of an expression: a constant (possibly untyped: type == nullptr for ANY_INT/ANY_REAL
// literals) or a place.
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

// A POU as declared, with its resolved layout.
struct PouDecl {
  const ast::Pou* ast = nullptr;
  const ast::Pou* owner = nullptr;  // methods: their FB
  PouKind kind = PouKind::Function;
  std::string name;              // "FB.Method" for methods
  Type* instanceType = nullptr;  // FB / program layout (null until laid out)
  bool layingOut = false;
  const Type* returnType = nullptr;
  std::vector<Variable> frameVars;  // functions/methods: all variables; FB/program: VAR_TEMP
  std::vector<const ast::VarDecl*> frameVarDecls;
  uint32_t frameVarsSize = 0;
  uint32_t returnOffset = 0;
  std::vector<uint8_t> frameTemplate;  // initial bytes of frameVarsSize
  uint32_t templateConst = 0;          // constant-pool offset of frameTemplate
  uint32_t pouIndex = UINT32_MAX;      // in Program::pous (functions, FB bodies, methods)
  uint32_t nativeId = UINT32_MAX;
  std::map<std::string, PouDecl*> methods;  // upper-case name
  std::vector<PouDecl*> instances;          // program types: the PouDecl of each instance's code
  bool frameResolved = false;
  std::map<std::string, ConstValue> constants;  // upper name -> CONSTANT variables with a foldable value
};

struct GlobalDecl {
  const ast::VarDecl* ast = nullptr;
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
struct BodyContext {
  PouDecl* decl = nullptr;
  PouInfo* info = nullptr;
  uint32_t pouIndex = 0;
  enum class Mode { Function, Method, FbBody, Program } mode = Mode::Function;
  const Type* instanceType = nullptr;                // FB or program layout
  uint32_t programBase = 0;                          // Program: absolute offset of the instance
  std::map<std::string, const Variable*> frameVars;  // upper-case name
  uint32_t tempTop = 0;                              // next free frame byte
  uint32_t frameMax = 0;                             // high-water mark
  std::vector<LoopLabels> loops;
  Label returnLabel;
  std::vector<uint32_t> calleeFixups;  // code indices holding callee-frame-relative operands
  uint32_t largestCalleeFrame = 0;
  std::vector<uint32_t> statementStack;
  std::set<uint32_t> callees;  // functions and methods whose frames this body fills
};

// Operands in the callee's frame are written before the caller's frame size is known; they are
// emitted as frame offsets above this bias and fixed up when the body is complete.
inline constexpr uint32_t kCalleeBias = 1u << 29;

class Compiler {
 public:
  Compiler(const SourceSet& sources, Diagnostics& diags, const CompileOptions& options);
  std::shared_ptr<const Program> run();

  // ---- declarations.cpp
  void collect(const ast::CompilationUnit& unit);
  const Type* resolveType(const ast::TypeRef& ref);
  const Type* resolveNamedType(const std::string& name, const SourceSpan& span);
  Type* layoutPou(PouDecl& decl);
  void resolveFrame(PouDecl& decl);
  void resolveGlobal(GlobalDecl& g);
  Variable makeVariable(const ast::VarDecl& d, VarSection section);
  void placeVariable(Variable& v, uint32_t& off);
  void writeInitial(std::vector<uint8_t>& buf, uint32_t offset, const Type* type, const ast::Initializer* init);
  void writeConst(std::vector<uint8_t>& buf, uint32_t offset, const Type* type, const ConstValue& c,
                  const SourceSpan& span);
  std::optional<int64_t> evalConstInt(const ast::Expr& e);
  void layoutImage();
  bool locate(const ast::Location& loc, Variable& v, const Type* type);
  void setupTasks();
  PouDecl* findPou(const std::string& name);
  PouDecl* fbDeclOf(const Type* t);
  const ConstValue* localConstant(const std::string& upperName);

  // ---- expressions.cpp
  Value genExpr(const ast::Expr& e, const Type* hint = nullptr, const Place* dest = nullptr);
  std::optional<Value> constantOf(const ast::Expr& e, const Type* hint = nullptr);  // folding without code
  Value genName(const ast::Expr& e);
  Value genMember(const ast::Expr& e);
  Value genIndex(const ast::Expr& e);
  Value genDeref(const ast::Expr& e);
  Value genUnary(const ast::Expr& e, const Type* hint, const Place* dest);
  Value genBinary(const ast::Expr& e, const Type* hint, const Place* dest);
  Value genCall(const ast::Expr& e, const Type* hint, const Place* dest, bool statement);
  Value genLiteral(const ast::Expr& e, const Type* hint);
  Value variablePlace(const Variable& v, bool inFrame, bool inInstance);
  Place subPlace(const Place& base, const Variable& field);
  uint32_t readOperand(const Value& v, const SourceSpan& span);  // v must be typed
  uint32_t operandAs(Value v, const Type* type, const SourceSpan& span, bool explicitConversion = false);
  Value convertValue(Value v, const Type* to, const SourceSpan& span, bool explicitConversion);
  void store(const Place& dst, Value v, const SourceSpan& span);
  uint32_t addressOf(const Place& p, const SourceSpan& span);
  uint32_t constOperand(const Type* type, const ConstValue& c, const SourceSpan& span);
  uint32_t constBytes(const std::vector<uint8_t>& bytes, uint32_t align);
  uint32_t allocTemp(const Type* type);
  Value tempValue(const Type* type);
  // Where an operation producing `type` writes: straight into `dest` when it is a direct place of
  // exactly that type (x := a + b is one ADD), otherwise a new temporary.
  Value resultPlace(const Type* type, const Place* dest);
  // The value of an expression whose error was already reported: later checks stay quiet.
  Value poison() {
    Value v = tempValue(errorType_);
    v.type = errorType_;
    return v;
  }
  bool isPoison(const Value& v) const { return v.type == errorType_ && errorType_; }
  bool implicitlyConvertible(const Type* from, const Type* to) const;
  const Type* commonType(const Value& a, const Value& b, const SourceSpan& span);
  bool fitsLiteral(const ConstValue& c, const Type* t) const;
  const Type* literalType(const ConstValue& c) const;
  std::optional<ConstValue> foldBinary(ast::BinaryOp op, const ConstValue& a, const ConstValue& b, const Type* t,
                                       const SourceSpan& span);
  void genCondJump(const ast::Expr& cond, bool jumpIf, Label target);
  bool safeToSkip(const ast::Expr& e) const;
  Value genFbCall(const ast::Expr& e, const Place& instance, const Type* fbType);
  Value genFunctionCall(const ast::Expr& e, PouDecl& f, const Place* thisPlace, const Type* hint, const Place* dest);
  void checkArgs(const ast::Expr& call, const std::vector<const Variable*>& params);

  // ---- builtins.cpp
  std::optional<Value> genBuiltin(const ast::Expr& call, const std::string& upperName, const Type* hint,
                                  const Place* dest);
  Value genConversion(const ast::Expr& call, Value arg, const Type* from, const Type* to);

  // ---- statements.cpp
  void genStatements(const ast::StmtList& list);
  void genStatement(const ast::Stmt& s);
  void genAssign(const ast::Stmt& s);
  void genIf(const ast::Stmt& s);
  void genCase(const ast::Stmt& s);
  void genFor(const ast::Stmt& s);
  void genWhile(const ast::Stmt& s);
  void genRepeat(const ast::Stmt& s);
  void genBody(PouDecl& decl, BodyContext::Mode mode, uint32_t programBase, const Type* instanceType,
               const std::string& instanceName);
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

  const SourceSet& sources_;
  Diagnostics& diags_;
  CompileOptions options_;
  std::shared_ptr<Program> program_;
  TypeTable* types_ = nullptr;
  const Type* errorType_ = nullptr;

  std::vector<std::unique_ptr<ast::CompilationUnit>> units_;
  std::map<std::string, const ast::TypeDecl*> typeDecls_;
  std::map<std::string, const Type*> resolvedTypes_;
  std::set<std::string> resolvingTypes_;
  std::map<std::string, std::unique_ptr<PouDecl>> pous_;  // functions, FBs, programs, natives
  std::vector<std::unique_ptr<PouDecl>> methodDecls_;
  std::vector<std::unique_ptr<PouDecl>> instanceDecls_;  // per program instance
  std::map<std::string, std::unique_ptr<GlobalDecl>> globals_;
  std::vector<GlobalDecl*> globalOrder_;
  std::map<std::string, std::vector<std::pair<const Type*, int64_t>>> enumValues_;  // upper name
  const ast::Configuration* config_ = nullptr;
  std::map<std::string, const ast::VarConfigEntry*> varConfig_;  // "INST.VAR"
  std::map<std::string, uint32_t> instanceIndex_;                // upper instance name -> Program::instances
  std::map<std::vector<uint8_t>, uint32_t> constPool_;
  std::map<const Type*, PouDecl*> fbDecls_;
  std::map<uint32_t, std::vector<uint32_t>> calleesOf_;  // POU index -> functions/methods it calls
  void foldLocalConstant(PouDecl& decl, const ast::VarDecl& d, const Type* type);
  PouDecl* layoutDecl_ = nullptr;  // the POU whose declarations are being resolved

  // Extents of the located areas, computed before layout.
  uint32_t areaSize_[3] = {0, 0, 0};  // I, Q, M

  uint32_t pendingStatement_ = UINT32_MAX;  // pc of a STMT the next op may fuse with
  std::vector<uint32_t> labelPos_;
  std::vector<std::vector<uint32_t>> labelUses_;
  BodyContext* ctx_ = nullptr;
};

int areaIndex(char area);  // I=0 Q=1 M=2
uint32_t alignUp(uint32_t v, uint32_t a);
Op opFor(Op first, Prim p);  // member of a NUM/INT family

}  // namespace scanback::compiler
