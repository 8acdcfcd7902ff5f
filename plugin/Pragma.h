//===- Pragma.h - `#pragma tessera …` region annotations ----------------===//
//
// Part of Tessera. The plugin registers a pragma handler for the `tessera`
// namespace. `#pragma tessera tile(64, 64)` on the line directly before a
// `#pragma omp target…` directive sets that region's tile sizes (one per loop
// of the nest, outermost first), overriding `-fplugin-arg-tessera-tile=`.
// Compilers without Tessera ignore the pragma (with -Wunknown-pragmas).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_PLUGIN_PRAGMA_H
#define TESSERA_PLUGIN_PRAGMA_H

#include "clang/Basic/SourceLocation.h"
#include "llvm/Support/JSON.h"

namespace clang {
class SourceManager;
}

namespace tessera {

/// The `tile` annotation of the directive starting at \p Directive, as the IR's
/// `tile` object (`{"sizes": [...], "loc": {...}}`), or null if there is none.
/// Marks the pragma as used.
llvm::json::Value tilePragmaFor(const clang::SourceManager &SM,
                                clang::SourceLocation Directive);

/// Locations of `#pragma tessera tile` lines that annotated no directive.
std::vector<clang::SourceLocation> unusedTilePragmas();

} // namespace tessera

#endif // TESSERA_PLUGIN_PRAGMA_H
