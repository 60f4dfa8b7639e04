use super::*;

fn every_change() -> Vec<Setting> {
    vec![
        Setting::Interval(2.5),
        Setting::Units(Units::Pages),
        Setting::DiskSort(SortKey::AquSz),
        Setting::ProcessSort(ProcSort::IoWait),
        Setting::View(Some(WhoView::Cgroups)),
        Setting::Partitions(true),
    ]
}

#[test]
fn round_trip_every_setting_the_screen_changes() {
    let text = set("", &every_change()).unwrap();
    let (s, problems) = parse(&text);
    assert_eq!(problems, vec![]);
    assert_eq!(
        s,
        Settings {
            interval: Some(2.5),
            units: Some(Units::Pages),
            disk_sort: Some(SortKey::AquSz),
            process_sort: Some(ProcSort::IoWait),
            view: Some(Some(WhoView::Cgroups)),
            partitions: Some(true),
            ..Settings::default()
        }
    );
    // And back to the defaults' words, over the same text.
    let back = set(
        &text,
        &[
            Setting::View(None),
            Setting::Units(Units::Bytes),
            Setting::DiskSort(SortKey::Name),
            Setting::ProcessSort(ProcSort::Pid),
        ],
    )
    .unwrap();
    let (s, _) = parse(&back);
    assert_eq!(s.view, Some(None));
    assert_eq!(s.units, Some(Units::Bytes));
    assert_eq!(s.disk_sort, Some(SortKey::Name));
    assert_eq!(s.process_sort, Some(ProcSort::Pid));
    assert_eq!(s.interval, Some(2.5));
    // Each key once.
    for key in ["interval", "units", "view", "disk_sort"] {
        let n = back.lines().filter(|l| l.starts_with(key)).count();
        assert_eq!(n, 1, "{key} in:\n{back}");
    }
}

#[test]
fn every_sort_and_view_survives_the_file() {
    let mut k = SortKey::Util;
    let mut p = ProcSort::Storage;
    for _ in 0..8 {
        let t = set("", &[Setting::DiskSort(k), Setting::ProcessSort(p)]).unwrap();
        let (s, problems) = parse(&t);
        assert!(problems.is_empty(), "{t}");
        assert_eq!((s.disk_sort, s.process_sort), (Some(k), Some(p)), "{t}");
        k = k.next();
        p = p.next();
    }
}

#[test]
fn the_users_comments_and_other_keys_are_kept() {
    let text = "# mine\ncolor = \"never\" # no colours at work\n\ninterval = 1 # fast\nfio_dir = \"/srv/scratch\"\n";
    let out = set(text, &[Setting::Interval(5.0), Setting::Partitions(true)]).unwrap();
    assert_eq!(
        out,
        "# mine\ncolor = \"never\" # no colours at work\n\ninterval = 5.0 # fast\nfio_dir = \"/srv/scratch\"\npartitions = true\n"
    );
    let (s, problems) = parse(&out);
    assert!(problems.is_empty());
    assert_eq!(s.color, Some(ColorMode::Never));
    assert_eq!(s.fio_dir, Some(PathBuf::from("/srv/scratch")));
    assert_eq!(s.interval, Some(5.0));
}

#[test]
fn a_new_file_starts_with_a_header() {
    let out = set("", &[Setting::Interval(2.0)]).unwrap();
    assert!(out.starts_with("# pagewatch settings"), "{out}");
    assert!(out.ends_with("\ninterval = 2.0\n"), "{out}");
}

#[test]
fn bad_values_are_named_by_line_and_the_rest_kept() {
    let text = "interval = 2\nunits = \"furlongs\"\n\ncolour = \"never\"\ninterval_ms = 5\nview = 3\nmouse = false\ninterval2 = 0\n";
    let (s, problems) = parse(text);
    assert_eq!(s.interval, Some(2.0));
    assert_eq!(s.units, None);
    assert_eq!(s.view, None);
    assert_eq!(s.mouse, Some(false));
    let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, vec![2, 4, 5, 6, 8], "{problems:?}");
    assert!(
        problems[0].message.contains("\"furlongs\""),
        "{}",
        problems[0]
    );
    assert!(problems[0].message.contains("\"pages\""), "{}", problems[0]);
    assert!(
        problems[1].message.starts_with("unknown key \"colour\""),
        "{}",
        problems[1]
    );
    assert_eq!(problems[1].to_string().split(':').next(), Some("line 4"));
}

#[test]
fn intervals_outside_the_flags_range_are_refused() {
    for (text, ok) in [
        ("interval = 0.05", true),
        ("interval = 3600", true),
        ("interval = 0.01", false),
        ("interval = 3601", false),
        ("interval = nan", false),
        ("interval = -1", false),
        ("interval = \"2\"", false),
    ] {
        let (s, problems) = parse(text);
        assert_eq!(s.interval.is_some(), ok, "{text}");
        assert_eq!(problems.len(), usize::from(!ok), "{text}");
    }
}

#[test]
fn a_file_that_is_not_toml_gives_its_line_and_every_default() {
    let text = "interval = 2\nunits = \"pages\"\nthis is not toml\n";
    let (s, problems) = parse(text);
    assert_eq!(s, Settings::default());
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].line, 3, "{:?}", problems[0]);
    assert!(
        problems[0]
            .message
            .ends_with("every setting is at its default")
    );
    // And it is never replaced while broken.
    let e = set(text, &[Setting::Interval(5.0)]).unwrap_err();
    assert_eq!(e.line, 3);
}

#[test]
fn tables_and_garbage_never_panic() {
    for text in [
        "[view]\nx = 1\n",
        "view = { a = 1 }",
        "\u{0}\u{1}",
        "interval = 1e400",
        "a.b.c = 1",
        "[[x]]\n",
        "\"\" = 1",
        "interval = 1\ninterval = 2",
    ] {
        let (_, problems) = parse(text);
        assert!(!problems.is_empty(), "{text:?}");
        let _ = set(text, &every_change());
    }
}

#[test]
fn the_xdg_rules_pick_the_path() {
    let p = |x: Option<&str>, h: Option<&str>| {
        default_path(x.map(Into::into), h.map(Into::into)).map(|p| p.display().to_string())
    };
    assert_eq!(
        p(Some("/x/cfg"), Some("/home/u")).as_deref(),
        Some("/x/cfg/pagewatch/config.toml")
    );
    // A relative XDG_CONFIG_HOME is ignored, as the spec says.
    assert_eq!(
        p(Some("rel"), Some("/home/u")).as_deref(),
        Some("/home/u/.config/pagewatch/config.toml")
    );
    assert_eq!(
        p(Some(""), Some("/root")).as_deref(),
        Some("/root/.config/pagewatch/config.toml")
    );
    assert_eq!(p(None, None), None);
    assert_eq!(p(None, Some("")), None);
}

#[test]
fn the_writer_starts_from_the_xdg_directory_or_the_named_files_own() {
    let d = ConfigPath::default_for(None, Some("/home/u".into())).unwrap();
    assert_eq!(
        (d.file.to_str().unwrap(), d.base.to_str().unwrap()),
        ("/home/u/.config/pagewatch/config.toml", "/home/u/.config")
    );
    let x = ConfigPath::default_for(Some("/x/cfg".into()), Some("/home/u".into())).unwrap();
    assert_eq!(x.base, PathBuf::from("/x/cfg"));
    assert_eq!(
        ConfigPath::explicit("/etc/pw.toml".into()).base,
        PathBuf::from("/etc")
    );
    assert_eq!(
        ConfigPath::explicit("pw.toml".into()).base,
        PathBuf::from(".")
    );
}
