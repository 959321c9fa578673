use std::path::Path;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use crate::Result;

/// Opens (creating if missing) the shared database file in WAL mode, with a busy timeout
/// because several crates and the CLI may write to it at once, and runs this crate's
/// migrations.
pub async fn open_pool(path: impl AsRef<Path>) -> Result<SqlitePool> {
    let options = SqliteConnectOptions::new()
        .filename(path.as_ref())
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        // A connection to a local file does not go stale like a network one: pinging it
        // before every query was a round trip to its worker thread each time.
        .test_before_acquire(false)
        .connect_with(options)
        .await?;
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
