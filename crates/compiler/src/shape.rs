//! The structure the resource model needs ([`tessera_model::KernelShape`]), derived from
//! the region IR and the optimizer's plan — never per benchmark. Pure.
//!
//! - **Operators of one lane**: every operation of the statements' values, conditions
//!   and initialisers, by kind and precision (`crates/model/src/resources.rs`). The IR
//!   makes every conversion explicit, so `0.2 * (a + b)` on `float`s is a `float`
//!   addition, a conversion to `double`, a `double` multiply and (stored into a
//!   `float`) a conversion back. Subscripts are addresses, not datapath: in a tiled
//!   kernel they are constants after step 4, and address generators are counted
//!   separately. A floating negation, `fabs` and `copysign` flip a sign bit (free);
//!   `fmin`/`fmax` are comparisons (plus a select), `floor`/`ceil`/`trunc`/`round`
//!   conversions, `fma` a multiply and an add; library-dependent functions (`exp`,
//!   `sin`, …) are counted as not charged.
//! - **Tiled kernel** (`paper`, `tessera`): the plan's cached buffers with their
//!   declared shapes, completely partitioned into registers (`crates/hls/src/tiled/print.rs`
//!   declares `ARRAY_PARTITION complete` for every one); as many lanes as the innermost
//!   intra-tile loop's trip count (the kernel unrolls it inside the pipelined loop);
//!   an inter- and an intra-tile counter per loop; an address generator per buffer and
//!   per uncached access; one m_axi port per array, `w` elements wide.
//! - **Baseline kernel**: one lane, no buffers, one counter per loop, an address
//!   generator per array access, element-wide ports.
//!
//! Scalars written back (reductions, mapped scalars the region writes) add a
//! one-element port; every region variable is an argument of the control adapter.

use std::collections::BTreeSet;
use tessera_ir::{BinOp, Expr, LValue, MathFn, Region, ScalarType, Stmt, UnOp, VarKind};
use tessera_model::resources::{AxiPort, BufferShape, FpOp, LaneOps, Precision, Storage};
use tessera_model::KernelShape;
use tessera_poly::{BufferKind, Plan};

fn bits(t: ScalarType) -> u64 {
    t.size() as u64 * 8
}

fn precision(t: ScalarType) -> Precision {
    if t == ScalarType::F64 {
        Precision::Double
    } else {
        Precision::Single
    }
}

/// Adds the operators of `e` to `ops` (subscripts excluded).
fn count(e: &Expr, ops: &mut LaneOps) {
    match e {
        Expr::Int { .. } | Expr::Float { .. } | Expr::Var { .. } | Expr::Read { .. } | Expr::Unsupported { .. } => {}
        Expr::Unary { op, arg, ty } => {
            if ty.is_integer() && matches!(op, UnOp::Neg | UnOp::Not | UnOp::BitNot) {
                ops.int_bits += bits(*ty);
            }
            count(arg, ops);
        }
        Expr::Binary { op, lhs, rhs, ty } => {
            let operand = lhs.ty().unwrap_or(*ty);
            if operand.is_float() {
                let p = precision(operand);
                match op {
                    BinOp::Add | BinOp::Sub => ops.add_fp(FpOp::AddSub, p, 1),
                    BinOp::Mul => ops.add_fp(FpOp::Mul, p, 1),
                    BinOp::Div => ops.add_fp(FpOp::Div, p, 1),
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => ops.add_fp(FpOp::Compare, p, 1),
                    BinOp::LAnd | BinOp::LOr => ops.int_bits += 1,
                    _ => ops.unmodelled += 1,
                }
            } else {
                let b = bits(operand);
                let units = |small: u64, large: u64| if b > 32 { large } else { small };
                match op {
                    BinOp::Mul => ops.int_muls += units(1, 3),
                    BinOp::Div | BinOp::Rem => ops.int_divs += units(1, 4),
                    BinOp::LAnd | BinOp::LOr => ops.int_bits += 1,
                    _ => ops.int_bits += b,
                }
            }
            count(lhs, ops);
            count(rhs, ops);
        }
        Expr::Cast { arg, ty } => {
            if let Some(from) = arg.ty() {
                if (from.is_float() || ty.is_float()) && from != *ty {
                    let wider = if from == ScalarType::F64 || *ty == ScalarType::F64 { Precision::Double } else { Precision::Single };
                    ops.add_fp(FpOp::Convert, wider, 1);
                }
            }
            count(arg, ops);
        }
        Expr::Select { cond, then, otherwise, ty } => {
            ops.select_bits += bits(*ty);
            count(cond, ops);
            count(then, ops);
            count(otherwise, ops);
        }
        Expr::Call { func, args, ty, .. } => {
            let p = precision(*ty);
            match func {
                MathFn::Sqrt => ops.add_fp(FpOp::Sqrt, p, 1),
                MathFn::Fabs | MathFn::Copysign => {}
                MathFn::Fmin | MathFn::Fmax => {
                    ops.add_fp(FpOp::Compare, p, 1);
                    ops.select_bits += bits(*ty);
                }
                MathFn::Floor | MathFn::Ceil | MathFn::Trunc | MathFn::Round => ops.add_fp(FpOp::Convert, p, 1),
                MathFn::Fma => {
                    ops.add_fp(FpOp::Mul, p, 1);
                    ops.add_fp(FpOp::AddSub, p, 1);
                }
                _ => ops.unmodelled += 1,
            }
            args.iter().for_each(|a| count(a, ops));
        }
    }
}

/// The operators of one execution of the region's statements (one lane).
pub fn lane_ops(region: &Region) -> LaneOps {
    let mut ops = LaneOps::default();
    region.visit_stmts(&mut |s| match s {
        Stmt::Assign { value, .. } => count(value, &mut ops),
        Stmt::Let { init: Some(e), .. } => count(e, &mut ops),
        Stmt::If { cond, .. } => count(cond, &mut ops),
        _ => {}
    });
    ops
}

/// Arrays the region reads and writes, accesses counted.
struct Accesses {
    read: BTreeSet<String>,
    written: BTreeSet<String>,
    count: u64,
    loops: u64,
}

fn accesses(region: &Region) -> Accesses {
    let mut a = Accesses { read: BTreeSet::new(), written: BTreeSet::new(), count: 0, loops: 0 };
    let mut reads = Vec::new();
    region.visit_stmts(&mut |s| {
        if matches!(s, Stmt::For { .. }) {
            a.loops += 1;
        }
        if let Stmt::Assign { target: LValue::Element { array, .. }, .. } = s {
            a.written.insert(array.clone());
            a.count += 1;
        }
        // The statement's own expressions (nested statements are visited on their own).
        let mut read = |e: &Expr| {
            if let Expr::Read { array, .. } = e {
                reads.push(array.clone());
            }
        };
        match s {
            Stmt::Assign { .. } | Stmt::Let { .. } => s.visit_exprs(&mut read),
            Stmt::If { cond, .. } => cond.visit(&mut read),
            Stmt::For { lower, upper, .. } => {
                lower.visit(&mut read);
                upper.visit(&mut read);
            }
            Stmt::Unsupported { .. } => {}
        }
    });
    a.count += reads.len() as u64;
    a.read.extend(reads);
    a
}

/// The m_axi ports: one per array variable (`w` elements a beat), one element-wide
/// per scalar written back.
fn ports(region: &Region, acc: &Accesses, w: u64) -> Vec<AxiPort> {
    region
        .vars
        .iter()
        .filter_map(|v| match v.kind {
            VarKind::Pointer | VarKind::Array => Some(AxiPort {
                name: v.name.clone(),
                data_bits: w * bits(v.elem),
                reads: acc.read.contains(&v.name),
                writes: acc.written.contains(&v.name),
            }),
            VarKind::Scalar if v.writes_back() => Some(AxiPort { name: v.name.clone(), data_bits: bits(v.elem), reads: true, writes: true }),
            VarKind::Scalar => None,
        })
        .collect()
}

/// The baseline kernel of a region.
pub fn baseline(region: &Region) -> KernelShape {
    let acc = accesses(region);
    KernelShape {
        buffers: Vec::new(),
        lanes: 1,
        ops: lane_ops(region),
        loops: acc.loops,
        address_generators: acc.count,
        ports: ports(region, &acc, 1),
        args: region.vars.len() as u64,
    }
}

/// The tiled kernel (`paper` or `tessera`) the generator prints from `plan`.
pub fn tiled(region: &Region, plan: &Plan) -> KernelShape {
    let acc = accesses(region);
    let elem_bits = |array: &str| plan.scop.array(array).map_or(32, |a| bits(a.elem));
    let buffers: Vec<BufferShape> = plan
        .buffers
        .buffers
        .iter()
        .filter(|b| b.kind != BufferKind::Nc)
        .map(|b| BufferShape {
            name: b.name.clone(),
            shape: b.shape.iter().map(|&x| x.max(0) as u64).collect(),
            elem_bits: elem_bits(&b.array),
            storage: Storage::Registers,
        })
        .collect();
    let t = &plan.tiling;
    let lanes = t.permutation.last().map_or(1, |&x| t.loops[x].trip.count().max(1) as u64);
    KernelShape {
        lanes,
        ops: lane_ops(region),
        loops: 2 * t.loops.len() as u64,
        address_generators: buffers.len() as u64 + plan.buffers.uncached_accesses as u64,
        ports: ports(region, &acc, u64::from(plan.buffers.port_width.max(1))),
        args: region.vars.len() as u64,
        buffers,
    }
}

/// The dataflow kernel (`tessera_hls::dataflow`) of `an`: its line buffers, rings,
/// window registers and streams ([`tessera_hls::dataflow::Analysis::on_chip`]), one
/// memory per partition; `W` lanes (one output word per cycle); a load process per
/// input and a store process per output (two loops and an address generator each) and
/// the compute process's loop nest.
pub fn dataflow(region: &Region, an: &tessera_hls::dataflow::Analysis) -> KernelShape {
    let acc = accesses(region);
    let mut buffers = Vec::new();
    for m in an.on_chip() {
        for k in 0..m.memories {
            buffers.push(BufferShape {
                name: if m.memories == 1 { m.name.clone() } else { format!("{}#{k}", m.name) },
                shape: vec![m.words.max(0) as u64],
                elem_bits: m.word_bits as u64,
                storage: if m.in_bram { Storage::Bram } else { Storage::Registers },
            });
        }
    }
    let processes = (an.inputs.len() + an.outputs.len()) as u64;
    // An in-place array: its own port only reads, its write port only writes.
    let write_ports = an.write_ports(region);
    let mut ports = ports(region, &acc, an.w as u64);
    for &i in &write_ports {
        let name = &region.vars[i].name;
        let own = ports.iter_mut().find(|p| p.name == *name).expect("an array port");
        own.writes = false;
        let mut w = own.clone();
        (w.name, w.reads, w.writes) = (tessera_ir::manifest::write_port_name(name), false, true);
        ports.push(w);
    }
    KernelShape {
        buffers,
        lanes: an.lanes as u64,
        ops: lane_ops(region),
        loops: 2 * processes + an.loops.len() as u64,
        address_generators: processes,
        ports,
        args: (region.vars.len() + write_ports.len()) as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fixture;
    use tessera_model::resources::Resources;
    use tessera_model::{estimate_resources, usage, ResourceParams};
    use tessera_poly::{optimize, PolyOptions};


    /// 2D-jacobi: `B[i][j] = 0.2 * (A[i][j] + A[i][j-1] + A[i][j+1] + A[i+1][j] + A[i-1][j])`
    /// on floats: 4 float additions, the sum converted to double, one double multiply,
    /// the product converted back.
    #[test]
    fn operators_of_2d_jacobi() {
        let ops = lane_ops(&fixture("bench/2D-jacobi.ir.json"));
        assert_eq!(ops.fp, vec![(FpOp::AddSub, Precision::Single, 4), (FpOp::Mul, Precision::Double, 1), (FpOp::Convert, Precision::Double, 2)]);
        assert_eq!((ops.int_bits, ops.int_muls, ops.select_bits, ops.unmodelled), (0, 0, 0, 0));
    }

    /// The dataflow kernel of the small 2D 5-point star (53 columns read, w = 16): the
    /// line buffer A_lb[4][4] of 512-bit words partitioned by slot (4) and cyclically
    /// by the window's 2 words: 8 memories of 2 words; 6 window words in registers; the
    /// streams A_in and X_out one burst (64 words) deep; 16 lanes; ports of 512 bits.
    #[test]
    fn dataflow_2d_5p_at_w16() {
        let r = fixture("small/2D-5p.ir.json");
        let an = tessera_hls::dataflow::analyze(&r, 16).unwrap();
        let k = dataflow(&r, &an);
        let count = |prefix: &str, storage: Storage| k.buffers.iter().filter(|b| b.name.starts_with(prefix) && b.storage == storage).count();
        assert_eq!((count("A_lb#", Storage::Bram), count("A_w#", Storage::Registers)), (8, 6));
        assert!(k.buffers.iter().filter(|b| b.name.starts_with("A_lb#")).all(|b| b.shape == [2] && b.elem_bits == 512));
        let streams: Vec<(&str, &[u64])> = k.buffers.iter().filter(|b| b.name.ends_with("_in") || b.name.ends_with("_out")).map(|b| (b.name.as_str(), b.shape.as_slice())).collect();
        assert_eq!(streams, vec![("A_in", &[64u64][..]), ("X_out", &[64u64][..])]);
        assert_eq!((k.lanes, k.address_generators, k.loops), (16, 2, 6));
        assert!(k.ports.iter().all(|p| p.data_bits == 512));
        let e = estimate_resources(&k, &ResourceParams::XCVU9P);
        // Each 512-bit memory is 8 BRAM36 wide (72 bits each at depth 512): 8 line-buffer
        // memories and 2 streams.
        assert_eq!(e.buffers.bram36, 80, "{:?}", e.buffers);
    }

    /// The strip decision counts block RAM as the resource model does: for whole rows
    /// (2D-5p), run-time columns stripped at the widest strip (jacobi2d_param), a 3D
    /// plane too large for a lowered budget (3D-27p at 256³, strips), the dataflow
    /// kernel's estimated BRAM36 are exactly `Analysis::bram36`, the count held to the
    /// budget; and the 3D-27p strips' estimate is within the lowered budget.
    #[test]
    fn dataflow_strip_budget_is_the_estimate() {
        use tessera_hls::dataflow::{analyze_with, Limits};
        let cases = [
            ("small/2D-5p.ir.json", Limits::default(), false),
            ("jacobi2d_param.ir.json", Limits::default(), true),
            ("bench/3D-27p.ir.json", Limits { bram36: 300, ..Limits::default() }, true),
        ];
        for (file, limits, strips) in cases {
            let r = fixture(file);
            let an = analyze_with(&r, 16, &limits).unwrap();
            assert_eq!(an.strips.is_some(), strips, "{file}");
            let e = estimate_resources(&dataflow(&r, &an), &ResourceParams::XCVU9P);
            assert_eq!(e.buffers.bram36 as i64, an.bram36(), "{file}: {:?}", e.buffers);
            assert!(an.bram36() <= limits.bram36, "{file}");
        }
    }

    /// fdtd0 updates `ey` in place: the dataflow kernel reads it through `ey` and writes
    /// it through the write port `tdf_w_ey`, two one-direction ports (one more kernel
    /// argument); `hz` is read only.
    #[test]
    fn dataflow_in_place_array_has_two_one_direction_ports() {
        let r = fixture("small/2D-fdtd0.ir.json");
        let an = tessera_hls::dataflow::analyze(&r, 16).unwrap();
        let k = dataflow(&r, &an);
        let mut ports: Vec<(&str, bool, bool)> = k.ports.iter().map(|p| (p.name.as_str(), p.reads, p.writes)).collect();
        ports.sort();
        assert_eq!(ports, [("ey", true, false), ("hz", true, false), ("tdf_w_ey", false, true)]);
        assert_eq!(k.args, r.vars.len() as u64 + 1);
    }

    /// The tiled 2D-jacobi kernel at tiles 64², w = 16 (the bench's default): buffers
    /// A_c[3][80] (box 3 × 66, aligned) and B_l[1][80] (box 64, one halo lane left),
    /// 64 lanes, 2 ports of 512 bits.
    #[test]
    fn tiled_2d_jacobi_at_w16() {
        let r = fixture("bench/2D-jacobi.ir.json");
        let plan = optimize(&r, &PolyOptions { tile: Some(vec![64, 64]), port_width: 16, reassociate: false }).unwrap();
        let k = tiled(&r, &plan);
        let shapes: Vec<(&str, &[u64])> = k.buffers.iter().map(|b| (b.name.as_str(), b.shape.as_slice())).collect();
        assert_eq!(shapes, vec![("A_c", &[3u64, 80][..]), ("B_l", &[1u64, 80][..])]);
        assert_eq!((k.lanes, k.loops, k.address_generators, k.args), (64, 4, 2, 2));
        assert_eq!(k.ports.iter().map(|p| (p.data_bits, p.reads, p.writes)).collect::<Vec<_>>(), vec![(512, true, false), (512, false, true)]);
        let p = ResourceParams::XCVU9P;
        let e = estimate_resources(&k, &p);
        // Buffers: 320 floats = 10 240 register bits, as many LUTs.
        assert_eq!(e.buffers, Resources { bram36: 0, uram: 0, dsp: 0, lut: 10_240, ff: 10_240 });
        // Per lane 4 · 2 + 11 = 19 DSPs, 4 · 220 + 200 + 2 · 150 = 1380 LUTs,
        // 4 · 300 + 450 + 2 · 200 = 2050 FFs; 64 lanes.
        assert_eq!(e.datapath, Resources { bram36: 0, uram: 0, dsp: 1216, lut: 88_320, ff: 131_200 });
        // Two one-direction 512-bit ports: 8 BRAM36 each.
        assert_eq!(e.axi.bram36, 16);
        assert_eq!(e.total.dsp, 1216);
        let u = usage(&e.total, &p);
        assert!(u.fits && u.binding == "DSP", "{u:?}");
        assert!((u.dsp - 1216.0 / 6840.0).abs() < 1e-12);
        // The stable dump (`tessera explain`): index = 4 counters (2 · 32 LUT, 32 FF) +
        // 2 address generators (2 · 64 LUT and FF); axi = 2 · (600 + 2 · 512) LUT,
        // 2 · (900 + 3 · 512) FF; control = 200 + 2 · 64 LUT, 250 + 2 · 64 FF.
        assert_eq!(
            e.dump(&p),
            "  resources (modelled, XCVU9P):\n\
             \x20   buffers   BRAM36 0  URAM 0  DSP 0  LUT 10240  FF 10240\n\
             \x20   datapath  BRAM36 0  URAM 0  DSP 1216  LUT 88320  FF 131200\n\
             \x20   index     BRAM36 0  URAM 0  DSP 0  LUT 512  FF 384\n\
             \x20   axi       BRAM36 16  URAM 0  DSP 0  LUT 3248  FF 4872\n\
             \x20   control   BRAM36 0  URAM 0  DSP 0  LUT 328  FF 378\n\
             \x20   total     BRAM36 16  URAM 0  DSP 1216  LUT 102648  FF 147074\n\
             \x20   budget    BRAM36 0.7%  URAM 0.0%  DSP 17.8%  LUT 8.7%  FF 6.2%  (DSP binding; fits)\n"
        );
    }

    /// 1D-jacobi at tile 512 (the bench's default): one unrolled row of 512 lanes, each
    /// 2 float additions (2 DSPs) and a double multiply (11): 7 680 DSPs, more than the
    /// XCVU9P's 6 840; at tile 256 it fits.
    #[test]
    fn tiled_1d_jacobi_lanes_exceed_the_dsps() {
        let r = fixture("bench/1D-jacobi.ir.json");
        let p = ResourceParams::XCVU9P;
        let at = |tile| {
            let plan = optimize(&r, &PolyOptions { tile: Some(vec![tile]), port_width: 16, reassociate: false }).unwrap();
            let k = tiled(&r, &plan);
            (k.lanes, usage(&estimate_resources(&k, &p).total, &p))
        };
        let (lanes, u) = at(512);
        assert_eq!(lanes, 512);
        assert!(!u.fits && u.binding == "DSP" && (u.dsp - 7680.0 / 6840.0).abs() < 1e-12, "{u:?}");
        let (lanes, u) = at(256);
        assert_eq!(lanes, 256);
        assert!(u.fits, "{u:?}");
    }

    /// The baseline of 2D-jacobi: one lane, 6 address generators, 2 loops, 32-bit ports.
    #[test]
    fn baseline_2d_jacobi() {
        let k = baseline(&fixture("bench/2D-jacobi.ir.json"));
        assert_eq!((k.lanes, k.loops, k.address_generators), (1, 2, 6));
        assert!(k.buffers.is_empty());
        assert!(k.ports.iter().all(|p| p.data_bits == 32));
        let e = estimate_resources(&k, &ResourceParams::XCVU9P);
        assert_eq!(e.datapath.dsp, 19);
        assert_eq!(e.axi.bram36, 2);
    }

    /// A math call: sqrtf((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0)).
    #[test]
    fn math_calls() {
        let ops = lane_ops(&fixture("programs/math_image.0.ir.json"));
        assert_eq!(ops.fp_count(FpOp::Sqrt, Precision::Single) + ops.fp_count(FpOp::Sqrt, Precision::Double), 1, "{ops:?}");
    }
}
