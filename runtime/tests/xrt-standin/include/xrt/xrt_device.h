/* NOT XRT. Tessera's stand-in for the subset of XRT's C API that tessera-rt's XRT
 * backend calls (see ../../README.md). Declarations written for Tessera's tests; the
 * types and signatures follow XRT 2.x's public C API so that bindgen produces the
 * same Rust declarations as from a real installation. */
#ifndef TESSERA_XRT_STANDIN_DEVICE_H
#define TESSERA_XRT_STANDIN_DEVICE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void *xrtDeviceHandle;
typedef unsigned char xuid_t[16];

xrtDeviceHandle xrtDeviceOpen(unsigned int index);
int xrtDeviceClose(xrtDeviceHandle dhdl);
int xrtDeviceLoadXclbinFile(xrtDeviceHandle dhdl, const char *xclbin_fnm);
int xrtDeviceGetXclbinUUID(xrtDeviceHandle dhdl, xuid_t out);

#ifdef __cplusplus
}
#endif
#endif
