//! The kernel flavour ([`Mode`]) and what a region execution ran as ([`RunMode`]):
//! one type each, shared by the compile options, the manifest, the runtime's report,
//! `tessera bench` and the CLI. Both are written as their lower-case names in every
//! file format and on every command line (`baseline`, `paper`, `tessera`, `dataflow`;
//! a report also has `host` and `data`).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Which kind of kernel Tessera generates for a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// The original loop nest as a Vitis HLS top function with default settings.
    Baseline,
    /// The paper's tiled kernel: stencil caches, wide aligned bursts, per-row
    /// read / compute / write / wait (falls back to baseline per region when the
    /// optimizer or the generator cannot handle it).
    Paper,
    /// The paper's tiled kernel with overlapped shipment (prefetched
    /// reads of read-only arrays, posted writes of write-only arrays; see
    /// `tessera_hls::paper::Variant::Tessera`), with the same fallback.
    Tessera,
    /// The default: the streaming kernel (`tessera_hls::dataflow`): load, compute and
    /// store processes under `#pragma HLS DATAFLOW`, every input element read once, V
    /// outputs per cycle (modelled at least as fast as `tessera` on every benchmark
    /// stencil, `docs/performance.md`). A region outside its input class gets the `tessera` kernel
    /// (then the baseline), with the reason `dataflow-unsupported` in its plan.
    Dataflow,
}

impl Mode {
    /// Every mode, in the order of the paper's comparison (baseline first).
    pub const ALL: [Mode; 4] = [Mode::Baseline, Mode::Paper, Mode::Tessera, Mode::Dataflow];

    /// The spelling used in options, manifests, reports and on command lines.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Baseline => "baseline",
            Mode::Paper => "paper",
            Mode::Tessera => "tessera",
            Mode::Dataflow => "dataflow",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("unknown mode '{s}' (known: baseline, paper, tessera, dataflow)"))
    }
}

/// What one region execution or data directive of the runtime's report ran as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum RunMode {
    /// A kernel of this mode on a device.
    Kernel(Mode),
    /// The region ran on the host (its record's `kernel` still names the kernel it
    /// would have run).
    Host,
    /// A data directive.
    Data,
}

impl RunMode {
    /// The spelling in reports: the kernel mode's name, `host` or `data`.
    pub fn name(self) -> &'static str {
        match self {
            RunMode::Kernel(m) => m.name(),
            RunMode::Host => "host",
            RunMode::Data => "data",
        }
    }
}

impl fmt::Display for RunMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunMode {
    type Err = String;
    fn from_str(s: &str) -> Result<RunMode, String> {
        match s {
            "host" => Ok(RunMode::Host),
            "data" => Ok(RunMode::Data),
            _ => s.parse().map(RunMode::Kernel),
        }
    }
}

impl TryFrom<String> for RunMode {
    type Error = String;
    fn try_from(s: String) -> Result<RunMode, String> {
        s.parse()
    }
}

impl From<RunMode> for String {
    fn from(m: RunMode) -> String {
        m.name().to_string()
    }
}

impl From<Mode> for RunMode {
    fn from(m: Mode) -> RunMode {
        RunMode::Kernel(m)
    }
}

impl PartialEq<Mode> for RunMode {
    fn eq(&self, m: &Mode) -> bool {
        *self == RunMode::Kernel(*m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_text_and_json() {
        for m in Mode::ALL {
            assert_eq!(m.name().parse::<Mode>(), Ok(m));
            assert_eq!(serde_json::to_string(&m).unwrap(), format!("\"{m}\""));
            assert_eq!(serde_json::from_str::<Mode>(&format!("\"{m}\"")).unwrap(), m);
            let r = RunMode::Kernel(m);
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{m}\""));
        }
        for (r, s) in [(RunMode::Host, "host"), (RunMode::Data, "data")] {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<RunMode>(&format!("\"{s}\"")).unwrap(), r);
        }
        assert!("tiled".parse::<Mode>().unwrap_err().contains("known: baseline, paper, tessera, dataflow"));
        assert!(serde_json::from_str::<RunMode>("\"gpu\"").is_err());
    }
}
