// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_SET_GSI_ROUTING from two threads at once, switching between two tables
 * of different size classes, against these readers of the routing table:
 * KVM_IRQ_LINE on MSI and IOAPIC routes, irqfds (MSI: their private copy of
 * the route; IOAPIC: the table, from a work item) and an IOAPIC resampler
 * (the table, on injection and on the guest's EOI).  The routes injected
 * differ between the two tables and every vector is counted: each injection
 * must arrive exactly once, through either table.  Not exercised here: the
 * split irqchip's scan of the routes, SynIC's SINT to GSI mapping, irqfd
 * assignment racing an update.
 *
 * And closing the VM while an update is in flight and irqfds are signalled:
 * the ioctl holds the file, so the VM is destroyed when that update
 * returns; nothing may leak (memory cgroup) and only EBADF may follow.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "cgroup_util.h"
#include "kselftest_harness.h"

#define NR_VCPUS	2
#define FENCE_VEC	0x20
#define IOAPIC_VEC	0xe0		/* + pin */
#define GSI_MSI		50		/* A: vCPU 0, VA; B: vCPU 1, VB */
#define GSI_IO		51		/* A: IOAPIC pin 3; B: pin 4 (edge) */
#define GSI_RES		52		/* IOAPIC pin 5 (level), with a resampler */
#define GSI_HAMMER	53		/* vCPU 1, VH in both tables */
#define VA		0x61
#define VB		0x62
#define VH		0x50		/* below VA and VB's priority class */
#define NR_INJECT	400		/* or as many as fit in RUN_NS */
#define RUN_NS		(30 * 1000000000ull)
#define TIMEOUT_NS	(10 * 1000000000ull)

static u32 irq_count[NR_VCPUS][256] __aligned(4096);
static bool guest_ready[NR_VCPUS];
static bool guest_done;

static void guest_handler(struct ex_regs *regs)
{
	u32 id = x2apic_read_reg(APIC_ID);

	WRITE_ONCE(irq_count[id][regs->vector], irq_count[id][regs->vector] + 1);
	x2apic_write_reg(APIC_EOI, 0);
}

static void guest_code(void)
{
	x2apic_enable();
	WRITE_ONCE(guest_ready[x2apic_read_reg(APIC_ID)], true);
	while (!READ_ONCE(guest_done)) {
		safe_halt();
		cli();
	}
	GUEST_DONE();
}

static void *vcpu_thread(void *arg)
{
	struct kvm_vcpu *vcpu = arg;
	struct ucall uc;

	vcpu_run(vcpu);
	if (get_ucall(vcpu, &uc) == UCALL_ABORT)
		REPORT_GUEST_ASSERT(uc);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_DONE);
	return NULL;
}

static void msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 vec)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(dest), 0, vec);
}

/*
 * Table A (700 entries, GSIs up to 1699) or B (3000, up to 3999): neither
 * fits in the other's memory, so updates free and allocate as well as reuse.
 * GSI_HAMMER comes last: while a table is being filled, it has no route yet.
 */
static struct kvm_irq_routing *build(bool b)
{
	struct kvm_irq_routing *r = kvm_gsi_routing_create();
	u32 i;

	for (i = 0; i < (b ? 3000 : 700); i++)
		msi(r, 1000 + i, 1, 0x90);
	for (i = 3; i <= 4; i++)	/* to lower the pins */
		kvm_gsi_routing_irqchip_add(r, i, KVM_IRQCHIP_IOAPIC, i);
	msi(r, GSI_MSI, b, b ? VB : VA);
	kvm_gsi_routing_irqchip_add(r, GSI_IO, KVM_IRQCHIP_IOAPIC, b ? 4 : 3);
	kvm_gsi_routing_irqchip_add(r, GSI_RES, KVM_IRQCHIP_IOAPIC, 5);
	msi(r, GSI_HAMMER, 1, VH);
	return r;
}

FIXTURE(plain) {};
FIXTURE_SETUP(plain)
{
	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC (CONFIG_KVM_IOAPIC=n)");
}

FIXTURE_TEARDOWN(plain) {}

struct ctx {
	struct kvm_vm *vm;
	bool stop;
	u32 *count;
	u64 updates, hammers;
	u32 seeds;
};

static void *updater(void *arg)
{
	struct ctx *c = arg;
	struct kvm_irq_routing *t[2] = { build(false), build(true) };
	struct kvm_random_state rs =
		new_kvm_random_state(kvm_random_seed + __atomic_add_fetch(&c->seeds, 1,
									  __ATOMIC_RELAXED));

	while (!READ_ONCE(c->stop)) {
		kvm_gsi_routing_set(c->vm, t[kvm_random_bool(&rs)]);
		__atomic_add_fetch(&c->updates, 1, __ATOMIC_RELAXED);
	}
	free(t[0]);
	free(t[1]);
	return NULL;
}

/* GSI_HAMMER has the same route in both tables: it must always deliver. */
static void *hammer(void *arg)
{
	struct ctx *c = arg;
	struct kvm_irq_level irq;

	while (!READ_ONCE(c->stop)) {
		irq = (struct kvm_irq_level){ .irq = GSI_HAMMER, .level = 1 };
		vm_ioctl(c->vm, KVM_IRQ_LINE_STATUS, &irq);
		TEST_ASSERT(irq.status == 1, "GSI %u, routed by both tables, delivered to %d vCPUs",
			    GSI_HAMMER, irq.status);
		__atomic_add_fetch(&c->hammers, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static u32 count(struct ctx *c, int vcpu, int vec)
{
	return READ_ONCE(c->count[vcpu * 256 + vec]);
}

enum { LINE_MSI, IRQFD_MSI, LINE_IO, IRQFD_IO, RESAMPLE, NR_WAYS };

/* The interrupts arrived by @way's route, as either table routes it. */
static u32 arrived(struct ctx *c, int way)
{
	if (way <= IRQFD_MSI)
		return count(c, 0, VA) + count(c, 1, VB);
	if (way <= IRQFD_IO)
		return count(c, 0, IOAPIC_VEC + 3) + count(c, 0, IOAPIC_VEC + 4);
	return count(c, 0, IOAPIC_VEC + 5);
}

/* The interrupts sent by @way's route. */
static u32 sent_by(const u32 *sent, int way)
{
	if (way <= IRQFD_MSI)
		return sent[LINE_MSI] + sent[IRQFD_MSI];
	if (way <= IRQFD_IO)
		return sent[LINE_IO] + sent[IRQFD_IO];
	return sent[RESAMPLE];
}

static void wait_for(struct ctx *c, int way, u32 want, int vcpu)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (way >= 0 ? arrived(c, way) < want : count(c, vcpu, FENCE_VEC) < want) {
		TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < TIMEOUT_NS,
			    "injection %u by way %d lost (vCPU %d fence), %lu updates so far",
			    want, way, vcpu, c->updates);
		sched_yield();
	}
}

/*
 * Wait for the injection, then for a lowest-priority interrupt on each vCPU:
 * once it is taken, a duplicate of the injection would have arrived too.
 */
static void wait_exactly(struct ctx *c, int way, u32 want)
{
	int i;

	wait_for(c, way, want, 0);
	for (i = 0; i < NR_VCPUS; i++) {
		struct kvm_msi m = { .address_lo = X86_MSI_ADDR_DEST(i), .data = FENCE_VEC };
		u32 fences = count(c, i, FENCE_VEC);

		TEST_ASSERT_EQ(__vm_ioctl(c->vm, KVM_SIGNAL_MSI, &m), 1);
		wait_for(c, -1, fences + 1, i);
	}
	TEST_ASSERT(arrived(c, way) == want, "way %d: %u sent, %u arrived", way, want,
		    arrived(c, way));
}

TEST_F_TIMEOUT(plain, two_updaters_vs_readers, 60)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	int efd_msi = kvm_new_eventfd(), efd_io = kvm_new_eventfd();
	struct kvm_irqfd res = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				 .gsi = GSI_RES, .flags = KVM_IRQFD_FLAG_RESAMPLE };
	struct pollfd pfd = { .fd = res.resamplefd, .events = POLLIN };
	pthread_t vcpu_threads[NR_VCPUS], threads[4];
	struct kvm_vcpu *vcpus[NR_VCPUS];
	u32 sent[NR_WAYS] = {}, i, n, v;
	struct timespec start;
	struct ctx c = {};
	eventfd_t cnt;

	c.vm = vm_create_with_vcpus(NR_VCPUS, guest_code, vcpus);
	vm_enable_cap(c.vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS);
	for (i = FENCE_VEC; i < 256; i++)
		vm_install_exception_handler(c.vm, i, guest_handler);
	vm_ioctl(c.vm, KVM_GET_IRQCHIP, &chip);
	for (i = 0; i < KVM_IOAPIC_NUM_PINS; i++) {
		chip.chip.ioapic.redirtbl[i].bits = 0;
		chip.chip.ioapic.redirtbl[i].fields.vector = IOAPIC_VEC + i;
		chip.chip.ioapic.redirtbl[i].fields.trig_mode = i == 5;
	}
	vm_ioctl(c.vm, KVM_SET_IRQCHIP, &chip);
	c.count = addr_gva2hva(c.vm, (gva_t)&irq_count[0][0]);
	kvm_gsi_routing_write(c.vm, build(false));
	kvm_assign_irqfd(c.vm, GSI_MSI, efd_msi);
	kvm_assign_irqfd(c.vm, GSI_IO, efd_io);
	vm_ioctl(c.vm, KVM_IRQFD, &res);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < NR_VCPUS; i++) {
		kvm_pthread_create(&vcpu_threads[i], NULL, vcpu_thread, vcpus[i]);
		while (!SYNC_FROM_GUEST_AND_READ(c.vm, guest_ready[i]))
			TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < TIMEOUT_NS,
				    "vCPU %u never became ready", i);
	}

	kvm_pthread_create(&threads[0], NULL, updater, &c);
	kvm_pthread_create(&threads[1], NULL, updater, &c);
	kvm_pthread_create(&threads[2], NULL, hammer, &c);
	kvm_pthread_create(&threads[3], NULL, hammer, &c);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (n = 0; n < NR_INJECT && timespec_to_ns(timespec_elapsed(start)) < RUN_NS; n++) {
		int way = kvm_random_u32(&kvm_rng) % NR_WAYS;

		if (way == LINE_MSI || way == LINE_IO) {
			kvm_irq_line(c.vm, way == LINE_MSI ? GSI_MSI : GSI_IO, 1);
			kvm_irq_line(c.vm, way == LINE_MSI ? GSI_MSI : GSI_IO, 0);
		} else {
			eventfd_write(way == IRQFD_MSI ? efd_msi : way == IRQFD_IO ? efd_io :
				      res.fd, 1);
		}
		sent[way]++;
		wait_exactly(&c, way, sent_by(sent, way));
		if (way == RESAMPLE) {
			TEST_ASSERT(poll(&pfd, 1, 10000) == 1, "no resample after EOI");
			TEST_ASSERT(!eventfd_read(res.resamplefd, &cnt) && cnt == 1, "resamplefd");
		} else if (way >= LINE_IO) {
			/* The pin raised may not be the pin lowered: lower both. */
			kvm_irq_line(c.vm, 3, 0);
			kvm_irq_line(c.vm, 4, 0);
		}
	}
	WRITE_ONCE(c.stop, true);
	for (i = 0; i < 4; i++)
		kvm_pthread_join(threads[i], NULL);

	WRITE_AND_SYNC_TO_GUEST(c.vm, guest_done, true);
	for (i = 0; i < NR_VCPUS; i++) {
		struct kvm_msi m = { .address_lo = X86_MSI_ADDR_DEST(i), .data = FENCE_VEC };

		__vm_ioctl(c.vm, KVM_SIGNAL_MSI, &m);
		kvm_pthread_join(vcpu_threads[i], NULL);
	}
	/* Nothing but the routes' vectors, each on its vCPU. */
	for (i = 0; i < NR_VCPUS * 256; i++) {
		v = i % 256;
		TEST_ASSERT(!c.count[i] || v == FENCE_VEC || v == (i < 256 ? VA : VB) ||
			    (i >= 256 && v == VH) ||
			    (i < 256 && v >= IOAPIC_VEC + 3 && v <= IOAPIC_VEC + 5),
			    "vCPU %u got vector 0x%x %u times", i / 256, v, c.count[i]);
	}
	ksft_print_msg("%u injections, %lu updates, %lu KVM_IRQ_LINE_STATUS\n", n,
		       c.updates, c.hammers);
	kvm_deassign_irqfd(c.vm, GSI_MSI, efd_msi);
	kvm_deassign_irqfd(c.vm, GSI_IO, efd_io);
	res.flags = KVM_IRQFD_FLAG_DEASSIGN;
	vm_ioctl(c.vm, KVM_IRQFD, &res);
	kvm_vm_free(c.vm);
	close(efd_msi);
	close(efd_io);
	close(res.fd);
	close(res.resamplefd);
}

struct teardown {
	int vm_fd;
	int efd[8];
	struct kvm_irq_routing *r;
	u64 updates;
	bool in_update, stop;
};

static void *teardown_updater(void *arg)
{
	struct teardown *t = arg;
	int ret;

	do {
		WRITE_ONCE(t->in_update, true);
		ret = __kvm_ioctl(t->vm_fd, KVM_SET_GSI_ROUTING, t->r);
		WRITE_ONCE(t->in_update, false);
		if (!ret)
			__atomic_add_fetch(&t->updates, 1, __ATOMIC_RELEASE);
	} while (!ret);
	TEST_ASSERT(errno == EBADF, KVM_IOCTL_ERROR(KVM_SET_GSI_ROUTING, ret));
	return NULL;
}

static void *teardown_signaller(void *arg)
{
	struct teardown *t = arg;
	int i;

	while (!READ_ONCE(t->stop))
		for (i = 0; i < 8; i++)
			eventfd_write(t->efd[i], 1);
	return NULL;
}

#define NR_TEARDOWNS	30

/*
 * Close the VM after at least one update, at a random time while one thread
 * updates its routing and another signals its irqfds.
 */
TEST_F_TIMEOUT(plain, vm_closed_while_updating, 40)
{
	int kvm_fd = open_kvm_dev_path_or_exit(), i, iter, ret, overlaps = 0;
	struct teardown t = { .r = kvm_gsi_routing_create() };
	char root[PATH_MAX], *cg = NULL;
	long before = 0, after;
	pthread_t upd, sig;

	if (!cg_find_unified_root(root, sizeof(root), NULL) &&
	    !cg_read_strstr(root, "cgroup.subtree_control", "memory")) {
		cg = cg_name(root, "kvm_irq_routing_teardown");
		TEST_ASSERT(cg && !cg_create(cg) && !cg_enter_current(cg), "cgroup %s", cg);
	}
	for (i = 0; i < 300; i++)
		msi(t.r, 24 + i, 0, 0x40);
	for (iter = 0; iter <= NR_TEARDOWNS; iter++) {
		if (iter == 1 && cg)	/* the first VM warms up caches */
			before = cg_read_long(cg, "memory.current");
		t.vm_fd = __kvm_ioctl(kvm_fd, KVM_CREATE_VM, NULL);
		TEST_ASSERT(t.vm_fd >= 0, KVM_IOCTL_ERROR(KVM_CREATE_VM, t.vm_fd));
		ret = __kvm_ioctl(t.vm_fd, KVM_CREATE_IRQCHIP, NULL);
		TEST_ASSERT(!ret, KVM_IOCTL_ERROR(KVM_CREATE_IRQCHIP, ret));
		for (i = 0; i < 8; i++) {
			struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .gsi = 24 + i };

			t.efd[i] = irqfd.fd;
			ret = __kvm_ioctl(t.vm_fd, KVM_IRQFD, &irqfd);
			TEST_ASSERT(!ret, KVM_IOCTL_ERROR(KVM_IRQFD, ret));
		}
		t.stop = false;
		t.updates = 0;
		kvm_pthread_create(&upd, NULL, teardown_updater, &t);
		kvm_pthread_create(&sig, NULL, teardown_signaller, &t);
		while (!__atomic_load_n(&t.updates, __ATOMIC_ACQUIRE))
			sched_yield();
		usleep(kvm_random_u32_in_range(&kvm_rng, 0, 2000));
		overlaps += READ_ONCE(t.in_update);
		close(t.vm_fd);
		kvm_pthread_join(upd, NULL);
		WRITE_ONCE(t.stop, true);
		kvm_pthread_join(sig, NULL);
		for (i = 0; i < 8; i++)
			close(t.efd[i]);
	}
	ksft_print_msg("%d of %d closes while an update was in flight\n", overlaps,
		       NR_TEARDOWNS + 1);
	free(t.r);
	close(kvm_fd);
	if (!cg)
		return;
	after = cg_read_long(cg, "memory.current");
	TEST_ASSERT(!cg_enter_current(root) && !cg_destroy(cg), "removing %s", cg);
	free(cg);
	ksft_print_msg("memory.current: %ld KiB after the first VM, %ld KiB at the end\n",
		       before / 1024, after / 1024);
	after = (after - before) / NR_TEARDOWNS;
	TEST_ASSERT(after <= 32 * 1024, "%ld KiB more per VM destroyed: a leak", after / 1024);
}

TEST_HARNESS_MAIN
