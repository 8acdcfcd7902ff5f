/* NOT XRT. Tessera's stand-in for the subset of XRT's C API that tessera-rt's XRT
 * backend calls (see ../../README.md). */
#ifndef TESSERA_XRT_STANDIN_KERNEL_H
#define TESSERA_XRT_STANDIN_KERNEL_H

#include "xrt/xrt_bo.h"
#include "xrt/xrt_device.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ert_cmd_state {
    ERT_CMD_STATE_NEW = 1,
    ERT_CMD_STATE_QUEUED = 2,
    ERT_CMD_STATE_RUNNING = 3,
    ERT_CMD_STATE_COMPLETED = 4,
    ERT_CMD_STATE_ERROR = 5,
    ERT_CMD_STATE_ABORT = 6,
    ERT_CMD_STATE_SUBMITTED = 7,
    ERT_CMD_STATE_TIMEOUT = 8,
    ERT_CMD_STATE_NORESPONSE = 9,
    ERT_CMD_STATE_SKERROR = 10,
    ERT_CMD_STATE_SKCRASHED = 11,
    ERT_CMD_STATE_MAX,
};

typedef void *xrtKernelHandle;
typedef void *xrtRunHandle;

xrtKernelHandle xrtPLKernelOpen(xrtDeviceHandle deviceHandle, const xuid_t xclbinId, const char *name);
int xrtKernelClose(xrtKernelHandle kernelHandle);
int xrtKernelArgGroupId(xrtKernelHandle kernelHandle, int argno);
xrtRunHandle xrtRunOpen(xrtKernelHandle kernelHandle);
int xrtRunSetArg(xrtRunHandle rhdl, int index, ...);
int xrtRunStart(xrtRunHandle rhdl);
enum ert_cmd_state xrtRunWait(xrtRunHandle rhdl);
enum ert_cmd_state xrtRunWaitFor(xrtRunHandle rhdl, unsigned int timeout_ms);
int xrtRunClose(xrtRunHandle rhdl);

#ifdef __cplusplus
}
#endif
#endif
