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
use super::{check_pe, scalar_param, DEVICE_INDEX};
use crate::config::Config;
use crate::data::HostBuffer;
use crate::device::{Device, DeviceBuffer, DeviceKind, KernelArg, LaunchStats};
use crate::report::Arrays;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::{mpsc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tessera_ir::manifest::Manifest;

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
    /// `Manifest::write_ports`: arguments whose address is passed again, after the
    /// arguments (the PE's write port of that array).
    write_ports: Vec<usize>,
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
        if let Some(&a) = manifest.write_ports.iter().find(|&&a| manifest.args.get(a).is_none_or(|x| x.array.is_none())) {
            return Err(format!("kernel {name}: the manifest's write port names argument {a}, which is not an array"));
        }
        checked.map(|id| TapascoKernel { name: name.to_string(), id, write_ports: manifest.write_ports.clone() })
    }

    fn alloc(&self, bytes: usize) -> Result<TapascoBuffer, String> {
        alloc_on(self.board, bytes)
    }

    fn launch(&self, kernel: &TapascoKernel, args: &mut [KernelArg<'_, TapascoBuffer>]) -> Result<LaunchStats, String> {
        let name = &kernel.name;
        let reg = |a: &KernelArg<'_, TapascoBuffer>| match a {
            KernelArg::Array { buffer, offset, .. } => Arg::Address(buffer.addr + *offset as u64),
            KernelArg::Scalar(s) => Arg::Scalar(scalar_param(s)),
        };
        // The arguments, then each write port: its array's address again.
        let mut regs: Vec<Arg> = args.iter().map(reg).collect();
        for &a in &kernel.write_ports {
            regs.push(reg(args.get(a).ok_or_else(|| format!("kernel {name}: write port of argument {a}, of {}", args.len()))?));
        }
        let h = self.board.lock();
        if let Some(why) = POISON.get() {
            return Err(why.clone());
        }
        let start = Instant::now();
        // SAFETY: live device with exclusive access, under the lock.
        let job = unsafe { ffi::start_job(h.device, kernel.id, &regs) }.map_err(|e| format!("kernel {name}: {e}"))?;
        if self.timeout_ms == 0 {
            // SAFETY: started above, released once.
            unsafe { ffi::release(job) }.map_err(|e| format!("kernel {name}: {e}"))?;
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
                Ok(r) => {
                    r.map_err(|e| format!("kernel {name}: {e}"))?;
                }
                Err(_) => {
                    let why = format!(
                        "kernel {name} did not finish within {} ms (TESSERA_TAPASCO_TIMEOUT_MS); the TaPaSCo device is \
                         not used again in this process",
                        self.timeout_ms
                    );
                    let _ = POISON.set(why.clone());
                    return Err(why);
                }
            }
        }
        let kernel_wall_s = start.elapsed().as_secs_f64();
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
