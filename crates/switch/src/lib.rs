//! `switch` — the oxflow switch daemon as a library: the OpenFlow controller
//! channel ([`channel`]) and the configuration of `oxflow run` ([`config`]).
//!
//! The channel runs on the tokio control thread and reaches the datapath only
//! through [`channel::datapath::Datapath`], behind a request queue, so the
//! workers never see a socket.

pub mod channel;
pub mod config;
pub mod daemon;
pub mod datapath;
pub mod metrics;
pub mod persist;
pub mod reload;
pub mod table_config;
pub mod trunk_config;
