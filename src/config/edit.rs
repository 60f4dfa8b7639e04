//! Writing changed settings back into a config file's text: each key's value replaced in
//! place (its comment kept), a missing key added at the end, everything else (comments,
//! unknown keys, their order) left as the user wrote it.
//!
//! Owns: the text edit. Must not touch: the file (`config_io` reads and writes it).

use toml_edit::{DocumentMut, Item};

use super::{Problem, Setting, names};

/// The first line of a file pagewatch creates.
const HEADER: &str = "# pagewatch settings: saved when changed in the screen. Keys and values: \
                      `man pagewatch`, section FILES.\n";

/// `text` with `changes` applied. A text that is not TOML is refused (its syntax error
/// named by line), so a file the user is still fixing is never replaced.
pub fn set(text: &str, changes: &[Setting]) -> Result<String, Problem> {
    let mut doc: DocumentMut = match toml_edit::Document::parse(text) {
        Ok(d) => d.into_mut(),
        Err(e) => {
            let line = e.span().map_or(0, |s| super::line_of(text, s.start));
            return Err(Problem {
                line,
                message: format!(
                    "{} (settings not saved until it is fixed)",
                    e.message().trim_end()
                ),
            });
        }
    };
    for c in changes {
        let mut value = names::value_of(c);
        match doc.get_mut(c.key()).and_then(Item::as_value_mut) {
            Some(old) => {
                *value.decor_mut() = old.decor().clone();
                *old = value;
            }
            None => {
                doc.insert(c.key(), Item::Value(value));
            }
        }
    }
    let mut out = doc.to_string();
    if text.trim().is_empty() {
        out.insert_str(0, HEADER);
    }
    Ok(out)
}
