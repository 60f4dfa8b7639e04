//! The config file's values and their names: each key's type, the words it accepts, and the
//! check of one key's item (a wrong type or word is an error naming the words allowed).
//!
//! Owns: the mapping between the app's settings and the file's words. Must not touch: the
//! file's text as a whole (`config::parse`, `config::edit`).

use std::path::PathBuf;

use toml_edit::{Item, Value};

use super::{ColorMode, KEYS, Setting, Settings, Units};
use super::{ProcSort, SortKey, WhoView};

const UNITS: [(&str, Units); 2] = [("bytes", Units::Bytes), ("pages", Units::Pages)];
const COLORS: [(&str, ColorMode); 2] = [("auto", ColorMode::Auto), ("never", ColorMode::Never)];
const DISK_SORTS: [(&str, SortKey); 6] = [
    ("util", SortKey::Util),
    ("aqu-sz", SortKey::AquSz),
    ("await", SortKey::Await),
    ("iops", SortKey::Iops),
    ("throughput", SortKey::Throughput),
    ("name", SortKey::Name),
];
const PROC_SORTS: [(&str, ProcSort); 9] = [
    ("storage", ProcSort::Storage),
    ("memory", ProcSort::Memory),
    ("dirtied", ProcSort::Dirtied),
    ("read", ProcSort::Read),
    ("rchar", ProcSort::Rchar),
    ("wchar", ProcSort::Wchar),
    ("iowait", ProcSort::IoWait),
    ("sync", ProcSort::Sync),
    ("pid", ProcSort::Pid),
];
const VIEWS: [(&str, Option<WhoView>); 3] = [
    ("none", None),
    ("processes", Some(WhoView::Processes)),
    ("cgroups", Some(WhoView::Cgroups)),
];

/// The word for `v` in `table`.
fn word<T: PartialEq + Copy>(table: &[(&'static str, T)], v: T) -> &'static str {
    table.iter().find(|(_, t)| *t == v).map_or("", |(w, _)| w)
}

/// The value `item` names in `table`, or why not.
fn pick<T: Copy>(key: &str, item: &Item, table: &[(&str, T)]) -> Result<T, String> {
    let words: Vec<String> = table.iter().map(|(w, _)| format!("\"{w}\"")).collect();
    let words = words.join(", ");
    let s = item
        .as_str()
        .ok_or_else(|| format!("{key} must be one of {words}; the default is used"))?;
    table
        .iter()
        .find(|(w, _)| *w == s)
        .map(|(_, v)| *v)
        .ok_or_else(|| format!("{key} = {s:?} is not one of {words}; the default is used"))
}

fn boolean(key: &str, item: &Item) -> Result<bool, String> {
    item.as_bool()
        .ok_or_else(|| format!("{key} must be true or false; the default is used"))
}

/// The interval in `item`: a number of seconds in the range `--interval` accepts.
fn interval(item: &Item) -> Result<f64, String> {
    let v = item
        .as_float()
        .or_else(|| item.as_integer().map(|i| i as f64));
    match v {
        Some(v) if v.is_finite() && (0.05..=3600.0).contains(&v) => Ok(v),
        _ => Err(
            "interval must be a number of seconds from 0.05 to 3600; the default is used".into(),
        ),
    }
}

/// Sets `key` in `out` from `item`, or says what is wrong with it.
pub(super) fn apply(out: &mut Settings, key: &str, item: &Item) -> Result<(), String> {
    match key {
        "interval" => out.interval = Some(interval(item)?),
        "units" => out.units = Some(pick(key, item, &UNITS)?),
        "disk_sort" => out.disk_sort = Some(pick(key, item, &DISK_SORTS)?),
        "process_sort" => out.process_sort = Some(pick(key, item, &PROC_SORTS)?),
        "view" => out.view = Some(pick(key, item, &VIEWS)?),
        "partitions" => out.partitions = Some(boolean(key, item)?),
        "color" => out.color = Some(pick(key, item, &COLORS)?),
        "mouse" => out.mouse = Some(boolean(key, item)?),
        "fio_dir" => match item.as_str() {
            Some(s) if !s.is_empty() => out.fio_dir = Some(PathBuf::from(s)),
            _ => return Err("fio_dir must be a directory's path; the default is used".into()),
        },
        _ => {
            return Err(format!(
                "unknown key {key:?} (known: {}); ignored",
                KEYS.join(", ")
            ));
        }
    }
    Ok(())
}

/// The value written for `s`.
pub(super) fn value_of(s: &Setting) -> Value {
    match s {
        Setting::Interval(v) => Value::from(*v),
        Setting::Units(u) => Value::from(word(&UNITS, *u)),
        Setting::DiskSort(k) => Value::from(word(&DISK_SORTS, *k)),
        Setting::ProcessSort(k) => Value::from(word(&PROC_SORTS, *k)),
        Setting::View(v) => Value::from(word(&VIEWS, *v)),
        Setting::Partitions(b) => Value::from(*b),
    }
}
