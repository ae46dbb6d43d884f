//! The `codespace` binary: the server library's [`codespace_server::main`], and nothing else
//! (no test hook is armed here, whatever the build).

fn main() -> std::process::ExitCode {
    codespace_server::main()
}
