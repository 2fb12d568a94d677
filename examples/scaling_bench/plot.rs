//! The speed-up plot: one line per workload, speed-up of the root device over one device
//! against the workload's size in elements (log scale), with the 1x and 0.95x lines.

use crate::{speedup, Measured, Res};
use plotters::prelude::*;
use std::path::Path;

/// Draws `rows` into the SVG file `path`.
pub fn speedups(path: &Path, title: &str, rows: &[Measured]) -> Res<()> {
    let xs = rows.iter().map(|r| (r.elements.max(1) as f64).log2());
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
    let y1 = rows.iter().map(speedup).fold(1.2f64, f64::max) * 1.1;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d((x0 - 0.5)..(x1 + 0.5), 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc("elements (log2)")
        .y_desc("speed-up over one device")
        .draw()?;
    for (level, color) in [(1.0, BLACK), (0.95, RED)] {
        chart.draw_series(LineSeries::new(
            [(x0 - 0.5, level), (x1 + 0.5, level)],
            color.mix(0.4),
        ))?;
    }
    let mut names: Vec<&str> = rows.iter().map(|r| r.workload).collect();
    names.dedup();
    for (i, name) in names.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let points: Vec<(f64, f64)> = (rows.iter())
            .filter(|r| r.workload == *name)
            .map(|r| ((r.elements.max(1) as f64).log2(), speedup(r)))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
            .label(*name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()?;
    root.present()?;
    Ok(())
}
