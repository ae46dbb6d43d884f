//! `codespace instructions add`: the person writes an instruction for a work from a
//! terminal, on the ledger a running server uses (the same transaction `/inbox` makes),
//! recorded as `person-cli`. The instruction is printed as JSON on stdout.

use codespace_gateway::GatewayError;
use codespace_protocol::{ErrorCode, NewIntent};
use codespace_types::{IntentAuthor, visible};

use crate::Failure;
use crate::cli::InstructionsCommand;
use crate::operations::{open, print, runtime};

pub(crate) fn run(command: InstructionsCommand) -> Result<(), Failure> {
    match command {
        InstructionsCommand::Add(args) => {
            let store = open(&args.ledger, &[])?;
            let p = NewIntent { body: args.body, kind: args.kind, delivery: args.delivery };
            let intent = codespace_gateway::write_instruction(
                &store,
                &args.work_id,
                p,
                IntentAuthor::PersonCli,
                args.queue,
            )
            .map_err(refusal)?;
            let text = serde_json::to_string_pretty(&intent).map_err(runtime)?;
            print(&format!("{}\n", visible::escape_json(&text)))
        }
    }
}

/// A work that does not exist or a text that is refused is the person's to fix: exit 3.
fn refusal(e: GatewayError) -> Failure {
    match e.code() {
        ErrorCode::WorkNotFound | ErrorCode::InvalidArguments => Failure::Refused(e.to_string()),
        _ => runtime(e),
    }
}
