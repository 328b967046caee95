//! `oxflow bench`: measures any OpenFlow 1.3 switch from the outside
//! (control channel and data plane together) and draws the results.

pub mod experiments;
pub mod pipeline_only;
pub mod workloads;
