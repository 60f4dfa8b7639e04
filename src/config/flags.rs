//! Precedence: a flag given on the command line wins over the config file for that run
//! (and is not saved unless changed in the screen); the file wins over the defaults.
//!
//! Owns: which flag overrides which key. Must not touch: the file.

use super::WhoView;
use super::{ColorMode, Settings};
use crate::cli::{Args, Color, View};

/// `file`'s settings with the flags in `args` laid over them.
#[must_use]
pub fn with_flags(mut file: Settings, args: &Args) -> Settings {
    if let Some(i) = args.interval {
        file.interval = Some(i);
    }
    if let Some(v) = args.view {
        file.view = Some(match v {
            View::None => None,
            View::Processes => Some(WhoView::Processes),
            View::Cgroups => Some(WhoView::Cgroups),
        });
    }
    if args.partitions {
        file.partitions = Some(true);
    }
    if let Some(c) = args.color {
        file.color = Some(match c {
            Color::Auto => ColorMode::Auto,
            Color::Never => ColorMode::Never,
        });
    }
    if args.no_mouse {
        file.mouse = Some(false);
    }
    if let Some(d) = &args.fio_dir {
        file.fio_dir = Some(d.clone());
    }
    file
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn flags_win_over_the_file_and_the_rest_is_kept() {
        let (file, _) = super::super::parse(
            "interval = 5\nview = \"cgroups\"\ncolor = \"never\"\nmouse = true\nunits = \"pages\"\n",
        );
        let args = Args::parse_from(["pagewatch", "-i", "0.5", "--view", "none", "--no-mouse"]);
        let s = with_flags(file.clone(), &args);
        assert_eq!(s.interval, Some(0.5));
        assert_eq!(s.view, Some(None));
        assert_eq!(s.mouse, Some(false));
        assert_eq!(s.color, Some(ColorMode::Never), "no flag: the file's");
        assert_eq!(s.units, file.units);
        // No flags: the file as it is.
        assert_eq!(
            with_flags(file.clone(), &Args::parse_from(["pagewatch"])),
            file
        );
        let args = Args::parse_from(["pagewatch", "--color", "auto", "-p", "--fio-dir", "/d"]);
        let s = with_flags(file, &args);
        assert_eq!(s.color, Some(ColorMode::Auto));
        assert_eq!(s.partitions, Some(true));
        assert_eq!(s.fio_dir.as_deref(), Some(std::path::Path::new("/d")));
    }

    #[test]
    fn config_and_no_config_clash() {
        let e = Args::try_parse_from(["pagewatch", "--config", "x", "--no-config"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ArgumentConflict);
        // Global: after a subcommand too.
        let a = Args::try_parse_from(["pagewatch", "replay", "f", "--no-mouse"]).unwrap();
        assert!(a.no_mouse);
    }
}
