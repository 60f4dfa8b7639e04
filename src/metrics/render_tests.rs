use super::*;
use crate::metrics::live::Live;
use crate::model::Options;
use crate::model::dirty::State;

fn page() -> Page {
    let s = crate::source::test_samples("kernel-6.12-lab-memcg");
    let mut live = Live::new("lab", Options::default());
    let mut p = Page::default();
    for r in &s {
        p = live.sample(r, 0.000_25);
    }
    p
}

fn samples<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .collect()
}

#[test]
fn openmetrics_has_units_counters_without_total_a_stateset_and_eof() {
    let p = page();
    let t = render(&p, Format::OpenMetrics, Some(1.5));
    assert!(t.ends_with("# EOF\n"));
    assert!(t.contains(
        "# TYPE pagewatch_dirty_threshold_bytes gauge\n# UNIT pagewatch_dirty_threshold_bytes bytes\n"
    ));
    assert!(t.contains(
        "# TYPE pagewatch_dirty_state_seconds counter\n# UNIT pagewatch_dirty_state_seconds seconds\n"
    ));
    assert!(t.contains("# TYPE pagewatch_dirty_domain_state stateset\n"));
    assert!(t.contains("pagewatch_self_cpu_seconds_total{host=\"lab\"} 1.5\n"));
    // No timestamps: every sample line is `name{labels} value`.
    for l in t.lines().filter(|l| !l.starts_with('#')) {
        let after = &l[l.rfind('}').unwrap() + 1..];
        assert_eq!(after.split_whitespace().count(), 1, "{l}");
    }
}

#[test]
fn classic_has_no_unit_no_eof_and_total_in_counter_types() {
    let p = page();
    let t = render(&p, Format::Classic, None);
    assert!(!t.contains("# UNIT") && !t.contains("# EOF"));
    assert!(t.contains("# TYPE pagewatch_dirty_state_seconds_total counter\n"));
    assert!(t.contains("# TYPE pagewatch_dirty_domain_state gauge\n"));
    assert!(!t.contains("stateset"));
    assert!(
        !t.contains("pagewatch_self_cpu_seconds"),
        "no CPU figure given"
    );
    // The same samples in both formats.
    let om = render(&p, Format::OpenMetrics, None);
    let body = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(body(&t), body(&om));
}

#[test]
fn the_stateset_has_one_state_set_per_domain() {
    let p = page();
    let m = p.model.as_deref().unwrap();
    assert!(m.domains.len() > 1, "the memcg tree has a cgroup domain");
    let t = render(&p, Format::OpenMetrics, None);
    let lines = samples(&t, "pagewatch_dirty_domain_state");
    for d in &m.domains {
        let dl = format!("domain=\"{}\"", d.path);
        let mine: Vec<&&str> = lines.iter().filter(|l| l.contains(&dl)).collect();
        assert_eq!(mine.len(), 5, "{dl}");
        let on: Vec<&&&str> = mine.iter().filter(|l| l.ends_with(" 1")).collect();
        assert_eq!(on.len(), 1, "{mine:?}");
        let want = format!(
            "pagewatch_dirty_domain_state=\"{}\"",
            state_name(d.state.unwrap())
        );
        assert!(on[0].contains(&want), "{on:?} {want}");
    }
}

#[test]
fn counters_carry_the_accumulated_seconds() {
    let mut p = page();
    let g = p
        .counters
        .states
        .get_mut(&("global", "/".to_owned()))
        .unwrap();
    g.value = [10.0, 2.5, 3.0, 0.0, 0.0];
    p.counters.direct_reclaim_s = 4.25;
    let t = render(&p, Format::OpenMetrics, None);
    assert!(t.contains(
        "pagewatch_dirty_state_seconds_total{host=\"lab\",kind=\"global\",domain=\"/\",state=\"writers_throttled\"} 3\n"
    ));
    assert!(t.contains(
        "pagewatch_dirty_state_seconds_total{host=\"lab\",kind=\"global\",domain=\"/\",state=\"background_flushing\"} 2.5\n"
    ));
    assert!(t.contains("pagewatch_direct_reclaim_seconds_total{host=\"lab\"} 4.25\n"));
    let n = p.counters.states.len() * STATES.len();
    assert_eq!(samples(&t, "pagewatch_dirty_state_seconds_total").len(), n);
    assert_eq!(
        samples(&t, "pagewatch_samples_total"),
        [format!(
            "pagewatch_samples_total{{host=\"lab\"}} {}",
            p.samples
        )]
    );
}

#[test]
fn figures_match_the_export_families() {
    let p = page();
    let m = p.model.as_deref().unwrap();
    let t = render(&p, Format::OpenMetrics, None);
    let thresh = m.dirty.thresh_pages.unwrap() * m.page_size;
    assert!(t.contains(&format!(
        "pagewatch_dirty_threshold_bytes{{host=\"lab\"}} {thresh}\n"
    )));
    assert_eq!(
        samples(&t, "pagewatch_disk_saturation").len(),
        m.disks.len()
    );
    let state = crate::metrics::families::state(m.dirty.state).unwrap();
    assert!(t.contains(&format!("pagewatch_dirty_state{{host=\"lab\"}} {state}\n")));
    assert!(m.dirty.state != Some(State::AtHardLimit));
}

#[test]
fn an_empty_page_still_says_how_many_samples_failed() {
    let p = Page {
        host: "h".into(),
        errors: 3,
        ..Page::default()
    };
    let t = render(&p, Format::OpenMetrics, None);
    assert_eq!(
        t,
        "# TYPE pagewatch_samples counter\n# HELP pagewatch_samples Samples read and parsed since pagewatch started.\n\
         pagewatch_samples_total{host=\"h\"} 0\n\
         # TYPE pagewatch_sample_errors counter\n# HELP pagewatch_sample_errors Samples that could not be read or parsed.\n\
         pagewatch_sample_errors_total{host=\"h\"} 3\n# EOF\n"
    );
}

#[test]
fn latency_is_a_cumulative_histogram_summed_over_samples() {
    use crate::model::latency::DiskLatency;
    use crate::parse::blk_lat::DevLat;
    let mut p = page();
    assert!(
        !render(&p, Format::Classic, None).contains("pagewatch_disk_latency_seconds"),
        "nothing timed, no family"
    );
    let mut m = (*p.model.clone().unwrap()).clone();
    let mut lat = DevLat::default();
    for us in [3, 100, 100, 5000] {
        lat.read_dev.add(us);
    }
    m.disks.truncate(1);
    let dev = m.disks[0].name.clone();
    m.disks[0].lat_hist = Some(std::sync::Arc::new(DiskLatency { lat, ring_lost: 0 }));
    m.disks[0].latency.lat_sample_every = Some(8);
    // Two samples of the same interval's histograms: the counts add.
    p.counters.observe(&m, &[]);
    p.counters.observe(&m, &[]);
    p.model = Some(std::sync::Arc::new(m.clone()));
    let t = render(&p, Format::Classic, None);
    assert!(
        t.contains("# TYPE pagewatch_disk_latency_seconds histogram\n"),
        "{t}"
    );
    let l = format!("host=\"lab\",device=\"{dev}\",op=\"read\",stage=\"device\"");
    let bucket = |le: &str| format!("pagewatch_disk_latency_seconds_bucket{{{l},le=\"{le}\"}} ");
    assert!(
        t.contains(&format!("{}0\n", bucket("0.000002"))),
        "3 µs is over 2 µs"
    );
    assert!(t.contains(&format!("{}2\n", bucket("0.000004"))), "{t}");
    assert!(t.contains(&format!("{}6\n", bucket("0.000128"))));
    assert!(t.contains(&format!("{}8\n", bucket("+Inf"))));
    assert!(
        t.contains(&format!(
            "pagewatch_disk_latency_sample_every{{host=\"lab\",device=\"{dev}\"}} 8\n"
        )),
        "the sampling is stated: {t}"
    );
    assert!(t.contains(&format!("pagewatch_disk_latency_seconds_count{{{l}}} 8\n")));
    assert!(t.contains(&format!(
        "pagewatch_disk_latency_seconds_sum{{{l}}} 0.010406\n"
    )));
}

#[test]
fn a_loaded_disk_nothing_judges_is_said_not_fine() {
    // The 6.12 lab's writer: vda at queue 3-5 and 30-97 ms, never seen calm.
    let s = crate::source::test_samples("kernel-6.12-lab-writer");
    let mut live = Live::new("lab", Options::default());
    let mut p = Page::default();
    for r in &s {
        p = live.sample(r, 0.000_25);
    }
    let t = render(&p, Format::OpenMetrics, None);
    assert!(
        t.contains("pagewatch_disk_unjudged{host=\"lab\",device=\"vda\"} 1\n"),
        "{}",
        samples(&t, "pagewatch_disk_unjudged").join("\n")
    );
    assert!(t.contains("pagewatch_disk_saturation{host=\"lab\",device=\"vda\"} 0\n"));
}

#[test]
fn the_story_is_three_series_a_family_at_most_by_command() {
    use crate::model::answers::{Culprit, MemoryTaker, Story, Victim};
    let mut p = page();
    let plain = render(&p, Format::OpenMetrics, None);
    assert!(
        !plain.contains("pagewatch_culprit") && !plain.contains("pagewatch_victim"),
        "nobody named, no family"
    );
    let mut m = (*p.model.clone().unwrap()).clone();
    let culprit = |comm: &str, v: f64| Culprit {
        comm: comm.into(),
        pids: 1,
        dirtied_bytes_per_s: v,
        read_bytes_per_s: None,
    };
    let victim = |pid, comm: &str, figure, ratio: Option<f64>| Victim {
        pid,
        comm: comm.into(),
        figure,
        value: 16.0,
        calm: ratio.map(|r| 16.0 / r),
        ratio,
        waits_for: None,
    };
    m.verdict.as_mut().unwrap().story = Story {
        culprits: ["fio", "dd", "a\"b\\c\nd", "cp"]
            .iter()
            .zip([4e8, 2e8, 1e8, 5e7])
            .map(|(c, v)| culprit(c, v))
            .collect(),
        victims: vec![
            victim(1, "python3", "fsync", Some(40.0)),
            // A second process of the same command: one series, the worst's.
            victim(2, "python3", "fsync", Some(20.0)),
            victim(3, "postgres", "iowait", Some(8.0)),
            // Never seen calm: no ratio, no series.
            victim(4, "sqlite", "fsync", None),
        ],
        memory_taker: Some(MemoryTaker {
            pid: 99,
            comm: "pagewatch-eat".into(),
            rss_bytes: Some(1 << 30),
            growth_bytes_per_s: 8e8,
        }),
        thresholds_moved: None,
    };
    p.model = Some(std::sync::Arc::new(m));
    let t = render(&p, Format::OpenMetrics, None);
    assert_eq!(
        samples(&t, "pagewatch_culprit_dirtied_bytes_per_second"),
        [
            "pagewatch_culprit_dirtied_bytes_per_second{host=\"lab\",comm=\"fio\"} 400000000",
            "pagewatch_culprit_dirtied_bytes_per_second{host=\"lab\",comm=\"dd\"} 200000000",
            "pagewatch_culprit_dirtied_bytes_per_second{host=\"lab\",comm=\"a\\\"b\\\\c\\nd\"} 100000000",
        ]
    );
    assert_eq!(
        samples(&t, "pagewatch_victim_ratio"),
        [
            "pagewatch_victim_ratio{host=\"lab\",comm=\"python3\",figure=\"fsync\"} 40",
            "pagewatch_victim_ratio{host=\"lab\",comm=\"postgres\",figure=\"iowait\"} 8",
        ]
    );
    assert_eq!(
        samples(&t, "pagewatch_memory_taker_growth_bytes_per_second"),
        [
            "pagewatch_memory_taker_growth_bytes_per_second{host=\"lab\",comm=\"pagewatch-eat\"} 800000000"
        ]
    );
    assert!(t.contains("# TYPE pagewatch_victim_ratio gauge\n"));
    // The classic format has the same samples.
    let classic = render(&p, Format::Classic, None);
    assert_eq!(
        samples(&classic, "pagewatch_victim_ratio"),
        samples(&t, "pagewatch_victim_ratio")
    );
    // No disk saturated: reading is no part of the story, and has no family.
    assert!(!t.contains("pagewatch_culprit_read"), "{t}");
    // A saturated disk: the culprits' reading rates, 0 included.
    let mut m = (**p.model.as_ref().unwrap()).clone();
    let st = &mut m.verdict.as_mut().unwrap().story;
    for (c, r) in st.culprits.iter_mut().zip([3e8, 0.0, 0.0, 0.0]) {
        c.read_bytes_per_s = Some(r);
    }
    p.model = Some(std::sync::Arc::new(m));
    let t = render(&p, Format::OpenMetrics, None);
    assert_eq!(
        samples(&t, "pagewatch_culprit_read_bytes_per_second"),
        [
            "pagewatch_culprit_read_bytes_per_second{host=\"lab\",comm=\"fio\"} 300000000",
            "pagewatch_culprit_read_bytes_per_second{host=\"lab\",comm=\"dd\"} 0",
            "pagewatch_culprit_read_bytes_per_second{host=\"lab\",comm=\"a\\\"b\\\\c\\nd\"} 0",
        ]
    );
}
