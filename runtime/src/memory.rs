//! The C entry points of OpenMP's device memory routines (OpenMP 5.2, §18.8):
//! `omp_target_alloc`, `omp_target_free`, `omp_target_memcpy`,
//! `omp_target_memcpy_rect`, `omp_target_is_present`, `omp_get_mapped_ptr`,
//! `omp_target_is_accessible`, and `__tgt_get_num_devices`, through which libomp answers
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

/// `omp_target_memcpy_rect(dst, src, element_size, num_dims, volume, dst_offsets,
/// src_offsets, dst_dimensions, src_dimensions, dst_device_num, src_device_num)`:
/// copies the `volume` sub-box at `src_offsets` of the `num_dims`-dimensional array
/// `src` (extents `src_dimensions`, row-major, elements of `element_size` bytes) to
/// `dst_offsets` of `dst`, one [`omp_target_memcpy`] per innermost run. 0 on success,
/// nonzero on failure (reason on stderr; runs before the failing one were copied, as
/// OpenMP leaves a failed copy's destination unspecified). With `dst` and `src` both
/// null it returns the number of dimensions it supports: any (`INT_MAX`, as
/// libomptarget).
///
/// # Safety
/// The arrays of `num_dims` sizes must be valid, and host addresses valid for the
/// copy, as OpenMP requires.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn omp_target_memcpy_rect(
    dst: *mut c_void,
    src: *const c_void,
    element_size: usize,
    num_dims: c_int,
    volume: *const usize,
    dst_offsets: *const usize,
    src_offsets: *const usize,
    dst_dimensions: *const usize,
    src_dimensions: *const usize,
    dst_device_num: c_int,
    src_device_num: c_int,
) -> c_int {
    if dst.is_null() && src.is_null() {
        return c_int::MAX;
    }
    let fail = |e: String| {
        eprintln!("tessera: omp_target_memcpy_rect: {e}");
        1
    };
    let Ok(nd) = usize::try_from(num_dims) else { return fail(format!("num_dims {num_dims} is negative")) };
    if nd == 0 || dst.is_null() || src.is_null() || [volume, dst_offsets, src_offsets, dst_dimensions, src_dimensions].iter().any(|p| p.is_null()) {
        return fail("null array or dimension count 0".into());
    }
    let slice = |p: *const usize| std::slice::from_raw_parts(p, nd);
    let runs = match rect_runs(element_size, slice(volume), slice(dst_offsets), slice(src_offsets), slice(dst_dimensions), slice(src_dimensions)) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let (envs, config) = (process_envs(), process_config());
    for (d, s, len) in runs {
        let dst = (dst as *mut u8).wrapping_add(d);
        let src = (src as *const u8).wrapping_add(s);
        if let Err(e) = envs.target_memcpy(config, (dst, dst_device_num), (src, src_device_num), len) {
            return fail(e);
        }
    }
    0
}

/// The contiguous runs `(dst byte offset, src byte offset, bytes)` of a rectangular
/// copy (see [`omp_target_memcpy_rect`]), innermost dimension contiguous; an error
/// when the box leaves an array or a size overflows.
fn rect_runs(
    elem: usize,
    volume: &[usize],
    dst_off: &[usize],
    src_off: &[usize],
    dst_dims: &[usize],
    src_dims: &[usize],
) -> Result<Vec<(usize, usize, usize)>, String> {
    let nd = volume.len();
    for k in 0..nd {
        for (what, off, dims) in [("destination", dst_off, dst_dims), ("source", src_off, src_dims)] {
            if off[k].checked_add(volume[k]).is_none_or(|end| end > dims[k]) {
                return Err(format!(
                    "the box leaves the {what} array in dimension {k} (offset {} + volume {} > extent {})",
                    off[k], volume[k], dims[k]
                ));
            }
        }
    }
    // Byte strides of each dimension.
    let strides = |dims: &[usize]| -> Result<Vec<usize>, String> {
        let mut s = vec![elem; nd];
        for k in (0..nd - 1).rev() {
            s[k] = s[k + 1].checked_mul(dims[k + 1]).ok_or("array size overflows")?;
        }
        Ok(s)
    };
    let (ds, ss) = (strides(dst_dims)?, strides(src_dims)?);
    let len = volume[nd - 1].checked_mul(elem).ok_or("run size overflows")?;
    if volume.contains(&0) || len == 0 {
        return Ok(Vec::new());
    }
    let mut runs = Vec::new();
    let mut idx = vec![0usize; nd - 1];
    loop {
        let at = |off: &[usize], st: &[usize]| -> usize {
            (0..nd - 1).map(|k| (off[k] + idx[k]) * st[k]).sum::<usize>() + off[nd - 1] * st[nd - 1]
        };
        runs.push((at(dst_off, &ds), at(src_off, &ss), len));
        // Next index of the outer dimensions, last fastest.
        let mut k = nd - 1;
        loop {
            if k == 0 {
                return Ok(runs);
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < volume[k] {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// `omp_get_mapped_ptr(ptr, device_num)`: the device address of mapped host data.
/// Tessera names device data by the host address it is mapped from (as
/// `is_device_ptr` and [`omp_target_memcpy`] do), so that is `ptr` itself when it lies
/// in the device's data environment, and null otherwise; on the host device, `ptr`.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_mapped_ptr(ptr: *const c_void, device_num: c_int) -> *mut c_void {
    if !ptr.is_null() && process_envs().target_is_present(process_config(), ptr, device_num) {
        ptr as *mut c_void
    } else {
        std::ptr::null_mut()
    }
}

/// `omp_target_is_accessible(ptr, size, device_num)`: whether the device can reach
/// host memory directly — only the host device can (Tessera's device has memory of
/// its own, reached through maps and copies).
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_is_accessible(_ptr: *const c_void, _size: usize, device_num: c_int) -> c_int {
    c_int::from(process_envs().device_num(process_config(), device_num) == crate::environment::DeviceNum::Host)
}

/// `omp_target_is_present(ptr, device_num)`.
#[unsafe(no_mangle)]
pub extern "C" fn omp_target_is_present(ptr: *const c_void, device_num: c_int) -> c_int {
    c_int::from(process_envs().target_is_present(process_config(), ptr, device_num))
}

#[cfg(test)]
mod tests {
    use super::rect_runs;

    /// A 2×3 box at (1, 2) of a 4×6 array of 8-byte elements into the corner of
    /// another: one run per row, the rows 48 bytes apart.
    #[test]
    fn rectangular_copies_are_runs_of_the_innermost_dimension() {
        let runs = rect_runs(8, &[2, 3], &[0, 0], &[1, 2], &[4, 6], &[4, 6]).unwrap();
        assert_eq!(runs, vec![(0, 64, 24), (48, 112, 24)]);
        let runs = rect_runs(4, &[2, 2, 2], &[0, 0, 0], &[1, 1, 1], &[2, 2, 2], &[3, 3, 3]).unwrap();
        assert_eq!(runs, vec![(0, 52, 8), (8, 64, 8), (16, 88, 8), (24, 100, 8)]);
        assert!(rect_runs(8, &[2, 5], &[0, 0], &[1, 2], &[4, 6], &[4, 6]).unwrap_err().contains("source array in dimension 1"));
        assert!(rect_runs(8, &[0, 3], &[0, 0], &[0, 0], &[4, 6], &[4, 6]).unwrap().is_empty());
    }
}
