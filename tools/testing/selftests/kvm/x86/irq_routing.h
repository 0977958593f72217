/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest of the irq_routing tests: NR_VCPUS vCPUs, halted with interrupts
 * enabled, count every vector they take, and a "fence" tells the host when a
 * vCPU has taken every interrupt sent to it before.
 */
#ifndef SELFTEST_KVM_IRQ_ROUTING_H
#define SELFTEST_KVM_IRQ_ROUTING_H

#include <pthread.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"

#define NR_VCPUS	2
#define FENCE_VEC	0x20		/* the lowest priority class */
#define IOAPIC_VEC	0xe0		/* + pin */
#define TIMEOUT_MS	10000
#define TIMEOUT_NS	(TIMEOUT_MS * 1000000ull)

/* Wait up to TIMEOUT_NS for @cond; true if it became true. */
#define WAIT_FOR(cond)								\
({										\
	struct timespec __start;						\
	bool __ok;								\
										\
	clock_gettime(CLOCK_MONOTONIC, &__start);				\
	while (!(__ok = (cond)) &&						\
	       timespec_to_ns(timespec_elapsed(__start)) < TIMEOUT_NS)		\
		sched_yield();							\
	__ok;									\
})

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
	u64 cmd;

	vcpu_run(vcpu);
	cmd = get_ucall(vcpu, &uc);
	if (cmd == UCALL_ABORT)
		REPORT_GUEST_ASSERT(uc);
	TEST_ASSERT_EQ(cmd, UCALL_DONE);
	return NULL;
}

struct irq_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpus[NR_VCPUS];
	pthread_t threads[NR_VCPUS];
	u32 *count;		/* host view of irq_count[][] */
	bool running;
};

/* An MSI route to APIC ID @dest, 32-bit x2APIC IDs. */
static inline void route_msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 data)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(dest), X86_MSI_ADDR_HI_DEST(dest),
				data);
}

static inline int irq_vm_msi(struct irq_vm *g, u32 dest, u32 data)
{
	struct kvm_msi msi = { .address_lo = X86_MSI_ADDR_DEST(dest),
			       .address_hi = X86_MSI_ADDR_HI_DEST(dest), .data = data };

	return __vm_ioctl(g->vm, KVM_SIGNAL_MSI, &msi);
}

/* IOAPIC pin N: vector IOAPIC_VEC + N, for vCPU 0, level-triggered if in @level. */
static inline void irq_vm_set_ioapic(struct irq_vm *g, u32 level)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	int i;

	vm_ioctl(g->vm, KVM_GET_IRQCHIP, &chip);
	for (i = 0; i < KVM_IOAPIC_NUM_PINS; i++) {
		chip.chip.ioapic.redirtbl[i].bits = 0;
		chip.chip.ioapic.redirtbl[i].fields.vector = IOAPIC_VEC + i;
		chip.chip.ioapic.redirtbl[i].fields.trig_mode = !!(level & BIT(i));
	}
	vm_ioctl(g->vm, KVM_SET_IRQCHIP, &chip);
}

/* A VM with a full in-kernel irqchip, the PIC masked, vCPUs not started. */
static inline void irq_vm_create(struct irq_vm *g, u32 level_pins)
{
	struct kvm_irqchip pic = { .chip_id = KVM_IRQCHIP_PIC_MASTER };
	int i;

	TEST_REQUIRE(kvm_has_cap(KVM_CAP_X2APIC_API));
	g->vm = vm_create_with_vcpus(NR_VCPUS, guest_code, g->vcpus);
	vm_enable_cap(g->vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS |
		      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	vm_install_exception_handler(g->vm, NMI_VECTOR, guest_handler);
	for (i = FENCE_VEC; i < 256; i++)
		vm_install_exception_handler(g->vm, i, guest_handler);
	irq_vm_set_ioapic(g, level_pins);
	vm_ioctl(g->vm, KVM_GET_IRQCHIP, &pic);
	pic.chip.pic.imr = 0xff;
	vm_ioctl(g->vm, KVM_SET_IRQCHIP, &pic);
	g->count = addr_gva2hva(g->vm, (gva_t)&irq_count[0][0]);
}

static inline void irq_vm_start(struct irq_vm *g)
{
	int i;

	if (g->running)
		return;
	for (i = 0; i < NR_VCPUS; i++)
		kvm_pthread_create(&g->threads[i], NULL, vcpu_thread, g->vcpus[i]);
	for (i = 0; i < NR_VCPUS; i++)
		TEST_ASSERT(WAIT_FOR(SYNC_FROM_GUEST_AND_READ(g->vm, guest_ready[i])),
			    "vCPU %d never became ready", i);
	g->running = true;
}

/*
 * Wait until each vCPU has taken every interrupt already pending for it: the
 * fence vector is in the lowest priority class, below NMI and every vector
 * the tests route (0x30 or above), so a vCPU takes it after them.
 */
static inline void irq_vm_fence(struct irq_vm *g)
{
	int i;

	irq_vm_start(g);
	for (i = 0; i < NR_VCPUS; i++) {
		u32 *c = &g->count[i * 256 + FENCE_VEC], want = READ_ONCE(*c) + 1;

		TEST_ASSERT_EQ(irq_vm_msi(g, i, FENCE_VEC), 1);
		TEST_ASSERT(WAIT_FOR(READ_ONCE(*c) >= want), "vCPU %d never took the fence", i);
	}
}

static inline void irq_vm_free(struct irq_vm *g)
{
	int i;

	if (g->running) {
		WRITE_AND_SYNC_TO_GUEST(g->vm, guest_done, true);
		for (i = 0; i < NR_VCPUS; i++) {
			irq_vm_msi(g, i, FENCE_VEC);
			kvm_pthread_join(g->threads[i], NULL);
		}
	}
	kvm_vm_free(g->vm);
	memset(g, 0, sizeof(*g));
}

#endif /* SELFTEST_KVM_IRQ_ROUTING_H */
