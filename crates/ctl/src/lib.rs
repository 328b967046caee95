//! `ctl` — an ovs-ofctl-like OpenFlow 1.3 client that works against any
//! OpenFlow 1.3 switch (oxflow, Open vSwitch).
//!
//! - [`flow`], [`actions`], [`group`], [`meter`]: the ovs-ofctl text syntax,
//!   parsed into `ofp` messages and printed back (`parse(print(x)) == x`);
//!   [`fields`] is the registry of match/set-field names (the one table to
//!   extend for a new field), [`lex`] the tokenizer, and [`SyntaxError`]
//!   renders errors with a caret under the bad token; [`beba_actions`]:
//!   BEBA's actions (`set_state(...)`, ...) in that syntax. [`flow_file`]: the
//!   lines of an `add-flows` file (leading add/modify/delete words).
//! - [`print`](mod@print): ovs-ofctl style printers for replies and async messages.
//! - [`client`]: a blocking OpenFlow 1.3 connection (`tcp:IP[:PORT]`,
//!   `ssl:IP[:PORT]` ([`tls`]), `unix:PATH`) with HELLO negotiation,
//!   multipart reassembly and barriers.
//! - [`bundle`]: `--bundle`, modifications as one atomic OpenFlow 1.3 bundle.
//! - [`state`]: `save` / `restore`, a switch's state to a file and back.
//! - [`commands`]: the commands of `oxflow ctl COMMAND TARGET [ARGS...]`.
//!
//! The `oxflow` binary mounts the client as a subcommand by handing it the
//! words after `ctl` (options included, e.g. `--strict`):
//!
//! ```no_run
//! let words: Vec<String> = std::env::args().skip(2).collect(); // after "oxflow ctl"
//! std::process::exit(ctl::main_with_args(words));
//! ```
//!
//! With clap, declare the subcommand with one trailing
//! `Vec<String>` argument (`trailing_var_arg = true, allow_hyphen_values =
//! true`) and pass it on unchanged.

pub mod actions;
pub mod beba;
pub mod beba_actions;
pub mod bundle;
pub mod client;
pub mod commands;
pub mod fields;
pub mod flexforward;
pub mod flow;
pub mod flow_file;
pub mod graph_change;
pub mod group;
pub mod lex;
pub mod meter;
pub mod monitor;
pub mod port_admin;
pub mod port_names;
pub mod print;
pub mod state;
pub mod syntax_error;
pub mod tls;

pub use commands::main_with_args;
pub use syntax_error::SyntaxError;
