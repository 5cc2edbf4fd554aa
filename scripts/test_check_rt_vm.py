"""Self-test of check_rt_vm.py: a good VM result passes, and each way rtsoak can misbehave fails.

Run: python3 -m unittest discover -s scripts -p 'test_*.py'
"""

import contextlib
import copy
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path

import check_rt_vm


def worker(role, cpu, wait=None):
    return {
        "role": role,
        "setup": {"cpus_requested": [cpu], "cpus_observed": [cpu], "policy": "fifo",
                  "priority": 40, "policy_error": None, "memory_locked": True, "wait": wait},
        "hygiene": {"minor_faults": 0, "allocations": 0, "io_wq_workers": 0},
        "counters": {"polled_before_wake": 0},
    }


def noise(cpus_observed=(0, 1), publishers_started=12):
    return {
        "enabled": True, "cpus": [0, 1], "cpus_observed": list(cpus_observed),
        "queue": {"publishers_started": publishers_started, "subscribers_started": 11,
                  "messages_sent": 9000, "messages_received": 17000, "member_misses": 0},
        "bursts": {"bursts": 800, "busy_ns": 90_000_000},
        "load": {"sched": {"operations": 5}, "timers": {"operations": 7}},
    }


def run(transport):
    return {
        "transport": transport, "status": "completed", "reason": None,
        "integrity": {"sent": 100, "delivered": 100, "lost": 0, "wake_errors": 0,
                      "cqe_errors": 0, "fallback_deliveries": 0,
                      "wakes_missing": 0 if check_rt_vm.OWN_WAKE[transport] == "exact" else None,
                      "own_wake": check_rt_vm.OWN_WAKE[transport]},
        "workers": [worker("subscriber", 5, "read" if transport in check_rt_vm.TRIAL_WAITS
                           else None),
                    worker("publisher", 4)],
        "noise": noise(),
        "coordinator": {"tick_ns": 10_000_000, "phase_locked": False,
                        "wakeups_per_s_on_rt_cpus": {"4": 0.0, "5": 0.0}},
        "cpu_busy_percent": {"0": 80.0, "1": 78.5, "2": 1.0, "3": 0.5, "4": 3.0, "5": 2.5},
        "explanation": {"tracing": {"events_missing": [], "events_lost": 0},
                        "series": {"send_call": {"kept": 40, "explained": 18,
                                                 "unexplained_on_cpu": 20},
                                   "delivery": {"kept": 60, "explained": 57}}},
    }


def good_result(expect):
    support = [{"transport": t, "support": {"status": "supported"}}
               for t in check_rt_vm.TRANSPORTS]
    support += [{"transport": t, "support": {"status": "unsupported", "feature": "unmerged",
                                             "probe": "io_uring_register", "errno": "EINVAL"}}
                for t in check_rt_vm.UNMERGED]
    runs = [run(t) for t in check_rt_vm.TRANSPORTS]
    runs += [{"transport": t, "status": "unsupported", "workers": [], "reason": "unmerged",
              "integrity": {"sent": 0, "delivered": 0, "lost": 0}} for t in check_rt_vm.UNMERGED]
    if expect == "no-futex":
        unsupported = {"status": "unsupported", "feature": "IORING_OP_FUTEX_WAIT",
                       "probe": "io_uring opcode probe", "errno": None}
        support[0]["support"] = unsupported
        runs[0] = {"transport": "futex", "status": "unsupported", "workers": [],
                   "reason": "needs IORING_OP_FUTEX_WAIT: io_uring opcode probe says this "
                             "kernel lacks it",
                   "integrity": {"sent": 0, "delivered": 0, "lost": 0}}
    return {
        "schema_version": 3, "interrupted": False, "finished_at": "2026-11-30T12:00:00Z",
        "verdict": {"status": "pass", "pass": True, "failures": [], "breaches": [], "inconclusive": []},
        "host": {"preempt_rt": True, "isolated": [4, 5], "nohz_full": [4, 5],
                 "online": [0, 1, 2, 3, 4, 5], "arch": "x86_64"},
        "caveats": [],
        "plan": {"rt": {"publisher_cpu": 4, "subscriber_cpu": 5, "policy": "fifo",
                        "publisher_priority": 40, "subscriber_priority": 40}},
        "support": support,
        "runs": runs,
    }


def probe_document(result):
    """What `rtsoak probe --json` prints on the same machine as `result`."""
    return {"host": copy.deepcopy(result["host"]), "system_check": {},
            "support": copy.deepcopy(result["support"])}


EXPLAIN_CHECK_TEXT = "round 1: ...: right\n" + check_rt_vm.EXPLAIN_CHECK_PASS + "\n"


def write_vm_directory(directory, result, probe, compare_exit=0, explain_check=None):
    (directory / "result.json").write_text(json.dumps(result))
    (directory / "probe.json").write_text(json.dumps(probe))
    (directory / "explain_check.txt").write_text(explain_check or EXPLAIN_CHECK_TEXT)
    (directory / "explained.json").write_text(json.dumps(result))
    (directory / "explained.exit").write_text("0\n")
    explain_exit = 0 if explain_check is None else 1
    for step, code in [("install", 0), ("payload", 0), ("probe", 0), ("compare", compare_exit),
                       ("explain_check", explain_exit)]:
        (directory / f"{step}.exit").write_text(f"{code}\n")


def run_main(directory, arch="x86_64"):
    """check_rt_vm.main() on a directory, quietly; its exit status."""
    argv = sys.argv
    sys.argv = ["check_rt_vm.py", "--expect", "all", "--arch", arch, str(directory)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return check_rt_vm.main()
    finally:
        sys.argv = argv


def failures(result, expect="all", arch="x86_64"):
    checker = check_rt_vm.Checker("test")
    with contextlib.redirect_stdout(io.StringIO()):
        check_rt_vm.check_result(result, expect, checker, arch)
    return checker.failures


def explanation_failures(result):
    checker = check_rt_vm.Checker("test")
    with contextlib.redirect_stdout(io.StringIO()):
        check_rt_vm.check_explanations(result["runs"], checker)
    return checker.failures


class CheckRtVm(unittest.TestCase):
    def test_a_good_612_result_passes(self):
        self.assertEqual(failures(good_result("all")), 0)

    def test_a_good_61_result_with_futex_skipped_passes(self):
        self.assertEqual(failures(good_result("no-futex"), "no-futex"), 0)

    def test_a_612_kernel_without_futex_fails(self):
        self.assertGreater(failures(good_result("no-futex"), "all"), 0)

    def test_futex_supported_where_it_must_not_be_fails(self):
        self.assertGreater(failures(good_result("all"), "no-futex"), 0)

    def test_a_good_aarch64_result_passes_when_aarch64_is_expected(self):
        result = good_result("all")
        result["host"]["arch"] = "aarch64"
        self.assertEqual(failures(result, arch="aarch64"), 0)

    def test_an_x86_64_result_fails_when_aarch64_is_expected(self):
        self.assertEqual(failures(good_result("all"), arch="aarch64"), 1)

    def test_a_non_rt_kernel_fails(self):
        result = good_result("all")
        result["host"]["preempt_rt"] = False
        self.assertEqual(failures(result), 1)

    def test_a_caveat_that_the_kernel_is_not_rt_or_the_cpus_not_isolated_fails(self):
        for kind in ["kernel.preempt-rt", "cpus.isolated"]:
            result = good_result("all")
            result["caveats"] = [{"severity": "invalidates", "kind": kind, "text": "..."}]
            self.assertEqual(failures(result), 1, kind)

    def test_a_caveat_of_another_kind_passes(self):
        result = good_result("all")
        result["caveats"] = [{"severity": "distorts", "kind": "irq.affinity", "text": "..."}]
        self.assertEqual(failures(result), 0)

    def test_a_coordinator_that_woke_on_an_rt_cpu_fails(self):
        result = good_result("all")
        result["runs"][1]["coordinator"]["wakeups_per_s_on_rt_cpus"]["5"] = 2.0
        self.assertEqual(failures(result), 1)

    def test_a_phase_locked_coordinator_despite_housekeeping_cpus_fails(self):
        result = good_result("all")
        result["runs"][2]["coordinator"].update({"phase_locked": True, "tick_ns": 1_000_000_000})
        self.assertEqual(failures(result), 1)

    def test_a_run_that_recorded_no_coordinator_activity_fails(self):
        result = good_result("all")
        del result["runs"][0]["coordinator"]
        self.assertEqual(failures(result), 2)

    def test_an_rt_pair_off_the_isolated_cpus_fails(self):
        result = good_result("all")
        result["plan"]["rt"]["publisher_cpu"] = 2
        self.assertGreater(failures(result), 0)

    def test_a_worker_that_ran_sched_other_fails(self):
        result = good_result("all")
        result["runs"][1]["workers"][0]["setup"]["policy"] = "other"
        self.assertEqual(failures(result), 1)

    def test_a_worker_at_the_wrong_priority_fails(self):
        result = good_result("all")
        result["runs"][2]["workers"][1]["setup"]["priority"] = 39
        self.assertEqual(failures(result), 1)

    def test_a_worker_seen_on_another_cpu_fails(self):
        result = good_result("all")
        result["runs"][3]["workers"][0]["setup"]["cpus_observed"] = [5, 3]
        self.assertEqual(failures(result), 1)

    def test_a_lost_message_fails(self):
        result = good_result("all")
        result["runs"][0]["integrity"].update({"sent": 100, "delivered": 99, "lost": 1})
        self.assertEqual(failures(result), 1)

    def test_a_run_that_sent_nothing_fails(self):
        result = good_result("all")
        result["runs"][0]["integrity"].update({"sent": 0, "delivered": 0, "lost": 0})
        self.assertEqual(failures(result), 1)

    def test_a_missing_run_fails(self):
        result = good_result("all")
        del result["runs"][2]
        self.assertGreater(failures(result), 0)

    def test_an_interrupted_comparison_fails(self):
        result = good_result("all")
        result["interrupted"] = True
        self.assertEqual(failures(result), 1)

    def test_noise_seen_outside_cpus_0_and_1_fails(self):
        result = good_result("all")
        for entry in result["runs"]:
            if entry["status"] == "completed":
                entry["noise"] = noise(cpus_observed=(0, 3))
        self.assertEqual(failures(result), len(check_rt_vm.TRANSPORTS))

    def test_queue_noise_that_never_started_fails(self):
        result = good_result("all")
        for entry in result["runs"]:
            if entry["status"] == "completed":
                entry["noise"] = noise(publishers_started=0)
        self.assertEqual(failures(result), len(check_rt_vm.TRANSPORTS))

    def test_rt_cpus_as_busy_as_the_noise_cpus_fail(self):
        result = good_result("all")
        result["runs"][0]["cpu_busy_percent"]["5"] = 90.0
        self.assertEqual(failures(result), 1)

    def test_a_load_generator_idle_in_every_run_of_both_comparisons_fails(self):
        result = good_result("all")
        for entry in result["runs"]:
            if entry["status"] == "completed":
                entry["noise"]["load"]["timers"]["operations"] = 0
        checker = check_rt_vm.Checker("test")
        with contextlib.redirect_stdout(io.StringIO()):
            check_rt_vm.check_load_generators(result["runs"], checker)
        self.assertEqual(checker.failures, 1)
        with tempfile.TemporaryDirectory() as tmp:
            write_vm_directory(Path(tmp), result, probe_document(result))
            self.assertEqual(run_main(Path(tmp)), 1)

    def test_a_load_generator_idle_in_one_comparison_only_passes(self):
        idle = good_result("all")
        for entry in idle["runs"]:
            if entry["status"] == "completed":
                entry["noise"]["load"]["timers"]["operations"] = 0
        with tempfile.TemporaryDirectory() as tmp:
            write_vm_directory(Path(tmp), idle, probe_document(idle))
            (Path(tmp) / "explained.json").write_text(json.dumps(good_result("all")))
            self.assertEqual(run_main(Path(tmp)), 0)

    def test_a_load_generator_idle_in_one_run_only_passes(self):
        result = good_result("all")
        result["runs"][0]["noise"]["load"]["timers"]["operations"] = 0
        self.assertEqual(failures(result), 0)

    def test_a_run_without_noise_fails(self):
        result = good_result("all")
        del result["runs"][0]["noise"]
        self.assertEqual(failures(result), 1)

    def test_an_unmerged_transport_that_ran_fails(self):
        result = good_result("all")
        result["runs"][-1]["status"] = "completed"
        self.assertGreater(failures(result), 0)

    def subscriber(self, result, transport):
        entry = next(r for r in result["runs"] if r["transport"] == transport)
        return next(w for w in entry["workers"] if w["role"] == "subscriber")

    def test_a_signalfd_wait_that_went_through_io_wq_fails(self):
        result = good_result("no-futex")
        self.subscriber(result, "signalfd")["hygiene"]["io_wq_workers"] = 1
        self.assertEqual(failures(result, "no-futex"), 1)

    def test_an_rt_publisher_with_an_io_wq_worker_fails(self):
        result = good_result("all")
        result["runs"][1]["workers"][1]["hygiene"]["io_wq_workers"] = 2
        self.assertEqual(failures(result), 1)

    def test_a_result_that_did_not_record_the_io_wq_check_fails(self):
        result = good_result("all")
        for entry in result["runs"]:
            for each in entry["workers"]:
                del each["hygiene"]["io_wq_workers"]
        self.assertEqual(failures(result), 2 * len(check_rt_vm.TRANSPORTS))

    def test_a_subscriber_that_polls_then_reads_passes(self):
        result = good_result("no-futex")
        self.subscriber(result, "signalfd")["setup"]["wait"] = "poll+read"
        self.subscriber(result, "eventfd")["setup"]["wait"] = "poll+read"
        self.assertEqual(failures(result, "no-futex"), 0)

    def test_a_subscriber_that_recorded_no_wait_or_an_unknown_one_fails(self):
        result = good_result("all")
        self.subscriber(result, "signalfd")["setup"]["wait"] = None
        self.subscriber(result, "eventfd")["setup"]["wait"] = "io-wq"
        self.assertEqual(failures(result), 2)

    def test_spikes_the_trace_does_not_account_for_over_10_percent_fail(self):
        result = good_result("all")
        for run in result["runs"][:2]:
            run["explanation"]["series"]["delivery"]["explained"] = 0
        self.assertGreater(explanation_failures(result), 0)

    def test_a_run_that_could_not_be_traced_fails(self):
        result = good_result("all")
        result["runs"][2]["explanation"]["tracing"]["unavailable"] = "tracefs is not mounted"
        self.assertGreater(explanation_failures(result), 0)

    def test_a_run_without_an_explanation_fails(self):
        result = good_result("all")
        del result["runs"][3]["explanation"]
        self.assertGreater(explanation_failures(result), 0)

    def test_a_traced_run_that_lost_a_message_or_whose_transport_failed_fails(self):
        result = good_result("all")
        runs = {entry["transport"]: entry for entry in result["runs"]}
        runs["eventfd"]["integrity"]["fallback_deliveries"] = 1
        runs["msg-ring"]["integrity"].update({"delivered": 99, "lost": 1})
        self.assertEqual(explanation_failures(result), 2)

    def test_an_explained_comparison_that_exited_4_fails(self):
        result = good_result("all")
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result))
            (Path(name) / "explained.exit").write_text("4\n")
            self.assertEqual(run_main(name), 1)

    def test_messages_the_poll_found_before_their_wake_are_reported_not_failed(self):
        result = good_result("all")
        runs = {entry["transport"]: entry for entry in result["runs"]}
        self.subscriber(result, "eventfd")["counters"]["polled_before_wake"] = 2
        self.assertEqual(failures(result), 0)
        self.assertIn("  eventfd: the fallback poll found 2 messages before their wake was sent",
                      check_rt_vm.describe_polls(runs))

    def test_good_explanations_pass(self):
        self.assertEqual(explanation_failures(good_result("all")), 0)

    def test_an_explain_check_that_misnamed_a_round_fails(self):
        result = good_result("all")
        with tempfile.TemporaryDirectory() as directory:
            write_vm_directory(Path(directory), result, probe_document(result),
                               explain_check="round 1: ...: WRONG: holder\nFAIL: 2 of 3\n")
            self.assertEqual(run_main(Path(directory)), 1)

    def test_the_chosen_waits_are_reported(self):
        result = good_result("all")
        self.subscriber(result, "signalfd")["setup"]["wait"] = "poll+read"
        runs = {entry["transport"]: entry for entry in result["runs"]}
        self.assertEqual(check_rt_vm.describe_waits(runs), [
            "  signalfd: the RT subscriber waited with poll+read, io-wq workers 0",
            "  eventfd: the RT subscriber waited with read, io-wq workers 0",
        ])

    def test_a_transport_failure_fails_even_when_every_message_arrived(self):
        result = good_result("all")
        runs = {entry["transport"]: entry for entry in result["runs"]}
        runs["eventfd"]["integrity"]["fallback_deliveries"] = 3
        runs["msg-ring"]["integrity"]["wakes_missing"] = 1
        self.assertEqual(failures(result), 2)

    def test_a_transport_that_could_not_tell_its_own_wakes_apart_as_it_should_fails(self):
        result = good_result("all")
        runs = {entry["transport"]: entry for entry in result["runs"]}
        runs["signalfd"]["integrity"]["own_wake"] = "none"
        self.assertEqual(failures(result), 1)

    def test_a_vm_directory_with_nothing_in_it_fails(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(run_main(directory), 1)

    def test_a_complete_vm_directory_passes(self):
        result = good_result("all")
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result))
            self.assertEqual(run_main(name), 0)

    def test_a_compare_inconclusive_for_missed_periods_alone_passes_with_exit_7(self):
        result = good_result("all")
        result["verdict"].update(status="inconclusive")
        result["verdict"]["pass"] = False
        result["verdict"]["inconclusive"] = [
            {"transport": "futex", "kind": "missed-periods", "message": "futex: 3400 of 4000 missed"}]
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=7)
            self.assertEqual(run_main(name), 0)
            # The exit code must say what the verdict says.
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=0)
            self.assertEqual(run_main(name), 1)

    def test_load_starved_under_emulation_is_accepted_but_a_noise_failure_is_not(self):
        result = good_result("all")
        result["verdict"].update(status="inconclusive")
        result["verdict"]["pass"] = False
        result["verdict"]["inconclusive"] = [
            {"transport": "eventfd", "kind": "noise", "message": "eventfd: the noise did not run as asked"}]
        eventfd = next(r for r in result["runs"] if r["transport"] == "eventfd")
        eventfd["noise"]["idle"] = ["the load generator `net` (1 thread) did no work"]
        eventfd["noise"]["failures"] = 0
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=7)
            self.assertEqual(run_main(name), 0)
            eventfd["noise"]["failures"] = 1
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=7)
            self.assertEqual(run_main(name), 1)

    def test_a_compare_inconclusive_for_anything_but_missed_periods_fails(self):
        result = good_result("all")
        result["verdict"].update(status="inconclusive")
        result["verdict"]["inconclusive"] = [
            {"transport": "futex", "kind": "noise", "message": "futex: the noise did not run as asked"}]
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=7)
            self.assertEqual(run_main(name), 1)

    def test_a_verdict_with_a_failure_fails(self):
        result = good_result("all")
        result["verdict"].update(status="fail")
        result["verdict"]["failures"] = [{"transport": "futex", "kind": "run-failed", "message": "x"}]
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=5)
            self.assertEqual(run_main(name), 1)

    def test_a_failed_compare_inside_the_vm_fails(self):
        result = good_result("all")
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result), compare_exit=4)
            self.assertEqual(run_main(name), 1)

    def test_a_probe_that_printed_only_the_support_list_fails(self):
        result = good_result("all")
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, result["support"])
            self.assertEqual(run_main(name), 1)

    def test_a_probe_that_missed_preempt_rt_fails(self):
        result = good_result("all")
        probe = probe_document(result)
        probe["host"]["preempt_rt"] = False
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe)
            self.assertEqual(run_main(name), 1)

    def test_a_complete_aarch64_vm_directory_passes_only_as_aarch64(self):
        result = good_result("all")
        result["host"]["arch"] = "aarch64"
        with tempfile.TemporaryDirectory() as name:
            write_vm_directory(Path(name), result, probe_document(result))
            self.assertEqual(run_main(name, arch="aarch64"), 0)
            self.assertEqual(run_main(name, arch="x86_64"), 1)

if __name__ == "__main__":
    unittest.main()
