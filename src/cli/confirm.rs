//! Asking before unbounded destructive bulk operations (DESIGN §5): on a terminal a yes/no prompt
//! (default no); off a terminal refusal unless `--yes`, so scripts never hang and never act by accident.

use std::io::IsTerminal;

use jobq::Error;
use jobq::error::Input;

/// Returns Ok(true) to go ahead, Ok(false) when the person said no; refuses off a terminal without
/// `--yes`. `flag_hint` names the narrower flags that would avoid the question.
pub async fn confirm(question: String, yes: bool, flag_hint: &str) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(Error::invalid(
            Input::Confirmation,
            format!(
                "refusing an unbounded bulk operation without a terminal to ask on: pass --yes, or narrow it with {flag_hint}"
            ),
        )
        .into());
    }
    let answer = tokio::task::spawn_blocking(move || {
        dialoguer::Confirm::new()
            .with_prompt(question)
            .default(false)
            .interact()
    })
    .await??;
    Ok(answer)
}
