//! A playbook file: TOML with a `name`, a `description` and `[[step]]` tables, each with
//! exactly one action key, parsed and validated as a whole before anything runs. Every error
//! names the line of the step (or of the TOML error). Parsing is linear in the file's size
//! (a step's line comes from a table of line starts, not a count from the top).
//!
//! The text it keeps for display (the name, the description, phases and markers) and its
//! error messages have their control characters escaped (`fmt::escape_controls`): a hostile
//! file cannot clear or retitle the terminal that shows them, the phase table or report.md.
//!
//! ```toml
//! name = "cache-reread"
//! description = "read a file twice: from disk, then from the page cache"
//! [[step]]
//! phase = "cold"
//! [[step]]
//! fio = "randread"            # a preset, then overrides
//! id = "read"                 # other steps may say file(read)
//! set = { size = "2G", runtime = 0 }
//! background = false          # true: start it and go on
//! [[step]]
//! eat = { leave = "file(read) - 512M" }   # or eat = "4G" / "30%"
//! [[step]]
//! tune = "vm.dirty_bytes"     # value = "original" puts it back
//! value = "15M"
//! ```
//!
//! Owns: the format and its validation. Pure: must not touch /proc, files or processes.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::expr::SizeExpr;
use crate::jobs::fio::FioSpec;
use crate::jobs::tune::Setting;

/// A validated playbook.
#[derive(Debug, Clone, PartialEq)]
pub struct Playbook {
    /// Its name.
    pub name: String,
    /// Where it came from, for errors: the file's path, or the name of a built-in.
    pub origin: String,
    /// One line for `play --list`.
    pub description: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

/// One step and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 1-based line of the `[[step]]`.
    pub line: usize,
    /// What it does.
    pub action: Action,
}

/// What a step does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Sync, then drop caches at this level (1 page cache, 2 slab, 3 both).
    DropCaches(u8),
    /// Start a memory eater and wait until it holds its memory.
    Eat(EatSize),
    /// Release every eater.
    Release,
    /// Run fio.
    Fio {
        /// The id other steps' `file(ID)` refer to.
        id: Option<String>,
        /// The job.
        spec: FioSpec,
        /// Start it and go on (else wait for it to end).
        background: bool,
    },
    /// Change a kernel setting; `value` `None` puts the original back.
    Tune {
        /// The setting.
        setting: Setting,
        /// The checked value.
        value: Option<String>,
    },
    /// Wait.
    Wait(Wait),
    /// Add a marker to the recording.
    Marker(String),
    /// Start a new phase.
    Phase(String),
}

/// How much an eater takes.
#[derive(Debug, Clone, PartialEq)]
pub enum EatSize {
    /// This much.
    Size(SizeExpr),
    /// Until MemAvailable is this much (measured when the step starts).
    Leave(SizeExpr),
}

/// What a `wait` step waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// A duration.
    For(Duration),
    /// Every background fio job to end.
    Jobs,
}

/// A playbook error with the line it is about.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{msg}", line.map_or(String::new(), |l| format!("line {l}: ")))]
pub struct BookError {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub msg: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBook {
    name: String,
    description: String,
    #[serde(default)]
    step: Vec<Spanned<RawStep>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    drop_caches: Option<u8>,
    eat: Option<toml::Value>,
    release: Option<bool>,
    fio: Option<String>,
    id: Option<String>,
    set: Option<toml::Table>,
    background: Option<bool>,
    tune: Option<String>,
    value: Option<toml::Value>,
    wait: Option<String>,
    marker: Option<String>,
    phase: Option<String>,
}

/// The byte offsets where the lines of a text start, to find a line in O(log n).
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Lines {
        let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines(starts.collect())
    }

    /// The 1-based line of byte `offset`.
    fn of(&self, offset: usize) -> usize {
        self.0.partition_point(|start| *start <= offset).max(1)
    }
}

/// Text from the file as it may be shown.
fn clean(s: String) -> String {
    match crate::fmt::escape_controls(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(o) => o,
    }
}

/// A TOML value as a setting's text: strings as they are, numbers and booleans printed.
fn scalar(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "1" } else { "0" }.to_owned()),
        _ => None,
    }
}

impl Playbook {
    /// Parses and validates a playbook's text; its origin is its name until `with_origin`.
    pub fn parse(text: &str) -> Result<Playbook, BookError> {
        parse(text).map_err(|e| BookError {
            line: e.line,
            msg: clean(e.msg),
        })
    }

    /// The same playbook, named `origin` (its file) in errors.
    #[must_use]
    pub fn with_origin(mut self, origin: &str) -> Playbook {
        self.origin = clean(origin.to_owned());
        self
    }

    /// `origin: line N: ` in front of `msg`, for an error about the step on line `line`.
    #[must_use]
    pub fn at(&self, line: usize, msg: &str) -> String {
        format!("{}: line {line}: {msg}", self.origin)
    }

    /// The same playbook with fio sizes and runtimes, absolute eat sizes and waits multiplied
    /// by `f` (for quick runs: `--scale 0.1`). Sizes stay whole multiples of the block size.
    #[must_use]
    pub fn scaled(&self, f: f64) -> Playbook {
        let mut out = self.clone();
        for s in &mut out.steps {
            match &mut s.action {
                Action::Fio { spec, .. } => {
                    let blocks = ((spec.size as f64 * f) / spec.bs as f64).ceil().max(1.0);
                    spec.size = blocks as u64 * spec.bs;
                    spec.runtime_s = spec
                        .runtime_s
                        .map(|r| ((f64::from(r) * f).ceil() as u32).max(1));
                }
                Action::Eat(EatSize::Size(e) | EatSize::Leave(e)) => *e = e.scaled(f),
                Action::Wait(Wait::For(d)) => *d = d.mul_f64(f),
                _ => {}
            }
        }
        out
    }

    /// True when a step tunes a setting (the run takes the tuning lock).
    #[must_use]
    pub fn tunes(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.action, Action::Tune { .. }))
    }

    /// True when running it needs root (a tune or a cache drop).
    #[must_use]
    pub fn needs_root(&self) -> bool {
        self.steps
            .iter()
            .any(|s| matches!(s.action, Action::Tune { .. } | Action::DropCaches(_)))
    }
}

/// `Playbook::parse` before its messages are escaped.
fn parse(text: &str) -> Result<Playbook, BookError> {
    let lines = Lines::new(text);
    let raw: RawBook = toml::from_str(text).map_err(|e| BookError {
        line: e.span().map(|s| lines.of(s.start)),
        msg: e.message().trim().to_owned(),
    })?;
    if raw.name.trim().is_empty() {
        return Err(BookError {
            line: None,
            msg: "the playbook needs a name".into(),
        });
    }
    let mut ids: BTreeSet<String> = BTreeSet::new();
    let mut steps = Vec::new();
    for s in raw.step {
        let line = lines.of(s.span().start);
        let action = step(s.into_inner(), &mut ids).map_err(|msg| BookError {
            line: Some(line),
            msg,
        })?;
        steps.push(Step { line, action });
    }
    if steps.is_empty() {
        return Err(BookError {
            line: None,
            msg: "the playbook has no [[step]]".into(),
        });
    }
    let name = clean(raw.name);
    Ok(Playbook {
        origin: name.clone(),
        name,
        description: clean(raw.description),
        steps,
    })
}

/// Validates one step; `ids` collects the fio ids seen so far.
fn step(r: RawStep, ids: &mut BTreeSet<String>) -> Result<Action, String> {
    let actions: Vec<&str> = [
        ("drop_caches", r.drop_caches.is_some()),
        ("eat", r.eat.is_some()),
        ("release", r.release.is_some()),
        ("fio", r.fio.is_some()),
        ("tune", r.tune.is_some()),
        ("wait", r.wait.is_some()),
        ("marker", r.marker.is_some()),
        ("phase", r.phase.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, on)| on.then_some(k))
    .collect();
    let [action] = actions.as_slice() else {
        return Err(format!(
            "a step needs exactly one of drop_caches, eat, release, fio, tune, wait, marker, \
             phase; this one has {}",
            if actions.is_empty() {
                "none".to_owned()
            } else {
                actions.join(", ")
            }
        ));
    };
    let only = |key: &str, present: bool, owner: &str| {
        if present && *action != owner {
            Err(format!("{key} belongs to a {owner} step, not {action}"))
        } else {
            Ok(())
        }
    };
    only("id", r.id.is_some(), "fio")?;
    only("set", r.set.is_some(), "fio")?;
    only("background", r.background.is_some(), "fio")?;
    only("value", r.value.is_some(), "tune")?;
    Ok(match *action {
        "drop_caches" => match r.drop_caches {
            Some(l @ 1..=3) => Action::DropCaches(l),
            _ => return Err("drop_caches is 1 (page cache), 2 (slab) or 3 (both)".into()),
        },
        "eat" => Action::Eat(eat(r.eat.as_ref(), ids)?),
        "release" => {
            if r.release != Some(true) {
                return Err("write release = true".into());
            }
            Action::Release
        }
        "fio" => fio(&r, ids)?,
        "tune" => {
            let setting = Setting::parse(r.tune.as_deref().unwrap_or_default())?;
            let text = r
                .value
                .as_ref()
                .and_then(scalar)
                .ok_or("a tune step needs value = \"...\" (or \"original\")")?;
            let value = if text == "original" {
                None
            } else {
                Some(setting.value(&text)?)
            };
            Action::Tune { setting, value }
        }
        "wait" => Action::Wait(wait(r.wait.as_deref().unwrap_or_default())?),
        "marker" => Action::Marker(clean(r.marker.unwrap_or_default())),
        _ => {
            let name = clean(r.phase.unwrap_or_default());
            if name.trim().is_empty() {
                return Err("a phase needs a name".into());
            }
            Action::Phase(name)
        }
    })
}

fn eat(v: Option<&toml::Value>, ids: &BTreeSet<String>) -> Result<EatSize, String> {
    let known = |e: SizeExpr| -> Result<SizeExpr, String> {
        if let Some(id) = e.refs().find(|id| !ids.contains(*id)) {
            return Err(format!("file({id}): no earlier fio step has id = {id:?}"));
        }
        Ok(e)
    };
    match v {
        Some(toml::Value::String(s)) => Ok(EatSize::Size(known(SizeExpr::parse(s)?)?)),
        Some(toml::Value::Table(t)) if t.len() == 1 => match t.get("leave") {
            Some(toml::Value::String(s)) => Ok(EatSize::Leave(known(SizeExpr::parse(s)?)?)),
            _ => Err("eat = { leave = \"1G\" }: leave takes a size".into()),
        },
        _ => Err(
            "eat takes a size (\"4G\", \"30%\", \"file(ID) + 1G\") or { leave = \"1G\" }".into(),
        ),
    }
}

fn fio(r: &RawStep, ids: &mut BTreeSet<String>) -> Result<Action, String> {
    let mut spec =
        FioSpec::preset(r.fio.as_deref().unwrap_or_default()).map_err(|e| e.to_string())?;
    for (k, v) in r.set.iter().flatten() {
        let text = scalar(v).ok_or_else(|| format!("set.{k}: give a string or a number"))?;
        spec.set(k, &text).map_err(|e| e.to_string())?;
    }
    if let Some(id) = &r.id {
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("id {id:?}: letters, digits and _ only"));
        }
        if !ids.insert(id.clone()) {
            return Err(format!("id {id:?} is used by an earlier fio step"));
        }
    }
    Ok(Action::Fio {
        id: r.id.clone(),
        spec,
        background: r.background.unwrap_or(false),
    })
}

fn wait(text: &str) -> Result<Wait, String> {
    if text.trim() == "jobs" {
        return Ok(Wait::Jobs);
    }
    crate::fmt::parse_duration(text)
        .map(Wait::For)
        .map_err(|e| format!("wait: {e} (or \"jobs\" for the background fio jobs)"))
}

#[cfg(test)]
#[path = "book_tests.rs"]
mod tests;
