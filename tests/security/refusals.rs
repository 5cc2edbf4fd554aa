//! Every path argument rtsoak refuses is refused before anything runs, with exit 2: shown with
//! the RT CPUs held (a refusal made after taking them would say 6, busy), and with nothing
//! created, written, staged or measured.

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use super::common::rtsoak_path;
use super::inputs::{a_result, output_within};
use super::{names, plant_link, setup, stderr};

#[test]
fn a_refused_path_argument_stops_the_invocation_before_anything_runs() {
    let s = setup();
    let foreign = s.nobodys_dir("foreign");
    let result = s.path("result.json");
    std::fs::write(&result, a_result()).unwrap();
    let link = s.nobodys_dir("links").join("baseline.json");
    plant_link(&result, &link);
    let profile_link = s.nobodys_dir("profiles").join("p.toml");
    plant_link(&s.path("p.toml"), &profile_link);
    // Every RT CPU held, as another rtsoak would hold them (bound here, or by another run).
    let cpus = std::thread::available_parallelism().unwrap().get();
    let _held: Vec<_> = (0..cpus)
        .filter_map(|cpu| rtsoak_sys::cpu_lock::bind_abstract(&format!("rtsoak-cpu{cpu}")).ok())
        .collect();
    let out = s.path("out");
    let run_with = |profile: OsString, extra: &[OsString]| -> Vec<OsString> {
        let mut args: Vec<OsString> = ["run", "-q", "-t", "eventfd", "--profile"]
            .iter()
            .map(OsString::from)
            .collect();
        args.push(profile);
        args.extend(["--duration".into(), "1s".into(), "--no-noise".into()]);
        args.extend(extra.iter().cloned());
        args
    };
    let run = |extra: &[OsString]| run_with("ci".into(), extra);
    let o = |dir: &std::path::Path| -> Vec<OsString> { vec!["-o".into(), dir.into()] };

    // What is not refused finds the CPUs busy: the refusals below come before the locks.
    let busy = output_within(
        Command::new(rtsoak_path()).args(run(&o(&out))),
        Duration::from_secs(20),
    );
    assert_eq!(busy.status.code(), Some(6), "{}", stderr(&busy));

    let mut textfile = o(&out);
    textfile.extend(["--textfile-dir".into(), foreign.clone().into()]);
    let mut results_dir = vec!["--results-dir".into(), foreign.clone().into()];
    results_dir.extend(["--keep".into(), "1".into()]);
    let mut baseline = o(&out);
    baseline.extend(["--baseline".into(), link.clone().into()]);
    let cases: Vec<(Vec<OsString>, &str)> = vec![
        (run(&textfile), "refusing to write into"),
        (run(&o(&foreign.join("out"))), "refusing to write into"),
        (run(&results_dir), "refusing to write into"),
        (run(&baseline), "symlink owned by uid 65534"),
        (
            run_with(profile_link.clone().into(), &o(&out)),
            "symlink owned by uid 65534",
        ),
        (
            vec![
                "report".into(),
                result.clone().into(),
                "-o".into(),
                foreign.join("report.txt").into(),
            ],
            "refusing to write into",
        ),
        (
            vec![
                "explain-check".into(),
                "--rounds".into(),
                "1".into(),
                "--keep-trace".into(),
                foreign.join("trace.txt").into(),
            ],
            "refusing to write into",
        ),
    ];
    for (args, says) in cases {
        let output = output_within(
            Command::new(rtsoak_path()).args(&args),
            Duration::from_secs(20),
        );
        let text = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
        assert!(
            !String::from_utf8_lossy(&output.stdout).contains("explainer calibration"),
            "{args:?}: nothing was staged"
        );
    }
    assert!(!out.exists(), "no result directory was made");
    assert!(
        names(&foreign).is_empty(),
        "nothing was written: {:?}",
        names(&foreign)
    );
}
