//! One SVG chart per table, written by hand: two panels, the measured A and B values
//! on the left and the ratio B/A today against the seed's ratio on the right. Ratios
//! are what compare across machines and decades (absolute numbers from 2006 hardware
//! would squash today's onto one axis), so the seed appears in the ratio panel only.
//! [`bars`] draws tables of independent rows (the TPC-H queries) as grouped bars on a
//! log axis instead. A chart is a few dozen SVG elements; a plotting library would add
//! dependencies for no gain here.

use crate::report::{fmt_num, Table};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const WIDTH: f64 = 960.0;
const HEIGHT: f64 = 400.0;
const COLOR_A: &str = "#1f77b4";
const COLOR_B: &str = "#d62728";
const COLOR_RATIO: &str = "#2ca02c";
const COLOR_SEED: &str = "#7f7f7f";

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The smallest 1, 2 or 5 times a power of ten at or above `v`: the axis top.
fn nice_max(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * p >= v {
            return m * p;
        }
    }
    10.0 * p
}

/// Axis numbers: whole numbers without decimals, others as the tables print them.
fn axis_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

struct Series<'a> {
    name: String,
    color: &'a str,
    dashed: bool,
    values: Vec<Option<f64>>,
}

struct Panel {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn panel(out: &mut String, p: &Panel, title: &str, keys: &[String], series: &[Series], one: bool) {
    let top = nice_max(
        series
            .iter()
            .flat_map(|s| s.values.iter().flatten())
            .fold(if one { 1.0 } else { 0.0 }, |m: f64, v| m.max(*v)),
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="13" text-anchor="middle">{}</text>"#,
        p.x + p.w / 2.0,
        p.y - 8.0,
        esc(title)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        p.x, p.y, p.w, p.h
    );
    let yof = |v: f64| p.y + p.h - v / top * p.h;
    for i in 0..=5 {
        let v = top * i as f64 / 5.0;
        let y = yof(v);
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#e5e5e5"/><text x="{}" y="{}" font-size="11" text-anchor="end">{}</text>"##,
            p.x,
            p.x + p.w,
            p.x - 4.0,
            y + 4.0,
            esc(&axis_label(v))
        );
    }
    if one {
        let y = yof(1.0);
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#555" stroke-dasharray="2,2"/>"##,
            p.x,
            p.x + p.w
        );
    }
    let n = keys.len().max(1);
    let xof = |i: usize| p.x + p.w * (i as f64 + 0.5) / n as f64;
    for (i, k) in keys.iter().enumerate() {
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
            xof(i),
            p.y + p.h + 15.0,
            esc(k)
        );
    }
    for s in series {
        // Missing cells break the line into segments.
        let mut segment: Vec<(f64, f64)> = Vec::new();
        let mut segments = Vec::new();
        for (i, v) in s.values.iter().enumerate() {
            match v {
                Some(v) => segment.push((xof(i), yof(*v))),
                None => segments.push(std::mem::take(&mut segment)),
            }
        }
        segments.push(segment);
        let dash = if s.dashed {
            r#" stroke-dasharray="6,4""#
        } else {
            ""
        };
        for seg in segments.iter().filter(|s| !s.is_empty()) {
            let pts: Vec<String> = seg.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                pts.join(" "),
                s.color
            );
            for (x, y) in seg {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{}"/>"#,
                    s.color
                );
            }
        }
    }
    for (i, s) in series.iter().enumerate() {
        let y = p.y + 14.0 + 16.0 * i as f64;
        let dash = if s.dashed {
            r#" stroke-dasharray="6,4""#
        } else {
            ""
        };
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="2"{dash}/><text x="{}" y="{}" font-size="11">{}</text>"#,
            p.x + 8.0,
            p.x + 28.0,
            s.color,
            p.x + 32.0,
            y + 4.0,
            esc(&s.name)
        );
    }
}

/// The chart of one table as SVG text.
pub fn chart(t: &Table) -> String {
    let keys: Vec<String> = t.rows.iter().map(|r| r.key.clone()).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        esc(&t.title)
    );
    let left = Panel {
        x: 70.0,
        y: 60.0,
        w: 380.0,
        h: 280.0,
    };
    let right = Panel {
        x: 560.0,
        y: 60.0,
        w: 360.0,
        h: 280.0,
    };
    let measured = [
        Series {
            name: format!("A: {}", t.a_name),
            color: COLOR_A,
            dashed: false,
            values: t.rows.iter().map(|r| r.a.value()).collect(),
        },
        Series {
            name: format!("B: {}", t.b_name),
            color: COLOR_B,
            dashed: false,
            values: t.rows.iter().map(|r| r.b.value()).collect(),
        },
    ];
    panel(
        &mut out,
        &left,
        &format!("measured, {}", t.unit),
        &keys,
        &measured,
        false,
    );
    let mut ratios = vec![Series {
        name: "B/A measured".into(),
        color: COLOR_RATIO,
        dashed: false,
        values: t.rows.iter().map(|r| r.ratio()).collect(),
    }];
    if let Some(seed) = &t.seed {
        ratios.push(Series {
            name: format!("seed {}/{}", seed.b, seed.a),
            color: COLOR_SEED,
            dashed: true,
            values: t
                .rows
                .iter()
                .map(|r| {
                    seed.row(&r.key)
                        .and_then(|(a, b)| match (a.num(), b.num()) {
                            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
                            _ => None,
                        })
                })
                .collect(),
        });
    }
    panel(&mut out, &right, "ratio B/A", &keys, &ratios, true);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        HEIGHT - 16.0,
        esc(&t.key_name)
    );
    out.push_str("</svg>\n");
    out
}

/// Writes `<dir>/<table id>.svg`; returns the path.
pub fn write(dir: &Path, t: &Table) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.svg", t.id));
    std::fs::write(&path, chart(t)).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// A grouped bar chart of one table on a logarithmic axis: per row the A and B bars
/// side by side (a missing cell drawn as a cross on the axis), and above each pair A/B
/// as a factor. For tables whose rows are independent measurements of very different
/// sizes (the 22 TPC-H queries span milliseconds to minutes), where a line through the
/// rows would suggest a trend and a linear axis would flatten the short ones.
pub fn bars(t: &Table) -> String {
    let p = Panel {
        x: 70.0,
        y: 60.0,
        w: WIDTH - 100.0,
        h: HEIGHT - 130.0,
    };
    let values: Vec<f64> = t
        .rows
        .iter()
        .flat_map(|r| [r.a.value(), r.b.value()])
        .flatten()
        .filter(|v| *v > 0.0 && v.is_finite())
        .collect();
    let lo = values
        .iter()
        .fold(f64::INFINITY, |m, v| m.min(*v))
        .log10()
        .floor();
    let hi = values.iter().fold(0.0f64, |m, v| m.max(*v)).log10().ceil();
    let (lo, hi) = if values.is_empty() {
        (0.0, 1.0)
    } else if hi <= lo {
        (lo, lo + 1.0)
    } else {
        (lo, hi)
    };
    let yof = |v: f64| p.y + p.h - (v.log10() - lo) / (hi - lo) * p.h;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        esc(&t.title)
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{} (log scale); above each pair: A/B</text>"#,
        WIDTH / 2.0,
        p.y - 24.0,
        esc(&t.unit)
    );
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        p.x, p.y, p.w, p.h
    );
    let mut e = lo;
    while e <= hi {
        let v = 10f64.powf(e);
        let y = yof(v);
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            p.x,
            p.x + p.w,
            p.x - 4.0,
            y + 4.0,
            esc(&axis_label(v))
        );
        e += 1.0;
    }
    let n = t.rows.len().max(1);
    let slot = p.w / n as f64;
    let bar_w = (slot * 0.35).min(24.0);
    let base = p.y + p.h;
    for (i, r) in t.rows.iter().enumerate() {
        let cx = p.x + slot * (i as f64 + 0.5);
        for (k, (cell, color)) in [(&r.a, COLOR_A), (&r.b, COLOR_B)].iter().enumerate() {
            let x = if k == 0 { cx - bar_w } else { cx };
            match cell.value().filter(|v| *v > 0.0 && v.is_finite()) {
                Some(v) => {
                    let y = yof(v).min(base);
                    let _ = writeln!(
                        out,
                        r#"<rect x="{x:.1}" y="{y:.1}" width="{bar_w:.1}" height="{:.1}" fill="{color}"><title>{}: {}</title></rect>"#,
                        base - y,
                        esc(&r.key),
                        esc(&fmt_num(v))
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        r#"<text x="{:.1}" y="{:.1}" font-size="12" fill="{color}" text-anchor="middle">×</text>"#,
                        x + bar_w / 2.0,
                        base - 3.0
                    );
                }
            }
        }
        if let (Some(a), Some(b)) = (r.a.value(), r.b.value()) {
            if b > 0.0 {
                let top = yof(a.max(b).max(10f64.powf(lo))).min(base);
                let _ = writeln!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" font-size="9" text-anchor="middle">{:.2}</text>"#,
                    top - 3.0,
                    a / b
                );
            }
        }
        // Keys such as "total (12 queries)" keep their first part under the bar.
        let _ = writeln!(
            out,
            r#"<text x="{cx:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
            base + 15.0,
            esc(r.key.split(" (").next().unwrap_or(&r.key))
        );
    }
    for (i, (name, color)) in [(&t.a_name, COLOR_A), (&t.b_name, COLOR_B)]
        .iter()
        .enumerate()
    {
        let x = p.x + 10.0 + 220.0 * i as f64;
        let y = HEIGHT - 30.0;
        let _ = writeln!(
            out,
            r#"<rect x="{x}" y="{}" width="14" height="10" fill="{color}"/><text x="{}" y="{y}" font-size="11">{}: {}</text>"#,
            y - 9.0,
            x + 18.0,
            if i == 0 { "A" } else { "B" },
            esc(name)
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="11">× = not measured (error or timeout)</text>"#,
        p.x + 460.0,
        HEIGHT - 30.0
    );
    out.push_str("</svg>\n");
    out
}

/// Writes [`bars`] of `t` as `<dir>/<table id>.svg`; returns the path.
pub fn write_bars(dir: &Path, t: &Table) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.svg", t.id));
    std::fs::write(&path, bars(t)).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Cell, Measure};

    #[test]
    fn axis_tops() {
        assert_eq!(nice_max(0.7), 1.0);
        assert_eq!(nice_max(1.3), 2.0);
        assert_eq!(nice_max(4100.0), 5000.0);
    }

    #[test]
    fn chart_has_both_panels_and_breaks_on_missing_cells() {
        let mut t = crate::report::Table::new("x", "A & B", "Threads", "events/s", "a", "b")
            .with_seed(Some(crate::seeds::MMAP_BATCH));
        t.push(
            "1",
            Cell::Measured(Measure::seconds(10.0, 1)),
            Cell::Measured(Measure::seconds(20.0, 1)),
        );
        t.push(
            "4",
            Cell::Measured(Measure::seconds(12.0, 1)),
            Cell::Missing("x".into()),
        );
        let svg = chart(&t);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("A &amp; B"));
        // A: one segment of two points; B: one point; ratio: one point; seed: two.
        assert_eq!(svg.matches("<polyline").count(), 4, "{svg}");
    }

    #[test]
    fn bar_chart_has_a_bar_per_measured_cell() {
        let mut t = crate::report::Table::new("q", "Q", "Query", "ms per query", "a", "b");
        t.push(
            "Q1",
            Cell::Measured(Measure::seconds(3.0, 1)),
            Cell::Measured(Measure::seconds(1500.0, 1)),
        );
        t.push(
            "Q2",
            Cell::Missing("error".into()),
            Cell::Measured(Measure::seconds(20.0, 1)),
        );
        let svg = bars(&t);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // Two bars for Q1, one for Q2, plus the frame and the legend's two swatches.
        assert_eq!(svg.matches("<rect").count(), 1 + 1 + 3 + 2, "{svg}");
        assert!(
            svg.contains(">×</text>") && svg.contains(">0.00</text>"),
            "{svg}"
        );
        // Decades 1..10000 on the axis.
        assert!(
            svg.contains(">10000</text>") && svg.contains(">1</text>"),
            "{svg}"
        );
    }
}
