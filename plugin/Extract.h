//===- Extract.h - OpenMP target region -> Tessera region IR ------------===//
//
// Part of Tessera. Declares the AST-to-IR extraction used by the clang plugin:
// one `#pragma omp target…` directive in, one `tessera_ir::Region` (schema
// version 1, see crates/ir/src/lib.rs) out as a JSON value, together with the
// variables whose addresses the rewritten runtime call passes.
//
// The extractor never decides whether a region can be offloaded: whatever it
// cannot represent becomes an `unsupported` node (with source text and location)
// and the Rust side turns that into a located reason.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PLUGIN_EXTRACT_H
#define TESSERA_PLUGIN_EXTRACT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Expr;
class OMPExecutableDirective;
class SourceManager;
class VarDecl;
} // namespace clang

namespace tessera {

/// The IR of one target region (or data directive) plus what the rewrite needs to
/// call the runtime.
struct ExtractedRegion {
  /// The `Region` object (serialises to the JSON the Rust side reads).
  llvm::json::Value IR = nullptr;
  /// `Region::vars` as declarations, in the same (runtime-argument) order; null
  /// for a value hoisted out of a clause (see Hoisted).
  std::vector<const clang::VarDecl *> Vars;
  /// Parallel to Vars: for an argument that is not a variable, the expression
  /// (of a clause of the directive, in the directive's context, free of side
  /// effects) whose value it is — a section bound the IR cannot express, such
  /// as `a[0:c.n]`. The rewrite evaluates it into a temporary right before the
  /// runtime call and passes the temporary's address.
  std::vector<const clang::Expr *> Hoisted;
  /// Parallel to Vars: the hoisted expression is a member access of the region
  /// body (`i < c.n`), not of a clause; its variable references carry the
  /// region's capture flags, so the rewrite rebuilds it for the directive's
  /// context (TesseraConsumer::resolveArgs).
  std::vector<bool> HoistedInside;
  /// Parallel to Vars: the hoisted member access is passed by address
  /// (`Region::members`): the rewrite passes a pointer to the member, null when
  /// the chain crosses a null pointer.
  std::vector<bool> HoistedMember;
  /// The condition of the target construct's `if` clause (an expression in the
  /// directive's context, free of side effects), or null: the rewrite evaluates
  /// it into an `int` temporary and passes its address after the variables.
  const clang::Expr *IfCondition = nullptr;
  /// The device number of the target construct's `device` clause (in the
  /// directive's context, free of side effects), or null: passed like the `if`
  /// value, last.
  const clang::Expr *DeviceNum = nullptr;
  /// Non-empty when the region (a part of it Tessera cannot represent) may use
  /// mapped data it does not name: it uses a variable whose type carries
  /// pointers (a struct with a pointer member, a pointer to pointers), or calls
  /// a function whose body Tessera cannot see. The region is then handled like
  /// one whose variables cannot be passed (`__tessera_opaque`); the string is
  /// the reason, a clause of the remark ("it reaches memory through …").
  std::string UnknownFootprint;
};

/// Extracts the region IR of the target execution directive \p D.
///
/// \p Function is the (qualified) name of the enclosing function and \p Index
/// the 0-based number of the region in its translation unit.
ExtractedRegion extractRegion(clang::ASTContext &Ctx,
                              const clang::OMPExecutableDirective &D,
                              llvm::StringRef Function, unsigned Index);

/// Extracts the IR of the data directive \p D (`target data`, `target enter
/// data`, `target exit data`, `target update`): a `DataDirective` (schema in
/// crates/ir/src/data.rs), with the variables its list items name and the
/// scalars their extents and sections use, in call order.
ExtractedRegion extractDataDirective(clang::ASTContext &Ctx,
                                     const clang::OMPExecutableDirective &D,
                                     llvm::StringRef Function, unsigned Index);

/// \p File (a presumed file name, as given to the compiler) as an absolute,
/// normalised path: made absolute against the compiler's working directory,
/// `.` and `..` removed (symbolic links are not resolved). The region IR's
/// `source`, which kernel names hash; the plugin names its translation unit's
/// kernel files by the same path.
std::string absoluteSourcePath(const clang::SourceManager &SM,
                               llvm::StringRef File);

} // namespace tessera

#endif // TESSERA_PLUGIN_EXTRACT_H
