//! The exact Load and Store sets of a region for the streaming kernel of mode
//! `dataflow` (`tessera_hls::dataflow`), computed with isl from the SCoP's domain and
//! access relations.
//!
//! - **Load set** of an array: the union of the images of the domain under its read
//!   accesses, `⋃_R R(Dom)` — every element the region reads.
//! - **Store set** of an array: the image of the domain under its write accesses.
//! - **Load box**: what the dataflow kernel actually reads, the box hull of the Load
//!   set (per dimension from the smallest to the largest subscript offset, over the
//!   loop bounds), only for subscripts `loop index + constant`, one loop per
//!   dimension in order (the kernel's input class); `load_extra` is `box \ Load`,
//!   the over-approximation (empty for most stencils with a centre point; the four
//!   corners of a 5-point star's box, …). The box is empty when the domain is.
//!
//! The dataflow kernel has no inter-tile reuse logic (whole-row strips), so Load is
//! not a sum of per-tile sets: it is read once, row by row.

use crate::isl::{self, ctx_err, IslResult, Text};
use crate::scop::{isl_ident, isl_sym, AccessKind, Scop};
use crate::Sym;
use serde::{Deserialize, Serialize};

/// The sets of one array of the region.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArraySets {
    /// The array.
    pub array: String,
    /// Elements read (isl text), `None` when the region does not read it.
    pub load: Option<String>,
    /// Elements written (isl text), `None` when the region does not write it.
    pub store: Option<String>,
    /// The box hull of the Load set the kernel reads (isl text), for subscripts of
    /// the kernel's form.
    pub load_box: Option<String>,
    /// `load_box \ load` (isl text) when not empty: elements read but not needed.
    pub load_extra: Option<String>,
}

/// The Load and Store sets of every array of the SCoP, in its array order.
pub fn sets(scop: &Scop) -> Result<Vec<ArraySets>, String> {
    let ctx = isl::new_context();
    let r = compute(&ctx, scop);
    drop(ctx);
    r
}

/// Per dimension `(min, max)` subscript offset of the reads of `array` when every
/// read subscript is `loop d + constant` in dimension d (one loop per dimension, in
/// order), else `None`.
pub fn read_offsets(scop: &Scop, array: &str) -> Option<Vec<(i64, i64)>> {
    let mut out: Option<Vec<(i64, i64)>> = None;
    for a in scop.accesses.iter().filter(|a| a.array == array && a.kind == AccessKind::Read) {
        let offs = loop_offsets(scop, &a.subscripts)?;
        out = Some(match out {
            None => offs.iter().map(|&c| (c, c)).collect(),
            Some(v) => v.iter().zip(&offs).map(|(&(lo, hi), &c)| (lo.min(c), hi.max(c))).collect(),
        });
    }
    out
}

/// The constants `c_d` of subscripts `loop d + c_d`, one per loop of the nest.
pub fn loop_offsets(scop: &Scop, subscripts: &[crate::Aff]) -> Option<Vec<i64>> {
    if subscripts.len() != scop.depth() {
        return None;
    }
    subscripts
        .iter()
        .enumerate()
        .map(|(d, s)| match s.terms.as_slice() {
            [t] if t.coeff == 1 && t.sym == Sym::Loop(d) => Some(s.constant),
            _ => None,
        })
        .collect()
}

fn compute(ctx: &isl_rs::Context, scop: &Scop) -> IslResult<Vec<ArraySets>> {
    let dom = isl::uset(ctx, &scop.domain)?;
    let mut out = Vec::new();
    for arr in &scop.arrays {
        let image = |kind: AccessKind| -> IslResult<Option<isl_rs::UnionSet>> {
            let mut acc: Option<isl_rs::UnionSet> = None;
            for a in scop.accesses.iter().filter(|a| a.array == arr.name && a.kind == kind) {
                let m = isl::umap(ctx, &a.relation)?;
                let s = m
                    .intersect_domain(dom.copy().map_err(ctx_err("copy"))?)
                    .map_err(ctx_err("accesses"))?
                    .range()
                    .map_err(ctx_err("image"))?;
                acc = Some(match acc {
                    None => s,
                    Some(u) => u.union(s).map_err(ctx_err("union"))?,
                });
            }
            acc.map(|u| u.coalesce().map_err(ctx_err("coalesce"))).transpose()
        };
        let load = image(AccessKind::Read)?;
        let store = image(AccessKind::Write)?;
        let (mut load_box, mut load_extra) = (None, None);
        if let (Some(l), Some(offs)) = (&load, read_offsets(scop, &arr.name)) {
            let f = |a: &crate::Aff| a.format(&|s| isl_sym(&scop.loops, s));
            let vars: Vec<String> = (0..offs.len()).map(|d| format!("e{d}")).collect();
            let mut cons = Vec::new();
            for (d, l) in scop.loops.iter().enumerate() {
                let (lo, hi) = offs[d];
                cons.push(format!("{} <= {}", f(&l.lower.add_constant(lo)), vars[d]));
                cons.push(format!("{} < {}", vars[d], f(&l.upper.add_constant(hi))));
                // No iteration, nothing read.
                cons.push(format!("{} < {}", f(&l.lower), f(&l.upper)));
            }
            let text = format!("{}{{ {}[{}] : {} }}", scop.isl_params(), isl_ident(&arr.name), vars.join(", "), cons.join(" and "));
            let b = isl::uset(ctx, &text)?.coalesce().map_err(ctx_err("coalesce"))?;
            let extra = b
                .copy()
                .map_err(ctx_err("copy"))?
                .subtract(l.copy().map_err(ctx_err("copy"))?)
                .map_err(ctx_err("box minus load"))?
                .coalesce()
                .map_err(ctx_err("coalesce"))?;
            if !extra.is_empty().map_err(ctx_err("emptiness"))? {
                load_extra = Some(extra.text());
            }
            load_box = Some(b.text());
        }
        out.push(ArraySets {
            array: arr.name.clone(),
            load: load.map(|s| s.text()),
            store: store.map(|s| s.text()),
            load_box,
            load_extra,
        });
    }
    Ok(out)
}

/// The sets as the plan dump prints them.
pub fn describe(sets: &[ArraySets]) -> String {
    let mut s = String::new();
    for a in sets {
        if let Some(l) = &a.load {
            s.push_str(&format!("  Load  {}: {l}\n", a.array));
            if let Some(b) = &a.load_box {
                s.push_str(&format!("    read (box hull): {b}\n"));
                match &a.load_extra {
                    Some(x) => s.push_str(&format!("    over-approximation (box \\ Load): {x}\n")),
                    None => s.push_str("    the box is exactly the Load set\n"),
                }
            }
        }
        if let Some(st) = &a.store {
            s.push_str(&format!("  Store {}: {st}\n", a.array));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(name: &str) -> Scop {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/ir/small/{name}.ir.json"));
        let region = tessera_ir::Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
        crate::scop::extract(&region).unwrap()
    }

    /// `got` (isl text) denotes the same set as `want`.
    fn same(got: &Option<String>, want: &str) {
        let got = got.as_deref().expect("a set");
        let ctx = isl::new_context();
        let (g, w) = (isl::uset(&ctx, got).unwrap(), isl::uset(&ctx, want).unwrap());
        assert!(g.is_equal(&w).unwrap(), "got {got}, want {want}");
    }

    /// 2D 5-point star over 1 ≤ i < 36, 1 ≤ j < 52: the Load set is the box without
    /// its four corners, the Store set the domain.
    #[test]
    fn sets_of_a_2d_stencil() {
        let s = sets(&small("2D-5p")).unwrap();
        let a = s.iter().find(|a| a.array == "A").unwrap();
        same(&a.load, "{ A[e0, e1] : 0 <= e0 <= 36 and 1 <= e1 <= 51; A[e0, e1] : 1 <= e0 <= 35 and 0 <= e1 <= 52 }");
        same(&a.load_box, "{ A[e0, e1] : 0 <= e0 <= 36 and 0 <= e1 <= 52 }");
        same(&a.load_extra, "{ A[0, 0]; A[0, 52]; A[36, 0]; A[36, 52] }");
        assert_eq!(a.store, None);
        let x = s.iter().find(|a| a.array == "X").unwrap();
        same(&x.store, "{ X[e0, e1] : 1 <= e0 <= 35 and 1 <= e1 <= 51 }");
        assert_eq!((&x.load, &x.load_box), (&None, &None));
        let text = describe(&s);
        assert!(text.contains("  Load  A: ") && text.contains("over-approximation (box \\ Load)") && text.contains("  Store X: "), "{text}");
    }

    /// 3D 7-point heat stencil over 1 ≤ i < 10, 1 ≤ j < 12, 1 ≤ k < 28: a 3D star;
    /// the box hull adds the edges and corners of 0..10 × 0..12 × 0..28.
    #[test]
    fn sets_of_a_3d_stencil() {
        let s = sets(&small("3D-heat")).unwrap();
        let a = s.iter().find(|a| a.array == "A").unwrap();
        same(
            &a.load,
            "{ A[e0, e1, e2] : 0 <= e0 <= 10 and 1 <= e1 <= 11 and 1 <= e2 <= 27; \
               A[e0, e1, e2] : 1 <= e0 <= 9 and 0 <= e1 <= 12 and 1 <= e2 <= 27; \
               A[e0, e1, e2] : 1 <= e0 <= 9 and 1 <= e1 <= 11 and 0 <= e2 <= 28 }",
        );
        same(&a.load_box, "{ A[e0, e1, e2] : 0 <= e0 <= 10 and 0 <= e1 <= 12 and 0 <= e2 <= 28 }");
        assert!(a.load_extra.is_some());
        let b = s.iter().find(|a| a.array == "B").unwrap();
        same(&b.store, "{ B[e0, e1, e2] : 1 <= e0 <= 9 and 1 <= e1 <= 11 and 1 <= e2 <= 27 }");
    }

    /// Symbolic sizes stay parameters; an empty domain reads nothing.
    #[test]
    fn parametric_sets() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/jacobi2d_param.ir.json");
        let region = tessera_ir::Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let scop = crate::scop::extract(&region).unwrap();
        let s = sets(&scop).unwrap();
        let text = describe(&s);
        assert!(text.contains("[n, m] -> "), "{text}");
        let read = s.iter().find(|a| a.load.is_some()).unwrap();
        assert!(read.load_box.as_deref().unwrap().contains("[n, m] -> "), "{text}");
    }
}
