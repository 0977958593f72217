// SPDX-License-Identifier: GPL-2.0
/*
 * routeshim.so: LD_PRELOAD into a VMM (QEMU) on a real /dev/kvm.  Wraps
 * ioctl(); for each KVM_SET_GSI_ROUTING it notes the number of entries, the
 * flags (KVM_GSI_ROUTING_PARTIAL = 1 with the RFC), the result and the
 * CLOCK_MONOTONIC time spent in the ioctl, and which KVM_RUN exit of the
 * calling thread it was made in (a count of that thread's KVM_RUN calls, 0
 * outside vCPU threads), so that the calls of one MMIO exit can be grouped.
 * Prints the totals at exit, and when ROUTESHIM_SIGNAL is set, on that
 * signal too (e.g. ROUTESHIM_SIGNAL=12 for SIGUSR2; QEMU uses SIGUSR1).
 *
 * Environment:
 *   ROUTESHIM_OUT    file for the totals (default: stderr), appended to
 *   ROUTESHIM_TRACE  file for one line per call:
 *                    "seq t_ns dur_ns nr flags rc errno tid run_seq"
 *   ROUTESHIM_SIGNAL signal number that prints the totals
 *
 * Build: gcc -O2 -shared -fPIC -o routeshim.so routeshim.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef KVM_GSI_ROUTING_PARTIAL
#define KVM_GSI_ROUTING_PARTIAL (1U << 0)
#endif

#define MAXREC (1u << 18)

struct rec {
	uint64_t t, dur;
	uint32_t nr, flags;
	int32_t rc, err;
	uint32_t tid, run;
};

static int (*real_ioctl)(int, unsigned long, ...);
static struct rec recs[MAXREC];
static uint64_t nrec;			/* calls, also past MAXREC */
static uint64_t t0;
static __thread uint32_t run_seq;
static int printed;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void report(int final)
{
	uint64_t n = __atomic_load_n(&nrec, __ATOMIC_ACQUIRE), i, kept;
	uint64_t ns = 0, ns_full = 0, ns_part = 0, ent = 0, ent_full = 0, ent_part = 0;
	uint64_t full = 0, part = 0, fail = 0, maxdur = 0;
	uint32_t maxnr = 0;
	const char *out = getenv("ROUTESHIM_OUT"), *trace = getenv("ROUTESHIM_TRACE");
	FILE *f = stderr;

	kept = n < MAXREC ? n : MAXREC;
	for (i = 0; i < kept; i++) {
		struct rec *r = &recs[i];

		ns += r->dur;
		ent += r->nr;
		if (r->nr > maxnr)
			maxnr = r->nr;
		if (r->dur > maxdur)
			maxdur = r->dur;
		if (r->rc < 0)
			fail++;
		if (r->flags & KVM_GSI_ROUTING_PARTIAL) {
			part++;
			ns_part += r->dur;
			ent_part += r->nr;
		} else {
			full++;
			ns_full += r->dur;
			ent_full += r->nr;
		}
	}
	if (out && *out) {
		f = fopen(out, "a");
		if (!f)
			f = stderr;
	}
	fprintf(f, "routeshim: %s pid=%d calls=%llu%s failed=%llu total_us=%.1f max_us=%.1f entries=%llu max_nr=%u "
		"full=%llu full_us=%.1f full_entries=%llu partial=%llu partial_us=%.1f partial_entries=%llu\n",
		final ? "exit" : "signal", getpid(), (unsigned long long)n,
		n > MAXREC ? " (trace truncated)" : "", (unsigned long long)fail,
		ns / 1e3, maxdur / 1e3, (unsigned long long)ent, maxnr,
		(unsigned long long)full, ns_full / 1e3, (unsigned long long)ent_full,
		(unsigned long long)part, ns_part / 1e3, (unsigned long long)ent_part);
	if (f != stderr)
		fclose(f);
	if (trace && *trace && final) {
		f = fopen(trace, "w");
		if (!f)
			return;
		fprintf(f, "# seq t_ns dur_ns nr flags rc errno tid run_seq\n");
		for (i = 0; i < kept; i++) {
			struct rec *r = &recs[i];

			fprintf(f, "%llu %llu %llu %u %u %d %d %u %u\n", (unsigned long long)i,
				(unsigned long long)(r->t - t0), (unsigned long long)r->dur,
				r->nr, r->flags, r->rc, r->err, r->tid, r->run);
		}
		fclose(f);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	report(0);	/* not async-signal-safe; good enough for a benchmark */
}

static void fini(void)
{
	if (!__atomic_exchange_n(&printed, 1, __ATOMIC_ACQ_REL))
		report(1);
}

__attribute__((constructor)) static void init(void)
{
	const char *s = getenv("ROUTESHIM_SIGNAL");

	real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
	t0 = now_ns();
	if (s && atoi(s) > 0)
		signal(atoi(s), on_signal);
	atexit(fini);
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	uint64_t t, i;
	int rc, err;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_ioctl)
		real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");

	if (req == KVM_RUN) {
		run_seq++;
		return real_ioctl(fd, req, arg);
	}
	if (req != KVM_SET_GSI_ROUTING)
		return real_ioctl(fd, req, arg);

	t = now_ns();
	rc = real_ioctl(fd, req, arg);
	err = errno;
	i = __atomic_fetch_add(&nrec, 1, __ATOMIC_ACQ_REL);
	if (i < MAXREC) {
		struct kvm_irq_routing *rt = arg;
		struct rec *r = &recs[i];

		r->dur = now_ns() - t;
		r->t = t;
		r->nr = rt ? rt->nr : 0;
		r->flags = rt ? rt->flags : 0;
		r->rc = rc;
		r->err = rc < 0 ? err : 0;
		r->tid = (uint32_t)syscall(SYS_gettid);
		r->run = run_seq;
	}
	errno = err;
	return rc;
}
