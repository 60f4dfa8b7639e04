use std::io::{Read, Write};

use super::*;
use crate::source::HostInfo;

fn samples() -> Vec<RawSample> {
    crate::source::test_samples("kernel-6.12-lab-memcg")
}

/// The bytes `pagewatch stream` writes for these samples, finished or not.
fn streamed(samples: &[RawSample], finish: bool) -> Vec<u8> {
    let header = Header::from_sample(&samples[0], HostInfo::default(), 1.0, "test".into(), 0);
    let mut w = StreamWriter::start(Vec::new(), &header).unwrap();
    for s in samples {
        w.write_sample(s).unwrap();
    }
    assert_eq!(w.samples(), samples.len() as u64);
    if finish {
        w.finish().unwrap()
    } else {
        w.enc.get_ref().clone()
    }
}

/// A pipe that hands over at most three bytes a read, as a slow link does.
struct Trickle(Vec<u8>, usize);

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(3).min(self.0.len() - self.1);
        buf[..n].copy_from_slice(&self.0[self.1..self.1 + n]);
        self.1 += n;
        Ok(n)
    }
}

fn follow_all<R: Read>(f: &mut Follower<R>) -> (Vec<RawSample>, Result<(), StreamError>) {
    let mut got = Vec::new();
    loop {
        match f.follow() {
            Ok(Followed::Sample(s)) => got.push(s),
            Ok(Followed::Event(_)) => {}
            Ok(Followed::End) => return (got, Ok(())),
            Err(e) => return (got, Err(e)),
        }
    }
}

#[test]
fn short_reads_wait_for_the_rest_of_each_frame() {
    let s = samples();
    let mut f = Follower::open(Trickle(streamed(&s, true), 0)).unwrap();
    assert_eq!(f.header.format, FORMAT_VERSION);
    let (got, end) = follow_all(&mut f);
    assert_eq!(end, Ok(()));
    assert_eq!(got, s, "every sample whole, in order");
}

#[test]
fn a_frame_split_across_a_pause_in_a_real_pipe_is_waited_for() {
    let s = samples();
    let bytes = streamed(&s[..3], false);
    let (r, mut w) = std::io::pipe().unwrap();
    let writer = std::thread::spawn(move || {
        // Each piece cuts a frame; the reader must wait, not call it damage.
        for piece in bytes.chunks(bytes.len() / 7 + 1) {
            w.write_all(piece).unwrap();
            w.flush().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(30));
        }
    });
    let mut f = Follower::open(r).unwrap();
    let (got, end) = follow_all(&mut f);
    writer.join().unwrap();
    assert_eq!(got, s[..3]);
    // The writer went away without finishing the stream: a lost connection, not damage.
    let e = end.unwrap_err();
    assert!(e.to_string().contains("stream stopped"), "{e}");
}

#[test]
fn a_stream_cut_inside_a_record_is_lost_and_keeps_what_came() {
    let s = samples();
    let whole = streamed(&s[..2], false);
    let two = whole.len();
    let more = streamed(&s[..3], false);
    // The third record cut short: the bytes of the first two are a prefix of these.
    let cut = &more[..two + (more.len() - two) / 2];
    let mut f = Follower::open(cut).unwrap();
    let (got, end) = follow_all(&mut f);
    assert_eq!(got.len(), 2);
    assert!(matches!(end, Err(StreamError::Lost(_))), "{end:?}");
}

#[test]
fn a_newer_remote_is_refused_naming_both_versions() {
    let e = Follower::open(&b"PAGEWATCH-REC 7\n\x28\xb5\x2f\xfd"[..])
        .err()
        .unwrap();
    let text = e.to_string();
    assert_eq!(
        e,
        StreamError::TooNew {
            found: 7,
            supported: FORMAT_VERSION
        }
    );
    assert!(text.contains("format 7") && text.contains(&format!("format {FORMAT_VERSION}")));
}

#[test]
fn a_remote_that_is_not_pagewatch_or_never_starts_is_told_apart() {
    let e = Follower::open(&b"bash: line 1: pagewatch: command not found\n"[..])
        .err()
        .unwrap();
    assert!(matches!(&e, StreamError::NotStream { begin } if begin.contains("not found")));
    assert_eq!(
        Follower::open(&b""[..]).err(),
        Some(StreamError::NeverStarted)
    );
}
