//! `swapsim-forward`: the swapsim command line, with this crate's policies registered.

use std::process::ExitCode;

fn main() -> ExitCode {
    match swapsim_outside_policy::registry() {
        Ok(registry) => swapsim_cli::main_with(registry),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
