//! Loopback TCP streams: a sender thread pushes 64 KiB writes through 127.0.0.1 to a receiver,
//! so the network stack's softirq work runs on the noise CPUs. Nothing leaves the machine.
//!
//! The connection is made before anything waits on it, so a stream never blocks past the run:
//! where loopback is down (an initramfs, a fresh network namespace) it does nothing and
//! reports 0 bytes, which the result shows as a load generator that did no work.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use rtsoak_sys::region::Region;

const CHUNK: usize = 64 * 1024;
const TIMEOUT: Duration = Duration::from_millis(100);

/// One stream; returns bytes received.
pub(super) fn run(region: &Region, _scratch: &Path, _index: usize) -> u64 {
    let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)) else {
        return 0;
    };
    let Ok(address) = listener.local_addr() else {
        return 0;
    };
    // The kernel completes a loopback handshake from the listen backlog, so connect returns
    // before accept and accept then finds the connection waiting. Accepting first (with the
    // connect in another thread) blocked forever when that connect failed.
    let Ok(mut sender) = TcpStream::connect(address) else {
        return 0;
    };
    let Ok((mut receiver, _)) = listener.accept() else {
        return 0;
    };
    let _ = sender.set_write_timeout(Some(TIMEOUT));
    let _ = receiver.set_read_timeout(Some(TIMEOUT));
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let chunk = vec![0xa5u8; CHUNK];
            while !region.stopping() {
                if sender.write_all(&chunk).is_err() && region.stopping() {
                    break;
                }
            }
        });
        let mut buffer = vec![0u8; CHUNK];
        let mut bytes = 0u64;
        while !region.stopping() {
            match receiver.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => bytes += n as u64,
                Err(_) => {}
            }
        }
        bytes
    })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::mpsc;

    use super::*;
    use rtsoak_sys::region::{SharedRegion, phase};

    #[derive(Debug, PartialEq)]
    enum Outcome {
        Returned(u64),
        StillRunning,
        NoNamespace,
    }

    /// Bytes the loopback interface has received, as the kernel counts them.
    fn loopback_rx_bytes() -> u64 {
        std::fs::read_to_string("/sys/class/net/lo/statistics/rx_bytes")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Runs one stream on a thread (in a fresh network namespace if asked), stops the run once
    /// 300 ms have passed and loopback has carried a few chunks since the start (a loaded
    /// machine may not have run the thread in 300 ms; 30 s at most), and says what the stream
    /// did.
    fn stream(new_network_namespace: bool) -> Outcome {
        let shared = std::sync::Arc::new(SharedRegion::create().expect("shared region"));
        let (done, returned) = mpsc::channel();
        let region = shared.clone();
        let rx_before = loopback_rx_bytes();
        std::thread::spawn(move || {
            // Only this thread moves: its loopback is down, as in an initramfs.
            if new_network_namespace
                && nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).is_err()
            {
                let _ = done.send(Outcome::NoNamespace);
                return;
            }
            let _ = done.send(Outcome::Returned(run(region.get(), Path::new("/tmp"), 0)));
        });
        std::thread::sleep(Duration::from_millis(300));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !new_network_namespace
            && loopback_rx_bytes() < rx_before + 4 * CHUNK as u64
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        shared
            .get()
            .control
            .phase
            .store(phase::STOP, Ordering::Release);
        // Generous: the stream checks the phase every 100 ms.
        returned
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or(Outcome::StillRunning)
    }

    #[test]
    fn a_stream_moves_bytes_over_loopback_until_the_run_stops() {
        match stream(false) {
            Outcome::Returned(bytes) => assert!(bytes > 0, "no bytes went through loopback"),
            other => panic!("the stream did not return: {other:?}"),
        }
    }

    #[test]
    fn a_stream_without_loopback_reports_nothing_instead_of_blocking_past_the_run() {
        match stream(true) {
            Outcome::NoNamespace => rtsoak_testing::skip("unshare(CLONE_NEWNET) needs root"),
            outcome => assert_eq!(outcome, Outcome::Returned(0)),
        }
    }
}
