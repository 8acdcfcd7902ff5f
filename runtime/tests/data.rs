//! The device data environment end to end on the emulated device, through the Rust
//! API the C entry points wrap (`environment::DataEnvironment`): data regions keep arrays on the
//! device across launches, `present` arguments find them, host fallbacks inside data
//! regions see and return device data, and four threads offload at once on shared
//! present data. Each test has its own environments and kernel cache.

mod common;

use common::*;
use std::ffi::c_void;
use std::path::Path;
use tessera_ir::data::DataOp;
use tessera_ir::{Expr, MapKind, VarKind};
use tessera_rt::config::{Config, OffloadPolicy};
use tessera_rt::device::DeviceKind;
use tessera_rt::environment::DataEnvironment as Envs;

fn n() -> Expr {
    var("n")
}

/// `target data map(<ma>: a[0:n]) map(<mb>: b[0:n])` over pointers `a`, `b` and `n`.
fn data_ab(op: DataOp, ma: MapKind, mb: MapKind) -> tessera_ir::data::DataDesc {
    let whole = || vec![sec(Expr::int(0), n())];
    data_desc(
        "d.c:5",
        op,
        &[("a", VarKind::Pointer), ("b", VarKind::Pointer), ("n", VarKind::Scalar)],
        vec![(0, ma, vec![n()], whole()), (1, mb, vec![n()], whole())],
    )
}

struct Arrays {
    a: Vec<f32>,
    b: Vec<f32>,
    pa: *mut f32,
    pb: *mut f32,
    n: i32,
}

impl Arrays {
    fn new(n: i32) -> Box<Arrays> {
        let mut x = Box::new(Arrays {
            a: (0..n).map(|i| i as f32 + 0.5).collect(),
            b: vec![7.0; n as usize],
            pa: std::ptr::null_mut(),
            pb: std::ptr::null_mut(),
            n,
        });
        x.pa = x.a.as_mut_ptr();
        x.pb = x.b.as_mut_ptr();
        x
    }
    fn args(&mut self) -> [*mut c_void; 3] {
        [addr(&mut self.pa), addr(&mut self.pb), addr(&mut self.n)]
    }
}

fn emu(cache: &Path) -> Config {
    Config::emu(cache)
}

#[test]
fn data_region_keeps_arrays_on_the_device() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(100);
    let args = x.args();
    unsafe {
        let (run, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::To, MapKind::Tofrom), &args);
        assert!(run.handled, "{:?}", run.record.reason);
        assert_eq!(run.record.op.as_deref(), Some("target data"));
        assert_eq!((run.record.bytes_to_device, run.record.bytes_from_device), (800, 0));
        // Three launches: explicit maps of present data, then pointers without map clauses.
        for m in [scale1d(), scale1d(), scale1d_present()] {
            let l = envs.offload(&config, &m, &args);
            assert!(l.host.is_none());
            assert_eq!(l.record.device, DeviceKind::Emu, "{:?}", l.record.reason);
            assert_eq!((l.record.bytes_to_device, l.record.bytes_from_device), (0, 0));
            assert!(l.record.transfers.is_empty());
        }
        // Nothing came back yet.
        assert_eq!(x.b[1], 7.0);
        assert_eq!(envs.entries(DeviceKind::Emu).len(), 2);
        let end = envs.data_end(*scope).unwrap();
        assert!(end.handled);
        assert_eq!(end.record.op.as_deref(), Some("end target data"));
        assert_eq!((end.record.bytes_to_device, end.record.bytes_from_device), (0, 400));
    }
    assert!(envs.is_empty(DeviceKind::Emu));
    assert_eq!((x.b[0], x.b[1], x.b[98], x.b[99]), (7.0, 2.0 * x.a[1], 2.0 * x.a[98], 7.0));
}

#[test]
fn present_arguments_need_a_mapping() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(20);
    let args = x.args();
    let l = unsafe { envs.offload(&config, &scale1d_present(), &args) };
    assert_eq!(l.record.device, DeviceKind::Host);
    assert!(l.record.reason.as_deref().unwrap().contains("'a' has no map clause"), "{:?}", l.record.reason);
    assert!(l.host.is_none(), "nothing is present: nothing to copy around the host run");
}

#[test]
fn enter_update_exit() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(50);
    let args = x.args();
    unsafe {
        let r = envs.data(&config, &data_ab(DataOp::Enter, MapKind::To, MapKind::Alloc), &args);
        assert!(r.handled && r.fatal.is_none());
        assert_eq!(r.record.transfers.0.len(), 1, "only a moved: {:?}", r.record.transfers);
        let l = envs.offload(&config, &scale1d_present(), &args);
        assert_eq!(l.record.device, DeviceKind::Emu, "{:?}", l.record.reason);
        let r = envs.data(&config, &data_ab(DataOp::Update, MapKind::To, MapKind::From), &args);
        assert_eq!((r.record.bytes_to_device, r.record.bytes_from_device), (200, 200));
        // b's ends were never written on the device: alloc, zero in emulation.
        assert_eq!((x.b[0], x.b[1]), (0.0, 2.0 * x.a[1]));
        let r = envs.data(&config, &data_ab(DataOp::Exit, MapKind::Delete, MapKind::Release), &args);
        assert_eq!((r.record.bytes_to_device, r.record.bytes_from_device), (0, 0));
        assert!(envs.is_empty(DeviceKind::Emu));
        // Disabled: nothing executes, nothing is mapped.
        let off = Config { offload: OffloadPolicy::Disabled, ..config.clone() };
        let r = envs.data(&off, &data_ab(DataOp::Enter, MapKind::To, MapKind::Alloc), &args);
        assert!(!r.handled);
        assert_eq!(r.record.reason.as_deref(), Some("OMP_TARGET_OFFLOAD=DISABLED"));
        assert!(envs.is_empty(DeviceKind::Emu));
    }
}

#[test]
fn host_fallback_inside_a_data_region() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(10);
    let args = x.args();
    let mut rejected = scale1d();
    rejected.kernel = None;
    rejected.rejected = Some("call 'f(a[i])' is not supported".into());
    unsafe {
        let (_, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::To, MapKind::Tofrom), &args);
        // A kernel writes b on the device.
        assert!(envs.offload(&config, &scale1d(), &args).record.offloaded());
        // The host meanwhile changes its own copy of a (no update: the device keeps its a).
        x.a[3] = -100.0;
        let l = envs.offload(&config, &rejected, &args);
        let run = l.host.expect("present data: a host run with copies");
        // The host code sees the device's data...
        assert_eq!((x.a[3], x.b[3]), (3.5, 7.0));
        // ... and writes the host memory: b[i] = b[i] + a[i].
        for i in 1..9 {
            x.b[i] += x.a[i];
        }
        let record = envs.host_end(run);
        assert_eq!(record.device, DeviceKind::Host);
        assert_eq!(record.reason.as_deref(), Some("call 'f(a[i])' is not supported"));
        // a[1:8] and b[1:8] came to the host and went back.
        assert_eq!((record.bytes_to_device, record.bytes_from_device), (64, 64));
        // The host copies are what a device run leaves: a's own change, b's old values.
        assert_eq!((x.a[3], x.b[3]), (-100.0, 7.0));
        envs.data_end(*scope).unwrap();
    }
    // b = 2a + a on the device, then back at the end.
    assert_eq!(x.b[3], 3.0 * 3.5);
    assert_eq!(x.b[0], 7.0);
}

#[test]
fn rejected_directives_that_touch_device_data_are_fatal() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(10);
    let args = x.args();
    unsafe {
        let mut upd = data_ab(DataOp::Update, MapKind::From, MapKind::From);
        upd.rejected = Some("clause 'depend' is not supported".into());
        // Nothing present: left to the host OpenMP runtime (a no-op there).
        let r = envs.data(&config, &upd, &args);
        assert!(!r.handled && r.fatal.is_none());
        envs.data(&config, &data_ab(DataOp::Enter, MapKind::To, MapKind::Alloc), &args);
        let r = envs.data(&config, &upd, &args);
        let fatal = r.fatal.expect("a is on the device");
        assert!(fatal.contains("'target update' cannot be executed by Tessera (clause 'depend' is not supported)"), "{fatal}");
        // A target data that does not map sends every region inside it to the host.
        let mut region = data_ab(DataOp::Region, MapKind::To, MapKind::Tofrom);
        region.rejected = Some("clause 'if' is not supported".into());
        let (r, scope) = envs.data_begin(&config, &region, &args);
        assert!(!r.handled && r.fatal.is_none());
        let l = envs.offload(&config, &scale1d(), &args);
        assert!(l.record.reason.as_deref().unwrap().contains("did not map its data"), "{:?}", l.record.reason);
        envs.host_end(l.host.expect("a is present: copies around the host run"));
        assert!(envs.data_end(*scope).is_none());
        assert!(envs.offload(&config, &scale1d(), &args).record.offloaded());
    }
}

/// OpenMP's `present` modifier: an item inside one mapping runs as without it; an
/// item not (wholly) on the device stops the program; the probes of an unsupported
/// clause find data that element 0 of their variable would not.
#[test]
fn present_modifier_and_probes() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(10);
    let args = x.args();
    let part = |lo: i64, len: i64| vec![sec(Expr::int(lo), Expr::int(len))];
    let one = |map, lo, len, present| {
        let mut d = data_desc(
            "d.c:8",
            DataOp::Update,
            &[("a", VarKind::Pointer), ("b", VarKind::Pointer), ("n", VarKind::Scalar)],
            vec![(0, map, vec![n()], part(lo, len))],
        );
        d.items[0].present = present;
        d
    };
    unsafe {
        let mut enter = one(MapKind::To, 2, 5, false);
        enter.op = DataOp::Enter;
        assert!(envs.data(&config, &enter, &args).handled);
        // a[3:3] lies inside a[2:5]: updated.
        let r = envs.data(&config, &one(MapKind::To, 3, 3, true), &args);
        assert!(r.handled && r.fatal.is_none(), "{:?}", r.fatal);
        // a[0:10] reaches past it: fatal, nothing moved.
        let r = envs.data(&config, &one(MapKind::From, 0, 10, true), &args);
        let fatal = r.fatal.expect("a[0:10] is not present");
        assert!(fatal.contains("d.c:8: 'target update': 'a' is not present on the device"), "{fatal}");
        // Without the modifier the same update copies what is present.
        assert!(envs.data(&config, &one(MapKind::From, 0, 10, false), &args).fatal.is_none());
        // A rejected update whose only item is a probe of a[4:2]: element 0 of a is
        // not mapped, the probe is.
        let mut blind = one(MapKind::To, 4, 2, false);
        blind.probes = std::mem::take(&mut blind.items);
        blind.rejected = Some("[unsupported-clause] clause 'to(mapper: ...)' is not supported".into());
        let fatal = envs.data(&config, &blind, &args).fatal.expect("the probe finds a[4:2] on the device");
        assert!(fatal.contains("'a' is mapped on the device by Tessera"), "{fatal}");
        blind.probes[0].section = part(8, 2);
        assert!(envs.data(&config, &blind, &args).fatal.is_none(), "a[8:2] is not on the device");
    }
}

#[test]
fn four_threads_share_present_read_only_data() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let n = 64;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (mut pa, mut nv) = (a.as_mut_ptr(), n);
    // target enter data map(to: a[0:n])
    let enter = data_desc(
        "d.c:1",
        DataOp::Enter,
        &[("a", VarKind::Pointer), ("n", VarKind::Scalar)],
        vec![(0, MapKind::To, vec![var("n")], vec![sec(Expr::int(0), var("n"))])],
    );
    assert!(unsafe { envs.data(&config, &enter, &[addr(&mut pa), addr(&mut nv)]) }.handled);
    let shared = pa as usize;
    std::thread::scope(|s| {
        for t in 0..4 {
            let (envs, config) = (&envs, &config);
            s.spawn(move || {
                let mut b = vec![t as f32; n as usize];
                let (mut pa, mut pb, mut nv) = (shared as *mut f32, b.as_mut_ptr(), n);
                for _ in 0..5 {
                    let l = unsafe { envs.offload(config, &scale1d(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
                    assert!(l.record.offloaded(), "{:?}", l.record.reason);
                    // a is present (no copy); b is this thread's own, mapped per launch.
                    assert_eq!(l.record.transfers.0.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(), ["b"]);
                }
                for (i, &x) in b.iter().enumerate().take(n as usize - 1).skip(1) {
                    assert_eq!(x, 2.0 * i as f32);
                }
                assert_eq!((b[0], b[n as usize - 1]), (t as f32, t as f32));
            });
        }
    });
    assert_eq!(envs.entries(DeviceKind::Emu)[0].structured, 0);
    assert_eq!(envs.entries(DeviceKind::Emu)[0].dynamic, 1);
}

/// OpenMP lets a region use a part of a mapped array through a pointer into it
/// (`float *p = a + lo;` inside `target data map(a[0:n])`): the present table finds
/// the containing mapping and the kernel gets its buffer from `lo` on. The device runs
/// it, nothing is copied, and the results are the CPU's.
#[test]
fn present_pointers_into_the_middle_of_a_mapping_run_on_the_device() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let n = 100;
    let mut x = Arrays::new(n);
    let lo = 8usize;
    // The CPU's result of the same program: b[i] = 2·a[i] on the window's inner part.
    let mut want = x.b.clone();
    for (w, a) in want.iter_mut().zip(&x.a).take(n as usize - lo - 1).skip(lo + 1) {
        *w = 2.0 * a;
    }
    let args = x.args();
    unsafe {
        let (run, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::To, MapKind::Tofrom), &args);
        assert!(run.handled, "{:?}", run.record.reason);
        // scale1d on the window [lo, n - lo): pointers a + lo, b + lo and length n - 2·lo.
        let (mut pa, mut pb, mut m) = (x.pa.add(lo), x.pb.add(lo), n - 2 * lo as i32);
        let l = envs.offload(&config, &scale1d_present(), &[addr(&mut pa), addr(&mut pb), addr(&mut m)]);
        assert!(l.host.is_none());
        assert_eq!(l.record.device, DeviceKind::Emu, "{:?}", l.record.reason);
        assert!(l.record.transfers.is_empty(), "present data moves nowhere: {:?}", l.record.transfers);
        // The kernel counted its accesses through ports on the window: m-2 reads of a.
        let arrays = &l.record.arrays.as_ref().unwrap().0;
        assert_eq!(arrays[0].1.as_ref().unwrap().read_bytes, 4 * (m as u64 - 2));
        // Mapped sections inside the window work the same (map(to: a[1:m-2]) of a + lo).
        let (mut pa, mut pb) = (x.pa.add(lo), x.pb.add(lo));
        let l = envs.offload(&config, &scale1d(), &[addr(&mut pa), addr(&mut pb), addr(&mut m)]);
        assert_eq!(l.record.device, DeviceKind::Emu, "{:?}", l.record.reason);
        assert!(l.record.transfers.is_empty(), "{:?}", l.record.transfers);
        // Nothing reached the host before the end of the data region.
        assert_eq!(x.b[lo + 1], 7.0);
        // A pointer between elements is refused with the reason, and the host runs it.
        let (mut pa, mut pb) = ((x.pa as *mut u8).add(2) as *mut f32, x.pb);
        let l = envs.offload(&config, &scale1d_present(), &[addr(&mut pa), addr(&mut pb), addr(&mut m)]);
        assert_eq!(l.record.device, DeviceKind::Host);
        let why = l.record.reason.clone().unwrap();
        assert!(why.contains("'a' points 2 bytes into the device buffer of 'a', which is not a whole number"), "{why}");
        if let Some(run) = l.host {
            envs.host_end(run);
        }
        envs.data_end(*scope).unwrap();
    }
    assert!(envs.is_empty(DeviceKind::Emu));
    assert_eq!(x.b, want);
}

/// The owner's rules for directives it cannot fully see: a rejected update whose
/// items it cannot locate is fatal while anything is mapped (harmless otherwise); a
/// region whose footprint is unknown runs on the host with the device copy of every
/// mapping around it, or, with a clause the runtime cannot honour without its
/// variables, only while nothing is mapped; an `if` clause that is false moves
/// nothing.
#[test]
fn directives_with_unknown_footprints_never_run_half_on_the_host() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(16);
    let args = x.args();
    let mut blind = data_desc("d.c:9", DataOp::Update, &[], vec![]);
    blind.rejected = Some("member access 's.a[0:n]' is not supported".into());
    blind.unlocated = 1;
    let opaque = tessera_rt::report::Record::host("d.c:7".into(), None, "why".into());
    unsafe {
        // Nothing mapped: the host OpenMP runtime may have it.
        let r = envs.data(&config, &blind, &[]);
        assert!(!r.handled && r.fatal.is_none(), "{:?}", r.fatal);
        assert!(envs.opaque_violation(&config, &opaque, "its 'if' clause").is_none());
        assert!(envs.opaque_host_run(&config, opaque.clone()).unwrap_or_else(|r| panic!("{r:?}")).is_none());
        let r = envs.data(&config, &data_ab(DataOp::Enter, MapKind::To, MapKind::To), &args);
        assert!(r.handled);
        // Now a and b are on the device: both are refused, naming them.
        let fatal = envs.data(&config, &blind, &[]).fatal.expect("fatal while data is mapped");
        assert!(fatal.contains("'a', 'b'"), "{fatal}");
        let v = envs.opaque_violation(&config, &opaque, "its 'if' clause").expect("refused while data is mapped");
        assert!(v.contains("d.c:7") && v.contains("'a'") && v.contains("its 'if' clause"), "{v}");
        // Without such a clause: a host run over every mapping, whole, both ways.
        let run = envs.opaque_host_run(&config, opaque.clone()).unwrap_or_else(|r| panic!("{r:?}")).expect("a host run");
        let rec = envs.host_end(run);
        assert_eq!(rec.transfers.0.len(), 2, "{rec:?}");
        assert!(rec.transfers.0.iter().all(|(_, m)| m.to_device > 0 && m.to_device == m.from_device), "{rec:?}");
        // `if(0)`: nothing moves, the directive counts as executed (OpenMP's host device).
        let mut upd = data_ab(DataOp::Update, MapKind::From, MapKind::From);
        upd.args.push(tessera_ir::data::DataArg { name: "c".into(), kind: VarKind::Scalar, elem: tessera_ir::ScalarType::I32 });
        upd.condition = Some(3);
        let mut cond = 0i32;
        let with_cond = [args[0], args[1], args[2], addr(&mut cond)];
        let r = envs.data(&config, &upd, &with_cond);
        assert!(r.handled && r.record.transfers.0.is_empty(), "{:?}", r.record);
        *(with_cond[3] as *mut i32) = 1;
        let r = envs.data(&config, &upd, &with_cond);
        assert_eq!(r.record.transfers.0.len(), 2);
        // delete: gone whatever the counts (a `target data` reference included).
        let (_, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::Tofrom, MapKind::Tofrom), &args);
        let r = envs.data(&config, &data_ab(DataOp::Exit, MapKind::Delete, MapKind::Delete), &args);
        assert!(r.handled);
        assert!(envs.is_empty(DeviceKind::Emu), "{:?}", envs.entries(DeviceKind::Emu));
        // The construct's end finds nothing left to unmap.
        let end = envs.data_end(*scope).expect("the construct mapped");
        assert!(end.record.transfers.0.is_empty());
    }
}

/// An access outside the mapped section is reported before anything runs, and the
/// region falls back to the host (the C entry then prints the reason).
#[test]
fn accesses_outside_the_mapped_section_fall_back_to_the_host() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    // scale1d reads a[i] for 1 <= i < n - 1, and maps a[1:n-2].
    let footprint = |hi: i64| tessera_ir::manifest::Footprint {
        access: format!("a[i + {}]", hi - 2),
        write: false,
        lo: vec![Expr::int(1)],
        hi: vec![minus(var("n"), hi)],
        nonempty: vec![(Expr::int(1), minus(var("n"), 1))],
        may: false,
        lattice: None,
    };
    let mut x = Arrays::new(16);
    let args = x.args();
    let mut m = scale1d();
    m.args[0].array.as_mut().unwrap().footprint.push(footprint(2));
    let l = unsafe { envs.offload(&config, &m, &args) };
    assert!(l.record.offloaded(), "{:?}", l.record.reason);
    let mut m = scale1d();
    m.args[0].array.as_mut().unwrap().footprint.push(footprint(1));
    let l = unsafe { envs.offload(&config, &m, &args) };
    let why = l.record.reason.clone().unwrap_or_default();
    assert!(!l.record.offloaded());
    assert!(why.starts_with(tessera_rt::data::OUT_OF_SECTION) && why.contains("a[15]") && why.contains("a[1:14]"), "{why}");
    // The same range as a bound of what a guarded read may touch (`may`): not checked.
    let mut m = scale1d();
    m.args[0].array.as_mut().unwrap().footprint.push(tessera_ir::manifest::Footprint { may: true, ..footprint(1) });
    let l = unsafe { envs.offload(&config, &m, &args) };
    assert!(l.record.offloaded(), "{:?}", l.record.reason);
    // An empty iteration domain accesses nothing.
    let mut x = Arrays::new(1);
    let args = x.args();
    assert!(unsafe { envs.offload(&config, &m, &args) }.record.reason.is_none_or(|r| !r.starts_with("out-of")));
}

/// Host runs of regions from two threads on one present mapping (each region's host
/// code updates its own half of `b` through the host pointer) do not interleave: each
/// one's copies around its host code see the other's results, never a half-restored
/// host copy. Without the exclusion, updates are lost.
#[test]
fn host_runs_from_threads_on_one_mapping_do_not_interleave() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let n = 64usize;
    let mut x = Arrays::new(n as i32);
    for v in x.b.iter_mut() {
        *v = 0.0;
    }
    let args = x.args();
    let mut rejected = scale1d_present();
    rejected.kernel = None;
    rejected.rejected = Some("call 'f(b[i])' is not supported".into());
    let iterations = 40;
    unsafe {
        let r = envs.data(&config, &data_ab(DataOp::Enter, MapKind::To, MapKind::To), &args);
        assert!(r.handled);
        let (pa, pb, nn) = (x.pa as usize, x.pb as usize, x.n);
        std::thread::scope(|s| {
            for t in 0..2usize {
                let (envs, config, rejected) = (&envs, &config, &rejected);
                s.spawn(move || {
                    let (mut a, mut b, mut n) = (pa as *mut f32, pb as *mut f32, nn);
                    for _ in 0..iterations {
                        let l = envs.offload(config, rejected, &[addr(&mut a), addr(&mut b), addr(&mut n)]);
                        let run = l.host.expect("present data: a host run with copies");
                        // The region's host code: this thread's half of b, + 1.
                        for i in t * n as usize / 2..(t + 1) * n as usize / 2 {
                            *b.add(i) += 1.0;
                            std::thread::yield_now();
                        }
                        envs.host_end(run);
                    }
                });
            }
        });
        let r = envs.data(&config, &data_ab(DataOp::Exit, MapKind::From, MapKind::From), &args);
        assert!(r.handled);
    }
    assert!(x.b.iter().all(|&v| v == iterations as f32), "{:?}", x.b);
}

/// A host run copies what the region's accesses cover (their footprint), not the
/// whole mapping a `present` pointer reaches: the rest of the host copy is left alone
/// (another thread may be using it).
#[test]
fn host_runs_copy_only_the_footprint() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(10);
    let args = x.args();
    let mut rejected = scale1d_present();
    rejected.kernel = None;
    rejected.rejected = Some("call 'f(b[i])' is not supported".into());
    let run = |m: &tessera_ir::manifest::Manifest, args: &[*mut c_void]| unsafe {
        let l = envs.offload(&config, m, args);
        let record = envs.host_end(l.host.expect("present data: a host run"));
        (record.bytes_to_device, record.bytes_from_device)
    };
    unsafe {
        let (_, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::Tofrom, MapKind::Tofrom), &args);
        // Without a footprint: the rest of each mapping, 10 floats of a and of b.
        assert_eq!(run(&rejected, &args), (80, 80));
        // With one: a[1..=8] and b[1..=8] (for 1 <= i < n - 1).
        for k in 0..2 {
            rejected.args[k].array.as_mut().unwrap().footprint.push(tessera_ir::manifest::Footprint {
                access: "x[i]".into(),
                write: k == 1,
                lo: vec![Expr::int(1)],
                hi: vec![minus(var("n"), 2)],
                nonempty: vec![(Expr::int(1), minus(var("n"), 1))],
                may: false,
                lattice: None,
            });
        }
        assert_eq!(run(&rejected, &args), (64, 64));
        // Ranges of what guarded reads may touch narrow the copies the same way.
        for k in 0..2 {
            rejected.args[k].array.as_mut().unwrap().footprint[0].may = true;
        }
        assert_eq!(run(&rejected, &args), (64, 64));
        envs.data_end(*scope).unwrap();
    }
}

/// `always` moves the whole section around a host run, not only what the region's
/// accesses cover.
#[test]
fn host_runs_with_always_move_the_whole_section() {
    let cache = tempfile::tempdir().unwrap();
    let config = emu(cache.path());
    let envs = Envs::new();
    let mut x = Arrays::new(10);
    let args = x.args();
    let mut rejected = scale1d();
    rejected.kernel = None;
    rejected.rejected = Some("clause 'nowait' is not supported".into());
    for k in 0..2 {
        let a = rejected.args[k].array.as_mut().unwrap();
        a.map = if k == 0 { MapKind::AlwaysTo } else { MapKind::Tofrom };
        a.section = vec![sec(Expr::int(0), var("n"))];
        a.footprint.push(tessera_ir::manifest::Footprint {
            access: "x[i]".into(),
            write: k == 1,
            lo: vec![Expr::int(1)],
            hi: vec![minus(var("n"), 2)],
            nonempty: vec![(Expr::int(1), minus(var("n"), 1))],
            may: false,
            lattice: None,
        });
    }
    unsafe {
        let (_, scope) = envs.data_begin(&config, &data_ab(DataOp::Region, MapKind::Tofrom, MapKind::Tofrom), &args);
        // The host changes a everywhere; `always, to` must bring all of it over.
        for v in x.a.iter_mut() {
            *v = -1.0;
        }
        let l = envs.offload(&config, &rejected, &args);
        let record = envs.host_end(l.host.expect("present data: a host run"));
        // a: all 10 floats (40 bytes) to the device before (always to) and after the
        // host code; b: its footprint, 8 floats each way.
        assert_eq!((record.bytes_to_device, record.bytes_from_device), (40 + 40 + 32, 32));
        x.a[0] = 5.0; // the host copy again; the device keeps -1
        envs.data_end(*scope).unwrap();
    }
    assert_eq!(x.a[0], -1.0, "a[0] came back from the device: the always copy reached it");
}
