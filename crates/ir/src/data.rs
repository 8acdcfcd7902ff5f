//! OpenMP data directives: `target data`, `target enter data`, `target exit data` and
//! `target update`.
//!
//! Two records, like [`Region`](crate::Region) and [`Manifest`](crate::manifest::Manifest)
//! for target regions:
//!
//! - [`DataDirective`] is what the plugin extracts from clang's AST (schema
//!   [`IR_VERSION`](crate::IR_VERSION)): the variables the rewritten call passes, in
//!   call order, and one [`MapItem`] per list item of the map (or `to`/`from` motion)
//!   clauses. Like a region, it records what it sees and never decides.
//! - [`DataDesc`] is the descriptor the compiler builds from it and the plugin embeds
//!   as a string literal in the runtime call (schema [`DATA_VERSION`]): every item's
//!   array shape resolved to expressions over the scalar arguments, exactly as a
//!   manifest argument's.
//!
//! The runtime entry points (`runtime/include/tessera_rt.h`) are
//! `__tessera_data_begin`/`__tessera_data_end` around a `target data` construct and
//! `__tessera_data` for the three standalone directives.

use crate::{Expr, Loc, MapKind, Named, ScalarType, Section, Var, VarKind};
use serde::{Deserialize, Serialize};

/// Version of the [`DataDesc`] schema.
pub const DATA_VERSION: u32 = 1;

/// [`MapItem::unsupported`] of an item whose clause Tessera does not implement
/// (the plugin still records the item, see [`DataDesc::probes`]).
pub const UNSUPPORTED_CLAUSE_ITEM: &str = "list item of an unsupported clause";

/// Which data directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataOp {
    /// `target data`: maps on entry to the construct, unmaps at its end (structured
    /// reference counts).
    #[serde(rename = "target data")]
    Region,
    /// `target enter data`: maps (dynamic reference counts).
    #[serde(rename = "target enter data")]
    Enter,
    /// `target exit data`: unmaps (dynamic reference counts).
    #[serde(rename = "target exit data")]
    Exit,
    /// `target update`: copies present data now, in the direction of each motion.
    #[serde(rename = "target update")]
    Update,
}

impl DataOp {
    /// The directive's spelling, e.g. `target enter data`.
    pub fn name(self) -> &'static str {
        match self {
            DataOp::Region => "target data",
            DataOp::Enter => "target enter data",
            DataOp::Exit => "target exit data",
            DataOp::Update => "target update",
        }
    }

    /// Parses a directive spelling (as clang names it).
    pub fn parse(s: &str) -> Option<DataOp> {
        [DataOp::Region, DataOp::Enter, DataOp::Exit, DataOp::Update].into_iter().find(|d| d.name() == s)
    }

    /// The map types (or motions, for `target update`) OpenMP allows on the directive,
    /// without the `always` modifier.
    pub fn allowed_maps(self) -> &'static [MapKind] {
        match self {
            DataOp::Region => &[MapKind::To, MapKind::From, MapKind::Tofrom, MapKind::Alloc],
            DataOp::Enter => &[MapKind::To, MapKind::Alloc],
            DataOp::Exit => &[MapKind::From, MapKind::Release, MapKind::Delete],
            DataOp::Update => &[MapKind::To, MapKind::From],
        }
    }
}

/// One data directive as the plugin extracts it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataDirective {
    /// Schema version; must equal [`IR_VERSION`](crate::IR_VERSION).
    pub version: u32,
    /// Location of the `#pragma omp target …` line.
    pub location: Loc,
    /// Name of the enclosing function.
    pub function: String,
    /// Index among the data directives of the translation unit (0-based).
    pub index: u32,
    /// Directive spelling, e.g. `target enter data` (see [`DataOp::parse`]).
    pub directive: String,
    /// Clauses Tessera does not implement (`device`, `use_device_ptr`, map modifiers other than `always`, …): any entry leaves the
    /// directive to the host OpenMP runtime.
    pub unsupported_clauses: Vec<Named>,
    /// Every variable the list items refer to (arrays, and the scalars their extents
    /// and sections use), in the order the rewritten call passes their addresses.
    /// Their `map`, `section` and `written` fields are unused: the items say.
    pub vars: Vec<Var>,
    /// The list items, in clause order.
    pub items: Vec<MapItem>,
    /// The scalar variable (one of `vars`, evaluated at the directive) holding the
    /// condition of an `if` clause; `None` without one.
    #[serde(default)]
    pub condition: Option<String>,
    /// The scalar variable (one of `vars`) holding the device number of a `device`
    /// clause; `None` without one.
    #[serde(default)]
    pub device: Option<String>,
}

/// One list item of a map clause (or of a `to`/`from` motion clause of `target
/// update`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MapItem {
    /// The variable, one of [`DataDirective::vars`]; `None` when the item is not a
    /// plain variable or an array section of one (see `unsupported`).
    pub var: Option<String>,
    /// Map type, or the motion of `target update` (`to`/`from`); with `always`.
    pub map: MapKind,
    /// The array section, one entry per subscript given (fewer than the dimensions:
    /// the rest are whole; empty: the whole variable).
    pub section: Vec<Section>,
    /// The item's source text.
    pub text: String,
    /// What the item is when Tessera cannot represent it (`member access`, …);
    /// `None` otherwise.
    pub unsupported: Option<String>,
    /// The strides of a strided section (`r[0:4:2]`), one per entry of `section`
    /// (`1` where none is given); empty when no stride is given. OpenMP allows them
    /// only in the motion clauses of `target update`.
    #[serde(default)]
    pub strides: Vec<Expr>,
    /// The OpenMP 5.1 `present` modifier (`map(present, to: a[…])`, `to(present:
    /// a[…])`): the item must already be present on the device, else the program
    /// stops with an error.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub present: bool,
    /// Where the item is.
    pub loc: Loc,
}

impl DataDirective {
    /// Parses the plugin's JSON.
    pub fn from_json(text: &str) -> Result<DataDirective, crate::IrError> {
        let d: DataDirective = serde_json::from_str(text).map_err(crate::IrError::Json)?;
        if d.version != crate::IR_VERSION {
            return Err(crate::IrError::Version(d.version));
        }
        Ok(d)
    }

    /// Pretty JSON (the plugin's `dump-ir` files, `<file>.<n>.data.json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("data directive IR is always serialisable")
    }

    /// Looks a variable up by name.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }
}

/// Everything the runtime needs to execute (or decline) one data directive.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataDesc {
    /// Schema version, [`DATA_VERSION`].
    pub version: u32,
    /// `file:line` of the directive: the key of its report lines.
    pub region: String,
    /// The directive.
    pub op: DataOp,
    /// Why Tessera leaves the directive to the host OpenMP runtime (the compile-time
    /// remark), or `None`.
    pub rejected: Option<String>,
    /// The variables in call order: the call passes one address per entry, as for a
    /// manifest (`tessera_rt.h`).
    pub args: Vec<DataArg>,
    /// The list items that Tessera maps, in clause order.
    pub items: Vec<DescItem>,
    /// How many list items are not in `items` because Tessera cannot locate their
    /// data (an item it cannot represent, or every item of a directive whose
    /// variables it cannot pass). The runtime refuses to leave such a directive to
    /// the host OpenMP runtime while anything is mapped on the device: it cannot
    /// tell whether the directive names that data.
    #[serde(default)]
    pub unlocated: usize,
    /// The list items of a clause Tessera does not implement (`to(mapper(m):
    /// a[0:n])`, `map(always, alloc: …)`), resolved but never executed: the
    /// runtime only asks whether the device holds their data, to stop the program
    /// rather than leave the directive to the host OpenMP runtime then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<DescItem>,
    /// The argument (a scalar) holding the `if` clause's condition: when it is 0 the
    /// directive moves no data and maps nothing, as on OpenMP's host device.
    #[serde(default)]
    pub condition: Option<usize>,
    /// The argument (a scalar) holding a `device` clause's number: when it does not
    /// name Tessera's device, the directive executes on OpenMP's host device, as
    /// with a false `if`.
    #[serde(default)]
    pub device: Option<usize>,
}

/// One variable of a data directive call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataArg {
    /// Variable name.
    pub name: String,
    /// How the data is reached from the passed address.
    pub kind: VarKind,
    /// Element (or scalar) type.
    pub elem: ScalarType,
}

/// One list item, resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DescItem {
    /// Index of the variable in [`DataDesc::args`] (a pointer or an array).
    pub arg: usize,
    /// Map type (motion for `target update`), with `always`.
    pub map: MapKind,
    /// Extent of every dimension, outermost first, as expressions over the scalar
    /// arguments (as [`ArrayArg::dims`](crate::manifest::ArrayArg::dims)).
    pub dims: Vec<Expr>,
    /// The section, one entry per dimension.
    pub section: Vec<Section>,
    /// Strides, one per dimension, for a strided section of `target update` (the
    /// section's `length` counts elements, `stride` apart); empty: contiguous.
    #[serde(default)]
    pub strides: Vec<Expr>,
    /// The `present` modifier ([`MapItem::present`]): the runtime stops the program
    /// when the section is not inside one mapping of the device.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub present: bool,
}

impl DataDesc {
    /// Parses a descriptor.
    pub fn from_json(text: &str) -> Result<DataDesc, String> {
        let d: DataDesc =
            serde_json::from_str(text).map_err(|e| format!("data directive descriptor does not parse: {e}"))?;
        if d.version != DATA_VERSION {
            return Err(format!(
                "data directive descriptor has schema version {}, this runtime reads version {DATA_VERSION}",
                d.version
            ));
        }
        Ok(d)
    }

    /// Compact JSON, as embedded in binaries.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("data directive descriptor is always serialisable")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_round_trip() {
        for op in [DataOp::Region, DataOp::Enter, DataOp::Exit, DataOp::Update] {
            assert_eq!(DataOp::parse(op.name()), Some(op));
            assert_eq!(serde_json::to_string(&op).unwrap(), format!("\"{}\"", op.name()));
        }
        assert_eq!(serde_json::to_string(&MapKind::AlwaysTofrom).unwrap(), "\"always tofrom\"");
        assert_eq!(serde_json::from_str::<MapKind>("\"release\"").unwrap(), MapKind::Release);
        assert_eq!(MapKind::AlwaysFrom.base(), MapKind::From);
        assert!(MapKind::AlwaysTo.copies_in() && !MapKind::AlwaysTo.copies_out());
        assert_eq!(MapKind::Alloc.with_always(), None);
        assert!(!MapKind::Present.copies_in() && !MapKind::Present.copies_out());
        let d = DataDesc {
            version: DATA_VERSION,
            region: "t.c:3".into(),
            op: DataOp::Update,
            rejected: None,
            args: vec![DataArg { name: "a".into(), kind: VarKind::Pointer, elem: ScalarType::F32 }],
            items: vec![DescItem {
                arg: 0,
                map: MapKind::From,
                dims: vec![Expr::int(4)],
                section: vec![Section { lower: Expr::int(0), length: Expr::int(4) }],
                strides: vec![],
                present: false,
            }],
            unlocated: 0,
            probes: vec![],
            condition: None,
            device: None,
        };
        assert_eq!(DataDesc::from_json(&d.to_json()).unwrap(), d);
        // `present` is written only when set, and read back either way.
        assert!(!d.to_json().contains("present"));
        let mut p = d.clone();
        p.items[0].present = true;
        assert!(p.to_json().contains("\"present\":true"));
        assert_eq!(DataDesc::from_json(&p.to_json()).unwrap(), p);
    }
}
