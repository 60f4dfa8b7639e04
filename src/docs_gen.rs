//! The man pages and the shell completions (bash, zsh, fish), generated from the clap
//! definition (`cli::Args`) so they never drift from the flags. `pagewatch __gen DIR`
//! writes them (the Debian package and `cargo install` users run it); the page adds what
//! clap does not know: the keys (from the keymap table), the mouse, the config file (from
//! `config::KEY_DOCS`), the environment and the exit status.
//!
//! Owns: the pages' and scripts' text. Must not touch: files (`cmd::generate` writes them).

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::Args;

/// The man pages: `pagewatch.1` and one per visible subcommand (`pagewatch-record.1`, …),
/// as (file name, roff text).
#[must_use]
pub fn man_pages() -> Vec<(String, Vec<u8>)> {
    let mut cmd = Args::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = man.render_title(&mut page);
    let _ = man.render_name_section(&mut page);
    let _ = man.render_synopsis_section(&mut page);
    let _ = man.render_description_section(&mut page);
    let _ = man.render_options_section(&mut page);
    let _ = man.render_subcommands_section(&mut page);
    page.extend_from_slice(extra_sections().as_bytes());
    let _ = man.render_version_section(&mut page);
    out.push((man.get_filename(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let man = clap_mangen::Man::new(sub.clone());
        let mut page = Vec::new();
        let _ = man.render(&mut page);
        out.push((man.get_filename(), page));
    }
    out
}

/// The completion scripts, as (file name, text): `pagewatch.bash`, `_pagewatch` (zsh) and
/// `pagewatch.fish`.
#[must_use]
pub fn completions() -> Vec<(String, Vec<u8>)> {
    [Shell::Bash, Shell::Zsh, Shell::Fish]
        .into_iter()
        .map(|shell| {
            let mut cmd = Args::command();
            let mut text = Vec::new();
            clap_complete::generate(shell, &mut cmd, "pagewatch", &mut text);
            let name = match shell {
                Shell::Zsh => "_pagewatch".to_owned(),
                other => format!("pagewatch.{other}"),
            };
            (name, text)
        })
        .collect()
}

/// Text for roff: backslashes and hyphens escaped, the arrows as roff's own glyphs (plain
/// troff reads ASCII), and a line that would start with a control character made literal.
fn esc(s: &str) -> String {
    let s = s
        .replace('\\', "\\e")
        .replace('-', "\\-")
        .replace('→', "\\(->")
        .replace('←', "\\(<-")
        .replace('↑', "\\(ua")
        .replace('↓', "\\(da")
        .replace('…', "...");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// A tagged paragraph: `tag` in bold, then `text`.
fn item(out: &mut String, tag: &str, text: &str) {
    out.push_str(".TP\n\\fB");
    out.push_str(&esc(tag));
    out.push_str("\\fR\n");
    out.push_str(&esc(text));
    out.push('\n');
}

fn section(out: &mut String, title: &str, text: &str) {
    out.push_str(".SH ");
    out.push_str(title);
    out.push('\n');
    if !text.is_empty() {
        out.push_str(&esc(text));
        out.push('\n');
    }
}

/// KEYS, MOUSE, FILES, ENVIRONMENT, EXIT STATUS and SEE ALSO.
fn extra_sections() -> String {
    let mut s = String::new();
    section(&mut s, "KEYS", "In the screen (? shows them too):");
    for b in crate::app::keymap::bindings(false) {
        item(&mut s, b.label, b.help);
    }
    s.push_str(".PP\n");
    s.push_str(&esc(
        "In a replay (pagewatch replay FILE), besides the common keys:",
    ));
    s.push('\n');
    for b in &crate::app::keymap::KEYMAP {
        if b.scope == crate::app::keymap::Scope::Replay {
            item(&mut s, b.label, b.help);
        }
    }
    section(
        &mut s,
        "MOUSE",
        "A click focuses a pane or selects the disk, job, process or cgroup under the pointer; \
         the wheel moves the selection of the table under it. --no-mouse (or mouse = false in \
         the config file) leaves the mouse to the terminal, to select text.",
    );
    section(
        &mut s,
        "FILES",
        "$XDG_CONFIG_HOME/pagewatch/config.toml, else ~/.config/pagewatch/config.toml (or \
         --config FILE; none with --no-config): the settings, a TOML file of the keys below. \
         The screen saves a setting to it as soon as it is changed there (mode 0600, replaced \
         atomically under a lock, so two screens saving at once both land), so a Ctrl-C loses \
         nothing. It writes only into directories of the running user's own, never through a \
         symbolic link below $XDG_CONFIG_HOME (or ~/.config, or --config's directory): with \
         sudo -E the invoking user's file is read but not written. A flag given on \
         the command line wins over the file for that run. A bad line is named on stderr and \
         in the screen, and that key keeps its default. Batch mode reads no config file.",
    );
    for (key, doc) in crate::config::KEY_DOCS {
        item(&mut s, key, doc);
    }
    section(&mut s, "ENVIRONMENT", "");
    item(
        &mut s,
        "NO_COLOR",
        "when set and not empty, no colours (as color = never)",
    );
    item(
        &mut s,
        "XDG_CONFIG_HOME, HOME",
        "where the config file is looked for",
    );
    item(
        &mut s,
        "XDG_STATE_HOME",
        "where a user's disk baselines are kept: $XDG_STATE_HOME/pagewatch/baselines (else \
         ~/.local/state/pagewatch/baselines), read over root's /var/lib/pagewatch/baselines; \
         root keeps them in /var/lib/pagewatch/baselines. Each disk's calm await per request \
         size, keyed by what the device is (wwid, serial, dm or md uuid, a loop device's \
         backing file and inode, size), so a pagewatch started in the middle of an incident \
         judges a disk as one started before it; a file that is damaged, too large or not the \
         user's is ignored with a warning",
    );
    item(
        &mut s,
        "PAGEWATCH_BASELINES",
        "another file for the disk baselines, or off for none (every disk is then judged on \
         what this run sees)",
    );
    item(
        &mut s,
        "TERM",
        "the screen needs a terminal that can move the cursor; unset or dumb is refused (use \
         --batch)",
    );
    item(
        &mut s,
        "TMPDIR",
        "the default base directory of fio's test files",
    );
    section(&mut s, "EXIT STATUS", "");
    item(&mut s, "0", "success (q, Ctrl-C or a signal in the screen)");
    item(
        &mut s,
        "1",
        "a failure at run time: a file that cannot be read, a terminal that cannot show the screen, a damaged recording",
    );
    item(
        &mut s,
        "2",
        "a usage error: an unknown flag, a bad value, flags that clash",
    );
    section(
        &mut s,
        "SEE ALSO",
        "iostat(1), vmstat(8), fio(1), promtool(1); docs/REFERENCE.md in the source for how every figure is computed.",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_the_flags_keys_files_and_exit_codes() {
        let pages = man_pages();
        let (name, page) = &pages[0];
        assert_eq!(name, "pagewatch.1");
        let page = String::from_utf8(page.clone()).unwrap_or_default();
        for needle in [
            ".TH pagewatch 1",
            "\\-\\-no\\-mouse",
            "\\-\\-config",
            ".SH KEYS",
            "cycle the disk sort",
            ".SH FILES",
            "disk_sort",
            ".SH EXIT STATUS",
            ".SH ENVIRONMENT",
        ] {
            assert!(page.contains(needle), "{needle:?} missing");
        }
        // Plain ASCII, for troff without a UTF-8 preprocessor.
        assert!(
            page.is_ascii(),
            "{:?}",
            page.chars().find(|c| !c.is_ascii())
        );
        // The hidden subcommands stay out of it.
        assert!(!page.contains("__guard") && !page.contains("__gen"));
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"pagewatch-record.1"), "{names:?}");
    }

    #[test]
    fn completions_for_three_shells_know_the_flags() {
        let c = completions();
        let names: Vec<&str> = c.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["pagewatch.bash", "_pagewatch", "pagewatch.fish"]);
        for (name, text) in &c {
            let text = String::from_utf8_lossy(text);
            assert!(text.contains("no-mouse"), "{name}");
            assert!(text.contains("replay"), "{name}");
        }
    }

    #[test]
    fn roff_escapes() {
        assert_eq!(esc("a-b\\c"), "a\\-b\\ec");
        assert_eq!(esc(".x"), "\\&.x");
        assert_eq!(esc("↑ →"), "\\(ua \\(->");
    }
}
