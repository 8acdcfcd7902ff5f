/* The variadic halves of Tessera's C entry points.
 *
 * Stable Rust cannot define a variadic function, so `__tessera_offload`,
 * `__tessera_data` and `__tessera_data_begin` (naked Rust trampolines in lib.rs and
 * directives.rs, which is what the cdylib exports) jump here with the caller's
 * registers and stack intact. Each function collects the variadic addresses into an
 * array and calls its Rust `*_v` counterpart. */

#include <stdarg.h>
#include <stdlib.h>

int tessera_offload_v(const char *manifest, int nargs, void *const *args);
int tessera_data_v(const char *desc, int nargs, void *const *args);
void *tessera_data_begin_v(const char *desc, int nargs, void *const *args);

/* Arguments collected on the stack; more than this go to the heap. */
#define TESSERA_STACK_ARGS 64

/* Defines `RET NAME(const char *text, int nargs, ...)` calling `RET TARGET(text,
 * nargs, args)`; a failed allocation passes a null vector, which the Rust side
 * reports (host fallback). */
#define TESSERA_VARIADIC(RET, NAME, TARGET)                                      \
    __attribute__((visibility("hidden"))) RET NAME(const char *text, int nargs, ...) { \
        void *stack_args[TESSERA_STACK_ARGS];                                   \
        void **args = stack_args;                                               \
        if (nargs > TESSERA_STACK_ARGS) {                                       \
            args = (void **)malloc((size_t)nargs * sizeof(void *));             \
            if (!args)                                                          \
                return TARGET(text, nargs, NULL);                               \
        }                                                                       \
        va_list ap;                                                             \
        va_start(ap, nargs);                                                    \
        for (int i = 0; i < nargs; i++)                                         \
            args[i] = va_arg(ap, void *);                                       \
        va_end(ap);                                                             \
        RET r = TARGET(text, nargs, args);                                      \
        if (args != stack_args)                                                 \
            free(args);                                                         \
        return r;                                                               \
    }

TESSERA_VARIADIC(int, tessera_offload_va, tessera_offload_v)
TESSERA_VARIADIC(int, tessera_data_va, tessera_data_v)
TESSERA_VARIADIC(void *, tessera_data_begin_va, tessera_data_begin_v)
