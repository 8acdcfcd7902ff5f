//===- Extract.cpp - OpenMP target region -> Tessera region IR ----------===//
//
// Part of Tessera. Walks one `#pragma omp target…` directive in clang's AST and
// builds the region IR (`tessera_ir::Region`, schema version 1, defined in
// crates/ir/src/lib.rs) as an llvm::json value:
//
//  * clauses: map clauses give the variables' map kinds and array sections,
//    collapse gives the loop depth, anything Tessera does not implement is
//    listed in `unsupported_clauses`;
//  * body: the loop nest (combined loop directives) or the statements of a
//    plain `target`, with nested `parallel for`/`teams`/… directives unwrapped;
//  * vars: every variable declared outside the region that it refers to, in
//    order of first appearance (this order is the runtime-call ABI).
//
// The extractor records what it sees and never decides: constructs the IR
// cannot express become `unsupported` nodes with source text and location.
//
// Calls (RegionExtractor::call) are resolved by the declaration clang chose,
// never by spelling alone: C math library functions clang knows as builtins
// (`sqrtf`, `__builtin_fabs`, and C++'s `std::` overloads, whose bodies call
// those builtins) become `call` nodes; the OpenMP queries of the team and thread
// become the constants of the kernel's single team and thread; a function whose
// body is visible and of the inlinable class (see inlineCall) is inlined with its
// parameters substituted. Anything else is `unsupported` `call: <why>`.
//
// Data directives (`target data`, `target enter data`, `target exit data`,
// `target update`) go through the same machinery (extractDataDirective): their
// list items are resolved to variables and sections exactly like the map
// clauses of a target region (listItem), and become a
// `tessera_ir::data::DataDirective` (crates/ir/src/data.rs).
//
//===----------------------------------------------------------------------===//

#include "Extract.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/DeclOpenMP.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/OpenMPClause.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/StmtOpenMP.h"
#include "clang/Basic/Builtins.h"
#include "clang/Basic/OpenMPKinds.h"
#include "clang/Basic/TargetInfo.h"
#include "clang/Basic/SourceManager.h"
#include <cctype>
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

using namespace clang;
namespace json = llvm::json;

namespace {

/// One array dimension as the declared type gives it.
struct Dim {
  /// Constant extent (`float a[64]`).
  std::optional<uint64_t> Extent;
  /// Variable extent (`float a[n]`, VLA parameters, pointers to VLAs).
  const Expr *Size = nullptr;
  // Neither: unknown (the pointee of a plain pointer, `a[]`).
};

/// What the runtime needs to know about a variable's type.
struct Shape {
  llvm::StringRef Kind; ///< "scalar", "pointer" or "array".
  llvm::StringRef Elem; ///< Element (or scalar) type name.
  llvm::SmallVector<Dim, 4> Dims;
  /// The innermost dimension is the scalars of a dense struct (denseRecord):
  /// an array of `struct { double x, y; }` has dimensions `[…][2]`.
  bool Record = false;
  /// The innermost dimension is the bytes of a struct without pointers that is
  /// not dense: data directives map such arrays, regions only pass them (their
  /// member accesses stay on the host).
  bool Bytes = false;
};

/// A region variable under construction (JSON is built once at the end, because
/// `written`, `map` and `section` are discovered while walking).
struct VarEntry {
  const VarDecl *Decl;
  /// A hoisted clause value (Decl is null): see ExtractedRegion::Hoisted.
  const Expr *Hoisted = nullptr;
  /// Hoisted is a loop-invariant member access of the region body
  /// (ExtractedRegion::HoistedInside).
  bool Inside = false;
  /// Hoisted is such a member access with an address (not a bit-field, not of a
  /// `register` variable): passed by address (ExtractedRegion::HoistedMember).
  bool Member = false;
  /// Such a member whose type the region may write (through an array or a
  /// pointer): its address is checked at launch against everything the region
  /// writes (ExtractedRegion IR `checked_members`).
  bool Checked = false;
  std::string Name;
  Shape S;
  json::Array Dims;
  json::Value Map = nullptr;
  json::Array Section;
  bool Written = false;
};

static bool addressable(const MemberExpr *ME);

/// Lowercase IR spelling of a binary operator, or null when the IR has none.
const char *binOpName(BinaryOperatorKind Op) {
  switch (Op) {
  case BO_Mul: return "mul";
  case BO_Div: return "div";
  case BO_Rem: return "rem";
  case BO_Add: return "add";
  case BO_Sub: return "sub";
  case BO_Shl: return "shl";
  case BO_Shr: return "shr";
  case BO_LT: return "lt";
  case BO_GT: return "gt";
  case BO_LE: return "le";
  case BO_GE: return "ge";
  case BO_EQ: return "eq";
  case BO_NE: return "ne";
  case BO_And: return "bitand";
  case BO_Xor: return "bitxor";
  case BO_Or: return "bitor";
  case BO_LAnd: return "land";
  case BO_LOr: return "lor";
  default: return nullptr;
  }
}

/// The IR type name stored in a typed expression node, or empty.
llvm::StringRef tyOf(const json::Value &V) {
  if (const json::Object *O = V.getAsObject())
    if (std::optional<llvm::StringRef> T = O->getString("ty"))
      return *T;
  return {};
}

/// Strips nodes that carry no semantics for the IR: parentheses,
/// `__extension__`, constant-expression wrappers, template argument
/// substitutions and cleanups.
const Expr *skipTransparent(const Expr *E) {
  while (true) {
    const Expr *Prev = E;
    E = E->IgnoreParens();
    if (const auto *CE = dyn_cast<FullExpr>(E))
      E = CE->getSubExpr();
    if (const auto *ST = dyn_cast<SubstNonTypeTemplateParmExpr>(E))
      E = ST->getReplacement();
    // A temporary bound to a `const T &` parameter holds the value.
    if (const auto *MT = dyn_cast<MaterializeTemporaryExpr>(E))
      E = MT->getSubExpr();
    if (const auto *DA = dyn_cast<CXXDefaultArgExpr>(E))
      E = DA->getExpr();
    if (E == Prev)
      return E;
  }
}

/// Strips the implicit conversions between an array variable and its subscript
/// (`a` decays, pointer values are loaded) plus transparent nodes.
const Expr *skipDecay(const Expr *E) {
  while (true) {
    E = skipTransparent(E);
    const auto *IC = dyn_cast<ImplicitCastExpr>(E);
    if (!IC || (IC->getCastKind() != CK_ArrayToPointerDecay &&
                IC->getCastKind() != CK_LValueToRValue &&
                IC->getCastKind() != CK_NoOp))
      return E;
    E = IC->getSubExpr();
  }
}

/// The variable a (possibly cast) expression names directly, if any.
const VarDecl *namedVar(const Expr *E) {
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(DRE->getDecl());
  return nullptr;
}

namespace {
/// The C math functions of the IR (`tessera_ir::MathFn`, their `double` names)
/// with their arity.
struct MathEntry {
  const char *Name;
  unsigned Arity;
};
const MathEntry MathFunctions[] = {
    {"sqrt", 1},  {"fabs", 1},  {"fmin", 2},  {"fmax", 2},  {"floor", 1},
    {"ceil", 1},  {"trunc", 1}, {"round", 1}, {"copysign", 2}, {"fma", 3},
    {"exp", 1},   {"exp2", 1},  {"expm1", 1}, {"log", 1},   {"log2", 1},
    {"log10", 1}, {"log1p", 1}, {"pow", 2},   {"sin", 1},   {"cos", 1},
    {"tan", 1},   {"asin", 1},  {"acos", 1},  {"atan", 1},  {"atan2", 2},
    {"sinh", 1},  {"cosh", 1},  {"tanh", 1},  {"cbrt", 1},  {"hypot", 2}};

const MathEntry *mathEntry(llvm::StringRef Name) {
  for (const MathEntry &M : MathFunctions)
    if (Name == M.Name)
      return &M;
  return nullptr;
}

/// The OpenMP queries a kernel answers with its single team and thread.
std::optional<int64_t> ompQuery(llvm::StringRef Name) {
  return llvm::StringSwitch<std::optional<int64_t>>(Name)
      .Case("omp_get_team_num", 0)
      .Case("omp_get_num_teams", 1)
      .Case("omp_get_thread_num", 0)
      .Case("omp_get_num_threads", 1)
      .Case("omp_is_initial_device", 0)
      .Default(std::nullopt);
}
} // namespace

/// Builds the IR of one region; see extractRegion().
class RegionExtractor {
public:
  RegionExtractor(ASTContext &Ctx)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()) {}

  tessera::ExtractedRegion run(const OMPExecutableDirective &D,
                               llvm::StringRef Function, unsigned Index);
  tessera::ExtractedRegion runData(const OMPExecutableDirective &D,
                                   llvm::StringRef Function, unsigned Index);
  /// The scalar holding a data directive's `if` condition (IR name), if any.
  std::string Condition;
  /// The scalar holding a data directive's `device` number (IR name), if any.
  std::string Device;
  /// Why the region's footprint is unknown (ExtractedRegion::UnknownFootprint);
  /// empty when it is known.
  std::string UnknownFootprint;

private:
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;

  std::vector<VarEntry> Vars;
  /// Index into Vars, or ~0u for variables whose type the IR cannot express.
  llvm::DenseMap<const VarDecl *, unsigned> VarIndex;
  /// Unique IR names of all variables seen (region vars, loop indices, locals).
  llvm::DenseMap<const VarDecl *, std::string> Names;
  llvm::StringSet<> UsedNames;
  /// Variables declared inside the region (locals and loop indices).
  llvm::DenseSet<const VarDecl *> Inner;
  /// Variables declared outside but used as the index of a canonical loop
  /// (`int i; … for (i = 0; …)`): private to the region, not region vars.
  llvm::DenseSet<const VarDecl *> LoopIndices;
  json::Array UnsupportedClauses;
  unsigned Collapse = 1;
  /// The target directive being extracted (its `if` clause is the region's).
  const OMPExecutableDirective *Top = nullptr;
  /// The condition of the target construct's `if` clause, if any.
  const Expr *IfCondition = nullptr;
  /// The target construct's `device` clause number, or null.
  const Expr *DeviceNum = nullptr;
  /// `defaultmap` clauses: the implicit map type of each variable category
  /// (`scalar`, `aggregate`, `pointer`), set by applyDefaultmap.
  llvm::StringMap<std::string> Defaultmap;
  /// `Region::reductions` (one per variable), and which of their variables a
  /// reduction clause of the target construct itself names (those without a map
  /// clause are mapped `tofrom`, OpenMP 5.2, 5.8.8).
  json::Array Reductions;
  llvm::DenseMap<const VarDecl *, std::string> ReductionOps;
  llvm::SmallVector<unsigned, 2> TopReductionVars;
  /// `Region::array_reductions`, and the variables and sections of those on the
  /// target construct itself (mapped `tofrom` over that section when no map
  /// clause names them).
  json::Array ArrayReductions;
  llvm::SmallVector<std::pair<unsigned, json::Array>, 2> TopArrayReductions;
  /// A clause expression as clang evaluates it at the directive: through the
  /// `.capture_expr.` variables of the directive's pre-inits.
  static const Expr *uncaptured(const Expr *E);
  /// Whether some construct became an `unsupported` node: the region's uses of
  /// its variables are then not all in the IR (see completeVars).
  mutable bool SawUnsupported = false;
  /// Number of values hoisted out of clauses so far.
  unsigned NextHoisted = 0;
  /// The directive's outermost captured declaration: variables declared in it
  /// (at any depth) are the region's own, never runtime arguments.
  const DeclContext *Region = nullptr;
  bool declaredInside(const VarDecl *VD) const;

  // Helpers -----------------------------------------------------------------
  json::Object loc(SourceLocation L) const;
  std::string text(SourceRange R, const Stmt *S = nullptr) const;
  std::string text(const Stmt *S) const {
    return text(S->getSourceRange(), S);
  }
  std::optional<llvm::StringRef> scalar(QualType T) const;
  std::string typeText(QualType T) const {
    return "type '" + T.getAsString(Ctx.getPrintingPolicy()) + "'";
  }
  std::string nameOf(const VarDecl *VD);
  json::Value unsupported(llvm::StringRef What, const Stmt *S) const;
  json::Value unsupportedType(QualType T, const Stmt *S) const {
    return unsupported(typeText(T), S);
  }
  static json::Value castTo(json::Value V, llvm::StringRef Ty);
  static json::Value intLit(int64_t V, llvm::StringRef Ty) {
    return json::Object{{"kind", "int"}, {"value", V}, {"ty", Ty.str()}};
  }
  std::optional<int64_t> evalInt(const Expr *E) const;

  // Variables ---------------------------------------------------------------
  std::optional<Shape> shapeOf(const VarDecl *VD) const;
  Dim dimOf(const ArrayType *AT) const;
  std::optional<std::pair<llvm::StringRef, uint64_t>>
  denseRecord(QualType T) const;
  std::optional<uint64_t> denseFields(const RecordDecl *RD, llvm::StringRef &Elem,
                                      uint64_t &ElemBits) const;
  std::optional<unsigned> regionVar(const VarDecl *VD);
  json::Value extent(const Dim &D, const Stmt *Where);
  void completeVars(const Stmt *Body);
  void calleeData(const CallExpr *CE, const FunctionDecl *FD,
                  llvm::SmallPtrSetImpl<const FunctionDecl *> &Seen,
                  unsigned Depth);
  void unknownFootprint(std::string Why) {
    if (UnknownFootprint.empty())
      UnknownFootprint = std::move(Why);
  }
  /// Whether a value of type \p T holds a pointer (itself, a member, an element).
  bool carriesPointer(QualType T, unsigned Depth = 0) const;
  json::Value bound(const Expr *E);
  std::optional<std::string> hoist(const Expr *E);
  void addHoisted(const Expr *E, const std::string &Name, llvm::StringRef Ty,
                  bool Inside);
  std::optional<json::Value> invariantMember(const MemberExpr *ME,
                                            bool &Aliased);
  std::optional<unsigned> pointerMember(const MemberExpr *ME, bool Inside,
                                        bool &Aliased);
  bool memberRoot(const MemberExpr *ME) const;
  const VarDecl *structRoot(const MemberExpr *ME) const;
  bool localUnaliased(const VarDecl *VD);
  bool unaliasedRoot(const MemberExpr *ME);
  bool assignsField(const MemberExpr *ME);
  llvm::DenseMap<const VarDecl *, bool> UnaliasedLocals;
  void structVar(const VarDecl *VD);
  bool bodyMayWrite(QualType T, bool Calls);
  bool chainMayChange(const MemberExpr *ME, bool Calls);
  std::string memberName(const MemberExpr *ME);
  /// Pointer members made region variables (pointerMember), by structural
  /// identity: index into Vars.
  llvm::DenseMap<unsigned, unsigned> PointerMembers;
  /// Canonical types of the memory the region body may write (see
  /// collectWrittenTypes); null until computed.
  std::optional<llvm::DenseSet<const Type *>> WrittenTypes;
  bool WritesChars = false;
  /// The body calls a function or constructor, which may write anything.
  bool CallsWrite = false;
  /// Set while extracting a VLA extent (see regionVar).
  bool NoMemberHoist = false;
  /// Extracting a data directive: a struct (or union) variable is a list item
  /// too, mapped as its bytes (shapeOf).
  bool DataObjects = false;
  void collectWrittenTypes(const Stmt *Body);
  /// Member accesses hoisted out of the body, by structural identity.
  llvm::DenseMap<unsigned, std::string> HoistedMembers;

  // Clauses -----------------------------------------------------------------
  void clauses(const OMPExecutableDirective &D, bool OwnsLoop);
  void unsupportedClause(const OMPClause *C, llvm::StringRef Name = {});
  void arrayReduction(const OMPReductionClause *RC,
                      const OMPExecutableDirective &D, const Expr *Item,
                      llvm::StringRef Op, bool Whole);
  void reductionClause(const OMPReductionClause *RC,
                       const OMPExecutableDirective &D);
  bool wholeRegion(const OMPExecutableDirective &D) const;
  void mapClause(const OMPMapClause *MC);
  void defaultmapClause(const OMPDefaultmapClause *C);
  void applyDefaultmap();
  std::optional<std::string> mapKind(const OMPMapClause *MC,
                                     bool *Present = nullptr);
  template <typename MotionClause>
  std::optional<bool> motionPresent(const MotionClause *C);
  std::string baseMapKind(const OMPMapClause *MC) const;
  /// One list item of a map or motion clause, resolved to a region variable.
  struct ListItem {
    std::optional<unsigned> Var; ///< Index into Vars; none if not a variable.
    json::Array Section;         ///< One entry per subscript given.
    json::Array Strides;         ///< One per Section entry (1 where none given).
    bool Strided = false;        ///< Some stride is not the constant 1.
    std::string Unsupported;     ///< What the item is, when not representable.
  };
  ListItem listItem(const Expr *Item);
  json::Value dataItem(const Expr *Item, llvm::StringRef Kind,
                       bool Present = false,
                       llvm::StringRef Unsupported = {});
  json::Array varsJson(tessera::ExtractedRegion &R);

  // Expressions -------------------------------------------------------------
  json::Value expr(const Expr *E);
  json::Value folded(const Expr *E);
  bool recordAccess(const Expr *E, unsigned &Var, json::Array &Index,
                    json::Value &Bad);
  std::optional<int64_t> scalarsIn(const Expr *C, uint64_t ElemBytes) const;
  json::Value access(const ArraySubscriptExpr *E, unsigned &Var,
                     json::Array &Index, json::Value *Last = nullptr);
  json::Value element(const Expr *E, unsigned &Var, json::Array &Index,
                      const Stmt *Where);
  json::Value read(const Expr *E);
  json::Value readNode(const Expr *E, unsigned Array, json::Array Index,
                       json::Value Bad);
  bool hostMayFuse(const BinaryOperator *BO, const Expr *Mul) const;

  // Calls -------------------------------------------------------------------
  json::Value call(const CallExpr *CE);
  json::Value mathCall(const CallExpr *CE, const FunctionDecl *FD,
                       llvm::StringRef Base, bool Convert);
  json::Value integerAbs(const CallExpr *CE);
  json::Value inlineCall(const CallExpr *CE, const FunctionDecl *FD,
                         unsigned First = 0);
  std::string inlineBody(const FunctionDecl *FD,
                         llvm::ArrayRef<const Stmt *> List,
                         json::Value &Result);
  /// While a call is inlined: the IR value of each parameter and local of the
  /// functions being inlined (substituted for their uses).
  llvm::DenseMap<const VarDecl *, json::Value> Subst;
  /// The definitions of the functions being inlined, outermost first
  /// (recursion is refused).
  llvm::SmallVector<const FunctionDecl *, 4> Inlining;
  /// Whether \p VD belongs to a function being inlined (parameter or local).
  bool inlinedLocal(const VarDecl *VD) const;
  /// The outermost call being inlined: math calls inside inlined bodies (which
  /// may be a system header's, e.g. `std::pow`) are located there.
  SourceLocation InlineSite;

  // Statements --------------------------------------------------------------
  void stmts(const Stmt *S, json::Array &Out);
  void loopBody(const Stmt *Body, json::Array &Out);
  void loopStmts(llvm::ArrayRef<const Stmt *> List, json::Array &Out);
  void nestedDirective(const OMPExecutableDirective &D, json::Array &Out);
  void declStmt(const DeclStmt *DS, json::Array &Out);
  /// A local pointer into a region array (pointerLocal): the array, the
  /// subscripts of the element it points to (outermost first; the last one is
  /// added to the pointer's own subscript, null for 0).
  struct PtrLocal {
    unsigned Var;
    llvm::SmallVector<const Expr *, 4> Subscripts;
    /// The terms of the last subscript (`A + i + off`: `i`, `off`; none: 0).
    llvm::SmallVector<const Expr *, 2> Last;
  };
  llvm::DenseMap<const VarDecl *, PtrLocal> PtrLocals;
  bool pointerLocal(const VarDecl *VD);
  bool keepValues(llvm::ArrayRef<const Expr *> Exprs);
  /// A local reference or pointer to an element of an array of dense structs
  /// (recordAlias): the element, and whether the local is a pointer.
  struct RecordAlias {
    const ArraySubscriptExpr *Element;
    bool Pointer;
    /// `P *t = p + k;`: the array `p` (Element is null) and `k`.
    const VarDecl *Array = nullptr;
    const Expr *Offset = nullptr;
  };
  llvm::DenseMap<const VarDecl *, RecordAlias> RecordAliases;
  bool recordAlias(const VarDecl *VD);
  const ArraySubscriptExpr *recordElement(const Expr *E) const;
  /// A local variable of a dense struct type (structLocal): one IR local per
  /// scalar of the struct, in layout order, and their type.
  struct StructLocal {
    llvm::StringRef Ty;
    std::vector<std::string> Names;
  };
  llvm::DenseMap<const VarDecl *, StructLocal> StructLocals;
  bool structLocal(const VarDecl *VD, const DeclStmt *DS, json::Array &Out);
  const StructLocal *structValue(const Expr *E) const;
  std::optional<std::string> structLocalMember(const Expr *E);
  std::optional<json::Value> structLocalNode(const Expr *E, bool Write,
                                             const Stmt *Where);
  json::Value recordField(const Expr *E, uint64_t F, llvm::StringRef Ty,
                          bool Write, const Stmt *Where);
  bool assignedInRegion(const VarDecl *VD);
  /// What the region body does with its variables (collectUses, computed once).
  struct Uses {
    /// Assigned, incremented or decremented, or their address taken.
    llvm::DenseSet<const VarDecl *> Changed;
    /// Named other than as the base of a subscript.
    llvm::DenseSet<const VarDecl *> NotSubscripted;
  };
  std::optional<Uses> BodyUses;
  const Uses &collectUses();
  /// Indices of the loops around the statement being extracted.
  llvm::SmallVector<const VarDecl *, 4> LoopStack;
  json::Value forStmt(const ForStmt *F);
  json::Value ifStmt(const IfStmt *If);
  json::Value exprStmt(const Expr *E);
  bool recordCopy(const Expr *E, json::Array &Out);
  json::Value incrementStmt(const UnaryOperator *UO, const Expr *S);
  json::Value assignStmt(json::Value Target, json::Value Value, const Expr *S) const;
  json::Value lvalue(const Expr *E, const Stmt *Whole, bool &Ok);
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

json::Object RegionExtractor::loc(SourceLocation L) const {
  PresumedLoc P = SM.getPresumedLoc(L);
  if (P.isInvalid())
    return json::Object{{"file", ""}, {"line", 0}, {"col", 0}};
  return json::Object{
      {"file", std::string(P.getFilename())},
      {"line", P.getLine()},
      {"col", P.getColumn()}};
}

std::string RegionExtractor::text(SourceRange R, const Stmt *S) const {
  CharSourceRange CR = SM.getExpansionRange(R);
  llvm::StringRef T = Lexer::getSourceText(CR, SM, LO);
  if (!T.empty() || !S)
    return T.str();
  // Not in a file buffer (or a broken range): print the node instead.
  std::string Buf;
  llvm::raw_string_ostream OS(Buf);
  S->printPretty(OS, nullptr, Ctx.getPrintingPolicy());
  return OS.str();
}

std::optional<llvm::StringRef> RegionExtractor::scalar(QualType T) const {
  if (T.isNull())
    return std::nullopt;
  T = T.getCanonicalType().getUnqualifiedType();
  if (T->isBooleanType())
    return llvm::StringRef("bool");
  if (const auto *BT = T->getAs<BuiltinType>()) {
    if (BT->getKind() == BuiltinType::Float)
      return llvm::StringRef("f32");
    if (BT->getKind() == BuiltinType::Double)
      return llvm::StringRef("f64");
  }
  if (!T->isIntegerType() || T->isBitIntType())
    return std::nullopt;
  if (const auto *ET = T->getAs<EnumType>())
    T = ET->getDecl()->getIntegerType();
  bool Signed = T->isSignedIntegerType();
  switch (Ctx.getTypeSize(T)) {
  case 8: return llvm::StringRef(Signed ? "i8" : "u8");
  case 16: return llvm::StringRef(Signed ? "i16" : "u16");
  case 32: return llvm::StringRef(Signed ? "i32" : "u32");
  case 64: return llvm::StringRef(Signed ? "i64" : "u64");
  default: return std::nullopt;
  }
}

std::string RegionExtractor::nameOf(const VarDecl *VD) {
  auto It = Names.find(VD);
  if (It != Names.end())
    return It->second;
  std::string Base = VD->getName().str();
  if (Base.empty())
    Base = "v";
  std::string Name = Base;
  for (unsigned K = 1; UsedNames.contains(Name); ++K)
    Name = Base + "_" + std::to_string(K);
  UsedNames.insert(Name);
  return Names[VD] = Name;
}

json::Value RegionExtractor::unsupported(llvm::StringRef What,
                                         const Stmt *S) const {
  SawUnsupported = true;
  return json::Object{{"kind", "unsupported"},
                      {"what", What.str()},
                      {"text", text(S)},
                      {"loc", loc(S->getBeginLoc())}};
}

json::Value RegionExtractor::castTo(json::Value V, llvm::StringRef Ty) {
  if (tyOf(V) == Ty)
    return V; // identity conversion: nothing to record
  return json::Object{
      {"kind", "cast"}, {"arg", std::move(V)}, {"ty", Ty.str()}};
}

std::optional<int64_t> RegionExtractor::evalInt(const Expr *E) const {
  Expr::EvalResult R;
  if (E->isValueDependent() || !E->EvaluateAsInt(R, Ctx))
    return std::nullopt;
  const llvm::APSInt &V = R.Val.getInt();
  if (V.getBitWidth() > 64)
    return std::nullopt;
  return V.isSigned() ? V.getSExtValue() : int64_t(V.getZExtValue());
}

//===----------------------------------------------------------------------===//
// Variables
//===----------------------------------------------------------------------===//

Dim RegionExtractor::dimOf(const ArrayType *AT) const {
  Dim D;
  if (const auto *CAT = dyn_cast<ConstantArrayType>(AT))
    D.Extent = CAT->getSize().getZExtValue();
  else if (const auto *VAT = dyn_cast<VariableArrayType>(AT))
    D.Size = VAT->getSizeExpr(); // null for `[*]`
  return D;
}

std::optional<Shape> RegionExtractor::shapeOf(const VarDecl *VD) const {
  QualType T = VD->getType().getNonReferenceType();
  Shape S;
  if (std::optional<llvm::StringRef> Ty = scalar(T)) {
    S.Kind = "scalar";
    S.Elem = *Ty;
    return S;
  }
  if (T->isPointerType()) {
    S.Kind = "pointer";
    S.Dims.push_back(Dim());
    // `float A[n][m]` as a parameter is adjusted to `float (*A)[m]`; the
    // written type still knows the outer extent.
    if (const auto *PVD = dyn_cast<ParmVarDecl>(VD))
      if (const ArrayType *AT = Ctx.getAsArrayType(PVD->getOriginalType()))
        S.Dims[0] = dimOf(AT);
    T = T->getPointeeType();
  } else if (T->isArrayType()) {
    S.Kind = "array";
  } else if (DataObjects && T->isRecordType() && !T->isIncompleteType() &&
             !T->isDependentType() && T.isTriviallyCopyableType(Ctx)) {
    // A struct list item of a data directive: its bytes, as OpenMP maps a
    // struct without a mapper (the compiler's data.rs). Regions reach structs
    // through their members only.
    S.Kind = "array";
    S.Elem = "u8";
    Dim D;
    D.Extent = Ctx.getTypeSizeInChars(T).getQuantity();
    S.Dims.push_back(D);
    return S;
  } else {
    return std::nullopt;
  }
  while (const ArrayType *AT = Ctx.getAsArrayType(T)) {
    S.Dims.push_back(dimOf(AT));
    T = AT->getElementType();
  }
  if (std::optional<llvm::StringRef> Elem = scalar(T)) {
    S.Elem = *Elem;
    return S;
  }
  // An array of dense structs: their scalars are one more dimension. Other
  // structs without pointers: their bytes (what OpenMP maps).
  Dim D;
  if (std::optional<std::pair<llvm::StringRef, uint64_t>> R = denseRecord(T)) {
    S.Elem = R->first;
    D.Extent = R->second;
    S.Record = true;
  } else if (T->isRecordType() && !T->isIncompleteType() &&
             !T->isDependentType() && T.isTriviallyCopyableType(Ctx) &&
             !carriesPointer(T)) {
    S.Elem = "u8";
    D.Extent = Ctx.getTypeSizeInChars(T).getQuantity();
    S.Bytes = true;
  } else {
    return std::nullopt;
  }
  S.Dims.push_back(D);
  return S;
}

/// For a struct whose storage is a dense array of one scalar type — every field
/// that scalar, a constant array of it or such a struct, without bit-fields,
/// padding, base classes, virtual members or unions (`struct { double x, y; }`,
/// `struct { float v[3]; }`) — that type and how many scalars it holds. Regions
/// see an array of such structs as an array with one more dimension
/// (`p[i].y` is `p[i][1]`), so kernels and footprints treat it like any array.
std::optional<std::pair<llvm::StringRef, uint64_t>>
RegionExtractor::denseRecord(QualType T) const {
  T = T.getCanonicalType();
  const auto *RD = T->getAsRecordDecl();
  if (!RD || T->isIncompleteType() || T->isDependentType() ||
      !T.isTriviallyCopyableType(Ctx))
    return std::nullopt;
  llvm::StringRef Elem;
  uint64_t ElemBits = 0;
  std::optional<uint64_t> Bits = denseFields(RD, Elem, ElemBits);
  // denseFields put every field right after the one before it; no tail padding
  // either: the struct is a whole number of scalars.
  uint64_t Size = Ctx.getTypeSize(T);
  if (!Bits || Elem.empty() || Size == 0 || Size != *Bits || Size % ElemBits)
    return std::nullopt;
  return std::make_pair(Elem, Size / ElemBits);
}

/// When every field of \p RD (recursively) is the scalar type \p Elem (set by
/// the first one, with its size \p ElemBits), a constant array of it, or a struct
/// of such fields, laid out without gaps: the bits its fields occupy (see
/// denseRecord); else none.
std::optional<uint64_t> RegionExtractor::denseFields(const RecordDecl *RD,
                                                     llvm::StringRef &Elem,
                                                     uint64_t &ElemBits) const {
  const RecordDecl *Def = RD ? RD->getDefinition() : nullptr;
  if (!Def || Def->isUnion() || Def->isInvalidDecl())
    return std::nullopt;
  if (const auto *CXX = dyn_cast<CXXRecordDecl>(Def))
    if (CXX->getNumBases() || CXX->getNumVBases() || CXX->isPolymorphic())
      return std::nullopt;
  const ASTRecordLayout &L = Ctx.getASTRecordLayout(Def);
  uint64_t Expected = 0; // bits
  for (const FieldDecl *F : Def->fields()) {
    if (F->isBitField() || F->isZeroSize(Ctx) ||
        L.getFieldOffset(F->getFieldIndex()) != Expected)
      return std::nullopt;
    QualType FT = F->getType().getCanonicalType();
    while (const auto *CAT = dyn_cast_or_null<ConstantArrayType>(Ctx.getAsArrayType(FT)))
      FT = CAT->getElementType().getCanonicalType();
    if (Ctx.getAsArrayType(FT))
      return std::nullopt; // a flexible or variable array member
    if (std::optional<llvm::StringRef> S = scalar(FT)) {
      if (!Elem.empty() && Elem != *S)
        return std::nullopt;
      Elem = *S;
      ElemBits = Ctx.getTypeSize(FT);
    } else if (const RecordDecl *Inner = FT->getAsRecordDecl()) {
      if (!denseFields(Inner, Elem, ElemBits))
        return std::nullopt;
    } else {
      return std::nullopt;
    }
    Expected += Ctx.getTypeSize(F->getType());
  }
  return Expected;
}

/// Extent of one dimension as an IR expression (constant extents are `i64`).
json::Value RegionExtractor::extent(const Dim &D, const Stmt *Where) {
  if (D.Extent)
    return intLit(int64_t(*D.Extent), "i64");
  if (D.Size)
    return expr(D.Size);
  return unsupported("array section without length", Where);
}

/// Whether \p VD is declared inside the directive (a local of the region, of a
/// lambda or nested construct in it), whether or not the IR represents it.
bool RegionExtractor::declaredInside(const VarDecl *VD) const {
  if (!Region || !VD->isLocalVarDeclOrParm())
    return false;
  for (const DeclContext *DC = VD->getDeclContext(); DC; DC = DC->getParent())
    if (DC == Region)
      return true;
  return false;
}

std::optional<unsigned> RegionExtractor::regionVar(const VarDecl *VD) {
  if (declaredInside(VD)) {
    Inner.insert(VD);
    return std::nullopt;
  }
  auto It = VarIndex.find(VD);
  if (It != VarIndex.end()) {
    if (It->second == ~0u)
      return std::nullopt;
    return It->second;
  }
  std::optional<Shape> S = shapeOf(VD);
  if (!S) {
    VarIndex[VD] = ~0u;
    return std::nullopt;
  }
  unsigned I = Vars.size();
  VarIndex[VD] = I;
  VarEntry E;
  E.Decl = VD;
  E.Name = nameOf(VD);
  E.S = *S;
  Vars.push_back(std::move(E));
  // Extents may name further scalars (`float (*A)[m]`): they are appended
  // after this variable. Vars may grow meanwhile, so index, don't hold on.
  json::Array Dims;
  Shape Sh = *S;
  for (const Dim &D : Sh.Dims) {
    if (D.Extent)
      Dims.push_back(intLit(int64_t(*D.Extent), "i64"));
    else if (D.Size) {
      // A VLA's extent is its size expression's value at the declaration: a
      // member access in it is not re-read at the directive.
      bool Before = NoMemberHoist;
      NoMemberHoist = true;
      Dims.push_back(expr(D.Size));
      NoMemberHoist = Before;
    } else
      Dims.push_back(nullptr);
  }
  Vars[I].Dims = std::move(Dims);
  return I;
}

/// A section bound of a clause: its IR expression, or — when the IR cannot
/// express it (`c.n`, `s->len`, a call) and it is an integer free of side
/// effects — a value hoisted out of the clause: a scalar argument that the
/// rewrite evaluates at the directive (ExtractedRegion::Hoisted).
json::Value RegionExtractor::bound(const Expr *E) {
  bool Before = SawUnsupported;
  SawUnsupported = false;
  json::Value V = expr(E);
  bool Bad = SawUnsupported;
  SawUnsupported = Before || Bad;
  if (!Bad)
    return V;
  std::optional<std::string> Name = hoist(E);
  if (!Name)
    return V;
  SawUnsupported = Before;
  return json::Object{{"kind", "var"}, {"name", *Name}, {"ty", *scalar(E->getType())}};
}

/// Makes the integer expression \p E of a clause (free of side effects) a scalar
/// argument whose value the rewrite computes at the directive; its IR name.
/// Clang evaluates some clause expressions (`if`) into a `.capture_expr.`
/// variable among the directive's pre-inits, which run after the rewrite's
/// temporaries: the expression it is initialised with.
const Expr *RegionExtractor::uncaptured(const Expr *E) {
  while (true) {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    const auto *CE = DRE ? dyn_cast<OMPCapturedExprDecl>(DRE->getDecl()) : nullptr;
    if (!CE || !CE->getInit())
      return E;
    E = CE->getInit();
  }
}

std::optional<std::string> RegionExtractor::hoist(const Expr *E) {
  E = uncaptured(E);
  std::optional<llvm::StringRef> Ty = scalar(E->getType());
  if (!Ty || !E->getType()->isIntegerType() || E->HasSideEffects(Ctx))
    return std::nullopt;
  std::string Name;
  do
    Name = "__tessera_h" + std::to_string(NextHoisted++);
  while (UsedNames.contains(Name));
  addHoisted(E, Name, *Ty, /*Inside=*/false);
  return Name;
}

/// Appends the scalar argument \p Name (unique, now used) whose value is \p E,
/// evaluated at the directive (ExtractedRegion::Hoisted, HoistedInside).
void RegionExtractor::addHoisted(const Expr *E, const std::string &Name,
                                 llvm::StringRef Ty, bool Inside) {
  UsedNames.insert(Name);
  VarEntry H;
  H.Decl = nullptr;
  H.Hoisted = E;
  H.Inside = Inside;
  H.Name = Name;
  H.S.Kind = "scalar";
  H.S.Elem = Ty;
  Vars.push_back(std::move(H));
}

/// A scalar member access of the region body that cannot change while the
/// region runs (`c.n`, `p->nx`, `s.grid.ny`: members of structs named by
/// variables declared outside the region) becomes a scalar argument whose value
/// the rewrite reads at the directive, like a hoisted clause value: the IR then
/// has a parameter (a loop bound, an extent, a coefficient) instead of a
/// construct it cannot represent. Invariance: the access is a chain of `.` and
/// `->` from such a variable, and the region writes no memory of the member's
/// type (nor through a character type, which may alias anything) — C's
/// effective-type rules then guarantee that no write of the region changes it.
/// Equal accesses share one argument. None when not hoistable.
std::optional<json::Value>
RegionExtractor::invariantMember(const MemberExpr *ME, bool &Aliased) {
  std::optional<llvm::StringRef> Ty = scalar(ME->getType());
  if (!Ty || !Region || !Top || NoMemberHoist || !memberRoot(ME))
    return std::nullopt;
  Aliased = chainMayChange(ME, /*Calls=*/true) && !unaliasedRoot(ME);
  // Only the member's own type written (not the types of the links before it,
  // nor anything through a call or a character type): a write could change it
  // only by landing on its address, which the runtime compares at launch with
  // everything the region may write (the footprints), reading it at the
  // directive only when none does (`p->dt` while the region writes doubles).
  bool Checked = false;
  if (Aliased && !CallsWrite && !WritesChars && addressable(ME) && !assignsField(ME)) {
    const auto *Base = dyn_cast<MemberExpr>(ME->getBase()->IgnoreParenImpCasts());
    bool LinksWritten = bodyMayWrite(ME->getBase()->IgnoreParenImpCasts()->getType(), true) ||
                        (Base && chainMayChange(Base, /*Calls=*/true));
    if (!LinksWritten)
      Aliased = false, Checked = true;
  }
  if (Aliased)
    return std::nullopt;
  llvm::FoldingSetNodeID ID;
  ME->Profile(ID, Ctx, /*Canonical=*/true);
  unsigned Key = ID.ComputeHash();
  std::string Name;
  if (auto It = HoistedMembers.find(Key); It != HoistedMembers.end()) {
    Name = It->second;
  } else {
    Name = memberName(ME);
    addHoisted(ME, Name, *Ty, /*Inside=*/true);
    Vars.back().Member = addressable(ME);
    Vars.back().Checked = Checked;
    HoistedMembers[Key] = Name;
  }
  return json::Value(
      json::Object{{"kind", "var"}, {"name", Name}, {"ty", Ty->str()}});
}

/// Whether the member chain \p ME has an address the rewrite can take: no link
/// is a bit-field, and its root is not a `register` variable.
static bool addressable(const MemberExpr *ME) {
  const Expr *Cur = ME;
  while (const auto *M = dyn_cast<MemberExpr>(Cur->IgnoreParenImpCasts())) {
    if (const auto *F = dyn_cast<FieldDecl>(M->getMemberDecl()); !F || F->isBitField())
      return false;
    Cur = M->getBase();
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Cur->IgnoreParenImpCasts()))
    if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
      return VD->getStorageClass() != SC_Register;
  return true;
}

/// Whether \p ME is a chain of `.` and `->` member accesses from a variable
/// declared outside the region that is not one of its loop indices (`c` of
/// `c.n`, `p` of `p->g.ny`) or from `this` (`n`, `this->u` in a member
/// function) — not from a call, a subscript or a local of the region.
/// Whether the region body may change what the member chain \p ME reads:
/// it may write memory of the type of one of its links (`g->grid.p`: `g`,
/// `g->grid`, `g->grid.p`; see bodyMayWrite, with \p Calls).
bool RegionExtractor::chainMayChange(const MemberExpr *ME, bool Calls) {
  const Expr *Cur = ME;
  while (true) {
    Cur = Cur->IgnoreParenImpCasts();
    if (bodyMayWrite(Cur->getType(), Calls))
      return true;
    const auto *M = dyn_cast<MemberExpr>(Cur);
    if (!M)
      return false;
    Cur = M->getBase();
  }
}

bool RegionExtractor::memberRoot(const MemberExpr *ME) const {
  const Expr *Base = ME;
  while (true) {
    Base = Base->IgnoreParenImpCasts();
    if (const auto *M = dyn_cast<MemberExpr>(Base)) {
      if (!isa<FieldDecl>(M->getMemberDecl()))
        return false;
      Base = M->getBase();
      continue;
    }
    break;
  }
  if (isa<CXXThisExpr>(Base))
    return true;
  const auto *DRE = dyn_cast<DeclRefExpr>(Base);
  const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  return VD && !declaredInside(VD) && !Inner.count(VD) && !LoopIndices.count(VD);
}

namespace {
/// How a function body (or a region of it) uses a variable through `.` member
/// accesses (`p`, `p.dt`, `p.g.n`): the strongest of its references' uses —
/// read as a value, named by an OpenMP clause (`map(to: p)`: no host pointer to
/// it) or captured by a construct's outlining (Read); assigned by name (`p.n =
/// …`, `p.n++`: Write); or anything else — its address taken, a reference bound
/// to it, a C++ member call or copy, a use inside a lambda or block (which may
/// hold it by reference), which may let something else reach it (Other).
/// Top-down with the path of ancestors: a node clang shares between places (a
/// directive's helper expressions) is classified at each.
enum class VarUse { Read, Write, Other };
struct UsesOf : RecursiveASTVisitor<UsesOf> {
  const VarDecl *VD;
  llvm::SmallVector<const Stmt *, 32> Path;
  VarUse Worst = VarUse::Read;
  bool TraverseStmt(Stmt *S, DataRecursionQueue * = nullptr) {
    if (!S)
      return true;
    Path.push_back(S);
    bool R = RecursiveASTVisitor<UsesOf>::TraverseStmt(S, nullptr);
    Path.pop_back();
    return R;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (E->getDecl() != VD)
      return true;
    // A lambda or block that captures it by reference may write it when called.
    bool InClosure = llvm::any_of(Path, [](const Stmt *S) { return isa<LambdaExpr>(S) || isa<BlockExpr>(S); });
    VarUse U = InClosure ? VarUse::Other : classify();
    if (U == VarUse::Other || (U == VarUse::Write && Worst == VarUse::Read))
      Worst = U;
    return Worst != VarUse::Other;
  }
  /// The use of the reference at the end of Path.
  VarUse classify() const {
    size_t I = Path.size() - 1;
    const Stmt *Cur = Path[I];
    while (I > 0) {
      const Stmt *P = Path[I - 1];
      if (isa<OMPExecutableDirective>(P) || isa<CapturedStmt>(P))
        return VarUse::Read;
      if (isa<ParenExpr>(P)) {
        Cur = P, --I;
        continue;
      }
      if (const auto *IC = dyn_cast<ImplicitCastExpr>(P)) {
        if (IC->getCastKind() == CK_LValueToRValue)
          return VarUse::Read;
        if (IC->getCastKind() != CK_NoOp)
          return VarUse::Other;
        Cur = P, --I;
        continue;
      }
      if (const auto *M = dyn_cast<MemberExpr>(P)) {
        if (M->isArrow() || M->getBase() != Cur || !isa<FieldDecl>(M->getMemberDecl()))
          return VarUse::Other;
        Cur = P, --I;
        continue;
      }
      if (const auto *B = dyn_cast<BinaryOperator>(P))
        return B->isAssignmentOp() && B->getLHS() == Cur ? VarUse::Write : VarUse::Other;
      if (const auto *U = dyn_cast<UnaryOperator>(P)) {
        if (U->isIncrementDecrementOp())
          return VarUse::Write;
        return U->getOpcode() == UO_AddrOf && toRuntime(I - 1) ? VarUse::Read : VarUse::Other;
      }
      return VarUse::Other;
    }
    return VarUse::Other;
  }
  /// Whether the address at Path[I] is an argument of a call of Tessera's
  /// runtime (a directive the plugin has rewritten: `&v` in
  /// `__tessera_data_begin(…)`), which keeps no pointer the program could use.
  bool toRuntime(size_t I) const {
    while (I > 0 && isa<ImplicitCastExpr>(Path[I - 1]))
      --I;
    const auto *CE = I > 0 ? dyn_cast<CallExpr>(Path[I - 1]) : nullptr;
    const FunctionDecl *FD = CE ? CE->getDirectCallee() : nullptr;
    return FD && FD->getIdentifier() && FD->getName().starts_with("__tessera_");
  }
};

VarUse usesOf(const Stmt *S, const VarDecl *VD) {
  UsesOf V;
  V.VD = VD;
  V.TraverseStmt(const_cast<Stmt *>(S));
  return V.Worst;
}
} // namespace

/// Whether the struct variable \p VD is a local (or by-value parameter) of its
/// function that no pointer or reference can reach: every use of it in the
/// function reads or assigns it, or members of it, by name (usesOf). No write
/// through a pointer — of the region or of anything it calls — can then change
/// it, whatever its members' types, so a region that writes memory of a
/// member's type (`u[i] = u[i] + p.dt * f[i]` with `double *u`) still reads
/// `p.dt` once, at the directive.
bool RegionExtractor::localUnaliased(const VarDecl *VD) {
  if (!VD || !VD->hasLocalStorage() || VD->getType()->isReferenceType() ||
      !VD->getType()->isRecordType())
    return false;
  if (auto It = UnaliasedLocals.find(VD); It != UnaliasedLocals.end())
    return It->second;
  const auto *FD = dyn_cast_or_null<FunctionDecl>(VD->getParentFunctionOrMethod());
  const Stmt *Body = FD ? FD->getBody() : nullptr;
  bool OK = Body && usesOf(Body, VD) != VarUse::Other;
  UnaliasedLocals[VD] = OK;
  return OK;
}

/// Whether the region assigns a member of the field \p ME names (`acc->re =
/// acc->re + …`): then it is data the region computes, not a parameter.
bool RegionExtractor::assignsField(const MemberExpr *ME) {
  if (!Top || !Top->hasAssociatedStmt())
    return true;
  struct Finder : RecursiveASTVisitor<Finder> {
    const ValueDecl *Field;
    bool Found = false;
    bool names(const Expr *E) const {
      const auto *M = dyn_cast<MemberExpr>(E->IgnoreParenImpCasts());
      return M && M->getMemberDecl() == Field;
    }
    bool VisitBinaryOperator(BinaryOperator *B) {
      Found |= B->isAssignmentOp() && names(B->getLHS());
      return !Found;
    }
    bool VisitUnaryOperator(UnaryOperator *U) {
      Found |= U->isIncrementDecrementOp() && names(U->getSubExpr());
      return !Found;
    }
  } F;
  F.Field = ME->getMemberDecl();
  F.TraverseStmt(const_cast<Stmt *>(Top->getAssociatedStmt()));
  return F.Found;
}

/// Whether the `.` chain \p ME is rooted at a local struct no pointer reaches
/// (localUnaliased) that the region does not assign by name either: then
/// nothing in the region changes what the chain reads.
bool RegionExtractor::unaliasedRoot(const MemberExpr *ME) {
  const VarDecl *VD = structRoot(ME);
  if (!localUnaliased(VD) || !Top || !Top->hasAssociatedStmt())
    return false;
  return usesOf(Top->getAssociatedStmt(), VD) == VarUse::Read;
}

/// The variable at the root of a member chain of `.` accesses (`s.a.n`), or
/// null (a chain through `->`, `this` or anything else).
const VarDecl *RegionExtractor::structRoot(const MemberExpr *ME) const {
  const Expr *Base = ME;
  while (const auto *M = dyn_cast<MemberExpr>(Base->IgnoreParenImpCasts())) {
    if (M->isArrow())
      return nullptr;
    Base = M->getBase();
  }
  const auto *DRE = dyn_cast<DeclRefExpr>(Base->IgnoreParenImpCasts());
  return DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
}

/// A struct (or union) variable declared outside a region that Tessera cannot
/// compile, which the region names: a data directive may have mapped its
/// bytes (shapeOf under DataObjects), so it becomes a region variable of that
/// shape, and the region's host run inside a data region uses the device copy
/// of its mapping like an array's. (Regions Tessera compiles only read scalar
/// members, by value at the directive.)
void RegionExtractor::structVar(const VarDecl *VD) {
  if (!VD || declaredInside(VD) || Inner.count(VD) || LoopIndices.count(VD) ||
      !VD->getType().getNonReferenceType()->isRecordType())
    return;
  auto It = VarIndex.find(VD);
  if (It != VarIndex.end()) {
    if (It->second != ~0u)
      return;
    VarIndex.erase(It);
  }
  bool Before = DataObjects;
  DataObjects = true;
  regionVar(VD);
  DataObjects = Before;
}

/// Whether the region body may write memory of type \p T: it assigns an object
/// of that type (or of its signed/unsigned twin, which may alias it), or of a
/// character, struct or union type, which may alias anything; with \p Calls,
/// also when it calls a function (other than a library builtin), which may
/// write anything.
bool RegionExtractor::bodyMayWrite(QualType T, bool Calls) {
  if (!WrittenTypes)
    collectWrittenTypes(Top && Top->hasAssociatedStmt()
                            ? Top->getAssociatedStmt()
                            : nullptr);
  T = T.getCanonicalType().getUnqualifiedType();
  if (WritesChars || (Calls && CallsWrite) ||
      WrittenTypes->contains(T.getTypePtr()))
    return true;
  if (const auto *BT = T->getAs<BuiltinType>();
      BT && BT->isInteger() && !T->isBooleanType()) {
    // int and unsigned int may alias each other.
    QualType Other = BT->isSignedInteger()
                         ? Ctx.getCorrespondingUnsignedType(T)
                         : Ctx.getCorrespondingSignedType(T);
    if (WrittenTypes->contains(Other.getCanonicalType().getTypePtr()))
      return true;
  }
  return false;
}

/// A region name for the member access \p ME, for messages and generated code
/// (`p->g.ny` is `p_g_ny`), unique among the region's names.
std::string RegionExtractor::memberName(const MemberExpr *ME) {
  std::string Base;
  for (char C : text(ME))
    if (std::isalnum(static_cast<unsigned char>(C)) || C == '_')
      Base += C;
    else if (!Base.empty() && Base.back() != '_')
      Base += '_';
  while (!Base.empty() && Base.back() == '_')
    Base.pop_back();
  if (Base.empty() || std::isdigit(static_cast<unsigned char>(Base[0])))
    Base = "member_" + Base;
  std::string Name = Base;
  for (unsigned K = 1; UsedNames.contains(Name); ++K)
    Name = Base + "_" + std::to_string(K);
  UsedNames.insert(Name);
  return Name;
}

/// A pointer member of a struct (`g->u`, `s.grid.data`: a chain of `.` and `->`
/// from a variable declared outside the region, ending in a pointer to scalars
/// or to constant-size arrays of them) becomes a region pointer variable whose
/// value the rewrite reads at the directive, like a pointer the region names
/// directly: subscripts through it are array accesses, a map clause or data
/// directive list item `g->u[0:n]` maps what it points to, and without a map
/// clause the data must be present. \p Inside: the access is in the region body,
/// where the pointer must not change while the region runs — the body writes no
/// memory of the pointer's type (nor of a character, struct or union type), so
/// C's effective-type rules guarantee no write changes it (\p Aliased is set
/// otherwise). A list item of a clause is evaluated at the directive. Equal
/// accesses share one variable. None when not a hoistable pointer member.
std::optional<unsigned>
RegionExtractor::pointerMember(const MemberExpr *ME, bool Inside,
                               bool &Aliased) {
  QualType T = ME->getType().getCanonicalType();
  if (!T->isPointerType() || NoMemberHoist || !Inlining.empty() ||
      !memberRoot(ME))
    return std::nullopt;
  if (Inside && (!Region || !Top))
    return std::nullopt;
  Shape S;
  S.Kind = "pointer";
  S.Dims.push_back(Dim());
  QualType P = T->getPointeeType();
  while (const ArrayType *AT = Ctx.getAsArrayType(P)) {
    S.Dims.push_back(dimOf(AT));
    if (!S.Dims.back().Extent)
      return std::nullopt; // a pointer to variable-length rows
    P = AT->getElementType();
  }
  std::optional<llvm::StringRef> Elem = scalar(P);
  if (!Elem)
    return std::nullopt;
  S.Elem = *Elem;
  // A call the kernel cannot make keeps the region on the host, where what
  // the pointer reaches is its footprint: calls that could change the member
  // itself are found by calleeData (they name its variable, or file-scope data
  // that reaches it).
  if (Inside && (Aliased = chainMayChange(ME, /*Calls=*/false)))
    return std::nullopt;
  llvm::FoldingSetNodeID ID;
  ME->Profile(ID, Ctx, /*Canonical=*/true);
  unsigned Key = ID.ComputeHash();
  if (auto It = PointerMembers.find(Key); It != PointerMembers.end())
    return It->second;
  unsigned I = Vars.size();
  VarEntry E;
  E.Decl = nullptr;
  E.Hoisted = ME;
  E.Inside = Inside;
  E.Name = memberName(ME);
  E.S = S;
  for (const Dim &D : S.Dims)
    E.Dims.push_back(D.Extent ? json::Value(intLit(int64_t(*D.Extent), "i64"))
                              : json::Value(nullptr));
  Vars.push_back(std::move(E));
  PointerMembers[Key] = I;
  return I;
}

/// The canonical types of everything the region body assigns or increments
/// (an assignment, compound assignment or `++`/`--` operand), except variables
/// declared inside the region and loop indices, which no outside memory
/// aliases. A character type among them sets WritesChars. A call of a function
/// whose body clang sees (a `static inline` helper, C++'s `std::abs(double)`)
/// adds what its body writes, except its own parameters and automatic locals;
/// a call of a C library builtin (`sqrt`) writes at most `errno`, an object of
/// its own that no member of a struct is; any other call sets CallsWrite.
void RegionExtractor::collectWrittenTypes(const Stmt *Body) {
  WrittenTypes.emplace();
  // A statement and the function whose body it belongs to (null: the region).
  llvm::SmallVector<std::pair<const Stmt *, const FunctionDecl *>, 64> Work{{Body, nullptr}};
  llvm::SmallPtrSet<const FunctionDecl *, 8> Walked;
  auto Note = [&](const Expr *LHS, const FunctionDecl *In) {
    LHS = LHS->IgnoreParenImpCasts();
    if (const auto *D = dyn_cast<DeclRefExpr>(LHS))
      if (const auto *V = dyn_cast<VarDecl>(D->getDecl())) {
        if (!In && (declaredInside(V) || LoopIndices.count(V)))
          return;
        if (In && V->getDeclContext() == In && V->hasLocalStorage() &&
            !V->getType()->isReferenceType())
          return;
      }
    QualType T = LHS->getType().getCanonicalType().getUnqualifiedType();
    if (T->isAnyCharacterType() || T->isStructureOrClassType() ||
        T->isUnionType())
      WritesChars = true; // may alias anything (or any member)
    WrittenTypes->insert(T.getTypePtr());
  };
  while (!Work.empty()) {
    auto [S, In] = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isAssignmentOp())
      Note(BO->getLHS(), In);
    if (const auto *UO = dyn_cast<UnaryOperator>(S); UO && UO->isIncrementDecrementOp())
      Note(UO->getSubExpr(), In);
    // Calls may write anything; so may C++ operator calls and constructors.
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      const FunctionDecl *FD = CE->getDirectCallee();
      const FunctionDecl *Def = FD ? FD->getDefinition() : nullptr;
      if (FD && FD->getBuiltinID() && !isa<CXXOperatorCallExpr>(CE)) {
        // A library builtin: errno at most.
      } else if (Def && Def->hasBody() && !isa<CXXMethodDecl>(Def) &&
                 !isa<CXXOperatorCallExpr>(CE) && !Def->isVariadic() &&
                 Walked.size() < 64) {
        if (Walked.insert(Def).second)
          Work.push_back({Def->getBody(), Def});
      } else {
        CallsWrite = true;
      }
    }
    if (isa<CXXConstructExpr>(S))
      CallsWrite = true;
    if (const auto *CS = dyn_cast<CapturedStmt>(S))
      Work.push_back({CS->getCapturedStmt(), In});
    for (const Stmt *C : S->children())
      Work.push_back({C, In});
  }
}

bool RegionExtractor::carriesPointer(QualType T, unsigned Depth) const {
  if (T.isNull() || Depth > 8)
    return false;
  T = T.getCanonicalType();
  if (T->isPointerType() || T->isReferenceType() || T->isMemberPointerType())
    return true;
  if (const ArrayType *AT = Ctx.getAsArrayType(T))
    return carriesPointer(AT->getElementType(), Depth + 1);
  if (const auto *RD = T->getAsRecordDecl()) {
    const RecordDecl *Def = RD->getDefinition();
    if (!Def)
      return true; // incomplete: assume the worst
    if (const auto *CXX = dyn_cast<CXXRecordDecl>(Def))
      for (const CXXBaseSpecifier &B : CXX->bases())
        if (carriesPointer(B.getType(), Depth + 1))
          return true;
    for (const FieldDecl *F : Def->fields())
      if (carriesPointer(F->getType(), Depth + 1))
        return true;
  }
  return false;
}

/// The unknown-footprint reason of memory reached through \p What.
static std::string reachesThrough(const std::string &What) {
  return "it reaches memory through " + What +
         ", whose pointers Tessera cannot follow (it cannot tell which mapped "
         "data the region uses); use the arrays directly in the region";
}

/// When part of the region is `unsupported`, its uses of variables are not all
/// in the IR: every array or pointer the region's code names becomes a region
/// variable anyway, so that a host run inside a data region copies its device
/// data in and back (the region's footprint is then unknown, so all of it).
void RegionExtractor::completeVars(const Stmt *Body) {
  if (!SawUnsupported || !Body)
    return;
  llvm::SmallVector<const Stmt *, 64> Work{Body};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
        if (!Inner.count(VD) && !LoopIndices.count(VD) && !declaredInside(VD)) {
          structVar(VD);
          std::optional<Shape> Sh = shapeOf(VD);
          if (Sh && Sh->Kind != "scalar" && !VarIndex.count(VD))
            regionVar(VD);
          else if (Sh && Sh->Kind == "scalar" && assignedInRegion(VD)) {
            // A scalar the region may write in a statement the IR does not
            // represent (`#pragma omp atomic`): mapped (by a map clause or
            // `defaultmap`), the host run writes its device copy.
            if (std::optional<unsigned> I = regionVar(VD))
              Vars[*I].Written = true;
          }
          else if (!Sh && carriesPointer(VD->getType().getNonReferenceType()))
            // Memory reached through it (`s.pp[i][0]`, `pp[i][j]`) may be
            // mapped on the device under another name: the region's footprint
            // is unknown.
            unknownFootprint(reachesThrough("'" + VD->getNameAsString() +
                                            "' (" + typeText(VD->getType()) +
                                            ")"));
        }
    // `this` of a member function whose object holds pointers.
    if (const auto *TE = dyn_cast<CXXThisExpr>(S))
      if (carriesPointer(TE->getType()->getPointeeType()))
        unknownFootprint(reachesThrough("'this' (" +
                                        typeText(TE->getType()) + ")"));
    // A pointer member of a struct (`s.p`, `this->u`, `g->grid.v`) that the
    // region cannot change is a pointer like any other: what it points to is
    // mapped under that pointer. A scalar member is a value of host memory,
    // unless its struct variable is mapped as a whole: that variable is then
    // part of the footprint. Neither makes the footprint unknown.
    if (const auto *ME = dyn_cast<MemberExpr>(S); ME && memberRoot(ME)) {
      structVar(structRoot(ME));
      bool Aliased = false;
      if (scalar(ME->getType()) ||
          pointerMember(ME, /*Inside=*/true, Aliased))
        continue;
    }
    // What a called function uses beyond its arguments: file-scope data.
    if (const auto *CE = dyn_cast<CallExpr>(S)) {
      llvm::SmallPtrSet<const FunctionDecl *, 16> Seen;
      calleeData(CE, CE->getDirectCallee(), Seen, 0);
    }
    // A captured statement's children are its body and the initialisers of its
    // captures, references to the captured variables themselves (`m` for a body
    // that uses only `m.g.u`): the body alone says how they are used.
    if (const auto *CS = dyn_cast<CapturedStmt>(S)) {
      Work.push_back(CS->getCapturedStmt());
      continue;
    }
    if (const auto *LE = dyn_cast<LambdaExpr>(S))
      Work.push_back(LE->getBody());
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
}

/// The data a call of \p FD (at \p CE) may use besides what its arguments
/// point to (which are region variables already, each with all of its
/// mapping): the file-scope arrays and pointers that its body, and the bodies
/// of the functions it calls, name become region variables, so that a host run
/// inside a data region gets their device data. A function whose body Tessera
/// cannot see (defined in another file, called through a pointer, virtual)
/// may use any of them: the region's footprint is then unknown. Functions of
/// system headers and compiler builtins use only their arguments' data;
/// OpenMP's API functions none of the program's.
void RegionExtractor::calleeData(const CallExpr *CE, const FunctionDecl *FD,
                                 llvm::SmallPtrSetImpl<const FunctionDecl *> &Seen,
                                 unsigned Depth) {
  if (!UnknownFootprint.empty())
    return;
  if (!FD) {
    unknownFootprint("it calls a function through a pointer ('" + text(CE) +
                     "'), which may use data mapped on the device that the "
                     "region does not name, so Tessera cannot tell which "
                     "mapped data the region uses; call the function directly");
    return;
  }
  if (FD->getBuiltinID() || FD->hasAttr<ConstAttr>() ||
      SM.isInSystemHeader(FD->getLocation()) ||
      (FD->getIdentifier() && FD->getName().starts_with("omp_")))
    return;
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD); MD && MD->isVirtual()) {
    unknownFootprint("it calls the virtual function '" +
                     FD->getQualifiedNameAsString() +
                     "', whose overrides may use data mapped on the device "
                     "that the region does not name, so Tessera cannot tell "
                     "which mapped data the region uses");
    return;
  }
  const FunctionDecl *Def = FD->getDefinition();
  if (!Def || !Def->hasBody() || Depth > 16) {
    unknownFootprint("it calls '" + FD->getQualifiedNameAsString() +
                     "', whose body Tessera cannot see here: the function may "
                     "use data mapped on the device that the region does not "
                     "name, so Tessera cannot tell which mapped data the "
                     "region uses; define the function before the region in "
                     "this file");
    return;
  }
  if (!Seen.insert(Def).second)
    return;
  llvm::SmallVector<const Stmt *, 64> Work{Def->getBody()};
  while (!Work.empty() && UnknownFootprint.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
          VD && VD->isFileVarDecl()) {
        std::optional<Shape> Sh = shapeOf(VD);
        structVar(VD);
        if (Sh && Sh->Kind != "scalar") {
          regionVar(VD);
        } else if (Sh) {
          // The function reads and writes the variable itself, not a
          // firstprivate copy (as a direct use in the region would): a
          // scalar the region may write back, through its mapping when a
          // data directive mapped it (`map(tofrom: g)`).
          if (std::optional<unsigned> I = regionVar(VD)) {
            Vars[*I].Written = true;
            if (Vars[*I].Map.kind() == json::Value::Null)
              Vars[*I].Map = "tofrom";
          }
        } else if (carriesPointer(VD->getType().getNonReferenceType()))
          unknownFootprint(reachesThrough(
              "'" + VD->getNameAsString() + "' (" + typeText(VD->getType()) +
              "), which '" + FD->getQualifiedNameAsString() + "' uses"));
      }
    if (const auto *C = dyn_cast<CallExpr>(S))
      calleeData(C, C->getDirectCallee(), Seen, Depth + 1);
    if (const auto *LE = dyn_cast<LambdaExpr>(S))
      Work.push_back(LE->getBody());
    for (const Stmt *Ch : S->children())
      Work.push_back(Ch);
  }
}

//===----------------------------------------------------------------------===//
// Clauses
//===----------------------------------------------------------------------===//

void RegionExtractor::unsupportedClause(const OMPClause *C,
                                        llvm::StringRef Name) {
  UnsupportedClauses.push_back(json::Object{
      {"name", Name.empty()
                   ? llvm::omp::getOpenMPClauseName(C->getClauseKind()).str()
                   : Name.str()},
      {"loc", loc(C->getBeginLoc())}});
}

/// Records the clauses of \p D. \p OwnsLoop: \p D is the loop directive whose
/// associated loop nest is the one Tessera compiles (so its `collapse` counts).
void RegionExtractor::clauses(const OMPExecutableDirective &D, bool OwnsLoop) {
  for (const OMPClause *C : D.clauses()) {
    // Clauses Sema added (implicit maps, firstprivates) are not the user's.
    if (!C || C->isImplicit())
      continue;
    switch (C->getClauseKind()) {
    case llvm::omp::OMPC_map:
      mapClause(cast<OMPMapClause>(C));
      break;
    case llvm::omp::OMPC_if: {
      // `if(c)` / `if(target: c)` of the target construct decides the device:
      // evaluated at the directive and passed to the runtime (false: OpenMP's
      // host device). Conditions of the other constructs of a combined directive
      // (`if(parallel: c)`) only change how many threads run, not the results.
      const auto *IC = cast<OMPIfClause>(C);
      OpenMPDirectiveKind M = IC->getNameModifier();
      if (&D == Top && (M == llvm::omp::OMPD_unknown || M == llvm::omp::OMPD_target)) {
        const Expr *Cond = uncaptured(IC->getCondition());
        if (Cond->HasSideEffects(Ctx))
          unsupportedClause(C, "if with side effects");
        else
          IfCondition = Cond;
      }
      break;
    }
    case llvm::omp::OMPC_reduction:
      reductionClause(cast<OMPReductionClause>(C), D);
      break;
    // `device(n)`: evaluated at the directive and passed to the runtime, which
    // runs the region on OpenMP's host device when n is not Tessera's device.
    case llvm::omp::OMPC_device: {
      const auto *DC = cast<OMPDeviceClause>(C);
      const Expr *Num = uncaptured(DC->getDevice());
      if (DC->getModifier() == OMPC_DEVICE_ancestor)
        unsupportedClause(C, "device(ancestor: ...)");
      else if (Num->HasSideEffects(Ctx) || !Num->getType()->isIntegerType())
        unsupportedClause(C, "device with side effects");
      else
        DeviceNum = Num;
      break;
    }
    case llvm::omp::OMPC_collapse:
      if (OwnsLoop)
        if (std::optional<int64_t> N =
                evalInt(cast<OMPCollapseClause>(C)->getNumForLoops()))
          Collapse = unsigned(*N);
      break;
    case llvm::omp::OMPC_private:
    case llvm::omp::OMPC_firstprivate: {
      // Harmless for scalars (loop indices, temporaries: a write to one is
      // still reported by the Rust side); private copies of arrays are not.
      bool AllScalar = true;
      for (const Stmt *Child : C->children())
        if (const auto *E = dyn_cast_or_null<Expr>(Child))
          if (!scalar(E->getType()))
            AllScalar = false;
      if (!AllScalar)
        unsupportedClause(C);
      break;
    }
    // `nowait` / `depend` make the target construct a deferrable target task.
    // Tessera runs it undeferred (OpenMP lets any task run at once): the rewrite
    // waits for the encountering task's child tasks first when the directive
    // has `depend` (every sibling it may depend on is among them), and after a
    // host run of the original (deferred) directive inside a data region before
    // anything is copied back (TesseraPlugin.cpp, rewrite).
    case llvm::omp::OMPC_nowait:
    case llvm::omp::OMPC_depend:
      break;
    case llvm::omp::OMPC_defaultmap:
      defaultmapClause(cast<OMPDefaultmapClause>(C));
      break;
    // `is_device_ptr(d)`: d holds a device address (from `omp_target_alloc`,
    // which the Tessera runtime implements). A pointer without a map clause is
    // exactly that for the runtime: its data is looked up in the device data
    // environment, which holds every block omp_target_alloc made (a region
    // whose pointer is found nowhere runs on the host, where the address is
    // a host one). List items that are not pointer variables are not
    // supported.
    case llvm::omp::OMPC_is_device_ptr:
      for (const Expr *Item : cast<OMPIsDevicePtrClause>(C)->varlists()) {
        const auto *DRE = dyn_cast<DeclRefExpr>(Item->IgnoreParenImpCasts());
        if (!DRE || !isa<VarDecl>(DRE->getDecl()) ||
            !DRE->getDecl()->getType().getNonReferenceType()->isPointerType()) {
          unsupportedClause(C, "is_device_ptr of a list item that is not a pointer variable");
          break;
        }
      }
      break;
    // Scheduling, parallelism and vectorisation hints: no effect on results.
    case llvm::omp::OMPC_schedule:
    case llvm::omp::OMPC_dist_schedule:
    case llvm::omp::OMPC_shared:
    case llvm::omp::OMPC_default:
    case llvm::omp::OMPC_num_teams:
    case llvm::omp::OMPC_thread_limit:
    case llvm::omp::OMPC_num_threads:
    case llvm::omp::OMPC_proc_bind:
    case llvm::omp::OMPC_safelen:
    case llvm::omp::OMPC_simdlen:
    case llvm::omp::OMPC_aligned:
    case llvm::omp::OMPC_nontemporal:
    case llvm::omp::OMPC_order:
    case llvm::omp::OMPC_bind:
      break;
    // Everything else changes semantics or synchronisation (device,
    // lastprivate, in_reduction, has_device_addr, allocate,
    // uses_allocators, ordered, …).
    default:
      unsupportedClause(C);
      break;
    }
  }
}

/// Whether the directive \p D is the whole region: the target construct
/// itself, or reached from its body through compound statements of one
/// statement and constructs without anything else around them (`target` +
/// `{ parallel for … }`, `target teams` + `distribute parallel for …`).
bool RegionExtractor::wholeRegion(const OMPExecutableDirective &D) const {
  if (&D == Top)
    return true;
  if (!Top->hasAssociatedStmt())
    return false;
  const Stmt *S = Top->getInnermostCapturedStmt()->getCapturedStmt();
  while (S) {
    if (S == &D)
      return true;
    if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
      if (CS->size() != 1)
        return false;
      S = CS->body_front();
    } else if (const auto *ED = dyn_cast<OMPExecutableDirective>(S)) {
      if (!ED->hasAssociatedStmt())
        return false;
      S = ED->getInnermostCapturedStmt()->getCapturedStmt();
    } else {
      return false;
    }
  }
  return false;
}

/// `reduction(op: s, …)` on the target construct or a construct nested in it:
/// each scalar list item becomes a `Region::reductions` entry (and a written
/// region variable). Modifiers (`inscan`, `task`) and user-defined reductions
/// are unsupported clauses; list items Tessera does not reduce (array sections,
/// arrays, variables declared in the region, a construct that is only part of
/// the region, one variable reduced with two operators) are entries that say
/// what they are (`unsupported`), for the Rust side's remark.
void RegionExtractor::reductionClause(const OMPReductionClause *RC,
                                      const OMPExecutableDirective &D) {
  if (RC->getModifier() != OMPC_REDUCTION_unknown) {
    unsupportedClause(RC, "reduction with a modifier");
    return;
  }
  // The operator. `-` combines as `+` (OpenMP 5.2, where it is deprecated).
  DeclarationName Id = RC->getNameInfo().getName();
  std::string Op;
  if (Id.getNameKind() == DeclarationName::CXXOperatorName) {
    switch (Id.getCXXOverloadedOperator()) {
    case OO_Plus: case OO_Minus: Op = "add"; break;
    case OO_Star: Op = "mul"; break;
    case OO_Amp: Op = "bitand"; break;
    case OO_Pipe: Op = "bitor"; break;
    case OO_Caret: Op = "bitxor"; break;
    case OO_AmpAmp: Op = "land"; break;
    case OO_PipePipe: Op = "lor"; break;
    default: break;
    }
  } else if (const IdentifierInfo *II = Id.getAsIdentifierInfo()) {
    if (II->getName() == "min" || II->getName() == "max")
      Op = II->getName().str();
  }
  // A predefined reduction's combiner is an assignment clang built from the
  // operator; a user-defined one (`declare reduction`) is a call.
  for (const Expr *Comb : RC->reduction_ops())
    if (Comb && !isa<BinaryOperator>(Comb->IgnoreImpCasts()))
      Op.clear();
  if (Op.empty()) {
    unsupportedClause(RC, "user-defined reduction '" +
                              Id.getAsString() + "'");
    return;
  }
  bool Whole = wholeRegion(D);
  for (const Expr *Item : RC->varlists()) {
    const Expr *E = skipTransparent(Item);
    const auto *DRE = dyn_cast<DeclRefExpr>(E);
    const auto *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    auto Entry = [&](std::string Var, llvm::StringRef Unsupported) {
      json::Object O{{"op", Op}, {"var", std::move(Var)},
                     {"loc", loc(RC->getBeginLoc())}};
      if (!Unsupported.empty())
        O["unsupported"] = Unsupported.str();
      Reductions.push_back(std::move(O));
    };
    bool IsArray = VD && VD->getType()->isArrayType();
    if ((!VD && (isa<ArraySectionExpr>(E) || isa<ArraySubscriptExpr>(E))) ||
        IsArray) {
      arrayReduction(RC, D, Item, Op, Whole);
      continue;
    }
    if (!VD) {
      Entry(text(Item), "list item that is not a variable");
      continue;
    }
    if (!scalar(VD->getType())) {
      Entry(VD->getNameAsString(), "variable of " + typeText(VD->getType()));
      continue;
    }
    std::optional<unsigned> I = regionVar(VD);
    if (!I) {
      Entry(VD->getNameAsString(), "declared in the region");
      continue;
    }
    if (!Whole) {
      Entry(Vars[*I].Name, "part of the region");
      continue;
    }
    // A variable reduced by the target construct and by a construct nested in
    // it with the same operator: one private copy per level, one combine each;
    // with the identity as the inner copy's start, the same value.
    auto It = ReductionOps.find(VD);
    if (It != ReductionOps.end()) {
      if (It->second != Op)
        Entry(Vars[*I].Name, "second operator");
      continue;
    }
    ReductionOps[VD] = Op;
    Vars[*I].Written = true;
    if (&D == Top)
      TopReductionVars.push_back(*I);
    Entry(Vars[*I].Name, "");
  }
}

/// One array or array-section list item of a reduction clause (`a`,
/// `a[l:n]`, `A[l0:n0][l1:n1]`, `a[i]`) with operator \p Op: a
/// `Region::array_reductions` entry over a region variable, the variable then
/// written; what Tessera does not reduce is an unsupported `Region::reductions`
/// entry (a strided section, a member, a construct that is only part of the
/// region, a second operator).
void RegionExtractor::arrayReduction(const OMPReductionClause *RC,
                                     const OMPExecutableDirective &D,
                                     const Expr *Item, llvm::StringRef Op,
                                     bool Whole) {
  auto Unsupported = [&](std::string Var, llvm::StringRef What) {
    Reductions.push_back(json::Object{{"op", Op.str()},
                                      {"var", std::move(Var)},
                                      {"loc", loc(RC->getBeginLoc())},
                                      {"unsupported", What.str()}});
  };
  ListItem L = listItem(Item);
  if (!L.Var) {
    Unsupported(text(Item), "array section that is not of a variable");
    return;
  }
  const std::string &Name = Vars[*L.Var].Name;
  if (L.Strided) {
    Unsupported(text(Item), "strided array section");
    return;
  }
  if (!Whole) {
    Unsupported(text(Item), "part of the region");
    return;
  }
  const VarDecl *VD = Vars[*L.Var].Decl;
  if (!VD) {
    Unsupported(text(Item), "array section of a struct member");
    return;
  }
  auto It = ReductionOps.find(VD);
  if (It != ReductionOps.end()) {
    if (It->second != Op)
      Unsupported(text(Item), "second operator");
    return;
  }
  ReductionOps[VD] = Op.str();
  Vars[*L.Var].Written = true;
  json::Object O{{"op", Op.str()},
                 {"var", Name},
                 {"loc", loc(RC->getBeginLoc())}};
  if (!L.Section.empty())
    O["section"] = json::Array(L.Section);
  ArrayReductions.push_back(std::move(O));
  if (&D == Top)
    TopArrayReductions.push_back({*L.Var, std::move(L.Section)});
}

/// The IR map type of \p MC (`"tofrom"`, `"always to"`, …; see
/// `tessera_ir::MapKind`), or none after recording the clause as unsupported
/// (a modifier other than `always` and `close`, or a map type Tessera lacks).
std::optional<std::string> RegionExtractor::mapKind(const OMPMapClause *MC,
                                                    bool *Present) {
  bool Always = false;
  for (OpenMPMapModifierKind M : MC->getMapTypeModifiers()) {
    switch (M) {
    case OMPC_MAP_MODIFIER_unknown:
    case OMPC_MAP_MODIFIER_close: // a placement hint
      break;
    case OMPC_MAP_MODIFIER_always:
      Always = true;
      break;
    case OMPC_MAP_MODIFIER_present:
      // Data directives check it at run time (MapItem::present); regions do not
      // implement it.
      if (Present) {
        *Present = true;
        break;
      }
      [[fallthrough]];
    default:
      unsupportedClause(MC, ("map(" +
                             llvm::StringRef(getOpenMPSimpleClauseTypeName(
                                 llvm::omp::OMPC_map, M)) +
                             ", ...)")
                                .str());
      return std::nullopt;
    }
  }
  std::string Kind;
  switch (MC->getMapType()) {
  case OMPC_MAP_to: Kind = "to"; break;
  case OMPC_MAP_from: Kind = "from"; break;
  case OMPC_MAP_tofrom:
  case OMPC_MAP_unknown: Kind = "tofrom"; break;
  case OMPC_MAP_alloc: Kind = "alloc"; break;
  case OMPC_MAP_release: Kind = "release"; break;
  case OMPC_MAP_delete: Kind = "delete"; break;
  default:
    unsupportedClause(MC);
    return std::nullopt;
  }
  if (Always) {
    if (Kind != "to" && Kind != "from" && Kind != "tofrom") {
      unsupportedClause(MC, "map(always, " + Kind + ": ...)");
      return std::nullopt;
    }
    Kind = "always " + Kind;
  }
  return Kind;
}

/// Whether a `to`/`from` motion clause of `target update` carries the
/// `present` modifier, the only one Tessera implements; none (and the clause
/// recorded as unsupported) when it has another (`mapper`, `iterator`).
template <typename MotionClause>
std::optional<bool> RegionExtractor::motionPresent(const MotionClause *C) {
  bool Present = false;
  for (OpenMPMotionModifierKind M : C->getMotionModifiers()) {
    if (M == OMPC_MOTION_MODIFIER_unknown)
      continue;
    if (M == OMPC_MOTION_MODIFIER_present) {
      Present = true;
      continue;
    }
    unsupportedClause(
        C, (llvm::omp::getOpenMPClauseName(C->getClauseKind()) + "(" +
            llvm::StringRef(getOpenMPSimpleClauseTypeName(
                C->getClauseKind(), M)) +
            ": ...)")
               .str());
    return std::nullopt;
  }
  return Present;
}

/// The map type of a clause Tessera does not implement, as a `MapItem` map
/// (its items still name their variables, see runData).
std::string RegionExtractor::baseMapKind(const OMPMapClause *MC) const {
  switch (MC->getMapType()) {
  case OMPC_MAP_to: return "to";
  case OMPC_MAP_from: return "from";
  case OMPC_MAP_alloc: return "alloc";
  case OMPC_MAP_release: return "release";
  case OMPC_MAP_delete: return "delete";
  default: return "tofrom";
  }
}

/// Resolves one list item (`a`, `a[l:n]`, `A[l0:n0][l1:n1]`, `a[i]`) to its
/// variable and its section, one entry per subscript given.
RegionExtractor::ListItem RegionExtractor::listItem(const Expr *Item) {
  ListItem R;
  // `A[l0:n0][l1:n1]` nests innermost-outermost; collect, then reverse.
  llvm::SmallVector<const Expr *, 4> Chain;
  const Expr *Cur = Item;
  while (true) {
    Cur = skipTransparent(Cur)->IgnoreParenImpCasts();
    if (const auto *AS = dyn_cast<ArraySectionExpr>(Cur)) {
      Chain.push_back(AS);
      Cur = AS->getBase();
    } else if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Cur)) {
      Chain.push_back(ASE);
      Cur = ASE->getBase();
    } else {
      break;
    }
  }
  std::reverse(Chain.begin(), Chain.end());
  const auto *DRE = dyn_cast<DeclRefExpr>(Cur);
  const VarDecl *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  std::optional<unsigned> I;
  if (!VD) {
    const auto *ME = dyn_cast<MemberExpr>(Cur);
    bool Aliased = false;
    // A pointer member (`g->u[0:n]`) is evaluated at the directive.
    if (ME)
      I = pointerMember(ME, /*Inside=*/false, Aliased);
    if (!I) {
      R.Unsupported = ME ? "member access" : "list item";
      return R;
    }
  } else {
    I = regionVar(VD);
    if (!I) {
      R.Unsupported = typeText(VD->getType());
      return R;
    }
  }
  R.Var = I;
  for (unsigned K = 0; K < Chain.size(); ++K) {
    const Expr *Sub = Chain[K];
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Sub)) {
      R.Section.push_back(json::Object{{"lower", bound(ASE->getIdx())},
                                       {"length", intLit(1, "i64")}});
      R.Strides.push_back(intLit(1, "i64"));
      continue;
    }
    const auto *AS = cast<ArraySectionExpr>(Sub);
    json::Value StrideV = intLit(1, "i64");
    if (const Expr *Stride = AS->getStride()) {
      std::optional<int64_t> S = evalInt(Stride);
      if (!S || *S != 1) {
        StrideV = bound(Stride);
        R.Strided = true;
      }
    }
    R.Strides.push_back(std::move(StrideV));
    const Expr *Lower = AS->getLowerBound();
    json::Value LowerV = Lower ? bound(Lower) : intLit(0, "i64");
    json::Value LengthV = nullptr;
    if (const Expr *Len = AS->getLength()) {
      LengthV = bound(Len);
    } else {
      // `a[l:]` / `a[:]`: up to the end of the dimension.
      const Shape &S = Vars[*I].S;
      Dim D = K < S.Dims.size() ? S.Dims[K] : Dim();
      std::optional<int64_t> LowerC =
          Lower ? evalInt(Lower) : std::optional<int64_t>(0);
      if (D.Extent && LowerC)
        LengthV = intLit(int64_t(*D.Extent) - *LowerC, "i64");
      else if ((D.Extent || D.Size) && LowerC && *LowerC == 0)
        LengthV = extent(D, AS);
      else if (D.Extent || D.Size)
        LengthV = json::Object{{"kind", "binary"},
                               {"op", "sub"},
                               {"lhs", castTo(extent(D, AS), "i64")},
                               {"rhs", castTo(bound(Lower), "i64")},
                               {"ty", "i64"}};
      else
        LengthV = unsupported("array section without length", AS);
    }
    R.Section.push_back(json::Object{{"lower", std::move(LowerV)},
                                     {"length", std::move(LengthV)}});
  }
  return R;
}

void RegionExtractor::mapClause(const OMPMapClause *MC) {
  std::optional<std::string> Kind = mapKind(MC);
  // A clause Tessera does not implement (`map(present, tofrom: …)`) keeps the
  // region on the host (mapKind recorded it); its map type still tells the host
  // run which variables the region maps, e.g. a scalar it writes, whose device
  // copy an enclosing data region may hold.
  if (!Kind)
    Kind = baseMapKind(MC);
  for (const Expr *Item : MC->varlists()) {
    ListItem L = listItem(Item);
    // Members, derefs and the like are reported at their uses in the body; a
    // variable mapped twice keeps its first map.
    if (!L.Var || Vars[*L.Var].Map.kind() != json::Value::Null)
      continue;
    if (L.Strided) {
      unsupportedClause(MC, "strided array section in a map clause");
      continue;
    }
    Vars[*L.Var].Map = *Kind;
    Vars[*L.Var].Section = std::move(L.Section);
  }
}

/// `defaultmap(<behaviour>[: <category>])`: records the implicit map type of
/// the variables of a category that have no map clause (applyDefaultmap).
/// Behaviours that only restate Tessera's defaults (`default`, `none` — which
/// clang enforces —, `firstprivate` for scalars, `present` and `firstprivate`
/// for pointers, whose data a region always finds present) change nothing;
/// `alloc`/`to`/`from`/`tofrom` become map types; what Tessera does not
/// implement (`firstprivate` or `present` for arrays, map types on pointer
/// variables themselves) is an unsupported clause.
void RegionExtractor::defaultmapClause(const OMPDefaultmapClause *C) {
  llvm::StringRef Behaviour;
  switch (C->getDefaultmapModifier()) {
  case OMPC_DEFAULTMAP_MODIFIER_alloc: Behaviour = "alloc"; break;
  case OMPC_DEFAULTMAP_MODIFIER_to: Behaviour = "to"; break;
  case OMPC_DEFAULTMAP_MODIFIER_from: Behaviour = "from"; break;
  case OMPC_DEFAULTMAP_MODIFIER_tofrom: Behaviour = "tofrom"; break;
  case OMPC_DEFAULTMAP_MODIFIER_firstprivate: Behaviour = "firstprivate"; break;
  case OMPC_DEFAULTMAP_MODIFIER_present: Behaviour = "present"; break;
  case OMPC_DEFAULTMAP_MODIFIER_none:
  case OMPC_DEFAULTMAP_MODIFIER_default:
    return;
  default:
    unsupportedClause(C);
    return;
  }
  llvm::SmallVector<llvm::StringRef, 3> Categories;
  switch (C->getDefaultmapKind()) {
  case OMPC_DEFAULTMAP_scalar: Categories = {"scalar"}; break;
  case OMPC_DEFAULTMAP_aggregate: Categories = {"aggregate"}; break;
  case OMPC_DEFAULTMAP_pointer: Categories = {"pointer"}; break;
  case OMPC_DEFAULTMAP_unknown: Categories = {"scalar", "aggregate", "pointer"}; break;
  default:
    unsupportedClause(C);
    return;
  }
  for (llvm::StringRef Cat : Categories) {
    bool Restates = (Cat == "scalar" && Behaviour == "firstprivate") ||
                    (Cat == "pointer" &&
                     (Behaviour == "present" || Behaviour == "firstprivate"));
    if (Restates)
      continue;
    if (Cat != "scalar" && (Cat == "pointer" || Behaviour == "firstprivate" ||
                            Behaviour == "present")) {
      unsupportedClause(C, ("defaultmap(" + Behaviour + ": " + Cat + ")").str());
      continue;
    }
    Defaultmap[Cat] = Behaviour.str();
  }
}

/// Gives every variable without a map clause the map type its category's
/// `defaultmap` asks for.
void RegionExtractor::applyDefaultmap() {
  if (Defaultmap.empty())
    return;
  for (VarEntry &V : Vars) {
    if (!V.Decl || V.Map.kind() != json::Value::Null || LoopIndices.count(V.Decl))
      continue;
    llvm::StringRef Cat = V.S.Kind == "scalar" ? "scalar"
                          : V.S.Kind == "array" ? "aggregate"
                                                : "pointer";
    auto It = Defaultmap.find(Cat);
    if (It != Defaultmap.end())
      V.Map = It->second;
  }
}

/// One `MapItem` of a data directive (crates/ir/src/data.rs).
json::Value RegionExtractor::dataItem(const Expr *Item, llvm::StringRef Kind,
                                      bool Present,
                                      llvm::StringRef UnsupportedClause) {
  ListItem L = listItem(Item);
  json::Value Var = nullptr;
  if (L.Var)
    Var = Vars[*L.Var].Name;
  json::Value Unsupported = nullptr;
  if (!L.Unsupported.empty())
    Unsupported = L.Unsupported;
  else if (!UnsupportedClause.empty())
    Unsupported = UnsupportedClause.str();
  if (!L.Strided)
    L.Strides.clear();
  return json::Object{{"var", std::move(Var)},
                      {"map", Kind.str()},
                      {"section", std::move(L.Section)},
                      {"strides", std::move(L.Strides)},
                      {"text", text(Item)},
                      {"unsupported", std::move(Unsupported)},
                      {"present", Present},
                      {"loc", loc(Item->getBeginLoc())}};
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Folds a constant (a C++ constant that is not odr-used, an enumerator) into a
/// literal; null when it does not fold.
json::Value RegionExtractor::folded(const Expr *E) {
  std::optional<llvm::StringRef> Ty = scalar(E->getType());
  Expr::EvalResult R;
  if (!Ty || E->isValueDependent() || !E->EvaluateAsRValue(R, Ctx))
    return nullptr;
  if (R.Val.isInt()) {
    const llvm::APSInt &V = R.Val.getInt();
    if (V.getBitWidth() > 64)
      return nullptr;
    return intLit(V.isSigned() ? V.getSExtValue() : int64_t(V.getZExtValue()),
                  *Ty);
  }
  if (R.Val.isFloat()) {
    llvm::APFloat F = R.Val.getFloat();
    bool LosesInfo;
    F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &LosesInfo);
    return json::Object{{"kind", "float"},
                        {"bits", F.bitcastToAPInt().getZExtValue()},
                        {"ty", *Ty}};
  }
  return nullptr;
}

json::Value RegionExtractor::expr(const Expr *E) {
  E = skipTransparent(E);

  if (const auto *CE = dyn_cast<CastExpr>(E)) {
    switch (CE->getCastKind()) {
    case CK_LValueToRValue:
    case CK_NoOp:
      return expr(CE->getSubExpr());
    case CK_IntegralCast:
    case CK_IntegralToBoolean:
    case CK_IntegralToFloating:
    case CK_FloatingToIntegral:
    case CK_FloatingCast:
    case CK_FloatingToBoolean:
    case CK_BooleanToSignedIntegral: {
      std::optional<llvm::StringRef> To = scalar(CE->getType());
      if (!To)
        return unsupportedType(CE->getType(), E);
      return castTo(expr(CE->getSubExpr()), *To);
    }
    case CK_ArrayToPointerDecay:
    case CK_FunctionToPointerDecay:
      return unsupported("pointer value", E);
    default:
      return unsupported("cast", E);
    }
  }

  if (const auto *IL = dyn_cast<IntegerLiteral>(E)) {
    std::optional<llvm::StringRef> Ty = scalar(IL->getType());
    if (!Ty || IL->getValue().getBitWidth() > 64)
      return unsupportedType(IL->getType(), E);
    bool Signed = IL->getType()->isSignedIntegerType();
    const llvm::APInt &V = IL->getValue();
    return intLit(Signed ? V.getSExtValue() : int64_t(V.getZExtValue()), *Ty);
  }
  if (isa<CharacterLiteral>(E) || isa<CXXBoolLiteralExpr>(E)) {
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    std::optional<int64_t> V = evalInt(E);
    if (!Ty || !V)
      return unsupportedType(E->getType(), E);
    return intLit(*V, *Ty);
  }
  if (const auto *FL = dyn_cast<FloatingLiteral>(E)) {
    std::optional<llvm::StringRef> Ty = scalar(FL->getType());
    if (!Ty)
      return unsupportedType(FL->getType(), E);
    llvm::APFloat V = FL->getValue();
    bool LosesInfo;
    V.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &LosesInfo);
    return json::Object{{"kind", "float"},
                        {"bits", V.bitcastToAPInt().getZExtValue()},
                        {"ty", *Ty}};
  }

  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    // Enumerators and C++ constants that are not odr-used (`constexpr int N`)
    // are values, not variables: there may be nothing to take the address of.
    if (isa<EnumConstantDecl>(DRE->getDecl()) ||
        DRE->isNonOdrUse() != NOUR_None) {
      json::Value F = folded(E);
      if (F.kind() != json::Value::Null)
        return F;
    }
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (!VD)
      return unsupported("reference to '" + DRE->getDecl()->getNameAsString() +
                             "'",
                         E);
    if (!Inlining.empty()) {
      // Inside the body of a function being inlined: its parameters and locals
      // have their values; a constant global is its value; nothing else is read.
      auto It = Subst.find(VD);
      if (It != Subst.end())
        return It->second;
      if (inlinedLocal(VD))
        return unsupported("unassigned local", E);
      if (VD->getType().isConstQualified()) {
        json::Value F = folded(E);
        if (F.kind() != json::Value::Null)
          return F;
      }
      return unsupported("global", E);
    }
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!Inner.count(VD) && !LoopIndices.count(VD))
      regionVar(VD);
    if (!Ty)
      return unsupported(shapeOf(VD) ? llvm::StringRef("pointer value")
                                     : llvm::StringRef(typeText(E->getType())),
                         E);
    return json::Object{{"kind", "var"}, {"name", nameOf(VD)}, {"ty", *Ty}};
  }

  if (std::optional<json::Value> L = structLocalNode(E, /*Write=*/false, E))
    return std::move(*L);
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return read(ASE);

  if (const auto *UO = dyn_cast<UnaryOperator>(E)) {
    const char *Op = nullptr;
    switch (UO->getOpcode()) {
    case UO_Minus: Op = "neg"; break;
    case UO_Plus: Op = "plus"; break;
    case UO_LNot: Op = "not"; break;
    case UO_Not: Op = "bitnot"; break;
    case UO_PreInc:
    case UO_PreDec:
    case UO_PostInc:
    case UO_PostDec:
      return unsupported("increment", E);
    case UO_Deref:
      return unsupported("pointer arithmetic", E);
    case UO_AddrOf:
      return unsupported("address-of", E);
    default:
      return unsupported(
          ("operator '" + UnaryOperator::getOpcodeStr(UO->getOpcode()) + "'")
              .str(),
          E);
    }
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!Ty)
      return unsupportedType(E->getType(), E);
    return json::Object{{"kind", "unary"},
                        {"op", Op},
                        {"arg", expr(UO->getSubExpr())},
                        {"ty", *Ty}};
  }

  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->isAssignmentOp())
      return unsupported("assignment in expression", E);
    if (BO->getOpcode() == BO_Comma)
      return unsupported("comma operator", E);
    if (BO->getLHS()->getType()->isPointerType() ||
        BO->getRHS()->getType()->isPointerType())
      return unsupported("pointer arithmetic", E);
    const char *Op = binOpName(BO->getOpcode());
    if (!Op)
      return unsupported("operator '" + BO->getOpcodeStr().str() + "'", E);
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!Ty)
      return unsupportedType(E->getType(), E);
    if (BO->isAdditiveOp() &&
        (hostMayFuse(BO, BO->getLHS()) || hostMayFuse(BO, BO->getRHS())))
      return unsupported("fp-contraction", E);
    return json::Object{{"kind", "binary"},
                        {"op", Op},
                        {"lhs", expr(BO->getLHS())},
                        {"rhs", expr(BO->getRHS())},
                        {"ty", *Ty}};
  }

  if (const auto *CO = dyn_cast<ConditionalOperator>(E)) {
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!Ty)
      return unsupportedType(E->getType(), E);
    return json::Object{{"kind", "select"},
                        {"cond", expr(CO->getCond())},
                        {"then", expr(CO->getTrueExpr())},
                        {"else", expr(CO->getFalseExpr())},
                        {"ty", *Ty}};
  }

  if (const auto *CE = dyn_cast<CallExpr>(E))
    return call(CE);
  // A call of a function with `declare variant`s (omp.h declares
  // omp_is_initial_device so): the OpenMP queries by the call as written, other
  // functions by the variant the host compilation calls.
  if (const auto *PO = dyn_cast<PseudoObjectExpr>(E)) {
    if (const auto *CE = dyn_cast<CallExpr>(PO->getSyntacticForm()))
      if (const FunctionDecl *FD = CE->getDirectCallee();
          FD && FD->getIdentifier() && ompQuery(FD->getName()))
        return call(CE);
    if (const Expr *R = PO->getResultExpr())
      return expr(R);
  }

  if (const auto *UE = dyn_cast<UnaryExprOrTypeTraitExpr>(E)) {
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (std::optional<int64_t> V = evalInt(E); V && Ty)
      return intLit(*V, *Ty);
    return unsupported(getTraitSpelling(UE->getKind()), E);
  }

  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    bool Aliased = false;
    if (std::optional<json::Value> V = invariantMember(ME, Aliased))
      return std::move(*V);
    // `p[i].y`, or `p->y` that the region may change.
    unsigned Array = 0;
    json::Array Index;
    json::Value Bad = nullptr;
    if (recordAccess(ME, Array, Index, Bad))
      return readNode(ME, Array, std::move(Index), std::move(Bad));
    return unsupported(Aliased ? "member access (the region writes data of "
                                 "its type, which may change it: copy it into "
                                 "a local variable before the region)"
                               : "member access",
                       E);
  }
  if (isa<BinaryConditionalOperator>(E))
    return unsupported("operator '?:'", E);
  if (isa<StmtExpr>(E))
    return unsupported("statement expression", E);
  if (isa<LambdaExpr>(E))
    return unsupported("lambda", E);
  return unsupported("expression", E);
}

/// `Sum + V` as an `i64` addition of the IR, or `V` when `Sum` is null.
static json::Value addI64(json::Value Sum, json::Value V) {
  if (Sum.kind() == json::Value::Null)
    return V;
  return json::Object{{"kind", "binary"},
                      {"op", "add"},
                      {"lhs", std::move(Sum)},
                      {"rhs", std::move(V)},
                      {"ty", "i64"}};
}

/// Resolves `a[i][j]` to its array variable and subscripts (outermost first).
/// Returns null on success, else the unsupported node describing why not.
json::Value RegionExtractor::access(const ArraySubscriptExpr *E,
                                    unsigned &Var, json::Array &Index,
                                    json::Value *Last) {
  llvm::SmallVector<const Expr *, 4> Subscripts; // innermost first
  const Expr *Cur = E;
  while (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Cur)) {
    Subscripts.push_back(ASE->getIdx());
    Cur = skipDecay(ASE->getBase());
  }
  const auto *DRE = dyn_cast<DeclRefExpr>(Cur);
  const VarDecl *VD = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  std::optional<unsigned> I;
  if (!VD) {
    const auto *ME = dyn_cast<MemberExpr>(Cur);
    if (!ME)
      return unsupported("pointer arithmetic", E);
    bool Aliased = false;
    I = pointerMember(ME, /*Inside=*/true, Aliased);
    if (!I)
      return unsupported(Aliased ? "member access (the region writes data of "
                                   "the pointer's type, which may change it: "
                                   "copy it into a local variable before the "
                                   "region)"
                                 : "member access",
                         E);
  } else if (auto PL = PtrLocals.find(VD); PL != PtrLocals.end()) {
    // `row[k]` of `T *row = &A[i][j];` is `A[i][j + k]`.
    if (Subscripts.size() != 1)
      return unsupported("partial array subscript", E);
    const Expr *K = Subscripts.front();
    const PtrLocal &P = PL->second;
    Var = P.Var;
    if (P.Subscripts.size() + 1 != Vars[Var].S.Dims.size())
      return unsupported("partial array subscript", E);
    for (const Expr *S : P.Subscripts)
      Index.push_back(expr(S));
    // Pointer arithmetic: in ptrdiff_t, each operand converted from its type;
    // the initializer's terms, then the pointer's own subscript.
    json::Value Sum = nullptr;
    auto Add = [&](const Expr *T) {
      Sum = addI64(std::move(Sum), castTo(expr(T), "i64"));
    };
    for (const Expr *T : P.Last)
      Add(T);
    Add(K);
    Index.push_back(std::move(Sum));
    return nullptr;
  } else {
    if (Inner.count(VD))
      return unsupported("local array", E);
    if (!Inlining.empty()) // only scalars reach an inlined body
      return unsupported("array access", E);
    I = regionVar(VD);
    if (!I)
      return unsupported(typeText(VD->getType()), E);
  }
  // With Last, E is an element of an array of dense structs, and Last the
  // subscript of the struct's scalars (recordAccess).
  const Shape &Sh = Vars[*I].S;
  if (Last && !Sh.Record)
    return unsupported("member access", E);
  if (!Last && (Sh.Record || Sh.Bytes) && Subscripts.size() + 1 == Sh.Dims.size())
    return unsupported("use of a whole struct (use its fields)", E);
  if (Subscripts.size() + (Last ? 1 : 0) != Sh.Dims.size())
    return unsupported("partial array subscript", E);
  Var = *I;
  for (auto It = Subscripts.rbegin(); It != Subscripts.rend(); ++It)
    Index.push_back(expr(*It));
  if (Last)
    Index.push_back(std::move(*Last));
  return nullptr;
}

/// `p[i].y`, `a[i][j].v[k]`, `p->y`: a scalar inside an element of an array of
/// dense structs (denseRecord), as an access whose innermost subscript picks the
/// struct's scalar — `p[i][1]`, `a[i][j][v + k]` (v the field's offset in
/// scalars), `p[0][1]`. Returns false when \p E is no such access (nothing is
/// set); else true, with \p Bad null and \p Var, \p Index set, or \p Bad the
/// unsupported node.
bool RegionExtractor::recordAccess(const Expr *E, unsigned &Var,
                                   json::Array &Index, json::Value &Bad) {
  // The chain from E down through subscripts and member accesses, outermost
  // first; the deepest member access ends the part inside the struct.
  llvm::SmallVector<const Expr *, 6> Chain;
  const Expr *Cur = skipDecay(E);
  while (true) {
    Chain.push_back(Cur);
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Cur)) {
      Cur = skipDecay(ASE->getBase());
      continue;
    }
    const auto *ME = dyn_cast<MemberExpr>(Cur);
    if (!ME || ME->isArrow())
      break;
    Cur = skipDecay(ME->getBase());
  }
  size_t M = Chain.size();
  for (size_t K = 0; K < Chain.size(); ++K)
    if (isa<MemberExpr>(Chain[K]))
      M = K;
  if (M == Chain.size())
    return false;
  const auto *Deepest = cast<MemberExpr>(Chain[M]);
  const Expr *Base = skipDecay(Deepest->getBase());
  QualType RecT = Deepest->isArrow() ? Base->getType()->getPointeeType()
                                     : Base->getType();
  // Through a local alias of an array element (`t.y`, `t->y`: recordAlias).
  const RecordAlias *Alias = nullptr;
  if (const VarDecl *AV = namedVar(Base))
    if (auto It = RecordAliases.find(AV);
        It != RecordAliases.end() && It->second.Pointer == Deepest->isArrow()) {
      Alias = &It->second;
      if (Alias->Element)
        Base = Alias->Element;
    }
  std::optional<std::pair<llvm::StringRef, uint64_t>> R;
  if (!RecT.isNull())
    R = denseRecord(RecT);
  if (!R) {
    // A member of a struct variable or of the struct a pointer points to
    // (`s.n`, `s.p[i]`, `g->u[i]`) is not an element access.
    if (!isa<ArraySubscriptExpr>(Base))
      return false;
    Bad = unsupported(
        "member of " + typeText(RecT) +
            ", whose fields are not all of one scalar type without padding "
            "(Tessera offloads arrays of structs such as "
            "'struct { double x, y; }')",
        E);
    return true;
  }
  uint64_t ElemBytes = Ctx.getTypeSizeInChars(RecT).getQuantity() / R->second;
  // Inside the struct: constant field offsets, and subscripts of array fields
  // times the scalars of their elements.
  int64_t Offset = 0;
  json::Value Sum = nullptr;
  auto Add = [&](json::Value V) { Sum = addI64(std::move(Sum), std::move(V)); };
  for (size_t K = 0; K <= M; ++K) {
    std::optional<int64_t> Scalars = scalarsIn(Chain[K], ElemBytes);
    if (!Scalars) {
      Bad = unsupported("member access", E);
      return true;
    }
    if (isa<MemberExpr>(Chain[K])) {
      Offset += *Scalars;
      continue;
    }
    const auto *ASE = cast<ArraySubscriptExpr>(Chain[K]);
    int64_t Stride = *Scalars;
    json::Value Idx = castTo(expr(ASE->getIdx()), "i64");
    if (Stride != 1)
      Idx = json::Object{{"kind", "binary"},
                         {"op", "mul"},
                         {"lhs", std::move(Idx)},
                         {"rhs", intLit(Stride, "i64")},
                         {"ty", "i64"}};
    Add(std::move(Idx));
  }
  if (Offset || Sum.kind() == json::Value::Null)
    Add(intLit(Offset, "i64"));
  // The struct element: `p[i]` (a subscript chain) or `*p` (`p->y`).
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Base)) {
    Bad = access(ASE, Var, Index, &Sum);
    return true;
  }
  // `t->y` of `P *t = p + k;` is `p[k][y]`.
  const VarDecl *VD = Alias && Alias->Array ? Alias->Array
                      : Deepest->isArrow()   ? namedVar(Base)
                                             : nullptr;
  std::optional<unsigned> I;
  if (VD && !Inner.count(VD) && !declaredInside(VD) && Inlining.empty())
    I = regionVar(VD);
  // Anything else (`this->c`, `f()->c`, a struct that is not an array's
  // element) is left to the callers' own remarks.
  if (!I || !Vars[*I].S.Record || Vars[*I].S.Dims.size() != 2)
    return false;
  Var = *I;
  Index.push_back(Alias && Alias->Offset ? castTo(expr(Alias->Offset), "i64")
                                         : intLit(0, "i64"));
  Index.push_back(std::move(Sum));
  Bad = nullptr;
  return true;
}

/// Inside a struct of scalars of \p ElemBytes bytes each (denseRecord), for a
/// member access \p C the offset of its field in scalars, for a subscript of an
/// array field the scalars per index; none for a member that is no field.
std::optional<int64_t> RegionExtractor::scalarsIn(const Expr *C,
                                                  uint64_t ElemBytes) const {
  if (const auto *ME = dyn_cast<MemberExpr>(C)) {
    const auto *F = dyn_cast<FieldDecl>(ME->getMemberDecl());
    if (!F)
      return std::nullopt;
    return int64_t(Ctx.getASTRecordLayout(F->getParent())
                       .getFieldOffset(F->getFieldIndex()) /
                   8 / ElemBytes);
  }
  return int64_t(Ctx.getTypeSizeInChars(C->getType()).getQuantity() / ElemBytes);
}

/// The array element \p E names (`a[i][j]`, or a struct member of one, see
/// recordAccess): null on success, else the unsupported node, at \p Where for a
/// member access that is neither.
json::Value RegionExtractor::element(const Expr *E, unsigned &Var,
                                     json::Array &Index, const Stmt *Where) {
  json::Value Bad = nullptr;
  if (recordAccess(E, Var, Index, Bad))
    return Bad;
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return access(ASE, Var, Index);
  return unsupported("member access", Where);
}

json::Value RegionExtractor::read(const Expr *E) {
  unsigned Array = 0;
  json::Array Index;
  json::Value Bad = element(E, Array, Index, E);
  return readNode(E, Array, std::move(Index), std::move(Bad));
}

/// The read of element \p Index of array \p Array at \p E, or \p Bad when
/// resolving the access failed.
json::Value RegionExtractor::readNode(const Expr *E, unsigned Array,
                                      json::Array Index, json::Value Bad) {
  if (Bad.kind() != json::Value::Null)
    return Bad;
  std::optional<llvm::StringRef> Ty = scalar(E->getType());
  if (!Ty)
    return unsupportedType(E->getType(), E);
  return json::Object{{"kind", "read"},
                      {"array", Vars[Array].Name},
                      {"index", std::move(Index)},
                      {"ty", *Ty},
                      {"loc", loc(E->getBeginLoc())}};
}

/// Whether the host compilation may fuse the floating addition or subtraction
/// \p BO with its operand \p Operand into one multiply-add (so that the host's
/// result is rounded once where the IR's `a * b + c` rounds twice): the target
/// has FMA instructions and clang allows contraction there — across statements
/// (`-ffp-contract=fast`: any addition), or within the expression (`on`, clang
/// 19's default) when the operand is a multiplication, possibly negated (what
/// clang's CodeGen turns into `llvm.fmuladd`). Without FMA instructions
/// `llvm.fmuladd` is a multiplication and an addition, each rounded.
bool RegionExtractor::hostMayFuse(const BinaryOperator *BO,
                                  const Expr *Operand) const {
  if (!BO->getType()->isRealFloatingType())
    return false;
  const TargetInfo &TI = Ctx.getTargetInfo();
  bool FMA = TI.getTriple().isX86() ? TI.hasFeature("fma") || TI.hasFeature("fma4")
                                    : true; // other targets: assume they have it
  if (!FMA)
    return false;
  FPOptions FPO = BO->getFPFeaturesInEffect(LO);
  if (FPO.allowFPContractAcrossStatement())
    return true;
  if (!FPO.allowFPContractWithinStatement())
    return false;
  const Expr *O = skipTransparent(Operand);
  if (const auto *U = dyn_cast<UnaryOperator>(O);
      U && U->getOpcode() == UO_Minus)
    O = skipTransparent(U->getSubExpr());
  const auto *M = dyn_cast<BinaryOperator>(O);
  return M && M->getOpcode() == BO_Mul && M->getType()->isRealFloatingType();
}


bool RegionExtractor::inlinedLocal(const VarDecl *VD) const {
  for (const DeclContext *DC = VD->getDeclContext(); DC; DC = DC->getParent())
    for (const FunctionDecl *FD : Inlining)
      if (DC == FD)
        return true;
  return false;
}

/// A call in the region (see the file comment): a math function, an OpenMP
/// query, an inlined function, or `unsupported` `call: <why>`.
json::Value RegionExtractor::call(const CallExpr *CE) {
  const FunctionDecl *FD = CE->getDirectCallee();
  if (!FD)
    return unsupported("call: the callee is not a named function", CE);
  std::string Name = FD->getDeclName().getAsString();
  // A lambda without captures (`auto f = [](float t) { … }; … f(x[i])`) is a
  // plain function: its call operator's body with the arguments after the
  // object bound (the object holds nothing).
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(CE);
      OC && OC->getOperator() == OO_Call)
    if (const auto *MD = dyn_cast<CXXMethodDecl>(FD);
        MD && MD->getParent()->isLambda() &&
        MD->getParent()->capture_size() == 0 && MD->getDefinition() &&
        MD->getDefinition()->hasBody() && !MD->getParent()->isGenericLambda())
      return inlineCall(CE, FD, /*First=*/1);
  if (const auto *MD = dyn_cast<CXXMethodDecl>(FD); MD && MD->getParent()->isLambda())
    return unsupported("call: '" +
                           (CE->getNumArgs() && isa<CXXOperatorCallExpr>(CE)
                                ? text(CE->getArg(0)->getSourceRange(), CE->getArg(0))
                                : Name) +
                           "' is a lambda with captures or generic parameters; "
                           "Tessera inlines lambdas without captures ('[](float "
                           "t) { … }') and plain functions",
                       CE);
  if (isa<CXXMemberCallExpr>(CE) || isa<CXXOperatorCallExpr>(CE) ||
      isa<CXXMethodDecl>(FD))
    return unsupported("call: '" + Name +
                           "' is a member function or operator; Tessera "
                           "inlines only plain functions",
                       CE);

  // The OpenMP queries of the team and thread (declared by omp.h, no body):
  // a kernel is one team of one thread, a conforming choice. Only the kernel
  // sees these values; the host fallback runs the original calls.
  if (FD->getIdentifier() && FD->isExternC() && !FD->isDefined() &&
      CE->getNumArgs() == 0)
    if (std::optional<int64_t> V = ompQuery(FD->getName()))
      if (std::optional<llvm::StringRef> Ty = scalar(CE->getType()))
        return intLit(*V, *Ty);

  // C library functions clang knows (`sqrtf`, `fabs`, …, `__builtin_sqrtf`):
  // the declaration resolved to the builtin, not a user function of that name.
  if (unsigned ID = FD->getBuiltinID()) {
    llvm::StringRef B = Ctx.BuiltinInfo.getName(ID);
    B.consume_front("__builtin_");
    if ((B == "abs" || B == "labs" || B == "llabs") && CE->getNumArgs() == 1)
      return integerAbs(CE);
    return mathCall(CE, FD, B, /*Convert=*/false);
  }

  // Everything else: inline the body if clang sees it (C++'s `std::sqrt(float)`
  // and friends are such functions, whose bodies call the builtins).
  if (FD->getDefinition() && FD->getDefinition()->hasBody())
    return inlineCall(CE, FD);

  // A `std::` math overload whose body is not instantiated yet: libstdc++'s
  // overloads compute the C function of their result type on arguments
  // converted to it.
  if (FD->isInStdNamespace() && FD->getIdentifier()) {
    llvm::StringRef N = FD->getName();
    std::optional<llvm::StringRef> Ty = scalar(CE->getType());
    if (N == "abs" && Ty && (*Ty == "f32" || *Ty == "f64"))
      N = "fabs";
    if (mathEntry(N) && Ty && (*Ty == "f32" || *Ty == "f64"))
      return mathCall(CE, FD, N, /*Convert=*/true);
  }
  return unsupported("call: the body of '" + Name +
                         "' is not visible here (Tessera inlines functions "
                         "defined before the region, e.g. 'static inline' or "
                         "'declare target' ones)",
                     CE);
}

/// `abs(x)`, `labs(x)`, `llabs(x)`: `x < 0 ? -x : x` in the call's type (the
/// argument converted to it, as the parameter does) — exact, like the library's
/// (whose result for the most negative value is undefined behaviour in C).
json::Value RegionExtractor::integerAbs(const CallExpr *CE) {
  std::optional<llvm::StringRef> Ty = scalar(CE->getType());
  if (!Ty || !CE->getType()->isIntegerType())
    return unsupportedType(CE->getType(), CE);
  json::Value X = expr(CE->getArg(0));
  return json::Object{{"kind", "select"},
                      {"cond", json::Object{{"kind", "binary"},
                                            {"op", "lt"},
                                            {"lhs", X},
                                            {"rhs", intLit(0, *Ty)},
                                            {"ty", "i32"}}},
                      {"then", json::Object{{"kind", "unary"}, {"op", "neg"}, {"arg", X}, {"ty", *Ty}}},
                      {"else", X},
                      {"ty", *Ty}};
}

/// A call of the math function \p Base (its C name, `sqrtf`, or with \p Convert
/// the `double` name of a C++ overload whose arguments are converted to the
/// result type).
json::Value RegionExtractor::mathCall(const CallExpr *CE, const FunctionDecl *FD,
                                      llvm::StringRef Base, bool Convert) {
  std::optional<llvm::StringRef> Ty = scalar(CE->getType());
  const MathEntry *M = mathEntry(Base);
  llvm::StringRef Want = "f64";
  if (!M && !Convert && Base.ends_with("f")) {
    M = mathEntry(Base.drop_back());
    Want = "f32";
  }
  if (!M)
    return unsupported("call: '" + FD->getNameAsString() +
                           "' is a library function Tessera has no kernel "
                           "version of",
                       CE);
  if (!Ty || (Convert ? (*Ty != "f32" && *Ty != "f64") : *Ty != Want))
    return unsupportedType(CE->getType(), CE);
  if (CE->getNumArgs() != M->Arity)
    return unsupported("call: '" + FD->getNameAsString() +
                           "' with an unexpected number of arguments",
                       CE);
  json::Array Args;
  for (const Expr *A : CE->arguments()) {
    json::Value V = expr(A);
    // Builtins: clang converted each argument to the parameter's type, the
    // call's. C++ overloads: converted to the result type as they do.
    Args.push_back(Convert ? castTo(std::move(V), *Ty) : std::move(V));
  }
  return json::Object{{"kind", "call"},
                      {"func", M->Name},
                      {"args", std::move(Args)},
                      {"ty", *Ty},
                      {"loc", loc(Inlining.empty() ? CE->getBeginLoc()
                                                   : InlineSite)}};
}

namespace {
/// The first `unsupported` node of an IR value, if any.
const json::Object *firstUnsupported(const json::Value &V) {
  if (const json::Object *O = V.getAsObject()) {
    if (std::optional<llvm::StringRef> K = O->getString("kind");
        K && *K == "unsupported")
      return O;
    for (const auto &KV : *O)
      if (const json::Object *U = firstUnsupported(KV.second))
        return U;
  } else if (const json::Array *A = V.getAsArray()) {
    for (const json::Value &E : *A)
      if (const json::Object *U = firstUnsupported(E))
        return U;
  }
  return nullptr;
}
} // namespace

/// Inlines a call of \p FD, whose body clang sees. The inlinable class: a
/// function that is not variadic, not recursive, not weak, with parameters of
/// scalar type (by value or `const &`), a scalar result, and a body of
///   - declarations of scalar locals (with or without an initialiser),
///   - assignments (also compound ones) to its parameters and locals,
///   - `if (c) return e;` (then the rest is the `else`), and
///   - a final `return e;`,
/// whose expressions are those of a region (on its parameters, locals, constant
/// globals and further calls). Such a function is pure: its value is an
/// expression of its arguments, which replaces the call. Anything else (loops,
/// reads of memory or globals, writes outside its locals) is `unsupported`
/// `call: <why>` at the call. The arguments are those of \p CE from \p First
/// on (1 for a lambda's call operator, whose argument 0 is the lambda object).
json::Value RegionExtractor::inlineCall(const CallExpr *CE,
                                        const FunctionDecl *FD,
                                        unsigned First) {
  const FunctionDecl *Def = FD->getDefinition();
  std::string Name = "'" + FD->getNameAsString() + "'";
  auto Refuse = [&](const std::string &Why) {
    return unsupported("call: " + Why, CE);
  };
  if (Def->isVariadic())
    return Refuse(Name + " is variadic");
  if (Def->hasAttr<WeakAttr>())
    return Refuse(Name + " is weak: another definition may replace it");
  for (const FunctionDecl *F : Inlining)
    if (F->getCanonicalDecl() == Def->getCanonicalDecl())
      return Refuse(Name + " is recursive");
  if (Inlining.size() >= 16)
    return Refuse("calls nest deeper than 16 functions");
  if (!scalar(Def->getReturnType().getNonReferenceType()))
    return Refuse(Name + " returns " + typeText(Def->getReturnType()));
  if (CE->getNumArgs() != Def->getNumParams() + First)
    return Refuse(Name + " is called with a different number of arguments "
                         "than it has parameters");
  for (const ParmVarDecl *P : Def->parameters()) {
    QualType T = P->getType();
    if (T->isReferenceType()) {
      if (!T->getPointeeType().isConstQualified())
        return Refuse(Name + " takes '" + P->getNameAsString() +
                      "' by non-const reference");
      T = T->getPointeeType();
    }
    if (!scalar(T))
      return Refuse(Name + " takes '" + P->getNameAsString() + "' of " +
                    typeText(P->getType()) +
                    "; Tessera inlines functions of scalar parameters only");
  }
  // Arguments in the caller's context, then the body with them bound.
  json::Array Args;
  for (unsigned K = 0; K < Def->getNumParams(); ++K) {
    const Expr *A = CE->getArg(K + First);
    json::Value V = expr(A);
    // A `const T &` parameter binds the argument as it is (no conversion is
    // applied to a reference of the same type); by value, clang converted it.
    if (std::optional<llvm::StringRef> PT =
            scalar(Def->getParamDecl(K)->getType().getNonReferenceType()))
      V = castTo(std::move(V), *PT);
    Args.push_back(std::move(V));
  }
  auto Saved = Subst;
  for (unsigned K = 0; K < Def->getNumParams(); ++K)
    Subst.insert_or_assign(Def->getParamDecl(K), Args[K]);
  if (Inlining.empty())
    InlineSite = CE->getBeginLoc();
  Inlining.push_back(Def);
  json::Value Result = nullptr;
  llvm::SmallVector<const Stmt *, 16> List;
  if (const auto *CS = dyn_cast<CompoundStmt>(Def->getBody()))
    List.append(CS->body_begin(), CS->body_end());
  else
    List.push_back(Def->getBody());
  std::string Why = inlineBody(Def, List, Result);
  Inlining.pop_back();
  Subst = std::move(Saved);
  if (!Why.empty())
    return Refuse(Why);
  if (const json::Object *U = firstUnsupported(Result)) {
    llvm::StringRef What = U->getString("what").value_or("expression");
    // A multiply-add the host fuses keeps its own reason and location.
    if (What == "fp-contraction")
      return json::Value(json::Object(*U));
    std::string Text = "'" + U->getString("text").value_or("").str() + "'";
    if (What == "global")
      return Refuse("the body of " + Name + " reads the global " + Text +
                    " (Tessera inlines only pure functions)");
    if (What == "unassigned local")
      return Refuse("the body of " + Name + " reads " + Text +
                    " before assigning it");
    if (What.starts_with("call: "))
      return Refuse("the body of " + Name + " calls " + Text + ": " +
                    What.drop_front(6).str());
    return Refuse("the body of " + Name + " has " + What.str() + " " + Text);
  }
  return Result;
}

/// The value of the statements \p List of the body of \p FD (see inlineCall)
/// into \p Result; the reason it is not inlinable otherwise.
/// The statements of \p In as they run: a `do { … } while (false)` is its body,
/// once, and an `if` without `else` whose condition is false whenever the code runs
/// (`if (std::__is_constant_evaluated() && …)`, the libstdc++ precondition checks
/// of `std::clamp` and friends, which only a constant evaluation takes) is left
/// out. Anything else is kept as it is.
static void runtimeStatements(const ASTContext &Ctx,
                              llvm::ArrayRef<const Stmt *> In,
                              llvm::SmallVectorImpl<const Stmt *> &Out) {
  // Folded outside a constant context, with no side effect on the way (a call
  // of a constexpr function is evaluated, not assumed to write).
  auto False = [&](const Expr *C) {
    Expr::EvalResult R;
    return C && C->EvaluateAsRValue(R, Ctx, /*InConstantContext=*/false) &&
           !R.HasSideEffects && R.Val.isInt() && R.Val.getInt().isZero();
  };
  for (const Stmt *S : In) {
    if (const auto *Do = dyn_cast<DoStmt>(S); Do && False(Do->getCond())) {
      if (const auto *CS = dyn_cast<CompoundStmt>(Do->getBody()))
        runtimeStatements(Ctx, llvm::ArrayRef(CS->body_begin(), CS->body_end()), Out);
      else
        runtimeStatements(Ctx, Do->getBody(), Out);
      continue;
    }
    if (const auto *If = dyn_cast<IfStmt>(S);
        If && !If->getInit() && !If->getConditionVariable() && !If->getElse() &&
        !If->isConsteval() && False(If->getCond()))
      continue;
    Out.push_back(S);
  }
}

std::string RegionExtractor::inlineBody(const FunctionDecl *FD,
                                        llvm::ArrayRef<const Stmt *> In,
                                        json::Value &Result) {
  llvm::SmallVector<const Stmt *, 16> Statements;
  runtimeStatements(Ctx, In, Statements);
  llvm::ArrayRef<const Stmt *> List = Statements;
  std::string Name = "'" + FD->getNameAsString() + "'";
  std::optional<llvm::StringRef> RetTy =
      scalar(FD->getReturnType().getNonReferenceType());
  for (size_t K = 0; K < List.size(); ++K) {
    const Stmt *S = List[K];
    if (isa<NullStmt>(S))
      continue;
    if (const auto *R = dyn_cast<ReturnStmt>(S)) {
      if (!R->getRetValue())
        return Name + " returns no value";
      Result = castTo(expr(R->getRetValue()), *RetTy);
      return "";
    }
    if (const auto *DS = dyn_cast<DeclStmt>(S)) {
      for (const Decl *D : DS->decls()) {
        const auto *VD = dyn_cast<VarDecl>(D);
        if (!VD)
          continue;
        std::optional<llvm::StringRef> Ty = scalar(VD->getType());
        if (!VD->hasLocalStorage() || !Ty)
          return Name + " declares '" + VD->getNameAsString() + "' of " +
                 typeText(VD->getType()) + (VD->hasLocalStorage() ? "" : " (static)");
        if (const Expr *I = VD->getInit())
          Subst.insert_or_assign(VD, castTo(expr(I), *Ty));
      }
      continue;
    }
    if (const auto *If = dyn_cast<IfStmt>(S)) {
      // `if (c) return e;` — the rest of the body is the else branch.
      const Stmt *Then = If->getThen();
      if (const auto *TC = dyn_cast<CompoundStmt>(Then); TC && TC->size() == 1)
        Then = TC->body_front();
      const auto *R = dyn_cast<ReturnStmt>(Then);
      if (If->getInit() || If->getConditionVariable() || If->getElse() || !R ||
          !R->getRetValue())
        return "the body of " + Name +
               " has an 'if' other than 'if (c) return e;'";
      json::Value Cond = expr(If->getCond());
      json::Value Then_ = castTo(expr(R->getRetValue()), *RetTy);
      // The rest of the body, with the locals as they are here.
      auto Saved = Subst;
      json::Value Else = nullptr;
      std::string Why = inlineBody(FD, List.drop_front(K + 1), Else);
      Subst = std::move(Saved);
      if (!Why.empty())
        return Why;
      Result = json::Object{{"kind", "select"},
                            {"cond", std::move(Cond)},
                            {"then", std::move(Then_)},
                            {"else", std::move(Else)},
                            {"ty", *RetTy}};
      return "";
    }
    if (const auto *E = dyn_cast<Expr>(S)) {
      E = skipTransparent(E);
      const auto *BO = dyn_cast<BinaryOperator>(E);
      const VarDecl *Target = nullptr;
      if (BO && BO->isAssignmentOp())
        Target = namedVar(BO->getLHS());
      if (!Target || !inlinedLocal(Target) || !isa<DeclRefExpr>(skipTransparent(BO->getLHS())))
        return "the body of " + Name + " has '" + text(S) +
               "', which is not an assignment to its own parameter or local";
      std::optional<llvm::StringRef> Ty = scalar(Target->getType());
      if (!Ty)
        return "the body of " + Name + " assigns '" +
               Target->getNameAsString() + "' of " + typeText(Target->getType());
      if (const auto *CA = dyn_cast<CompoundAssignOperator>(BO)) {
        const char *Op = binOpName(
            BinaryOperator::getOpForCompoundAssignment(CA->getOpcode()));
        std::optional<llvm::StringRef> LhsTy = scalar(CA->getComputationLHSType());
        std::optional<llvm::StringRef> ResTy =
            scalar(CA->getComputationResultType());
        if (!Op || !LhsTy || !ResTy)
          return "the body of " + Name + " has the compound assignment '" +
                 text(S) + "'";
        json::Value V =
            (CA->getOpcode() == BO_AddAssign || CA->getOpcode() == BO_SubAssign) && hostMayFuse(CA, CA->getRHS())
                ? unsupported("fp-contraction", S)
                : castTo(json::Object{{"kind", "binary"},
                                      {"op", Op},
                                      {"lhs", castTo(expr(CA->getLHS()), *LhsTy)},
                                      {"rhs", expr(CA->getRHS())},
                                      {"ty", *ResTy}},
                         *Ty);
        Subst.insert_or_assign(Target, std::move(V));
      } else {
        Subst.insert_or_assign(Target, castTo(expr(BO->getRHS()), *Ty));
      }
      continue;
    }
    llvm::StringRef What = isa<ForStmt>(S) || isa<WhileStmt>(S) || isa<DoStmt>(S)
                               ? "a loop"
                               : S->getStmtClassName();
    return "the body of " + Name + " has " + What.str() +
           " (Tessera inlines a 'return' after local declarations, "
           "assignments to locals and 'if (c) return e;')";
  }
  return Name + " does not end with a 'return'";
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void RegionExtractor::stmts(const Stmt *S, json::Array &Out) {
  if (!S || isa<NullStmt>(S))
    return;
  if (const auto *CS = dyn_cast<CompoundStmt>(S)) {
    for (const Stmt *Child : CS->body())
      stmts(Child, Out);
    return;
  }
  if (const auto *AS = dyn_cast<AttributedStmt>(S))
    return stmts(AS->getSubStmt(), Out);
  if (const auto *LS = dyn_cast<LabelStmt>(S))
    return stmts(LS->getSubStmt(), Out); // a goto to it is reported itself
  if (const auto *CL = dyn_cast<OMPCanonicalLoop>(S))
    return stmts(CL->getLoopStmt(), Out); // -fopenmp-enable-irbuilder wrapper
  if (const auto *D = dyn_cast<OMPExecutableDirective>(S))
    return nestedDirective(*D, Out);
  if (const auto *DS = dyn_cast<DeclStmt>(S))
    return declStmt(DS, Out);
  if (const auto *F = dyn_cast<ForStmt>(S)) {
    Out.push_back(forStmt(F));
    return;
  }
  if (const auto *If = dyn_cast<IfStmt>(S)) {
    Out.push_back(ifStmt(If));
    return;
  }
  if (const auto *E = dyn_cast<Expr>(S)) {
    if (!recordCopy(E, Out))
      Out.push_back(exprStmt(E));
    return;
  }
  llvm::StringRef What = "statement";
  if (isa<WhileStmt>(S))
    What = "while loop";
  else if (isa<DoStmt>(S))
    What = "do loop";
  else if (isa<CXXForRangeStmt>(S))
    What = "range-based for loop";
  else if (isa<GotoStmt>(S) || isa<IndirectGotoStmt>(S))
    What = "goto";
  else if (isa<BreakStmt>(S))
    What = "break";
  else if (isa<ContinueStmt>(S))
    What = "continue";
  else if (isa<ReturnStmt>(S))
    What = "return";
  else if (isa<SwitchStmt>(S))
    What = "switch";
  else if (isa<AsmStmt>(S))
    What = "asm";
  else if (isa<CXXTryStmt>(S))
    What = "try";
  // Compound statements are quoted by their header, not their whole body.
  SourceRange Header = S->getSourceRange();
  if (const auto *W = dyn_cast<WhileStmt>(S))
    Header = SourceRange(W->getWhileLoc(), W->getRParenLoc());
  else if (const auto *Do = dyn_cast<DoStmt>(S))
    Header = SourceRange(Do->getWhileLoc(), Do->getRParenLoc());
  else if (const auto *RF = dyn_cast<CXXForRangeStmt>(S))
    Header = SourceRange(RF->getForLoc(), RF->getRParenLoc());
  else if (const auto *Sw = dyn_cast<SwitchStmt>(S))
    Header = SourceRange(Sw->getSwitchLoc(), Sw->getRParenLoc());
  std::string Text = text(Header, S);
  if (isa<DoStmt>(S))
    Text = "do ... " + Text;
  SawUnsupported = true; // completeVars: the variables it uses are not in the IR
  Out.push_back(json::Object{{"kind", "unsupported"},
                             {"what", What.str()},
                             {"text", std::move(Text)},
                             {"loc", loc(S->getBeginLoc())}});
}

/// The body of a loop, with the loop's own `continue` at the body's top level
/// turned into structure (the IR has no jumps):
///   `if (c) continue; rest`            is `if (c) {} else { rest }`,
///   `if (c) { s…; continue; } rest`    is `if (c) { s… } else { rest }`,
///   `if (c) continue; else e; rest`    is `if (c) {} else { e; rest }`,
///   `if (c) t; else continue; rest`    is `if (c) { t; rest } else {}`,
///   `continue; rest`                   is nothing more (`rest` is unreachable).
/// The condition is evaluated once, where the source evaluates it, and `rest`
/// runs exactly when the source's would. A branch that runs on into `rest` joins
/// it only when it declares nothing (its names could clash with the rest's); a
/// `continue` anywhere else (deeper in a branch) stays unsupported.
void RegionExtractor::loopBody(const Stmt *Body, json::Array &Out) {
  llvm::SmallVector<const Stmt *, 16> List;
  if (const auto *CS = dyn_cast<CompoundStmt>(Body))
    List.append(CS->body_begin(), CS->body_end());
  else if (Body)
    List.push_back(Body);
  loopStmts(List, Out);
}

void RegionExtractor::loopStmts(llvm::ArrayRef<const Stmt *> List,
                                json::Array &Out) {
  // Whether branch \p B ends in the loop's `continue`; the statements before it
  // into \p Before.
  auto Continues = [](const Stmt *B, llvm::SmallVectorImpl<const Stmt *> &Before) {
    if (B && isa<ContinueStmt>(B))
      return true;
    if (const auto *CS = dyn_cast_or_null<CompoundStmt>(B);
        CS && CS->size() && isa<ContinueStmt>(CS->body_back())) {
      Before.append(CS->body_begin(), CS->body_end() - 1);
      return true;
    }
    return false;
  };
  // The statements of a branch that runs on into the rest of the body, as one list
  // with the rest: a block without declarations (whose names could clash with
  // the rest's) is its statements; else none (nullopt).
  auto Inline = [](const Stmt *B) -> std::optional<llvm::SmallVector<const Stmt *, 8>> {
    llvm::SmallVector<const Stmt *, 8> L;
    if (!B)
      return L;
    const auto *CS = dyn_cast<CompoundStmt>(B);
    if (!CS) {
      if (isa<DeclStmt>(B))
        return std::nullopt;
      L.push_back(B);
      return L;
    }
    for (const Stmt *C : CS->body())
      if (isa<DeclStmt>(C))
        return std::nullopt;
    L.append(CS->body_begin(), CS->body_end());
    return L;
  };
  for (size_t K = 0; K < List.size(); ++K) {
    const Stmt *S = List[K];
    if (const auto *AS = dyn_cast<AttributedStmt>(S))
      S = AS->getSubStmt();
    if (isa<ContinueStmt>(S))
      return;
    const auto *If = dyn_cast<IfStmt>(S);
    if (!If || If->getInit() || If->getConditionVariable() || If->isConsteval()) {
      stmts(S, Out);
      continue;
    }
    // `if (c) { s…; continue; } [else e] rest`: the rest (after `e`) runs when
    // `c` is false; symmetrically `if (c) t; else { s…; continue; } rest`.
    llvm::SmallVector<const Stmt *, 8> ThenBefore, ElseBefore;
    bool ThenContinues = Continues(If->getThen(), ThenBefore);
    bool ElseContinues = !ThenContinues && Continues(If->getElse(), ElseBefore);
    const Stmt *Goes = ThenContinues ? If->getElse() : If->getThen();
    std::optional<llvm::SmallVector<const Stmt *, 8>> Runs = Inline(Goes);
    if (!(ThenContinues || ElseContinues) || !Runs) {
      stmts(S, Out);
      continue;
    }
    Runs->append(List.begin() + K + 1, List.end());
    json::Array Stopped, Ongoing;
    for (const Stmt *B : ThenContinues ? ThenBefore : ElseBefore)
      stmts(B, Stopped);
    loopStmts(*Runs, Ongoing);
    json::Array ThenOut = ThenContinues ? std::move(Stopped) : std::move(Ongoing);
    json::Array ElseOut = ThenContinues ? std::move(Ongoing) : std::move(Stopped);
    Out.push_back(json::Object{{"kind", "if"},
                               {"cond", expr(If->getCond())},
                               {"then", std::move(ThenOut)},
                               {"else", std::move(ElseOut)},
                               {"loc", loc(If->getIfLoc())}});
    return;
  }
}

/// A directive nested in a plain `target` (`parallel for`, `teams distribute
/// parallel for`, `parallel`, `simd`, …): its body becomes part of the region.
void RegionExtractor::nestedDirective(const OMPExecutableDirective &D,
                                      json::Array &Out) {
  OpenMPDirectiveKind K = D.getDirectiveKind();
  bool Loop = isa<OMPLoopDirective>(D) && !isOpenMPTaskLoopDirective(K);
  if ((!Loop && K != llvm::omp::OMPD_parallel &&
       K != llvm::omp::OMPD_teams) ||
      !D.hasAssociatedStmt()) {
    Out.push_back(
        unsupported(("omp " + llvm::omp::getOpenMPDirectiveName(K)).str(), &D));
    return;
  }
  clauses(D, /*OwnsLoop=*/Loop);
  stmts(D.getInnermostCapturedStmt()->getCapturedStmt(), Out);
}

/// The variables the region body changes, and those it names other than as the
/// base of a subscript (one walk of the body, on first use).
const RegionExtractor::Uses &RegionExtractor::collectUses() {
  if (BodyUses)
    return *BodyUses;
  BodyUses.emplace();
  if (!Top || !Top->hasAssociatedStmt())
    return *BodyUses;
  auto Named = [](const Expr *E) -> const VarDecl * {
    const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts());
    return DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  };
  llvm::DenseSet<const DeclRefExpr *> Bases;
  llvm::SmallVector<const DeclRefExpr *, 64> Refs;
  llvm::SmallVector<const Stmt *, 64> Work{Top->getAssociatedStmt()};
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *BO = dyn_cast<BinaryOperator>(S); BO && BO->isAssignmentOp())
      if (const VarDecl *V = Named(BO->getLHS()))
        BodyUses->Changed.insert(V);
    if (const auto *UO = dyn_cast<UnaryOperator>(S);
        UO && (UO->isIncrementDecrementOp() || UO->getOpcode() == UO_AddrOf))
      if (const VarDecl *V = Named(UO->getSubExpr()))
        BodyUses->Changed.insert(V);
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(S))
      if (const auto *DRE = dyn_cast<DeclRefExpr>(skipDecay(ASE->getBase())))
        Bases.insert(DRE);
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
      Refs.push_back(DRE);
    if (const auto *CS = dyn_cast<CapturedStmt>(S)) {
      Work.push_back(CS->getCapturedStmt());
      continue;
    }
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
  for (const DeclRefExpr *DRE : Refs)
    if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()); V && !Bases.contains(DRE))
      BodyUses->NotSubscripted.insert(V);
  return *BodyUses;
}

/// Whether the region body assigns, increments or takes the address of \p VD.
bool RegionExtractor::assignedInRegion(const VarDecl *VD) {
  if (!Top || !Top->hasAssociatedStmt())
    return true;
  return collectUses().Changed.contains(VD);
}

/// A local pointer into a region array that only ever serves as the base of
/// subscripts (`const float *row = &A[i * n];`, `A + i * n`, `A[i]` of a 2-D
/// array, `&A[i][j]`) is not a variable of the IR: its subscript `row[k]` is an
/// access of the array (`A[i * n + k]`, `A[i][j + k]`), in pointer arithmetic's
/// `ptrdiff_t`. That holds when the pointer is never assigned, incremented or
/// taken the address of, and the subscripts of its initializer keep their values
/// wherever it is used: they name only indices of the loops around its
/// declaration and scalars of the region that the region never assigns. Records
/// the pointer in PtrLocals and returns true when it qualifies.
bool RegionExtractor::pointerLocal(const VarDecl *VD) {
  QualType T = VD->getType().getCanonicalType();
  const Expr *Init = VD->getInit();
  if (!T->isPointerType() || !Init || !Inlining.empty())
    return false;
  std::optional<llvm::StringRef> Elem = scalar(T->getPointeeType());
  if (!Elem)
    return false;
  // The element the pointer points to: subscripts of an array, outermost first.
  llvm::SmallVector<const Expr *, 4> Subs;
  const Expr *E = skipTransparent(Init)->IgnoreParenImpCasts();
  bool AddrOf = false;
  if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_AddrOf) {
    E = skipTransparent(UO->getSubExpr());
    AddrOf = true;
  }
  // `A + e1 + e2`: integer terms added to the pointer, innermost first.
  llvm::SmallVector<const Expr *, 2> Offsets;
  while (!AddrOf) {
    const auto *BO = dyn_cast<BinaryOperator>(skipTransparent(E)->IgnoreParenImpCasts());
    if (!BO || BO->getOpcode() != BO_Add)
      break;
    bool LeftPtr = BO->getLHS()->getType()->isPointerType();
    Offsets.push_back(LeftPtr ? BO->getRHS() : BO->getLHS());
    E = skipTransparent(LeftPtr ? BO->getLHS() : BO->getRHS());
  }
  std::reverse(Offsets.begin(), Offsets.end());
  const Expr *Cur = skipDecay(E);
  while (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Cur)) {
    Subs.push_back(ASE->getIdx());
    Cur = skipDecay(ASE->getBase());
  }
  std::reverse(Subs.begin(), Subs.end());
  std::optional<unsigned> I;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(Cur)) {
    const auto *Base = dyn_cast<VarDecl>(DRE->getDecl());
    if (!Base || Inner.count(Base) || declaredInside(Base))
      return false;
    I = regionVar(Base);
  } else if (const auto *ME = dyn_cast<MemberExpr>(Cur)) {
    bool Aliased = false;
    I = pointerMember(ME, /*Inside=*/true, Aliased);
  }
  if (!I || Vars[*I].S.Elem != *Elem)
    return false;
  size_t Dims = Vars[*I].S.Dims.size();
  // `&A[..][j]` names every dimension; `A[i]` (a decayed row) and `A + e` all but
  // the last, whose subscript is then the offset (or 0).
  if (AddrOf ? Subs.size() != Dims : Subs.size() + 1 != Dims)
    return false;
  if (AddrOf) {
    Offsets.push_back(Subs.back());
    Subs.pop_back();
  }
  // The subscripts' variables must keep their values.
  llvm::SmallVector<const Expr *, 8> Terms(Subs.begin(), Subs.end());
  Terms.append(Offsets.begin(), Offsets.end());
  if (!keepValues(Terms))
    return false;
  // Never changed, and every use is the base of a subscript.
  if (assignedInRegion(VD) || collectUses().NotSubscripted.contains(VD))
    return false;
  PtrLocals[VD] = PtrLocal{*I, std::move(Subs), std::move(Offsets)};
  return true;
}

/// Whether the integer expressions \p Exprs keep their values wherever a local
/// declared here is used: they name only indices of the loops around the
/// declaration and scalars of the region that the region never assigns (no
/// calls, member accesses or subscripts).
bool RegionExtractor::keepValues(llvm::ArrayRef<const Expr *> Exprs) {
  llvm::SmallVector<const Stmt *, 16> Work(Exprs.begin(), Exprs.end());
  while (!Work.empty()) {
    const Stmt *S = Work.pop_back_val();
    if (!S)
      continue;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(S)) {
      const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
      if (!V)
        return false;
      bool LoopIndex = llvm::is_contained(LoopStack, V);
      if (!LoopIndex && (Inner.count(V) || declaredInside(V) || !scalar(V->getType()) ||
                         assignedInRegion(V)))
        return false;
    }
    if (isa<CallExpr>(S) || isa<MemberExpr>(S) || isa<ArraySubscriptExpr>(S))
      return false; // keep to plain integer expressions
    for (const Stmt *C : S->children())
      Work.push_back(C);
  }
  return true;
}

/// A local reference or pointer to an element of an array of dense structs
/// (`P &t = p[i];`, `const P &t = g[i][j];`, `P *t = &p[i];`, `P *t = p + i;`) is not a variable
/// of the IR: `t.x` (`t->x`) is the access `p[i].x`, and `q[i] = t` (`*t`) the
/// copy of `p[i]`. That holds when the subscripts keep their values (keepValues)
/// and a pointer is never assigned, incremented or taken the address of (a
/// reference cannot be rebound: assigning it copies into the element). Any
/// other use of the local names a struct value and keeps the region on the
/// host. Records it in RecordAliases and returns true when it qualifies.
bool RegionExtractor::recordAlias(const VarDecl *VD) {
  QualType T = VD->getType().getCanonicalType();
  const Expr *Init = VD->getInit();
  if (!Init || !Inlining.empty() || !(T->isReferenceType() || T->isPointerType()))
    return false;
  if (!denseRecord(T->getPointeeType()))
    return false;
  const Expr *E = skipTransparent(Init)->IgnoreParenImpCasts();
  bool Pointer = T->isPointerType();
  if (Pointer && assignedInRegion(VD))
    return false;
  // `p + k` (or `k + p`) of a one-dimensional array of structs.
  if (const auto *BO = dyn_cast<BinaryOperator>(E); Pointer && BO && BO->getOpcode() == BO_Add) {
    bool LeftPtr = BO->getLHS()->getType()->isPointerType();
    const VarDecl *Base = namedVar(LeftPtr ? BO->getLHS() : BO->getRHS());
    const Expr *Off = LeftPtr ? BO->getRHS() : BO->getLHS();
    if (!Base || Inner.count(Base) || declaredInside(Base))
      return false;
    std::optional<unsigned> I = regionVar(Base);
    if (!I || !Vars[*I].S.Record || Vars[*I].S.Dims.size() != 2 || !keepValues({Off}))
      return false;
    RecordAliases[VD] = RecordAlias{nullptr, true, Base, Off};
    return true;
  }
  if (Pointer) {
    const auto *UO = dyn_cast<UnaryOperator>(E);
    if (!UO || UO->getOpcode() != UO_AddrOf)
      return false;
    E = skipTransparent(UO->getSubExpr())->IgnoreParenImpCasts();
  }
  const auto *ASE = dyn_cast<ArraySubscriptExpr>(E);
  if (!ASE)
    return false;
  // The element of an array of structs: every dimension but the struct's own.
  llvm::SmallVector<const Expr *, 4> Subs;
  const Expr *Cur = ASE;
  while (const auto *A = dyn_cast<ArraySubscriptExpr>(Cur)) {
    Subs.push_back(A->getIdx());
    Cur = skipDecay(A->getBase());
  }
  const VarDecl *Base = namedVar(Cur);
  if (!Base || Inner.count(Base) || declaredInside(Base))
    return false;
  std::optional<unsigned> I = regionVar(Base);
  if (!I || !Vars[*I].S.Record || Subs.size() + 1 != Vars[*I].S.Dims.size() ||
      !keepValues(Subs))
    return false;
  RecordAliases[VD] = RecordAlias{ASE, Pointer};
  return true;
}

/// The array element a struct-valued expression names: `p[i]`, a reference
/// alias `t` or `*t` of a pointer alias (RecordAliases); else null.
const ArraySubscriptExpr *RegionExtractor::recordElement(const Expr *E) const {
  E = skipDecay(E);
  if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(E))
    return ASE;
  bool Deref = false;
  if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_Deref) {
    E = UO->getSubExpr();
    Deref = true;
  }
  if (const VarDecl *VD = namedVar(E))
    if (auto It = RecordAliases.find(VD); It != RecordAliases.end() && It->second.Pointer == Deref)
      return It->second.Element;
  return nullptr;
}

/// The struct local (StructLocals) a struct-valued expression names, if any.
const RegionExtractor::StructLocal *RegionExtractor::structValue(const Expr *E) const {
  if (const VarDecl *VD = namedVar(skipDecay(E)))
    if (auto It = StructLocals.find(VD); It != StructLocals.end())
      return &It->second;
  return nullptr;
}

/// A local variable of a dense struct type (`P t = p[i];`, `P t = *q;` of an
/// alias, `P t = u;` of another such local, `P t;`) is one IR local per scalar
/// of the struct (`t_0`, `t_1`, …), initialised from the scalars of its
/// initializer: a copy has its own storage, so later writes to the array do
/// not change it. Its fields (`t.y`, `t.v[2]`: structLocalMember) are those
/// locals; whole-struct assignments to and from it are per scalar
/// (recordCopy). Appends the declarations to \p Out and returns true, or
/// returns false (nothing appended) when \p VD is no such local.
bool RegionExtractor::structLocal(const VarDecl *VD, const DeclStmt *DS,
                                  json::Array &Out) {
  QualType T = VD->getType().getCanonicalType();
  std::optional<std::pair<llvm::StringRef, uint64_t>> Rec = denseRecord(T);
  if (!Rec || T->isReferenceType() || !Inlining.empty())
    return false;
  const Expr *Src = VD->getInit() ? skipTransparent(VD->getInit()) : nullptr;
  if (const auto *CE = dyn_cast_or_null<CXXConstructExpr>(Src)) {
    const CXXConstructorDecl *C = CE->getConstructor();
    if (!C || !C->isTrivial())
      return false;
    if (CE->getNumArgs() == 0)
      Src = nullptr; // `P t;`: trivially default-initialised
    else if (CE->getNumArgs() == 1 && C->isCopyOrMoveConstructor())
      Src = CE->getArg(0);
    else
      return false;
  }
  if (Src && !recordElement(Src) && !structValue(Src))
    return false;
  StructLocal L{Rec->first, {}};
  std::string Base = nameOf(VD);
  for (uint64_t F = 0; F < Rec->second; ++F) {
    std::string Name = Base + "_" + std::to_string(F);
    for (unsigned K = 1; UsedNames.contains(Name); ++K)
      Name = Base + "_" + std::to_string(F) + "_" + std::to_string(K);
    UsedNames.insert(Name);
    json::Value Init = Src ? recordField(Src, F, Rec->first, false, DS) : json::Value(nullptr);
    if (Init.kind() == json::Value::Object && Init.getAsObject()->getString("kind") == "unsupported") {
      Out.push_back(std::move(Init));
      return true;
    }
    Out.push_back(json::Object{{"kind", "let"},
                               {"name", Name},
                               {"ty", Rec->first},
                               {"init", std::move(Init)},
                               {"loc", loc(VD->getLocation())}});
    L.Names.push_back(std::move(Name));
  }
  StructLocals[VD] = std::move(L);
  return true;
}

/// Scalar \p F of the struct value \p E — an array element (recordElement) or
/// a struct local — as an IR read (\p Write: as an assignment target), or the
/// unsupported node at \p Where.
json::Value RegionExtractor::recordField(const Expr *E, uint64_t F,
                                         llvm::StringRef Ty, bool Write,
                                         const Stmt *Where) {
  if (const StructLocal *L = structValue(E)) {
    if (Write)
      return json::Object{{"kind", "local"}, {"name", L->Names[F]}, {"ty", Ty}};
    return json::Object{{"kind", "var"}, {"name", L->Names[F]}, {"ty", Ty}};
  }
  const ArraySubscriptExpr *ASE = recordElement(E);
  if (!ASE)
    return unsupported("use of a whole struct (use its fields)", Where);
  unsigned V = 0;
  json::Array I;
  json::Value Last = intLit(int64_t(F), "i64");
  json::Value Bad = access(ASE, V, I, &Last);
  if (Bad.kind() != json::Value::Null)
    return Bad;
  if (Write)
    Vars[V].Written = true;
  return json::Object{{"kind", Write ? "element" : "read"},
                      {"array", Vars[V].Name},
                      {"index", std::move(I)},
                      {"ty", Ty},
                      {"loc", loc(E->getBeginLoc())}};
}

/// `t.y`, `t.v[2]` of a struct local (StructLocals): the name of the IR local
/// holding that scalar; an empty name when a subscript inside the struct is not
/// a constant; none when \p E is not a scalar member of a struct local.
std::optional<std::string> RegionExtractor::structLocalMember(const Expr *E) {
  if (!scalar(E->getType()))
    return std::nullopt;
  llvm::SmallVector<const Expr *, 6> Chain;
  const Expr *Cur = skipDecay(E);
  while (true) {
    if (const auto *ASE = dyn_cast<ArraySubscriptExpr>(Cur)) {
      Chain.push_back(Cur);
      Cur = skipDecay(ASE->getBase());
      continue;
    }
    const auto *ME = dyn_cast<MemberExpr>(Cur);
    if (!ME || ME->isArrow())
      break;
    Chain.push_back(Cur);
    Cur = skipDecay(ME->getBase());
  }
  const VarDecl *VD = namedVar(Cur);
  auto It = VD ? StructLocals.find(VD) : StructLocals.end();
  if (It == StructLocals.end() || Chain.empty())
    return std::nullopt;
  const StructLocal &L = It->second;
  uint64_t ElemBytes =
      Ctx.getTypeSizeInChars(VD->getType()).getQuantity() / L.Names.size();
  int64_t Offset = 0;
  for (const Expr *C : Chain) {
    std::optional<int64_t> Scalars = scalarsIn(C, ElemBytes);
    if (!Scalars)
      return std::string();
    if (isa<MemberExpr>(C)) {
      Offset += *Scalars;
      continue;
    }
    std::optional<int64_t> K = evalInt(cast<ArraySubscriptExpr>(C)->getIdx());
    if (!K)
      return std::string();
    Offset += *K * *Scalars;
  }
  if (Offset < 0 || uint64_t(Offset) >= L.Names.size())
    return std::string();
  return L.Names[size_t(Offset)];
}

/// `t.y` of a struct local (structLocalMember) as an IR node: the read of its
/// local, with \p Write the local as an assignment target, or the unsupported
/// node at \p Where for a subscript that is not a constant; none when \p E is
/// no scalar member of a struct local.
std::optional<json::Value>
RegionExtractor::structLocalNode(const Expr *E, bool Write, const Stmt *Where) {
  if (!isa<ArraySubscriptExpr>(E) && !isa<MemberExpr>(E))
    return std::nullopt;
  std::optional<std::string> L = structLocalMember(E);
  if (!L)
    return std::nullopt;
  if (L->empty())
    return unsupported("member of a local struct at a subscript that is not a "
                       "constant",
                       Where);
  return json::Value(json::Object{
      {"kind", Write ? "local" : "var"}, {"name", *L}, {"ty", *scalar(E->getType())}});
}

void RegionExtractor::declStmt(const DeclStmt *DS, json::Array &Out) {
  for (const Decl *D : DS->decls()) {
    const auto *VD = dyn_cast<VarDecl>(D);
    if (!VD)
      continue; // typedefs, local tags: no code
    if (!VD->hasLocalStorage()) {
      Out.push_back(unsupported("static local", DS));
      continue;
    }
    // A local of the region, whatever its type: never a runtime argument.
    Inner.insert(VD);
    if (pointerLocal(VD))
      continue; // its uses are accesses of the array it points into
    if (recordAlias(VD))
      continue; // its uses are accesses of the struct element it names
    if (structLocal(VD, DS, Out))
      continue;
    std::optional<llvm::StringRef> Ty = scalar(VD->getType());
    if (!Ty) {
      Out.push_back(unsupported(
          VD->getType()->isArrayType() ? std::string("local array")
          : VD->getType()->isPointerType()
              ? "local pointer of " + typeText(VD->getType()) +
                    " (Tessera follows a local pointer that is initialised "
                    "to a place in a region array, '&A[i][j]', 'A[i]' or "
                    "'A + e', with subscripts that keep their values, and is "
                    "only ever subscripted)"
              : "local of " + typeText(VD->getType()),
          DS));
      continue;
    }
    json::Value Init = nullptr;
    if (const Expr *I = VD->getInit())
      Init = expr(I);
    Out.push_back(json::Object{{"kind", "let"},
                               {"name", nameOf(VD)},
                               {"ty", *Ty},
                               {"init", std::move(Init)},
                               {"loc", loc(VD->getLocation())}});
  }
}

/// A `for` loop in OpenMP's canonical loop form (OpenMP 5.2, 4.4.1) as the IR's
/// `for`: init `var = lb` or `T var = lb`; test `var op b` or `b op var`, op one of
/// `<`, `<=`, `>`, `>=`, `!=`; increment `++var`, `var++`, `--var`, `var--`,
/// `var += c`, `var -= c`, `var = var + c`, `var = c + var` or `var = var - c` with
/// an integer constant c. The loop keeps its direction and order (a decreasing loop
/// has a negative step); `<=` / `>=` become the exclusive ends `b + 1` / `b - 1` in
/// the comparison's type, `!=` is recorded as such. Anything else becomes an
/// unsupported `non-canonical loop: <why>` (the region stays on the host).
json::Value RegionExtractor::forStmt(const ForStmt *F) {
  auto NonCanonical = [&](const std::string &Why) {
    SawUnsupported = true; // completeVars: the body's variables are not in the IR
    return json::Object{
        {"kind", "unsupported"},
        {"what", "non-canonical loop: " + Why},
        {"text", text(SourceRange(F->getForLoc(), F->getRParenLoc()), F)},
        {"loc", loc(F->getForLoc())}};
  };

  // Init: `T i = e` or `i = e`.
  const VarDecl *IV = nullptr;
  const Expr *LowerE = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(F->getInit())) {
    if (DS->isSingleDecl())
      if (const auto *VD = dyn_cast<VarDecl>(DS->getSingleDecl()))
        if (VD->getInit() && VD->hasLocalStorage()) {
          IV = VD;
          LowerE = VD->getInit();
        }
  } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(
                 F->getInit() ? skipTransparent(cast<Expr>(F->getInit()))
                              : nullptr)) {
    if (BO->getOpcode() == BO_Assign)
      if (const auto *DRE =
              dyn_cast<DeclRefExpr>(skipTransparent(BO->getLHS())))
        if ((IV = dyn_cast<VarDecl>(DRE->getDecl())))
          LowerE = BO->getRHS();
  }
  if (!IV)
    return NonCanonical("its initialization is not 'var = lb' or 'T var = lb'");
  std::string V = "'" + IV->getNameAsString() + "'";
  std::optional<llvm::StringRef> Ty = scalar(IV->getType());
  if (!Ty || !IV->getType()->isIntegerType())
    return NonCanonical("its index " + V + " is not of an integer type");
  if (F->getConditionVariable())
    return NonCanonical("its test declares a variable");

  // Test: `i op b`, or `b op i` (that is `i op' b`).
  const auto *Cond = dyn_cast_or_null<BinaryOperator>(
      F->getCond() ? skipTransparent(F->getCond()) : nullptr);
  BinaryOperatorKind Op = Cond ? Cond->getOpcode() : BO_Comma;
  const Expr *UpperE = nullptr;
  if (Op == BO_LT || Op == BO_LE || Op == BO_GT || Op == BO_GE ||
      Op == BO_NE) {
    if (namedVar(Cond->getLHS()) == IV) {
      UpperE = Cond->getRHS();
    } else if (namedVar(Cond->getRHS()) == IV) {
      UpperE = Cond->getLHS();
      Op = BinaryOperator::reverseComparisonOp(Op);
    }
  }
  if (!UpperE)
    return NonCanonical("its test is not a comparison (<, <=, >, >=, !=) of " +
                        V + " with a bound");

  // Increment: `++i`, `i++`, `--i`, `i--`, `i += c`, `i -= c`, `i = i + c`,
  // `i = c + i`, `i = i - c`, c an integer constant (of any sign).
  std::optional<int64_t> Step;
  const Expr *StepE = nullptr; // c
  bool Minus = false;          // the step is -c
  const Expr *Inc = F->getInc() ? skipTransparent(F->getInc()) : nullptr;
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(Inc)) {
    if (UO->isIncrementDecrementOp() && namedVar(UO->getSubExpr()) == IV)
      Step = UO->isIncrementOp() ? 1 : -1;
  } else if (const auto *CA = dyn_cast_or_null<CompoundAssignOperator>(Inc)) {
    if ((CA->getOpcode() == BO_AddAssign || CA->getOpcode() == BO_SubAssign) &&
        namedVar(CA->getLHS()) == IV) {
      StepE = CA->getRHS();
      Minus = CA->getOpcode() == BO_SubAssign;
    }
  } else if (const auto *BO = dyn_cast_or_null<BinaryOperator>(Inc)) {
    if (BO->getOpcode() == BO_Assign && namedVar(BO->getLHS()) == IV)
      if (const auto *Add = dyn_cast<BinaryOperator>(
              BO->getRHS()->IgnoreParenImpCasts())) {
        if (Add->getOpcode() == BO_Add && namedVar(Add->getLHS()) == IV)
          StepE = Add->getRHS();
        else if (Add->getOpcode() == BO_Add && namedVar(Add->getRHS()) == IV)
          StepE = Add->getLHS();
        else if (Add->getOpcode() == BO_Sub && namedVar(Add->getLHS()) == IV) {
          StepE = Add->getRHS();
          Minus = true;
        }
      }
  }
  if (StepE) {
    Step = evalInt(StepE);
    if (!Step)
      return NonCanonical("its step '" + text(StepE) +
                          "' is not an integer constant");
    if (Minus)
      Step = *Step == INT64_MIN ? std::nullopt
                                : std::optional<int64_t>(-*Step);
  }
  if (!Step)
    return NonCanonical("its increment is not ++, --, 'var += c', "
                        "'var -= c', 'var = var + c', 'var = c + var' or "
                        "'var = var - c' of its index " + V);
  if (*Step == 0)
    return NonCanonical("its step is 0");
  // A step beyond the index type's signed range wraps around to another one.
  unsigned Width = Ctx.getIntWidth(IV->getType());
  int64_t Fits = Width >= 64 ? INT64_MAX : (int64_t(1) << (Width - 1)) - 1;
  if (*Step > Fits || *Step < -Fits)
    return NonCanonical("its step " + std::to_string(*Step) +
                        " does not fit the type of " + V);
  bool Up = *Step > 0;
  if (((Op == BO_LT || Op == BO_LE) && !Up) ||
      ((Op == BO_GT || Op == BO_GE) && Up))
    return NonCanonical(V + (Up ? " increases" : " decreases") +
                        " but its test '" + text(Cond) + "' needs it to " +
                        (Up ? "decrease" : "increase"));
  // `i <= max` / `i >= min` of the comparison's type holds for every value: the
  // loop never ends (and the exclusive end `b + 1` / `b - 1` would wrap around).
  if (Op == BO_LE || Op == BO_GE) {
    Expr::EvalResult R;
    if (!UpperE->isValueDependent() && UpperE->EvaluateAsInt(R, Ctx)) {
      const llvm::APSInt &B = R.Val.getInt();
      llvm::APSInt Limit =
          Op == BO_LE
              ? llvm::APSInt::getMaxValue(B.getBitWidth(), B.isUnsigned())
              : llvm::APSInt::getMinValue(B.getBitWidth(), B.isUnsigned());
      if (B == Limit)
        return NonCanonical("its test '" + text(Cond) + "' is always true");
    }
  }

  // The index is private to the region whether declared here or outside.
  if (isa<DeclStmt>(F->getInit()))
    Inner.insert(IV);
  else if (!Inner.count(IV))
    LoopIndices.insert(IV);
  std::string Name = nameOf(IV);

  json::Value Lower = expr(LowerE);
  // The bound as converted for the comparison, so C semantics hold.
  json::Value Upper = expr(UpperE);
  if (Op == BO_LE || Op == BO_GE) {
    // (Copied: tyOf() points into Upper, which is moved below.)
    std::string UTy = tyOf(Upper).str();
    if (UTy.empty())
      UTy = scalar(UpperE->getType()).value_or("i32").str();
    Upper = json::Object{{"kind", "binary"},
                         {"op", Op == BO_LE ? "add" : "sub"},
                         {"lhs", std::move(Upper)},
                         {"rhs", intLit(1, UTy)},
                         {"ty", UTy}};
  }
  json::Array Body;
  LoopStack.push_back(IV);
  loopBody(F->getBody(), Body);
  LoopStack.pop_back();
  json::Object Loop{{"kind", "for"},
                    {"var", Name},
                    {"ty", *Ty},
                    {"lower", std::move(Lower)},
                    {"upper", std::move(Upper)},
                    {"step", *Step},
                    {"body", std::move(Body)},
                    {"loc", loc(F->getForLoc())}};
  if (Op == BO_NE)
    Loop["ne"] = true;
  return Loop;
}

json::Value RegionExtractor::ifStmt(const IfStmt *If) {
  if (If->getInit() || If->getConditionVariable()) {
    SawUnsupported = true; // completeVars: its variables are not in the IR
    return json::Object{
        {"kind", "unsupported"},
        {"what", "if with initializer"},
        {"text", text(SourceRange(If->getIfLoc(), If->getRParenLoc()), If)},
        {"loc", loc(If->getIfLoc())}};
  }
  if (If->isConsteval())
    return unsupported("consteval if", If);
  json::Array Then, Else;
  stmts(If->getThen(), Then);
  stmts(If->getElse(), Else);
  return json::Object{{"kind", "if"},
                      {"cond", expr(If->getCond())},
                      {"then", std::move(Then)},
                      {"else", std::move(Else)},
                      {"loc", loc(If->getIfLoc())}};
}

/// The target of an assignment. On failure \p Ok is false and the result is the
/// unsupported statement that replaces the whole assignment \p Whole.
json::Value RegionExtractor::lvalue(const Expr *E, const Stmt *Whole,
                                    bool &Ok) {
  Ok = false;
  E = skipTransparent(E);
  if (std::optional<json::Value> L = structLocalNode(E, /*Write=*/true, Whole)) {
    Ok = L->getAsObject()->getString("kind") == "local";
    return std::move(*L);
  }
  if (isa<ArraySubscriptExpr>(E) || isa<MemberExpr>(E)) {
    unsigned Array = 0;
    json::Array Index;
    json::Value Bad = element(E, Array, Index, Whole);
    if (Bad.kind() != json::Value::Null)
      return Bad; // the reason for the access is the statement's reason
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!Ty)
      return unsupportedType(E->getType(), Whole);
    Vars[Array].Written = true;
    Ok = true;
    return json::Object{{"kind", "element"},
                        {"array", Vars[Array].Name},
                        {"index", std::move(Index)},
                        {"ty", *Ty},
                        {"loc", loc(E->getBeginLoc())}};
  }
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    std::optional<llvm::StringRef> Ty = scalar(E->getType());
    if (!VD || !Ty)
      return unsupported("assignment", Whole);
    Ok = true;
    if (Inner.count(VD) || LoopIndices.count(VD))
      return json::Object{
          {"kind", "local"}, {"name", nameOf(VD)}, {"ty", *Ty}};
    std::optional<unsigned> I = regionVar(VD);
    Vars[*I].Written = true;
    return json::Object{{"kind", "scalar"},
                        {"name", nameOf(VD)},
                        {"ty", *Ty},
                        {"loc", loc(E->getBeginLoc())}};
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->getOpcode() == UO_Deref)
    return unsupported("pointer arithmetic", Whole);
  return unsupported("assignment", Whole);
}

/// The IR statement `target = value;` of the source statement `S`.
json::Value RegionExtractor::assignStmt(json::Value Target, json::Value Value,
                                        const Expr *S) const {
  return json::Object{{"kind", "assign"},
                      {"target", std::move(Target)},
                      {"value", std::move(Value)},
                      {"loc", loc(S->getBeginLoc())}};
}

/// `q[i] = p[j];` of elements of arrays of one dense struct type (denseRecord;
/// in C++ through its trivial assignment operator), each side possibly a local
/// alias of an element (recordAlias) or a struct local (structLocal): one
/// assignment per scalar of the struct, `q[i][f] = p[j][f]` — the same bytes as
/// the struct copy, as the struct has no padding. Appends them to \p Out and returns true, or returns
/// false (nothing appended) when \p E is no such copy.
bool RegionExtractor::recordCopy(const Expr *E, json::Array &Out) {
  const Expr *S = E;
  E = skipTransparent(E);
  const Expr *L = nullptr, *R = nullptr;
  if (const auto *BO = dyn_cast<BinaryOperator>(E);
      BO && BO->getOpcode() == BO_Assign) {
    L = BO->getLHS();
    R = BO->getRHS();
  } else if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E);
             OC && OC->getOperator() == OO_Equal && OC->getNumArgs() == 2) {
    const auto *MD = dyn_cast_or_null<CXXMethodDecl>(OC->getDirectCallee());
    if (!MD || !MD->isTrivial())
      return false;
    L = OC->getArg(0);
    R = OC->getArg(1);
  }
  if (!L || !R)
    return false;
  std::optional<std::pair<llvm::StringRef, uint64_t>> Rec =
      denseRecord(L->getType().getNonReferenceType());
  // Each side an array element (through an alias or not) or a struct local.
  auto Whole = [&](const Expr *X) { return recordElement(X) || structValue(X); };
  if (!Rec || !Whole(L) || !Whole(R) ||
      !Ctx.hasSameUnqualifiedType(L->getType().getNonReferenceType(),
                                  R->getType().getNonReferenceType()))
    return false;
  for (uint64_t F = 0; F < Rec->second; ++F) {
    json::Value Target = recordField(L, F, Rec->first, true, S);
    json::Value Value = nullptr;
    if (Target.getAsObject()->getString("kind") != "unsupported")
      Value = recordField(R, F, Rec->first, false, S);
    for (json::Value *V : {&Target, &Value})
      if (V->kind() == json::Value::Object &&
          V->getAsObject()->getString("kind") == "unsupported") {
        Out.push_back(std::move(*V));
        return true;
      }
    Out.push_back(assignStmt(std::move(Target), std::move(Value), S));
  }
  return true;
}

/// `x++`, `++x`, `x--`, `--x` whose value is unused: `x += 1` / `x -= 1`, that
/// is `x = (T)((P)x op 1)` with P the promoted type of T (C 6.5.2.4, 6.5.3.1;
/// C++ [expr.pre.incr]), so `uint8_t` wraps as on the host. Pointers and
/// `bool` (whose increment sets it to true) stay unsupported.
json::Value RegionExtractor::incrementStmt(const UnaryOperator *UO,
                                           const Expr *S) {
  QualType T = UO->getSubExpr()->getType();
  if (T->isPointerType())
    return unsupported("pointer arithmetic", S);
  std::optional<llvm::StringRef> TargetTy = scalar(T);
  if (!TargetTy || T->isBooleanType() || !T->isArithmeticType())
    return unsupported("increment", S);
  QualType P = T.getUnqualifiedType();
  if (P->isIntegralOrEnumerationType() && Ctx.isPromotableIntegerType(P))
    P = Ctx.getPromotedIntegerType(P);
  std::optional<llvm::StringRef> PromTy = scalar(P);
  if (!PromTy)
    return unsupported("increment", S);
  json::Value One =
      P->isRealFloatingType()
          ? json::Value(json::Object{
                {"kind", "float"},
                {"bits", llvm::APFloat(1.0).bitcastToAPInt().getZExtValue()},
                {"ty", *PromTy}})
          : intLit(1, *PromTy);
  bool Ok;
  json::Value Target = lvalue(UO->getSubExpr(), S, Ok);
  if (!Ok)
    return Target;
  json::Value Value = castTo(
      json::Object{{"kind", "binary"},
                   {"op", UO->isIncrementOp() ? "add" : "sub"},
                   {"lhs", castTo(expr(UO->getSubExpr()), *PromTy)},
                   {"rhs", std::move(One)},
                   {"ty", *PromTy}},
      *TargetTy);
  return assignStmt(std::move(Target), std::move(Value), S);
}

json::Value RegionExtractor::exprStmt(const Expr *E) {
  const Expr *S = E;
  E = skipTransparent(E);
  if (const auto *CA = dyn_cast<CompoundAssignOperator>(E)) {
    const char *Op = binOpName(BinaryOperator::getOpForCompoundAssignment(
        CA->getOpcode()));
    if (CA->getLHS()->getType()->isPointerType())
      return unsupported("pointer arithmetic", S);
    std::optional<llvm::StringRef> TargetTy = scalar(CA->getLHS()->getType());
    std::optional<llvm::StringRef> LhsTy =
        scalar(CA->getComputationLHSType());
    std::optional<llvm::StringRef> ResTy =
        scalar(CA->getComputationResultType());
    if (!Op || !TargetTy || !LhsTy || !ResTy)
      return unsupported("compound assignment", S);
    // `a += b * c` contracts like `a = a + b * c`.
    if ((CA->getOpcode() == BO_AddAssign || CA->getOpcode() == BO_SubAssign) && hostMayFuse(CA, CA->getRHS()))
      return unsupported("fp-contraction", S);
    bool Ok;
    json::Value Target = lvalue(CA->getLHS(), S, Ok);
    if (!Ok)
      return Target;
    // a op= b  ==>  a = (T)((CL)a op b), in the types clang computed.
    json::Value Value = castTo(
        json::Object{{"kind", "binary"},
                     {"op", Op},
                     {"lhs", castTo(expr(CA->getLHS()), *LhsTy)},
                     {"rhs", expr(CA->getRHS())},
                     {"ty", *ResTy}},
        *TargetTy);
    return assignStmt(std::move(Target), std::move(Value), S);
  }
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    if (BO->getOpcode() == BO_Assign) {
      bool Ok;
      json::Value Target = lvalue(BO->getLHS(), S, Ok);
      if (!Ok)
        return Target;
      return assignStmt(std::move(Target), expr(BO->getRHS()), S);
    }
  }
  if (const auto *UO = dyn_cast<UnaryOperator>(E);
      UO && UO->isIncrementDecrementOp())
    return incrementStmt(UO, S);
  if (isa<CallExpr>(E))
    return unsupported("call: its value is unused, so it could only act "
                       "through side effects, which Tessera does not inline",
                       S);
  return unsupported("expression statement", S);
}

//===----------------------------------------------------------------------===//
// Region
//===----------------------------------------------------------------------===//

tessera::ExtractedRegion RegionExtractor::run(const OMPExecutableDirective &D,
                                              llvm::StringRef Function,
                                              unsigned Index) {
  bool Loop = isa<OMPLoopDirective>(D);
  Top = &D;
  if (D.hasAssociatedStmt())
    if (const auto *CS = dyn_cast<CapturedStmt>(D.getAssociatedStmt()))
      Region = CS->getCapturedDecl();
  clauses(D, /*OwnsLoop=*/Loop);
  // A reduction variable of the target construct without a map clause is
  // mapped tofrom (OpenMP 5.2, 5.8.8: its result reaches the host).
  for (unsigned I : TopReductionVars)
    if (Vars[I].Map.kind() == json::Value::Null)
      Vars[I].Map = "tofrom";
  for (auto &[I, Section] : TopArrayReductions)
    if (Vars[I].Map.kind() == json::Value::Null) {
      Vars[I].Map = "tofrom";
      Vars[I].Section = std::move(Section);
    }
  json::Array Body;
  if (D.hasAssociatedStmt()) {
    // Combined loop directives: the associated loop nest. Plain `target`,
    // `target teams`, `target parallel`: the body, nested directives unwrapped.
    stmts(D.getInnermostCapturedStmt()->getCapturedStmt(), Body);
    completeVars(D.getInnermostCapturedStmt()->getCapturedStmt());
  }
  applyDefaultmap();

  tessera::ExtractedRegion R;
  json::Array Members, Checked;
  for (const VarEntry &V : Vars) {
    if (V.Member)
      Members.push_back(V.Name);
    if (V.Member && V.Checked)
      Checked.push_back(V.Name);
  }
  json::Array VarsJ = varsJson(R);
  R.IR = json::Object{
      {"version", 1},
      {"location", loc(D.getBeginLoc())},
      {"function", Function.str()},
      {"index", Index},
      {"directive", llvm::omp::getOpenMPDirectiveName(D.getDirectiveKind())},
      {"collapse", Collapse},
      {"unsupported_clauses", std::move(UnsupportedClauses)},
      {"if_clause", IfCondition != nullptr},
      {"device_clause", DeviceNum != nullptr},
      {"reductions", std::move(Reductions)},
      {"array_reductions", std::move(ArrayReductions)},
      {"vars", std::move(VarsJ)},
      {"members", std::move(Members)},
      {"checked_members", std::move(Checked)},
      {"body", std::move(Body)}};
  R.IfCondition = IfCondition;
  R.DeviceNum = DeviceNum;
  R.UnknownFootprint = UnknownFootprint;
  // Kernel names hash the directive's file as an absolute path (Region::source).
  PresumedLoc P = SM.getPresumedLoc(D.getBeginLoc());
  if (P.isValid())
    R.IR.getAsObject()->insert(
        {"source", tessera::absoluteSourcePath(SM, P.getFilename())});
  return R;
}

/// `Region::vars` (or `DataDirective::vars`) as JSON; fills \p R's Vars in
/// the same order.
json::Array RegionExtractor::varsJson(tessera::ExtractedRegion &R) {
  json::Array VarsJ;
  for (VarEntry &V : Vars) {
    R.Vars.push_back(V.Decl);
    R.Hoisted.push_back(V.Hoisted);
    R.HoistedInside.push_back(V.Inside);
    R.HoistedMember.push_back(V.Member);
    VarsJ.push_back(json::Object{{"name", V.Name},
                                 {"kind", V.S.Kind},
                                 {"elem", V.S.Elem},
                                 {"dims", std::move(V.Dims)},
                                 {"map", std::move(V.Map)},
                                 {"section", std::move(V.Section)},
                                 {"written", V.Written},
                                 {"loc", loc(V.Decl ? V.Decl->getLocation()
                                                    : V.Hoisted->getBeginLoc())}});
  }
  return VarsJ;
}

tessera::ExtractedRegion RegionExtractor::runData(const OMPExecutableDirective &D,
                                                  llvm::StringRef Function,
                                                  unsigned Index) {
  DataObjects = true;
  json::Array Items;
  for (const OMPClause *C : D.clauses()) {
    if (!C || C->isImplicit())
      continue;
    switch (C->getClauseKind()) {
    // The items of a map or motion clause Tessera does not implement are kept,
    // marked unsupported: the runtime then knows their variables, and stops the
    // program instead of leaving the directive to the host OpenMP runtime while
    // their data is on the device (crates/compiler/src/data.rs, `unlocated`).
    case llvm::omp::OMPC_map: {
      const auto *MC = cast<OMPMapClause>(C);
      bool Present = false;
      std::optional<std::string> Kind = mapKind(MC, &Present);
      for (const Expr *Item : MC->varlists())
        Items.push_back(Kind ? dataItem(Item, *Kind, Present)
                             : dataItem(Item, baseMapKind(MC), false,
                                        "list item of an unsupported clause"));
      break;
    }
    case llvm::omp::OMPC_to:
    case llvm::omp::OMPC_from: {
      bool To = C->getClauseKind() == llvm::omp::OMPC_to;
      std::optional<bool> Present =
          To ? motionPresent(cast<OMPToClause>(C))
             : motionPresent(cast<OMPFromClause>(C));
      auto List = To ? cast<OMPToClause>(C)->varlists()
                     : cast<OMPFromClause>(C)->varlists();
      for (const Expr *Item : List)
        Items.push_back(Present ? dataItem(Item, To ? "to" : "from", *Present)
                                : dataItem(Item, To ? "to" : "from", false,
                                           "list item of an unsupported clause"));
      break;
    }
    // A standalone directive may always run undeferred: the runtime executes it
    // synchronously, which satisfies `nowait`; with `depend`, the rewrite first
    // waits for the encountering task's child tasks (the siblings it may depend
    // on).
    case llvm::omp::OMPC_nowait:
    case llvm::omp::OMPC_depend:
      break;
    // `if(c)`: c is evaluated at the directive and passed to the runtime, which
    // maps (moves) nothing when it is false, as OpenMP's host device would.
    case llvm::omp::OMPC_if:
      if (std::optional<std::string> Name =
              hoist(cast<OMPIfClause>(C)->getCondition()))
        Condition = *Name;
      else
        unsupportedClause(C);
      break;
    // `device(n)`: n is evaluated at the directive; the runtime executes the
    // directive on OpenMP's host device (moving nothing) when n is not
    // Tessera's device.
    case llvm::omp::OMPC_device: {
      const auto *DC = cast<OMPDeviceClause>(C);
      if (DC->getModifier() == OMPC_DEVICE_ancestor)
        unsupportedClause(C, "device(ancestor: ...)");
      else if (std::optional<std::string> Name = hoist(DC->getDevice()))
        Device = *Name;
      else
        unsupportedClause(C);
      break;
    }
    // use_device_ptr / use_device_addr (host code would see device addresses), …
    default:
      unsupportedClause(C);
      break;
    }
  }
  tessera::ExtractedRegion R;
  json::Array VarsJ = varsJson(R);
  R.IR = json::Object{
      {"version", 1},
      {"location", loc(D.getBeginLoc())},
      {"function", Function.str()},
      {"index", Index},
      {"directive", llvm::omp::getOpenMPDirectiveName(D.getDirectiveKind())},
      {"unsupported_clauses", std::move(UnsupportedClauses)},
      {"vars", std::move(VarsJ)},
      {"items", std::move(Items)},
      {"condition", Condition.empty() ? json::Value(nullptr)
                                      : json::Value(Condition)},
      {"device", Device.empty() ? json::Value(nullptr) : json::Value(Device)}};
  return R;
}

} // namespace

tessera::ExtractedRegion tessera::extractDataDirective(
    ASTContext &Ctx, const OMPExecutableDirective &D, llvm::StringRef Function,
    unsigned Index) {
  return RegionExtractor(Ctx).runData(D, Function, Index);
}

std::string tessera::absoluteSourcePath(const SourceManager &SM,
                                       llvm::StringRef File) {
  llvm::SmallString<256> Path(File);
  SM.getFileManager().makeAbsolutePath(Path);
  llvm::sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  return std::string(Path);
}

tessera::ExtractedRegion tessera::extractRegion(ASTContext &Ctx,
                                                const OMPExecutableDirective &D,
                                                llvm::StringRef Function,
                                                unsigned Index) {
  return RegionExtractor(Ctx).run(D, Function, Index);
}
