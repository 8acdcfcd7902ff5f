//! Region data: argument values, evaluated array shapes, section boxes, host memory
//! checks, device buffers of host memory, and the copies between them.
//!
//! [`plan`] turns the addresses the rewritten call passes into a [`Plan`]: scalar
//! values in aligned slots, and for every array its evaluated extents, its mapped
//! section (a box in the index space) and the host address of element 0. Everything
//! the launch relies on is checked here, before any device work: extents are
//! non-negative, sections lie inside the extents, sizes fit the address space, and
//! the mapped host ranges of arrays that are copied back do not overlap another
//! mapped array.
//!
//! Layout convention: an array of extents `d0 × … × dk-1` is row-major (C order) both
//! on the host and in its device buffer, so an element has the same byte offset in
//! both, and a section box moves as a sequence of contiguous *runs* (the innermost
//! rows, merged with the dimensions below them that the box covers whole).

use std::alloc::Layout;
use std::ffi::c_void;
use std::ops::Range;
use tessera_ir::eval::eval_int;
use tessera_ir::manifest::Manifest;
use tessera_ir::{MapKind, ScalarType, VarKind};

/// A scalar argument's value, in an 8-byte aligned slot (the kernel reads it through
/// a pointer of its C type).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(8))]
pub struct ScalarSlot {
    /// The value's bytes (native endianness), zero-padded to 8.
    pub bytes: [u8; 8],
    /// Its C type.
    pub ty: ScalarType,
}

impl ScalarSlot {
    /// Copies a value of type `ty` from `addr`.
    ///
    /// # Safety
    /// `addr` must point at a readable value of type `ty` (any alignment).
    pub unsafe fn read(ty: ScalarType, addr: *const c_void) -> ScalarSlot {
        let mut bytes = [0u8; 8];
        std::ptr::copy_nonoverlapping(addr as *const u8, bytes.as_mut_ptr(), ty.size());
        ScalarSlot { bytes, ty }
    }

    /// A slot holding `v` converted to `ty` (tests and tools).
    pub fn from_i128(ty: ScalarType, v: i128) -> ScalarSlot {
        let mut bytes = [0u8; 8];
        let all = v.to_ne_bytes();
        // Little-endian hosts only (x86-64, aarch64): the low bytes come first.
        bytes[..ty.size()].copy_from_slice(&all[..ty.size()]);
        ScalarSlot { bytes, ty }
    }

    /// The integer value (C's value of the type), `None` for floating types.
    pub fn as_i128(&self) -> Option<i128> {
        let b = self.bytes;
        let v = match self.ty {
            ScalarType::Bool => (b[0] != 0) as i128,
            ScalarType::I8 => i8::from_ne_bytes([b[0]]) as i128,
            ScalarType::U8 => b[0] as i128,
            ScalarType::I16 => i16::from_ne_bytes([b[0], b[1]]) as i128,
            ScalarType::U16 => u16::from_ne_bytes([b[0], b[1]]) as i128,
            ScalarType::I32 => i32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as i128,
            ScalarType::U32 => u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as i128,
            ScalarType::I64 => i64::from_ne_bytes(b) as i128,
            ScalarType::U64 => u64::from_ne_bytes(b) as i128,
            ScalarType::F32 | ScalarType::F64 => return None,
        };
        Some(v)
    }

    /// Pointer to the value, as passed to the kernel.
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.bytes.as_mut_ptr() as *mut c_void
    }
}

/// An evaluated array shape and its mapped section box.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoxShape {
    /// Element size in bytes.
    pub elem_size: usize,
    /// Extents, outermost first (at least one).
    pub dims: Vec<usize>,
    /// First index of the section in every dimension.
    pub lower: Vec<usize>,
    /// Section length in every dimension.
    pub len: Vec<usize>,
}

impl BoxShape {
    /// The section as `(lower, length)` per dimension ([`Valid::Section`]).
    pub fn section(&self) -> Vec<(i128, i128)> {
        self.lower.iter().zip(&self.len).map(|(&l, &n)| (l as i128, n as i128)).collect()
    }

    /// Bytes of the whole index space (`∏ dims × elem_size`): the device buffer size.
    pub fn total_bytes(&self) -> usize {
        self.dims.iter().product::<usize>() * self.elem_size
    }

    /// Bytes of the section box: what moves per direction.
    pub fn box_bytes(&self) -> usize {
        self.len.iter().product::<usize>() * self.elem_size
    }

    /// True when the section has no element.
    pub fn is_empty(&self) -> bool {
        self.len.contains(&0)
    }

    /// Byte offset of an element given by its indices.
    fn offset(&self, idx: &[usize]) -> usize {
        idx.iter().zip(&self.dims).fold(0, |acc, (i, d)| acc * d + i) * self.elem_size
    }

    /// Byte range from the box's first element to the end of its last: every byte the
    /// section touches lies inside (bytes between rows may be included).
    pub fn span(&self) -> Option<Range<usize>> {
        if self.is_empty() {
            return None;
        }
        let last: Vec<usize> = self.lower.iter().zip(&self.len).map(|(l, n)| l + n - 1).collect();
        Some(self.offset(&self.lower)..self.offset(&last) + self.elem_size)
    }

    /// Calls `f(byte_offset, byte_len)` for every contiguous run of the box, in
    /// increasing offset order. A run is the box's extent in the innermost dimension
    /// the box does not cover whole, times the whole dimensions inside it.
    pub fn for_each_run(&self, mut f: impl FnMut(usize, usize)) {
        if self.is_empty() {
            return;
        }
        let k = self.dims.len();
        // j: the outermost dimension such that every dimension inside it is whole.
        let mut j = k - 1;
        while j > 0 && self.lower[j] == 0 && self.len[j] == self.dims[j] {
            j -= 1;
        }
        let inner: usize = self.dims[j + 1..].iter().product();
        let run = self.len[j] * inner * self.elem_size;
        // Odometer over the dimensions outside j.
        let mut idx: Vec<usize> = self.lower.clone();
        loop {
            f(self.offset(&idx), run);
            let mut d = j;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < self.lower[d] + self.len[d] {
                    break;
                }
                idx[d] = self.lower[d];
            }
        }
    }
}

/// One array argument, ready to move.
#[derive(Debug)]
pub struct ArrayPlan {
    /// Variable name.
    pub name: String,
    /// Map type.
    pub map: MapKind,
    /// Shape and section.
    pub shape: BoxShape,
    /// Host address of element 0 (null only when the section is empty).
    pub host: *mut u8,
    /// For a host run: the byte runs `(offset from element 0, length)`, sorted and
    /// disjoint, of exactly the elements the region's accesses may touch (the
    /// lattices of its footprints, [`narrowed`]); the host run inside a parallel
    /// region swaps only those. `None`: the box stands for them.
    pub exact_runs: Option<Vec<(usize, usize)>>,
}

impl ArrayPlan {
    /// Whether the box is copied host → device when a new device buffer is made for
    /// it (a launch, or a new entry of the present table). `from` counts: its device
    /// buffer is pre-filled with the host values so elements the kernel does not
    /// write come back unchanged (results identical to the host run). `alloc` and
    /// `present` are not copied.
    pub fn prefills(&self) -> bool {
        matches!(self.map.base(), MapKind::To | MapKind::From | MapKind::Tofrom)
    }

    /// Whether the box is copied device → host after the launch.
    pub fn copies_out(&self) -> bool {
        self.map.copies_out()
    }

    /// Host address range the section touches.
    pub fn host_span(&self) -> Option<Range<usize>> {
        self.shape.span().map(|r| self.host as usize + r.start..self.host as usize + r.end)
    }

    /// Copies the box from host memory into `dev` (the device buffer's view); returns
    /// the bytes copied.
    ///
    /// # Safety
    /// The host array must be valid for the box (as [`plan`] established from the
    /// caller's promise), and `dev` must hold [`BoxShape::total_bytes`] bytes.
    pub unsafe fn copy_in(&self, dev: &mut [u8]) -> u64 {
        assert!(dev.len() >= self.shape.total_bytes());
        let mut n = 0u64;
        self.shape.for_each_run(|off, len| {
            std::ptr::copy_nonoverlapping(self.host.add(off), dev.as_mut_ptr().add(off), len);
            n += len as u64;
        });
        n
    }

    /// Copies the box from `dev` back into host memory; returns the bytes copied.
    ///
    /// # Safety
    /// As for [`copy_in`](Self::copy_in), and the host array must be writable.
    pub unsafe fn copy_out(&self, dev: &[u8]) -> u64 {
        assert!(dev.len() >= self.shape.total_bytes());
        let mut n = 0u64;
        self.shape.for_each_run(|off, len| {
            std::ptr::copy_nonoverlapping(dev.as_ptr().add(off), self.host.add(off), len);
            n += len as u64;
        });
        n
    }
}

/// One argument of a launch.
#[derive(Debug)]
pub enum ArgPlan {
    /// A scalar, by value.
    Scalar(ScalarSlot),
    /// An array.
    Array(ArrayPlan),
}

/// All arguments of one launch, in manifest order.
#[derive(Debug)]
pub struct Plan {
    /// One entry per manifest argument.
    pub args: Vec<ArgPlan>,
    /// Per argument, the evaluated footprints of its accesses (see
    /// [`check_footprints`]); checked against the section in [`plan`], against the
    /// present mapping for `present` arguments at launch.
    pub footprints: Vec<Vec<Reach>>,
    /// Per argument, its array reduction (`reduction(+: a[l:n])`), evaluated.
    pub reductions: Vec<Option<crate::reduce::ReducePlan>>,
}

/// One access's evaluated footprint: the box of indices it covers.
#[derive(Clone, Debug)]
pub struct Reach {
    /// The access as written.
    pub access: String,
    /// Whether it writes.
    pub write: bool,
    /// Smallest index per dimension.
    pub lo: Vec<i128>,
    /// Largest index per dimension.
    pub hi: Vec<i128>,
    /// A bound of what the access may touch (`Footprint::may`): never checked
    /// against the mapped data, only used to narrow a host run's copies.
    pub may: bool,
    /// Exactly the indices it takes (`Footprint::lattice`), evaluated; `None` when
    /// the box only bounds them.
    pub lattice: Option<Lattice>,
}

/// An evaluated [`tessera_ir::manifest::Lattice`]: with every `t_k` in
/// `0..counts[k]`, the indices `base[d] + Σ_k t_k · delta[d][k]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lattice {
    /// Iterations per loop (each at least 1).
    pub counts: Vec<i128>,
    /// Per dimension, the index at the first iteration.
    pub base: Vec<i128>,
    /// Per dimension, per loop, the step of the index.
    pub delta: Vec<Vec<i128>>,
}

/// The start of the reason of a region kept on the host because an access leaves its
/// array's mapped data (the runtime also prints it once per region).
pub const OUT_OF_SECTION: &str = "out-of-section access";

/// The boxes an array's accesses cover for the scalar values in `env` (accesses
/// that do not happen, in an empty iteration domain, are left out; a footprint
/// that does not evaluate is skipped: nothing can be said about it).
fn reaches(footprint: &[tessera_ir::manifest::Footprint], env: &dyn Fn(&str) -> Option<i128>) -> Vec<Reach> {
    footprint.iter().filter_map(|fp| reach(fp, env, false).ok().flatten()).collect()
}

/// The boxes of every access that happens, with `lattices` their lattices too, or
/// `None` when a footprint does not evaluate (then they bound nothing: a host run
/// must copy the whole section).
fn all_reaches(
    footprint: &[tessera_ir::manifest::Footprint],
    env: &dyn Fn(&str) -> Option<i128>,
    lattices: bool,
) -> Option<Vec<Reach>> {
    footprint.iter().map(|fp| reach(fp, env, lattices).ok()).collect::<Option<Vec<_>>>().map(|v| v.into_iter().flatten().collect())
}

/// One footprint evaluated — its lattice only with `lattice` (a launch's checks need
/// the box alone) —: `Ok(None)` when its iteration domain is empty, `Err(())` when
/// it does not evaluate.
fn reach(fp: &tessera_ir::manifest::Footprint, env: &dyn Fn(&str) -> Option<i128>, lattice: bool) -> Result<Option<Reach>, ()> {
    let ev = |e: &tessera_ir::Expr| eval_int(e, env).ok();
    let nonempty = fp.nonempty.iter().map(|(l, u)| Some(ev(l)? < ev(u)?)).collect::<Option<Vec<bool>>>().ok_or(())?;
    if nonempty.contains(&false) {
        return Ok(None);
    }
    let lo = fp.lo.iter().map(ev).collect::<Option<Vec<_>>>().ok_or(())?;
    let hi = fp.hi.iter().map(ev).collect::<Option<Vec<_>>>().ok_or(())?;
    let lattice = fp.lattice.as_ref().filter(|_| lattice).and_then(|l| {
        let lat = Lattice {
            counts: l.counts.iter().map(ev).collect::<Option<Vec<_>>>()?,
            base: l.base.iter().map(ev).collect::<Option<Vec<_>>>()?,
            delta: l.delta.iter().map(|d| d.iter().map(ev).collect::<Option<Vec<_>>>()).collect::<Option<Vec<_>>>()?,
        };
        let loops = lat.counts.len();
        let fits = lat.base.len() == lo.len()
            && lat.delta.len() == lo.len()
            && lat.delta.iter().all(|d| d.len() == loops)
            && lat.counts.iter().all(|&c| c >= 1);
        fits.then_some(lat)
    });
    Ok(Some(Reach { access: fp.access.clone(), write: fp.write, lo, hi, may: fp.may, lattice }))
}

/// The guarded writes of `manifest`'s kernel (`tessera_ir::manifest::Guard::writes`),
/// evaluated over `plan`'s scalars: per write, the index of its array argument and
/// its box (none when it writes nothing). An error when one does not evaluate or
/// names no array argument: nothing says where it writes.
pub fn guard_writes(manifest: &Manifest, plan: &Plan) -> Result<Vec<(usize, Vec<Reach>)>, String> {
    let Some(g) = &manifest.guard else { return Ok(Vec::new()) };
    let env = |name: &str| plan.scalar(manifest, name);
    g.writes
        .iter()
        .map(|w| {
            let unknown = || format!("where the guarded write '{}' writes is not known", w.footprint.access);
            let i = manifest.args.iter().position(|a| a.name == w.arg && a.array.is_some()).ok_or_else(unknown)?;
            let r = reach(&w.footprint, &env, false).map_err(|()| unknown())?;
            Ok((i, r.into_iter().map(|r| Reach { may: false, ..r }).collect()))
        })
        .collect()
}

/// Why the region must run as written, on the host, because a write of it may land
/// on a struct member it reads at the directive (`Manifest::member_checks`; `members`
/// the members' host addresses, by argument index): the first such member that lies
/// in the box of a write footprint of an array argument, or any such member when a
/// written array's footprint is not known. `None`: no write can change them.
pub fn member_aliased(manifest: &Manifest, plan: &Plan, members: &[(usize, *mut u8)]) -> Option<String> {
    let checked: Vec<(usize, *mut u8)> = members.iter().copied().filter(|(i, _)| manifest.member_checks.contains(i)).collect();
    let first = checked.first()?;
    let env = |name: &str| plan.scalar(manifest, name);
    let member = |i: usize| manifest.args.get(i).map_or("?", |a| a.name.as_str()).to_string();
    for (a, p) in manifest.args.iter().zip(&plan.args) {
        // A scalar passed as a one-element array is a variable of its own, no member.
        let (Some(arr), ArgPlan::Array(ap)) = (&a.array, p) else { continue };
        if a.kind == VarKind::Scalar || arr.untouched {
            continue;
        }
        let writes: Vec<tessera_ir::manifest::Footprint> = arr.footprint.iter().filter(|f| f.write).cloned().collect();
        let reaches = if arr.footprint.is_empty() { None } else { all_reaches(&writes, &env, false) };
        let Some(reaches) = reaches else {
            return Some(format!(
                "Tessera cannot tell which parts of '{}' the region writes, so it may change the member '{}' the \
                 region reads (read as written, on the host)",
                a.name,
                member(first.0)
            ));
        };
        let elem = ap.shape.elem_size as i128;
        let lin = |i: &[i128]| i.iter().zip(&ap.shape.dims).skip(1).fold(i.first().copied().unwrap_or(0), |acc, (v, d)| acc * *d as i128 + v);
        for r in &reaches {
            let (lo, hi) = (ap.host as i128 + lin(&r.lo) * elem, ap.host as i128 + (lin(&r.hi) + 1) * elem);
            if let Some(&(i, _)) = checked.iter().find(|(_, addr)| (lo..hi).contains(&(*addr as i128))) {
                return Some(format!(
                    "the member '{}' the region reads lies in '{}', which '{}' may write (read as written, on the host)",
                    member(i),
                    a.name,
                    r.access
                ));
            }
        }
    }
    None
}

/// Checks that every access of an array lands in the part of it the device has:
/// its section (`valid` per dimension `(lower, length)`), or, for a `present`
/// argument, the linear element range `[0, avail)` from its element 0 (`dims` give
/// the row-major layout). The error names the access, the index and the section.
pub fn check_reaches(name: &str, reaches: &[Reach], valid: Valid<'_>) -> Result<(), String> {
    for r in reaches.iter().filter(|r| !r.may) {
        let verb = if r.write { "writes" } else { "reads" };
        let idx = |i: &[i128]| i.iter().map(|v| format!("[{v}]")).collect::<String>();
        match valid {
            Valid::Section(sec) => {
                let d = (0..r.lo.len().min(sec.len())).find(|&d| r.lo[d] < sec[d].0 || r.hi[d] >= sec[d].0 + sec[d].1);
                if let Some(d) = d {
                    let mut at = r.lo.clone();
                    at[d] = if r.lo[d] < sec[d].0 { r.lo[d] } else { r.hi[d] };
                    let s: String = sec.iter().map(|(l, n)| format!("[{l}:{n}]")).collect();
                    return Err(format!(
                        "{OUT_OF_SECTION}: '{}' {verb} {name}{}, outside the mapped section {name}{s} (undefined in \
                         OpenMP; the region runs on the host, on host memory)",
                        r.access,
                        idx(&at)
                    ));
                }
            }
            Valid::Linear { dims, avail } => {
                let lin = |i: &[i128]| {
                    i.iter().zip(dims).skip(1).fold(i.first().copied().unwrap_or(0), |acc, (v, d)| acc * *d as i128 + v)
                };
                let (a, b) = (lin(&r.lo), lin(&r.hi));
                if a < 0 || b >= avail as i128 {
                    let at = if a < 0 { &r.lo } else { &r.hi };
                    return Err(format!(
                        "{OUT_OF_SECTION}: '{}' {verb} {name}{}, beyond the {avail} elements the device holds from \
                         '{name}' on (undefined in OpenMP; the region runs on the host, on host memory)",
                        r.access,
                        idx(at)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// What part of an array the device holds, for [`check_reaches`].
#[derive(Clone, Copy, Debug)]
pub enum Valid<'a> {
    /// The mapped section, `(lower, length)` per dimension.
    Section(&'a [(i128, i128)]),
    /// `avail` elements from element 0, in a row-major array with extents `dims`.
    Linear {
        /// Extents (the outermost is not used).
        dims: &'a [usize],
        /// Elements available.
        avail: usize,
    },
}

impl Plan {
    /// The array arguments.
    pub fn arrays(&self) -> impl Iterator<Item = &ArrayPlan> {
        self.args.iter().filter_map(|a| match a {
            ArgPlan::Array(a) => Some(a),
            ArgPlan::Scalar(_) => None,
        })
    }

    /// The integer value of the scalar argument `name` of `manifest` (whose plan
    /// this is), for evaluating expressions over the launch's scalars.
    pub fn scalar(&self, manifest: &Manifest, name: &str) -> Option<i128> {
        manifest.args.iter().zip(&self.args).find(|(a, _)| a.name == name).and_then(|(_, p)| match p {
            ArgPlan::Scalar(slot) => slot.as_i128(),
            ArgPlan::Array(_) => None,
        })
    }

    /// Per argument, its array plan (`None` for scalars), in argument order.
    pub fn array_slots(&self) -> Vec<Option<&ArrayPlan>> {
        self.args
            .iter()
            .map(|a| match a {
                ArgPlan::Array(arr) => Some(arr),
                ArgPlan::Scalar(_) => None,
            })
            .collect()
    }
}

/// The text of the first launch condition of `manifest`'s guard that does not hold
/// for the scalar arguments (`None`: no guard, or all hold).
///
/// # Safety
/// As for [`plan`].
pub unsafe fn failed_guard(manifest: &Manifest, args: &[*mut c_void]) -> Option<String> {
    manifest.guard.as_ref()?;
    let env = |name: &str| -> Option<i128> {
        let (a, &addr) = manifest.args.iter().zip(args).find(|(a, _)| a.name == name)?;
        if a.kind != VarKind::Scalar || a.array.is_some() || addr.is_null() {
            return None;
        }
        ScalarSlot::read(a.elem, addr).as_i128()
    };
    if args.len() != manifest.args.len() {
        return manifest.guard.as_ref().and_then(|g| g.conditions.first()).map(|c| c.text.clone());
    }
    manifest.failed_condition(&env).map(|c| c.text.clone())
}

/// Reads the arguments of a region call and evaluates the array shapes.
///
/// # Safety
/// `args[i]` must be the address the rewritten call passed for `manifest.args[i]`
/// (see the ABI in `tessera_rt.h`), valid for the duration of the call.
pub unsafe fn plan(manifest: &Manifest, args: &[*mut c_void]) -> Result<Plan, String> {
    if args.len() != manifest.args.len() {
        return Err(format!(
            "the call passes {} arguments but the manifest lists {}",
            args.len(),
            manifest.args.len()
        ));
    }
    // Scalars first: the extents and sections are expressions over them.
    let mut scalars: Vec<Option<ScalarSlot>> = Vec::with_capacity(args.len());
    for (a, &addr) in manifest.args.iter().zip(args) {
        if addr.is_null() {
            return Err(format!("argument '{}' has a null address", a.name));
        }
        scalars.push(match (a.kind, &a.array) {
            (VarKind::Scalar, None) => Some(ScalarSlot::read(a.elem, addr)),
            (VarKind::Scalar, Some(_)) | (VarKind::Pointer | VarKind::Array, None) => {
                return Err(format!("manifest argument '{}' has kind {:?} but array data does not match", a.name, a.kind))
            }
            _ => None,
        });
    }
    let env = |name: &str| -> Option<i128> {
        manifest.args.iter().zip(&scalars).find(|(a, _)| a.name == name).and_then(|(_, s)| s.as_ref()?.as_i128())
    };

    let mut out = Vec::with_capacity(args.len());
    let mut footprints = Vec::with_capacity(args.len());
    let mut reductions = Vec::with_capacity(args.len());
    for ((a, &addr), slot) in manifest.args.iter().zip(args).zip(&scalars) {
        let Some(arr) = &a.array else {
            out.push(ArgPlan::Scalar(slot.expect("scalar slots were read above")));
            footprints.push(Vec::new());
            reductions.push(None);
            continue;
        };
        let p = eval_array(&a.name, a.kind, a.elem, arr.map, &arr.dims, &arr.section, addr, &env)?;
        reductions.push(match &arr.reduction {
            Some(r) => Some(reduce_plan(a, arr, r, &p, addr, &env)?),
            None => None,
        });
        let r = reaches(&arr.footprint, &env);
        if arr.map != MapKind::Present {
            check_reaches(&a.name, &r, Valid::Section(&p.shape.section()))?;
        }
        footprints.push(r);
        out.push(ArgPlan::Array(p));
    }
    let plan = Plan { args: out, footprints, reductions };
    check_overlap(&plan)?;
    Ok(plan)
}

/// Evaluates an array reduction's elements, which must lie inside the mapped section
/// `mapped` (OpenMP: the reduced list item is part of what the construct maps).
///
/// # Safety
/// As for [`eval_array`].
unsafe fn reduce_plan(
    a: &tessera_ir::manifest::Arg,
    arr: &tessera_ir::manifest::ArrayArg,
    r: &tessera_ir::manifest::ArrayReductionArg,
    mapped: &ArrayPlan,
    addr: *mut c_void,
    env: &dyn Fn(&str) -> Option<i128>,
) -> Result<crate::reduce::ReducePlan, String> {
    let name = &a.name;
    let red = eval_array(name, a.kind, a.elem, arr.map, &arr.dims, &r.section, addr, env)?;
    let m = &mapped.shape;
    let inside = (0..m.dims.len()).all(|d| {
        red.shape.len[d] == 0 || (red.shape.lower[d] >= m.lower[d] && red.shape.lower[d] + red.shape.len[d] <= m.lower[d] + m.len[d])
    });
    if !inside {
        let text = |s: &BoxShape| s.lower.iter().zip(&s.len).map(|(l, n)| format!("[{l}:{n}]")).collect::<String>();
        return Err(format!(
            "array '{name}': the reduced section {} is not inside the mapped section {}",
            text(&red.shape),
            text(m)
        ));
    }
    Ok(crate::reduce::ReducePlan { op: r.op, elem: a.elem, shape: red.shape })
}

/// Evaluates one array (a manifest argument or a data directive's list item):
/// extents and section from the scalar values in `env`, checked against each other
/// and the address space; `addr` is the address the call passed for the variable.
///
/// # Safety
/// `addr` must be the address of the variable as described in `tessera_rt.h`.
#[allow(clippy::too_many_arguments)]
pub unsafe fn eval_array(
    name: &str,
    kind: VarKind,
    elem: ScalarType,
    map: MapKind,
    dims_e: &[tessera_ir::Expr],
    section: &[tessera_ir::Section],
    addr: *mut c_void,
    env: &dyn Fn(&str) -> Option<i128>,
) -> Result<ArrayPlan, String> {
    let eval = |e, what: &str, d: usize| {
        eval_int(e, env).map_err(|err| format!("array '{name}': cannot evaluate the {what} of dimension {d}: {err}"))
    };
    let mut dims = Vec::new();
    for (d, e) in dims_e.iter().enumerate() {
        let v = eval(e, "extent", d)?;
        if v < 0 {
            return Err(format!("array '{name}': dimension {d} has negative extent {v}"));
        }
        dims.push(usize::try_from(v).map_err(|_| format!("array '{name}': extent {v} is too large"))?);
    }
    if section.len() > dims.len() {
        return Err(format!(
            "array '{name}': the section has {} subscripts but the array {} dimensions",
            section.len(),
            dims.len()
        ));
    }
    let (mut lower, mut len) = (Vec::new(), Vec::new());
    for (d, &extent) in dims.iter().enumerate() {
        let (l, n) = match section.get(d) {
            Some(s) => (eval(&s.lower, "section start", d)?, eval(&s.length, "section length", d)?),
            None => (0, extent as i128),
        };
        if l < 0 || n < 0 || l + n > extent as i128 {
            return Err(format!("array '{name}': section [{l}:{n}] of dimension {d} is outside the extent {extent}"));
        }
        lower.push(l as usize);
        len.push(n as usize);
    }
    if dims.is_empty() {
        // An array argument without extents is one element.
        (dims, lower, len) = (vec![1], vec![0], vec![1]);
    }
    let elem_size = elem.size();
    let total = dims.iter().try_fold(elem_size, |acc, &d| acc.checked_mul(d));
    if total.is_none_or(|t| t > isize::MAX as usize) {
        return Err(format!("array '{name}': {dims:?} elements of {elem_size} bytes do not fit in memory"));
    }
    let shape = BoxShape { elem_size, dims, lower, len };
    let host = match kind {
        VarKind::Pointer => *(addr as *const *mut u8),
        _ => addr as *mut u8,
    };
    if host.is_null() && !shape.is_empty() {
        return Err(format!("array '{name}' is a null pointer"));
    }
    if let Some(span) = shape.span() {
        if (host as usize).checked_add(span.end).is_none() {
            return Err(format!("array '{name}': its section wraps around the address space"));
        }
    }
    Ok(ArrayPlan { name: name.to_string(), map, shape, host, exact_runs: None })
}

/// The arrays of a region as far as they can be evaluated, for a host fallback
/// inside a data region ([`crate::present::DataEnv::host_begin`]): an array whose
/// section cannot be evaluated (or a region whose manifest lists no arguments) is
/// reduced to its element 0, a `present`-style lookup; an array the region does not
/// touch (`ArrayArg::untouched`, or no access happens for these scalars) is left
/// out. With `exact` (a host run
/// inside a parallel region), arrays whose footprints all have lattices also get
/// their [`ArrayPlan::exact_runs`]. Never fails.
///
/// # Safety
/// As for [`plan`]; null addresses are skipped.
pub unsafe fn plan_lenient(manifest: &Manifest, args: &[*mut c_void], exact: bool) -> Vec<ArrayPlan> {
    if args.len() != manifest.args.len() {
        return Vec::new();
    }
    let scalars: Vec<Option<ScalarSlot>> = manifest
        .args
        .iter()
        .zip(args)
        .map(|(a, &addr)| (a.array.is_none() && !addr.is_null()).then(|| ScalarSlot::read(a.elem, addr)))
        .collect();
    let env = |name: &str| -> Option<i128> {
        manifest.args.iter().zip(&scalars).find(|(a, _)| a.name == name).and_then(|(_, s)| s.as_ref()?.as_i128())
    };
    let mut out = Vec::new();
    for (a, &addr) in manifest.args.iter().zip(args) {
        let Some(arr) = &a.array else { continue };
        if addr.is_null() || a.kind == VarKind::Scalar {
            continue;
        }
        // Untouched — named by a clause only, or every access in an empty iteration
        // domain for these scalars: the host run moves none of it (`always` moves
        // the section whatever the region does).
        let known = !arr.footprint.is_empty() || arr.untouched;
        let reaches = all_reaches(&arr.footprint, &env, exact);
        if known && !arr.map.is_always() && reaches.as_ref().is_some_and(|r| r.is_empty()) {
            continue;
        }
        match eval_array(&a.name, a.kind, a.elem, arr.map, &arr.dims, &arr.section, addr, &env) {
            Ok(p) => out.push(match reaches {
                Some(r) => narrowed(p, &r, exact),
                None => p,
            }),
            Err(_) => out.push(element0(&a.name, a.kind, a.elem, addr)),
        }
    }
    out
}

/// `item` reduced to the bounding box of what its accesses cover (`reaches`), and
/// with `exact` to their exact runs when they have them, when
/// that box lies inside what `item` already stands for (its section; for a `present`
/// item, any index box from element 0 on): a host run then copies only that around
/// the host code. Unchanged when there is no footprint, the box does not fit, or the
/// map has `always` (which moves the whole section).
fn narrowed(item: ArrayPlan, reaches: &[Reach], exact: bool) -> ArrayPlan {
    // `always` moves the whole section, whatever the region touches.
    if item.map.is_always() {
        return item;
    }
    let Some(first) = reaches.first() else { return item };
    let k = item.shape.dims.len();
    if first.lo.len() != k || reaches.iter().any(|r| r.lo.len() != k) {
        return item;
    }
    let lo: Vec<i128> = (0..k).map(|d| reaches.iter().map(|r| r.lo[d]).min().unwrap_or(0)).collect();
    let hi: Vec<i128> = (0..k).map(|d| reaches.iter().map(|r| r.hi[d]).max().unwrap_or(0)).collect();
    if (0..k).any(|d| lo[d] < 0 || hi[d] < lo[d]) {
        return item;
    }
    let mut shape = item.shape.clone();
    if item.map == MapKind::Present || item.shape.is_empty() {
        // Inner extents are known; the outermost one is whatever the box needs.
        if (1..k).any(|d| hi[d] >= shape.dims[d] as i128) {
            return item;
        }
        shape.dims[0] = shape.dims[0].max(hi[0] as usize + 1);
    } else if (0..k).any(|d| lo[d] < shape.lower[d] as i128 || hi[d] >= (shape.lower[d] + shape.len[d]) as i128) {
        return item;
    }
    shape.lower = lo.iter().map(|&v| v as usize).collect();
    shape.len = (0..k).map(|d| (hi[d] - lo[d] + 1) as usize).collect();
    // A present item becomes an ordinary one over its box (no copies of its own).
    let map = if item.map == MapKind::Present { MapKind::Alloc } else { item.map };
    let exact_runs = if exact { exact_runs(&shape, reaches) } else { None };
    ArrayPlan { shape, map, exact_runs, ..item }
}

/// The most runs [`exact_runs`] lists (16 bytes each): beyond, the box stands for
/// the elements.
const MAX_EXACT_RUNS: usize = 1 << 22;

/// The byte runs (offset from element 0, length) of exactly the elements the
/// accesses `reaches` may take (their lattices), in the row-major layout of `shape`
/// (whose dimensions hold every index of their boxes), sorted and merged; `None`
/// when an access has no lattice (its box only bounds it), or the runs would be
/// more than [`MAX_EXACT_RUNS`].
fn exact_runs(shape: &BoxShape, reaches: &[Reach]) -> Option<Vec<(usize, usize)>> {
    let k = shape.dims.len();
    // Elements between consecutive indices of each dimension.
    let row: Vec<i128> = (0..k).map(|d| shape.dims[d + 1..].iter().map(|&e| e as i128).product()).collect();
    let elem = shape.elem_size as i128;
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for r in reaches {
        let lat = r.lattice.as_ref()?;
        if r.lo.len() != k || lat.base.len() != k {
            return None;
        }
        // Every index inside its dimension: the flat element is then the element.
        if (0..k).any(|d| r.lo[d] < 0 || r.hi[d] < r.lo[d] || r.hi[d] >= shape.dims[d] as i128) {
            return None;
        }
        let first: i128 = (0..k).map(|d| lat.base[d] * row[d]).sum();
        // Per loop that moves the element, its count and step in elements.
        let mut moves: Vec<(i128, i128)> = (0..lat.counts.len())
            .map(|l| (lat.counts[l], (0..k).map(|d| lat.delta[d][l] * row[d]).sum::<i128>()))
            .filter(|&(c, w)| c > 1 && w != 0)
            .collect();
        // A loop of step ±1 element gives contiguous runs (the longest such loop).
        let unit = moves.iter().enumerate().filter(|(_, m)| m.1.abs() == 1).max_by_key(|(_, m)| m.0).map(|(i, _)| i);
        let (len, start) = match unit {
            Some(i) => {
                let (c, w) = moves.remove(i);
                (c, if w < 0 { -(c - 1) } else { 0 })
            }
            None => (1, 0),
        };
        let count = moves.iter().try_fold(1usize, |a, m| a.checked_mul(usize::try_from(m.0).ok()?))?;
        if count.checked_add(runs.len())? > MAX_EXACT_RUNS {
            return None;
        }
        // Odometer over the other moving loops; every element lies in the array
        // (its indices are inside the box, checked above).
        let mut t = vec![0i128; moves.len()];
        loop {
            let at = first + start + moves.iter().zip(&t).map(|(m, t)| m.1 * t).sum::<i128>();
            runs.push(((at * elem) as usize, (len * elem) as usize));
            let mut l = moves.len();
            let done = loop {
                if l == 0 {
                    break true;
                }
                l -= 1;
                t[l] += 1;
                if t[l] < moves[l].0 {
                    break false;
                }
                t[l] = 0;
            };
            if done {
                break;
            }
        }
    }
    Some(merge_runs(runs))
}

/// `runs` sorted, with overlapping or adjacent runs joined.
fn merge_runs(mut runs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    runs.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(runs.len());
    for (off, len) in runs {
        match out.last_mut() {
            Some((o, l)) if off <= *o + *l => *l = (*l).max(off + len - *o),
            _ => out.push((off, len)),
        }
    }
    out
}

/// An array reduced to the address of its element 0 (an empty `present` section):
/// what a lookup by address needs.
///
/// # Safety
/// `addr` must be the address of the variable as described in `tessera_rt.h`.
pub unsafe fn element0(name: &str, kind: VarKind, elem: ScalarType, addr: *mut c_void) -> ArrayPlan {
    let host = match kind {
        VarKind::Pointer => *(addr as *const *mut u8),
        _ => addr as *mut u8,
    };
    let shape = BoxShape { elem_size: elem.size(), dims: vec![0], lower: vec![0], len: vec![0] };
    ArrayPlan { name: name.to_string(), map: MapKind::Present, shape, host, exact_runs: None }
}

/// One element of type `elem` at host address `addr` (a member of a struct), as an
/// array item whose device copy a host run swaps in where a mapping holds it.
pub fn one_element(name: &str, elem: ScalarType, addr: *mut u8) -> ArrayPlan {
    let shape = BoxShape { elem_size: elem.size(), dims: vec![1], lower: vec![0], len: vec![1] };
    ArrayPlan { name: name.to_string(), map: MapKind::Alloc, shape, host: addr, exact_runs: None }
}

/// Evaluates the list items of a data directive from the addresses its call passed
/// (`desc.args` order): one [`ArrayPlan`] per item, with the item's map type.
///
/// # Safety
/// `args[i]` must be the address the rewritten call passed for `desc.args[i]`.
pub unsafe fn plan_items(desc: &tessera_ir::data::DataDesc, args: &[*mut c_void]) -> Result<Vec<ArrayPlan>, String> {
    plan_list(desc, &desc.items, args)
}

/// [`plan_items`] for `items` (some of `desc`'s items, or its probes) instead of
/// all of `desc.items`.
///
/// # Safety
/// As for [`plan_items`].
pub unsafe fn plan_list(
    desc: &tessera_ir::data::DataDesc,
    items: &[tessera_ir::data::DescItem],
    args: &[*mut c_void],
) -> Result<Vec<ArrayPlan>, String> {
    if args.len() != desc.args.len() {
        return Err(format!("the call passes {} arguments but the descriptor lists {}", args.len(), desc.args.len()));
    }
    if let Some((a, _)) = desc.args.iter().zip(args).find(|(_, p)| p.is_null()) {
        return Err(format!("argument '{}' has a null address", a.name));
    }
    let scalars: Vec<Option<ScalarSlot>> = desc
        .args
        .iter()
        .zip(args)
        .map(|(a, &addr)| (a.kind == VarKind::Scalar).then(|| ScalarSlot::read(a.elem, addr)))
        .collect();
    let env = |name: &str| -> Option<i128> {
        desc.args.iter().zip(&scalars).find(|(a, _)| a.name == name).and_then(|(_, s)| s.as_ref()?.as_i128())
    };
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let a = desc.args.get(it.arg).ok_or_else(|| format!("list item names argument {} of {}", it.arg, args.len()))?;
        // A scalar list item is one element at the scalar's address (no dimensions).
        if a.kind == VarKind::Scalar && !(it.dims.is_empty() && it.section.is_empty() && it.strides.is_empty()) {
            return Err(format!("list item '{}' is a scalar with a section", a.name));
        }
        if it.strides.is_empty() {
            out.push(eval_array(&a.name, a.kind, a.elem, it.map, &it.dims, &it.section, args[it.arg], &env)?);
            continue;
        }
        // A strided section is the union of boxes of one element per strided
        // dimension: one item each (copies of `target update` are per item anyway).
        for section in strided_boxes(&a.name, &it.section, &it.strides, &env)? {
            out.push(eval_array(&a.name, a.kind, a.elem, it.map, &it.dims, &section, args[it.arg], &env)?);
        }
    }
    Ok(out)
}

/// The most elements a strided section may split into (a bound on the work and
/// memory of one `target update`, not an OpenMP limit).
const MAX_STRIDED_BOXES: i128 = 1 << 22;

/// The boxes of the strided section `section` with `strides` (one per dimension):
/// every dimension with a stride other than 1 contributes its elements one by one.
fn strided_boxes(
    name: &str,
    section: &[tessera_ir::Section],
    strides: &[tessera_ir::Expr],
    env: &dyn Fn(&str) -> Option<i128>,
) -> Result<Vec<Vec<tessera_ir::Section>>, String> {
    use tessera_ir::{Expr, ScalarType, Section};
    let lit = |v: i128| Expr::Int { value: v as i64, ty: ScalarType::I64 };
    let mut boxes: Vec<Vec<Section>> = vec![Vec::new()];
    for (d, s) in section.iter().enumerate() {
        let ev = |e: &Expr, what: &str| {
            eval_int(e, env).map_err(|err| format!("array '{name}': cannot evaluate the {what} of dimension {d}: {err}"))
        };
        let stride = strides.get(d).map(|e| ev(e, "stride")).transpose()?.unwrap_or(1);
        if stride < 1 {
            return Err(format!("array '{name}': stride {stride} of dimension {d} is not positive"));
        }
        let parts: Vec<Section> = if stride == 1 {
            vec![s.clone()]
        } else {
            let (lower, length) = (ev(&s.lower, "lower bound")?, ev(&s.length, "length")?);
            if length < 0 {
                return Err(format!("array '{name}': negative length {length} in dimension {d}"));
            }
            if length * boxes.len() as i128 > MAX_STRIDED_BOXES {
                return Err(format!("array '{name}': the strided section has more than {MAX_STRIDED_BOXES} parts"));
            }
            (0..length).map(|k| Section { lower: lit(lower + k * stride), length: lit(1) }).collect()
        };
        boxes = boxes
            .into_iter()
            .flat_map(|b| {
                parts.iter().map(move |p| {
                    let mut b = b.clone();
                    b.push(p.clone());
                    b
                })
            })
            .collect();
    }
    Ok(boxes)
}

/// Rejects plans where the mapped host range of an array that is copied back
/// overlaps the mapped range of another array argument (the same array passed twice,
/// or two pointers into one array). The device gives every argument its own buffer,
/// so such aliasing would make the results differ from the host run. Ranges are the
/// conservative [`BoxShape::span`]s. Arrays only read (`to`, `alloc`) may share
/// memory: nothing is written back to it.
pub fn check_overlap(plan: &Plan) -> Result<(), String> {
    let arrays: Vec<&ArrayPlan> = plan.arrays().collect();
    for (i, a) in arrays.iter().enumerate() {
        for b in &arrays[i + 1..] {
            if !(a.copies_out() || b.copies_out()) {
                continue;
            }
            if let (Some(x), Some(y)) = (a.host_span(), b.host_span()) {
                if x.start < y.end && y.start < x.end {
                    return Err(format!("arrays '{}' and '{}' overlap in host memory", a.name, b.name));
                }
            }
        }
    }
    Ok(())
}

/// Host memory used as device memory by the emulated device: zero-initialised,
/// 4096-byte aligned and allocated in whole 4 KiB pages (like an XRT buffer object),
/// freed on drop. The view is the array's `len` bytes; the padding up to
/// [`capacity`](HostBuffer::capacity) lets a wide memory beat cover the array's last
/// elements (its bytes beyond the array are zero and never copied back).
pub struct HostBuffer {
    ptr: *mut u8,
    len: usize,
    layout: Layout,
}

// The buffer owns its allocation exclusively.
unsafe impl Send for HostBuffer {}

impl HostBuffer {
    /// Alignment of every buffer.
    pub const ALIGN: usize = 4096;

    /// Allocates `len` zero bytes, rounded up to whole 4 KiB pages (at least one, so
    /// the pointer is always a real allocation).
    pub fn new(len: usize) -> Result<HostBuffer, String> {
        let capacity = len
            .max(1)
            .checked_next_multiple_of(Self::ALIGN)
            .ok_or_else(|| format!("cannot allocate a device buffer of {len} bytes"))?;
        let layout = Layout::from_size_align(capacity, Self::ALIGN)
            .map_err(|e| format!("cannot allocate a device buffer of {len} bytes: {e}"))?;
        // SAFETY: the layout has non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(format!("out of memory allocating a device buffer of {len} bytes"));
        }
        Ok(HostBuffer { ptr, len, layout })
    }

    /// Base address (what the kernel receives).
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// Bytes allocated at the base: `len` rounded up to whole 4 KiB pages.
    pub fn capacity(&self) -> usize {
        self.layout.size()
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

impl crate::device::DeviceBuffer for HostBuffer {
    fn host_view(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes were allocated and zero-initialised.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    fn sync_to_device(&mut self, _range: std::ops::Range<usize>) -> Result<(), String> {
        Ok(())
    }
    fn sync_from_device(&mut self, _range: std::ops::Range<usize>) -> Result<(), String> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceBuffer;
    use tessera_ir::manifest::{Arg, ArrayArg};
    use tessera_ir::{BinOp, Expr, Section};

    /// The runs a host run inside a parallel region swaps: exactly the elements of
    /// the accesses' lattices, merged — strided rows, diagonals, sums of indices,
    /// reversed loops, accesses that may not happen; none (the box instead) when an
    /// access has no lattice or leaves the array.
    #[test]
    fn exact_runs_are_the_elements_taken() {
        let sh = shape(&[4, 6], &[0, 0], &[4, 6]);
        let reach = |lo: &[i128], hi: &[i128], counts: &[i128], base: &[i128], delta: &[&[i128]]| Reach {
            access: "a".into(),
            write: true,
            lo: lo.into(),
            hi: hi.into(),
            may: false,
            lattice: Some(Lattice {
                counts: counts.into(),
                base: base.into(),
                delta: delta.iter().map(|d| d.to_vec()).collect(),
            }),
        };
        // a[i][2*j] for rows 1..=2: elements (1,0) (1,2) (1,4) (2,0) (2,2) (2,4).
        let even = reach(&[1, 0], &[2, 4], &[2, 3], &[1, 0], &[&[1, 0], &[0, 2]]);
        let r = exact_runs(&sh, &[even.clone()]).unwrap();
        assert_eq!(r, vec![(24, 4), (32, 4), (40, 4), (48, 4), (56, 4), (64, 4)]);
        // With a[i][2*j + 1] too, the rows are whole: two runs; a[3][j] joins.
        let odd = reach(&[1, 1], &[2, 5], &[2, 3], &[1, 1], &[&[1, 0], &[0, 2]]);
        let row3 = reach(&[3, 0], &[3, 5], &[1, 6], &[3, 0], &[&[0, 0], &[0, 1]]);
        assert_eq!(exact_runs(&sh, &[even, odd, row3]).unwrap(), vec![(24, 72)]);
        // Two accesses far apart: two runs, not their hull.
        let r = exact_runs(
            &sh,
            &[reach(&[0, 0], &[0, 1], &[2], &[0, 0], &[&[0], &[1]]), reach(&[3, 4], &[3, 5], &[2], &[3, 4], &[&[0], &[1]])],
        )
        .unwrap();
        assert_eq!(r, vec![(0, 8), (88, 8)]);
        // The diagonal a[i][i]: four elements, not the 4×4 box.
        let diag = reach(&[0, 0], &[3, 3], &[4], &[0, 0], &[&[1], &[1]]);
        assert_eq!(exact_runs(&sh, &[diag.clone()]).unwrap(), vec![(0, 4), (28, 4), (56, 4), (84, 4)]);
        // ... also when it may not happen (a guarded read).
        assert_eq!(exact_runs(&sh, &[Reach { may: true, ..diag.clone() }]).unwrap().len(), 4);
        let flat = shape(&[10], &[0], &[10]);
        // a[i + j], i < 3, j < 4: indices 0..=5, one run; a[5 - j], j < 3: 3..=5.
        assert_eq!(exact_runs(&flat, &[reach(&[0], &[5], &[3, 4], &[0], &[&[1, 1]])]).unwrap(), vec![(0, 24)]);
        assert_eq!(exact_runs(&flat, &[reach(&[3], &[5], &[3], &[5], &[&[-1]])]).unwrap(), vec![(12, 12)]);
        // a[3*i + 5*j], i < 2, j < 2: 0, 3, 5, 8.
        let sparse = reach(&[0], &[8], &[2, 2], &[0], &[&[3, 5]]);
        assert_eq!(exact_runs(&flat, &[sparse]).unwrap(), vec![(0, 4), (12, 4), (20, 4), (32, 4)]);
        assert_eq!(exact_runs(&sh, &[Reach { lattice: None, ..diag.clone() }]), None);
        assert_eq!(exact_runs(&sh, &[reach(&[0, 0], &[4, 1], &[5], &[0, 0], &[&[1], &[0]])]), None, "outside the array");
    }

    fn shape(dims: &[usize], lower: &[usize], len: &[usize]) -> BoxShape {
        BoxShape { elem_size: 4, dims: dims.into(), lower: lower.into(), len: len.into() }
    }

    fn runs(s: &BoxShape) -> Vec<(usize, usize)> {
        let mut v = vec![];
        s.for_each_run(|o, l| v.push((o, l)));
        v
    }

    #[test]
    fn runs_of_boxes() {
        assert_eq!(runs(&shape(&[10], &[1], &[8])), vec![(4, 32)]);
        // Whole 2D array: one run.
        assert_eq!(runs(&shape(&[3, 4], &[0, 0], &[3, 4])), vec![(0, 48)]);
        // Rows 1..3 whole: one run.
        assert_eq!(runs(&shape(&[4, 5], &[1, 0], &[2, 5])), vec![(20, 40)]);
        // Interior box of a 4×5 array: two rows of 3.
        assert_eq!(runs(&shape(&[4, 5], &[1, 1], &[2, 3])), vec![(24, 12), (44, 12)]);
        // 3D, inner two dimensions whole in the middle one only partly.
        assert_eq!(
            runs(&shape(&[2, 3, 2], &[0, 1, 0], &[2, 2, 2])),
            vec![(2 * 4, 16), ((6 + 2) * 4, 16)]
        );
        assert_eq!(runs(&shape(&[4, 5], &[1, 1], &[0, 3])), vec![]);
        let s = shape(&[4, 5], &[1, 1], &[2, 3]);
        assert_eq!(s.span(), Some(24..56));
        assert_eq!(s.box_bytes(), 24);
        assert_eq!(s.total_bytes(), 80);
    }

    #[test]
    fn scalar_slots() {
        let v: i16 = -5;
        let s = unsafe { ScalarSlot::read(ScalarType::I16, &v as *const i16 as *const c_void) };
        assert_eq!(s.as_i128(), Some(-5));
        assert_eq!(ScalarSlot::from_i128(ScalarType::U32, u32::MAX as i128).as_i128(), Some(u32::MAX as i128));
        let f = 1.5f64;
        let s = unsafe { ScalarSlot::read(ScalarType::F64, &f as *const f64 as *const c_void) };
        assert_eq!(s.as_i128(), None);
        assert_eq!(f64::from_ne_bytes(s.bytes), 1.5);
        let mut s = s;
        assert_eq!(s.as_mut_ptr() as usize % 8, 0);
    }

    fn arg(name: &str, kind: VarKind, map: MapKind, dims: Vec<Expr>, section: Vec<(Expr, Expr)>) -> Arg {
        Arg {
            name: name.into(),
            kind,
            elem: ScalarType::F32,
            array: Some(ArrayArg {
                map,
                dims,
                section: section.into_iter().map(|(lower, length)| Section { lower, length }).collect(), footprint: vec![], bank: 0, reduction: None, untouched: false
            }),
        }
    }

    fn scalar(name: &str) -> Arg {
        Arg { name: name.into(), kind: VarKind::Scalar, elem: ScalarType::I32, array: None }
    }

    fn manifest(args: Vec<Arg>) -> Manifest {
        Manifest {
            members: Vec::new(),
            member_checks: Vec::new(),
            version: tessera_ir::manifest::MANIFEST_VERSION,
            region: "t.c:1".into(),
            kernel: Some("k".into()),
            rejected: None,
            mode: tessera_ir::Mode::Baseline,
            args,
            kernel_source: String::new(),
            emu_entry_source: String::new(),
            xclbin: String::new(),
            hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
        }
    }

    fn n() -> Expr {
        Expr::var("n", ScalarType::I32)
    }

    fn minus(e: Expr, k: i64) -> Expr {
        Expr::Binary { op: BinOp::Sub, lhs: Box::new(e), rhs: Box::new(Expr::int(k)), ty: ScalarType::I32 }
    }

    #[test]
    fn plans_sections_and_rejects_bad_ones() {
        let mut a = vec![0f32; 10];
        let mut pa = a.as_mut_ptr();
        let mut nv: i32 = 10;
        let m = manifest(vec![
            arg("a", VarKind::Pointer, MapKind::To, vec![n()], vec![(Expr::int(1), minus(n(), 2))]),
            scalar("n"),
        ]);
        let args = [&mut pa as *mut *mut f32 as *mut c_void, &mut nv as *mut i32 as *mut c_void];
        let p = unsafe { plan(&m, &args) }.unwrap();
        let arr = p.arrays().next().unwrap();
        assert_eq!(arr.shape, BoxShape { elem_size: 4, dims: vec![10], lower: vec![1], len: vec![8] });
        assert_eq!(arr.host, a.as_mut_ptr() as *mut u8);

        // Section past the extent.
        let m2 = manifest(vec![
            arg("a", VarKind::Pointer, MapKind::To, vec![n()], vec![(Expr::int(3), minus(n(), 2))]),
            scalar("n"),
        ]);
        let e = unsafe { plan(&m2, &args) }.unwrap_err();
        assert!(e.contains("array 'a'") && e.contains("outside the extent 10"), "{e}");

        // Negative extent.
        // Writes go through the passed addresses, as the caller's code would.
        unsafe { *(args[1] as *mut i32) = -1 };
        let e = unsafe { plan(&m, &args) }.unwrap_err();
        assert!(e.contains("negative extent"), "{e}");
        unsafe { *(args[1] as *mut i32) = 10 };

        // Unbound variable in an extent.
        let m3 = manifest(vec![arg("a", VarKind::Pointer, MapKind::To, vec![Expr::var("m", ScalarType::I32)], vec![])]);
        let e = unsafe { plan(&m3, &args[..1]) }.unwrap_err();
        assert!(e.contains("no value for 'm'"), "{e}");

        // Wrong argument count.
        let e = unsafe { plan(&m, &args[..1]) }.unwrap_err();
        assert!(e.contains("passes 1 arguments but the manifest lists 2"), "{e}");

        // Null pointer.
        unsafe { *(args[0] as *mut *mut f32) = std::ptr::null_mut() };
        let e = unsafe { plan(&m, &args) }.unwrap_err();
        assert!(e.contains("null pointer"), "{e}");
    }

    /// A member read at the directive whose type the region writes: found when it
    /// lies in the box a write footprint covers (reads and other elements do not
    /// count), and assumed written when a written array's footprint is unknown.
    #[test]
    fn members_the_region_may_write_are_found() {
        let mut a = vec![0f32; 10];
        let mut pa = a.as_mut_ptr();
        let mut nv: i32 = 10;
        let mut w = 0.5f32;
        let fp = |write: bool| tessera_ir::manifest::Footprint {
            access: if write { "a[i]".into() } else { "a[i + 1]".into() },
            write,
            lo: vec![Expr::int(if write { 1 } else { 0 })],
            hi: vec![minus(n(), if write { 2 } else { 1 })],
            nonempty: vec![],
            may: false,
            lattice: None,
        };
        let mut arr = arg("a", VarKind::Pointer, MapKind::Tofrom, vec![n()], vec![(Expr::int(0), n())]);
        arr.array.as_mut().unwrap().footprint = vec![fp(true), fp(false)];
        let member = Arg { name: "c_w".into(), kind: VarKind::Scalar, elem: ScalarType::F32, array: None };
        let mut m = manifest(vec![arr, scalar("n"), member]);
        m.members = vec![2];
        m.member_checks = vec![2];
        let args = [
            &mut pa as *mut *mut f32 as *mut c_void,
            &mut nv as *mut i32 as *mut c_void,
            &mut w as *mut f32 as *mut c_void,
        ];
        let p = unsafe { plan(&m, &args) }.unwrap();
        let at = |k: usize| unsafe { (a.as_ptr() as *mut u8).add(4 * k) };
        let found = |addr: *mut u8| member_aliased(&m, &p, &[(2, addr)]);
        for k in [1, 3, 8] {
            let why = found(at(k)).unwrap_or_else(|| panic!("element {k} is written"));
            assert!(why.contains("'c_w'") && why.contains("lies in 'a'") && why.contains("'a[i]'"), "{why}");
        }
        for k in [0, 9] {
            assert_eq!(found(at(k)), None, "element {k} is only read");
        }
        assert_eq!(found(&mut w as *mut f32 as *mut u8), None);
        // Not a checked member: nothing to check.
        assert_eq!(member_aliased(&m, &p, &[(1, at(3))]), None);
        // A written array whose footprint is not known.
        let mut unknown = m.clone();
        unknown.args[0].array.as_mut().unwrap().footprint.clear();
        let why = member_aliased(&unknown, &p, &[(2, &mut w as *mut f32 as *mut u8)]).expect("unknown footprint");
        assert!(why.contains("cannot tell which parts of 'a'"), "{why}");
    }

    #[test]
    fn overlap_rules() {
        let mut a = vec![0f32; 10];
        let mut pa = a.as_mut_ptr();
        let mut pb = unsafe { a.as_mut_ptr().add(5) };
        let mut nv: i32 = 5;
        let args = [
            &mut pa as *mut *mut f32 as *mut c_void,
            &mut pb as *mut *mut f32 as *mut c_void,
            &mut nv as *mut i32 as *mut c_void,
        ];
        let mk = |ma, mb, len_a: i64| {
            manifest(vec![
                arg("a", VarKind::Pointer, ma, vec![Expr::int(10)], vec![(Expr::int(0), Expr::int(len_a))]),
                arg("b", VarKind::Pointer, mb, vec![n()], vec![]),
                scalar("n"),
            ])
        };
        // a[0:5] and b = a+5 [0:5] are adjacent, not overlapping.
        assert!(unsafe { plan(&mk(MapKind::Tofrom, MapKind::Tofrom, 5), &args) }.is_ok());
        // a[0:6] reaches into b.
        let e = unsafe { plan(&mk(MapKind::To, MapKind::From, 6), &args) }.unwrap_err();
        assert_eq!(e, "arrays 'a' and 'b' overlap in host memory");
        // Both only read: allowed.
        assert!(unsafe { plan(&mk(MapKind::To, MapKind::To, 6), &args) }.is_ok());
    }

    #[test]
    fn host_buffers_are_aligned_and_zeroed() {
        let mut b = HostBuffer::new(10000).unwrap();
        assert_eq!(b.as_mut_ptr() as usize % 4096, 0);
        assert!(b.host_view().iter().all(|&x| x == 0));
        assert_eq!(b.host_view().len(), 10000);
        assert_eq!(b.capacity(), 12288);
        // The padding is zeroed too (a wide beat may read it).
        assert!(unsafe { std::slice::from_raw_parts(b.as_mut_ptr(), 12288) }.iter().all(|&x| x == 0));
        let mut z = HostBuffer::new(0).unwrap();
        assert_eq!(z.host_view().len(), 0);
        assert_eq!(z.capacity(), 4096);
    }
}
