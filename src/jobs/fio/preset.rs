//! The preset table: the classic page-cache experiments, ready to run and to edit in the form.
//!
//! Owns: the presets' names, descriptions and defaults (the spec a preset starts from is
//! built in `spec`). Must not touch: parsing, argv, files.

/// One entry of the preset table.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Name used on the command line and in the menu.
    pub name: &'static str,
    /// One line for the menu.
    pub description: &'static str,
    /// fio's `rw`.
    pub rw: &'static str,
    /// Block size, bytes.
    pub bs: u64,
    /// File size, bytes.
    pub size: u64,
    /// fio's `norandommap`.
    pub norandommap: bool,
}

pub(crate) const PRESETS: &[Preset] = &[
    Preset {
        name: "randread",
        description: "random 8k reads, sync, invalidate=0 (a second run can hit the cache)",
        rw: "randread",
        bs: 8 << 10,
        size: 2 << 30,
        norandommap: false,
    },
    Preset {
        name: "randread-norandommap",
        description: "random 8k reads as above with norandommap (blocks may repeat)",
        rw: "randread",
        bs: 8 << 10,
        size: 2 << 30,
        norandommap: true,
    },
    Preset {
        name: "randwrite",
        description: "random 8k buffered writes, sync",
        rw: "randwrite",
        bs: 8 << 10,
        size: 2 << 30,
        norandommap: false,
    },
    Preset {
        name: "read",
        description: "sequential 1M reads, sync",
        rw: "read",
        bs: 1 << 20,
        size: 2 << 30,
        norandommap: false,
    },
    Preset {
        name: "write",
        description: "sequential 1M buffered writes of 500M, sync",
        rw: "write",
        bs: 1 << 20,
        size: 500 << 20,
        norandommap: false,
    },
];

/// The preset table.
#[must_use]
pub fn presets() -> &'static [Preset] {
    PRESETS
}
