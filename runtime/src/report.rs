//! The execution report: one [`Record`] per region execution, appended as one JSON
//! line to `$TESSERA_REPORT`, and the `TESSERA_VERBOSE` stderr line.
//!
//! Each line is written with a single `write(2)` on a file opened with `O_APPEND`, so
//! lines from concurrent threads and processes never interleave.
//!
//! Line format (keys in this order):
//! `{"region":"f.c:12","kernel":"k"|null,"mode":"baseline","device":"emu"|"xrt"|"host",
//! "reason":null|"…","bytes_to_device":N,"bytes_from_device":N,"kernel_wall_s":F|null,
//! "ddr_read_bytes":N|null,"ddr_write_bytes":N|null,"bursts":N|null,
//! "arrays":{"a":{…}|null,…}|null}`.
//! The `ddr_*`, `bursts` and `arrays` figures are exact counts of the emulated memory
//! ports (see [`ArrayTraffic`]); they are `null` on the host, and the totals are `null`
//! when some array's traffic was not counted (a kernel that bypasses the port types).
//! Then, when not empty, `"transfers":{"a":{"to_device":N,"from_device":M},…}` (the
//! host ↔ device copies per array), and for data directives `"op":"target enter data"`
//! (their lines have `"mode":"data"` and `"kernel":null`).
//! Later issues may add keys after these; readers must ignore keys they do not know.

use crate::device::DeviceKind;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// Exact DDR traffic of one array through the kernel's memory ports (emulated device).
/// A single element access through `tessera::maxi` is one burst of one beat; an
/// `hls::burst_maxi` request is one burst of its length.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ArrayTraffic {
    /// Bytes read from DDR (beats × beat width).
    pub read_bytes: u64,
    /// Bytes written to DDR (beats × beat width, whatever the strobes).
    pub write_bytes: u64,
    /// Read bursts (AXI read transactions).
    pub read_bursts: u64,
    /// Write bursts (AXI write transactions).
    pub write_bursts: u64,
    /// Beats in both directions.
    pub beats: u64,
    /// Bytes actually stored (byte-enable strobe set); `write_bytes` minus masked bytes.
    pub write_enabled_bytes: u64,
    /// Burst length (beats) → number of read bursts of that length.
    pub read_burst_lengths: BTreeMap<u32, u64>,
    /// Burst length (beats) → number of write bursts of that length.
    pub write_burst_lengths: BTreeMap<u32, u64>,
}

impl ArrayTraffic {
    /// The report's view of the kernel's counters for one array.
    pub fn from_stats(s: &crate::abi::PortStats) -> ArrayTraffic {
        let hist = |h: &[u64]| {
            h.iter().enumerate().filter(|(_, &c)| c != 0).map(|(n, &c)| (n as u32, c)).collect::<BTreeMap<u32, u64>>()
        };
        ArrayTraffic {
            read_bytes: s.read_bytes,
            write_bytes: s.write_bytes,
            read_bursts: s.read_bursts,
            write_bursts: s.write_bursts,
            beats: s.read_beats + s.write_beats,
            write_enabled_bytes: s.write_enabled_bytes,
            read_burst_lengths: hist(&s.read_burst_len),
            write_burst_lengths: hist(&s.write_burst_len),
        }
    }
}

/// Bytes one array moved between host and device in one region execution or data
/// operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Host → device.
    pub to_device: u64,
    /// Device → host.
    pub from_device: u64,
}

/// Host ↔ device copies per array name, in the order the arrays first moved,
/// serialised as a JSON object (`{"A":{"to_device":N,"from_device":M},…}`). Only
/// arrays that moved bytes appear.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transfers(pub Vec<(String, Moved)>);

impl Transfers {
    /// Adds `to` and `from` bytes for `name` (nothing when both are 0).
    pub fn add(&mut self, name: &str, to: u64, from: u64) {
        if to == 0 && from == 0 {
            return;
        }
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some((_, m)) => {
                m.to_device += to;
                m.from_device += from;
            }
            None => self.0.push((name.to_string(), Moved { to_device: to, from_device: from })),
        }
    }

    /// Adds everything of `other`.
    pub fn extend(&mut self, other: &Transfers) {
        for (n, m) in &other.0 {
            self.add(n, m.to_device, m.from_device);
        }
    }

    /// Total bytes (to the device, from the device).
    pub fn totals(&self) -> (u64, u64) {
        self.0.iter().fold((0, 0), |(t, f), (_, m)| (t + m.to_device, f + m.from_device))
    }

    /// Whether nothing moved.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Transfers {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (name, t) in &self.0 {
            m.serialize_entry(name, t)?;
        }
        m.end()
    }
}

/// Per-array traffic in manifest order, serialised as a JSON object (`null` for an
/// array whose traffic was not counted).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Arrays(pub Vec<(String, Option<ArrayTraffic>)>);

impl Serialize for Arrays {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (name, t) in &self.0 {
            m.serialize_entry(name, t)?;
        }
        m.end()
    }
}

impl Arrays {
    /// Sums over all arrays: (read bytes, write bytes, bursts), `None` unless every
    /// array was counted.
    pub fn totals(&self) -> Option<(u64, u64, u64)> {
        self.0.iter().try_fold((0, 0, 0), |(r, w, b), (_, t)| {
            let t = t.as_ref()?;
            Some((r + t.read_bytes, w + t.write_bytes, b + t.read_bursts + t.write_bursts))
        })
    }
}

/// What happened to one execution of a region.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// `file:line` of the directive.
    pub region: String,
    /// Kernel name, `None` when the manifest has none (or did not parse).
    pub kernel: Option<String>,
    /// Kernel flavour, e.g. `baseline`.
    pub mode: String,
    /// Where the region ran.
    pub device: DeviceKind,
    /// Why it ran on the host (`None` when offloaded).
    pub reason: Option<String>,
    /// Bytes copied host → device (array sections of `to`, `tofrom` and `from` maps;
    /// scalars are kernel arguments and not counted).
    pub bytes_to_device: u64,
    /// Bytes copied device → host (array sections of `from` and `tofrom` maps).
    pub bytes_from_device: u64,
    /// Wall-clock seconds of the kernel call, `None` on the host.
    pub kernel_wall_s: Option<f64>,
    /// Exact bytes the kernel read from device memory (all arrays), `None` on the host
    /// or when not every array was counted.
    pub ddr_read_bytes: Option<u64>,
    /// Exact bytes the kernel wrote to device memory (whole beats).
    pub ddr_write_bytes: Option<u64>,
    /// Read plus write bursts (AXI transactions).
    pub bursts: Option<u64>,
    /// Per-array detail, `None` on the host.
    pub arrays: Option<Arrays>,
    /// Host ↔ device copies per array (omitted when nothing moved). Their sums are
    /// `bytes_to_device` and `bytes_from_device`.
    #[serde(skip_serializing_if = "Transfers::is_empty")]
    pub transfers: Transfers,
    /// For a data directive: which operation (`target data`, `end target data`,
    /// `target enter data`, `target exit data`, `target update`); omitted for target
    /// regions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
}

impl Record {
    /// A host execution for `reason`.
    pub fn host(region: String, kernel: Option<String>, mode: String, reason: String) -> Record {
        Record {
            region,
            kernel,
            mode,
            device: DeviceKind::Host,
            reason: Some(reason),
            bytes_to_device: 0,
            bytes_from_device: 0,
            kernel_wall_s: None,
            ddr_read_bytes: None,
            ddr_write_bytes: None,
            bursts: None,
            arrays: None,
            transfers: Transfers::default(),
            op: None,
        }
    }

    /// A data directive's operation `op` on `device` (the host with `reason`, or a
    /// device with `reason = None`) that moved `transfers`.
    pub fn data(region: String, op: &str, device: DeviceKind, reason: Option<String>, transfers: Transfers) -> Record {
        let (to, from) = transfers.totals();
        Record {
            device,
            reason,
            bytes_to_device: to,
            bytes_from_device: from,
            transfers,
            op: Some(op.to_string()),
            ..Record::host(region, None, "data".into(), String::new())
        }
    }

    /// Sets the transfer fields (and byte totals) from `transfers`.
    pub fn with_transfers(mut self, transfers: Transfers) -> Record {
        let (to, from) = transfers.totals();
        self.bytes_to_device = to;
        self.bytes_from_device = from;
        self.transfers = transfers;
        self
    }

    /// Sets the traffic fields from the per-array counts of a launch.
    pub fn with_traffic(mut self, arrays: Arrays) -> Record {
        let totals = arrays.totals();
        self.ddr_read_bytes = totals.map(|t| t.0);
        self.ddr_write_bytes = totals.map(|t| t.1);
        self.bursts = totals.map(|t| t.2);
        self.arrays = Some(arrays);
        self
    }

    /// Whether the kernel ran on a device (the runtime returns 1).
    pub fn offloaded(&self) -> bool {
        self.device != DeviceKind::Host
    }

    /// The report line, without the newline.
    pub fn to_json(&self) -> String {
        // Serialising plain strings, integers and finite floats cannot fail; a
        // non-finite float would become `null`.
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"region\":\"?\",\"error\":\"{e}\"}}"))
    }

    /// The `TESSERA_VERBOSE` line, without the newline.
    pub fn verbose_line(&self) -> String {
        if let Some(op) = &self.op {
            return match (&self.device, &self.reason) {
                (DeviceKind::Host, reason) => format!(
                    "tessera: {}: {op} left to the host: {}",
                    self.region,
                    reason.as_deref().unwrap_or("?")
                ),
                (d, _) => format!(
                    "tessera: {}: {op} on {}: {} bytes to the device, {} bytes back",
                    self.region,
                    d.name(),
                    self.bytes_to_device,
                    self.bytes_from_device
                ),
            };
        }
        match (&self.device, &self.reason) {
            (DeviceKind::Host, reason) => {
                format!("tessera: {}: running on the host: {}", self.region, reason.as_deref().unwrap_or("?"))
            }
            (d, _) => format!(
                "tessera: {}: kernel {} ran on {}",
                self.region,
                self.kernel.as_deref().unwrap_or("?"),
                d.name()
            ),
        }
    }
}

/// Appends `record` as one line to the report file at `path`.
pub fn append(path: &Path, record: &Record) -> std::io::Result<()> {
    let mut line = record.to_json();
    line.push('\n');
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    // One write(2): with O_APPEND the line lands whole at the end of the file.
    let n = f.write(line.as_bytes())?;
    if n != line.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::WriteZero,
            format!("short write ({n} of {} bytes)", line.len()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_format() {
        let r = Record::host("a.c:3".into(), Some("k".into()), "baseline".into(), "OMP_TARGET_OFFLOAD=DISABLED".into());
        assert_eq!(
            r.to_json(),
            r#"{"region":"a.c:3","kernel":"k","mode":"baseline","device":"host","reason":"OMP_TARGET_OFFLOAD=DISABLED","bytes_to_device":0,"bytes_from_device":0,"kernel_wall_s":null,"ddr_read_bytes":null,"ddr_write_bytes":null,"bursts":null,"arrays":null}"#
        );
        assert_eq!(r.verbose_line(), "tessera: a.c:3: running on the host: OMP_TARGET_OFFLOAD=DISABLED");
        let e = Record { device: DeviceKind::Emu, reason: None, kernel_wall_s: Some(0.5), bytes_to_device: 8, ..r };
        assert_eq!(e.verbose_line(), "tessera: a.c:3: kernel k ran on emu");
        assert!(e.to_json().contains(r#""device":"emu","reason":null,"bytes_to_device":8"#));
        assert!(e.to_json().contains(r#""kernel_wall_s":0.5,"#));

        // Traffic: totals over counted arrays, per-array detail in manifest order.
        let mut stats = crate::abi::PortStats { read_bytes: 64, read_bursts: 1, read_beats: 1, bound: 1, ..Default::default() };
        stats.read_burst_len[1] = 1;
        let a = ArrayTraffic::from_stats(&stats);
        stats = crate::abi::PortStats { write_bytes: 128, write_enabled_bytes: 100, write_bursts: 1, write_beats: 2, bound: 1, ..Default::default() };
        stats.write_burst_len[2] = 1;
        let z = ArrayTraffic::from_stats(&stats);
        let t = e.clone().with_traffic(Arrays(vec![("z".into(), Some(z.clone())), ("a".into(), Some(a.clone()))]));
        assert_eq!((t.ddr_read_bytes, t.ddr_write_bytes, t.bursts), (Some(64), Some(128), Some(2)));
        assert!(t.to_json().ends_with(concat!(
            r#""ddr_read_bytes":64,"ddr_write_bytes":128,"bursts":2,"arrays":{"z":{"read_bytes":0,"write_bytes":128,"#,
            r#""read_bursts":0,"write_bursts":1,"beats":2,"write_enabled_bytes":100,"read_burst_lengths":{},"#,
            r#""write_burst_lengths":{"2":1}},"a":{"read_bytes":64,"write_bytes":0,"read_bursts":1,"write_bursts":0,"#,
            r#""beats":1,"write_enabled_bytes":0,"read_burst_lengths":{"1":1},"write_burst_lengths":{}}}}"#
        )), "{}", t.to_json());
        // An uncounted array makes the totals unknown.
        let u = e.with_traffic(Arrays(vec![("a".into(), Some(a)), ("raw".into(), None)]));
        assert_eq!((u.ddr_read_bytes, u.bursts), (None, None));
        assert!(u.to_json().ends_with(r#""raw":null}}"#), "{}", u.to_json());
    }

    #[test]
    fn appends_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.jsonl");
        let r = Record::host("a.c:3".into(), None, "baseline".into(), "x".into());
        append(&p, &r).unwrap();
        append(&p, &r).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l == r.to_json()));
    }
}
