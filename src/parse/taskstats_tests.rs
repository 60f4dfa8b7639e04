//! Hand-built taskstats exit messages of the three layouts (v14 and older, v15's break, v16's
//! fix), decoded and written to the pseudo-file and back.

use super::*;

/// `struct taskstats` of `len` bytes in layout `l` with `version`: pid 4242, tgid 4240,
/// ppid 100, `flags`, comm "dd", etime 1.5 s, io (rchar 1 MiB + 1, wchar 2 MiB, read 4096,
/// write 2 MiB, cancelled 8192) and delays (n, n × 1 ms) for kind n = 1..5.
fn stats(l: Layout, version: u16, len: usize, flags: u8) -> Vec<u8> {
    let mut b = vec![0u8; len];
    let mut put = |at: usize, bytes: &[u8]| {
        if at + bytes.len() <= b.len() {
            b[at..at + bytes.len()].copy_from_slice(bytes);
        }
    };
    put(0, &version.to_ne_bytes());
    put(8, &[flags]);
    put(l.comm, b"dd\0");
    put(l.pid, &4242u32.to_ne_bytes());
    put(l.ppid, &100u32.to_ne_bytes());
    put(l.tgid, &4240u32.to_ne_bytes());
    put(l.etime, &1_500_000u64.to_ne_bytes());
    put(l.tgetime, &1_600_000u64.to_ne_bytes());
    put(l.utime, &7u64.to_ne_bytes());
    put(l.stime, &9u64.to_ne_bytes());
    for (at, v) in [
        (l.read_char, (1 << 20) + 1),
        (l.write_char, 2 << 20),
        (l.read_bytes, 4096),
        (l.write_bytes, 2 << 20),
        (l.cancelled, 8192),
    ] {
        put(at, &u64::to_ne_bytes(v));
    }
    for (k, at) in l.delays.iter().enumerate() {
        let n = k as u64 + 1;
        put(*at, &n.to_ne_bytes());
        put(at + 8, &(n * 1_000_000).to_ne_bytes());
    }
    b
}

fn attr(kind: u16, payload: &[u8]) -> Vec<u8> {
    let mut a = Vec::new();
    a.extend_from_slice(&((4 + payload.len()) as u16).to_ne_bytes());
    a.extend_from_slice(&kind.to_ne_bytes());
    a.extend_from_slice(payload);
    a.resize((a.len() + 3) & !3, 0);
    a
}

/// A `TASKSTATS_CMD_NEW` message of `family`: the task's nest, and the group's when given
/// (with a `TYPE_NULL` pad first in its nest, as 64-bit kernels without unaligned access
/// send).
fn message(family: u16, task: &[u8], group: Option<&[u8]>) -> Vec<u8> {
    let mut body = vec![TASKSTATS_CMD_NEW, 1, 0, 0];
    let mut nest = attr(TYPE_PID, &4242u32.to_ne_bytes());
    nest.extend(attr(TYPE_STATS, task));
    body.extend(attr(TYPE_AGGR_PID, &nest));
    if let Some(g) = group {
        let mut nest = attr(6, &[]);
        nest.extend(attr(TYPE_TGID, &4240u32.to_ne_bytes()));
        nest.extend(attr(TYPE_STATS, g));
        body.extend(attr(TYPE_AGGR_TGID, &nest));
    }
    let mut m = Vec::new();
    m.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&family.to_ne_bytes());
    m.extend_from_slice(&[0; 10]);
    m.extend(body);
    m
}

fn decode(bytes: &[u8]) -> Vec<TaskExit> {
    let mut out = Vec::new();
    decode_datagram(bytes, 0x1b, &mut out);
    out
}

fn check_task(r: &TaskExit, version: u16) {
    assert_eq!(
        (r.pid, r.tgid, r.ppid, r.version, r.comm.as_str()),
        (4242, Some(4240), Some(100), version, "dd")
    );
    assert_eq!(r.io, Some([(1 << 20) + 1, 2 << 20, 4096, 2 << 20, 8192]));
    assert_eq!(
        (r.etime_us, r.tgetime_us),
        (Some(1_500_000), Some(1_600_000))
    );
    assert_eq!((r.utime_us, r.stime_us), (Some(7), Some(9)));
    assert_eq!(r.delays[0], Some((1, 1_000_000)), "blkio");
    assert_eq!(
        r.delays[2],
        Some((3, 3_000_000)),
        "freepages (direct reclaim)"
    );
    assert_eq!(r.delays[4], Some((5, 5_000_000)), "compact");
}

#[test]
fn version_14_and_older_layout() {
    let out = decode(&message(0x1b, &stats(Layout::BASE, 14, 432, AGROUP), None));
    assert_eq!(out.len(), 1);
    check_task(&out[0], 14);
    assert_eq!(out[0].flags, AGROUP);
}

#[test]
fn version_15_moved_every_field_after_the_first_delays() {
    let b = stats(Layout::V15, 15, 560, 0);
    let out = decode(&message(0x1b, &b, None));
    check_task(&out[0], 15);
    // Read with the old layout, the same bytes give garbage: the break v16 fixed.
    let wrong = decode_stats(&b, Some(14)).unwrap();
    assert_ne!(wrong.pid, 4242);
    assert_ne!(wrong.io, out[0].io);
}

#[test]
fn version_16_is_the_old_layout_with_max_and_min_at_the_end() {
    let mut b = stats(Layout::BASE, 16, 560, AGROUP);
    // cpu_delay_max at 432: not a field we read, and it must not disturb those we do.
    b[432..440].copy_from_slice(&u64::MAX.to_ne_bytes());
    let out = decode(&message(0x1b, &b, None));
    check_task(&out[0], 16);
    // Versions past 16 append (17: softirq or max timestamps): the same offsets.
    check_task(
        &decode_stats(&stats(Layout::BASE, 17, 600, 0), None).unwrap(),
        17,
    );
}

#[test]
fn the_group_record_has_version_0_and_is_read_with_the_task_records() {
    for (l, v) in [(Layout::BASE, 16), (Layout::V15, 15)] {
        let mut g = stats(l, 0, 560, 0);
        g[l.delays[0]..l.delays[0] + 8].copy_from_slice(&40u64.to_ne_bytes());
        let out = decode(&message(0x1b, &stats(l, v, 560, AGROUP), Some(&g)));
        assert_eq!(out.len(), 2, "v{v}");
        assert!(out[1].group && out[1].pid == 4240, "v{v}: {:?}", out[1]);
        assert_eq!(out[1].delays[0], Some((40, 1_000_000)), "v{v}");
        assert_eq!((out[1].io, out[1].version), (None, v));
    }
}

#[test]
fn a_shorter_older_struct_leaves_out_what_it_lacks() {
    // v10 (5.x): ends after ac_btime64 at 352; no compact delay, no tgid.
    let out = decode(&message(0x1b, &stats(Layout::BASE, 10, 352, 0), None));
    assert_eq!(
        (out[0].tgid, out[0].tgetime_us, out[0].delays[4]),
        (None, None, None)
    );
    assert_eq!(out[0].io.map(|io| io[3]), Some(2 << 20));
    // Version 1 (no comm) and a struct cut before the pid: nothing.
    assert!(decode(&message(0x1b, &stats(Layout::BASE, 1, 432, 0), None)).is_empty());
    assert!(decode(&message(0x1b, &stats(Layout::BASE, 14, 130, 0), None)).is_empty());
    // Another family's message, or a cut datagram: nothing, no panic.
    assert!(decode(&message(0x1c, &stats(Layout::BASE, 14, 432, 0), None)).is_empty());
    let m = message(0x1b, &stats(Layout::BASE, 14, 432, 0), None);
    for cut in 0..m.len() {
        let _ = decode(&m[..cut]);
    }
}

#[test]
fn the_pseudo_file_round_trips_and_errors_name_it() {
    let records = decode(&message(
        0x1b,
        &stats(Layout::BASE, 16, 560, AGROUP),
        Some(&stats(Layout::BASE, 0, 560, 0)),
    ));
    let mut short = decode(&message(0x1b, &stats(Layout::BASE, 10, 352, 0), None));
    short[0].comm = "a b\nc".into();
    let e = Exits {
        state: "listening".into(),
        why: None,
        since_ns: Some(5),
        read_ns: 9,
        lost: 2,
        records: records.into_iter().chain(short).collect(),
    };
    let text = render(&e);
    let back = parse(&text).unwrap();
    assert_eq!(back.records[2].comm, "a b?c");
    let mut want = e.clone();
    want.records[2].comm = "a b?c".into();
    // A group line carries only its pid and delays.
    want.records[1].version = 0;
    assert_eq!(back, want, "{text}");
    assert!(back.listening());
    let err = parse("state listening\nt 1 2 x\n").unwrap_err().to_string();
    assert!(err.starts_with("netlink/taskstats:2:"), "{err}");
    let off = parse("state no-permission\nwhy needs root\nsince -\nread 3\nlost 0\n").unwrap();
    assert!(!off.listening() && off.why.as_deref() == Some("needs root"));
}

/// Captured from this VM's kernel (6.18, taskstats v16): a two-threaded python3's last exit
/// (its task record and its group's), and a single-threaded task's.
#[test]
fn real_v16_messages_decode() {
    let group = include_bytes!("../../tests/fixtures/taskstats/group-6.18-v16.bin");
    let mut out = Vec::new();
    decode_datagram(group, 0x1f, &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    let (t, g) = (&out[0], &out[1]);
    assert_eq!(
        (t.comm.as_str(), t.version, t.flags & AGROUP),
        ("python3", 16, AGROUP)
    );
    assert_eq!(t.tgid, Some(t.pid));
    assert!(
        t.io.is_some_and(|io| io[0] > 0),
        "python read its libraries: {t:?}"
    );
    assert!(g.group && g.pid == t.pid && g.version == 16, "{g:?}");
    let task = include_bytes!("../../tests/fixtures/taskstats/task-6.18-v16.bin");
    let mut out = Vec::new();
    decode_datagram(task, 0x1f, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(!out[0].comm.is_empty() && out[0].etime_us.is_some());
}

/// A `GET` by tgid's reply (spec §13.1): only the `AGGR_TGID` nest, its struct's version set
/// by `fill_stats_for_tgid` (no task record to borrow one from), followed by the
/// acknowledgement in the same datagram: one group record with the struct's delays.
#[test]
fn a_tgid_reply_decodes_as_a_group_record_of_its_own_version() {
    let mut body = vec![TASKSTATS_CMD_NEW, 1, 0, 0];
    let mut nest = attr(TYPE_TGID, &4240u32.to_ne_bytes());
    nest.extend(attr(TYPE_STATS, &stats(Layout::BASE, 16, 448, 0)));
    body.extend(attr(TYPE_AGGR_TGID, &nest));
    let mut m = Vec::new();
    m.extend_from_slice(&((16 + body.len()) as u32).to_ne_bytes());
    m.extend_from_slice(&0x1bu16.to_ne_bytes());
    m.extend_from_slice(&[0; 10]);
    m.extend(body);
    // The acknowledgement: NLMSG_ERROR, error 0, the request's header.
    m.extend_from_slice(&36u32.to_ne_bytes());
    m.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
    m.extend_from_slice(&[0; 10]);
    m.extend_from_slice(&[0; 20]);
    let out = decode(&m);
    assert_eq!(out.len(), 1, "{out:?}");
    let g = &out[0];
    assert!(g.group && g.pid == 4240 && g.version == 16, "{g:?}");
    // Kind n (1..5) has count n and n ms: compaction is the fifth, freepages the third.
    assert_eq!(g.delays[4], Some((5, 5_000_000)));
    assert_eq!(g.delays[2], Some((3, 3_000_000)));
    let e = Exits {
        state: "on".to_owned(),
        read_ns: 7,
        records: out,
        ..Exits::default()
    };
    let back = parse(&render(&e)).unwrap();
    assert_eq!((back.state.as_str(), back.read_ns), ("on", 7));
    assert_eq!(
        (back.records[0].pid, back.records[0].delays),
        (4240, e.records[0].delays)
    );
}
