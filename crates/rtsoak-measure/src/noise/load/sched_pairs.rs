//! hackbench-style scheduler load: a sender and a receiver thread bouncing a 100-byte message
//! over a pipe (even pairs) or a Unix socket pair (odd pairs), waking each other every time.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use rtsoak_sys::region::Region;

const MESSAGE: [u8; 100] = [0x5a; 100];
const TIMEOUT: Duration = Duration::from_millis(100);

/// One pair; returns round trips.
pub(super) fn run(region: &Region, _scratch: &Path, index: usize) -> u64 {
    let (there, back) = if index.is_multiple_of(2) {
        match (pipe_pair(), pipe_pair()) {
            (Some(a), Some(b)) => (a, b),
            _ => return 0,
        }
    } else {
        match (socket_pair(), socket_pair()) {
            (Some(a), Some(b)) => (a, b),
            _ => return 0,
        }
    };
    let (mut to_echo, mut echo_in) = there;
    let (mut echo_out, mut from_echo) = back;
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut buffer = [0u8; 100];
            while !region.stopping() {
                // A timed-out read only means the partner is slow or stopping: go round again.
                let _ = echo_in
                    .read_exact(&mut buffer)
                    .and_then(|()| echo_out.write_all(&buffer));
            }
        });
        let mut round_trips = 0;
        let mut buffer = [0u8; 100];
        while !region.stopping() {
            if to_echo.write_all(&MESSAGE).is_ok() && from_echo.read_exact(&mut buffer).is_ok() {
                round_trips += 1;
            }
        }
        round_trips
    })
}

/// A one-way channel: the end written to and the end read from.
type Channel = (Box<dyn Write + Send>, Box<dyn Read + Send>);

/// A Unix socket pair with timeouts, so a thread blocked on its partner still sees the run stop.
fn socket_pair() -> Option<Channel> {
    let (a, b) = UnixStream::pair().ok()?;
    for s in [&a, &b] {
        s.set_read_timeout(Some(TIMEOUT)).ok()?;
        s.set_write_timeout(Some(TIMEOUT)).ok()?;
    }
    Some((Box::new(a), Box::new(b)))
}

/// A pipe; reads poll with a timeout for the same reason.
fn pipe_pair() -> Option<Channel> {
    let (reader, writer) = std::io::pipe().ok()?;
    Some((Box::new(writer), Box::new(TimedPipe(reader))))
}

/// A pipe reader whose reads give up after [`TIMEOUT`].
struct TimedPipe(std::io::PipeReader);

impl Read for TimedPipe {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        use std::os::fd::AsFd;
        let mut fds = [nix::poll::PollFd::new(
            self.0.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(
            &mut fds,
            nix::poll::PollTimeout::from(TIMEOUT.as_millis() as u16),
        ) {
            Ok(0) => Err(std::io::ErrorKind::TimedOut.into()),
            Ok(_) => self.0.read(buffer),
            Err(e) => Err(e.into()),
        }
    }
}
