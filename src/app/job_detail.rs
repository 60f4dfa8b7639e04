//! The job detail view (`Enter` on a row of the jobs pane): which row it shows, and the
//! measure of a job's files it asks for while open.
//!
//! Owns: the effects of the open view (`JobCmd::MeasureFiles` at each sample for a job of ours;
//! a foreign fio's files come with its scan). Must not touch: the files (the supervisor
//! measures them), drawing (`ui::panes::job_detail`).

use std::path::Path;

use super::jobs::JobRef;
use super::{App, Effect, JobCmd, JobKind};
use crate::jobs::foreign_files::FioOptions;

impl App {
    /// While the detail view of a fio job of ours is open: measure its files (the ones its
    /// command line names) at each sample. Nothing in replay or on captured trees.
    pub(super) fn job_files_due(&self) -> Vec<Effect> {
        if self.replay.is_some() || self.caps.captured {
            return Vec::new();
        }
        let Some(JobRef::Own(id)) = self.jobs.detail else {
            return Vec::new();
        };
        let Some(j) = self.jobs.get(id).filter(|j| j.kind == JobKind::Fio) else {
            return Vec::new();
        };
        let paths: Vec<String> = FioOptions::parse(&j.argv)
            .named_files(Path::new("/"))
            .into_iter()
            .map(|p| p.display().to_string())
            .collect();
        if paths.is_empty() {
            return Vec::new();
        }
        vec![Effect::Job(JobCmd::MeasureFiles { id, paths })]
    }
}
