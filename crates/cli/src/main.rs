//! The `swapsim` binary: the command line of the `swapsim_cli` library with the built-in
//! policies only. A crate of one's own calls `swapsim_cli::main_with` with its registry
//! instead (`examples/outside-policy`).

use std::process::ExitCode;

fn main() -> ExitCode {
    swapsim_cli::main_with(swapsim::Registry::new())
}
