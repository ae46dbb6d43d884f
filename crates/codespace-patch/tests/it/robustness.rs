//! No input may panic: the fuzz seed corpus is replayed, and ~20k deterministic mutations of
//! the conformance patches are run against both the fuzz tree and the scenario's own input.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng};

use crate::conformance::conformance_dir;
use crate::fuzz_tree;
use crate::support::{Tree, run};

/// Runs `f`, naming `input` if it panics.
fn no_panic(what: &str, input: &str, f: impl FnOnce()) {
    if let Err(panic) = catch_unwind(AssertUnwindSafe(f)) {
        eprintln!("panic on {what}; input: {input:?}");
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn fuzz_corpus_replays_without_panic() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/parse_plan");
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fuzz corpus {} missing: {e}", dir.display()));
    let mut count = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        // The fuzz target only takes UTF-8; be lenient here so every seed exercises something.
        let text = String::from_utf8_lossy(&bytes);
        no_panic(&path.display().to_string(), &text, || {
            fuzz_tree::run(&text);
        });
        count += 1;
    }
    println!("replayed {count} fuzz corpus files");
    assert!(count >= 40, "fuzz corpus at {} has only {count} files", dir.display());
}

/// A seeded generator: the same mutations on every run.
struct Rng(StdRng);

impl Rng {
    fn seeded(seed: u64) -> Rng {
        Rng(StdRng::seed_from_u64(seed))
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.0.random_range(0..n) }
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const INTERESTING_LINES: &[&str] = &[
    "@@",
    "@@ ",
    "@@ line1",
    "@@ -1,2 +1,2 @@",
    "*** End of File",
    "*** Move to: moved/x.txt",
    "*** Move to: ../escape",
    "*** Add File: new.txt",
    "*** Add File: dir/a.txt/x",
    "*** Delete File: dir/a.txt",
    "*** Delete File: dir",
    "*** Update File: crlf.txt",
    "*** Update File: bin",
    "*** Update File: /abs",
    "*** Environment ID: x",
    "",
    " ",
    "+",
    "-",
    "\t",
    " one",
    "-one",
    "+ONE",
    "-two",
    "*** End Patch",
    " *** End Patch",
    "*** Begin Patch",
    "<<EOF",
    "EOF",
    "--- a/x",
    "+++ b/x",
    "+\u{2013}\u{201c}\u{a0}",
    " \u{2014}",
    "-\r",
];

const INTERESTING_CHARS: &[char] =
    &['\r', '\n', ' ', '\t', '+', '-', '@', '*', '\u{a0}', '\u{2014}', '\u{2019}', 'é', '\u{feff}'];

fn mutate(rng: &mut Rng, lines: &mut Vec<String>, others: &[Vec<String>]) {
    // Mostly keep the envelope lines, so that most mutants reach the planner.
    if lines.len() > 2 && rng.below(10) != 0 {
        let last = lines.pop().unwrap_or_default();
        let first = lines.remove(0);
        mutate_lines(rng, lines, others, 8);
        lines.insert(0, first);
        lines.push(last);
    } else {
        mutate_lines(rng, lines, others, 9);
    }
}

/// One mutation; `kinds` = 9 allows truncation.
fn mutate_lines(rng: &mut Rng, lines: &mut Vec<String>, others: &[Vec<String>], kinds: usize) {
    let n = lines.len();
    match rng.below(kinds) {
        0 if n > 0 => {
            lines.remove(rng.below(n));
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 if n > 1 => {
            let (a, b) = (rng.below(n), rng.below(n));
            lines.swap(a, b);
        }
        3 => lines.insert(rng.below(n + 1), rng.pick(INTERESTING_LINES).to_string()),
        4 if n > 0 => {
            let i = rng.below(n);
            let c = *rng.pick(&[' ', '+', '-', '@', '*', '\t', '\r']);
            let rest: String = lines[i].chars().skip(1).collect();
            lines[i] = format!("{c}{rest}");
        }
        5 if n > 0 => {
            let i = rng.below(n);
            let chars: Vec<char> = lines[i].chars().collect();
            let at = rng.below(chars.len() + 1);
            let c = *rng.pick(INTERESTING_CHARS);
            lines[i] = chars[..at].iter().chain(std::iter::once(&c)).chain(&chars[at..]).collect();
        }
        6 if n > 0 => {
            let i = rng.below(n);
            let keep = rng.below(lines[i].chars().count() + 1);
            lines[i] = lines[i].chars().take(keep).collect();
        }
        7 => {
            let other = rng.pick(others);
            if !other.is_empty() {
                let l = rng.pick(other).clone();
                lines.insert(rng.below(n + 1), l);
            }
        }
        _ if n > 0 => {
            // Truncate the patch, as a model that stopped early would.
            lines.truncate(rng.below(n + 1));
        }
        _ => {}
    }
}

#[test]
fn mutated_scenario_patches_never_panic() {
    let dir = conformance_dir().join("scenarios");
    let mut scenarios: Vec<(String, Tree)> = Vec::new();
    let mut names: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    for name in names {
        let sdir = dir.join(&name);
        let patch = std::fs::read_to_string(sdir.join("patch.txt")).unwrap();
        scenarios.push((patch, Tree::load(&sdir.join("input"))));
    }
    assert_eq!(scenarios.len(), 45);
    let split: Vec<Vec<String>> =
        scenarios.iter().map(|(p, _)| p.lines().map(str::to_string).collect()).collect();

    let mut rng = Rng::seeded(0x9e37_79b9_7f4a_7c15);
    let mut total = 0;
    let mut reached = [0usize; 3];
    for round in 0..450 {
        for (i, (_, tree)) in scenarios.iter().enumerate() {
            let mut lines = split[i].clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut rng, &mut lines, &split);
            }
            let eol = if rng.below(5) == 0 { "\r\n" } else { "\n" };
            let mut text = lines.join(eol);
            if rng.below(2) == 0 {
                text.push_str(eol);
            }
            no_panic(&format!("round {round}, scenario {i}"), &text, || {
                reached[fuzz_tree::run(&text) as usize] += 1;
                let _ = run(tree, &text);
            });
            total += 1;
        }
    }
    let [parse_errors, plan_errors, planned] = reached;
    println!(
        "ran {total} mutated patches: {parse_errors} parse errors, {plan_errors} plan errors, \
         {planned} planned"
    );
    assert!(total >= 20_000);
    // The mutations must reach the planner often enough to mean something.
    assert!(planned * 10 > total && plan_errors * 10 > total, "{reached:?}");
}
