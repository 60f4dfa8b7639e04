//! Issue 54's acceptance in the kernel lab on bookworm (6.1): `common/lab_scope.rs` says
//! what is checked. No wb_stats before 6.10:
//! `scope.missing` names it. About 60 s under TCG; skips, saying why, where the lab cannot run.
#![allow(clippy::unwrap_used)]

#[path = "common/lab_scope.rs"]
mod lab_scope;

#[test]
fn bookworm_6_1() {
    lab_scope::check_kernel("bookworm", "6.1.");
}
