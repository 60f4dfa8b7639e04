//! Small modal forms opened by the experiment keys: the eater's size, the fio form, the
//! drop-caches choice and the marker text.
//!
//! Owns: `Prompt` and how keys edit it. Must not touch: processes or app data; a finished
//! prompt becomes a `Submit` the app turns into effects.

use super::keymap::Key;

/// One editable fio setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Key, as in `--fio PRESET,key=value`.
    pub key: String,
    /// Current text.
    pub value: String,
}

/// A fio preset as the form shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresetView {
    /// Preset name.
    pub name: String,
    /// One line on what it does.
    pub help: String,
    /// Its editable settings with their defaults.
    pub fields: Vec<Field>,
}

/// An open prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prompt {
    /// `m`: the size to eat.
    Eat {
        /// What the user typed.
        input: String,
        /// Why the last attempt was refused.
        error: Option<String>,
    },
    /// The eater's size is over MemAvailable minus the margin: take it anyway?
    EatConfirm {
        /// The size as typed.
        size: String,
        /// Why it needs confirming.
        why: String,
    },
    /// `f`: preset and settings.
    Fio {
        /// Presets to choose from.
        presets: Vec<PresetView>,
        /// Chosen preset.
        preset: usize,
        /// The chosen preset's settings, as edited.
        fields: Vec<Field>,
        /// Field being edited.
        field: usize,
    },
    /// `D`: which level to drop, or why it cannot.
    Drop {
        /// `None` when dropping is possible; otherwise why not.
        unavailable: Option<String>,
    },
    /// `M`: the marker's text.
    Marker {
        /// What the user typed.
        input: String,
    },
}

/// What a key did to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Still open.
    Open,
    /// Closed without doing anything.
    Cancel,
    /// Closed with a request.
    Submit(Submit),
}

/// A completed prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submit {
    /// Eat this size; `force` when confirmed past the safety margin.
    Eat {
        /// The size as typed.
        size: String,
        /// Confirmed past the margin.
        force: bool,
    },
    /// Run fio with this spec (`preset,key=value,...`).
    Fio(String),
    /// Drop caches at this level.
    Drop(u8),
    /// Add a marker.
    Marker(String),
}

/// Longest text accepted in a prompt.
const MAX_INPUT: usize = 60;

fn edit(input: &mut String, key: Key) {
    match key {
        Key::Char(c) if !c.is_control() && input.chars().count() < MAX_INPUT => input.push(c),
        Key::Backspace => {
            input.pop();
        }
        _ => {}
    }
}

impl Prompt {
    /// A fio form on `presets`, the first one chosen.
    #[must_use]
    pub fn fio(presets: Vec<PresetView>) -> Self {
        let fields = presets
            .first()
            .map(|p| p.fields.clone())
            .unwrap_or_default();
        Prompt::Fio {
            presets,
            preset: 0,
            fields,
            field: 0,
        }
    }

    /// Applies one key.
    pub fn key(&mut self, key: Key) -> Outcome {
        if matches!(key, Key::Esc | Key::Ctrl('c')) {
            return Outcome::Cancel;
        }
        match self {
            Prompt::Eat { input, .. } => {
                if key == Key::Enter {
                    if input.trim().is_empty() {
                        return Outcome::Open;
                    }
                    return Outcome::Submit(Submit::Eat {
                        size: input.trim().to_owned(),
                        force: false,
                    });
                }
                edit(input, key);
            }
            Prompt::EatConfirm { size, .. } => {
                return match key {
                    Key::Char('y' | 'Y') => Outcome::Submit(Submit::Eat {
                        size: size.clone(),
                        force: true,
                    }),
                    _ => Outcome::Cancel,
                };
            }
            Prompt::Fio {
                presets,
                preset,
                fields,
                field,
            } => match key {
                Key::Enter => {
                    return Outcome::Submit(Submit::Fio(fio_spec(presets, *preset, fields)));
                }
                Key::Left | Key::Right if !presets.is_empty() => {
                    let n = presets.len();
                    *preset = if key == Key::Right {
                        (*preset + 1) % n
                    } else {
                        (*preset + n - 1) % n
                    };
                    *fields = presets[*preset].fields.clone();
                    *field = 0;
                }
                Key::Up | Key::BackTab => *field = field.saturating_sub(1),
                Key::Down | Key::Tab => *field = (*field + 1).min(fields.len().saturating_sub(1)),
                _ => {
                    if let Some(f) = fields.get_mut(*field) {
                        edit(&mut f.value, key);
                    }
                }
            },
            Prompt::Drop { unavailable } => {
                return match key {
                    Key::Char('1') if unavailable.is_none() => Outcome::Submit(Submit::Drop(1)),
                    Key::Char('3') if unavailable.is_none() => Outcome::Submit(Submit::Drop(3)),
                    Key::Enter | Key::Char('q') => Outcome::Cancel,
                    _ => Outcome::Open,
                };
            }
            Prompt::Marker { input } => {
                if key == Key::Enter {
                    let text = input.trim().to_owned();
                    return if text.is_empty() {
                        Outcome::Cancel
                    } else {
                        Outcome::Submit(Submit::Marker(text))
                    };
                }
                edit(input, key);
            }
        }
        Outcome::Open
    }
}

/// `preset,key=value,...` for the settings that differ from the preset's defaults.
fn fio_spec(presets: &[PresetView], preset: usize, fields: &[Field]) -> String {
    let Some(p) = presets.get(preset) else {
        return String::new();
    };
    let mut spec = p.name.clone();
    for f in fields {
        let default = p.fields.iter().find(|d| d.key == f.key);
        if default.is_none_or(|d| d.value != f.value) {
            spec.push(',');
            spec.push_str(&f.key);
            spec.push('=');
            spec.push_str(f.value.trim());
        }
    }
    spec
}

#[cfg(test)]
mod tests {
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
}
