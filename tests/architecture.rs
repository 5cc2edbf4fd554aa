//! The architecture the code must keep, checked on its sources (docs/architecture.md draws it):
//!
//! - no import cycle among the top-level modules of the main crate;
//! - `record`, the floor of shared records, imports nothing of rtsoak's, and the kernel-layer
//!   crate `rtsoak-sys` depends on nothing of rtsoak's;
//! - results, judging and exports read the machine through the records (`record::HostFacts`,
//!   `record::SystemCheck`), never through `sysinfo` or `preflight`, which produce them;
//! - the loop side (every file of `worker/` and of the worker side of the noise, `noise/`)
//!   imports no result, judging, export or coordinator code, and the result side (`result/`,
//!   `judge/`, `export/`) imports no loop, transport, coordinator, noise or launch code;
//! - no import cycle among the files of any module directory, its `mod.rs` included;
//! - `unsafe` appears only in `rtsoak-sys` and `src/transport/`, and every other top-level
//!   module forbids it, so the compiler keeps it that way;
//! - every transport file is in the registry, so adding a transport is one file plus one line.
//!
//! Test code (`#[cfg(test)] mod tests`, `*_tests.rs`, `src/testing/`) is left out: tests may
//! reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The source with comments and string and char literals blanked out, so that only code is
/// searched.
fn code_only(source: &str) -> String {
    let bytes: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < bytes.len() && bytes[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            i += 2;
            while i + 1 < bytes.len() && !(bytes[i] == '*' && bytes[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && raw_string_at(&bytes, i) {
            let mut hashes = 0;
            i += 1;
            while bytes[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            loop {
                if bytes[i] == '"' && (0..hashes).all(|h| bytes.get(i + 1 + h) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push_str("\"\"");
        } else if c == '"' {
            i += 1;
            while i < bytes.len() && bytes[i] != '"' {
                i += if bytes[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && is_char_literal(&bytes, i) {
            i += 1;
            while bytes[i] != '\'' {
                i += if bytes[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("' '");
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn raw_string_at(chars: &[char], i: usize) -> bool {
    let before_is_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let mut j = i + 1;
    while chars.get(j) == Some(&'#') {
        j += 1;
    }
    !before_is_ident && chars.get(j) == Some(&'"')
}

/// `'x'` or `'\n'` (not a lifetime such as `'a` or `'static`).
fn is_char_literal(chars: &[char], i: usize) -> bool {
    matches!(
        (chars.get(i + 1), chars.get(i + 2)),
        (Some('\\'), _) | (Some(_), Some('\''))
    )
}

/// What of a file is product code: up to its `#[cfg(test)] mod`, none for test-only files.
fn product_code(path: &Path) -> Option<String> {
    let text = path.to_string_lossy();
    if text.ends_with("_tests.rs") || text.contains("/src/testing/") {
        return None;
    }
    let source = fs::read_to_string(path).unwrap();
    let code = code_only(&source);
    let end = code
        .match_indices("#[cfg(test)]")
        .find(|(at, _)| code[at + 12..].trim_start().starts_with("mod "))
        .map_or(code.len(), |(at, _)| at);
    Some(code[..end].to_string())
}

/// The top-level module a file of `src/` belongs to (`worker` for `src/worker/publisher.rs`),
/// `None` for the crate roots.
fn top_module(src: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    (name != "lib" && name != "main").then_some(name)
}

/// Every top-level module a piece of code names through `crate::` (in paths and `use` groups).
fn named_modules(code: &str) -> BTreeSet<String> {
    names_after(code, "crate::")
}

/// Every name that follows `prefix` in a piece of code (in paths and `use` groups).
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices(prefix) {
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue; // `mycrate::`, or `a::super::` inside a longer path
        }
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let close = matching_brace(group);
            for item in split_top_level(&group[..close]) {
                let head = ident_prefix(item.trim());
                if !head.is_empty() && head != "self" {
                    names.insert(head.to_string());
                }
            }
        } else {
            let head = ident_prefix(rest);
            if !head.is_empty() {
                names.insert(head.to_string());
            }
        }
    }
    names
}

fn ident_prefix(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Index of the `}` closing a group whose `{` came just before `text`.
fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

/// The items of a `use` group, split at commas outside nested groups.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&text[start..]);
    items
}

/// The main crate's top-level module graph: module → modules it names, and through which
/// files.
fn module_graph() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(ROOT).join("src");
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for path in rust_files(&src) {
        let (Some(module), Some(code)) = (top_module(&src, &path), product_code(&path)) else {
            continue;
        };
        let edges = graph.entry(module.clone()).or_default();
        for named in named_modules(&code) {
            if named != module {
                let file = path.strip_prefix(ROOT).unwrap().display().to_string();
                edges.entry(named).or_default().insert(file);
            }
        }
    }
    graph
}

/// A cycle in `graph`, as the path of modules around it, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
        done: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flat_map(|edges| edges.keys()) {
            if let Some(cycle) = visit(next, graph, done, path) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut done, &mut Vec::new()))
}

#[test]
fn the_top_level_modules_import_each_other_one_way() {
    let graph = module_graph();
    assert!(
        graph.len() > 15,
        "the module scan found too little: {graph:?}"
    );
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|pair| {
                let files = &graph[&pair[0]][&pair[1]];
                format!(
                    "{} -> {} ({})",
                    pair[0],
                    pair[1],
                    files.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        panic!(
            "import cycle among the top-level modules:\n{}",
            steps.join("\n")
        );
    }
}

/// Every module directory under `dir` (one with a `mod.rs`), itself included, sorted.
fn module_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("mod.rs").exists() && !dir.ends_with("testing") {
            dirs.push(dir.clone());
        }
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    dirs.sort();
    dirs
}

/// The names a `mod.rs` re-exports and the child each comes from (`pub use child::{A, b};`).
fn reexports(mod_code: &str, children: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut from = BTreeMap::new();
    for child in children {
        for prefix in [
            format!("pub use {child}::"),
            format!("pub use self::{child}::"),
        ] {
            for (at, _) in mod_code.match_indices(&prefix) {
                let rest = &mod_code[at + prefix.len()..];
                let items = match rest.strip_prefix('{') {
                    Some(group) => split_top_level(&group[..matching_brace(group)]),
                    None => vec![&rest[..rest.find(';').unwrap_or(rest.len())]],
                };
                for item in items {
                    let item = item.trim();
                    let name = item.rsplit(" as ").next().unwrap_or(item).trim();
                    let name = ident_prefix(name.rsplit("::").next().unwrap_or(name));
                    if !name.is_empty() {
                        from.insert(name.to_string(), child.clone());
                    }
                }
            }
        }
    }
    from
}

/// `code` without its `pub use` lines, which re-export and so only register.
fn without_reexports(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("pub use ") {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        rest = &rest[rest.find(';').map_or(rest.len(), |end| end + 1)..];
    }
    out.push_str(rest);
    out
}

/// True if `code` names `name::` as the head of a path (not `other::name::`).
fn names_path_head(code: &str, name: &str) -> bool {
    let needle = format!("{name}::");
    code.match_indices(&needle).any(|(at, _)| {
        at == 0 || !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

/// The files of one module directory (`src/profile/`) and which of their siblings each names
/// (through `super::` or `crate::<module path>::`). The directory's `mod.rs` is a node too
/// (`mod`): a child naming an item defined there points at it, and it points at every child it
/// names in code (`child::f()`, `use child::X`, `pub use child::X`); a name `mod.rs` merely
/// re-exports points at the child it comes from. So a `mod.rs` that both re-exports its
/// children and holds helpers they use is a cycle.
fn sibling_graph(src: &Path, dir: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let module_path = dir
        .strip_prefix(src)
        .unwrap()
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect::<Vec<_>>()
        .join("::");
    let mut siblings = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.is_dir() && path.join("mod.rs").exists() {
            siblings.insert(stem, path.join("mod.rs"));
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "mod" {
            siblings.insert(stem, path);
        }
    }
    let children: BTreeSet<String> = siblings.keys().cloned().collect();
    let mod_code = product_code(&dir.join("mod.rs")).unwrap_or_default();
    let reexported = reexports(&mod_code, &children);
    let mut graph: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mod_file = dir.join("mod.rs").display().to_string();
    let mod_edges = graph.entry("mod".to_string()).or_default();
    let mod_uses = without_reexports(&mod_code);
    for child in &children {
        if names_path_head(&mod_uses, child) {
            mod_edges
                .entry(child.clone())
                .or_default()
                .insert(mod_file.clone());
        }
    }
    for (name, path) in &siblings {
        let Some(code) = product_code(path) else {
            continue;
        };
        let mut named = names_after(&code, "super::");
        named.extend(names_after(&code, &format!("crate::{module_path}::")));
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for n in named.into_iter().filter(|n| n != "super") {
            let target = if children.contains(&n) {
                n
            } else if let Some(child) = reexported.get(&n) {
                child.clone()
            } else {
                "mod".to_string()
            };
            if &target != name {
                edges
                    .entry(target)
                    .or_default()
                    .insert(path.display().to_string());
            }
        }
        graph.insert(name.clone(), edges);
    }
    graph
}

#[test]
fn the_files_of_each_module_import_each_other_one_way() {
    let src = Path::new(ROOT).join("src");
    let dirs = module_dirs(&src);
    let mut cycles = Vec::new();
    for dir in &dirs {
        let name = dir.strip_prefix(&src).unwrap().display().to_string();
        let graph = sibling_graph(&src, dir);
        if let Some(cycle) = find_cycle(&graph) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|pair| {
                    let files: Vec<_> = graph[&pair[0]][&pair[1]].iter().cloned().collect();
                    format!("{} -> {} ({})", pair[0], pair[1], files.join(", "))
                })
                .collect();
            cycles.push(format!(
                "import cycle inside src/{name}:\n  {}",
                steps.join("\n  ")
            ));
        }
    }
    assert!(
        dirs.len() > 15,
        "only {} module directories found",
        dirs.len()
    );
    assert!(
        cycles.is_empty(),
        "{}\n(a mod.rs is a registry of its files or a library they use, not both: move its \
         helpers into a file of their own)",
        cycles.join("\n")
    );
}

#[test]
fn the_scanner_sees_a_cycle_and_skips_comments_and_strings() {
    let code =
        code_only("use crate::{a, b::{c, d}};\n// crate::e\nlet s = \"crate::f\"; crate::g::h();");
    let names: Vec<String> = named_modules(&code).into_iter().collect();
    assert_eq!(names, ["a", "b", "g"]);
    let mut graph = BTreeMap::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a")] {
        graph
            .entry(from.to_string())
            .or_insert_with(BTreeMap::new)
            .insert(to.to_string(), BTreeSet::new());
    }
    assert_eq!(find_cycle(&graph).unwrap().len(), 4);
}

#[test]
fn the_floor_of_records_imports_nothing_of_rtsoaks() {
    let graph = module_graph();
    let record = graph.get("record").expect("src/record exists");
    assert!(record.is_empty(), "record imports {record:?}");
}

#[test]
fn results_judging_and_exports_read_the_machine_only_through_records() {
    let src = Path::new(ROOT).join("src");
    let mut checked = 0;
    for dir in ["result", "judge", "export"] {
        for path in rust_files(&src.join(dir)) {
            let Some(code) = product_code(&path) else {
                continue;
            };
            checked += 1;
            let named = named_modules(&code);
            for forbidden in ["sysinfo", "preflight"] {
                assert!(
                    !named.contains(forbidden),
                    "{} imports {forbidden}: take the record it produces from `record` instead",
                    path.display()
                );
            }
        }
    }
    assert!(checked > 20, "only {checked} files checked");
}

#[test]
fn the_transports_see_only_their_env_not_the_spec_or_the_plan() {
    // The plan and the spec hold the transports' names and settings, so a transport importing
    // either would close a cycle; what a transport may know of its worker is `transport::Env`.
    let src = Path::new(ROOT).join("src");
    let mut checked = 0;
    for path in rust_files(&src.join("transport")) {
        let Some(code) = product_code(&path) else {
            continue;
        };
        checked += 1;
        let named = named_modules(&code);
        for forbidden in [
            "protocol",
            "plan",
            "profile",
            "launch",
            "worker",
            "coordinator",
        ] {
            assert!(
                !named.contains(forbidden),
                "{} imports {forbidden}: a transport reads its worker only through `Env`",
                path.display()
            );
        }
    }
    assert!(checked > 10, "only {checked} files checked");
}

#[test]
fn no_product_function_is_let_off_the_length_limit() {
    // Clippy refuses a product function over 100 lines (clippy.toml, src/lib.rs); an `allow`
    // would let one through unseen.
    let src = Path::new(ROOT).join("src");
    for path in rust_files(&src) {
        let Some(code) = product_code(&path) else {
            continue;
        };
        assert!(
            !code.contains("allow(clippy::too_many_lines")
                && !code.contains("clippy::too_many_lines,"),
            "{} lets a function off clippy::too_many_lines: split it into named steps",
            path.display()
        );
    }
}

#[test]
fn the_kernel_layer_crate_depends_on_nothing_of_rtsoaks() {
    let sys = Path::new(ROOT).join("crates/rtsoak-sys");
    let manifest = fs::read_to_string(sys.join("Cargo.toml")).unwrap();
    let dependencies = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] table");
    let dependencies = dependencies.split("\n[").next().unwrap();
    assert!(
        !dependencies.contains("rtsoak"),
        "rtsoak-sys must not depend on an rtsoak crate:\n{dependencies}"
    );
    for path in rust_files(&sys.join("src")) {
        let code = code_only(&fs::read_to_string(&path).unwrap());
        assert!(
            !code.contains("rtsoak::"),
            "{} names rtsoak",
            path.display()
        );
    }
}

/// The product files under each of `dirs` (relative to `src/`), with the top-level modules each
/// names.
fn files_naming(src: &Path, dirs: &[&str]) -> Vec<(PathBuf, BTreeSet<String>)> {
    dirs.iter()
        .flat_map(|dir| rust_files(&src.join(dir)))
        .filter_map(|path| {
            let code = product_code(&path)?;
            Some((path, named_modules(&code)))
        })
        .collect()
}

#[test]
fn the_loops_import_no_result_and_results_no_loop() {
    let src = Path::new(ROOT).join("src");
    // The loop side: the worker (every file, its mod.rs too) and the worker side of the noise.
    let loops = files_naming(&src, &["worker", "noise"]);
    assert!(loops.len() >= 15, "only {} loop files found", loops.len());
    for (path, named) in &loops {
        for forbidden in ["result", "judge", "export", "coordinator"] {
            assert!(
                !named.contains(forbidden),
                "the loop-side file {} imports {forbidden}",
                path.display()
            );
        }
    }
    // The result side: the document, its judging and every rendering of it.
    let results = files_naming(&src, &["result", "judge", "export"]);
    assert!(
        results.len() >= 40,
        "only {} result files found",
        results.len()
    );
    for (path, named) in &results {
        for forbidden in ["worker", "transport", "coordinator", "noise", "launch"] {
            assert!(
                !named.contains(forbidden),
                "the result-side file {} imports {forbidden}",
                path.display()
            );
        }
    }
}

#[test]
fn unsafe_is_only_in_the_kernel_layer_and_the_transports() {
    let src = Path::new(ROOT).join("src");
    for path in rust_files(&src) {
        if path.starts_with(src.join("transport")) {
            continue;
        }
        let code = code_only(&fs::read_to_string(&path).unwrap());
        let code = code.replace("unsafe_code", "");
        assert!(
            !code
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == "unsafe"),
            "{} has unsafe code: move it into crates/rtsoak-sys behind a safe function",
            path.display()
        );
    }
    // The compiler enforces it: each top-level module but the transports forbids unsafe code.
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    assert!(lib.contains("#![deny(unsafe_code)]"));
    let main = fs::read_to_string(src.join("main.rs")).unwrap();
    assert!(main.contains("#![forbid(unsafe_code)]"));
    for line in lib.lines() {
        let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
        else {
            continue;
        };
        let file = [
            src.join(format!("{name}.rs")),
            src.join(name).join("mod.rs"),
        ]
        .into_iter()
        .find(|f| f.exists())
        .unwrap();
        let text = fs::read_to_string(&file).unwrap();
        if name == "transport" {
            assert!(text.contains("#![allow(unsafe_code)]"));
        } else {
            assert!(
                text.contains("#![forbid(unsafe_code)]"),
                "{} does not forbid unsafe code",
                file.display()
            );
        }
    }
}

#[test]
fn every_transport_file_is_in_the_registry() {
    let dir = Path::new(ROOT).join("src/transport");
    let registry_source = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let call = registry_source
        .split("\nregistry![")
        .nth(1)
        .expect("a registry![...] call in src/transport/mod.rs");
    let call = &call[..call.find("];").unwrap()];
    let registered: BTreeSet<String> = call
        .split(',')
        .map(|entry| entry.trim().to_string())
        .filter(|entry| !entry.is_empty())
        .collect();
    let mut found = BTreeSet::new();
    for path in rust_files(&dir) {
        let code = code_only(&fs::read_to_string(&path).unwrap());
        let module = path.file_stem().unwrap().to_string_lossy().to_string();
        for (at, _) in code.match_indices("impl Transport for ") {
            let name = ident_prefix(&code[at + "impl Transport for ".len()..]);
            found.insert(format!("{module}::{name}"));
        }
        for (at, _) in code.match_indices("impl Mechanism for ") {
            let name = ident_prefix(&code[at + "impl Mechanism for ".len()..]);
            assert!(
                found.contains(&format!("{module}::{name}")),
                "{module}::{name} is a Mechanism but not a Transport"
            );
        }
    }
    assert!(found.len() >= 8, "found only {found:?}");
    // The registry line declares the module too: a transport is one file and one line.
    let mod_lines: BTreeSet<String> = code_only(&registry_source)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    for entry in &registered {
        let module = entry.split("::").next().unwrap();
        assert!(
            !mod_lines.contains(module),
            "src/transport/mod.rs declares `mod {module};`: the registry![...] line does that"
        );
    }
    assert_eq!(
        found, registered,
        "every `impl Transport` must be one line of registry![...] in src/transport/mod.rs"
    );
}

#[test]
fn every_bench_file_is_in_the_registry() {
    // As with transports: a bench is one file plus one registry![...] line, which declares its
    // module, and the sub-commands, help and dispatch all read that table.
    let dir = Path::new(ROOT).join("src/bench");
    let registry_source = fs::read_to_string(dir.join("mod.rs")).unwrap();
    let call = registry_source
        .split("\nregistry![")
        .nth(1)
        .expect("a registry![...] call in src/bench/mod.rs");
    let call = &call[..call.find("];").unwrap()];
    let registered: BTreeSet<String> = call
        .split(',')
        .map(|entry| entry.trim().to_string())
        .filter(|entry| !entry.is_empty())
        .collect();
    let mut found = BTreeSet::new();
    for path in rust_files(&dir) {
        let code = code_only(&fs::read_to_string(&path).unwrap());
        let module = path.file_stem().unwrap().to_string_lossy().to_string();
        for (at, _) in code.match_indices("impl Bench for ") {
            let name = ident_prefix(&code[at + "impl Bench for ".len()..]);
            found.insert(format!("{module}::{name}"));
        }
    }
    assert!(found.len() >= 5, "found only {found:?}");
    let mod_lines: BTreeSet<String> = code_only(&registry_source)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("mod ")?.strip_suffix(';'))
        .map(str::to_string)
        .collect();
    for entry in &registered {
        let module = entry.split("::").next().unwrap();
        assert!(
            !mod_lines.contains(module),
            "src/bench/mod.rs declares `mod {module};`: the registry![...] line does that"
        );
    }
    assert_eq!(
        found, registered,
        "every `impl Bench` must be one line of registry![...] in src/bench/mod.rs"
    );
}

/// The identifiers in `code`, with how often each occurs.
fn identifier_counts(code: &str) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for word in code.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if word.starts_with(|c: char| c.is_alphabetic() || c == '_') {
            *counts.entry(word).or_insert(0) += 1;
        }
    }
    counts
}

#[test]
fn the_registries_mod_rs_files_hold_only_their_registry() {
    // A mod.rs that is a registry holds the registry and its lookups; what the files it
    // registers share is in a file of its own (else those files import their own registry).
    for (file, allowed) in [
        (
            "src/transport/mod.rs",
            &["by_name", "about", "names", "support_matrix", "visit"][..],
        ),
        ("src/export/mod.rs", &["by_name", "names"][..]),
        ("src/bench/mod.rs", &["by_name"][..]),
    ] {
        let code = product_code(&Path::new(ROOT).join(file)).unwrap();
        for (at, _) in code.match_indices("fn ") {
            let before = code[..at].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let name = ident_prefix(&code[at + 3..]);
            assert!(
                allowed.contains(&name),
                "{file} defines `{name}`: a registry's mod.rs holds only the registry and its \
                 lookups ({allowed:?}); move `{name}` into a file of its own"
            );
        }
        for item in ["trait ", "const ", "struct ", "enum "] {
            let found = code
                .match_indices(item)
                .filter(|(at, _)| {
                    let before = code[..*at].chars().last();
                    !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
                .map(|(at, _)| ident_prefix(&code[at + item.len()..]).to_string())
                .filter(|name| name != "Format" && name != "FORMATS")
                .collect::<Vec<_>>();
            assert!(
                found.is_empty(),
                "{file} defines {item}{found:?}: a registry's mod.rs holds only the registry"
            );
        }
    }
}

#[test]
fn every_public_function_is_called_somewhere() {
    // A public function nobody calls is dead code the compiler cannot see (the library's
    // items are all reachable from outside): it is named once, where it is defined. Calls from
    // the tests, fuzz targets and examples count.
    let mut dirs = vec![
        Path::new(ROOT).join("src"),
        Path::new(ROOT).join("tests"),
        Path::new(ROOT).join("fuzz"),
        Path::new(ROOT).join("examples"),
    ];
    for entry in fs::read_dir(Path::new(ROOT).join("crates")).unwrap() {
        dirs.push(entry.unwrap().path());
    }
    let mut product = Vec::new();
    let mut everything = String::new();
    for dir in dirs.iter().filter(|d| d.exists()) {
        for path in rust_files(dir) {
            let code = code_only(&fs::read_to_string(&path).unwrap());
            everything.push_str(&code);
            everything.push('\n');
            let is_product = path.starts_with(Path::new(ROOT).join("src"))
                || path.starts_with(Path::new(ROOT).join("crates"));
            if is_product && let Some(code) = product_code(&path) {
                product.push((path, code));
            }
        }
    }
    let counts = identifier_counts(&everything);
    let mut dead = Vec::new();
    for (path, code) in &product {
        for prefix in ["pub fn ", "pub(crate) fn "] {
            for (at, _) in code.match_indices(prefix) {
                let name = ident_prefix(&code[at + prefix.len()..]);
                if counts.get(name).copied().unwrap_or(0) < 2 {
                    dead.push(format!("{}: {name}", path.display()));
                }
            }
        }
    }
    assert!(dead.is_empty(), "public functions never called: {dead:#?}");
}
