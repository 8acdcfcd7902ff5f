//! Reading the runtime's report (`TESSERA_REPORT`, one JSON line per region execution;
//! `runtime/README.md`, "Report") and turning its exact counts into the model's
//! [`Traffic`]. The line's type is the one the runtime writes
//! (`tessera_ir::report::Record`); unknown keys are ignored, as the runtime asks.

use serde::Deserialize;
use std::collections::BTreeMap;
use tessera_ir::report::Record;
use tessera_model::{Port, Traffic};

pub use tessera_ir::report::ArrayTraffic as ArrayCounts;

/// One report line: the runtime's own [`Record`] type (`tessera_ir::report`), read
/// back, plus the conversion of its counts into the model's [`Traffic`]. Fields are
/// reached through `Deref`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(transparent)]
pub struct RunRecord(pub Record);

impl std::ops::Deref for RunRecord {
    type Target = Record;
    fn deref(&self) -> &Record {
        &self.0
    }
}

/// Parses every line of a report file.
pub fn parse(text: &str) -> Result<Vec<RunRecord>, String> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| Record::from_json(l).map(RunRecord).map_err(|e| format!("report line {}: {e}", i + 1)))
        .collect()
}

fn histogram(h: &BTreeMap<u32, u64>, port: &mut tessera_model::Bursts) {
    for (&beats, &n) in h {
        port.add(u64::from(beats), n);
    }
}

impl RunRecord {
    /// The exact traffic per port, or why there is none (host run, uncounted ports).
    pub fn traffic(&self) -> Result<Traffic, String> {
        let arrays = self.arrays.as_ref().ok_or_else(|| match &self.reason {
            Some(r) => format!("no DDR counts: the region ran on the {} ({r})", self.device),
            None => "no DDR counts in the report (ports not counted)".to_string(),
        })?;
        let mut ports = Vec::new();
        for (name, a) in &arrays.0 {
            let a = a.as_ref().ok_or_else(|| format!("array {name}: its DDR traffic was not counted"))?;
            let bytes = a.read_bytes + a.write_bytes;
            let beat_bytes = bytes.checked_div(a.beats).unwrap_or(0);
            if a.beats > 0 && beat_bytes * a.beats != bytes {
                return Err(format!("array {name}: {bytes} bytes in {} beats is not a whole beat width", a.beats));
            }
            let mut p = Port::new(name, beat_bytes);
            histogram(&a.read_burst_lengths, &mut p.read);
            histogram(&a.write_burst_lengths, &mut p.write);
            p.read_exposed = a.read_exposed;
            p.write_exposed = a.write_exposed;
            p.read_after_write = a.read_after_write;
            if p.read.count() != a.read_bursts || p.write.count() != a.write_bursts {
                return Err(format!("array {name}: burst histogram and burst counts disagree"));
            }
            ports.push(p);
        }
        Ok(Traffic { ports })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example line of runtime/README.md.
    #[test]
    fn parses_the_documented_line() {
        let line = r#"{"region":"stencil.c:12","kernel":"k","mode":"baseline","device":"emu","reason":null,"bytes_to_device":3200,"bytes_from_device":1600,"kernel_wall_s":0.00012,"ddr_read_bytes":4776,"ddr_write_bytes":1592,"bursts":1592,"new_key":1,"arrays":{"a":{"read_bytes":4776,"write_bytes":0,"read_bursts":1194,"write_bursts":0,"beats":1194,"write_enabled_bytes":0,"read_burst_lengths":{"1":1194},"write_burst_lengths":{}},"b":{"read_bytes":0,"write_bytes":1592,"read_bursts":0,"write_bursts":398,"beats":398,"write_enabled_bytes":1592,"read_burst_lengths":{},"write_burst_lengths":{"1":398}}}}
{"region":"stencil.c:30","kernel":null,"mode":"baseline","device":"host","reason":"r","bytes_to_device":0,"bytes_from_device":0,"kernel_wall_s":null,"ddr_read_bytes":null,"ddr_write_bytes":null,"bursts":null,"arrays":null}
"#;
        let r = parse(line).unwrap();
        assert_eq!(r.len(), 2);
        let t = r[0].traffic().unwrap();
        assert_eq!((t.read_bytes(), t.write_bytes(), t.bursts()), (4776, 1592, 1592));
        assert_eq!(t.ports[0].beat_bytes, 4);
        assert!(r[1].traffic().unwrap_err().contains("ran on the host (r)"));
        // The runtime's key order (manifest order) is kept: a before b.
        let names: Vec<&str> = r[0].arrays.as_ref().unwrap().0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        // An array the kernel did not count: no traffic, with the reason.
        let uncounted = line.lines().next().unwrap().replace(r#""b":{"read_bytes":0"#, r#""b":null,"c":{"read_bytes":0"#);
        let e = parse(&uncounted).unwrap()[0].traffic().unwrap_err();
        assert_eq!(e, "array b: its DDR traffic was not counted");
        // The line has no exposed or ordered counts (an older runtime's): 0. A line
        // with them passes them to the model's port.
        assert_eq!((t.ports[0].read_exposed, t.ports[0].read_after_write), (0, 0));
        let counted = line.lines().next().unwrap().replace(
            r#""write_burst_lengths":{"1":398}}"#,
            r#""write_burst_lengths":{"1":398},"read_exposed":0,"write_exposed":398,"read_after_write":0}"#,
        );
        let counted = counted.replace(r#""write_burst_lengths":{}}"#, r#""write_burst_lengths":{},"read_exposed":1194,"read_after_write":7}"#);
        let t = parse(&counted).unwrap()[0].traffic().unwrap();
        assert_eq!((t.ports[0].read_exposed, t.ports[0].read_after_write, t.ports[1].write_exposed), (1194, 7, 398));
    }
}
