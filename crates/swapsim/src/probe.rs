//! Measuring a kernel into a validation case (`swapsim probe`): what the kernel's counters
//! say about a run ([`measure`]) and the case written from the runs ([`case`]), in the
//! format `validate` reads. Running the workload and setting the machine up are the
//! command's.

pub mod case;
pub mod measure;
#[cfg(test)]
pub(crate) mod testdir;
