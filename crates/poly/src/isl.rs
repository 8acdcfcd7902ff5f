//! The thin layer over isl-rs 0.3.1 (bundled isl 0.27) that the optimizer uses.
//!
//! Facts this layer works around (`docs/toolchain.md` §4):
//! - isl-rs' `to_str()` leaks the malloc'd string; [`text`] and friends call isl's
//!   `isl_*_to_str` directly and free the result.
//! - A `Context` has no lifetime link to its objects. `optimize()` allocates one
//!   context per call, runs everything inside a function that returns plain Rust data
//!   only, and drops the context afterwards, so no isl object outlives it.
//! - Errors: the context is set to `ISL_ON_ERROR_CONTINUE` (no stderr noise; every
//!   error comes back as `Err` through the wrapper) with an operation limit, so a
//!   pathological input ends in a rejection instead of a hang.
//!
//! isl-rs lacks `isl_ast_build`; the optimizer does not need it (the tiled loop nest
//! is regular enough that the code generator prints it from the plan), so no shim is
//! added.

use crate::affine::{Aff, Sym};
use isl_rs::{Context, DimType, LibISLError, Map, Set, UnionMap, UnionSet, Val};
use std::ffi::{c_char, c_void, CStr};

/// An isl failure, with what was being computed.
pub(crate) type IslResult<T> = Result<T, String>;

/// Maps an isl-rs error to a message naming the operation.
pub(crate) fn ctx_err(what: &'static str) -> impl Fn(LibISLError) -> String {
    move |e| format!("{what}: {e}")
}

/// `ISL_ON_ERROR_CONTINUE` from `isl/options.h`.
const ISL_ON_ERROR_CONTINUE: i32 = 1;

/// isl operations allowed per `optimize()` call (the benchmarks need well under 1%).
const MAX_OPERATIONS: u64 = 2_000_000_000;

/// A fresh context configured as described in the module docs.
pub(crate) fn new_context() -> Context {
    let ctx = Context::alloc();
    let _ = isl_rs::Options::set_on_error(&ctx, ISL_ON_ERROR_CONTINUE);
    ctx.set_max_operations(MAX_OPERATIONS);
    ctx
}

/// Parses a set.
pub(crate) fn set(ctx: &Context, s: &str) -> IslResult<Set> {
    Set::read_from_str(ctx, s).map_err(|e| format!("parsing set `{s}`: {e}"))
}

/// Parses a map.
pub(crate) fn map(ctx: &Context, s: &str) -> IslResult<Map> {
    Map::read_from_str(ctx, s).map_err(|e| format!("parsing map `{s}`: {e}"))
}

/// Parses a union set.
pub(crate) fn uset(ctx: &Context, s: &str) -> IslResult<UnionSet> {
    UnionSet::read_from_str(ctx, s).map_err(|e| format!("parsing union set `{s}`: {e}"))
}

/// Parses a union map.
pub(crate) fn umap(ctx: &Context, s: &str) -> IslResult<UnionMap> {
    UnionMap::read_from_str(ctx, s).map_err(|e| format!("parsing union map `{s}`: {e}"))
}

extern "C" {
    fn isl_set_to_str(set: usize) -> *mut c_char;
    fn isl_map_to_str(map: usize) -> *mut c_char;
    fn isl_union_set_to_str(uset: usize) -> *mut c_char;
    fn isl_union_map_to_str(umap: usize) -> *mut c_char;
    fn isl_set_foreach_point(set: usize, f: extern "C" fn(usize, *mut c_void) -> i32, user: *mut c_void) -> i32;
    fn free(p: *mut c_void);
}

/// Copies and frees a string isl returned.
fn take_str(p: *mut c_char) -> String {
    if p.is_null() {
        return "<isl: no text>".to_string();
    }
    // SAFETY: isl returns a NUL-terminated malloc'd string that we own.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: allocated by isl with malloc, freed exactly once here.
    unsafe { free(p.cast()) };
    s
}

/// Objects that isl can print.
pub(crate) trait Text {
    /// isl's text form (without the leak of isl-rs' `to_str`).
    fn text(&self) -> String;
}

impl Text for Set {
    fn text(&self) -> String {
        // SAFETY: `ptr` is a live isl_set (isl_keep).
        take_str(unsafe { isl_set_to_str(self.ptr) })
    }
}

impl Text for Map {
    fn text(&self) -> String {
        // SAFETY: `ptr` is a live isl_map (isl_keep).
        take_str(unsafe { isl_map_to_str(self.ptr) })
    }
}

impl Text for UnionSet {
    fn text(&self) -> String {
        // SAFETY: `ptr` is a live isl_union_set (isl_keep).
        take_str(unsafe { isl_union_set_to_str(self.ptr) })
    }
}

impl Text for UnionMap {
    fn text(&self) -> String {
        // SAFETY: `ptr` is a live isl_union_map (isl_keep).
        take_str(unsafe { isl_union_map_to_str(self.ptr) })
    }
}

/// An integer value, `None` for rationals, NaN and infinities.
pub(crate) fn val_i64(v: &Val) -> Option<i64> {
    if !v.is_int().ok()? {
        return None;
    }
    v.get_num_si().ok()
}

/// Converts an isl affine expression (no local variables, integer coefficients) into
/// an [`Aff`]: input dimension `i` becomes `ins[i]`, parameters go through `param`.
pub(crate) fn convert_aff(a: &isl_rs::Aff, ins: &[Sym], param: &dyn Fn(&str) -> Option<Sym>) -> Option<Aff> {
    let n_div = a.dim(DimType::Div).ok()?;
    for i in 0..n_div {
        if val_i64(&a.get_coefficient_val(DimType::Div, i).ok()?)? != 0 {
            return None;
        }
    }
    let mut out = Aff::constant(val_i64(&a.get_constant_val().ok()?)?);
    let n_in = a.dim(DimType::In).ok()?;
    for i in 0..n_in {
        let c = val_i64(&a.get_coefficient_val(DimType::In, i).ok()?)?;
        if c != 0 {
            out = out.add(&Aff::sym(ins.get(i as usize)?.clone()).scale(c));
        }
    }
    let n_par = a.dim(DimType::Param).ok()?;
    for i in 0..n_par {
        let c = val_i64(&a.get_coefficient_val(DimType::Param, i).ok()?)?;
        if c != 0 {
            let name = a.get_dim_name(DimType::Param, i as u32).ok()?.to_string();
            out = out.add(&Aff::sym(param(&name)?).scale(c));
        }
    }
    Some(out)
}

/// A rectangular over-approximation of the range of a map per domain point: offset
/// (affine in the domain and parameters) and constant size per range dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FixedBox {
    /// Lower corner.
    pub offset: Vec<Aff>,
    /// Extent per dimension.
    pub size: Vec<i64>,
}

/// The fixed box hull of the range of `m` (isl `get_range_simple_fixed_box_hull`),
/// `None` when isl finds no box of constant size or the offset is not affine.
pub(crate) fn range_box(m: &Map, ins: &[Sym], param: &dyn Fn(&str) -> Option<Sym>) -> IslResult<Option<FixedBox>> {
    let b = m.get_range_simple_fixed_box_hull().map_err(ctx_err("box hull"))?;
    if !b.is_valid().map_err(ctx_err("box hull"))? {
        return Ok(None);
    }
    let off = b.get_offset().map_err(ctx_err("box offset"))?;
    let size = b.get_size().map_err(ctx_err("box size"))?;
    let n = size.size().map_err(ctx_err("box size"))?;
    let mut out = FixedBox { offset: Vec::new(), size: Vec::new() };
    for i in 0..n {
        let Some(s) = val_i64(&size.get_at(i).map_err(ctx_err("box size"))?) else { return Ok(None) };
        let a = off.get_at(i).map_err(ctx_err("box offset"))?;
        let Some(o) = convert_aff(&a, ins, param) else { return Ok(None) };
        out.size.push(s);
        out.offset.push(o);
    }
    Ok(Some(out))
}

/// Per-dimension `[min, max]` of a set (`None` where unbounded or parametric).
pub(crate) fn dim_ranges(s: &Set) -> IslResult<Vec<(Option<i64>, Option<i64>)>> {
    let n = s.dim(DimType::Set).map_err(ctx_err("dim"))?;
    let mut out = Vec::new();
    for i in 0..n {
        let lo = s.copy().map_err(ctx_err("copy"))?.dim_min_val(i).ok().and_then(|v| val_i64(&v));
        let hi = s.copy().map_err(ctx_err("copy"))?.dim_max_val(i).ok().and_then(|v| val_i64(&v));
        out.push((lo, hi));
    }
    Ok(out)
}

/// The value-based flow dependences into the reads `sink` (isl's dataflow analysis,
/// `isl_union_access_info_compute_flow`): every read instance is related to the last
/// write of `must_source` before it in the order of `schedule` (a union map to one
/// time space) that wrote the element it reads. Reads with no such write are left out.
pub(crate) fn value_flow(sink: UnionMap, must_source: UnionMap, schedule: UnionMap) -> IslResult<UnionMap> {
    isl_rs::UnionAccessInfo::from_sink(sink)
        .and_then(|a| a.set_must_source(must_source))
        .and_then(|a| a.set_schedule_map(schedule))
        .and_then(|a| a.compute_flow())
        .and_then(|f| f.get_must_dependence())
        .map_err(ctx_err("dataflow analysis"))
}

/// The integer points of a bounded set without parameters, each as its coordinates
/// (of a wrapped map: the domain's, then the range's), in isl's enumeration order;
/// `Err` when isl cannot enumerate it (unbounded or parametric).
pub(crate) fn points(s: &Set) -> IslResult<Vec<Vec<i64>>> {
    struct Acc {
        n: u32,
        out: Vec<Vec<i64>>,
        bad: bool,
    }
    extern "C" fn each(p: usize, user: *mut c_void) -> i32 {
        // SAFETY: `user` is the `Acc` passed below, alive for the whole call.
        let acc = unsafe { &mut *user.cast::<Acc>() };
        // isl hands over the point (isl_take): the wrapper frees it on drop.
        let pt = isl_rs::Point { ptr: p, should_free_on_drop: true };
        let mut v = Vec::with_capacity(acc.n as usize);
        for i in 0..acc.n {
            match pt.get_coordinate_val(DimType::Set, i as i32).ok().as_ref().and_then(val_i64) {
                Some(c) => v.push(c),
                None => {
                    acc.bad = true;
                    return -1;
                }
            }
        }
        acc.out.push(v);
        0
    }
    if s.dim(DimType::Param).map_err(ctx_err("dim"))? != 0 {
        return Err(format!("enumerating `{}`: the set has parameters", s.text()));
    }
    let n = s.dim(DimType::Set).map_err(ctx_err("dim"))?;
    let mut acc = Acc { n: n as u32, out: Vec::new(), bad: false };
    // SAFETY: `s.ptr` is a live isl_set (isl_keep); the callback only touches `acc`.
    let r = unsafe { isl_set_foreach_point(s.ptr, each, (&mut acc as *mut Acc).cast()) };
    if r != 0 || acc.bad {
        s.get_ctx().reset_error();
        return Err(format!("enumerating `{}`: not a bounded set of integer points", s.text()));
    }
    Ok(acc.out)
}
