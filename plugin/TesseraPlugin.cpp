//===- TesseraPlugin.cpp - Tessera clang plugin: action and rewrite -----===//
//
// Part of Tessera. The clang-19 plugin `tessera` (load with
// `-fplugin=tessera_plugin.so`, options `-fplugin-arg-tessera-<key>=<value>`).
//
// For every OpenMP target execution directive of the translation unit it
//  1. extracts the region IR (Extract.cpp),
//  2. hands it to the Rust pipeline (`tessera::process_region`, a cxx bridge
//     linked in-process), which decides whether to offload and generates the
//     kernel files,
//  3. writes those files into the kernel directory and reports the decision
//     (remark when a region stays on the host); at the end of the translation
//     unit it removes the unit's kernel files that an earlier compilation wrote
//     and this one did not (stale kernels, removeStaleKernelFiles),
//  4. rewrites the directive into
//        if (!__tessera_offload("<manifest>", nargs, &v0, &v1, …)) {
//          <directive>
//          [if (__tessera_host_pending("<manifest>")) { #pragma omp taskwait }]
//          __tessera_host_end("<manifest>");
//        }
//     so that the original OpenMP code remains the host fallback. The host-end
//     call copies data the fallback wrote back to the device when the region
//     runs inside a data region; the taskwait (only for `nowait` regions) lets
//     the deferred host task finish first. A directive with `depend` (target
//     or standalone data directive) is preceded by `#pragma omp taskwait`: it
//     runs undeferred, after every sibling task it may depend on (dependWait).
//
// Data directives (`target data`, `target enter data`, `target exit data`,
// `target update`) are extracted too (extractDataDirective), validated by Rust
// (`tessera::process_data`) and rewritten into
//        { void *__tessera_data_<k> = __tessera_data_begin("<desc>", n, &v…);
//          <target data directive>
//          __tessera_data_end(__tessera_data_<k>); }
//        if (!__tessera_data("<desc>", n, &v…)) { <standalone directive> }
// Clang already rejects `break`, `return` and `goto` out of a `target data`
// body (it is a captured region), so the end call cannot be skipped.
//
// A directive whose variables cannot be passed to the runtime (opaque) becomes
//        { __tessera_opaque("<manifest>"); <directive> [taskwait]
//          __tessera_host_end("<manifest>"); }
// for a region (its host run gets the device data of every mapping around it),
// and a descriptor that does not map for a data directive.
//
// The AST is mutated in HandleTopLevelDecl, before CodeGen sees the function
// (see docs/toolchain.md §2 for why, and for the pitfalls handled here).
//
//===----------------------------------------------------------------------===//

#include "Extract.h"
#include "Pragma.h"

#include "tessera-bridge/src/lib.rs.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtOpenMP.h"
#include "clang/Basic/OpenMPKinds.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace clang;

namespace {

/// Runtime entry points the rewritten code calls (runtime/include/tessera_rt.h).
constexpr llvm::StringLiteral OffloadFnName = "__tessera_offload";
constexpr llvm::StringLiteral HostPendingFnName = "__tessera_host_pending";
constexpr llvm::StringLiteral HostEndFnName = "__tessera_host_end";
constexpr llvm::StringLiteral OpaqueFnName = "__tessera_opaque";
constexpr llvm::StringLiteral DataFnName = "__tessera_data";
constexpr llvm::StringLiteral DataBeginFnName = "__tessera_data_begin";
constexpr llvm::StringLiteral DataEndFnName = "__tessera_data_end";

/// The plugin's command-line options.
struct PluginOptions {
  /// All arguments as given (`key=value` or `key`); passed on to Rust, which
  /// validates them.
  std::vector<std::string> Args;
  /// `out-dir=`: where kernel files go (empty: default, see defaultOutDir()).
  std::string OutDir;
  /// `dump-ir=`: where to write each region's raw IR JSON (empty: nowhere).
  std::string DumpDir;
  /// `verbose`: also remark on offloaded regions.
  bool Verbose = false;
};

std::string toStd(const rust::String &S) {
  return std::string(S.data(), S.size());
}

/// The kernel directory when `out-dir` is not given: `<output>.tessera`, or
/// `./<main file>.tessera` when the output is stdout, absent (-fsyntax-only)
/// or a temporary file (the driver compiling and linking in one step). Empty
/// (write no files; the kernels are embedded in the object anyway) when the
/// output is a device such as /dev/null.
std::string defaultOutDir(const CompilerInstance &CI, llvm::StringRef InFile) {
  llvm::StringRef Out = CI.getFrontendOpts().OutputFile;
  if (Out.starts_with("/dev/"))
    return "";
  bool UseCwd = Out.empty() || Out == "-";
  if (!UseCwd) {
    llvm::SmallString<256> Tmp, Abs(Out);
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, Tmp);
    llvm::sys::fs::make_absolute(Abs);
    llvm::sys::path::remove_dots(Abs, /*remove_dot_dot=*/true);
    llvm::sys::path::remove_dots(Tmp, /*remove_dot_dot=*/true);
    llvm::StringRef Parent = llvm::sys::path::parent_path(Abs);
    // The driver's temporaries sit directly in the temp dir; a project that
    // merely lives below /tmp keeps its kernels next to its objects.
    UseCwd = Parent == Tmp;
  }
  if (UseCwd)
    return ("./" + llvm::sys::path::filename(InFile) + ".tessera").str();
  return (Out + ".tessera").str();
}

/// Writes \p Contents to \p Dir/\p Name (creating \p Dir, replacing the file).
/// Returns an error message, empty on success.
std::string writeFile(llvm::StringRef Dir, llvm::StringRef Name,
                      llvm::StringRef Contents) {
  if (std::error_code EC = llvm::sys::fs::create_directories(Dir))
    return ("cannot create directory '" + Dir + "': " + EC.message()).str();
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, Name);
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return ("cannot write '" + Path + "': " + EC.message()).str();
  OS << Contents;
  OS.close();
  if (OS.has_error())
    return ("cannot write '" + Path + "': " + OS.error().message()).str();
  return {};
}

/// Removes from \p Dir the kernel files of the regions of source file \p Source
/// (absolute, as the region IR's `source`) that are not in \p Written: what an
/// earlier compilation of the translation unit wrote for regions it no longer
/// has, or that have changed since (stale kernels). Only names the Rust side
/// recognises as such (`tessera::is_kernel_file_of`: the kernel-name prefix of
/// \p Source with its path hash, a region's line, index and IR hash, one of the
/// suffixes the pipeline writes) are touched, so other translation units'
/// kernels, bitstreams and the user's files in \p Dir stay. Returns one message
/// per file that could not be removed.
std::vector<std::string>
removeStaleKernelFiles(llvm::StringRef Dir, std::string Source,
                       const llvm::StringSet<> &Written) {
  // The region IR went through llvm::json, which repairs invalid UTF-8 the same
  // way; rust::Str needs valid UTF-8.
  if (!llvm::json::isUTF8(Source))
    Source = llvm::json::fixUTF8(Source);
  std::vector<std::string> Stale, Errors;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC)) {
    std::string Name = llvm::sys::path::filename(It->path()).str();
    // Kernel file names are ASCII (and so valid UTF-8 for the bridge).
    if (Written.contains(Name) ||
        !llvm::all_of(Name,
                      [](char C) { return static_cast<unsigned char>(C) < 0x80; }) ||
        !tessera::is_kernel_file_of(rust::Str(Source.data(), Source.size()),
                                    rust::Str(Name.data(), Name.size())))
      continue;
    Stale.push_back(It->path());
  }
  for (const std::string &Path : Stale)
    if (std::error_code RE = llvm::sys::fs::remove(Path))
      Errors.push_back("cannot remove stale kernel file '" + Path +
                       "': " + RE.message());
  return Errors;
}

/// Name of the function that contains \p DC for the IR (`ns::f`, `f<float>`;
/// a lambda inside `f` is `f::lambda`).
std::string enclosingFunctionName(const DeclContext *DC,
                                   const PrintingPolicy &Policy) {
  std::string Suffix;
  while (DC) {
    if (isa<CapturedDecl>(DC) || isa<BlockDecl>(DC)) {
      DC = DC->getParent();
      continue;
    }
    if (const auto *MD = dyn_cast<CXXMethodDecl>(DC);
        MD && isLambdaCallOperator(MD)) {
      Suffix = "::lambda" + Suffix;
      DC = MD->getParent()->getParent();
      continue;
    }
    if (const auto *FD = dyn_cast<FunctionDecl>(DC)) {
      std::string Name;
      llvm::raw_string_ostream OS(Name);
      FD->getNameForDiagnostic(OS, Policy, /*Qualified=*/true);
      return OS.str() + Suffix;
    }
    break;
  }
  return Suffix.empty() ? std::string("<global>") : Suffix.substr(2);
}

/// Whether \p DC is (in) the call operator of a lambda.
bool inLambda(const DeclContext *DC) {
  for (; DC; DC = DC->getParent()) {
    if (const auto *MD = dyn_cast<CXXMethodDecl>(DC);
        MD && isLambdaCallOperator(MD))
      return true;
    if (isa<FunctionDecl>(DC))
      return false;
  }
  return false;
}

/// How to name each of \p Vars in a DeclRefExpr placed where directive \p D
/// is: the `refersToEnclosingVariableOrCapture` flag, cloned from the capture
/// inits of the outermost captured region \p Outer and from the clause
/// expressions (both live in the directive's context \p Context). A wrong flag
/// silently yields a wrong address inside lambdas (docs/toolchain.md §2, pitfall 6).
/// Returns the first variable that cannot be named there (a local of an
/// enclosing function or region that the directive does not capture), or null.
const VarDecl *referenceFlags(const OMPExecutableDirective &D,
                              const CapturedStmt &Outer,
                              const DeclContext *Context,
                              llvm::ArrayRef<const VarDecl *> Vars,
                              llvm::DenseMap<const VarDecl *, bool> &Flags) {
  auto Record = [&](const Expr *E) {
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E->IgnoreImplicit()))
      if (const auto *VD = dyn_cast<VarDecl>(DRE->getDecl()))
        Flags.try_emplace(VD, DRE->refersToEnclosingVariableOrCapture());
  };
  for (const Expr *Init : Outer.capture_inits())
    if (Init)
      Record(Init);
  std::function<void(const Stmt *)> Walk = [&](const Stmt *S) {
    if (!S)
      return;
    if (const auto *E = dyn_cast<Expr>(S))
      Record(E);
    for (const Stmt *Child : S->children())
      Walk(Child);
  };
  for (const OMPClause *C : D.clauses())
    if (C && !C->isImplicit())
      for (const Stmt *Child : C->children())
        Walk(Child);
  for (const VarDecl *VD : Vars) {
    if (!VD || Flags.count(VD))
      continue;
    // Globals and statics, and locals of the directive's own function when no
    // captured region lies in between, are named without the flag.
    if (!VD->hasLocalStorage() || VD->getDeclContext() == Context)
      Flags[VD] = false;
    else
      return VD;
  }
  return nullptr;
}

/// Finds the target and data directives of a declaration, in source order,
/// together with the slot that holds each one, so that it can be replaced later.
/// Slots are the `Stmt *&` that `children()` yields; a directive that is the
/// whole body of a CapturedStmt (`#pragma omp parallel` directly followed by
/// `#pragma omp target`) sits in the CapturedStmt and in its CapturedDecl.
class RegionFinder : public RecursiveASTVisitor<RegionFinder> {
public:
  struct Site {
    OMPExecutableDirective *Directive;
    Stmt **Slot;
    CapturedStmt *Captured; ///< Non-null when Slot is a CapturedStmt's body.
  };
  /// Target directives in the order encountered, with their slots.
  std::vector<Site> Sites;
  /// The captured bodies of the `target data` directives found.
  llvm::DenseSet<const DeclContext *> DataBodies;

  // Template patterns are skipped: each instantiation reaches
  // HandleTopLevelDecl on its own, and rewriting the pattern would make every
  // instantiation inherit the rewrite (and be rewritten again).
  bool TraverseDecl(Decl *D) {
    if (const auto *DC = dyn_cast_or_null<DeclContext>(D);
        DC && DC->isDependentContext())
      return true;
    return RecursiveASTVisitor::TraverseDecl(D);
  }

  // Parents are visited before children: remember where each directive sits.
  bool VisitStmt(Stmt *S) {
    if (auto *CS = dyn_cast<CapturedStmt>(S)) {
      // children() of a CapturedStmt are only its capture inits; the body is
      // stored right after them (layout [inits…][captured stmt]), and
      // setCapturedStmt is private.
      auto **Slot = reinterpret_cast<Stmt **>(CS->capture_init_end());
      if (OMPExecutableDirective *D = asTarget(CS->getCapturedStmt()))
        if (*Slot == D)
          Slots[D] = {D, Slot, CS};
      return true;
    }
    for (Stmt *&Child : S->children())
      if (OMPExecutableDirective *D = asTarget(Child))
        Slots[D] = {D, &Child, nullptr};
    return true;
  }

  bool VisitOMPExecutableDirective(OMPExecutableDirective *D) {
    if (D->getDirectiveKind() == llvm::omp::OMPD_target_data &&
        D->hasAssociatedStmt())
      if (auto *CS = dyn_cast<CapturedStmt>(D->getAssociatedStmt()))
        DataBodies.insert(CS->getCapturedDecl());
    if (asTarget(D)) {
      auto It = Slots.find(D);
      if (It != Slots.end())
        Sites.push_back(It->second);
    }
    return true;
  }

private:
  llvm::DenseMap<const Stmt *, Site> Slots;

  static OMPExecutableDirective *asTarget(Stmt *S) {
    auto *D = dyn_cast_or_null<OMPExecutableDirective>(S);
    if (D && (isOpenMPTargetExecutionDirective(D->getDirectiveKind()) ||
              isOpenMPTargetDataManagementDirective(D->getDirectiveKind())))
      return D;
    return nullptr;
  }
};

/// Does the work per top-level declaration.
class TesseraConsumer : public ASTConsumer {
public:
  TesseraConsumer(CompilerInstance &CI, PluginOptions Opts, std::string OutDir,
                  std::string MainStem)
      : CI(CI), Ctx(CI.getASTContext()), Opts(std::move(Opts)),
        OutDir(std::move(OutDir)), MainStem(std::move(MainStem)) {
    DiagnosticsEngine &DE = CI.getDiagnostics();
    ErrorID = DE.getCustomDiagID(DiagnosticsEngine::Error, "%0");
    RemarkID = DE.getCustomDiagID(DiagnosticsEngine::Remark, "%0");
    WarningID = DE.getCustomDiagID(DiagnosticsEngine::Warning, "%0");
    for (const std::string &A : this->Opts.Args)
      RustArgs.emplace_back(A);
  }

  bool HandleTopLevelDecl(DeclGroupRef DG) override {
    // After an error the AST may contain recovery nodes; CodeGen will not run.
    if (CI.getDiagnostics().hasErrorOccurred())
      return true;
    RegionFinder Finder;
    for (Decl *D : DG)
      Finder.TraverseDecl(D);
    DataBodies.insert(Finder.DataBodies.begin(), Finder.DataBodies.end());
    // Indices follow the source order (kernel names depend on them); directives
    // are processed innermost first, so that a `target data` construct knows
    // whether a directive inside it could not be rewritten (see Poisoned).
    std::vector<std::pair<RegionFinder::Site, unsigned>> Todo;
    for (const RegionFinder::Site &Site : Finder.Sites) {
      if (!Done.insert(Site.Directive).second)
        continue;
      bool Data = isOpenMPTargetDataManagementDirective(
          Site.Directive->getDirectiveKind());
      Todo.push_back({Site, Data ? NextDataIndex++ : NextIndex++});
    }
    for (auto It = Todo.rbegin(); It != Todo.rend(); ++It) {
      const RegionFinder::Site &Site = It->first;
      if (Stmt *New = process(Site.Directive, It->second)) {
        *Site.Slot = New;
        if (Site.Captured)
          Site.Captured->getCapturedDecl()->setBody(New);
      }
    }
    flushRemarks();
    return true;
  }

  void HandleTranslationUnit(ASTContext &) override {
    if (CI.getDiagnostics().hasErrorOccurred())
      return;
    for (SourceLocation L : tessera::unusedTilePragmas())
      CI.getDiagnostics().Report(L, WarningID)
          << "'#pragma tessera tile' is not on the line directly before a "
             "'#pragma omp target' directive; it has no effect";
    // The kernel directory keeps only this compilation's kernels of the
    // translation unit's file (kernels of regions in headers are named after
    // the header, and other translation units may share them: never removed).
    if (!OutDir.empty()) {
      SourceManager &SM = Ctx.getSourceManager();
      PresumedLoc P =
          SM.getPresumedLoc(SM.getLocForStartOfFile(SM.getMainFileID()));
      if (P.isValid())
        for (const std::string &E : removeStaleKernelFiles(
                 OutDir, tessera::absoluteSourcePath(SM, P.getFilename()),
                 Written))
          CI.getDiagnostics().Report(WarningID) << ("tessera: " + E);
    }
  }

  /// Processes the target or data directive \p D (the \p Index-th region or
  /// data directive of the translation unit); returns the statement to put in
  /// its place, or null to leave it alone.
  Stmt *process(OMPExecutableDirective *D, unsigned Index);

private:
  CompilerInstance &CI;
  ASTContext &Ctx;
  PluginOptions Opts;
  std::vector<rust::String> RustArgs;
  std::string OutDir;
  std::string MainStem;
  unsigned ErrorID, RemarkID, WarningID;
  /// Next region index of the translation unit.
  unsigned NextIndex = 0;
  /// Next data directive index of the translation unit (a counter of its own, so
  /// that kernel names do not depend on data directives).
  unsigned NextDataIndex = 0;
  /// Directives already processed (a declaration can be traversed twice, e.g.
  /// an inline method both inside its class and on its own).
  llvm::DenseSet<const Stmt *> Done;
  /// Errors already reported (an option error would repeat for every region).
  llvm::StringSet<> Reported;
  /// Kernel files written into OutDir by this compilation (the others of the
  /// translation unit are stale: see removeStaleKernelFiles).
  llvm::StringSet<> Written;
  /// The captured bodies of every `target data` directive seen so far.
  llvm::DenseSet<const DeclContext *> DataBodies;
  /// `target data` bodies that contain a directive the plugin could not rewrite
  /// with its arguments, and why: such a construct does not map (its descriptor
  /// is rejected), so that the data stays in host memory, where the directive
  /// inside runs (the invariant: never half the runtime, half the host).
  llvm::DenseMap<const DeclContext *, std::string> Poisoned;
  /// Runtime functions declared so far, by name.
  llvm::StringMap<FunctionDecl *> RuntimeFns;
  /// Next number for the plugin's temporaries (unique in the translation unit).
  unsigned NextTemp = 0;

  void error(SourceLocation L, llvm::StringRef Msg) {
    if (Reported.insert(Msg).second)
      CI.getDiagnostics().Report(L, ErrorID) << Msg;
  }
  /// Remarks wait in Pending until the declaration is done (directives are
  /// processed innermost first; remarks come out in source order).
  void remark(SourceLocation L, llvm::StringRef Msg) {
    Pending.push_back({L, Msg.str()});
  }
  std::vector<std::pair<SourceLocation, std::string>> Pending;
  void flushRemarks() {
    SourceManager &SM = Ctx.getSourceManager();
    std::stable_sort(Pending.begin(), Pending.end(),
                     [&](const auto &A, const auto &B) {
                       return SM.isBeforeInTranslationUnit(A.first, B.first);
                     });
    for (const auto &[L, Msg] : Pending)
      CI.getDiagnostics().Report(L, RemarkID) << Msg;
    Pending.clear();
  }
  /// The IR as compact JSON for the Rust side; with `dump-ir`, also written
  /// (indented) as `<main file stem>.<Index>.<Suffix>` into the dump directory.
  std::string serialize(const llvm::json::Value &IR, llvm::StringRef Suffix,
                        unsigned Index, SourceLocation L) {
    std::string Json;
    {
      llvm::raw_string_ostream OS(Json);
      OS << IR;
    }
    if (!Opts.DumpDir.empty()) {
      std::string Name =
          llvm::formatv("{0}.{1}.{2}", MainStem, Index, Suffix);
      std::string Err =
          writeFile(Opts.DumpDir, Name, llvm::formatv("{0:2}\n", IR).str());
      if (!Err.empty())
        error(L, "tessera: " + Err);
    }
    return Json;
  }
  SourceLocation remarkLoc(llvm::StringRef File, unsigned Line, unsigned Col,
                           SourceLocation Fallback);
  Stmt *processData(OMPExecutableDirective *D, const CapturedStmt &Outer,
                    const DeclContext *Context, unsigned Index);
  Stmt *opaque(OMPExecutableDirective *D, const DeclContext *Context,
               llvm::StringRef IRJson, llvm::StringRef Reason);
  void hostEnd(OMPExecutableDirective *D, llvm::StringRef Manifest,
               llvm::SmallVectorImpl<Stmt *> &Out);
  static bool hostRunStandsForDevice(llvm::StringRef Manifest);
  void poison(const DeclContext *Context, llvm::StringRef Why);
  Expr *vlaExtent(const VarDecl *VD, llvm::ArrayRef<const VarDecl *> Vars,
                  SourceLocation L);
  const VarDecl *resolveArgs(const OMPExecutableDirective &D,
                             const CapturedStmt &Outer,
                             const DeclContext *Context,
                             tessera::ExtractedRegion &R,
                             llvm::DenseMap<const VarDecl *, bool> &Flags);
  Stmt *temporary(Expr *Init, const DeclContext *Context,
                  llvm::DenseMap<const VarDecl *, bool> &Flags,
                  std::vector<const VarDecl *> &Args, SourceLocation L);
  llvm::SmallVector<Stmt *, 4>
  temporaries(const tessera::ExtractedRegion &R, const DeclContext *Context,
              llvm::DenseMap<const VarDecl *, bool> &Flags,
              std::vector<const VarDecl *> &Args, SourceLocation L);
  bool insideDataBodyOfLambda(const DeclContext *DC) const;
  FunctionDecl *runtimeDecl(llvm::StringRef Name, QualType Ret,
                            llvm::ArrayRef<std::pair<llvm::StringRef, QualType>>
                                Params,
                            bool Variadic, SourceLocation L);
  Expr *call(llvm::StringRef Name, QualType Ret,
             llvm::ArrayRef<std::pair<llvm::StringRef, QualType>> Params,
             bool Variadic, llvm::ArrayRef<Expr *> Args, SourceLocation L);
  Expr *stringArg(llvm::StringRef Text, SourceLocation L);
  llvm::SmallVector<Expr *, 8>
  runtimeArgs(llvm::StringRef Text, llvm::ArrayRef<const VarDecl *> Vars,
              const llvm::DenseMap<const VarDecl *, bool> &RefFlags,
              SourceLocation L);
  Expr *notCall(Expr *Call, SourceLocation L);
  Stmt *rewrite(OMPExecutableDirective *D, llvm::StringRef Manifest,
                llvm::ArrayRef<const VarDecl *> Vars,
                const llvm::DenseMap<const VarDecl *, bool> &RefFlags,
                llvm::ArrayRef<Stmt *> Before = {});
  Stmt *dependWait(const OMPExecutableDirective *D);
  Expr *rebuildAtDirective(const Expr *E, const DeclContext *Context,
                           llvm::DenseMap<const VarDecl *, bool> &Flags,
                           const VarDecl *&Unnamed, SourceLocation L);
  Expr *guardArrows(Expr *E, SourceLocation L);
  Expr *memberAddress(Expr *E, SourceLocation L);
  Expr *arrowsNonNull(Expr *E, SourceLocation L);
  Stmt *rewriteData(OMPExecutableDirective *D, const DeclContext *Context,
                    llvm::StringRef Desc, llvm::ArrayRef<const VarDecl *> Vars,
                    const llvm::DenseMap<const VarDecl *, bool> &RefFlags,
                    llvm::ArrayRef<Stmt *> Before = {});
};

Stmt *TesseraConsumer::process(OMPExecutableDirective *D, unsigned Index) {
  // The outermost captured region: its capture inits are expressions in the
  // directive's own context. Clang gives every target and data directive one;
  // without it the directive could not go through the runtime, which must not
  // happen silently (the invariant: every directive or none).
  auto *Outer = D->hasAssociatedStmt()
                    ? dyn_cast<CapturedStmt>(D->getAssociatedStmt())
                    : nullptr;
  if (!Outer) {
    error(D->getBeginLoc(),
          "tessera: internal error: this directive has no captured statement, "
          "so it cannot be rewritten into a runtime call");
    return nullptr;
  }
  const DeclContext *Context = Outer->getCapturedDecl()->getParent();
  if (Context->isDependentContext())
    return nullptr;
  if (isOpenMPTargetDataManagementDirective(D->getDirectiveKind()))
    return processData(D, *Outer, Context, Index);

  SourceLocation L = D->getBeginLoc();
  std::string Function =
      enclosingFunctionName(Context, Ctx.getPrintingPolicy());
  tessera::ExtractedRegion R = tessera::extractRegion(Ctx, *D, Function, Index);
  llvm::json::Value Tile = tessera::tilePragmaFor(Ctx.getSourceManager(), L);
  if (Tile.kind() != llvm::json::Value::Null)
    R.IR.getAsObject()->insert({"tile", std::move(Tile)});
  std::string Json = serialize(R.IR, "ir.json", Index, L);

  if (insideDataBodyOfLambda(Context))
    // Clang 19 cannot name a lambda's captures inside the (inlined) body of a
    // `target data` construct in that lambda: it crashes or silently uses wrong
    // addresses, for its own code as for a runtime call.
    return opaque(D, Context, Json,
                  "it is inside a 'target data' construct in a lambda, where "
                  "clang 19 cannot reach the lambda's captures; move the "
                  "construct out of the lambda");
  llvm::DenseMap<const VarDecl *, bool> RefFlags;
  if (const VarDecl *Unreachable = resolveArgs(*D, *Outer, Context, R, RefFlags))
    return opaque(D, Context, Json,
                  ("Tessera cannot pass '" + Unreachable->getName() +
                   "' to its runtime from this context; name it in the "
                   "region or in a map clause")
                      .str());
  if (!R.UnknownFootprint.empty())
    return opaque(D, Context, Json, R.UnknownFootprint);

  tessera::RegionDecision Dec = tessera::process_region(
      rust::Str(Json.data(), Json.size()),
      rust::Slice<const rust::String>(RustArgs.data(), RustArgs.size()));
  if (!Dec.error.empty()) {
    std::string Msg = toStd(Dec.error);
    error(L, llvm::StringRef(Msg).starts_with("tessera") ? Msg
                                                         : "tessera: " + Msg);
    return nullptr;
  }

  // No kernel directory (output to a device such as /dev/null): write nothing.
  for (const tessera::OutputFile &F : Dec.files) {
    if (OutDir.empty())
      break;
    std::string Name = toStd(F.name);
    if (Name.empty() || Name == "." || Name == ".." ||
        Name.find_first_of("/\\") != std::string::npos) {
      error(L, "tessera: internal error: bad kernel file name '" + Name + "'");
      return nullptr;
    }
    std::string Err = writeFile(
        OutDir, Name, llvm::StringRef(F.contents.data(), F.contents.size()));
    if (!Err.empty()) {
      error(L, "tessera: " + Err);
      return nullptr;
    }
    Written.insert(Name);
  }

  for (const rust::String &W : Dec.warnings)
    CI.getDiagnostics().Report(L, WarningID) << ("tessera: " + toStd(W));
  if (!Dec.offload && !Dec.remark.empty())
    remark(remarkLoc(toStd(Dec.remark_file), Dec.remark_line, Dec.remark_col,
                     L),
           toStd(Dec.remark));
  else if (Dec.offload && !Dec.note.empty())
    remark(L, toStd(Dec.note));
  else if (Dec.offload && Opts.Verbose)
    remark(L, "target region offloaded as kernel '" + toStd(Dec.kernel) + "'");

  // Offloaded or not, the runtime hears about the region (it reports host
  // runs too).
  std::vector<const VarDecl *> Args;
  llvm::SmallVector<Stmt *, 4> Temps = temporaries(R, Context, RefFlags, Args, L);
  for (const Expr *Value : {R.IfCondition, R.DeviceNum}) {
    if (!Value)
      continue;
    // After the variables: `int __tessera_vN = (int)(<condition>)`, then the
    // device number likewise.
    Expr *Cond = const_cast<Expr *>(Value);
    if (Cond->isGLValue())
      Cond = ImplicitCastExpr::Create(Ctx, Cond->getType().getUnqualifiedType(),
                                      CK_LValueToRValue, Cond, nullptr,
                                      VK_PRValue, FPOptionsOverride());
    if (!Ctx.hasSameType(Cond->getType(), Ctx.IntTy))
      Cond = ImplicitCastExpr::Create(
          Ctx, Ctx.IntTy,
          Cond->getType()->isIntegerType() ? CK_IntegralCast
          : Cond->getType()->isPointerType() ? CK_PointerToIntegral
                                             : CK_FloatingToIntegral,
          Cond, nullptr, VK_PRValue, FPOptionsOverride());
    Temps.push_back(temporary(Cond, Context, RefFlags, Args, L));
  }
  return rewrite(D, toStd(Dec.manifest), Args, RefFlags, Temps);
}

/// Names every runtime argument of \p R at the directive: fills \p Flags (see
/// referenceFlags), and replaces a scalar that cannot be named there but is
/// the extent of a variable-length array type of another argument by the VLA's
/// size (R.Hoisted). Returns the first variable that still cannot be named.
const VarDecl *TesseraConsumer::resolveArgs(
    const OMPExecutableDirective &D, const CapturedStmt &Outer,
    const DeclContext *Context, tessera::ExtractedRegion &R,
    llvm::DenseMap<const VarDecl *, bool> &Flags) {
  while (const VarDecl *Unreachable =
             referenceFlags(D, Outer, Context, R.Vars, Flags)) {
    Expr *Value = vlaExtent(Unreachable, R.Vars, D.getBeginLoc());
    if (!Value)
      return Unreachable;
    for (size_t I = 0; I < R.Vars.size(); ++I)
      if (R.Vars[I] == Unreachable) {
        R.Vars[I] = nullptr;
        R.Hoisted[I] = Value;
      }
  }
  // Member accesses hoisted out of the body: rebuilt with the variable
  // references of the directive's context.
  for (size_t I = 0; I < R.Hoisted.size(); ++I) {
    if (I >= R.HoistedInside.size() || !R.HoistedInside[I])
      continue;
    const VarDecl *Unnamed = nullptr;
    Expr *Value = rebuildAtDirective(R.Hoisted[I], Context, Flags, Unnamed,
                                     D.getBeginLoc());
    if (!Value)
      return Unnamed;
    bool Member = I < R.HoistedMember.size() && R.HoistedMember[I];
    R.Hoisted[I] = Member ? memberAddress(Value, D.getBeginLoc())
                          : guardArrows(Value, D.getBeginLoc());
    R.HoistedInside[I] = false;
  }
  return nullptr;
}

/// `p && q` for the pointers dereferenced by the `->` links of the member chain
/// \p E (outermost first; `this` is never null), or null when there are none.
Expr *TesseraConsumer::arrowsNonNull(Expr *E, SourceLocation L) {
  llvm::SmallVector<Expr *, 4> Bases; // innermost chain link first
  for (Expr *Cur = E;;) {
    Cur = Cur->IgnoreParenImpCasts();
    auto *ME = dyn_cast<MemberExpr>(Cur);
    if (!ME)
      break;
    if (ME->isArrow() && !isa<CXXThisExpr>(ME->getBase()->IgnoreParenImpCasts()))
      Bases.push_back(ME->getBase());
    Cur = ME->getBase();
  }
  QualType CondTy = Ctx.getLangOpts().CPlusPlus ? Ctx.BoolTy : Ctx.IntTy;
  Expr *Cond = nullptr;
  for (Expr *B : llvm::reverse(Bases))
    Cond = Cond ? BinaryOperator::Create(Ctx, Cond, B, BO_LAnd, CondTy,
                                         VK_PRValue, OK_Ordinary, L,
                                         FPOptionsOverride())
                : B;
  return Cond;
}

/// The rebuilt member chain \p E (rebuildAtDirective) as a value that reads no
/// member through a null pointer: `g->u` becomes `g ? g->u : 0` (every `->` of
/// the chain tested, outermost first). The region's code may test the pointer
/// before it dereferences it, or never run an iteration that does, while the
/// value is read at the directive either way; a null member then is a pointer
/// the runtime finds no data for (or a zero scalar), and the region's own code
/// decides. \p E unchanged when the chain has no `->`.
Expr *TesseraConsumer::guardArrows(Expr *E, SourceLocation L) {
  Expr *Cond = arrowsNonNull(E, L);
  if (!Cond)
    return E;
  QualType T = E->getType().getUnqualifiedType();
  Expr *Value = E;
  if (Value->isGLValue())
    Value = ImplicitCastExpr::Create(Ctx, T, CK_LValueToRValue, Value, nullptr,
                                     VK_PRValue, FPOptionsOverride());
  Expr *Zero = IntegerLiteral::Create(Ctx, llvm::APInt(Ctx.getIntWidth(Ctx.IntTy), 0),
                                      Ctx.IntTy, L);
  CastKind K = T->isPointerType()    ? CK_NullToPointer
               : T->isBooleanType()  ? CK_IntegralToBoolean
               : T->isFloatingType() ? CK_IntegralToFloating
                                     : CK_IntegralCast;
  if (!Ctx.hasSameType(T, Ctx.IntTy))
    Zero = ImplicitCastExpr::Create(Ctx, T, K, Zero, nullptr, VK_PRValue,
                                    FPOptionsOverride());
  return new (Ctx) ConditionalOperator(Cond, L, Value, L, Zero, T, VK_PRValue,
                                       OK_Ordinary);
}

/// The address of the rebuilt member chain \p E (rebuildAtDirective), null when
/// it crosses a null pointer: `&c.n`, `g ? &g->n : 0` (every `->` of the chain
/// tested, outermost first, as guardArrows does for the value). The runtime reads
/// the member through it where the region sees it (tessera_ir Region::members).
Expr *TesseraConsumer::memberAddress(Expr *E, SourceLocation L) {
  QualType P = Ctx.getPointerType(E->getType());
  Expr *Addr = UnaryOperator::Create(Ctx, E, UO_AddrOf, P, VK_PRValue,
                                     OK_Ordinary, L, false, FPOptionsOverride());
  Expr *Cond = arrowsNonNull(E, L);
  if (!Cond)
    return Addr;
  Expr *Zero = IntegerLiteral::Create(Ctx, llvm::APInt(Ctx.getIntWidth(Ctx.IntTy), 0),
                                      Ctx.IntTy, L);
  Expr *Null = ImplicitCastExpr::Create(Ctx, P, CK_NullToPointer, Zero, nullptr,
                                        VK_PRValue, FPOptionsOverride());
  return new (Ctx) ConditionalOperator(Cond, L, Addr, L, Null, P, VK_PRValue,
                                       OK_Ordinary);
}

/// \p E — a chain of `.`/`->` member accesses from a variable, as it appears in
/// the region body — rebuilt to be evaluated right before the directive: its
/// variable reference gets the capture flag of the directive's context (\p
/// Flags, from the capture inits; false for globals and locals of \p Context).
/// Null when the variable cannot be named there (\p Unnamed says which).
Expr *TesseraConsumer::rebuildAtDirective(
    const Expr *E, const DeclContext *Context,
    llvm::DenseMap<const VarDecl *, bool> &Flags, const VarDecl *&Unnamed,
    SourceLocation L) {
  if (const auto *P = dyn_cast<ParenExpr>(E))
    return rebuildAtDirective(P->getSubExpr(), Context, Flags, Unnamed, L);
  if (const auto *IC = dyn_cast<ImplicitCastExpr>(E)) {
    Expr *Sub = rebuildAtDirective(IC->getSubExpr(), Context, Flags, Unnamed, L);
    if (!Sub)
      return nullptr;
    return ImplicitCastExpr::Create(Ctx, IC->getType(), IC->getCastKind(), Sub,
                                    nullptr, IC->getValueKind(),
                                    FPOptionsOverride());
  }
  if (const auto *ME = dyn_cast<MemberExpr>(E)) {
    Expr *Base = rebuildAtDirective(ME->getBase(), Context, Flags, Unnamed, L);
    if (!Base)
      return nullptr;
    return MemberExpr::CreateImplicit(Ctx, Base, ME->isArrow(),
                                      ME->getMemberDecl(), ME->getType(),
                                      ME->getValueKind(), ME->getObjectKind());
  }
  // `this` of a member function (also in a lambda there, which then captures
  // it, as the region does).
  if (const auto *TE = dyn_cast<CXXThisExpr>(E))
    return CXXThisExpr::Create(Ctx, L, TE->getType(), /*IsImplicit=*/true);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(E)) {
    const auto *VD = dyn_cast<VarDecl>(DRE->getDecl());
    if (!VD)
      return nullptr;
    auto It = Flags.find(VD);
    if (It == Flags.end()) {
      if (!VD->hasLocalStorage() || VD->getDeclContext() == Context)
        It = Flags.try_emplace(VD, false).first;
      else {
        Unnamed = VD;
        return nullptr;
      }
    }
    QualType T = VD->getType().getNonReferenceType();
    return DeclRefExpr::Create(Ctx, NestedNameSpecifierLoc(), SourceLocation(),
                               const_cast<VarDecl *>(VD), It->second, L, T,
                               VK_LValue);
  }
  return nullptr;
}

/// For a scalar \p VD that is the size expression of a variable-length array
/// dimension in the type of one of \p Vars (`double (*A)[m]` where the region
/// names A but not m), `(T)(sizeof(double[m]) / sizeof(double))`: CodeGen takes
/// a VLA's size from the value captured with the array, wherever the array is
/// reachable, so the extent is available where `m` itself is not. Null when no
/// such dimension exists.
Expr *TesseraConsumer::vlaExtent(const VarDecl *VD,
                                 llvm::ArrayRef<const VarDecl *> Vars,
                                 SourceLocation L) {
  if (!VD->getType()->isIntegerType())
    return nullptr;
  for (const VarDecl *V : Vars) {
    if (!V)
      continue;
    QualType T = V->getType().getNonReferenceType();
    if (T->isPointerType())
      T = T->getPointeeType();
    while (const ArrayType *AT = Ctx.getAsArrayType(T)) {
      if (const auto *VAT = dyn_cast<VariableArrayType>(AT))
        if (const Expr *Size = VAT->getSizeExpr())
          if (const auto *DRE =
                  dyn_cast<DeclRefExpr>(Size->IgnoreParenImpCasts());
              DRE && DRE->getDecl() == VD) {
            QualType SizeT = Ctx.getSizeType();
            auto *Whole = new (Ctx) UnaryExprOrTypeTraitExpr(
                UETT_SizeOf, Ctx.getTrivialTypeSourceInfo(QualType(VAT, 0)),
                SizeT, L, L);
            auto *Elem = new (Ctx) UnaryExprOrTypeTraitExpr(
                UETT_SizeOf,
                Ctx.getTrivialTypeSourceInfo(VAT->getElementType()), SizeT,
                L, L);
            Expr *Div = BinaryOperator::Create(Ctx, Whole, Elem, BO_Div, SizeT,
                                               VK_PRValue, OK_Ordinary, L,
                                               FPOptionsOverride());
            return ImplicitCastExpr::Create(
                Ctx, VD->getType().getUnqualifiedType(), CK_IntegralCast, Div,
                nullptr, VK_PRValue, FPOptionsOverride());
          }
      T = AT->getElementType();
    }
  }
  return nullptr;
}

/// The declarations of the temporaries that hold \p R's hoisted values
/// (evaluated right before the runtime call), and in \p Args the variables
/// whose addresses the call passes, temporaries included.
llvm::SmallVector<Stmt *, 4> TesseraConsumer::temporaries(
    const tessera::ExtractedRegion &R, const DeclContext *Context,
    llvm::DenseMap<const VarDecl *, bool> &Flags,
    std::vector<const VarDecl *> &Args, SourceLocation L) {
  llvm::SmallVector<Stmt *, 4> Decls;
  for (size_t I = 0; I < R.Vars.size(); ++I) {
    if (R.Vars[I]) {
      Args.push_back(R.Vars[I]);
      continue;
    }
    Expr *Init = const_cast<Expr *>(R.Hoisted[I]);
    if (Init->isGLValue())
      Init = ImplicitCastExpr::Create(Ctx, Init->getType().getUnqualifiedType(),
                                      CK_LValueToRValue, Init, nullptr,
                                      VK_PRValue, FPOptionsOverride());
    Decls.push_back(temporary(Init, Context, Flags, Args, L));
  }
  return Decls;
}

/// `<T> __tessera_vN = Init;` in \p Context (T: Init's type), appended to
/// \p Args; returns the declaration statement.
Stmt *TesseraConsumer::temporary(Expr *Init, const DeclContext *Context,
                                 llvm::DenseMap<const VarDecl *, bool> &Flags,
                                 std::vector<const VarDecl *> &Args,
                                 SourceLocation L) {
  auto *DC = const_cast<DeclContext *>(Context);
  QualType T = Init->getType().getUnqualifiedType();
  std::string Name = llvm::formatv("__tessera_v{0}", NextTemp++);
  auto *Tmp = VarDecl::Create(Ctx, DC, L, L, &Ctx.Idents.get(Name), T,
                              Ctx.getTrivialTypeSourceInfo(T), SC_None);
  Tmp->setInit(Init);
  Tmp->setImplicit();
  Tmp->setReferenced();
  Tmp->markUsed(Ctx);
  DC->addDecl(Tmp);
  Flags[Tmp] = false;
  Args.push_back(Tmp);
  return new (Ctx) DeclStmt(DeclGroupRef(Tmp), L, L);
}

/// Whether the host run of a region whose variables cannot be passed (its
/// manifest \p Manifest) stands for a device run once the runtime has put the
/// device data of every mapping around it: not with an `if` or `device` clause
/// (which may send it to the host device, on host data) or an `always` map (a
/// copy the runtime cannot make without the variables). The manifest's flags are
/// what the runtime decides by (tessera_ir::manifest::Manifest::opaque_limit), so
/// the two cannot disagree.
bool TesseraConsumer::hostRunStandsForDevice(llvm::StringRef Manifest) {
  llvm::Expected<llvm::json::Value> V = llvm::json::parse(Manifest);
  if (!V) {
    llvm::consumeError(V.takeError());
    return false;
  }
  const llvm::json::Object *O = V->getAsObject();
  if (!O)
    return false;
  for (llvm::StringRef Key : {"if_clause", "device_clause", "always_maps"})
    if (O->getBoolean(Key).value_or(false))
      return false;
  return true;
}

/// Marks every `target data` body around \p Context as poisoned by \p Why.
void TesseraConsumer::poison(const DeclContext *Context, llvm::StringRef Why) {
  for (const DeclContext *DC = Context; DC; DC = DC->getParent()) {
    if (DataBodies.contains(DC))
      Poisoned.try_emplace(DC, Why.str());
    if (isa<FunctionDecl>(DC) && !isa<CapturedDecl>(DC))
      break;
  }
}

/// A target or data directive whose variables cannot be passed to the runtime:
/// it calls the runtime with no arguments and a manifest (descriptor) that says
/// its footprint is unknown, then runs as written on the host. A region's host
/// run gets the device copy of every mapping around it from the runtime, so it
/// sees what a device run would. A data directive, or a region whose clauses the
/// runtime cannot honour that way (hostRunStandsForDevice), poisons every
/// enclosing `target data` (it does not map, so its data stays in host memory);
/// for such a region, data mapped elsewhere (`target enter data`, a caller's
/// construct) makes the runtime stop with an error rather than run on stale
/// host data.
Stmt *TesseraConsumer::opaque(OMPExecutableDirective *D,
                              const DeclContext *Context,
                              llvm::StringRef IRJson, llvm::StringRef Reason) {
  SourceLocation L = D->getBeginLoc();
  std::string What =
      llvm::omp::getOpenMPDirectiveName(D->getDirectiveKind()).str();
  bool Data = isOpenMPTargetDataManagementDirective(D->getDirectiveKind());
  // The text of tessera_ir::reject::Reason::Unpassable's remark (the manifest
  // or descriptor carries the same, for the runtime's report).
  remark(L, (Data ? "'" + What + "'" : std::string("target region")) +
                " not offloaded: [unpassable] " + Reason.str());
  rust::String Text = tessera::opaque_directive(
      rust::Str(IRJson.data(), IRJson.size()),
      rust::Str(Reason.data(), Reason.size()));
  std::string Desc = toStd(Text);
  // A region's host run gets the device data of every mapping around it, so an
  // enclosing `target data` may map, unless the region has a clause the runtime
  // cannot honour without its variables (see hostRunStandsForDevice).
  if (Data || Desc.empty() || !hostRunStandsForDevice(Desc))
    poison(Context, ("'" + What + "' (line " +
                     llvm::Twine(
                         Ctx.getSourceManager().getPresumedLineNumber(L)) +
                     ") that Tessera cannot handle: " + Reason)
                        .str());
  if (Desc.empty())
    return nullptr;
  llvm::DenseMap<const VarDecl *, bool> NoFlags;
  if (Data)
    return rewriteData(D, Context, Desc, {}, NoFlags);
  // { __tessera_opaque("<manifest>"); D;
  //   [if (__tessera_host_pending("<manifest>")) { #pragma omp taskwait }]
  //   __tessera_host_end("<manifest>"); }
  // The runtime copies the device data of every mapping to the host around D,
  // whose footprint is unknown (see hostEnd for the taskwait).
  QualType CharPtr = Ctx.getPointerType(Ctx.CharTy.withConst());
  Expr *Call = call(OpaqueFnName, Ctx.VoidTy, {{"manifest", CharPtr}},
                    /*Variadic=*/false, {stringArg(Desc, L)}, L);
  llvm::SmallVector<Stmt *, 4> All{Call, D};
  hostEnd(D, Desc, All);
  return CompoundStmt::Create(Ctx, All, FPOptionsOverride(), L,
                              D->getEndLoc());
}

/// Appends what follows the host run of region \p D (manifest \p Manifest):
///   [if (__tessera_host_pending("<manifest>")) { #pragma omp taskwait }]
///   __tessera_host_end("<manifest>");
/// (the taskwait only when D has `nowait`).
void TesseraConsumer::hostEnd(OMPExecutableDirective *D,
                              llvm::StringRef Manifest,
                              llvm::SmallVectorImpl<Stmt *> &Out) {
  SourceLocation L = D->getBeginLoc();
  QualType CharPtr = Ctx.getPointerType(Ctx.CharTy.withConst());
  if (D->hasClausesOfKind<OMPNowaitClause>()) {
    // The host version is a deferred task: the data it writes can only be
    // copied to the device once it has finished.
    Expr *Pending = call(HostPendingFnName, Ctx.IntTy, {{"manifest", CharPtr}},
                         /*Variadic=*/false, {stringArg(Manifest, L)}, L);
    Expr *Cond = Pending;
    if (Ctx.getLangOpts().CPlusPlus)
      Cond = ImplicitCastExpr::Create(Ctx, Ctx.BoolTy, CK_IntegralToBoolean,
                                      Pending, nullptr, VK_PRValue,
                                      FPOptionsOverride());
    Stmt *Wait = OMPTaskwaitDirective::Create(Ctx, L, L, {});
    Out.push_back(IfStmt::Create(Ctx, L, IfStatementKind::Ordinary, nullptr,
                                 nullptr, Cond, L, L, Wait));
  }
  Out.push_back(call(HostEndFnName, Ctx.VoidTy, {{"manifest", CharPtr}},
                     /*Variadic=*/false, {stringArg(Manifest, L)}, L));
}

/// Where to put the remark the Rust side located (file, line, column of the
/// region IR, i.e. presumed locations); the directive if it cannot be found.
SourceLocation TesseraConsumer::remarkLoc(llvm::StringRef File, unsigned Line,
                                          unsigned Col,
                                          SourceLocation Fallback) {
  if (Line == 0)
    return Fallback;
  SourceManager &SM = Ctx.getSourceManager();
  // Usually the directive's own file: resolve through its FileID (cheap, and
  // right even when the file was named differently on the command line).
  PresumedLoc P = SM.getPresumedLoc(Fallback);
  if (P.isValid() && File == P.getFilename() && P.getLine() ==
      SM.getExpansionLineNumber(Fallback)) {
    SourceLocation Loc = SM.translateLineCol(
        SM.getFileID(SM.getExpansionLoc(Fallback)), Line, std::max(1u, Col));
    if (Loc.isValid())
      return Loc;
  }
  if (OptionalFileEntryRef FE = SM.getFileManager().getOptionalFileRef(File)) {
    SourceLocation Loc = SM.translateFileLineCol(&FE->getFileEntry(), Line,
                                                 std::max(1u, Col));
    if (Loc.isValid())
      return Loc;
  }
  return Fallback;
}

/// Whether \p DC lies in the body of a `target data` construct that is itself
/// inside a lambda (with no other function in between).
bool TesseraConsumer::insideDataBodyOfLambda(const DeclContext *DC) const {
  bool InData = false;
  for (; DC; DC = DC->getParent()) {
    if (DataBodies.contains(DC))
      InData = true;
    if (const auto *MD = dyn_cast<CXXMethodDecl>(DC);
        MD && isLambdaCallOperator(MD))
      return InData;
    if (isa<FunctionDecl>(DC))
      return false;
  }
  return false;
}

/// Processes the data directive \p D (its outermost captured statement
/// \p Outer, its context \p Context).
Stmt *TesseraConsumer::processData(OMPExecutableDirective *D,
                                   const CapturedStmt &Outer,
                                   const DeclContext *Context, unsigned Index) {
  SourceLocation L = D->getBeginLoc();
  std::string Function =
      enclosingFunctionName(Context, Ctx.getPrintingPolicy());
  tessera::ExtractedRegion R =
      tessera::extractDataDirective(Ctx, *D, Function, Index);
  // Not `.ir.json`: those are target regions (tessera explain, fixtures).
  std::string Json = serialize(R.IR, "data.json", Index, L);
  bool IsData = D->getDirectiveKind() == llvm::omp::OMPD_target_data;

  if (IsData ? inLambda(Context) : insideDataBodyOfLambda(Context))
    // Clang 19 cannot name a lambda's captures inside the (inlined) body of a
    // `target data` construct in that lambda (see process()); the construct
    // then does not map, and what is inside runs on the host.
    return opaque(D, Context, Json,
                  IsData ? "it is in a lambda, where clang 19 cannot reach the "
                           "lambda's captures inside the construct; move it "
                           "out of the lambda"
                         : "it is inside a 'target data' construct in a "
                           "lambda, where clang 19 cannot reach the lambda's "
                           "captures; move the construct out of the lambda");
  if (IsData) {
    auto P = Poisoned.find(Outer.getCapturedDecl());
    if (P != Poisoned.end())
      return opaque(D, Context, Json, "it contains a " + P->second);
  }
  llvm::DenseMap<const VarDecl *, bool> RefFlags;
  if (const VarDecl *Unreachable = resolveArgs(*D, Outer, Context, R, RefFlags))
    return opaque(D, Context, Json,
                  ("Tessera cannot pass '" + Unreachable->getName() +
                   "' to its runtime from this context")
                      .str());

  tessera::DataDecision Dec =
      tessera::process_data(rust::Str(Json.data(), Json.size()));
  if (!Dec.error.empty()) {
    std::string Msg = toStd(Dec.error);
    error(L, llvm::StringRef(Msg).starts_with("tessera") ? Msg
                                                         : "tessera: " + Msg);
    return nullptr;
  }
  if (!Dec.offload && !Dec.remark.empty())
    remark(remarkLoc(toStd(Dec.remark_file), Dec.remark_line, Dec.remark_col,
                     L),
           toStd(Dec.remark));
  // Handled or not, the runtime hears about the directive (it reports every
  // execution, and refuses to let a directive it cannot honour ignore data it
  // holds on the device).
  std::vector<const VarDecl *> Args;
  llvm::SmallVector<Stmt *, 4> Temps = temporaries(R, Context, RefFlags, Args, L);
  return rewriteData(D, Context, toStd(Dec.descriptor), Args, RefFlags, Temps);
}

/// `extern "C" <Ret> <Name>(<Params>[, ...]);` — the existing declaration if
/// the translation unit has one.
FunctionDecl *TesseraConsumer::runtimeDecl(
    llvm::StringRef Name, QualType Ret,
    llvm::ArrayRef<std::pair<llvm::StringRef, QualType>> Params, bool Variadic,
    SourceLocation L) {
  if (FunctionDecl *FD = RuntimeFns.lookup(Name))
    return FD;
  TranslationUnitDecl *TU = Ctx.getTranslationUnitDecl();
  IdentifierInfo &II = Ctx.Idents.get(Name);
  for (NamedDecl *ND : TU->lookup(&II))
    if (auto *FD = dyn_cast<FunctionDecl>(ND))
      return RuntimeFns[Name] = FD;

  llvm::SmallVector<QualType, 4> Types;
  for (const auto &P : Params)
    Types.push_back(P.second);
  FunctionProtoType::ExtProtoInfo EPI;
  EPI.Variadic = Variadic;
  QualType FnTy = Ctx.getFunctionType(Ret, Types, EPI);
  DeclContext *DC = TU;
  if (Ctx.getLangOpts().CPlusPlus) {
    auto *LSD = LinkageSpecDecl::Create(Ctx, TU, L, L,
                                        LinkageSpecLanguageIDs::C,
                                        /*HasBraces=*/false);
    TU->addDecl(LSD);
    DC = LSD;
  }
  auto *FD =
      FunctionDecl::Create(Ctx, DC, L, L, DeclarationName(&II), FnTy,
                           Ctx.getTrivialTypeSourceInfo(FnTy), SC_Extern);
  llvm::SmallVector<ParmVarDecl *, 4> Parms;
  for (const auto &P : Params)
    Parms.push_back(ParmVarDecl::Create(
        Ctx, FD, L, L, &Ctx.Idents.get(P.first), P.second,
        Ctx.getTrivialTypeSourceInfo(P.second), SC_None, nullptr));
  FD->setParams(Parms);
  DC->addDecl(FD);
  return RuntimeFns[Name] = FD;
}

/// A call of the runtime function \p Name (declared on first use).
Expr *TesseraConsumer::call(
    llvm::StringRef Name, QualType Ret,
    llvm::ArrayRef<std::pair<llvm::StringRef, QualType>> Params, bool Variadic,
    llvm::ArrayRef<Expr *> Args, SourceLocation L) {
  const bool CXX = Ctx.getLangOpts().CPlusPlus;
  FunctionDecl *FD = runtimeDecl(Name, Ret, Params, Variadic, L);
  // A function designator is a prvalue in C and an lvalue in C++.
  Expr *Callee = DeclRefExpr::Create(Ctx, NestedNameSpecifierLoc(),
                                     SourceLocation(), FD, false, L,
                                     FD->getType(),
                                     CXX ? VK_LValue : VK_PRValue);
  Callee = ImplicitCastExpr::Create(Ctx, Ctx.getPointerType(FD->getType()),
                                    CK_FunctionToPointerDecay, Callee, nullptr,
                                    VK_PRValue, FPOptionsOverride());
  return CallExpr::Create(Ctx, Callee, Args, Ret, VK_PRValue, L,
                          FPOptionsOverride());
}

/// A string literal argument: char[N] in C, const char[N] in C++, decayed to
/// `const char *`. (CodeGen emits equal literals of a translation unit once,
/// so the manifest passed twice is one object at one address.)
Expr *TesseraConsumer::stringArg(llvm::StringRef Text, SourceLocation L) {
  QualType StrTy = Ctx.getStringLiteralArrayType(Ctx.CharTy, Text.size());
  Expr *Str = StringLiteral::Create(Ctx, Text, StringLiteralKind::Ordinary,
                                    /*Pascal=*/false, StrTy, L);
  Str = ImplicitCastExpr::Create(Ctx, Ctx.getArrayDecayedType(StrTy),
                                 CK_ArrayToPointerDecay, Str, nullptr,
                                 VK_PRValue, FPOptionsOverride());
  QualType CharPtr = Ctx.getPointerType(Ctx.CharTy.withConst());
  if (!Ctx.hasSameType(Str->getType(), CharPtr))
    Str = ImplicitCastExpr::Create(Ctx, CharPtr, CK_NoOp, Str, nullptr,
                                   VK_PRValue, FPOptionsOverride());
  return Str;
}

/// `"<text>", nargs, &v0, &v1, …`: the arguments of the variadic entries.
llvm::SmallVector<Expr *, 8> TesseraConsumer::runtimeArgs(
    llvm::StringRef Text, llvm::ArrayRef<const VarDecl *> Vars,
    const llvm::DenseMap<const VarDecl *, bool> &RefFlags, SourceLocation L) {
  llvm::SmallVector<Expr *, 8> Args;
  Args.push_back(stringArg(Text, L));
  Args.push_back(IntegerLiteral::Create(
      Ctx, llvm::APInt(Ctx.getIntWidth(Ctx.IntTy), Vars.size()), Ctx.IntTy, L));
  for (const VarDecl *VD : Vars) {
    auto *V = const_cast<VarDecl *>(VD);
    QualType T = V->getType().getNonReferenceType();
    Expr *Ref = DeclRefExpr::Create(Ctx, NestedNameSpecifierLoc(),
                                    SourceLocation(), V, RefFlags.lookup(VD), L,
                                    T, VK_LValue);
    V->setReferenced();
    Args.push_back(UnaryOperator::Create(Ctx, Ref, UO_AddrOf,
                                         Ctx.getPointerType(T), VK_PRValue,
                                         OK_Ordinary, L, false,
                                         FPOptionsOverride()));
  }
  return Args;
}

/// `!call` for an `int` call: int in C; in C++ the operand is converted to bool
/// first.
Expr *TesseraConsumer::notCall(Expr *Call, SourceLocation L) {
  QualType CondTy = Ctx.IntTy;
  if (Ctx.getLangOpts().CPlusPlus) {
    Call = ImplicitCastExpr::Create(Ctx, Ctx.BoolTy, CK_IntegralToBoolean, Call,
                                    nullptr, VK_PRValue, FPOptionsOverride());
    CondTy = Ctx.BoolTy;
  }
  return UnaryOperator::Create(Ctx, Call, UO_LNot, CondTy, VK_PRValue,
                               OK_Ordinary, L, false, FPOptionsOverride());
}

/// Builds
///   if (!__tessera_offload("<manifest>", n, &v…)) {
///     D
///     [if (__tessera_host_pending("<manifest>")) { #pragma omp taskwait }]
///     __tessera_host_end("<manifest>");
///   }
/// (the taskwait only when D has `nowait`).
Stmt *TesseraConsumer::rewrite(
    OMPExecutableDirective *D, llvm::StringRef Manifest,
    llvm::ArrayRef<const VarDecl *> Vars,
    const llvm::DenseMap<const VarDecl *, bool> &RefFlags,
    llvm::ArrayRef<Stmt *> Before) {
  SourceLocation L = D->getBeginLoc();
  QualType CharPtr = Ctx.getPointerType(Ctx.CharTy.withConst());
  Expr *Offload = call(OffloadFnName, Ctx.IntTy,
                       {{"manifest", CharPtr}, {"nargs", Ctx.IntTy}},
                       /*Variadic=*/true,
                       runtimeArgs(Manifest, Vars, RefFlags, L), L);

  llvm::SmallVector<Stmt *, 3> Fallback{D};
  hostEnd(D, Manifest, Fallback);
  Stmt *Then = CompoundStmt::Create(Ctx, Fallback, FPOptionsOverride(), L,
                                    D->getEndLoc());
  Stmt *If = IfStmt::Create(Ctx, L, IfStatementKind::Ordinary, nullptr,
                            nullptr, notCall(Offload, L), L, L, Then);
  llvm::SmallVector<Stmt *, 6> All(Before.begin(), Before.end());
  if (Stmt *Wait = dependWait(D))
    All.push_back(Wait);
  if (All.empty())
    return If;
  All.push_back(If);
  return CompoundStmt::Create(Ctx, All, FPOptionsOverride(), L, D->getEndLoc());
}

/// For a directive with `depend` (a target task), `#pragma omp taskwait`: the
/// rewrite runs the directive undeferred through the runtime, after the child
/// tasks of the encountering task — every sibling task its dependences may
/// order it after is among them (waiting for the others too only orders more).
/// Later tasks start after it completed, so their dependences on it hold. Null
/// without `depend`.
Stmt *TesseraConsumer::dependWait(const OMPExecutableDirective *D) {
  if (!D->hasClausesOfKind<OMPDependClause>())
    return nullptr;
  return OMPTaskwaitDirective::Create(Ctx, D->getBeginLoc(), D->getBeginLoc(),
                                      {});
}

/// Builds, for `target data`,
///   { void *__tessera_data_<k> = __tessera_data_begin("<desc>", n, &v…);
///     D
///     __tessera_data_end(__tessera_data_<k>); }
/// and for the standalone directives
///   if (!__tessera_data("<desc>", n, &v…)) { D }
Stmt *TesseraConsumer::rewriteData(
    OMPExecutableDirective *D, const DeclContext *Context,
    llvm::StringRef Desc, llvm::ArrayRef<const VarDecl *> Vars,
    const llvm::DenseMap<const VarDecl *, bool> &RefFlags,
    llvm::ArrayRef<Stmt *> Before) {
  SourceLocation L = D->getBeginLoc();
  QualType CharPtr = Ctx.getPointerType(Ctx.CharTy.withConst());
  llvm::SmallVector<Stmt *, 6> All(Before.begin(), Before.end());
  std::pair<llvm::StringRef, QualType> Params[] = {{"descriptor", CharPtr},
                                                   {"nargs", Ctx.IntTy}};
  llvm::SmallVector<Expr *, 8> Args = runtimeArgs(Desc, Vars, RefFlags, L);
  if (D->getDirectiveKind() != llvm::omp::OMPD_target_data) {
    if (Stmt *Wait = dependWait(D))
      All.push_back(Wait);
    Expr *Call = call(DataFnName, Ctx.IntTy, Params, /*Variadic=*/true, Args, L);
    Stmt *Then =
        CompoundStmt::Create(Ctx, {D}, FPOptionsOverride(), L, D->getEndLoc());
    Stmt *If = IfStmt::Create(Ctx, L, IfStatementKind::Ordinary, nullptr,
                              nullptr, notCall(Call, L), L, L, Then);
    if (All.empty())
      return If;
    All.push_back(If);
    return CompoundStmt::Create(Ctx, All, FPOptionsOverride(), L,
                                D->getEndLoc());
  }
  // The handle lives in a local of the directive's own context (the function,
  // or the captured region around the directive).
  QualType VoidPtr = Ctx.VoidPtrTy;
  Expr *Begin = call(DataBeginFnName, VoidPtr, Params, /*Variadic=*/true, Args, L);
  auto *DC = const_cast<DeclContext *>(Context);
  std::string Name = llvm::formatv("__tessera_data_{0}", NextTemp++);
  auto *Handle = VarDecl::Create(Ctx, DC, L, L, &Ctx.Idents.get(Name), VoidPtr,
                                 Ctx.getTrivialTypeSourceInfo(VoidPtr),
                                 SC_None);
  Handle->setInit(Begin);
  Handle->setImplicit();
  Handle->setReferenced();
  Handle->markUsed(Ctx);
  DC->addDecl(Handle);
  auto *Decl = new (Ctx) DeclStmt(DeclGroupRef(Handle), L, L);
  Expr *Ref = DeclRefExpr::Create(Ctx, NestedNameSpecifierLoc(),
                                  SourceLocation(), Handle, false, L, VoidPtr,
                                  VK_LValue);
  Ref = ImplicitCastExpr::Create(Ctx, VoidPtr, CK_LValueToRValue, Ref, nullptr,
                                 VK_PRValue, FPOptionsOverride());
  Expr *End = call(DataEndFnName, Ctx.VoidTy, {{"handle", VoidPtr}},
                   /*Variadic=*/false, {Ref}, L);
  All.append({Decl, D, End});
  return CompoundStmt::Create(Ctx, All, FPOptionsOverride(), L,
                              D->getEndLoc());
}

/// The plugin action: parses the options and installs the consumer.
class TesseraAction : public PluginASTAction {
protected:
  std::unique_ptr<ASTConsumer>
  CreateASTConsumer(CompilerInstance &CI, llvm::StringRef InFile) override {
    const LangOptions &LO = CI.getLangOpts();
    // Nothing to do without OpenMP, nor in the device compilation of an
    // offloading build (the host pass rewrites).
    if (!LO.OpenMP || LO.OpenMPIsTargetDevice)
      return std::make_unique<ASTConsumer>();
    std::string OutDir =
        Opts.OutDir.empty() ? defaultOutDir(CI, InFile) : Opts.OutDir;
    return std::make_unique<TesseraConsumer>(
        CI, Opts, OutDir, llvm::sys::path::stem(InFile).str());
  }

  bool ParseArgs(const CompilerInstance &CI,
                 const std::vector<std::string> &Args) override {
    for (const std::string &A : Args) {
      Opts.Args.push_back(A);
      auto [Key, Value] = llvm::StringRef(A).split('=');
      if (Key == "out-dir")
        Opts.OutDir = Value.str();
      else if (Key == "dump-ir")
        Opts.DumpDir = Value.str();
      else if (Key == "verbose")
        Opts.Verbose = true;
      // Unknown keys are reported by the Rust side (with the first region).
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

private:
  PluginOptions Opts;
};

} // namespace

static FrontendPluginRegistry::Add<TesseraAction>
    X("tessera", "Tessera: offload OpenMP target regions to FPGAs");
