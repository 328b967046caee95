//! Experiments (one module each) and their registry.
//!
//! To add an experiment: write `src/experiments/NAME.rs` with a type that
//! implements [`crate::experiment::Experiment`] (see that module for the
//! life cycle and what [`crate::experiment::Ctx`] offers), declare the
//! module below and add one line to [`all`]. `oxflow bench list` and
//! `oxflow bench run NAME` find it from there; names must be unique.

use crate::experiment::Experiment;

pub mod common;
pub mod control_channel;
pub mod cpu_load;
pub mod flow_insertion;
pub mod memory_floor;
pub mod pkt_mod_latency;
pub mod stats_polling;
pub mod throughput;
pub mod timestamp_floor;

/// Every experiment, in the order `oxflow bench list` shows them.
pub fn all() -> Vec<Box<dyn Experiment>> {
    vec![
        // (one line per experiment)
        Box::new(timestamp_floor::TimestampFloor::default()),
        Box::new(pkt_mod_latency::PktModLatency::default()),
        Box::new(flow_insertion::FlowInsertion::default()),
        Box::new(control_channel::ControlChannel::default()),
        Box::new(stats_polling::StatsPolling::default()),
        Box::new(cpu_load::CpuLoad::default()),
        Box::new(crate::pipeline_only::PipelineExperiment::default()),
        Box::new(memory_floor::MemoryFloor::default()),
        Box::new(throughput::Throughput::default()),
        Box::new(throughput::ThroughputRaw::default()),
    ]
}

/// The experiment called `name`, or None.
pub fn by_name(name: &str) -> Option<Box<dyn Experiment>> {
    all().into_iter().find(|e| e.name() == name)
}
