//! The data path as a graph of modules (BESS-style).
//!
//! - [`batch`]: a batch of up to 32 packets with per-packet metadata.
//! - [`metadata`]: module-declared attributes and their resolved offsets.
//! - [`module`]: the [`Module`] trait, output gates, tasks.
//! - [`registry`]: module kinds by name, arguments, the worker environment.
//! - [`graph`] (+ [`check`], [`config`]): building, validating, running and
//!   changing a graph at run time.
//! - [`tc`] + [`scheduler`]: a worker's tree of traffic classes.
//! - [`state`]: state written by packets, shared by every worker.
//! - [`runtime`]: a worker's graph and scheduler together; [`change`]:
//!   a run-time change set of both.
//! - [`modules`]: the built-in modules.
//!
//! See `README.md` in this crate for the design and how to add a module.

pub mod batch;
pub mod change;
pub mod check;
pub mod config;
pub mod graph;
pub mod metadata;
pub mod module;
pub mod modules;
pub mod registry;
pub mod runtime;
pub mod scheduler;
pub mod state;
pub mod tc;

pub use batch::{Batch, Meta, Pool, BATCH};
pub use change::{ChangeSet, ClassChange};
pub use config::{ConfigError, GraphConfig};
pub use graph::{Change, Graph, GraphError};
pub use metadata::{Access, Attr, AttrDecl, Layout};
pub use module::{Ctx, Emit, Module, Task, Usage};
pub use registry::{Args, Env, Registry, Shared};
pub use runtime::Runtime;
pub use scheduler::{Clock, FakeClock, MonoClock, Scheduler};
pub use state::StateTable;
