//! XRT's native C API, as bindgen generated it from `$XILINX_XRT/include` (`build.rs`
//! allowlists exactly the functions below and the types they need), and owning
//! wrappers that release each handle on drop.
//!
//! | wrapper | acquired by | released by |
//! |---|---|---|
//! | [`DeviceHandle`] | `xrtDeviceOpen` | `xrtDeviceClose` |
//! | [`KernelHandle`] | `xrtPLKernelOpen` | `xrtKernelClose` |
//! | [`Bo`] | `xrtBOAllocUserPtr`, `xrtBOAlloc`, `xrtBOSubAlloc` | `xrtBOFree` |
//! | [`Run`] | `xrtRunOpen` | `xrtRunClose` |
//!
//! Every function of the C API catches XRT's C++ exceptions, prints them (per
//! `xrt.ini`), sets `errno` for some, and returns null, -1 or `ERT_CMD_STATE_ABORT`;
//! the wrappers turn that into `Err(reason)`, with `errno`'s text when XRT set it.

#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, missing_docs)]

use super::VarArg;
use std::ffi::{c_int, c_void, CString};
use std::path::Path;

/// The generated declarations (`$OUT_DIR/xrt_sys.rs`).
mod sys {
    #![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code, missing_docs)]
    #![allow(clippy::all)]
    include!(concat!(env!("OUT_DIR"), "/xrt_sys.rs"));
}

pub use sys::{
    ert_cmd_state, xclBOSyncDirection, ERT_CMD_STATE_COMPLETED, ERT_CMD_STATE_TIMEOUT, XCL_BO_SYNC_BO_FROM_DEVICE,
    XCL_BO_SYNC_BO_TO_DEVICE,
};

/// Clears `errno` before a call, so [`errno_suffix`] reports only what XRT set.
fn clear_errno() {
    // SAFETY: the calling thread's errno slot.
    unsafe { *libc::__errno_location() = 0 };
}

/// `": <strerror>"` when the last call set `errno`, else empty.
fn errno_suffix() -> String {
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(0) | None => String::new(),
        Some(_) => format!(": {e}"),
    }
}

/// An open device (`xrtDeviceOpen`).
pub struct DeviceHandle(sys::xrtDeviceHandle);

// XRT's device handles may be used from any thread.
unsafe impl Send for DeviceHandle {}
unsafe impl Sync for DeviceHandle {}

impl DeviceHandle {
    /// Opens device `index`.
    pub fn open(index: u32) -> Result<DeviceHandle, String> {
        clear_errno();
        // SAFETY: plain call; null means failure.
        let h = unsafe { sys::xrtDeviceOpen(index) };
        if h.is_null() {
            return Err(format!("no XRT device (xrtDeviceOpen({index}) failed{})", errno_suffix()));
        }
        Ok(DeviceHandle(h))
    }

    /// Loads the xclbin file at `path` onto the device (replacing the loaded one) and
    /// returns its UUID.
    pub fn load_xclbin(&self, path: &Path) -> Result<[u8; 16], String> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| format!("bitstream path {} contains a NUL byte", path.display()))?;
        clear_errno();
        // SAFETY: valid handle and NUL-terminated path.
        if unsafe { sys::xrtDeviceLoadXclbinFile(self.0, c.as_ptr()) } != 0 {
            return Err(format!(
                "cannot load bitstream {} on the XRT device (xrtDeviceLoadXclbinFile failed{})",
                path.display(),
                errno_suffix()
            ));
        }
        let mut uuid = [0u8; 16];
        clear_errno();
        // SAFETY: `uuid` is the 16-byte xuid_t the function fills.
        if unsafe { sys::xrtDeviceGetXclbinUUID(self.0, uuid.as_mut_ptr()) } != 0 {
            return Err(format!(
                "cannot read the UUID of bitstream {} (xrtDeviceGetXclbinUUID failed{})",
                path.display(),
                errno_suffix()
            ));
        }
        Ok(uuid)
    }

    /// Opens compute unit(s) of kernel `name` of the loaded xclbin `uuid` (shared).
    pub fn open_kernel(&self, uuid: &[u8; 16], name: &str) -> Result<KernelHandle, String> {
        let c = CString::new(name).map_err(|_| format!("kernel name {name:?} contains a NUL byte"))?;
        clear_errno();
        // SAFETY: valid handle, 16-byte uuid, NUL-terminated name.
        let h = unsafe { sys::xrtPLKernelOpen(self.0, uuid.as_ptr(), c.as_ptr()) };
        if h.is_null() {
            return Err(format!(
                "the loaded bitstream has no kernel '{name}' (xrtPLKernelOpen failed{})",
                errno_suffix()
            ));
        }
        Ok(KernelHandle(h))
    }

    /// Allocates a buffer object over `len` bytes of page-aligned host memory at `ptr`
    /// in memory group `group` (a value of `xrtKernelArgGroupId`).
    ///
    /// # Safety
    /// `ptr` must stay valid, and must not move, until the buffer object is freed.
    pub unsafe fn alloc_userptr(&self, ptr: *mut u8, len: usize, group: u32) -> Result<Bo, String> {
        clear_errno();
        let h = sys::xrtBOAllocUserPtr(
            self.0,
            ptr as *mut c_void,
            len,
            sys::XCL_BO_FLAGS_NONE as sys::xrtBufferFlags,
            group,
        );
        if h.is_null() {
            return Err(format!(
                "cannot allocate a {len}-byte buffer object in memory group {group:#x} (xrtBOAllocUserPtr failed{})",
                errno_suffix()
            ));
        }
        Ok(Bo { handle: h, len })
    }

    /// Allocates a buffer object of `len` bytes with host backing storage of its own
    /// (filled with [`Bo::write`], read with [`Bo::read`], moved with [`Bo::sync`]) in
    /// memory group `group` (a value of `xrtKernelArgGroupId`).
    pub fn alloc(&self, len: usize, group: u32) -> Result<Bo, String> {
        clear_errno();
        // SAFETY: valid handle; XRT allocates and owns the memory.
        let h = unsafe { sys::xrtBOAlloc(self.0, len, sys::XCL_BO_FLAGS_NONE as sys::xrtBufferFlags, group) };
        if h.is_null() {
            return Err(format!(
                "cannot allocate a {len}-byte buffer object in memory group {group:#x} (xrtBOAlloc failed{})",
                errno_suffix()
            ));
        }
        Ok(Bo { handle: h, len })
    }
}

impl Drop for DeviceHandle {
    fn drop(&mut self) {
        // SAFETY: opened by `open`, closed once.
        unsafe { sys::xrtDeviceClose(self.0) };
    }
}

/// An open kernel (`xrtPLKernelOpen`).
pub struct KernelHandle(sys::xrtKernelHandle);

// XRT's kernel handles may be used from any thread.
unsafe impl Send for KernelHandle {}
unsafe impl Sync for KernelHandle {}

impl KernelHandle {
    /// The memory group (bank and xclbin slot, encoded as buffer-object flags) that
    /// argument `argno` is connected to.
    pub fn group_id(&self, argno: usize) -> Result<u32, String> {
        let i = c_int::try_from(argno).map_err(|_| format!("argument number {argno} is too large"))?;
        clear_errno();
        // SAFETY: valid handle; XRT checks the index.
        let g = unsafe { sys::xrtKernelArgGroupId(self.0, i) };
        if g < 0 {
            return Err(format!("xrtKernelArgGroupId({argno}) failed{}", errno_suffix()));
        }
        Ok(g as u32)
    }

    /// Opens a run (one execution's argument set) of this kernel.
    pub fn run(&self) -> Result<Run, String> {
        clear_errno();
        // SAFETY: valid handle.
        let h = unsafe { sys::xrtRunOpen(self.0) };
        if h.is_null() {
            return Err(format!("xrtRunOpen failed{}", errno_suffix()));
        }
        Ok(Run(h))
    }
}

impl Drop for KernelHandle {
    fn drop(&mut self) {
        // SAFETY: opened by `open_kernel`, closed once.
        unsafe { sys::xrtKernelClose(self.0) };
    }
}

/// A buffer object: over host memory (`xrtBOAllocUserPtr`), a sub-buffer
/// (`xrtBOSubAlloc`), or with host backing storage of XRT's (`xrtBOAlloc`).
pub struct Bo {
    handle: sys::xrtBufferHandle,
    len: usize,
}

// A buffer object is used by one thread at a time (its owner's).
unsafe impl Send for Bo {}

impl Bo {
    /// Copies bytes `range` of the buffer host → device or device → host.
    pub fn sync(&self, dir: xclBOSyncDirection, range: std::ops::Range<usize>) -> Result<(), String> {
        let what = if dir == XCL_BO_SYNC_BO_TO_DEVICE { "TO_DEVICE" } else { "FROM_DEVICE" };
        if range.start > range.end || range.end > self.len {
            return Err(format!("xrtBOSync({what}): bytes {range:?} outside the {}-byte buffer object", self.len));
        }
        clear_errno();
        // SAFETY: valid handle; the range lies inside the buffer (checked above).
        if unsafe { sys::xrtBOSync(self.handle, dir, range.end - range.start, range.start) } != 0 {
            return Err(format!(
                "xrtBOSync({what}, {} bytes at offset {}) failed{}",
                range.end - range.start,
                range.start,
                errno_suffix()
            ));
        }
        Ok(())
    }

    /// Copies `data` into the buffer object's host backing storage at byte `seek`
    /// (`xrtBOWrite`; [`sync`](Self::sync) then moves it to the device).
    pub fn write(&self, data: &[u8], seek: usize) -> Result<(), String> {
        if seek.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return Err(format!("xrtBOWrite: {} bytes at {seek} outside the {}-byte buffer object", data.len(), self.len));
        }
        clear_errno();
        // SAFETY: valid handle; `data` is readable for its length, inside the buffer.
        if unsafe { sys::xrtBOWrite(self.handle, data.as_ptr() as *const c_void, data.len(), seek) } != 0 {
            return Err(format!("xrtBOWrite({} bytes at offset {seek}) failed{}", data.len(), errno_suffix()));
        }
        Ok(())
    }

    /// Copies the buffer object's host backing storage from byte `skip` into `data`
    /// (`xrtBORead`; after a [`sync`](Self::sync) from the device).
    pub fn read(&self, data: &mut [u8], skip: usize) -> Result<(), String> {
        if skip.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return Err(format!("xrtBORead: {} bytes at {skip} outside the {}-byte buffer object", data.len(), self.len));
        }
        clear_errno();
        // SAFETY: valid handle; `data` is writable for its length, inside the buffer.
        if unsafe { sys::xrtBORead(self.handle, data.as_mut_ptr() as *mut c_void, data.len(), skip) } != 0 {
            return Err(format!("xrtBORead({} bytes at offset {skip}) failed{}", data.len(), errno_suffix()));
        }
        Ok(())
    }

    /// Bytes of the buffer object.
    pub fn len(&self) -> usize {
        self.len
    }

    /// A sub-buffer (`xrtBOSubAlloc`) from byte `offset` to the end: the same device
    /// memory, at the parent's device address + `offset`.
    pub fn sub(&self, offset: usize) -> Result<Bo, String> {
        if offset >= self.len {
            return Err(format!("sub-buffer at byte {offset} of a {}-byte buffer object", self.len));
        }
        let len = self.len - offset;
        clear_errno();
        // SAFETY: valid parent handle; XRT checks size and offset against it and keeps
        // the parent alive while the sub-buffer lives.
        let h = unsafe { sys::xrtBOSubAlloc(self.handle, len, offset) };
        if h.is_null() {
            return Err(format!(
                "cannot make a {len}-byte sub-buffer at byte {offset} (xrtBOSubAlloc failed{})",
                errno_suffix()
            ));
        }
        Ok(Bo { handle: h, len })
    }

    /// The handle, for `xrtRunSetArg`.
    pub fn raw(&self) -> sys::xrtBufferHandle {
        self.handle
    }
}

impl Drop for Bo {
    fn drop(&mut self) {
        // SAFETY: allocated by `alloc_userptr`, `alloc` or `sub`, freed once.
        unsafe { sys::xrtBOFree(self.handle) };
    }
}

/// One execution of a kernel (`xrtRunOpen`).
pub struct Run(sys::xrtRunHandle);

impl Run {
    /// Sets argument `index` to buffer object `bo`.
    pub fn set_bo(&self, index: usize, bo: &Bo) -> Result<(), String> {
        let i = c_int::try_from(index).map_err(|_| format!("argument number {index} is too large"))?;
        clear_errno();
        // SAFETY: valid run; XRT reads one xrtBufferHandle for a global argument.
        if unsafe { sys::xrtRunSetArg(self.0, i, bo.raw()) } != 0 {
            return Err(format!("xrtRunSetArg({index}, buffer) failed{}", errno_suffix()));
        }
        Ok(())
    }

    /// Sets scalar argument `index`, passed with C's default argument promotions.
    pub fn set_scalar(&self, index: usize, v: VarArg) -> Result<(), String> {
        let i = c_int::try_from(index).map_err(|_| format!("argument number {index} is too large"))?;
        clear_errno();
        // SAFETY: valid run; XRT reads one value of the promoted type of the
        // argument's host type (see `VarArg`).
        let rc = unsafe {
            match v {
                VarArg::Int(x) => sys::xrtRunSetArg(self.0, i, x),
                VarArg::UInt(x) => sys::xrtRunSetArg(self.0, i, x),
                VarArg::Long(x) => sys::xrtRunSetArg(self.0, i, x),
                VarArg::ULong(x) => sys::xrtRunSetArg(self.0, i, x),
                VarArg::Double(x) => sys::xrtRunSetArg(self.0, i, x),
            }
        };
        if rc != 0 {
            return Err(format!("xrtRunSetArg({index}, {v:?}) failed{}", errno_suffix()));
        }
        Ok(())
    }

    /// Starts the run.
    pub fn start(&self) -> Result<(), String> {
        clear_errno();
        // SAFETY: valid run.
        if unsafe { sys::xrtRunStart(self.0) } != 0 {
            return Err(format!("xrtRunStart failed{}", errno_suffix()));
        }
        Ok(())
    }

    /// Waits for the run to end, at most `timeout_ms` milliseconds (0: no limit), and
    /// returns its state (`ERT_CMD_STATE_TIMEOUT` when the time ran out).
    pub fn wait(&self, timeout_ms: u32) -> ert_cmd_state {
        // SAFETY: valid run.
        unsafe {
            if timeout_ms == 0 {
                sys::xrtRunWait(self.0)
            } else {
                sys::xrtRunWaitFor(self.0, timeout_ms)
            }
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        // SAFETY: opened by `KernelHandle::run`, closed once.
        unsafe { sys::xrtRunClose(self.0) };
    }
}
