//! The experiment prompts as an overlay: eater size, fio form, drop caches, marker text, the
//! playbook picker and the tune form, with their confirmations.
//!
//! Owns: drawing `app.prompt`. Must not touch: app state (read only).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::app::{App, Prompt};
use crate::fmt;
use crate::ui::theme;
use crate::ui::widgets::block;

/// Draws the open prompt, if any, centred on `area`. The box is as tall as its lines once
/// wrapped to its width, and its last line (what the keys do: `y: run it`, `Enter: start`)
/// always shows on its bottom rows: a prompt too tall for the terminal loses the end of its
/// text instead, never the keys (a 3-line description at 160x48 once pushed the playbook
/// confirmation's `y: run it` out of its box, and Enter cancelled it).
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(p) = &app.prompt else { return };
    let t = theme(app);
    let (title, lines) = content(app, p);
    let mut lines: Vec<Line> = lines
        .into_iter()
        .map(|(s, strong)| Line::from(Span::styled(s, if strong { t.title } else { t.text })))
        .collect();
    let keys = lines.pop().map(|l| wrapped(vec![l]));
    let body = wrapped(lines);
    let w = area.width.saturating_sub(4).min(90);
    let inner_w = w.saturating_sub(2);
    let body_h = body.line_count(inner_w);
    let keys_h = keys.as_ref().map_or(0, |k| k.line_count(inner_w));
    let h = ((body_h + keys_h) as u16)
        .saturating_add(2)
        .min(area.height);
    let rect = Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    );
    Clear.render(rect, buf);
    let b = block(app, title, true);
    let inner = b.inner(rect);
    b.render(rect, buf);
    let keys_h = (keys_h as u16).min(inner.height);
    let body_area = Rect {
        height: inner.height - keys_h,
        ..inner
    };
    body.render(body_area, buf);
    if let Some(k) = keys {
        let keys_area = Rect {
            y: body_area.bottom(),
            height: keys_h,
            ..inner
        };
        k.render(keys_area, buf);
    }
}

/// `lines` as a paragraph wrapped at word boundaries.
fn wrapped(lines: Vec<Line<'static>>) -> Paragraph<'static> {
    Paragraph::new(lines).wrap(Wrap { trim: false })
}

type Lines = Vec<(String, bool)>;

fn content(app: &App, p: &Prompt) -> (&'static str, Lines) {
    let mem = app.model.as_ref().map(|m| &m.memory);
    let total = mem.map_or(0, |m| m.MemTotal * 1024);
    let avail = mem.and_then(|m| m.MemAvailable).map_or(0, |v| v * 1024);
    match p {
        Prompt::Eat { input, error } => {
            let mut l = vec![
                (
                    "Size to take: absolute (512M, 2G) or a percentage of MemTotal (50%).".into(),
                    false,
                ),
                (
                    format!(
                        "Base for %: MemTotal {}. MemAvailable now {}; safety margin {}.",
                        fmt::bytes(total as f64),
                        fmt::bytes(avail as f64),
                        fmt::bytes(crate::jobs::eat_plan::margin(total) as f64)
                    ),
                    false,
                ),
                (format!("> {input}_"), true),
            ];
            if let Some(e) = error {
                l.push((e.clone(), true));
            }
            l.push(("Enter: start · Esc: cancel".into(), false));
            ("Eat memory", l)
        }
        Prompt::EatConfirm { why, .. } => (
            "Eat memory: confirm",
            vec![
                (why.clone(), true),
                (
                    "The eater is first in line for the OOM killer (oom_score_adj 1000) and dies with pagewatch."
                        .into(),
                    false,
                ),
                ("y: take it anyway · any other key: cancel".into(), false),
            ],
        ),
        Prompt::Fio {
            presets,
            preset,
            fields,
            field,
        } => {
            let mut l = Vec::new();
            if let Some(p) = presets.get(*preset) {
                l.push((format!("◀ {} ▶  ({}/{})", p.name, preset + 1, presets.len()), true));
                l.push((p.help.clone(), false));
            } else {
                l.push(("no presets".into(), true));
            }
            for (i, f) in fields.iter().enumerate() {
                let cursor = if i == *field { "_" } else { "" };
                let mark = if i == *field { ">" } else { " " };
                l.push((format!("{mark} {:<10} {}{cursor}", f.key, f.value), i == *field));
            }
            l.push((
                "←/→ preset · ↑/↓ field · type to edit · Enter: run · Esc: cancel".into(),
                false,
            ));
            ("Run fio", l)
        }
        Prompt::Drop { unavailable } => match unavailable {
            Some(why) => (
                "Drop caches",
                vec![
                    (format!("Unavailable: {why}"), true),
                    ("Enter or Esc: close".into(), false),
                ],
            ),
            None => (
                "Drop caches",
                vec![
                    ("sync runs first; dirty pages are written, not dropped.".into(), false),
                    ("1: page cache · 3: page cache, dentries and inodes".into(), true),
                    ("Esc: cancel".into(), false),
                ],
            ),
        },
        Prompt::Play { .. }
        | Prompt::PlayConfirm { .. }
        | Prompt::Tune { .. }
        | Prompt::TuneConfirm { .. } => play_content(p),
        Prompt::Marker { input } => (
            "Marker",
            vec![
                ("A short text, shown on the charts and recorded.".into(), false),
                (format!("> {input}_"), true),
                ("Enter: add · Esc: cancel".into(), false),
            ],
        ),
    }
}

/// The playbook and tune prompts.
fn play_content(p: &Prompt) -> (&'static str, Lines) {
    match p {
        Prompt::Play { books, selected } => {
            let mut l: Lines = books
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    let mark = if i == *selected { ">" } else { " " };
                    (format!("{mark} {name}"), i == *selected)
                })
                .collect();
            // The chosen one's description, cut to one line (`pagewatch play NAME --show`
            // prints it all).
            if let Some((_, desc)) = books.get(*selected) {
                let short: String = desc.chars().take(84).collect();
                let more = if short.len() < desc.len() { "…" } else { "" };
                l.push((format!("{short}{more}"), false));
            }
            l.push((
                "↑/↓ choose · Enter: check and confirm · Esc: cancel".into(),
                false,
            ));
            ("Run a playbook", l)
        }
        Prompt::PlayConfirm {
            name,
            description,
            changes,
        } => {
            let mut l = vec![(format!("{name}: {description}"), true)];
            if changes.is_empty() {
                l.push(("It changes no kernel setting.".into(), false));
            }
            for c in changes {
                l.push((format!("  {}: {} -> {}", c.setting, c.old, c.new), true));
                if let Some(lasting) = &c.lasting {
                    l.push((format!("  lasting: {lasting}"), true));
                }
            }
            l.push((
                "Settings are restored at its end, on q, Ctrl-C or if pagewatch is killed.".into(),
                false,
            ));
            if changes.iter().any(|c| c.lasting.is_some()) {
                l.push((
                    "y also accepts the lasting change above (as play --accept-wbt-manual).".into(),
                    true,
                ));
            }
            l.push(("y: run it · any other key: cancel".into(), false));
            ("Run a playbook: confirm", l)
        }
        Prompt::Tune {
            setting,
            value,
            field,
            error,
        } => {
            let cur = |i: usize| if *field == i { "_" } else { "" };
            let mut l = vec![
                (
                    "vm.dirty_*, vm.swappiness, vm.vfs_cache_pressure, [DEV:]queue/{scheduler,nr_requests,read_ahead_kb,wbt_lat_usec}"
                        .into(),
                    false,
                ),
                (format!("setting > {setting}{}", cur(0)), *field == 0),
                (format!("value   > {value}{}", cur(1)), *field == 1),
            ];
            if let Some(e) = error {
                l.push((e.clone(), true));
            }
            l.push(("Enter: next / check · Esc: cancel".into(), false));
            ("Tune a setting", l)
        }
        Prompt::TuneConfirm {
            name,
            old,
            value,
            lasting,
            ..
        } => {
            let mut l = vec![(format!("{name}: {old} -> {value}"), true)];
            if let Some(lasting) = lasting {
                l.push((format!("lasting: {lasting}"), true));
            }
            l.push((
                "The old value is restored on q, Ctrl-C or if pagewatch is killed.".into(),
                false,
            ));
            l.push(("y: write it · any other key: cancel".into(), false));
            ("Tune a setting: confirm", l)
        }
        _ => ("", Vec::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{Key, Look, Msg, TuneView};
    use crate::source::HostInfo;

    /// An app with figures and the experiments on, as a root session has it.
    fn app() -> App {
        let mut app = App::new(HostInfo::default(), Look::default(), 1.0);
        app.caps.experiments = true;
        for s in crate::source::test_samples("live-idle") {
            app.update(Msg::Sample(s));
        }
        app
    }

    /// Every prompt the keys open, and the confirmations with the longest texts they carry
    /// (each built-in playbook's description, the eater's refusal).
    fn prompts() -> Vec<Prompt> {
        let mut out = Vec::new();
        for k in ['m', 'f', 'D', 'T', 'M', 'P'] {
            let mut a = app();
            a.update(Msg::Key(Key::Char(k)));
            out.push(
                a.prompt
                    .clone()
                    .unwrap_or_else(|| panic!("{k} opened nothing")),
            );
        }
        let Some(Prompt::Play { books, .. }) = out.last().cloned() else {
            panic!("P opened no picker")
        };
        for (i, (name, description)) in books.iter().enumerate() {
            out.push(Prompt::Play {
                books: books.clone(),
                selected: i,
            });
            let change = |new: &str| TuneView {
                setting: "vm.dirty_bytes".into(),
                old: "0".into(),
                new: new.into(),
                lasting: None,
            };
            out.push(Prompt::PlayConfirm {
                name: name.clone(),
                description: description.clone(),
                changes: vec![change("15728640"), change("original")],
            });
        }
        out.push(Prompt::EatConfirm {
            size: "90%".into(),
            why: "90% is 21.2G, more than MemAvailable 23.2G less the safety margin 1.2G: the \
                  machine may start to reclaim hard or kill"
                .into(),
        });
        out
    }

    #[test]
    fn a_lasting_wbt_change_is_named_in_the_confirmation() {
        let a = app();
        let p = Prompt::PlayConfirm {
            name: "wbt-vs-flood".into(),
            description: "d".into(),
            changes: vec![TuneView {
                setting: "loop7/queue/wbt_lat_usec".into(),
                old: "2000".into(),
                new: "0".into(),
                lasting: Some("loop7's writeback throttling is on, in its default state".into()),
            }],
        };
        let (_, lines) = content(&a, &p);
        let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
        assert!(
            text.iter().any(|l| l.starts_with("  lasting: loop7's"))
                && text.iter().any(|l| l.contains("--accept-wbt-manual")),
            "{text:#?}"
        );
        assert_eq!(text.last(), Some(&"y: run it · any other key: cancel"));
        // The T key's confirmation names it too.
        let t = Prompt::TuneConfirm {
            setting: crate::jobs::tune::Setting::parse("loop7:queue/wbt_lat_usec").unwrap(),
            name: "loop7/queue/wbt_lat_usec".into(),
            old: "2000".into(),
            value: "0".into(),
            lasting: Some("loop7's writeback throttling is on, in its default state".into()),
        };
        let (_, lines) = content(&a, &t);
        assert!(
            lines.iter().any(|(l, _)| l.starts_with("lasting: loop7's")),
            "{lines:#?}"
        );
    }

    #[test]
    fn the_keys_line_shows_whole_in_every_prompt_at_both_sizes() {
        for p in prompts() {
            let mut a = app();
            a.prompt = Some(p.clone());
            let (_, lines) = content(&a, &p);
            let keys = &lines.last().expect("a prompt has lines").0;
            for (w, h) in [(80, 24), (160, 48), (80, 8)] {
                let area = Rect::new(0, 0, w, h);
                let mut buf = Buffer::empty(area);
                render(&a, area, &mut buf);
                let text = crate::ui::rows_of(&buf);
                assert!(
                    text.iter().any(|r| r.contains(keys.as_str())),
                    "{w}x{h}: {keys:?} not on screen:\n{}",
                    text.join("\n")
                );
            }
        }
    }

    #[test]
    fn the_box_holds_every_wrapped_line_when_the_screen_is_tall_enough() {
        // The flood-vs-fsync confirmation: its description wraps to three rows at 160x48,
        // and the box grows by the two rows the wrap adds, so nothing is cut.
        let a = app();
        let p = prompts()
            .into_iter()
            .find(|p| matches!(p, Prompt::PlayConfirm { name, .. } if name == "flood-vs-fsync"))
            .expect("the built-in");
        let (_, lines) = content(&a, &p);
        let mut a = a;
        a.prompt = Some(p);
        let area = Rect::new(0, 0, 160, 48);
        let mut buf = Buffer::empty(area);
        render(&a, area, &mut buf);
        let screen = crate::ui::rows_of(&buf).join("\n");
        for (line, _) in &lines[1..] {
            assert!(screen.contains(line.as_str()), "{line:?} cut:\n{screen}");
        }
        // The description, wrapped at word boundaries, has its last word on screen too.
        let last_word = lines[0].0.split_whitespace().last().unwrap();
        assert!(screen.contains(last_word), "{last_word} cut:\n{screen}");
    }
}
