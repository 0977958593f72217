/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the x86 irq_routing tests: a VM whose vCPUs halt with interrupts
 * enabled and count every vector they take, and the host side of it.
 */
#ifndef SELFTEST_KVM_IRQ_ROUTING_H
#define SELFTEST_KVM_IRQ_ROUTING_H

#include <pthread.h>
#include <unistd.h>

#include "kvm_util.h"
#include "apic.h"

#define IRQ_NR_VCPUS	2
#define IRQ_FENCE_VEC	0x20		/* the lowest priority class */
#define IRQ_IOAPIC_VEC	0xe0		/* + pin */
#define IRQ_TIMEOUT_MS	60000		/* a debug kernel under TCG can be that slow */

/*
 * Poll @cond every millisecond, sleeping to leave the CPUs to the vCPUs, for up
 * to IRQ_TIMEOUT_MS; true if it became true.
 */
#define IRQ_WAIT_FOR(cond)							\
({										\
	struct timespec __start;						\
	bool __ok;								\
										\
	clock_gettime(CLOCK_MONOTONIC, &__start);				\
	while (!(__ok = (cond)) &&						\
	       timespec_to_ns(timespec_elapsed(__start)) < IRQ_TIMEOUT_MS * 1000000ll) \
		usleep(1000);							\
	__ok;									\
})

/* IRQ_NR_VCPUS vCPUs with a full in-kernel irqchip, the PIC masked. */
struct irq_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpus[IRQ_NR_VCPUS];
	pthread_t threads[IRQ_NR_VCPUS];
	u32 *count;		/* [vCPU * 256 + vector]: interrupts taken */
	bool running;
};

void irq_guest_code(void);
const char *irq_vm_unsupported(void);
void irq_vm_create(struct irq_vm *g, u32 level_pins);
void irq_vm_set_ioapic(struct irq_vm *g, u32 level_pins);
void irq_vm_start(struct irq_vm *g);
void irq_vm_fence(struct irq_vm *g);
void irq_vcpu_kick_dump(struct irq_vm *g, int i);
void irq_vm_free(struct irq_vm *g);
u64 irq_taken(const u32 *count, const u32 *snap, u32 lo, u32 hi, u32 *last);
struct kvm_irqfd irq_resampler(struct kvm_vm *vm, u32 gsi);
eventfd_t irq_resamples(struct kvm_irqfd *irqfd, int timeout_ms);

/* An MSI to APIC ID @dest, in the 32-bit x2APIC format. */
static inline void route_msi(struct kvm_irq_routing *r, u32 gsi, u32 dest, u32 data)
{
	kvm_gsi_routing_msi_add(r, gsi, X86_MSI_ADDR_DEST(dest), X86_MSI_ADDR_HI_DEST(dest),
				data);
}

static inline int irq_msi(struct kvm_vm *vm, u32 dest, u32 data)
{
	struct kvm_msi msi = { .address_lo = X86_MSI_ADDR_DEST(dest),
			       .address_hi = X86_MSI_ADDR_HI_DEST(dest), .data = data };

	return __vm_ioctl(vm, KVM_SIGNAL_MSI, &msi);
}

#endif /* SELFTEST_KVM_IRQ_ROUTING_H */
