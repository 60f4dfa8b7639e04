//! The file rule, pinned: the import graph between the files of `src/` has no circle. The
//! folder rule (`LAYERS`) cannot see a circle inside one folder; this one can, and names the
//! files of each circle with the line of every arrow in it.
//!
//! What counts as an import is the folder test's rule (`crate::`, `super::` and, in the
//! binary or a file that says `use crate as pagewatch`, `pagewatch::` paths, in `use` lines,
//! `use crate::{…}` groups and inline; comments, strings and test code do not count), plus
//! the paths that the file test needs and the folder test does not: `self::…`, a child
//! module's name (`mod.rs` calling `child::f()`) and a name a `use` bound to a module
//! (`use crate::model::procs;` then `procs::Tracker`).
//!
//! An arrow goes to the file that defines the item a path names:
//! - A path is walked through the module tree (`crate::model::procs::Tracker` reaches the
//!   file `model/procs.rs`), and the first name that is not a module is the item. If that
//!   file defines the item (`fn`, `struct`, `enum`, `trait`, `type`, `const`, `static`,
//!   `union`, `macro_rules!`), the arrow goes there.
//! - If the file only binds the name with a `use` (a `pub use` re-export in `mod.rs`, or a
//!   private `use` that a child reaches with `super::x`), the path is followed through that
//!   `use` to the file that defines the item, and through `use x::*` globs likewise.
//! - A path that names a module and no item (`use crate::model::procs;`) is no arrow by
//!   itself; the paths through its name are. A name that cannot be found (made by a macro)
//!   leaves the arrow at the module's file, and so does a glob import (`use x::*`).
//! - A re-export (`pub use`, `pub(crate) use`, …) is not an arrow from the file that
//!   re-exports: it is the folder's front door, and a child that imports its parent's own
//!   items while the parent re-exports the child is no circle. A private `use` is an arrow.
//!   `mod x;` is not an arrow.
//!
//! What it cannot see: a method call is no path (`self.drive_play()` in `app/update.rs`,
//! defined in `app/play.rs`'s `impl App`, needs the compiler's types), nor is a trait's
//! method. The binary (`bin/`) is left out: nothing imports it.
//!
//! Owns: the file graph and its circle check. Must not touch: anything but reading `src/`.

use std::collections::{BTreeMap, BTreeSet};

use super::{code_of, is_test_file, module_of};

type Module = Vec<String>;

/// A file's module path; `lib.rs` is the crate root.
fn module_path(rel: &str) -> Module {
    if rel == "lib.rs" {
        Vec::new()
    } else {
        module_of(rel)
    }
}

/// Where a path leads: a file that defines (or is left holding) an item, or a module.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    Item(String),
    Module(String),
}

/// What one file says: the items it defines, its child modules, the names its top-level
/// `use` lines bind (re-exports included), and its arrows before resolving.
#[derive(Debug, Default)]
struct FileFacts {
    defs: BTreeSet<String>,
    children: BTreeSet<String>,
    binds: BTreeMap<String, Module>,
    globs: Vec<Module>,
    /// Paths the file's own code uses (private `use` leaves and inline paths), with lines.
    uses: Vec<(usize, Module)>,
}

const KEYWORD_ITEMS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
];

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier starting at byte `at`.
fn ident_at(code: &str, at: usize) -> &str {
    let end = code[at..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(code.len(), |(k, _)| at + k);
    &code[at..end]
}

/// Brace depth before each byte (one entry per byte).
fn depths(code: &str) -> Vec<u32> {
    let mut out = Vec::with_capacity(code.len() + 1);
    let mut d = 0u32;
    for b in code.bytes() {
        out.push(d);
        match b {
            b'{' => d += 1,
            b'}' => d = d.saturating_sub(1),
            _ => {}
        }
    }
    out.push(d);
    out
}

/// Every whole-word `word` in `code`: (byte offset).
fn words<'a>(code: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    code.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// A `use` tree (`a::{b, c::d as e, f::*}`) flattened to leaves: (segments, alias, glob).
fn flatten(tree: &str, prefix: &[String], out: &mut Vec<(Module, Option<String>)>) {
    let tree = tree.trim();
    // Split off a `{ … }` group at the end of the prefix.
    if let Some(open) = tree.find('{') {
        let head: Module = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let mut base = prefix.to_vec();
        base.extend(head);
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    let part = inner[start..i].trim();
                    if part == "self" {
                        let alias = base.last().cloned();
                        out.push((base.clone(), alias));
                    } else if let Some(rest) = part.strip_prefix("self as ") {
                        out.push((base.clone(), Some(rest.trim().to_owned())));
                    } else if !part.is_empty() {
                        flatten(part, &base, out);
                    }
                    start = i + 1;
                }
                _ => {}
            }
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim().to_owned())),
        None => (tree, None),
    };
    let mut segs = prefix.to_vec();
    segs.extend(
        path.split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned),
    );
    if segs.last().is_some_and(|s| s == "*") {
        out.push((segs, None));
        return;
    }
    let alias = alias.or_else(|| segs.last().cloned());
    out.push((segs, alias));
}

/// `path` as seen from `module` made absolute from the crate root, or `None` when it leaves
/// the crate (`std::…`, a dependency). `children` and `binds` are the file's own names.
fn absolute(
    path: &[String],
    module: &[String],
    children: &BTreeSet<String>,
    binds: &BTreeMap<String, Module>,
    by_name: bool,
) -> Option<Module> {
    let first = path.first()?;
    let mut out: Module;
    let mut rest = path;
    match first.as_str() {
        "crate" => {
            out = Vec::new();
            rest = &path[1..];
        }
        "pagewatch" if by_name => {
            out = Vec::new();
            rest = &path[1..];
        }
        "self" => {
            out = module.to_vec();
            rest = &path[1..];
        }
        "super" => {
            out = module.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                out.pop();
                rest = &rest[1..];
            }
        }
        name if children.contains(name) => {
            out = module.to_vec();
        }
        name if binds.contains_key(name) => {
            out = binds[name].clone();
            rest = &path[1..];
        }
        _ => return None,
    }
    out.extend(rest.iter().cloned());
    Some(out)
}

/// The `use` statements of `code`: (offset of `use`, end offset, public, tree text).
fn use_statements(code: &str) -> Vec<(usize, usize, bool, String)> {
    let mut out = Vec::new();
    for at in words(code, "use") {
        let Some(semi) = code[at..].find(';') else {
            continue;
        };
        let tree = &code[at + 3..at + semi];
        // `use` is a statement only after `;`, `{`, `}`, an attribute or a visibility.
        let before = code[..at].trim_end();
        let public = before.ends_with("pub")
            || before.ends_with(')') && {
                let open = before.rfind('(').unwrap_or(0);
                before[..open].trim_end().ends_with("pub")
            };
        let starts_statement = public
            || before.is_empty()
            || before.ends_with([';', '{', '}', ']'])
            || before.ends_with("unsafe");
        if starts_statement {
            out.push((at, at + semi + 1, public, tree.trim().to_owned()));
        }
    }
    out
}

fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// The items and child modules `code` defines at its top level (brace depth 0).
fn definitions(code: &str, depth: &[u32], f: &mut FileFacts) {
    for kw in KEYWORD_ITEMS {
        for at in words(code, kw).filter(|&at| depth[at] == 0) {
            let rest = code[at + kw.len()..].trim_start();
            let rest = rest.strip_prefix("mut ").unwrap_or(rest).trim_start();
            let name = ident_at(rest, 0);
            if name.is_empty() || name == "_" || KEYWORD_ITEMS.contains(&name) {
                continue;
            }
            if *kw == "mod" {
                f.children.insert(name.to_owned());
            } else {
                f.defs.insert(name.to_owned());
            }
        }
    }
    for at in words(code, "macro_rules").filter(|&at| depth[at] == 0) {
        let rest = code[at + "macro_rules".len()..].trim_start_matches(['!', ' ']);
        f.defs.insert(ident_at(rest, 0).to_owned());
    }
}

/// Everything one file says (see `FileFacts`).
fn facts(rel: &str, text: &str) -> FileFacts {
    let code = code_of(text);
    let module = module_path(rel);
    let by_name = rel.starts_with("bin/") || code.contains("use crate as pagewatch;");
    let depth = depths(&code);
    let mut f = FileFacts::default();
    definitions(&code, &depth, &mut f);
    // `use` lines: top-level ones bind names; private ones are arrows.
    let statements = use_statements(&code);
    let mut leaves = Vec::new();
    for (at, _, public, tree) in &statements {
        if tree == "crate as pagewatch" {
            continue;
        }
        let mut flat = Vec::new();
        flatten(tree, &[], &mut flat);
        for (segs, alias) in flat {
            leaves.push((*at, depth[*at] == 0, *public, segs, alias));
        }
    }
    // The names the `use` lines bind, child modules known first. A `use` inside a function
    // binds for the whole file here (its paths are followed; no other file reaches it).
    for (_, top, _, segs, alias) in &leaves {
        let Some(abs) = absolute(segs, &module, &f.children, &BTreeMap::new(), by_name) else {
            continue;
        };
        match alias {
            Some(a) if *top => {
                f.binds.insert(a.clone(), abs);
            }
            Some(a) => {
                f.binds.entry(a.clone()).or_insert(abs);
            }
            None if *top => f.globs.push(abs[..abs.len() - 1].to_vec()),
            None => {}
        }
    }
    // A glob keeps its `*`: no file defines it, so the arrow goes to the module's file.
    for (at, _, public, segs, _) in leaves {
        if public {
            continue;
        }
        if let Some(abs) = absolute(&segs, &module, &f.children, &BTreeMap::new(), by_name) {
            f.uses.push((line_of(&code, at), abs));
        }
    }
    // Inline paths, outside the `use` lines.
    let mut inline = code.clone();
    for (at, end, _, _) in &statements {
        let gone: String = inline[*at..*end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        inline.replace_range(*at..*end, &gone);
    }
    for (i, _) in inline.match_indices("::") {
        let Some((start, segs)) = path_at(&inline, i) else {
            continue;
        };
        let first = segs[0].as_str();
        let keyword = matches!(first, "crate" | "super" | "self")
            || (first == "pagewatch" && by_name)
            || f.children.contains(first);
        if !keyword && !f.binds.contains_key(first) {
            continue;
        }
        if let Some(abs) = absolute(&segs, &module, &f.children, &f.binds, by_name) {
            f.uses.push((line_of(&inline, start), abs));
        }
    }
    f
}

/// The path whose first `::` is at byte `i`, and where it starts: `None` when `i` is a later
/// `::` of its path, or the path has one segment.
fn path_at(inline: &str, i: usize) -> Option<(usize, Module)> {
    // Walk back over `ident::` pairs.
    let mut start = i;
    loop {
        let id_start = inline[..start]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_ident(*c))
            .last()
            .map_or(start, |(k, _)| k);
        if id_start == start {
            break;
        }
        start = id_start;
        if inline[..start].ends_with("::") {
            start -= 2;
        } else {
            break;
        }
    }
    if inline[start..].find("::") != Some(i - start) || inline[..start].ends_with("::") {
        return None;
    }
    let mut segs: Module = Vec::new();
    let mut k = start;
    loop {
        let id = ident_at(inline, k);
        if id.is_empty() {
            break;
        }
        segs.push(id.to_owned());
        k += id.len();
        if inline[k..].starts_with("::") && inline[k + 2..].starts_with(is_ident) {
            k += 2;
        } else {
            break;
        }
    }
    (segs.len() >= 2).then_some((start, segs))
}

/// Follows `path` to the file that defines what it names (see the module doc).
fn resolve(
    path: &[String],
    files: &BTreeMap<Module, String>,
    facts: &BTreeMap<String, FileFacts>,
    hops: usize,
) -> Option<Target> {
    if hops > 16 {
        return None;
    }
    let mut m: Module = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let mut next = m.clone();
        next.push(path[i].clone());
        if !files.contains_key(&next) {
            break;
        }
        m = next;
        i += 1;
    }
    let file = files.get(&m)?;
    if i == path.len() {
        // A function may share a module's name (`ui::theme`, the module, and `ui::theme()`,
        // the function in `ui/mod.rs`): a `use` brings in both, so the arrow goes to the
        // parent's file when it defines one.
        if let (Some(name), Some(p)) = (m.last(), files.get(&m[..m.len().saturating_sub(1)])) {
            if facts[p].defs.contains(name) {
                return Some(Target::Item(p.clone()));
            }
            if let Some(target) = facts[p].binds.get(name).filter(|t| **t != m) {
                if let Some(Target::Item(t)) = resolve(target, files, facts, hops + 1) {
                    return Some(Target::Item(t));
                }
            }
        }
        return Some(Target::Module(file.clone()));
    }
    let f = &facts[file];
    let name = &path[i];
    if f.defs.contains(name) {
        return Some(Target::Item(file.clone()));
    }
    if let Some(target) = f.binds.get(name) {
        let mut p = target.clone();
        p.extend(path[i + 1..].iter().cloned());
        if p != path {
            return resolve(&p, files, facts, hops + 1);
        }
    }
    for g in &f.globs {
        let mut p = g.clone();
        p.extend(path[i..].iter().cloned());
        if let Some(Target::Item(t)) = resolve(&p, files, facts, hops + 1) {
            if facts[&t].defs.contains(name) {
                return Some(Target::Item(t));
            }
        }
    }
    Some(Target::Item(file.clone()))
}

/// The arrows between files: (from, to) → the line of the first import that makes it.
pub(crate) fn graph(sources: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let code: Vec<&(String, String)> = sources
        .iter()
        .filter(|(rel, _)| !is_test_file(rel) && !rel.starts_with("bin/"))
        .collect();
    let files: BTreeMap<Module, String> = code
        .iter()
        .map(|(rel, _)| (module_path(rel), rel.clone()))
        .collect();
    let all: BTreeMap<String, FileFacts> = code
        .iter()
        .map(|(rel, text)| (rel.clone(), facts(rel, text)))
        .collect();
    let mut out = BTreeMap::new();
    for (rel, f) in &all {
        for (line, path) in &f.uses {
            let Some(Target::Item(to)) = resolve(path, &files, &all, 0) else {
                continue;
            };
            if &to != rel {
                out.entry((rel.clone(), to)).or_insert(*line);
            }
        }
    }
    out
}

/// The strongly connected components of more than one file (Tarjan), each sorted.
pub(crate) fn circles(arrows: &BTreeMap<(String, String), usize>) -> Vec<Vec<String>> {
    struct State<'a> {
        next: BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.next.get(v).cloned().unwrap_or_default() {
            if !s.index.contains_key(w) {
                visit(w, s);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                c.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                s.out.push(c);
            }
        }
    }
    let mut s = State {
        next: BTreeMap::new(),
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for (a, b) in arrows.keys() {
        s.next.entry(a.as_str()).or_default().push(b.as_str());
        s.next.entry(b.as_str()).or_default();
    }
    let nodes: Vec<&str> = s.next.keys().copied().collect();
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &mut s);
        }
    }
    s.out.sort();
    s.out
}

/// Each circle as text: its files, then every arrow inside it with its line.
pub(crate) fn describe(sources: &[(String, String)]) -> Vec<String> {
    let arrows = graph(sources);
    circles(&arrows)
        .into_iter()
        .map(|c| {
            let inside: Vec<String> = arrows
                .iter()
                .filter(|((a, b), _)| c.contains(a) && c.contains(b))
                .map(|((a, b), line)| format!("    src/{a}:{line} → {b}"))
                .collect();
            format!(
                "circle of {}: {}\n{}",
                c.len(),
                c.join(", "),
                inside.join("\n")
            )
        })
        .collect()
}

#[test]
fn a_circle_between_files_is_caught() {
    let file = |rel: &str, text: &str| (rel.to_owned(), text.to_owned());
    // A circle of two through `use` lines, and one of three through inline paths.
    let found = circles(&graph(&[
        file("m/mod.rs", "mod a;\nmod b;\n"),
        file("m/a.rs", "use super::b::B;\npub struct A;\n"),
        file("m/b.rs", "use crate::m::{a::A, c};\npub struct B;\n"),
        file("m/c.rs", "pub fn f() {}\n"),
        file("n/mod.rs", "mod x;\nmod y;\nmod z;\n"),
        file("n/x.rs", "pub fn f() { super::y::g() }\n"),
        file("n/y.rs", "pub fn g() { crate::n::z::h() }\n"),
        file("n/z.rs", "pub fn h() { super::x::f() }\n"),
    ]));
    assert_eq!(
        found,
        [vec!["m/a.rs", "m/b.rs"], vec!["n/x.rs", "n/y.rs", "n/z.rs"]],
        "{found:?}"
    );
    // A mod.rs that calls its child, while the child uses an item the mod.rs defines: a
    // circle, through the child's name and through a module bound by `use`.
    let found = circles(&graph(&[
        file(
            "p/mod.rs",
            "mod kid;\npub struct Big;\nfn f() { kid::g(); }\n",
        ),
        file("p/kid.rs", "pub fn g(_: &super::Big) {}\n"),
        file("q/mod.rs", "pub mod kid;\npub struct Big;\n"),
        file("q/kid.rs", "use crate::q;\npub fn g(_: &q::Big) {}\n"),
        file("q/user.rs", "use crate::q::kid;\npub struct Big2;\n"),
    ]));
    assert_eq!(found, [vec!["p/kid.rs", "p/mod.rs"]], "{found:?}");
    // A function that shares a module's name: `use crate::u::th;` brings in both, and the
    // arrow goes to the file that defines the function (a circle while that is `u/mod.rs`).
    let theme = |defined_in_mod: bool| {
        let (top, th) = if defined_in_mod {
            (
                "pub mod th;\nmod pane;\npub fn th() {}\nfn draw() { pane::draw(); }\n",
                "",
            )
        } else {
            (
                "pub mod th;\nmod pane;\npub use th::th;\nfn draw() { pane::draw(); }\n",
                "pub fn th() {}\n",
            )
        };
        graph(&[
            file("u/mod.rs", top),
            file("u/th.rs", th),
            file("u/pane.rs", "use crate::u::th;\npub fn draw() { th(); }\n"),
        ])
    };
    let found = circles(&theme(true));
    assert_eq!(found, [vec!["u/mod.rs", "u/pane.rs"]], "{found:?}");
    let arrows = theme(false);
    assert!(circles(&arrows).is_empty(), "{arrows:#?}");
    assert!(
        arrows.contains_key(&("u/pane.rs".to_owned(), "u/th.rs".to_owned())),
        "{arrows:#?}"
    );
    // Not circles: a mod.rs that only re-exports (the child's `super::B` goes to the file
    // that defines B), a private `use` reached with `super::` (followed to its file), a
    // re-export through a glob, and test code.
    let acyclic = graph(&[
        file("r/mod.rs", "mod a;\nmod b;\npub use a::A;\npub use b::B;\n"),
        file("r/a.rs", "use super::B;\npub struct A;\n"),
        file(
            "r/b.rs",
            "pub struct B;\n#[cfg(test)]\nmod tests {\n    use super::super::A;\n}\n",
        ),
        file("r/b_tests.rs", "use crate::r::a::A;\n"),
        file(
            "s/mod.rs",
            "mod a;\nmod b;\nmod c;\nuse self::b::B;\npub use a::*;\n",
        ),
        file("s/a.rs", "pub struct A(super::B);\n"),
        file("s/b.rs", "pub struct B;\n"),
        file("s/c.rs", "pub fn g() -> crate::s::A { todo!() }\n"),
    ]);
    assert!(circles(&acyclic).is_empty(), "{acyclic:#?}");
    let arrow = |a: &str, b: &str| acyclic.contains_key(&(a.to_owned(), b.to_owned()));
    assert!(arrow("r/a.rs", "r/b.rs"), "{acyclic:#?}");
    assert!(
        arrow("s/a.rs", "s/b.rs") && arrow("s/c.rs", "s/a.rs"),
        "{acyclic:#?}"
    );
    assert!(arrow("s/mod.rs", "s/b.rs"), "{acyclic:#?}");
    assert!(
        !arrow("r/mod.rs", "r/a.rs") && !arrow("r/b.rs", "r/a.rs"),
        "{acyclic:#?}"
    );
}
