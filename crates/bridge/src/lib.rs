//! The cxx bridge between the clang plugin and the Rust pipeline.
//!
//! Built as a staticlib that the plugin links (see `cmake/TesseraRust.cmake` for the
//! link recipe that keeps the bundled Rust/isl symbols away from libLLVM's). Two entry
//! points: `process_region` takes a target region's IR as JSON and returns the
//! decision, the manifest to embed in the rewritten call, and the files to write next
//! to the output; `process_data` does the same for a data directive (descriptor and
//! remark, no files); `is_kernel_file_of` tells the plugin which files of the kernel
//! directory belong to its translation unit (to remove stale kernels). The plugin
//! does the I/O; everything here is a pure function of its inputs.

#![warn(missing_docs)]

#[cxx::bridge(namespace = "tessera")]
mod ffi {
    /// A file the plugin writes into the region's kernel directory.
    struct OutputFile {
        /// File name (no directory part).
        name: String,
        /// Contents.
        contents: String,
    }

    /// What Tessera decided for one target region.
    struct RegionDecision {
        /// Non-empty when the input or an option is invalid: the plugin reports a
        /// compile error with this text and leaves the region alone.
        error: String,
        /// True when a kernel was generated and the region is offloaded.
        offload: bool,
        /// Kernel name (empty when not offloaded).
        kernel: String,
        /// Manifest JSON embedded in the runtime call (also for regions that stay on
        /// the host, so the runtime can report them).
        manifest: String,
        /// When not offloaded: the remark text, `target region not offloaded: <reason>`.
        remark: String,
        /// Location of the remark (file, line, column); line 0 means the directive.
        remark_file: String,
        /// Line of the remark.
        remark_line: u32,
        /// Column of the remark.
        remark_col: u32,
        /// When offloaded with the baseline kernel although a tiled mode was asked
        /// for: the remark text, `target region offloaded with the baseline kernel:
        /// <reason>`, at the directive.
        note: String,
        /// Files to write into the kernel directory.
        files: Vec<OutputFile>,
        /// Compile-time warnings at the directive (accesses outside the mapped
        /// section whatever the scalars' values).
        warnings: Vec<String>,
    }

    /// What Tessera decided for one data directive (`target data`, `target enter
    /// data`, `target exit data`, `target update`).
    struct DataDecision {
        /// Non-empty when the IR is invalid: the plugin reports a compile error with
        /// this text and leaves the directive alone.
        error: String,
        /// True when the Tessera runtime handles the directive.
        offload: bool,
        /// Descriptor JSON embedded in the runtime call (also for directives left to
        /// the host OpenMP runtime, so the runtime can report them).
        descriptor: String,
        /// When not handled: the remark text, `'<directive>' not offloaded: <reason>`.
        remark: String,
        /// Location of the remark; line 0 means the directive.
        remark_file: String,
        /// Line of the remark.
        remark_line: u32,
        /// Column of the remark.
        remark_col: u32,
    }

    extern "Rust" {
        /// Decides and generates for one region. `options` are the plugin's
        /// `-fplugin-arg-tessera-<key>=<value>` arguments as `key=value` strings.
        fn process_region(ir_json: &str, options: &[String]) -> RegionDecision;

        /// Validates one data directive (its IR, `tessera_ir::data::DataDirective`,
        /// as JSON) and builds the runtime's descriptor.
        fn process_data(ir_json: &str) -> DataDecision;

        /// For a region or data directive (IR as JSON) whose variables the plugin
        /// cannot pass to the runtime (`reason`): the manifest (region) or
        /// descriptor (data directive) of a call without arguments that tells the
        /// runtime its footprint is unknown. Empty when the IR does not parse.
        fn opaque_directive(ir_json: &str, reason: &str) -> String;

        /// Whether `file_name` is a file that `process_region` writes for a region of
        /// the source file `source` (absolute, normalised, as the region IR's
        /// `source`): the plugin removes such files of its translation unit that it did
        /// not write again (`tessera_compiler::is_kernel_file_of`).
        fn is_kernel_file_of(source: &str, file_name: &str) -> bool;
    }
}

use ffi::{DataDecision, OutputFile, RegionDecision};
use tessera_compiler::data::compile_data;
use tessera_compiler::{compile_region, Options};
use tessera_ir::data::DataDirective;
use tessera_ir::Region;

fn error(text: String) -> RegionDecision {
    RegionDecision {
        error: text,
        offload: false,
        kernel: String::new(),
        manifest: String::new(),
        remark: String::new(),
        remark_file: String::new(),
        remark_line: 0,
        remark_col: 0,
        note: String::new(),
        files: Vec::new(),
        warnings: Vec::new(),
    }
}

/// See the bridge declaration.
pub fn process_region(ir_json: &str, options: &[String]) -> RegionDecision {
    let opts = match Options::from_plugin_args(options) {
        Ok(o) => o,
        Err(e) => return error(e),
    };
    let region = match Region::from_json(ir_json) {
        Ok(r) => r,
        Err(e) => return error(format!("internal error: the plugin produced bad region IR: {e}")),
    };
    let out = compile_region(&region, &opts);
    let (remark, loc) = match &out.rejection {
        Some(r) => (format!("target region not offloaded: {}", r.remark()), r.loc.clone()),
        None => (String::new(), Default::default()),
    };
    RegionDecision {
        error: String::new(),
        offload: out.rejection.is_none(),
        kernel: out.manifest.kernel.clone().unwrap_or_default(),
        manifest: out.manifest.to_json(),
        remark,
        remark_file: loc.file,
        remark_line: loc.line,
        remark_col: loc.col,
        note: out.fallback.map(|w| format!("target region offloaded with the baseline kernel: {w}")).unwrap_or_default(),
        files: out.files.into_iter().map(|(name, contents)| OutputFile { name, contents }).collect(),
        warnings: out
            .warnings
            .into_iter()
            .chain(out.internal.map(|e| format!("internal error (a bug in Tessera; the region is safe: {}): {e}", if offload_baseline(&out.manifest) { "it runs the baseline kernel" } else { "it runs on the host" })))
            .collect(),
    }
}

fn offload_baseline(m: &tessera_ir::manifest::Manifest) -> bool {
    m.kernel.is_some()
}

/// See the bridge declaration.
pub fn opaque_directive(ir_json: &str, reason: &str) -> String {
    if let Ok(dir) = DataDirective::from_json(ir_json) {
        return tessera_compiler::data::opaque_data(&dir, reason).map(|d| d.to_json()).unwrap_or_default();
    }
    match Region::from_json(ir_json) {
        Ok(region) => tessera_compiler::opaque_region(&region, reason).to_json(),
        Err(_) => String::new(),
    }
}

/// See the bridge declaration.
pub fn process_data(ir_json: &str) -> DataDecision {
    let mut d = DataDecision {
        error: String::new(),
        offload: false,
        descriptor: String::new(),
        remark: String::new(),
        remark_file: String::new(),
        remark_line: 0,
        remark_col: 0,
    };
    let out = DataDirective::from_json(ir_json)
        .map_err(|e| format!("internal error: the plugin produced bad data directive IR: {e}"))
        .and_then(|dir| compile_data(&dir));
    match out {
        Err(e) => d.error = e,
        Ok(out) => {
            d.offload = out.rejection.is_none();
            d.descriptor = out.desc.to_json();
            if let (Some(remark), Some(r)) = (out.remark(), &out.rejection) {
                d.remark = remark;
                d.remark_file = r.loc.file.clone();
                d.remark_line = r.loc.line;
                d.remark_col = r.loc.col;
            }
        }
    }
    d
}

/// See the bridge declaration.
pub fn is_kernel_file_of(source: &str, file_name: &str) -> bool {
    tessera_compiler::is_kernel_file_of(source, file_name)
}
