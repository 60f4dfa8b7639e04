//! The shipped Prometheus rules (`assets/prometheus/pagewatch.rules.yml`): `promtool check
//! rules` accepts them and `promtool test rules` passes their unit tests on synthetic series
//! (`pagewatch.rules.test.yml`: each alert fires where it should and stays quiet where it
//! should not). Skips, saying so, when promtool is not installed (`.ci/run` installs it).

use std::path::Path;
use std::process::Command;

fn promtool(args: &[&str]) -> Option<std::process::Output> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/prometheus");
    match Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => panic!("running promtool: {e}"),
    }
}

#[test]
fn rules_check_and_their_unit_tests_pass() {
    let Some(check) = promtool(&["check", "rules", "pagewatch.rules.yml"]) else {
        println!("skipped: promtool not installed (apt-get install prometheus)");
        return;
    };
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "promtool check rules: {check:?}");
    assert!(text.contains("SUCCESS: 9 rules found"), "{text}");
    let unit = promtool(&["test", "rules", "pagewatch.rules.test.yml"]).expect("promtool ran once");
    assert!(
        unit.status.success(),
        "promtool test rules: {}{}",
        String::from_utf8_lossy(&unit.stdout),
        String::from_utf8_lossy(&unit.stderr)
    );
}
