//! DDR traffic of one kernel execution per memory port: how many bursts of each length
//! it issued in each direction. The bench driver fills it from the runtime report's
//! exact counts (`read_burst_lengths`, `write_burst_lengths`, bytes ÷ beats); tests
//! build it by hand.

use crate::axi;
use crate::params::Params;
use serde::Serialize;
use std::collections::BTreeMap;

/// Burst length histogram: beats → number of bursts of that length.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Bursts(pub BTreeMap<u64, u64>);

impl Bursts {
    /// Adds `count` bursts of `beats` beats.
    pub fn add(&mut self, beats: u64, count: u64) {
        if count > 0 {
            *self.0.entry(beats).or_insert(0) += count;
        }
    }

    /// `count` repetitions of the bursts `lengths` (e.g. one row, [`axi::split`]).
    pub fn add_repeated(&mut self, lengths: &[u64], count: u64) {
        for &b in lengths {
            self.add(b, count);
        }
    }

    /// Number of bursts.
    pub fn count(&self) -> u64 {
        self.0.values().sum()
    }

    /// Number of beats.
    pub fn beats(&self) -> u64 {
        self.0.iter().map(|(b, n)| b * n).sum()
    }

    /// Σ over bursts of ⌈beats / beats_per_cycle⌉: the cycles the data channel is busy.
    pub fn beat_cycles(&self, p: &Params) -> u64 {
        self.0.iter().map(|(&b, &n)| beat_cycles(b, p) * n).sum()
    }
}

/// Cycles to move `beats` beats on one channel.
pub fn beat_cycles(beats: u64, p: &Params) -> u64 {
    (beats as f64 / p.beats_per_cycle).ceil() as u64
}

/// The traffic of one memory port (one array, one `m_axi` bundle).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    /// Array name.
    pub name: String,
    /// Bytes per beat (4 for a float port, 64 for a 512-bit port).
    pub beat_bytes: u64,
    /// Read bursts.
    pub read: Bursts,
    /// Write bursts.
    pub write: Bursts,
    /// Read bursts whose round trip was exposed (requested with no earlier read of
    /// the port in flight), as the emulated ports counted them.
    pub read_exposed: u64,
    /// Write bursts whose response was awaited with no later write in flight.
    pub write_exposed: u64,
    /// Read bursts ordered behind a write of the port: the first read a port object
    /// requested after one or more writes (AXI does not order a port's reads after its
    /// writes, so the kernel holds such a read until the write's response), as the
    /// emulated ports counted them. At most the read bursts.
    pub read_after_write: u64,
    /// The DDR bank the port is linked to (0 or 1; `banks=2` puts written arrays in 1).
    pub bank: u32,
}

/// The array a port named `name` reaches ([`Port::array`]), and whether it is the
/// second half (`tdf_b1_<a>`, `tdf_w_b1_<a>`) of an array interleaved over two banks.
pub fn port_of(name: &str) -> (&str, bool) {
    for (prefix, second_half) in [("tdf_w_b1_", true), ("tdf_b1_", true), ("tdf_w_", false)] {
        if let Some(array) = name.strip_prefix(prefix) {
            return (array, second_half);
        }
    }
    (name, false)
}

impl Port {
    /// The array the port reaches: its name without the prefix of a second port of
    /// the array — a write port `tdf_w_<a>`, the second half `tdf_b1_<a>` of an array
    /// interleaved over two banks and that half's write port `tdf_w_b1_<a>`
    /// (`tessera_ir::manifest`: `write_port_name`, `bank_port_name`,
    /// `bank_write_port_name`). A dataflow kernel's load process of an array reads
    /// through all of its ports, its store process writes through all of them.
    pub fn array(&self) -> &str {
        port_of(&self.name).0
    }

    /// A port without traffic.
    pub fn new(name: &str, beat_bytes: u64) -> Port {
        Port {
            name: name.to_string(),
            beat_bytes,
            read: Bursts::default(),
            write: Bursts::default(),
            read_exposed: 0,
            write_exposed: 0,
            read_after_write: 0,
            bank: 0,
        }
    }

    /// Bytes read (whole beats).
    pub fn read_bytes(&self) -> u64 {
        self.read.beats() * self.beat_bytes
    }

    /// Bytes written (whole beats, strobes ignored: a strobed beat occupies the bus).
    pub fn write_bytes(&self) -> u64 {
        self.write.beats() * self.beat_bytes
    }
}

/// The traffic of every port of a kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Traffic {
    /// One entry per array port.
    pub ports: Vec<Port>,
}

impl Traffic {
    /// Bytes read from DDR.
    pub fn read_bytes(&self) -> u64 {
        self.ports.iter().map(Port::read_bytes).sum()
    }

    /// Bytes written to DDR.
    pub fn write_bytes(&self) -> u64 {
        self.ports.iter().map(Port::write_bytes).sum()
    }

    /// Bytes moved in both directions.
    pub fn bytes(&self) -> u64 {
        self.read_bytes() + self.write_bytes()
    }

    /// Per DDR bank the ports use, in bank order: (bank, bytes read, bytes written).
    pub fn per_bank(&self) -> Vec<(u32, u64, u64)> {
        let mut banks: std::collections::BTreeMap<u32, (u64, u64)> = std::collections::BTreeMap::new();
        for p in &self.ports {
            let b = banks.entry(p.bank).or_default();
            b.0 += p.read_bytes();
            b.1 += p.write_bytes();
        }
        banks.into_iter().map(|(k, (r, w))| (k, r, w)).collect()
    }

    /// Bursts in both directions.
    pub fn bursts(&self) -> u64 {
        self.ports.iter().map(|p| p.read.count() + p.write.count()).sum()
    }

    /// Checks every burst against the AXI rules ([`axi::check`]).
    pub fn check(&self, p: &Params) -> Result<(), String> {
        for port in &self.ports {
            for (dir, bursts) in [("read", &port.read), ("write", &port.write)] {
                for &beats in bursts.0.keys() {
                    axi::check(beats, port.beat_bytes, p).map_err(|e| format!("port {} ({dir}): {e}", port.name))?;
                }
            }
        }
        Ok(())
    }
}
