//! The board: one XRT device per process, the xclbin loaded on it, its open kernels,
//! and the [`Device`] implementation that launches on it.
//!
//! Process state. Device [`DEVICE_INDEX`] is opened at the first probe and kept for the
//! process lifetime (success and failure are both remembered, so a machine without a
//! board pays for `xrtDeviceOpen` once). The board holds one xclbin at a time: loading
//! another bitstream (a region whose kernel lives in a different file) closes the open
//! kernels, loads it and bumps a *generation* number. Kernels and buffer bindings
//! remember the generation they were made under, and a launch checks it under the
//! state's read lock, so a launch never uses a kernel of an unloaded xclbin and no
//! reload happens while a kernel runs (launches of the same xclbin run concurrently).
//! A path that failed to load is remembered and not tried again.
//!
//! A kernel that does not end within the timeout may still write device memory: its
//! run handle and every buffer object alive at that moment are leaked on purpose, and
//! the board is *poisoned*, so every later probe fails with that reason.

use super::ffi::{self, Bo, DeviceHandle, KernelHandle};
use super::{
    cmd_state_is_final, cmd_state_name, find_bitstream, scalar_vararg, verified_bitstream, DEVICE_INDEX, PAGE,
};
use crate::config::Config;
use crate::data::HostBuffer;
use crate::device::{Device, DeviceBuffer, DeviceKind, KernelArg, LaunchStats};
use crate::report::Arrays;
use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Instant;
use tessera_ir::manifest::Manifest;

/// Why the board must not be used any more (set once, by a kernel that did not end).
static POISON: OnceLock<String> = OnceLock::new();

/// An open kernel of the loaded xclbin.
struct OpenKernel {
    handle: KernelHandle,
    /// Memory group of every argument, in manifest order (`None` for scalars).
    groups: Arc<Vec<Option<u32>>>,
    /// `Manifest::write_ports`.
    write_ports: Arc<Vec<usize>>,
}

/// What is loaded on the board.
#[derive(Default)]
struct Loaded {
    /// Bumped by every (attempted) xclbin load.
    generation: u64,
    /// The loaded xclbin and its UUID.
    xclbin: Option<(PathBuf, [u8; 16])>,
    /// Kernels of the loaded xclbin opened so far, by name.
    kernels: BTreeMap<String, OpenKernel>,
    /// Bitstreams that failed to load, with the reason.
    failed: BTreeMap<PathBuf, String>,
}

/// The process's board.
struct Board {
    device: DeviceHandle,
    state: RwLock<Loaded>,
}

/// The board, opened at the first call.
fn board() -> Result<&'static Board, String> {
    static BOARD: OnceLock<Result<Board, String>> = OnceLock::new();
    if let Some(why) = POISON.get() {
        return Err(why.clone());
    }
    BOARD
        .get_or_init(|| DeviceHandle::open(DEVICE_INDEX).map(|device| Board { device, state: RwLock::default() }))
        .as_ref()
        .map_err(String::clone)
}

/// Whether the board can be used: device [`DEVICE_INDEX`] opened and nothing poisoned it.
pub fn probe() -> Result<(), String> {
    board().map(|_| ())
}

/// The XRT device (device [`DEVICE_INDEX`]) as a [`Device`].
pub struct XrtDevice {
    board: &'static Board,
    config: Config,
}

impl XrtDevice {
    /// The board with the region's configuration (bitstream directory, timeout).
    pub fn new(config: &Config) -> Result<XrtDevice, String> {
        Ok(XrtDevice { board: board()?, config: config.clone() })
    }
}

/// A kernel of the loaded xclbin, ready to launch.
#[derive(Clone)]
pub struct XrtKernel {
    name: String,
    generation: u64,
    groups: Arc<Vec<Option<u32>>>,
    /// `Manifest::write_ports`: the arguments whose buffer is also passed to the
    /// kernel parameter after the arguments (its write port), in order.
    write_ports: Arc<Vec<usize>>,
}

/// The buffer object of an [`XrtBuffer`] and the binding it was made for.
struct Binding {
    bo: Bo,
    group: u32,
    generation: u64,
}

/// An array's memory: 4 KiB-aligned host memory in whole pages, wrapped at launch in
/// a buffer object in the bank of the kernel argument it is passed as.
pub struct XrtBuffer {
    /// Declared before `host`: freed first (it wraps `host`'s memory).
    binding: Option<Binding>,
    host: ManuallyDrop<HostBuffer>,
    /// The host view holds data the device has not seen yet.
    to_device: bool,
    /// A kernel may have written the device copy since the last read-back.
    device_newer: bool,
}

impl XrtBuffer {
    /// Makes sure a buffer object in memory group `group` of generation `generation`
    /// wraps this memory and holds the host view's contents.
    fn bind(&mut self, board: &Board, group: u32, generation: u64) -> Result<&Bo, String> {
        let current = matches!(&self.binding, Some(b) if b.group == group && b.generation == generation);
        if !current {
            if let Some(old) = self.binding.take() {
                if self.device_newer {
                    if old.generation != generation {
                        return Err("its device copy belongs to a bitstream that was replaced".into());
                    }
                    old.bo.sync(ffi::XCL_BO_SYNC_BO_FROM_DEVICE, 0..old.bo.len())?;
                    self.device_newer = false;
                }
            }
            let len = self.host.capacity();
            // SAFETY: `host` lives, unmoved (heap memory), until after the binding is
            // dropped: `binding` is dropped first (field order and `Drop`).
            let bo = unsafe { board.device.alloc_userptr(self.host.as_mut_ptr(), len, group)? };
            self.binding = Some(Binding { bo, group, generation });
            // A fresh buffer object's device memory holds nothing yet.
            self.to_device = true;
        }
        let b = self.binding.as_ref().expect("bound above");
        if self.to_device {
            b.bo.sync(ffi::XCL_BO_SYNC_BO_TO_DEVICE, 0..b.bo.len())?;
            self.to_device = false;
        }
        Ok(&b.bo)
    }
}

/// A new buffer of `bytes` bytes (zeroed host memory, bound to a bank at its first
/// launch): what `Device::alloc` and the data environment's mappings allocate.
pub fn new_buffer(bytes: usize) -> Result<XrtBuffer, String> {
    let host = HostBuffer::new(bytes)?;
    debug_assert_eq!(Some(host.capacity()), super::bo_bytes(bytes));
    Ok(XrtBuffer { binding: None, host: ManuallyDrop::new(host), to_device: true, device_newer: false })
}

impl DeviceBuffer for XrtBuffer {
    fn host_view(&mut self) -> &mut [u8] {
        self.host.host_view()
    }
    fn sync_to_device(&mut self, range: Range<usize>) -> Result<(), String> {
        if range.is_empty() {
            return Ok(());
        }
        match &self.binding {
            Some(b) => b.bo.sync(ffi::XCL_BO_SYNC_BO_TO_DEVICE, range)?,
            // The whole view is synced when a launch binds the buffer to its bank.
            None => self.to_device = true,
        }
        Ok(())
    }
    fn sync_from_device(&mut self, range: Range<usize>) -> Result<(), String> {
        if range.is_empty() {
            return Ok(());
        }
        if let (Some(b), true) = (&self.binding, self.device_newer) {
            let whole = range.start == 0 && range.end >= self.host.host_view().len();
            b.bo.sync(ffi::XCL_BO_SYNC_BO_FROM_DEVICE, range)?;
            if whole {
                self.device_newer = false;
            }
        }
        Ok(())
    }
    fn release(&mut self) -> Result<(), String> {
        let Some(b) = self.binding.take() else { return Ok(()) };
        if self.device_newer {
            if let Err(e) = b.bo.sync(ffi::XCL_BO_SYNC_BO_FROM_DEVICE, 0..b.bo.len()) {
                self.binding = Some(b);
                return Err(e);
            }
            self.device_newer = false;
        }
        // The buffer object is freed; the next launch makes a new one from the view.
        drop(b);
        self.to_device = true;
        Ok(())
    }
}

impl Drop for XrtBuffer {
    fn drop(&mut self) {
        if POISON.get().is_some() {
            // A kernel that never ended may still use this memory: leak it.
            std::mem::forget(self.binding.take());
            return;
        }
        self.binding = None;
        // SAFETY: dropped once, after the buffer object wrapping it was freed.
        unsafe { ManuallyDrop::drop(&mut self.host) };
    }
}

impl XrtDevice {
    /// The kernel `name` of bitstream `path`, loading the bitstream and opening the
    /// kernel if needed.
    fn kernel(&self, manifest: &Manifest, name: &str, path: PathBuf) -> Result<XrtKernel, String> {
        let ready = |st: &Loaded| -> Option<XrtKernel> {
            let (loaded, _) = st.xclbin.as_ref()?;
            let k = st.kernels.get(name).filter(|_| *loaded == path)?;
            Some(XrtKernel {
                name: name.to_string(),
                generation: st.generation,
                groups: k.groups.clone(),
                write_ports: k.write_ports.clone(),
            })
        };
        if let Some(k) = ready(&self.board.state.read().unwrap_or_else(|e| e.into_inner())) {
            return Ok(k);
        }
        let mut st = self.board.state.write().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = ready(&st) {
            return Ok(k);
        }
        if let Some(why) = st.failed.get(&path) {
            return Err(why.clone());
        }
        if st.xclbin.as_ref().is_none_or(|(p, _)| *p != path) {
            // Kernels of the old xclbin must be closed before another one loads.
            st.kernels.clear();
            st.xclbin = None;
            st.generation += 1;
            match self.board.device.load_xclbin(&path) {
                Ok(uuid) => st.xclbin = Some((path.clone(), uuid)),
                Err(why) => {
                    st.failed.insert(path, why.clone());
                    return Err(why);
                }
            }
        }
        let uuid = st.xclbin.as_ref().expect("loaded above").1;
        let handle =
            self.board.device.open_kernel(&uuid, name).map_err(|e| format!("{e} (bitstream {})", path.display()))?;
        let mut groups = Vec::with_capacity(manifest.args.len());
        for (i, a) in manifest.args.iter().enumerate() {
            groups.push(match a.array {
                None => None,
                Some(_) => Some(handle.group_id(i).map_err(|e| {
                    format!("cannot find the memory bank of argument '{}' of kernel {name}: {e}", a.name)
                })?),
            });
        }
        // A write port passes its array's buffer a second time: it must be connected
        // to the same memory as the array's own port (`tessera bitstream` does so).
        for (j, &a) in manifest.write_ports.iter().enumerate() {
            let param = manifest.args.len() + j;
            let arg = manifest.args.get(a).filter(|x| x.array.is_some()).ok_or_else(|| {
                format!("kernel {name}: the manifest's write port {j} names argument {a}, which is not an array")
            })?;
            let port = tessera_ir::manifest::write_port_name(&arg.name);
            let g = handle
                .group_id(param)
                .map_err(|e| format!("cannot find the memory bank of argument '{port}' of kernel {name}: {e}"))?;
            if Some(g) != groups[a] {
                return Err(format!(
                    "kernel {name}: its write port '{port}' is connected to memory group {g} and '{}' to {:?}; both \
                     pass the one buffer of '{}', so the bitstream must connect them to the same bank (rebuild it \
                     with `tessera bitstream`)",
                    arg.name,
                    groups[a].unwrap_or_default(),
                    arg.name
                ));
            }
        }
        let groups = Arc::new(groups);
        let write_ports = Arc::new(manifest.write_ports.clone());
        st.kernels.insert(
            name.to_string(),
            OpenKernel { handle, groups: groups.clone(), write_ports: write_ports.clone() },
        );
        Ok(XrtKernel { name: name.to_string(), generation: st.generation, groups, write_ports })
    }
}

impl Device for XrtDevice {
    type Buffer = XrtBuffer;
    type Kernel = XrtKernel;

    fn kind(&self) -> DeviceKind {
        DeviceKind::Xrt
    }

    fn load(&self, manifest: &Manifest) -> Result<XrtKernel, String> {
        let name = manifest.kernel.as_deref().ok_or("the region's manifest names no kernel")?;
        let path = verified_bitstream(&self.config, manifest)?;
        self.kernel(manifest, name, path)
    }

    fn reconfigures(&self, manifest: &Manifest) -> bool {
        let Ok(path) = find_bitstream(&self.config, manifest) else { return false };
        let st = self.board.state.read().unwrap_or_else(|e| e.into_inner());
        st.xclbin.as_ref().is_some_and(|(loaded, _)| *loaded != path)
    }

    fn alloc(&self, bytes: usize) -> Result<XrtBuffer, String> {
        new_buffer(bytes)
    }

    fn launch(&self, kernel: &XrtKernel, args: &mut [KernelArg<'_, XrtBuffer>]) -> Result<LaunchStats, String> {
        let name = &kernel.name;
        // Held until the kernel ended: no other xclbin loads meanwhile.
        let st = self.board.state.read().unwrap_or_else(|e| e.into_inner());
        let open =
            st.kernels.get(name).filter(|_| st.generation == kernel.generation).ok_or_else(|| {
                format!("the XRT device's bitstream was replaced while kernel {name} was being prepared")
            })?;
        if kernel.groups.len() != args.len() {
            return Err(format!("kernel {name}: {} arguments passed, {} expected", args.len(), kernel.groups.len()));
        }
        for a in args.iter() {
            if let KernelArg::Array { offset, name: arr, .. } = a {
                if offset % PAGE != 0 {
                    return Err(format!(
                        "kernel {name}: array '{arr}' starts {offset} bytes into the device buffer it is mapped in; \
                         on XRT such an argument is a sub-buffer (xrtBOSubAlloc), which Tessera places only on a \
                         4 KiB page boundary, where the kernel's bursts keep the alignment they are generated for"
                    ));
                }
            }
        }
        let run = open.handle.run().map_err(|e| format!("kernel {name}: {e}"))?;
        // Sub-buffers of arguments inside their mapping; freed after the run.
        let mut subs: Vec<Bo> = Vec::new();
        for (i, a) in args.iter_mut().enumerate() {
            match a {
                KernelArg::Array { buffer, offset, name: arr, .. } => {
                    let group =
                        kernel.groups[i].ok_or_else(|| format!("kernel {name}: argument '{arr}' is not an array"))?;
                    let bo = buffer
                        .bind(self.board, group, st.generation)
                        .map_err(|e| format!("kernel {name}: array '{arr}': {e}"))?;
                    if *offset == 0 {
                        run.set_bo(i, bo).map_err(|e| format!("kernel {name}: array '{arr}': {e}"))?;
                    } else {
                        let sub = bo.sub(*offset).map_err(|e| format!("kernel {name}: array '{arr}': {e}"))?;
                        run.set_bo(i, &sub).map_err(|e| format!("kernel {name}: array '{arr}': {e}"))?;
                        subs.push(sub);
                    }
                }
                KernelArg::Scalar(s) => {
                    run.set_scalar(i, scalar_vararg(s)).map_err(|e| format!("kernel {name}: {e}"))?
                }
            }
        }
        // The write ports: the same buffer (or sub-buffer) again, bound above.
        for (j, &a) in kernel.write_ports.iter().enumerate() {
            let param = args.len() + j;
            let KernelArg::Array { buffer, offset, name: arr, .. } = &args[a] else {
                return Err(format!("kernel {name}: write port {j} names argument {a}, which is not an array"));
            };
            let bo = &buffer.binding.as_ref().ok_or_else(|| format!("kernel {name}: array '{arr}' is not bound"))?.bo;
            if *offset == 0 {
                run.set_bo(param, bo).map_err(|e| format!("kernel {name}: write port of '{arr}': {e}"))?;
            } else {
                let sub = bo.sub(*offset).map_err(|e| format!("kernel {name}: write port of '{arr}': {e}"))?;
                run.set_bo(param, &sub).map_err(|e| format!("kernel {name}: write port of '{arr}': {e}"))?;
                subs.push(sub);
            }
        }
        let start = Instant::now();
        run.start().map_err(|e| format!("kernel {name}: {e}"))?;
        let state = run.wait(self.config.xrt_timeout_ms);
        let kernel_wall_s = start.elapsed().as_secs_f64();
        // From here on the kernel may have written every array.
        for a in args.iter_mut() {
            if let KernelArg::Array { buffer, .. } = a {
                buffer.device_newer = true;
            }
        }
        if state == ffi::ERT_CMD_STATE_COMPLETED {
            drop(run);
            drop(subs);
            let arrays = args
                .iter()
                .filter_map(|a| match a {
                    // Hardware has no exact traffic counters: nothing is guessed.
                    KernelArg::Array { name, .. } => Some((name.to_string(), None)),
                    KernelArg::Scalar(_) => None,
                })
                .collect();
            return Ok(LaunchStats { kernel_wall_s, arrays: Arrays(arrays), streams: Default::default() });
        }
        let what = if state == ffi::ERT_CMD_STATE_TIMEOUT {
            format!("did not finish within {} ms (TESSERA_XRT_TIMEOUT_MS)", self.config.xrt_timeout_ms)
        } else {
            format!("ended in state {} ({state})", cmd_state_name(state))
        };
        if cmd_state_is_final(state) {
            return Err(format!("kernel {name} {what}"));
        }
        // The kernel may still be running: never free what it may touch.
        let why = format!("kernel {name} {what}; the XRT device is not used again in this process");
        let _ = POISON.set(why.clone());
        std::mem::forget(run);
        std::mem::forget(subs);
        Err(why)
    }
}
