//! `tessera`, the driver.
//!
//! - `tessera cc <clang arguments>` compiles and links like `clang-19 -fopenmp`, with
//!   the Tessera plugin loaded and the runtime linked (rpath set, so the binary runs
//!   from anywhere). Kernels land in `<output>.tessera/`.
//! - `tessera c++ <clang++ arguments>`: the same for C++ (clang++-19).
//! - `tessera kernel <region.ir.json>` runs the pipeline on a region the plugin dumped
//!   (no clang needed): prints the remark, or writes/prints the kernel and manifest.
//! - `tessera explain <file.c | region.ir.json>` shows the polyhedral optimizer's
//!   decisions per region (`explain.rs`).
//! - `tessera bitstream <dir.tessera | manifest.json>... --platform <xpfm>` links the
//!   program's kernels into one `.xclbin` with AMD Vitis (`bitstream.rs`, plans from `crates/flow`);
//!   with `--flow tapasco --platform vcu118` one TaPaSCo `.bit` for all of them
//!   (`bitstream_tapasco.rs`, plans from `crates/flow/src/tapasco.rs`).
//! - `tessera bench [--size paper|small] …` builds the paper's stencils, runs them on the
//!   emulated device and prints exact counts and modelled FPGA times (`bench.rs`).
//! - `tessera dse [SET] --tiles … --port-width … --modes … --banks …` sweeps those
//!   configurations over the stencils, locally or as a Slurm job array, and writes a
//!   table, JSON and a Pareto plot (`dse.rs`, Slurm submission in `slurm.rs`).
//!
//! Only this crate, the plugin glue and the runtime do I/O.

mod bench;
mod bitstream;
mod bitstream_tapasco;
mod cc;
mod dse;
mod explain;
mod slurm;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use tessera_compiler::{compile_region, Options};
use tessera_ir::Region;

#[derive(Parser)]
#[command(name = "tessera", version, about = "OpenMP target regions offloaded to FPGAs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile and link like `clang-19 -fopenmp`, with Tessera (all arguments go to clang).
    ///
    /// Tessera options are clang plugin arguments: `-fplugin-arg-tessera-mode=dataflow|tessera|paper|baseline`,
    /// `-fplugin-arg-tessera-verbose`, `-fplugin-arg-tessera-dump-ir=<dir>`,
    /// `-fplugin-arg-tessera-out-dir=<dir>`.
    #[command(disable_help_flag = true)]
    Cc {
        /// Arguments for clang.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Like `cc`, for C++: clang++-19 with Tessera.
    #[command(name = "c++", alias = "cxx", disable_help_flag = true)]
    Cxx {
        /// Arguments for clang++.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the pipeline on a dumped region IR file and show the result.
    Kernel {
        /// A `*.ir.json` file written by the plugin.
        region: PathBuf,
        /// Write the kernel files into this directory instead of printing the kernel.
        #[arg(short = 'o', long)]
        out_dir: Option<PathBuf>,
        /// Kernel flavour: dataflow (the default, as in `tessera cc`), tessera, paper or baseline.
        #[arg(long, default_value = "dataflow")]
        mode: tessera_compiler::options::Mode,
    },
    /// Show what the polyhedral optimizer decides for each target region (tiling,
    /// permutation, cache buffers) of a C/C++ file or a dumped `*.ir.json`.
    Explain(explain::ExplainArgs),
    /// Build the program's FPGA binary (.xclbin) with AMD Vitis: v++ compile per kernel,
    /// one link of all kernels, for sw_emu, hw_emu or hw (`--dry-run` prints the commands).
    Bitstream(bitstream::BitstreamArgs),
    /// Build the paper's stencils, run them on the emulated device, check bit-exactness
    /// and print exact DDR counts, modelled FPGA times and measured times.
    Bench(bench::BenchArgs),
    /// Sweep configurations (tiles x port widths x modes x banks) over the stencils:
    /// exact counts from emulation, modelled time and resources, a table, JSON and a
    /// Pareto plot; locally on all cores or as a Slurm job array (`--slurm`).
    Dse(dse::DseArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Cc { args } => cc::run(&args, cc::Language::C),
        Command::Cxx { args } => cc::run(&args, cc::Language::Cxx),
        Command::Kernel { region, out_dir, mode } => kernel(&region, out_dir.as_deref(), mode),
        Command::Explain(args) => explain::run(&args),
        Command::Bitstream(args) => bitstream::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Dse(args) => dse::run(&args),
    }
}

fn kernel(path: &std::path::Path, out_dir: Option<&std::path::Path>, mode: tessera_compiler::options::Mode) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("tessera: error: {msg}");
        ExitCode::FAILURE
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let region = match Region::from_json(&text) {
        Ok(r) => r,
        Err(e) => return fail(format!("{}: {e}", path.display())),
    };
    let out = compile_region(&region, &Options { mode, ..Options::default() });
    if let Some(r) = &out.rejection {
        println!("{}: remark: target region not offloaded: {}", r.loc, r.remark());
        return ExitCode::SUCCESS;
    }
    match out_dir {
        Some(dir) => {
            if let Err(e) = std::fs::create_dir_all(dir) {
                return fail(format!("{}: {e}", dir.display()));
            }
            for (name, contents) in &out.files {
                let p = dir.join(name);
                if let Err(e) = std::fs::write(&p, contents) {
                    return fail(format!("{}: {e}", p.display()));
                }
                println!("wrote {}", p.display());
            }
        }
        None => print!("{}", out.manifest.kernel_source),
    }
    ExitCode::SUCCESS
}
