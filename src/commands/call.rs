//! `mcp-fuzz call`: one tool, once, judged as `run` judges it; the replay line of a finding.
//! `--prompt`, `--resource` and `--complete` send one request of the phase beyond tools instead,
//! judged as that phase judges it. Prints `{"outcome": ..., "result": ...}`: the judgement and,
//! when the server answered with a result, that result as it came.

use crate::cli::CallArgs;
use crate::errors::CliError;
use crate::exit_code;
use crate::output::write_stdout;
use crate::{config, session};
use mcp_fuzz_engine::phase::surfaces::{Request, request_once};
use mcp_fuzz_engine::server::Keep;
use serde_json::{Map, Value, json};

/// `mcp-fuzz call`.
pub fn run(args: &CallArgs) -> anyhow::Result<u8> {
    let mut spec = config::server(&args.target)?;
    // The call runs in a sandbox, as the run that printed it did.
    let _sandbox = spec.enter_sandbox().map_err(crate::errors::CliError::from)?;
    let given: Option<Map<String, Value>> = args
        .arguments
        .as_deref()
        .map(serde_json::from_str)
        .transpose()
        .map_err(|e| CliError::Usage(format!("--args must be a JSON object: {e}")))?;
    let arguments = given.clone().unwrap_or_default();
    let complete: Option<Value> = args
        .complete
        .as_deref()
        .map(serde_json::from_str::<Map<String, Value>>)
        .transpose()
        .map_err(|e| {
            CliError::Usage(format!(
                "--complete must be a JSON object (the params of completion/complete): {e}"
            ))
        })?
        .map(Value::Object);
    let request = match (&args.prompt, &args.resource, &complete) {
        (Some(name), _, _) => Some(Request::Prompt { name, arguments: given.as_ref() }),
        (_, Some(uri), _) => Some(Request::Resource { uri }),
        (_, _, Some(params)) => Some(Request::Complete { params }),
        _ => None,
    };
    let tool = match (&request, &args.tool) {
        (None, None) => {
            return Err(CliError::Usage(
                "say what to call: --tool NAME, --prompt NAME, --resource URI or --complete JSON"
                    .into(),
            )
            .into());
        }
        (_, tool) => tool.as_deref().unwrap_or_default(),
    };
    let keep = Keep { result: true, ..Keep::default() };
    let (outcome, result, fails) = session::block_on(async {
        let mut server = session::start(&spec).await?;
        let answered = match request {
            Some(request) => {
                request_once(&mut server, request).await.map(|a| (a.outcome, a.result, a.fails))
            }
            None => server.call(tool, &arguments, None, keep).await.map(|c| {
                let fails = c.outcome.is_failure();
                (c.outcome, c.result, fails)
            }),
        };
        server.close().await;
        Ok(answered.map_err(|e| session::start_error(&e, &spec.target))?)
    })?;
    let mut printed = json!({ "outcome": outcome });
    if let Some(result) = result {
        printed["result"] = result;
    }
    let mut text = serde_json::to_string_pretty(&printed).expect("JSON values serialise");
    text.push('\n');
    write_stdout(&text)?;
    Ok(if fails { exit_code::FINDINGS } else { exit_code::SUCCESS })
}
