//! placeholder

/// Placeholder until built.
pub fn run(_args: &crate::cli::GuardArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
