use super::*;

fn presets() -> Vec<PresetView> {
    let f = |k: &str, v: &str| Field {
        key: k.into(),
        value: v.into(),
    };
    vec![
        PresetView {
            name: "randread".into(),
            help: "8k random reads".into(),
            fields: vec![f("size", "2G"), f("bs", "8k")],
        },
        PresetView {
            name: "randwrite".into(),
            help: "8k random writes".into(),
            fields: vec![f("size", "2G")],
        },
    ]
}

fn typed(p: &mut Prompt, s: &str) -> Outcome {
    let mut last = Outcome::Open;
    for c in s.chars() {
        last = p.key(Key::Char(c));
    }
    last
}

#[test]
fn eat_prompt_takes_a_size() {
    let mut p = Prompt::Eat {
        input: String::new(),
        error: None,
    };
    assert_eq!(p.key(Key::Enter), Outcome::Open, "empty input stays open");
    typed(&mut p, "50%x");
    p.key(Key::Backspace);
    assert_eq!(
        p.key(Key::Enter),
        Outcome::Submit(Submit::Eat {
            size: "50%".into(),
            force: false
        })
    );
    assert_eq!(p.key(Key::Esc), Outcome::Cancel);
}

#[test]
fn confirm_needs_y() {
    let mut p = Prompt::EatConfirm {
        size: "30G".into(),
        why: String::new(),
    };
    assert_eq!(p.clone().key(Key::Char('n')), Outcome::Cancel);
    assert_eq!(
        p.key(Key::Char('y')),
        Outcome::Submit(Submit::Eat {
            size: "30G".into(),
            force: true
        })
    );
}

#[test]
fn fio_form_edits_fields_and_switches_presets() {
    let mut p = Prompt::fio(presets());
    assert_eq!(
        p.clone().key(Key::Enter),
        Outcome::Submit(Submit::Fio("randread".into()))
    );
    p.key(Key::Backspace);
    typed(&mut p, "64M");
    assert_eq!(
        p.clone().key(Key::Enter),
        Outcome::Submit(Submit::Fio("randread,size=264M".into()))
    );
    p.key(Key::Right);
    p.key(Key::Down);
    p.key(Key::Backspace);
    p.key(Key::Backspace);
    typed(&mut p, "1G");
    assert_eq!(
        p.key(Key::Enter),
        Outcome::Submit(Submit::Fio("randwrite,size=1G".into()))
    );
}

#[test]
fn drop_prompt_offers_1_and_3_only_when_available() {
    let mut p = Prompt::Drop { unavailable: None };
    assert_eq!(p.key(Key::Char('2')), Outcome::Open);
    assert_eq!(p.key(Key::Char('3')), Outcome::Submit(Submit::Drop(3)));
    let mut p = Prompt::Drop {
        unavailable: Some("needs root".into()),
    };
    assert_eq!(p.key(Key::Char('1')), Outcome::Open);
    assert_eq!(p.key(Key::Enter), Outcome::Cancel);
}

#[test]
fn marker_text() {
    let mut p = Prompt::Marker {
        input: String::new(),
    };
    typed(&mut p, "eat 50% now");
    assert_eq!(
        p.key(Key::Enter),
        Outcome::Submit(Submit::Marker("eat 50% now".into()))
    );
}

#[test]
fn picker_moves_and_picks() {
    let mut p = Prompt::Play {
        books: vec![("a".into(), "x".into()), ("b".into(), "y".into())],
        selected: 0,
    };
    p.key(Key::Down);
    p.key(Key::Down);
    assert_eq!(
        p.clone().key(Key::Enter),
        Outcome::Submit(Submit::Play("b".into()))
    );
    p.key(Key::Up);
    assert_eq!(p.key(Key::Enter), Outcome::Submit(Submit::Play("a".into())));
    let mut c = Prompt::PlayConfirm {
        name: "a".into(),
        description: String::new(),
        changes: Vec::new(),
    };
    assert_eq!(c.clone().key(Key::Char('n')), Outcome::Cancel);
    assert_eq!(
        c.key(Key::Char('y')),
        Outcome::Submit(Submit::PlayConfirmed)
    );
}

#[test]
fn tune_form_takes_setting_then_value() {
    let mut p = Prompt::Tune {
        setting: String::new(),
        value: String::new(),
        field: 0,
        error: None,
    };
    typed(&mut p, "vm.dirty_bytes");
    assert_eq!(p.key(Key::Enter), Outcome::Open, "Enter moves to the value");
    typed(&mut p, "15M");
    assert_eq!(
        p.key(Key::Enter),
        Outcome::Submit(Submit::Tune {
            setting: "vm.dirty_bytes".into(),
            value: "15M".into()
        })
    );
}

#[test]
fn preset_views_carry_every_key() {
    let v = preset_views();
    let rr = v.iter().find(|p| p.name == "randread").unwrap();
    let keys: Vec<&str> = rr.fields.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, crate::jobs::fio::spec::KEYS);
    let size = rr.fields.iter().find(|f| f.key == "size").unwrap();
    assert_eq!(size.value, "2G");
}
