//! Stable text dumps of every stage (`tessera explain --dump=<stage>`), in the spirit
//! of Polly's `-analyze` output: one block per stage, one fact per line, the paper's
//! notation (`ti`, `i`, `δ^o`, `A[i + 1][j]`), isl objects in isl's own syntax. Tests
//! compare against these texts, so the format changes only on purpose.

use crate::affine::{Aff, SymNames};
use crate::buffers::{Buffer, BufferKind, BufferPlan};
use crate::deps::Dependences;
use crate::scop::Scop;
use crate::tiling::{IntraTrip, TilingPlan};
use crate::Plan;
use std::fmt::Write as _;

/// What to dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The SCoP: parameters, loops, domain, schedule, statements, accesses.
    Scop,
    /// Dependences with distances.
    Deps,
    /// The tiling (steps 1 and 3), every candidate permutation and the redirected
    /// subscripts (step 4).
    Plan,
    /// The buffers of the chosen permutation (step 2).
    Buffers,
    /// Everything above.
    All,
}

impl Stage {
    /// Parses `scop`, `deps`, `plan`, `buffers`, `all`.
    pub fn parse(s: &str) -> Option<Stage> {
        Some(match s {
            "scop" => Stage::Scop,
            "deps" => Stage::Deps,
            "plan" => Stage::Plan,
            "buffers" => Stage::Buffers,
            "all" => Stage::All,
            _ => return None,
        })
    }
}

/// The text dump of one stage of a plan.
pub fn dump(plan: &Plan, stage: Stage) -> String {
    match stage {
        Stage::Scop => {
            let mut s = scop(&plan.scop);
            // Decreasing loops: `<i>_neg` loops count over -i; these run upwards.
            if !plan.normalization.reversed.is_empty() {
                let _ = writeln!(s, "  decreasing loops run upwards (the nest has no dependence): {}", plan.normalization.reversed.join(", "));
            }
            s
        }
        Stage::Deps => deps(&plan.scop, &plan.deps),
        Stage::Plan => {
            let mut s = tiling(&plan.scop, &plan.tiling);
            s.push_str(&candidates(plan));
            s.push_str(&subscripts(plan));
            s
        }
        Stage::Buffers => buffers(&plan.scop, &plan.buffers),
        Stage::All => [Stage::Scop, Stage::Deps, Stage::Plan, Stage::Buffers].iter().map(|&s| dump(plan, s)).collect(),
    }
}

fn list(v: &[String]) -> String {
    format!("({})", v.join(", "))
}

fn affs(v: &[Aff], n: &SymNames) -> String {
    list(&v.iter().map(|a| a.display(n)).collect::<Vec<_>>())
}

fn subs(v: &[Aff], n: &SymNames) -> String {
    v.iter().map(|a| format!("[{}]", a.display(n))).collect()
}

/// The SCoP stage.
pub fn scop(s: &Scop) -> String {
    let n = &s.names;
    let mut o = String::new();
    let _ = writeln!(o, "scop {}", s.loc);
    let _ = writeln!(o, "  params: [{}]", s.params.join(", "));
    let _ = writeln!(o, "  loops:");
    for l in &s.loops {
        let _ = writeln!(o, "    {} in [{}, {}) step {}", l.var, l.lower.display(n), l.upper.display(n), l.step);
    }
    let _ = writeln!(o, "  domain: {}", s.domain);
    let _ = writeln!(o, "  schedule: {}", s.schedule);
    let _ = writeln!(o, "  statements:");
    for st in &s.statements {
        let _ = writeln!(o, "    {}: {}", st.name, st.text);
    }
    if !s.reductions.is_empty() {
        let _ = writeln!(o, "  reductions:");
    }
    for r in &s.reductions {
        let by: Vec<&str> = r.statements.iter().map(|&st| s.statements[st].name.as_str()).collect();
        let _ = writeln!(
            o,
            "    {} of {}: accumulated by {}; {}",
            r.clause(),
            r.ty.c_name(),
            if by.is_empty() { "none".to_string() } else { by.join(" ") },
            if r.exact_in_any_order { "exact in any order" } else { "exact only in the loop's order" }
        );
    }
    let _ = writeln!(o, "  accesses:");
    for a in &s.accesses {
        let kind = match a.kind {
            crate::AccessKind::Read => "read ",
            crate::AccessKind::Write => "write",
        };
        let _ = writeln!(o, "    {:<4} {} {kind} {}  {}", a.name, s.statements[a.statement].name, a.text, a.relation);
    }
    o
}

/// The dependence stage.
pub fn deps(s: &Scop, d: &Dependences) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "dependences");
    let _ = writeln!(o, "  flow:   {}", d.flow);
    let _ = writeln!(o, "  anti:   {}", d.anti);
    let _ = writeln!(o, "  output: {}", d.output);
    for r in &d.orders {
        let _ = writeln!(o, "  kept in the loop's order: {}: {}", r.clause, r.relation);
    }
    if d.pairs.is_empty() {
        let _ = writeln!(o, "  pairs: none");
    } else {
        let _ = writeln!(o, "  pairs:");
        for p in &d.pairs {
            let _ = writeln!(o, "    {}", p.describe(s));
        }
    }
    o
}

/// The tiling stage (steps 1 and 3).
pub fn tiling(s: &Scop, t: &TilingPlan) -> String {
    let n = &s.names;
    let mut o = String::new();
    let _ = writeln!(o, "tiling T(SZ, p, δ)");
    let _ = writeln!(o, "  SZ = {}", list(&t.tile_sizes.iter().map(|x| x.to_string()).collect::<Vec<_>>()));
    let _ = writeln!(o, "  p = {}", list(&t.permutation_names));
    let delta: Vec<String> =
        t.loops.iter().flat_map(|l| [l.delta_outer.display(n), l.delta_inner.display(n)]).collect();
    let _ = writeln!(o, "  δ = (δ^o, δ^i per loop) = {}", list(&delta));
    let _ = writeln!(o, "  inter-tile loops:");
    for l in &t.loops {
        let _ = writeln!(o, "    for {} = {}; {} < {}; {} += {}", l.tile_var, l.lower.display(n), l.tile_var, l.upper.display(n), l.tile_var, l.size);
    }
    let _ = writeln!(o, "  intra-tile loops (outer to inner):");
    for &x in &t.permutation {
        let l = &t.loops[x];
        let trip = match &l.trip {
            IntraTrip::Padded { count } => format!("padded: {count} iterations"),
            IntraTrip::Full { count } => format!("{count} iterations (every tile full)"),
            IntraTrip::Partial { count, remaining } if l.step == 1 => {
                format!("min({count}, {}) iterations", remaining.display(n))
            }
            IntraTrip::Partial { count, remaining } => {
                format!("min({count}, ⌈({})/{}⌉) iterations", remaining.display(n), l.step)
            }
        };
        let bound = match &l.trip {
            IntraTrip::Partial { remaining, .. } => format!("min({}, {})", l.size, remaining.display(n)),
            _ => l.size.to_string(),
        };
        let _ = writeln!(o, "    for {} = 0; {} < {}; {} += {}    // {trip}", l.var, l.var, bound, l.var, l.step);
    }
    if let Some(u) = t.loops[t.padded_loop].padded_upper.as_ref() {
        let _ = writeln!(o, "  padded upper bound of {}: {}", t.loops[t.padded_loop].var, u.display(n));
    }
    let _ = writeln!(o, "  schedule: {}", t.schedule);
    let _ = writeln!(o, "  padded domain: {}", t.padded_domain);
    let _ = writeln!(o, "  padded iterations: {}", if t.padding { t.padded_iterations.as_str() } else { "none" });
    let names = |v: &[usize]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.iter().map(|&a| format!("{} {}", s.accesses[a].name, s.accesses[a].text)).collect::<Vec<_>>().join(", ")
        }
    };
    let _ = writeln!(o, "  guarded: {}", names(&t.guarded));
    let _ = writeln!(o, "  trimmed at write-back: {}", names(&t.trimmed));
    if !s.reductions.is_empty() {
        let g: Vec<&str> = t.guarded_accumulations.iter().map(|&st| s.statements[st].name.as_str()).collect();
        let _ = writeln!(o, "  guarded accumulations: {}", if g.is_empty() { "none".to_string() } else { g.join(" ") });
    }
    o
}

fn buffer_line(s: &Scop, b: &Buffer) -> String {
    let n = &s.names;
    let accs: Vec<&str> = b.accesses.iter().map(|&a| s.accesses[a].name.as_str()).collect();
    if b.kind == BufferKind::Nc {
        return format!(
            "{:<8} nc     {}  accesses {}  ({})",
            b.name,
            b.array,
            accs.join(" "),
            b.reason.as_deref().unwrap_or("")
        );
    }
    let shape = list(&b.shape.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    let bx = list(&b.box_size.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    let mut line = format!(
        "{:<8} {:<6} {}  accesses {}  shape {} = {} elements  box {} at {}  halo {}/{}",
        b.name,
        b.kind.name(),
        b.array,
        accs.join(" "),
        shape,
        b.elements,
        bx,
        affs(&b.offset, n),
        b.halo_left,
        b.halo_right
    );
    match b.misalignment {
        Some((lo, hi)) if lo == hi => {
            let _ = write!(line, " (misalignment {lo})");
        }
        Some((lo, hi)) => {
            let _ = write!(line, " (misalignment {lo}..{hi})");
        }
        None => line.push_str(" (misalignment unknown: worst case)"),
    }
    if let Some(sh) = &b.shift {
        let _ = write!(line, "  shift dim {} by {} per {}", sh.axis, sh.step, s.loops[sh.loop_index].var);
    }
    line
}

/// The buffer stage (step 2).
pub fn buffers(s: &Scop, b: &BufferPlan) -> String {
    let mut o = String::new();
    let perm: Vec<String> = b.permutation.iter().map(|&x| s.loops[x].var.clone()).collect();
    let _ = writeln!(
        o,
        "buffers for p = {} (port width {}): {} elements, {} uncached access(es)",
        list(&perm),
        b.port_width,
        b.total_elements,
        b.uncached_accesses
    );
    for buf in &b.buffers {
        let _ = writeln!(o, "  {}", buffer_line(s, buf));
        if let Some(ws) = &buf.working_set {
            let _ = writeln!(o, "           working set: {ws}");
        }
    }
    o
}

/// Every candidate permutation with its cost or the dependence it violates.
pub fn candidates(p: &Plan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "candidates");
    for c in &p.candidates {
        let perm = list(&c.permutation);
        if !c.legal {
            let _ = writeln!(o, "  {perm}  illegal: {}", c.violated.as_deref().unwrap_or(""));
            continue;
        }
        let kinds: Vec<String> = c
            .buffers
            .iter()
            .map(|b| {
                if b.kind == BufferKind::Nc {
                    format!("{} nc", b.array)
                } else {
                    format!("{} {} {}", b.array, b.kind.name(), list(&b.shape.iter().map(|x| x.to_string()).collect::<Vec<_>>()))
                }
            })
            .collect();
        let _ = writeln!(
            o,
            "  {perm}  {}{}  [{}]{}",
            c.total_buffer_elements.unwrap_or(0),
            match c.uncached_accesses {
                Some(n) if n > 0 => format!(" + {n} nc"),
                _ => String::new(),
            },
            kinds.join(", "),
            if c.chosen { "  <- chosen" } else { "" }
        );
    }
    o
}

/// The redirected subscripts (step 4).
pub fn subscripts(p: &Plan) -> String {
    let n = &p.scop.names;
    let mut o = String::new();
    let _ = writeln!(o, "subscripts (step 4)");
    for r in &p.redirects {
        let a = &p.scop.accesses[r.access];
        let _ = writeln!(
            o,
            "  {:<4} {} = {}{}  ->  {}{}{}",
            r.name,
            a.text,
            r.array,
            subs(&r.original, n),
            r.target,
            subs(&r.subscripts, n),
            if r.guarded { "  (guarded)" } else { "" }
        );
    }
    o
}
