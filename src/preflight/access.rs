//! What this process may do (privileges found by trying) and which transports the kernel
//! carries (the support matrix, taken as input so an old kernel can be described by a value).

use super::inputs::Inputs;
use rtsoak_record::Trial;

use rtsoak_measure::transport;
use rtsoak_record::{CheckId, Finding, Level, Support};

pub(super) fn findings(inputs: &Inputs) -> Vec<Finding> {
    let privileges = inputs.privileges;
    let mut findings = vec![
        trial(
            CheckId::PrivilegesRtPriority,
            "RT priority",
            &privileges.rt_priority,
            "run as root, or grant CAP_SYS_NICE or an RLIMIT_RTPRIO at least the RT pair's \
             priority (`ulimit -r`, systemd `LimitRTPRIO=`)",
            "no real-time priority: the RT pair runs SCHED_OTHER",
        ),
        trial(
            CheckId::PrivilegesMemlock,
            "memory lock",
            &privileges.memory_lock,
            "run as root, or raise RLIMIT_MEMLOCK (`ulimit -l`, systemd `LimitMEMLOCK=`)",
            "16 MiB cannot be locked: the RT workers lock what fits and may page-fault elsewhere",
        ),
        trial(
            CheckId::PrivilegesPidfdGetfd,
            "pidfd_getfd",
            &privileges.pidfd_getfd,
            "use a kernel with pidfd_getfd (Linux 5.6) and no seccomp filter refusing it \
             (containers often have one: allow pidfd_open and pidfd_getfd)",
            "pidfd_getfd is refused: msg-ring and eventfd cannot reach the subscriber",
        ),
    ];
    findings.extend(inputs.support.iter().map(|entry| {
        let name = rtsoak_record::transport::Name::lookup(&entry.transport);
        let id = name.map_or_else(
            || CheckId::Other(format!("transport.{}", entry.transport)),
            CheckId::Transport,
        );
        if entry.support.is_supported() {
            return Finding::ok(id, entry.transport.clone(), "supported");
        }
        let needs = name.map_or("", |name| transport::transport(name).needs());
        if let Support::NotPermitted { fix, .. } = &entry.support {
            // A limit is not a kernel feature: the fix is the privilege, not another kernel.
            return Finding {
                id,
                level: Level::Problem,
                subject: entry.transport.clone(),
                detail: entry.support.reason(),
                remedy: Some(format!(
                    "{fix}; until then its runs are not measured and the verdict is inconclusive"
                )),
                worth: None,
            };
        }
        Finding {
            id,
            level: Level::Warning,
            subject: entry.transport.clone(),
            detail: format!("unsupported: {}", entry.support.reason()),
            remedy: Some(format!(
                "needs {needs}; `compare` skips it and says so, or use a kernel that has it"
            )),
            worth: None,
        }
    }));
    findings
}

fn trial(id: CheckId, subject: &str, trial: &Trial, remedy: &str, worth: &str) -> Finding {
    match &trial.error {
        None => Finding::ok(id, subject, format!("granted ({})", trial.tried)),
        Some(error) => Finding::bad(
            id,
            Level::Problem,
            subject,
            format!("refused: {}: {error}", trial.tried),
            remedy,
            Some(worth.to_string()),
        ),
    }
}
