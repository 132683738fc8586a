//! A line plot as SVG text: throughput against size on a logarithmic x axis, one line per
//! implementation, and the machine's peak as a dashed horizontal line. Written by hand (a few
//! elements), so no plotting dependency is needed.
//!
//! ```text
//! x pixel = left + (log2 x - log2 x_min) / (log2 x_max - log2 x_min) * width    (axis padded by half an octave)
//! y pixel = bottom - y / y_top * height                                          (y_top: a round number above every value)
//! ```
//!
//! A missing value breaks its line, so no segment is drawn through a size that was not measured.

use std::fmt::Write as _;

/// One line of the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name, in the legend.
    pub name: String,
    /// Its points `(x, y)`; `y` is `None` where nothing was measured. `x` must be positive.
    pub points: Vec<(f64, Option<f64>)>,
}

/// The words around the plot.
#[derive(Debug, Clone, PartialEq)]
pub struct Labels {
    /// Above the plot.
    pub title: String,
    /// Under the x axis.
    pub x: String,
    /// Beside the y axis.
    pub y: String,
}

const WIDTH: f64 = 780.0;
const HEIGHT: f64 = 470.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 600.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 410.0;

/// The colour of a series: fixed for the known implementations, from a palette otherwise.
fn colour(name: &str, index: usize) -> &'static str {
    const PALETTE: [&str; 4] = ["#8c564b", "#393b79", "#637939", "#843c39"];
    match name {
        "morello" => "#d62728",
        "naive" => "#7f7f7f",
        "openblas" => "#1f77b4",
        "blis" => "#2ca02c",
        "libxsmm" => "#9467bd",
        "gemm" => "#ff7f0e",
        "mkl" => "#17becf",
        "onednn" => "#e377c2",
        "xnnpack" => "#bcbd22",
        _ => PALETTE[index % PALETTE.len()],
    }
}

/// Escapes text for SVG content and attributes.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A round step for about six ticks up to `max`, and the top of the axis (a multiple of it).
fn y_axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / 6.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    (step, (max / step).ceil() * step)
}

/// A tick label: integers without decimals.
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 { format!("{x:.0}") } else { format!("{x}") }
}

/// The plot of `series` with an optional `peak` line.
pub fn plot(series: &[Series], peak: Option<f64>, labels: &Labels) -> String {
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0 && x.is_finite())
        .collect();
    let ys = series.iter().flat_map(|s| s.points.iter().filter_map(|p| p.1));
    let y_max = ys.chain(peak).filter(|y| y.is_finite()).fold(0.0, f64::max) * 1.05;
    let (step, y_top) = y_axis(y_max);
    let (lo, hi) = match (xs.iter().copied().reduce(f64::min), xs.iter().copied().reduce(f64::max)) {
        (Some(lo), Some(hi)) => (lo.log2() - 0.5, hi.log2() + 0.5),
        _ => (0.0, 1.0),
    };
    let px = |x: f64| LEFT + (x.log2() - lo) / (hi - lo) * (RIGHT - LEFT);
    let py = |y: f64| BOTTOM - y / y_top * (BOTTOM - TOP);

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="15">{}</text>"#,
        (LEFT + RIGHT) / 2.0,
        escape(&labels.title)
    );
    // Grid and ticks.
    let mut y = 0.0;
    while y <= y_top + step / 2.0 {
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{RIGHT}" y2="{0:.1}" stroke="#dddddd"/><text x="{1}" y="{2:.1}" text-anchor="end">{3}</text>"##,
            py(y),
            LEFT - 6.0,
            py(y) + 4.0,
            number((y / step).round() * step)
        );
        y += step;
    }
    let mut ticks = xs.clone();
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    for x in &ticks {
        let _ = writeln!(
            svg,
            r##"<line x1="{0:.1}" y1="{TOP}" x2="{0:.1}" y2="{BOTTOM}" stroke="#eeeeee"/><text x="{0:.1}" y="{1}" text-anchor="middle">{2}</text>"##,
            px(*x),
            BOTTOM + 18.0,
            number(*x)
        );
    }
    let _ = writeln!(
        svg,
        r#"<rect x="{LEFT}" y="{TOP}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        RIGHT - LEFT,
        BOTTOM - TOP
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (LEFT + RIGHT) / 2.0,
        BOTTOM + 40.0,
        escape(&labels.x)
    );
    let _ = writeln!(
        svg,
        r#"<text x="18" y="{0}" text-anchor="middle" transform="rotate(-90 18 {0})">{1}</text>"#,
        (TOP + BOTTOM) / 2.0,
        escape(&labels.y)
    );
    if xs.is_empty() {
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{}" text-anchor="middle">no sizes measured</text>"#,
            (LEFT + RIGHT) / 2.0,
            (TOP + BOTTOM) / 2.0
        );
    }

    // The peak, then one line per series.
    let mut legend_y = TOP + 10.0;
    let legend_x = RIGHT + 20.0;
    if let Some(peak) = peak.filter(|p| p.is_finite() && *p > 0.0) {
        let _ = writeln!(
            svg,
            r#"<line x1="{LEFT}" y1="{0:.1}" x2="{RIGHT}" y2="{0:.1}" stroke="black" stroke-dasharray="6 4"/>"#,
            py(peak)
        );
        let _ = writeln!(
            svg,
            r#"<line x1="{legend_x}" y1="{0}" x2="{1}" y2="{0}" stroke="black" stroke-dasharray="6 4"/><text x="{2}" y="{3}">peak {4:.1}</text>"#,
            legend_y,
            legend_x + 24.0,
            legend_x + 30.0,
            legend_y + 4.0,
            peak
        );
        legend_y += 20.0;
    }
    for (index, s) in series.iter().enumerate() {
        let colour = colour(&s.name, index);
        let name = escape(&s.name);
        let mut points: Vec<(f64, Option<f64>)> = s.points.iter().copied().filter(|p| p.0 > 0.0).collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        for run in points.split(|p| p.1.is_none()).filter(|run| run.len() > 1) {
            let coordinates: Vec<String> =
                run.iter().filter_map(|(x, y)| y.map(|y| format!("{:.1},{:.1}", px(*x), py(y)))).collect();
            let _ = writeln!(
                svg,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                coordinates.join(" ")
            );
        }
        for (x, y) in points.iter().filter_map(|(x, y)| Some((*x, (*y)?))) {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{name}, {}: {y:.1}</title></circle>"#,
                px(x),
                py(y),
                number(x)
            );
        }
        let _ = writeln!(
            svg,
            r#"<line x1="{legend_x}" y1="{0}" x2="{1}" y2="{0}" stroke="{colour}" stroke-width="2"/><text x="{2}" y="{3}">{name}</text>"#,
            legend_y,
            legend_x + 24.0,
            legend_x + 30.0,
            legend_y + 4.0
        );
        legend_y += 20.0;
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> Labels {
        Labels { title: "f32 matmul <NxNxN>".into(), x: "N".into(), y: "GFLOP/s".into() }
    }

    /// Checks that every element is closed in order (a small well-formedness check).
    fn well_formed(svg: &str) -> bool {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let Some(end) = rest[start..].find('>') else { return false };
            let tag = &rest[start + 1..start + end];
            rest = &rest[start + end + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                if stack.pop().as_deref() != Some(name) {
                    return false;
                }
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap_or("").to_string());
            }
        }
        stack.is_empty()
    }

    #[test]
    fn one_line_per_series_broken_at_missing_points_and_a_peak() {
        let series = vec![
            Series {
                name: "morello".into(),
                points: vec![(8.0, Some(40.0)), (16.0, Some(80.0)), (32.0, Some(100.0))],
            },
            Series {
                name: "openblas".into(),
                points: vec![(8.0, Some(20.0)), (16.0, None), (32.0, Some(105.0)), (64.0, Some(110.0))],
            },
        ];
        let svg = plot(&series, Some(115.0), &labels());
        assert!(well_formed(&svg), "{svg}");
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        // morello: one line of three points; openblas: 8 is alone, 32-64 is a line.
        assert_eq!(svg.matches("<polyline").count(), 2, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 6);
        assert!(svg.contains("stroke-dasharray=\"6 4\""));
        assert!(svg.contains(">peak 115.0</text>"));
        assert!(svg.contains("f32 matmul &lt;NxNxN&gt;"));
        // x ticks at each size, y ticks up to a round number above the peak (115 * 1.05 -> 125).
        for tick in [">8</text>", ">16</text>", ">64</text>", ">125</text>"] {
            assert!(svg.contains(tick), "{tick}");
        }
        // Larger sizes are further right: the log axis is increasing.
        let x_of = |label: &str| {
            let at = svg.find(&format!("<title>morello, {label}:")).unwrap();
            let cx = &svg[svg[..at].rfind("cx=\"").unwrap() + 4..];
            cx[..cx.find('"').unwrap()].parse::<f64>().unwrap()
        };
        assert!(x_of("8") < x_of("16") && x_of("16") < x_of("32"));
        assert!((x_of("16") - x_of("8") - (x_of("32") - x_of("16"))).abs() < 0.3, "equal steps per octave");
    }

    #[test]
    fn an_empty_plot_is_still_valid() {
        let svg = plot(&[], None, &labels());
        assert!(well_formed(&svg));
        assert!(svg.contains("no sizes measured"));
    }

    #[test]
    fn y_axis_steps_are_round() {
        assert_eq!(y_axis(120.0), (20.0, 120.0));
        assert_eq!(y_axis(121.0), (25.0, 125.0));
        assert_eq!(y_axis(0.0), (0.2, 1.0));
    }
}
