/*
 * Independent reference for `rtsoak bench futex-wait-wake`: the same cycle written directly
 * against liburing, to show the Rust harness is not what is measured.
 *
 * One ring (no setup flags), K cacheline-separated private futex words, the calling thread
 * pinned to one CPU (SCHED_FIFO 40 when allowed, memory locked). A timed cycle queues K
 * IORING_OP_FUTEX_WAIT (user data 0..K-1) then K IORING_OP_FUTEX_WAKE (user data K..2K-1),
 * submits them with one io_uring_enter that waits for all 2K completions (1 s timeout), and
 * validates every completion: waits return 0, wakes return 1. A round is W cycles between two
 * CLOCK_MONOTONIC reads; ns per pair = round time / (cycles * K).
 *
 * liburing 2.3 (Debian 12) has no futex helpers and its headers predate the futex opcodes,
 * so the opcodes and futex2 flags are spelled out from the kernel UAPI below.
 *
 * Usage: futex_wait_wake [K=32] [WARMUP=3] [ROUNDS=15] [CYCLES=512] [CPU=1]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <liburing.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define OP_FUTEX_WAIT 51          /* IORING_OP_FUTEX_WAIT, Linux 6.7 */
#define OP_FUTEX_WAKE 52          /* IORING_OP_FUTEX_WAKE */
#define FUTEX2_SIZE_U32 0x02
#define FUTEX2_PRIVATE 128
#define MATCH_ANY 0xffffffffull

struct line { uint32_t word; char pad[60]; } __attribute__((aligned(64)));

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void prep_futex(struct io_uring_sqe *sqe, int op, uint32_t *word, uint64_t val,
		       uint64_t user_data)
{
	if (!sqe) { /* cannot happen: the SQ holds a whole cycle and every cycle is drained */
		fprintf(stderr, "submission queue full\n");
		exit(5);
	}
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE; /* futex2 flags */
	sqe->addr = (uint64_t)(uintptr_t)word;
	sqe->off = val;                              /* wait: expected value; wake: count */
	sqe->addr3 = MATCH_ANY;                      /* bitset mask */
	sqe->user_data = user_data;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned k = argc > 1 ? atoi(argv[1]) : 32;
	unsigned warmup = argc > 2 ? atoi(argv[2]) : 3;
	unsigned rounds = argc > 3 ? atoi(argv[3]) : 15;
	unsigned cycles = argc > 4 ? atoi(argv[4]) : 512;
	int cpu = argc > 5 ? atoi(argv[5]) : 1;
	if (k == 0 || rounds == 0 || cycles == 0) {
		fprintf(stderr, "K, ROUNDS and CYCLES must be at least 1\n");
		return 2;
	}

	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("sched_setaffinity");
	struct sched_param param = { .sched_priority = 40 };
	if (sched_setscheduler(0, SCHED_FIFO, &param))
		perror("sched_setscheduler (continuing as SCHED_OTHER)");
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		perror("mlockall");

	struct line *words = aligned_alloc(64, k * sizeof(struct line));
	memset(words, 0, k * sizeof(struct line));
	unsigned entries = 8;
	while (entries < 2 * k)
		entries *= 2;
	struct io_uring ring;
	struct io_uring_params params = { .flags = IORING_SETUP_CQSIZE, .cq_entries = 2 * entries };
	int rc = io_uring_queue_init_params(entries, &ring, &params);
	if (rc) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-rc));
		return 5;
	}

	double *ns_per_pair = calloc(warmup + rounds, sizeof(double));
	unsigned invalid = 0;
	struct __kernel_timespec timeout = { .tv_sec = 1 };
	for (unsigned r = 0; r < warmup + rounds; r++) {
		uint64_t bad = 0, seen_total = 0;
		int failed = 0;
		int cpu_start = sched_getcpu();
		uint64_t start = now_ns();
		for (unsigned c = 0; c < cycles && !failed; c++) {
			for (unsigned i = 0; i < k; i++)
				prep_futex(io_uring_get_sqe(&ring), OP_FUTEX_WAIT, &words[i].word, 0, i);
			for (unsigned i = 0; i < k; i++)
				prep_futex(io_uring_get_sqe(&ring), OP_FUTEX_WAKE, &words[i].word, 1, k + i);
			unsigned seen = 0;
			while (seen < 2 * k) {
				struct io_uring_cqe *cqe;
				rc = io_uring_submit_and_wait_timeout(&ring, &cqe, 2 * k - seen, &timeout, NULL);
				if (rc < 0 && rc != -EINTR) {
					failed = 1;
					break;
				}
				unsigned head, n = 0;
				io_uring_for_each_cqe(&ring, head, cqe) {
					int expected = cqe->user_data < k ? 0 : 1;
					bad += cqe->res != expected;
					n++;
				}
				io_uring_cq_advance(&ring, n);
				seen += n;
			}
			seen_total += seen;
		}
		uint64_t end = now_ns();
		int cpu_end = sched_getcpu();
		ns_per_pair[r] = (double)(end - start) / ((double)cycles * k);
		int valid = !failed && !bad && seen_total == 2ull * k * cycles &&
			    cpu_start == cpu && cpu_end == cpu;
		if (r >= warmup && !valid)
			invalid++;
		printf("round %2u%s %10.3f ns/pair %s\n", r, r < warmup ? " (warm-up)" : "          ",
		       ns_per_pair[r], valid ? "valid" : "INVALID");
	}

	double *m = ns_per_pair + warmup, sum = 0, sq = 0;
	for (unsigned r = 0; r < rounds; r++)
		sum += m[r];
	double mean = sum / rounds;
	for (unsigned r = 0; r < rounds; r++)
		sq += (m[r] - mean) * (m[r] - mean);
	double cv = rounds > 1 ? sqrt(sq / (rounds - 1)) / mean * 100 : 0;
	qsort(m, rounds, sizeof(double), cmp_double);
	double median = rounds % 2 ? m[rounds / 2] : (m[rounds / 2 - 1] + m[rounds / 2]) / 2;
	printf("mean %.3f ns/pair, median %.3f, CV %.3f%%, %u invalid measured rounds\n", mean,
	       median, cv, invalid);
	io_uring_queue_exit(&ring);
	return invalid ? 5 : 0;
}
