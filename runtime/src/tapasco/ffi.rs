//! TaPaSCo's C API, as bindgen generated it from the installed `tapasco/tapasco.h`
//! (`build/tapasco.rs` allowlists exactly the functions below), and thin wrappers
//! that turn its failure values (null, -1, `PEId::MAX`, `DeviceAddress::MAX`) into
//! `Err(reason)` with libtapasco's last error message.
//!
//! libtapasco keeps its last error per thread (`tapasco_last_error_length`,
//! `tapasco_last_error_message`, which also clears it).

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, missing_docs)]

use super::Param;
use std::ffi::{c_char, CString};

/// The generated declarations (`$OUT_DIR/tapasco_sys.rs`).
mod sys {
    #![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, missing_docs)]
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/tapasco_sys.rs"));
}

pub use sys::{Device, Job, JobList, TapascoOffchipMemory, TLKM};

/// libtapasco's last error message of this thread (taken), or a placeholder naming
/// the call when it set none.
pub fn last_error(call: &str) -> String {
    // SAFETY: plain calls; the buffer has the length passed.
    unsafe {
        let len = sys::tapasco_last_error_length();
        if len <= 0 {
            return format!("{call} failed (libtapasco gave no reason)");
        }
        let mut buf = vec![0u8; len as usize + 1];
        let n = sys::tapasco_last_error_message(buf.as_mut_ptr() as *mut c_char, buf.len() as i32);
        if n <= 0 {
            return format!("{call} failed (libtapasco's reason could not be read)");
        }
        buf.truncate(n as usize);
        format!("{call} failed: {}", String::from_utf8_lossy(&buf))
    }
}

/// `tapasco_tlkm_new`: access to the tlkm driver.
pub fn tlkm_new() -> Result<*mut TLKM, String> {
    // SAFETY: plain call; null means failure.
    let t = unsafe { sys::tapasco_tlkm_new() };
    if t.is_null() {
        return Err(last_error("tapasco_tlkm_new"));
    }
    Ok(t)
}

/// `tapasco_tlkm_device_len`: how many TaPaSCo devices the driver lists.
///
/// # Safety
/// `t` is a live driver handle.
pub unsafe fn device_len(t: *mut TLKM) -> Result<usize, String> {
    let n = sys::tapasco_tlkm_device_len(t);
    if n < 0 {
        return Err(last_error("tapasco_tlkm_device_len"));
    }
    Ok(n as usize)
}

/// `tapasco_tlkm_device_alloc(t, id)` followed by `tapasco_device_access(exclusive)`
/// (libtapasco acquires PEs only with exclusive access).
///
/// # Safety
/// `t` is a live driver handle.
pub unsafe fn open_device(t: *mut TLKM, id: u32) -> Result<*mut Device, String> {
    let d = sys::tapasco_tlkm_device_alloc(t, id);
    if d.is_null() {
        return Err(last_error(&format!("tapasco_tlkm_device_alloc({id})")));
    }
    if sys::tapasco_device_access(d, sys::TlkmAccessExclusive) < 0 {
        return Err(last_error("tapasco_device_access(exclusive)"));
    }
    Ok(d)
}

/// `tapasco_get_default_memory`.
///
/// # Safety
/// `d` is a live device.
pub unsafe fn default_memory(d: *mut Device) -> Result<*mut TapascoOffchipMemory, String> {
    let m = sys::tapasco_get_default_memory(d);
    if m.is_null() {
        return Err(last_error("tapasco_get_default_memory"));
    }
    Ok(m)
}

/// `tapasco_device_get_pe_id(d, vlnv)`.
///
/// # Safety
/// `d` is a live device.
pub unsafe fn pe_id(d: *mut Device, vlnv: &str) -> Result<usize, String> {
    let c = CString::new(vlnv).map_err(|_| format!("VLNV {vlnv:?} contains a NUL byte"))?;
    let id = sys::tapasco_device_get_pe_id(d, c.as_ptr());
    if id == usize::MAX {
        return Err(last_error("tapasco_device_get_pe_id"));
    }
    Ok(id)
}

/// `tapasco_device_num_pes(d, id)` (negative on error).
///
/// # Safety
/// `d` is a live device.
pub unsafe fn num_pes(d: *mut Device, id: usize) -> isize {
    sys::tapasco_device_num_pes(d, id)
}

/// `tapasco_memory_allocate(m, len)`: a device address.
///
/// # Safety
/// `m` is a live memory handle.
pub unsafe fn allocate(m: *mut TapascoOffchipMemory, len: usize) -> Result<u64, String> {
    let a = sys::tapasco_memory_allocate(m, len);
    if a == u64::MAX {
        return Err(last_error(&format!("tapasco_memory_allocate({len} bytes)")));
    }
    Ok(a)
}

/// `tapasco_memory_free(m, addr)`.
///
/// # Safety
/// `m` is a live memory handle.
pub unsafe fn free(m: *mut TapascoOffchipMemory, addr: u64) -> Result<(), String> {
    if sys::tapasco_memory_free(m, addr) < 0 {
        return Err(last_error("tapasco_memory_free"));
    }
    Ok(())
}

/// `tapasco_memory_copy_to(m, data, addr, len)`.
///
/// # Safety
/// `m` is a live memory handle.
pub unsafe fn copy_to(m: *mut TapascoOffchipMemory, data: &[u8], addr: u64) -> Result<(), String> {
    if sys::tapasco_memory_copy_to(m, data.as_ptr(), addr, data.len()) < 0 {
        return Err(last_error("tapasco_memory_copy_to"));
    }
    Ok(())
}

/// `tapasco_memory_copy_from(m, addr, data, len)`.
///
/// # Safety
/// `m` is a live memory handle.
pub unsafe fn copy_from(m: *mut TapascoOffchipMemory, addr: u64, data: &mut [u8]) -> Result<(), String> {
    if sys::tapasco_memory_copy_from(m, addr, data.as_mut_ptr(), data.len()) < 0 {
        return Err(last_error("tapasco_memory_copy_from"));
    }
    Ok(())
}

/// One job argument.
pub enum Arg {
    /// A device address (an array).
    Address(u64),
    /// A scalar register value.
    Scalar(Param),
}

/// Starts one job on a PE of kind `id`: builds the argument list, acquires the PE and
/// starts the job; [`release`] waits for it.
///
/// # Safety
/// `d` is a live device with exclusive access.
pub unsafe fn start_job(d: *mut Device, id: usize, args: &[Arg]) -> Result<*mut Job, String> {
    let mut list: *mut JobList = sys::tapasco_job_param_new();
    if list.is_null() {
        return Err(last_error("tapasco_job_param_new"));
    }
    for a in args {
        let r = match *a {
            Arg::Address(addr) => sys::tapasco_job_param_deviceaddress(addr, list),
            Arg::Scalar(Param::Single32(v)) => sys::tapasco_job_param_single32(v, list),
            Arg::Scalar(Param::Single64(v)) => sys::tapasco_job_param_single64(v, list),
        };
        if r.is_null() {
            let e = last_error("tapasco_job_param_*");
            sys::tapasco_job_param_destroy(list);
            return Err(e);
        }
    }
    let job = sys::tapasco_device_acquire_pe(d, id);
    if job.is_null() {
        let e = last_error(&format!("tapasco_device_acquire_pe({id})"));
        sys::tapasco_job_param_destroy(list);
        return Err(e);
    }
    // tapasco_job_start takes the list (and sets the pointer to null).
    if sys::tapasco_job_start(job, &mut list) < 0 {
        let e = last_error("tapasco_job_start");
        if !list.is_null() {
            sys::tapasco_job_param_destroy(list);
        }
        return Err(e);
    }
    Ok(job)
}

/// `tapasco_job_release(job, &ret, true)`: waits for the PE's interrupt, releases the
/// PE and frees the job; the PE's return value.
///
/// # Safety
/// `job` was started by [`start_job`] and is released once.
pub unsafe fn release(job: *mut Job) -> Result<u64, String> {
    let mut ret = 0u64;
    if sys::tapasco_job_release(job, &mut ret, true) < 0 {
        return Err(last_error("tapasco_job_release"));
    }
    Ok(ret)
}
