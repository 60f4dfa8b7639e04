//! Command-line arguments.
//!
//! Owns: the clap definition. Must not touch: anything it configures.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// What `--version` prints after the name: the version, the git commit it was built from
/// (`unknown` without git) and the build kind, `static` (the C runtime linked in:
/// `packaging/static.sh`, runs on any x86_64 Linux) or `dynamic` (needs this system's libc),
/// with the target. Facts from `build.rs`. `-V` prints the version alone.
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("PW_GIT_COMMIT"),
    ", ",
    env!("PW_BUILD_KIND"),
    " build, ",
    env!("PW_TARGET"),
    ")"
);

/// Batch output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A compact vmstat/iostat-like table, 80 columns wide.
    Text,
    /// One JSON object per line per interval (schema in docs/REFERENCE.md).
    Json,
}

/// A "who" view to open the screen on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// Neither: the charts (large terminals) or the disks (80x24).
    None,
    /// Processes by IO activity (key `w`).
    Processes,
    /// The cgroup v2 tree with each group's dirty domain (key `c`).
    Cgroups,
}

/// pagewatch: why is buffered IO slow right now?
#[derive(Debug, Parser)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "clap flags are independent switches"
)]
#[command(version, long_version = LONG_VERSION, about)]
pub struct Args {
    /// Seconds between samples (fractions allowed) [default: 1, or the config file's].
    #[arg(long, short = 'i', value_parser = positive_secs)]
    pub interval: Option<f64>,
    /// Print figures to stdout instead of opening the screen.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: stop after N intervals (N objects take N+1 reads). Default: run until killed.
    #[arg(long, short = 'n')]
    pub count: Option<u64>,
    /// With --batch: output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Read a captured tree in place of /proc (same relative paths).
    #[arg(long, value_name = "DIR")]
    pub proc_root: Option<PathBuf>,
    /// Read a captured tree in place of /sys.
    #[arg(long, value_name = "DIR")]
    pub sys_root: Option<PathBuf>,
    /// Replay a captured sequence DIR/000, DIR/001, ... (each a root with proc/ and sys/);
    /// time comes from each root's proc/uptime.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["proc_root", "sys_root"])]
    pub tree: Option<PathBuf>,
    /// No braille, block or box-drawing characters (for terminals without Unicode).
    #[arg(long)]
    pub ascii: bool,
    /// Show partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
    /// Open the screen on a "who" view (processes or cgroups) in place of the charts, or on
    /// none, whatever the config file says. Changes only what the screen shows: what is
    /// measured follows what is happening, in every mode (--batch ignores it).
    #[arg(long, value_enum, value_name = "VIEW")]
    pub view: Option<View>,
    /// With --batch: arm the tracer of the throttles below the page cache (wbt depths, reclaim
    /// sleeping on writeback; root) whatever the load, as the device detail view does.
    #[arg(long)]
    pub below: bool,
    /// Record the session to FILE while the screen runs (see `pagewatch record`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Start a memory eater at launch: an absolute size (512M, 2G) or a percentage of
    /// MemTotal (50%). May be repeated.
    #[arg(long = "eat", value_name = "SIZE")]
    pub eat: Vec<String>,
    /// Start a fio preset at launch, with overrides: `randread,size=64M`. May be repeated.
    #[arg(long = "fio", value_name = "PRESET[,KEY=VALUE...]")]
    pub fio: Vec<String>,
    /// Directory fio's test files are created in (default: a pagewatch directory under $TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub fio_dir: Option<PathBuf>,
    /// Keep fio's test files when pagewatch exits.
    #[arg(long)]
    pub keep_fio_files: bool,
    /// Serve the figures at http://ADDR/metrics while the screen runs (see `pagewatch serve`).
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub listen: Option<SocketAddr>,
    /// Colours: auto (unless NO_COLOR is set) or never [default: the config file's, or auto].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<Color>,
    /// The config file to read and save settings to [default:
    /// $XDG_CONFIG_HOME/pagewatch/config.toml, else ~/.config/pagewatch/config.toml].
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Neither read nor save a config file: every setting at its default or its flag.
    #[arg(long, global = true, conflicts_with = "config")]
    pub no_config: bool,
    /// No clicks or wheel: leave the mouse to the terminal (to select text).
    #[arg(long, global = true)]
    pub no_mouse: bool,
    /// Scale the playbooks started from the screen (`P`): fio sizes and runtimes, eat sizes
    /// and waits, as `pagewatch play --scale`.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    pub play_scale: f64,
    /// Offer this playbook file in the screen's picker (`P`) besides the built-ins. May be
    /// repeated. A regular file of at most 1 MiB that only you or root can change.
    #[arg(long = "playbook", value_name = "FILE")]
    pub playbooks: Vec<PathBuf>,
    /// Refused with a pointer: playbooks run headless with `pagewatch play NAME|FILE` (or
    /// `pagewatch record --play`), or from the screen's picker (`P`).
    #[arg(long, value_name = "NAME|FILE", hide = true)]
    pub play: Option<String>,
    /// Time every block request of device DEV (`vda`, `nvme0n1`): per-interval latency
    /// distributions of device time, and queue time with --queue-time (root; a tracefs
    /// instance of pagewatch's own, removed on exit). May be repeated.
    #[arg(long = "latency", value_name = "DEV")]
    pub latency: Vec<String>,
    /// Show cgroup v2 group PATH (below the cgroup2 mount, `/box`) as the machine: its
    /// memory against its limits, its dirty domain, its processes, the host's figures
    /// labelled as the host's. Default: the container pagewatch runs in, when it finds one.
    #[arg(long = "cgroup", value_name = "PATH", conflicts_with = "host")]
    pub cgroup: Option<String>,
    /// Show the machine, even inside a container.
    #[arg(long)]
    pub host: bool,
    /// With the block tracer (`--latency`, the detail view, a saturated disk): time the queue
    /// too (from insert to issue), one more event a request (`block_rq_insert`). Without it the
    /// latency is device time alone and every output says queue time was not measured.
    #[arg(long = "queue-time")]
    pub queue_time: bool,
    /// Never arm these tracers, whatever happens (root only arms any): throttle (the writers in
    /// balance_dirty_pages), sync (the victims' fsync latency), block (request latency),
    /// below (wbt, reclaim throttling), reclaim (who stalls in direct reclaim), or all.
    /// Their figures are then absent, as without tracefs. May be repeated, or a comma list.
    #[arg(long = "no-trace", value_name = "TRACER", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(NO_TRACE))]
    pub no_trace: Vec<String>,
    /// Subcommands; without one, pagewatch opens the screen (or batch mode).
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
}

impl Args {
    /// Seconds between samples for batch mode: `--interval`, else 1 (batch mode reads no
    /// config file, so scripts behave the same for every user).
    #[must_use]
    pub fn batch_interval(&self) -> f64 {
        self.interval.unwrap_or(1.0)
    }
}

/// When to use colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// Colours unless NO_COLOR is set.
    Auto,
    /// No colours.
    Never,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Allocate and touch SIZE of memory, then hold it until stdin closes or a signal arrives.
    Eat(EatArgs),
    /// Record a session without the screen.
    Record(RecordArgs),
    /// Replay a recording in the screen (or as batch output).
    Replay(ReplayArgs),
    /// Write a Markdown bug report with SVG charts from a recording.
    Report(ReportArgs),
    /// Export a recording's derived figures.
    Export(ExportArgs),
    /// Run a playbook (a built-in experiment or a TOML file) without the screen.
    Play(PlayArgs),
    /// Serve live figures to Prometheus at http://ADDR/metrics, without the screen.
    Serve(ServeArgs),
    /// Write a recording of this machine to stdout, flushed after every sample: the remote
    /// side of `pagewatch connect` (it runs this over ssh).
    Stream(StreamArgs),
    /// Watch other machines over ssh: one host's screen, or one line per host for several
    /// (runs `pagewatch stream` there; read-only).
    Connect(ConnectArgs),
    /// Internal: run a command in this process's group and kill the whole group when
    /// pagewatch dies (used to start fio).
    #[command(hide = true, name = "__guard")]
    Guard(GuardArgs),
    /// Internal: write the man pages (DIR/man/man1) and the shell completions (DIR/completions),
    /// generated from this definition.
    #[command(hide = true, name = "__gen")]
    Gen(GenArgs),
}

/// `pagewatch __gen DIR`.
#[derive(Debug, Clone, clap::Args)]
pub struct GenArgs {
    /// Where to write `man/` and `completions/` (created).
    pub dir: PathBuf,
}

/// `pagewatch __guard -- PROGRAM ARGS...`, `pagewatch __guard --clean-dir DIR` or
/// `pagewatch __guard --tracefs-instance DIR`.
#[derive(Debug, Clone, clap::Args)]
pub struct GuardArgs {
    /// Wait for the end of stdin, then remove pagewatch's fio files left in this private
    /// directory (pagewatch was killed before it could).
    #[arg(long, value_name = "DIR", conflicts_with = "argv")]
    pub clean_dir: Option<std::path::PathBuf>,
    /// Wait for the end of stdin, then disable the tracepoint in this tracefs instance
    /// (`instances/pagewatch-<parent pid>`) and remove it.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["argv", "clean_dir"])]
    pub tracefs_instance: Option<std::path::PathBuf>,
    /// Hold the original values of tuned settings sent on stdin; write back those still held
    /// when stdin ends.
    #[arg(long, conflicts_with_all = ["argv", "clean_dir", "tracefs_instance"])]
    pub restore: bool,
    /// The program and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present_any = ["clean_dir", "tracefs_instance", "restore"]
    )]
    pub argv: Vec<String>,
}

/// `pagewatch eat`.
#[derive(Debug, Clone, clap::Args)]
pub struct EatArgs {
    /// An absolute size (512M, 2G, 1048576) or a percentage of MemTotal (50%).
    pub size: String,
    /// Take more than MemAvailable minus the safety margin.
    #[arg(long)]
    pub force: bool,
    /// Bytes touched per step (progress is reported after each step).
    #[arg(long, default_value = "64M")]
    pub step: String,
}

/// `pagewatch record`.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// The recording file to create.
    pub file: PathBuf,
    /// Seconds between samples.
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Stop after this long (`90`, `90s`, `10m`, `1h`). Default: until interrupted.
    #[arg(long)]
    pub duration: Option<String>,
    /// Also serve the figures at http://ADDR/metrics while recording (see `pagewatch serve`).
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub listen: Option<SocketAddr>,
    /// Run this playbook (a built-in's name or a file) while recording, as `pagewatch play
    /// NAME --record FILE` does; the recording ends with the playbook, and its phase table is
    /// printed.
    #[arg(long, value_name = "NAME|FILE")]
    pub play: Option<String>,
    /// With --play: the directory fio's test files are created in.
    #[arg(long, value_name = "DIR", requires = "play")]
    pub fio_dir: Option<PathBuf>,
    /// With --play: multiply fio file sizes and runtimes, absolute eat sizes and waits (0.01
    /// to 10).
    #[arg(long, value_name = "F", requires = "play")]
    pub scale: Option<f64>,
    /// With --play: as `pagewatch play --accept-wbt-manual`.
    #[arg(long, requires = "play")]
    pub accept_wbt_manual: bool,
    /// Time every block request of device DEV (`vda`, `nvme0n1`): per-interval latency
    /// distributions of device time, and queue time with --queue-time (root; a tracefs
    /// instance of pagewatch's own, removed on exit). May be repeated.
    #[arg(long = "latency", value_name = "DEV")]
    pub latency: Vec<String>,
    /// With the block tracer (`--latency`, the detail view, a saturated disk): time the queue
    /// too (from insert to issue), one more event a request (`block_rq_insert`). Without it the
    /// latency is device time alone and every output says queue time was not measured.
    #[arg(long = "queue-time")]
    pub queue_time: bool,
    /// Never arm these tracers, whatever happens (root only arms any): throttle (the writers in
    /// balance_dirty_pages), sync (the victims' fsync latency), block (request latency),
    /// below (wbt, reclaim throttling), reclaim (who stalls in direct reclaim), or all.
    /// Their figures are then absent, as without tracefs. May be repeated, or a comma list.
    #[arg(long = "no-trace", value_name = "TRACER", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(NO_TRACE))]
    pub no_trace: Vec<String>,
    /// Refused with a pointer: `record` starts no jobs; a playbook does (`--play`).
    #[arg(long = "fio", value_name = "SPEC", hide = true)]
    pub fio: Vec<String>,
    /// Refused with a pointer: `record` starts no jobs; a playbook does (`--play`).
    #[arg(long = "eat", value_name = "SIZE", hide = true)]
    pub eat: Vec<String>,
}

/// The names `--no-trace` takes (`source::NoTrace::NAMES`, checked equal by a test in `cmd`).
pub const NO_TRACE: [&str; 6] = ["throttle", "sync", "block", "below", "reclaim", "all"];

/// `pagewatch stream`.
#[derive(Debug, Clone, clap::Args)]
pub struct StreamArgs {
    /// Seconds between samples.
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Carry out the requests a `connect --allow-actions` client sends on stdin (eat, stop,
    /// drop caches); when stdin closes, stop them, put back what they changed, and end.
    #[arg(long)]
    pub actions: bool,
}

/// `pagewatch connect HOST...`.
#[derive(Debug, Clone, clap::Args)]
#[allow(clippy::struct_excessive_bools, reason = "independent switches")]
pub struct ConnectArgs {
    /// The machines: ssh destinations ([user@]host, or a Host of ~/.ssh/config).
    #[arg(required = true, value_name = "HOST")]
    pub hosts: Vec<String>,
    /// The ssh command and its options, in place of `ssh -T -o BatchMode=yes` (for a port, a
    /// key, a ProxyJump); split on spaces, the host and the remote command are added after.
    #[arg(long, value_name = "COMMAND")]
    pub ssh_command: Option<String>,
    /// pagewatch's path on the remote machines.
    #[arg(long, value_name = "PATH", default_value = "pagewatch")]
    pub remote_path: String,
    /// Run the remote pagewatch through `sudo -n` (root there: the throttle tracepoint).
    #[arg(long)]
    pub sudo: bool,
    /// Forward the experiment keys (eat memory, stop, drop caches) to the remote pagewatch,
    /// which carries them out with its own refusals and stops them when the connection ends.
    /// Without it the session is read-only.
    #[arg(long)]
    pub allow_actions: bool,
    /// Where a remote has no pagewatch, copy this binary into its temporary directory over
    /// the same ssh and run that.
    #[arg(long)]
    pub copy: bool,
    /// Seconds between the remote samples.
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Print figures to stdout instead of opening the screen (`host` set in each record).
    #[arg(long)]
    pub batch: bool,
    /// With --batch: output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// With --batch: stop after N intervals per host.
    #[arg(long, short = 'n')]
    pub count: Option<u64>,
    /// Record the remote's raw samples to FILE on this machine (one host, the screen).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Serve the remote's figures at http://ADDR/metrics while the screen runs (one host).
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub listen: Option<SocketAddr>,
    /// No braille, block or box-drawing characters.
    #[arg(long)]
    pub ascii: bool,
    /// Show partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
}

/// `pagewatch serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where to listen: PORT or 127.0.0.1:PORT (loopback), or an address written out to be
    /// reached from other hosts (0.0.0.0:PORT, [::]:PORT). A bare :PORT is refused.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr,
          default_value_t = SocketAddr::from(([127, 0, 0, 1], crate::serve::addr::DEFAULT_PORT)))]
    pub listen: SocketAddr,
    /// Seconds between samples.
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Serve partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
    /// Time every block request of device DEV (`vda`, `nvme0n1`): per-interval latency
    /// distributions of device time, and queue time with --queue-time (root; a tracefs
    /// instance of pagewatch's own, removed on exit). May be repeated.
    #[arg(long = "latency", value_name = "DEV")]
    pub latency: Vec<String>,
    /// With the block tracer (`--latency`, the detail view, a saturated disk): time the queue
    /// too (from insert to issue), one more event a request (`block_rq_insert`). Without it the
    /// latency is device time alone and every output says queue time was not measured.
    #[arg(long = "queue-time")]
    pub queue_time: bool,
    /// Never arm these tracers, whatever happens (root only arms any): throttle (the writers in
    /// balance_dirty_pages), sync (the victims' fsync latency), block (request latency),
    /// below (wbt, reclaim throttling), reclaim (who stalls in direct reclaim), or all.
    /// Their figures are then absent, as without tracefs. May be repeated, or a comma list.
    #[arg(long = "no-trace", value_name = "TRACER", value_delimiter = ',',
          value_parser = clap::builder::PossibleValuesParser::new(NO_TRACE))]
    pub no_trace: Vec<String>,
}

/// `pagewatch play`.
#[derive(Debug, Clone, clap::Args)]
#[allow(clippy::struct_excessive_bools, reason = "independent switches")]
pub struct PlayArgs {
    /// A built-in playbook's name, or a playbook file (a regular file of at most 1 MiB that
    /// only you or root can change).
    pub playbook: Option<String>,
    /// List the built-in playbooks.
    #[arg(long)]
    pub list: bool,
    /// Print the playbook's TOML (to copy and edit) instead of running it.
    #[arg(long)]
    pub show: bool,
    /// Record the run to FILE (phases and settings changes are events in it).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Phase table format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Directory fio's test files are created in (default: a pagewatch directory under $TMPDIR).
    #[arg(long, value_name = "DIR")]
    pub fio_dir: Option<PathBuf>,
    /// Multiply fio file sizes and runtimes, absolute eat sizes and waits (0.01 to 10).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seconds between samples.
    #[arg(long, short = 'i', default_value_t = 1.0, value_parser = positive_secs)]
    pub interval: f64,
    /// Go ahead when the playbook tunes a device's writeback throttling (queue/wbt_lat_usec)
    /// while the kernel holds it in its default state: any write leaves wbt set by hand until
    /// the device is made again (BFQ no longer turns it off), whatever value is put back.
    /// Without it such a playbook is refused before it changes anything.
    #[arg(long)]
    pub accept_wbt_manual: bool,
}

/// `pagewatch replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplayArgs {
    /// The recording to replay.
    pub file: PathBuf,
    /// Print derived figures instead of opening the screen, as live batch mode would have.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Playback speed, 1 to 60 times real time.
    #[arg(long, default_value_t = 1)]
    pub speed: u32,
    /// Show partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
    /// No braille, block or box-drawing characters.
    #[arg(long)]
    pub ascii: bool,
}

/// `pagewatch report`.
#[derive(Debug, Clone, clap::Args)]
pub struct ReportArgs {
    /// The recording.
    pub file: PathBuf,
    /// Start of the period: an offset from the recording's start (seconds `90`, `MM:SS` or
    /// `HH:MM:SS`), or a UTC wall-clock time with `@` (`@HH:MM`, `@HH:MM:SS`: the first such
    /// time at or after the start; an earlier clock time means the next day).
    #[arg(long)]
    pub from: Option<String>,
    /// End of the period, in the same forms as --from.
    #[arg(long)]
    pub to: Option<String>,
    /// Output directory (created): report.md and the SVG charts.
    #[arg(short = 'o', long, default_value = "pagewatch-report")]
    pub out: PathBuf,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One row per sample, one column per figure.
    Csv,
    /// One JSON object per sample (the batch JSON schema).
    Jsonl,
    /// OpenMetrics text, loadable with `promtool tsdb create-blocks-from openmetrics`.
    Openmetrics,
}

/// `pagewatch export`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    /// The recording.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Output file (default: standard output).
    #[arg(short = 'o', long)]
    pub out: Option<PathBuf>,
    /// Show partitions as well as whole disks.
    #[arg(long, short = 'p')]
    pub partitions: bool,
}

fn listen_addr(s: &str) -> Result<SocketAddr, String> {
    crate::serve::addr::parse(Some(s))
}

fn positive_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if v.is_finite() && (0.05..=3600.0).contains(&v) {
        Ok(v)
    } else {
        Err("interval must be between 0.05 and 3600 seconds".to_owned())
    }
}
