/* tapasco-standin — NOT TaPaSCo.
 *
 * A minimal stand-in for the part of TaPaSCo's C API (libtapasco) that tessera-rt's
 * TaPaSCo backend calls, written for Tessera's tests; it contains no TaPaSCo code.
 * See README.md for what it models.
 */
#define _GNU_SOURCE
#include "tapasco.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device memory: one arena at device address BASE (above 4 GiB, so an address
 * truncated to 32 bits is caught), filled with GARBAGE bytes. */
#define BASE UINT64_C(0x100000000)
#define ARENA (64u << 20)
#define GARBAGE 0xA5
#define MAX_BLOCKS 4096
#define MAX_PES 64
#define MAX_ARGS 64

struct block { DeviceAddress addr; uint64_t len; int used; };
struct Arc_OffchipMemory { int unused; };
struct TLKM { int unused; };
typedef void *(*mem_fn)(uint64_t addr, uint64_t bytes);
typedef uint64_t (*avail_fn)(uint64_t addr);
struct pe { char vlnv[256]; PEId id; void (*run)(const uint64_t *, int, mem_fn, avail_fn); };
struct Device { int exclusive; int npes; struct pe pes[MAX_PES]; void *design; };
struct param { int kind; uint64_t value; }; /* kind: 32, 64 or 'A' (device address) */
struct Vec_PEParameter { int n; struct param p[MAX_ARGS]; };
struct Job { Device *dev; struct pe *pe; int started; uint64_t regs[MAX_ARGS]; int nargs; };

static unsigned char *arena;
static uint64_t arena_top = BASE;
static struct block blocks[MAX_BLOCKS];
static int nblocks;
static struct Arc_OffchipMemory the_memory;
static __thread char last_error[1024];

static void standin_log(const char *fmt, ...) {
  const char *path = getenv("TAPASCO_STANDIN_LOG");
  if (!path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static void set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
}

int tapasco_last_error_length(void) { return last_error[0] ? (int)strlen(last_error) + 1 : 0; }

int tapasco_last_error_message(char *buffer, int length) {
  if (!buffer) return -1;
  if (!last_error[0]) return 0;
  int n = (int)strlen(last_error);
  if (length < n + 1) return -1;
  memcpy(buffer, last_error, (size_t)n + 1);
  last_error[0] = 0;
  return n;
}

/* rust_part.rs (archived into the same libtapasco.a). */
size_t tapasco_standin_rust_banner(char *buf, size_t len);

TLKM *tapasco_tlkm_new(void) {
  if (getenv("TAPASCO_STANDIN_NO_DEVICE")) {
    set_error("Error during TLKM operation: Could not open driver chardev /dev/tlkm: No such file or directory (os error 2)");
    return NULL;
  }
  char banner[64];
  tapasco_standin_rust_banner(banner, sizeof banner);
  standin_log("tlkm %s", banner);
  return calloc(1, sizeof(TLKM));
}

void tapasco_tlkm_destroy(TLKM *t) { free(t); }

intptr_t tapasco_tlkm_device_len(const TLKM *t) {
  if (!t) { set_error("null TLKM"); return -1; }
  return 1;
}

/* "Loading the bitstream": the design is the shared object TAPASCO_STANDIN_DESIGN,
 * which exports `tapasco_standin_pes` ("<vlnv>=<id>" lines) and, per PE,
 * `void tapasco_standin_pe_<id>(const uint64_t *args, int nargs,
 *                               void *(*mem)(uint64_t addr, uint64_t len),
 *                               uint64_t (*avail)(uint64_t addr))`. */
Device *tapasco_tlkm_device_alloc(const TLKM *t, DeviceId id) {
  if (!t || id != 0) { set_error("Error during TLKM operation: no device %u", id); return NULL; }
  Device *d = calloc(1, sizeof(Device));
  const char *design = getenv("TAPASCO_STANDIN_DESIGN");
  if (design) {
    d->design = dlopen(design, RTLD_NOW | RTLD_LOCAL);
    if (!d->design) { set_error("standin: cannot open design %s: %s", design, dlerror()); free(d); return NULL; }
    const char *pes = dlsym(d->design, "tapasco_standin_pes");
    if (!pes) { set_error("standin: design %s has no tapasco_standin_pes", design); free(d); return NULL; }
    const char *line = pes;
    while (*line && d->npes < MAX_PES) {
      const char *end = strchr(line, '\n');
      size_t len = end ? (size_t)(end - line) : strlen(line);
      const char *eq = memchr(line, '=', len);
      if (eq && (size_t)(eq - line) < sizeof d->pes[0].vlnv) {
        struct pe *p = &d->pes[d->npes];
        memcpy(p->vlnv, line, (size_t)(eq - line));
        p->id = (PEId)strtoull(eq + 1, NULL, 10);
        char sym[64];
        snprintf(sym, sizeof sym, "tapasco_standin_pe_%" PRIuPTR, (uintptr_t)p->id);
        *(void **)&p->run = dlsym(d->design, sym);
        if (!p->run) { set_error("standin: design %s has no %s", design, sym); free(d); return NULL; }
        d->npes++;
      }
      line += len + (end ? 1 : 0);
    }
  }
  standin_log("device_alloc %d PEs", d->npes);
  return d;
}

void tapasco_tlkm_device_destroy(Device *d) { free(d); }

intptr_t tapasco_device_access(Device *dev, tlkm_access access) {
  if (!dev) { set_error("null device"); return -1; }
  dev->exclusive = access == TlkmAccessExclusive;
  standin_log("access %d", (int)access);
  return 0;
}

static struct pe *find_pe(Device *dev, PEId id) {
  for (int i = 0; i < dev->npes; i++)
    if (dev->pes[i].id == id) return &dev->pes[i];
  return NULL;
}

intptr_t tapasco_device_num_pes(Device *dev, PEId id) {
  if (!dev) { set_error("null device"); return -1; }
  return find_pe(dev, id) ? 1 : 0;
}

PEId tapasco_device_get_pe_id(Device *dev, const char *name) {
  if (!dev || !name) { set_error("null pointer"); return (PEId)-1; }
  for (int i = 0; i < dev->npes; i++)
    if (strcmp(dev->pes[i].vlnv, name) == 0) return dev->pes[i].id;
  set_error("Error during Device operation: Error during Scheduler operation: PE %s not found (%d PEs in the design)",
            name, dev->npes);
  return (PEId)-1;
}

/* Job parameters. */
JobList *tapasco_job_param_new(void) { return calloc(1, sizeof(JobList)); }
void tapasco_job_param_destroy(JobList *t) { free(t); }

static JobList *push(JobList *list, int kind, uint64_t v) {
  if (!list) { set_error("null job list"); return NULL; }
  if (list->n == MAX_ARGS) { set_error("standin: too many arguments"); return NULL; }
  list->p[list->n].kind = kind;
  list->p[list->n].value = v;
  list->n++;
  return list;
}

JobList *tapasco_job_param_single32(uint32_t param, JobList *list) { return push(list, 32, param); }
JobList *tapasco_job_param_single64(uint64_t param, JobList *list) { return push(list, 64, param); }
JobList *tapasco_job_param_deviceaddress(DeviceAddress param, JobList *list) { return push(list, 'A', param); }

/* Memory. */
TapascoOffchipMemory *tapasco_get_default_memory(Device *dev) {
  if (!dev) { set_error("null device"); return NULL; }
  if (!arena) {
    arena = malloc(ARENA);
    if (!arena) { set_error("standin: no memory"); return NULL; }
    memset(arena, GARBAGE, ARENA);
  }
  return &the_memory;
}

void tapasco_memory_destroy(TapascoOffchipMemory *t) { (void)t; }

DeviceAddress tapasco_memory_allocate(TapascoOffchipMemory *mem, uintptr_t len) {
  if (mem != &the_memory) { set_error("bad memory handle"); return UINT64_MAX; }
  uint64_t need = (len + 63) & ~UINT64_C(63);
  if (need == 0) need = 64;
  for (int i = 0; i < nblocks; i++)
    if (!blocks[i].used && blocks[i].len >= need) {
      blocks[i].used = 1;
      standin_log("alloc %#" PRIx64 " %" PRIuPTR, blocks[i].addr, (uintptr_t)len);
      return blocks[i].addr;
    }
  if (nblocks == MAX_BLOCKS || arena_top + need > BASE + ARENA) {
    set_error("Error during Allocator operation: Out of memory (%" PRIuPTR " bytes)", (uintptr_t)len);
    return UINT64_MAX;
  }
  blocks[nblocks] = (struct block){arena_top, need, 1};
  arena_top += need;
  standin_log("alloc %#" PRIx64 " %" PRIuPTR, blocks[nblocks].addr, (uintptr_t)len);
  return blocks[nblocks++].addr;
}

intptr_t tapasco_memory_free(TapascoOffchipMemory *mem, DeviceAddress addr) {
  if (mem != &the_memory) { set_error("bad memory handle"); return -1; }
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].used && blocks[i].addr == addr) {
      blocks[i].used = 0;
      /* Freed memory keeps whatever it held; make it garbage again. */
      memset(arena + (addr - BASE), GARBAGE, blocks[i].len);
      standin_log("free %#" PRIx64, addr);
      return 0;
    }
  set_error("Error during Allocator operation: address %#" PRIx64 " was not allocated", addr);
  return -1;
}

/* The arena bytes [addr, addr+len) inside one allocated block, or NULL. */
static unsigned char *device_range(DeviceAddress addr, uint64_t len) {
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].used && addr >= blocks[i].addr && addr - blocks[i].addr <= blocks[i].len &&
        len <= blocks[i].len - (addr - blocks[i].addr))
      return arena + (addr - BASE);
  return NULL;
}

intptr_t tapasco_memory_copy_to(TapascoOffchipMemory *mem, const uint8_t *data, DeviceAddress addr, uintptr_t len) {
  unsigned char *d = mem == &the_memory ? device_range(addr, len) : NULL;
  if (!d) { set_error("Error during DMA operation: copy to %#" PRIx64 " (%" PRIuPTR " bytes) outside allocated memory", addr, (uintptr_t)len); return -1; }
  memcpy(d, data, len);
  standin_log("copy_to %#" PRIx64 " %" PRIuPTR, addr, (uintptr_t)len);
  return 0;
}

intptr_t tapasco_memory_copy_from(TapascoOffchipMemory *mem, DeviceAddress addr, uint8_t *data, uintptr_t len) {
  unsigned char *d = mem == &the_memory ? device_range(addr, len) : NULL;
  if (!d) { set_error("Error during DMA operation: copy from %#" PRIx64 " (%" PRIuPTR " bytes) outside allocated memory", addr, (uintptr_t)len); return -1; }
  memcpy(data, d, len);
  standin_log("copy_from %#" PRIx64 " %" PRIuPTR, addr, (uintptr_t)len);
  return 0;
}

/* Jobs: the kernel runs in tapasco_job_release (it waits for the PE to finish). */
Job *tapasco_device_acquire_pe(Device *dev, PEId id) {
  if (!dev) { set_error("null device"); return NULL; }
  if (!dev->exclusive) { set_error("Error during Device operation: Device 0 is not in exclusive access mode"); return NULL; }
  struct pe *p = find_pe(dev, id);
  if (!p) { set_error("Error during Device operation: Error during Scheduler operation: No PE of type %" PRIuPTR, (uintptr_t)id); return NULL; }
  Job *j = calloc(1, sizeof(Job));
  j->dev = dev;
  j->pe = p;
  /* The argument registers hold garbage until written. */
  memset(j->regs, GARBAGE, sizeof j->regs);
  standin_log("acquire %" PRIuPTR, (uintptr_t)id);
  return j;
}

intptr_t tapasco_job_start(Job *job, JobList **params) {
  if (!job || !params || !*params) { set_error("null pointer passed into tapasco_job_start()"); return -1; }
  JobList *l = *params;
  *params = NULL;
  char line[2048];
  int at = snprintf(line, sizeof line, "start %" PRIuPTR, (uintptr_t)job->pe->id);
  for (int i = 0; i < l->n; i++) {
    if (l->p[i].kind == 32)  /* a 32-bit write: the register's upper half keeps its old bits */
      job->regs[i] = (job->regs[i] & ~UINT64_C(0xffffffff)) | (uint32_t)l->p[i].value;
    else
      job->regs[i] = l->p[i].value;
    const char *k = l->p[i].kind == 32 ? "s32" : l->p[i].kind == 64 ? "s64" : "addr";
    if (at < (int)sizeof line) at += snprintf(line + at, sizeof line - (size_t)at, " %s:%#" PRIx64, k, l->p[i].value);
  }
  job->nargs = l->n;
  job->started = 1;
  free(l);
  standin_log("%s", line);
  return 0;
}

static void *kernel_memory(uint64_t addr, uint64_t len) {
  unsigned char *d = device_range(addr, len);
  if (!d) {
    fprintf(stderr, "tapasco-standin: a kernel accessed device address %#" PRIx64 " (%" PRIu64
                    " bytes) outside allocated memory\n", addr, len);
    abort();
  }
  return d;
}

/* Bytes of allocated device memory from `addr` to the end of its allocation (0 when
 * `addr` is in none). */
static uint64_t kernel_avail(uint64_t addr) {
  for (int i = 0; i < nblocks; i++)
    if (blocks[i].used && addr >= blocks[i].addr && addr - blocks[i].addr < blocks[i].len)
      return blocks[i].len - (addr - blocks[i].addr);
  return 0;
}

intptr_t tapasco_job_release(Job *job, uint64_t *return_value, bool release) {
  if (!job) { set_error("null job"); return -1; }
  if (!job->started) { set_error("Error during Job operation: job was not started"); return -1; }
  job->pe->run(job->regs, job->nargs, kernel_memory, kernel_avail);
  standin_log("release %" PRIuPTR " %d", (uintptr_t)job->pe->id, (int)release);
  if (return_value) *return_value = 0;
  free(job);
  return 0;
}
