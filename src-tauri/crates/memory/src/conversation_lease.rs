//! One turn per conversation across processes: the app, the daemon, `wyckoff run` and
//! `approvals allow` share one data home, so the hold on a conversation lives in the
//! database, not in a process's memory.

use crate::{ConversationStore, Result};

/// Who holds a conversation's lease when it could not be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    pub owner: String,
    pub taken_at: String,
}

impl ConversationStore {
    /// Takes the conversation's lease for `owner`'s `turn`. Taken when nobody holds it,
    /// when `owner` holds it already (its previous turn is being stored) or when the holder
    /// is no longer `is_alive` (it died mid-turn); otherwise the live holder is returned
    /// and nothing changes. Atomic across processes: SQLite serialises the writes.
    pub async fn take_lease(
        &self,
        conversation_id: &str,
        owner: &str,
        turn: u32,
        is_alive: &(dyn Fn(&str) -> bool + Sync),
    ) -> Result<Option<LeaseHolder>> {
        let now = self.now_db();
        // Two passes: a takeover can lose to another process taking over the same dead
        // holder's row, and then the winner is looked at again.
        for _ in 0..2 {
            let inserted = sqlx::query(
                "INSERT INTO conversation_lease (conversation_id, owner, turn, taken_at)
                 VALUES (?, ?, ?, ?) ON CONFLICT(conversation_id) DO NOTHING",
            )
            .bind(conversation_id)
            .bind(owner)
            .bind(turn)
            .bind(&now)
            .execute(self.pool())
            .await?
            .rows_affected();
            if inserted == 1 {
                return Ok(None);
            }
            let held: Option<(String, i64, String)> = sqlx::query_as(
                "SELECT owner, turn, taken_at FROM conversation_lease WHERE conversation_id = ?",
            )
            .bind(conversation_id)
            .fetch_optional(self.pool())
            .await?;
            let Some((holder, held_turn, taken_at)) = held else {
                // Released meanwhile: insert again.
                continue;
            };
            if holder != owner && is_alive(&holder) {
                return Ok(Some(LeaseHolder {
                    owner: holder,
                    taken_at,
                }));
            }
            let taken = sqlx::query(
                "UPDATE conversation_lease SET owner = ?, turn = ?, taken_at = ?
                 WHERE conversation_id = ? AND owner = ? AND turn = ?",
            )
            .bind(owner)
            .bind(turn)
            .bind(&now)
            .bind(conversation_id)
            .bind(&holder)
            .bind(held_turn)
            .execute(self.pool())
            .await?
            .rows_affected();
            if taken == 1 {
                if holder != owner {
                    tracing::info!(
                        conversation = conversation_id,
                        gone = %holder,
                        "took over the lease of a process that is gone"
                    );
                }
                return Ok(None);
            }
        }
        let holder: Option<(String, String)> = sqlx::query_as(
            "SELECT owner, taken_at FROM conversation_lease WHERE conversation_id = ?",
        )
        .bind(conversation_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(Some(holder.map_or_else(
            || LeaseHolder {
                owner: String::new(),
                taken_at: now.clone(),
            },
            |(owner, taken_at)| LeaseHolder { owner, taken_at },
        )))
    }

    /// Releases the lease `owner` took for `turn`; a later turn's lease is left alone.
    pub async fn release_lease(&self, conversation_id: &str, owner: &str, turn: u32) -> Result<()> {
        sqlx::query(
            "DELETE FROM conversation_lease WHERE conversation_id = ? AND owner = ? AND turn = ?",
        )
        .bind(conversation_id)
        .bind(owner)
        .bind(turn)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, ConversationStore) {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::open_pool(dir.path().join("w.db")).await.unwrap();
        (dir, ConversationStore::new(pool))
    }

    const ALIVE: &(dyn Fn(&str) -> bool + Sync) = &|_| true;
    const GONE: &(dyn Fn(&str) -> bool + Sync) = &|_| false;

    #[tokio::test]
    async fn a_live_holder_refuses_another_process_until_it_releases() {
        let (_d, s) = store().await;
        assert_eq!(s.take_lease("c", "app", 1, ALIVE).await.unwrap(), None);
        let held = s.take_lease("c", "cli", 1, ALIVE).await.unwrap().unwrap();
        assert_eq!(held.owner, "app");
        // Another conversation is free.
        assert_eq!(s.take_lease("d", "cli", 1, ALIVE).await.unwrap(), None);
        s.release_lease("c", "app", 1).await.unwrap();
        assert_eq!(s.take_lease("c", "cli", 1, ALIVE).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_dead_holder_is_taken_over_and_its_release_then_changes_nothing() {
        let (_d, s) = store().await;
        s.take_lease("c", "old", 4, ALIVE).await.unwrap();
        assert_eq!(s.take_lease("c", "new", 1, GONE).await.unwrap(), None);
        s.release_lease("c", "old", 4).await.unwrap();
        let held = s.take_lease("c", "third", 1, ALIVE).await.unwrap().unwrap();
        assert_eq!(held.owner, "new");
    }

    #[tokio::test]
    async fn the_same_process_takes_its_own_lease_for_its_next_turn() {
        let (_d, s) = store().await;
        s.take_lease("c", "app", 1, ALIVE).await.unwrap();
        assert_eq!(s.take_lease("c", "app", 2, ALIVE).await.unwrap(), None);
        // The first turn's late release leaves the second's lease.
        s.release_lease("c", "app", 1).await.unwrap();
        let held = s.take_lease("c", "cli", 1, ALIVE).await.unwrap().unwrap();
        assert_eq!(held.owner, "app");
    }
}
