//! placeholder

/// Placeholder until built.
pub fn run(_args: &crate::cli::EatArgs) -> anyhow::Result<()> {
    anyhow::bail!("not built yet")
}
