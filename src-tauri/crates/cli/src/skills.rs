//! `wyckoff skills [--json]`: the skills `/name args` can invoke — name, description,
//! where each comes from — and the user skill files that were skipped, with why.

use std::process::ExitCode;

use clap::Args;
use wyckoff_config::DataHome;
use wyckoff_session::domain::agent::SkillSource;

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// Print one JSON object ({skills, warnings, dir}) instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: SkillsArgs) -> anyhow::Result<ExitCode> {
    let home = DataHome::from_env();
    let dir = home.skills_dir();
    let set = wyckoff_session::domain::agent::skills::load_skills(&dir);
    if args.json {
        let value = serde_json::json!({
            "dir": dir,
            "skills": set.skills.iter().map(|s| serde_json::json!({
                "name": s.name,
                "description": s.description,
                "source": s.source,
            })).collect::<Vec<_>>(),
            "warnings": set.warnings,
        });
        crate::market::print_json(&value)?;
        return Ok(ExitCode::SUCCESS);
    }
    for skill in &set.skills {
        let origin = match &skill.source {
            SkillSource::Builtin => "built-in".to_string(),
            SkillSource::User { path } => path.display().to_string(),
        };
        println!("/{:<12} {}  [{origin}]", skill.name, skill.description);
    }
    println!("user skills: {}/*.md", dir.display());
    for warning in &set.warnings {
        println!("warning: {}: {}", warning.path.display(), warning.message);
    }
    Ok(ExitCode::SUCCESS)
}
