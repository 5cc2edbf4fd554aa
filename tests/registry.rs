//! The transport registry is the one list everything reads: every transport file is
//! registered, names are unique and match their files, and the README documents each one.

use std::collections::BTreeSet;
use std::path::Path;

use rtsoak::transport::{REGISTRY, names};

/// Files in src/transport/ that are machinery, not transports.
const NOT_TRANSPORTS: [&str; 9] = [
    "fd_wait.rs",
    "mechanism.rs",
    "mod.rs",
    "probe.rs",
    "registry.rs",
    "ring.rs",
    "sender.rs",
    "settings.rs",
    "targets.rs",
];

#[test]
fn every_transport_file_is_registered_under_its_own_name() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/transport");
    let files: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".rs") && !NOT_TRANSPORTS.contains(&f.as_str()))
        .collect();
    let registered: BTreeSet<String> = names()
        .iter()
        .map(|n| format!("{}.rs", n.replace('-', "_")))
        .collect();
    assert_eq!(
        files, registered,
        "one file per transport, one registry line per file"
    );
}

#[test]
fn transport_names_are_unique_kebab_case() {
    let all = names();
    let unique: BTreeSet<&str> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len());
    for name in all {
        assert!(
            name.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
            "{name}"
        );
    }
}

#[test]
fn the_readme_transport_table_lists_every_transport() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for transport in REGISTRY {
        let row = format!("| `{}` |", transport.name());
        assert!(
            readme.contains(&row),
            "README.md has no transport table row {row}"
        );
        assert!(!transport.about().is_empty() && !transport.needs().is_empty());
    }
}
