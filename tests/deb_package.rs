//! The Debian package: `packaging/deb.sh` (cargo-deb) builds it from this test's debug build,
//! `dpkg -i` installs it into a throwaway root (`--root`, never this machine's), and there
//! `man` finds the page, the bash completion registers itself, the zsh and fish ones and
//! the Prometheus rules are where those tools look, and the binary runs.
//!
//! Skips when cargo-deb or dpkg is missing (`.ci/run` installs cargo-deb: about 2 minutes
//! of `cargo install` here). Until the rules file lands (`assets/prometheus/`, from the
//! metrics work), a placeholder is put there for the build and removed after.

#![allow(clippy::unwrap_used)] // test helpers: a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::Command;

fn have(cmd: &str, arg: &str) -> bool {
    let ok = Command::new(cmd)
        .args(arg.split(' '))
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: `{cmd} {arg}` fails (bash .ci/run installs cargo-deb)");
    }
    ok
}

/// A placeholder rules file while the real one is not in the tree; removed on drop.
struct Placeholder(Option<PathBuf>);

impl Placeholder {
    fn ensure(path: &Path) -> Self {
        if path.exists() {
            return Self(None);
        }
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            "# placeholder: the rules come with the metrics work\ngroups: []\n",
        )
        .unwrap();
        Self(Some(path.to_owned()))
    }
}

impl Drop for Placeholder {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
            let _ = std::fs::remove_dir(p.parent().unwrap());
        }
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

#[test]
fn the_package_installs_with_its_man_page_completions_and_rules() {
    if !have("cargo", "deb --version") || !have("dpkg", "--version") {
        return;
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let _rules = Placeholder::ensure(&repo.join("assets/prometheus/pagewatch.rules.yml"));
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    run(Command::new("bash")
        .arg(repo.join("packaging/deb.sh"))
        .args(["-q", "-o"])
        .arg(&out)
        .env("PROFILE", "dev"));
    let debs: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "deb"))
        .collect();
    assert_eq!(debs.len(), 1, "{debs:?}");

    // A throwaway root with an empty dpkg database; libc6 is not "installed" there.
    let root = tmp.path().join("root");
    for d in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    run(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args([
            "--force-depends",
            "--force-not-root",
            "--log=/dev/null",
            "-i",
        ])
        .arg(&debs[0]));
    let listed = run(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["-L", "pagewatch"]));
    for f in [
        "/usr/bin/pagewatch",
        "/usr/share/man/man1/pagewatch.1.gz",
        "/usr/share/man/man1/pagewatch-record.1.gz",
        "/usr/share/bash-completion/completions/pagewatch",
        "/usr/share/zsh/vendor-completions/_pagewatch",
        "/usr/share/fish/vendor_completions.d/pagewatch.fish",
        "/usr/share/pagewatch/prometheus/pagewatch.rules.yml",
    ] {
        assert!(
            listed.lines().any(|l| l == f),
            "{f} not in the package:\n{listed}"
        );
        assert!(root.join(&f[1..]).is_file(), "{f} not installed");
    }

    // `man pagewatch` finds and formats the page from the installed tree.
    if have("man", "--version") {
        let page = run(Command::new("man")
            .arg("--manpath")
            .arg(root.join("usr/share/man"))
            .arg("pagewatch")
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100"));
        for needle in [
            "NAME",
            "--no-mouse",
            "KEYS",
            "FILES",
            "EXIT STATUS",
            "config.toml",
        ] {
            assert!(
                page.contains(needle),
                "{needle} not in man pagewatch:\n{page}"
            );
        }
        let page = run(Command::new("man")
            .arg("-l")
            .arg(root.join("usr/share/man/man1/pagewatch.1.gz"))
            .env("MANPAGER", "cat"));
        assert!(page.contains("pagewatch"));
    }

    // The bash completion registers itself and completes a flag.
    let script = root.join("usr/share/bash-completion/completions/pagewatch");
    let check = format!(
        "source '{}' && complete -p pagewatch && COMP_WORDS=(pagewatch --no-m) COMP_CWORD=1 \
         COMP_LINE='pagewatch --no-m' COMP_POINT=16 && _pagewatch pagewatch --no-m pagewatch \
         && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let said = run(Command::new("bash").args(["--norc", "-c", &check]));
    assert!(said.contains("-F _pagewatch pagewatch"), "{said}");
    assert!(said.lines().any(|l| l.trim() == "--no-mouse"), "{said}");

    // And the binary runs.
    let v = run(Command::new(root.join("usr/bin/pagewatch")).arg("--version"));
    assert!(v.starts_with("pagewatch "), "{v}");
}
