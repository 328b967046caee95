//! Test support: a fake OpenFlow endpoint and a private Open vSwitch.
#![allow(dead_code)]

pub mod fake_switch;
pub mod ovs;
