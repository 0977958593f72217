// SPDX-License-Identifier: GPL-2.0-only
/*
 * irq_routing_test - KVM_SET_GSI_ROUTING semantics and interrupt delivery
 *
 * Checks the exact errno for every kind of bad routing table, that a rejected
 * table leaves the previous one in force, that MSI and IOAPIC routes deliver
 * through irqfds after every kind of update, that concurrent updates lose no
 * interrupt, and that VMs can be torn down while their routing is updated.
 *
 * The fuzz mode (--fuzz-seed/--fuzz-cases) generates a deterministic stream
 * of routing tables and folds the kernel's answers (errno and the vectors
 * delivered through a fixed set of probe irqfds) into a hash, so that two
 * kernels can be compared by running the same seed on both.
 *
 * Delivery is made deterministic without timing assumptions: after an
 * eventfd is signalled, the irqfd is de-assigned (which flushes its pending
 * injection work) and re-assigned, then a "fence" MSI at the lowest vector is
 * sent with KVM_SIGNAL_MSI.  The guest takes pending interrupts highest vector
 * first, so once it has counted the fence, every interrupt raised by the
 * probe has been counted too.  Timeouts only turn a hang into a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include "kvm_util.h"
#include "test_util.h"
#include "processor.h"
#include "apic.h"
#include "kselftest.h"

#ifndef APIC_LVT0
#define APIC_LVT0		0x350
#endif

#define NR_VCPUS_MAX		2
#define FENCE_VECTOR		0x20
#define MSI_VEC_MIN		0x21
#define MSI_VEC_MAX		0xdf
#define IOAPIC_VEC_BASE		0xe0
#define IOAPIC_PINS		24
#define PIC_PINS		8
#define ABSENT_APIC_ID		7
#define MSI_ADDR_BASE		0xfee00000u

/* Result of a probe: 0 if nothing arrived, else PROBE_HIT | vcpu << 8 | vector. */
#define PROBE_HIT		0x10000u
#define PROBE_MULTI		0x80000000u

/* Guest state, read by the host through the guest's memory. */
static u32 irq_count[NR_VCPUS_MAX][256] __aligned(4096);
static bool guest_ready[NR_VCPUS_MAX];
static bool guest_done;
static bool x2apic = true;

static int timeout_s = 10;
static int conc_iters = 200;
static int nr_teardown_vms = 50;
static int teardown_updates = 20;

static u32 guest_apic_id(void)
{
	if (x2apic)
		return x2apic_read_reg(APIC_ID);
	return xapic_read_reg(APIC_ID) >> 24;
}

static void guest_irq_handler(struct ex_regs *regs)
{
	u32 id = guest_apic_id();

	WRITE_ONCE(irq_count[id][regs->vector], irq_count[id][regs->vector] + 1);
	if (x2apic)
		x2apic_write_reg(APIC_EOI, 0);
	else
		xapic_write_reg(APIC_EOI, 0);
}

static void guest_code(void)
{
	u32 id;

	if (x2apic) {
		x2apic_enable();
		x2apic_write_reg(APIC_LVT0, APIC_LVT_MASKED);
	} else {
		xapic_enable();
		xapic_write_reg(APIC_LVT0, APIC_LVT_MASKED);
	}
	id = guest_apic_id();
	GUEST_ASSERT(id < NR_VCPUS_MAX);
	WRITE_ONCE(guest_ready[id], true);

	while (!READ_ONCE(guest_done)) {
		safe_halt();
		cli();
	}
	GUEST_DONE();
}

struct rt_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpus[NR_VCPUS_MAX];
	pthread_t threads[NR_VCPUS_MAX];
	int nr_vcpus;
	u32 *count;	/* host view of irq_count[][] */
};

static u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static u32 rd_count(struct rt_vm *t, int vcpu, int vec)
{
	return READ_ONCE(t->count[vcpu * 256 + vec]);
}

/* Spin until *p == val; false on timeout. */
static bool wait_u32(u32 *p, u32 val)
{
	u64 deadline = now_ns() + timeout_s * 1000000000ull;
	unsigned long n;

	for (n = 0; READ_ONCE(*p) != val; n++) {
		if (n < 1000) {
			cpu_relax();
			continue;
		}
		sched_yield();
		if (!(n & 255) && now_ns() > deadline)
			return READ_ONCE(*p) == val;
	}
	return true;
}

static void *vcpu_thread(void *arg)
{
	struct kvm_vcpu *vcpu = arg;
	struct ucall uc;

	for (;;) {
		vcpu_run(vcpu);
		switch (get_ucall(vcpu, &uc)) {
		case UCALL_DONE:
			return NULL;
		case UCALL_ABORT:
			REPORT_GUEST_ASSERT(uc);
			break;
		default:
			TEST_FAIL("vCPU %u: unexpected exit reason %u (%s)", vcpu->id,
				  vcpu->run->exit_reason,
				  exit_reason_str(vcpu->run->exit_reason));
		}
	}
	return NULL;
}

static int signal_msi(struct kvm_vm *vm, u32 dest, u32 vector)
{
	struct kvm_msi msi = {
		.address_lo = MSI_ADDR_BASE | dest << 12,
		.data = vector,
	};

	return __vm_ioctl(vm, KVM_SIGNAL_MSI, &msi);
}

/* Program every IOAPIC pin to edge, fixed, vCPU 0, vector IOAPIC_VEC_BASE + pin; mask the PIC. */
static void setup_irqchips(struct kvm_vm *vm)
{
	struct kvm_irqchip chip;
	int i;

	memset(&chip, 0, sizeof(chip));
	chip.chip_id = KVM_IRQCHIP_IOAPIC;
	vm_ioctl(vm, KVM_GET_IRQCHIP, &chip);
	for (i = 0; i < IOAPIC_PINS; i++) {
		chip.chip.ioapic.redirtbl[i].bits = 0;
		chip.chip.ioapic.redirtbl[i].fields.vector = IOAPIC_VEC_BASE + i;
	}
	vm_ioctl(vm, KVM_SET_IRQCHIP, &chip);

	for (i = KVM_IRQCHIP_PIC_MASTER; i <= KVM_IRQCHIP_PIC_SLAVE; i++) {
		memset(&chip, 0, sizeof(chip));
		chip.chip_id = i;
		vm_ioctl(vm, KVM_GET_IRQCHIP, &chip);
		chip.chip.pic.imr = 0xff;
		vm_ioctl(vm, KVM_SET_IRQCHIP, &chip);
	}
}

static void set_ioapic_level(struct kvm_vm *vm, int pin, bool level)
{
	struct kvm_irqchip chip;

	memset(&chip, 0, sizeof(chip));
	chip.chip_id = KVM_IRQCHIP_IOAPIC;
	vm_ioctl(vm, KVM_GET_IRQCHIP, &chip);
	chip.chip.ioapic.redirtbl[pin].fields.trig_mode = level;
	vm_ioctl(vm, KVM_SET_IRQCHIP, &chip);
}

static void rt_vm_create(struct rt_vm *t, int nr_vcpus)
{
	int i;

	memset(t, 0, sizeof(*t));
	t->nr_vcpus = nr_vcpus;
	t->vm = vm_create_with_vcpus(nr_vcpus, guest_code, t->vcpus);
	if (kvm_has_cap(KVM_CAP_X2APIC_API))
		vm_enable_cap(t->vm, KVM_CAP_X2APIC_API,
			      KVM_X2APIC_API_USE_32BIT_IDS |
			      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	for (i = 32; i < 256; i++)
		vm_install_exception_handler(t->vm, i, guest_irq_handler);
	if (!x2apic)
		virt_pg_map(t->vm, APIC_DEFAULT_GPA, APIC_DEFAULT_GPA);
	sync_global_to_guest(t->vm, x2apic);
	setup_irqchips(t->vm);

	t->count = addr_gva2hva(t->vm, (gva_t)&irq_count[0][0]);
	for (i = 0; i < nr_vcpus; i++)
		kvm_pthread_create(&t->threads[i], NULL, vcpu_thread, t->vcpus[i]);

	for (i = 0; i < nr_vcpus; i++) {
		u64 deadline = now_ns() + timeout_s * 1000000000ull;

		while (!SYNC_FROM_GUEST_AND_READ(t->vm, guest_ready[i])) {
			TEST_ASSERT(now_ns() < deadline, "vCPU %d never became ready", i);
			usleep(100);
		}
	}
}

static void rt_vm_destroy(struct rt_vm *t)
{
	int i;

	WRITE_AND_SYNC_TO_GUEST(t->vm, guest_done, true);
	for (i = 0; i < t->nr_vcpus; i++) {
		TEST_ASSERT(signal_msi(t->vm, i, FENCE_VECTOR) >= 0, "wake-up MSI failed");
		kvm_pthread_join(t->threads[i], NULL);
	}
	kvm_vm_free(t->vm);
}

/* Wait until the guest has taken everything that is pending before now. */
static void drain_irqs(struct rt_vm *t)
{
	int i;

	for (i = 0; i < t->nr_vcpus; i++) {
		u32 c = rd_count(t, i, FENCE_VECTOR);
		int r = signal_msi(t->vm, i, FENCE_VECTOR);

		TEST_ASSERT(r == 1, "KVM_SIGNAL_MSI (fence) to vCPU %d returned %d, errno %d",
			    i, r, errno);
		TEST_ASSERT(wait_u32(&t->count[i * 256 + FENCE_VECTOR], c + 1),
			    "Timed out waiting for fence vector on vCPU %d", i);
	}
}

/* Summarise the vectors that arrived since @snap (fence excluded). */
static u32 delivered_since(struct rt_vm *t, const u32 *snap)
{
	u32 res = 0;
	int v, i;

	for (v = 0; v < t->nr_vcpus; v++) {
		for (i = 0; i < 256; i++) {
			u32 d = rd_count(t, v, i) - snap[v * 256 + i];

			if (i == FENCE_VECTOR || !d)
				continue;
			if (res || d != 1)
				res |= PROBE_MULTI | (v << 8 | i) << 12 | d;
			else
				res = PROBE_HIT | v << 8 | i;
		}
	}
	return res;
}

/*
 * Signal @efd (assigned to @gsi), flush the irqfd's injection work by
 * de-assigning and re-assigning it, fence, and report what arrived.
 */
static u32 probe_irqfd(struct rt_vm *t, u32 gsi, int efd)
{
	u32 snap[NR_VCPUS_MAX * 256];

	memcpy(snap, t->count, sizeof(u32) * 256 * t->nr_vcpus);
	TEST_ASSERT(eventfd_write(efd, 1) == 0, "eventfd_write failed");
	kvm_deassign_irqfd(t->vm, gsi, efd);
	kvm_assign_irqfd(t->vm, gsi, efd);
	drain_irqs(t);
	return delivered_since(t, snap);
}

static u32 hit(int vcpu, int vec)
{
	return PROBE_HIT | vcpu << 8 | vec;
}

static void expect_probe(struct rt_vm *t, u32 gsi, int efd, u32 want, const char *what)
{
	u32 got = probe_irqfd(t, gsi, efd);

	TEST_ASSERT(got == want, "%s: GSI %u delivered 0x%x, expected 0x%x", what, gsi, got, want);
}

/* Routing table helpers. */
static struct kvm_irq_routing *rt_alloc(void)
{
	struct kvm_irq_routing *r;

	r = calloc(1, sizeof(*r) + (KVM_MAX_IRQ_ROUTES + 4) * sizeof(r->entries[0]));
	TEST_ASSERT(r, "calloc failed");
	return r;
}

static struct kvm_irq_routing_entry *rt_add(struct kvm_irq_routing *r, u32 gsi, u32 type)
{
	struct kvm_irq_routing_entry *e = &r->entries[r->nr++];

	memset(e, 0, sizeof(*e));
	e->gsi = gsi;
	e->type = type;
	return e;
}

static void rt_add_msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 vec)
{
	struct kvm_irq_routing_entry *e = rt_add(r, gsi, KVM_IRQ_ROUTING_MSI);

	e->u.msi.address_lo = MSI_ADDR_BASE | dest << 12;
	e->u.msi.data = vec;
}

static void rt_add_chip(struct kvm_irq_routing *r, u32 gsi, u32 chip, u32 pin)
{
	struct kvm_irq_routing_entry *e = rt_add(r, gsi, KVM_IRQ_ROUTING_IRQCHIP);

	e->u.irqchip.irqchip = chip;
	e->u.irqchip.pin = pin;
}

static int rt_set(int vm_fd, struct kvm_irq_routing *r)
{
	return ioctl(vm_fd, KVM_SET_GSI_ROUTING, r) ? -errno : 0;
}

static void rt_set_ok(struct kvm_vm *vm, struct kvm_irq_routing *r)
{
	int ret = rt_set(vm->fd, r);

	TEST_ASSERT(!ret, "KVM_SET_GSI_ROUTING (nr=%u) failed: %d", r->nr, ret);
}

/* ---------------------------------------------------------------------------
 * 1. Errno for bad input; the previous table must stay in force.
 */
#define KNOWN_GSI	30
#define KNOWN_VEC	0x40
#define OTHER_VEC	0x41

/* Valid prefix: KNOWN_GSI retargeted, so partial application would show. */
static void bad_prefix(struct kvm_irq_routing *r)
{
	memset(r, 0, sizeof(*r));
	rt_add_msi(r, KNOWN_GSI, 0, OTHER_VEC);
	rt_add_chip(r, 2, KVM_IRQCHIP_IOAPIC, 2);
	rt_add_msi(r, 100, 0, 0x50);
}

static void errno_case(const char *name, void (*fn)(struct kvm_irq_routing *r, int variant),
		       int nr_variants, int want)
{
	struct kvm_irq_routing *good = rt_alloc(), *bad = rt_alloc();
	struct rt_vm t;
	int efd, v, ret;

	rt_vm_create(&t, 1);
	rt_add_msi(good, KNOWN_GSI, 0, KNOWN_VEC);
	rt_add_chip(good, 2, KVM_IRQCHIP_IOAPIC, 2);
	rt_set_ok(t.vm, good);
	efd = kvm_new_eventfd();
	kvm_assign_irqfd(t.vm, KNOWN_GSI, efd);
	expect_probe(&t, KNOWN_GSI, efd, hit(0, KNOWN_VEC), "initial table");

	for (v = 0; v < nr_variants; v++) {
		bad_prefix(bad);
		fn(bad, v);
		ret = rt_set(t.vm->fd, bad);
		TEST_ASSERT(ret == want,
			    "%s variant %d: KVM_SET_GSI_ROUTING returned %d, expected %d",
			    name, v, ret, want);
		if (want)
			expect_probe(&t, KNOWN_GSI, efd, hit(0, KNOWN_VEC), name);
		else
			expect_probe(&t, KNOWN_GSI, efd, hit(0, OTHER_VEC), name);
		/* Back to the known table for the next variant. */
		rt_set_ok(t.vm, good);
	}
	close(efd);
	rt_vm_destroy(&t);
	free(good);
	free(bad);
}

static void bad_gsi(struct kvm_irq_routing *r, int v)
{
	static const u32 gsis[] = { KVM_MAX_IRQ_ROUTES, KVM_MAX_IRQ_ROUTES + 1, 0x10000,
				    0x7fffffff, 0xffffffff };

	rt_add_msi(r, gsis[v], 0, 0x51);
}

static void bad_nr(struct kvm_irq_routing *r, int v)
{
	static const u32 nrs[] = { KVM_MAX_IRQ_ROUTES + 1, KVM_MAX_IRQ_ROUTES + 3, 0xffffffff };
	u32 i;

	for (i = r->nr; i < KVM_MAX_IRQ_ROUTES + 3; i++)
		rt_add_msi(r, 200 + i, 0, 0x52);
	r->nr = nrs[v];
}

static void bad_table_flags(struct kvm_irq_routing *r, int v)
{
	static const u32 flags[] = { 1, 2, 0x80000000, 0xffffffff };

	r->flags = flags[v];
}

static void bad_type(struct kvm_irq_routing *r, int v)
{
	static const u32 types[] = { 0, KVM_IRQ_ROUTING_S390_ADAPTER, 6, 0x100, 0xffffffff };

	rt_add_msi(r, 101, 0, 0x53);
	r->entries[r->nr - 1].type = types[v];
}

static void bad_irqchip(struct kvm_irq_routing *r, int v)
{
	static const u32 chips[] = { 3, 4, 0x7fffffff, 0xffffffff };

	rt_add_chip(r, 5, chips[v], 0);
}

static void bad_pin(struct kvm_irq_routing *r, int v)
{
	static const u32 pins[][2] = {
		{ KVM_IRQCHIP_IOAPIC, IOAPIC_PINS },
		{ KVM_IRQCHIP_IOAPIC, 0xffffffff },
		{ KVM_IRQCHIP_PIC_MASTER, PIC_PINS },
		{ KVM_IRQCHIP_PIC_SLAVE, PIC_PINS },
		{ KVM_IRQCHIP_PIC_SLAVE, 0x80000000 },
	};

	rt_add_chip(r, 6, pins[v][0], pins[v][1]);
}

static void dup_msi(struct kvm_irq_routing *r, int v)
{
	/* Same GSI as an earlier MSI entry; identical or different payload. */
	rt_add_msi(r, v ? 100 : KNOWN_GSI, 0, v ? 0x50 : 0x54);
}

static void dup_irqchip(struct kvm_irq_routing *r, int v)
{
	switch (v) {
	case 0:
		rt_add_chip(r, 2, KVM_IRQCHIP_IOAPIC, 3);
		break;
	case 1:
		rt_add_chip(r, 2, KVM_IRQCHIP_IOAPIC, 2);
		break;
	default:
		rt_add_chip(r, 7, KVM_IRQCHIP_PIC_MASTER, 7);
		rt_add_chip(r, 7, KVM_IRQCHIP_IOAPIC, 7);
		rt_add_chip(r, 7, KVM_IRQCHIP_PIC_MASTER, 6);
		break;
	}
}

static void msi_irqchip_mix(struct kvm_irq_routing *r, int v)
{
	if (v) {
		rt_add_msi(r, 2, 0, 0x55);		/* MSI after IOAPIC */
	} else {
		rt_add_msi(r, 8, 0, 0x55);
		rt_add_chip(r, 8, KVM_IRQCHIP_IOAPIC, 8);	/* IOAPIC after MSI */
	}
}

static void bad_msi_flags(struct kvm_irq_routing *r, int v)
{
	static const u32 flags[] = { 2, 4, 0x80000000, KVM_MSI_VALID_DEVID | 2 };

	rt_add_msi(r, 102, 0, 0x56);
	r->entries[r->nr - 1].flags = flags[v];
}

static void bad_irqchip_flags(struct kvm_irq_routing *r, int v)
{
	static const u32 flags[] = { KVM_MSI_VALID_DEVID, 2, 0x80000000 };

	rt_add_chip(r, 9, KVM_IRQCHIP_IOAPIC, 9);
	r->entries[r->nr - 1].flags = flags[v];
}

static void msi_devid(struct kvm_irq_routing *r, int v)
{
	/* x86 ignores the device ID but, like upstream, accepts the flag. */
	r->entries[0].flags = KVM_MSI_VALID_DEVID;
	r->entries[0].u.msi.devid = v ? 0xffffffff : 0x1234;
}

static void bad_x2apic_addr_hi(struct kvm_irq_routing *r, int v)
{
	rt_add_msi(r, 103, 0, 0x57);
	r->entries[r->nr - 1].u.msi.address_hi = v ? 0xff : 0x100 | 1;
}

static void test_errno_gsi(void)
{
	errno_case("gsi >= KVM_MAX_IRQ_ROUTES", bad_gsi, 5, -EINVAL);
}

static void test_errno_nr(void)
{
	errno_case("nr > KVM_MAX_IRQ_ROUTES", bad_nr, 3, -EINVAL);
}

static void test_errno_table_flags(void)
{
	errno_case("table flags", bad_table_flags, 4, -EINVAL);
}

static void test_errno_type(void)
{
	errno_case("unknown type", bad_type, 5, -EINVAL);
}

static void test_errno_irqchip(void)
{
	errno_case("irqchip out of range", bad_irqchip, 4, -EINVAL);
}

static void test_errno_pin(void)
{
	errno_case("pin out of range", bad_pin, 5, -EINVAL);
}

static void test_errno_dup_msi(void)
{
	errno_case("two MSI entries on one GSI", dup_msi, 2, -EINVAL);
}

static void test_errno_dup_irqchip(void)
{
	errno_case("one irqchip twice on one GSI", dup_irqchip, 3, -EINVAL);
}

static void test_errno_msi_irqchip_mix(void)
{
	errno_case("MSI and irqchip on one GSI", msi_irqchip_mix, 2, -EINVAL);
}

static void test_errno_msi_flags(void)
{
	errno_case("MSI flags", bad_msi_flags, 4, -EINVAL);
}

static void test_errno_irqchip_flags(void)
{
	errno_case("irqchip entry flags", bad_irqchip_flags, 3, -EINVAL);
}

static void test_msi_devid_accepted(void)
{
	errno_case("KVM_MSI_VALID_DEVID", msi_devid, 2, 0);
}

static void test_errno_x2apic_addr_hi(void)
{
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_X2APIC_API));
	errno_case("x2APIC format address_hi", bad_x2apic_addr_hi, 2, -EINVAL);
}

/* ---------------------------------------------------------------------------
 * 2. Delivery after each kind of update.
 */
#define DGSI		40
#define DGSI_FAR	(KVM_MAX_IRQ_ROUTES - 1)

struct dsetup {
	struct rt_vm t;
	struct kvm_irq_routing *r;
	int efd, efd_far;
};

static void dsetup_init(struct dsetup *d)
{
	rt_vm_create(&d->t, 2);
	d->r = rt_alloc();
	rt_add_msi(d->r, DGSI, 0, 0x50);
	rt_add_msi(d->r, DGSI + 1, 1, 0x51);
	rt_add_chip(d->r, 3, KVM_IRQCHIP_IOAPIC, 3);
	rt_set_ok(d->t.vm, d->r);
	d->efd = kvm_new_eventfd();
	d->efd_far = kvm_new_eventfd();
	kvm_assign_irqfd(d->t.vm, DGSI, d->efd);
	kvm_assign_irqfd(d->t.vm, DGSI_FAR, d->efd_far);
	expect_probe(&d->t, DGSI, d->efd, hit(0, 0x50), "initial");
	expect_probe(&d->t, DGSI_FAR, d->efd_far, 0, "initial, unrouted GSI");
}

static void dsetup_fini(struct dsetup *d)
{
	close(d->efd);
	close(d->efd_far);
	rt_vm_destroy(&d->t);
	free(d->r);
}

static void test_deliver_identical(void)
{
	struct dsetup d;
	int i;

	dsetup_init(&d);
	for (i = 0; i < 3; i++) {
		rt_set_ok(d.t.vm, d.r);
		expect_probe(&d.t, DGSI, d.efd, hit(0, 0x50), "identical table");
	}
	dsetup_fini(&d);
}

static void test_deliver_retarget(void)
{
	struct dsetup d;

	dsetup_init(&d);
	/* New vector, same vCPU. */
	d.r->entries[0].u.msi.data = 0x90;
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(0, 0x90), "retarget to new vector");
	/* New vector and new vCPU. */
	d.r->entries[0].u.msi.address_lo = MSI_ADDR_BASE | 1 << 12;
	d.r->entries[0].u.msi.data = 0xa0;
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(1, 0xa0), "retarget to new vCPU");
	/* MSI to IOAPIC pin on the same GSI. */
	d.r->entries[0].type = KVM_IRQ_ROUTING_IRQCHIP;
	memset(&d.r->entries[0].u, 0, sizeof(d.r->entries[0].u));
	d.r->entries[0].u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
	d.r->entries[0].u.irqchip.pin = 12;
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(0, IOAPIC_VEC_BASE + 12),
		     "MSI route changed to IOAPIC");
	dsetup_fini(&d);
}

static void test_deliver_grow(void)
{
	struct dsetup d;
	u32 gsi;

	dsetup_init(&d);
	for (gsi = 100; gsi < 1100; gsi++)
		rt_add_msi(d.r, gsi, gsi & 1, MSI_VEC_MIN + gsi % (MSI_VEC_MAX - MSI_VEC_MIN));
	rt_add_msi(d.r, DGSI_FAR, 1, 0xb0);
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(0, 0x50), "grown table, old route");
	expect_probe(&d.t, DGSI_FAR, d.efd_far, hit(1, 0xb0), "grown table, new route");
	dsetup_fini(&d);
}

static void test_deliver_shrink(void)
{
	struct dsetup d;
	u32 gsi;

	dsetup_init(&d);
	for (gsi = 100; gsi < 1100; gsi++)
		rt_add_msi(d.r, gsi, 0, 0x60);
	rt_add_msi(d.r, DGSI_FAR, 1, 0xb0);
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI_FAR, d.efd_far, hit(1, 0xb0), "big table");

	d.r->nr = 2;
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(0, 0x50), "shrunk table, kept route");
	expect_probe(&d.t, DGSI_FAR, d.efd_far, 0, "shrunk table, dropped route");
	dsetup_fini(&d);
}

static void test_deliver_removed(void)
{
	struct dsetup d;
	u32 c;

	dsetup_init(&d);
	/* Drop DGSI, keep the rest. */
	d.r->entries[0] = d.r->entries[--d.r->nr];
	rt_set_ok(d.t.vm, d.r);
	c = rd_count(&d.t, 0, 0x50);
	expect_probe(&d.t, DGSI, d.efd, 0, "route removed");
	expect_probe(&d.t, DGSI, d.efd, 0, "route removed, again");
	TEST_ASSERT_EQ(rd_count(&d.t, 0, 0x50), c);

	/* Empty table. */
	d.r->nr = 0;
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, 0, "empty table");

	/* Re-adding the route restores delivery. */
	rt_add_msi(d.r, DGSI, 1, 0x70);
	rt_set_ok(d.t.vm, d.r);
	expect_probe(&d.t, DGSI, d.efd, hit(1, 0x70), "route re-added");
	dsetup_fini(&d);
}

#define RS_GSI	10
#define RS_PIN	10

static bool eventfd_wait(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	eventfd_t v;

	if (poll(&pfd, 1, timeout_s * 1000) != 1)
		return false;
	return eventfd_read(fd, &v) == 0 && v >= 1;
}

static void test_deliver_ioapic_resample(void)
{
	struct kvm_irq_routing *r = rt_alloc();
	struct pollfd pfd;
	struct kvm_irqfd irqfd;
	int efd, rfd, i, ret;
	struct rt_vm t;
	u32 c;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQFD_RESAMPLE));
	rt_vm_create(&t, 1);
	set_ioapic_level(t.vm, RS_PIN, true);
	rt_add_chip(r, RS_GSI, KVM_IRQCHIP_IOAPIC, RS_PIN);
	rt_add_msi(r, 50, 0, 0x50);
	rt_set_ok(t.vm, r);

	efd = kvm_new_eventfd();
	rfd = eventfd(0, EFD_NONBLOCK);
	TEST_ASSERT(rfd >= 0, "eventfd failed");
	memset(&irqfd, 0, sizeof(irqfd));
	irqfd.fd = efd;
	irqfd.gsi = RS_GSI;
	irqfd.flags = KVM_IRQFD_FLAG_RESAMPLE;
	irqfd.resamplefd = rfd;
	vm_ioctl(t.vm, KVM_IRQFD, &irqfd);

	for (i = 0; i < 4; i++) {
		c = rd_count(&t, 0, IOAPIC_VEC_BASE + RS_PIN);
		TEST_ASSERT(eventfd_write(efd, 1) == 0, "eventfd_write failed");
		TEST_ASSERT(wait_u32(&t.count[IOAPIC_VEC_BASE + RS_PIN], c + 1),
			    "level IRQ %d not delivered", i);
		TEST_ASSERT(eventfd_wait(rfd), "resamplefd did not fire after EOI %d", i);
		drain_irqs(&t);
		TEST_ASSERT_EQ(rd_count(&t, 0, IOAPIC_VEC_BASE + RS_PIN), c + 1);
		/* The line was de-asserted on EOI: no second resample. */
		pfd.fd = rfd;
		pfd.events = POLLIN;
		ret = poll(&pfd, 1, 0);
		TEST_ASSERT(ret == 0, "spurious resample after IRQ %d", i);
		/* An identical table re-set must not disturb the resampler. */
		rt_set_ok(t.vm, r);
	}

	irqfd.flags |= KVM_IRQFD_FLAG_DEASSIGN;
	vm_ioctl(t.vm, KVM_IRQFD, &irqfd);
	close(efd);
	close(rfd);
	rt_vm_destroy(&t);
	free(r);
}

static void test_deliver_signal_msi(void)
{
	u32 snap[NR_VCPUS_MAX * 256];
	struct kvm_msi msi;
	struct rt_vm t;
	int v, r;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	rt_vm_create(&t, 2);
	for (v = 0; v < 2; v++) {
		memcpy(snap, t.count, sizeof(snap));
		r = signal_msi(t.vm, v, 0x70 + v);
		TEST_ASSERT(r == 1, "KVM_SIGNAL_MSI returned %d, errno %d", r, errno);
		drain_irqs(&t);
		TEST_ASSERT_EQ(delivered_since(&t, snap), hit(v, 0x70 + v));
	}
	memset(&msi, 0, sizeof(msi));
	msi.address_lo = MSI_ADDR_BASE;
	msi.data = 0x72;
	msi.flags = 2;
	r = __vm_ioctl(t.vm, KVM_SIGNAL_MSI, &msi);
	TEST_ASSERT(r == -1 && errno == EINVAL, "KVM_SIGNAL_MSI with bad flags: %d/%d", r, errno);
	rt_vm_destroy(&t);
}

/* ---------------------------------------------------------------------------
 * 3. Concurrency.
 */
#define CGSI_INJ	60
#define CGSI_DIFF	61
#define CVEC_INJ	0x50
#define CVEC_A		0x61
#define CVEC_B		0x62

struct updater {
	pthread_t thread;
	int vm_fd;
	int iters;
	struct kvm_irq_routing *a, *b;
	int failures;
	int last_err;
	int *started;
	bool finished;
};

static void *updater_main(void *arg)
{
	struct updater *u = arg;
	int i, ret;

	for (i = 0; i < u->iters; i++) {
		ret = rt_set(u->vm_fd, (i & 1) ? u->b : u->a);
		if (ret) {
			u->failures++;
			u->last_err = ret;
		}
		if (!i && u->started)
			__atomic_add_fetch(u->started, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_store_n(&u->finished, true, __ATOMIC_SEQ_CST);
	return NULL;
}

static void test_concurrent_update_inject(void)
{
	struct kvm_irq_routing *a = rt_alloc(), *b = rt_alloc();
	struct updater u[2];
	int efd, i, running, n = 0;
	struct rt_vm t;
	u32 c, got;

	rt_vm_create(&t, 1);
	rt_add_msi(a, CGSI_INJ, 0, CVEC_INJ);
	rt_add_msi(a, CGSI_DIFF, 0, CVEC_A);
	for (i = 0; i < 8; i++)
		rt_add_msi(a, 100 + i, 0, 0x80);
	rt_add_chip(b, 1, KVM_IRQCHIP_IOAPIC, 1);
	rt_add_msi(b, CGSI_DIFF, 0, CVEC_B);
	for (i = 0; i < 300; i++)
		rt_add_msi(b, 200 + i, 0, 0x81);
	rt_add_msi(b, CGSI_INJ, 0, CVEC_INJ);
	rt_set_ok(t.vm, a);

	efd = kvm_new_eventfd();
	kvm_assign_irqfd(t.vm, CGSI_INJ, efd);

	for (i = 0; i < 2; i++) {
		memset(&u[i], 0, sizeof(u[i]));
		u[i].vm_fd = t.vm->fd;
		u[i].iters = conc_iters;
		u[i].a = i ? b : a;
		u[i].b = i ? a : b;
		kvm_pthread_create(&u[i].thread, NULL, updater_main, &u[i]);
	}

	/* Inject until both updaters are done, but at least conc_iters times. */
	do {
		running = !__atomic_load_n(&u[0].finished, __ATOMIC_SEQ_CST) ||
			  !__atomic_load_n(&u[1].finished, __ATOMIC_SEQ_CST);
		c = rd_count(&t, 0, CVEC_INJ);
		TEST_ASSERT(eventfd_write(efd, 1) == 0, "eventfd_write failed");
		TEST_ASSERT(wait_u32(&t.count[CVEC_INJ], c + 1),
			    "interrupt %d lost during concurrent routing updates", n);
		n++;
	} while (running || n < conc_iters);
	pthread_join(u[0].thread, NULL);
	pthread_join(u[1].thread, NULL);

	for (i = 0; i < 2; i++)
		TEST_ASSERT(!u[i].failures, "updater %d: %d failures, last %d",
			    i, u[i].failures, u[i].last_err);

	drain_irqs(&t);
	TEST_ASSERT_EQ(rd_count(&t, 0, CVEC_INJ), (u32)n);
	TEST_ASSERT_EQ(rd_count(&t, 0, CVEC_A) + rd_count(&t, 0, CVEC_B), 0);

	/* The final table must be A or B. */
	close(efd);
	efd = kvm_new_eventfd();
	kvm_assign_irqfd(t.vm, CGSI_DIFF, efd);
	got = probe_irqfd(&t, CGSI_DIFF, efd);
	TEST_ASSERT(got == hit(0, CVEC_A) || got == hit(0, CVEC_B),
		    "final table is neither A nor B: GSI %d delivered 0x%x", CGSI_DIFF, got);
	ksft_print_msg("concurrent: %d injections, final table %c\n", n,
		       got == hit(0, CVEC_A) ? 'A' : 'B');
	close(efd);
	rt_vm_destroy(&t);
	free(a);
	free(b);
}

static void test_vm_teardown_during_update(void)
{
	struct kvm_irq_routing *a = rt_alloc(), *b = rt_alloc();
	int i, j, efd, started;
	struct updater u[2];
	struct kvm_vm *vm;

	for (i = 0; i < 16; i++)
		rt_add_msi(a, i + 16, 0, 0x40 + i);
	rt_add_chip(a, 5, KVM_IRQCHIP_IOAPIC, 5);
	for (i = 0; i < 200; i++)
		rt_add_msi(b, 1000 + i, 0, 0x41);
	rt_add_chip(b, 5, KVM_IRQCHIP_PIC_MASTER, 5);

	for (i = 0; i < nr_teardown_vms; i++) {
		vm = vm_create(1);
		efd = kvm_new_eventfd();
		kvm_assign_irqfd(vm, 5, efd);
		started = 0;
		for (j = 0; j < 2; j++) {
			memset(&u[j], 0, sizeof(u[j]));
			u[j].vm_fd = dup(vm->fd);
			TEST_ASSERT(u[j].vm_fd >= 0, "dup failed");
			u[j].iters = teardown_updates;
			u[j].a = j ? b : a;
			u[j].b = j ? a : b;
			u[j].started = &started;
			kvm_pthread_create(&u[j].thread, NULL, updater_main, &u[j]);
		}
		/* Destroy the VM while the updaters run; the last dup'd fd frees it. */
		while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < 1 + (i & 1))
			sched_yield();
		kvm_vm_free(vm);
		for (j = 0; j < 2; j++) {
			pthread_join(u[j].thread, NULL);
			close(u[j].vm_fd);
			TEST_ASSERT(!u[j].failures, "VM %d updater %d: %d failures, last %d",
				    i, j, u[j].failures, u[j].last_err);
		}
		close(efd);
	}
	free(a);
	free(b);
}

/* ---------------------------------------------------------------------------
 * 4. Differential fuzz.
 */
static u64 fuzz_seed = 1;
static u32 fuzz_cases = 400;
static u32 fuzz_start;
static u32 probe_every = 16;
static u32 fuzz_print_every = 1000;
static bool fuzz_log;
static bool fuzz_mode;

static const u32 probe_gsis[] = { 0, 16, 24, 4095 };
#define NR_PROBES	ARRAY_SIZE(probe_gsis)

enum fz_bad {
	BAD_GSI, BAD_NR, BAD_TABLE_FLAGS, BAD_TYPE, BAD_IRQCHIP, BAD_PIN, BAD_DUP_MSI,
	BAD_DUP_IRQCHIP, BAD_MSI_FLAGS, BAD_CHIP_FLAGS, BAD_MIX, BAD_ADDR_HI, NR_BAD,
};

enum fz_op {
	OP_IDENTICAL, OP_MODIFY, OP_GROW, OP_SHRINK, OP_REORDER, OP_EMPTY, OP_FRESH, OP_INVALID,
};

static const char * const op_names[] = {
	"identical", "modify", "grow", "shrink", "reorder", "empty", "fresh", "invalid",
};

struct fuzz {
	u64 rng;
	struct kvm_irq_routing *base;	/* last table meant to be valid */
	struct kvm_irq_routing *cur;	/* table of this case */
	struct kvm_irq_routing *installed;	/* model of the kernel's table */
	u8 used[KVM_MAX_IRQ_ROUTES];
	bool has_addr_hi_check;
	int op, bad;
};

static u64 splitmix64(u64 *s)
{
	u64 z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static u32 rnd(struct fuzz *f, u32 n)
{
	return n ? splitmix64(&f->rng) % n : 0;
}

static u64 fnv1a(u64 h, const void *data, size_t len)
{
	const u8 *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static u32 fz_size(struct fuzz *f)
{
	u32 x = rnd(f, 100);

	if (x < 70)
		return 1 + rnd(f, 8);
	if (x < 90)
		return 9 + rnd(f, 120);
	if (x < 98)
		return 129 + rnd(f, 896);
	return 1025 + rnd(f, KVM_MAX_IRQ_ROUTES - 1024);
}

static void fz_mark_used(struct fuzz *f, struct kvm_irq_routing *r)
{
	u32 i;

	memset(f->used, 0, sizeof(f->used));
	for (i = 0; i < r->nr; i++)
		f->used[r->entries[i].gsi] = 1;
}

/* A free GSI, or -1 if none was found. */
static int fz_free_gsi(struct fuzz *f, bool small)
{
	int i, gsi;

	for (i = 0; i < 16; i++) {
		if (!rnd(f, 4))
			gsi = probe_gsis[rnd(f, NR_PROBES)];
		else if (small && rnd(f, 8))
			gsi = rnd(f, 64);
		else
			gsi = rnd(f, KVM_MAX_IRQ_ROUTES);
		if (!f->used[gsi])
			return gsi;
	}
	for (i = 0, gsi = rnd(f, KVM_MAX_IRQ_ROUTES); i < KVM_MAX_IRQ_ROUTES; i++) {
		gsi = (gsi + 1) % KVM_MAX_IRQ_ROUTES;
		if (!f->used[gsi])
			return gsi;
	}
	return -1;
}

static void fz_msi(struct fuzz *f, struct kvm_irq_routing *r, u32 gsi)
{
	u32 dest = rnd(f, 16) ? 0 : ABSENT_APIC_ID;

	rt_add_msi(r, gsi, dest, MSI_VEC_MIN + rnd(f, MSI_VEC_MAX - MSI_VEC_MIN + 1));
	if (!rnd(f, 20)) {
		r->entries[r->nr - 1].flags = KVM_MSI_VALID_DEVID;
		r->entries[r->nr - 1].u.msi.devid = splitmix64(&f->rng);
	}
}

/* Add the entries of one valid GSI (1 or 2 entries, at most @room). */
static void fz_slot(struct fuzz *f, struct kvm_irq_routing *r, u32 gsi, u32 room)
{
	u32 k = rnd(f, 10);

	f->used[gsi] = 1;
	if (k < 6) {
		fz_msi(f, r, gsi);
	} else if (k < 8) {
		rt_add_chip(r, gsi, KVM_IRQCHIP_IOAPIC, rnd(f, IOAPIC_PINS));
	} else if (k < 9 || room < 2) {
		rt_add_chip(r, gsi, KVM_IRQCHIP_PIC_MASTER + rnd(f, 2), rnd(f, PIC_PINS));
	} else {
		rt_add_chip(r, gsi, KVM_IRQCHIP_PIC_MASTER + rnd(f, 2), rnd(f, PIC_PINS));
		rt_add_chip(r, gsi, KVM_IRQCHIP_IOAPIC, rnd(f, IOAPIC_PINS));
	}
}

static void fz_add_slots(struct fuzz *f, struct kvm_irq_routing *r, u32 n)
{
	u32 target = r->nr + n;
	int gsi;

	if (target > KVM_MAX_IRQ_ROUTES)
		target = KVM_MAX_IRQ_ROUTES;
	while (r->nr < target) {
		gsi = fz_free_gsi(f, n <= 64);
		if (gsi < 0)
			break;
		fz_slot(f, r, gsi, target - r->nr);
	}
}

static void fz_copy(struct kvm_irq_routing *dst, struct kvm_irq_routing *src)
{
	memcpy(dst, src, sizeof(*src) + src->nr * sizeof(src->entries[0]));
}

static void fz_shuffle(struct fuzz *f, struct kvm_irq_routing *r)
{
	struct kvm_irq_routing_entry tmp;
	u32 i, j;

	for (i = r->nr; i > 1; i--) {
		j = rnd(f, i);
		tmp = r->entries[i - 1];
		r->entries[i - 1] = r->entries[j];
		r->entries[j] = tmp;
	}
}

static void fz_modify(struct fuzz *f, struct kvm_irq_routing *r)
{
	struct kvm_irq_routing_entry *e;
	int gsi;

	if (!r->nr) {
		fz_add_slots(f, r, 1);
		return;
	}
	e = &r->entries[rnd(f, r->nr)];
	if (e->type == KVM_IRQ_ROUTING_MSI) {
		if (rnd(f, 4)) {
			e->u.msi.data = MSI_VEC_MIN + rnd(f, MSI_VEC_MAX - MSI_VEC_MIN + 1);
		} else if (rnd(f, 2)) {
			e->u.msi.address_lo ^= ABSENT_APIC_ID << 12;
		} else {
			gsi = fz_free_gsi(f, true);
			if (gsi >= 0)
				e->gsi = gsi;
		}
	} else if (e->u.irqchip.irqchip == KVM_IRQCHIP_IOAPIC) {
		e->u.irqchip.pin = rnd(f, IOAPIC_PINS);
	} else {
		e->u.irqchip.pin = rnd(f, PIC_PINS);
	}
}

static void fz_shrink(struct fuzz *f, struct kvm_irq_routing *r)
{
	u32 k = 1 + rnd(f, r->nr > 16 ? r->nr / 2 : r->nr), i;

	while (k-- && r->nr) {
		i = rnd(f, r->nr);
		memmove(&r->entries[i], &r->entries[i + 1],
			(r->nr - i - 1) * sizeof(r->entries[0]));
		r->nr--;
	}
}

static struct kvm_irq_routing_entry *fz_pick_type(struct kvm_irq_routing *r, u32 type,
						  struct fuzz *f)
{
	u32 i, start = rnd(f, r->nr);

	for (i = 0; i < r->nr; i++) {
		struct kvm_irq_routing_entry *e = &r->entries[(start + i) % r->nr];

		if (e->type == type)
			return e;
	}
	return NULL;
}

/* Insert one bad entry at a random position (entries before it are valid). */
static struct kvm_irq_routing_entry *fz_insert(struct fuzz *f, struct kvm_irq_routing *r)
{
	u32 pos = rnd(f, r->nr + 1);

	memmove(&r->entries[pos + 1], &r->entries[pos], (r->nr - pos) * sizeof(r->entries[0]));
	r->nr++;
	memset(&r->entries[pos], 0, sizeof(r->entries[0]));
	return &r->entries[pos];
}

static void fz_make_invalid(struct fuzz *f, struct kvm_irq_routing *r)
{
	static const u32 bad_types[] = { 0, KVM_IRQ_ROUTING_S390_ADAPTER, 6, 7, 0x100, 0xffffffff };
	static const u32 bad_chips[] = { 3, 4, 0x7fffffff, 0xffffffff };
	struct kvm_irq_routing_entry *e, *o;
	int gsi;

	if (r->nr >= KVM_MAX_IRQ_ROUTES - 2)
		r->nr = KVM_MAX_IRQ_ROUTES - 2;
	f->bad = rnd(f, f->has_addr_hi_check ? NR_BAD : NR_BAD - 1);
	switch (f->bad) {
	case BAD_GSI:
		e = fz_insert(f, r);
		e->type = KVM_IRQ_ROUTING_MSI;
		e->u.msi.address_lo = MSI_ADDR_BASE;
		e->u.msi.data = 0x30;
		if (rnd(f, 4))
			e->gsi = KVM_MAX_IRQ_ROUTES + rnd(f, 64);
		else
			e->gsi = (u32)splitmix64(&f->rng) | 1u << 31;
		break;
	case BAD_NR:
		r->nr = rnd(f, 4) ? KVM_MAX_IRQ_ROUTES + 1 + rnd(f, 3) : 0xffffffff;
		break;
	case BAD_TABLE_FLAGS:
		r->flags = 1u << rnd(f, 32);
		break;
	case BAD_TYPE:
		e = fz_insert(f, r);
		e->type = bad_types[rnd(f, ARRAY_SIZE(bad_types))];
		gsi = fz_free_gsi(f, true);
		e->gsi = gsi < 0 ? 0 : gsi;
		break;
	case BAD_IRQCHIP:
	case BAD_PIN:
		e = fz_insert(f, r);
		e->type = KVM_IRQ_ROUTING_IRQCHIP;
		gsi = fz_free_gsi(f, true);
		e->gsi = gsi < 0 ? 0 : gsi;
		if (f->bad == BAD_IRQCHIP) {
			e->u.irqchip.irqchip = bad_chips[rnd(f, ARRAY_SIZE(bad_chips))];
			e->u.irqchip.pin = rnd(f, PIC_PINS);
		} else if (rnd(f, 2)) {
			e->u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
			e->u.irqchip.pin = IOAPIC_PINS + rnd(f, 2) * rnd(f, 1u << 31);
		} else {
			e->u.irqchip.irqchip = KVM_IRQCHIP_PIC_MASTER + rnd(f, 2);
			e->u.irqchip.pin = PIC_PINS + rnd(f, 2) * rnd(f, 1u << 31);
		}
		break;
	case BAD_DUP_MSI:
	case BAD_DUP_IRQCHIP:
	case BAD_MIX:
		/* Same GSI as an existing entry (added as a pair if none fits). */
		o = fz_pick_type(r, f->bad == BAD_DUP_MSI ? KVM_IRQ_ROUTING_MSI
							 : KVM_IRQ_ROUTING_IRQCHIP, f);
		if (!o) {
			gsi = fz_free_gsi(f, true);
			o = fz_insert(f, r);
			o->gsi = gsi < 0 ? 0 : gsi;
			if (f->bad == BAD_DUP_MSI) {
				o->type = KVM_IRQ_ROUTING_MSI;
				o->u.msi.address_lo = MSI_ADDR_BASE;
				o->u.msi.data = 0x31;
			} else {
				o->type = KVM_IRQ_ROUTING_IRQCHIP;
				o->u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
			}
		}
		gsi = o->gsi;
		if (f->bad == BAD_MIX) {
			e = fz_insert(f, r);
			e->gsi = gsi;
			e->type = KVM_IRQ_ROUTING_MSI;
			e->u.msi.address_lo = MSI_ADDR_BASE;
			e->u.msi.data = 0x32;
		} else {
			struct kvm_irq_routing_entry copy = *o;

			e = fz_insert(f, r);
			*e = copy;
			if (e->type == KVM_IRQ_ROUTING_MSI)
				e->u.msi.data = MSI_VEC_MIN + rnd(f, 16);
			else
				e->u.irqchip.pin = rnd(f, PIC_PINS);
		}
		break;
	case BAD_MSI_FLAGS:
	case BAD_CHIP_FLAGS:
	case BAD_ADDR_HI:
		e = fz_insert(f, r);
		gsi = fz_free_gsi(f, true);
		e->gsi = gsi < 0 ? 0 : gsi;
		if (f->bad == BAD_CHIP_FLAGS) {
			e->type = KVM_IRQ_ROUTING_IRQCHIP;
			e->u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
			e->u.irqchip.pin = rnd(f, IOAPIC_PINS);
			e->flags = 1u << rnd(f, 32);
		} else {
			e->type = KVM_IRQ_ROUTING_MSI;
			e->u.msi.address_lo = MSI_ADDR_BASE;
			e->u.msi.data = 0x33;
			if (f->bad == BAD_MSI_FLAGS)
				e->flags = 1u << (1 + rnd(f, 31)) | rnd(f, 2);
			else
				e->u.msi.address_hi = 1 + rnd(f, 255) + (rnd(f, 2) << 8);
		}
		break;
	}
}

/* Generate case @i into f->cur; returns the errno the model expects. */
static int fz_generate(struct fuzz *f)
{
	struct kvm_irq_routing *r = f->cur;
	u32 x = rnd(f, 100);

	f->bad = -1;
	fz_copy(r, f->base);
	r->flags = 0;
	fz_mark_used(f, r);
	if (x < 15) {
		f->op = OP_IDENTICAL;
	} else if (x < 35) {
		f->op = OP_MODIFY;
		fz_modify(f, r);
	} else if (x < 45) {
		f->op = OP_GROW;
		fz_add_slots(f, r, rnd(f, 4) ? 1 + rnd(f, 8) : fz_size(f));
	} else if (x < 55) {
		f->op = r->nr ? OP_SHRINK : OP_GROW;
		if (r->nr)
			fz_shrink(f, r);
		else
			fz_add_slots(f, r, 1 + rnd(f, 8));
	} else if (x < 60) {
		f->op = OP_REORDER;
		fz_shuffle(f, r);
	} else if (x < 62) {
		f->op = OP_EMPTY;
		r->nr = 0;
	} else {
		f->op = x < 85 ? OP_FRESH : OP_INVALID;
		if (x < 85 || rnd(f, 2)) {
			r->nr = 0;
			memset(f->used, 0, sizeof(f->used));
			fz_add_slots(f, r, fz_size(f));
		}
	}
	if (f->op == OP_INVALID) {
		fz_make_invalid(f, r);
		return -EINVAL;
	}
	fz_copy(f->base, r);
	return 0;
}

static u32 fz_expected_probe(struct fuzz *f, u32 gsi)
{
	struct kvm_irq_routing *r = f->installed;
	u32 i, res = 0;

	for (i = 0; i < r->nr; i++) {
		struct kvm_irq_routing_entry *e = &r->entries[i];

		if (e->gsi != gsi)
			continue;
		if (e->type == KVM_IRQ_ROUTING_MSI) {
			if (!((e->u.msi.address_lo >> 12) & 0xff))
				res = hit(0, e->u.msi.data & 0xff);
		} else if (e->u.irqchip.irqchip == KVM_IRQCHIP_IOAPIC) {
			res = hit(0, IOAPIC_VEC_BASE + e->u.irqchip.pin);
		}
	}
	return res;
}

/* @gsi < 0: errno of KVM_SET_GSI_ROUTING, else delivery through the GSI's irqfd. */
static void fz_mismatch(u32 *count, u32 i, const char *op, int gsi, int got, int exp)
{
	if ((*count)++ >= 10)
		return;
	if (gsi < 0)
		ksft_print_msg("fuzz: case %u (%s): errno %d, expected %d\n", i, op, got, exp);
	else
		ksft_print_msg("fuzz: case %u (%s): GSI %d delivered 0x%x, expected 0x%x\n",
			       i, op, gsi, got, exp);
}

static const char *errname(int err)
{
	static char buf[16];

	switch (err) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case EFAULT:
		return "EFAULT";
	case ENOMEM:
		return "ENOMEM";
	case E2BIG:
		return "E2BIG";
	}
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

static void test_fuzz(void)
{
	u32 hist[4096] = { 0 }, probes[NR_PROBES] = { 0 }, i, p, mismatches = 0;
	int efds[NR_PROBES], want, ret;
	u64 hash = 0xcbf29ce484222325ull, t0;
	bool probe;
	struct fuzz f;
	struct rt_vm t;

	memset(&f, 0, sizeof(f));
	f.rng = fuzz_seed;
	f.base = rt_alloc();
	f.cur = rt_alloc();
	f.installed = rt_alloc();

	rt_vm_create(&t, 1);
	f.has_addr_hi_check = kvm_has_cap(KVM_CAP_X2APIC_API);

	/* Replay the generator up to the first case; install the model's table. */
	for (i = 0; i < fuzz_start; i++)
		fz_generate(&f);
	/* Always start from a known table (empty, not KVM's default routing). */
	rt_set_ok(t.vm, f.base);
	fz_copy(f.installed, f.base);

	for (p = 0; p < NR_PROBES; p++) {
		efds[p] = kvm_new_eventfd();
		kvm_assign_irqfd(t.vm, probe_gsis[p], efds[p]);
	}

	t0 = now_ns();
	for (i = fuzz_start; i < fuzz_cases; i++) {
		want = fz_generate(&f);
		ret = rt_set(t.vm->fd, f.cur);
		hist[-ret < 4096 ? -ret : 4095]++;
		if (!ret)
			fz_copy(f.installed, f.cur);
		if (ret != want)
			fz_mismatch(&mismatches, i, op_names[f.op], -1, ret, want);

		hash = fnv1a(hash, &i, sizeof(i));
		hash = fnv1a(hash, &ret, sizeof(ret));

		probe = !(i % probe_every) || i == fuzz_cases - 1;
		if (probe) {
			for (p = 0; p < NR_PROBES; p++) {
				u32 exp = fz_expected_probe(&f, probe_gsis[p]);

				probes[p] = probe_irqfd(&t, probe_gsis[p], efds[p]);
				if (probes[p] != exp)
					fz_mismatch(&mismatches, i, op_names[f.op], probe_gsis[p],
						    probes[p], exp);
			}
			hash = fnv1a(hash, probes, sizeof(probes));
		}
		if (fuzz_log) {
			printf("fuzz-case %u op=%s nr=%u errno=%d", i, op_names[f.op],
			       f.cur->nr, ret);
			if (probe)
				for (p = 0; p < NR_PROBES; p++)
					printf(" p%u=0x%x", probe_gsis[p], probes[p]);
			printf("\n");
		}
		if (fuzz_print_every && !((i + 1) % fuzz_print_every))
			ksft_print_msg("fuzz: %u cases, hash=0x%016llx\n", i + 1,
				       (unsigned long long)hash);
	}

	ksft_print_msg("fuzz: %u cases in %llu ms\n", fuzz_cases - fuzz_start,
		       (unsigned long long)((now_ns() - t0) / 1000000));
	printf("irq_routing_fuzz: seed=%llu cases=%u hash=0x%016llx", (unsigned long long)fuzz_seed,
	       fuzz_cases, (unsigned long long)hash);
	if (fuzz_start)
		printf(" start=%u", fuzz_start);
	printf("\nirq_routing_fuzz: errno_hist");
	for (i = 0; i < 4096; i++)
		if (hist[i])
			printf(" %s=%u", errname(i), hist[i]);
	printf("\n");
	fflush(stdout);

	for (p = 0; p < NR_PROBES; p++)
		close(efds[p]);
	rt_vm_destroy(&t);
	TEST_ASSERT(!mismatches, "fuzz: %u result(s) differ from the model", mismatches);
}

/* ---------------------------------------------------------------------------
 * 5. Fault injection.
 *
 * failslab and fail_page_alloc are aimed at this thread, and only while it is
 * inside KVM_SET_GSI_ROUTING (task-filter=Y, /proc/thread-self/make-it-fail).
 * Every update must succeed or fail with -ENOMEM, and after a failure the
 * previous table must still be the one that delivers.  The tables vary in
 * size so that the cached table and the cached copy of the entries are
 * sometimes large enough and sometimes must be reallocated.  kmemleak is
 * checked by whoever runs the test, after all of it.
 */
#define FI_DEBUGFS	"/sys/kernel/debug"
#define FI_GSI		20
#define FI_SEED		0x5eed
/*
 * The cached table and copy only grow, so once a large table has been set
 * no update allocates anything.  Start from a new VM every FI_EPOCH updates,
 * with sizes that mostly stay below a limit that doubles every 3 updates.
 */
#define FI_EPOCH	25

static int fi_updates = 300;
static int fi_mif_fd = -1;

struct fi_knob {
	const char *attr;
	const char *name;
	const char *val;
	char saved[32];
	bool changed;
};

/*
 * Set in this order and restored in reverse: the probabilities are zero while
 * the other knobs change.  verbose=1 prints two lines per injected failure and
 * no stack, so that the stack that vmalloc prints when a vmalloc fallback
 * fails follows the "FAULT_INJECTION" line closely.  ignore-gfp-highmem stays
 * Y: vmalloc's data pages are __GFP_HIGHMEM | __GFP_NOWARN, and the warning
 * that vmalloc prints when they fail would be preceded by no such line.
 */
static struct fi_knob fi_knobs[] = {
	{ "failslab", "probability", "0" },
	{ "failslab", "task-filter", "Y" },
	{ "failslab", "interval", "1" },
	{ "failslab", "times", "-1" },
	{ "failslab", "space", "0" },
	{ "failslab", "verbose", "1" },
	{ "failslab", "ignore-gfp-wait", "N" },
	{ "failslab", "cache-filter", "N" },
	{ "fail_page_alloc", "probability", "0" },
	{ "fail_page_alloc", "task-filter", "Y" },
	{ "fail_page_alloc", "interval", "1" },
	{ "fail_page_alloc", "times", "-1" },
	{ "fail_page_alloc", "space", "0" },
	{ "fail_page_alloc", "verbose", "1" },
	{ "fail_page_alloc", "ignore-gfp-wait", "N" },
	{ "fail_page_alloc", "ignore-gfp-highmem", "Y" },
	{ "fail_page_alloc", "min-order", "0" },
};

static bool fi_has_attr(const char *attr)
{
	char path[128];

	snprintf(path, sizeof(path), FI_DEBUGFS "/%s", attr);
	return !access(path, F_OK);
}

static int fi_read(const char *attr, const char *name, char *buf, size_t size)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), FI_DEBUGFS "/%s/%s", attr, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int fi_write(const char *attr, const char *name, const char *val)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), FI_DEBUGFS "/%s/%s", attr, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : n < 0 ? -errno : -EIO;
}

/* Best effort: also runs from atexit() after a failed assertion. */
static void fi_restore(void)
{
	int i, r;

	for (i = ARRAY_SIZE(fi_knobs) - 1; i >= 0; i--) {
		struct fi_knob *k = &fi_knobs[i];

		if (!k->changed)
			continue;
		r = fi_write(k->attr, k->name, k->saved);
		if (r)
			ksft_print_msg("fault_injection: could not restore %s/%s to '%s': %d\n",
				       k->attr, k->name, k->saved, r);
		k->changed = false;
	}
}

static void fi_setup(void)
{
	size_t i;
	int r;

	atexit(fi_restore);
	for (i = 0; i < ARRAY_SIZE(fi_knobs); i++) {
		struct fi_knob *k = &fi_knobs[i];

		if (!fi_has_attr(k->attr))
			continue;
		r = fi_read(k->attr, k->name, k->saved, sizeof(k->saved));
		TEST_ASSERT(!r, "Cannot read %s/%s/%s: %d", FI_DEBUGFS, k->attr, k->name, r);
		r = fi_write(k->attr, k->name, k->val);
		TEST_ASSERT(!r, "Cannot write '%s' to %s/%s/%s: %d", k->val, FI_DEBUGFS,
			    k->attr, k->name, r);
		k->changed = true;
	}
}

/* Set @name of every fault type that exists, e.g. "probability" to "50". */
static void fi_set_all(const char *name, int val)
{
	static const char * const attrs[] = { "failslab", "fail_page_alloc" };
	char buf[16];
	size_t i;
	int r;

	snprintf(buf, sizeof(buf), "%d", val);
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		if (!fi_has_attr(attrs[i]))
			continue;
		r = fi_write(attrs[i], name, buf);
		TEST_ASSERT(!r, "Cannot set %s/%s to %d: %d", attrs[i], name, val, r);
	}
}

static void fi_make_it_fail(bool on)
{
	ssize_t n = write(fi_mif_fd, on ? "1" : "0", 1);

	TEST_ASSERT(n == 1, "Writing %d to /proc/thread-self/make-it-fail failed, errno %d",
		    on, errno);
}

/*
 * KVM_SET_GSI_ROUTING with make-it-fail set around the ioctl alone.  The
 * buffer @r points to must be resident: a page fault that fails to allocate
 * inside copy_from_user() would turn into -EFAULT.
 */
static int fi_set(int vm_fd, struct kvm_irq_routing *r, bool inject)
{
	int ret, err;

	if (inject)
		fi_make_it_fail(true);
	ret = ioctl(vm_fd, KVM_SET_GSI_ROUTING, r);
	err = ret ? errno : 0;
	if (inject)
		fi_make_it_fail(false);
	return -err;
}

enum fi_kind { FI_FRESH, FI_IDENTICAL, FI_GROW, FI_SHRINK, FI_NR_KINDS };

static const char * const fi_kind_names[] = { "fresh", "identical", "grow", "shrink" };

struct fi_state {
	u64 rng;
	struct kvm_irq_routing *installed;	/* model of the kernel's table */
	struct kvm_irq_routing *next;		/* table of this update */
	u32 want;				/* probe result with @installed */
	u32 next_want;				/* probe result with @next */
	u32 cap;				/* usual limit on sizes and GSIs */
	u8 used[KVM_MAX_IRQ_ROUTES];
};

static u32 fi_rnd(struct fi_state *s, u32 n)
{
	return n ? splitmix64(&s->rng) % n : 0;
}

/* Number of entries besides the probe route; rarely above s->cap. */
static u32 fi_size(struct fi_state *s)
{
	u32 x = fi_rnd(s, 100), n;

	if (x < 40)
		n = fi_rnd(s, 9);
	else if (x < 70)
		n = 9 + fi_rnd(s, 120);
	else if (x < 92)
		n = 129 + fi_rnd(s, 896);
	else
		n = 1025 + fi_rnd(s, KVM_MAX_IRQ_ROUTES - 1025);
	if (n >= s->cap && fi_rnd(s, 16))
		n = fi_rnd(s, s->cap);
	return n;
}

static void fi_add_filler(struct fi_state *s, struct kvm_irq_routing *r, u32 gsi)
{
	s->used[gsi] = 1;
	if (fi_rnd(s, 8))
		rt_add_msi(r, gsi, 0, MSI_VEC_MIN + fi_rnd(s, MSI_VEC_MAX - MSI_VEC_MIN + 1));
	else
		rt_add_chip(r, gsi, KVM_IRQCHIP_IOAPIC, fi_rnd(s, IOAPIC_PINS));
}

/* Point the probe route of @r somewhere else than it points with s->installed. */
static void fi_retarget_probe(struct fi_state *s, struct kvm_irq_routing *r)
{
	struct kvm_irq_routing_entry *e = NULL;
	u32 i, pin, vec;

	for (i = 0; i < r->nr; i++)
		if (r->entries[i].gsi == FI_GSI)
			e = &r->entries[i];
	TEST_ASSERT(e, "fault_injection: no probe route in the table");
	do {
		memset(e, 0, sizeof(*e));
		e->gsi = FI_GSI;
		if (!fi_rnd(s, 8)) {
			pin = 16 + fi_rnd(s, IOAPIC_PINS - 16);
			e->type = KVM_IRQ_ROUTING_IRQCHIP;
			e->u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
			e->u.irqchip.pin = pin;
			s->next_want = hit(0, IOAPIC_VEC_BASE + pin);
		} else {
			vec = MSI_VEC_MIN + fi_rnd(s, MSI_VEC_MAX - MSI_VEC_MIN + 1);
			e->type = KVM_IRQ_ROUTING_MSI;
			e->u.msi.address_lo = MSI_ADDR_BASE;
			e->u.msi.data = vec;
			s->next_want = hit(0, vec);
		}
	} while (s->next_want == s->want);
}

/* A table with @n fillers on distinct GSIs spread over a random span. */
static void fi_fresh(struct fi_state *s, u32 n)
{
	struct kvm_irq_routing *r = s->next;
	u32 span = 32, base, step, k, gsi, pos;

	while (span < n + 1)
		span *= 2;
	while (span < KVM_MAX_IRQ_ROUTES && span < 4 * s->cap && fi_rnd(s, 2))
		span *= 2;
	base = fi_rnd(s, span);
	step = 2 * fi_rnd(s, span / 2) + 1;	/* odd: a permutation of [0, span) */
	memset(s->used, 0, sizeof(s->used));
	r->nr = 0;
	r->flags = 0;
	for (k = 0; r->nr < n; k++) {
		gsi = (base + k * step) & (span - 1);
		if (gsi != FI_GSI)
			fi_add_filler(s, r, gsi);
	}
	/* The probe route goes anywhere; fi_retarget_probe() fills it in. */
	pos = fi_rnd(s, r->nr + 1);
	r->entries[r->nr++] = r->entries[pos];
	r->entries[pos].gsi = FI_GSI;
}

static enum fi_kind fi_generate(struct fi_state *s)
{
	struct kvm_irq_routing *r = s->next;
	u32 x = fi_rnd(s, 100), k, i, gsi, lim;

	if (x < 15) {
		fz_copy(r, s->installed);
		s->next_want = s->want;
		return FI_IDENTICAL;
	}
	if (x < 35 && s->installed->nr + 8 <= KVM_MAX_IRQ_ROUTES) {
		/* One to eight new GSIs, as QEMU does while enabling MSI-X. */
		fz_copy(r, s->installed);
		memset(s->used, 0, sizeof(s->used));
		for (i = 0; i < r->nr; i++)
			s->used[r->entries[i].gsi] = 1;
		lim = 4 * s->cap > 64 ? 4 * s->cap : 64;
		if (lim > KVM_MAX_IRQ_ROUTES || r->nr + 8 > lim)
			lim = KVM_MAX_IRQ_ROUTES;
		for (k = 1 + fi_rnd(s, 8); k; k--) {
			do {
				gsi = fi_rnd(s, lim);
			} while (s->used[gsi]);
			fi_add_filler(s, r, gsi);
		}
		fi_retarget_probe(s, r);
		return FI_GROW;
	}
	if (x < 50 && s->installed->nr > 1) {
		fz_copy(r, s->installed);
		for (k = 1 + fi_rnd(s, r->nr / 2 + 1); k && r->nr > 1; k--) {
			i = fi_rnd(s, r->nr);
			if (r->entries[i].gsi == FI_GSI)
				continue;
			r->entries[i] = r->entries[--r->nr];
		}
		fi_retarget_probe(s, r);
		return FI_SHRINK;
	}
	fi_fresh(s, fi_size(s));
	fi_retarget_probe(s, r);
	return FI_FRESH;
}

/* A new VM with the probe irqfd and a small table, set without injection. */
static void fi_new_vm(struct rt_vm *t, struct fi_state *s, int *efd)
{
	rt_vm_create(t, 1);
	*efd = kvm_new_eventfd();
	kvm_assign_irqfd(t->vm, FI_GSI, *efd);
	s->cap = 8;
	fi_fresh(s, 4);
	fi_retarget_probe(s, s->next);
	rt_set_ok(t->vm, s->next);
	fz_copy(s->installed, s->next);
	s->want = s->next_want;
	expect_probe(t, FI_GSI, *efd, s->want, "fault_injection: initial table");
}

static void test_fault_injection(void)
{
	u32 enomem = 0, kinds[FI_NR_KINDS] = { 0 }, fails[FI_NR_KINDS] = { 0 }, p;
	static const u32 probs[] = { 100, 50, 20, 5, 1 };
	int efd, i, ret, times, nr_vms;
	struct fi_state s;
	enum fi_kind kind;
	struct rt_vm t;
	char what[96];

	if (!fi_has_attr("failslab")) {
		ksft_print_msg("fault_injection: no %s/failslab (CONFIG_FAILSLAB, debugfs)\n",
			       FI_DEBUGFS);
		exit(KSFT_SKIP);
	}
	fi_mif_fd = open("/proc/thread-self/make-it-fail", O_WRONLY);
	TEST_ASSERT(fi_mif_fd >= 0, "Cannot open /proc/thread-self/make-it-fail, errno %d", errno);

	memset(&s, 0, sizeof(s));
	s.rng = FI_SEED;
	s.installed = rt_alloc();
	s.next = rt_alloc();
	/* Fault in the buffer now, not in copy_from_user() under injection. */
	memset(s.next, 0xa5, sizeof(*s.next) +
	       (KVM_MAX_IRQ_ROUTES + 4) * sizeof(s.next->entries[0]));

	fi_new_vm(&t, &s, &efd);
	nr_vms = 1;
	fi_setup();
	/* The same path once without injection, so that the code is mapped. */
	fi_make_it_fail(false);
	TEST_ASSERT(!fi_set(t.vm->fd, s.next, true), "KVM_SET_GSI_ROUTING with make-it-fail=0");

	for (i = 0; i < fi_updates; i++) {
		if (i && !(i % FI_EPOCH)) {
			close(efd);
			rt_vm_destroy(&t);
			fi_new_vm(&t, &s, &efd);
			nr_vms++;
		}
		s.cap = 8u << ((i % FI_EPOCH) / 3);
		kind = fi_generate(&s);
		/*
		 * Fail each allocation with probability p, or only the first
		 * one that is hit (times=1): then, e.g., kvmalloc() may fall
		 * back to vmalloc() and the update succeed.
		 */
		p = probs[fi_rnd(&s, ARRAY_SIZE(probs))];
		times = fi_rnd(&s, 3) ? -1 : 1;
		fi_set_all("probability", p);
		fi_set_all("times", times);
		ret = fi_set(t.vm->fd, s.next, true);
		TEST_ASSERT(!ret || ret == -ENOMEM,
			    "fault_injection: update %d (%s, nr=%u, probability %u, times %d): KVM_SET_GSI_ROUTING returned %d, expected 0 or %d",
			    i, fi_kind_names[kind], s.next->nr, p, times, ret, -ENOMEM);
		kinds[kind]++;
		if (ret) {
			enomem++;
			fails[kind]++;
		} else {
			fz_copy(s.installed, s.next);
			s.want = s.next_want;
		}
		snprintf(what, sizeof(what), "fault_injection: update %d (%s, nr=%u, %s)",
			 i, fi_kind_names[kind], s.next->nr, ret ? "-ENOMEM" : "ok");
		expect_probe(&t, FI_GSI, efd, s.want, what);
	}
	fi_set_all("probability", 0);
	fi_restore();

	/* Without injection, every kind of update works and delivers. */
	s.cap = KVM_MAX_IRQ_ROUTES;
	for (i = 0; i < 16; i++) {
		kind = fi_generate(&s);
		ret = fi_set(t.vm->fd, s.next, false);
		TEST_ASSERT(!ret,
			    "fault_injection: update %d after injection (%s, nr=%u) returned %d",
			    i, fi_kind_names[kind], s.next->nr, ret);
		fz_copy(s.installed, s.next);
		s.want = s.next_want;
		snprintf(what, sizeof(what), "fault_injection: update %d after injection (%s)",
			 i, fi_kind_names[kind]);
		expect_probe(&t, FI_GSI, efd, s.want, what);
	}
	close(efd);
	rt_vm_destroy(&t);
	close(fi_mif_fd);
	free(s.installed);
	free(s.next);

	ksft_print_msg("fault_injection: %d VMs\n", nr_vms);
	for (i = 0; i < FI_NR_KINDS; i++)
		ksft_print_msg("fault_injection: %s: %u updates, %u -ENOMEM\n",
			       fi_kind_names[i], kinds[i], fails[i]);
	printf("fault_injection: updates=%d enomem=%u\n", fi_updates, enomem);
	fflush(stdout);
	TEST_ASSERT(enomem,
		    "fault_injection: no update failed: injection missed KVM_SET_GSI_ROUTING");
}

/* ---------------------------------------------------------------------------
 * Driver.
 */
struct subtest {
	const char *name;
	void (*fn)(void);
};

static const struct subtest subtests[] = {
	{ "errno_gsi_too_large", test_errno_gsi },
	{ "errno_nr_too_large", test_errno_nr },
	{ "errno_table_flags", test_errno_table_flags },
	{ "errno_unknown_type", test_errno_type },
	{ "errno_bad_irqchip", test_errno_irqchip },
	{ "errno_bad_pin", test_errno_pin },
	{ "errno_dup_msi", test_errno_dup_msi },
	{ "errno_dup_irqchip", test_errno_dup_irqchip },
	{ "errno_msi_irqchip_same_gsi", test_errno_msi_irqchip_mix },
	{ "errno_msi_flags", test_errno_msi_flags },
	{ "errno_irqchip_flags", test_errno_irqchip_flags },
	{ "errno_x2apic_msi_address_hi", test_errno_x2apic_addr_hi },
	{ "msi_valid_devid_accepted", test_msi_devid_accepted },
	{ "deliver_identical_table", test_deliver_identical },
	{ "deliver_retarget", test_deliver_retarget },
	{ "deliver_grow", test_deliver_grow },
	{ "deliver_shrink", test_deliver_shrink },
	{ "deliver_route_removed", test_deliver_removed },
	{ "deliver_ioapic_resample", test_deliver_ioapic_resample },
	{ "deliver_signal_msi", test_deliver_signal_msi },
	{ "concurrent_update_inject", test_concurrent_update_inject },
	{ "vm_teardown_during_update", test_vm_teardown_during_update },
	{ "fuzz", test_fuzz },
	{ "fault_injection", test_fault_injection },
};

static void run_subtest(const struct subtest *st)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	TEST_ASSERT(pid >= 0, "fork failed");
	if (!pid) {
		st->fn();
		fflush(stdout);
		exit(KSFT_PASS);
	}
	TEST_ASSERT(waitpid(pid, &status, 0) == pid, "waitpid failed");
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_PASS)
		ksft_test_result_pass("%s\n", st->name);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP)
		ksft_test_result_skip("%s\n", st->name);
	else
		ksft_test_result_fail("%s (wait status 0x%x)\n", st->name, status);
}

static void help(const char *name, int code)
{
	printf("Usage: %s [-h] [-x] [-t secs] [-i iters] [-m vms] [-u updates] [-s name]\n"
	       "       [-f updates] [--fuzz-seed S] [--fuzz-cases N] [--fuzz-start K]\n"
	       "       [--fuzz-log] [--probe-every K] [--fuzz-print-every M]\n\n", name);
	printf(" -x: use xAPIC instead of x2APIC in the guest\n");
	printf(" -t: timeout in seconds for any single wait (default %d)\n", timeout_s);
	printf(" -i: iterations per updater thread in the concurrency test (default %d)\n",
	       conc_iters);
	printf(" -m: number of VMs in the teardown test (default %d)\n", nr_teardown_vms);
	printf(" -u: routing updates per thread and VM in the teardown test (default %d)\n",
	       teardown_updates);
	printf(" -s: run only the sub-tests whose name contains this string\n");
	printf(" -f: routing updates under fault injection (default %d)\n", fi_updates);
	printf(" --fuzz-seed S: fuzz mode, PRNG seed (default %llu)\n",
	       (unsigned long long)fuzz_seed);
	printf(" --fuzz-cases N: fuzz mode, run cases up to N (default %u)\n", fuzz_cases);
	printf(" --fuzz-start K: fuzz mode, skip cases 0..K-1 (generated, not run)\n");
	printf(" --fuzz-log: fuzz mode, print each case's errno and probe results\n");
	printf(" --probe-every K: probe delivery every K cases (default %u)\n", probe_every);
	printf(" --fuzz-print-every M: print the running hash every M cases (default %u)\n",
	       fuzz_print_every);
	printf("Fuzz mode runs only the fuzz sub-test and prints\n");
	printf("  irq_routing_fuzz: seed=S cases=N hash=0x...\n");
	exit(code);
}

enum {
	OPT_FUZZ_SEED = 0x100, OPT_FUZZ_CASES, OPT_FUZZ_START, OPT_FUZZ_LOG, OPT_PROBE_EVERY,
	OPT_PRINT_EVERY,
};

static const struct option long_opts[] = {
	{ "fuzz-seed", required_argument, NULL, OPT_FUZZ_SEED },
	{ "fuzz-cases", required_argument, NULL, OPT_FUZZ_CASES },
	{ "fuzz-start", required_argument, NULL, OPT_FUZZ_START },
	{ "fuzz-log", no_argument, NULL, OPT_FUZZ_LOG },
	{ "probe-every", required_argument, NULL, OPT_PROBE_EVERY },
	{ "fuzz-print-every", required_argument, NULL, OPT_PRINT_EVERY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static u32 parse_u32(const char *what, const char *arg)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	TEST_ASSERT(!errno && *arg && !*end && v <= 0xffffffffull, "Invalid %s: '%s'", what, arg);
	return v;
}

int main(int argc, char *argv[])
{
	const char *only = NULL;
	int c, n = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "hxt:i:m:u:s:f:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'x':
			x2apic = false;
			break;
		case 't':
			timeout_s = atoi_positive("Timeout", optarg);
			break;
		case 'i':
			conc_iters = atoi_positive("Iterations", optarg);
			break;
		case 'm':
			nr_teardown_vms = atoi_positive("Number of VMs", optarg);
			break;
		case 'u':
			teardown_updates = atoi_positive("Updates", optarg);
			break;
		case 's':
			only = optarg;
			break;
		case 'f':
			fi_updates = atoi_positive("Fault injection updates", optarg);
			break;
		case OPT_FUZZ_SEED:
			errno = 0;
			fuzz_seed = strtoull(optarg, NULL, 0);
			TEST_ASSERT(!errno, "Invalid seed '%s'", optarg);
			fuzz_mode = true;
			break;
		case OPT_FUZZ_CASES:
			fuzz_cases = parse_u32("case count", optarg);
			fuzz_mode = true;
			break;
		case OPT_FUZZ_START:
			fuzz_start = parse_u32("start case", optarg);
			fuzz_mode = true;
			break;
		case OPT_FUZZ_LOG:
			fuzz_log = true;
			fuzz_mode = true;
			break;
		case OPT_PROBE_EVERY:
			probe_every = parse_u32("probe interval", optarg);
			TEST_ASSERT(probe_every, "--probe-every must be positive");
			break;
		case OPT_PRINT_EVERY:
			fuzz_print_every = parse_u32("print interval", optarg);
			break;
		case 'h':
			help(argv[0], KSFT_PASS);
			break;
		default:
			help(argv[0], KSFT_FAIL);
		}
	}
	TEST_ASSERT(fuzz_start <= fuzz_cases, "--fuzz-start must not exceed --fuzz-cases");
	if (fuzz_mode)
		only = "fuzz";

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQ_ROUTING));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQFD));
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_SIGNAL_MSI));
	TEST_REQUIRE(kvm_arch_has_default_irqchip());

	for (i = 0; i < ARRAY_SIZE(subtests); i++)
		n += !only || strstr(subtests[i].name, only);
	ksft_print_header();
	ksft_set_plan(n);
	for (i = 0; i < ARRAY_SIZE(subtests); i++)
		if (!only || strstr(subtests[i].name, only))
			run_subtest(&subtests[i]);
	ksft_finished();
	return 0;
}
