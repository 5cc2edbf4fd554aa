//! What each point boots, made from the plan once when the campaign starts (each image opened
//! checked, hashed, and its release read), and the same files opened again, checked and
//! compared with those hashes, whenever one is booted: a kernel or initramfs changed since the
//! campaign started is never booted under the point's name.
//!
//! Owns: resolving points into [`BootTarget`]s and reopening them. Never loads a kernel.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use anyhow::Context;

use super::image::{ImageFacts, inspect};
use super::plan::{Plan, TOKEN_KEY};
use super::state::{BootTarget, LoadFailure};
use rtsoak_analysis::campaign::sequence::Role;
use rtsoak_sys::checked_input;

/// A kernel image larger than this is no kernel (arm64's uncompressed `Image` is ~50 MB).
const MAX_KERNEL_BYTES: u64 = 1 << 30;
/// An initramfs larger than this is a mistake (distribution initramfs are under 200 MB).
const MAX_INITRD_BYTES: u64 = 4 << 30;

/// `point`'s target: its images checked and read, its command line (`default_cmdline` where
/// the plan gives none, then its `append`), its release (the plan's, checked against the
/// image's where the image names one).
pub(crate) fn resolve(
    plan: &Plan,
    role: Role,
    default_cmdline: &str,
) -> anyhow::Result<BootTarget> {
    let point = plan.point(role);
    let key = role.name();
    let kernel_image = read(&point.kernel, "kernel image", MAX_KERNEL_BYTES, true)
        .with_context(|| format!("{key}.kernel"))?;
    let initrd_image = match &point.initrd {
        Some(path) => Some(
            read(path, "initramfs", MAX_INITRD_BYTES, false)
                .with_context(|| format!("{key}.initrd"))?,
        ),
        None => None,
    };
    let release = match (&point.release, &kernel_image.release) {
        (Some(want), Some(image)) if want != image => anyhow::bail!(
            "{key}.release is {want:?}, but {} is {image:?} (its {}): fix the release or the \
             kernel path",
            point.kernel.display(),
            match kernel_image.release_source {
                Some(super::image::ReleaseSource::Banner) => "version banner",
                _ => "setup header",
            }
        ),
        (Some(want), _) => Some(want.clone()),
        (None, image) => image.clone(),
    };
    let mut cmdline = point
        .cmdline
        .clone()
        .unwrap_or_else(|| default_cmdline.to_string());
    if let Some(append) = &point.append {
        cmdline = format!("{cmdline} {append}");
    }
    Ok(BootTarget {
        kernel: point.kernel.clone(),
        kernel_image,
        initrd: point.initrd.clone(),
        initrd_image,
        cmdline: cmdline.split_whitespace().collect::<Vec<_>>().join(" "),
        release,
    })
}

/// Both points' targets, parent first (see [`resolve`]).
pub(crate) fn resolve_all(
    plan: &Plan,
    default_cmdline: &str,
) -> anyhow::Result<BTreeMap<Role, BootTarget>> {
    [Role::Parent, Role::Child]
        .into_iter()
        .map(|role| Ok((role, resolve(plan, role, default_cmdline)?)))
        .collect()
}

/// The target of an image already known (the kernel a campaign returns to).
pub(crate) fn of_files(
    kernel: &Path,
    initrd: Option<&Path>,
    cmdline: String,
    release: Option<String>,
) -> anyhow::Result<BootTarget> {
    Ok(BootTarget {
        kernel: kernel.to_path_buf(),
        kernel_image: read(kernel, "kernel image", MAX_KERNEL_BYTES, true)?,
        initrd: initrd.map(Path::to_path_buf),
        initrd_image: initrd
            .map(|path| read(path, "initramfs", MAX_INITRD_BYTES, false))
            .transpose()?,
        cmdline,
        release,
    })
}

fn read(path: &Path, what: &'static str, max: u64, kernel: bool) -> anyhow::Result<ImageFacts> {
    let mut checked = checked_input::open(path, what, max)?;
    inspect(&mut checked.file, kernel).with_context(|| format!("reading {}", path.display()))
}

/// A target's files, opened again and checked to be the ones the campaign started with.
pub(crate) struct Opened {
    /// The kernel image, at its start.
    pub(crate) kernel: File,
    /// The initramfs, if any.
    pub(crate) initrd: Option<File>,
}

/// Open `target`'s files again, checked, and compare their hashes with the recorded ones.
pub(crate) fn reopen(target: &BootTarget) -> Result<Opened, (LoadFailure, String)> {
    let open = |path: &Path, what, max, recorded: &ImageFacts, kernel| {
        let mut checked = checked_input::open(path, what, max)
            .map_err(|e| (LoadFailure::ImageUnreadable, e.to_string()))?;
        let now = inspect(&mut checked.file, kernel).map_err(|e| {
            (
                LoadFailure::ImageUnreadable,
                format!("{}: {e}", path.display()),
            )
        })?;
        if now.sha256 != recorded.sha256 {
            return Err((
                LoadFailure::ImageChanged,
                format!(
                    "{} changed since the campaign started (SHA-256 {} then, {} now)",
                    path.display(),
                    recorded.sha256,
                    now.sha256
                ),
            ));
        }
        Ok(checked.file)
    };
    let kernel = open(
        &target.kernel,
        "kernel image",
        MAX_KERNEL_BYTES,
        &target.kernel_image,
        true,
    )?;
    let initrd = match (&target.initrd, &target.initrd_image) {
        (Some(path), Some(recorded)) => {
            Some(open(path, "initramfs", MAX_INITRD_BYTES, recorded, false)?)
        }
        _ => None,
    };
    Ok(Opened { kernel, initrd })
}

/// `target`'s command line with rtsoak's token added (none: as it is).
pub(crate) fn cmdline(target: &BootTarget, token: Option<&str>) -> String {
    match token {
        Some(token) => format!("{} {TOKEN_KEY}{token}", target.cmdline),
        None => target.cmdline.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn plan_with(kernel: &Path, release: Option<&str>) -> Plan {
        let release = release.map_or(String::new(), |r| format!("release = \"{r}\"\n"));
        crate::campaign::plan::parse(
            "t",
            &format!(
                "command = [\"bench\", \"eventfd\"]\n[parent]\nkernel = \"{}\"\n{release}\
                 [child]\nkernel = \"{}\"\nappend = \"nohz_full=2\"\n",
                kernel.display(),
                kernel.display()
            ),
        )
        .unwrap()
    }

    fn kernel_file(dir: &Path, version: &str) -> std::path::PathBuf {
        let mut image = vec![0u8; 0x2000];
        image[0x202..0x206].copy_from_slice(b"HdrS");
        image[0x20e..0x210].copy_from_slice(&0x0e00u16.to_le_bytes());
        image[0x1000..0x1000 + version.len()].copy_from_slice(version.as_bytes());
        let path = dir.join("vmlinuz");
        std::fs::write(&path, image).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        path
    }

    fn dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    #[test]
    fn a_point_takes_the_images_release_and_appends_to_the_default_command_line() {
        let dir = dir();
        let kernel = kernel_file(dir.path(), "6.12.1-rt (x) #1");
        let plan = plan_with(&kernel, None);
        let child = resolve(&plan, Role::Child, "root=/dev/vda  ro").unwrap();
        assert_eq!(child.release.as_deref(), Some("6.12.1-rt"));
        assert_eq!(child.cmdline, "root=/dev/vda ro nohz_full=2");
        assert_eq!(
            cmdline(&child, Some("ab.1.0")),
            "root=/dev/vda ro nohz_full=2 rtsoak.campaign=ab.1.0"
        );
    }

    #[test]
    fn a_release_the_image_contradicts_is_refused_naming_both() {
        let dir = dir();
        let kernel = kernel_file(dir.path(), "6.12.1-rt (x) #1");
        let plan = plan_with(&kernel, Some("6.1.0-50-rt-amd64"));
        let text = format!("{:#}", resolve(&plan, Role::Parent, "ro").unwrap_err());
        assert!(
            text.contains("parent.release is \"6.1.0-50-rt-amd64\""),
            "{text}"
        );
        assert!(text.contains("\"6.12.1-rt\" (its setup header)"), "{text}");
    }

    #[test]
    fn an_image_changed_after_the_start_is_never_reopened_as_the_same_point() {
        let dir = dir();
        let kernel = kernel_file(dir.path(), "6.12.1-rt (x) #1");
        let target = resolve(&plan_with(&kernel, None), Role::Parent, "ro").unwrap();
        assert!(reopen(&target).is_ok());
        kernel_file(dir.path(), "6.12.2-rt (x) #1");
        let Err((failure, message)) = reopen(&target) else {
            panic!("a changed image reopened");
        };
        assert_eq!(failure, LoadFailure::ImageChanged);
        assert!(
            message.contains("changed since the campaign started"),
            "{message}"
        );
    }

    #[test]
    fn a_kernel_others_may_write_is_refused_before_anything() {
        let dir = dir();
        let kernel = kernel_file(dir.path(), "6.12.1-rt (x) #1");
        std::fs::set_permissions(&kernel, std::fs::Permissions::from_mode(0o666)).unwrap();
        let text = format!(
            "{:#}",
            resolve(&plan_with(&kernel, None), Role::Parent, "ro").unwrap_err()
        );
        assert!(text.contains("parent.kernel"), "{text}");
        assert!(text.contains("writable by everyone"), "{text}");
    }
}
