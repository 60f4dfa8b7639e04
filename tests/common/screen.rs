//! The screen as text, drawn by `ui::draw` into ratatui's test backend, and insta snapshots of
//! it in `snapshots/NAME@WxH.snap`. Include it as
//! `#[macro_use] #[path = "common/screen.rs"] mod screen;`.

#![allow(clippy::unwrap_used, dead_code)]

use pagewatch::app::App;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

/// The whole screen at `w`x`h`, one line per row.
pub fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| pagewatch::ui::draw(f, app)).unwrap();
    t.backend().to_string()
}

/// Snapshots `app`'s screen at each size as `snapshots/NAME@WxH.snap`:
/// `assert_screens!("idle", &app, &[(80, 24), (160, 48)])`. A macro, so that insta names the
/// calling test file as each snapshot's source.
#[allow(unused_macros)]
macro_rules! assert_screens {
    ($name:expr, $app:expr, $sizes:expr $(,)?) => {
        let app = $app;
        for &(w, h) in $sizes {
            insta::with_settings!({
                snapshot_path => "../snapshots",
                prepend_module_to_snapshot => false,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(format!("{}@{w}x{h}", $name), screen::screen(app, w, h));
            });
        }
    };
}
