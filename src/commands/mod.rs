//! One module per command; each exports only its entry point, `run(args) -> exit code`. Shared
//! wiring lives in `config`, `session`, `input` and `output`, never in another command.

pub mod call;
pub mod clients;
pub mod diff;
pub mod r#gen; // `gen` is a reserved keyword since edition 2024.
pub mod init;
pub mod merge;
pub mod replay;
pub mod run;
pub mod serve_listing;
pub mod snapshot;
