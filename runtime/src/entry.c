/* The variadic half of Tessera's C entry point.
 *
 * Stable Rust cannot define a variadic function, so `__tessera_offload` (a naked
 * Rust trampoline in lib.rs, which is what the cdylib exports) jumps here with the
 * caller's registers and stack intact. This function collects the variadic
 * addresses into an array and calls the Rust `tessera_offload_v`. */

#include <stdarg.h>
#include <stdlib.h>

int tessera_offload_v(const char *manifest, int nargs, void *const *args);

/* Arguments collected on the stack; more than this go to the heap. */
#define TESSERA_STACK_ARGS 64

__attribute__((visibility("hidden"))) int tessera_offload_va(const char *manifest, int nargs, ...) {
    void *stack_args[TESSERA_STACK_ARGS];
    void **args = stack_args;
    if (nargs > TESSERA_STACK_ARGS) {
        args = (void **)malloc((size_t)nargs * sizeof(void *));
        if (!args) /* The Rust side reports a host fallback for a null vector. */
            return tessera_offload_v(manifest, nargs, NULL);
    }
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; i++)
        args[i] = va_arg(ap, void *);
    va_end(ap);
    int r = tessera_offload_v(manifest, nargs, args);
    if (args != stack_args)
        free(args);
    return r;
}
