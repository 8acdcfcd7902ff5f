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
    bo_bytes, cmd_state_is_final, cmd_state_name, find_bitstream, scalar_vararg, verified_bitstream, VarArg,
    DEVICE_INDEX, PAGE,
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
use tessera_ir::manifest::{Interleave, Manifest};

/// Why the board must not be used any more (set once, by a kernel that did not end).
static POISON: OnceLock<String> = OnceLock::new();

/// An open kernel of the loaded xclbin.
struct OpenKernel {
    handle: KernelHandle,
    /// Its parameters and interleaved arrays.
    layout: Arc<Layout>,
}

/// One parameter of a kernel's top function (`Manifest::kernel_params`).
#[derive(Clone, Debug)]
struct Param {
    /// The argument (index into the manifest's, and the launch's, arguments).
    arg: usize,
    /// A write port of the array (passes the same buffer as its own parameter).
    write_port: bool,
    /// The half of an interleaved array it reaches (0 for every other parameter).
    half: u8,
    /// The scalar count of the array's buffer elements (`Manifest::size_params`).
    size: bool,
    /// Its memory group (`xrtKernelArgGroupId`), `None` for a scalar.
    group: Option<u32>,
}

/// How a kernel is called: its parameters in order (the arguments first, one each,
/// then write ports and the second halves of interleaved arrays) and the interleaved
/// arrays (`Manifest::interleave`).
#[derive(Debug)]
struct Layout {
    params: Vec<Param>,
    /// The manifest's argument count.
    args: usize,
    interleave: Option<Interleave>,
}

impl Layout {
    /// Whether argument `arg` is interleaved over two buffer objects.
    fn interleaved(&self, arg: usize) -> bool {
        self.interleave.as_ref().is_some_and(|il| il.args.contains(&arg))
    }

    /// The memory group of the own parameter of half `half` of argument `arg`.
    fn group(&self, arg: usize, half: u8) -> Option<u32> {
        self.params.iter().find(|p| p.arg == arg && !p.write_port && !p.size && p.half == half).and_then(|p| p.group)
    }
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
    /// Its parameters (memory groups, write ports, halves of interleaved arrays).
    layout: Arc<Layout>,
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

    /// Makes the host view hold the buffer's current data: reads the device copy back
    /// when a kernel may have written it since the last read-back.
    fn host_current(&mut self, generation: u64) -> Result<(), String> {
        if !self.device_newer {
            return Ok(());
        }
        if let Some(b) = &self.binding {
            if b.generation != generation {
                return Err("its device copy belongs to a bitstream that was replaced".into());
            }
            b.bo.sync(ffi::XCL_BO_SYNC_BO_FROM_DEVICE, 0..b.bo.len())?;
        }
        self.device_newer = false;
        Ok(())
    }
}

/// The two halves of an interleaved argument staged for one launch: buffer objects of
/// their own (`xrtBOAlloc`) in the halves' memory groups.
struct Staged {
    /// The argument.
    arg: usize,
    halves: [Bo; 2],
    /// Where its bytes are in the buffer's host view.
    range: Range<usize>,
}

impl Staged {
    /// Stages bytes `range` of `buffer` (brought up to date first) for a launch: two
    /// buffer objects in memory groups `groups`, filled with the halves
    /// (`tessera_ir::manifest::deinterleave`, segments of `il.segment_bytes`) and
    /// synced to the device.
    fn new(
        board: &Board,
        arg: usize,
        buffer: &mut XrtBuffer,
        range: Range<usize>,
        il: &Interleave,
        groups: [u32; 2],
        generation: u64,
    ) -> Result<Staged, String> {
        buffer.host_current(generation)?;
        let view = buffer.host.host_view();
        let bytes = view.get(range.clone()).ok_or_else(|| {
            format!("bytes {range:?} of the argument lie outside its {}-byte device buffer", view.len())
        })?;
        let seg = usize::try_from(il.segment_bytes).ok().filter(|s| s.is_power_of_two()).ok_or_else(|| {
            format!("the manifest's interleave segment of {} bytes is not a power of two", il.segment_bytes)
        })?;
        // Whole pages, at least one (an empty second half included), zero-padded.
        let lens = il.half_bytes(bytes.len()).map(|h| bo_bytes(h).unwrap_or(h));
        let (mut h0, mut h1) = (vec![0u8; lens[0]], vec![0u8; lens[1]]);
        tessera_ir::manifest::deinterleave(bytes, seg, [&mut h0, &mut h1]);
        let halves = [board.device.alloc(lens[0], groups[0])?, board.device.alloc(lens[1], groups[1])?];
        for (bo, data) in halves.iter().zip([&h0, &h1]) {
            bo.write(data, 0)?;
            bo.sync(ffi::XCL_BO_SYNC_BO_TO_DEVICE, 0..bo.len())?;
        }
        Ok(Staged { arg, halves, range })
    }

    /// After the run: both halves synced from the device and interleaved back into the
    /// host view, which then holds the buffer's data; its device copy (a user-pointer
    /// binding) is stale and is synced from the view when a launch binds it next.
    fn finish(self, buffer: &mut XrtBuffer, il: &Interleave) -> Result<(), String> {
        let mut data = [vec![0u8; self.halves[0].len()], vec![0u8; self.halves[1].len()]];
        for (bo, d) in self.halves.iter().zip(data.iter_mut()) {
            bo.sync(ffi::XCL_BO_SYNC_BO_FROM_DEVICE, 0..bo.len())?;
            bo.read(d, 0)?;
        }
        let view = &mut buffer.host.host_view()[self.range];
        tessera_ir::manifest::interleave([&data[0], &data[1]], il.segment_bytes as usize, view);
        buffer.device_newer = false;
        buffer.to_device = true;
        Ok(())
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
            Some(XrtKernel { name: name.to_string(), generation: st.generation, layout: k.layout.clone() })
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
        let layout = Arc::new(layout(manifest, name, &handle)?);
        st.kernels.insert(name.to_string(), OpenKernel { handle, layout: layout.clone() });
        Ok(XrtKernel { name: name.to_string(), generation: st.generation, layout })
    }
}

/// The parameters of kernel `name` (`Manifest::kernel_params`) with the memory group
/// of each array parameter (`xrtKernelArgGroupId`), checked: a write port must be
/// connected to the same memory as the parameter of its array's half (they pass one
/// buffer object), after `Manifest::check_params`.
fn layout(manifest: &Manifest, name: &str, handle: &KernelHandle) -> Result<Layout, String> {
    let kparams = manifest.kernel_params();
    manifest.check_params(name)?;
    let il = manifest.interleave.as_ref();
    let mut params = Vec::with_capacity(kparams.len());
    for (i, p) in kparams.iter().enumerate() {
        let group = match manifest.args[p.arg].array {
            _ if p.size => None,
            None => None,
            Some(_) => Some(handle.group_id(i).map_err(|e| {
                format!("cannot find the memory bank of argument '{}' of kernel {name}: {e}", p.name)
            })?),
        };
        params.push(Param { arg: p.arg, write_port: p.write_port, half: p.half, size: p.size, group });
    }
    // A write port passes the buffer of its array's half a second time: it must be
    // connected to the same memory as that half's own port (`tessera bitstream` does so).
    for (w, kw) in params.iter().zip(&kparams).filter(|(p, _)| p.write_port) {
        let Some((own, kown)) =
            params.iter().zip(&kparams).find(|(p, _)| p.arg == w.arg && !p.write_port && p.half == w.half)
        else {
            return Err(format!("kernel {name}: write port '{}' has no own port of its half", kw.name));
        };
        if own.group != w.group {
            let array = &manifest.args[w.arg].name;
            let buffer = if w.half == 0 {
                format!("the one buffer of '{array}'")
            } else {
                format!("the one buffer of the second half of '{array}'")
            };
            return Err(format!(
                "kernel {name}: its write port '{}' is connected to memory group {} and '{}' to {}; both pass \
                 {buffer}, so the bitstream must connect them to the same bank (rebuild it with `tessera bitstream`)",
                kw.name,
                w.group.unwrap_or_default(),
                kown.name,
                own.group.unwrap_or_default()
            ));
        }
    }
    Ok(Layout { params, args: manifest.args.len(), interleave: il.cloned() })
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
        let layout = &*kernel.layout;
        // Held until the kernel ended: no other xclbin loads meanwhile.
        let st = self.board.state.read().unwrap_or_else(|e| e.into_inner());
        let open =
            st.kernels.get(name).filter(|_| st.generation == kernel.generation).ok_or_else(|| {
                format!("the XRT device's bitstream was replaced while kernel {name} was being prepared")
            })?;
        if layout.args != args.len() {
            return Err(format!("kernel {name}: {} arguments passed, {} expected", args.len(), layout.args));
        }
        for (i, a) in args.iter().enumerate() {
            if let KernelArg::Array { offset, name: arr, .. } = a {
                // An interleaved argument is copied into buffers of its own: any offset.
                if offset % PAGE != 0 && !layout.interleaved(i) {
                    return Err(format!(
                        "kernel {name}: array '{arr}' starts {offset} bytes into the device buffer it is mapped in; \
                         on XRT such an argument is a sub-buffer (xrtBOSubAlloc), which Tessera places only on a \
                         4 KiB page boundary, where the kernel's bursts keep the alignment they are generated for"
                    ));
                }
            }
        }
        let run = open.handle.run().map_err(|e| format!("kernel {name}: {e}"))?;
        // Interleaved arguments: their halves in buffer objects of their own, for this
        // launch (see the module documentation).
        let mut staged: Vec<Staged> = Vec::new();
        if let Some(il) = &layout.interleave {
            for &a in &il.args {
                let Some(KernelArg::Array { buffer, offset, name: arr, elems, elem_size }) = args.get_mut(a) else {
                    return Err(format!("kernel {name}: interleaved argument {a} is not an array"));
                };
                let groups = [0, 1].map(|h| layout.group(a, h));
                let [Some(g0), Some(g1)] = groups else {
                    return Err(format!("kernel {name}: interleaved array '{arr}' has no parameter of each half"));
                };
                let bytes = elems.checked_mul(*elem_size).and_then(|b| b.checked_add(*offset));
                let range = *offset..bytes.ok_or_else(|| format!("kernel {name}: array '{arr}' is too large"))?;
                let s = Staged::new(self.board, a, buffer, range, il, [g0, g1], st.generation)
                    .map_err(|e| format!("kernel {name}: interleaved array '{arr}': {e}"))?;
                staged.push(s);
            }
        }
        // Sub-buffers of arguments inside their mapping; freed after the run.
        let mut subs: Vec<Bo> = Vec::new();
        for (j, p) in layout.params.iter().enumerate() {
            let what = |arr: &str| match (p.write_port, p.half) {
                (false, 0) => format!("array '{arr}'"),
                (true, 0) => format!("write port of '{arr}'"),
                (false, _) => format!("second half of '{arr}'"),
                (true, _) => format!("write port of the second half of '{arr}'"),
            };
            match args.get_mut(p.arg) {
                // The elements of the array's buffer from its element 0 on.
                Some(KernelArg::Array { elems, name: arr, .. }) if p.size => {
                    let n = i64::try_from(*elems).map_err(|_| format!("kernel {name}: array '{arr}' is too large"))?;
                    run.set_scalar(j, VarArg::Long(n)).map_err(|e| format!("kernel {name}: {e}"))?
                }
                Some(KernelArg::Scalar(_)) if p.size => {
                    return Err(format!("kernel {name}: the size parameter {j} names a scalar argument"));
                }
                Some(KernelArg::Scalar(s)) => {
                    run.set_scalar(j, scalar_vararg(s)).map_err(|e| format!("kernel {name}: {e}"))?
                }
                Some(KernelArg::Array { buffer, offset, name: arr, .. }) => {
                    let fail = |e: String| format!("kernel {name}: {}: {e}", what(arr));
                    if let Some(s) = staged.iter().find(|s| s.arg == p.arg) {
                        run.set_bo(j, &s.halves[usize::from(p.half.min(1))]).map_err(fail)?;
                        continue;
                    }
                    let bo = if p.write_port {
                        // The array's buffer object, bound for its own parameter (which
                        // comes first).
                        &buffer.binding.as_ref().ok_or_else(|| fail("the array is not bound".into()))?.bo
                    } else {
                        let group = p.group.ok_or_else(|| fail("not an array parameter".into()))?;
                        buffer.bind(self.board, group, st.generation).map_err(fail)?
                    };
                    if *offset == 0 {
                        run.set_bo(j, bo).map_err(fail)?;
                    } else {
                        let sub = bo.sub(*offset).map_err(fail)?;
                        run.set_bo(j, &sub).map_err(fail)?;
                        subs.push(sub);
                    }
                }
                None => return Err(format!("kernel {name}: parameter {j} names argument {}, of {}", p.arg, args.len())),
            }
        }
        let start = Instant::now();
        run.start().map_err(|e| format!("kernel {name}: {e}"))?;
        let state = run.wait(self.config.xrt_timeout_ms);
        let kernel_wall_s = start.elapsed().as_secs_f64();
        // From here on the kernel may have written every array (an interleaved one's
        // halves: only the staged buffer objects, copied back below).
        for (i, a) in args.iter_mut().enumerate() {
            if let KernelArg::Array { buffer, .. } = a {
                if !layout.interleaved(i) {
                    buffer.device_newer = true;
                }
            }
        }
        if state == ffi::ERT_CMD_STATE_COMPLETED {
            drop(run);
            drop(subs);
            if let Some(il) = &layout.interleave {
                for s in staged {
                    let a = s.arg;
                    let KernelArg::Array { buffer, name: arr, .. } = &mut args[a] else { unreachable!("staged above") };
                    s.finish(buffer, il).map_err(|e| format!("kernel {name}: interleaved array '{arr}': {e}"))?;
                }
            }
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
        std::mem::forget(staged);
        Err(why)
    }
}
