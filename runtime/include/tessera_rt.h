/* tessera_rt.h — the C ABI of Tessera's runtime (libtessera_rt.so).
 *
 * The Tessera clang plugin rewrites every `#pragma omp target` region into
 *
 *     if (!__tessera_offload(manifest_json, nargs, &v0, &v1, ...)) {
 *         <original region>
 *         __tessera_host_end(manifest_json);
 *     }
 *
 * (a region with `nowait` also gets `if (__tessera_host_pending(manifest_json))
 * #pragma omp taskwait` before the end call), every `#pragma omp target data` into
 *
 *     { void *h = __tessera_data_begin(descriptor_json, nargs, &v0, ...);
 *       <original directive>
 *       __tessera_data_end(h); }
 *
 * and every `target enter data`, `target exit data` and `target update` into
 *
 *     if (!__tessera_data(descriptor_json, nargs, &v0, ...)) { <original directive> }
 *
 * The runtime decides where the region runs. It returns 1 when it ran the region's
 * kernel on a device (and copied the mapped data back), or 0 when the caller must
 * run the original code on the host (host fallback; the reason goes to the report,
 * see TESSERA_REPORT and TESSERA_VERBOSE in runtime/README.md). Under
 * OMP_TARGET_OFFLOAD=MANDATORY a region that cannot be offloaded terminates the
 * process with exit status 1 instead of returning 0.
 *
 * All functions are thread-safe: regions may be offloaded from several threads at
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
 * nargs:    the number of variadic arguments; must equal the manifest's `args`
 *           (one more when the manifest has `if_clause`).
 * ...:      one address per manifest argument, in the manifest's order, each
 *           passed as a data pointer (`T *`, read as `void *`):
 *             kind "scalar":  points at the value, of the argument's `elem` type;
 *             kind "pointer": points at the pointer variable, which points at
 *                             element 0 of the data;
 *             kind "array":   is the address of element 0 of the array object.
 *           With `if_clause`, then the address of an `int` holding the value of
 *           the target construct's `if` clause: when it is 0 the call returns 0
 *           and the original code runs on OpenMP's host device, on host memory
 *           (no copies; not an error under MANDATORY).
 * Returns 1 if the region ran on a device, 0 if the caller must run it on the host.
 */
int __tessera_offload(const char *manifest, int nargs, ...);

/* The same, with the addresses in an array: args[0 .. nargs-1] are the variadic
 * arguments of __tessera_offload. */
int tessera_offload_v(const char *manifest, int nargs, void *const *args);

/* After the original region ran on the host (the fallback branch): when its arrays
 * reach data an enclosing data region keeps on the device, the offload call copied
 * that data to the host before returning 0; this call copies the results back to
 * the device, restores the host copies a device run would have left alone, and
 * writes the region's report line. Does nothing otherwise (no such host run in
 * progress on this thread for this manifest). */
void __tessera_host_end(const char *manifest);

/* Whether this thread has such a host run of `manifest` in progress: the rewritten
 * code of a `nowait` region then waits for its deferred host task (taskwait) before
 * calling __tessera_host_end. */
int __tessera_host_pending(const char *manifest);

/* A target region whose variables the plugin could not pass (its manifest's
 * `rejected` says why; it has no arguments) is rewritten into
 *     { __tessera_opaque(manifest_json);
 *       <original directive>
 *       [if (__tessera_host_pending(manifest_json)) { #pragma omp taskwait }]
 *       __tessera_host_end(manifest_json); }
 * (the taskwait only for a `nowait` region). The region runs on the host; its
 * footprint is unknown, so while data is mapped on the device the call copies the
 * device copy of every mapping to the host (saving the host bytes), and
 * __tessera_host_end puts what the host code left there back on the device and
 * restores the host bytes, as a device run of the region would. Under
 * OMP_TARGET_OFFLOAD=MANDATORY, or when those copies fail, it prints the reason and
 * exits with status 1. */
void __tessera_opaque(const char *manifest);

/* Executes (or declines) a `target enter data`, `target exit data` or `target
 * update` directive.
 *
 * descriptor: the directive's descriptor, JSON (tessera_ir::data::DataDesc), a
 *             string literal, cached by address like the manifest.
 * nargs, ...: one address per descriptor `args` entry, passed as for
 *             __tessera_offload (scalars used by the sections' bounds included).
 * Returns 1 when it executed on the device, 0 when the caller must run the original
 * directive (the host OpenMP runtime: on the host device, a no-op). Under
 * OMP_TARGET_OFFLOAD=MANDATORY a directive that does not execute on a device stops
 * the process with exit status 1, as does a directive Tessera cannot execute (a
 * `depend` clause, …) that names data Tessera holds on the device. */
int __tessera_data(const char *descriptor, int nargs, ...);
int tessera_data_v(const char *descriptor, int nargs, void *const *args);

/* The start of a `target data` construct: maps its list items (as evaluated now)
 * and returns a handle for __tessera_data_end, never null. When the directive does
 * not map (host device, or left to the host OpenMP runtime), every target region
 * runs on the host until the end call. */
void *__tessera_data_begin(const char *descriptor, int nargs, ...);
void *tessera_data_begin_v(const char *descriptor, int nargs, void *const *args);

/* The end of a `target data` construct: unmaps what the start mapped (copying back
 * `from`/`tofrom` data whose reference count reaches 0) and frees the handle. Null
 * is ignored. */
void __tessera_data_end(void *handle);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_RT_H */
