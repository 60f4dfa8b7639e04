//! The layer rule, pinned: every file under `src/` imports only the layers its own layer may
//! import (`LAYERS`), so the import graph between folders has no circle and no arrow that runs
//! back up. A new folder or a new top-level file fails until it is given a place in the table.
//!
//! What counts as an import: every `crate::x…` and `super::…` path (in `use` lines or inline,
//! `use crate::{a, b}` groups included) and `pagewatch::x…` in the binary and in files that
//! name the crate so (`use crate as pagewatch`). Comments and strings do not count, and
//! neither does test code (`*_tests.rs`, `tests.rs` and `#[cfg(test)]` modules): tests may
//! borrow fixtures from any layer (`source::test_samples`).
//!
//! Beside it, on the same reading of the files: `layers/circles.rs`, no circle between the
//! files of one folder either (a strongly connected component of one file at most), and
//! `layers/sizes.rs`, files of at most 700 lines and functions of at most 100, with an
//! allowlist of today's offenders that may only shrink.
//!
//! Owns: the layer table and the checks. Must not touch: anything but reading `src/` and
//! `tests/`.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Every layer and the layers it may import besides itself, top floor first. `*`: any layer
/// listed after it. `pipeline` is the one sample → model step (`src/pipeline.rs`).
const LAYERS: &[(&str, &[&str])] = &[
    ("bin", &["cmd", "cli", "exit"]),
    ("cmd", &["*"]),
    ("shell", &["*"]),
    ("docs_gen", &["app", "cli", "config"]),
    (
        "ui",
        &["app", "model", "parse", "event", "history", "jobs", "fmt"],
    ),
    (
        "app",
        &[
            "config", "play", "jobs", "pipeline", "model", "parse", "history", "event", "sample",
            "source", "fmt",
        ],
    ),
    ("config", &["cli", "model"]),
    (
        "batch",
        &[
            "cli", "sampler", "pipeline", "model", "parse", "source", "sample", "fmt", "error",
        ],
    ),
    (
        "export",
        &[
            "cli", "metrics", "record", "pipeline", "model", "parse", "source", "sample", "fmt",
            "error",
        ],
    ),
    ("cli", &["serve"]),
    (
        "report",
        &[
            "play", "record", "pipeline", "history", "model", "parse", "source", "sample", "event",
            "fmt", "error",
        ],
    ),
    (
        "serve",
        &[
            "metrics", "sampler", "pipeline", "model", "source", "sample", "fmt", "error", "exit",
        ],
    ),
    (
        "metrics",
        &[
            "pipeline", "history", "model", "parse", "source", "sample", "fmt", "error",
        ],
    ),
    (
        "sampler",
        &["pipeline", "model", "source", "sample", "error", "malloc"],
    ),
    (
        "pipeline",
        &["history", "model", "parse", "sample", "error"],
    ),
    (
        "record",
        &["source", "sample", "event", "fmt", "error", "malloc"],
    ),
    ("play", &["jobs", "model", "event", "fmt", "userfile"]),
    ("history", &["model", "parse", "sample", "fmt"]),
    (
        "jobs",
        &[
            "source", "parse", "event", "sample", "fmt", "child", "error",
        ],
    ),
    ("model", &["parse", "sample", "fmt", "malloc"]),
    (
        "source",
        &["parse", "sample", "child", "error", "userfile", "malloc"],
    ),
    ("parse", &["sample", "error"]),
    ("event", &["fmt"]),
    ("sample", &["error"]),
    ("exit", &["error"]),
    ("fmt", &[]),
    ("userfile", &[]),
    ("malloc", &[]),
    ("child", &[]),
    ("error", &[]),
];

/// The layers `layer` may import, `*` expanded.
fn allowed(layer: &str) -> BTreeSet<&'static str> {
    let i = LAYERS.iter().position(|(l, _)| *l == layer).unwrap();
    let (_, may) = LAYERS[i];
    if may == ["*"] {
        return LAYERS[i + 1..].iter().map(|(l, _)| *l).collect();
    }
    may.iter().copied().collect()
}

/// A file's layer: its folder under `src/`, or its name for a file at the top.
fn layer_of(rel: &str) -> String {
    match rel.split_once('/') {
        Some((dir, _)) => dir.to_owned(),
        None => rel.trim_end_matches(".rs").to_owned(),
    }
}

/// A file's module path below the crate root (`app/mod.rs` → `app`, `ui/panes/x.rs` →
/// `ui::panes::x`).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text with comments and the insides of string and char literals blanked (newlines
/// kept, so lines keep their numbers).
fn blank(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let keep_lines = |s: &[char], out: &mut String| {
        out.extend(s.iter().map(|&ch| if ch == '\n' { '\n' } else { ' ' }));
    };
    let mut i = 0;
    while i < c.len() {
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            let end = c[i..]
                .iter()
                .position(|&ch| ch == '\n')
                .map_or(c.len(), |k| i + k);
            keep_lines(&c[i..end], &mut out);
            i = end;
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let (mut depth, mut j) = (0, i);
            while j < c.len() {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            keep_lines(&c[i..j.min(c.len())], &mut out);
            i = j;
        } else if c[i] == 'r'
            && (!ident_before || (c[i - 1] == 'b' && !(i > 1 && c[i - 2].is_alphanumeric())))
            && matches!(c.get(i + 1), Some('"' | '#'))
        {
            let hashes = c[i + 1..].iter().take_while(|&&ch| ch == '#').count();
            if c.get(i + 1 + hashes) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let body = i + 2 + hashes;
            let mut j = body;
            while j < c.len()
                && !(c[j] == '"'
                    && c[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == '#')
                        .count()
                        == hashes)
            {
                j += 1;
            }
            out.push_str("r\"");
            keep_lines(&c[body..j.min(c.len())], &mut out);
            out.push('"');
            i = (j + 1 + hashes).min(c.len());
        } else if c[i] == '"' {
            let mut j = i + 1;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            out.push('"');
            keep_lines(&c[i + 1..j.min(c.len())], &mut out);
            out.push('"');
            i = j + 1;
        } else if c[i] == '\'' && !ident_before {
            // A char literal ('x', '\n', '\u{301}'), not a lifetime ('a).
            let end = if c.get(i + 1) == Some(&'\\') {
                c[i + 2..]
                    .iter()
                    .position(|&ch| ch == '\'')
                    .map(|k| i + 2 + k)
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(e) = end {
                out.push_str("' '");
                i = e + 1;
            } else {
                out.push(c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The code of a file: `blank`ed, and without its `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let mut code = blank(text);
    while let Some(at) = code.find("#[cfg(test)]") {
        let mut rest = code[at + "#[cfg(test)]".len()..].trim_start();
        while rest.starts_with("#[") {
            rest = rest[rest.find(']').map_or(rest.len(), |k| k + 1)..].trim_start();
        }
        let from = code.len() - rest.len();
        let header = rest.split(['{', ';']).next().unwrap_or("");
        let is_mod = header.trim_start_matches("pub ").starts_with("mod ");
        let mut end = at + "#[cfg(test)]".len();
        if is_mod && rest[header.len()..].starts_with('{') {
            let mut depth = 0;
            for (k, ch) in code[from + header.len()..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = from + header.len() + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        let gone: String = code[at..end]
            .chars()
            .map(|ch| if ch == '\n' { '\n' } else { ' ' })
            .collect();
        code.replace_range(at..end, &gone);
    }
    code
}

/// The identifiers a path starts with after `at` (`crate::a::b` → `a`; `crate::{a::b, c}` →
/// `a`, `c`).
fn heads(code: &str, at: usize) -> Vec<String> {
    let rest = &code[at..];
    if let Some(group) = rest.strip_prefix('{') {
        let mut depth = 1;
        let mut end = group.len();
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        let inner = &group[..end];
        for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let item = inner[start..i].trim();
                    let id: String = item
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !id.is_empty() {
                        out.push(id);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        return out;
    }
    let id: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if id.is_empty() { Vec::new() } else { vec![id] }
}

/// The top-level module each crate path in `code` reaches, with its line. Names that are not
/// modules at the root (`crate::Error`, `crate::Result`) are `error`'s re-exports.
fn imports(rel: &str, code: &str, roots: &BTreeSet<String>) -> Vec<(usize, String)> {
    let module = module_of(rel);
    let by_name = rel.starts_with("bin/") || code.contains("use crate as pagewatch;");
    let starts = |i: usize| {
        let before = code[..i].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
    };
    let mut reached: Vec<(usize, String)> = Vec::new();
    for prefix in ["crate::", "pagewatch::"] {
        if prefix == "pagewatch::" && !by_name {
            continue;
        }
        for (i, _) in code.match_indices(prefix) {
            if starts(i) {
                reached.extend(heads(code, i + prefix.len()).into_iter().map(|h| (i, h)));
            }
        }
    }
    for (i, _) in code.match_indices("super::") {
        if !starts(i) {
            continue;
        }
        // `super::super::x` climbs one module per `super`; a file's `super` is the module
        // that declares it (`app/jobs.rs` and `app/x/mod.rs` → `app`).
        let mut rest = &code[i..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            up += 1;
            rest = r;
        }
        let base_len = module.len().saturating_sub(up);
        if let Some(top) = module.get(..base_len).and_then(|m| m.first()) {
            reached.push((i, top.clone()));
        } else {
            let at = code.len() - rest.len();
            reached.extend(heads(code, at).into_iter().map(|h| (i, h)));
        }
    }
    let mut out = Vec::new();
    for (i, r) in reached {
        let top = if roots.contains(&r) {
            r
        } else if r == "Error" || r == "Result" {
            "error".to_owned()
        } else {
            continue;
        };
        out.push((code[..i].matches('\n').count() + 1, top));
    }
    out.sort();
    out
}

/// Every `.rs` file under `dir`, relative to it.
fn files(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, base, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

/// Whether a file is test code only.
fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == "tests.rs" || name.ends_with("_tests.rs")
}

/// The imports that break the table: "file:line: layer → layer".
fn violations(sources: &[(String, String)]) -> Vec<String> {
    let roots: BTreeSet<String> = LAYERS.iter().map(|(l, _)| (*l).to_owned()).collect();
    let mut out = Vec::new();
    for (rel, text) in sources {
        if rel == "lib.rs" || is_test_file(rel) {
            continue;
        }
        let layer = layer_of(rel);
        if !roots.contains(&layer) {
            out.push(format!(
                "{rel}: layer {layer} is not in LAYERS: give it a floor"
            ));
            continue;
        }
        let may = allowed(&layer);
        for (line, to) in imports(rel, &code_of(text), &roots) {
            if to != layer && !may.contains(to.as_str()) {
                out.push(format!("src/{rel}:{line}: {layer} → {to}"));
            }
        }
    }
    out
}

#[test]
fn every_import_follows_the_layer_table() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    files(&src, &src, &mut sources);
    sources.sort();
    assert!(sources.len() > 100, "read {} files", sources.len());
    let bad = violations(&sources);
    assert!(
        bad.is_empty(),
        "imports against the layer table (tests/layers.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_table_has_no_circle() {
    // Depth-first over the allowed arrows: a back edge is a circle.
    fn visit<'a>(
        l: &'a str,
        state: &mut BTreeMap<&'a str, u8>,
        path: &mut Vec<&'a str>,
    ) -> Option<Vec<&'a str>> {
        match state.get(l) {
            Some(1) => {
                let mut c = path.clone();
                c.push(l);
                return Some(c);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(l, 1);
        path.push(l);
        for next in allowed(l) {
            if let Some(c) = visit(next, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(l, 2);
        None
    }
    let mut state = BTreeMap::new();
    for (l, may) in LAYERS {
        for m in *may {
            assert!(
                *m == "*" || LAYERS.iter().any(|(x, _)| x == m),
                "{l} may import {m}, which is not a layer"
            );
        }
        let circle = visit(l, &mut state, &mut Vec::new());
        assert!(circle.is_none(), "circle in LAYERS: {circle:?}");
    }
}

#[test]
fn an_upward_import_is_caught() {
    let file = |rel: &str, text: &str| (rel.to_owned(), text.to_owned());
    let bad = violations(&[
        file("model/x.rs", "use crate::app::App;\n"),
        file("parse/y.rs", "use crate::{sample::names, ui::Screen};\n"),
        file("config/mod.rs", "fn f() -> super::app::Msg { todo!() }\n"),
        file("jobs/fio/z.rs", "use super::super::super::shell::tui;\n"),
        file("newfolder/a.rs", "\n"),
        file(
            "record/r.rs",
            "use crate as pagewatch;\nfn f() { pagewatch::app::x(); }\n",
        ),
        file(
            "source/s.rs",
            "#[cfg(test)]\nmod tests {\n    fn f() {}\n}\nuse crate::{\n    model::Model,\n};\n",
        ),
    ]);
    assert_eq!(bad.len(), 7, "{bad:#?}");
    assert!(
        bad[0].starts_with("src/model/x.rs:1: model → app"),
        "{bad:?}"
    );
    assert!(bad[1].contains("parse → ui"), "{bad:?}");
    assert!(bad[2].contains("config → app"), "{bad:?}");
    assert!(bad[3].contains("jobs → shell"), "{bad:?}");
    assert!(bad[4].contains("newfolder is not in LAYERS"), "{bad:?}");
    assert!(
        bad[5].starts_with("src/record/r.rs:2: record → app"),
        "{bad:?}"
    );
    assert!(bad[6].contains("source → model"), "{bad:?}");
    // What is allowed, in comments or in test code, is not.
    let allowed_ones = violations(&[
        file(
            "model/x.rs",
            "use crate::parse::Snapshot; // crate::app::App\n",
        ),
        file(
            "parse/w.rs",
            "use super::Snapshot;\nuse crate::{Error, Result};\n",
        ),
        file(
            "parse/z.rs",
            "use crate::sample::names;\n/* crate::ui */\n#[cfg(test)]\nmod tests {\n    use crate::source::TreeSource;\n}\n",
        ),
        file("parse/z_tests.rs", "use crate::app::App;\n"),
        file(
            "parse/q.rs",
            "const S: &str = \"crate::app::App\";\nconst C: char = '{';\n",
        ),
    ]);
    assert!(allowed_ones.is_empty(), "{allowed_ones:#?}");
}

#[path = "layers/circles.rs"]
mod circles;

#[test]
fn no_circle_between_files() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut sources = Vec::new();
    files(&src, &src, &mut sources);
    sources.sort();
    let arrows = circles::graph(&sources);
    assert!(arrows.len() > 500, "found {} arrows", arrows.len());
    let found = circles::describe(&sources);
    assert!(
        found.is_empty(),
        "{} circles between files (tests/layers/circles.rs):\n{}",
        found.len(),
        found.join("\n")
    );
}

#[path = "layers/sizes.rs"]
mod sizes;

#[test]
fn files_and_functions_stay_small() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for dir in ["src", "tests"] {
        let mut found = Vec::new();
        files(&root.join(dir), root, &mut found);
        all.extend(found);
    }
    all.sort();
    assert!(all.len() > 300, "read {} files", all.len());
    let bad = sizes::problems(&all, sizes::ALLOWED);
    assert!(
        bad.is_empty(),
        "sizes (tests/layers/sizes.rs: files ≤ {} lines, functions ≤ {}):\n{}",
        sizes::MAX_FILE_LINES,
        sizes::MAX_FN_LINES,
        bad.join("\n")
    );
}
