//! Fuzz target: arbitrary UTF-8 through `parse` and `plan` over a small in-memory tree; any panic
//! (including a broken plan invariant) is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../crates/codespace-patch/tests/it/fuzz_tree.rs"]
mod fuzz_tree;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        fuzz_tree::run(text);
    }
});
