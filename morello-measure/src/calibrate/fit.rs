//! The fitting math of calibration: non-negative least squares in relative error, and the
//! choice of the integer cost unit. Pure functions on numbers, tested on synthetic data.
//!
//! Each measurement `i` is a time `t_i` (seconds per invocation) and a row `a_i` of the model:
//! the model's cost of that invocation is `a_i · θ`, where `θ` are the constants being fitted
//! (kernel `fixed` and `per_unit` costs, each level's `cost_per_line`) and `a_i` counts how often
//! the model charges each constant (see `calibrate::model`). The fit is
//!
//! ```text
//! θ* = argmin_{θ >= 0}  Σ_i ((a_i · θ - t_i) / t_i)^2
//! ```
//!
//! a least-squares fit of relative errors (a 10% error on a 1 ns kernel weighs as much as a 10%
//! error on a 100 ns stream), with every constant non-negative, solved by Lawson and Hanson's
//! active-set algorithm ([`nnls`]). Columns no measurement touches are left out and reported as
//! unfitted. The seconds are then turned into integer cost units with one scale `s` (units per
//! second): `round(s θ*_j)`. Only the ratios of costs decide which implementation is cheapest,
//! so `s` only sets the resolution; [`units_per_second`] picks it so that a reference constant
//! (the per-vector cost of a broadcast FMA) is `resolution` units.

/// Why a fit failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The rows and the measurements disagree in number, a row has the wrong width, or a
    /// measurement is not a positive finite number (the caller's fault).
    #[error("invalid fitting problem: {0}")]
    Invalid(String),
}

/// A linear least-squares problem `min Σ_i w_i^2 (a_i · x - b_i)^2` over `x >= 0`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Problem {
    /// One row of coefficients per observation, all of the same width.
    pub rows: Vec<Vec<f64>>,
    /// The observed values.
    pub observed: Vec<f64>,
}

impl Problem {
    /// The number of unknowns (the width of the rows).
    pub fn unknowns(&self) -> usize {
        self.rows.first().map_or(0, Vec::len)
    }

    /// Adds one observation.
    pub fn push(&mut self, row: Vec<f64>, observed: f64) {
        self.rows.push(row);
        self.observed.push(observed);
    }

    fn check(&self) -> Result<(), FitError> {
        if self.rows.len() != self.observed.len() {
            return Err(FitError::Invalid(format!(
                "{} rows but {} observations",
                self.rows.len(),
                self.observed.len()
            )));
        }
        let width = self.unknowns();
        if let Some(i) = self.rows.iter().position(|r| r.len() != width || r.iter().any(|x| !x.is_finite())) {
            return Err(FitError::Invalid(format!(
                "row {i} has the wrong width or a non-finite coefficient"
            )));
        }
        if let Some(i) = self.observed.iter().position(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(FitError::Invalid(format!(
                "observation {i} is {}, not a positive number",
                self.observed[i]
            )));
        }
        Ok(())
    }
}

/// The result of [`fit_relative`].
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The fitted value of each unknown (0 for unknowns no row touches).
    pub values: Vec<f64>,
    /// Whether each unknown appears in some row (else its value says nothing).
    pub fitted: Vec<bool>,
    /// The model's prediction `a_i · x` for each observation.
    pub predicted: Vec<f64>,
}

impl Fit {
    /// The relative error `(predicted - observed) / observed` of each observation.
    pub fn relative_errors(&self, observed: &[f64]) -> Vec<f64> {
        self.predicted.iter().zip(observed).map(|(p, t)| (p - t) / t).collect()
    }
}

/// Fits `x >= 0` minimising the squared relative errors `Σ ((a_i · x - t_i) / t_i)^2`.
///
/// # Errors
/// [`FitError::Invalid`] for an inconsistent problem or a non-positive observation.
pub fn fit_relative(problem: &Problem) -> Result<Fit, FitError> {
    problem.check()?;
    let n = problem.unknowns();
    let fitted: Vec<bool> = (0..n).map(|j| problem.rows.iter().any(|r| r[j] != 0.0)).collect();
    let used: Vec<usize> = (0..n).filter(|&j| fitted[j]).collect();
    // Weight each row by 1 / t_i, keep only the columns some row touches.
    let rows: Vec<Vec<f64>> = problem
        .rows
        .iter()
        .zip(&problem.observed)
        .map(|(r, t)| used.iter().map(|&j| r[j] / t).collect())
        .collect();
    let ones = vec![1.0; rows.len()];
    let solution = nnls(&rows, &ones);
    let mut values = vec![0.0; n];
    for (k, &j) in used.iter().enumerate() {
        values[j] = solution[k];
    }
    let predicted = problem.rows.iter().map(|r| dot(r, &values)).collect();
    Ok(Fit { values, fitted, predicted })
}

/// Non-negative least squares: `argmin_{x >= 0} |A x - b|^2` by Lawson and Hanson's active-set
/// method (`Solving Least Squares Problems`, 1974, chapter 23). Columns are scaled to unit norm
/// first, so the tolerances are relative. `a` is row-major; a column of zeros gets 0.
pub fn nnls(a: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = a.first().map_or(0, Vec::len);
    let norms: Vec<f64> = (0..n).map(|j| a.iter().map(|r| r[j] * r[j]).sum::<f64>().sqrt()).collect();
    let scaled: Vec<Vec<f64>> = a
        .iter()
        .map(|r| r.iter().zip(&norms).map(|(x, s)| if *s > 0.0 { x / s } else { 0.0 }).collect())
        .collect();
    let tolerance = 1e-12 * (1.0 + b.iter().map(|x| x * x).sum::<f64>().sqrt());
    let mut x = vec![0.0; n];
    let mut passive = vec![false; n];
    // Each outer step frees one variable; the bound keeps a degenerate problem from cycling.
    for _ in 0..(3 * n + 10) {
        let gradient = gradient(&scaled, b, &x);
        let candidate = (0..n)
            .filter(|&j| !passive[j] && norms[j] > 0.0 && gradient[j] > tolerance)
            .max_by(|&i, &j| gradient[i].total_cmp(&gradient[j]));
        let Some(t) = candidate else { break };
        passive[t] = true;
        loop {
            let z = least_squares_on(&scaled, b, &passive);
            if (0..n).filter(|&j| passive[j]).all(|j| z[j] > 0.0) {
                x = z;
                break;
            }
            // Step from x toward z as far as feasibility allows; drop the variables that hit 0.
            let alpha = (0..n)
                .filter(|&j| passive[j] && z[j] <= 0.0)
                .map(|j| x[j] / (x[j] - z[j]))
                .fold(f64::INFINITY, f64::min);
            for j in 0..n {
                x[j] += alpha * (z[j] - x[j]);
                if passive[j] && x[j] <= 1e-15 {
                    passive[j] = false;
                    x[j] = 0.0;
                }
            }
            if !passive.iter().any(|p| *p) {
                break;
            }
        }
    }
    x.iter().zip(&norms).map(|(v, s)| if *s > 0.0 { v / s } else { 0.0 }).collect()
}

/// `Aᵀ (b - A x)`.
fn gradient(a: &[Vec<f64>], b: &[f64], x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for (row, bi) in a.iter().zip(b) {
        let residual = bi - dot(row, x);
        for j in 0..n {
            g[j] += row[j] * residual;
        }
    }
    g
}

/// The unconstrained least-squares solution over the columns marked `passive` (others 0), by
/// the normal equations with partial pivoting; a dependent column gets 0.
fn least_squares_on(a: &[Vec<f64>], b: &[f64], passive: &[bool]) -> Vec<f64> {
    let columns: Vec<usize> = (0..passive.len()).filter(|&j| passive[j]).collect();
    let m = columns.len();
    // [AᵀA | Aᵀb] over the passive columns.
    let mut system = vec![vec![0.0; m + 1]; m];
    for (row, bi) in a.iter().zip(b) {
        for (p, &i) in columns.iter().enumerate() {
            for (q, &j) in columns.iter().enumerate() {
                system[p][q] += row[i] * row[j];
            }
            system[p][m] += row[i] * bi;
        }
    }
    let solution = solve_symmetric(system);
    let mut z = vec![0.0; passive.len()];
    for (p, &j) in columns.iter().enumerate() {
        z[j] = solution[p];
    }
    z
}

/// Solves an augmented `m x (m + 1)` system by Gaussian elimination with partial pivoting;
/// pivots below a relative tolerance (dependent columns) give 0 for their unknown.
fn solve_symmetric(mut s: Vec<Vec<f64>>) -> Vec<f64> {
    let m = s.len();
    let scale = (0..m).map(|i| s[i][i].abs()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    let mut pivot_of = vec![None; m];
    let mut row = 0;
    for col in 0..m {
        let best = (row..m).max_by(|&i, &j| s[i][col].abs().total_cmp(&s[j][col].abs()));
        let Some(best) = best.filter(|&i| s[i][col].abs() > 1e-12 * scale) else { continue };
        s.swap(row, best);
        let pivot = s[row].clone();
        for (i, other) in s.iter_mut().enumerate() {
            let factor = other[col] / pivot[col];
            if i != row && factor != 0.0 {
                for (value, p) in other.iter_mut().zip(&pivot).skip(col) {
                    *value -= factor * p;
                }
            }
        }
        pivot_of[col] = Some(row);
        row += 1;
    }
    (0..m).map(|col| pivot_of[col].map_or(0.0, |r| s[r][m] / s[r][col])).collect()
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The scale (cost units per second) that makes `reference_seconds` equal to `resolution`
/// units, or `None` if the reference is not a positive time.
///
/// ```text
/// s = resolution / reference_seconds        units(θ_j) = round(s θ_j)
/// ```
///
/// With the reference being the smallest cost that matters, every rounded constant is then
/// within `1 / (2 resolution)` of its measured ratio to the reference.
pub fn units_per_second(reference_seconds: f64, resolution: u64) -> Option<f64> {
    (reference_seconds.is_finite() && reference_seconds > 0.0 && resolution > 0)
        .then(|| resolution as f64 / reference_seconds)
}

/// `round(seconds * units_per_second)` as an integer cost (negative or non-finite values give 0,
/// huge ones saturate).
pub fn to_units(seconds: f64, units_per_second: f64) -> u64 {
    let units = (seconds * units_per_second).round();
    if units.is_finite() && units > 0.0 { units.min(u64::MAX as f64) as u64 } else { 0 }
}

/// The slope and intercept of the least-squares line through `(x_i, y_i)`, both clamped to be
/// non-negative (a non-negative least-squares fit of `y = intercept + slope x`).
///
/// # Errors
/// [`FitError::Invalid`] for mismatched lengths, fewer than two points, or non-finite values.
pub fn nonnegative_line(x: &[f64], y: &[f64]) -> Result<(f64, f64), FitError> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| !v.is_finite()) {
        return Err(FitError::Invalid("a line needs at least two finite points".into()));
    }
    let rows: Vec<Vec<f64>> = x.iter().map(|&xi| vec![1.0, xi]).collect();
    let solution = nnls(&rows, y);
    Ok((solution[0], solution[1]))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rand::rngs::StdRng;
    use rand::{Rng as _, SeedableRng as _};

    use super::*;

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * (1.0 + b.abs())
    }

    #[test]
    fn exact_data_recovers_the_constants() {
        // Kernel rows (fixed, per_unit, L1 line cost) like the calibration's: a vector load of
        // v vectors over l lines costs fixed + per_unit v + c_l1 l.
        let truth = [0.3e-9, 0.25e-9, 0.1e-9, 2.0e-9];
        let mut problem = Problem::default();
        for (v, l, l2) in
            [(1.0, 1.0, 0.0), (2.0, 1.0, 0.0), (4.0, 1.0, 0.0), (4.0, 4.0, 0.0), (1.0, 3.0, 1.0)]
        {
            let row = vec![1.0, v, l, l2];
            let t = dot(&row, &truth);
            problem.push(row, t);
        }
        let fit = fit_relative(&problem).unwrap();
        for (got, want) in fit.values.iter().zip(truth) {
            assert!(close(*got, want, 1e-9), "{:?} vs {truth:?}", fit.values);
        }
        assert!(fit.relative_errors(&problem.observed).iter().all(|e| e.abs() < 1e-9));
        assert_eq!(fit.fitted, vec![true; 4]);
    }

    #[test]
    fn a_constant_that_would_be_negative_is_zero_and_the_rest_refit() {
        // y = 2 + 3x measured, but the model also has a column z that only makes things worse
        // when positive; the unconstrained optimum puts z below 0.
        let mut problem = Problem::default();
        for x in [1.0, 2.0, 3.0, 4.0] {
            problem.push(vec![1.0, x, 4.0 - x], 2.0 + 3.0 * x - 0.5 * (4.0 - x));
        }
        let fit = fit_relative(&problem).unwrap();
        assert!(fit.values.iter().all(|v| *v >= 0.0), "{:?}", fit.values);
        assert_eq!(fit.values[2], 0.0);
    }

    #[test]
    fn untouched_columns_are_reported_unfitted() {
        let mut problem = Problem::default();
        problem.push(vec![1.0, 0.0, 2.0], 5.0);
        problem.push(vec![1.0, 0.0, 1.0], 3.0);
        let fit = fit_relative(&problem).unwrap();
        assert_eq!(fit.fitted, vec![true, false, true]);
        assert!(close(fit.values[0], 1.0, 1e-9) && close(fit.values[2], 2.0, 1e-9), "{:?}", fit.values);
        assert_eq!(fit.values[1], 0.0);
    }

    #[test]
    fn noisy_data_stays_within_the_noise() {
        let mut rng = StdRng::seed_from_u64(7);
        let truth = [1.0, 0.5, 3.0, 0.0, 8.0];
        let mut problem = Problem::default();
        for _ in 0..60 {
            let row: Vec<f64> = (0..truth.len()).map(|_| (rng.random::<f64>() * 8.0).floor()).collect();
            let exact = dot(&row, &truth);
            if exact <= 0.0 {
                continue;
            }
            let noise = 1.0 + 0.04 * (rng.random::<f64>() - 0.5);
            problem.push(row, exact * noise);
        }
        let fit = fit_relative(&problem).unwrap();
        for (got, want) in fit.values.iter().zip(truth) {
            assert!((got - want).abs() < 0.1 + 0.05 * want, "{:?} vs {truth:?}", fit.values);
        }
    }

    #[test]
    fn dependent_columns_do_not_break_the_solver() {
        // Columns 0 and 1 are identical: any split of their sum fits; the sum must be right.
        let mut problem = Problem::default();
        for x in [1.0, 2.0, 5.0] {
            problem.push(vec![1.0, 1.0, x], 3.0 + 2.0 * x);
        }
        let fit = fit_relative(&problem).unwrap();
        assert!(close(fit.values[0] + fit.values[1], 3.0, 1e-6), "{:?}", fit.values);
        assert!(close(fit.values[2], 2.0, 1e-6), "{:?}", fit.values);
    }

    #[test]
    fn bad_problems_are_errors() {
        let mut problem = Problem::default();
        problem.push(vec![1.0], 0.0);
        assert!(matches!(fit_relative(&problem), Err(FitError::Invalid(_))));
        let mismatched = Problem { rows: vec![vec![1.0], vec![1.0, 2.0]], observed: vec![1.0, 1.0] };
        assert!(matches!(fit_relative(&mismatched), Err(FitError::Invalid(_))));
        assert!(nonnegative_line(&[1.0], &[1.0]).is_err());
    }

    #[test]
    fn lines_are_fitted_with_non_negative_parts() {
        let (intercept, slope) = nonnegative_line(&[1.0, 2.0, 4.0, 8.0], &[5.0, 7.0, 11.0, 19.0]).unwrap();
        assert!(close(intercept, 3.0, 1e-9) && close(slope, 2.0, 1e-9), "{intercept} {slope}");
        // A falling line is clamped: the best non-negative slope is 0, the intercept the mean.
        let (intercept, slope) = nonnegative_line(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]).unwrap();
        assert_eq!(slope, 0.0);
        assert!(close(intercept, 2.0, 1e-9), "{intercept}");
    }

    #[test]
    fn units_round_to_the_resolution() {
        let s = units_per_second(0.25e-9, 8).unwrap();
        assert_eq!(to_units(0.25e-9, s), 8);
        assert_eq!(to_units(1.0e-9, s), 32);
        assert_eq!(to_units(0.01e-9, s), 0);
        assert_eq!(to_units(-1.0, s), 0);
        assert_eq!(to_units(f64::NAN, s), 0);
        assert!(units_per_second(0.0, 8).is_none());
    }
}
