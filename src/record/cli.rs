//! placeholder

/// Placeholder until built.
pub fn record(_args: &crate::cli::RecordArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}

/// Placeholder until built.
pub fn replay_batch(_args: &crate::cli::ReplayArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
