//! Summary statistics for repeated measurements: median and spread.

/// Summary of a sample.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize, Default)]
pub struct Summary {
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    pub p05: f64,
    pub p95: f64,
}

/// Quantile `q` in [0, 1] of sorted data (linear interpolation).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Summary of `xs` (NaN fields for an empty sample; NaNs in `xs` ignored).
pub fn summarize(xs: &[f64]) -> Summary {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        return Summary {
            n: 0,
            median: f64::NAN,
            mean: f64::NAN,
            stddev: f64::NAN,
            min: f64::NAN,
            max: f64::NAN,
            p05: f64::NAN,
            p95: f64::NAN,
        };
    }
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = if n > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    } else {
        0.0
    };
    Summary {
        n,
        median: quantile(&v, 0.5),
        mean,
        stddev: var.sqrt(),
        min: v[0],
        max: v[n - 1],
        p05: quantile(&v, 0.05),
        p95: quantile(&v, 0.95),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_spread_of_known_sample() {
        let s = summarize(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.n, 5);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!((s.min, s.max), (1.0, 5.0));
        let e = summarize(&[f64::NAN]);
        assert_eq!(e.n, 0);
        assert!(e.median.is_nan());
        assert_eq!(summarize(&[1.0, 2.0]).median, 1.5);
    }
}
