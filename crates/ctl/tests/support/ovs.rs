//! A private Open vSwitch instance for client tests: the launcher of the
//! bench crate (`--switch ovs`), included by path so there is one copy of
//! that knowledge and `ctl` does not depend on `bench`. `Ovs::start()` runs
//! ovs-vswitchd in a private network namespace with a temporary directory.

#[path = "../../../bench/src/ovs.rs"]
mod imp;

#[allow(unused_imports)]
pub use imp::*;
