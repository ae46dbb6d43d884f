//! The server's tests: in process (`handler`, `router`: the MCP handler and the HTTP
//! router called directly) and end to end (the rest: the real `codespace` binary spoken to
//! over stdio and HTTP).
#![allow(unreachable_pub, reason = "test-local items; the lint is for library APIs")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers panic on setup failure by design"
)]
#![expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]

mod approvals;
mod approvals_crash;
mod approvals_wait;
mod architecture;
mod browser;
mod cdp;
mod cli;
mod commands;
mod conflicts;
mod contract;
mod docs;
mod elicitation;
mod exec_wait;
mod external;
mod files;
mod files_bounds;
mod files_search;
mod framing;
mod grace;
mod handler;
mod hold_person;
mod hold_seals;
mod hold_summaries;
mod http;
mod inbox;
mod inbox_queue;
mod interop;
mod kill;
mod leases;
mod long_calls;
mod messages;
mod mrtr;
mod owners;
mod owners_soak;
mod patch;
mod paths;
mod pod;
mod pod_hangup;
mod pod_reset;
mod pod_starting;
mod podman;
mod process;
mod process_bounds;
mod process_sandbox;
mod protocol;
mod raw_stdio;
mod read_binary;
mod reexports;
mod refusals;
mod revert;
mod revert_crash;
mod revert_retention;
mod root_swap;
mod router;
mod runner_faults;
mod runner_peers;
mod runner_uds;
mod sockets;
mod spill;
mod startup;
mod support;
mod tasks;
mod tasks_input;
mod tidy;
mod undo;
mod waits;
mod watch;
mod watch_escape;
mod watch_many;
mod watch_renames;
mod wire;
