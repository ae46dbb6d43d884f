//! `codespace-reaper`: the per-command reaper shim as a binary of its own, installed beside
//! `codespace`, which starts it for every command when it is there (else `codespace`
//! re-executes itself in the same hidden role). It links only the shim and the sandbox
//! launcher, so its exec and start cost a fraction of the server binary's.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Same arguments as the server's hidden role: argv[1] is the role argument.
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == codespace_process::REAPER_ARG) {
        codespace_process::reaper_main(args.collect());
    }
    eprintln!("codespace-reaper: started by `codespace` for each command; not for direct use");
    ExitCode::from(2)
}
