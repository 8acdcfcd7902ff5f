//! The C entry points of OpenMP's device memory routines (OpenMP 5.2, §18.8):
//! `omp_target_alloc`, `omp_target_free`, `omp_target_memcpy`,
//! `omp_target_is_present`, and `__tgt_get_num_devices`, through which libomp answers
//! `omp_get_num_devices()` and `omp_get_initial_device()`. They parse their arguments
//! and call the data environment's owner ([`DataEnvironment`](crate::environment::DataEnvironment)),
//! like the directives' entry points.
//!
//! Device numbers: with a device (data directives map on the emulated device or the
//! board), `omp_get_num_devices()` is 1, device 0 is Tessera's and device 1
//! (`omp_get_initial_device()`) the host; without one, there are no devices and 0 is
//! the host. Plain `clang -fopenmp` links none of these routines (they live in
//! libomptarget, linked only with offload targets); a program that calls them links
//! with Tessera's runtime.

use crate::directives::process_envs;
use crate::process_config;
use std::ffi::{c_int, c_void};

/// libomp's question for `omp_get_num_devices()` (and `omp_get_initial_device()`,
/// which is that number): 1 when a device executes data directives, else 0.
#[unsafe(no_mangle)]
pub extern "C" fn __tgt_get_num_devices() -> c_int {
    process_envs().num_devices(process_config())
}

/// `omp_target_alloc(size, device_num)`.
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_alloc(size: usize, device_num: c_int) -> *mut c_void {
    process_envs().target_alloc(process_config(), size, device_num)
}

/// `omp_target_free(device_ptr, device_num)`.
///
/// # Safety
/// As OpenMP requires: the block is not used after the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_target_free(device_ptr: *mut c_void, _device_num: c_int) {
    if !device_ptr.is_null() {
        process_envs().target_free(device_ptr);
    }
}

/// `omp_target_memcpy(dst, src, length, dst_offset, src_offset, dst_device_num,
/// src_device_num)`: 0 on success; on failure nonzero, with the reason on stderr.
///
/// # Safety
/// Host addresses must be valid for the copy, as OpenMP requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_target_memcpy(
    dst: *mut c_void,
    src: *const c_void,
    length: usize,
    dst_offset: usize,
    src_offset: usize,
    dst_device_num: c_int,
    src_device_num: c_int,
) -> c_int {
    let dst = (dst as *mut u8).wrapping_add(dst_offset);
    let src = (src as *const u8).wrapping_add(src_offset);
    match process_envs().target_memcpy(process_config(), (dst, dst_device_num), (src, src_device_num), length) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tessera: omp_target_memcpy: {e}");
            1
        }
    }
}

/// `omp_target_is_present(ptr, device_num)`.
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_is_present(ptr: *const c_void, device_num: c_int) -> c_int {
    c_int::from(process_envs().target_is_present(process_config(), ptr, device_num))
}
