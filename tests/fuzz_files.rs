//! Mutation fuzzing of the files a user names (issue 22): playbook files and config paths of
//! every shape, not only their text. `tests/fuzz.rs` mutates the text of playbooks and config
//! files; here the same kinds of text arrive through the readers that open them
//! (`play::file`, `config_io`), as regular files and as what is not one: `/dev/zero` and links
//! to it, FIFOs, directories, files over the 1 MiB cap, non-UTF-8 bytes, files and
//! directories other users may write, symbolic links at every component of a config path,
//! and text with terminal escape sequences in every string.
//!
//! Each case must end (a FIFO must not block: the whole test would hang), without a panic; an
//! error must name the file; what is read must show no control character; and a config save
//! must never write through a link or outside the running user's own directories.
//!
//! Deterministic: a fixed seed per case. `PW_FUZZ_CASES` sets the scale, as in
//! `tests/fuzz.rs` (a tenth of it here, at least 300: each case makes files). Hostile
//! playbooks that once got through live in `tests/fuzz_corpus/playbooks/` and run first.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use pagewatch::config::{ConfigPath, Setting};
use pagewatch::play::{Action, Playbook, builtin::BUILTINS, file};
use pagewatch::shell::config_io;

/// xorshift64*, as in `tests/fuzz.rs`.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn cases() -> u64 {
    let n: u64 = std::env::var("PW_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000);
    (n / 10).max(300)
}

/// Escape sequences a terminal acts on, as TOML escapes inside a string.
const HOSTILE: &[&str] = &[
    "\\u001b]0;owned\\u0007",
    "\\u001b[2J\\u001b[H",
    "\\u009b31m",
    "\\r\\n",
    "\\u202e",
    "\\u0000",
    "\\t\\u007f",
];

/// Puts a hostile escape into one string value of `text`: mostly a shown one (the name, the
/// description, a phase, a marker, the config's units), sometimes any.
fn poison(rng: &mut Rng, text: &str) -> String {
    let shown = [
        "name = \"",
        "description = \"",
        "phase = \"",
        "marker = \"",
        "units = \"",
    ];
    let quotes: Vec<usize> = text
        .match_indices("= \"")
        .map(|(i, _)| i + 3)
        .filter(|i| rng.below(4) == 0 || shown.iter().any(|k| text[..*i].ends_with(k)))
        .collect();
    if quotes.is_empty() {
        return text.to_owned();
    }
    let at = quotes[rng.below(quotes.len())];
    format!(
        "{}{}{}",
        &text[..at],
        HOSTILE[rng.below(HOSTILE.len())],
        &text[at..]
    )
}

fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
}

/// Every string a playbook shows: none may hold a control character.
fn shown_clean(b: &Playbook, case: &str) {
    let mut texts = vec![b.name.clone(), b.description.clone(), b.origin.clone()];
    for s in &b.steps {
        match &s.action {
            Action::Phase(t) | Action::Marker(t) => texts.push(t.clone()),
            _ => {}
        }
        texts.push(pagewatch::play::seq::describe(&s.action));
    }
    for t in texts {
        assert!(!t.chars().any(char::is_control), "{t:?} in {case}");
    }
}

/// Makes one playbook file of a random shape in `dir`; (its path, what it is).
fn playbook_file(rng: &mut Rng, dir: &Path) -> (PathBuf, &'static str) {
    let (_, text) = BUILTINS[rng.below(BUILTINS.len())];
    let mut text = text.to_owned();
    for _ in 0..=rng.below(3) {
        text = poison(rng, &text);
    }
    let p = dir.join("book.toml");
    let what = match rng.below(12) {
        0 => {
            std::os::unix::fs::symlink("/dev/zero", &p).unwrap();
            "a link to /dev/zero"
        }
        1 => {
            mkfifo(&p);
            "a FIFO"
        }
        2 => {
            std::fs::create_dir(&p).unwrap();
            "a directory"
        }
        3 => {
            let mut big = text.clone();
            while big.len() as u64 <= file::MAX_BYTES {
                big.push_str("[[step]]\nmarker = \"x\"\n");
            }
            std::fs::write(&p, big).unwrap();
            "over the cap"
        }
        4 => {
            let mut bytes = text.into_bytes();
            let at = rng.below(bytes.len());
            bytes.insert(at, 0xff);
            std::fs::write(&p, bytes).unwrap();
            "not UTF-8"
        }
        5 => {
            std::fs::write(&p, &text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o666)).unwrap();
            "writable by others"
        }
        6 => {
            std::os::unix::fs::symlink(dir.join("nowhere"), &p).unwrap();
            "a dangling link"
        }
        7 => {
            let real = dir.join("real.toml");
            std::fs::write(&real, &text).unwrap();
            std::os::unix::fs::symlink(&real, &p).unwrap();
            "a link to a file"
        }
        8 => {
            std::os::unix::fs::symlink("/dev/null", &p).unwrap();
            "a link to /dev/null"
        }
        _ => {
            std::fs::write(&p, &text).unwrap();
            "a file"
        }
    };
    (p, what)
}

#[test]
fn corpus_playbooks_that_once_got_through() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus/playbooks");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    paths.sort();
    let tmp = tempfile::tempdir().unwrap();
    for path in &paths {
        // A private copy: the checkout's own modes are not what is tested.
        let copy = tmp.path().join(path.file_name().unwrap());
        std::fs::copy(path, &copy).unwrap();
        std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)).unwrap();
        let case = path.display().to_string();
        match file::load(&copy) {
            Ok(b) => shown_clean(&b, &case),
            Err(e) => {
                let e = format!("{e:#}");
                assert!(!e.chars().any(char::is_control), "{e:?} in {case}");
                assert!(e.contains(copy.to_str().unwrap()), "{e} in {case}");
            }
        }
    }
    assert!(paths.len() >= 3, "corpus has {} playbooks", paths.len());
}

#[test]
fn playbook_files_of_every_shape_are_read_or_refused_at_once() {
    let n = cases();
    let mut read = 0;
    for seed in 0..n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let tmp = tempfile::tempdir().unwrap();
        let (p, what) = playbook_file(&mut rng, tmp.path());
        let case = format!("playbook file case {seed} ({what})");
        let out = catch_unwind(AssertUnwindSafe(|| file::load(&p)))
            .unwrap_or_else(|_| panic!("panic in {case}"));
        match out {
            Ok(b) => {
                assert!(
                    matches!(what, "a file" | "a link to a file"),
                    "{case} was read"
                );
                shown_clean(&b, &case);
                read += 1;
            }
            Err(e) => {
                let e = format!("{e:#}");
                assert!(e.contains(p.to_str().unwrap()), "{e} in {case}");
                assert!(!e.chars().any(char::is_control), "{e:?} in {case}");
            }
        }
    }
    eprintln!("{n} playbook files: {read} read, the rest refused");
    assert!(read > 0 && read < n, "{read} of {n}");
}

/// Makes a config path of a random shape under `root`: the base a real directory or a link to
/// one; `pagewatch` missing, real, a link to the victim's directory, a file or a FIFO;
/// `config.toml` missing, a mutated file, a link to the victim's file, a FIFO, a directory or
/// a link to /dev/zero. Returns the path and a description.
fn config_tree(rng: &mut Rng, root: &Path, victim: &Path) -> (ConfigPath, String) {
    let real_base = root.join("xdg");
    std::fs::create_dir(&real_base).unwrap();
    let base = if rng.below(3) == 0 {
        let l = root.join("xdg-link");
        std::os::unix::fs::symlink(&real_base, &l).unwrap();
        l
    } else {
        real_base.clone()
    };
    let loc = ConfigPath::default_for(Some(base.into()), None).unwrap();
    let dir = real_base.join("pagewatch");
    let mut what = Vec::new();
    let dir_real = match rng.below(6) {
        0 => {
            what.push("no dir");
            false
        }
        1 => {
            std::os::unix::fs::symlink(victim, &dir).unwrap();
            what.push("dir links to the victim's");
            false
        }
        2 => {
            std::fs::write(&dir, "x").unwrap();
            what.push("dir is a file");
            false
        }
        3 => {
            mkfifo(&dir);
            what.push("dir is a FIFO");
            false
        }
        _ => {
            std::fs::create_dir(&dir).unwrap();
            what.push("real dir");
            true
        }
    };
    if dir_real {
        let f = dir.join("config.toml");
        match rng.below(7) {
            0 => what.push("no file"),
            1 => {
                std::os::unix::fs::symlink(victim.join("config.toml"), &f).unwrap();
                what.push("file links to the victim's");
            }
            2 => {
                mkfifo(&f);
                what.push("file is a FIFO");
            }
            3 => {
                std::fs::create_dir(&f).unwrap();
                what.push("file is a directory");
            }
            4 => {
                std::os::unix::fs::symlink("/dev/zero", &f).unwrap();
                what.push("file links to /dev/zero");
            }
            _ => {
                let mut text =
                    "# mine\ninterval = 2.5\nunits = \"pages\"\nview = \"cgroups\"\n".to_owned();
                if rng.below(2) == 0 {
                    text = poison(rng, &text);
                }
                if rng.below(3) == 0 {
                    text.push_str(&"#".repeat(rng.below(3) << 20));
                }
                std::fs::write(&f, text).unwrap();
                what.push("a file");
            }
        }
    }
    (loc, what.join(", "))
}

#[test]
fn config_paths_of_every_shape_are_saved_safely_or_refused() {
    let n = cases();
    let mut saved = 0;
    for seed in 0..n {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("otherprog");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("config.toml"), "theirs = 1\n").unwrap();
        let (loc, what) = config_tree(&mut rng, tmp.path(), &victim);
        let case = format!("config path case {seed} ({what})");
        let change = [Setting::Interval(f64::from(seed as u32 % 100) + 1.0)];
        let res = catch_unwind(AssertUnwindSafe(|| {
            let _ = config_io::load(&loc.file);
            config_io::save(&loc, &change)
        }))
        .unwrap_or_else(|_| panic!("panic in {case}"));
        // The victim's directory is never written into.
        assert_eq!(
            std::fs::read_to_string(victim.join("config.toml")).unwrap(),
            "theirs = 1\n",
            "{case}: {res:?}"
        );
        assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1, "{case}");
        match res {
            Ok(()) => {
                let m = std::fs::symlink_metadata(&loc.file).unwrap();
                assert!(m.file_type().is_file(), "{case}");
                assert_eq!(m.permissions().mode() & 0o777, 0o600, "{case}");
                let (s, _) = config_io::load(&loc.file);
                assert_eq!(
                    s.interval,
                    Some(f64::from(seed as u32 % 100) + 1.0),
                    "{case}"
                );
                saved += 1;
            }
            Err(e) => assert!(!e.is_empty(), "{case}"),
        }
    }
    eprintln!("{n} config paths: {saved} saved, the rest refused");
    assert!(saved > 0 && saved < n, "{saved} of {n}");
}
