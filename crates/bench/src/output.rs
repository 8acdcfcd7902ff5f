//! The bench's outputs: the table (stdout), the JSON record and the SVG figure (like
//! the paper's Fig. 7/8: modelled speedup over the baseline per stencil, and the
//! fraction of the DDR roofline each design reaches). Pure: strings in, strings out.

use crate::{Bench, Status, StencilResult};
use serde_json::{json, Value};
use std::fmt::Write as _;
use tessera_model::{Params, ResourceParams};

/// Bytes with a decimal unit.
pub fn fmt_bytes(b: u64) -> String {
    let b = b as f64;
    if b < 1e3 {
        format!("{b:.0} B")
    } else if b < 1e6 {
        format!("{:.1} kB", b / 1e3)
    } else if b < 1e9 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.2} GB", b / 1e9)
    }
}

/// Seconds with a unit.
pub fn fmt_s(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else if s >= 1e-6 {
        format!("{:.1} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The configuration line shared by the table and the figure.
fn config_line(b: &Bench) -> String {
    let c = &b.config;
    let t: Vec<String> = [1, 2, 3].iter().map(|&d| c.tiles.sizes(d).iter().map(i64::to_string).collect::<Vec<_>>().join("x")).collect();
    format!(
        "size {}, tiles {} ({}), port width {}, mode {}",
        c.size.name(),
        c.tiles.name(),
        t.join(" / "),
        c.port_width,
        c.mode
    )
}

/// The table printed after a run.
pub fn table(b: &Bench) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "tessera bench: {}", config_line(b));
    let _ = writeln!(o, "clock: {}", b.clock_rule);
    let target = Params::VCU118.target_clock_mhz;
    let _ = writeln!(
        o,
        "target clock: {target} MHz, the kernel clock a Vitis build for a VU9P board targets (column %roof@{target}: modelled, not timing-closed)"
    );
    let _ = writeln!(o, "exact = counted in emulation; modelled = VCU118 model (docs/performance.md); measured = this machine");
    let _ = writeln!(o, "resources = modelled estimate of the kernel that ran, XCVU9P; %dev = largest share of the device, its resource, ! = does not fit");
    let _ = writeln!(
        o,
        "{:<10} {:<9} | {:>9} {:>9} {:>6} {:>10} {:>7} | {:>9} {:>9} {:>8} {:>9} {:>6} {:>9} {:>9} {:>9} | {:>6} {:>8} {:>8} {:>6} {:>10} | {:>8} {:>9} {:>9} {:>8}",
        "", "", "exact", "", "", "", "", "modelled", "", "", "", "", "", "", "", "resources", "", "", "", "", "measured", "", "", ""
    );
    let _ = writeln!(
        o,
        "{:<10} {:<9} | {:>9} {:>9} {:>6} {:>10} {:>7} | {:>9} {:>9} {:>8} {:>9} {:>6} {:>9} {:>9} {:>9} | {:>6} {:>8} {:>8} {:>6} {:>10} | {:>8} {:>9} {:>9} {:>8}",
        "stencil",
        "result",
        "DDR R+W",
        "compuls.",
        "ratio",
        "bursts",
        "buffer",
        "baseline",
        "kernel",
        "speedup",
        "roofline",
        "%roof",
        format!("%roof@{target}"),
        "host",
        "e2e",
        "DSP",
        "LUT",
        "FF",
        "BRAM36",
        "%dev",
        "compile",
        "emulation",
        "host loop",
        "emu/host"
    );
    for s in &b.stencils {
        let result = match s.status {
            Status::Ok => "bit-exact",
            Status::ModeUnavailable => "no mode",
            Status::Mismatch => "MISMATCH",
            Status::Failed => "FAILED",
        };
        let e = s.exact.as_ref();
        let m = s.modelled.as_ref();
        let base_s = m.map(|m| m.baseline_s).or(s.baseline.as_ref().map(|x| x.modelled_s));
        let res = s.resources.as_ref();
        let _ = writeln!(
            o,
            "{:<10} {:<9} | {:>9} {:>9} {:>6} {:>10} {:>7} | {:>9} {:>9} {:>8} {:>9} {:>6} {:>9} {:>9} {:>9} | {:>6} {:>8} {:>8} {:>6} {:>10} | {:>8} {:>9} {:>9} {:>8}",
            s.name,
            result,
            opt(e, |e| fmt_bytes(e.ddr_read_bytes + e.ddr_write_bytes)),
            opt(e.and_then(|e| e.compulsory_bytes), fmt_bytes),
            opt(e.and_then(|e| e.traffic_ratio), |r| format!("{r:.2}")),
            opt(e, |e| e.bursts.to_string()),
            opt(e, |e| e.buffer_elements.to_string()),
            opt(base_s, fmt_s),
            opt(m, |m| fmt_s(m.kernel_s)),
            opt(m, |m| format!("{:.1}x", m.speedup)),
            opt(m, |m| fmt_s(m.roofline_s)),
            opt(m, |m| format!("{:.1}", 100.0 * m.roofline_fraction)),
            opt(m, |m| format!("{:.1}", 100.0 * m.target_roofline_fraction)),
            opt(m, |m| fmt_s(m.host_transfer_s)),
            opt(m, |m| fmt_s(m.end_to_end_s)),
            opt(res, |r| r.total.dsp.to_string()),
            opt(res, |r| r.total.lut.to_string()),
            opt(res, |r| r.total.ff.to_string()),
            opt(res, |r| r.total.bram36.to_string()),
            opt(res, |r| format!("{:.0}% {}{}", 100.0 * r.usage.max(), r.usage.binding, if r.usage.fits { "" } else { "!" })),
            opt(s.measured.compile_s.or(s.baseline.as_ref().map(|x| x.compile_s)), fmt_s),
            opt(s.measured.emulation_s.or(s.baseline.as_ref().and_then(|x| x.emulation_s)), fmt_s),
            opt(s.measured.host_loop_s, fmt_s),
            opt(s.measured.emulation_s.zip(s.measured.host_loop_s).filter(|(_, h)| *h > 0.0), |(e, h)| format!("{:.1}x", e / h)),
        );
    }
    // Notes, one per distinct message, naming the stencils it concerns.
    let mut notes: Vec<(Vec<&str>, &str)> = Vec::new();
    for s in &b.stencils {
        if let Some(e) = &s.error {
            match notes.iter_mut().find(|(_, m)| *m == e.as_str()) {
                Some((names, _)) => names.push(&s.name),
                None => notes.push((vec![&s.name], e)),
            }
        }
    }
    for (names, e) in notes {
        let who = if names.len() == b.stencils.len() && names.len() > 1 { "every stencil".to_string() } else { names.join(", ") };
        let mut lines = e.lines();
        let _ = writeln!(o, "note: {who}: {}", lines.next().unwrap_or(""));
        for l in lines {
            let _ = writeln!(o, "      {l}");
        }
    }
    for s in &b.stencils {
        if let Some(r) = s.resources.as_ref().filter(|r| !r.usage.fits) {
            let _ = writeln!(
                o,
                "note: {}: the {} kernel's modelled resources exceed the XCVU9P ({} {:.0}%, {} lanes); its modelled time assumes it fits",
                s.name,
                r.kernel,
                r.usage.binding,
                100.0 * r.usage.max(),
                r.lanes
            );
        }
    }
    o.push_str(&goals(b));
    let _ = writeln!(o, "total: {} (measured)", fmt_s(b.total_s));
    o
}

/// The roofline goals of the kernels, one line each: how many stencils meet it, the
/// extreme value and the stencils that miss it.
fn goals(b: &Bench) -> String {
    let target = Params::VCU118.target_clock_mhz;
    let ok: Vec<&StencilResult> = b.stencils.iter().filter(|s| s.status == Status::Ok && s.modelled.is_some()).collect();
    if ok.is_empty() {
        return String::new();
    }
    let mut o = String::new();
    let _ = writeln!(o, "goals (modelled at the {target} MHz target clock, not timing-closed, unless exact or measured):");
    // (label, applies to, value, meets, worst is the largest, format; a miss's note)
    let mut line = |label: &str,
                    of: &[&StencilResult],
                    value: &dyn Fn(&StencilResult) -> Option<f64>,
                    meets: &dyn Fn(f64) -> bool,
                    worst_is_max: bool,
                    fmt: &dyn Fn(f64) -> String,
                    note: &dyn Fn(&StencilResult) -> String| {
        let vals: Vec<(&StencilResult, f64)> = of.iter().filter_map(|s| value(s).map(|v| (*s, v))).collect();
        if vals.is_empty() {
            return;
        }
        let met = vals.iter().filter(|(_, v)| meets(*v)).count();
        let worst = vals.iter().map(|(_, v)| *v).fold(if worst_is_max { f64::MIN } else { f64::MAX }, if worst_is_max { f64::max } else { f64::min });
        let misses: Vec<String> = vals.iter().filter(|(_, v)| !meets(*v)).map(|(s, v)| format!("{} {}{}", s.name, fmt(*v), note(s))).collect();
        let _ = writeln!(
            o,
            "  {label:<48} {met:>2}/{:<2} {} {}{}",
            vals.len(),
            if worst_is_max { "max" } else { "min" },
            fmt(worst),
            if misses.is_empty() { String::new() } else { format!("; missed by {}", misses.join(", ")) }
        );
    };
    let x = |v: f64| format!("{v:.2}x");
    let pct = |v: f64| format!("{:.1}%", 100.0 * v);
    let none = |_: &StencilResult| String::new();
    line("DDR traffic <= 1.02 x compulsory (exact)", &ok, &|s| s.exact.as_ref().and_then(|e| e.traffic_ratio), &|v| v <= 1.02, true, &x, &none);
    line("cycles <= 1.15 x the port-bound floor", &ok, &|s| s.modelled.as_ref().map(|m| m.target_cycles_over_floor).filter(|v| *v > 0.0), &|v| v <= 1.15, true, &x, &none);
    line(&format!(">= 85 % of the one-bank roofline at {target} MHz"), &ok, &|s| s.modelled.as_ref().map(|m| m.target_roofline_fraction), &|v| v >= 0.85, false, &pct, &none);
    let two_d: Vec<&StencilResult> = ok.iter().copied().filter(|s| s.name.starts_with("2D-")).collect();
    // A miss says how far whole arrays on two banks could go at all.
    let bound = |s: &StencilResult| {
        s.modelled.as_ref().filter(|m| m.two_banks_whole_array_bound < 1.6).map_or(String::new(), |m| {
            format!(" (no placement of whole arrays exceeds {:.2}x)", m.two_banks_whole_array_bound)
        })
    };
    line("two banks >= 1.6 x the one-bank roofline (2D)", &two_d, &|s| s.modelled.as_ref().map(|m| m.two_banks_over_one_bank_roofline), &|v| v >= 1.6, false, &x, &bound);
    line(
        "within the XCVU9P, DSPs <= 50 % (modelled)",
        &ok,
        &|s| s.resources.as_ref().map(|r| if r.usage.fits { r.usage.dsp } else { f64::INFINITY }),
        &|v| v <= 0.5,
        true,
        &|v| if v.is_finite() { format!("DSP {:.0}%", 100.0 * v) } else { "does not fit".into() },
        &none,
    );
    line(
        "emulation <= 5 x the host loop (measured)",
        &ok,
        &|s| s.measured.emulation_s.zip(s.measured.host_loop_s).filter(|(_, h)| *h > 0.0).map(|(e, h)| e / h),
        &|v| v <= 5.0,
        true,
        &|v| format!("{v:.1}x"),
        &none,
    );
    o
}

/// The JSON record of a run: the configuration, the clock, every model parameter with
/// its source, and one object per stencil (field names are an interface).
pub fn to_json(b: &Bench) -> Value {
    let p = Params::VCU118;
    json!({
        "tool": "tessera bench",
        "kinds": {
            "exact": "counted in emulation through the kernels' memory ports",
            "modelled": "FPGA time from the VCU118 model fed by the exact counts, and FPGA resources estimated from the kernel's structure (docs/performance.md)",
            "measured": "wall time on the machine that ran the bench",
        },
        "size": b.config.size.name(),
        "config": { "tiles": b.config.tiles.name(), "port_width": b.config.port_width, "mode": b.config.mode },
        "clock": { "mhz": b.clock_mhz, "rule": b.clock_rule },
        "model_parameters": p.table(),
        "target_clock": {
            "mhz": p.target_clock_mhz,
            "note": "modelled what-if at the kernel clock a Vitis build for a VU9P board targets; not timing-closed (modelled.target_*)",
        },
        "resource_parameters": ResourceParams::XCVU9P.table(),
        "stencils": b.stencils,
        "total_s": b.total_s,
    })
}

/// A logarithmic y axis over whole decades.
struct LogAxis {
    lo: i32,
    hi: i32,
    top: f64,
    bottom: f64,
}

impl LogAxis {
    fn new(values: &[f64], at_least: (f64, f64), top: f64, bottom: f64) -> LogAxis {
        let vals: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0 && v.is_finite()).collect();
        let min = vals.iter().copied().fold(at_least.0, f64::min);
        let max = vals.iter().copied().fold(at_least.1, f64::max);
        let lo = min.log10().floor() as i32;
        let hi = (max.log10().ceil() as i32).max(lo + 1);
        LogAxis { lo, hi, top, bottom }
    }

    fn y(&self, v: f64) -> f64 {
        let t = (v.max(10f64.powi(self.lo)).log10() - self.lo as f64) / (self.hi - self.lo) as f64;
        self.bottom - t * (self.bottom - self.top)
    }
}

pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn decade_label(e: i32, percent: bool) -> String {
    let v = 10f64.powi(e);
    let s = if e >= 0 { format!("{v:.0}") } else { format!("{v}") };
    if percent {
        format!("{s}%")
    } else {
        format!("{s}x")
    }
}

/// Gridlines, decade labels and the rotated axis title of one panel.
fn axis(o: &mut String, a: &LogAxis, left: f64, right: f64, title: &str, percent: bool) {
    for e in a.lo..=a.hi {
        let y = a.y(10f64.powi(e));
        let _ = writeln!(o, r##"<line x1="{left}" y1="{y:.1}" x2="{right}" y2="{y:.1}" stroke="#ddd"/>"##);
        let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##, left - 6.0, y + 4.0, decade_label(e, percent));
    }
    let _ = writeln!(o, r##"<line x1="{left}" y1="{:.1}" x2="{left}" y2="{:.1}" stroke="#333"/>"##, a.top, a.bottom);
    let _ = writeln!(o, r##"<line x1="{left}" y1="{:.1}" x2="{right}" y2="{:.1}" stroke="#333"/>"##, a.bottom, a.bottom);
    let cy = (a.top + a.bottom) / 2.0;
    let _ = writeln!(
        o,
        r##"<text x="18" y="{cy:.1}" transform="rotate(-90 18 {cy:.1})" text-anchor="middle" font-size="12">{}</text>"##,
        esc(title)
    );
}

/// The figure: modelled speedup per stencil (top) and modelled fraction of the DDR
/// roofline of the baseline and the configured design, and of the configured design at
/// the target clock (not timing-closed) (bottom), both log scale.
pub fn svg(b: &Bench) -> String {
    svg_compared(b, None)
}

/// One design of the figure: its mode and per stencil its modelled speedup, roofline
/// fraction at the bench's clock and at the target clock.
struct Design {
    mode: String,
    colour: &'static str,
    light: &'static str,
    speedup: Vec<Option<f64>>,
    fraction: Vec<Option<f64>>,
    target: Vec<Option<f64>>,
}

impl Design {
    fn of(b: &Bench, names: &[&str], colour: &'static str, light: &'static str) -> Design {
        let find = |n: &str| b.stencils.iter().find(|s| s.name == n).and_then(|s| s.modelled.as_ref());
        Design {
            mode: b.config.mode.name().to_string(),
            colour,
            light,
            speedup: names.iter().map(|n| find(n).map(|m| m.speedup)).collect(),
            fraction: names.iter().map(|n| find(n).map(|m| m.roofline_fraction)).collect(),
            target: names.iter().map(|n| find(n).map(|m| m.target_roofline_fraction)).collect(),
        }
    }
}

/// [`svg`] with a second run (`tessera bench --compare <mode>`: the same stencils in
/// another mode) side by side with the first: its speedups beside the first's, its
/// roofline fractions at both clocks beside the first's.
pub fn svg_compared(b: &Bench, other: Option<&Bench>) -> String {
    let (w, h) = (980.0, 706.0);
    let (left, right) = (80.0, w - 20.0);
    let n = b.stencils.len().max(1) as f64;
    let group = (right - left) / n;
    let grey = "#9a9a9a";
    let names: Vec<&str> = b.stencils.iter().map(|s| s.name.as_str()).collect();
    let mut designs = vec![Design::of(b, &names, "#3b6fb6", "#9cb9e0")];
    if let Some(o) = other {
        designs.push(Design::of(o, &names, "#d07a2a", "#f0c08f"));
    }
    let baseline_only = b.config.mode == crate::Mode::Baseline && other.is_none();
    let mut o = String::new();
    let _ = writeln!(o, r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"##);
    let _ = writeln!(o, r##"<rect width="{w}" height="{h}" fill="white"/>"##);
    let mid = w / 2.0;
    let _ = writeln!(
        o,
        r##"<text x="{mid:.1}" y="24" text-anchor="middle" font-size="15" font-weight="bold">Tessera on the VCU118, modelled (not measured on an FPGA)</text>"##
    );
    let _ = writeln!(o, r##"<text x="{mid:.1}" y="42" text-anchor="middle" font-size="11">{}</text>"##, esc(&config_line(b)));
    let _ = writeln!(
        o,
        r##"<text x="{mid:.1}" y="57" text-anchor="middle" font-size="11">clock {} MHz for every design; cycle model fed by the exact DDR counts of emulated runs (docs/performance.md)</text>"##,
        b.clock_mhz
    );

    // Top panel: speedup, one bar per design.
    let vals: Vec<f64> = designs.iter().flat_map(|d| d.speedup.iter().flatten().copied()).collect();
    let a = LogAxis::new(&vals, (1.0, 10.0), 100.0, 300.0);
    let modes: Vec<&str> = designs.iter().map(|d| d.mode.as_str()).collect();
    let _ = writeln!(
        o,
        r##"<text x="{left}" y="86" font-size="13" font-weight="bold">Modelled speedup of {} over the baseline kernel (log scale)</text>"##,
        esc(&modes.join(" and "))
    );
    axis(&mut o, &a, left, right, "speedup (modelled)", false);
    let one = a.y(1.0);
    let _ = writeln!(o, r##"<line x1="{left}" y1="{one:.1}" x2="{right}" y2="{one:.1}" stroke="#333" stroke-dasharray="4 3"/>"##);
    let nd = designs.len() as f64;
    for (k, s) in b.stencils.iter().enumerate() {
        let cx = left + group * (k as f64 + 0.5);
        let bw = group * 0.45 / nd;
        for (i, d) in designs.iter().enumerate() {
            let x = cx + (i as f64 - (nd - 1.0) / 2.0) * (bw + 2.0);
            match d.speedup[k] {
                Some(v) => {
                    let y = a.y(v);
                    let _ = writeln!(
                        o,
                        r##"<rect x="{:.1}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{}"><title>{} {}: modelled speedup {v:.1}x</title></rect>"##,
                        x - bw / 2.0,
                        y.min(a.bottom),
                        (a.bottom - y).max(0.0),
                        d.colour,
                        esc(&s.name),
                        esc(&d.mode)
                    );
                    let _ = writeln!(o, r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"##, y - 4.0, fmt_x(v));
                }
                None => {
                    let why = if i == 0 { na(s) } else { "n/a" };
                    let _ = writeln!(o, r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="#a00">{why}</text>"##, a.bottom - 6.0);
                }
            }
        }
        let _ = writeln!(o, r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##, a.bottom + 16.0, esc(&s.name));
    }

    // Bottom panel: roofline fraction, the baseline and each design at both clocks.
    let base: Vec<Option<f64>> = b
        .stencils
        .iter()
        .map(|s| s.modelled.as_ref().map(|m| m.baseline_roofline_fraction).or(s.baseline.as_ref().map(|x| x.roofline_fraction)))
        .collect();
    let target_mhz = Params::VCU118.target_clock_mhz;
    let pct: Vec<f64> = base
        .iter()
        .chain(designs.iter().flat_map(|d| d.fraction.iter().chain(&d.target)))
        .flatten()
        .map(|v| v * 100.0)
        .collect();
    let a = LogAxis::new(&pct, (1.0, 100.0), 375.0, 610.0);
    let _ = writeln!(
        o,
        r##"<text x="{left}" y="361" font-size="13" font-weight="bold">Modelled fraction of the DDR roofline each design reaches (log scale)</text>"##
    );
    axis(&mut o, &a, left, right, "% of roofline (modelled)", true);
    for (k, s) in b.stencils.iter().enumerate() {
        let cx = left + group * (k as f64 + 0.5);
        let mut bars: Vec<(Option<f64>, &str, String)> = vec![(base[k], grey, "baseline".into())];
        for d in &designs {
            if !baseline_only || d.mode != "baseline" {
                bars.push((d.fraction[k], d.colour, d.mode.clone()));
            }
            bars.push((d.target[k], d.light, format!("{} at {target_mhz} MHz, not timing-closed", d.mode)));
        }
        let nb = bars.len() as f64;
        let bw = group * 0.81 / nb;
        for (i, (v, fill, what)) in bars.into_iter().enumerate() {
            let x = cx + (i as f64 - (nb - 1.0) / 2.0) * (bw + 2.0);
            match v {
                Some(v) => {
                    let y = a.y(v * 100.0);
                    let _ = writeln!(
                        o,
                        r##"<rect x="{:.1}" y="{:.1}" width="{bw:.1}" height="{:.1}" fill="{fill}"><title>{} {what}: {:.3}% of the DDR roofline (modelled)</title></rect>"##,
                        x - bw / 2.0,
                        y.min(a.bottom),
                        (a.bottom - y).max(0.0),
                        esc(&s.name),
                        v * 100.0
                    );
                    let _ = writeln!(o, r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="9">{}</text>"##, y - 3.0, fmt_pct(v * 100.0));
                }
                None => {
                    let _ = writeln!(o, r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="9" fill="#a00">n/a</text>"##, a.bottom - 6.0);
                }
            }
        }
        let _ = writeln!(o, r##"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##, a.bottom + 16.0, esc(&s.name));
    }
    // Legend: the baseline, then per design its colour at the bench's clock and its light
    // colour at the target clock.
    let ly = h - 52.0;
    let _ = writeln!(o, r##"<rect x="{left}" y="{:.1}" width="12" height="12" fill="{grey}"/>"##, ly - 10.0);
    let _ = writeln!(o, r##"<text x="{:.1}" y="{ly:.1}" font-size="11">baseline (modelled)</text>"##, left + 16.0);
    for (i, d) in designs.iter().enumerate() {
        let y = ly + 16.0 * i as f64;
        if !baseline_only {
            let _ = writeln!(o, r##"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}"/>"##, left + 160.0, y - 10.0, d.colour);
            let _ = writeln!(o, r##"<text x="{:.1}" y="{y:.1}" font-size="11">{} (modelled)</text>"##, left + 176.0, esc(&d.mode));
        }
        let _ = writeln!(o, r##"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{}"/>"##, left + 300.0, y - 10.0, d.light);
        let _ = writeln!(
            o,
            r##"<text x="{:.1}" y="{y:.1}" font-size="11">{} at the {target_mhz} MHz target clock (modelled, not timing-closed)</text>"##,
            left + 316.0,
            esc(&d.mode)
        );
    }
    let _ = writeln!(
        o,
        r##"<text x="{right}" y="{:.1}" text-anchor="end" font-size="10" fill="#555">roofline = (DDR bytes read + written) / 19.2 GB/s; n/a: not modelled (see the table's notes)</text>"##,
        h - 8.0
    );
    o.push_str("</svg>\n");
    o
}

fn fmt_x(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}x")
    } else {
        format!("{v:.1}x")
    }
}

fn fmt_pct(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}%")
    } else if v >= 0.1 {
        format!("{v:.1}%")
    } else {
        format!("{v:.2}%")
    }
}

fn na(s: &StencilResult) -> &'static str {
    match s.status {
        Status::ModeUnavailable => "mode n/a",
        Status::Mismatch => "mismatch",
        _ => "n/a",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BaselineFigures, Config, Exact, Measured, Modelled, Mode, StencilConfig};

    fn result(name: &str, status: Status, speedup: Option<f64>) -> StencilResult {
        StencilResult {
            name: name.into(),
            config: StencilConfig { tiles: "default".into(), tile_sizes: vec![64, 64], port_width: 16, mode: Mode::Paper, banks: 1 },
            status,
            error: if status == Status::ModeUnavailable { Some("-fplugin-arg-tessera-mode=paper: unknown mode".into()) } else { None },
            bit_exact: Some(true),
            ran_mode: speedup.map(|_| Mode::Paper.into()),
            baseline: Some(BaselineFigures {
                ddr_read_bytes: 5 << 26,
                ddr_write_bytes: 1 << 26,
                bursts: 6 << 24,
                modelled_s: 10.0,
                modelled_cycles: 500_000_000,
                roofline_fraction: 0.002,
                emulation_s: Some(0.3),
                compile_s: 0.25,
                resources: None,
            }),
            exact: speedup.map(|_| Exact {
                ddr_read_bytes: 1 << 26,
                ddr_write_bytes: 1 << 26,
                compulsory_bytes: Some(1 << 27),
                bursts: 70_000,
                exposed_round_trips: 20_000,
                read_after_write: 0,
                buffer_elements: 624,
                traffic_ratio: Some(1.0),
                bytes_to_device: 3 << 26,
                bytes_from_device: 1 << 26,
            }),
            modelled: speedup.map(|v| Modelled {
                baseline_s: 10.0,
                kernel_s: 10.0 / v,
                kernel_cycles: 1000,
                roofline_s: 0.007,
                host_transfer_s: 0.17,
                clock_mhz: 50.0,
                speedup: v,
                roofline_fraction: 0.007 / (10.0 / v),
                baseline_roofline_fraction: 0.002,
                end_to_end_s: 0.17 + 10.0 / v,
                bound: "cycles".into(),
                structure: "blocked rows".into(),
                target_clock_mhz: 250.0,
                target_kernel_s: 2.0 / v,
                target_roofline_fraction: 0.007 / (2.0 / v),
                port_floor_cycles: 900,
                target_cycles_over_floor: 1.1,
                two_banks_target_kernel_s: 0.004,
                two_banks_over_one_bank_roofline: 1.75,
                two_banks_whole_array_bound: 2.0,
            }),
            resources: speedup.map(|_| {
                let mut k = tessera_model::KernelShape { lanes: 64, ..Default::default() };
                k.ops.add_fp(tessera_model::resources::FpOp::AddSub, tessera_model::resources::Precision::Single, 4);
                crate::ResourceFigures::new("paper", &k, &ResourceParams::XCVU9P)
            }),
            measured: Measured { emulation_s: Some(0.3), host_loop_s: Some(0.1), ..Measured::default() },
        }
    }

    fn bench() -> Bench {
        Bench {
            config: Config::default(),
            clock_mhz: 50.0,
            clock_rule: "50 MHz for every design".into(),
            stencils: vec![result("2D-jacobi", Status::Ok, Some(115.0)), result("2D-5p", Status::ModeUnavailable, None)],
            total_s: 3.0,
        }
    }

    fn j_dsp(b: &Bench) -> u64 {
        to_json(b)["stencils"][0]["resources"]["dsp"].as_u64().unwrap()
    }

    #[test]
    fn goals_count_the_stencils_that_meet_them_and_name_the_misses() {
        let mut b = bench();
        // 2D-jacobi: 0.007 / (2 / 115) = 40 % of the roofline at 250 MHz, 1.75x with two banks.
        let mut fdtd = result("2D-fdtd0", Status::Ok, Some(460.0));
        fdtd.modelled.as_mut().unwrap().two_banks_over_one_bank_roofline = 1.31;
        fdtd.modelled.as_mut().unwrap().two_banks_whole_array_bound = 1.5;
        let mut heat = result("3D-heat", Status::Ok, Some(460.0));
        heat.modelled.as_mut().unwrap().two_banks_over_one_bank_roofline = 1.0;
        b.stencils.extend([fdtd, heat]);
        let t = table(&b);
        let line = |label: &str| t.lines().find(|l| l.contains(label)).unwrap_or_else(|| panic!("no {label} in {t}")).to_string();
        assert!(line("compulsory (exact)").contains(" 3/3  max 1.00x"), "{t}");
        assert!(line("port-bound floor").contains(" 3/3  max 1.10x"), "{t}");
        let roof = line("one-bank roofline at 250 MHz");
        assert!(roof.contains(" 2/3  min 40.2%") && roof.contains("missed by 2D-jacobi 40.2%"), "{t}");
        // Only the 2D stencils count for two banks: 3D-heat's 1.00x is not listed.
        let two = line("two banks");
        assert!(two.contains(" 1/2  min 1.31x; missed by 2D-fdtd0 1.31x (no placement of whole arrays exceeds 1.50x)") && !two.contains("3D-heat"), "{t}");
        assert!(line("DSPs <= 50 %").contains(" 3/3  max DSP 7%"), "{t}");
        // 0.3 s emulated against a 0.1 s host loop; a stencil at 6x is named.
        assert!(line("the host loop (measured)").contains(" 3/3  max 3.0x"), "{t}");
        let fdtd = b.stencils.iter_mut().find(|s| s.name == "2D-fdtd0").unwrap();
        fdtd.measured.emulation_s = Some(0.6);
        let t = table(&b);
        let emu = t.lines().find(|l| l.contains("the host loop (measured)")).unwrap();
        assert!(emu.contains(" 2/3  max 6.0x; missed by 2D-fdtd0 6.0x"), "{t}");
        // A stencil without results counts in no goal; with none, no goals block.
        b.stencils.retain(|s| s.status != Status::Ok);
        assert!(!table(&b).contains("goals"));
    }

    #[test]
    fn formats() {
        assert_eq!(fmt_bytes(402_260_064), "402.3 MB");
        assert_eq!(fmt_s(10.0565), "10.06 s");
        assert_eq!(fmt_s(0.0872), "87.2 ms");
        assert_eq!(fmt_s(4.2e-7), "420 ns");
    }

    #[test]
    fn table_json_and_svg_say_what_kind_each_figure_is() {
        let b = bench();
        let t = table(&b);
        assert!(t.contains("2D-jacobi  bit-exact |"), "{t}");
        assert!(t.contains("115.0x"), "{t}");
        assert!(t.contains("note: 2D-5p: -fplugin-arg-tessera-mode=paper: unknown mode"), "{t}");
        assert!(t.contains("exact = counted in emulation; modelled"), "{t}");
        assert!(t.contains("%roof@250") && t.contains("not timing-closed"), "{t}");
        // Emulation 0.3 s against the host loop's 0.1 s.
        assert!(t.contains("host loop") && t.contains("   3.0x"), "{t}");
        // 64 lanes of 4 float additions: 512 DSPs, 7.5 % of the XCVU9P's 6840.
        assert!(t.contains("|    512 ") && t.contains("7% DSP"), "{t}");
        assert_eq!(j_dsp(&b), 512);
        let j = to_json(&b);
        let s = &j["stencils"][0];
        for (obj, keys) in [
            ("config", &["tiles", "port_width", "mode"][..]),
            ("exact", &["ddr_read_bytes", "ddr_write_bytes", "compulsory_bytes", "bursts", "exposed_round_trips", "read_after_write", "buffer_elements"][..]),
            ("modelled", &["baseline_s", "kernel_s", "kernel_cycles", "roofline_s", "host_transfer_s", "clock_mhz"][..]),
            ("measured", &["compile_s", "optimizer_s", "emulation_s", "host_loop_s"][..]),
            ("modelled", &["target_clock_mhz", "target_kernel_s", "target_roofline_fraction"][..]),
            ("resources", &["kernel", "lanes", "bram36", "uram", "dsp", "lut", "ff", "usage", "unmodelled_ops"][..]),
        ] {
            for k in keys {
                assert!(s[obj].get(*k).is_some(), "{obj}.{k} missing in {s}");
            }
        }
        assert_eq!(s["name"], "2D-jacobi");
        assert_eq!(s["bit_exact"], true);
        assert_eq!(j["stencils"][1]["status"], "mode-unavailable");
        assert_eq!(j["clock"]["mhz"], 50.0);
        assert_eq!(j["target_clock"]["mhz"], 250.0);
        assert_eq!(s["resources"]["usage"]["binding"], "DSP");
        assert_eq!(s["resources"]["usage"]["fits"], true);
        assert!(j["resource_parameters"].as_array().unwrap().iter().all(|p| p["source"].as_str().unwrap().len() > 30));
        assert!(j["model_parameters"].as_array().unwrap().iter().all(|p| p["source"].as_str().unwrap().len() > 30));
        let svg = svg(&b);
        if let Ok(p) = std::env::var("TESSERA_BENCH_SVG_OUT") {
            std::fs::write(p, &svg).unwrap();
        }
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("Modelled speedup of paper over the baseline kernel"));
        assert!(svg.contains("Modelled fraction of the DDR roofline"));
        assert!(svg.contains(">115x<") && svg.contains("mode n/a"));
        assert!(svg.contains("paper at the 250 MHz target clock (modelled, not timing-closed)"), "{svg}");
        // Side by side with another mode's run: both speedups, both legends.
        let mut other = bench();
        other.config.mode = Mode::Dataflow;
        other.stencils[0].modelled.as_mut().unwrap().speedup = 400.0;
        let both = svg_compared(&b, Some(&other));
        assert!(both.contains("Modelled speedup of paper and dataflow over the baseline kernel"), "{both}");
        assert!(both.contains(">115x<") && both.contains(">400x<"), "{both}");
        assert!(both.contains("2D-jacobi dataflow: modelled speedup 400.0x"), "{both}");
        assert!(both.contains("dataflow at the 250 MHz target clock (modelled, not timing-closed)"), "{both}");
        // A kernel whose estimate exceeds the device is noted.
        let mut over = bench();
        over.stencils[0].resources.as_mut().unwrap().usage.fits = false;
        assert!(table(&over).contains("note: 2D-jacobi: the paper kernel's modelled resources exceed the XCVU9P (DSP 7%, 64 lanes)"));
    }
}
