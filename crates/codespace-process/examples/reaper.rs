//! The reaper shim as a standalone binary, for the tests (the server's `main` dispatches
//! to the same function when `argv[1]` is `__codespace-reaper`).

fn main() {
    // argv[0] is this binary, argv[1] the role argument.
    codespace_process::reaper_main(std::env::args_os().skip(2).collect())
}
