// SPDX-License-Identifier: GPL-2.0-only
/*
 * After every kind of KVM_SET_GSI_ROUTING update, interrupts go where the new
 * table says, and only there: through KVM_IRQ_LINE and a new irqfd, and through
 * an irqfd assigned before the update, whose copy of the route it must refresh.
 * Each probe counts every vector on every vCPU.
 */
#include <limits.h>

#include "hyperv.h"
#include "kselftest_harness.h"
#include "irq_routing.h"
#include "cgroup_util.h"

#define GSI		40		/* has the fixture's irqfd */
#define V1		0x41
#define V2		0x42
#define NONE		0u
#define HIT(v, vec)	(0x10000u | (v) << 8 | (vec))
#define MULTI		0x80000000u

struct rt {
	struct irq_vm g;
	struct kvm_irq_routing *r;
	int efd;		/* irqfd on GSI, assigned before each update */
	u32 snap[IRQ_NR_VCPUS * 256];	/* the counts at mark() */
};

static void set(struct rt *t)
{
	kvm_gsi_routing_set(t->g.vm, t->r);
	t->r->nr = 0;
}

/* Two tables of the tests' shape with other routes first, for reuse. */
static void rt_init(struct __test_metadata *_metadata, struct rt *t)
{
	int i;

	if (irq_vm_unsupported())
		SKIP(return, "%s", irq_vm_unsupported());
	irq_vm_create(&t->g, 0);
	t->r = kvm_gsi_routing_create();
	t->efd = kvm_new_eventfd();
	kvm_assign_irqfd(t->g.vm, GSI, t->efd);
	for (i = 0; i < 2; i++) {
		route_msi(t->r, GSI, 1, 0x50 + i);
		route_msi(t->r, GSI + 1, 0, 0x52 + i);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 2, KVM_IRQCHIP_IOAPIC, 10 + i);
		set(t);
	}
}

static void rt_fini(struct rt *t)
{
	irq_vm_free(&t->g);
	close(t->efd);
	free(t->r);
}

static void mark(struct rt *t)
{
	irq_vm_start(&t->g);
	memcpy(t->snap, t->g.count, sizeof(t->snap));
}

/* What the vCPUs took since mark(), fences aside. */
static u32 since(struct rt *t)
{
	u32 last = 0, n;

	irq_vm_fence(&t->g);
	n = irq_taken(t->g.count, t->snap, 0, 255, &last);
	return n > 1 ? MULTI : n ? HIT(last / 256, last % 256) : NONE;
}

enum { VIA_LINE, VIA_NEW_IRQFD, VIA_OLD_IRQFD };
static const char * const via_name[] = { "KVM_IRQ_LINE", "new irqfd", "old irqfd" };

/*
 * Signal @efd on @gsi, @kept assigned before (else assigned now and closed
 * after), and flush the injection, which the fast path may defer to a work
 * item: deassigning waits for it.  A kept irqfd is then assigned again.
 */
static void irqfd_signal(struct kvm_vm *vm, u32 gsi, int efd, bool kept)
{
	if (!kept)
		kvm_assign_irqfd(vm, gsi, efd);
	TEST_ASSERT(!eventfd_write(efd, 1), "eventfd_write() failed");
	kvm_deassign_irqfd(vm, gsi, efd);
	if (kept)
		kvm_assign_irqfd(vm, gsi, efd);
	else
		close(efd);
}

static u32 probe(struct rt *t, u32 gsi, int via)
{
	int efd = via == VIA_NEW_IRQFD ? kvm_new_eventfd() : t->efd;

	mark(t);
	if (via == VIA_LINE) {
		kvm_irq_line(t->g.vm, gsi, 1);
		kvm_irq_line(t->g.vm, gsi, 0);
	} else {
		irqfd_signal(t->g.vm, gsi, efd, via == VIA_OLD_IRQFD);
	}
	return since(t);
}

/* The old irqfd is on GSI only.  @step: for the message. */
static void expect(struct rt *t, u32 gsi, u32 want, int step)
{
	int via;

	for (via = 0; via <= (gsi == GSI ? VIA_OLD_IRQFD : VIA_NEW_IRQFD); via++) {
		u32 got = probe(t, gsi, via);

		TEST_ASSERT(got == want, "step %d: GSI %u via %s delivered 0x%x, expected 0x%x",
			    step, gsi, via_name[via], got, want);
	}
}

FIXTURE(rt) { struct rt t; };
FIXTURE_SETUP(rt) { rt_init(_metadata, &self->t); }
FIXTURE_TEARDOWN(rt) { rt_fini(&self->t); }

/*
 * Route changes of GSI, each step probed: the route's vector must arrive on
 * its vCPU, nothing for NO_ROUTE and APIC ID 0x100, the previous step's after
 * BAD (a table refused, with dest more routes).  HV: dest is the vCPU, data
 * the SINT (SINT1 is V1 on both vCPUs, SINT2 V2 on vCPU 0).
 */
enum { END, MSI, IOAPIC, PIC_IOAPIC, NO_ROUTE, HV, BAD };

FIXTURE(retarget) { struct rt t; };
FIXTURE_VARIANT(retarget) { struct { u32 type, dest, data; } step[3]; };
FIXTURE_SETUP(retarget) { rt_init(_metadata, &self->t); }
FIXTURE_TEARDOWN(retarget) { rt_fini(&self->t); }

#define STEPS(name)	FIXTURE_VARIANT_ADD(retarget, name)

STEPS(vector) { .step = { { MSI, 0, V1 }, { MSI, 0, V2 } } };
STEPS(destination_only) { .step = { { MSI, 0, V1 }, { MSI, 1, V1 } } };
/* With 32-bit x2APIC IDs, address_hi holds destination bits 31:8. */
STEPS(address_hi_only) { .step = { { MSI, 0, V1 }, { MSI, 0x100, V1 }, { MSI, 0, V1 } } };
STEPS(delivery_mode_only) { .step = { { MSI, 0, V1 }, { MSI, 0, APIC_DM_NMI | V1 } } };
STEPS(ioapic_pin_only) { .step = { { IOAPIC, 3 }, { IOAPIC, 4 } } };
STEPS(ioapic_to_msi_and_back) { .step = { { IOAPIC, 3 }, { MSI, 1, V1 }, { IOAPIC, 3 } } };
STEPS(one_route_to_two_and_back) { .step = { { MSI, 1, V1 }, { PIC_IOAPIC, 3 }, { MSI, 1, V2 } } };
STEPS(removed_and_back) { .step = { { MSI, 0, V1 }, { NO_ROUTE }, { MSI, 1, V2 } } };
STEPS(hv_sint_only) { .step = { { HV, 0, 1 }, { HV, 0, 2 }, { HV, 0, 1 } } };
STEPS(hv_sint_vcpu_only) { .step = { { HV, 0, 1 }, { HV, 1, 1 }, { MSI, 0, V2 } } };
STEPS(refused_fits) { .step = { { IOAPIC, 3 }, { BAD }, { MSI, 1, V1 } } };
STEPS(refused_does_not_fit) { .step = { { MSI, 0, V1 }, { BAD, 1000 }, { IOAPIC, 4 } } };

static void enable_synic(struct rt *t)
{
	int i;

	for (i = 0; i < IRQ_NR_VCPUS; i++) {
		vcpu_enable_cap(t->g.vcpus[i], KVM_CAP_HYPERV_SYNIC, 0);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SCONTROL, 1);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SINT0 + 1, V1);
		vcpu_set_msr(t->g.vcpus[i], HV_X64_MSR_SINT0 + 2, i ? BIT(16) /* masked */ : V2);
	}
}

static void route_sint(struct kvm_irq_routing *r, u32 gsi, u32 vcpu, u32 sint)
{
	r->entries[r->nr++] = (struct kvm_irq_routing_entry){ .gsi = gsi,
		.type = KVM_IRQ_ROUTING_HV_SINT, .u.hv_sint = { .vcpu = vcpu, .sint = sint } };
}

TEST_F_TIMEOUT(retarget, route_change, 120)
{
	struct rt *t = &self->t;
	struct kvm_irq_routing *r = t->r;
	u32 want = NONE;
	int i;

	if (variant->step[0].type == HV) {
		if (!kvm_has_cap(KVM_CAP_HYPERV_SYNIC))
			SKIP(return, "no KVM_CAP_HYPERV_SYNIC");
		enable_synic(t);
	}
	for (i = 0; i < 3 && variant->step[i].type != END; i++) {
		u32 type = variant->step[i].type, dest = variant->step[i].dest;
		u32 data = variant->step[i].data;

		if (type == MSI || type == BAD)
			route_msi(r, GSI, type == BAD ? 1 : dest, type == BAD ? V2 : data);
		if (type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_PIC_MASTER, dest);
		if (type == IOAPIC || type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_IOAPIC, dest);
		if (type == HV)
			route_sint(r, GSI, dest, data);
		route_msi(r, GSI + 1, 1, V2);		/* the table is never empty */
		if (type == BAD) {
			while (r->nr < dest)
				route_msi(r, 100 + r->nr, 1, V2);
			route_msi(r, GSI + 2, 0, V2);
			r->entries[r->nr - 1].type = 0xff;
			TEST_ASSERT(__kvm_gsi_routing_set(t->g.vm, r) == -1 && errno == EINVAL,
				    "bad table: errno %d", errno);
			r->nr = 0;
		} else {
			set(t);
		}
		if (type == MSI)
			want = dest > 1 ? NONE : HIT(dest, data & APIC_DM_NMI ? NMI_VECTOR : data);
		else if (type == HV)
			want = HIT(dest, V1 + data - 1);
		else if (type != BAD)
			want = type == NO_ROUTE ? NONE : HIT(0, IRQ_IOAPIC_VEC + dest);
		expect(t, GSI, want, i + 1);
	}
}

#define vec_of(gsi, step)	(0x30 + ((gsi) + (step)) % 0xa0)

/*
 * Set @n MSI routes, on GSI and down from @top; probe both, and that neither the
 * GSI below them nor the previous top (*@prev), if no longer routed, delivers.
 */
static void set_span(struct rt *t, u32 n, u32 top, u32 step, u32 *prev)
{
	u32 g;

	route_msi(t->r, GSI, 0, vec_of(GSI, step));
	for (g = top; t->r->nr < n; g--)
		if (g != GSI)
			route_msi(t->r, g, g & 1, vec_of(g, step));
	set(t);
	TEST_ASSERT_EQ(probe(t, top, VIA_LINE), HIT(top & 1, vec_of(top, step)));
	if (*prev != GSI && (*prev > top || *prev <= g))
		TEST_ASSERT_EQ(probe(t, *prev, VIA_LINE), NONE);
	TEST_ASSERT_EQ(probe(t, g, VIA_LINE), NONE);
	*prev = top;
	expect(t, GSI, HIT(0, vec_of(GSI, step)), step);
}

/* Entry count and GSI range changing independently, then 2^k +/- 1 routes. */
TEST_F_TIMEOUT(rt, grow_across_capacities, 120)
{
	static const u32 steps[][2] = {
		{ 2, 4095 }, { 3, 4094 },	/* few entries, high GSIs */
		{ 1000, 1100 }, { 999, 1100 }, { 2, 4095 }, { 1000, 1100 },	/* many, low GSIs */
		{ 50, 200 }, { 50, 201 }, { 50, 220 }, { 50, 230 },	/* more GSIs, reused */
	};
	struct rt *t = &self->t;
	u32 k, n, i, prev = GSI;

	for (i = 0; i < ARRAY_SIZE(steps); i++)
		set_span(t, steps[i][0], steps[i][1], i, &prev);
	for (k = 6; k <= 12; k++)
		for (n = BIT(k) - 1; n <= BIT(k) + 1 && n < KVM_MAX_IRQ_ROUTES; n += 2)
			set_span(t, n, min_t(u32, GSI + n, KVM_MAX_IRQ_ROUTES - 1), k + n, &prev);
}

/* fail-nth, or -1 unless failslab and fail_page_alloc fail GFP_KERNEL too. */
static int fail_nth_open(void)
{
	char a[4] = "", b[4] = "";

	read_text("/sys/kernel/debug/failslab/ignore-gfp-wait", a, sizeof(a));
	read_text("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", b, sizeof(b));
	return a[0] == 'N' && b[0] == 'N' ? open("/proc/thread-self/fail-nth", O_RDWR) : -1;
}

/*
 * Set the table with fail-nth armed with @n; what was left of @n (0: a fault
 * was injected) in @left.  If 1 was left, the read's copy_to_user() fails.
 */
static int set_armed(struct rt *t, int fd, int n, int *left)
{
	char buf[16], in[16] = "";
	int ret, len, i;

	TEST_ASSERT(pwrite(fd, buf, sprintf(buf, "%d", n), 0) > 0, "fail-nth");
	ret = __kvm_gsi_routing_set(t->g.vm, t->r) ? -errno : 0;
	t->r->nr = 0;
	len = pread(fd, in, sizeof(in) - 1, 0);
	TEST_ASSERT(len > 0 || errno == EFAULT, "fail-nth");
	*left = len > 0 ? atoi(in) : 1;
	for (i = 0; pwrite(fd, "0", 1, 0) != 1; i++)	/* still armed: may fail */
		TEST_ASSERT(errno == EFAULT && i < 100, "fail-nth reset");
	return ret;
}

/*
 * Fail each fault-injection point of an update in turn, on a fresh VM each
 * time: -ENOMEM or -EFAULT and the old table, or the new one.  Every array
 * fits in a page, so that no failure is vmalloc's, which warns.
 */
TEST_F_TIMEOUT(rt, failed_allocation_keeps_table, 120)
{
	int fd = fail_nth_open(), n, ret, left, failed = 0;
	struct rt *t = &self->t;

	if (fd < 0)
		SKIP(return, "needs fail-nth, failslab and fail_page_alloc failing GFP_KERNEL");
	for (n = 1; n <= 256; n++) {
		route_msi(t->r, GSI, 0, V1);
		set(t);
		route_msi(t->r, GSI, 1, V2);
		while (t->r->nr < 8)
			route_msi(t->r, 150 + t->r->nr, 1, V2);
		ret = set_armed(t, fd, n, &left);
		if (left)	/* fewer than n injection points: done */
			break;
		TEST_ASSERT(!ret || ret == -ENOMEM || ret == -EFAULT, "failure %d: errno %d",
			    n, -ret);
		expect(t, GSI, ret ? HIT(0, V1) : HIT(1, V2), n);	/* failed or absorbed */
		failed += !!ret;
		rt_fini(t);
		rt_init(_metadata, t);
	}
	close(fd);
	TEST_ASSERT(failed && n <= 256, "%d of %d updates failed: fail-nth reached %s", failed,
		    n - 1, failed ? "more than 256 injection points" : "no injection point");
}

/*
 * A resampler across a change of its GSI's pin from 5 to 20 (level-triggered):
 * pin 20's EOI resamples, pin 5's no longer does.  The pin-20 table is set
 * twice, to be built in the pin-5 table's memory, whose pin map must be reset.
 * Pin 5's vector, sent as an MSI, makes the IOAPIC notify pin 5's GSI.
 */
TEST_F_TIMEOUT(rt, resample_across_route_change, 120)
{
	static const int pins[] = { 5, 20, 20 };
	struct rt *t = &self->t;
	struct kvm_irqfd res = {};
	int i;

	irq_vm_set_ioapic(&t->g, BIT(5) | BIT(20));
	for (i = 0; i < ARRAY_SIZE(pins); i++) {
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, pins[i]);
		set(t);
		if (!i)
			res = irq_resampler(t->g.vm, GSI + 1);
		mark(t);
		TEST_ASSERT(!eventfd_write(res.fd, 1), "eventfd_write() failed");
		TEST_ASSERT(irq_resamples(&res, IRQ_TIMEOUT_MS) == 1,
			    "pin %d: no resample after EOI", pins[i]);
		TEST_ASSERT_EQ(since(t), HIT(0, IRQ_IOAPIC_VEC + pins[i]));
	}
	mark(t);
	TEST_ASSERT_EQ(irq_msi(t->g.vm, 0, IRQ_IOAPIC_VEC + 5), 1);
	TEST_ASSERT_EQ(since(t), HIT(0, IRQ_IOAPIC_VEC + 5));
	TEST_ASSERT(!irq_resamples(&res, 0),
		    "EOI of pin 5 resampled GSI %u, routed to pin 20: stale pin map", GSI + 1);
	close(res.fd);
	close(res.resamplefd);
}

/* The MSI route of @gsi at step @step, as the tests below set it, must deliver. */
static void expect_msi(struct rt *t, u32 gsi, u32 step)
{
	u32 got = probe(t, gsi, VIA_LINE), want = HIT(gsi & 1, vec_of(gsi, step));

	TEST_ASSERT(got == want, "step %u: GSI %u delivered 0x%x, expected 0x%x", step, gsi, got,
		    want);
}

/*
 * QEMU's table: GSIs 0-23 to the PIC and IOAPIC (40 routes), MSI routes from
 * GSI 24 on, one more per update as MSI-X vectors are enabled.  More routes
 * than GSIs, after a kept table with fewer (28 on GSIs 12-39: room for 39
 * routes, 54 GSIs): a kept table must fit each count in its own array (KASAN).
 */
TEST_F_TIMEOUT(rt, qemu_layout_grow, 120)
{
	struct rt *t = &self->t;
	u32 n, g;

	for (n = 0; n < 2; n++) {
		for (g = 12; g < 40; g++)
			route_msi(t->r, g, 0, V1);
		set(t);
	}
	for (n = 1; n <= 160; n++) {
		for (g = 0; g < 24; g++) {
			if (g < 16)	/* KVM_IRQCHIP_PIC_MASTER, KVM_IRQCHIP_PIC_SLAVE */
				kvm_gsi_routing_irqchip_add(t->r, g, g / 8, g % 8);
			kvm_gsi_routing_irqchip_add(t->r, g, KVM_IRQCHIP_IOAPIC, g);
		}
		for (g = 24; g < 24 + n; g++)
			route_msi(t->r, g, g & 1, vec_of(g, n));
		set(t);
		expect_msi(t, 24, n);
		expect_msi(t, 23 + n, n);
	}
	TEST_ASSERT_EQ(probe(t, 23, VIA_LINE), HIT(0, IRQ_IOAPIC_VEC + 23));
}

/*
 * Fewer routes, the same highest GSI, and back: entries[] follows the routes,
 * map[] the GSIs.  The 4-route table, set twice to be kept, has no room for
 * 4096 routes (else KASAN).  plain.memory_shrink_rule measures what is kept.
 */
TEST_F_TIMEOUT(rt, fewer_routes_same_top_gsi, 120)
{
	static const u32 nr[] = { KVM_MAX_IRQ_ROUTES, 4, 4, KVM_MAX_IRQ_ROUTES, 4 };
	static const u32 few[] = { 0, 1000, 2000, KVM_MAX_IRQ_ROUTES - 1 };
	struct rt *t = &self->t;
	u32 s, i, g;

	for (s = 0; s < ARRAY_SIZE(nr); s++) {
		for (i = 0; i < nr[s]; i++) {
			g = nr[s] == ARRAY_SIZE(few) ? few[i] : i;
			route_msi(t->r, g, g & 1, vec_of(g, s));
		}
		set(t);
		for (i = 0; i < ARRAY_SIZE(few); i++)
			expect_msi(t, few[i], s);
		if (nr[s] == ARRAY_SIZE(few))
			TEST_ASSERT_EQ(probe(t, 3000, VIA_LINE), NONE);
	}
}

/* memory_shrink_rule's memory cgroup, removed once the test's process is gone. */
FIXTURE(plain) { char cg[PATH_MAX]; };
FIXTURE_SETUP(plain) {}
FIXTURE_TEARDOWN_PARENT(plain)
{
	if (self->cg[0] && rmdir(self->cg) && errno != ENOENT)
		ksft_print_msg("cannot remove %s: %s\n", self->cg, strerror(errno));
}

#define NR_MEM_VMS	16

/* @n routes spread on GSIs 0 to @top of every VM, twice (to retire one); memory.current */
static long set_n_routes(const char *cg, struct kvm_vm **vms, struct kvm_irq_routing *r, u32 n,
			 u32 top)
{
	int i;

	for (r->nr = 0; r->nr < n;)
		route_msi(r, r->nr * top / (n - 1), 0, V1);
	for (i = 0; i < 2 * NR_MEM_VMS; i++)
		kvm_gsi_routing_set(vms[i / 2], r);
	return cg_read_long(cg, "memory.current");
}

/*
 * A VM whose table shrank keeps no memory sized for the larger one (the
 * kernel's bound, not an ABI).  VMs in a memory cgroup get a few routes, 4096,
 * then the few again: 24 on GSIs 0-23, then 4 up to GSI 4095, whose map[] is
 * 32 KiB in base and after alike: only entries[] must shrink.  Shrunk, they may
 * hold more than before by less than a quarter of what the 4096-route tables
 * took (a kept one is half of that: 320 KiB of entries[] per VM, 5 MiB in all).
 * On one CPU, memory.current is off by one charge batch (64 pages) at most;
 * skipped if the tables took less than the entries userspace passed (3 MiB,
 * 12 batches): the quarter is 3 batches or more.
 */
TEST_F_TIMEOUT(plain, memory_shrink_rule, 120)
{
	static const u32 few[][2] = { { 24, 23 }, { 4, 4095 } };	/* routes, top GSI */
	struct kvm_vm *vms[NR_MEM_VMS];
	struct kvm_irq_routing *r;
	long base, big, after;
	char root[PATH_MAX], *cg = self->cg;
	bool low = false;
	int i, s;

	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)");
	if (cg_find_unified_root(root, sizeof(root), NULL) ||
	    cg_read_strstr(root, "cgroup.subtree_control", "memory") ||
	    snprintf(cg, PATH_MAX, "%s/kvm_irq_routing_shrink.%d", root, getpid()) >= PATH_MAX ||
	    cg_create(cg) || cg_enter_current(cg))
		SKIP(return, "no memory cgroup (cgroup v2 with the memory controller) to enter");
	pin_self_to_any_cpu();
	r = kvm_gsi_routing_create();
	memset(r->entries, 0, KVM_MAX_IRQ_ROUTES * sizeof(r->entries[0]));	/* charged now */
	for (i = 0; i < NR_MEM_VMS; i++) {
		vms[i] = vm_create_barebones();
		TEST_ASSERT_EQ(__vm_ioctl(vms[i], KVM_CREATE_IRQCHIP, NULL), 0);
	}
	for (s = 0; s < ARRAY_SIZE(few) && !low; s++) {
		base = set_n_routes(cg, vms, r, few[s][0], few[s][1]);
		big = set_n_routes(cg, vms, r, KVM_MAX_IRQ_ROUTES, KVM_MAX_IRQ_ROUTES - 1);
		after = set_n_routes(cg, vms, r, few[s][0], few[s][1]);
		low = big - base < (long)(NR_MEM_VMS * KVM_MAX_IRQ_ROUTES * sizeof(r->entries[0]));
		TEST_ASSERT(low || (after - base) * 4 < big - base,
			    "per VM: 4096 routes took %ld KiB, %u up to GSI %u keep %ld KiB of them",
			    (big - base) / NR_MEM_VMS / 1024, few[s][0], few[s][1],
			    (after - base) / NR_MEM_VMS / 1024);
	}
	for (i = 0; i < NR_MEM_VMS; i++)
		kvm_vm_free(vms[i]);
	free(r);
	if (low)
		SKIP(return, "memory.current saw %ld KiB per VM, less than the routing tables",
		     (big - base) / NR_MEM_VMS / 1024);
}

/* Split irqchip: IOAPIC EOI exits come from a scan of the MSI routes. */
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
 * Interrupt the vCPU with a level-triggered MSI of @vector to @dest, as a
 * userspace IOAPIC sends one: did its EOI exit to userspace?
 */
static bool eoi_exits(struct kvm_vcpu *vcpu, u32 dest, u32 vector)
{
	bool exited = false;
	struct ucall uc;

	vcpu_run(vcpu);		/* to GUEST_SYNC(0): nothing pending */
	TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC && uc.args[1] == 0, "guest");
	TEST_ASSERT_EQ(irq_msi(vcpu->vm, dest, APIC_INT_LEVELTRIG | APIC_INT_ASSERT | vector), 1);
	vcpu_run(vcpu);
	if (vcpu->run->exit_reason == KVM_EXIT_IOAPIC_EOI) {
		TEST_ASSERT_EQ(vcpu->run->eoi.vector, vector);
		exited = true;
		vcpu_run(vcpu);
	}
	TEST_ASSERT(get_ucall(vcpu, &uc) == UCALL_SYNC && uc.args[1] == vector, "guest");
	return exited;
}

#define EOI_VCPU	0x100
#define EOI_GSI		5		/* an IOAPIC pin */

/*
 * A level-triggered MSI route of an IOAPIC pin for APIC ID 0x100 in the 32-bit
 * format, i.e. APIC ID 0 before KVM_CAP_X2APIC_API.  Enabling it requests no
 * scan; setting the same table again must: the vCPU's EOI then exits.
 */
TEST_F(plain, split_irqchip_same_table_after_x2apic_api)
{
	struct vm_shape shape = { .mode = VM_MODE_DEFAULT, .flags = VM_SHAPE_SPLIT_IRQCHIP };
	struct kvm_irq_routing *r;
	struct kvm_vcpu *vcpu;
	struct kvm_vm *vm;

	if (!kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP) || !kvm_has_cap(KVM_CAP_SET_BOOT_CPU_ID) ||
	    !kvm_has_cap(KVM_CAP_X2APIC_API))
		SKIP(return, "no KVM_CAP_SPLIT_IRQCHIP, SET_BOOT_CPU_ID or X2APIC_API");
	r = kvm_gsi_routing_create();
	vm = __vm_create(shape, 1, 0);
	vm_ioctl(vm, KVM_SET_BOOT_CPU_ID, (void *)EOI_VCPU);
	vcpu = vm_vcpu_add(vm, EOI_VCPU, guest_eoi_code);
	vm_install_exception_handler(vm, V1, guest_eoi_handler);

	kvm_gsi_routing_msi_add(r, EOI_GSI, X86_MSI_ADDR_BASE, EOI_VCPU, APIC_INT_LEVELTRIG | V1);
	kvm_gsi_routing_set(vm, r);
	TEST_ASSERT(!eoi_exits(vcpu, 0xff, V1), "EOI exit for a route to APIC ID 0");
	vm_enable_cap(vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS);
	kvm_gsi_routing_set(vm, r);
	TEST_ASSERT(eoi_exits(vcpu, EOI_VCPU, V1),
		    "no EOI exit: the same table set again did not rescan the IOAPIC routes");
	kvm_vm_free(vm);
	free(r);
}

int main(int argc, char **argv)
{
	close(open_kvm_dev_path_or_exit());	/* skip here, not in each test */
	return test_harness_run(argc, argv);
}
