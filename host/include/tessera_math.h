// Tessera HLS shim: math functions for generated kernels.
//
// A kernel whose region calls C math functions (tessera_ir::MathFn) includes this
// header and calls the `hls::` overloads, `hls::sqrt(x)` for `sqrtf(x)` when x is a
// float (the generator converts every argument to the call's type first), except
// fmin and fmax (tessera::fmin / tessera::fmax, see below).
//
//   - Vitis (__SYNTHESIS__ or TESSERA_VITIS, see tessera_hls.h): Vitis HLS' own math
//     library, <hls_math.h>.
//   - The emulated device: the same names as inline overloads over the C++ standard
//     library of the compiler that builds the emulation (glibc's libm on Linux).
//
// Which results are the host's. The exact functions — sqrt, fabs, fmin, fmax, floor,
// ceil, trunc, round, copysign, fma — have one correct result for every argument
// (IEEE 754 requires sqrt and fma correctly rounded; the others return a value of the
// type without rounding), so the host's libm, this header and any conforming
// implementation agree bit for bit. Tessera offloads regions calling only those by
// default. The others (exp, log, pow, sin, …) are approximations that differ between
// libraries by a few units in the last place; Tessera offloads them only with
// -fplugin-arg-tessera-math=relaxed. In emulation they are the host's libm, so the
// emulated device reproduces the host, but a Vitis kernel computes with Vitis'
// implementations, whose results may differ from the host's in the last bits (Vitis
// HLS documents the accuracy of each function in ULP). Nothing here claims that
// Vitis' approximations equal glibc's.
//
// fmin and fmax are not fully determined by C: for equal operands of different signs
// (fmin(+0.0, -0.0)) either may be returned, and libraries differ (glibc returns the
// second, clang 19 on x86-64 — llvm.minnum/maxnum, inline at every -O level — the
// first). Kernels call tessera::fmin / tessera::fmax below instead, which compute what
// the host binary computes, clang's choice, with both compilers and under Vitis: the
// first argument unless the second is smaller (fmin) / larger (fmax) or the first is a
// NaN.
//
// Contraction: kernels never fuse `a * b + c` into one rounding unless the source
// called fma (emulation compiles with -ffp-contract=off, runtime/src/emu.rs; under
// Vitis, tessera_hls.h turns FP_CONTRACT off). A host compilation that would fuse keeps
// the region on the host (plugin/Extract.cpp, hostMayFuse).
//
// Exactness under Vitis. fabs, copysign, floor, ceil, trunc and round return a value
// of the type that needs no rounding, and tessera::fmin / fmax are comparisons, so any
// implementation gives the host's bits; sqrt and fma are required by IEEE 754 to be
// correctly rounded. That Vitis' hls::sqrt and hls::fma are is assumed, not checked
// here (no Vitis installation): UG1399 calls the HLS math functions bit-approximate
// and documents their accuracy per function in ULP.
#ifndef TESSERA_MATH_H
#define TESSERA_MATH_H

#include <cmath>

namespace tessera {
inline float fmin(float x, float y) { return std::isnan(x) || y < x ? y : x; }
inline double fmin(double x, double y) { return std::isnan(x) || y < x ? y : x; }
inline float fmax(float x, float y) { return std::isnan(x) || y > x ? y : x; }
inline double fmax(double x, double y) { return std::isnan(x) || y > x ? y : x; }
}  // namespace tessera

#if defined(__SYNTHESIS__) || defined(TESSERA_VITIS)

#include <hls_math.h>

#else

namespace hls {

#define TESSERA_MATH_1(f)                                      \
  inline float f(float x) { return std::f(x); }                \
  inline double f(double x) { return std::f(x); }
#define TESSERA_MATH_2(f)                                      \
  inline float f(float x, float y) { return std::f(x, y); }    \
  inline double f(double x, double y) { return std::f(x, y); }

// Exact (fmin and fmax: tessera::fmin / tessera::fmax above).
TESSERA_MATH_1(sqrt)
TESSERA_MATH_1(fabs)
TESSERA_MATH_1(floor)
TESSERA_MATH_1(ceil)
TESSERA_MATH_1(trunc)
TESSERA_MATH_1(round)
TESSERA_MATH_2(copysign)
inline float fma(float x, float y, float z) { return std::fma(x, y, z); }
inline double fma(double x, double y, double z) { return std::fma(x, y, z); }

// Library-dependent (math=relaxed only).
TESSERA_MATH_1(exp)
TESSERA_MATH_1(exp2)
TESSERA_MATH_1(expm1)
TESSERA_MATH_1(log)
TESSERA_MATH_1(log2)
TESSERA_MATH_1(log10)
TESSERA_MATH_1(log1p)
TESSERA_MATH_2(pow)
TESSERA_MATH_1(sin)
TESSERA_MATH_1(cos)
TESSERA_MATH_1(tan)
TESSERA_MATH_1(asin)
TESSERA_MATH_1(acos)
TESSERA_MATH_1(atan)
TESSERA_MATH_2(atan2)
TESSERA_MATH_1(sinh)
TESSERA_MATH_1(cosh)
TESSERA_MATH_1(tanh)
TESSERA_MATH_1(cbrt)
TESSERA_MATH_2(hypot)

#undef TESSERA_MATH_1
#undef TESSERA_MATH_2

}  // namespace hls

#endif

#endif  // TESSERA_MATH_H
