use super::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

#[test]
fn a_write_replaces_a_planted_symlink_and_never_touches_its_target() {
    let base = tempfile::tempdir().unwrap();
    let target = base.path().join("target");
    std::fs::write(&target, "untouched").unwrap();
    let dir = base.path().join("results");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&target, dir.join("result.json")).unwrap();
    let safe = SafeDir::open(&dir).unwrap();
    safe.write(OsStr::new("result.json"), b"{}", 0o644).unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
    let written = std::fs::symlink_metadata(dir.join("result.json")).unwrap();
    assert!(written.is_file());
    assert_eq!(written.mode() & 0o777, 0o644);
    assert_eq!(std::fs::read(dir.join("result.json")).unwrap(), b"{}");
}

#[test]
fn a_new_file_gets_its_mode_whatever_the_umask_and_no_temporary_is_left() {
    let base = tempfile::tempdir().unwrap();
    let safe = SafeDir::open(base.path()).unwrap();
    use nix::sys::stat::umask;
    let old = umask(Mode::empty());
    let log = safe.create_file(OsStr::new("external-noise.log"), 0o644);
    umask(old);
    drop(log.unwrap());
    let mode = std::fs::metadata(base.path().join("external-noise.log"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o644);
    assert_eq!(
        safe.entries().unwrap(),
        vec![OsString::from("external-noise.log")]
    );
}

#[test]
fn a_scratch_file_has_no_name() {
    let base = tempfile::tempdir().unwrap();
    let safe = SafeDir::open(base.path()).unwrap();
    let mut file = safe.tmpfile().unwrap();
    file.write_all(&[0; 4096]).unwrap();
    assert!(safe.entries().unwrap().is_empty());
}

#[test]
fn a_created_directory_is_0755_whatever_the_umask() {
    let base = tempfile::tempdir().unwrap();
    use nix::sys::stat::umask;
    let old = umask(Mode::from_bits_truncate(0o077));
    let created = SafeDir::create(&base.path().join("a/b"));
    umask(old);
    created.unwrap();
    for dir in ["a", "a/b"] {
        let mode = std::fs::metadata(base.path().join(dir)).unwrap().mode();
        assert_eq!(mode & 0o777, 0o755, "{dir}");
    }
}

#[test]
fn removing_a_tree_removes_a_symlink_inside_as_a_name_only() {
    let base = tempfile::tempdir().unwrap();
    let outside = base.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("keep"), "x").unwrap();
    let tree = base.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    std::fs::write(tree.join("sub/file"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
    SafeDir::open(base.path())
        .unwrap()
        .remove_tree(OsStr::new("tree"))
        .unwrap();
    assert!(!tree.exists());
    assert!(outside.join("keep").exists());
}

#[test]
fn as_root_a_symlinked_or_foreign_directory_is_refused_naming_why() {
    if !is_root() {
        rtsoak_testing::skip("refusals apply to root only: run the tests as root");
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let foreign = base.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    let error = SafeDir::open(&foreign).unwrap_err().to_string();
    assert!(error.contains("owned by uid 65534"), "{error}");
    let below = SafeDir::create(&foreign.join("x")).unwrap_err().to_string();
    assert!(below.contains("a directory above it"), "{below}");
    let link = base.path().join("link");
    std::os::unix::fs::symlink(base.path(), &link).unwrap();
    let error = SafeDir::open(&link).unwrap_err().to_string();
    assert!(error.contains("is a symlink"), "{error}");
    let open = base.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let error = SafeDir::create(&open.join("x")).unwrap_err().to_string();
    assert!(error.contains("writable by everyone"), "{error}");
    // Sticky, as /tmp: fine.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();
    SafeDir::create(&open.join("x")).unwrap();
}

#[test]
fn as_root_a_service_dir_may_sit_below_a_service_users_directory_but_must_be_roots() {
    if !is_root() {
        rtsoak_testing::skip("refusals apply to root only: run the tests as root");
        return;
    }
    // Debian's layout: /var/lib/prometheus belongs to `prometheus`, its node-exporter to root.
    let base = tempfile::tempdir().unwrap();
    let service = base.path().join("prometheus");
    let textfile = service.join("node-exporter");
    std::fs::create_dir_all(&textfile).unwrap();
    std::os::unix::fs::chown(&service, Some(65534), Some(65534)).unwrap();
    let error = SafeDir::open(&textfile).unwrap_err().to_string();
    assert!(error.contains("a directory above it"), "{error}");
    let dir = SafeDir::open_service_dir(&textfile).unwrap();
    dir.write(OsStr::new("rtsoak-nightly.prom"), b"x 1\n", 0o644)
        .unwrap();
    assert_eq!(
        std::fs::read(textfile.join("rtsoak-nightly.prom")).unwrap(),
        b"x 1\n"
    );
    // A name is one name: never a path resolved through a directory by path.
    let nested = dir.write(OsStr::new("sub/x.prom"), b"", 0o644).unwrap_err();
    assert_eq!(nested.kind(), std::io::ErrorKind::InvalidInput, "{nested}");
    // The directory itself stays root's.
    std::os::unix::fs::chown(&textfile, Some(65534), Some(65534)).unwrap();
    let error = SafeDir::open_service_dir(&textfile)
        .unwrap_err()
        .to_string();
    assert!(error.contains("owned by uid 65534"), "{error}");
}

#[test]
fn checking_a_place_to_create_creates_nothing_and_refuses_what_create_would() {
    let base = tempfile::tempdir().unwrap();
    SafeDir::check_creatable(&base.path().join("a/b/c")).unwrap();
    assert!(!base.path().join("a").exists(), "nothing was created");
    std::fs::write(base.path().join("file"), "").unwrap();
    assert!(SafeDir::check_creatable(&base.path().join("file/sub")).is_err());
    if !is_root() {
        rtsoak_testing::skip("another user's directory needs root to make");
        return;
    }
    let foreign = base.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    let error = SafeDir::check_creatable(&foreign.join("out")).unwrap_err();
    assert!(error.downcast_ref::<Untrusted>().is_some(), "{error:#}");
    assert!(!foreign.join("out").exists());
}
