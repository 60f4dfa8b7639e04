//! Issue 54's acceptance in the kernel lab on bullseye (5.10): `common/lab_scope.rs` says
//! what is checked. No wb_stats before 6.10:
//! `scope.missing` names it. About 60 s under TCG; skips, saying why, where the lab cannot run.
#![allow(clippy::unwrap_used)]

#[path = "common/lab_scope.rs"]
mod lab_scope;

#[test]
fn bullseye_5_10() {
    lab_scope::check_kernel("bullseye", "5.10.");
}
