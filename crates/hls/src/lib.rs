//! Tessera's Vitis HLS C++ generator.
//!
//! [`baseline`] emits the region's original loop nest as an HLS top function (the
//! paper's baseline: what Vitis builds from the plain code with default settings).
//! [`tiled`] emits the optimized kernel of modes `paper` and `tessera` from the
//! polyhedral optimizer's plan (step 5 of the paper: tiles, cache buffers, redirected
//! subscripts, wide bursts), in four steps: lowering the plan to the kernel's
//! structure (`tiled/lower.rs`), the resource limits (`tiled/resources.rs`), the data
//! shipment (`tiled/shipping.rs`) and printing (`tiled/print.rs`); [`paper`] is its
//! former name, kept as an alias. [`dataflow`] emits the streaming kernel beside them.
//! [`cpp`] prints IR expressions as C++ that computes exactly what the host computes:
//! every implicit conversion clang applied is an explicit cast in the output; all
//! kernels share it.

#![warn(missing_docs)]

pub mod baseline;
pub mod cpp;
pub mod dataflow;
pub mod tiled;

/// The tiled generator under its former name: `tessera_hls::paper::generate` and
/// `tessera_hls::paper::Variant` are [`tiled::generate`] and [`tiled::Variant`].
pub use tiled as paper;

/// A generated kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Top function name.
    pub name: String,
    /// The HLS C++ source (`<name>.cpp`).
    pub source: String,
    /// Emulation entry: includes the kernel as `kernel.cpp` and defines
    /// `extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports)`
    /// (see `host/include/tessera_emu_abi.h`).
    pub emu_entry: String,
    /// Region variables (indices) the kernel reaches through a second, write-only
    /// `m_axi` parameter, appended after the variables' own in this order
    /// (`tessera_ir::manifest::Manifest::write_ports`).
    pub write_ports: Vec<usize>,
    /// Arrays the kernel reaches interleaved over two banks, a second parameter for
    /// the second half of each (`tessera_ir::manifest::Manifest::interleave`).
    pub interleave: Option<tessera_ir::manifest::Interleave>,
    /// Arrays (variable indices) whose buffer size the kernel takes as a scalar
    /// parameter after every memory parameter
    /// (`tessera_ir::manifest::Manifest::size_params`).
    pub size_params: Vec<usize>,
}

/// The emulation entry of kernel `name`: `#include`s the kernel and defines
/// `extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports)`,
/// which builds the kernel's arguments from the runtime's vectors — arrays as memory
/// ports of type `port_type(var)` bound to the port descriptors (which carry the device
/// buffer and its traffic counters), scalars from their value pointers in `args`; a
/// scalar the region returns to the host is a one-element array, so a port too. The
/// write ports (`write_ports`, variable indices) are further port objects on their
/// variables' descriptors, passed after the variables. An interleaved array
/// (`interleaved`, variable indices, `tessera_ir::manifest::Interleave`): its own
/// descriptor is its first half's; the descriptor after the variables' at its position
/// in `interleaved` is its second half's, passed (after the write ports) as its
/// second-half port, and again as its second-half write port when it has a write port.
/// Last, per entry of `sizes` (variable indices), the elements of that array's device
/// buffer, from its descriptor (what a board's runtime passes as the size parameter).
pub(crate) fn emu_entry(
    region: &tessera_ir::Region,
    name: &str,
    port_type: &dyn Fn(&tessera_ir::Var) -> String,
    write_ports: &[usize],
    interleaved: &[usize],
    sizes: &[usize],
) -> String {
    use std::fmt::Write;
    use tessera_ir::VarKind;
    let mut e = String::new();
    writeln!(e, "// Emulation entry for {name}: builds the kernel's arguments from the runtime's").unwrap();
    writeln!(e, "// vectors (arrays: memory ports bound to the port descriptors, which carry the").unwrap();
    writeln!(e, "// device buffer and its traffic counters; scalars: value pointers in args).").unwrap();
    writeln!(e, "#include \"kernel.cpp\"").unwrap();
    writeln!(e).unwrap();
    // A scalar the region returns to the host is a one-element array argument.
    let by_value = |v: &tessera_ir::Var| v.kind == VarKind::Scalar && !v.writes_back();
    let has_scalars = region.vars.iter().any(by_value);
    let has_arrays = region.vars.iter().any(|v| !by_value(v));
    writeln!(
        e,
        "extern \"C\" void tessera_emu_entry(void **{}, const tessera_port_desc *{}) {{",
        if has_scalars { "args" } else { "" },
        if has_arrays { "ports" } else { "" },
    )
    .unwrap();
    let args: Vec<String> = region
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| match by_value(v) {
            true => format!("*static_cast<const {} *>(args[{i}])", v.elem.c_name()),
            false => format!("{}(ports[{i}])", port_type(v)),
        })
        .chain(tessera_ir::manifest::extra_params(write_ports, interleaved).iter().map(|p| {
            // A first half's port is on its variable's descriptor, a second half's on
            // the one after the variables' at the array's position in `interleaved`.
            let desc = match p.half {
                0 => p.arg,
                _ => region.vars.len() + interleaved.iter().position(|&j| j == p.arg).expect("an interleaved array"),
            };
            format!("{}(ports[{desc}])", port_type(&region.vars[p.arg]))
        }))
        .chain(sizes.iter().map(|&i| format!("static_cast<long>(ports[{i}].elems)")))
        .collect();
    writeln!(e, "  {name}({});", args.join(",\n    ")).unwrap();
    writeln!(e, "}}").unwrap();
    e
}
