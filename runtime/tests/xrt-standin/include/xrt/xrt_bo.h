/* NOT XRT. Tessera's stand-in for the subset of XRT's C API that tessera-rt's XRT
 * backend calls (see ../../README.md). */
#ifndef TESSERA_XRT_STANDIN_BO_H
#define TESSERA_XRT_STANDIN_BO_H

#include <stddef.h>
#include <stdint.h>
#include "xrt/xrt_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define XCL_BO_FLAGS_NONE (0)

enum xclBOSyncDirection {
    XCL_BO_SYNC_BO_TO_DEVICE = 0,
    XCL_BO_SYNC_BO_FROM_DEVICE,
    XCL_BO_SYNC_BO_GMIO_TO_AIE,
    XCL_BO_SYNC_BO_AIE_TO_GMIO,
};

typedef void *xrtBufferHandle;
typedef uint64_t xrtBufferFlags;
typedef uint32_t xrtMemoryGroup;

xrtBufferHandle xrtBOAllocUserPtr(xrtDeviceHandle dhdl, void *userptr, size_t size, xrtBufferFlags flags,
                                  xrtMemoryGroup grp);
xrtBufferHandle xrtBOAlloc(xrtDeviceHandle dhdl, size_t size, xrtBufferFlags flags, xrtMemoryGroup grp);
xrtBufferHandle xrtBOSubAlloc(xrtBufferHandle parent, size_t size, size_t offset);
int xrtBOFree(xrtBufferHandle bhdl);
int xrtBOSync(xrtBufferHandle bhdl, enum xclBOSyncDirection dir, size_t size, size_t offset);
int xrtBOWrite(xrtBufferHandle bhdl, const void *src, size_t size, size_t seek);
int xrtBORead(xrtBufferHandle bhdl, void *dst, size_t size, size_t skip);

#ifdef __cplusplus
}
#endif
#endif
