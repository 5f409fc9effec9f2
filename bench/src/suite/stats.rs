//! Medians, percentiles and spreads, and the table a run writes.

use serde::{Deserialize, Deserializer, Serialize};

/// The `p`-th percentile (0–100) of `xs`, nearest rank; `NaN` for none.
pub fn percentile(xs: &[f64], p: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let rank = ((p / 100.0) * v.len() as f64).ceil().max(1.0) as usize;
    v[rank.min(v.len()) - 1]
}

pub fn median(xs: &[f64]) -> f64 {
    percentile(xs, 50.0)
}

pub fn max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NAN, f64::max)
}

pub fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NAN, f64::min)
}

/// Which way a figure is good.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// A goal: what the issue asks of a figure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Goal {
    pub value: f64,
    pub better: Better,
}

impl Goal {
    pub fn at_most(value: f64) -> Option<Goal> {
        Some(Goal { value, better: Better::Lower })
    }
    pub fn at_least(value: f64) -> Option<Goal> {
        Some(Goal { value, better: Better::Higher })
    }
}

/// The mark `--quick` fails at: about 3× the debug build's own quick figure on this machine kind
/// (each is written beside its figure with what it was set from), so a regression is caught
/// whatever the goal, and a missed goal alone fails nothing.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Gate {
    pub mark: f64,
    pub better: Better,
}

impl Gate {
    pub const fn below(mark: f64) -> Option<Gate> {
        Some(Gate { mark, better: Better::Lower })
    }
    pub const fn above(mark: f64) -> Option<Gate> {
        Some(Gate { mark, better: Better::Higher })
    }
}

fn meets(better: Better, x: f64, mark: f64) -> bool {
    match better {
        Better::Lower => x <= mark,
        Better::Higher => x >= mark,
    }
}

/// One row of the tables: the median of repeated runs, with their spread; or a statistic over
/// every sample of all rounds, with the rounds' own values as the spread ([`Figure::pooled`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figure {
    pub row: u8,
    pub name: String,
    pub unit: String,
    /// The figure: the rounds' median, or the pooled statistic.
    #[serde(deserialize_with = "number_or_nan")]
    pub median: f64,
    #[serde(deserialize_with = "numbers_or_nan")]
    pub spread: (f64, f64),
    pub runs: usize,
    pub goal: Option<Goal>,
    pub gate: Option<Gate>,
    pub method: String,
}

impl Figure {
    /// A figure from the values of repeated runs.
    pub fn of(row: u8, name: &str, unit: &str, runs: &[f64], goal: Option<Goal>, method: &str) -> Figure {
        Figure {
            row,
            name: name.into(),
            unit: unit.into(),
            median: median(runs),
            spread: (min(runs), max(runs)),
            runs: runs.len(),
            goal,
            gate: None,
            method: method.into(),
        }
    }

    /// `stat` over every sample of all `rounds` (a p99 over all events, not a median of the
    /// rounds' p99s, which hides the tail a round alone shows), with `stat` of each round as the
    /// spread.
    pub fn pooled(row: u8, name: &str, unit: &str, rounds: &[&[f64]], stat: fn(&[f64]) -> f64, goal: Option<Goal>, method: &str) -> Figure {
        let all: Vec<f64> = rounds.concat();
        let per: Vec<f64> = rounds.iter().map(|r| stat(r)).collect();
        Figure { median: stat(&all), ..Figure::of(row, name, unit, &per, goal, method) }
    }

    /// This figure with the quick form's gate.
    pub fn gated(mut self, gate: Option<Gate>) -> Figure {
        self.gate = gate;
        self
    }

    pub fn meets_goal(&self) -> Option<bool> {
        self.goal.map(|g| meets(g.better, self.median, g.value))
    }

    pub fn within_gate(&self) -> bool {
        self.gate.is_none_or(|g| meets(g.better, self.median, g.mark))
    }

    /// The goal in the figure's own unit ("≤ 19.1 MiB"); empty without one.
    pub fn goal_words(&self) -> String {
        let sign = |b| if b == Better::Lower { "≤" } else { "≥" };
        self.goal.map(|g| format!("{} {} {}", sign(g.better), num(g.value), self.unit)).unwrap_or_default()
    }
}

/// JSON has no NaN: serde_json writes it as `null`, read back here as NaN.
fn number_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

fn numbers_or_nan<'de, D: Deserializer<'de>>(d: D) -> Result<(f64, f64), D::Error> {
    let (a, b) = <(Option<f64>, Option<f64>)>::deserialize(d)?;
    Ok((a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)))
}

/// A figure as the tables write it: three significant digits or so, "–" for none.
pub fn num(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The Markdown table: figure, goal, method, per row.
pub fn markdown(figures: &[Figure], machine: &str, command: &str, date: &str) -> String {
    let mut out = format!("# cmux-tray benchmarks\n\n- date: {date}\n- machine: {machine}\n- command: `{command}`\n\n");
    out.push_str(
        "| row | figure | value | spread (min–max) | runs | goal | met | method |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for f in figures {
        let goal = f.goal_words();
        let met = match f.meets_goal() {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        out.push_str(&format!(
            "| {} | {} | {} {} | {}–{} | {} | {} | {} | {} |\n",
            f.row,
            f.name,
            num(f.median),
            f.unit,
            num(f.spread.0),
            num(f.spread.1),
            f.runs,
            goal,
            met,
            f.method
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&xs, 50.0), 50.0);
        assert_eq!(percentile(&xs, 99.0), 99.0);
        assert_eq!(percentile(&xs, 100.0), 100.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(percentile(&[], 50.0).is_nan());
    }

    #[test]
    fn gates_are_on_the_right_side() {
        let f = Figure::of(1, "p99", "ms", &[40.0, 60.0, 55.0], Goal::at_most(50.0), "").gated(Gate::below(200.0));
        assert_eq!(f.meets_goal(), Some(false));
        assert!(f.within_gate());
        let g = Figure::of(4, "req/s", "/s", &[1000.0], Goal::at_least(20000.0), "").gated(Gate::above(2000.0));
        assert!(!g.within_gate());
        let ungated = Figure::of(3, "MiB", "MiB", &[1e9], Goal::at_most(1.0), "");
        assert!(ungated.within_gate());
    }

    #[test]
    fn a_pooled_p99_is_over_every_sample_and_the_rounds_are_its_spread() {
        // Four quiet rounds and one with a tail: the median of the rounds' p99s hides it.
        let quiet: Vec<f64> = (1..=40).map(f64::from).collect();
        let tail: Vec<f64> = (1..=40).map(|i| if i > 36 { 1000.0 } else { f64::from(i) }).collect();
        let rounds: Vec<&[f64]> = vec![&quiet, &quiet, &quiet, &quiet, &tail];
        let p99 = |r: &[f64]| percentile(r, 99.0);
        let f = Figure::pooled(1, "p99", "ms", &rounds, p99, None, "");
        // 200 events, 4 of them 1000 ms: the pooled p99 (rank 198) is 1000; each quiet round's is 40.
        assert_eq!(f.median, 1000.0);
        assert_eq!(f.spread, (40.0, 1000.0));
        assert_eq!(f.runs, 5);
        assert_eq!(Figure::of(1, "p99", "ms", &rounds.iter().map(|r| p99(r)).collect::<Vec<_>>(), None, "").median, 40.0);
    }
}
