/* NOT XRT: a stand-in libxrt_coreutil.so written for Tessera's tests.
 *
 * It implements the 20 functions of XRT's C API that tessera-rt's XRT backend calls
 * (runtime/build.rs, FUNCTIONS) closely enough to test the backend's logic without a
 * board: device memory is separate from host memory (so a missing sync shows as
 * wrong data), buffers remember their memory group and a kernel argument refuses a
 * buffer of another group, user pointers must be 4 KiB aligned, loading another
 * bitstream fails while buffer objects exist (like XRT's xocl driver: "pre-existing
 * buffer allocations"), and sub-buffers share their parent's device memory. A buffer
 * of xrtBOAlloc has host backing storage of its own (xrtBOWrite/xrtBORead copy into
 * and out of it; xrtBOSync moves it to and from the device memory), as in XRT.
 *
 * A "bitstream" here is a shared object, built by the test, that exports per kernel k
 *   const char k_standin_args[];   e.g. "buf@1,buf@2,i32": one entry per argument,
 *                                  buf@<group> or the scalar's promoted C type
 *                                  (i32, u32, i64, u64, f32, f64)
 *   void k_standin(void **args);   args[i]: the buffer's device memory, or the value
 * Kernels run synchronously in xrtRunStart.
 *
 * With XRT_STANDIN_LOG=<file>, every device-memory event is appended as one line:
 *   load <path> | open <kernel> | alloc <id> <bytes> group <g> (xrtBOAllocUserPtr) |
 *   alloc_bo <id> <bytes> group <g> (xrtBOAlloc) | sub <id> of <parent> at <offset>
 *   <bytes> | sync <id> to|from <offset> <bytes> | write|read <id> <offset> <bytes> |
 *   run <kernel> | free <id>
 * With XRT_STANDIN_NO_DEVICE=1, xrtDeviceOpen fails (no board). */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"
#include "xrt/xrt_kernel.h"

#define MAX_ARGS 128
#define PAGE 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void logf_(const char *fmt, ...) {
    const char *path = getenv("XRT_STANDIN_LOG");
    if (!path || !*path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static void complain(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("xrt-standin: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

enum kind { BUF, I32, U32, I64, U64, F32, F64 };

struct device {
    void *so;          /* the loaded "bitstream" */
    char path[4096];
    xuid_t uuid;
    long live_bos;
    long next_bo;
};

struct bo {
    struct device *dev;
    struct bo *parent; /* sub-buffer: shares the parent's memory */
    long id, refs;
    unsigned char *host, *mem;
    int owns_host; /* xrtBOAlloc: host backing storage allocated here */
    size_t size;
    uint32_t group;
};

struct kernel {
    struct device *dev;
    char name[256];
    void (*fn)(void **);
    int nargs;
    enum kind kinds[MAX_ARGS];
    uint32_t groups[MAX_ARGS];
};

struct run {
    struct kernel *k;
    int set[MAX_ARGS];
    struct bo *bos[MAX_ARGS];
    union { int32_t i32; uint32_t u32; int64_t i64; uint64_t u64; float f32; double f64; } vals[MAX_ARGS];
    enum ert_cmd_state state;
};

xrtDeviceHandle xrtDeviceOpen(unsigned int index) {
    const char *none = getenv("XRT_STANDIN_NO_DEVICE");
    if (index != 0 || (none && *none == '1')) {
        errno = ENODEV;
        return NULL;
    }
    struct device *d = calloc(1, sizeof *d);
    if (!d) errno = ENOMEM;
    return d;
}

int xrtDeviceClose(xrtDeviceHandle h) {
    struct device *d = h;
    if (!d) return -EINVAL;
    if (d->so) dlclose(d->so);
    free(d);
    return 0;
}

int xrtDeviceLoadXclbinFile(xrtDeviceHandle h, const char *path) {
    struct device *d = h;
    if (!d || !path) return errno = EINVAL, -EINVAL;
    pthread_mutex_lock(&lock);
    if (d->so && strcmp(d->path, path) == 0) {
        pthread_mutex_unlock(&lock);
        return 0; /* already loaded */
    }
    if (d->live_bos != 0) {
        complain("cannot load %s: %ld buffer objects still allocated (pre-existing buffer allocations)", path,
                 d->live_bos);
        pthread_mutex_unlock(&lock);
        return errno = EPERM, -EPERM;
    }
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        complain("%s is not a stand-in bitstream: %s", path, dlerror());
        pthread_mutex_unlock(&lock);
        return errno = EINVAL, -EINVAL;
    }
    if (d->so) dlclose(d->so);
    d->so = so;
    snprintf(d->path, sizeof d->path, "%s", path);
    /* The UUID: FNV-1a of the path, twice. */
    uint64_t hsh = 1469598103934665603ull;
    for (const char *c = path; *c; c++) hsh = (hsh ^ (unsigned char)*c) * 1099511628211ull;
    memcpy(d->uuid, &hsh, 8);
    hsh = hsh * 1099511628211ull + 1;
    memcpy(d->uuid + 8, &hsh, 8);
    logf_("load %s", path);
    pthread_mutex_unlock(&lock);
    return 0;
}

int xrtDeviceGetXclbinUUID(xrtDeviceHandle h, xuid_t out) {
    struct device *d = h;
    if (!d || !d->so) return errno = EINVAL, -EINVAL;
    memcpy(out, d->uuid, sizeof(xuid_t));
    return 0;
}

static int parse_args(struct kernel *k, const char *spec) {
    k->nargs = 0;
    const char *p = spec;
    while (*p) {
        if (k->nargs == MAX_ARGS) return -1;
        int i = k->nargs++;
        unsigned g = 0;
        if (sscanf(p, "buf@%u", &g) == 1) k->kinds[i] = BUF, k->groups[i] = g;
        else if (!strncmp(p, "i32", 3)) k->kinds[i] = I32;
        else if (!strncmp(p, "u32", 3)) k->kinds[i] = U32;
        else if (!strncmp(p, "i64", 3)) k->kinds[i] = I64;
        else if (!strncmp(p, "u64", 3)) k->kinds[i] = U64;
        else if (!strncmp(p, "f32", 3)) k->kinds[i] = F32;
        else if (!strncmp(p, "f64", 3)) k->kinds[i] = F64;
        else return -1;
        p = strchr(p, ',');
        if (!p) break;
        p++;
    }
    return 0;
}

xrtKernelHandle xrtPLKernelOpen(xrtDeviceHandle h, const xuid_t uuid, const char *name) {
    struct device *d = h;
    if (!d || !d->so || memcmp(uuid, d->uuid, sizeof(xuid_t)) != 0) {
        complain("xrtPLKernelOpen: the bitstream with this UUID is not loaded");
        return errno = EINVAL, NULL;
    }
    char sym[300];
    struct kernel *k = calloc(1, sizeof *k);
    if (!k) return errno = ENOMEM, NULL;
    snprintf(k->name, sizeof k->name, "%s", name);
    snprintf(sym, sizeof sym, "%s_standin", name);
    k->fn = (void (*)(void **))dlsym(d->so, sym);
    snprintf(sym, sizeof sym, "%s_standin_args", name);
    const char *spec = dlsym(d->so, sym);
    if (!k->fn || !spec || parse_args(k, spec) != 0) {
        complain("%s has no kernel '%s'", d->path, name);
        free(k);
        return errno = ENOENT, NULL;
    }
    k->dev = d;
    logf_("open %s", name);
    return k;
}

int xrtKernelClose(xrtKernelHandle h) {
    free(h);
    return 0;
}

int xrtKernelArgGroupId(xrtKernelHandle h, int argno) {
    struct kernel *k = h;
    if (!k || argno < 0 || argno >= k->nargs || k->kinds[argno] != BUF) return errno = EINVAL, -EINVAL;
    return (int)k->groups[argno];
}

xrtRunHandle xrtRunOpen(xrtKernelHandle h) {
    struct run *r = calloc(1, sizeof *r);
    if (!r) return errno = ENOMEM, NULL;
    r->k = h;
    r->state = ERT_CMD_STATE_NEW;
    return r;
}

int xrtRunSetArg(xrtRunHandle h, int index, ...) {
    struct run *r = h;
    if (!r || index < 0 || index >= r->k->nargs) return errno = EINVAL, -EINVAL;
    va_list ap;
    va_start(ap, index);
    switch (r->k->kinds[index]) {
    case BUF: {
        struct bo *b = va_arg(ap, xrtBufferHandle);
        uint32_t g = b ? (b->parent ? b->parent->group : b->group) : 0;
        if (!b || g != r->k->groups[index]) {
            complain("kernel %s argument %d is connected to memory group %u, the buffer is in group %u",
                     r->k->name, index, r->k->groups[index], g);
            va_end(ap);
            return errno = EINVAL, -EINVAL;
        }
        r->bos[index] = b;
        break;
    }
    case I32: r->vals[index].i32 = va_arg(ap, int); break;
    case U32: r->vals[index].u32 = va_arg(ap, unsigned int); break;
    case I64: r->vals[index].i64 = va_arg(ap, long); break;
    case U64: r->vals[index].u64 = va_arg(ap, unsigned long); break;
    case F32: r->vals[index].f32 = (float)va_arg(ap, double); break;
    case F64: r->vals[index].f64 = va_arg(ap, double); break;
    }
    va_end(ap);
    r->set[index] = 1;
    return 0;
}

int xrtRunStart(xrtRunHandle h) {
    struct run *r = h;
    void *args[MAX_ARGS];
    for (int i = 0; i < r->k->nargs; i++) {
        if (!r->set[i]) {
            complain("kernel %s: argument %d was not set", r->k->name, i);
            return errno = EINVAL, -EINVAL;
        }
        args[i] = r->k->kinds[i] == BUF ? (void *)r->bos[i]->mem : (void *)&r->vals[i];
    }
    logf_("run %s", r->k->name);
    r->k->fn(args);
    r->state = ERT_CMD_STATE_COMPLETED;
    return 0;
}

enum ert_cmd_state xrtRunWait(xrtRunHandle h) {
    return ((struct run *)h)->state;
}

enum ert_cmd_state xrtRunWaitFor(xrtRunHandle h, unsigned int timeout_ms) {
    (void)timeout_ms;
    return ((struct run *)h)->state;
}

int xrtRunClose(xrtRunHandle h) {
    free(h);
    return 0;
}

/* A new buffer object's size, group and id on device d (one reference). */
static void bo_register(struct device *d, struct bo *b, size_t size, xrtMemoryGroup grp) {
    b->dev = d;
    b->size = size;
    b->group = grp;
    b->refs = 1;
    pthread_mutex_lock(&lock);
    b->id = ++d->next_bo;
    d->live_bos++;
    pthread_mutex_unlock(&lock);
}

xrtBufferHandle xrtBOAllocUserPtr(xrtDeviceHandle h, void *userptr, size_t size, xrtBufferFlags flags,
                                  xrtMemoryGroup grp) {
    struct device *d = h;
    (void)flags;
    if (!d || !userptr || ((uintptr_t)userptr % PAGE) != 0) {
        complain("xrtBOAllocUserPtr: userptr %p is not aligned to %d bytes", userptr, PAGE);
        return errno = EINVAL, NULL;
    }
    struct bo *b = calloc(1, sizeof *b);
    if (!b) return errno = ENOMEM, NULL;
    b->mem = malloc(size ? size : 1);
    if (!b->mem) return free(b), errno = ENOMEM, NULL;
    /* Device memory starts as garbage: data the runtime never synced shows up. */
    memset(b->mem, 0xA5, size);
    b->host = userptr;
    bo_register(d, b, size, grp);
    logf_("alloc %ld %zu group %u", b->id, size, grp);
    return b;
}

/* A buffer with host backing storage of its own (XRT: the driver allocates it, 4 KiB
 * aligned; xrtBOWrite/xrtBORead copy into and out of it, xrtBOSync moves it). A size
 * of 0 is refused here (the backend allocates whole pages). */
xrtBufferHandle xrtBOAlloc(xrtDeviceHandle h, size_t size, xrtBufferFlags flags, xrtMemoryGroup grp) {
    struct device *d = h;
    (void)flags;
    if (!d || size == 0) {
        complain("xrtBOAlloc: %zu bytes", size);
        return errno = EINVAL, NULL;
    }
    struct bo *b = calloc(1, sizeof *b);
    if (!b) return errno = ENOMEM, NULL;
    void *host = NULL;
    if (posix_memalign(&host, PAGE, size) != 0) return free(b), errno = ENOMEM, NULL;
    b->mem = malloc(size);
    if (!b->mem) return free(host), free(b), errno = ENOMEM, NULL;
    /* Garbage in both: data the runtime never wrote or synced shows up. */
    memset(host, 0x5A, size);
    memset(b->mem, 0xA5, size);
    b->host = host;
    b->owns_host = 1;
    bo_register(d, b, size, grp);
    logf_("alloc_bo %ld %zu group %u", b->id, size, grp);
    return b;
}

xrtBufferHandle xrtBOSubAlloc(xrtBufferHandle parent, size_t size, size_t offset) {
    struct bo *p = parent;
    if (!p || offset > p->size || size > p->size - offset) {
        complain("xrtBOSubAlloc: sub buffer size and offset");
        return errno = EINVAL, NULL;
    }
    struct bo *b = calloc(1, sizeof *b);
    if (!b) return errno = ENOMEM, NULL;
    b->dev = p->dev;
    b->parent = p;
    b->host = p->host + offset;
    b->mem = p->mem + offset;
    b->size = size;
    b->group = p->group;
    b->refs = 1;
    pthread_mutex_lock(&lock);
    p->refs++;
    b->id = ++p->dev->next_bo;
    pthread_mutex_unlock(&lock);
    logf_("sub %ld of %ld at %zu %zu", b->id, p->id, offset, size);
    return b;
}

static void release(struct bo *b) {
    pthread_mutex_lock(&lock);
    long left = --b->refs;
    if (left == 0 && !b->parent) b->dev->live_bos--;
    pthread_mutex_unlock(&lock);
    if (left) return;
    if (b->parent) release(b->parent);
    else {
        free(b->mem);
        if (b->owns_host) free(b->host);
    }
    free(b);
}

int xrtBOFree(xrtBufferHandle h) {
    struct bo *b = h;
    if (!b) return errno = EINVAL, -EINVAL;
    logf_("free %ld", b->id);
    release(b);
    return 0;
}

int xrtBOSync(xrtBufferHandle h, enum xclBOSyncDirection dir, size_t size, size_t offset) {
    struct bo *b = h;
    if (!b || offset > b->size || size > b->size - offset) {
        complain("xrtBOSync: %zu bytes at %zu outside a %zu-byte buffer", size, offset, b ? b->size : 0);
        return errno = EINVAL, -EINVAL;
    }
    if (dir == XCL_BO_SYNC_BO_TO_DEVICE) memcpy(b->mem + offset, b->host + offset, size);
    else if (dir == XCL_BO_SYNC_BO_FROM_DEVICE) memcpy(b->host + offset, b->mem + offset, size);
    else return errno = EINVAL, -EINVAL;
    logf_("sync %ld %s %zu %zu", b->id, dir == XCL_BO_SYNC_BO_TO_DEVICE ? "to" : "from", offset, size);
    return 0;
}

/* Copies into the host backing storage of a buffer (not to the device: xrtBOSync). */
int xrtBOWrite(xrtBufferHandle h, const void *src, size_t size, size_t seek) {
    struct bo *b = h;
    if (!b || !src || seek > b->size || size > b->size - seek) {
        complain("xrtBOWrite: %zu bytes at %zu outside a %zu-byte buffer", size, seek, b ? b->size : 0);
        return errno = EINVAL, -EINVAL;
    }
    memcpy(b->host + seek, src, size);
    logf_("write %ld %zu %zu", b->id, seek, size);
    return 0;
}

/* Copies out of the host backing storage of a buffer (not from the device: xrtBOSync). */
int xrtBORead(xrtBufferHandle h, void *dst, size_t size, size_t skip) {
    struct bo *b = h;
    if (!b || !dst || skip > b->size || size > b->size - skip) {
        complain("xrtBORead: %zu bytes at %zu outside a %zu-byte buffer", size, skip, b ? b->size : 0);
        return errno = EINVAL, -EINVAL;
    }
    memcpy(dst, b->host + skip, size);
    logf_("read %ld %zu %zu", b->id, skip, size);
    return 0;
}
