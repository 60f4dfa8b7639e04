//! CSV export: one row per record.
//!
//! Columns, in a stable order: `time_ms`, then every other scalar of the batch JSON object
//! except `disks`, named by its JSON path (`memory.MemAvailable`, `dirty.state`,
//! `pressure.io.some.avg10`, …) and sorted by that name, so each struct's fields stay
//! together; then, for each device of any record (sorted by name),
//! `disk.<name>.<iostat name>` for the 22 iostat -x columns in iostat's order. A cell is empty
//! when the record lacks the figure. Values are the JSON values (numbers as printed by
//! serde_json, enums as their JSON strings). Text from the recording (a tracer's `why`, a
//! device's name in a header) has its control characters escaped (`fmt::escape_controls`), as
//! on the screen and in report.md: a crafted recording must not drive the terminal of whoever
//! reads the CSV. Owns: that layout. Must not touch: I/O beyond `out`.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;

use serde_json::Value;

use crate::fmt::escape_controls;
use crate::model::Model;
use crate::model::disk::Columns;

/// Scalars of a JSON value as (path, value), in field order; arrays are left out.
fn flatten(v: &Value, prefix: &str, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                if prefix.is_empty() && k == "disks" {
                    continue;
                }
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(v, &path, out);
            }
        }
        Value::Array(_) => {}
        other => out.push((prefix.to_owned(), other.clone())),
    }
}

fn rows(models: &[Model]) -> Vec<Vec<(String, Value)>> {
    models
        .iter()
        .map(|m| {
            let mut row = Vec::new();
            let v = serde_json::to_value(m).unwrap_or(Value::Null);
            flatten(&v, "", &mut row);
            row
        })
        .collect()
}

fn scalar_columns(rows: &[Vec<(String, Value)>]) -> Vec<String> {
    let all: BTreeSet<&str> = rows.iter().flatten().map(|(p, _)| p.as_str()).collect();
    // A struct that is `null` in some records (cpu on a first tick) is a leaf there and an
    // object elsewhere: keep only its fields.
    let leaf = |c: &str| {
        !all.iter()
            .any(|o| o.len() > c.len() && o.starts_with(c) && o.as_bytes()[c.len()] == b'.')
    };
    let mut cols: Vec<String> = all
        .iter()
        .filter(|c| leaf(c))
        .map(|c| (*c).to_owned())
        .collect();
    if let Some(i) = cols.iter().position(|c| c == "time_ms") {
        let t = cols.remove(i);
        cols.insert(0, t);
    }
    cols
}

fn devices(models: &[Model]) -> BTreeSet<&str> {
    models
        .iter()
        .flat_map(|m| m.disks.iter().map(|d| d.name.as_str()))
        .collect()
}

/// The header row's column names for these records.
#[must_use]
pub fn columns(models: &[Model]) -> Vec<String> {
    with_disks(scalar_columns(&rows(models)), models)
}

fn with_disks(mut cols: Vec<String>, models: &[Model]) -> Vec<String> {
    let names = Columns::default().named().map(|(n, _)| n);
    for d in devices(models) {
        cols.extend(names.iter().map(|n| format!("disk.{d}.{n}")));
    }
    cols
}

/// RFC 4180 quoting: a field with a comma, quote or line break is quoted, quotes doubled.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => escape_controls(s).into_owned(),
        other => other.to_string(),
    }
}

/// Writes the header row and one row per record.
pub fn write(models: &[Model], out: &mut dyn Write) -> anyhow::Result<()> {
    let rows = rows(models);
    let scalars = scalar_columns(&rows);
    let devs = devices(models);
    let header = with_disks(scalars.clone(), models);
    let line: Vec<String> = header.iter().map(|c| field(&escape_controls(c))).collect();
    writeln!(out, "{}", line.join(","))?;
    for (m, row) in models.iter().zip(&rows) {
        let by: HashMap<&str, &Value> = row.iter().map(|(p, v)| (p.as_str(), v)).collect();
        let mut cells: Vec<String> = scalars
            .iter()
            .map(|c| {
                by.get(c.as_str())
                    .map_or_else(String::new, |v| field(&text(v)))
            })
            .collect();
        for d in &devs {
            let disk = m.disks.iter().find(|x| x.name == *d);
            for (_, v) in disk.map_or_else(|| Columns::default().named(), |x| x.cols.named()) {
                cells.push(v.map_or_else(String::new, |v| text(&Value::from(v))));
            }
        }
        writeln!(out, "{}", cells.join(","))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_structs_give_way_to_their_fields_and_time_leads() {
        let rows = vec![
            vec![
                ("time_ms".to_owned(), Value::from(1)),
                ("cpu".to_owned(), Value::Null),
            ],
            vec![
                ("time_ms".to_owned(), Value::from(2)),
                ("cpu.user_pct".to_owned(), Value::from(1.5)),
                ("a".to_owned(), Value::Null),
                ("cpux".to_owned(), Value::Null),
            ],
        ];
        assert_eq!(
            scalar_columns(&rows),
            ["time_ms", "a", "cpu.user_pct", "cpux"]
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("plain"), "plain");
    }
}
