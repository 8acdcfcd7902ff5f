//! Data directives (`target data`, `target enter data`, `target exit data`, `target
//! update`): the plugin's [`DataDirective`] in, the runtime's [`DataDesc`] out.
//!
//! A directive is handled by the Tessera runtime when every clause is one Tessera
//! implements (map clauses with the map types OpenMP allows on the directive, the
//! `always` modifier, `to`/`from` motions, `nowait` on the standalone directives —
//! executed synchronously, which OpenMP permits) and every list item is a pointer or
//! array variable, or an array section of one, whose extents are known and whose
//! section bounds are integer expressions of scalar variables. Otherwise it is left
//! to the host OpenMP runtime with a remark; the descriptor then carries `rejected`
//! and the items Tessera could resolve, so the runtime can refuse to let such a
//! directive silently ignore data Tessera holds on the device.
//!
//! A scalar list item is an item of one element and no dimensions: it is mapped in
//! the device data environment like an array (reference counts, presence,
//! `omp_target_is_present`, `omp_get_mapped_ptr`, copies on `to`/`from`). Target
//! regions read scalars by value (OpenMP's firstprivate default); a scalar a region
//! writes is an array argument of one element (`tessera_ir::manifest::Arg`), so a
//! region writes the device copy of a present scalar, as OpenMP says. A struct list
//! item reaches here as an array of bytes (the plugin's `u8` variable of
//! `sizeof` elements): its bytes are mapped as they are, as OpenMP maps a struct
//! without a mapper.

use crate::check::resolved_dims_from;
use crate::complete_section;
use crate::reject::{RejectReason, Rejection};
use tessera_ir::data::{DataArg, DataDesc, DataDirective, DataOp, DescItem, MapItem, DATA_VERSION, UNSUPPORTED_CLAUSE_ITEM};
use tessera_ir::{print, Expr, VarKind};

/// What the compiler decided for one data directive.
#[derive(Clone, Debug)]
pub struct DataOutcome {
    /// The descriptor embedded in the runtime call (also for rejected directives).
    pub desc: DataDesc,
    /// Why the directive is left to the host OpenMP runtime, if it is.
    pub rejection: Option<Rejection>,
}

impl DataOutcome {
    /// The remark for a rejected directive: `'<directive>' not offloaded: <reason>`.
    pub fn remark(&self) -> Option<String> {
        self.rejection.as_ref().map(|r| format!("'{}' not offloaded: {}", self.desc.op.name(), r.remark()))
    }
}

/// Validates a data directive and builds its descriptor. Fails only on IR that the
/// plugin cannot have produced (an unknown directive or variable).
pub fn compile_data(dir: &DataDirective) -> Result<DataOutcome, String> {
    let op = DataOp::parse(&dir.directive)
        .ok_or_else(|| format!("internal error: '{}' is not a data directive", dir.directive))?;
    let mut rejection: Option<Rejection> = dir.unsupported_clauses.first().map(|c| Rejection {
        reason: RejectReason::UnsupportedClause { clause: c.name.clone() },
        loc: c.loc.clone(),
    });
    let args: Vec<DataArg> =
        dir.vars.iter().map(|v| DataArg { name: v.name.clone(), kind: v.kind, elem: v.elem }).collect();
    let mut items = Vec::new();
    let mut probes = Vec::new();
    let mut unlocated = 0;
    for item in &dir.items {
        match desc_item(dir, op, item) {
            Ok(i) => items.push(i),
            Err(r) => {
                // An item of a clause Tessera does not implement is resolved all the
                // same when it can be, for the runtime to probe (DataDesc::probes).
                let probe = (item.unsupported.as_deref() == Some(UNSUPPORTED_CLAUSE_ITEM))
                    .then(|| desc_item(dir, op, &MapItem { unsupported: None, ..item.clone() }).ok())
                    .flatten();
                match probe {
                    Some(p) => probes.push(p),
                    // An item of a known array variable is still found by the
                    // address of its element 0 (Envs::touched); anything else is not.
                    None if item.var.as_ref().and_then(|v| dir.var(v)).is_none_or(|v| v.kind == VarKind::Scalar) => {
                        unlocated += 1
                    }
                    None => {}
                }
                rejection.get_or_insert(r);
            }
        }
    }
    let desc = DataDesc {
        version: DATA_VERSION,
        region: dir.location.file_line(),
        op,
        rejected: rejection.as_ref().map(Rejection::remark),
        args,
        items,
        unlocated,
        probes,
        condition: dir.condition.as_ref().and_then(|c| dir.vars.iter().position(|v| &v.name == c)),
        device: dir.device.as_ref().and_then(|c| dir.vars.iter().position(|v| &v.name == c)),
    };
    Ok(DataOutcome { desc, rejection })
}

/// The descriptor of a data directive whose variables the plugin cannot pass to the
/// runtime (`reason`): no arguments, no items, every list item unlocated (at least
/// one, so that the runtime knows nothing about its footprint).
pub fn opaque_data(dir: &DataDirective, reason: &str) -> Result<DataDesc, String> {
    let op = DataOp::parse(&dir.directive)
        .ok_or_else(|| format!("internal error: '{}' is not a data directive", dir.directive))?;
    Ok(DataDesc {
        version: DATA_VERSION,
        region: dir.location.file_line(),
        op,
        rejected: Some(RejectReason::Unpassable { detail: reason.to_string() }.remark()),
        args: Vec::new(),
        items: Vec::new(),
        unlocated: dir.items.len().max(1),
        probes: Vec::new(),
        condition: None,
        device: None,
    })
}

/// Resolves one list item; `Err` for an item Tessera cannot map.
fn desc_item(dir: &DataDirective, op: DataOp, item: &MapItem) -> Result<DescItem, Rejection> {
    let reject = |reason| Rejection { reason, loc: item.loc.clone() };
    if let Some(what) = &item.unsupported {
        return Err(reject(RejectReason::UnsupportedExpression { what: what.clone(), text: item.text.clone() }));
    }
    let Some(name) = &item.var else {
        let what = "list item".to_string();
        return Err(reject(RejectReason::UnsupportedExpression { what, text: item.text.clone() }));
    };
    if !op.allowed_maps().contains(&item.map.base()) {
        // Clang's Sema rejects these; checked so that a hand-written IR cannot slip one in.
        let clause = format!("map({}: …) on '{}'", item.map.name(), op.name());
        return Err(reject(RejectReason::UnsupportedClause { clause }));
    }
    let arg = dir.vars.iter().position(|v| &v.name == name);
    let Some(arg) = arg else {
        return Err(reject(RejectReason::UnsupportedExpression {
            what: "list item of an unknown variable".into(),
            text: name.clone(),
        }));
    };
    let var = &dir.vars[arg];
    if var.kind == VarKind::Scalar {
        // One element, no dimensions; clang's Sema allows no section of a scalar.
        return Ok(DescItem { arg, map: item.map, dims: Vec::new(), section: Vec::new(), strides: Vec::new(), present: item.present });
    }
    let dims = resolved_dims_from(var, &item.section, 0)
        .map_err(|r| Rejection { reason: r.reason, loc: item.loc.clone() })?;
    let section = complete_section(&item.section, &dims);
    let strides: Vec<Expr> = if item.strides.is_empty() {
        Vec::new()
    } else if op != DataOp::Update {
        // Clang's Sema rejects these; checked so that a hand-written IR cannot slip one in.
        return Err(reject(RejectReason::UnsupportedExpression {
            what: "strided array section".into(),
            text: item.text.clone(),
        }));
    } else {
        (0..dims.len()).map(|d| item.strides.get(d).cloned().unwrap_or_else(|| Expr::int(1))).collect()
    };
    for e in dims.iter().chain(section.iter().flat_map(|s| [&s.lower, &s.length])).chain(&strides) {
        if let Some(bad) = non_integer(dir, e) {
            return Err(reject(RejectReason::UnsupportedExpression {
                what: "array section bound".into(),
                text: bad,
            }));
        }
    }
    Ok(DescItem { arg, map: item.map, dims, section, strides, present: item.present })
}

/// The first sub-expression the runtime cannot evaluate as an integer over the
/// directive's integer scalar variables, printed; `None` when all is well.
fn non_integer(dir: &DataDirective, e: &Expr) -> Option<String> {
    let mut bad = None;
    e.visit(&mut |n| {
        if bad.is_some() {
            return;
        }
        let ok = match n {
            Expr::Int { .. } => true,
            Expr::Var { name, ty } => {
                ty.is_integer() && dir.var(name).is_some_and(|v| v.kind == VarKind::Scalar && v.elem.is_integer())
            }
            Expr::Unary { ty, .. } | Expr::Binary { ty, .. } | Expr::Cast { ty, .. } | Expr::Select { ty, .. } => {
                ty.is_integer()
            }
            Expr::Float { .. } | Expr::Read { .. } | Expr::Call { .. } | Expr::Unsupported { .. } => false,
        };
        if !ok {
            bad = Some(match n {
                Expr::Unsupported { text, .. } => text.clone(),
                _ => print::expr(n),
            });
        }
    });
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{Loc, MapKind, Named, ScalarType, Section, Var, IR_VERSION};

    fn loc(line: u32) -> Loc {
        Loc { file: "d.c".into(), line, col: 3 }
    }

    fn var(name: &str, kind: VarKind, dims: Vec<Option<Expr>>) -> Var {
        let elem = if kind == VarKind::Scalar { ScalarType::I32 } else { ScalarType::F32 };
        Var { name: name.into(), kind, elem, dims, map: None, section: vec![], written: false, loc: loc(1) }
    }

    fn n() -> Expr {
        Expr::var("n", ScalarType::I32)
    }

    fn item(v: &str, map: MapKind, section: Vec<Section>) -> MapItem {
        MapItem { var: Some(v.into()), map, section, text: v.into(), unsupported: None, loc: loc(5), strides: vec![], present: false }
    }

    fn dir(directive: &str, items: Vec<MapItem>) -> DataDirective {
        DataDirective {
            version: IR_VERSION,
            location: loc(5),
            function: "f".into(),
            index: 0,
            directive: directive.into(),
            unsupported_clauses: vec![],
            condition: None,
            device: None,
            vars: vec![
                var("a", VarKind::Pointer, vec![None]),
                var("n", VarKind::Scalar, vec![]),
                var("B", VarKind::Array, vec![Some(Expr::int(8)), Some(Expr::int(4))]),
                var("s", VarKind::Scalar, vec![]),
            ],
            items,
        }
    }

    #[test]
    fn resolves_items() {
        let d = dir(
            "target enter data",
            vec![
                item("a", MapKind::To, vec![Section { lower: Expr::int(1), length: n() }]),
                item("B", MapKind::AlwaysTo, vec![Section { lower: Expr::int(2), length: Expr::int(3) }]),
                item("s", MapKind::To, vec![]),
            ],
        );
        let out = compile_data(&d).unwrap();
        assert!(out.rejection.is_none(), "{:?}", out.rejection);
        assert_eq!(out.desc.op, DataOp::Enter);
        assert_eq!(out.desc.region, "d.c:5");
        assert_eq!(out.desc.args.len(), 4);
        // `a`'s extent is lower + length; B's inner dimension is whole; the scalar
        // is one element without dimensions.
        assert_eq!(out.desc.items.len(), 3);
        assert_eq!(tessera_ir::print::expr(&out.desc.items[0].dims[0]), "1 + n");
        assert_eq!(out.desc.items[1].map, MapKind::AlwaysTo);
        assert_eq!(out.desc.items[1].section.len(), 2);
        assert_eq!(out.desc.items[1].section[1].length, Expr::int(4));
        assert_eq!((out.desc.items[2].arg, out.desc.items[2].dims.len(), out.desc.items[2].section.len()), (3, 0, 0));
    }

    #[test]
    fn rejects_what_it_cannot_map() {
        // An unsupported clause: the items are still resolved for the runtime.
        let mut d = dir("target update", vec![item("a", MapKind::From, vec![Section { lower: Expr::int(0), length: n() }])]);
        d.unsupported_clauses.push(Named { name: "device".into(), loc: loc(5) });
        let out = compile_data(&d).unwrap();
        assert_eq!(out.rejection.as_ref().unwrap().reason.code(), "unsupported-clause");
        assert_eq!(out.remark().unwrap(), "'target update' not offloaded: [unsupported-clause] clause 'device' is not supported");
        assert_eq!(out.desc.rejected.as_deref(), Some("[unsupported-clause] clause 'device' is not supported"));
        assert_eq!(out.desc.items.len(), 1);

        // A pointer without a section has no extent.
        let out = compile_data(&dir("target data", vec![item("a", MapKind::Tofrom, vec![])])).unwrap();
        assert_eq!(out.rejection.unwrap().reason.code(), "unknown-extent");

        // A section bound that is not an integer expression of scalars.
        let read = Expr::Read { array: "B".into(), index: vec![Expr::int(0), Expr::int(0)], ty: ScalarType::I32, loc: loc(5) };
        let out = compile_data(&dir("target exit data", vec![item("a", MapKind::From, vec![Section { lower: Expr::int(0), length: read }])]))
            .unwrap();
        let r = out.rejection.unwrap();
        assert_eq!(r.reason.code(), "unsupported-expression");
        assert_eq!(r.message(), "array section bound 'B[0][0]' is not supported");

        // A map type the directive does not allow.
        let out = compile_data(&dir("target enter data", vec![item("B", MapKind::From, vec![])])).unwrap();
        assert_eq!(out.rejection.unwrap().reason.code(), "unsupported-clause");

        // An item the plugin could not represent.
        let mut it = item("a", MapKind::To, vec![]);
        it.var = None;
        it.text = "s.a[0:n]".into();
        it.unsupported = Some("member access".into());
        let out = compile_data(&dir("target enter data", vec![it])).unwrap();
        assert_eq!(out.rejection.unwrap().message(), "member access 's.a[0:n]' is not supported");

        assert!(compile_data(&dir("target teams", vec![])).is_err());
    }

    #[test]
    fn items_of_unsupported_clauses_become_probes() {
        // `to(mapper(m): a[2:n])`: never executed, but resolved for the runtime to
        // probe, scalars too.
        let mut probe = item("a", MapKind::To, vec![Section { lower: Expr::int(2), length: n() }]);
        probe.unsupported = Some(UNSUPPORTED_CLAUSE_ITEM.into());
        let mut scalar = item("s", MapKind::To, vec![]);
        scalar.unsupported = Some(UNSUPPORTED_CLAUSE_ITEM.into());
        let mut d = dir("target update", vec![probe, scalar]);
        d.unsupported_clauses.push(Named { name: "to(mapper: ...)".into(), loc: loc(5) });
        let out = compile_data(&d).unwrap();
        assert_eq!(out.remark().unwrap(), "'target update' not offloaded: [unsupported-clause] clause 'to(mapper: ...)' is not supported");
        assert!(out.desc.items.is_empty());
        assert_eq!(out.desc.probes.len(), 2);
        assert_eq!(tessera_ir::print::expr(&out.desc.probes[0].dims[0]), "2 + n");
        assert_eq!(out.desc.unlocated, 0);
    }

    #[test]
    fn present_modifier_reaches_the_descriptor() {
        let mut it = item("a", MapKind::To, vec![Section { lower: Expr::int(0), length: n() }]);
        it.present = true;
        let out = compile_data(&dir("target update", vec![it, item("B", MapKind::From, vec![])])).unwrap();
        assert!(out.rejection.is_none());
        assert_eq!(out.desc.items.iter().map(|i| i.present).collect::<Vec<_>>(), [true, false]);
    }
}
