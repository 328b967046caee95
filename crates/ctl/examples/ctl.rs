//! `oxflow ctl` without the rest of oxflow (a quick build to talk to
//! another switch, e.g. the BEBA reference switch, docs/beba.md):
//! `cargo run -q -p ctl --example ctl -- COMMAND TARGET ARGS...`.

fn main() {
    std::process::exit(ctl::commands::main_with_args(
        std::env::args().skip(1).collect(),
    ));
}
