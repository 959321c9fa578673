//! Market data: sources, bundled offline data, SQLite bar cache, portfolio store.
