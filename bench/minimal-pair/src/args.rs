//! The command line, parsed by hand: the pair depends on nothing it does not measure with.

/// How to run the pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Args {
    pub(crate) mechanism: Mechanism,
    pub(crate) period_ns: u64,
    pub(crate) duration_ns: u64,
    pub(crate) warmup_ns: u64,
    pub(crate) publisher_cpu: usize,
    pub(crate) subscriber_cpu: usize,
    pub(crate) priority: i32,
    /// Hold `/dev/cpu_dma_latency` at 0 for the run, as rtsoak and cyclictest do by default.
    pub(crate) hold_cpu_dma_latency: bool,
}

/// The wake mechanism, as rtsoak's transport of the same name uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mechanism {
    /// `write(2)` to an eventfd; the subscriber's ring holds an `IORING_OP_READ` on it.
    Eventfd,
    /// Bump a shared (non-private) futex word and `FUTEX_WAKE` it; the subscriber's ring holds
    /// an `IORING_OP_FUTEX_WAIT` on it.
    Futex,
}

impl Mechanism {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mechanism::Eventfd => "eventfd",
            Mechanism::Futex => "futex",
        }
    }
}

pub(crate) const USAGE: &str = "\
usage: minimal-pair eventfd|futex [--period-us N] [--duration-s N] [--warmup-ms N]
                    [--cpus PUBLISHER,SUBSCRIBER] [--priority N] [--no-cpu-dma-latency]

defaults: --period-us 500 --duration-s 10 --warmup-ms 500 --cpus 0,1 --priority 40
(rtsoak's default profile). Needs root, or RLIMIT_RTPRIO and RLIMIT_MEMLOCK large enough.";

impl Args {
    /// Parse the arguments after the program name.
    pub(crate) fn parse(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
        let mechanism = match words.next().as_deref() {
            Some("eventfd") => Mechanism::Eventfd,
            Some("futex") => Mechanism::Futex,
            Some(other) => return Err(format!("unknown mechanism `{other}`: eventfd or futex")),
            None => return Err("name the mechanism: eventfd or futex".to_string()),
        };
        let mut args = Args {
            mechanism,
            period_ns: 500_000,
            duration_ns: 10_000_000_000,
            warmup_ns: 500_000_000,
            publisher_cpu: 0,
            subscriber_cpu: 1,
            priority: 40,
            hold_cpu_dma_latency: true,
        };
        while let Some(flag) = words.next() {
            if flag == "--no-cpu-dma-latency" {
                args.hold_cpu_dma_latency = false;
                continue;
            }
            let value = words
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value"))?;
            match flag.as_str() {
                "--period-us" => args.period_ns = number(&flag, &value, 20, 1_000_000)? * 1_000,
                "--duration-s" => {
                    args.duration_ns = number(&flag, &value, 1, 86_400)? * 1_000_000_000
                }
                "--warmup-ms" => args.warmup_ns = number(&flag, &value, 0, 60_000)? * 1_000_000,
                "--priority" => args.priority = number(&flag, &value, 1, 99)? as i32,
                "--cpus" => {
                    let (publisher, subscriber) = value
                        .split_once(',')
                        .ok_or_else(|| format!("--cpus takes two CPUs, `0,1`: got `{value}`"))?;
                    args.publisher_cpu = number(&flag, publisher, 0, 4095)? as usize;
                    args.subscriber_cpu = number(&flag, subscriber, 0, 4095)? as usize;
                    if args.publisher_cpu == args.subscriber_cpu {
                        return Err(format!("--cpus names CPU {publisher} twice: give two CPUs"));
                    }
                }
                _ => return Err(format!("unknown flag `{flag}`")),
            }
        }
        Ok(args)
    }

    /// Periods of the warm-up, then of the measured phase.
    pub(crate) fn periods(&self) -> (u64, u64) {
        (
            self.warmup_ns / self.period_ns,
            self.duration_ns / self.period_ns,
        )
    }
}

fn number(flag: &str, text: &str, min: u64, max: u64) -> Result<u64, String> {
    text.parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{flag} takes a whole number from {min} to {max}: got `{text}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, String> {
        Args::parse(line.split_whitespace().map(String::from))
    }

    #[test]
    fn the_defaults_are_rtsoaks_default_profile() {
        let args = parse("eventfd").unwrap();
        assert_eq!(args.period_ns, 500_000);
        assert_eq!(args.periods(), (1_000, 20_000));
        assert_eq!((args.publisher_cpu, args.subscriber_cpu), (0, 1));
        assert_eq!(args.priority, 40);
    }

    #[test]
    fn flags_override_and_bad_values_are_named() {
        let args = parse("futex --period-us 1000 --duration-s 2 --cpus 4,5 --priority 80").unwrap();
        assert_eq!(args.mechanism, Mechanism::Futex);
        assert_eq!(args.periods(), (500, 2_000));
        assert_eq!((args.publisher_cpu, args.subscriber_cpu), (4, 5));
        assert!(
            parse("futex --priority 100")
                .unwrap_err()
                .contains("1 to 99")
        );
        assert!(parse("futex --cpus 3,3").unwrap_err().contains("twice"));
        assert!(parse("pipe").unwrap_err().contains("eventfd or futex"));
        assert!(
            parse("futex --period-us")
                .unwrap_err()
                .contains("needs a value")
        );
    }
}
