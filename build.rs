//! Build facts for `pagewatch --version`: the git commit this was built from and whether the
//! C runtime is linked statically (`-C target-feature=+crt-static`, the copy-anywhere build of
//! `packaging/static.sh`) or dynamically (plain `cargo build`).
//!
//! Owns: `PW_GIT_COMMIT`, `PW_BUILD_KIND` and `PW_TARGET`, read by `src/cli.rs` with `env!`.
//! Must not touch: anything outside the build (it only asks git).
//! A source tree without git (a crate tarball), or one inside another project's repository,
//! says `unknown` rather than another project's commit.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()?;
    let s = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !s.trim().is_empty()).then(|| s.trim().to_owned())
}

fn main() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = git(&["rev-parse", "--show-toplevel"])
        .and_then(|t| Path::new(&t).canonicalize().ok())
        .is_some_and(|t| here.canonicalize().is_ok_and(|h| h == t));
    let commit = if ours {
        git(&["rev-parse", "--short=7", "HEAD"])
    } else {
        None
    };
    println!(
        "cargo:rustc-env=PW_GIT_COMMIT={}",
        commit.as_deref().unwrap_or("unknown")
    );
    // Rebuild when HEAD moves (a commit, a checkout): HEAD itself and the branch it names.
    // In a worktree these live under the main repository's .git, hence --git-path.
    println!("cargo:rerun-if-changed=build.rs");
    if ours {
        let mut watch = vec!["HEAD".to_owned()];
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(branch);
        }
        watch.push("packed-refs".to_owned());
        for w in watch {
            // A watched path that does not exist would rerun this every build.
            if let Some(p) = git(&["rev-parse", "--git-path", &w]).map(|p| here.join(p))
                && p.exists()
            {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    let kind = if features.split(',').any(|f| f == "crt-static") {
        "static"
    } else {
        "dynamic"
    };
    println!("cargo:rustc-env=PW_BUILD_KIND={kind}");
    println!(
        "cargo:rustc-env=PW_TARGET={}",
        std::env::var("TARGET").unwrap_or_default()
    );
}
