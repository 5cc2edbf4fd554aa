//! The transport registry is the one list everything reads: every transport file is
//! registered, names are unique and match their files, and the README documents each one.

use std::collections::BTreeSet;
use std::path::Path;

use rtsoak_measure::transport::transport;
use rtsoak_record::transport::Name;

/// Every transport's id, in registry order.
fn names() -> Vec<&'static str> {
    Name::ids()
}

/// Files of the measure crate's `transport/` that are machinery, not transports.
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/rtsoak-measure/src/transport");
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

/// The README's transports table, made from the registry: a transport documents itself in its
/// own file, and the table follows.
fn transport_table() -> String {
    let mut table = String::from(
        "| name | wake side (timed) | wait side (subscriber's ring) | needs |\n| --- | --- | --- | --- |\n",
    );
    for &name in Name::ALL {
        let transport = transport(name);
        table.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            name,
            transport.wake_side(),
            transport.wait_side(),
            transport.requires()
        ));
    }
    table
}

#[test]
fn the_readme_transport_table_is_made_from_the_registry() {
    // RTSOAK_BLESS=1 writes the table (after adding a transport); otherwise it must match.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let begin = readme
        .find("<!-- transports:")
        .and_then(|at| readme[at..].find('\n').map(|end| at + end + 1))
        .expect("README.md has the transports table's opening marker");
    let end = begin
        + readme[begin..]
            .find("<!-- end of transports -->")
            .expect("README.md has the transports table's closing marker");
    let table = transport_table();
    if std::env::var_os("RTSOAK_BLESS").is_some() {
        let written = format!("{}{table}{}", &readme[..begin], &readme[end..]);
        std::fs::write(&path, written).unwrap();
        return;
    }
    assert_eq!(
        &readme[begin..end],
        table,
        "README.md's transports table is not the registry's: run RTSOAK_BLESS=1 cargo test --test registry"
    );
    for &name in Name::ALL {
        let transport = transport(name);
        assert!(!transport.about().is_empty() && !transport.needs().is_empty());
    }
}

#[test]
fn a_transport_name_is_only_ever_one_the_registry_has() {
    // A plan or spec holds `Name`s: reading one refuses a name this build lacks, by name.
    for id in names() {
        let name = Name::lookup(id).unwrap();
        let json = serde_json::to_string(&name).unwrap();
        assert_eq!(json, format!("\"{id}\""));
        assert_eq!(serde_json::from_str::<Name>(&json).unwrap(), name);
    }
    assert!(Name::lookup("futex-sycall").is_none());
    let error = serde_json::from_str::<Name>("\"futex-sycall\"").unwrap_err();
    assert!(
        error
            .to_string()
            .contains("unknown transport `futex-sycall`"),
        "{error}"
    );
}
