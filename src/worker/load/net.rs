//! Loopback TCP streams: a sender thread pushes 64 KiB writes through 127.0.0.1 to a receiver,
//! so the network stack's softirq work runs on the noise CPUs. Nothing leaves the machine.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use super::stopping;
use crate::region::Region;

const CHUNK: usize = 64 * 1024;
const TIMEOUT: Duration = Duration::from_millis(100);

/// One stream; returns bytes received.
pub fn run(region: &Region, _scratch: &Path, _index: usize) -> u64 {
    let Ok(listener) = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)) else {
        return 0;
    };
    let Ok(address) = listener.local_addr() else {
        return 0;
    };
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let Ok(mut sender) = TcpStream::connect(address) else {
                return;
            };
            let _ = sender.set_write_timeout(Some(TIMEOUT));
            let chunk = vec![0xa5u8; CHUNK];
            while !stopping(region) {
                if sender.write_all(&chunk).is_err() && stopping(region) {
                    break;
                }
            }
        });
        let Ok((mut receiver, _)) = listener.accept() else {
            return 0;
        };
        let _ = receiver.set_read_timeout(Some(TIMEOUT));
        let mut buffer = vec![0u8; CHUNK];
        let mut bytes = 0u64;
        while !stopping(region) {
            match receiver.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => bytes += n as u64,
                Err(_) => {}
            }
        }
        bytes
    })
}
