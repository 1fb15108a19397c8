//! Policies kept outside swapsim's repository, and the registry that names them.
//!
//! [`ForwardReadahead`] reads the faulting swap slot and the slots after it;
//! [`CappedSwapin`] brings large folios in on a swap fault only up to 64 KiB. Neither is
//! the kernel's: they show how a crate of one's own adds policies that scenarios, `--set`
//! and `--vary` name like the built-in ones. `src/main.rs` hands [`registry`] to the
//! swapsim command line, and the binary it builds, `swapsim-forward`, is that command line
//! with these two policies.

mod capped;
mod forward;

pub use capped::CappedSwapin;
pub use forward::ForwardReadahead;

use swapsim::{PolicyContext, Registry, RegistryError};

/// A registry holding this crate's policies: `swap.readahead = "forward"` and
/// `thp.swapin = "capped-64k"`.
pub fn registry() -> Result<Registry, RegistryError> {
    let mut registry = Registry::new();
    registry
        .register_readahead("forward", |_: &PolicyContext| Box::new(ForwardReadahead))?
        .register_swapin("capped-64k", |_: &PolicyContext| Box::new(CappedSwapin))?;
    Ok(registry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use swapsim::registry::Family;

    #[test]
    fn the_registry_names_both_policies_and_refuses_them_twice() {
        let mut registry = registry().expect("the names are free");
        assert_eq!(registry.names(Family::Readahead), ["forward"]);
        assert_eq!(registry.names(Family::Swapin), ["capped-64k"]);
        let again = registry.register_readahead("forward", |_: &PolicyContext| Box::new(ForwardReadahead));
        assert_eq!(
            again.err().map(|err| err.to_string()).as_deref(),
            Some("readahead policy \"forward\" is registered twice")
        );
    }
}
