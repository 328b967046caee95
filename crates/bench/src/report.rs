//! Writing a run's folder and comparing two of them.
//!
//! A run folder holds `results.json` (metadata + [`Results`]), one
//! `series-NAME.csv` per series and `table-NAME.csv` per table, one
//! `NAME.svg` per plot (plotters, SVG backend only) and `index.html`
//! showing the plots, tables, scalars, parameters and machine facts.
//! `compare A B` reads two such folders and draws each plot of A with the
//! same-named series of B overlaid, plus a table of scalars side by side.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{BenchError, Context, Result};
use crate::results::{PlotSpec, Results, Series, Table};

/// Everything about a run except its results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Meta {
    pub experiment: String,
    pub description: String,
    pub switch: String,
    pub switch_version: String,
    pub switch_pid: Option<u32>,
    /// name -> (value, source).
    pub params: BTreeMap<String, (String, String)>,
    pub machine: BTreeMap<String, String>,
    pub started_unix_ns: u64,
    pub duration_s: f64,
    pub topology: serde_json::Value,
}

/// The `results.json` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunDoc {
    pub meta: Meta,
    pub results: Results,
}

fn cmd_line(prog: &str, args: &[&str]) -> Option<String> {
    let o = std::process::Command::new(prog).args(args).output().ok()?;
    String::from_utf8(o.stdout)
        .ok()
        .and_then(|s| s.lines().next().map(|l| l.trim().to_string()))
}

/// CPU model, cores, kernel, tool versions.
pub fn machine_facts() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    m.insert("cpu_model".into(), model);
    m.insert("cores".into(), crate::switch::cores().to_string());
    m.insert(
        "kernel".into(),
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
    );
    m.insert("bench_version".into(), env!("CARGO_PKG_VERSION").into());
    if let Some(v) = cmd_line("ovs-vswitchd", &["--version"]) {
        m.insert("ovs_version".into(), v);
    }
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        m.insert("hostname".into(), h.trim().into());
    }
    if let Ok(l) = std::fs::read_to_string("/proc/loadavg") {
        m.insert("loadavg_at_end".into(), l.trim().into());
    }
    m
}

/// A file-name-safe version of `s`.
fn stem(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn csv_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) if s.contains(',') || s.contains('"') => {
            format!("\"{}\"", s.replace('"', "\"\""))
        }
        serde_json::Value::String(s) => s.clone(),
        // No value (a column a row does not have): an empty cell.
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One drawn curve: label and points.
struct Curve<'a> {
    label: String,
    points: &'a [[f64; 2]],
}

/// Draw `curves` per `spec` into `path`.
fn draw(path: &Path, spec: &PlotSpec, curves: &[Curve<'_>]) -> Result<()> {
    let usable = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
    let pts: Vec<[f64; 2]> = curves
        .iter()
        .flat_map(|c| c.points.iter().copied())
        .filter(|p| usable(p[0], spec.log_x) && usable(p[1], spec.log_y))
        .collect();
    let range = |i: usize, log: bool| -> (f64, f64) {
        let lo = pts.iter().map(|p| p[i]).fold(f64::INFINITY, f64::min);
        let hi = pts.iter().map(|p| p[i]).fold(f64::NEG_INFINITY, f64::max);
        if !lo.is_finite() {
            return if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            (lo / 1.5, hi * 1.5)
        } else {
            let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.05).max(1e-9);
            (
                (lo - pad).min(if lo >= 0.0 { 0.0 } else { lo - pad }),
                hi + pad,
            )
        }
    };
    let (x0, x1) = range(0, spec.log_x);
    let (y0, y1) = range(1, spec.log_y);
    let root = SVGBackend::new(path, (720, 480)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| BenchError(format!("plot {}: {e}", path.display()));
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut b = ChartBuilder::on(&root);
    b.caption(&spec.title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70);
    macro_rules! body {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc(spec.x_label.as_str())
                .y_desc(spec.y_label.as_str())
                .draw()
                .map_err(|x| e(&x))?;
            for (i, c) in curves.iter().enumerate() {
                let color = Palette99::pick(i).to_rgba();
                let data: Vec<(f64, f64)> = c
                    .points
                    .iter()
                    .filter(|p| usable(p[0], spec.log_x) && usable(p[1], spec.log_y))
                    .map(|p| (p[0], p[1]))
                    .collect();
                if !spec.points_only {
                    chart
                        .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
                        .map_err(|x| e(&x))?
                        .label(c.label.clone())
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                        });
                    chart
                        .draw_series(data.iter().map(|&p| Circle::new(p, 3, color.filled())))
                        .map_err(|x| e(&x))?;
                } else {
                    chart
                        .draw_series(data.iter().map(|&p| Circle::new(p, 2, color.filled())))
                        .map_err(|x| e(&x))?
                        .label(c.label.clone())
                        .legend(move |(x, y)| Circle::new((x + 8, y), 3, color.filled()));
                }
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(|x| e(&x))?;
        }};
    }
    match (spec.log_x, spec.log_y) {
        (false, false) => body!(b.build_cartesian_2d(x0..x1, y0..y1).map_err(|x| e(&x))?),
        (true, false) => body!(b
            .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
            .map_err(|x| e(&x))?),
        (false, true) => body!(b
            .build_cartesian_2d(x0..x1, (y0..y1).log_scale())
            .map_err(|x| e(&x))?),
        (true, true) => body!(b
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())
            .map_err(|x| e(&x))?),
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

fn write_csvs(out: &Path, r: &Results) -> Result<()> {
    for s in &r.series {
        let mut t = format!(
            "{},{}\n",
            s.x_label.replace(',', ";"),
            s.y_label.replace(',', ";")
        );
        for p in &s.points {
            let _ = writeln!(t, "{},{}", p[0], p[1]);
        }
        let f = out.join(format!("series-{}.csv", stem(&s.name)));
        std::fs::write(&f, t).ctx(f.display())?;
    }
    for tb in &r.tables {
        let mut t = tb.columns.join(",") + "\n";
        for row in &tb.rows {
            t += &row.iter().map(csv_cell).collect::<Vec<_>>().join(",");
            t.push('\n');
        }
        let f = out.join(format!("table-{}.csv", stem(&tb.name)));
        std::fs::write(&f, t).ctx(f.display())?;
    }
    Ok(())
}

/// A results table as an HTML heading `title` and table.
fn table_section(t: &Table, title: &str) -> String {
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| row.iter().map(csv_cell).collect())
        .collect();
    format!("<h2>{}</h2>{}", esc(title), html_table(&t.columns, &rows))
}

fn html_table(columns: &[String], rows: &[Vec<String>]) -> String {
    let mut h = String::from("<table><tr>");
    for c in columns {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h += "</tr>";
    for r in rows {
        h += "<tr>";
        for c in r {
            let _ = write!(h, "<td>{}</td>", esc(c));
        }
        h += "</tr>";
    }
    h + "</table>"
}

const CSS: &str = "body{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
th{background:#eee}img{max-width:720px;display:block;margin:1em 0}.note{background:#ffd;padding:.3em}";

fn fmt_num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v == v.trunc() && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// Write results.json, CSVs, SVGs and index.html into `out`.
pub fn write(out: &Path, meta: &Meta, r: &Results) -> Result<()> {
    let doc = RunDoc {
        meta: meta.clone(),
        results: r.clone(),
    };
    let json = serde_json::to_string_pretty(&doc).ctx("encoding results.json")?;
    std::fs::write(out.join("results.json"), json).ctx("writing results.json")?;
    write_csvs(out, r)?;
    let mut figs = Vec::new();
    for p in &r.plots {
        let curves: Vec<Curve<'_>> = p
            .series
            .iter()
            .filter_map(|n| r.get_series(n))
            .map(|s: &Series| Curve {
                label: s.name.clone(),
                points: &s.points,
            })
            .collect();
        let file = format!("{}.svg", stem(&p.name));
        draw(&out.join(&file), p, &curves)?;
        figs.push(file);
    }
    let mut h = format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{0} on {1}</title><style>{CSS}</style></head><body>\
         <h1>{0} on {1}</h1><p>{2}</p>",
        esc(&meta.experiment),
        esc(&meta.switch),
        esc(&meta.description)
    );
    for n in &r.notes {
        let _ = write!(h, "<p class=note>{}</p>", esc(n));
    }
    for f in &figs {
        let _ = write!(h, "<img src=\"{f}\" alt=\"{f}\">");
    }
    for t in &r.tables {
        h += &table_section(t, &t.name);
    }
    if !r.scalars.is_empty() {
        let rows: Vec<Vec<String>> = r
            .scalars
            .iter()
            .map(|s| vec![s.name.clone(), fmt_num(s.value), s.unit.clone()])
            .collect();
        h += "<h2>Scalars</h2>";
        h += &html_table(&["name".into(), "value".into(), "unit".into()], &rows);
    }
    let prow: Vec<Vec<String>> = meta
        .params
        .iter()
        .map(|(k, (v, f))| vec![k.clone(), v.clone(), f.clone()])
        .collect();
    h += "<h2>Parameters</h2>";
    h += &html_table(&["name".into(), "value".into(), "from".into()], &prow);
    let mut mrow: Vec<Vec<String>> = meta
        .machine
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    mrow.push(vec!["switch_version".into(), meta.switch_version.clone()]);
    mrow.push(vec!["duration_s".into(), format!("{:.1}", meta.duration_s)]);
    h += "<h2>Machine</h2>";
    h += &html_table(&["fact".into(), "value".into()], &mrow);
    h += "<p>Raw data: <a href=results.json>results.json</a> and the CSV files beside it.</p></body></html>\n";
    std::fs::write(out.join("index.html"), h).ctx("writing index.html")?;
    Ok(())
}

/// Read a run folder's results.json.
pub fn load(dir: &Path) -> Result<RunDoc> {
    let f = dir.join("results.json");
    let text = std::fs::read_to_string(&f).ctx(f.display())?;
    serde_json::from_str(&text).ctx(f.display())
}

/// Overlay two run folders into `out`.
pub fn compare(a: &Path, b: &Path, out: &Path) -> Result<()> {
    let (da, db) = (load(a)?, load(b)?);
    std::fs::create_dir_all(out).ctx(out.display())?;
    let la = format!("{} ({})", da.meta.switch, a.display());
    let lb = format!("{} ({})", db.meta.switch, b.display());
    let (ta, tb) = (da.meta.switch.clone(), db.meta.switch.clone());
    let mut figs = Vec::new();
    for p in &da.results.plots {
        let mut curves = Vec::new();
        for n in &p.series {
            if let Some(s) = da.results.get_series(n) {
                curves.push(Curve {
                    label: format!("{ta}: {n}"),
                    points: &s.points,
                });
            }
            if let Some(s) = db.results.get_series(n) {
                curves.push(Curve {
                    label: format!("{tb}: {n}"),
                    points: &s.points,
                });
            }
        }
        let file = format!("{}.svg", stem(&p.name));
        let mut spec = p.clone();
        spec.title = format!("{} — {ta} vs {tb}", p.title);
        draw(&out.join(&file), &spec, &curves)?;
        figs.push(file);
    }
    let mut rows = Vec::new();
    for s in &da.results.scalars {
        let other = db.results.get_scalar(&s.name);
        let ratio = other.map(|o| o / s.value);
        rows.push(vec![
            s.name.clone(),
            fmt_num(s.value),
            other.map(fmt_num).unwrap_or_default(),
            ratio.map(|r| format!("{r:.3}")).unwrap_or_default(),
            s.unit.clone(),
        ]);
    }
    let cols = vec![
        "scalar".to_string(),
        format!("A: {ta}"),
        format!("B: {tb}"),
        "B/A".into(),
        "unit".into(),
    ];
    let mut csv = cols.join(",") + "\n";
    for r in &rows {
        csv += &r.join(",");
        csv.push('\n');
    }
    std::fs::write(out.join("compare.csv"), csv).ctx("writing compare.csv")?;
    let mut h = format!(
        "<!doctype html><html><head><meta charset=utf-8><title>compare</title><style>{CSS}</style></head><body>\
         <h1>{} : {} vs {}</h1><p>A = {}<br>B = {}</p>",
        esc(&da.meta.experiment),
        esc(&ta),
        esc(&tb),
        esc(&la),
        esc(&lb)
    );
    for f in &figs {
        let _ = write!(h, "<img src=\"{f}\" alt=\"{f}\">");
    }
    h += "<h2>Scalars</h2>";
    h += &html_table(&cols, &rows);
    // Tables of both runs, one after the other.
    for t in &da.results.tables {
        for (who, doc) in [(&ta, &da), (&tb, &db)] {
            if let Some(t) = doc.results.tables.iter().find(|x| x.name == t.name) {
                h += &table_section(t, &format!("{} ({})", t.name, who));
            }
        }
    }
    h += "</body></html>\n";
    std::fs::write(out.join("index.html"), h).ctx("writing index.html")?;
    Ok(())
}
