//! CPU lists in the kernel's own notation (`0-1,4`, as in `isolcpus=` and
//! `/sys/devices/system/cpu/isolated`): parse and format.
//!
//! Owns nothing but the notation; whether a CPU exists or is online is the caller's business.

use std::fmt;

/// Highest CPU number accepted: far beyond any real machine, low enough that a typo such as
/// `0-40000000` is an error rather than a 40-million-entry list.
pub(crate) const MAX_CPU: usize = 4095;

/// A CPU list that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CpuListError {
    #[error("empty CPU list: give at least one CPU, for example `0-1` or `4,5`")]
    Empty,
    #[error("`{0}` is not a CPU number or range: write CPUs as `0-1,4`")]
    Malformed(String),
    #[error("range `{0}` runs backwards: write the lower CPU first, for example `0-3`")]
    Backwards(String),
    #[error("CPU {0} is beyond the highest CPU number rtsoak accepts ({MAX_CPU})")]
    TooLarge(usize),
}

/// Parse `0-1,4` into a sorted list without duplicates. A trailing newline is accepted so that
/// sysfs files can be passed as read.
pub fn parse(text: &str) -> Result<Vec<usize>, CpuListError> {
    let text = text.trim();
    if text.is_empty() || text == "(null)" {
        return Err(CpuListError::Empty);
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let number = |s: &str| -> Result<usize, CpuListError> {
            let cpu: usize = s
                .trim()
                .parse()
                .map_err(|_| CpuListError::Malformed(part.to_string()))?;
            if cpu > MAX_CPU {
                return Err(CpuListError::TooLarge(cpu));
            }
            Ok(cpu)
        };
        match part.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (number(low)?, number(high)?);
                if low > high {
                    return Err(CpuListError::Backwards(part.to_string()));
                }
                cpus.extend(low..=high);
            }
            None => cpus.push(number(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Parse a sysfs-style list where an empty file (or the kernel's `(null)`) means "no CPUs".
pub fn parse_or_empty(text: &str) -> Result<Vec<usize>, CpuListError> {
    match parse(text) {
        Err(CpuListError::Empty) => Ok(Vec::new()),
        other => other,
    }
}

/// Formats a CPU list compactly, collapsing runs: `[0, 1, 2, 4]` → `0-2,4`.
pub struct Display<'a>(pub &'a [usize]);

impl fmt::Display for Display<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut cpus = self.0.to_vec();
        cpus.sort_unstable();
        cpus.dedup();
        let mut first = true;
        let mut i = 0;
        while i < cpus.len() {
            let start = cpus[i];
            let mut end = start;
            while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
                i += 1;
                end = cpus[i];
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if end > start {
                write!(f, "{start}-{end}")?;
            } else {
                write!(f, "{start}")?;
            }
            i += 1;
        }
        Ok(())
    }
}

/// `format(&[0, 1, 4])` == `"0-1,4"`.
pub fn format(cpus: &[usize]) -> String {
    Display(cpus).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_singles_are_merged_sorted_and_deduplicated() {
        assert_eq!(parse("4,0-1,1\n").unwrap(), vec![0, 1, 4]);
    }

    #[test]
    fn formatting_collapses_runs() {
        assert_eq!(format(&[5, 0, 1, 2, 4, 7]), "0-2,4-5,7");
        assert_eq!(format(&[3]), "3");
        assert_eq!(format(&[]), "");
    }

    #[test]
    fn malformed_lists_name_the_offending_part() {
        assert_eq!(parse(""), Err(CpuListError::Empty));
        assert_eq!(parse("a-b"), Err(CpuListError::Malformed("a-b".into())));
        assert_eq!(parse("3-1"), Err(CpuListError::Backwards("3-1".into())));
        assert_eq!(parse("1,,2"), Err(CpuListError::Malformed("".into())));
        assert_eq!(parse("0-99999"), Err(CpuListError::TooLarge(99999)));
    }

    #[test]
    fn sysfs_empty_and_null_mean_no_cpus() {
        assert_eq!(parse_or_empty("\n").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_or_empty("(null)\n").unwrap(), Vec::<usize>::new());
    }
}
