//! `rtsoak campaign` end to end without booting: a campaign's state moved through its boots by
//! the library's state machine (as the drivers move it), with real `bench` results whose rounds
//! are set to the io_uring scalar report's figures, built into its document; then the binary
//! renders it in every format and exits with the verdict, for people and for `git bisect run`.
//! And plans the binary must refuse before anything boots.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::rtsoak;
use rtsoak::campaign::advance::{self, Decision, NewCampaign, Target};
use rtsoak::campaign::doc::{self, CAMPAIGN_FILE};
use rtsoak::campaign::plan::parse;
use rtsoak_analysis::campaign::fingerprint::Fingerprint;
use rtsoak_analysis::campaign::identity::BootFacts;
use rtsoak_analysis::campaign::sequence::Role;
use rtsoak_analysis::campaign::state::{
    BootTarget, Driver, Measurement, Outcome, Settled, StartBoot,
};
use rtsoak_sys::safe_dir::SafeDir;

/// One real bench result, its measured rounds replaced by `ns_per_op`.
fn bench_result(template: &serde_json::Value, ns_per_op: &[f64]) -> serde_json::Value {
    let mut doc = template.clone();
    let series = &mut doc["series"][0];
    let rounds = series["rounds"].as_array_mut().unwrap();
    rounds.retain(|r| r["warmup"] == false);
    rounds.truncate(ns_per_op.len());
    for (round, ns) in rounds.iter_mut().zip(ns_per_op) {
        round["ns_per_op"] = (*ns).into();
    }
    doc
}

fn template() -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let out = rtsoak()
        .args([
            "bench",
            "eventfd",
            "--rounds",
            "3",
            "--warmup-rounds",
            "1",
            "--cycles",
            "16",
        ])
        .args(["--policy", "other", "-o"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&std::fs::read(dir.path().join("bench.json")).unwrap()).unwrap()
}

fn target(kernel: &str) -> BootTarget {
    serde_json::from_value(serde_json::json!({
        "kernel": kernel,
        "kernel_image": {"sha256": "00", "size_bytes": 1},
        "cmdline": "root=/dev/vda ro",
    }))
    .unwrap()
}

/// The host fingerprint every boot recorded: the same on each.
fn fingerprint() -> Fingerprint {
    Fingerprint {
        cpu_model: Some("Intel(R) Xeon(R) CPU @ 2.20GHz".into()),
        microcode: Some("0-1=0xffffffff".into()),
        governors: None,
        no_turbo: None,
        boost: None,
        smt: Some("notsupported".into()),
        online: Some("0-1".into()),
        rt_throttling: Some("950000/1000000".into()),
        isolated: Some(String::new()),
        nohz_full: Some(String::new()),
        cmdline: "root=/dev/vda ro".into(),
    }
}

/// A finished kexec campaign in `dir` whose three boots measured `means` ns/op each.
fn campaign(dir: &Path, means: [f64; 3]) {
    let plan_text = "command = [\"bench\", \"eventfd\"]\n\
        [parent]\nkernel = \"/boot/vmlinuz-a\"\nlabel = \"parent-kernel\"\n\
        [child]\nkernel = \"/boot/vmlinuz-b\"\n";
    let plan = parse("plan", plan_text).unwrap();
    let start = BootFacts {
        boot_id: "start".into(),
        release: "6.12.0-start".into(),
        build_id: None,
        cmdline: "root=/dev/vda ro".into(),
    };
    let mut targets = BTreeMap::new();
    targets.insert(Role::Parent, target("/boot/vmlinuz-a"));
    targets.insert(Role::Child, target("/boot/vmlinuz-b"));
    let mut state = advance::create(
        NewCampaign {
            campaign_id: "0123456789abcdef".into(),
            driver: Driver::Kexec,
            plan_sha256: "ff".into(),
            started_at: "2026-12-05T08:00:00Z".into(),
            start: StartBoot {
                facts: start.clone(),
                return_to: None,
            },
            targets,
        },
        &plan,
    );
    let template = template();
    let fingerprint = fingerprint();
    let mut decision = advance::begin(&mut state);
    let mut now = 1000;
    while let Decision::Boot(Target::Slot { seq }) = decision {
        advance::loaded(&mut state, Target::Slot { seq }, now);
        now += 60;
        let token = state.slots[seq].attempts.last().unwrap().token.clone();
        let release = ["6.1.0-parent", "6.12.0-child", "6.1.0-parent"][seq];
        let boot = BootFacts {
            boot_id: format!("boot-{seq}"),
            release: release.into(),
            build_id: None,
            cmdline: format!("root=/dev/vda ro rtsoak.campaign={token}"),
        };
        assert_eq!(
            advance::on_boot(&mut state, &plan, &boot, now),
            Decision::Measure { seq }
        );
        let relative = PathBuf::from(format!("boots/{seq:02}/result/bench.json"));
        std::fs::create_dir_all(dir.join(relative.parent().unwrap())).unwrap();
        let result = bench_result(&template, &[means[seq]]);
        std::fs::write(dir.join(&relative), serde_json::to_vec(&result).unwrap()).unwrap();
        let measurement = Measurement {
            settled: Settled {
                systemd: Some("running".into()),
                idle_percent: 97.5,
                waited_s: 12.0,
            },
            fingerprint: fingerprint.clone(),
            exit_code: Some(0),
            signal: None,
            duration_s: 3.0,
            result: Some(relative),
        };
        decision = advance::after_measure(
            &mut state,
            &plan,
            seq,
            Outcome::Measured,
            Some(measurement),
            &boot,
            now,
        );
    }
    // The last boot is the parent's: the campaign returns to the start kernel.
    assert_eq!(decision, Decision::Boot(Target::Start));
    advance::loaded(&mut state, Target::Start, now);
    let back = BootFacts {
        boot_id: "back".into(),
        ..start
    };
    assert_eq!(
        advance::on_boot(&mut state, &plan, &back, now + 30),
        Decision::Finished
    );
    let doc = doc::build(&state, &plan, None, &SafeDir::open(dir).unwrap());
    std::fs::write(
        dir.join(CAMPAIGN_FILE),
        serde_json::to_vec_pretty(&doc).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_finished_campaign_renders_bench_compares_table_and_exits_with_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    campaign(dir.path(), [180.079, 196.647, 179.856]);
    let out = rtsoak()
        .args(["campaign", "report"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "a regression exits 3: {text}");
    assert!(
        text.contains("parent-kernel [6.1.0-parent] -> child [6.12.0-child]"),
        "{text}"
    );
    assert!(
        text.contains("+9.268%") && text.contains("-0.124%"),
        "{text}"
    );
    assert!(
        text.contains("host fingerprint: the same on every measured boot"),
        "{text}"
    );
    assert!(
        text.contains("back in the kernel it started in (6.12.0-start)"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("verdict: regression"), "{text}");
    let bisect = rtsoak()
        .args(["campaign", "report", "--bisect"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bisect.status.code(), Some(1), "git bisect's bad");
}

#[test]
fn every_export_renders_the_same_verdict() {
    let dir = tempfile::tempdir().unwrap();
    campaign(dir.path(), [180.079, 196.647, 179.856]);
    let render = |format: &str| {
        let out = rtsoak()
            .args(["campaign", "report", "--format", format])
            .arg(dir.path().join(CAMPAIGN_FILE))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let markdown = render("markdown");
    assert!(markdown.contains("**Verdict: regression**"), "{markdown}");
    assert!(
        markdown.contains("| eventfd | 180.079 | 196.647 | 179.856 | +9.268% |"),
        "{markdown}"
    );
    let junit = render("junit");
    assert!(
        junit.contains("<failure message=") && junit.contains("tests=\"2\""),
        "{junit}"
    );
    let json = render("json");
    let reread = dir.path().join("again.json");
    std::fs::write(&reread, json).unwrap();
    let again = doc::load(&reread).unwrap();
    assert_eq!(again.judgement.verdict.name(), "regression");
    assert_eq!(again.boots.len(), 3);
}

#[test]
fn parents_that_drifted_are_inconclusive_and_git_bisect_skips() {
    let dir = tempfile::tempdir().unwrap();
    // Parent B 3 % above parent A: beyond the 2 % drift gate.
    campaign(dir.path(), [180.0, 196.0, 185.4]);
    let out = rtsoak()
        .args(["campaign", "report"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let bisect = rtsoak()
        .args(["campaign", "report", "--bisect"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(bisect.status.code(), Some(125));
}

fn plan_file(dir: &Path, text: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.join("plan.toml");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

#[test]
fn a_plan_is_refused_before_anything_boots_naming_its_key() {
    let dir = tempfile::tempdir().unwrap();
    for (plan, code, wanted) in [
        (
            "command = [\"bench\", \"eventfd\"]\norder = [\"parent\"]\n[parent]\nkernel = \"/a\"\n[child]\nkernel = \"/b\"\n",
            2,
            "campaign plan key `order`",
        ),
        (
            "command = [\"bench\", \"eventfd\", \"--rounds\", \"zero\"]\n[parent]\nkernel = \"/a\"\n[child]\nkernel = \"/b\"\n",
            2,
            "campaign plan key `command`",
        ),
        (
            "command = [\"compare\", \"--profile\", \"no-such-profile\"]\n[parent]\nkernel = \"/a\"\n[child]\nkernel = \"/b\"\n",
            2,
            "no profile named `no-such-profile`",
        ),
    ] {
        let path = plan_file(dir.path(), plan);
        let out = rtsoak()
            .args(["campaign", "check", "--qemu"])
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    }
}

#[test]
fn with_bisect_an_error_stops_the_bisection_rather_than_calling_the_commit_bad() {
    let dir = tempfile::tempdir().unwrap();
    let path = plan_file(dir.path(), "command = [\"bench\"]\n");
    let out = rtsoak()
        .args(["campaign", "run", "--bisect"])
        .arg(&path)
        .arg("--output")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(128),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_kernel_image_anyone_may_write_is_refused_as_the_campaigns_input() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("vmlinuz");
    std::fs::write(&kernel, b"not a kernel").unwrap();
    std::fs::set_permissions(&kernel, std::fs::Permissions::from_mode(0o666)).unwrap();
    let path = plan_file(
        dir.path(),
        &format!(
            "command = [\"bench\", \"eventfd\"]\n[parent]\nkernel = \"{k}\"\n[child]\nkernel = \"{k}\"\nappend = \"quiet\"\n",
            k = kernel.display()
        ),
    );
    let out = rtsoak()
        .args(["campaign", "check", "--qemu"])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("parent.kernel") && stderr.contains("writable by everyone"),
        "{stderr}"
    );
}
