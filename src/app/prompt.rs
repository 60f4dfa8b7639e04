//! Small modal forms opened by the experiment keys: the eater's size, the fio form, the
//! drop-caches choice, the marker text, the playbook picker and the tune form, with their
//! confirmations.
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
    /// `P`: the built-in playbooks, (name, description).
    Play {
        /// The playbooks.
        books: Vec<(String, String)>,
        /// The one under the cursor.
        selected: usize,
    },
    /// A checked playbook: run it? Shows the settings it changes.
    PlayConfirm {
        /// Its name.
        name: String,
        /// Its description.
        description: String,
        /// The settings it changes, with their values now and to be.
        changes: Vec<super::TuneView>,
    },
    /// `T`: the setting and its new value.
    Tune {
        /// The setting as typed.
        setting: String,
        /// The value as typed.
        value: String,
        /// 0: the setting, 1: the value.
        field: usize,
        /// Why the last attempt was refused.
        error: Option<String>,
    },
    /// A setting's old and new value: write it?
    TuneConfirm {
        /// The setting.
        setting: crate::jobs::tune::Setting,
        /// Its resolved name.
        name: String,
        /// Its value now.
        old: String,
        /// The checked new value.
        value: String,
        /// What writing it leaves behind for good, named before `y` (`jobs::wbt::lasting`).
        lasting: Option<String>,
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
    /// Check this built-in playbook.
    Play(String),
    /// Run the checked playbook.
    PlayConfirmed,
    /// Check this setting and value (as typed).
    Tune {
        /// The setting.
        setting: String,
        /// The value.
        value: String,
    },
    /// Write the checked value.
    TuneConfirmed {
        /// The setting.
        setting: crate::jobs::tune::Setting,
        /// The value.
        value: String,
    },
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
            Prompt::Play { .. }
            | Prompt::PlayConfirm { .. }
            | Prompt::Tune { .. }
            | Prompt::TuneConfirm { .. } => return self.play_key(key),
        }
        Outcome::Open
    }
}

impl Prompt {
    /// A key in the playbook and tune prompts.
    fn play_key(&mut self, key: Key) -> Outcome {
        match self {
            Prompt::Play { books, selected } => match key {
                Key::Up => *selected = selected.saturating_sub(1),
                Key::Down => *selected = (*selected + 1).min(books.len().saturating_sub(1)),
                Key::Enter => {
                    return books.get(*selected).map_or(Outcome::Cancel, |(n, _)| {
                        Outcome::Submit(Submit::Play(n.clone()))
                    });
                }
                _ => {}
            },
            Prompt::PlayConfirm { .. } => {
                return match key {
                    Key::Char('y' | 'Y') => Outcome::Submit(Submit::PlayConfirmed),
                    _ => Outcome::Cancel,
                };
            }
            Prompt::Tune {
                setting,
                value,
                field,
                ..
            } => match key {
                Key::Enter if *field == 0 => *field = 1,
                Key::Enter => {
                    return Outcome::Submit(Submit::Tune {
                        setting: setting.trim().to_owned(),
                        value: value.trim().to_owned(),
                    });
                }
                Key::Up | Key::BackTab => *field = 0,
                Key::Down | Key::Tab => *field = 1,
                _ => edit(if *field == 0 { setting } else { value }, key),
            },
            Prompt::TuneConfirm { setting, value, .. } => {
                return match key {
                    Key::Char('y' | 'Y') => Outcome::Submit(Submit::TuneConfirmed {
                        setting: setting.clone(),
                        value: value.clone(),
                    }),
                    _ => Outcome::Cancel,
                };
            }
            _ => {}
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

/// The fio presets as the `f` form shows them: every key with the preset's value.
#[must_use]
pub fn preset_views() -> Vec<PresetView> {
    crate::jobs::fio::presets()
        .iter()
        .map(|p| {
            let text = p.spec().to_string();
            let fields = text
                .split(',')
                .skip(1)
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| Field {
                    key: k.to_owned(),
                    value: v.to_owned(),
                })
                .collect();
            PresetView {
                name: p.name.to_owned(),
                help: p.description.to_owned(),
                fields,
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
