use super::*;

const DAY: Duration = Duration::from_secs(86_400);

/// A result directory as rtsoak writes it.
fn result(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(
        dir.join(RESULT_FILE),
        r#"{"tool": {"name": "rtsoak", "version": "0"}}"#,
    )
    .unwrap();
    dir
}

fn names(parent: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn stamps_are_read_from_names_rtsoak_gives_and_nothing_else() {
    let at = stamp_of("20261130T120000Z-compare").unwrap();
    assert_eq!(
        humantime::format_rfc3339_seconds(at).to_string(),
        "2026-11-30T12:00:00Z"
    );
    assert!(stamp_of("20261130T120000Z-run").is_some());
    for name in [
        "latest",
        "baseline",
        "20261130T120000Z",
        "2026113T120000Z-run",
        "20261130T120000Z-Run",
        "x20261130T12000Z-run",
    ] {
        assert!(stamp_of(name).is_none(), "{name}");
    }
}

#[test]
fn keep_n_leaves_the_newest_n_and_never_touches_other_files() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    for day in 1..=5 {
        result(p, &format!("2026110{day}T000000Z-compare"));
    }
    std::fs::create_dir(p.join("baseline")).unwrap();
    std::fs::write(p.join("notes.txt"), "mine").unwrap();
    // Named like a result, but not written by rtsoak.
    std::fs::create_dir(p.join("20261101T000001Z-run")).unwrap();
    let current = p.join("20261105T000000Z-compare");
    let retention = Retention {
        keep: Some(2),
        keep_days: None,
    };
    let removed = prune(p, &current, &retention, SystemTime::now()).unwrap();
    assert_eq!(removed.len(), 3);
    assert_eq!(
        names(p),
        [
            "20261101T000001Z-run",
            "20261104T000000Z-compare",
            "20261105T000000Z-compare",
            "baseline",
            "notes.txt"
        ]
    );
}

#[test]
fn keep_days_removes_older_results_but_never_the_current_one() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    let old = result(p, "20261101T000000Z-run");
    let recent = result(p, "20261109T000000Z-run");
    let now = stamp_of("20261110T000000Z-run").unwrap();
    let retention = Retention {
        keep: None,
        keep_days: Some(7),
    };
    assert_eq!(prune(p, &recent, &retention, now).unwrap(), [old]);
    // Even a current result older than the limit stays.
    let later = now + 30 * DAY;
    assert!(prune(p, &recent, &retention, later).unwrap().is_empty());
    assert!(recent.exists());
}

#[test]
fn keep_days_too_large_to_count_in_seconds_keeps_everything() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    let yesterday = result(p, "20261109T000000Z-run");
    let current = result(p, "20261110T000000Z-run");
    let now = stamp_of("20261110T000000Z-run").unwrap();
    // u64::MAX days, or any count of days whose seconds pass 2^64: a product that wrapped
    // would be hours, and yesterday's result would go.
    for days in [u64::MAX, u64::MAX / 86_400 + 1, 1 << 60] {
        let retention = Retention {
            keep: None,
            keep_days: Some(days),
        };
        assert!(
            prune(p, &current, &retention, now).unwrap().is_empty(),
            "{days} days"
        );
    }
    assert!(yesterday.exists());
}

#[test]
fn latest_points_at_the_newest_and_is_replaced_not_duplicated() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    let first = result(p, "20261101T000000Z-run");
    update_latest(p, &first).unwrap();
    assert_eq!(
        std::fs::read_link(p.join(LATEST)).unwrap(),
        Path::new("20261101T000000Z-run")
    );
    let second = result(p, "20261102T000000Z-run");
    update_latest(p, &second).unwrap();
    assert_eq!(
        std::fs::read_link(p.join(LATEST)).unwrap(),
        Path::new("20261102T000000Z-run")
    );
    assert!(p.join(LATEST).join(RESULT_FILE).exists());
    assert_eq!(
        names(p),
        ["20261101T000000Z-run", "20261102T000000Z-run", "latest"]
    );
}

#[test]
fn a_real_latest_directory_is_never_replaced() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    std::fs::create_dir(p.join(LATEST)).unwrap();
    let first = result(p, "20261101T000000Z-run");
    let text = update_latest(p, &first).unwrap_err().to_string();
    assert!(text.contains("not a symlink"), "{text}");
    assert!(p.join(LATEST).is_dir());
}

#[test]
fn results_named_in_the_future_are_neither_counted_nor_removed() {
    let parent = tempfile::tempdir().unwrap();
    let p = parent.path();
    let older = result(p, "20261108T000000Z-run");
    let current = result(p, "20261109T000000Z-run");
    for year in 2097..=2099 {
        result(p, &format!("{year}0101T000000Z-run"));
    }
    let now = stamp_of("20261109T000100Z-run").unwrap();
    let retention = Retention {
        keep: Some(2),
        keep_days: None,
    };
    assert!(prune(p, &current, &retention, now).unwrap().is_empty());
    assert!(
        older.exists(),
        "the real older result still counts as one of the 2 kept"
    );
    assert_eq!(names(p).len(), 5, "the future ones were not removed either");
}

#[test]
fn a_symlink_named_like_a_result_is_not_followed_nor_removed() {
    let parent = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = result(elsewhere.path(), "20261101T000000Z-run");
    let p = parent.path();
    std::os::unix::fs::symlink(&target, p.join("20261101T000000Z-run")).unwrap();
    let current = result(p, "20261109T000000Z-run");
    let retention = Retention {
        keep: Some(1),
        keep_days: None,
    };
    assert!(
        prune(p, &current, &retention, SystemTime::now())
            .unwrap()
            .is_empty()
    );
    assert!(target.join(RESULT_FILE).exists());
}
