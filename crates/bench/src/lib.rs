//! `oxflow bench`: measures any OpenFlow 1.3 switch from the outside
//! (control channel and data plane together) and draws the results.
//!
//! - [`experiment`]: the [`experiment::Experiment`] trait a measurement
//!   implements and the [`experiment::Ctx`] the framework hands it;
//!   [`experiments`]: the experiments and their registry.
//! - [`topology`] (namespaces and veths), [`control`] (the controller
//!   endpoint), [`capture`] (kernel-timestamped capture), [`generator`]
//!   (frames, bursts, paced streams), [`sampler`] (switch CPU/memory),
//!   [`frames`] (probe frames), [`flows`] (flow-mods from ovs-ofctl text).
//! - [`results`], [`stats`], [`progress`]: what experiments produce.

pub mod capture;
pub mod cli;
pub mod control;
pub mod error;
pub mod experiment;
pub mod experiments;
pub mod flows;
pub mod frames;
pub mod generator;
pub mod interrupt;
pub mod ovs;
pub mod pipeline_only;
pub mod progress;
pub mod report;
pub mod results;
mod rng;
pub mod runner;
pub mod sampler;
pub mod scaling;
pub mod stats;
pub mod switch;
pub mod topology;
pub mod windows;
pub mod workloads;

pub use cli::main_with_args;
pub use error::{BenchError, Result};
pub use experiment::{Ctx, Experiment, ParamSpec};
pub use results::Results;
