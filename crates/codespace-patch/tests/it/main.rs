//! Integration tests: the shared V4A conformance scenarios, the product's own rules, and
//! robustness (fuzz corpus replay and deterministic mutations).
#![expect(
    clippy::disallowed_methods,
    reason = "tests build their fixtures and inspect results on the host filesystem"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "helpers outside #[test] fns panic on setup failure by design, like the tests themselves"
)]

mod conformance;
mod fuzz_tree;
mod product;
mod robustness;
mod support;
