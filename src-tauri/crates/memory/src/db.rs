use std::path::Path;

use sqlx::SqlitePool;

use crate::Result;

/// Opens (creating if missing) the shared database file ([`wyckoff_db::open`]) and runs
/// this crate's migrations.
pub async fn open_pool(path: impl AsRef<Path>) -> Result<SqlitePool> {
    let pool = wyckoff_db::open(path.as_ref()).await?;
    migrate(&pool).await?;
    Ok(pool)
}

/// Runs this crate's migrations (versions ≥ 1000). Migrations of other crates in the same
/// database are unknown here and ignored rather than treated as an error.
pub async fn migrate(pool: &SqlitePool) -> Result<()> {
    let mut migrator = sqlx::migrate!("./migrations");
    migrator.set_ignore_missing(true);
    migrator.run(pool).await?;
    Ok(())
}
