//! The Prometheus text exposition format, version 0.0.4: what `GET
//! /metrics` returns.
//!
//! A scrape is a sequence of metric *families*. Each family is written as
//! a `# HELP` line, a `# TYPE` line and its samples, one per line:
//!
//! ```text
//! # HELP oxflow_port_rx_packets_total Packets received on the port.
//! # TYPE oxflow_port_rx_packets_total counter
//! oxflow_port_rx_packets_total{port="1",name="veth1"} 42
//! ```
//!
//! [`Exposition`] is a string being written in that order: a family is
//! opened with [`Exposition::family`] and its samples follow with
//! [`Exposition::sample`]. Families must not repeat (the format allows each
//! name once); the caller opens each once. Label values and help text are
//! escaped here (backslash, double quote and newline in label values;
//! backslash and newline in help text).

use std::fmt::Write;

/// The HTTP Content-Type of the format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The kind of a metric family (`# TYPE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (reset at restart); the name ends in `_total`.
    Counter,
    /// Goes up and down.
    Gauge,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// A text exposition being written (module comment).
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
}

impl Exposition {
    pub fn new() -> Self {
        Self::default()
    }

    /// Opens the family `name` (HELP and TYPE lines); its samples follow.
    pub fn family(&mut self, name: &str, kind: Kind, help: &str) -> &mut Self {
        let _ = writeln!(
            self.out,
            "# HELP {name} {}\n# TYPE {name} {}",
            escape_help(help),
            kind.as_str()
        );
        self
    }

    /// One sample of the family opened last: `name{labels} value`.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) -> &mut Self {
        self.out.push_str(name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (k, v)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{k}=\"{}\"", escape_label(v));
            }
            self.out.push('}');
        }
        self.out.push(' ');
        self.out.push_str(&format_value(value));
        self.out.push('\n');
        self
    }

    /// A family with a single unlabelled sample.
    pub fn single(&mut self, name: &str, kind: Kind, help: &str, value: f64) -> &mut Self {
        self.family(name, kind, help).sample(name, &[], value)
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.out
    }
}

/// A counter value as a float sample. Counters above 2^53 lose their low
/// bits, as every Prometheus sample does (samples are float64).
pub fn count(v: u64) -> f64 {
    v as f64
}

/// Label value escaping: `\` -> `\\`, `"` -> `\"`, newline -> `\n`.
pub fn escape_label(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// HELP text escaping: `\` -> `\\`, newline -> `\n`.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value as the format writes it (integers without a fraction,
/// `+Inf`, `-Inf`, `NaN`).
fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_help_type_and_samples() {
        let mut e = Exposition::new();
        e.family("oxflow_port_rx_packets_total", Kind::Counter, "Packets.")
            .sample(
                "oxflow_port_rx_packets_total",
                &[("port", "1"), ("name", "veth1")],
                42.0,
            )
            .sample(
                "oxflow_port_rx_packets_total",
                &[("port", "2"), ("name", "veth2")],
                0.0,
            );
        e.single("oxflow_up", Kind::Gauge, "Up.", 1.0);
        assert_eq!(
            e.finish(),
            "# HELP oxflow_port_rx_packets_total Packets.\n\
             # TYPE oxflow_port_rx_packets_total counter\n\
             oxflow_port_rx_packets_total{port=\"1\",name=\"veth1\"} 42\n\
             oxflow_port_rx_packets_total{port=\"2\",name=\"veth2\"} 0\n\
             # HELP oxflow_up Up.\n\
             # TYPE oxflow_up gauge\n\
             oxflow_up 1\n"
        );
    }

    #[test]
    fn label_values_and_help_are_escaped() {
        assert_eq!(escape_label(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label("x\ny"), "x\\ny");
        assert_eq!(escape_label("plain é"), "plain é");
        let mut e = Exposition::new();
        e.family("m", Kind::Gauge, "line\\one\ntwo")
            .sample("m", &[("name", "q\"\\\n")], 1.5);
        assert_eq!(
            e.finish(),
            "# HELP m line\\\\one\\ntwo\n# TYPE m gauge\nm{name=\"q\\\"\\\\\\n\"} 1.5\n"
        );
    }

    #[test]
    fn values_are_written_as_the_format_wants() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(12345678.0), "12345678");
        assert_eq!(format_value(0.25), "0.25");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::INFINITY), "+Inf");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
        assert_eq!(format_value(count(u64::MAX)), "18446744073709552000");
    }
}
