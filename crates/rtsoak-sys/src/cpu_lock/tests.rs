//! The locks and the queue under names of this test process's own (a real run's are never met).
//! The waiters are threads of this one process, so the kernel names them all by one pid: what
//! is checked here is who gets the CPUs when, and who is named; counting separate processes in
//! the queue is checked with real runs (`tests/faults.rs`).

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use super::ticket::{self, MAX_TICKET};
use super::*;

use rtsoak_record::CpuHolderRole;

impl Names {
    fn test(tag: &str) -> Self {
        Names {
            prefix: format!("rtsoak-test-{}-{tag}-cpu", std::process::id()),
        }
    }
}

/// Who got the CPUs, in the order they got them.
type Order = Arc<Mutex<Vec<&'static str>>>;

/// The CPUs `cpus`, taken at once.
fn taken(cpus: &[usize], names: &Names) -> CpuLocks {
    lock_named(cpus, Duration::ZERO, &mut |_| {}, names).unwrap()
}

/// The ticket numbers held on `cpu`, highest first.
fn tickets(names: &Names, cpu: usize) -> Vec<u32> {
    ticket::held(names, &[cpu])
        .unwrap()
        .iter()
        .map(|seen| seen.number)
        .collect()
}

/// Wait until the tickets on `cpu` are `numbers` (a waiter started in a thread has queued, or
/// moved up).
fn until_tickets(names: &Names, cpu: usize, numbers: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while tickets(names, cpu) != numbers {
        assert!(
            Instant::now() < deadline,
            "tickets on CPU {cpu}: {:?}, not {numbers:?}",
            tickets(names, cpu)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A waiter in a thread: queue for `cpus` (up to 30 s), then note `who` in `order` and hold the
/// CPUs a moment, as a short soak would.
fn waiter(
    who: &'static str,
    cpus: &'static [usize],
    names: &Names,
    order: &Order,
) -> JoinHandle<Option<CpuWait>> {
    let (names, order) = (names.clone(), order.clone());
    std::thread::spawn(move || {
        let locks = lock_named(cpus, Duration::from_secs(30), &mut |_| {}, &names)
            .unwrap_or_else(|e| panic!("{who}: {e:#}"));
        order.lock().unwrap().push(who);
        std::thread::sleep(Duration::from_millis(200));
        locks.wait().cloned()
    })
}

fn me() -> String {
    format!(
        "pid {}, uid {}",
        std::process::id(),
        nix::unistd::geteuid().as_raw()
    )
}

#[test]
fn two_waiters_and_a_client_asking_again_at_once_get_the_cpus_in_arrival_order() {
    let names = Names::test("order");
    let order = Order::default();
    let client = taken(&[1, 2], &names);
    let first = waiter("first", &[1, 2], &names, &order);
    until_tickets(&names, 2, &[1]);
    let second = waiter("second", &[2], &names, &order);
    until_tickets(&names, 2, &[2, 1]);
    // The client's run ends and it asks again at once, as a script of back-to-back runs does:
    // it finds the CPUs free for a moment, and the queue ahead of it.
    drop(client);
    let again = lock_named(&[1, 2], Duration::from_secs(30), &mut |_| {}, &names).unwrap();
    order.lock().unwrap().push("client again");
    let wait = again.wait().expect("it waited").clone();
    drop(again);
    first.join().unwrap();
    second.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["first", "second", "client again"]);
    assert!(
        wait.waited_behind
            .iter()
            .any(|h| h.role == CpuHolderRole::Queued && h.pid == Some(std::process::id())),
        "{wait:?}"
    );
}

#[test]
fn runs_on_overlapping_cpus_each_get_their_turn_in_arrival_order_without_deadlock() {
    let names = Names::test("overlap");
    let order = Order::default();
    let holder = taken(&[1, 2, 3], &names);
    let a = waiter("1-2", &[1, 2], &names, &order);
    until_tickets(&names, 1, &[1]);
    let b = waiter("2-3", &[2, 3], &names, &order);
    until_tickets(&names, 3, &[2]);
    // Each pair shares a CPU with each other: per-CPU queues could order them in a cycle.
    let c = waiter("1-3", &[1, 3], &names, &order);
    until_tickets(&names, 3, &[3, 2]);
    drop(holder);
    for waiter in [a, b, c] {
        waiter.join().unwrap();
    }
    assert_eq!(*order.lock().unwrap(), ["1-2", "2-3", "1-3"]);
}

#[test]
fn a_waiter_that_dies_leaves_the_queue_and_the_next_moves_up() {
    let names = Names::test("dies");
    let order = Order::default();
    let holder = taken(&[3], &names);
    // The first waiter's ticket; closing it below is what the kernel does when its process
    // dies, however it dies.
    let first = bind_listening(&names.ticket(3, 1)).unwrap();
    let next = waiter("next", &[3], &names, &order);
    until_tickets(&names, 3, &[2, 1]);
    drop(holder);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        order.lock().unwrap().is_empty(),
        "the CPU is free, and still the next waits behind the first"
    );
    drop(first);
    let wait = next.join().unwrap().expect("it waited");
    assert_eq!(*order.lock().unwrap(), ["next"]);
    assert_eq!(
        tickets(&names, 3),
        [] as [u32; 0],
        "the queue is empty again"
    );
    // It named whom it waited behind: the holder, and the first waiter.
    let roles: Vec<_> = wait.waited_behind.iter().map(|h| h.role).collect();
    assert_eq!(roles, [CpuHolderRole::Holding, CpuHolderRole::Queued]);
    assert!(wait.waited_ns >= 500_000_000, "{wait:?}");
}

#[test]
fn a_waiter_whose_wait_runs_out_refuses_and_gives_up_its_place() {
    let names = Names::test("gives-up");
    let order = Order::default();
    let holder = taken(&[4], &names);
    let impatient = {
        let names = names.clone();
        std::thread::spawn(move || {
            // Long enough for the patient one to queue behind it on a loaded machine.
            lock_named(&[4], Duration::from_secs(2), &mut |_| {}, &names).unwrap_err()
        })
    };
    until_tickets(&names, 4, &[1]);
    let patient = waiter("patient", &[4], &names, &order);
    until_tickets(&names, 4, &[2, 1]);
    let error = impatient.join().unwrap();
    let busy = error.downcast_ref::<CpusBusy>().expect("typed");
    assert!(busy.waited.unwrap() >= Duration::from_secs(2));
    assert!(busy.holder.as_deref().unwrap().starts_with(&me()), "{busy}");
    assert!(
        error.to_string().contains("gave up after waiting"),
        "{error}"
    );
    // The patient one moves up into the place given up, and runs once the holder lets go.
    until_tickets(&names, 4, &[1]);
    drop(holder);
    patient.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["patient"]);
}

#[test]
fn a_run_never_takes_free_cpus_ahead_of_those_queued_for_them() {
    let names = Names::test("no-jump");
    let order = Order::default();
    let holder = taken(&[5], &names);
    // Queued for 5 and 6; 6 is free, but the waiter needs both.
    let queued = waiter("queued", &[5, 6], &names, &order);
    until_tickets(&names, 6, &[1]);
    let error = lock_named(&[6], Duration::ZERO, &mut |_| {}, &names).unwrap_err();
    let busy = error.downcast_ref::<CpusBusy>().expect("typed");
    assert_eq!(
        (busy.cpu, busy.holder.as_deref(), busy.queued),
        (6, None, 1)
    );
    assert!(busy.first_queued.as_deref().unwrap().starts_with(&me()));
    let text = error.to_string();
    assert!(text.contains("the queue for it goes first"), "{text}");
    assert!(text.contains("--wait-for-cpus"), "{text}");
    // One that waits queues behind it, even with its CPU free all along.
    let later = waiter("later", &[6], &names, &order);
    until_tickets(&names, 6, &[2, 1]);
    drop(holder);
    queued.join().unwrap();
    later.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["queued", "later"]);
}

#[test]
fn a_full_queue_is_refused_at_once_and_said_to_be_full() {
    let names = Names::test("full");
    let _holder = taken(&[7], &names);
    let _last = bind_listening(&names.ticket(7, MAX_TICKET)).unwrap();
    let started = Instant::now();
    let error = lock_named(&[7], Duration::from_secs(30), &mut |_| {}, &names).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let busy = error.downcast_ref::<CpusBusy>().expect("typed");
    assert!(busy.queue_full, "{busy}");
    assert!(error.to_string().contains("the queue is full"), "{error}");
}

/// A process of uid 65534 that listens on the abstract `name` until killed.
fn listening_as_nobody(name: &str) -> Option<std::process::Child> {
    use std::os::unix::process::CommandExt;
    const LISTEN: &str = "import socket, sys, time\n\
        s = socket.socket(socket.AF_UNIX)\n\
        s.bind('\\0' + sys.argv[1])\n\
        s.listen(8)\n\
        time.sleep(60)\n";
    std::process::Command::new("python3")
        .args(["-c", LISTEN, name])
        .uid(65534)
        .gid(65534)
        .spawn()
        .ok()
}

#[test]
fn a_ticket_another_user_holds_is_named_with_their_uid_and_waited_for_no_longer_than_asked() {
    if !nix::unistd::geteuid().is_root() {
        rtsoak_testing::skip("a process of another uid needs root to start");
        return;
    }
    let names = Names::test("squat");
    let Some(mut squatter) = listening_as_nobody(&names.ticket(8, 1)) else {
        rtsoak_testing::skip("python3 is not installed");
        return;
    };
    until_tickets(&names, 8, &[1]);
    let started = Instant::now();
    let error = lock_named(&[8], Duration::from_millis(500), &mut |_| {}, &names).unwrap_err();
    let _ = squatter.kill();
    let _ = squatter.wait();
    assert!(started.elapsed() < Duration::from_secs(5));
    let busy = error.downcast_ref::<CpusBusy>().expect("typed");
    let named = format!("pid {}, uid 65534, python3", squatter.id());
    assert!(
        busy.first_queued.as_deref().unwrap().starts_with(&named),
        "{busy}"
    );
    assert!(busy.waited.is_some());
}

#[test]
fn a_second_lock_on_a_shared_cpu_is_refused_naming_the_holder_and_the_way_out() {
    let names = Names::test("second");
    let first = taken(&[5, 4], &names);
    let error = lock_named(&[3, 4], Duration::ZERO, &mut |_| {}, &names).unwrap_err();
    let busy = error.downcast_ref::<CpusBusy>().expect("typed");
    assert_eq!(busy.cpu, 4);
    assert!(busy.holder.as_deref().unwrap().starts_with(&me()), "{busy}");
    let text = error.to_string();
    assert!(text.contains("--wait-for-cpus"), "{text}");
    assert!(text.contains("--rt-cpus"), "{text}");
    // All or none: CPU 3 was not kept locked by the failed attempt.
    drop(taken(&[3], &names));
    drop(first);
    drop(taken(&[3, 4], &names));
}

#[test]
fn a_waiting_lock_is_told_its_place_and_takes_the_cpus_when_the_holder_lets_go() {
    let names = Names::test("wait");
    let first = taken(&[1], &names);
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(600));
        drop(first);
    });
    let mut told = Vec::new();
    let second = lock_named(
        &[1],
        Duration::from_secs(30),
        &mut |w| told.push((w.position, w.changed, w.behind.to_vec())),
        &names,
    )
    .unwrap();
    release.join().unwrap();
    let (position, changed, behind) = &told[0];
    assert_eq!((*position, *changed), (1, true));
    assert_eq!(behind.len(), 1, "{behind:?}");
    assert_eq!(behind[0].role, CpuHolderRole::Holding);
    assert_eq!(behind[0].pid, Some(std::process::id()));
    assert_eq!(
        told.iter().filter(|(_, changed, _)| *changed).count(),
        1,
        "told of a change only once: nobody else queued"
    );
    let wait = second.wait().expect("it waited");
    assert_eq!(wait.queue_position, 1);
    assert!(wait.waited_ns >= 500_000_000, "{wait:?}");
    assert_eq!(tickets(&names, 1), [] as [u32; 0], "its ticket closed");
}

#[test]
fn cpus_nobody_holds_or_queues_for_are_taken_at_once_without_a_wait() {
    let names = Names::test("free");
    let locks = lock_named(&[2, 1, 2], Duration::from_secs(30), &mut |_| {}, &names).unwrap();
    assert!(locks.wait().is_none());
    assert!(tickets(&names, 1).is_empty());
}

#[test]
fn a_wait_that_runs_out_is_refused() {
    let names = Names::test("runs-out");
    let _first = taken(&[1], &names);
    let started = Instant::now();
    let error = lock_named(&[1], Duration::from_millis(300), &mut |_| {}, &names);
    assert!(error.unwrap_err().downcast_ref::<CpusBusy>().is_some());
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[test]
fn nobody_listening_is_told_apart_from_a_holder() {
    assert_eq!(
        listener_of(&format!("rtsoak-test-{}-nobody", std::process::id())),
        Err(Errno::ECONNREFUSED)
    );
}
