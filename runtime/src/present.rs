//! The device data environment of one device: OpenMP's *present table*.
//!
//! Data mapped by `target data`, `target enter data` (and unmapped by their end and
//! by `target exit data`) lives in entries keyed by host address ranges. Each
//! [`Entry`] holds the device buffer, the mapped host byte range `[lo, hi)` (the span
//! of the section that created it), the host address `origin` that device offset 0
//! stands for (element 0 of the variable that created it — the buffer holds that
//! variable's whole index space, like a launch buffer), and two reference counts as
//! OpenMP 5.1 §2.21.7 defines them: *structured* (`target data`, target regions) and
//! *dynamic* (`target enter data` / `target exit data`). An entry exists while their
//! sum is positive.
//!
//! Rules (list item = an evaluated [`ArrayPlan`], its range = its section's span):
//! - **Enter** (`target data`, `target enter data`): range inside an entry → that
//!   entry's count + 1, copy host → device only with `always` (to/tofrom). No entry
//!   overlaps it → new entry with count 1, its section copied host → device for
//!   `to`/`tofrom` and, as for launches, pre-filled for `from` (`alloc`: nothing).
//!   Overlapping an entry without lying inside it → error (OpenMP leaves it
//!   unspecified; libomptarget aborts). All-or-nothing: an error leaves the table as
//!   it was.
//! - **Exit** (end of `target data`, `target exit data`): range inside an entry →
//!   decrement (structured or dynamic count, never below 0; `delete` sets the dynamic
//!   count to 0); when the sum reaches 0, copy device → host for `from`/`tofrom` and
//!   remove the entry; with `always`, copy back in any case. Not present → nothing.
//! - **Update** (`target update`): the parts of the section that lie inside entries
//!   are copied in the motion's direction; the rest is ignored (not present).
//! - **Launch** (a target region): an argument whose range is inside an entry uses
//!   that entry's buffer with no copies (unless `always`), its structured count
//!   raised for the duration; a `present` argument (a pointer without a map clause)
//!   must point into an entry, and its extent is the rest of that entry's buffer. An
//!   argument whose element 0 lies inside its entry rather than at its start gets the
//!   buffer from that byte on (the device pointer is the buffer's base + offset).
//!   Other arguments are mapped privately for the launch, as without data regions.
//!   See [`DataEnv::enter_launch`].
//! - **Host fallback** inside a data region: see [`DataEnv::host_begin`].
//!
//! Concurrency: the table is behind one mutex, held for table changes and the copies
//! they imply. Each buffer has its own mutex; a kernel holds the buffers it uses
//! (taken in address order, outside the table lock) for its whole run, so kernels on
//! the same present data run one after the other, and a data operation on a buffer a
//! kernel uses waits for that kernel. The table lock is never requested while
//! holding a buffer.

use crate::data::ArrayPlan;
use crate::device::DeviceBuffer;
use crate::report::Transfers;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tessera_ir::MapKind;

/// Bytes every device buffer of a mapping has beyond its data: one beat of the widest
/// AXI data bus (1024 bits). Tiled kernels read whole beats counted from an argument's
/// element 0; an argument that starts inside its mapping at an offset that is not a
/// multiple of its beat (a present pointer `a + k`) has a last, partial beat that ends
/// up to one beat past the mapping's data, which then still lies in the buffer.
pub const BEAT_SLACK: usize = 128;

/// A device buffer shared by the table and the launches that use it.
pub type Shared<B> = Arc<Mutex<B>>;

/// Which reference count an operation changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RefKind {
    /// `target data` and target regions.
    Structured,
    /// `target enter data` and `target exit data`.
    Dynamic,
}

/// One mapping of the present table.
pub struct Entry<B> {
    /// First mapped host byte.
    pub lo: usize,
    /// One past the last mapped host byte.
    pub hi: usize,
    /// The host address device offset 0 stands for.
    pub origin: usize,
    /// Bytes of the buffer (the creating variable's whole index space).
    pub len: usize,
    /// Name of the variable that created the entry (messages).
    pub name: String,
    /// The device memory.
    pub buffer: Shared<B>,
    /// Structured reference count.
    pub structured: u64,
    /// Dynamic reference count.
    pub dynamic: u64,
    /// Unique among the entries this environment ever held: a key kept across calls
    /// (a `target data` scope, a launch, a host run) names this entry and not a later
    /// one at the same address (after `delete` removed it).
    pub gen: u64,
    /// The thread whose host run (a region's host fallback, between
    /// [`DataEnv::host_begin`] and [`DataEnv::host_end`]) holds the entry, with the
    /// number of its pins on it. While held, every other thread's operation on the
    /// entry waits: the host run copies the entry's device bytes to the host and back,
    /// which must not interleave with another launch, directive or host run on it.
    pub host_run: Option<(std::thread::ThreadId, u32)>,
}

/// What tests and reports can see of an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryInfo {
    /// Mapped host range.
    pub lo: usize,
    /// End of the mapped host range.
    pub hi: usize,
    /// Creator's name.
    pub name: String,
    /// Structured reference count.
    pub structured: u64,
    /// Dynamic reference count.
    pub dynamic: u64,
}

/// A list item found in (or added to) the table: the entry (by its key, `lo`), its
/// buffer, and the device byte offset of the item's element 0.
pub struct Mapping<B> {
    /// Key of the entry.
    pub key: usize,
    /// The entry's generation ([`Entry::gen`]).
    pub gen: u64,
    /// Its buffer.
    pub buffer: Shared<B>,
    /// Device byte offset of the item's element 0 (negative when element 0 lies
    /// before the entry's origin).
    pub offset: i128,
    /// Bytes of the buffer from the item's element 0 to its end.
    pub avail: usize,
}

/// How one launch argument reaches its device memory.
pub enum LaunchMap<B> {
    /// Found in the table: the entry's buffer (pinned for the launch).
    Present(Mapping<B>),
    /// Mapped for this launch only: a buffer of its own.
    Private(B),
}

/// Data the host copy of a region needs from the device, and gives back: one range
/// of one entry (see [`DataEnv::host_begin`]).
pub struct Pin<B> {
    key: usize,
    gen: u64,
    name: String,
    map: MapKind,
    buffer: Shared<B>,
    origin: usize,
    /// Host byte runs `(address, length)` inside the entry.
    runs: Vec<(usize, usize)>,
    /// The host bytes of `runs` before the region, concatenated.
    saved: Vec<u8>,
}

/// The device data environment of one device.
pub struct DataEnv<B> {
    table: Mutex<BTreeMap<usize, Entry<B>>>,
    next_gen: std::sync::atomic::AtomicU64,
    /// Signalled when a host run releases its entries.
    released: std::sync::Condvar,
}

/// The entry at `key` if it is still generation `gen`.
fn live<B>(table: &mut BTreeMap<usize, Entry<B>>, key: usize, gen: u64) -> Option<&mut Entry<B>> {
    table.get_mut(&key).filter(|e| e.gen == gen)
}

impl<B> Default for DataEnv<B> {
    fn default() -> Self {
        DataEnv {
            table: Mutex::new(BTreeMap::new()),
            next_gen: std::sync::atomic::AtomicU64::new(1),
            released: std::sync::Condvar::new(),
        }
    }
}

/// Where a host byte range stands relative to the table.
enum Found {
    /// Inside the entry with this key.
    Inside(usize),
    /// Overlaps the entry with this key without lying inside it.
    Partial(usize),
    /// Overlaps nothing.
    Absent,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The entries `item` reaches: those its section's span overlaps, or (an empty
/// section, a `present` item) the one its element 0 lies in.
fn reached<B>(table: &BTreeMap<usize, Entry<B>>, item: &ArrayPlan) -> Vec<usize> {
    match item.host_span() {
        Some(s) if item.map != MapKind::Present => {
            let first = table.range(..=s.start).next_back().map_or(s.start, |(&k, _)| k);
            table.range(first..s.end).filter(|(_, e)| e.hi > s.start).map(|(&k, _)| k).collect()
        }
        _ => containing(table, item.host as usize).into_iter().collect(),
    }
}

/// Finds where `[lo, hi)` (non-empty) stands.
fn find<B>(table: &BTreeMap<usize, Entry<B>>, lo: usize, hi: usize) -> Found {
    // The entry starting at or before lo, then any entry starting inside [lo, hi).
    if let Some((&k, e)) = table.range(..=lo).next_back() {
        if e.hi > lo {
            return if hi <= e.hi { Found::Inside(k) } else { Found::Partial(k) };
        }
    }
    match table.range(lo..hi).next() {
        Some((&k, _)) => Found::Partial(k),
        None => Found::Absent,
    }
}

/// The entry containing the host address `addr`.
fn containing<B>(table: &BTreeMap<usize, Entry<B>>, addr: usize) -> Option<usize> {
    let (&k, e) = table.range(..=addr).next_back()?;
    (addr < e.hi).then_some(k)
}

/// The byte runs of `item`'s section box as host addresses, clipped to `[lo, hi)`.
fn runs_in(item: &ArrayPlan, lo: usize, hi: usize) -> Vec<(usize, usize)> {
    let base = item.host as usize;
    let mut v = Vec::new();
    item.shape.for_each_run(|off, len| {
        let (a, b) = ((base + off).max(lo), (base + off + len).min(hi));
        if a < b {
            v.push((a, b - a));
        }
    });
    v
}

/// The device byte range `runs` (host addresses) cover in a buffer whose offset 0 is
/// host address `origin`, and whether they cover it without gaps.
fn device_span(origin: usize, runs: &[(usize, usize)]) -> (std::ops::Range<usize>, bool) {
    let lo = runs.iter().map(|r| r.0).min().unwrap_or(origin) - origin;
    let hi = runs.iter().map(|r| r.0 + r.1).max().unwrap_or(origin) - origin;
    let covered: usize = runs.iter().map(|r| r.1).sum();
    (lo..hi, covered == hi - lo)
}

/// Copies host runs into `buf` (device offset = address − `origin`) and syncs them to
/// the device; returns the bytes. The sync covers the runs' span; when the runs leave
/// gaps in it, the span is first synced from the device, so the gaps carry the
/// device's bytes rather than a stale view (a kernel may have written them).
///
/// # Safety
/// The runs must be readable host memory inside the buffer's range.
pub(crate) unsafe fn to_device<B: DeviceBuffer>(buf: &mut B, origin: usize, runs: &[(usize, usize)]) -> Result<u64, String> {
    if runs.is_empty() {
        return Ok(0);
    }
    let (span, whole) = device_span(origin, runs);
    if !whole {
        buf.sync_from_device(span.clone())?;
    }
    let view = buf.host_view();
    let mut n = 0u64;
    for &(addr, len) in runs {
        let off = addr - origin;
        assert!(off + len <= view.len(), "run outside the device buffer");
        std::ptr::copy_nonoverlapping(addr as *const u8, view.as_mut_ptr().add(off), len);
        n += len as u64;
    }
    buf.sync_to_device(span)?;
    Ok(n)
}

/// Copies runs from `buf` (already synced from the device) into host memory; returns
/// the bytes.
///
/// # Safety
/// The runs must be writable host memory inside the buffer's range.
unsafe fn from_view<B: DeviceBuffer>(buf: &mut B, origin: usize, runs: &[(usize, usize)]) -> u64 {
    let view = buf.host_view();
    let mut n = 0u64;
    for &(addr, len) in runs {
        let off = addr - origin;
        assert!(off + len <= view.len(), "run outside the device buffer");
        std::ptr::copy_nonoverlapping(view.as_ptr().add(off), addr as *mut u8, len);
        n += len as u64;
    }
    n
}

/// One planned copy back to the host: the buffer, its origin, the runs, the name.
type CopyBack<B> = (Shared<B>, usize, Vec<(usize, usize)>, String);

/// Syncs every buffer of `copies` from the device (may fail, before any host write),
/// then copies the runs into host memory (cannot fail). Returns the bytes per name.
///
/// # Safety
/// The runs must be writable host memory inside their buffers' ranges.
unsafe fn copy_back<B: DeviceBuffer>(copies: &[CopyBack<B>], moved: &mut Transfers) -> Result<(), String> {
    for (buf, origin, runs, _) in copies {
        if !runs.is_empty() {
            lock(buf).sync_from_device(device_span(*origin, runs).0)?;
        }
    }
    for (buf, origin, runs, name) in copies {
        let n = from_view(&mut *lock(buf), *origin, runs);
        moved.add(name, 0, n);
    }
    Ok(())
}

impl<B: DeviceBuffer> DataEnv<B> {
    /// An empty environment.
    pub fn new() -> DataEnv<B> {
        DataEnv::default()
    }

    /// The table, once no entry that `items` reach is held by another thread's host
    /// run (see [`Entry::host_run`]); waits for those runs to end.
    fn lock_free<'a>(&'a self, items: &[&ArrayPlan]) -> MutexGuard<'a, BTreeMap<usize, Entry<B>>> {
        self.lock_when_free(|table| items.iter().flat_map(|it| reached(table, it)).collect())
    }

    /// The table, once none of the entries `keys` picks is held by another thread's
    /// host run; waits for those runs to end.
    fn lock_when_free<'a>(
        &'a self,
        keys: impl Fn(&BTreeMap<usize, Entry<B>>) -> Vec<usize>,
    ) -> MutexGuard<'a, BTreeMap<usize, Entry<B>>> {
        let me = std::thread::current().id();
        let mut table = lock(&self.table);
        while keys(&table).iter().any(|k| table[k].host_run.is_some_and(|(t, _)| t != me)) {
            table = self.released.wait(table).unwrap_or_else(|e| e.into_inner());
        }
        table
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        lock(&self.table).is_empty()
    }

    /// The entries, in address order (tests, diagnostics).
    pub fn entries(&self) -> Vec<EntryInfo> {
        lock(&self.table)
            .values()
            .map(|e| EntryInfo { lo: e.lo, hi: e.hi, name: e.name.clone(), structured: e.structured, dynamic: e.dynamic })
            .collect()
    }

    /// Map-entering for `items` (`target data` with [`RefKind::Structured`],
    /// `target enter data` with [`RefKind::Dynamic`]); returns one mapping per item
    /// (`None` for an empty section, which maps nothing). All or nothing.
    ///
    /// # Safety
    /// Every item's host memory must be valid for its section box.
    pub(crate) unsafe fn enter(
        &self,
        items: &[&ArrayPlan],
        refs: RefKind,
        alloc: &dyn Fn(usize) -> Result<B, String>,
        moved: &mut Transfers,
    ) -> Result<Vec<Option<Mapping<B>>>, String> {
        let mut table = self.lock_free(items);
        // Phase 1: classify and allocate; nothing in the table changes yet.
        enum Plan<B> {
            Skip,
            Existing(usize),
            New(usize, B),
            /// Inside an entry this same call creates (index into `items`).
            Same(usize),
        }
        let mut plans: Vec<Plan<B>> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Some(span) = item.host_span() else {
                plans.push(Plan::Skip);
                continue;
            };
            let fresh = items[..i].iter().zip(&plans).enumerate().find_map(|(j, (it, p))| match p {
                Plan::New(..) => it.host_span().filter(|s| s.start < span.end && span.start < s.end).map(|s| (j, s)),
                _ => None,
            });
            let plan = match (find(&table, span.start, span.end), fresh) {
                (Found::Partial(k), _) => {
                    return Err(partial(item, &table[&k]));
                }
                (Found::Inside(k), _) => Plan::Existing(k),
                (Found::Absent, Some((j, s))) if span.start >= s.start && span.end <= s.end => Plan::Same(j),
                (Found::Absent, Some((j, _))) => {
                    return Err(format!(
                        "array '{}' overlaps '{}' of the same directive without lying inside it",
                        item.name, items[j].name
                    ))
                }
                (Found::Absent, None) => Plan::New(span.start, alloc(item.shape.total_bytes() + BEAT_SLACK)?),
            };
            plans.push(plan);
        }
        // Phase 2: insert and count, then copy; undone if a copy fails.
        let mut out: Vec<Option<Mapping<B>>> = Vec::with_capacity(items.len());
        let mut created: Vec<usize> = Vec::new();
        let mut keys: Vec<Option<usize>> = Vec::with_capacity(items.len());
        for (item, plan) in items.iter().zip(plans) {
            let key = match plan {
                Plan::Skip => None,
                Plan::Existing(k) => Some(k),
                Plan::Same(j) => keys[j],
                Plan::New(lo, buf) => {
                    let span = item.host_span().expect("a new entry has a span");
                    table.insert(
                        lo,
                        Entry {
                            lo,
                            hi: span.end,
                            origin: item.host as usize,
                            len: item.shape.total_bytes(),
                            name: item.name.clone(),
                            buffer: Arc::new(Mutex::new(buf)),
                            structured: 0,
                            dynamic: 0,
                            gen: self.next_gen.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                            host_run: None,
                        },
                    );
                    created.push(lo);
                    Some(lo)
                }
            };
            keys.push(key);
            out.push(key.map(|k| {
                let e = table.get_mut(&k).expect("entry just found or inserted");
                match refs {
                    RefKind::Structured => e.structured += 1,
                    RefKind::Dynamic => e.dynamic += 1,
                }
                mapping(e, k, item)
            }));
        }
        for (i, item) in items.iter().enumerate() {
            let Some(k) = keys[i] else { continue };
            let e = &table[&k];
            let new = created.contains(&k) && keys[..i].iter().all(|&p| p != Some(k));
            // A new mapping gets the section (pre-filled for `from`, see data.rs);
            // an existing one only with `always`.
            let copy = if new { item.prefills() } else { item.map.is_always() && item.map.copies_in() };
            if copy {
                let runs = runs_in(item, e.lo, e.hi);
                let r = to_device(&mut *lock(&e.buffer), e.origin, &runs);
                match r {
                    Ok(n) => moved.add(&item.name, n, 0),
                    Err(err) => {
                        drop_refs(&mut table, &keys, refs);
                        return Err(format!("array '{}': {err}", item.name));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Map-exiting for `items` (end of `target data` with the mappings its entry
    /// returned; `target exit data` with `None`, looking each item up).
    ///
    /// # Safety
    /// Every item's host memory must be valid (and writable) for its section box.
    pub(crate) unsafe fn exit(
        &self,
        items: &[&ArrayPlan],
        keys: Option<&[Option<(usize, u64)>]>,
        refs: RefKind,
        moved: &mut Transfers,
    ) -> Result<(), String> {
        let mut table = self.lock_free(items);
        let mut copies: Vec<CopyBack<B>> = Vec::new();
        let mut removed: Vec<usize> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let key = match keys {
                Some(k) => k[i],
                None => item.host_span().and_then(|s| match find(&table, s.start, s.end) {
                    Found::Inside(k) => Some((k, table[&k].gen)),
                    _ => None,
                }),
            };
            let Some((key, gen)) = key else { continue };
            // Gone already (`delete`, or removed with its data by an earlier exit).
            let Some(e) = live(&mut table, key, gen) else { continue };
            if removed.contains(&key) {
                continue;
            }
            match (refs, item.map) {
                (RefKind::Structured, _) => e.structured = e.structured.saturating_sub(1),
                // OpenMP 5.x: `delete` sets the reference count to zero (libomptarget:
                // every count but `ompx_hold`'s); the data is not copied back.
                (RefKind::Dynamic, MapKind::Delete) => {
                    e.dynamic = 0;
                    e.structured = 0;
                }
                (RefKind::Dynamic, _) => e.dynamic = e.dynamic.saturating_sub(1),
            }
            let last = e.structured + e.dynamic == 0;
            if (last || item.map.is_always()) && item.map.copies_out() {
                copies.push((e.buffer.clone(), e.origin, runs_in(item, e.lo, e.hi), item.name.clone()));
            }
            if last {
                removed.push(key);
            }
        }
        // Entries leave the table once their data is back.
        let r = copy_back(&copies, moved);
        for k in removed {
            table.remove(&k);
        }
        r
    }

    /// `target update`: copies the parts of every item's section that lie inside
    /// entries, host → device for `to`, device → host for `from`.
    ///
    /// # Safety
    /// Every item's host memory must be valid (and writable, for `from`) for its box.
    pub(crate) unsafe fn update(&self, items: &[&ArrayPlan], moved: &mut Transfers) -> Result<(), String> {
        let table = self.lock_free(items);
        let mut copies: Vec<CopyBack<B>> = Vec::new();
        for item in items {
            if item.host_span().is_none() {
                continue;
            }
            for e in reached(&table, item).iter().map(|k| &table[k]) {
                let runs = runs_in(item, e.lo, e.hi);
                if item.map.copies_in() {
                    let n = to_device(&mut *lock(&e.buffer), e.origin, &runs)
                        .map_err(|err| format!("array '{}': {err}", item.name))?;
                    moved.add(&item.name, n, 0);
                } else {
                    copies.push((e.buffer.clone(), e.origin, runs, item.name.clone()));
                }
            }
        }
        copy_back(&copies, moved)
    }

    /// Whether host address `addr` lies inside an entry (`omp_target_is_present`).
    pub fn contains(&self, addr: usize) -> bool {
        containing(&lock(&self.table), addr).is_some()
    }

    /// `omp_target_memcpy` into this device: copies `src` into the device bytes that
    /// stand for host bytes `[addr, addr + src.len())`, which must lie inside one
    /// entry. Waits for host runs on that entry like every operation.
    ///
    /// # Safety
    /// None beyond the entry's own: the host range is only used as a key.
    pub(crate) unsafe fn write_device(&self, addr: usize, src: &[u8]) -> Result<(), String> {
        self.device_bytes(addr, src.len(), |buf, off| {
            let range = off..off + src.len();
            buf.host_view()[range.clone()].copy_from_slice(src);
            buf.sync_to_device(range)
        })
    }

    /// `omp_target_memcpy` from this device: copies the device bytes that stand for
    /// host bytes `[addr, addr + dst.len())` (inside one entry) into `dst`.
    ///
    /// # Safety
    /// As for [`write_device`](Self::write_device).
    pub(crate) unsafe fn read_device(&self, addr: usize, dst: &mut [u8]) -> Result<(), String> {
        self.device_bytes(addr, dst.len(), |buf, off| {
            let range = off..off + dst.len();
            buf.sync_from_device(range.clone())?;
            dst.copy_from_slice(&buf.host_view()[range]);
            Ok(())
        })
    }

    /// Runs `f(buffer, byte offset)` on the buffer of the entry that holds host bytes
    /// `[addr, addr + len)`, with the table locked as for a directive on them.
    unsafe fn device_bytes(
        &self,
        addr: usize,
        len: usize,
        f: impl FnOnce(&mut B, usize) -> Result<(), String>,
    ) -> Result<(), String> {
        if len == 0 {
            return Ok(());
        }
        let span = ArrayPlan {
            name: String::new(),
            map: MapKind::Alloc,
            shape: crate::data::BoxShape { elem_size: 1, dims: vec![len], lower: vec![0], len: vec![len] },
            host: addr as *mut u8,
            exact_runs: None,
        };
        let table = self.lock_free(&[&span]);
        let e = match find(&table, addr, addr + len) {
            Found::Inside(k) => &table[&k],
            Found::Partial(k) => {
                return Err(format!(
                    "{len} bytes at {addr:#x} run past the end of the device memory of '{}' ({} bytes)",
                    table[&k].name,
                    table[&k].hi - table[&k].lo
                ))
            }
            Found::Absent => return Err(format!("{len} bytes at {addr:#x} are not device memory")),
        };
        let off = addr - e.origin;
        let mut buf = lock(&e.buffer);
        if off + len > buf.host_view().len() {
            return Err(format!("{len} bytes at {addr:#x} run past the device buffer of '{}'", e.name));
        }
        f(&mut buf, off)
    }

    /// Whether any entry overlaps an item's section, or (for an item whose section is
    /// empty, e.g. a `present` argument) contains its element 0: the test for
    /// directives Tessera cannot honour.
    pub fn touches(&self, items: &[&ArrayPlan]) -> Option<String> {
        let table = lock(&self.table);
        items.iter().find_map(|item| {
            let hit = match item.host_span() {
                Some(s) => !matches!(find(&table, s.start, s.end), Found::Absent),
                None => containing(&table, item.host as usize).is_some(),
            };
            hit.then(|| item.name.clone())
        })
    }

    /// The first item that does not lie inside one entry (an item whose section is
    /// empty: whose element 0 lies in none), the test of OpenMP's `present` modifier.
    pub fn absent(&self, items: &[&ArrayPlan]) -> Option<String> {
        let table = lock(&self.table);
        items.iter().find_map(|item| {
            let inside = match item.host_span() {
                Some(s) => matches!(find(&table, s.start, s.end), Found::Inside(_)),
                None => containing(&table, item.host as usize).is_some(),
            };
            (!inside).then(|| item.name.clone())
        })
    }

    /// Maps the array arguments of one launch (`None` for scalars): present ones are
    /// pinned (structured count + 1) and copied only with `always`; the others get a
    /// private buffer from `alloc`, filled as without data regions (see
    /// `data::ArrayPlan::prefills`). `map(present)` arguments must point into an
    /// entry. A present argument whose element 0 lies inside its entry's buffer
    /// rather than at its start (`a + lo` of an array mapped from `a[0]`) gets the
    /// buffer from that byte on ([`Mapping::offset`]). Fails — with everything undone
    /// — when an argument overlaps an entry without lying inside it, when a `present`
    /// argument is not mapped, when two arguments would share one entry (a kernel
    /// gets one buffer per argument), or when a present argument's element 0 lies
    /// before its entry's buffer or not on an element boundary of it.
    ///
    /// # Safety
    /// Every array's host memory must be valid for its section box.
    pub(crate) unsafe fn enter_launch(
        &self,
        args: &[Option<&ArrayPlan>],
        alloc: &dyn Fn(usize) -> Result<B, String>,
        moved: &mut Transfers,
    ) -> Result<Vec<Option<LaunchMap<B>>>, String> {
        let present: Vec<&ArrayPlan> = args.iter().flatten().copied().collect();
        let mut table = self.lock_free(&present);
        let mut found: Vec<Option<usize>> = Vec::with_capacity(args.len());
        for item in args {
            let Some(item) = item else {
                found.push(None);
                continue;
            };
            let key = if item.map == MapKind::Present {
                let addr = item.host as usize;
                match containing(&table, addr) {
                    Some(k) => Some(k),
                    None => {
                        return Err(format!(
                            "'{}' has no map clause and the data it points to is not mapped on the device \
                             (OpenMP: it must be present, e.g. mapped by an enclosing 'target data')",
                            item.name
                        ))
                    }
                }
            } else {
                match item.host_span().map(|s| find(&table, s.start, s.end)) {
                    Some(Found::Inside(k)) => Some(k),
                    Some(Found::Partial(k)) => return Err(partial(item, &table[&k])),
                    Some(Found::Absent) => None,
                    // A zero-length section (`map(p[:0])`) finds the mapping its
                    // pointer points into (OpenMP 5.x), like a `present` argument.
                    None => containing(&table, item.host as usize),
                }
            };
            if let Some(k) = key {
                let e = &table[&k];
                // An argument may point into the middle of its mapping (`a + lo` of an
                // array mapped from element 0): the kernel then sees the buffer from
                // that byte on. It must be element 0 of some element of the buffer.
                let offset = item.host as usize as i128 - e.origin as i128;
                if offset < 0 {
                    return Err(format!(
                        "'{}' points {} bytes before the start of the device buffer of '{}', which it lies in",
                        item.name, -offset, e.name
                    ));
                }
                if !(offset as usize).is_multiple_of(item.shape.elem_size.max(1)) {
                    return Err(format!(
                        "'{}' points {offset} bytes into the device buffer of '{}', which is not a whole number of \
                         {}-byte elements",
                        item.name, e.name, item.shape.elem_size
                    ));
                }
                if let Some(other) = found.iter().zip(args).find_map(|(f, a)| (*f == Some(k)).then_some(*a).flatten()) {
                    return Err(format!("'{}' and '{}' are one mapping on the device", other.name, item.name));
                }
            }
            found.push(key);
        }
        // Every check passed: pin, allocate, copy.
        let mut out: Vec<Option<LaunchMap<B>>> = Vec::with_capacity(args.len());
        for (item, key) in args.iter().zip(&found) {
            let Some(item) = item else {
                out.push(None);
                continue;
            };
            match key {
                Some(k) => {
                    let e = table.get_mut(k).expect("found above");
                    e.structured += 1;
                    let m = mapping(e, *k, item);
                    if item.map.is_always() && item.map.copies_in() {
                        let runs = runs_in(item, e.lo, e.hi);
                        let r = to_device(&mut *lock(&e.buffer), e.origin, &runs);
                        match r {
                            Ok(n) => moved.add(&item.name, n, 0),
                            Err(err) => {
                                out.push(Some(LaunchMap::Present(m)));
                                drop(table);
                                self.release_launch(&out);
                                return Err(format!("array '{}': {err}", item.name));
                            }
                        }
                    }
                    out.push(Some(LaunchMap::Present(m)));
                }
                None => {
                    let mut b = match alloc(item.shape.total_bytes() + BEAT_SLACK) {
                        Ok(b) => b,
                        Err(err) => {
                            drop(table);
                            self.release_launch(&out);
                            return Err(err);
                        }
                    };
                    if item.prefills() {
                        let view = b.host_view();
                        let all = 0..view.len();
                        moved.add(&item.name, item.copy_in(view), 0);
                        if let Err(err) = b.sync_to_device(all) {
                            drop(table);
                            self.release_launch(&out);
                            return Err(err);
                        }
                    }
                    out.push(Some(LaunchMap::Private(b)));
                }
            }
        }
        Ok(out)
    }

    /// Unpins a launch's present arguments without copying anything (after a failed
    /// launch; entries that reach count 0 are removed with their data).
    pub(crate) fn release_launch(&self, maps: &[Option<LaunchMap<B>>]) {
        let mut table = lock(&self.table);
        for m in maps.iter().flatten() {
            if let LaunchMap::Present(m) = m {
                if let Some(e) = live(&mut table, m.key, m.gen) {
                    e.structured = e.structured.saturating_sub(1);
                    if e.structured + e.dynamic == 0 {
                        table.remove(&m.key);
                    }
                }
            }
        }
    }

    /// Releases the device-side memory of every mapped buffer (its contents come into
    /// the host view first; see [`DeviceBuffer::release`]), before the device is
    /// reconfigured. The mappings stay: the next launch that uses one allocates its
    /// device memory again, filled from the view.
    pub(crate) fn release_all(&self) -> Result<(), String> {
        let table = lock(&self.table);
        for e in table.values() {
            lock(&e.buffer).release().map_err(|err| format!("array '{}': {err}", e.name))?;
        }
        Ok(())
    }

    /// After a launch: copies back what the maps say (private `from`/`tofrom`
    /// sections; present ones with `always`, or when their entry's count reaches 0)
    /// and unpins. Every buffer is synced before host memory is written.
    ///
    /// # Safety
    /// Every array's host memory must be valid and writable for its section box.
    pub(crate) unsafe fn exit_launch(
        &self,
        args: &[Option<&ArrayPlan>],
        maps: Vec<Option<LaunchMap<B>>>,
        moved: &mut Transfers,
    ) -> Result<(), String> {
        // Private buffers first: synced, then copied, outside the table lock.
        let mut private: Vec<(&ArrayPlan, B)> = Vec::new();
        let mut present: Vec<(&ArrayPlan, Mapping<B>)> = Vec::new();
        for (item, m) in args.iter().zip(maps) {
            match (item, m) {
                (Some(item), Some(LaunchMap::Private(b))) => private.push((item, b)),
                (Some(item), Some(LaunchMap::Present(m))) => present.push((item, m)),
                _ => {}
            }
        }
        for (item, b) in private.iter_mut() {
            if item.copies_out() {
                let all = 0..b.host_view().len();
                if let Err(err) = b.sync_from_device(all) {
                    let maps: Vec<Option<LaunchMap<B>>> =
                        present.into_iter().map(|(_, m)| Some(LaunchMap::Present(m))).collect();
                    self.release_launch(&maps);
                    return Err(err);
                }
            }
        }
        let mut table = lock(&self.table);
        let mut copies: Vec<CopyBack<B>> = Vec::new();
        let mut removed = Vec::new();
        for (item, m) in &present {
            let Some(e) = live(&mut table, m.key, m.gen) else { continue };
            e.structured = e.structured.saturating_sub(1);
            let last = e.structured + e.dynamic == 0;
            if (last || item.map.is_always()) && item.map.copies_out() {
                copies.push((e.buffer.clone(), e.origin, runs_in(item, e.lo, e.hi), item.name.clone()));
            }
            if last {
                removed.push(m.key);
            }
        }
        let r = copy_back(&copies, moved);
        for k in removed {
            table.remove(&k);
        }
        drop(table);
        r?;
        for (item, b) in private.iter_mut() {
            if item.copies_out() {
                moved.add(&item.name, 0, item.copy_out(b.host_view()));
            }
        }
        Ok(())
    }

    /// Before a region runs on the host while some of its data is present.
    ///
    /// On a device, the region would read and write the *device* copies of present
    /// data and leave their host copies alone (OpenMP copies nothing for data that
    /// is already present). The host code reads and writes host memory, so for every
    /// part of an argument's section that lies inside an entry (for a `present`
    /// argument: the rest of the entry its pointer points into), this pins the entry
    /// (structured count + 1), saves the host bytes, and copies the device bytes
    /// over them — except with `always` and `to`/`tofrom`, where OpenMP would copy
    /// host → device instead, which is done here too. [`host_end`](Self::host_end)
    /// then copies the results to the device and puts the saved host bytes back.
    /// Arguments that nothing maps are left alone.
    ///
    /// # Safety
    /// Every array's host memory must be valid and writable for its section box.
    pub(crate) unsafe fn host_begin(&self, args: &[&ArrayPlan], moved: &mut Transfers) -> Result<Vec<Pin<B>>, String> {
        let me = std::thread::current().id();
        let mut table = self.lock_free(args);
        let mut pins: Vec<Pin<B>> = Vec::new();
        for item in args {
            let by_address = item.map == MapKind::Present || item.host_span().is_none();
            for k in reached(&table, item) {
                let e = table.get_mut(&k).expect("key from the table");
                let runs = if let Some(exact) = &item.exact_runs {
                    // Only what the region touches (inside a parallel region).
                    let base = item.host as usize;
                    exact
                        .iter()
                        .filter_map(|&(off, len)| {
                            let (a, b) = ((base + off).max(e.lo), (base + off + len).min(e.hi));
                            (a < b).then_some((a, b - a))
                        })
                        .collect()
                } else if by_address {
                    vec![(item.host as usize, e.hi - item.host as usize)]
                } else {
                    runs_in(item, e.lo, e.hi)
                };
                pins.push(pin(e, k, &item.name, item.map, runs, me));
            }
        }
        drop(table);
        self.copy_in_pins(pins, moved)
    }

    /// Before a region whose footprint is unknown runs on the host (a region the
    /// plugin could not pass its variables to the runtime for, `__tessera_opaque`):
    /// [`host_begin`](Self::host_begin) for every entry of the table, whole, as a
    /// `present` use — the host code may reach any mapped byte through its pointers,
    /// so it sees the device copy of everything mapped, and
    /// [`host_end`](Self::host_end) puts whatever it wrote on the device and the
    /// host bytes back. Waits while another thread's host run holds any entry.
    ///
    /// # Safety
    /// The host memory of every entry's mapped range must be valid and writable
    /// (it is: OpenMP maps only memory the program owns until it unmaps it).
    pub(crate) unsafe fn host_begin_all(&self, moved: &mut Transfers) -> Result<Vec<Pin<B>>, String> {
        let me = std::thread::current().id();
        let mut table = self.lock_when_free(|table| table.keys().copied().collect());
        let mut pins: Vec<Pin<B>> = Vec::new();
        for (&k, e) in table.iter_mut() {
            let runs = vec![(e.lo, e.hi - e.lo)];
            let name = e.name.clone();
            pins.push(pin(e, k, &name, MapKind::Present, runs, me));
        }
        drop(table);
        self.copy_in_pins(pins, moved)
    }

    /// The copies of a host run's start: host → device for pins whose map copies
    /// in with `always` (OpenMP would), device → host for the others; on a failure
    /// the pins are released without copies.
    unsafe fn copy_in_pins(&self, pins: Vec<Pin<B>>, moved: &mut Transfers) -> Result<Vec<Pin<B>>, String> {
        let mut copies: Vec<CopyBack<B>> = Vec::new();
        let mut failed = None;
        for p in &pins {
            if p.map.is_always() && p.map.copies_in() {
                match to_device(&mut *lock(&p.buffer), p.origin, &p.runs) {
                    Ok(n) => moved.add(&p.name, n, 0),
                    Err(err) => {
                        failed = Some(err);
                        break;
                    }
                }
            } else {
                copies.push((p.buffer.clone(), p.origin, p.runs.clone(), p.name.clone()));
            }
        }
        if let Some(err) = failed {
            self.host_end_pins(pins, false, moved).ok();
            return Err(err);
        }
        if let Err(err) = copy_back(&copies, moved) {
            self.host_end_pins(pins, false, moved).ok();
            return Err(err);
        }
        Ok(pins)
    }

    /// After the host run of [`host_begin`](Self::host_begin): copies the pinned
    /// parts host → device (the host code may have written them), unpins, and puts
    /// the saved host bytes back — unless OpenMP would have copied the results to the
    /// host (`always` with `from`/`tofrom`, or `from`/`tofrom` when the entry's count
    /// reaches 0 and it is removed).
    ///
    /// # Safety
    /// The pinned host memory must still be valid.
    pub(crate) unsafe fn host_end(&self, pins: Vec<Pin<B>>, moved: &mut Transfers) -> Result<(), String> {
        self.host_end_pins(pins, true, moved)
    }

    unsafe fn host_end_pins(&self, pins: Vec<Pin<B>>, copy: bool, moved: &mut Transfers) -> Result<(), String> {
        let mut table = lock(&self.table);
        let mut first_err = None;
        // Pins may overlap — two arguments that alias one mapping, a struct and one of
        // its members —, so every pin's results go to the device before any pin puts
        // saved host bytes back (else a later pin would copy those to the device).
        if copy {
            for p in &pins {
                match to_device(&mut *lock(&p.buffer), p.origin, &p.runs) {
                    Ok(n) => moved.add(&p.name, n, 0),
                    Err(e) => {
                        first_err.get_or_insert(format!("array '{}': {e}", p.name));
                    }
                }
            }
        }
        let mut keep = vec![false; pins.len()];
        for (p, keep) in pins.iter().zip(keep.iter_mut()) {
            *keep = copy && p.map.is_always() && p.map.copies_out();
            if let Some(e) = live(&mut table, p.key, p.gen) {
                e.structured = e.structured.saturating_sub(1);
                e.host_run = match e.host_run {
                    Some((t, n)) if n > 1 => Some((t, n - 1)),
                    _ => None,
                };
                if e.structured + e.dynamic == 0 {
                    *keep |= copy && p.map.copies_out();
                    table.remove(&p.key);
                }
            }
        }
        // The saved bytes back, last pin first (overlapping pins saved the same bytes).
        for (p, _) in pins.iter().zip(&keep).rev().filter(|(_, k)| !**k) {
            let mut at = 0;
            for &(addr, len) in &p.runs {
                std::ptr::copy_nonoverlapping(p.saved.as_ptr().add(at), addr as *mut u8, len);
                at += len;
            }
        }
        // Results that stay on the host: again from the device where another pin's
        // saved bytes went back over them.
        let overlaps = |a: &Pin<B>, b: &Pin<B>| {
            a.runs.iter().any(|&(x, n)| b.runs.iter().any(|&(y, m)| x < y + m && y < x + n))
        };
        let kept: Vec<CopyBack<B>> = pins
            .iter()
            .zip(&keep)
            .filter(|(p, k)| **k && pins.iter().zip(&keep).any(|(q, r)| !*r && overlaps(p, q)))
            .map(|(p, _)| (p.buffer.clone(), p.origin, p.runs.clone(), p.name.clone()))
            .collect();
        if !kept.is_empty() {
            if let Err(e) = copy_back(&kept, moved) {
                first_err.get_or_insert(e);
            }
        }
        drop(table);
        self.released.notify_all();
        first_err.map_or(Ok(()), Err)
    }
}

/// Pins entry `e` (key `k`) for a host run of thread `me` over the host byte `runs`
/// (structured count + 1, held until the run ends), saving those host bytes.
///
/// # Safety
/// The runs must be valid host memory.
unsafe fn pin<B>(e: &mut Entry<B>, k: usize, name: &str, map: MapKind, runs: Vec<(usize, usize)>, me: std::thread::ThreadId) -> Pin<B> {
    let mut saved = Vec::with_capacity(runs.iter().map(|r| r.1).sum());
    for &(addr, len) in &runs {
        saved.extend_from_slice(std::slice::from_raw_parts(addr as *const u8, len));
    }
    e.structured += 1;
    // Held until host_end: no other thread's launch, directive or host run on this
    // entry interleaves with the copies around the host code.
    e.host_run = Some((me, e.host_run.map_or(0, |(_, n)| n) + 1));
    Pin { key: k, gen: e.gen, name: name.to_string(), map, buffer: e.buffer.clone(), origin: e.origin, runs, saved }
}

/// The mapping of `item` in entry `e` (key `k`).
fn mapping<B>(e: &Entry<B>, k: usize, item: &ArrayPlan) -> Mapping<B> {
    let offset = item.host as usize as i128 - e.origin as i128;
    Mapping { key: k, gen: e.gen, buffer: e.buffer.clone(), offset, avail: (e.len as i128 - offset).max(0) as usize }
}

/// Undoes the reference counts phase 2 of `enter` added, removing entries that fall
/// to 0 (with their data: nothing was copied out of them).
fn drop_refs<B>(table: &mut BTreeMap<usize, Entry<B>>, keys: &[Option<usize>], refs: RefKind) {
    for k in keys.iter().flatten() {
        if let Some(e) = table.get_mut(k) {
            match refs {
                RefKind::Structured => e.structured = e.structured.saturating_sub(1),
                RefKind::Dynamic => e.dynamic = e.dynamic.saturating_sub(1),
            }
            if e.structured + e.dynamic == 0 {
                table.remove(k);
            }
        }
    }
}

/// The error for a range that overlaps an entry without lying inside it.
fn partial<B>(item: &ArrayPlan, e: &Entry<B>) -> String {
    format!(
        "array '{}' is partly mapped on the device: its section overlaps the mapping of '{}' without lying inside it",
        item.name, e.name
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{BoxShape, HostBuffer};
    use crate::device::DeviceBuffer;

    /// A 1D `f32` item over `v`, section `[lo : len]`.
    fn item(name: &str, map: MapKind, v: &mut [f32], lo: usize, len: usize) -> ArrayPlan {
        let shape = BoxShape { elem_size: 4, dims: vec![v.len()], lower: vec![lo], len: vec![len] };
        ArrayPlan { name: name.into(), map, shape, host: v.as_mut_ptr() as *mut u8, exact_runs: None }
    }

    fn alloc() -> impl Fn(usize) -> Result<HostBuffer, String> {
        HostBuffer::new
    }

    /// The device copy of element `i` of the array whose entry has key `k`.
    fn device(env: &DataEnv<HostBuffer>, k: usize, i: usize) -> f32 {
        let t = lock(&env.table);
        let e = &t[&k];
        let mut b = lock(&e.buffer);
        let v = b.host_view();
        f32::from_ne_bytes(v[i * 4..i * 4 + 4].try_into().unwrap())
    }

    #[test]
    fn reference_counts_and_copies() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a: Vec<f32> = (0..10).map(|i| i as f32).collect();
        let key = a.as_ptr() as usize;
        let mut moved = Transfers::default();
        unsafe {
            // Enter twice: one copy, dynamic count 2.
            let it = item("a", MapKind::To, &mut a, 0, 10);
            env.enter(&[&it], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            env.enter(&[&it], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            assert_eq!(moved.totals(), (40, 0));
            assert_eq!(env.entries()[0].dynamic, 2);
            // A structured reference on a part (present: no copy).
            let part = item("a", MapKind::Tofrom, &mut a, 2, 3);
            let maps = env.enter(&[&part], RefKind::Structured, &alloc(), &mut moved).unwrap();
            assert_eq!(maps[0].as_ref().unwrap().key, key);
            assert_eq!(moved.totals(), (40, 0));
            // The device copy changes; the host's does not.
            lock(&maps[0].as_ref().unwrap().buffer).host_view()[8..12].copy_from_slice(&100f32.to_ne_bytes());
            assert_eq!(device(&env, key, 2), 100.0);
            // Exit from (dynamic 2 -> 1): nothing moves.
            let from = item("a", MapKind::From, &mut a, 0, 10);
            env.exit(&[&from], None, RefKind::Dynamic, &mut moved).unwrap();
            assert_eq!(moved.totals(), (40, 0));
            // Delete: every reference count to 0 (the structured one too, as
            // libomptarget does); the entry goes without copying anything back.
            let gen = maps[0].as_ref().unwrap().gen;
            let del = item("a", MapKind::Delete, &mut a, 0, 10);
            env.exit(&[&del], None, RefKind::Dynamic, &mut moved).unwrap();
            assert!(env.is_empty());
            // A new mapping at the same address is another entry: the structured end
            // of the old one (its key and generation) leaves it alone.
            let again = item("a", MapKind::To, &mut a, 0, 10);
            env.enter(&[&again], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            let part = item("a", MapKind::Tofrom, &mut a, 2, 3);
            env.exit(&[&part], Some(&[Some((key, gen))]), RefKind::Structured, &mut moved).unwrap();
            assert_eq!(env.entries()[0].dynamic, 1);
            let rel = item("a", MapKind::Release, &mut a, 0, 10);
            env.exit(&[&rel], None, RefKind::Dynamic, &mut moved).unwrap();
        }
        assert!(env.is_empty());
        assert_eq!(moved.totals(), (80, 0));
        assert_eq!(a[2], 2.0);
        assert_eq!(a[1], 1.0);
    }

    #[test]
    fn always_and_update() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let key = a.as_ptr() as usize;
        let mut moved = Transfers::default();
        unsafe {
            env.enter(&[&item("a", MapKind::Alloc, &mut a, 0, 8)], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            assert_eq!(moved.totals(), (0, 0));
            assert_eq!(device(&env, key, 3), 0.0);
            // always to: copied although present.
            env.enter(&[&item("a", MapKind::AlwaysTo, &mut a, 2, 4)], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            assert_eq!(moved.totals(), (16, 0));
            assert_eq!((device(&env, key, 1), device(&env, key, 3)), (0.0, 3.0));
            // update to / from of parts.
            a[0] = 50.0;
            env.update(&[&item("a", MapKind::To, &mut a, 0, 1)], &mut moved).unwrap();
            assert_eq!(device(&env, key, 0), 50.0);
            a[5] = -1.0;
            env.update(&[&item("a", MapKind::From, &mut a, 4, 2)], &mut moved).unwrap();
            assert_eq!(a[5], 5.0);
            assert_eq!(moved.totals(), (20, 8));
            // always from with a count left: copied, entry stays.
            a[7] = -7.0;
            env.exit(&[&item("a", MapKind::AlwaysFrom, &mut a, 6, 2)], None, RefKind::Dynamic, &mut moved).unwrap();
            assert_eq!(a[7], 0.0, "alloc'd and never written: the device's zero");
            assert_eq!(env.entries()[0].dynamic, 1);
            // release: no copy, gone.
            env.exit(&[&item("a", MapKind::Release, &mut a, 0, 8)], None, RefKind::Dynamic, &mut moved).unwrap();
            assert!(env.is_empty());
            // Not present: update and exit do nothing.
            env.update(&[&item("a", MapKind::From, &mut a, 0, 8)], &mut moved).unwrap();
            env.exit(&[&item("a", MapKind::From, &mut a, 0, 8)], None, RefKind::Dynamic, &mut moved).unwrap();
        }
        assert_eq!(moved.totals(), (20, 16));
    }

    #[test]
    fn partial_overlaps_are_refused_whole() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a = vec![0f32; 16];
        let mut b = vec![0f32; 4];
        let mut moved = Transfers::default();
        unsafe {
            env.enter(&[&item("a", MapKind::To, &mut a, 4, 4)], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            // b is fine, a[2:4] overlaps a[4:4] without lying inside: nothing happens.
            let e = env
                .enter(
                    &[&item("b", MapKind::To, &mut b, 0, 4), &item("a", MapKind::To, &mut a, 2, 4)],
                    RefKind::Dynamic,
                    &alloc(),
                    &mut moved,
                )
                .err()
                .unwrap();
            assert!(e.contains("array 'a' is partly mapped"), "{e}");
            assert_eq!(env.entries().len(), 1);
            // Two items of one directive: the second inside the first is one entry.
            env.enter(
                &[&item("b", MapKind::To, &mut b, 0, 4), &item("b", MapKind::To, &mut b, 1, 2)],
                RefKind::Dynamic,
                &alloc(),
                &mut moved,
            )
            .unwrap();
            let bs = env.entries().into_iter().find(|e| e.name == "b").unwrap();
            assert_eq!(bs.dynamic, 2);
            assert_eq!(env.touches(&[&item("x", MapKind::To, &mut a, 6, 4)]).as_deref(), Some("x"));
            assert_eq!(env.touches(&[&item("x", MapKind::To, &mut a, 10, 4)]), None);
        }
    }

    #[test]
    fn launches_use_present_buffers_and_map_the_rest() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a: Vec<f32> = (0..8).map(|i| i as f32).collect();
        let mut p: Vec<f32> = vec![1.0; 4];
        let mut moved = Transfers::default();
        unsafe {
            env.enter(&[&item("a", MapKind::Tofrom, &mut a, 0, 8)], RefKind::Structured, &alloc(), &mut moved).unwrap();
            // `present` a (no map clause) and a private tofrom p.
            let mut present = item("a", MapKind::Present, &mut a, 0, 0);
            present.shape.dims = vec![0];
            present.shape.len = vec![0];
            let private = item("p", MapKind::Tofrom, &mut p, 0, 4);
            let maps = env.enter_launch(&[Some(&present), None, Some(&private)], &alloc(), &mut moved).unwrap();
            match &maps[0] {
                Some(LaunchMap::Present(m)) => assert_eq!((m.offset, m.avail), (0, 32)),
                _ => panic!("a must be present"),
            }
            assert!(matches!(maps[2], Some(LaunchMap::Private(_))));
            assert_eq!(env.entries()[0].structured, 2);
            assert_eq!(moved.0.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["a", "p"]);
            env.exit_launch(&[Some(&present), None, Some(&private)], maps, &mut moved).unwrap();
            assert_eq!(env.entries()[0].structured, 1);
            // A pointer into nothing mapped, and one into the middle of a mapping.
            let mut q = vec![0f32; 2];
            let mut absent = item("q", MapKind::Present, &mut q, 0, 0);
            absent.shape.len = vec![0];
            let e = env.enter_launch(&[Some(&absent)], &alloc(), &mut moved).err().unwrap();
            assert!(e.contains("'q' has no map clause and the data it points to is not mapped"), "{e}");
            // A pointer into the middle (a + 2): the entry's buffer from byte 8 on.
            let mut inner = item("a", MapKind::Present, &mut a, 0, 0);
            inner.shape.len = vec![0];
            inner.host = inner.host.add(8);
            let maps = env.enter_launch(&[Some(&inner)], &alloc(), &mut moved).unwrap();
            match &maps[0] {
                Some(LaunchMap::Present(m)) => assert_eq!((m.offset, m.avail), (8, 24)),
                _ => panic!("a + 2 must be present"),
            }
            assert_eq!(env.entries()[0].structured, 2);
            env.exit_launch(&[Some(&inner)], maps, &mut moved).unwrap();
            // Not on an element boundary (a + 2 bytes): refused.
            inner.host = inner.host.sub(6);
            let e = env.enter_launch(&[Some(&inner)], &alloc(), &mut moved).err().unwrap();
            assert!(e.contains("points 2 bytes into the device buffer of 'a', which is not a whole number of 4-byte"), "{e}");
            // Two arguments on one mapping.
            let e = env.enter_launch(&[Some(&present), Some(&present)], &alloc(), &mut moved).err().unwrap();
            assert!(e.contains("are one mapping on the device"), "{e}");
            assert_eq!(env.entries()[0].structured, 1, "failed launches leave the counts alone");
        }
        assert_eq!(moved.totals(), (32 + 16, 16));
    }

    #[test]
    fn host_fallbacks_see_device_data_and_keep_host_copies() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let key = a.as_ptr() as usize;
        let mut moved = Transfers::default();
        unsafe {
            env.enter(&[&item("a", MapKind::To, &mut a, 0, 6)], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            // The device copy moves on; the host's changes without an update.
            lock(&lock(&env.table)[&key].buffer).host_view()[0..4].copy_from_slice(&10f32.to_ne_bytes());
            a[5] = -5.0;
            // A host fallback on a[0:4]: sees the device's a[0], writes a[1].
            let region = item("a", MapKind::Tofrom, &mut a, 0, 4);
            let pins = env.host_begin(&[&region], &mut moved).unwrap();
            assert_eq!(a[0], 10.0);
            assert_eq!(env.entries()[0].structured, 1);
            a[1] = 11.0;
            env.host_end(pins, &mut moved).unwrap();
            // The device has the result; the host copy is as a device run leaves it.
            assert_eq!(device(&env, key, 1), 11.0);
            assert_eq!((a[0], a[1], a[5]), (0.0, 1.0, -5.0));
            assert_eq!(env.entries()[0].structured, 0);
            // `always, to`: the host's data goes to the device first.
            a[2] = 22.0;
            let region = item("a", MapKind::AlwaysTo, &mut a, 0, 6);
            let pins = env.host_begin(&[&region], &mut moved).unwrap();
            assert_eq!((a[0], a[2], a[5]), (0.0, 22.0, -5.0));
            env.host_end(pins, &mut moved).unwrap();
            assert_eq!((device(&env, key, 0), device(&env, key, 2), device(&env, key, 5)), (0.0, 22.0, -5.0));
        }
        assert_eq!(moved.totals(), (24 + 16 + 24 + 24, 16));
    }

    /// Property: a host run whose items overlap (two arguments aliasing one mapping,
    /// a struct and one of its members) leaves the device with everything the host
    /// code wrote and the host copy as it was, whatever the items and their order —
    /// random sections of one mapped array, random writes inside their union.
    #[test]
    fn overlapping_items_of_a_host_run_keep_every_write() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |k: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k as u64) as usize
        };
        for case in 0..300 {
            let env = DataEnv::<HostBuffer>::new();
            let n = 4 + next(20);
            let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
            let key = a.as_ptr() as usize;
            let mut moved = Transfers::default();
            unsafe {
                env.enter(&[&item("a", MapKind::Tofrom, &mut a, 0, n)], RefKind::Structured, &alloc(), &mut moved).unwrap();
                let device_start: Vec<f32> = (0..n).map(|i| device(&env, key, i)).collect();
                for x in a.iter_mut() {
                    *x += 0.5; // the host copy moves on without an update
                }
                let host_before = a.clone();
                let items: Vec<ArrayPlan> = (0..1 + next(4))
                    .map(|k| {
                        let lo = next(n);
                        let len = 1 + next(n - lo);
                        let map = [MapKind::To, MapKind::Tofrom, MapKind::Alloc, MapKind::From][next(4)];
                        item(&format!("v{k}"), map, &mut a, lo, len)
                    })
                    .collect();
                let refs: Vec<&ArrayPlan> = items.iter().collect();
                let pins = env.host_begin(&refs, &mut moved).unwrap();
                let mut want = device_start.clone();
                for it in &items {
                    let (lo, len) = (it.shape.lower[0], it.shape.len[0]);
                    for (i, w) in want.iter().enumerate().skip(lo).take(len) {
                        assert_eq!(a[i], *w, "case {case}: the host run sees the device copy");
                    }
                }
                for _ in 0..next(6) {
                    let it = &items[next(items.len())];
                    let i = it.shape.lower[0] + next(it.shape.len[0]);
                    a[i] = 1000.0 + case as f32;
                    want[i] = a[i];
                }
                env.host_end(pins, &mut moved).unwrap();
                for i in 0..n {
                    assert_eq!(device(&env, key, i), want[i], "case {case}: device element {i}");
                }
                assert_eq!(a, host_before, "case {case}: the host copy as it was");
            }
        }
    }

    /// A host run of unknown footprint (`__tessera_opaque`): every mapping, whole, as
    /// for a `present` use — the device bytes in, the results out, the host bytes
    /// back; bytes outside every mapping are the host code's own.
    #[test]
    fn host_runs_of_unknown_footprint_swap_every_mapping() {
        let env = DataEnv::<HostBuffer>::new();
        let mut a: Vec<f32> = (0..6).map(|i| i as f32).collect();
        let mut b: Vec<f32> = (0..4).map(|i| 100.0 + i as f32).collect();
        let kb = b.as_ptr() as usize;
        let mut moved = Transfers::default();
        unsafe {
            env.enter(&[&item("a", MapKind::To, &mut a, 1, 4)], RefKind::Dynamic, &alloc(), &mut moved).unwrap();
            env.enter(&[&item("b", MapKind::Alloc, &mut b, 0, 4)], RefKind::Structured, &alloc(), &mut moved).unwrap();
            let ka = *lock(&env.table).keys().find(|&&k| k != kb).unwrap();
            // Device and host copies drift apart.
            lock(&lock(&env.table)[&ka].buffer).host_view()[8..12].copy_from_slice(&20f32.to_ne_bytes());
            a[3] = -3.0;
            let pins = env.host_begin_all(&mut moved).unwrap();
            assert_eq!(pins.len(), 2);
            assert_eq!(moved.totals(), (16, 16 + 16), "a[1:4] and b[0:4] came from the device");
            assert_eq!((a[0], a[2], a[3], a[5]), (0.0, 20.0, 3.0, 5.0));
            assert_eq!(b, vec![0.0; 4], "b was allocated, not copied: the device's zeros");
            assert!(env.entries().iter().all(|e| e.structured >= 1));
            a[1] = 11.0;
            a[5] = 55.0; // outside every mapping: the host code's own write
            b[2] = 7.0;
            env.host_end(pins, &mut moved).unwrap();
            assert_eq!((device(&env, ka, 1), device(&env, ka, 2), device(&env, kb, 2)), (11.0, 20.0, 7.0));
            assert_eq!((a[1], a[2], a[3], a[5]), (1.0, 2.0, -3.0, 55.0), "the host bytes of mappings are back");
            assert_eq!(b[2], 102.0);
        }
        assert_eq!(moved.totals(), (16 + 16 + 16, 32));
        let counts: Vec<(u64, u64)> = env.entries().iter().map(|e| (e.structured, e.dynamic)).collect();
        assert!(counts.contains(&(0, 1)) && counts.contains(&(1, 0)), "{counts:?}");
    }
}
