//! `mcp-fuzz serve-listing FILE` (hidden): the stand-in server `clients` points a real client at
//! when there is no server command to give it (and for bisection). See
//! `mcp_fuzz_clients::real::serve_listing`.

use crate::cli::ServeListingArgs;
use crate::exit_code;
use anyhow::Context as _;

/// `mcp-fuzz serve-listing`.
pub fn run(args: &ServeListingArgs) -> anyhow::Result<u8> {
    mcp_fuzz_clients::real::serve_listing_file(&args.file)
        .with_context(|| format!("failed to serve the listing {}", args.file.display()))?;
    Ok(exit_code::SUCCESS)
}
