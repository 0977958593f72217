// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_SET_GSI_ROUTING from two threads at once, switching between two tables
 * of 706 and 3006 entries, against readers of the table:
 * KVM_IRQ_LINE on MSI and IOAPIC routes, irqfds (MSI: their copy of the
 * route; IOAPIC: the table, from a work item) and an IOAPIC resampler.  The
 * MSI and edge IOAPIC routes differ between the tables (the resampler's pin
 * does not) and every vector is counted: each injection must arrive exactly
 * once, through either table.
 */
#include "kselftest_harness.h"
#include "irq_routing.h"

#define GSI_MSI		50		/* A: vCPU 0, VA; B: vCPU 1, VB */
#define GSI_IO		51		/* A: IOAPIC pin 3; B: pin 4 (edge) */
#define GSI_RES		52		/* IOAPIC pin 5 (level), with a resampler */
#define GSI_HAMMER	53		/* vCPU 1, VH in both tables */
#define VA		0x61
#define VB		0x62
#define VH		0x50		/* below VA and VB's priority class */
#define NR_INJECT	400		/* or as many as fit in RUN_NS */
#define RUN_NS		(30 * 1000000000ull)

/*
 * Table A (706 entries, GSIs up to 1699) or B (3006, up to 3999).  GSI_HAMMER
 * comes last: while a table is being filled, it has no route yet.
 */
static struct kvm_irq_routing *build(bool b)
{
	struct kvm_irq_routing *r = kvm_gsi_routing_create();
	u32 i;

	for (i = 0; i < (b ? 3000 : 700); i++)
		route_msi(r, 1000 + i, 1, 0x90);
	for (i = 3; i <= 4; i++)	/* to lower the pins */
		kvm_gsi_routing_irqchip_add(r, i, KVM_IRQCHIP_IOAPIC, i);
	route_msi(r, GSI_MSI, b, b ? VB : VA);
	kvm_gsi_routing_irqchip_add(r, GSI_IO, KVM_IRQCHIP_IOAPIC, b ? 4 : 3);
	kvm_gsi_routing_irqchip_add(r, GSI_RES, KVM_IRQCHIP_IOAPIC, 5);
	route_msi(r, GSI_HAMMER, 1, VH);
	return r;
}

FIXTURE(plain) {};
FIXTURE_SETUP(plain)
{
	if (irq_vm_unsupported())
		SKIP(return, "%s", irq_vm_unsupported());
}

FIXTURE_TEARDOWN(plain) {}

struct ctx {
	struct irq_vm g;
	bool stop, pause;
	u64 updates, hammers;
	u32 seeds, paused;
};

static void *updater(void *arg)
{
	struct ctx *c = arg;
	struct kvm_irq_routing *t[2] = { build(false), build(true) };
	struct kvm_random_state rs =
		new_kvm_random_state(kvm_random_seed + __atomic_add_fetch(&c->seeds, 1,
									  __ATOMIC_RELAXED));

	while (!READ_ONCE(c->stop)) {
		if (READ_ONCE(c->pause)) {
			usleep(1000);
			continue;
		}
		kvm_gsi_routing_set(c->g.vm, t[kvm_random_bool(&rs)]);
		__atomic_add_fetch(&c->updates, 1, __ATOMIC_RELAXED);
	}
	free(t[0]);
	free(t[1]);
	return NULL;
}

/*
 * GSI_HAMMER has the same route in both tables: it must always deliver.  The
 * hammers pause while the vCPUs are fenced: without APICv, a stream of VH
 * could keep vCPU 1 from taking the fence.  The updaters pause too, to leave
 * the CPUs to the vCPUs: the fence reads no table.
 */
static void *hammer(void *arg)
{
	struct ctx *c = arg;
	struct kvm_irq_level irq;

	while (!READ_ONCE(c->stop)) {
		if (READ_ONCE(c->pause)) {
			__atomic_add_fetch(&c->paused, 1, __ATOMIC_SEQ_CST);
			while (READ_ONCE(c->pause) && !READ_ONCE(c->stop))
				usleep(1000);
			__atomic_sub_fetch(&c->paused, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		irq = (struct kvm_irq_level){ .irq = GSI_HAMMER, .level = 1 };
		vm_ioctl(c->g.vm, KVM_IRQ_LINE_STATUS, &irq);
		/* 0: coalesced with the other hammer's, still pending on vCPU 1. */
		TEST_ASSERT(irq.status >= 0, "GSI %u, routed by both tables, not delivered: %d",
			    GSI_HAMMER, irq.status);
		__atomic_add_fetch(&c->hammers, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Each route (way / 2) is injected through KVM_IRQ_LINE and an irqfd. */
enum { LINE_MSI, IRQFD_MSI, LINE_IO, IRQFD_IO, RESAMPLE, NR_WAYS };

/* The interrupts arrived by @way's route, as either table routes it. */
static u32 arrived(struct ctx *c, int way)
{
	static const u32 vecs[][2] = { { VA, VB }, { IRQ_IOAPIC_VEC + 3, IRQ_IOAPIC_VEC + 4 },
				       { IRQ_IOAPIC_VEC + 5, IRQ_IOAPIC_VEC + 5 } };

	return irq_taken(c->g.count, NULL, vecs[way / 2][0], vecs[way / 2][1], NULL);
}

/* Wait for the injection, then fence: a duplicate would have arrived too. */
static void wait_exactly(struct ctx *c, int way, u32 want)
{
	u64 u, h;
	int i;

	if (!IRQ_WAIT_FOR(arrived(c, way) >= want)) {
		/* IRR and ISR tell an interrupt lost from one not taken. */
		for (i = 0; i < IRQ_NR_VCPUS; i++)
			irq_vcpu_kick_dump(&c->g, i);
		TEST_FAIL("injection %u by way %d %s, %lu updates so far", want, way,
			  IRQ_WAIT_FOR(arrived(c, way) >= want) ? "late (taken after the kick)" :
			  "lost (not taken after the kick either)",
			  __atomic_load_n(&c->updates, __ATOMIC_RELAXED));
	}
	__atomic_store_n(&c->pause, true, __ATOMIC_SEQ_CST);
	TEST_ASSERT(IRQ_WAIT_FOR(__atomic_load_n(&c->paused, __ATOMIC_SEQ_CST) == 2),
		    "the hammers did not pause");
	irq_vm_fence(&c->g);
	TEST_ASSERT(arrived(c, way) == want, "way %d: %u sent, %u arrived", way, want,
		    arrived(c, way));
	u = __atomic_load_n(&c->updates, __ATOMIC_SEQ_CST);
	h = __atomic_load_n(&c->hammers, __ATOMIC_SEQ_CST);
	__atomic_store_n(&c->pause, false, __ATOMIC_SEQ_CST);
	/* The next injection must race with updates and hammers again. */
	TEST_ASSERT(IRQ_WAIT_FOR(__atomic_load_n(&c->updates, __ATOMIC_SEQ_CST) >= u + 2 &&
				 __atomic_load_n(&c->hammers, __ATOMIC_SEQ_CST) >= h + 2),
		    "the updaters or hammers did not resume");
}

TEST_F_TIMEOUT(plain, two_updaters_vs_readers, 240)
{
	int efd_msi = kvm_new_eventfd(), efd_io = kvm_new_eventfd();
	u32 sent[NR_WAYS / 2 + 1] = {}, i, n, v;
	struct timespec start;
	pthread_t threads[4];
	struct kvm_irqfd res;
	struct ctx c = {};

	irq_vm_create(&c.g, BIT(5));
	kvm_gsi_routing_write(c.g.vm, build(false));
	kvm_assign_irqfd(c.g.vm, GSI_MSI, efd_msi);
	kvm_assign_irqfd(c.g.vm, GSI_IO, efd_io);
	res = irq_resampler(c.g.vm, GSI_RES);
	irq_vm_start(&c.g);

	for (i = 0; i < 4; i++)
		kvm_pthread_create(&threads[i], NULL, i < 2 ? updater : hammer, &c);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (n = 0; n < NR_INJECT && timespec_to_ns(timespec_elapsed(start)) < RUN_NS; n++) {
		int way = kvm_random_u32(&kvm_rng) % NR_WAYS;

		if (way == LINE_MSI || way == LINE_IO) {
			kvm_irq_line(c.g.vm, way == LINE_MSI ? GSI_MSI : GSI_IO, 1);
			kvm_irq_line(c.g.vm, way == LINE_MSI ? GSI_MSI : GSI_IO, 0);
		} else {
			TEST_ASSERT(!eventfd_write(way == IRQFD_MSI ? efd_msi :
						   way == IRQFD_IO ? efd_io : res.fd, 1),
				    "eventfd_write() failed");
		}
		wait_exactly(&c, way, ++sent[way / 2]);
		if (way == RESAMPLE) {
			TEST_ASSERT(irq_resamples(&res, IRQ_TIMEOUT_MS) == 1,
				    "no resample after EOI");
		} else if (way >= LINE_IO) {
			/* The pin raised may not be the pin lowered: lower both. */
			kvm_irq_line(c.g.vm, 3, 0);
			kvm_irq_line(c.g.vm, 4, 0);
		}
	}
	WRITE_ONCE(c.stop, true);
	for (i = 0; i < 4; i++)
		kvm_pthread_join(threads[i], NULL);

	/* Nothing but the routes' vectors, each on its vCPU. */
	irq_vm_fence(&c.g);
	for (i = 0; i < IRQ_NR_VCPUS * 256; i++) {
		v = i % 256;
		TEST_ASSERT(!c.g.count[i] || v == IRQ_FENCE_VEC || v == (i < 256 ? VA : VB) ||
			    (i >= 256 && v == VH) ||
			    (i < 256 && v >= IRQ_IOAPIC_VEC + 3 && v <= IRQ_IOAPIC_VEC + 5),
			    "vCPU %u got vector 0x%x %u times", i / 256, v, c.g.count[i]);
	}
	ksft_print_msg("%u injections, %lu updates, %lu KVM_IRQ_LINE_STATUS\n", n,
		       c.updates, c.hammers);
	irq_vm_free(&c.g);
	close(efd_msi);
	close(efd_io);
	close(res.fd);
	close(res.resamplefd);
}

int main(int argc, char **argv)
{
	close(open_kvm_dev_path_or_exit());	/* skip here, not in each test */
	return test_harness_run(argc, argv);
}
