//! The board: TaPaSCo device [`DEVICE_INDEX`] with exclusive access, opened once per
//! process (success and failure are both remembered), its default memory, the PEs
//! found so far, and the [`Device`] implementation. Every libtapasco call happens
//! under one lock: launches from several threads run one after the other.
//!
//! A job that does not end within `TESSERA_TAPASCO_TIMEOUT_MS` may still write device
//! memory: the thread waiting in `tapasco_job_release` and every device allocation
//! alive then are left alone for the rest of the process, and the board is *poisoned*:
//! every later region runs on the host with that reason.

use super::ffi::{self, Arg};
use super::{check_pe, scalar_param, Param, DEVICE_INDEX};
use crate::config::Config;
use crate::data::HostBuffer;
use crate::device::{Device, DeviceBuffer, DeviceKind, KernelArg, LaunchStats};
use crate::report::Arrays;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{mpsc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tessera_ir::manifest::{Interleave, Manifest};

/// Why the board must not be used any more (set once, by a job that did not end).
static POISON: OnceLock<String> = OnceLock::new();

/// The open device and its default memory.
struct Handles {
    device: *mut ffi::Device,
    memory: *mut ffi::TapascoOffchipMemory,
}

/// The process's board.
pub struct Board {
    handles: Mutex<Handles>,
    /// Kernels checked so far: name → PE ID, or why not.
    pes: Mutex<BTreeMap<String, Result<usize, String>>>,
}

// The handles are only used under `handles`' lock; libtapasco's objects are not tied
// to the thread that made them.
unsafe impl Send for Board {}
unsafe impl Sync for Board {}

impl Board {
    fn lock(&self) -> MutexGuard<'_, Handles> {
        self.handles.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn open() -> Result<Board, String> {
    let t = ffi::tlkm_new().map_err(|e| {
        format!("no TaPaSCo device ({e}; is TaPaSCo's driver tlkm loaded? `tapasco-load-bitstream … --reload-driver` loads it)")
    })?;
    // SAFETY: `t` is live; it and the device stay alive for the process.
    unsafe {
        if ffi::device_len(t)? == 0 {
            return Err("no TaPaSCo device (the tlkm driver lists none)".into());
        }
        let device = ffi::open_device(t, DEVICE_INDEX).map_err(|e| format!("cannot open TaPaSCo device 0: {e}"))?;
        let memory = ffi::default_memory(device).map_err(|e| format!("TaPaSCo device 0: {e}"))?;
        Ok(Board { handles: Mutex::new(Handles { device, memory }), pes: Mutex::new(BTreeMap::new()) })
    }
}

/// The board, opened at the first call.
fn board() -> Result<&'static Board, String> {
    static BOARD: OnceLock<Result<Board, String>> = OnceLock::new();
    if let Some(why) = POISON.get() {
        return Err(why.clone());
    }
    BOARD.get_or_init(open).as_ref().map_err(String::clone)
}

/// Whether the board opens (for data directives).
pub fn probe() -> Result<(), String> {
    board().map(|_| ())
}

/// A buffer of `bytes` bytes of the board's memory with its host view.
fn alloc_on(board: &'static Board, bytes: usize) -> Result<TapascoBuffer, String> {
    let host = HostBuffer::new(bytes)?;
    let h = board.lock();
    // Whole pages, like the host view's padding (a wide port's last beat).
    // SAFETY: live memory handle under the lock.
    let addr = unsafe { ffi::allocate(h.memory, host.capacity())? };
    Ok(TapascoBuffer { host, addr, board })
}

/// A buffer for the data environment (the board opened if needed).
pub fn new_buffer(bytes: usize) -> Result<TapascoBuffer, String> {
    alloc_on(board()?, bytes)
}

/// The TaPaSCo device as a [`Device`].
pub struct TapascoDevice {
    board: &'static Board,
    /// `TESSERA_TAPASCO_TIMEOUT_MS` (0: wait forever).
    timeout_ms: u32,
}

impl TapascoDevice {
    /// The board (opened once per process).
    pub fn new(config: &Config) -> Result<TapascoDevice, String> {
        let board = board().map_err(|e| format!("TESSERA_DEVICE=tapasco but {e}"))?;
        Ok(TapascoDevice { board, timeout_ms: config.tapasco_timeout_ms })
    }
}

/// A kernel's PE kind, checked against the design.
#[derive(Clone)]
pub struct TapascoKernel {
    name: String,
    id: usize,
    /// The PE's arguments after the manifest's (`Manifest::kernel_params`): write ports
    /// and the second halves of interleaved arrays, as (argument, half), then the
    /// arrays' sizes (`Manifest::size_params`), as (argument, size).
    extra: Vec<(usize, u8, bool)>,
    /// `Manifest::interleave`.
    interleave: Option<Interleave>,
}

/// The halves of an interleaved argument staged for one launch: two allocations of
/// the board's memory.
struct Staged {
    /// The argument.
    arg: usize,
    /// Device addresses of half 0 and half 1.
    halves: [u64; 2],
    /// Their bytes (whole pages).
    lens: [usize; 2],
}

/// Frees the staged halves (after the job, or when it did not start).
///
/// # Safety
/// `h` is the board's locked handles; the halves were allocated from its memory and
/// no job uses them any more.
unsafe fn free_staged(h: &Handles, staged: &[Staged]) {
    for s in staged {
        for &a in &s.halves {
            // A failure leaves the block allocated, which is all that can be done here.
            let _ = ffi::free(h.memory, a);
        }
    }
}

/// Stages the `bytes` bytes of an interleaved argument at device address `addr`:
/// copies them to the host, splits them into the halves (`deinterleave`) and copies
/// each into an allocation of its own.
///
/// # Safety
/// `h` is the board's locked handles; `addr..addr + bytes` lies in one allocation.
unsafe fn stage(h: &Handles, arg: usize, addr: u64, bytes: usize, il: &Interleave) -> Result<Staged, String> {
    let seg = usize::try_from(il.segment_bytes)
        .ok()
        .filter(|s| s.is_power_of_two())
        .ok_or_else(|| format!("the manifest's interleave segment of {} bytes is not a power of two", il.segment_bytes))?;
    let mut data = vec![0u8; bytes];
    ffi::copy_from(h.memory, addr, &mut data)?;
    // Whole pages, at least one (an empty second half included), zero-padded.
    let lens = il.half_bytes(bytes).map(|b| b.max(1).next_multiple_of(4096));
    let (mut h0, mut h1) = (vec![0u8; lens[0]], vec![0u8; lens[1]]);
    tessera_ir::manifest::deinterleave(&data, seg, [&mut h0, &mut h1]);
    let a0 = ffi::allocate(h.memory, lens[0])?;
    let staged = match ffi::allocate(h.memory, lens[1]) {
        Ok(a1) => Staged { arg, halves: [a0, a1], lens },
        Err(e) => {
            let _ = ffi::free(h.memory, a0);
            return Err(e);
        }
    };
    for (&a, d) in staged.halves.iter().zip([&h0, &h1]) {
        if let Err(e) = ffi::copy_to(h.memory, d, a) {
            free_staged(h, std::slice::from_ref(&staged));
            return Err(e);
        }
    }
    Ok(staged)
}

/// After the job: gathers the halves back (`interleave`) into the argument's `bytes`
/// bytes at device address `addr`.
///
/// # Safety
/// As for [`stage`].
unsafe fn unstage(h: &Handles, s: &Staged, addr: u64, bytes: usize, il: &Interleave) -> Result<(), String> {
    let mut halves = [vec![0u8; s.lens[0]], vec![0u8; s.lens[1]]];
    for (&a, d) in s.halves.iter().zip(halves.iter_mut()) {
        ffi::copy_from(h.memory, a, d)?;
    }
    let mut data = vec![0u8; bytes];
    tessera_ir::manifest::interleave([&halves[0], &halves[1]], il.segment_bytes as usize, &mut data);
    ffi::copy_to(h.memory, &data, addr)
}

/// An array's memory: host memory (the view) and as many bytes of the board's memory.
pub struct TapascoBuffer {
    host: HostBuffer,
    addr: u64,
    board: &'static Board,
}

impl DeviceBuffer for TapascoBuffer {
    fn host_view(&mut self) -> &mut [u8] {
        self.host.host_view()
    }
    fn sync_to_device(&mut self, range: Range<usize>) -> Result<(), String> {
        if range.is_empty() {
            return Ok(());
        }
        let h = self.board.lock();
        let bytes = &self.host.host_view()[range.clone()];
        // SAFETY: live memory handle under the lock; the range is inside the allocation.
        unsafe { ffi::copy_to(h.memory, bytes, self.addr + range.start as u64) }
    }
    fn sync_from_device(&mut self, range: Range<usize>) -> Result<(), String> {
        if range.is_empty() {
            return Ok(());
        }
        let h = self.board.lock();
        let addr = self.addr + range.start as u64;
        let bytes = &mut self.host.host_view()[range];
        // SAFETY: as above.
        unsafe { ffi::copy_from(h.memory, addr, bytes) }
    }
}

impl Drop for TapascoBuffer {
    fn drop(&mut self) {
        if POISON.get().is_some() {
            // A job that never ended may still write this memory: leave it allocated.
            return;
        }
        let h = self.board.lock();
        // SAFETY: allocated by `alloc` from this memory; freed once. A failure leaves
        // the block allocated, which is all that can be done here.
        let _ = unsafe { ffi::free(h.memory, self.addr) };
    }
}

impl Device for TapascoDevice {
    type Buffer = TapascoBuffer;
    type Kernel = TapascoKernel;

    fn kind(&self) -> DeviceKind {
        DeviceKind::Tapasco
    }

    fn load(&self, manifest: &Manifest) -> Result<TapascoKernel, String> {
        let name = manifest.kernel.as_deref().ok_or("the region's manifest names no kernel")?;
        let exe = std::env::current_exe().ok();
        let want = tessera_ir::tapasco::kernel_id(&manifest.hash).ok_or_else(|| {
            format!(
                "the manifest of kernel {name} has no hash, so its TaPaSCo kernel ID is unknown; recompile the program \
                 with `tessera cc` and {}",
                super::rebuild_hint(exe.as_deref())
            )
        })?;
        let mut pes = self.board.pes.lock().unwrap_or_else(|e| e.into_inner());
        let checked = pes
            .entry(format!("{name}#{want}"))
            .or_insert_with(|| {
                let h = self.board.lock();
                // SAFETY: live device under the lock.
                let (found, count) = unsafe {
                    let found = ffi::pe_id(h.device, &tessera_ir::tapasco::vlnv(name));
                    (found, ffi::num_pes(h.device, want as usize))
                };
                check_pe(name, want, found, count, exe.as_deref()).map(|()| want as usize)
            })
            .clone();
        manifest.check_params(name)?;
        let il = manifest.interleave.as_ref();
        let extra = manifest.kernel_params().iter().skip(manifest.args.len()).map(|p| (p.arg, p.half, p.size)).collect();
        checked.map(|id| TapascoKernel { name: name.to_string(), id, extra, interleave: il.cloned() })
    }

    fn alloc(&self, bytes: usize) -> Result<TapascoBuffer, String> {
        alloc_on(self.board, bytes)
    }

    fn launch(&self, kernel: &TapascoKernel, args: &mut [KernelArg<'_, TapascoBuffer>]) -> Result<LaunchStats, String> {
        let name = &kernel.name;
        let h = self.board.lock();
        if let Some(why) = POISON.get() {
            return Err(why.clone());
        }
        // Interleaved arguments: their halves in allocations of their own, for this job.
        // Each argument's bytes: (device address, bytes).
        let span = |a: &KernelArg<'_, TapascoBuffer>| -> Result<(u64, usize), String> {
            let KernelArg::Array { buffer, offset, elems, elem_size, name: arr } = a else {
                return Err(format!("kernel {name}: an interleaved argument is a scalar"));
            };
            let bytes = elems.checked_mul(*elem_size).filter(|&b| offset.checked_add(b).is_some_and(|e| e <= buffer.host.capacity()));
            let bytes = bytes.ok_or_else(|| format!("kernel {name}: array '{arr}' reaches past its device buffer"))?;
            Ok((buffer.addr + *offset as u64, bytes))
        };
        let mut staged: Vec<Staged> = Vec::new();
        if let Some(il) = &kernel.interleave {
            for &a in &il.args {
                let staging = args
                    .get(a)
                    .ok_or_else(|| format!("kernel {name}: interleaved argument {a}, of {}", args.len()))
                    .and_then(span)
                    // SAFETY: live memory handle under the lock; the span lies in the buffer.
                    .and_then(|(addr, bytes)| unsafe { stage(&h, a, addr, bytes, il) });
                match staging {
                    Ok(s) => staged.push(s),
                    Err(e) => {
                        // SAFETY: no job started.
                        unsafe { free_staged(&h, &staged) };
                        return Err(format!("kernel {name}: interleaved argument {a}: {e}"));
                    }
                }
            }
        }
        let reg = |a: &KernelArg<'_, TapascoBuffer>, i: usize, half: u8| match a {
            KernelArg::Array { buffer, offset, .. } => match staged.iter().find(|s| s.arg == i) {
                Some(s) => Arg::Address(s.halves[usize::from(half.min(1))]),
                None => Arg::Address(buffer.addr + *offset as u64),
            },
            KernelArg::Scalar(s) => Arg::Scalar(scalar_param(s)),
        };
        // The arguments, then each write port and second half: its buffer's (or its
        // half's) address.
        let mut regs: Vec<Arg> = args.iter().enumerate().map(|(i, a)| reg(a, i, 0)).collect();
        for &(a, half, size) in &kernel.extra {
            match args.get(a) {
                // The elements of the array's buffer from its element 0 on.
                Some(KernelArg::Array { elems, .. }) if size => regs.push(Arg::Scalar(Param::Single64(*elems as u64))),
                Some(arg) => regs.push(reg(arg, a, half)),
                None => {
                    // SAFETY: no job started.
                    unsafe { free_staged(&h, &staged) };
                    return Err(format!("kernel {name}: a parameter of argument {a}, of {}", args.len()));
                }
            }
        }
        let start = Instant::now();
        // SAFETY: live device with exclusive access, under the lock.
        let job = match unsafe { ffi::start_job(h.device, kernel.id, &regs) } {
            Ok(j) => j,
            Err(e) => {
                // SAFETY: the job did not start.
                unsafe { free_staged(&h, &staged) };
                return Err(format!("kernel {name}: {e}"));
            }
        };
        let released = if self.timeout_ms == 0 {
            // SAFETY: started above, released once.
            unsafe { ffi::release(job) }
        } else {
            // tapasco_job_release blocks until the PE's interrupt: it waits on a thread
            // of its own, which is left waiting if the job does not end in time.
            struct Started(*mut ffi::Job);
            // SAFETY: the job is used by the waiting thread only.
            unsafe impl Send for Started {}
            let started = Started(job);
            let (tx, rx) = mpsc::channel();
            std::thread::Builder::new()
                .name("tessera-tapasco-job".into())
                .spawn(move || {
                    let started = started;
                    // SAFETY: started above, released once, here.
                    let _ = tx.send(unsafe { ffi::release(started.0) });
                })
                .map_err(|e| format!("kernel {name}: cannot start the thread that waits for the job: {e}"))?;
            match rx.recv_timeout(Duration::from_millis(self.timeout_ms.into())) {
                Ok(r) => r,
                Err(_) => {
                    // The staged halves stay allocated: the PE may still write them.
                    let why = format!(
                        "kernel {name} did not finish within {} ms (TESSERA_TAPASCO_TIMEOUT_MS); the TaPaSCo device is \
                         not used again in this process",
                        self.timeout_ms
                    );
                    let _ = POISON.set(why.clone());
                    return Err(why);
                }
            }
        };
        let kernel_wall_s = start.elapsed().as_secs_f64();
        // The job ended: gather the halves back into their arrays' memory.
        let gathered = match (&released, &kernel.interleave) {
            (Ok(_), Some(il)) => staged.iter().try_for_each(|s| {
                let (addr, bytes) = span(&args[s.arg])?;
                // SAFETY: live memory handle under the lock; the job ended.
                unsafe { unstage(&h, s, addr, bytes, il) }
            }),
            _ => Ok(()),
        };
        // SAFETY: the job ended.
        unsafe { free_staged(&h, &staged) };
        drop(h);
        released.map_err(|e| format!("kernel {name}: {e}"))?;
        gathered.map_err(|e| format!("kernel {name}: interleaved array: {e}"))?;
        let arrays = args
            .iter()
            .filter_map(|a| match a {
                // Hardware has no exact traffic counters: nothing is guessed.
                KernelArg::Array { name, .. } => Some((name.to_string(), None)),
                KernelArg::Scalar(_) => None,
            })
            .collect();
        Ok(LaunchStats { kernel_wall_s, arrays: Arrays(arrays), streams: Default::default() })
    }
}
