//! The execution report: one [`Record`] per region execution, appended as one JSON
//! line to `$TESSERA_REPORT`, and the `TESSERA_VERBOSE` stderr line.
//!
//! Each line is written with a single `write(2)` on a file opened with `O_APPEND`, so
//! lines from concurrent threads and processes never interleave.
//!
//! Line format (keys in this order):
//! `{"region":"f.c:12","kernel":"k"|null,"mode":"baseline","device":"emu"|"xrt"|"host",
//! "reason":null|"…","bytes_to_device":N,"bytes_from_device":N,"kernel_wall_s":F|null}`.
//! Later issues add fields (exact traffic counts of the emulated memory ports) after
//! these; readers must ignore keys they do not know.

use crate::device::DeviceKind;
use serde::Serialize;
use std::io::Write;
use std::path::Path;

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
        }
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
            r#"{"region":"a.c:3","kernel":"k","mode":"baseline","device":"host","reason":"OMP_TARGET_OFFLOAD=DISABLED","bytes_to_device":0,"bytes_from_device":0,"kernel_wall_s":null}"#
        );
        assert_eq!(r.verbose_line(), "tessera: a.c:3: running on the host: OMP_TARGET_OFFLOAD=DISABLED");
        let e = Record { device: DeviceKind::Emu, reason: None, kernel_wall_s: Some(0.5), bytes_to_device: 8, ..r };
        assert_eq!(e.verbose_line(), "tessera: a.c:3: kernel k ran on emu");
        assert!(e.to_json().contains(r#""device":"emu","reason":null,"bytes_to_device":8"#));
        assert!(e.to_json().ends_with(r#""kernel_wall_s":0.5}"#));
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
