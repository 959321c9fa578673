//! Data home, settings, secrets and logging shared by the app and the CLI.
