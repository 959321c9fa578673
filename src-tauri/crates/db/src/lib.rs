//! The one SQLite file (`wyckoff.db`) that the market cache, memory, conversations,
//! schedules and the other stores share, opened the same way by every process that uses
//! it (the app, the CLI, the daemon). Each crate runs its own migrations on the pool.

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool, Transaction};

/// Opens (creating if missing) the database file: WAL, so readers never wait for a
/// writer; a busy timeout, since several processes may write at once; foreign keys on.
pub async fn open(path: &Path) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(Duration::from_secs(5))
        .foreign_keys(true);
    SqlitePoolOptions::new()
        .max_connections(4)
        // A connection to a local file does not go stale like a network one: pinging it
        // before every query was a round trip to its worker thread each time.
        .test_before_acquire(false)
        .connect_with(options)
        .await
}

/// Begins a transaction that writes, taking the write lock at once (`BEGIN IMMEDIATE`).
/// A deferred transaction that reads before it writes fails at its first write, without
/// waiting, when another connection (this process's or another's) wrote in between: its
/// snapshot is stale. Taking the lock first makes it wait its turn (the busy timeout)
/// like any other writer. Every store's writing transaction begins here.
pub async fn begin_write(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
    pool.begin_with("BEGIN IMMEDIATE").await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn a_new_file_is_created_in_wal_mode_with_foreign_keys_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wyckoff.db");
        let pool = open(&path).await.unwrap();
        assert!(path.exists());
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        let fk: i64 = sqlx::query_scalar("PRAGMA foreign_keys")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(fk, 1);
        let timeout: i64 = sqlx::query_scalar("PRAGMA busy_timeout")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(timeout, 5000);
    }

    /// Two processes' pools on one file, each reading then writing in a transaction while
    /// the other does the same: both commit (the second waits for the first), where
    /// deferred transactions fail with SQLITE_BUSY on a stale snapshot.
    #[tokio::test]
    async fn writers_that_read_first_wait_for_each_other_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wyckoff.db");
        let one = open(&path).await.unwrap();
        let two = open(&path).await.unwrap();
        sqlx::query("CREATE TABLE n (v INTEGER)")
            .execute(&one)
            .await
            .unwrap();
        let mut first = begin_write(&one).await.unwrap();
        let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM n")
            .fetch_one(&mut *first)
            .await
            .unwrap();
        let second = tokio::spawn(async move {
            let mut tx = begin_write(&two).await.unwrap();
            let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM n")
                .fetch_one(&mut *tx)
                .await
                .unwrap();
            sqlx::query("INSERT INTO n (v) VALUES (?)")
                .bind(count)
                .execute(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        sqlx::query("INSERT INTO n (v) VALUES (?)")
            .bind(count)
            .execute(&mut *first)
            .await
            .unwrap();
        first.commit().await.unwrap();
        second.await.unwrap();
        let values: Vec<i64> = sqlx::query_scalar("SELECT v FROM n ORDER BY rowid")
            .fetch_all(&one)
            .await
            .unwrap();
        // The second read after the first committed: it saw one row.
        assert_eq!(values, [0, 1]);
    }
}
