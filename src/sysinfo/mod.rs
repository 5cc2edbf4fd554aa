//! Facts about the host, read from `/proc` and `/sys` through one injectable root so that every
//! reader is tested on fixture trees (`tests/fixtures/sys/<scenario>/`).
//!
//! Owns: reading and parsing. Never judges: whether a fact is good or bad for a real-time run
//! is decided by the caller.

// Implementation: see the helper brief (SysRoot, CpuTopology, HostFacts).
