use super::*;
use crate::jobs::tune::Change;

/// A fake driver: hands out ids, records effects and events, with a settable clock.
#[derive(Default)]
struct Fake {
    now: i64,
    next: u32,
    effects: Vec<JobCmd>,
    events: Vec<EventKind>,
}

impl Env for Fake {
    fn now_ms(&self) -> i64 {
        self.now
    }
    fn mem(&self) -> Option<(u64, u64)> {
        Some((8 << 30, 6 << 30))
    }
    fn job(&mut self, _kind: JobKind, _label: String) -> u32 {
        self.next += 1;
        self.next
    }
    fn effect(&mut self, e: JobCmd) {
        self.effects.push(e);
    }
    fn event(&mut self, kind: EventKind) {
        self.events.push(kind);
    }
}

const BOOK: &str = r#"
name = "t"
description = "d"
[[step]]
phase = "one"
[[step]]
fio = "randread"
id = "r"
set = { size = "1G" }
[[step]]
eat = { leave = "file(r) - 512M" }
[[step]]
tune = "vm.dirty_bytes"
value = "15M"
[[step]]
wait = "2s"
[[step]]
fio = "write"
background = true
[[step]]
release = true
"#;

fn ended(id: u32, failed: bool) -> JobReport {
    JobReport::Job(JobMsg::Ended {
        id,
        how: if failed { "failed: x" } else { "finished" }.into(),
        failed,
        result: None,
    })
}

#[test]
fn steps_wait_for_their_reports_in_order() {
    let mut s = Sequencer::new(Playbook::parse(BOOK).unwrap(), Some("vda".into()));
    let mut env = Fake::default();
    assert_eq!(s.poll(&mut env), Poll::Running);
    assert_eq!(s.phase(), Some("one"));
    assert!(matches!(
        env.effects.as_slice(),
        [JobCmd::StartFio { id: 1, .. }]
    ));
    // Waiting for fio #1: other reports do not move it.
    s.on_msg(&JobReport::Dropped {
        level: 1,
        took_ms: 1,
    });
    assert_eq!(s.poll(&mut env), Poll::Running);
    assert_eq!(env.effects.len(), 1);
    s.on_msg(&ended(1, false));
    assert_eq!(s.poll(&mut env), Poll::Running);
    // leave = 1G - 512M = 512M of MemAvailable 6G: eat 5.5G.
    let want = ((6u64 << 30) - (512 << 20)).to_string();
    assert!(
        matches!(&env.effects[1], JobCmd::StartEat { id: 2, size, force: true } if *size == want)
    );
    s.on_msg(&JobReport::Job(JobMsg::Eat {
        id: 2,
        touched: 1,
        target: 2,
        holding: true,
    }));
    assert_eq!(s.poll(&mut env), Poll::Running);
    assert!(matches!(&env.effects[2], JobCmd::Tune { value: Some(v), .. } if v == "15728640"));
    s.on_msg(&JobReport::Tuned(Ok(Change {
        setting: "vm.dirty_bytes".into(),
        old: "0".into(),
        new: "15728640".into(),
        restore: false,
        note: None,
    })));
    env.now = 1000;
    assert_eq!(s.poll(&mut env), Poll::Running, "the wait runs until 3000");
    assert_eq!(env.effects.len(), 3);
    env.now = 3000;
    assert_eq!(
        s.poll(&mut env),
        Poll::Running,
        "release waits for the eater to exit"
    );
    assert!(matches!(env.effects[3], JobCmd::StartFio { id: 3, .. }));
    assert_eq!(env.effects[4], JobCmd::StopJob(2));
    assert_eq!(s.step().0, 7);
    s.on_msg(&ended(2, false));
    assert_eq!(s.poll(&mut env), Poll::Done);
    // The end stops the background fio and puts the setting back.
    assert_eq!(s.finish(&mut env), vec![3]);
    assert_eq!(env.effects[5], JobCmd::StopJob(3));
    assert!(matches!(&env.effects[6], JobCmd::Tune { value: None, .. }));
}

#[test]
fn a_failed_job_or_setting_fails_the_run_with_its_line() {
    let mut s = Sequencer::new(Playbook::parse(BOOK).unwrap(), None);
    let mut env = Fake::default();
    s.poll(&mut env);
    s.on_msg(&ended(1, true));
    // The fio step is at line 6.
    assert_eq!(
        s.poll(&mut env),
        Poll::Failed("line 6: job #1 failed: x".into())
    );
    let mut s = Sequencer::new(Playbook::parse(BOOK).unwrap(), None);
    let mut env = Fake {
        next: 10,
        ..Fake::default()
    };
    s.poll(&mut env);
    s.on_msg(&ended(11, false));
    s.poll(&mut env);
    s.on_msg(&JobReport::Job(JobMsg::Eat {
        id: 12,
        touched: 1,
        target: 1,
        holding: true,
    }));
    s.poll(&mut env);
    s.on_msg(&JobReport::Tuned(Err(
        "tuning vm.dirty_bytes needs root".into()
    )));
    assert_eq!(
        s.poll(&mut env),
        Poll::Failed("line 12: tuning vm.dirty_bytes needs root".into())
    );
}

#[test]
fn an_eat_that_cannot_leave_enough_names_its_line() {
    let text = "name = \"t\"\ndescription = \"d\"\n[[step]]\neat = { leave = \"7G\" }\n";
    let mut s = Sequencer::new(Playbook::parse(text).unwrap(), None);
    let mut env = Fake::default();
    match s.poll(&mut env) {
        Poll::Failed(e) => assert!(e.starts_with("line 3: MemAvailable"), "{e}"),
        p => panic!("{p:?}"),
    }
    assert!(env.effects.is_empty());
}
