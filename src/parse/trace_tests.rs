use super::*;

/// This VM's `format` file (kernel 6.18).
pub const FORMAT_6_18: &str = "name: balance_dirty_pages
ID: 985
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char bdi[32];\toffset:8;\tsize:32;\tsigned:0;
\tfield:unsigned long limit;\toffset:40;\tsize:8;\tsigned:0;
\tfield:unsigned long setpoint;\toffset:48;\tsize:8;\tsigned:0;
\tfield:unsigned long dirty;\toffset:56;\tsize:8;\tsigned:0;
\tfield:unsigned long wb_setpoint;\toffset:64;\tsize:8;\tsigned:0;
\tfield:unsigned long wb_dirty;\toffset:72;\tsize:8;\tsigned:0;
\tfield:unsigned long dirty_ratelimit;\toffset:80;\tsize:8;\tsigned:0;
\tfield:unsigned long task_ratelimit;\toffset:88;\tsize:8;\tsigned:0;
\tfield:unsigned int dirtied;\toffset:96;\tsize:4;\tsigned:0;
\tfield:unsigned int dirtied_pause;\toffset:100;\tsize:4;\tsigned:0;
\tfield:unsigned long paused;\toffset:104;\tsize:8;\tsigned:0;
\tfield:long pause;\toffset:112;\tsize:8;\tsigned:1;
\tfield:unsigned long period;\toffset:120;\tsize:8;\tsigned:0;
\tfield:long think;\toffset:128;\tsize:8;\tsigned:1;
\tfield:ino_t cgroup_ino;\toffset:136;\tsize:8;\tsigned:0;

print fmt: \"bdi %s: limit=%lu setpoint=%lu dirty=%lu wb_setpoint=%lu wb_dirty=%lu dirty_ratelimit=%lu task_ratelimit=%lu dirtied=%u dirtied_pause=%u paused=%lu pause=%ld period=%lu think=%ld cgroup_ino=%lu\", REC->bdi, REC->limit
";

/// The layout before the wb_* rename and cgroup_ino (3.x/4.x era, with the old padding).
const FORMAT_OLD: &str = "name: balance_dirty_pages
ID: 563
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;
\tfield:int common_padding;\toffset:8;\tsize:4;\tsigned:1;

\tfield:char bdi[32];\toffset:12;\tsize:32;\tsigned:0;
\tfield:unsigned long limit;\toffset:48;\tsize:8;\tsigned:0;
\tfield:unsigned long setpoint;\toffset:56;\tsize:8;\tsigned:0;
\tfield:unsigned long dirty;\toffset:64;\tsize:8;\tsigned:0;
\tfield:unsigned long bdi_setpoint;\toffset:72;\tsize:8;\tsigned:0;
\tfield:unsigned long bdi_dirty;\toffset:80;\tsize:8;\tsigned:0;
\tfield:unsigned long dirty_ratelimit;\toffset:88;\tsize:8;\tsigned:0;
\tfield:unsigned long task_ratelimit;\toffset:96;\tsize:8;\tsigned:0;
\tfield:unsigned int dirtied;\toffset:104;\tsize:4;\tsigned:0;
\tfield:unsigned int dirtied_pause;\toffset:108;\tsize:4;\tsigned:0;
\tfield:unsigned long paused;\toffset:112;\tsize:8;\tsigned:0;
\tfield:long pause;\toffset:120;\tsize:8;\tsigned:1;
\tfield:unsigned long period;\toffset:128;\tsize:8;\tsigned:0;
\tfield:long think;\toffset:136;\tsize:8;\tsigned:1;

print fmt: \"bdi %s: limit=%lu setpoint=%lu dirty=%lu bdi_setpoint=%lu bdi_dirty=%lu dirty_ratelimit=%lu task_ratelimit=%lu dirtied=%u dirtied_pause=%u paused=%lu pause=%ld period=%lu think=%ld\", REC->bdi
";

/// Two events as this VM printed them (two fio writers under vm.dirty_bytes = 64M).
pub const EVENTS_6_18: &str = "             fio-16919   [000] .....   537.179522: balance_dirty_pages: bdi 254:0: limit=16384 setpoint=14336 dirty=48079 wb_setpoint=14335 wb_dirty=48099 dirty_ratelimit=102400 task_ratelimit=0 dirtied=256 dirtied_pause=32 paused=0 pause=200 period=200 think=0 cgroup_ino=1
             fio-16920   [000] .N...   537.394673: balance_dirty_pages: bdi 254:0: limit=16384 setpoint=14336 dirty=12526 wb_setpoint=14335 wb_dirty=12510 dirty_ratelimit=102400 task_ratelimit=175900 dirtied=256 dirtied_pause=64 paused=0 pause=-4 period=4 think=8 cgroup_ino=1
";

#[test]
fn format_6_18() {
    let f = parse_format(FORMAT_6_18).unwrap();
    assert_eq!(f.name, "balance_dirty_pages");
    assert_eq!(f.id, Some(985));
    let names: Vec<&str> = f.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names[0], "bdi");
    assert_eq!(names.len(), 15, "{names:?}");
    assert_eq!(
        f.fields[0],
        FormatField {
            name: "bdi".into(),
            c_type: "char[32]".into(),
            offset: 8,
            size: 32,
            signed: false
        }
    );
    let pause = f.fields.iter().find(|f| f.name == "pause").unwrap();
    assert_eq!((pause.offset, pause.size, pause.signed), (112, 8, true));
    assert_eq!(pause.c_type, "long");
    assert!(f.has("wb_dirty") && f.has("cgroup_ino") && !f.has("bdi_dirty"));
    let ino = f.fields.last().unwrap();
    assert_eq!((ino.c_type.as_str(), ino.offset), ("ino_t", 136));
}

#[test]
fn format_old_layout() {
    let f = parse_format(FORMAT_OLD).unwrap();
    assert!(f.has("bdi_setpoint") && f.has("bdi_dirty"));
    assert!(!f.has("cgroup_ino") && !f.has("common_padding"));
    assert_eq!(f.fields.len(), 14);
    let limit = f.fields.iter().find(|f| f.name == "limit").unwrap();
    assert_eq!(limit.offset, 48);
}

#[test]
fn format_errors_name_the_line() {
    let text = "name: balance_dirty_pages\nID: x\n";
    let e = parse_format(text).unwrap_err().to_string();
    assert!(e.contains("balance_dirty_pages/format:2"), "{e}");
    let text = "name: b\n\tfield:unsigned long limit;\toffset:forty;\tsize:8;\tsigned:0;\n";
    let e = parse_format(text).unwrap_err().to_string();
    assert!(e.contains("format:2"), "{e}");
    assert!(parse_format("").is_err(), "no fields is an error");
}

#[test]
fn event_lines() {
    let ev = parse_events(EVENTS_6_18).unwrap();
    assert_eq!((ev.events.len(), ev.lost, ev.cut), (2, 0, false));
    let a = &ev.events[0];
    assert_eq!((a.pid, a.comm.as_str(), a.cpu), (16919, "fio", 0));
    assert!((a.ts_s - 537.179_522).abs() < 1e-9);
    assert_eq!(a.bdi, "254:0");
    assert_eq!((a.limit, a.setpoint, a.dirty), (16384, 14336, 48079));
    assert_eq!((a.wb_setpoint, a.wb_dirty), (Some(14335), Some(48099)));
    assert_eq!((a.task_ratelimit, a.pause), (0, 200));
    assert_eq!((a.dirtied, a.dirtied_pause), (Some(256), Some(32)));
    assert_eq!(a.cgroup_ino, Some(1));
    let b = &ev.events[1];
    assert_eq!(
        (b.pid, b.pause, b.think, b.task_ratelimit),
        (16920, -4, Some(8), 175_900)
    );
}

#[test]
fn old_names_comms_with_spaces_and_no_flags() {
    let text = " kworker u8:2-x-77 [013] 12.5: balance_dirty_pages: bdi 8:16: limit=10 setpoint=9 \
                dirty=11 bdi_setpoint=4 bdi_dirty=5 dirty_ratelimit=100 task_ratelimit=50 \
                dirtied=1 dirtied_pause=2 paused=0 pause=12 period=12 think=0\n";
    let ev = parse_events(text).unwrap();
    let e = &ev.events[0];
    assert_eq!((e.comm.as_str(), e.pid, e.cpu), ("kworker u8:2-x", 77, 13));
    assert_eq!(
        (e.wb_setpoint, e.wb_dirty, e.cgroup_ino),
        (Some(4), Some(5), None)
    );
    // record-tgid adds `(tgid)` after the task.
    let text = "   fio-12  (     10) [001] d..1. 1.0: balance_dirty_pages: bdi 8:0: limit=1 \
                setpoint=1 dirty=1 task_ratelimit=1 pause=1\n";
    assert_eq!(parse_events(text).unwrap().events[0].pid, 12);
}

#[test]
fn lost_cut_and_foreign_lines() {
    let mut text = String::from("CPU:1 [LOST 42 EVENTS]\n# tracer: nop\n");
    text.push_str("  sh-5 [000] ..... 9.0: sched_switch: prev=sh\n");
    text.push_str(EVENTS_6_18);
    // A last line cut by the read cap.
    text.push_str(
        "             fio-16919   [000] .....   538.0: balance_dirty_pages: bdi 254:0: lim",
    );
    let ev = parse_events(&text).unwrap();
    assert_eq!((ev.events.len(), ev.lost, ev.cut), (2, 42, true));
}

#[test]
fn a_bad_event_names_its_line() {
    let text =
        format!("{EVENTS_6_18}  fio-1 [000] ..... 1.0: balance_dirty_pages: bdi 8:0: limit=x\n");
    let e = parse_events(&text).unwrap_err().to_string();
    assert!(e.contains("instances/pagewatch/trace_pipe:3"), "{e}");
    let text = "  fio-1 [000] ..... 1.0: balance_dirty_pages: bdi 8:0: limit=1 setpoint=1\n";
    let e = parse_events(text).unwrap_err().to_string();
    assert!(e.contains(":1: no dirty"), "{e}");
    let text = "  nodash [000] ..... 1.0: balance_dirty_pages: bdi 8:0: limit=1\n";
    assert!(parse_events(text).is_err());
}

#[test]
fn status_file() {
    let st = parse_status("state armed\npid 4242\ntasks 4242 4250\nbytes 554\ncapped 1\n").unwrap();
    assert_eq!(st.state, TraceState::Armed);
    assert_eq!(
        (st.pid, st.tasks.as_slice()),
        (Some(4242), &[4242, 4250][..])
    );
    assert_eq!((st.bytes, st.capped), (554, true));
    let st = parse_status("state not-root\nwhy euid 1000\npid 7\n").unwrap();
    assert_eq!(
        (st.state, st.why.as_deref()),
        (TraceState::NotRoot, Some("euid 1000"))
    );
    let e = parse_status("state armed\npid x\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("instances/pagewatch/status:2"), "{e}");
    assert!(parse_status("pid 1\n").is_err(), "no state");
    assert!(parse_status("state sleepy\n").is_err());
}

#[test]
fn a_sample_without_status_has_no_trace_and_bad_events_keep_the_sample() {
    let mut raw = crate::sample::RawSample::default();
    assert_eq!(parse(&raw).unwrap(), None);
    raw.files
        .insert(names::TRACE_STATUS.into(), "state armed\npid 1\n".into());
    raw.files
        .insert(names::TRACE_FORMAT.into(), FORMAT_6_18.into());
    raw.files.insert(
        names::TRACE_EVENTS.into(),
        "  fio-1 [000] ..... 1.0: balance_dirty_pages: bdi 8:0: limit=q\n".into(),
    );
    let t = parse(&raw).unwrap().unwrap();
    assert!(t.format.is_some() && t.writers.rows.is_empty());
    assert!(t.error.unwrap().contains("trace_pipe:1"));
}

/// tracefs's `saved_cmdlines` as read on this VM (kernel 6.18) after two dd writers exited.
#[test]
fn names_of_exited_tasks_from_saved_cmdlines() {
    let text = "26365 dd\n20883 kworker/u8:2\n26283 dd\n26278 fio\n7 <...>\n";
    assert_eq!(saved_comm(text, 26365), Some("dd"));
    assert_eq!(saved_comm(text, 20883), Some("kworker/u8:2"));
    assert_eq!(saved_comm(text, 7), None, "the kernel's unknown name");
    assert_eq!(saved_comm(text, 2636), None);
    assert_eq!(saved_comm("garbage\n\n x y\n", 1), None);
}
