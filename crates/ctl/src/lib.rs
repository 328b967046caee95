//! `ctl` — an ovs-ofctl-like OpenFlow 1.3 client that works against any
//! OpenFlow 1.3 switch (oxflow, Open vSwitch).
//!
//! - [`flow`], [`actions`], [`group`], [`meter`]: the ovs-ofctl text syntax,
//!   parsed into `ofp` messages and printed back (`parse(print(x)) == x`);
//!   [`fields`] is the registry of match/set-field names (the one table to
//!   extend for a new field), [`lex`] the tokenizer, and [`SyntaxError`]
//!   renders errors with a caret under the bad token.
//! - [`print`](mod@print): ovs-ofctl style printers for replies and async messages.
//! - [`client`]: a blocking OpenFlow 1.3 connection (`tcp:IP[:PORT]`,
//!   `unix:PATH`) with HELLO negotiation, multipart reassembly and barriers.
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
pub mod client;
pub mod commands;
pub mod fields;
pub mod flow;
pub mod group;
pub mod lex;
pub mod meter;
pub mod port_admin;
pub mod print;
pub mod syntax_error;

pub use commands::main_with_args;
pub use syntax_error::SyntaxError;
