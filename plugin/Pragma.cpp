//===- Pragma.cpp - `#pragma tessera tile(…)` ---------------------------===//
//
// Part of Tessera. Parses `#pragma tessera tile(n1, n2, …)` while clang
// preprocesses, remembers where each one is, and lets the region extraction
// find the annotation of a target directive: the pragma must be on the line
// directly above the directive (macro-free, same file).
//
//===----------------------------------------------------------------------===//

#include "Pragma.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/LiteralSupport.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"

#include <vector>

using namespace clang;

namespace {

struct TilePragma {
  SourceLocation Loc;
  std::vector<int64_t> Sizes;
  bool Used = false;
};

/// Pragmas seen in this compilation (one translation unit per cc1 process).
std::vector<TilePragma> &pragmas() {
  static std::vector<TilePragma> P;
  return P;
}

class TesseraPragmaHandler : public PragmaHandler {
public:
  TesseraPragmaHandler() : PragmaHandler("tessera") {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer Introducer,
                    Token &First) override {
    DiagnosticsEngine &D = PP.getDiagnostics();
    unsigned Err = D.getCustomDiagID(
        DiagnosticsEngine::Error,
        "malformed '#pragma tessera': expected 'tile(<size>, …)' with "
        "positive integer sizes");
    Token Tok;
    PP.Lex(Tok);
    auto Fail = [&](const Token &At) {
      D.Report(At.getLocation(), Err);
      while (Tok.isNot(tok::eod))
        PP.Lex(Tok);
    };
    if (!Tok.is(tok::identifier) || Tok.getIdentifierInfo()->getName() != "tile")
      return Fail(Tok);
    PP.Lex(Tok);
    if (Tok.isNot(tok::l_paren))
      return Fail(Tok);
    TilePragma P;
    P.Loc = Introducer.Loc;
    while (true) {
      PP.Lex(Tok);
      if (Tok.isNot(tok::numeric_constant))
        return Fail(Tok);
      uint64_t V = 0;
      if (!PP.parseSimpleIntegerLiteral(Tok, V) || V == 0 || V > (1u << 20))
        return Fail(Tok);
      P.Sizes.push_back(int64_t(V));
      // parseSimpleIntegerLiteral lexed the token after the number.
      if (Tok.is(tok::comma))
        continue;
      if (Tok.is(tok::r_paren))
        break;
      return Fail(Tok);
    }
    PP.Lex(Tok);
    if (Tok.isNot(tok::eod))
      return Fail(Tok);
    pragmas().push_back(std::move(P));
  }
};

} // namespace

llvm::json::Value tessera::tilePragmaFor(const SourceManager &SM,
                                         SourceLocation Directive) {
  SourceLocation DL = SM.getExpansionLoc(Directive);
  for (TilePragma &P : pragmas()) {
    SourceLocation PL = SM.getExpansionLoc(P.Loc);
    if (SM.getFileID(PL) != SM.getFileID(DL) ||
        SM.getSpellingLineNumber(PL) + 1 != SM.getSpellingLineNumber(DL))
      continue;
    P.Used = true;
    PresumedLoc Pr = SM.getPresumedLoc(P.Loc);
    llvm::json::Array Sizes;
    for (int64_t S : P.Sizes)
      Sizes.push_back(S);
    return llvm::json::Object{
        {"sizes", std::move(Sizes)},
        {"loc", llvm::json::Object{{"file", Pr.getFilename()},
                                   {"line", Pr.getLine()},
                                   {"col", Pr.getColumn()}}}};
  }
  return nullptr;
}

std::vector<SourceLocation> tessera::unusedTilePragmas() {
  std::vector<SourceLocation> Out;
  for (const TilePragma &P : pragmas())
    if (!P.Used)
      Out.push_back(P.Loc);
  return Out;
}

static PragmaHandlerRegistry::Add<TesseraPragmaHandler>
    Y("tessera", "Tessera region annotations: #pragma tessera tile(...)");
