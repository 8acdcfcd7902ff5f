//! Per-compile options, parsed from the plugin's `-fplugin-arg-tessera-<key>=<value>`
//! arguments (the CLI builds the same strings).

/// Which kind of kernel to generate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The original loop nest as a Vitis HLS top function with default settings.
    Baseline,
}

impl Mode {
    /// The spelling used in options, manifests and reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Baseline => "baseline",
        }
    }
}

/// Options of one compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Kernel flavour.
    pub mode: Mode,
}

impl Default for Options {
    fn default() -> Self {
        Options { mode: Mode::Baseline }
    }
}

/// Keys the plugin itself consumes (they reach us too, and are accepted here).
const PLUGIN_KEYS: [&str; 3] = ["out-dir", "dump-ir", "verbose"];

impl Options {
    /// Parses `key=value` (or bare `key`) strings. Unknown keys and bad values are
    /// errors that name the argument as the user wrote it.
    pub fn from_plugin_args(args: &[impl AsRef<str>]) -> Result<Options, String> {
        let mut o = Options::default();
        for a in args {
            let a = a.as_ref();
            let (key, value) = a.split_once('=').unwrap_or((a, ""));
            match key {
                "mode" => {
                    o.mode = match value {
                        "baseline" => Mode::Baseline,
                        _ => {
                            return Err(format!(
                                "-fplugin-arg-tessera-mode={value}: unknown mode (this version generates: baseline)"
                            ))
                        }
                    }
                }
                k if PLUGIN_KEYS.contains(&k) => {}
                _ => {
                    return Err(format!(
                        "-fplugin-arg-tessera-{a}: unknown Tessera option (known: mode, {})",
                        PLUGIN_KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(Options::from_plugin_args(&["mode=baseline", "out-dir=/x", "verbose"]), Ok(Options::default()));
        let e = Options::from_plugin_args(&["tile=32"]).unwrap_err();
        assert!(e.contains("-fplugin-arg-tessera-tile=32: unknown Tessera option"), "{e}");
        assert!(Options::from_plugin_args(&["mode=fast"]).unwrap_err().contains("unknown mode"));
    }
}
