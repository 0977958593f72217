// SPDX-License-Identifier: GPL-2.0-only
/*
 * After every kind of KVM_SET_GSI_ROUTING update, interrupts go where the
 * new table says: through KVM_IRQ_LINE and an irqfd assigned after the
 * update (both read the installed table) and through an irqfd assigned
 * before it, and kept across all updates (its private copy of the route must
 * be refreshed).  Every probe counts all vectors on all vCPUs, so a stray or
 * duplicate interrupt fails.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>

#include "hyperv.h"
#include "cgroup_util.h"
#include "kselftest_harness.h"
#include "irq_routing.h"

#define GSI		40		/* has the fixture's long-lived irqfd */
#define V1		0x41
#define V2		0x42
#define NONE		0u
#define HIT(v, vec)	(0x10000u | (v) << 8 | (vec))
#define MULTI		0x80000000u

struct rt {
	struct irq_vm g;
	struct kvm_irq_routing *r;
	int efd;		/* irqfd on GSI, assigned before every update */
};

FIXTURE(rt) { struct rt t; };

static void set(struct rt *t)
{
	kvm_gsi_routing_set(t->g.vm, t->r);
	t->r->nr = 0;
}

static void rt_init(struct rt *t)
{
	int i;

	irq_vm_create(&t->g, 0);
	t->r = kvm_gsi_routing_create();
	t->efd = kvm_new_eventfd();
	kvm_assign_irqfd(t->g.vm, GSI, t->efd);
	/*
	 * Two tables of the tests' shape with other routes, so that every
	 * update below may reuse memory that held other routes (the first
	 * ones after KVM_CREATE_IRQCHIP would get fresh memory).
	 */
	for (i = 0; i < 2; i++) {
		route_msi(t->r, GSI, 1, 0x50 + i);
		route_msi(t->r, GSI + 1, 0, 0x52 + i);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 2, KVM_IRQCHIP_IOAPIC, 10 + i);
		set(t);
	}
}

static void rt_fini(struct rt *t)
{
	if (!t->g.vm)
		return;
	irq_vm_free(&t->g);
	close(t->efd);
	free(t->r);
}

static void rt_start(struct __test_metadata *_metadata, struct rt *t)
{
	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)");
	rt_init(t);
}

/* What arrived since @snap, fences aside: NONE, HIT(vcpu, vector) or MULTI. */
static u32 since(struct rt *t, const u32 *snap)
{
	u32 res = NONE;
	int i;

	for (i = 0; i < NR_VCPUS * 256; i++) {
		u32 d = READ_ONCE(t->g.count[i]) - snap[i];

		if (!d || i % 256 == FENCE_VEC)
			continue;
		res = (res || d > 1) ? MULTI : HIT(i / 256, i % 256);
	}
	return res;
}

enum { VIA_LINE, VIA_NEW_IRQFD, VIA_OLD_IRQFD, NR_VIA };
static const char * const via_name[] = { "KVM_IRQ_LINE", "new irqfd", "old irqfd" };

static u32 probe(struct rt *t, u32 gsi, int via, u32 want)
{
	u32 snap[NR_VCPUS * 256];
	int efd;

	irq_vm_start(&t->g);
	memcpy(snap, t->g.count, sizeof(snap));
	if (via == VIA_LINE) {
		kvm_irq_line(t->g.vm, gsi, 1);
		kvm_irq_line(t->g.vm, gsi, 0);
	} else if (via == VIA_NEW_IRQFD) {
		efd = kvm_new_eventfd();
		kvm_assign_irqfd(t->g.vm, gsi, efd);
		TEST_ASSERT(!eventfd_write(efd, 1), "eventfd_write() failed");
		/* De-assigning flushes the irqfd's injection work. */
		kvm_deassign_irqfd(t->g.vm, gsi, efd);
		close(efd);
	} else {
		/*
		 * The irqfd stays assigned.  Its MSI and SINT injections are
		 * synchronous; IOAPIC ones run from a work item, so wait for
		 * an expected interrupt before the fence.
		 */
		TEST_ASSERT(!eventfd_write(t->efd, 1), "eventfd_write() failed");
		WAIT_FOR(want == NONE || since(t, snap) != NONE);
		/*
		 * Nothing expected: give a late injection work time to run, so
		 * that an interrupt it delivers is not blamed on the next probe.
		 * With no route, irqfd_inject() reads the table when the work
		 * runs, so a late one injects through the next step's route;
		 * 100 ms was seen too short on a loaded TCG host.
		 */
		if (want == NONE)
			usleep(500 * 1000);
	}
	irq_vm_fence(&t->g);
	return since(t, snap);
}

/* The old irqfd is on GSI only; other GSIs are probed the two other ways. */
static void expect(struct rt *t, u32 gsi, u32 want, const char *what)
{
	int via;

	for (via = 0; via < NR_VIA; via++) {
		u32 got;

		if (via == VIA_OLD_IRQFD && gsi != GSI)
			continue;
		got = probe(t, gsi, via, want);
		TEST_ASSERT(got == want, "%s: GSI %u via %s delivered 0x%x, expected 0x%x",
			    what, gsi, via_name[via], got, want);
	}
}

FIXTURE_SETUP(rt) { rt_start(_metadata, &self->t); }
FIXTURE_TEARDOWN(rt) { rt_fini(&self->t); }

/*
 * Route changes of GSI that each change one thing, each step probed.  An
 * irqfd keeps a private copy of its GSI's route only if there is one route.
 * HV_SINT steps: dest is the vCPU, data the SINT; SynIC is enabled on both
 * vCPUs, SINT1 is V1 on both, SINT2 V2 on vCPU 0.
 */
enum { END, MSI, IOAPIC, PIC_IOAPIC, NO_ROUTE, HV };

FIXTURE(retarget) { struct rt t; };
FIXTURE_VARIANT(retarget) { struct { u32 type, dest, data, want; } step[3]; };
FIXTURE_SETUP(retarget) { rt_start(_metadata, &self->t); }
FIXTURE_TEARDOWN(retarget) { rt_fini(&self->t); }

FIXTURE_VARIANT_ADD(retarget, vector) {
	.step = { { MSI, 0, V1, HIT(0, V1) }, { MSI, 0, V2, HIT(0, V2) } },
};

FIXTURE_VARIANT_ADD(retarget, destination_only) {
	.step = { { MSI, 0, V1, HIT(0, V1) }, { MSI, 1, V1, HIT(1, V1) } },
};

/* With 32-bit x2APIC IDs, address_hi holds destination bits 31:8. */
FIXTURE_VARIANT_ADD(retarget, address_hi_only) {
	.step = { { MSI, 0, V1, HIT(0, V1) }, { MSI, 0x100, V1, NONE },
		  { MSI, 0, V1, HIT(0, V1) } },
};

FIXTURE_VARIANT_ADD(retarget, delivery_mode_only) {
	.step = { { MSI, 0, V1, HIT(0, V1) },
		  { MSI, 0, APIC_DM_NMI | V1, HIT(0, NMI_VECTOR) } },
};

FIXTURE_VARIANT_ADD(retarget, ioapic_pin_only) {
	.step = { { IOAPIC, 3, 0, HIT(0, IOAPIC_VEC + 3) },
		  { IOAPIC, 4, 0, HIT(0, IOAPIC_VEC + 4) } },
};

FIXTURE_VARIANT_ADD(retarget, ioapic_to_msi_and_back) {
	.step = { { IOAPIC, 3, 0, HIT(0, IOAPIC_VEC + 3) }, { MSI, 1, V1, HIT(1, V1) },
		  { IOAPIC, 3, 0, HIT(0, IOAPIC_VEC + 3) } },
};

FIXTURE_VARIANT_ADD(retarget, one_route_to_two_and_back) {
	.step = { { MSI, 1, V1, HIT(1, V1) }, { PIC_IOAPIC, 3, 0, HIT(0, IOAPIC_VEC + 3) },
		  { MSI, 1, V2, HIT(1, V2) } },
};

FIXTURE_VARIANT_ADD(retarget, removed_and_back) {
	.step = { { MSI, 0, V1, HIT(0, V1) }, { NO_ROUTE, 0, 0, NONE },
		  { MSI, 1, V2, HIT(1, V2) } },
};

FIXTURE_VARIANT_ADD(retarget, hv_sint_only) {
	.step = { { HV, 0, 1, HIT(0, V1) }, { HV, 0, 2, HIT(0, V2) }, { HV, 0, 1, HIT(0, V1) } },
};

FIXTURE_VARIANT_ADD(retarget, hv_sint_vcpu_only) {
	.step = { { HV, 0, 1, HIT(0, V1) }, { HV, 1, 1, HIT(1, V1) }, { MSI, 0, V2, HIT(0, V2) } },
};

static void enable_synic(struct rt *t)
{
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		vcpu_enable_cap(t->g.vcpus[i], KVM_CAP_HYPERV_SYNIC, 0);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SCONTROL, 1);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SINT0 + 1, V1);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SINT0 + 2, i ? BIT(16) /* masked */ : V2);
	}
}

TEST_F_TIMEOUT(retarget, route_change, 300)
{
	struct rt *t = &self->t;
	struct kvm_irq_routing *r = t->r;
	char what[16];
	int i;

	if (variant->step[0].type == HV) {
		if (!kvm_has_cap(KVM_CAP_HYPERV_SYNIC))
			SKIP(return, "no KVM_CAP_HYPERV_SYNIC");
		enable_synic(t);
	}
	for (i = 0; i < 3 && variant->step[i].type != END; i++) {
		u32 dest = variant->step[i].dest;

		if (variant->step[i].type == MSI)
			route_msi(r, GSI, dest, variant->step[i].data);
		if (variant->step[i].type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_PIC_MASTER, dest);
		if (variant->step[i].type == IOAPIC || variant->step[i].type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_IOAPIC, dest);
		if (variant->step[i].type == HV)
			r->entries[r->nr++] = (struct kvm_irq_routing_entry){ .gsi = GSI,
				.type = KVM_IRQ_ROUTING_HV_SINT,
				.u.hv_sint = { .vcpu = dest, .sint = variant->step[i].data } };
		route_msi(r, GSI + 1, 1, V2);		/* the table is never empty */
		set(t);
		snprintf(what, sizeof(what), "step %d", i + 1);
		expect(t, GSI, variant->step[i].want, what);
	}
}

static u32 vec_of(u32 gsi, u32 step)
{
	return 0x30 + (gsi + step) % 0xa0;
}

/* Set @n MSI routes, on GSI and down from @top; probe both. */
static void set_span(struct rt *t, u32 n, u32 top, u32 step)
{
	u32 g;

	route_msi(t->r, GSI, 0, vec_of(GSI, step));
	for (g = top; t->r->nr < n; g--)
		if (g != GSI)
			route_msi(t->r, g, g & 1, vec_of(g, step));
	set(t);
	TEST_ASSERT_EQ(probe(t, top, VIA_LINE, 0), HIT(top & 1, vec_of(top, step)));
	expect(t, GSI, HIT(0, vec_of(GSI, step)), "GSI");
}

/*
 * Tables whose entry count and GSI range change independently (a reused
 * table needs room for both), then tables of 2^k - 1 and 2^k + 1 routes
 * for k = 6..12: growth across kmalloc's power-of-two buckets, and from
 * 8 KiB on across the switch to whole pages.
 */
TEST_F_TIMEOUT(rt, grow_across_capacities, 300)
{
	static const u32 steps[][2] = {
		{ 2, 4095 }, { 3, 4094 },	/* few entries, high GSIs */
		{ 1000, 1100 }, { 999, 1100 },	/* many entries, low GSIs */
		{ 2, 4095 }, { 1000, 1100 },
	};
	struct rt *t = &self->t;
	u32 k, n, i;

	for (i = 0; i < ARRAY_SIZE(steps); i++)
		set_span(t, steps[i][0], steps[i][1], i);
	for (k = 6; k <= 12; k++)
		for (n = BIT(k) - 1; n <= BIT(k) + 1 && n < KVM_MAX_IRQ_ROUTES; n += 2)
			set_span(t, n, min_t(u32, GSI + n, KVM_MAX_IRQ_ROUTES - 1), k + n);
}

/* A rejected update leaves the installed table as it was. */
TEST_F(rt, rejected_update_keeps_table)
{
	struct rt *t = &self->t;
	int big, ret;

	for (big = 0; big < 2; big++) {
		route_msi(t->r, GSI, 0, V1);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, 5);
		set(t);
		route_msi(t->r, GSI, 1, V2);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, 6);
		/* A big table does not fit in any memory the old one left. */
		while (big && t->r->nr < 1000)
			route_msi(t->r, 100 + t->r->nr, 1, V2);
		route_msi(t->r, GSI + 2, 0, V2);
		t->r->entries[t->r->nr - 1].type = 0xff;
		ret = __kvm_gsi_routing_set(t->g.vm, t->r);
		TEST_ASSERT(ret == -1 && errno == EINVAL, "bad table: ret %d errno %d", ret, errno);
		t->r->nr = 0;
		expect(t, GSI, HIT(0, V1), "after -EINVAL");
		expect(t, GSI + 1, HIT(0, IOAPIC_VEC + 5), "after -EINVAL");
	}
}

/*
 * This thread's /proc/thread-self/fail-nth, or -1 if fault injection cannot
 * fail the allocations of an update: that needs CONFIG_FAULT_INJECTION,
 * CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC and CONFIG_FAULT_INJECTION_DEBUG_FS,
 * and failslab and fail_page_alloc set to fail GFP_KERNEL allocations too
 * ("N" in their debugfs ignore-gfp-wait), which the tests do not set up
 * themselves.
 */
static int fail_nth_open(void)
{
	char buf[4];

	if (read_text("/sys/kernel/debug/failslab/ignore-gfp-wait", buf, sizeof(buf)) < 1 ||
	    buf[0] != 'N' ||
	    read_text("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", buf, sizeof(buf)) < 1 ||
	    buf[0] != 'N')
		return -1;
	return open("/proc/thread-self/fail-nth", O_RDWR);
}

#define FAIL_NTH_SKIP	"needs fail-nth with failslab and fail_page_alloc failing GFP_KERNEL allocations"

static void fail_nth_arm(int fd, int n)
{
	char buf[16];

	TEST_ASSERT(pwrite(fd, buf, sprintf(buf, "%d", n), 0) > 0, "fail-nth");
}

/*
 * Disarm fail-nth and return what was left of the count it was armed with:
 * 0 if the fault was injected.  With CONFIG_FAULT_INJECTION_USERCOPY, the
 * read's own copy_to_user() is a fault-injection point: if 1 was left, it
 * fails the read.
 */
static int fail_nth_disarm(int fd)
{
	char buf[16];
	int len, left;

	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len < 0 && errno == EFAULT) {
		left = 1;
	} else {
		TEST_ASSERT(len > 0, "fail-nth");
		buf[len] = '\0';
		left = atoi(buf);
	}
	TEST_ASSERT(pwrite(fd, "0", 1, 0) == 1, "fail-nth");
	return left;
}

/*
 * Make each fault-injection point of one update fail in turn through
 * /proc/thread-self/fail-nth (see fail_nth_open()), on a fresh VM each time
 * so that every call starts from the same cached memory.  No array is
 * large enough (60 entries, GSIs below 256) to come from vmalloc; a failed
 * copy_from_user() (fail-nth also counts should_fail_usercopy()) gives
 * -EFAULT.  The update fails, or succeeds if the failure was absorbed, and
 * the installed table is whole either way.
 */
TEST_F_TIMEOUT(rt, failed_allocation_keeps_table, 300)
{
	struct rt *t = &self->t;
	int fd, n, ret, err, failed = 0;

	fd = fail_nth_open();
	if (fd < 0)
		SKIP(return, FAIL_NTH_SKIP);
	for (n = 1; n <= 64; n++) {
		if (n > 1) {
			rt_fini(t);
			rt_init(t);
		}
		route_msi(t->r, GSI, 0, V1);
		set(t);
		route_msi(t->r, GSI, 1, V2);
		while (t->r->nr < 60)
			route_msi(t->r, 150 + t->r->nr, 1, V2);
		fail_nth_arm(fd, n);
		ret = __kvm_gsi_routing_set(t->g.vm, t->r);
		err = errno;
		t->r->nr = 0;
		if (fail_nth_disarm(fd))	/* fewer than n injection points: done */
			break;
		if (!ret) {
			expect(t, GSI, HIT(1, V2), "failure absorbed");
			continue;
		}
		TEST_ASSERT(err == ENOMEM || err == EFAULT, "failure %d: errno %d", n, err);
		expect(t, GSI, HIT(0, V1), "after a failed update");
		failed++;
	}
	close(fd);
	TEST_ASSERT(failed, "no update failed: fail-nth reached no injection point");
}

/*
 * Update VM to @nr MSI routes (vector @vec), the last one with @last_gsi and
 * @last_flags, and return how many fault-injection points the update reached
 * (fail-nth counts allocations and copies from userspace), or -errno if it
 * failed.
 */
static int update_points(struct rt *t, int fd, u32 nr, u32 vec, u32 last_gsi,
			 u32 last_flags)
{
	int ret, err, left;
	u32 i;

	for (i = 0; i < nr; i++)
		route_msi(t->r, i == nr - 1 ? last_gsi : i, i % NR_VCPUS, vec);
	t->r->entries[nr - 1].flags = last_flags;
	fail_nth_arm(fd, 100000);
	ret = __kvm_gsi_routing_set(t->g.vm, t->r);
	err = errno;
	left = fail_nth_disarm(fd);
	t->r->nr = 0;
	if (ret)
		return -err;
	return 100000 - left;
}

/*
 * The fewest points of three updates of @nr routes that follow two of the
 * same size: an allocation of every update shows in each of them, one that
 * a debug kernel makes now and then on the task's behalf (a debugobjects
 * pool refill, say) does not.
 */
static int steady_points(struct rt *t, int fd, u32 nr)
{
	int i, n, least = INT_MAX;

	for (i = 0; i < 5; i++) {
		n = update_points(t, fd, nr, i & 1 ? V2 : V1, nr - 1, 0);
		TEST_ASSERT(n >= 0, "update of %u routes: errno %d", nr, -n);
		if (i >= 2)
			least = min(least, n);
	}
	return least;
}

/*
 * In steady state an update allocates nothing: it is built in the memory of
 * the table that the update before it retired, whatever the table's size and
 * the allocator's rounding of it, and an update refused before (bad GSI) or
 * after (bad flags) its GSI map is fitted gives that memory back.  So every
 * such update reaches the fault-injection points of a one-route update.  A
 * 4096-route update after one-route ones must allocate, which shows that
 * fail-nth counts allocations at all.  A kernel that allocates each entry
 * on every update (as 7.3.4 does) reaches at least 63 more points at 64
 * routes than at 1, and is not checked.
 */
TEST_F_TIMEOUT(rt, steady_state_update_allocates_nothing, 300)
{
	static const u32 sizes[] = { 24, 64, 100, 128, 200, 256, 400, 512, 1024, 4096 };
	struct rt *t = &self->t;
	int fd, base, n, i;

	fd = fail_nth_open();
	if (fd < 0)
		SKIP(return, FAIL_NTH_SKIP);
	base = steady_points(t, fd, 1);
	if (steady_points(t, fd, 64) - base >= 63)
		SKIP(return, "this kernel allocates every entry on every update");
	n = update_points(t, fd, 4096, V2, 4095, 0);
	TEST_ASSERT(n > base,
		    "fail-nth counted no allocation in a 4096-route update (%d points, %d)",
		    n, base);

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		n = steady_points(t, fd, sizes[i]);
		TEST_ASSERT(n == base,
			    "%u routes: a steady-state update reached %d injection points, not %d",
			    sizes[i], n, base);
		TEST_ASSERT_EQ(update_points(t, fd, sizes[i], V2, KVM_MAX_IRQ_ROUTES, 0), -EINVAL);
		n = update_points(t, fd, sizes[i], V2, sizes[i] - 1, 0);
		TEST_ASSERT(n == base, "%u routes, after a bad GSI: %d injection points, not %d",
			    sizes[i], n, base);
		TEST_ASSERT_EQ(update_points(t, fd, sizes[i], V1, sizes[i] - 1, 0x80), -EINVAL);
		n = update_points(t, fd, sizes[i], V1, sizes[i] - 1, 0);
		TEST_ASSERT(n == base, "%u routes, after bad flags: %d injection points, not %d",
			    sizes[i], n, base);
	}
	close(fd);
}

/*
 * An IOAPIC resampler across a change of its GSI's pin, from 5 to 20 (made
 * level-triggered, 20 beyond the PIC's pins): the guest's EOI of pin 20
 * resamples, that of pin 5 no longer does.  The pin-20 table is set twice,
 * so that it is last built in the memory of the pin-5 table (an update
 * reuses the table retired by the one before): a reused table whose pin map
 * was not reset still maps pin 5 to the GSI.  Pin 5's vector is then sent
 * as an MSI: as the pin is level-triggered, KVM intercepts the vector's EOI,
 * and its IOAPIC notifies whatever GSI pin 5 maps to.
 */
TEST_F(rt, resample_across_route_change)
{
	static const int pins[] = { 5, 20, 20 };
	struct rt *t = &self->t;
	struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				   .gsi = GSI + 1, .flags = KVM_IRQFD_FLAG_RESAMPLE };
	struct pollfd pfd = { .fd = irqfd.resamplefd, .events = POLLIN };
	u32 snap[NR_VCPUS * 256];
	eventfd_t cnt;
	int i;

	irq_vm_start(&t->g);
	irq_vm_set_ioapic(&t->g, BIT(5) | BIT(20));
	for (i = 0; i < ARRAY_SIZE(pins); i++) {
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, pins[i]);
		set(t);
		if (!i)
			vm_ioctl(t->g.vm, KVM_IRQFD, &irqfd);
		memcpy(snap, t->g.count, sizeof(snap));
		TEST_ASSERT(!eventfd_write(irqfd.fd, 1), "eventfd_write() failed");
		TEST_ASSERT(poll(&pfd, 1, TIMEOUT_MS) == 1,
			    "pin %d: no resample after the guest's EOI", pins[i]);
		TEST_ASSERT(!eventfd_read(irqfd.resamplefd, &cnt) && cnt == 1,
			    "pin %d: resamplefd", pins[i]);
		irq_vm_fence(&t->g);
		TEST_ASSERT_EQ(since(t, snap), HIT(0, IOAPIC_VEC + pins[i]));
	}
	memcpy(snap, t->g.count, sizeof(snap));
	TEST_ASSERT_EQ(irq_vm_msi(&t->g, 0, IOAPIC_VEC + 5), 1);
	irq_vm_fence(&t->g);
	TEST_ASSERT_EQ(since(t, snap), HIT(0, IOAPIC_VEC + 5));
	TEST_ASSERT(poll(&pfd, 1, 0) == 0,
		    "EOI of pin 5 resampled GSI %u, routed to pin 20: stale pin map", GSI + 1);
	close(irqfd.fd);
	close(irqfd.resamplefd);
}

/*
 * Installing a table maps SynIC SINTs to their GSI for EOI notification, for
 * the vCPUs whose SynIC is active at that time: the identical table set again
 * after SynIC is enabled must map the SINT, as a new one would.
 */
TEST_F(rt, hv_sint_synic_later)
{
	struct rt *t = &self->t;
	struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				   .gsi = GSI + 1, .flags = KVM_IRQFD_FLAG_RESAMPLE };
	struct pollfd pfd = { .fd = irqfd.resamplefd, .events = POLLIN };

	if (!kvm_has_cap(KVM_CAP_HYPERV_SYNIC))
		SKIP(return, "no KVM_CAP_HYPERV_SYNIC");
	t->r->nr = 1;
	t->r->entries[0] = (struct kvm_irq_routing_entry){ .gsi = GSI + 1,
		.type = KVM_IRQ_ROUTING_HV_SINT, .u.hv_sint = { .vcpu = 0, .sint = 1 } };
	kvm_gsi_routing_set(t->g.vm, t->r);
	enable_synic(t);
	kvm_gsi_routing_set(t->g.vm, t->r);
	irq_vm_start(&t->g);
	vm_ioctl(t->g.vm, KVM_IRQFD, &irqfd);
	TEST_ASSERT(!eventfd_write(irqfd.fd, 1), "eventfd_write() failed");
	TEST_ASSERT(poll(&pfd, 1, TIMEOUT_MS) == 1,
		    "EOI of the SINT vector did not resample: SINT not mapped to its GSI");
	TEST_ASSERT_EQ(t->g.count[V1], 1);
	close(irqfd.fd);
	close(irqfd.resamplefd);
}

/* The memory cgroup of memory_shrink_rule, if any: removed even on failure. */
FIXTURE(plain) { char cg[256]; };
FIXTURE_SETUP(plain) {}
FIXTURE_TEARDOWN_PARENT(plain)
{
	if (self->cg[0] && rmdir(self->cg) && errno != ENOENT)
		ksft_print_msg("cannot remove %s: %s\n", self->cg, strerror(errno));
}

#define NR_MEM_VMS	16

/* Set @n routes on every VM, twice (a table and a retired one); memory.current */
static long set_n_routes(const char *cg, struct kvm_vm **vms, struct kvm_irq_routing *r, u32 n)
{
	int i;

	for (r->nr = 0; r->nr < n;)
		route_msi(r, r->nr, 0, V1);
	for (i = 0; i < 2 * NR_MEM_VMS; i++)
		kvm_gsi_routing_set(vms[i / 2], r);
	return cg_read_long(cg, "memory.current");
}

/*
 * The kernel's bound on what a VM keeps: a VM whose table shrank keeps no
 * memory sized for the larger table (see irq_routing_fits() in
 * virt/kvm/irqchip.c).  The thresholds below check that bound, not an ABI:
 * a different caching policy could legitimately change them.  NR_MEM_VMS
 * VMs in a memory cgroup of this process, kvm_irq_routing_shrink.PID,
 * created under the root of the cgroup v2 hierarchy (and removed by the
 * fixture's teardown, in the parent, even if the test fails) get
 * 24 routes, then 4096, then 24 again, and memory.current is read after each
 * step.  Shrunk, they may hold more than with 24 routes before by less than a
 * quarter of what the 4096-route tables took: a kernel that keeps a table
 * sized for 4096 routes holds at least half of that more (after 4096 routes
 * set twice, a VM holds two such tables), a correct one about nothing more.
 * The test runs on one CPU, so that memory.current, charged in per-CPU
 * batches of 64 pages, is off by one batch at most in a difference of two
 * readings: the check then holds for a correct kernel and fails for one that
 * keeps a large table if those took over 5 batches.  The test skips if they
 * took less than the 4096 entries userspace passed, for every VM (about 12
 * batches with 4 KiB pages): kernel memory not accounted.
 */
TEST_F_TIMEOUT(plain, memory_shrink_rule, 300)
{
	struct kvm_vm *vms[NR_MEM_VMS];
	struct kvm_irq_routing *r;
	long base, big, after, min_big;
	char root[PATH_MAX], *cg = self->cg;
	cpu_set_t cpu;
	int i;

	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)");
	if (cg_find_unified_root(root, sizeof(root), NULL) ||
	    cg_read_strstr(root, "cgroup.subtree_control", "memory"))
		SKIP(return, "no cgroup v2 with the memory controller enabled for children");
	if (snprintf(cg, sizeof(self->cg), "%s/kvm_irq_routing_shrink.%d", root,
		     getpid()) >= sizeof(self->cg) || cg_create(cg) || cg_enter_current(cg))
		SKIP(return, "cannot create and enter the memory cgroup %s", cg);
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	TEST_ASSERT(!sched_setaffinity(0, sizeof(cpu), &cpu), "sched_setaffinity()");
	r = kvm_gsi_routing_create();
	min_big = NR_MEM_VMS * KVM_MAX_IRQ_ROUTES * sizeof(r->entries[0]);
	memset(r->entries, 0, KVM_MAX_IRQ_ROUTES * sizeof(r->entries[0]));
	for (i = 0; i < NR_MEM_VMS; i++) {
		vms[i] = vm_create_barebones();
		TEST_ASSERT_EQ(__vm_ioctl(vms[i], KVM_CREATE_IRQCHIP, NULL), 0);
	}
	base = set_n_routes(cg, vms, r, 24);
	big = set_n_routes(cg, vms, r, KVM_MAX_IRQ_ROUTES);
	after = set_n_routes(cg, vms, r, 24);
	for (i = 0; i < NR_MEM_VMS; i++)
		kvm_vm_free(vms[i]);
	free(r);
	TEST_ASSERT(!cg_enter_current(root) && !cg_destroy(cg), "removing %s", cg);
	TH_LOG("per VM: 4096 routes took %ld KiB, shrunk to 24 it holds %ld KiB more",
	       (big - base) / NR_MEM_VMS / 1024, (after - base) / NR_MEM_VMS / 1024);
	if (big - base < min_big)
		SKIP(return, "memory.current did not see the routing tables");
	TEST_ASSERT((after - base) * 4 < big - base,
		    "a VM shrunk from 4096 to 24 routes keeps memory sized for 4096");
}

/* Split irqchip: the IOAPIC EOI exits come from a scan of the MSI routes. */
static void guest_eoi_handler(struct ex_regs *regs)
{
	x2apic_write_reg(APIC_EOI, 0);
	GUEST_SYNC(regs->vector);
}

static void guest_eoi_code(void)
{
	x2apic_enable();
	for (;;) {
		GUEST_SYNC(0);
		sti_nop_cli();
	}
}

/*
 * Let the vCPU rescan with nothing pending (a pending vector is handled),
 * interrupt it with @vector and say whether its EOI exited to userspace.
 */
static bool eoi_exits(struct kvm_vcpu *vcpu, u32 dest_lo, u32 dest_hi, u32 vector)
{
	struct kvm_msi m = { .address_lo = X86_MSI_ADDR_DEST(dest_lo), .address_hi = dest_hi,
			     .data = vector };
	bool exited = false;
	struct ucall uc;

	vcpu_run(vcpu);
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_SYNC);
	TEST_ASSERT_EQ(uc.args[1], 0);
	TEST_ASSERT_EQ(__vm_ioctl(vcpu->vm, KVM_SIGNAL_MSI, &m), 1);
	vcpu_run(vcpu);
	if (vcpu->run->exit_reason == KVM_EXIT_IOAPIC_EOI) {
		TEST_ASSERT_EQ(vcpu->run->eoi.vector, vector);
		exited = true;
		vcpu_run(vcpu);
	}
	TEST_ASSERT_EQ(get_ucall(vcpu, &uc), UCALL_SYNC);
	TEST_ASSERT_EQ(uc.args[1], vector);
	return exited;
}

#define EOI_VCPU	0x100
#define EOI_GSI		5		/* an IOAPIC pin */

/*
 * A level-triggered MSI route of an IOAPIC pin, for APIC ID 0x100 in the
 * 32-bit format (address_hi 0x100).  With 8-bit IDs it is for APIC ID 0, and
 * the vCPU (APIC ID 0x100) does not handle its EOI.  KVM_CAP_X2APIC_API
 * requests no scan; setting the identical table again must: the vCPU's EOI
 * of the vector then exits to the VMM's IOAPIC.
 */
TEST_F(plain, split_irqchip_same_table_after_x2apic_api)
{
	struct vm_shape shape = VM_SHAPE_DEFAULT;
	struct kvm_irq_routing *r;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	if (!kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP) || !kvm_has_cap(KVM_CAP_SET_BOOT_CPU_ID) ||
	    !kvm_has_cap(KVM_CAP_X2APIC_API))
		SKIP(return, "no KVM_CAP_SPLIT_IRQCHIP, SET_BOOT_CPU_ID or X2APIC_API");
	shape.flags = VM_SHAPE_SPLIT_IRQCHIP;
	r = kvm_gsi_routing_create();
	vm = __vm_create(shape, 1, 0);
	vm_ioctl(vm, KVM_SET_BOOT_CPU_ID, (void *)EOI_VCPU);
	vcpu = vm_vcpu_add(vm, EOI_VCPU, guest_eoi_code);
	vm_install_exception_handler(vm, V1, guest_eoi_handler);

	kvm_gsi_routing_msi_add(r, EOI_GSI, X86_MSI_ADDR_BASE, EOI_VCPU, APIC_INT_LEVELTRIG | V1);
	kvm_gsi_routing_set(vm, r);
	TEST_ASSERT(!eoi_exits(vcpu, 0xff, 0, V1), "EOI exit for a route to APIC ID 0");
	vm_enable_cap(vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS);
	kvm_gsi_routing_set(vm, r);
	TEST_ASSERT(eoi_exits(vcpu, 0, EOI_VCPU, V1),
		    "no EOI exit: the same table set again did not rescan the IOAPIC routes");
	kvm_vm_free(vm);
	free(r);
}

/*
 * Xen: the shared_info page holds vCPU N's vcpu_info in its slot N (long
 * mode), then the evtchn_pending bitmap.  The vCPUs never run: KVM marks an
 * event pending in guest memory.  Each port is in its own pending word.
 */
#define XEN_HYPERCALL_MSR	0x40000000	/* as xen_shinfo_test */
#define XEN_GPA		0xc0000000ull
#define XGSI		60		/* the long-lived irqfd's */
enum { PA = 15, PB = 66, P0 = 130, P1 = 200 };
#define XHIT(v, port)	(0x20000u | (v) << 12 | (port))

struct xen_shinfo {
	struct { u8 upcall_pending, upcall_mask; u64 pending_sel, pad[6]; } vcpu[32];
	u64 pending[64];
};

struct xen { struct kvm_vm *vm; struct xen_shinfo *s; struct kvm_irq_routing *r; int efd; };

static void xen_vcpu_add(struct kvm_vm *vm, u32 id)
{
	struct kvm_xen_vcpu_attr vi = { .type = KVM_XEN_VCPU_ATTR_TYPE_VCPU_INFO,
					.u.gpa = XEN_GPA + id * 64 };
	struct kvm_vcpu *vcpu = vm_vcpu_add(vm, id, guest_code);

	vcpu_ioctl(vcpu, KVM_XEN_VCPU_SET_ATTR, &vi);
}

/* XGSI to @port on vCPU @vcpu, XGSI + 1 and + 2 to P0 on vCPU 0 and P1 on vCPU 1. */
static void xen_set(struct xen *x, u32 vcpu, u32 port)
{
	const u32 rt[3][2] = { { vcpu, port }, { 0, P0 }, { 1, P1 } };
	int i;

	for (i = 0; i < 3; i++)
		x->r->entries[i] = (struct kvm_irq_routing_entry){ .gsi = XGSI + i,
			.type = KVM_IRQ_ROUTING_XEN_EVTCHN, .u.xen_evtchn = { .vcpu = rt[i][0],
			.port = rt[i][1], .priority = KVM_IRQ_ROUTING_XEN_EVTCHN_PRIO_2LEVEL } };
	x->r->nr = 3;
	kvm_gsi_routing_set(x->vm, x->r);
}

/*
 * Signal the long-lived irqfd (@old) or a fresh one on @gsi; what is pending,
 * then cleared: XHIT(vcpu, port) if one port is and one vCPU's vcpu_info flags
 * it (upcall_pending, the port's word alone in evtchn_pending_sel), NONE if
 * nothing is, else MULTI.
 */
static u32 xen_probe(struct xen *x, u32 gsi, bool old, u32 want)
{
	u32 i, port = 0, nports = 0, v = 0, nv = 0, res = MULTI;
	int efd = old ? x->efd : kvm_new_eventfd();
	struct xen_shinfo *s = x->s;

	if (!old)
		kvm_assign_irqfd(x->vm, gsi, efd);
	TEST_ASSERT(!eventfd_write(efd, 1), "eventfd_write() failed");
	if (!old) {
		kvm_deassign_irqfd(x->vm, gsi, efd);	/* flushes the injection work */
		close(efd);
	}
	/* The old irqfd injects from a work item if the fast path cannot. */
	WAIT_FOR(want == NONE || READ_ONCE(s->vcpu[0].upcall_pending) ||
		 READ_ONCE(s->vcpu[1].upcall_pending));
	for (i = 0; i < 64 * 64; i++) {
		if (s->pending[i / 64] & BIT_ULL(i % 64)) {
			port = i;
			nports++;
		}
	}
	for (i = 0; i < NR_VCPUS; i++) {
		if (s->vcpu[i].upcall_pending || s->vcpu[i].pending_sel) {
			v = i;
			nv++;
		}
	}
	if (!nports && !nv)
		res = NONE;
	else if (nports == 1 && nv == 1 && s->vcpu[v].upcall_pending &&
		 s->vcpu[v].pending_sel == BIT_ULL(port / 64))
		res = XHIT(v, port);
	memset(s, 0, sizeof(*s));
	return res;
}

/* The old irqfd is on XGSI only. */
static void xen_expect(struct xen *x, u32 gsi, u32 want, const char *what)
{
	int old;

	for (old = 0; old <= (gsi == XGSI); old++) {
		u32 got = xen_probe(x, gsi, old, want);

		TEST_ASSERT(got == want, "%s: GSI %u via %s irqfd: pending 0x%x, expected 0x%x",
			    what, gsi, old ? "old" : "new", got, want);
	}
}

/*
 * Xen routes may name a vCPU that does not exist yet (live migration sets the
 * routes before creating the vCPUs): KVM finds the vCPU at delivery.  The
 * long-lived irqfd's copy of its route must follow every change of vCPU or
 * port, also between two that do not exist (to vCPU 2, never created, then
 * vCPU 1 is).  The first two tables leave routes to vCPU 0 in the memory the
 * next ones reuse.
 */
TEST_F(plain, xen_evtchn_vcpu_later)
{
	static const u32 steps[][2] = { { 1, PA }, { 0, PA }, { 0, PB }, { 1, PB } };
	const u32 need = KVM_XEN_HVM_CONFIG_SHARED_INFO | KVM_XEN_HVM_CONFIG_EVTCHN_2LEVEL;
	struct kvm_xen_hvm_config hvmc = { .msr = XEN_HYPERCALL_MSR };
	struct kvm_xen_hvm_attr lm = { .type = KVM_XEN_ATTR_TYPE_LONG_MODE, .u.long_mode = 1 };
	struct kvm_xen_hvm_attr sh = { .type = KVM_XEN_ATTR_TYPE_SHARED_INFO,
				       .u.shared_info.gfn = XEN_GPA / PAGE_SIZE };
	struct xen x;
	char what[32];
	int i;

	if ((kvm_check_cap(KVM_CAP_XEN_HVM) & need) != need)
		SKIP(return, "no Xen shared_info and event channel routes (KVM_CAP_XEN_HVM)");
	x.vm = vm_create(NR_VCPUS);
	x.r = kvm_gsi_routing_create();
	vm_userspace_mem_region_add(x.vm, VM_MEM_SRC_ANONYMOUS, XEN_GPA, 10, 1, 0);
	x.s = addr_gpa2hva(x.vm, XEN_GPA);
	vm_ioctl(x.vm, KVM_XEN_HVM_CONFIG, &hvmc);
	vm_ioctl(x.vm, KVM_XEN_HVM_SET_ATTR, &lm);
	vm_ioctl(x.vm, KVM_XEN_HVM_SET_ATTR, &sh);
	xen_vcpu_add(x.vm, 0);
	for (i = 0; i < 3; i++)
		xen_set(&x, i == 2, PA);	/* vCPU 0, vCPU 0, vCPU 1 */
	x.efd = kvm_new_eventfd();
	kvm_assign_irqfd(x.vm, XGSI, x.efd);
	xen_expect(&x, XGSI, NONE, "vCPU 1 not created");
	xen_expect(&x, XGSI + 1, XHIT(0, P0), "vCPU 0");
	xen_expect(&x, XGSI + 2, NONE, "vCPU 1 not created");
	xen_set(&x, 2, PA);
	xen_expect(&x, XGSI, NONE, "vCPU 2, vCPU 1 not created");
	xen_vcpu_add(x.vm, 1);
	xen_expect(&x, XGSI, NONE, "vCPU 2, vCPU 1 created");
	xen_expect(&x, XGSI + 2, XHIT(1, P1), "vCPU 1 created after its route");
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		xen_set(&x, steps[i][0], steps[i][1]);
		snprintf(what, sizeof(what), "vCPU %u port %u", steps[i][0], steps[i][1]);
		xen_expect(&x, XGSI, XHIT(steps[i][0], steps[i][1]), what);
	}
	close(x.efd);
	kvm_vm_free(x.vm);
	free(x.r);
}

TEST_HARNESS_MAIN
