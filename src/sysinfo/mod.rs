//! Facts about the host, read from `/proc` and `/sys` through one injectable root so that every
//! reader is tested on fixture trees (`tests/fixtures/sys/<scenario>/`).
//!
//! Owns: reading and parsing. Never judges: whether a fact is good or bad for a real-time run
//! is decided by the caller. Never fails either: a missing or unreadable file is a fact
//! (`None` or an empty list), because small development machines lack half of these files.
//!
//! [`SysRoot`] is the only way in; [`host_facts`] gathers everything a result records.
//! Per-CPU reading lives in [`cpus`], kernel and boot command line in [`kernel`], interrupts in
//! [`irqs`], processes and threads in [`tasks`].

#![forbid(unsafe_code)]

pub mod cpus;
pub mod cpustat;
pub mod irqs;
pub mod kernel;
pub mod tasks;

use std::path::{Path, PathBuf};

use crate::record::HostFacts;

/// Where `/proc` and `/sys` are: `/` on the live machine, a fixture directory in tests.
#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
}

impl SysRoot {
    /// The running machine's own `/proc` and `/sys`.
    pub fn system() -> Self {
        Self::at("/")
    }

    /// A tree laid out like `/`, for example `tests/fixtures/sys/vm-2cpu`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        SysRoot { root: root.into() }
    }

    /// `path` is absolute as on the host (`/proc/cmdline`) and is joined under the root.
    fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }

    /// The whole file as text.
    pub fn read(&self, path: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.path(path))
    }

    /// The file without surrounding whitespace or NUL bytes (device-tree strings end in one);
    /// `None` if it is missing or unreadable. An empty file gives `Some("")`.
    pub fn read_trimmed(&self, path: &str) -> Option<String> {
        let text = self.read(path).ok()?;
        Some(
            text.trim_matches(|c: char| c.is_whitespace() || c == '\0')
                .to_string(),
        )
    }

    /// The target of a symbolic link (`/proc/self` names our pid); `None` if it is not one.
    pub fn read_link(&self, path: &str) -> Option<PathBuf> {
        std::fs::read_link(self.path(path)).ok()
    }

    pub fn exists(&self, path: &str) -> bool {
        self.path(path).exists()
    }

    /// Entry names in `path`, sorted; empty if it is missing or not a directory.
    pub fn list_dir(&self, path: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(path))
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .collect();
        names.sort();
        names
    }

    /// The directory standing in for `/`.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// Read every host fact under `root`. Never fails: missing files give `None` or empty lists.
pub fn host_facts(root: &SysRoot) -> HostFacts {
    let kernel_version = root.read_trimmed("/proc/sys/kernel/version");
    let (preempt_rt, preempt_rt_source) = kernel::preempt_rt(root, kernel_version.as_deref());
    let cmdline = root.read_trimmed("/proc/cmdline");
    let boot_isolation = kernel::boot_isolation(cmdline.as_deref().unwrap_or(""));
    let online = cpus::cpu_list(root, "online");
    let cpu_facts = cpus::possible_cpus(root, &online)
        .into_iter()
        .map(|cpu| cpus::cpu_facts(root, cpu, &online))
        .collect();
    HostFacts {
        hostname: root.read_trimmed("/proc/sys/kernel/hostname"),
        kernel_release: root.read_trimmed("/proc/sys/kernel/osrelease"),
        kernel_version,
        arch: std::env::consts::ARCH.to_string(),
        preempt_rt,
        preempt_rt_source,
        cmdline,
        boot_isolation,
        cpu_model: cpus::cpu_model(root),
        cpus: cpu_facts,
        isolated: cpus::cpu_list(root, "isolated"),
        nohz_full: cpus::cpu_list(root, "nohz_full"),
        online,
        sched_rt_runtime_us: parsed(root, "/proc/sys/kernel/sched_rt_runtime_us"),
        sched_rt_period_us: parsed(root, "/proc/sys/kernel/sched_rt_period_us"),
        clocksource: root
            .read_trimmed("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        io_uring_disabled: parsed(root, "/proc/sys/kernel/io_uring_disabled"),
    }
}

/// A number in a file; `None` if missing or not a number.
pub(crate) fn parsed<T: std::str::FromStr>(root: &SysRoot, path: &str) -> Option<T> {
    root.read_trimmed(path)?.parse().ok()
}
