// SPDX-License-Identifier: GPL-2.0-only
/*
 * The latency of KVM_SET_GSI_ROUTING, for the update patterns of VMMs, which
 * set the whole table again whenever one MSI-X vector is added, unmasked or
 * retargeted.  Only the ioctl is timed, after untimed updates of the same
 * kind; timings are reported, never asserted on.  With --mem-vms, the memory
 * that VMs' routing tables keep is measured instead.
 */
#include <getopt.h>
#include <limits.h>
#include <sys/utsname.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "cgroup_util.h"

#define MSI_VEC		0x30		/* routes use MSI_VEC + [0, NR_VECS) */
#define NR_VECS		0xc0
#define NR_CHIP_GSIS	24		/* --mix: GSIs 0-15 to PIC and IOAPIC, 16-23 IOAPIC */
#define NR_CHIP_ENTRIES	40

enum { FULL, CHURN, SAME, GROW, NR_MODES };
static const char * const mode_names[] = { "full", "churn", "same", "grow" };

static struct {
	u32 routes, iterations, mode, irqfds, vcpus, warmup, mem_vms, mem_shrink;
	bool mix, quiet;
} p = { .routes = 512, .vcpus = 1, .warmup = 10, .mem_shrink = 24 };

/* An MSI to APIC ID @dest, in the 32-bit x2APIC format. */
static void route_msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 data)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(dest), X86_MSI_ADDR_HI_DEST(dest),
				data);
}

static u64 set_timed(struct kvm_vm *vm, struct kvm_irq_routing *r)
{
	struct timespec start, end;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	ret = __kvm_gsi_routing_set(vm, r);
	clock_gettime(CLOCK_MONOTONIC, &end);
	TEST_ASSERT(!ret, KVM_IOCTL_ERROR(KVM_SET_GSI_ROUTING, ret));
	return timespec_to_ns(timespec_sub(end, start));
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples, in us. */
static double pct_us(const u64 *sorted, u32 n, u32 pct)
{
	u64 rank = ((u64)n * pct + 99) / 100;

	return sorted[rank ? rank - 1 : 0] / 1000.0;
}

/* Population standard deviation in us, by Newton's method: no libm. */
static double stddev_us(const u64 *ns, u32 n, u64 total)
{
	double mean = (double)total / n, var = 0, r;
	u32 i;

	for (i = 0; i < n; i++)
		var += (ns[i] - mean) * (ns[i] - mean) / n;
	r = var > 1 ? var : 1;
	for (i = 0; i < 100 && var > 0; i++)
		r = (r + var / r) / 2;
	return var > 0 ? r / 1000 : 0;
}

/* The cgroup v2 directory of this process, if it has memory.current. */
static bool own_memcg(char *cg)
{
	char root[PATH_MAX], buf[PATH_MAX], *l;

	if (cg_find_unified_root(root, sizeof(root), NULL) ||
	    proc_read_text(0, false, "cgroup", buf, sizeof(buf)) < 0)
		return false;
	l = strstr(buf, "0::");		/* the cgroup v2 line */
	if (!l)
		return false;
	l[strcspn(l, "\n")] = '\0';
	snprintf(cg, PATH_MAX, "%s%s", root, l + 3);
	return cg_read_long(cg, "memory.current") >= 0;
}

/*
 * The memory that the routing tables of --mem-vms VMs keep, from memory.current:
 * after four updates with -r routes, each changing every route, then four with
 * --mem-shrink.  memory.current moves in per-CPU batches: use enough VMs.
 */
static void measure_memory(const char *cg)
{
	struct kvm_vm **vms = calloc(p.mem_vms, sizeof(*vms));
	struct kvm_irq_routing *r = kvm_gsi_routing_create();
	long m[4];		/* before the VMs, empty, with -r routes, shrunk */
	struct utsname uts;
	u32 v, i, k;

	TEST_ASSERT(vms && !uname(&uts), "calloc(), uname()");
	for (i = 0; i < p.routes; i++)
		route_msi(r, i, 0, MSI_VEC + i % NR_VECS);
	m[0] = cg_read_long(cg, "memory.current");
	for (v = 0; v < p.mem_vms; v++) {
		vms[v] = vm_create_barebones();
		vm_create_irqchip(vms[v]);
	}
	m[1] = cg_read_long(cg, "memory.current");
	for (k = 0; k < 8; k++) {
		r->nr = k < 4 ? p.routes : p.mem_shrink;
		for (i = 0; i < r->nr; i++)
			r->entries[i].u.msi.data = MSI_VEC + (i + k * NR_VECS / 2) % NR_VECS;
		for (v = 0; v < p.mem_vms; v++)
			kvm_gsi_routing_set(vms[v], r);
		if (k % 4 == 3)
			m[2 + k / 4] = cg_read_long(cg, "memory.current");
	}
	ksft_test_result_pass("memory.current with %u VMs: %u routes, then %u\n",
			      p.mem_vms, p.routes, p.mem_shrink);
	ksft_print_msg("irq_routing_mem: vms=%u routes=%u shrink_routes=%u",
		       p.mem_vms, p.routes, p.mem_shrink);
	printf(" before_bytes=%ld empty_bytes=%ld routes_bytes=%ld shrunk_bytes=%ld vm_kib=%.1f",
	       m[0], m[1], m[2], m[3], (m[1] - m[0]) / 1024.0 / p.mem_vms);
	printf(" routes_kib=%.1f shrunk_kib=%.1f kernel=%s\n", (m[2] - m[1]) / 1024.0 / p.mem_vms,
	       (m[3] - m[1]) / 1024.0 / p.mem_vms, uts.release);
	for (v = 0; v < p.mem_vms; v++)
		kvm_vm_free(vms[v]);
	free(vms);
	free(r);
}

static void help(const char *name)
{
	printf("usage: %s [-r routes] [-i iterations] [-m full|churn|same|grow] [-f irqfds]\n"
	       "  [-v vcpus] [-s seed] [-q] [--mix] [--mem-vms N [--mem-shrink routes]]\n", name);
	puts(" -r: MSI routes (default 512); -i: timed updates (default 1000, grow: -r)\n"
	     " -m full: every vector changes (default); churn: one, rotating; same: none;\n"
	     "    grow: update k sets (k % routes) + 1 routes, as MSI-X enable does\n"
	     " -f: irqfds on the first routes; -v: vCPUs, targeted round-robin (default 1)\n"
	     " -s: seed of the vectors; -q: print only TAP and the summary line\n"
	     " --mix: also route GSIs 0-23 to the PIC and IOAPIC (40 entries)\n"
	     " --mem-vms: memory.current of this cgroup for N VMs: empty, with -r routes,\n"
	     "    with --mem-shrink (default 24)");
}

static void parse_args(int argc, char *argv[])
{
	enum { MIX = 0x100, MEM_VMS, MEM_SHRINK };
	static const struct option opts[] = {
		{ "mix", no_argument, NULL, MIX },
		{ "mem-vms", required_argument, NULL, MEM_VMS },
		{ "mem-shrink", required_argument, NULL, MEM_SHRINK },
		{}
	};
	const struct { int opt; u32 *val; int min; } nums[] = {
		{ 'r', &p.routes, 1 }, { 'i', &p.iterations, 1 }, { 'f', &p.irqfds, 0 },
		{ 'v', &p.vcpus, 1 }, { 's', &kvm_random_seed, 0 },
		{ MEM_VMS, &p.mem_vms, 1 }, { MEM_SHRINK, &p.mem_shrink, 1 },
	};
	const struct { int opt; bool *val; } flags[] = { { 'q', &p.quiet }, { MIX, &p.mix } };
	int opt, i, n;

	while ((opt = getopt_long(argc, argv, "hr:i:m:f:v:s:q", opts, NULL)) != -1) {
		for (i = 0; i < ARRAY_SIZE(nums) && nums[i].opt != opt; i++)
			;
		if (i < ARRAY_SIZE(nums)) {
			n = atoi_paranoid(optarg);
			if (n < nums[i].min)
				ksft_exit_fail_msg("Invalid argument '%s'\n", optarg);
			*nums[i].val = n;
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(flags) && flags[i].opt != opt; i++)
			;
		if (i < ARRAY_SIZE(flags)) {
			*flags[i].val = true;
			continue;
		}
		for (p.mode = 0; opt == 'm' && p.mode < NR_MODES; p.mode++)
			if (!strcmp(optarg, mode_names[p.mode]))
				break;
		if (opt != 'm' || p.mode == NR_MODES) {
			help(argv[0]);
			exit(opt == 'h' ? KSFT_PASS : KSFT_FAIL);
		}
	}
	if (optind < argc) {
		help(argv[0]);
		exit(KSFT_FAIL);
	}
}

static void check_args(void)
{
	u32 max = kvm_check_cap(KVM_CAP_IRQ_ROUTING) - (p.mix ? NR_CHIP_ENTRIES : 0);
	u32 max_vcpus = min_t(u32, KVM_MAX_VCPUS, kvm_check_cap(KVM_CAP_MAX_VCPUS));

	if (p.routes > max)
		ksft_exit_fail_msg("-r %u: at most %u\n", p.routes, max);
	if (p.irqfds > p.routes || p.vcpus > max_vcpus)
		ksft_exit_fail_msg("-f %u, -v %u: at most %u irqfds, %u vCPUs\n",
				   p.irqfds, p.vcpus, p.routes, max_vcpus);
	if (p.mode == GROW)
		p.warmup = 0;	/* its pass starts from the table before MSI-X enable */
	if (!p.iterations)
		p.iterations = p.mode == GROW ? p.routes : 1000;
	if (p.mem_vms && (p.mix || p.irqfds || p.mem_shrink > p.routes))
		ksft_exit_fail_msg("--mem-vms takes -r and --mem-shrink <= -r only\n");
}

int main(int argc, char *argv[])
{
	u32 nr_chip = 0, base, entries, i, k, *data;
	struct kvm_irq_routing *t[2], *r;
	u64 *ns, total = 0;
	struct kvm_vcpu **vcpus;
	char cg[PATH_MAX];
	struct utsname uts;
	struct kvm_vm *vm;
	double sd;

	parse_args(argc, argv);
	ksft_print_header();
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQ_ROUTING));
	check_args();
	__TEST_REQUIRE(!p.mix || kvm_has_in_kernel_ioapic(),
		       "--mix needs a full in-kernel irqchip (KVM_CREATE_IRQCHIP)");
	__TEST_REQUIRE(!p.mem_vms || own_memcg(cg),
		       "--mem-vms needs memory.current in this process's cgroup v2 cgroup");
	kvm_set_files_rlimit(p.vcpus + DIV_ROUND_UP(p.irqfds, 2));	/* and the irqfds */
	ksft_set_plan(1);
	if (p.mem_vms) {
		measure_memory(cg);
		ksft_finished();
	}

	vcpus = calloc(p.vcpus, sizeof(*vcpus));
	ns = calloc(p.iterations, sizeof(*ns));
	TEST_ASSERT(vcpus && ns, "calloc()");
	vm = vm_create_with_vcpus(p.vcpus, NULL, vcpus);	/* the vCPUs never run */

	/* Two variants of the table: same GSIs and vCPUs, every MSI vector different. */
	entries = p.routes + (p.mix ? NR_CHIP_ENTRIES : 0);
	base = p.mix ? NR_CHIP_GSIS : 0;
	for (k = 0; k < 2; k++) {
		t[k] = kvm_gsi_routing_create();
		for (i = 0; i < base; i++) {
			if (i < 16)	/* KVM_IRQCHIP_PIC_MASTER, KVM_IRQCHIP_PIC_SLAVE */
				kvm_gsi_routing_irqchip_add(t[k], i, i / 8, i % 8);
			kvm_gsi_routing_irqchip_add(t[k], i, KVM_IRQCHIP_IOAPIC, i);
		}
		nr_chip = t[k]->nr;
	}
	for (i = 0; i < p.routes; i++) {
		u32 off = kvm_random_u64(&kvm_rng) % NR_VECS;

		for (k = 0; k < 2; k++)
			route_msi(t[k], base + i, vcpus[i % p.vcpus]->id,
				  MSI_VEC + (off + k * NR_VECS / 2) % NR_VECS);
	}

	/* The state the first timed update starts from: for grow, before MSI-X enable. */
	if (p.mode == GROW)
		t[0]->nr = nr_chip;
	set_timed(vm, t[p.mode == FULL]);
	for (i = 0; i < p.irqfds; i++)
		kvm_assign_irqfd(vm, base + i, kvm_new_eventfd());

	for (k = 0; k < p.warmup + p.iterations; k++) {
		u64 d;

		r = t[0];
		if (p.mode == FULL) {
			r = t[k & 1];
		} else if (p.mode == CHURN) {
			/* Flip one route of t[0] to its other variant. */
			data = &t[0]->entries[nr_chip + k % p.routes].u.msi.data;
			*data = MSI_VEC + (*data - MSI_VEC + NR_VECS / 2) % NR_VECS;
		} else if (p.mode == GROW) {
			t[0]->nr = nr_chip + k % p.routes + 1;
		}
		d = set_timed(vm, r);
		if (k >= p.warmup) {
			ns[k - p.warmup] = d;
			total += d;
		}
	}
	ksft_test_result_pass("%u x KVM_SET_GSI_ROUTING, mode=%s routes=%u\n",
			      p.iterations, mode_names[p.mode], p.routes);

	sd = stddev_us(ns, p.iterations, total);
	qsort(ns, p.iterations, sizeof(*ns), cmp_u64);
	if (!p.quiet)
		ksft_print_msg("%u updates: %.3f us average, p50 %.3f, p99 %.3f, max %.3f%s\n",
			       p.iterations, total / 1000.0 / p.iterations,
			       pct_us(ns, p.iterations, 50), pct_us(ns, p.iterations, 99),
			       ns[p.iterations - 1] / 1000.0,
			       p.mode == GROW ? " (grow: mixing every table size)" : "");
	TEST_ASSERT(!uname(&uts), "uname()");
	/* One machine-readable line naming every parameter. */
	ksft_print_msg("irq_routing_perf: routes=%u entries=%u iterations=%u mode=%s",
		       p.routes, entries, p.iterations, mode_names[p.mode]);
	printf(" irqfds=%u vcpus=%u mix=%u seed=0x%x", p.irqfds, p.vcpus, p.mix, kvm_random_seed);
	printf(" warmup=%u total_us=%.3f avg_us=%.3f min_us=%.3f stddev_us=%.3f",
	       p.warmup, total / 1000.0, total / 1000.0 / p.iterations, ns[0] / 1000.0, sd);
	printf(" p50_us=%.3f p99_us=%.3f max_us=%.3f kernel=%s\n", pct_us(ns, p.iterations, 50),
	       pct_us(ns, p.iterations, 99), ns[p.iterations - 1] / 1000.0, uts.release);
	kvm_vm_free(vm);
	free(t[0]);
	free(t[1]);
	free(ns);
	free(vcpus);
	ksft_finished();
}
