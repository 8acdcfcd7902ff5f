//! Per-compile options, parsed from the plugin's `-fplugin-arg-tessera-<key>=<value>`
//! arguments (the CLI builds the same strings).

pub use tessera_ir::Mode;

/// Which math functions a kernel may call (`math=exact|relaxed`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MathMode {
    /// The default: only the functions whose IEEE 754 result is exact
    /// (`tessera_ir::MathFn::is_exact`: `sqrt`, `fabs`, `fmin`, `fmax`, `floor`, `ceil`,
    /// `trunc`, `round`, `copysign`, `fma` and their `f` forms), so every kernel computes
    /// the host's bits. A region calling another one stays on the host with the reason
    /// `inexact-math`.
    #[default]
    Exact,
    /// Also the library-dependent ones (`exp`, `log`, `pow`, `sin`, …). The emulated
    /// device computes them with the host's C library (same results); a Vitis kernel
    /// computes them with Vitis HLS' math library, whose results may differ from the
    /// host's by the few units in the last place its documentation gives per function.
    Relaxed,
}

/// Options of one compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Kernel flavour.
    pub mode: Mode,
    /// Tile sizes for the optimizer: one size for every loop of every region, whatever
    /// its depth (`tile=16`), or one per loop, outermost first (`tile=64,64`; a region of
    /// another depth is then not tiled, with the reason `tile-size-count` in its plan).
    /// A region's `#pragma tessera tile(…)` overrides them. `None`: the optimizer's
    /// defaults (1024 / 128,128 / 32,32,32).
    pub tile: Option<Vec<i64>>,
    /// `tile=small|default|large`: the paper's tile presets, sized by each region's
    /// depth (`tessera_poly::preset_tile_sizes`: `default` is 512 / 64,64 / 32,32,32),
    /// where one list cannot fit regions of different depths. Ignored when `tile` is set.
    pub tile_preset: Option<&'static str>,
    /// Elements per DDR beat (`port-width=4|8|16`; 16 floats = 512 bit).
    pub port_width: u32,
    /// `reassociate`: floating `+` and `*` reductions accumulate in partial results
    /// (II = 1) instead of the loop's order, which rounds differently — the licence
    /// `-ffast-math` gives a compiler (`tessera_hls::baseline::generate_with`).
    /// Off: the kernel's result is the host's with one thread, bit for bit.
    pub reassociate: bool,
    /// Math functions kernels may call (`math=exact|relaxed`).
    pub math: MathMode,
    /// DDR banks the kernels' ports use (`banks=1|2`): with 2, the arrays a region
    /// writes go to the second bank and the others stay in the first, so reads and
    /// writes do not share one bank's bus (the VCU118 has two DDR4 banks, C1 and C2).
    pub banks: u32,
    /// `lanes=V`: the lanes a dataflow kernel's compute process evaluates per cycle (a
    /// power of two up to the port width; the word then takes W / V cycles). `None`:
    /// chosen from the resource model ([`crate::tiles::dataflow_lanes`]): W when the
    /// datapath of W lanes fits, else the largest V that does.
    pub lanes: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options { mode: Mode::Dataflow, tile: None, tile_preset: None, port_width: 16, reassociate: false, math: MathMode::Exact, banks: 1, lanes: None }
    }
}

/// Port widths the generated kernels support (elements per beat).
pub const PORT_WIDTHS: [u32; 3] = [4, 8, 16];

/// Keys the plugin itself consumes (they reach us too, and are accepted here).
const PLUGIN_KEYS: [&str; 3] = ["out-dir", "dump-ir", "verbose"];

impl Options {
    /// Parses `key=value` (or bare `key`) strings. Unknown keys and bad values are
    /// errors that name the argument as the user wrote it.
    pub fn from_plugin_args(args: &[impl AsRef<str>]) -> Result<Options, String> {
        let mut o = Options::default();
        for a in args {
            let a = a.as_ref();
            let (key, value) = a.split_once('=').unwrap_or((a, ""));
            match key {
                "mode" => o.mode = value.parse().map_err(|e| format!("-fplugin-arg-tessera-mode={value}: {e}"))?,
                "tile" => match (["small", "default", "large"].into_iter().find(|p| *p == value), tessera_poly::parse_tile_list(value)) {
                    (Some(preset), _) => (o.tile, o.tile_preset) = (None, Some(preset)),
                    (None, Ok(s)) => (o.tile, o.tile_preset) = (Some(s), None),
                    (None, Err(e)) => {
                        return Err(format!(
                            "-fplugin-arg-tessera-tile={value}: {e}; expected one positive size for every loop \
                             (tile=16), one per loop, outermost first (tile=64,64), or a preset sized by each \
                             region's depth (tile=small|default|large)"
                        ))
                    }
                },
                "port-width" => match value.parse::<u32>() {
                    Ok(w) if PORT_WIDTHS.contains(&w) => o.port_width = w,
                    _ => {
                        return Err(format!(
                            "-fplugin-arg-tessera-port-width={value}: expected 4, 8 or 16 (elements per beat)"
                        ))
                    }
                },
                "banks" => match value {
                    "1" => o.banks = 1,
                    "2" => o.banks = 2,
                    _ => return Err(format!("-fplugin-arg-tessera-banks={value}: expected 1 or 2 (DDR banks)")),
                },
                "lanes" => match value.parse::<u32>() {
                    Ok(v) if (1..=16).contains(&v) && v.is_power_of_two() => o.lanes = Some(v),
                    _ => {
                        return Err(format!(
                            "-fplugin-arg-tessera-lanes={value}: expected 1, 2, 4, 8 or 16 (lanes per cycle of a \
                             dataflow kernel, at most the port width)"
                        ))
                    }
                },
                "reassociate" if value.is_empty() => o.reassociate = true,
                "reassociate" => {
                    return Err(format!("-fplugin-arg-tessera-{a}: 'reassociate' takes no value"));
                }
                "math" => {
                    o.math = match value {
                        "exact" => MathMode::Exact,
                        "relaxed" => MathMode::Relaxed,
                        _ => {
                            return Err(format!(
                                "-fplugin-arg-tessera-math={value}: expected 'exact' (the default: only math \
                                 functions whose result is the same in every library) or 'relaxed' (also exp, log, \
                                 pow, sin, …, whose results may differ from the host's in the last bits)"
                            ))
                        }
                    }
                }
                k if PLUGIN_KEYS.contains(&k) => {}
                _ => {
                    return Err(format!(
                        "-fplugin-arg-tessera-{a}: unknown Tessera option (known: mode, tile, port-width, lanes, reassociate, math, banks, {})",
                        PLUGIN_KEYS.join(", ")
                    ))
                }
            }
        }
        if let Some(v) = o.lanes.filter(|&v| v > o.port_width) {
            return Err(format!(
                "-fplugin-arg-tessera-lanes={v}: more lanes than the port width ({}): a dataflow kernel evaluates \
                 at most one word's elements per cycle",
                o.port_width
            ));
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(Options::from_plugin_args(&["out-dir=/x", "verbose"]), Ok(Options::default()));
        assert_eq!(Options::from_plugin_args(&["mode=baseline"]).unwrap().mode, Mode::Baseline);
        let e = Options::from_plugin_args(&["tiles=32"]).unwrap_err();
        assert!(e.contains("-fplugin-arg-tessera-tiles=32: unknown Tessera option"), "{e}");
        let o = Options::from_plugin_args(&["tile=64, 32", "port-width=8"]).unwrap();
        assert_eq!((o.tile, o.port_width), (Some(vec![64, 32]), 8));
        assert!(Options::from_plugin_args(&["port-width=3"]).unwrap_err().contains("4, 8 or 16"));
        assert!(Options::from_plugin_args(&["mode=fast"]).unwrap_err().contains("unknown mode"));
        assert_eq!(Options::from_plugin_args(&["mode=dataflow"]).unwrap().mode, Mode::Dataflow);
        assert_eq!(Mode::Dataflow.name(), "dataflow");
        assert!(!Options::default().reassociate);
        assert!(Options::from_plugin_args(&["reassociate"]).unwrap().reassociate);
        assert_eq!((Options::default().banks, Options::from_plugin_args(&["banks=2"]).unwrap().banks), (1, 2));
        assert!(Options::from_plugin_args(&["banks=3"]).unwrap_err().contains("expected 1 or 2"));
        assert_eq!((Options::default().lanes, Options::from_plugin_args(&["lanes=4"]).unwrap().lanes), (None, Some(4)));
        assert!(Options::from_plugin_args(&["port-width=4", "lanes=8"]).unwrap_err().contains("more lanes than the port width (4)"));
        for bad in ["lanes=3", "lanes=0", "lanes=32", "lanes"] {
            assert!(Options::from_plugin_args(&[bad]).unwrap_err().contains("expected 1, 2, 4, 8 or 16"), "{bad}");
        }
        let e = Options::from_plugin_args(&["reassociate=1"]).unwrap_err();
        assert_eq!(e, "-fplugin-arg-tessera-reassociate=1: 'reassociate' takes no value");
        assert_eq!(Options::default().math, MathMode::Exact);
        assert_eq!(Options::from_plugin_args(&["math=relaxed"]).unwrap().math, MathMode::Relaxed);
        assert_eq!(Options::from_plugin_args(&["math=relaxed", "math=exact"]).unwrap().math, MathMode::Exact);
        let e = Options::from_plugin_args(&["math=fast"]).unwrap_err();
        assert!(e.starts_with("-fplugin-arg-tessera-math=fast: expected 'exact'"), "{e}");
    }

    /// `tile=N` is one size for every loop of every region (the optimizer expands it
    /// per region); a list is kept as given, one size per loop.
    #[test]
    fn tile_option() {
        assert_eq!(Options::from_plugin_args(&["tile=16"]).unwrap().tile, Some(vec![16]));
        assert_eq!(Options::from_plugin_args(&["tile=32,16,8"]).unwrap().tile, Some(vec![32, 16, 8]));
        assert_eq!(Options::from_plugin_args(&["verbose"]).unwrap().tile, None);
        let o = Options::from_plugin_args(&["tile=16", "tile=large"]).unwrap();
        assert_eq!((o.tile, o.tile_preset), (None, Some("large")), "the last tile= wins");
        let o = Options::from_plugin_args(&["tile=small", "tile=8,8"]).unwrap();
        assert_eq!((o.tile, o.tile_preset), (Some(vec![8, 8]), None));
        let e = Options::from_plugin_args(&["tile=huge"]).unwrap_err();
        assert!(e.contains("tile=small|default|large"), "{e}");
        for (arg, why) in [
            ("tile=64,0", "tile size '0' in tile list '64,0' is not positive"),
            ("tile=-8", "tile size '-8' in tile list '-8' is not positive"),
            ("tile=", "'' in tile list '' is not an integer"),
            ("tile=8,,8", "'' in tile list '8,,8' is not an integer"),
            ("tile=8x8", "'8x8' in tile list '8x8' is not an integer"),
        ] {
            let e = Options::from_plugin_args(&[arg]).unwrap_err();
            assert!(e.starts_with(&format!("-fplugin-arg-tessera-{arg}: {why}; expected one positive size")), "{e}");
        }
    }
}
