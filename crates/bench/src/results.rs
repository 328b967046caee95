//! What an experiment returns: scalars, series (x/y points), tables and
//! plot specifications. The runner writes them as `results.json`, one CSV
//! per series and per table, and one SVG per plot (see [`crate::report`]).

use serde::{Deserialize, Serialize};

/// One named number, e.g. "echo_rtt_median_us".
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Scalar {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// A curve: `points` are (x, y).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Series {
    /// Unique in the run; also the CSV file stem.
    pub name: String,
    pub x_label: String,
    pub y_label: String,
    pub points: Vec<[f64; 2]>,
}

/// A table (e.g. OFLOPS Table 2); cells are JSON values.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Table {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<serde_json::Value>>,
}

/// How to draw one figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlotSpec {
    /// File stem of the SVG.
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    /// Names of the series drawn.
    pub series: Vec<String>,
    /// Draw points only (scatter) instead of lines with points.
    #[serde(default)]
    pub points_only: bool,
}

/// The results of one experiment run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Results {
    pub scalars: Vec<Scalar>,
    pub series: Vec<Series>,
    pub tables: Vec<Table>,
    pub plots: Vec<PlotSpec>,
    /// Findings worth a sentence (e.g. "barrier reply before data plane").
    pub notes: Vec<String>,
}

impl Results {
    pub fn new() -> Results {
        Results::default()
    }

    pub fn scalar(&mut self, name: &str, value: f64, unit: &str) -> &mut Self {
        self.scalars.push(Scalar {
            name: name.into(),
            value,
            unit: unit.into(),
        });
        self
    }

    pub fn series(
        &mut self,
        name: &str,
        x_label: &str,
        y_label: &str,
        points: Vec<[f64; 2]>,
    ) -> &mut Self {
        self.series.push(Series {
            name: name.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            points,
        });
        self
    }

    pub fn table(
        &mut self,
        name: &str,
        columns: &[&str],
        rows: Vec<Vec<serde_json::Value>>,
    ) -> &mut Self {
        self.tables.push(Table {
            name: name.into(),
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        });
        self
    }

    /// A plot of `series` (names) with linear or log axes.
    #[allow(clippy::too_many_arguments)]
    pub fn plot(
        &mut self,
        name: &str,
        title: &str,
        x_label: &str,
        y_label: &str,
        log_x: bool,
        log_y: bool,
        series: &[&str],
    ) -> &mut Self {
        self.plots.push(PlotSpec {
            name: name.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x,
            log_y,
            series: series.iter().map(|s| s.to_string()).collect(),
            points_only: false,
        });
        self
    }

    pub fn note(&mut self, s: impl Into<String>) -> &mut Self {
        self.notes.push(s.into());
        self
    }

    pub fn get_scalar(&self, name: &str) -> Option<f64> {
        self.scalars
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value)
    }

    pub fn get_series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// Add the summary of `xs` as scalars `PREFIX_median`, `_stddev`,
    /// `_min`, `_max`, `_n` (in `unit`).
    pub fn summary(&mut self, prefix: &str, xs: &[f64], unit: &str) -> crate::stats::Summary {
        let s = crate::stats::summarize(xs);
        self.scalar(&format!("{prefix}_median"), s.median, unit);
        self.scalar(&format!("{prefix}_stddev"), s.stddev, unit);
        self.scalar(&format!("{prefix}_min"), s.min, unit);
        self.scalar(&format!("{prefix}_max"), s.max, unit);
        self.scalar(&format!("{prefix}_n"), s.n as f64, "count");
        s
    }
}
