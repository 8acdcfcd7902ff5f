/* tessera_rt.h — the C ABI of Tessera's runtime (libtessera_rt.so).
 *
 * The Tessera clang plugin rewrites every `#pragma omp target` region into
 *
 *     if (!__tessera_offload(manifest_json, nargs, &v0, &v1, ...)) {
 *         <original region>
 *     }
 *
 * The runtime decides where the region runs. It returns 1 when it ran the region's
 * kernel on a device (and copied the mapped data back), or 0 when the caller must
 * run the original code on the host (host fallback; the reason goes to the report,
 * see TESSERA_REPORT and TESSERA_VERBOSE in runtime/README.md). Under
 * OMP_TARGET_OFFLOAD=MANDATORY a region that cannot be offloaded terminates the
 * process with exit status 1 instead of returning 0.
 *
 * Both functions are thread-safe: regions may be offloaded from several threads at
 * once (a target region inside `omp parallel`).
 */
#ifndef TESSERA_RT_H
#define TESSERA_RT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs (or declines to run) one execution of a target region.
 *
 * manifest: the region's kernel manifest, JSON (tessera_ir::manifest::Manifest), as a
 *           NUL-terminated string literal. The runtime parses it once and caches it
 *           by address, so it must stay at a stable address (a literal does).
 * nargs:    the number of variadic arguments; must equal the manifest's `args`.
 * ...:      one address per manifest argument, in the manifest's order, each
 *           passed as a data pointer (`T *`, read as `void *`):
 *             kind "scalar":  points at the value, of the argument's `elem` type;
 *             kind "pointer": points at the pointer variable, which points at
 *                             element 0 of the data;
 *             kind "array":   is the address of element 0 of the array object.
 * Returns 1 if the region ran on a device, 0 if the caller must run it on the host.
 */
int __tessera_offload(const char *manifest, int nargs, ...);

/* The same, with the addresses in an array: args[0 .. nargs-1] are the variadic
 * arguments of __tessera_offload. */
int tessera_offload_v(const char *manifest, int nargs, void *const *args);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_RT_H */
