//! The execution report: one [`Record`] per region execution, appended as one JSON
//! line to `$TESSERA_REPORT`, and the `TESSERA_VERBOSE` stderr line.
//!
//! Each line is written with a single `write(2)` on a file opened with `O_APPEND`, so
//! lines from concurrent threads and processes never interleave.
//!
//! The line's type, [`Record`], lives in `tessera_ir::report`, shared with its reader
//! (`tessera bench`); this module adds what needs the runtime: the traffic counters of
//! the emulation ABI ([`array_traffic`]) and the append to the file ([`append`]).

use std::io::Write;
use std::path::Path;

pub use tessera_ir::report::{ArrayTraffic, Arrays, Moved, Record, Transfers};

/// The report's view of the kernel's counters for one array.
pub fn array_traffic(s: &crate::abi::PortStats) -> ArrayTraffic {
    let hist = |h: &[u64]| {
        h.iter().enumerate().filter(|(_, &c)| c != 0).map(|(n, &c)| (n as u32, c)).collect::<std::collections::BTreeMap<u32, u64>>()
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
        read_exposed: s.read_exposed,
        write_exposed: s.write_exposed,
        read_after_write: s.read_after_write,
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
    use tessera_ir::report::DeviceKind;

    #[test]
    fn line_format() {
        let r = Record::host("a.c:3".into(), Some("k".into()), "OMP_TARGET_OFFLOAD=DISABLED".into());
        assert_eq!(
            r.to_json(),
            r#"{"region":"a.c:3","kernel":"k","mode":"host","device":"host","reason":"OMP_TARGET_OFFLOAD=DISABLED","bytes_to_device":0,"bytes_from_device":0,"kernel_wall_s":null,"ddr_read_bytes":null,"ddr_write_bytes":null,"bursts":null,"arrays":null}"#
        );
        assert_eq!(r.verbose_line(), "tessera: a.c:3: running on the host: OMP_TARGET_OFFLOAD=DISABLED");
        let e = Record { device: DeviceKind::Emu, mode: tessera_ir::Mode::Baseline.into(), reason: None, kernel_wall_s: Some(0.5), bytes_to_device: 8, ..r };
        assert_eq!(e.verbose_line(), "tessera: a.c:3: kernel k ran on emu");
        assert!(e.to_json().contains(r#""device":"emu","reason":null,"bytes_to_device":8"#));
        assert!(e.to_json().contains(r#""kernel_wall_s":0.5,"#));

        // Traffic: totals over counted arrays, per-array detail in manifest order.
        let mut stats = crate::abi::PortStats { read_bytes: 64, read_bursts: 1, read_beats: 1, bound: 1, read_exposed: 1, ..Default::default() };
        stats.read_burst_len[1] = 1;
        let a = array_traffic(&stats);
        stats = crate::abi::PortStats { write_bytes: 128, write_enabled_bytes: 100, write_bursts: 1, write_beats: 2, bound: 1, write_exposed: 1, read_after_write: 4, ..Default::default() };
        stats.write_burst_len[2] = 1;
        let z = array_traffic(&stats);
        let t = e.clone().with_traffic(Arrays(vec![("z".into(), Some(z.clone())), ("a".into(), Some(a.clone()))]));
        assert_eq!((t.ddr_read_bytes, t.ddr_write_bytes, t.bursts), (Some(64), Some(128), Some(2)));
        assert!(t.to_json().ends_with(concat!(
            r#""ddr_read_bytes":64,"ddr_write_bytes":128,"bursts":2,"arrays":{"z":{"read_bytes":0,"write_bytes":128,"#,
            r#""read_bursts":0,"write_bursts":1,"beats":2,"write_enabled_bytes":100,"read_burst_lengths":{},"#,
            r#""write_burst_lengths":{"2":1},"read_exposed":0,"write_exposed":1,"read_after_write":4},"a":{"read_bytes":64,"#,
            r#""write_bytes":0,"read_bursts":1,"write_bursts":0,"beats":1,"write_enabled_bytes":0,"read_burst_lengths":{"1":1},"#,
            r#""write_burst_lengths":{},"read_exposed":1,"write_exposed":0,"read_after_write":0}}}"#
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
        let r = Record::host("a.c:3".into(), None, "x".into());
        append(&p, &r).unwrap();
        append(&p, &r).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.lines().all(|l| l == r.to_json()));
    }
}
