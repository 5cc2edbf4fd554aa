use super::*;

const LIMIT: u64 = 1 << 20;

fn problem(result: Result<Input, InputError>) -> Problem {
    result.expect_err("refused").problem
}

#[test]
fn a_regular_file_is_read_whole_and_a_directory_gives_the_file_named_in_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("result.json"), b"{}\n").unwrap();
    let input = read(&dir.path().join("result.json"), LIMIT).unwrap();
    assert_eq!(input.bytes, b"{}\n");
    assert_eq!(input.path, dir.path().join("result.json"));
    let inside = read_file_or_in_dir(dir.path(), Some(OsStr::new("result.json")), LIMIT).unwrap();
    assert_eq!(inside.bytes, b"{}\n");
    assert_eq!(inside.path, dir.path().join("result.json"));
    assert!(matches!(
        problem(read(dir.path(), LIMIT)),
        Problem::NotRegular("a directory")
    ));
    let missing = read_file_or_in_dir(dir.path(), Some(OsStr::new("other.json")), LIMIT);
    let error = missing.unwrap_err();
    assert_eq!(error.path, dir.path().join("other.json"));
    assert!(matches!(error.problem, Problem::Missing), "{error}");
}

#[test]
fn a_fifo_is_refused_at_once_without_being_opened_for_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("result.json");
    nix::unistd::mkfifo(&fifo, Mode::from_bits_truncate(0o644)).unwrap();
    // Nobody writes it: opening it for reading without O_NONBLOCK would block forever.
    let error = read(&fifo, LIMIT).unwrap_err();
    assert!(
        matches!(error.problem, Problem::NotRegular("a FIFO (named pipe)")),
        "{error}"
    );
    assert!(error.to_string().contains("not a regular file"), "{error}");
}

#[test]
fn a_device_is_refused_naming_what_it_is() {
    for (path, kind) in [
        ("/dev/zero", "a character device"),
        ("/dev/null", "a character device"),
    ] {
        assert!(
            matches!(problem(read(Path::new(path), LIMIT)), Problem::NotRegular(k) if k == kind),
            "{path}"
        );
    }
}

#[test]
fn a_file_over_the_limit_is_refused_whatever_its_size_says() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    // Sparse: its size says 1 GiB, and nothing of it is read.
    File::create(&big).unwrap().set_len(1 << 30).unwrap();
    let error = read(&big, LIMIT).unwrap_err();
    assert!(
        matches!(error.problem, Problem::TooLarge { limit_bytes } if limit_bytes == LIMIT),
        "{error}"
    );
    assert!(error.to_string().contains("1 MiB"), "{error}");
    // A file whose size says 0 but that holds more (a /proc file) is cut at the limit + 1.
    let error = read(Path::new("/proc/self/maps"), 16).unwrap_err();
    assert!(matches!(error.problem, Problem::TooLarge { .. }), "{error}");
    let exact = dir.path().join("exact");
    std::fs::write(&exact, [b'x'; 16]).unwrap();
    assert_eq!(read(&exact, 16).unwrap().bytes.len(), 16);
}

#[test]
fn symlinks_of_this_user_are_followed_relative_to_their_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("20260101T000000Z-run")).unwrap();
    std::fs::write(dir.path().join("20260101T000000Z-run/result.json"), b"1").unwrap();
    std::os::unix::fs::symlink("20260101T000000Z-run", dir.path().join("latest")).unwrap();
    let input = read_file_or_in_dir(
        &dir.path().join("latest"),
        Some(OsStr::new("result.json")),
        LIMIT,
    )
    .unwrap();
    assert_eq!(input.bytes, b"1");
    std::os::unix::fs::symlink("latest/result.json", dir.path().join("link")).unwrap();
    assert_eq!(read(&dir.path().join("link"), LIMIT).unwrap().bytes, b"1");
    std::os::unix::fs::symlink("loop", dir.path().join("loop")).unwrap();
    assert!(matches!(
        problem(read(&dir.path().join("loop"), LIMIT)),
        Problem::TooManySymlinks
    ));
    let through_file = dir.path().join("20260101T000000Z-run/result.json/x");
    assert!(matches!(
        problem(read(&through_file, LIMIT)),
        Problem::Sys(SysError {
            errno: Errno::ENOTDIR,
            ..
        })
    ));
}

#[test]
fn as_root_a_file_with_other_names_is_read_only_from_a_directory_no_other_user_may_write() {
    use std::os::unix::fs::PermissionsExt;
    if euid() != 0 {
        rtsoak_testing::skip("reading as root needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let private = dir.path().join("private");
    let shared = dir.path().join("shared");
    std::fs::create_dir(&private).unwrap();
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    std::fs::write(private.join("secret"), b"root's").unwrap();
    // What another user could plant in a sticky, world-writable directory such as /tmp.
    std::fs::hard_link(private.join("secret"), shared.join("profile.toml")).unwrap();
    let error = read(&shared.join("profile.toml"), LIMIT).unwrap_err();
    assert!(
        matches!(&error.problem, Problem::ForeignHardLink { links: 2, dir } if *dir == shared),
        "{error}"
    );
    // The same file by its name in root's own directory, and a file of one name anywhere.
    assert_eq!(
        read(&private.join("secret"), LIMIT).unwrap().bytes,
        b"root's"
    );
    std::fs::write(shared.join("own.toml"), b"mine").unwrap();
    assert_eq!(
        read(&shared.join("own.toml"), LIMIT).unwrap().bytes,
        b"mine"
    );
}

#[test]
fn as_root_a_symlink_another_user_owns_is_never_followed() {
    if euid() != 0 {
        rtsoak_testing::skip("lchown to another user needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret"), b"root's").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/result.json"), b"{}").unwrap();
    for (link, target) in [("file", "secret"), ("dir", "sub")] {
        let path = dir.path().join(link);
        std::os::unix::fs::symlink(target, &path).unwrap();
        std::os::unix::fs::lchown(&path, Some(65534), Some(65534)).unwrap();
    }
    let error = read(&dir.path().join("file"), LIMIT).unwrap_err();
    assert!(
        matches!(&error.problem, Problem::ForeignSymlink { uid: 65534, link } if link.ends_with("file")),
        "{error}"
    );
    // On the way to the file, not only as its last component.
    let error = read(&dir.path().join("dir/result.json"), LIMIT).unwrap_err();
    assert!(
        matches!(error.problem, Problem::ForeignSymlink { .. }),
        "{error}"
    );
    // Root's own symlink is followed.
    std::os::unix::fs::lchown(dir.path().join("file"), Some(0), Some(0)).unwrap();
    assert_eq!(
        read(&dir.path().join("file"), LIMIT).unwrap().bytes,
        b"root's"
    );
}
