//! Test support: a fake OpenFlow endpoint and a private Open vSwitch.
#![allow(dead_code)]

pub mod fake_switch;
pub mod ovs;

/// Runs `oxflow ctl ARGS` in-process: (exit code, stdout, stderr).
pub fn ctl(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = ctl::commands::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf8"),
        String::from_utf8(err).expect("utf8"),
    )
}
