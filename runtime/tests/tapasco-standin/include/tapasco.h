/* tapasco.h of tapasco-standin — NOT TaPaSCo.
 *
 * Written for Tessera's tests. It declares, with the same C types and signatures,
 * the functions of TaPaSCo's C API (libtapasco's `tapasco.h`, which TaPaSCo
 * generates with cbindgen from libtapasco's ffi.rs and installs as
 * <prefix>/include/tapasco/tapasco.h) that tessera-rt's TaPaSCo backend calls, and
 * the types they need. Opaque handles are incomplete structs, as in the real header.
 */
#ifndef TAPASCO_STANDIN_TAPASCO_H
#define TAPASCO_STANDIN_TAPASCO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tlkm_access {
  TlkmAccessExclusive = 0,
  TlkmAccessMonitor,
  TlkmAccessShared,
  TlkmAccessTypes,
} tlkm_access;

typedef struct Device Device;
typedef struct Job Job;
typedef struct TLKM TLKM;
typedef struct Vec_PEParameter Vec_PEParameter;
typedef struct Arc_OffchipMemory Arc_OffchipMemory;

typedef uint32_t DeviceId;
typedef uintptr_t PEId;
typedef uint64_t DeviceAddress;
typedef Vec_PEParameter JobList;
typedef Arc_OffchipMemory TapascoOffchipMemory;

int tapasco_last_error_length(void);
int tapasco_last_error_message(char *buffer, int length);

TLKM *tapasco_tlkm_new(void);
void tapasco_tlkm_destroy(TLKM *t);
intptr_t tapasco_tlkm_device_len(const TLKM *t);
Device *tapasco_tlkm_device_alloc(const TLKM *t, DeviceId id);
void tapasco_tlkm_device_destroy(Device *t);

JobList *tapasco_job_param_new(void);
void tapasco_job_param_destroy(JobList *t);
JobList *tapasco_job_param_single32(uint32_t param, JobList *list);
JobList *tapasco_job_param_single64(uint64_t param, JobList *list);
JobList *tapasco_job_param_deviceaddress(DeviceAddress param, JobList *list);

intptr_t tapasco_device_access(Device *dev, tlkm_access access);
intptr_t tapasco_device_num_pes(Device *dev, PEId id);
PEId tapasco_device_get_pe_id(Device *dev, const char *name);
Job *tapasco_device_acquire_pe(Device *dev, PEId id);
intptr_t tapasco_job_start(Job *job, JobList **params);
intptr_t tapasco_job_release(Job *job, uint64_t *return_value, bool release);

TapascoOffchipMemory *tapasco_get_default_memory(Device *dev);
void tapasco_memory_destroy(TapascoOffchipMemory *t);
intptr_t tapasco_memory_copy_to(TapascoOffchipMemory *mem, const uint8_t *data, DeviceAddress addr, uintptr_t len);
intptr_t tapasco_memory_copy_from(TapascoOffchipMemory *mem, DeviceAddress addr, uint8_t *data, uintptr_t len);
DeviceAddress tapasco_memory_allocate(TapascoOffchipMemory *mem, uintptr_t len);
intptr_t tapasco_memory_free(TapascoOffchipMemory *mem, DeviceAddress addr);

#ifdef __cplusplus
}
#endif

#endif
