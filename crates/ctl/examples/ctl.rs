//! Run `ctl` commands from the command line: `cargo run -p ctl --example ctl -- COMMAND TARGET ARGS...`.
fn main() {
    std::process::exit(ctl::main_with_args(std::env::args().skip(1).collect()));
}
