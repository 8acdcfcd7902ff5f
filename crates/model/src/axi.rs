//! AXI4 burst rules (docs/performance-model.md, "AXI and Vitis HLS rules"): a burst has 1–256 beats
//! and never crosses a 4 KiB boundary, so at 64-byte beats it has at most 64 beats.
//!
//! [`split`] cuts a contiguous transfer into the longest legal bursts (for structures
//! written by hand, e.g. a row of a planned kernel); [`check`] rejects burst lengths
//! no AXI master can issue (exact counts always pass it, since the emulated ports
//! abort on an illegal burst).

use crate::params::Params;

/// The longest legal burst, in beats, at `beat_bytes` bytes per beat:
/// `min(256, 4096 / beat_bytes)` with the parameters' limits (at least 1).
pub fn max_burst_beats(beat_bytes: u64, p: &Params) -> u64 {
    (p.axi_boundary_bytes / beat_bytes.max(1)).min(p.axi_max_burst_beats).max(1)
}

/// Splits a transfer of `beats` beats that starts `offset_bytes` after a 4 KiB
/// aligned base (a multiple of `beat_bytes`) into the longest legal bursts, in order:
/// each burst ends at the transfer's end, after 256 beats, or at the next 4 KiB
/// boundary, whichever comes first.
pub fn split(offset_bytes: u64, beats: u64, beat_bytes: u64, p: &Params) -> Vec<u64> {
    let beat_bytes = beat_bytes.max(1);
    let boundary_beats = (p.axi_boundary_bytes / beat_bytes).max(1);
    let mut word = offset_bytes / beat_bytes;
    let mut left = beats;
    let mut out = Vec::new();
    while left > 0 {
        let to_boundary = boundary_beats - word % boundary_beats;
        let n = left.min(to_boundary).min(p.axi_max_burst_beats);
        out.push(n);
        word += n;
        left -= n;
    }
    out
}

/// Whether a burst of `beats` beats of `beat_bytes` bytes is legal: 1–256 beats and at
/// most 4 KiB (a longer one must cross a 4 KiB boundary). `Err` says why not.
pub fn check(beats: u64, beat_bytes: u64, p: &Params) -> Result<(), String> {
    if beats == 0 || beats > p.axi_max_burst_beats {
        return Err(format!("a burst of {beats} beats (AXI4 allows 1-{})", p.axi_max_burst_beats));
    }
    if beats * beat_bytes > p.axi_boundary_bytes {
        return Err(format!(
            "a burst of {beats} beats of {beat_bytes} B crosses a {} B boundary (at most {} beats)",
            p.axi_boundary_bytes,
            max_burst_beats(beat_bytes, p)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    const P: Params = Params::VCU118;

    #[test]
    fn limits_by_beat_width() {
        // 4 KiB / 64 B = 64 beats; 4 KiB / 4 B = 1024 > 256.
        assert_eq!(max_burst_beats(64, &P), 64);
        assert_eq!(max_burst_beats(32, &P), 128);
        assert_eq!(max_burst_beats(16, &P), 256);
        assert_eq!(max_burst_beats(4, &P), 256);
    }

    #[test]
    fn a_1d_tile_row_is_split_at_the_4k_boundary() {
        // 1040 floats at 16 floats per beat = 65 beats of 64 B.
        assert_eq!(split(0, 65, 64, &P), vec![64, 1]);
        // Starting 63 beats into a 4 KiB page: 1 beat, then a full page.
        assert_eq!(split(63 * 64, 65, 64, &P), vec![1, 64]);
        // The same row as single floats: 256-beat limit, the page holds 1024.
        assert_eq!(split(0, 1040, 4, &P), vec![256, 256, 256, 256, 16]);
        assert_eq!(split(0, 0, 64, &P), Vec::<u64>::new());
    }

    #[test]
    fn illegal_bursts_are_rejected() {
        assert!(check(64, 64, &P).is_ok());
        assert!(check(1, 4, &P).is_ok());
        assert!(check(65, 64, &P).unwrap_err().contains("at most 64 beats"));
        assert!(check(257, 4, &P).unwrap_err().contains("1-256"));
        assert!(check(0, 4, &P).is_err());
    }
}
