// SPDX-License-Identifier: GPL-2.0-only
/*
 * irq_routing_perf_test
 *
 * Measure the latency of KVM_SET_GSI_ROUTING.  Userspace VMMs rewrite the
 * whole GSI routing table whenever a single MSI/MSI-X vector is unmasked,
 * retargeted or added (e.g. during VFIO MSI-X enable), so the cost of the
 * ioctl as a function of the table size and of how much of the table
 * actually changes matters for interrupt-heavy guests.
 *
 * All table variants are built before the timed loop, only the ioctl itself
 * is timed, after a few untimed updates of the same kind (-w) that let the
 * kernel reach its steady state.  Timings are reported, never asserted on;
 * the test fails only if an ioctl fails or, with --inject, if an interrupt
 * signalled through an irqfd while the routing table is being rewritten is
 * lost.
 *
 * With --mem-vms N, the test instead measures the kernel memory that a VM's
 * routing table keeps: it creates N VMs with an in-kernel irqchip and reads
 * memory.current of its own cgroup v2 cgroup when they are empty, after a
 * few updates with -r routes and after shrinking them to --mem-shrink
 * routes.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "kvm_syscalls.h"
#include "kvm_util.h"
#include "test_util.h"
#include "ucall_common.h"

#include "apic.h"
#include "processor.h"

#define DEFAULT_NR_ROUTES	512
#define DEFAULT_ITERATIONS	1000
#define DEFAULT_INJECT_COUNT	1000
#define DEFAULT_WARMUP		10
#define DEFAULT_MEM_SHRINK	24

/* How long to wait for one injected interrupt; generous for TCG hosts. */
#define INJECT_TIMEOUT_NS	(10ULL * NSEC_PER_SEC)

/*
 * MSI routes use vectors [MSI_VECTOR_BASE, MSI_VECTOR_BASE + MSI_NR_VECTORS).
 * The two precomputed variants of a route use vectors half the range apart,
 * so every route's MSI data differs between the variants.  WAKE_VECTOR is
 * used only to kick halted vCPUs at the end of the test.
 */
#define MSI_VECTOR_BASE		0x30
#define MSI_NR_VECTORS		0xc0
#define WAKE_VECTOR		0xf0

/*
 * With --mix, GSIs 0-23 are routed to the in-kernel PIC/IOAPIC like KVM's
 * default x86 routing: GSIs 0-15 to a PIC pin and to an IOAPIC pin, GSIs
 * 16-23 to an IOAPIC pin only.  MSI routes then start at GSI 24.
 */
#define NR_IRQCHIP_GSIS		24
#define NR_PIC_GSIS		16
#define NR_IRQCHIP_ENTRIES	(NR_PIC_GSIS * 2 + (NR_IRQCHIP_GSIS - NR_PIC_GSIS))

enum test_mode {
	MODE_FULL,
	MODE_CHURN,
	MODE_SAME,
	MODE_GROW,
	NR_MODES,
};

static const char * const mode_names[NR_MODES] = {
	[MODE_FULL] = "full",
	[MODE_CHURN] = "churn",
	[MODE_SAME] = "same",
	[MODE_GROW] = "grow",
};

struct test_params {
	u32 nr_routes;
	u32 iterations;
	bool iterations_set;
	enum test_mode mode;
	u32 nr_irqfds;
	u32 nr_vcpus;
	bool mix;
	bool inject;
	u32 inject_count;
	u32 warmup;
	bool warmup_set;
	const char *pcpu_list;
	u32 mem_vms;
	u32 mem_shrink;
	bool quiet;
};

/* -r as given, range-checked once KVM_CAP_IRQ_ROUTING is known. */
static int routes_arg = DEFAULT_NR_ROUTES;

static struct test_params p = {
	.iterations = DEFAULT_ITERATIONS,
	.mode = MODE_FULL,
	.nr_vcpus = 1,
	.inject_count = DEFAULT_INJECT_COUNT,
	.warmup = DEFAULT_WARMUP,
	.mem_shrink = DEFAULT_MEM_SHRINK,
};

/* With -c: the pCPU of each vCPU thread. */
static u32 vcpu_to_pcpu[KVM_MAX_VCPUS];

/* Host side of the injector. */
static int *irqfds;
static u32 nr_inject_irqfds;
static u64 *host_irq_count;
static u64 nr_injected;
static bool stop_injecting;
static bool inject_timed_out;

/* Guest side: per-vCPU count of received (non-wakeup) interrupts. */
static u64 guest_irq_count[KVM_MAX_VCPUS];
static bool guest_ready[KVM_MAX_VCPUS];
static bool guest_done;

static void guest_irq_handler(struct ex_regs *regs)
{
	u32 id = x2apic_read_reg(APIC_ID);

	if (regs->vector != WAKE_VECTOR)
		WRITE_ONCE(guest_irq_count[id], guest_irq_count[id] + 1);

	x2apic_write_reg(APIC_EOI, 0);
}

static void guest_code(void)
{
	x2apic_enable();
	WRITE_ONCE(guest_ready[x2apic_read_reg(APIC_ID)], true);

	/* STI+HLT: wait for interrupts with no window for a missed wakeup. */
	while (!READ_ONCE(guest_done))
		safe_halt();

	GUEST_DONE();
}

/* Physical destination mode, fixed delivery, edge triggered. */
static void msi_add(struct kvm_irq_routing *r, u32 gsi, u32 vcpu_id, u8 vector)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(vcpu_id),
				X86_MSI_ADDR_HI_DEST(vcpu_id), vector);
}

static void irqchip_entries_add(struct kvm_irq_routing *r)
{
	u32 gsi;

	for (gsi = 0; gsi < NR_IRQCHIP_GSIS; gsi++) {
		if (gsi < NR_PIC_GSIS)
			kvm_gsi_routing_irqchip_add(r, gsi, gsi < 8 ? KVM_IRQCHIP_PIC_MASTER :
								      KVM_IRQCHIP_PIC_SLAVE,
						    gsi % 8);
		kvm_gsi_routing_irqchip_add(r, gsi, KVM_IRQCHIP_IOAPIC, gsi);
	}
}

static void setup_guest_irqs(struct kvm_vm *vm)
{
	int vector;

	if (kvm_has_cap(KVM_CAP_X2APIC_API))
		vm_enable_cap(vm, KVM_CAP_X2APIC_API,
			      KVM_X2APIC_API_USE_32BIT_IDS |
			      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	else
		TEST_REQUIRE(p.nr_vcpus < 255);

	/* Every vector any route can point at has a counting handler. */
	for (vector = MSI_VECTOR_BASE; vector <= WAKE_VECTOR; vector++)
		vm_install_exception_handler(vm, vector, guest_irq_handler);

	host_irq_count = addr_gva2hva(vm, (gva_t)guest_irq_count);
}

static void wait_for_guest_ready(struct kvm_vm *vm, struct kvm_vcpu **vcpus)
{
	u32 i;

	for (i = 0; i < p.nr_vcpus; i++) {
		while (!SYNC_FROM_GUEST_AND_READ(vm, guest_ready[vcpus[i]->id]))
			sched_yield();
	}
}

static void stop_guest(struct kvm_vm *vm, struct kvm_vcpu **vcpus)
{
	struct kvm_msi msi = { .data = WAKE_VECTOR };
	u32 i;
	int r;

	WRITE_AND_SYNC_TO_GUEST(vm, guest_done, true);

	for (i = 0; i < p.nr_vcpus; i++) {
		msi.address_lo = X86_MSI_ADDR_DEST(vcpus[i]->id);
		msi.address_hi = X86_MSI_ADDR_HI_DEST(vcpus[i]->id);
		r = __vm_ioctl(vm, KVM_SIGNAL_MSI, &msi);
		TEST_ASSERT(r > 0, "KVM_SIGNAL_MSI to vCPU %u not delivered, r = %d, errno = %d",
			    vcpus[i]->id, r, errno);
	}
}

static u64 guest_irqs_received(void)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < p.nr_vcpus; i++)
		sum += READ_ONCE(host_irq_count[i]);
	return sum;
}

static bool wait_for_guest_irqs(u64 expected)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (guest_irqs_received() < expected) {
		if (timespec_to_ns(timespec_elapsed(start)) > INJECT_TIMEOUT_NS)
			return false;
		sched_yield();
	}
	return true;
}

static void *injector_thread(void *arg)
{
	u64 i;

	for (i = 0; i < p.inject_count && !READ_ONCE(stop_injecting); i++) {
		int r = eventfd_write(irqfds[i % nr_inject_irqfds], 1);

		TEST_ASSERT(!r, "eventfd_write() failed, errno = %d", errno);
		WRITE_ONCE(nr_injected, i + 1);

		/*
		 * Don't signal again until the guest has consumed this
		 * interrupt: a second edge MSI to the same vCPU and vector
		 * while the first one is still pending in the IRR would be
		 * coalesced, which is legitimate and must not be mistaken for
		 * a lost interrupt.  A lost interrupt stops the injector.
		 */
		if (!wait_for_guest_irqs(i + 1)) {
			WRITE_ONCE(inject_timed_out, true);
			break;
		}
	}
	return NULL;
}

static void *vcpu_thread_main(void *arg)
{
	struct kvm_vcpu *vcpu = arg;
	struct ucall uc;

	vcpu_run(vcpu);

	switch (get_ucall(vcpu, &uc)) {
	case UCALL_DONE:
		break;
	case UCALL_ABORT:
		REPORT_GUEST_ASSERT(uc);
		break;
	default:
		TEST_FAIL("vCPU %u: unexpected exit reason %u (%s)", vcpu->id,
			  vcpu->run->exit_reason,
			  exit_reason_str(vcpu->run->exit_reason));
	}
	return NULL;
}

static u64 set_routing_timed(struct kvm_vm *vm, struct kvm_irq_routing *routing)
{
	struct timespec start, end;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &start);
	r = __kvm_gsi_routing_set(vm, routing);
	clock_gettime(CLOCK_MONOTONIC, &end);

	TEST_ASSERT(!r, "KVM_SET_GSI_ROUTING (nr = %u) failed, rc: %i errno: %i (%s)",
		    routing->nr, r, errno, strerror(errno));
	return timespec_to_ns(timespec_sub(end, start));
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of a sorted array. */
static u64 percentile(const u64 *sorted, u32 n, u32 pct)
{
	u64 rank = ((u64)n * pct + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

/* Square root by Newton's method: the selftests don't link libm. */
static double sqrt_newton(double x)
{
	double r = x > 1 ? x : 1;
	int i;

	if (x <= 0)
		return 0;
	for (i = 0; i < 100; i++)
		r = (r + x / r) / 2;
	return r;
}

/* Population standard deviation of n samples, in ns. */
static double stddev_ns(const u64 *samples, u32 n, u64 total)
{
	double mean = (double)total / n, sum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		sum += (samples[i] - mean) * (samples[i] - mean);
	return sqrt_newton(sum / n);
}

/* memory.current of this process's cgroup v2 cgroup, or -1. */
static int open_memory_current(void)
{
	char line[PATH_MAX], path[PATH_MAX + 32];
	int fd = -1;
	FILE *f;

	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current",
			 line + 3);
		fd = open(path, O_RDONLY);
		break;
	}
	fclose(f);
	return fd;
}

static s64 read_memory_current(int fd)
{
	char buf[32];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	TEST_ASSERT(n > 0, "Reading memory.current failed, errno = %d", errno);
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

static void set_routing_all(struct kvm_vm **vms, struct kvm_irq_routing *routing)
{
	u32 v;

	for (v = 0; v < p.mem_vms; v++)
		set_routing_timed(vms[v], routing);
}

/*
 * Kernel memory kept by the routing tables of --mem-vms VMs, per VM, from
 * memory.current: with memory accounting, every allocation of the tables is
 * charged to the cgroup of the task that makes it.  Each VM first gets a few
 * updates with -r routes, every one changing every route, as in mode full,
 * then a few with the first --mem-shrink routes; each reading is taken after
 * the last of its updates.  memory.current moves in batches (the memcg
 * per-CPU charge cache): use enough VMs that a batch is small per VM.
 */
static void measure_memory(void)
{
	struct kvm_irq_routing *tables[2];
	s64 before, empty, full, shrunk;
	struct kvm_vm **vms;
	struct utsname uts;
	u32 v, i, k;
	int fd;

	fd = open_memory_current();
	__TEST_REQUIRE(fd >= 0,
		       "--mem-vms needs memory.current in this process's cgroup (cgroup v2 with the memory controller, not the root cgroup)");

	for (k = 0; k < 2; k++) {
		tables[k] = kvm_gsi_routing_create();
		for (i = 0; i < p.nr_routes; i++)
			msi_add(tables[k], i, 0, MSI_VECTOR_BASE +
				(i + k * MSI_NR_VECTORS / 2) % MSI_NR_VECTORS);
	}
	vms = calloc(p.mem_vms, sizeof(*vms));
	TEST_ASSERT(vms, "Failed to allocate %u VMs", p.mem_vms);

	before = read_memory_current(fd);
	for (v = 0; v < p.mem_vms; v++) {
		vms[v] = vm_create_barebones();
		vm_create_irqchip(vms[v]);
	}
	empty = read_memory_current(fd);

	for (k = 0; k < 4; k++) {
		tables[k & 1]->nr = p.nr_routes;
		set_routing_all(vms, tables[k & 1]);
	}
	full = read_memory_current(fd);

	for (k = 0; k < 4; k++) {
		tables[k & 1]->nr = p.mem_shrink;
		set_routing_all(vms, tables[k & 1]);
	}
	shrunk = read_memory_current(fd);

	ksft_test_result_pass("memory.current with %u VMs: %u routes, then %u\n",
			      p.mem_vms, p.nr_routes, p.mem_shrink);

	TEST_ASSERT(!uname(&uts), "uname() failed");
	ksft_print_msg("irq_routing_mem: vms=%u routes=%u shrink_routes=%u",
		       p.mem_vms, p.nr_routes, p.mem_shrink);
	printf(" before_bytes=%lld empty_bytes=%lld routes_bytes=%lld shrunk_bytes=%lld",
	       (long long)before, (long long)empty, (long long)full,
	       (long long)shrunk);
	printf(" vm_kib=%.1f routes_kib=%.1f shrunk_kib=%.1f kernel=%s\n",
	       (empty - before) / 1024.0 / p.mem_vms,
	       (full - empty) / 1024.0 / p.mem_vms,
	       (shrunk - empty) / 1024.0 / p.mem_vms, uts.release);

	for (v = 0; v < p.mem_vms; v++)
		kvm_vm_free(vms[v]);
	free(vms);
	free(tables[0]);
	free(tables[1]);
	close(fd);
}

/*
 * Room for the irqfds' eventfds, on top of the vCPUs' files and the margin
 * kvm_set_files_rlimit() allowed for when the VM was created.
 */
static void irqfd_files_rlimit(u32 nr_vcpus, u32 nr_irqfds)
{
	rlim_t want = nr_vcpus * 2 + 100 + nr_irqfds;
	struct rlimit rl;

	TEST_ASSERT(!getrlimit(RLIMIT_NOFILE, &rl), "getrlimit() failed");
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	__TEST_REQUIRE(!setrlimit(RLIMIT_NOFILE, &rl),
		       "RLIMIT_NOFILE is below %lu and cannot be raised",
		       (unsigned long)want);
}

static void help(const char *name)
{
	printf("usage: %s [-h] [-r routes] [-i iterations] [-m mode] [-f irqfds]\n"
	       "       [-v vcpus] [-w warmup] [-c pcpus] [-s seed] [-q] [--mix]\n"
	       "       [--inject] [--inject-count count]\n"
	       "       [--mem-vms vms [--mem-shrink routes]]\n", name);
	puts("");
	puts("Measure the latency of KVM_SET_GSI_ROUTING.");
	puts("");
	printf(" -r, --routes N        number of MSI routes (default %u, max\n"
	       "                       KVM_CAP_IRQ_ROUTING, less 40 with --mix)\n",
	       DEFAULT_NR_ROUTES);
	printf(" -i, --iterations N    number of KVM_SET_GSI_ROUTING calls\n"
	       "                       (default %u, for grow: routes)\n",
	       DEFAULT_ITERATIONS);
	puts(" -m, --mode MODE       what changes between two calls:");
	puts("                       full:  every route's MSI data (default)");
	puts("                       churn: one route's MSI data, rotating");
	puts("                       same:  nothing, identical table");
	puts("                       grow:  call k installs (k % routes) + 1");
	puts("                              MSI routes, as VFIO MSI-X enable;");
	puts("                              its percentiles mix every table");
	puts("                              size from 1 to routes");
	puts(" -f, --irqfds N        attach N irqfds to the first N routes");
	puts(" -v, --vcpus N         number of vCPUs, routes target them");
	puts("                       round-robin (default 1)");
	printf(" -w, --warmup N        untimed updates of the same kind before\n"
	       "                       the timed ones (default %u; grow: none,\n"
	       "                       its pass starts from the empty table)\n",
	       DEFAULT_WARMUP);
	puts(" -s, --seed SEED       random seed for the route vectors");
	puts(" -q, --quiet           print only TAP and the summary line");
	puts("     --mix             also route GSIs 0-23 to the in-kernel");
	puts("                       PIC/IOAPIC, like KVM's default table (x86)");
	puts("     --inject          signal the irqfds during the updates and");
	puts("                       check that the guest receives every");
	puts("                       interrupt (x86, implies -f 1 if -f 0)");
	printf("     --inject-count N  number of interrupts to inject\n"
	       "                       (default %u)\n", DEFAULT_INJECT_COUNT);
	puts("     --mem-vms N       measure memory instead of time: create N");
	puts("                       VMs with an in-kernel irqchip, and print");
	puts("                       memory.current of this process's cgroup");
	puts("                       per VM, empty, with -r routes and after");
	puts("                       shrinking to --mem-shrink routes");
	printf("     --mem-shrink N    routes after shrinking (default %u)\n",
	       DEFAULT_MEM_SHRINK);
	puts("");
	puts(" The vCPU threads run only with --inject; the main task is the");
	puts(" one that calls KVM_SET_GSI_ROUTING.");
	kvm_print_vcpu_pinning_help();
}

enum {
	OPT_MIX = 0x100,
	OPT_INJECT,
	OPT_INJECT_COUNT,
	OPT_MEM_VMS,
	OPT_MEM_SHRINK,
};

static const struct option long_options[] = {
	{ "help",		no_argument,		NULL, 'h' },
	{ "routes",		required_argument,	NULL, 'r' },
	{ "iterations",		required_argument,	NULL, 'i' },
	{ "mode",		required_argument,	NULL, 'm' },
	{ "irqfds",		required_argument,	NULL, 'f' },
	{ "vcpus",		required_argument,	NULL, 'v' },
	{ "warmup",		required_argument,	NULL, 'w' },
	{ "pcpus",		required_argument,	NULL, 'c' },
	{ "seed",		required_argument,	NULL, 's' },
	{ "quiet",		no_argument,		NULL, 'q' },
	{ "mix",		no_argument,		NULL, OPT_MIX },
	{ "inject",		no_argument,		NULL, OPT_INJECT },
	{ "inject-count",	required_argument,	NULL, OPT_INJECT_COUNT },
	{ "mem-vms",		required_argument,	NULL, OPT_MEM_VMS },
	{ "mem-shrink",		required_argument,	NULL, OPT_MEM_SHRINK },
	{ NULL, 0, NULL, 0 },
};

static enum test_mode parse_mode(const char *arg)
{
	int i;

	for (i = 0; i < NR_MODES; i++) {
		if (!strcmp(arg, mode_names[i]))
			return i;
	}
	ksft_exit_fail_msg("Invalid mode '%s', expected full, churn, same or grow\n",
			   arg);
}

static void parse_args(int argc, char *argv[])
{
	int opt;

	while ((opt = getopt_long(argc, argv, "hr:i:m:f:v:w:c:s:q", long_options,
				  NULL)) != -1) {
		switch (opt) {
		case 'r':
			routes_arg = atoi_paranoid(optarg);
			break;
		case 'i':
			p.iterations = atoi_positive("Number of iterations", optarg);
			p.iterations_set = true;
			break;
		case 'm':
			p.mode = parse_mode(optarg);
			break;
		case 'f':
			p.nr_irqfds = atoi_non_negative("Number of irqfds", optarg);
			break;
		case 'v':
			p.nr_vcpus = atoi_positive("Number of vCPUs", optarg);
			break;
		case 'w':
			p.warmup = atoi_non_negative("Number of warm-up updates", optarg);
			p.warmup_set = true;
			break;
		case 'c':
			p.pcpu_list = optarg;
			break;
		case 's':
			kvm_random_seed = atoi_non_negative("Seed", optarg);
			break;
		case 'q':
			p.quiet = true;
			break;
		case OPT_MIX:
			p.mix = true;
			break;
		case OPT_INJECT:
			p.inject = true;
			break;
		case OPT_INJECT_COUNT:
			p.inject_count = atoi_positive("Number of injections", optarg);
			break;
		case OPT_MEM_VMS:
			p.mem_vms = atoi_positive("Number of VMs", optarg);
			break;
		case OPT_MEM_SHRINK:
			p.mem_shrink = atoi_positive("Routes after shrinking", optarg);
			break;
		case 'h':
			help(argv[0]);
			exit(KSFT_PASS);
		default:
			help(argv[0]);
			exit(KSFT_FAIL);
		}
	}
	if (optind < argc) {
		help(argv[0]);
		exit(KSFT_FAIL);
	}
}

static void validate_args(void)
{
	u32 max_routes = kvm_check_cap(KVM_CAP_IRQ_ROUTING);
	u32 nr_extra = p.mix ? NR_IRQCHIP_ENTRIES : 0;

	if (routes_arg < 1 || (u64)routes_arg + nr_extra > max_routes) {
		ksft_print_msg("KVM_CAP_IRQ_ROUTING: at most %u routing entries%s\n",
			       max_routes, p.mix ? ", --mix uses 40" : "");
		ksft_exit_fail_msg("Invalid number of routes %d, must be in [1, %u]\n",
				   routes_arg, max_routes - nr_extra);
	}
	p.nr_routes = routes_arg;

	if (p.nr_irqfds > p.nr_routes)
		ksft_exit_fail_msg("Invalid number of irqfds %u, must be in [0, %u] (routes)\n",
				   p.nr_irqfds, p.nr_routes);

	if (p.nr_vcpus > KVM_MAX_VCPUS ||
	    p.nr_vcpus > kvm_check_cap(KVM_CAP_MAX_VCPUS))
		ksft_exit_fail_msg("Invalid number of vCPUs %u: at most %u supported\n",
				   p.nr_vcpus,
				   min_t(u32, KVM_MAX_VCPUS,
					 kvm_check_cap(KVM_CAP_MAX_VCPUS)));

	if (p.inject && !p.nr_irqfds)
		p.nr_irqfds = 1;

	if (p.mode == MODE_GROW && !p.iterations_set)
		p.iterations = p.nr_routes;

	/* grow's timed pass starts from the table before MSI-X enable. */
	if (p.mode == MODE_GROW) {
		if (p.warmup_set && p.warmup)
			ksft_exit_fail_msg("-w does not apply to grow\n");
		p.warmup = 0;
	}

	if (p.mem_vms && (p.mix || p.inject || p.nr_irqfds ||
			  p.mem_shrink > p.nr_routes))
		ksft_exit_fail_msg("--mem-vms takes -r and --mem-shrink <= -r only\n");

	/* The main task is pinned here if the list has one more entry. */
	if (p.pcpu_list)
		kvm_parse_vcpu_pinning(p.pcpu_list, vcpu_to_pcpu, p.nr_vcpus);
}

int main(int argc, char *argv[])
{
	struct kvm_irq_routing *tables[2], *cur = NULL;
	u64 *lat_ns, *sorted, total_ns = 0;
	pthread_t *vcpu_threads = NULL;
	pthread_t injector;
	struct kvm_vcpu **vcpus;
	u32 nr_irqchip = 0, gsi_base, nr_entries, i, k;
	struct utsname uts;
	struct kvm_vm *vm;
	u64 received = 0;

	parse_args(argc, argv);

	ksft_print_header();
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQ_ROUTING));
	TEST_REQUIRE(kvm_arch_has_default_irqchip());
	if (p.inject)
		TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQFD));

	validate_args();
	ksft_set_plan(p.inject ? 2 : 1);

	if (p.mem_vms) {
		measure_memory();
		ksft_finished();
	}

	vcpus = calloc(p.nr_vcpus, sizeof(*vcpus));
	TEST_ASSERT(vcpus, "Failed to allocate vCPU array");

	__TEST_REQUIRE(!p.mix || kvm_has_in_kernel_ioapic(),
		       "--mix needs a full in-kernel irqchip (KVM_CREATE_IRQCHIP)");
	/* The library sets up an in-kernel irqchip where it has a default one. */
	vm = vm_create_with_vcpus(p.nr_vcpus, guest_code, vcpus);
	if (p.inject)
		setup_guest_irqs(vm);

	/*
	 * Build the table variants.  tables[0] and tables[1] have the same
	 * GSIs and targets, but every MSI route's data (vector) differs.
	 * Routes target the vCPUs round-robin; every vector in use has a
	 * handler in the guest, so any variant delivers any interrupt.
	 */
	nr_entries = p.nr_routes + (p.mix ? NR_IRQCHIP_ENTRIES : 0);
	gsi_base = p.mix ? NR_IRQCHIP_GSIS : 0;
	for (k = 0; k < 2; k++) {
		tables[k] = kvm_gsi_routing_create();
		if (p.mix)
			irqchip_entries_add(tables[k]);
		nr_irqchip = tables[k]->nr;
	}

	for (i = 0; i < p.nr_routes; i++) {
		u32 offset = kvm_random_u64(&kvm_rng) % MSI_NR_VECTORS;
		u32 vcpu_id = vcpus[i % p.nr_vcpus]->id;

		for (k = 0; k < 2; k++)
			msi_add(tables[k], gsi_base + i, vcpu_id, MSI_VECTOR_BASE +
				(offset + k * MSI_NR_VECTORS / 2) % MSI_NR_VECTORS);
	}
	TEST_ASSERT_EQ(tables[0]->nr, nr_entries);

	if (p.mode == MODE_CHURN) {
		cur = kvm_gsi_routing_create();
		memcpy(cur, tables[0], sizeof(*cur) +
		       nr_entries * sizeof(cur->entries[0]));
	}

	/* Install the state the first timed update starts from. */
	switch (p.mode) {
	case MODE_FULL:
		set_routing_timed(vm, tables[1]);
		break;
	case MODE_CHURN:
		set_routing_timed(vm, cur);
		break;
	case MODE_SAME:
		set_routing_timed(vm, tables[0]);
		break;
	case MODE_GROW:
		/* Before MSI-X enable: only the PIC/IOAPIC routes, if any. */
		tables[0]->nr = nr_irqchip;
		set_routing_timed(vm, tables[0]);
		break;
	default:
		TEST_FAIL("Unknown mode %d", p.mode);
	}

	if (p.nr_irqfds) {
		irqfd_files_rlimit(p.nr_vcpus, p.nr_irqfds);
		irqfds = calloc(p.nr_irqfds, sizeof(*irqfds));
		TEST_ASSERT(irqfds, "Failed to allocate irqfd array");
		for (i = 0; i < p.nr_irqfds; i++) {
			irqfds[i] = kvm_new_eventfd();
			kvm_assign_irqfd(vm, gsi_base + i, irqfds[i]);
		}
	}

	/*
	 * Only routes that exist in every variant may be injected, else an
	 * interrupt could legitimately be dropped.  With grow, that is only
	 * the first route.
	 */
	nr_inject_irqfds = p.mode == MODE_GROW ? 1 : p.nr_irqfds;

	lat_ns = calloc(p.iterations, sizeof(*lat_ns));
	sorted = calloc(p.iterations, sizeof(*sorted));
	TEST_ASSERT(lat_ns && sorted, "Failed to allocate %u samples", p.iterations);

	if (!p.quiet) {
		ksft_print_msg("mode=%s routes=%u entries=%u iterations=%u warmup=%u",
			       mode_names[p.mode], p.nr_routes, nr_entries,
			       p.iterations, p.warmup);
		printf(" irqfds=%u vcpus=%u mix=%d inject=%d\n",
		       p.nr_irqfds, p.nr_vcpus, p.mix, p.inject);
	}

	if (p.inject) {
		vcpu_threads = calloc(p.nr_vcpus, sizeof(*vcpu_threads));
		TEST_ASSERT(vcpu_threads, "Failed to allocate vCPU threads");
		for (i = 0; i < p.nr_vcpus; i++) {
			kvm_pthread_create(&vcpu_threads[i], NULL,
					   vcpu_thread_main, vcpus[i]);
			if (p.pcpu_list)
				pin_task_to_cpu(vcpu_threads[i], vcpu_to_pcpu[i]);
		}
		wait_for_guest_ready(vm, vcpus);
		kvm_pthread_create(&injector, NULL, injector_thread, NULL);
	}

	/* The first p.warmup updates are not timed. */
	for (k = 0; k < p.warmup + p.iterations; k++) {
		struct kvm_irq_routing *routing;
		u64 ns;
		u32 idx;

		switch (p.mode) {
		case MODE_FULL:
			routing = tables[k & 1];
			break;
		case MODE_CHURN:
			/* Flip one route between its two precomputed variants. */
			idx = nr_irqchip + k % p.nr_routes;
			cur->entries[idx].u.msi.data =
				cur->entries[idx].u.msi.data ==
				tables[0]->entries[idx].u.msi.data ?
				tables[1]->entries[idx].u.msi.data :
				tables[0]->entries[idx].u.msi.data;
			routing = cur;
			break;
		case MODE_GROW:
			tables[0]->nr = nr_irqchip + k % p.nr_routes + 1;
			routing = tables[0];
			break;
		case MODE_SAME:
		default:
			routing = tables[0];
			break;
		}
		ns = set_routing_timed(vm, routing);
		if (k < p.warmup)
			continue;
		lat_ns[k - p.warmup] = ns;
		total_ns += ns;
	}

	ksft_test_result_pass("%u x KVM_SET_GSI_ROUTING, mode=%s routes=%u\n",
			      p.iterations, mode_names[p.mode], p.nr_routes);

	if (p.inject) {
		WRITE_ONCE(stop_injecting, true);
		kvm_pthread_join(injector, NULL);

		/* Let the guest drain whatever is still in flight. */
		wait_for_guest_irqs(READ_ONCE(nr_injected));
		received = guest_irqs_received();
		TEST_ASSERT(received == nr_injected && !inject_timed_out,
			    "Lost interrupts: %lu signalled through irqfds, %lu received by the guest",
			    (unsigned long)nr_injected, (unsigned long)received);

		stop_guest(vm, vcpus);
		for (i = 0; i < p.nr_vcpus; i++)
			kvm_pthread_join(vcpu_threads[i], NULL);

		ksft_test_result_pass("irqfd delivery: %lu interrupts signalled, %lu received\n",
				      (unsigned long)nr_injected,
				      (unsigned long)received);
	}

	memcpy(sorted, lat_ns, p.iterations * sizeof(*sorted));
	qsort(sorted, p.iterations, sizeof(*sorted), cmp_u64);

	if (!p.quiet) {
		ksft_print_msg("total: %.3f us\n", total_ns / 1000.0);
		ksft_print_msg("average: %.3f us/update\n",
			       total_ns / 1000.0 / p.iterations);
		ksft_print_msg("min: %.3f us/update\n", sorted[0] / 1000.0);
		ksft_print_msg("stddev: %.3f us\n",
			       stddev_ns(lat_ns, p.iterations, total_ns) / 1000.0);
		ksft_print_msg("p50: %.3f us/update\n",
			       percentile(sorted, p.iterations, 50) / 1000.0);
		ksft_print_msg("p99: %.3f us/update\n",
			       percentile(sorted, p.iterations, 99) / 1000.0);
		ksft_print_msg("max: %.3f us/update\n",
			       sorted[p.iterations - 1] / 1000.0);
		if (p.mode == MODE_GROW) {
			ksft_print_msg("grow: %u pass(es) of 1..%u routes, %.3f us/pass\n",
				       DIV_ROUND_UP(p.iterations, p.nr_routes),
				       p.nr_routes,
				       total_ns / 1000.0 * p.nr_routes / p.iterations);
			ksft_print_msg("grow: min, stddev and percentiles mix %s %u routes\n",
				       "every table size from 1 to", p.nr_routes);
		}
	}

	TEST_ASSERT(!uname(&uts), "uname() failed");
	/* One machine-readable line naming every parameter. */
	ksft_print_msg("irq_routing_perf: routes=%u entries=%u iterations=%u mode=%s",
		       p.nr_routes, nr_entries, p.iterations, mode_names[p.mode]);
	printf(" irqfds=%u vcpus=%u mix=%d inject=%d injected=%lu seed=0x%x",
	       p.nr_irqfds, p.nr_vcpus, p.mix, p.inject,
	       (unsigned long)nr_injected, kvm_random_seed);
	printf(" warmup=%u total_us=%.3f avg_us=%.3f min_us=%.3f stddev_us=%.3f",
	       p.warmup, total_ns / 1000.0, total_ns / 1000.0 / p.iterations,
	       sorted[0] / 1000.0,
	       stddev_ns(lat_ns, p.iterations, total_ns) / 1000.0);
	printf(" p50_us=%.3f p99_us=%.3f max_us=%.3f",
	       percentile(sorted, p.iterations, 50) / 1000.0,
	       percentile(sorted, p.iterations, 99) / 1000.0,
	       sorted[p.iterations - 1] / 1000.0);
	printf(" kernel=%s\n", uts.release);

	for (i = 0; i < p.nr_irqfds; i++)
		close(irqfds[i]);
	free(irqfds);
	free(lat_ns);
	free(sorted);
	free(cur);
	free(tables[0]);
	free(tables[1]);
	free(vcpu_threads);
	free(vcpus);
	kvm_vm_free(vm);

	ksft_finished();
}
