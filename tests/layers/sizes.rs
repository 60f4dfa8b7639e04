//! Sizes, pinned: a file of `src/` or `tests/` holds at most `MAX_FILE_LINES` lines and a
//! function of `src/` at most `MAX_FN_LINES`, except the offenders in `ALLOWED`, each at its
//! size when the check came. The list may only shrink: the check fails when a file or function grows
//! past the limit (a new offender), when an allowed one grows, and when an allowed one is
//! back within the limit (or gone), so that its entry is taken out.
//!
//! What counts: a file's lines, all of them; a function's lines from the line of its `fn` to
//! the line of its closing brace, blank lines and comments inside included (its doc comment
//! and attributes above are not). Clippy's `too_many_lines` (also 100) counts code lines
//! only; this counts what a reader scrolls through. Test code counts: a `*_tests.rs` file
//! (and its functions) is split out to keep its neighbour small and must stay small itself,
//! and a file under `tests/` is as hard to find one's way in as any. The functions under
//! `tests/` do not count: an integration test is one scenario read top to bottom (set up,
//! load, measure, check), and cutting it at 100 lines hides its steps. A function is
//! named `file::name` (`file::Type::name` inside an `impl` or `trait` is still `file::name`:
//! the name and the file are enough to find it); two of one name in a file are one entry at
//! the larger size.
//!
//! Owns: the limits, the allowlist and the check. Must not touch: anything but reading
//! `src/` and `tests/`.

use std::collections::BTreeMap;

use super::blank;

/// The most lines a file may hold.
pub(crate) const MAX_FILE_LINES: usize = 700;
/// The most lines a function may span.
pub(crate) const MAX_FN_LINES: usize = 100;

/// The offenders when the check came, at their size then: a file (`src/…`, `tests/…`) or a
/// function (`src/….rs::name`), and its lines.
pub(crate) const ALLOWED: &[(&str, usize)] = &[
    ("src/source/cgroups.rs::read", 104),
    ("src/ui/panes/jobs.rs::owned_lines", 101),
    ("src/ui/panes/reclaim.rs::draw", 103),
    ("tests/fuzz.rs", 1058),
    ("tests/trees.rs", 912),
];

/// Every function of `text` with its lines (the larger of two with one name).
pub(crate) fn functions(text: &str) -> BTreeMap<String, usize> {
    let code = blank(text);
    let bytes = code.as_bytes();
    let mut out = BTreeMap::new();
    for (at, _) in code.match_indices("fn ") {
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue; // `fn(` a pointer type
        }
        // The body: the first `{` before a `;` (a declaration without a body has none),
        // outside the signature's parentheses, brackets and angle brackets.
        let mut k = at;
        let mut depth = 0i32;
        let open = loop {
            match bytes.get(k) {
                None => break None,
                Some(b'(' | b'[') => depth += 1,
                Some(b')' | b']') => depth -= 1,
                Some(b';') if depth == 0 => break None,
                Some(b'{') if depth == 0 => break Some(k),
                _ => {}
            }
            k += 1;
        };
        let Some(open) = open else { continue };
        let mut depth = 0;
        let mut close = code.len();
        for (j, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + j;
                        break;
                    }
                }
                _ => {}
            }
        }
        let lines = code[at..close].matches('\n').count() + 1;
        let e = out.entry(name).or_insert(0);
        *e = (*e).max(lines);
    }
    out
}

/// What breaks the limits or the allowlist, one line each.
pub(crate) fn problems(files: &[(String, String)], allowed: &[(&str, usize)]) -> Vec<String> {
    let mut found: BTreeMap<String, usize> = BTreeMap::new();
    for (rel, text) in files {
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            found.insert(rel.clone(), lines);
        }
        if !rel.starts_with("src/") {
            continue;
        }
        for (name, n) in functions(text) {
            if n > MAX_FN_LINES {
                found.insert(format!("{rel}::{name}"), n);
            }
        }
    }
    let allow: BTreeMap<&str, usize> = allowed.iter().copied().collect();
    let mut out = Vec::new();
    for (what, &n) in &found {
        let limit = if what.contains(".rs::") {
            MAX_FN_LINES
        } else {
            MAX_FILE_LINES
        };
        match allow.get(what.as_str()) {
            None => out.push(format!("{what}: {n} lines, over {limit}: split it")),
            Some(&was) if n > was => {
                out.push(format!(
                    "{what}: {n} lines, grew from {was} (allowed, not to grow)"
                ));
            }
            Some(&was) if n < was => out.push(format!(
                "{what}: {n} lines, down from {was}: lower its entry in ALLOWED to {n}"
            )),
            Some(_) => {}
        }
    }
    for (what, was) in allow {
        if !found.contains_key(what) {
            out.push(format!(
                "{what}: within the limit now (or gone), was {was}: take it out of ALLOWED"
            ));
        }
    }
    out
}

#[test]
fn the_size_allowlist_only_shrinks() {
    let file = |rel: &str, text: String| (rel.to_owned(), text);
    let body = |n: usize| format!("fn long() {{\n{}}}\n", "    x();\n".repeat(n - 2));
    let allowed = &[
        ("src/a.rs::long", 101),
        ("src/big.rs", 701),
        ("src/gone.rs", 800),
    ];
    // As allowed: nothing to say; comments and strings hold no braces.
    let ok = problems(
        &[
            file("src/a.rs", body(101)),
            file("src/big.rs", "\n".repeat(701)),
            file("src/c.rs", format!("{}\nfn f() {{ \"}}\" }}\n", body(100))),
            file("tests/t.rs", body(300)),
        ],
        &allowed[..2],
    );
    assert!(ok.is_empty(), "{ok:#?}");
    assert_eq!(functions(&body(101))["long"], 101);
    // Grown, new, shrunk, gone.
    let bad = problems(
        &[
            file("src/a.rs", body(102)),
            file("src/big.rs", "\n".repeat(650)),
            file("src/new.rs", format!("{}// {{\n", body(101))),
            file("tests/huge.rs", "\n".repeat(701)),
        ],
        allowed,
    );
    assert_eq!(bad.len(), 5, "{bad:#?}");
    assert!(
        bad[0].starts_with("src/a.rs::long: 102 lines, grew from 101"),
        "{bad:#?}"
    );
    assert!(
        bad[1].starts_with("src/new.rs::long: 101 lines, over 100"),
        "{bad:#?}"
    );
    assert!(
        bad[2].starts_with("tests/huge.rs: 701 lines, over 700"),
        "{bad:#?}"
    );
    assert!(
        bad[3].starts_with("src/big.rs: within the limit"),
        "{bad:#?}"
    );
    assert!(
        bad[4].starts_with("src/gone.rs: within the limit"),
        "{bad:#?}"
    );
    // Smaller but still over: the entry is lowered.
    let lower = problems(&[file("src/a.rs", body(101))], &[("src/a.rs::long", 105)]);
    assert!(
        lower[0].contains("lower its entry in ALLOWED to 101"),
        "{lower:#?}"
    );
}
