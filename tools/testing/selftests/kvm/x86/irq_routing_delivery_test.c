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
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "hyperv.h"
#include "cgroup_util.h"
#include "kselftest_harness.h"

#define NR_VCPUS	2
#define FENCE_VEC	0x20
#define IOAPIC_VEC	0xe0		/* + pin */
#define GSI		40		/* has the fixture's long-lived irqfd */
#define V1		0x41
#define V2		0x42
#define NONE		0u
#define HIT(v, vec)	(0x10000u | (v) << 8 | (vec))
#define MULTI		0x80000000u
#define TIMEOUT_MS	10000
#define TIMEOUT_NS	(TIMEOUT_MS * 1000000ull)

static u32 irq_count[NR_VCPUS][256] __aligned(4096);
static bool guest_ready[NR_VCPUS];
static bool guest_done;

static void guest_handler(struct ex_regs *regs)
{
	u32 id = x2apic_read_reg(APIC_ID);

	WRITE_ONCE(irq_count[id][regs->vector], irq_count[id][regs->vector] + 1);
	if (regs->vector != NMI_VECTOR)
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

struct rt {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpus[NR_VCPUS];
	pthread_t threads[NR_VCPUS];
	struct kvm_irq_routing *r;
	u32 *count;		/* host view of irq_count[][] */
	int efd;		/* irqfd on GSI, assigned before every update */
	bool running;
};

FIXTURE(rt) { struct rt t; };

static void set_ioapic_pins(struct kvm_vm *vm, u32 level_pins)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	int i;

	vm_ioctl(vm, KVM_GET_IRQCHIP, &chip);
	for (i = 0; i < KVM_IOAPIC_NUM_PINS; i++) {
		chip.chip.ioapic.redirtbl[i].bits = 0;
		chip.chip.ioapic.redirtbl[i].fields.vector = IOAPIC_VEC + i;
		chip.chip.ioapic.redirtbl[i].fields.trig_mode = !!(level_pins & BIT(i));
	}
	vm_ioctl(vm, KVM_SET_IRQCHIP, &chip);
}

static void start_vcpus(struct rt *t)
{
	struct timespec start;
	int i;

	if (t->running)
		return;
	for (i = 0; i < NR_VCPUS; i++)
		kvm_pthread_create(&t->threads[i], NULL, vcpu_thread, t->vcpus[i]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (i = 0; i < NR_VCPUS; i++)
		while (!SYNC_FROM_GUEST_AND_READ(t->vm, guest_ready[i]))
			TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < TIMEOUT_NS,
				    "vCPU %d never became ready", i);
	t->running = true;
}

static void msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 data)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(dest), dest & ~0xffu, data);
}

static void set(struct rt *t)
{
	kvm_gsi_routing_set(t->vm, t->r);
	t->r->nr = 0;
}

static void rt_init(struct rt *t)
{
	struct kvm_irqchip pic = { .chip_id = KVM_IRQCHIP_PIC_MASTER };
	int i;

	t->vm = vm_create_with_vcpus(NR_VCPUS, guest_code, t->vcpus);
	vm_enable_cap(t->vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS |
		      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	for (i = NMI_VECTOR; i < 256; i++)
		if (i == NMI_VECTOR || i >= FENCE_VEC)
			vm_install_exception_handler(t->vm, i, guest_handler);
	set_ioapic_pins(t->vm, 0);
	vm_ioctl(t->vm, KVM_GET_IRQCHIP, &pic);
	pic.chip.pic.imr = 0xff;
	vm_ioctl(t->vm, KVM_SET_IRQCHIP, &pic);

	t->count = addr_gva2hva(t->vm, (gva_t)&irq_count[0][0]);
	t->r = kvm_gsi_routing_create();
	t->efd = kvm_new_eventfd();
	kvm_assign_irqfd(t->vm, GSI, t->efd);
	/*
	 * Two tables of the tests' shape with other routes, so that every
	 * update below may reuse memory that held other routes (the first
	 * ones after KVM_CREATE_IRQCHIP would get fresh memory).
	 */
	for (i = 0; i < 2; i++) {
		msi(t->r, GSI, 1, 0x50 + i);
		msi(t->r, GSI + 1, 0, 0x52 + i);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 2, KVM_IRQCHIP_IOAPIC, 10 + i);
		set(t);
	}
}

static void rt_fini(struct rt *t)
{
	struct kvm_msi msi = { .data = FENCE_VEC };
	int i;

	if (!t->vm)
		return;
	if (t->running) {
		WRITE_AND_SYNC_TO_GUEST(t->vm, guest_done, true);
		for (i = 0; i < NR_VCPUS; i++) {
			msi.address_lo = X86_MSI_ADDR_DEST(i);
			__vm_ioctl(t->vm, KVM_SIGNAL_MSI, &msi);
			kvm_pthread_join(t->threads[i], NULL);
		}
	}
	kvm_deassign_irqfd(t->vm, GSI, t->efd);
	close(t->efd);
	free(t->r);
	kvm_vm_free(t->vm);
	memset(t, 0, sizeof(*t));
}

static void rt_start(struct __test_metadata *_metadata, struct rt *t)
{
	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)");
	rt_init(t);
}

/*
 * Wait until the guest has taken every interrupt that is already pending:
 * the fence vector 0x20 is in the lowest priority class, below every probe
 * vector (>= 0x30) and NMI, so a vCPU takes it after them.
 */
static void fence(struct rt *t)
{
	struct timespec start;
	int i;

	start_vcpus(t);
	for (i = 0; i < NR_VCPUS; i++) {
		struct kvm_msi msi = { .address_lo = X86_MSI_ADDR_DEST(i), .data = FENCE_VEC };
		u32 *c = &t->count[i * 256 + FENCE_VEC];
		u32 want = READ_ONCE(*c) + 1;
		int r = __vm_ioctl(t->vm, KVM_SIGNAL_MSI, &msi);

		TEST_ASSERT(r == 1, KVM_IOCTL_ERROR(KVM_SIGNAL_MSI, r));
		clock_gettime(CLOCK_MONOTONIC, &start);
		while (READ_ONCE(*c) < want) {
			TEST_ASSERT(timespec_to_ns(timespec_elapsed(start)) < TIMEOUT_NS,
				    "vCPU %d never took vector 0x20", i);
			sched_yield();
		}
	}
}

/* What arrived since @snap, fences aside: NONE, HIT(vcpu, vector) or MULTI. */
static u32 since(struct rt *t, const u32 *snap)
{
	u32 res = NONE;
	int i;

	for (i = 0; i < NR_VCPUS * 256; i++) {
		u32 d = READ_ONCE(t->count[i]) - snap[i];

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
	struct timespec start;
	int efd;

	start_vcpus(t);
	memcpy(snap, t->count, sizeof(snap));
	if (via == VIA_LINE) {
		kvm_irq_line(t->vm, gsi, 1);
		kvm_irq_line(t->vm, gsi, 0);
	} else if (via == VIA_NEW_IRQFD) {
		efd = kvm_new_eventfd();
		kvm_assign_irqfd(t->vm, gsi, efd);
		TEST_ASSERT(!eventfd_write(efd, 1), "eventfd_write() failed");
		/* De-assigning flushes the irqfd's injection work. */
		kvm_deassign_irqfd(t->vm, gsi, efd);
		close(efd);
	} else {
		/*
		 * The irqfd stays assigned.  Its MSI and SINT injections are
		 * synchronous; IOAPIC ones run from a work item, so wait for
		 * an expected interrupt before the fence.
		 */
		TEST_ASSERT(!eventfd_write(t->efd, 1), "eventfd_write() failed");
		clock_gettime(CLOCK_MONOTONIC, &start);
		while (want != NONE && since(t, snap) == NONE &&
		       timespec_to_ns(timespec_elapsed(start)) < TIMEOUT_NS)
			sched_yield();
	}
	fence(t);
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
		vcpu_enable_cap(t->vcpus[i], KVM_CAP_HYPERV_SYNIC, 0);
		vcpu_set_msr(t->vcpus[i], HV_X64_MSR_SCONTROL, 1);
		vcpu_set_msr(t->vcpus[i], HV_X64_MSR_SINT0 + 1, V1);
		vcpu_set_msr(t->vcpus[i], HV_X64_MSR_SINT0 + 2, i ? BIT(16) /* masked */ : V2);
	}
}

TEST_F_TIMEOUT(retarget, route_change, 60)
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
			msi(r, GSI, dest, variant->step[i].data);
		if (variant->step[i].type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_PIC_MASTER, dest);
		if (variant->step[i].type == IOAPIC || variant->step[i].type == PIC_IOAPIC)
			kvm_gsi_routing_irqchip_add(r, GSI, KVM_IRQCHIP_IOAPIC, dest);
		if (variant->step[i].type == HV)
			r->entries[r->nr++] = (struct kvm_irq_routing_entry){ .gsi = GSI,
				.type = KVM_IRQ_ROUTING_HV_SINT,
				.u.hv_sint = { .vcpu = dest, .sint = variant->step[i].data } };
		msi(r, GSI + 1, 1, V2);		/* the table is never empty */
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

	msi(t->r, GSI, 0, vec_of(GSI, step));
	for (g = top; t->r->nr < n; g--)
		if (g != GSI)
			msi(t->r, g, g & 1, vec_of(g, step));
	set(t);
	TEST_ASSERT_EQ(probe(t, top, VIA_LINE, 0), HIT(top & 1, vec_of(top, step)));
	expect(t, GSI, HIT(0, vec_of(GSI, step)), "GSI");
}

/*
 * Tables whose entry count and GSI range change independently (a reused
 * table needs room for both), then growth by one across each power-of-two
 * capacity.
 */
TEST_F_TIMEOUT(rt, grow_across_capacities, 90)
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
			set_span(t, n, min(GSI + n, KVM_MAX_IRQ_ROUTES - 1), k + n);
}

/* A rejected update leaves the installed table as it was. */
TEST_F(rt, rejected_update_keeps_table)
{
	struct rt *t = &self->t;
	int big, ret;

	for (big = 0; big < 2; big++) {
		msi(t->r, GSI, 0, V1);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, 5);
		set(t);
		msi(t->r, GSI, 1, V2);
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, 6);
		/* A big table does not fit in any memory the old one left. */
		while (big && t->r->nr < 1000)
			msi(t->r, 100 + t->r->nr, 1, V2);
		msi(t->r, GSI + 2, 0, V2);
		t->r->entries[t->r->nr - 1].type = 0xff;
		ret = __kvm_gsi_routing_set(t->vm, t->r);
		TEST_ASSERT(ret == -1 && errno == EINVAL, "bad table: ret %d errno %d", ret, errno);
		t->r->nr = 0;
		expect(t, GSI, HIT(0, V1), "after -EINVAL");
		expect(t, GSI + 1, HIT(0, IOAPIC_VEC + 5), "after -EINVAL");
	}
}

static bool read_knob(const char *path, char *buf, int size)
{
	int fd = open(path, O_RDONLY), len = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[len > 0 ? len : 0] = '\0';
	return len > 0;
}

/*
 * Make each fault-injection point of one update fail in turn through
 * /proc/thread-self/fail-nth, on a fresh VM each time so that every call
 * starts from the same cached memory.  This needs failslab to consider
 * GFP_KERNEL allocations (ignore-gfp-wait=N, which scripts/mkinitrd.sh's
 * @failslab sets around this test).  Every allocation is at most a page
 * (60 entries, GSIs below 256), so none falls back to vmalloc; a failed
 * copy_from_user() (fail-nth also counts should_fail_usercopy()) gives
 * -EFAULT.  The update fails, or succeeds if the failure was absorbed, and
 * the installed table is whole either way.
 */
TEST_F_TIMEOUT(rt, failed_allocation_keeps_table, 100)
{
	struct rt *t = &self->t;
	int fd, n, ret, err, len, failed = 0;
	char buf[16];

	if (!read_knob("/sys/kernel/debug/failslab/ignore-gfp-wait", buf, sizeof(buf)) ||
	    buf[0] != 'N')
		SKIP(return, "failslab does not fail GFP_KERNEL allocations (ignore-gfp-wait)");
	fd = open("/proc/thread-self/fail-nth", O_RDWR);
	if (fd < 0)
		SKIP(return, "no /proc/thread-self/fail-nth (CONFIG_FAULT_INJECTION)");
	for (n = 1; n <= 64; n++) {
		if (n > 1) {
			rt_fini(t);
			rt_init(t);
		}
		msi(t->r, GSI, 0, V1);
		set(t);
		msi(t->r, GSI, 1, V2);
		while (t->r->nr < 60)
			msi(t->r, 150 + t->r->nr, 1, V2);
		TEST_ASSERT(pwrite(fd, buf, sprintf(buf, "%d", n), 0) > 0, "fail-nth");
		ret = __kvm_gsi_routing_set(t->vm, t->r);
		err = errno;
		t->r->nr = 0;
		len = pread(fd, buf, sizeof(buf) - 1, 0);
		TEST_ASSERT(len > 0 && pwrite(fd, "0", 1, 0) == 1, "fail-nth");
		buf[len] = '\0';
		if (atoi(buf))		/* fewer than n injection points: done */
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

static void deassign_resample(struct kvm_vm *vm, struct kvm_irqfd *irqfd)
{
	irqfd->flags = KVM_IRQFD_FLAG_DEASSIGN;
	vm_ioctl(vm, KVM_IRQFD, irqfd);
	close(irqfd->fd);
	close(irqfd->resamplefd);
}

TEST_F(rt, resample_across_route_change)
{
	struct rt *t = &self->t;
	struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				   .gsi = GSI + 1, .flags = KVM_IRQFD_FLAG_RESAMPLE };
	struct pollfd pfd = { .fd = irqfd.resamplefd, .events = POLLIN };
	u32 snap[NR_VCPUS * 256];
	eventfd_t cnt;
	int pin;

	start_vcpus(t);
	/* Level-triggered pins 5, then 20 (beyond the PIC's pin numbers). */
	set_ioapic_pins(t->vm, BIT(5) | BIT(20));
	for (pin = 5; pin <= 20; pin += 15) {
		kvm_gsi_routing_irqchip_add(t->r, GSI + 1, KVM_IRQCHIP_IOAPIC, pin);
		set(t);
		if (pin == 5)
			vm_ioctl(t->vm, KVM_IRQFD, &irqfd);
		memcpy(snap, t->count, sizeof(snap));
		TEST_ASSERT(!eventfd_write(irqfd.fd, 1), "eventfd_write() failed");
		TEST_ASSERT(poll(&pfd, 1, TIMEOUT_MS) == 1,
			    "pin %d: no resample after the guest's EOI", pin);
		TEST_ASSERT(!eventfd_read(irqfd.resamplefd, &cnt) && cnt == 1,
			    "pin %d: resamplefd", pin);
		fence(t);
		TEST_ASSERT_EQ(since(t, snap), HIT(0, IOAPIC_VEC + pin));
	}
	deassign_resample(t->vm, &irqfd);
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
	kvm_gsi_routing_set(t->vm, t->r);
	enable_synic(t);
	kvm_gsi_routing_set(t->vm, t->r);
	start_vcpus(t);
	vm_ioctl(t->vm, KVM_IRQFD, &irqfd);
	TEST_ASSERT(!eventfd_write(irqfd.fd, 1), "eventfd_write() failed");
	TEST_ASSERT(poll(&pfd, 1, TIMEOUT_MS) == 1,
		    "EOI of the SINT vector did not resample: SINT not mapped to its GSI");
	TEST_ASSERT_EQ(t->count[V1], 1);
	deassign_resample(t->vm, &irqfd);
}

FIXTURE(plain) {};
FIXTURE_SETUP(plain) {}
FIXTURE_TEARDOWN(plain) {}

#define NR_MEM_VMS	16

static void set_n_routes(struct kvm_vm *vm, struct kvm_irq_routing *r, u32 n)
{
	for (r->nr = 0; r->nr < n;)
		msi(r, r->nr, 0, V1);
	kvm_gsi_routing_set(vm, r);
}

/*
 * The series' documented bound: a VM whose table shrank from 4096 routes to
 * 24 holds at most 64 KiB more than with 24 routes before (the table and
 * buffers it keeps for reuse are not much larger than the current need).
 * Measured in a child memory cgroup of our own, over 16 VMs, since
 * memory.current has per-CPU charge batches; the routing buffer is touched
 * before the first reading.
 */
TEST_F_TIMEOUT(plain, memory_shrink_rule, 60)
{
	size_t size = sizeof(struct kvm_irq_routing) +
		      KVM_MAX_IRQ_ROUTES * sizeof(struct kvm_irq_routing_entry);
	struct kvm_vm *vms[NR_MEM_VMS];
	struct kvm_irq_routing *r;
	char root[PATH_MAX], *cg;
	long before, after;
	int i;

	if (!kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)");
	if (cg_find_unified_root(root, sizeof(root), NULL) ||
	    cg_read_strstr(root, "cgroup.subtree_control", "memory"))
		SKIP(return, "no cgroup v2 with the memory controller enabled for children");
	cg = cg_name(root, "kvm_irq_routing_shrink");
	TEST_ASSERT(cg && !cg_create(cg) && !cg_enter_current(cg), "child cgroup %s", cg);
	r = kvm_gsi_routing_create();
	memset(r, 0, size);
	for (i = 0; i < NR_MEM_VMS; i++) {
		vms[i] = vm_create_barebones();
		TEST_ASSERT_EQ(__vm_ioctl(vms[i], KVM_CREATE_IRQCHIP, NULL), 0);
		set_n_routes(vms[i], r, 24);
	}
	before = cg_read_long(cg, "memory.current");
	for (i = 0; i < NR_MEM_VMS; i++) {
		set_n_routes(vms[i], r, KVM_MAX_IRQ_ROUTES);
		set_n_routes(vms[i], r, 24);
		set_n_routes(vms[i], r, 24);
	}
	after = cg_read_long(cg, "memory.current");
	for (i = 0; i < NR_MEM_VMS; i++)
		kvm_vm_free(vms[i]);
	free(r);
	TEST_ASSERT(!cg_enter_current(root) && !cg_destroy(cg), "removing %s", cg);
	free(cg);
	TEST_ASSERT(before > 0 && (after - before) / NR_MEM_VMS <= 64 * 1024,
		    "each VM shrunk from 4096 to 24 routes holds %ld KiB more than before",
		    (after - before) / NR_MEM_VMS / 1024);
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

	if (!kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP) || !kvm_has_cap(KVM_CAP_SET_BOOT_CPU_ID))
		SKIP(return, "no KVM_CAP_SPLIT_IRQCHIP or KVM_CAP_SET_BOOT_CPU_ID");
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

TEST_HARNESS_MAIN
