//! Scriptable vendor-format mock server for tests.
