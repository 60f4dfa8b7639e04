use super::*;
use crate::jobs::eat_plan::margin;

const G: u64 = 1 << 30;

fn book(steps: &str) -> Playbook {
    Playbook::parse(&format!("name = \"t\"\ndescription = \"d\"\n{steps}"))
        .unwrap()
        .with_origin("playbook /srv/t.toml")
}

fn facts() -> Facts {
    Facts {
        total: 24 * G,
        avail: 17 * G + 409 * (1 << 20),
        device: Some("vda".into()),
    }
}

/// A probe that finds every setting present.
#[allow(clippy::unnecessary_wraps)] // the probe's type
fn any_knob(_: &Knob) -> Result<(), String> {
    Ok(())
}

#[test]
fn an_eat_too_large_names_the_file_and_line_in_one_unit() {
    let b = book("[[step]]\neat = \"24G\"\n");
    let e = check_steps(&b, &facts(), &any_knob).unwrap_err();
    // The text mixed k and bytes: `eat 24684084k is more than MemAvailable 18212900k
    // minus the margin 1263825100`.
    let room = facts().avail - margin(facts().total);
    assert_eq!(
        e,
        format!(
            "playbook /srv/t.toml: line 3: eat 24.0G is more than the {} that may be taken: \
             MemAvailable 17.4G minus the safety margin 1.2G",
            crate::fmt::bytes(room as f64)
        )
    );
    assert!(check_steps(&book("[[step]]\neat = \"15G\"\n"), &facts(), &any_knob).is_ok());
}

#[test]
fn a_scaled_leave_below_the_floor_says_so_in_human_sizes() {
    // eat-until-miss at --scale 0.01: leave = file(read) - 1G with the 2G file scaled.
    let b = crate::play::builtin::all()
        .unwrap()
        .into_iter()
        .find(|b| b.name == "eat-until-miss")
        .unwrap()
        .scaled(0.01);
    let e = check_steps(&b, &facts(), &any_knob).unwrap_err();
    assert_eq!(
        e,
        "eat-until-miss: line 22: leave 10.2M must be at least 256M and below MemAvailable 17.4G"
    );
}

#[test]
fn an_unknown_device_is_refused_before_the_run() {
    let b = book(concat!(
        "[[step]]\nwait = \"1s\"\n",
        "[[step]]\ntune = \"nosuchdev:queue/read_ahead_kb\"\nvalue = \"128\"\n",
    ));
    // The real probe: /sys/block/nosuchdev does not exist on any machine.
    let e = check_steps(&b, &facts(), &knob_readable).unwrap_err();
    assert!(
        e.starts_with(
            "playbook /srv/t.toml: line 5: nosuchdev/queue/read_ahead_kb is not on this machine"
        ),
        "{e}"
    );
    assert!(
        e.contains("/sys/block/nosuchdev/queue/read_ahead_kb"),
        "{e}"
    );
    // queue/ATTR without a device needs the fio directory's disk.
    let b = book("[[step]]\ntune = \"queue/read_ahead_kb\"\nvalue = \"128\"\n");
    let none = Facts {
        device: None,
        ..facts()
    };
    let e = check_steps(&b, &none, &any_knob).unwrap_err();
    assert!(
        e.contains("line 3: queue/read_ahead_kb: the fio directory's disk is unknown"),
        "{e}"
    );
    assert!(check_steps(&b, &facts(), &any_knob).is_ok());
}
