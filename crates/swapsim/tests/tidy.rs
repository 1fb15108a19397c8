//! Keeps ARCHITECTURE.md's checkable claims true, and the house in order: every source
//! file opens with a module doc, stays under the length limit (or is a named exception),
//! and is named in the code map under its crate; the event flow lists exactly the
//! engine's events.
//!
//! A source file is a `.rs` file under a crate's `src/` (the Python binding's `python/src/`
//! included) or under `benches/`; test files (`tests.rs`, `*_tests.rs`, `test_support.rs`,
//! `testutil.rs` and anything in a `tests` folder) are left out, as the map leaves them out.

use std::path::{Path, PathBuf};

/// The longest a source file may be, in lines.
const MAX_LINES: usize = 700;

/// Source files allowed past [`MAX_LINES`], each with the reason ARCHITECTURE.md gives.
/// Each must still be over the limit, so that the list cannot go stale.
const LONG_FILES: &[&str] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the workspace root exists")
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md is readable")
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || name == "test_support.rs"
        || name == "testutil.rs"
        || path.components().any(|c| c.as_os_str() == "tests")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> =
        std::fs::read_dir(dir).expect("a readable folder").map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every source file, as (crate folder relative to the root, path inside its `src/`).
fn source_files() -> Vec<(String, PathBuf)> {
    let root = root();
    let mut out = Vec::new();
    let mut crates: Vec<_> = std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("an entry").path())
        .collect();
    crates.sort();
    for krate in crates {
        let src = krate.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let name =
            format!("crates/{}", krate.file_name().and_then(|n| n.to_str()).expect("a crate folder name"));
        for file in files.into_iter().filter(|f| !is_test_file(f)) {
            out.push((name.clone(), file.strip_prefix(&src).expect("under src").to_path_buf()));
        }
    }
    let outside = root.join("examples/outside-policy/src");
    let mut files = Vec::new();
    rust_files(&outside, &mut files);
    for file in files {
        out.push((
            "examples/outside-policy".to_string(),
            file.strip_prefix(&outside).expect("under src").to_path_buf(),
        ));
    }
    // The Python binding's Rust, outside the workspace but held to the same rules.
    let mut files = Vec::new();
    rust_files(&root.join("python/src"), &mut files);
    for file in files.into_iter().filter(|f| !is_test_file(f)) {
        out.push((
            "python".to_string(),
            file.strip_prefix(root.join("python/src")).expect("under src").to_path_buf(),
        ));
    }
    for dir in ["src", "benches", "examples"] {
        let mut files = Vec::new();
        rust_files(&root.join("benches").join(dir), &mut files);
        for file in files.into_iter().filter(|f| !is_test_file(f)) {
            out.push((
                "benches".to_string(),
                file.strip_prefix(root.join("benches")).expect("under benches").to_path_buf(),
            ));
        }
    }
    out
}

fn full_path(krate: &str, file: &Path) -> PathBuf {
    let base = if krate == "benches" { root().join("benches") } else { root().join(krate).join("src") };
    base.join(file)
}

/// The text of ARCHITECTURE.md's code-map section for `krate` (its `### `crates/...``
/// heading up to the next heading of that level or above).
fn map_section(doc: &str, krate: &str) -> String {
    let heading = format!("### `{krate}`");
    let start = doc.find(&heading).unwrap_or_else(|| panic!("ARCHITECTURE.md has no section {heading}"));
    let rest = &doc[start + heading.len()..];
    let end = [rest.find("\n### "), rest.find("\n## ")].into_iter().flatten().min().unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn every_source_file_opens_with_a_module_doc() {
    let missing: Vec<String> = source_files()
        .into_iter()
        .filter(|(krate, file)| {
            let text = std::fs::read_to_string(full_path(krate, file)).expect("readable");
            !text.starts_with("//!")
        })
        .map(|(krate, file)| format!("{krate}/{}", file.display()))
        .collect();
    assert!(missing.is_empty(), "source files without a `//!` module doc: {missing:?}");
}

#[test]
fn source_files_stay_under_the_length_limit() {
    let mut long = Vec::new();
    for (krate, file) in source_files() {
        let lines = std::fs::read_to_string(full_path(&krate, &file)).expect("readable").lines().count();
        let name = format!("{krate}/{}", file.display());
        if lines > MAX_LINES && !LONG_FILES.contains(&name.as_str()) {
            long.push(format!("{name} ({lines} lines)"));
        }
        if lines <= MAX_LINES && LONG_FILES.contains(&name.as_str()) {
            long.push(format!(
                "{name} is a named exception but has only {lines} lines: drop it from LONG_FILES"
            ));
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines (split along the kernel's seams): {long:?}");
    let doc = architecture();
    assert!(
        doc.contains(&format!("longer than {MAX_LINES} lines")),
        "ARCHITECTURE.md states the length limit ({MAX_LINES} lines)"
    );
}

#[test]
fn the_code_map_names_every_source_file() {
    let doc = architecture();
    let mut unnamed = Vec::new();
    for (krate, file) in source_files() {
        let section = map_section(&doc, &krate);
        // A module folder's `mod.rs` is named by its folder; `lib.rs` and `main.rs` by the
        // crate's section itself.
        let name = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "main.rs")
                if file.parent().is_none_or(|p| p.as_os_str().is_empty() || p == Path::new("src")) =>
            {
                continue
            }
            Some("mod.rs") => format!("{}/", file.parent().expect("a folder").display()),
            _ => file.display().to_string(),
        };
        if !section.contains(&format!("`{name}`")) {
            unnamed.push(format!("{krate}: `{name}`"));
        }
    }
    assert!(unnamed.is_empty(), "files the code map of ARCHITECTURE.md does not name: {unnamed:?}");
}

/// The variant names of the engine's `Event` enum, read from its source.
fn event_variants() -> Vec<String> {
    let text = std::fs::read_to_string(root().join("crates/sim-core/src/event.rs")).expect("event.rs");
    let body = &text[text.find("pub(crate) enum Event {").expect("the Event enum")..];
    let body = &body[..body.find("\n}").expect("its end")];
    body.lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.is_empty())
        .map(|l| l.split(['(', ',', ' ']).next().expect("a variant").to_string())
        .collect()
}

#[test]
fn the_event_flow_lists_every_event() {
    let doc = architecture();
    let start = doc.find("## The event flow").expect("ARCHITECTURE.md has an event flow section");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    let listed: Vec<String> = section
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .map(|l| l.split(['(', '`']).next().expect("a name").to_string())
        .collect();
    assert_eq!(listed, event_variants(), "the event flow lists the engine's events, in their order");
}
