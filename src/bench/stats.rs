//! The statistics of Node's `benchmark/compare.R`, for two samples of
//! rates (operations per second, higher is better) of an old and a new
//! binary: the improvement of the new mean over the old, Welch's two-sample
//! t-test (`t.test(rate ~ binary)`, unequal variances) and its confidence
//! stars, and the accuracy of the comparison at 95, 99 and 99.9 %:
//! `qt(1 - risk / 2, df) * sqrt(var_old / n_old + var_new / n_new) /
//! mean_old`, as a share of the old mean. Student's t is `statrs`'s.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's two-sample t-test of `x` against `y` (R's `t.test(x, y)`):
/// `t = (mean(x) - mean(y)) / se`, the Welch–Satterthwaite degrees of
/// freedom, the two-sided p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Welch {
    /// The t statistic.
    pub t: f64,
    /// The degrees of freedom (not an integer).
    pub df: f64,
    /// The two-sided p-value.
    pub p: f64,
    /// The standard error of the difference of the means.
    pub se: f64,
}

/// The mean and the sample variance (`n - 1` in the denominator).
fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// [`Welch`] for `x` against `y`; `None` when a sample has fewer than two
/// values or both have no variance (R refuses those too: "not enough
/// observations", "data are essentially constant").
pub fn welch(x: &[f64], y: &[f64]) -> Option<Welch> {
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let ((mx, vx), (my, vy)) = (mean_var(x), mean_var(y));
    let (sx, sy) = (vx / x.len() as f64, vy / y.len() as f64);
    let se2 = sx + sy;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let df = se2 * se2 / (sx * sx / (x.len() as f64 - 1.0) + sy * sy / (y.len() as f64 - 1.0));
    let se = se2.sqrt();
    let t = (mx - my) / se;
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * dist.cdf(-t.abs());
    Some(Welch { t, df, p, se })
}

/// Student's t quantile `qt(q, df)`; `None` for a `df` that is not
/// positive and finite, or `q` outside (0, 1).
pub fn qt(q: f64, df: f64) -> Option<f64> {
    if !(q > 0.0 && q < 1.0) {
        return None;
    }
    StudentsT::new(0.0, 1.0, df).ok().map(|d| d.inverse_cdf(q))
}

/// compare.R's stars for a p-value: `***` below 0.001, `**` below 0.01,
/// `*` below 0.05, else none.
pub fn stars(p: f64) -> &'static str {
    if p < 0.001 {
        "***"
    } else if p < 0.01 {
        "**"
    } else if p < 0.05 {
        "*"
    } else {
        ""
    }
}

/// One row of compare.R's table: the new binary against the old.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// The old binary's mean rate.
    pub old_mean: f64,
    /// The new binary's mean rate.
    pub new_mean: f64,
    /// `(new_mean - old_mean) / old_mean * 100`.
    pub improvement_percent: f64,
    /// Welch's test of new against old, if the samples allow one.
    pub test: Option<Welch>,
    /// The accuracy at 95, 99 and 99.9 % confidence, in percent of the old
    /// mean: a difference of the means smaller than this is within the
    /// noise at that confidence. `None` without a test.
    pub accuracy_percent: Option<[f64; 3]>,
}

impl Comparison {
    /// The stars of [`Comparison::test`]'s p-value (none without a test).
    pub fn stars(&self) -> &'static str {
        self.test.map_or("", |w| stars(w.p))
    }
}

/// Compare the rates of the new binary with the old one's, as compare.R
/// does (both samples non-empty; `None` otherwise).
pub fn compare(old: &[f64], new: &[f64]) -> Option<Comparison> {
    if old.is_empty() || new.is_empty() {
        return None;
    }
    let old_mean = mean_var(old).0;
    let new_mean = mean_var(new).0;
    let test = welch(new, old);
    let accuracy_percent = test.and_then(|w| {
        let at = |risk: f64| qt(1.0 - risk / 2.0, w.df).map(|q| q * w.se / old_mean * 100.0);
        Some([at(0.05)?, at(0.01)?, at(0.001)?])
    });
    Some(Comparison {
        old_mean,
        new_mean,
        improvement_percent: (new_mean - old_mean) / old_mean * 100.0,
        test,
        accuracy_percent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R's `sleep` data set (the extra hours of sleep of 10 patients under
    /// two drugs), the example of R's `t.test` help page.
    const SLEEP_1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
    const SLEEP_2: [f64; 10] = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance
    }

    /// `t.test(extra ~ group, data = sleep)` in R: "t = -1.8608, df =
    /// 17.776, p-value = 0.07939"; SciPy's `ttest_ind(g1, g2,
    /// equal_var=False)` gives t = -1.8608134674868526, p =
    /// 0.0793941401873583, df = 17.776473516178488.
    #[test]
    fn welch_matches_r_and_scipy_on_the_sleep_data() {
        let w = welch(&SLEEP_1, &SLEEP_2).expect("a test");
        assert!(close(w.t, -1.860_813_467_486_852_6, 1e-12), "{w:?}");
        assert!(close(w.df, 17.776_473_516_178_488, 1e-9), "{w:?}");
        assert!(close(w.p, 0.079_394_140_187_358_3, 1e-9), "{w:?}");
        // The other way round: the same test, t negated.
        let back = welch(&SLEEP_2, &SLEEP_1).expect("a test");
        assert!(close(back.t, -w.t, 1e-12) && close(back.p, w.p, 1e-12));
    }

    /// Student's t quantiles from R's `qt` (SciPy's `t.ppf` gives the same):
    /// `qt(0.975, 10)` = 2.228138851986274, `qt(0.995, 10)` =
    /// 3.16927267261695, `qt(0.9995, 10)` = 4.586893858702708; at the sleep
    /// data's df 17.776473516178488: 2.1028172460050736, 2.8826508331801772,
    /// 3.930874085087601.
    #[test]
    fn quantiles_match_r_and_scipy() {
        let cases = [
            (0.975, 10.0, 2.228_138_851_986_274),
            (0.995, 10.0, 3.169_272_672_616_95),
            (0.9995, 10.0, 4.586_893_858_702_708),
            (0.975, 17.776_473_516_178_488, 2.102_817_246_005_073_6),
            (0.995, 17.776_473_516_178_488, 2.882_650_833_180_177_2),
            (0.9995, 17.776_473_516_178_488, 3.930_874_085_087_601),
        ];
        // statrs inverts its cdf numerically: within 1e-8 of R's value,
        // relatively (2e-8 absolute at the 99.9 % quantile of df 17.8), far
        // below what an accuracy in percent shows.
        for (q, df, want) in cases {
            let got = qt(q, df).expect("a quantile");
            assert!(
                close(got, want, 1e-8 * want),
                "qt({q}, {df}) = {got}, R says {want}"
            );
        }
        assert_eq!(qt(1.0, 10.0), None);
        assert_eq!(qt(0.5, 0.0), None);
    }

    #[test]
    fn stars_follow_compare_r() {
        assert_eq!(stars(0.0009), "***");
        assert_eq!(stars(0.005), "**");
        assert_eq!(stars(0.04), "*");
        assert_eq!(stars(0.05), "");
        assert_eq!(stars(0.079), "");
    }

    /// The sleep data read as rates: group 2 the new binary. The
    /// improvement and the accuracy follow from the figures above: the
    /// means are 0.75 and 2.33, the standard error 0.849091 (t's
    /// denominator: 1.58 / 1.8608134674868526).
    #[test]
    fn a_comparison_of_rates() {
        let c = compare(&SLEEP_1, &SLEEP_2).expect("a comparison");
        assert!(close(c.old_mean, 0.75, 1e-12) && close(c.new_mean, 2.33, 1e-12));
        assert!(close(
            c.improvement_percent,
            (2.33 - 0.75) / 0.75 * 100.0,
            1e-9
        ));
        let w = c.test.expect("a test");
        assert!(close(w.t, 1.860_813_467_486_852_6, 1e-12), "{w:?}");
        assert_eq!(c.stars(), "");
        let se = 1.58 / 1.860_813_467_486_852_6;
        let acc = c.accuracy_percent.expect("accuracies");
        let want = [
            2.102_817_246_005_073_6 * se / 0.75 * 100.0,
            2.882_650_833_180_177_2 * se / 0.75 * 100.0,
            3.930_874_085_087_601 * se / 0.75 * 100.0,
        ];
        for (got, want) in acc.iter().zip(want) {
            assert!(close(*got, want, 1e-8 * want), "{acc:?} against {want}");
        }
        // Too few values for a test: the improvement alone.
        let one = compare(&[2.0], &[3.0]).expect("a comparison");
        assert!(close(one.improvement_percent, 50.0, 1e-12));
        assert_eq!(
            (one.test, one.accuracy_percent, one.stars()),
            (None, None, "")
        );
        assert_eq!(compare(&[], &[1.0]), None);
        // No variance at all: no test (R: "data are essentially constant").
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]), None);
    }
}
