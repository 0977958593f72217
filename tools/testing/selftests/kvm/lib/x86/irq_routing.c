// SPDX-License-Identifier: GPL-2.0-only
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>

#include "processor.h"
#include "irq_routing.h"

static u32 irq_count[IRQ_NR_VCPUS][256] __aligned(4096);
static bool guest_ready[IRQ_NR_VCPUS];
static bool guest_done;

static void guest_handler(struct ex_regs *regs)
{
	u32 id = x2apic_read_reg(APIC_ID);

	GUEST_ASSERT(id < IRQ_NR_VCPUS);
	WRITE_ONCE(irq_count[id][regs->vector], irq_count[id][regs->vector] + 1);
	if (regs->vector != NMI_VECTOR)
		x2apic_write_reg(APIC_EOI, 0);
}

void irq_guest_code(void)
{
	x2apic_enable();
	WRITE_ONCE(guest_ready[x2apic_read_reg(APIC_ID)], true);
	while (!READ_ONCE(guest_done)) {
		safe_halt();
		cli();
	}
	GUEST_DONE();
}

/* @vcpu, out of KVM_RUN: its state, and the vectors its guest took. */
static void irq_vcpu_dump(struct kvm_vcpu *vcpu)
{
	u32 *count = addr_gva2hva(vcpu->vm, (gva_t)irq_count[vcpu->id]), v, off;
	struct kvm_lapic_state apic;
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;

	vcpu_dump(stderr, vcpu, 2);
	vcpu_events_get(vcpu, &ev);
	vcpu_mp_state_get(vcpu, &mp);
	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &apic);
	fprintf(stderr, "vCPU %u: mp_state %u, irq injected %u (0x%x), NMI pending %u,",
		vcpu->id, mp.mp_state, ev.interrupt.injected, ev.interrupt.nr, ev.nmi.pending);
	fprintf(stderr, " exception pending %u (%u), PPR 0x%x:", ev.exception.pending,
		ev.exception.nr, *(u32 *)&apic.regs[APIC_PROCPRI]);
	for (v = 0; v < 256; v++) {
		off = v / 32 * 16;
		if (*(u32 *)&apic.regs[APIC_IRR + off] & BIT(v % 32))
			fprintf(stderr, " IRR 0x%x", v);
		if (*(u32 *)&apic.regs[APIC_ISR + off] & BIT(v % 32))
			fprintf(stderr, " ISR 0x%x", v);
		if (count[v])
			fprintf(stderr, " 0x%x taken %u", v, count[v]);
	}
	fputc('\n', stderr);
}

static void *vcpu_thread(void *arg)
{
	struct kvm_vcpu *vcpu = arg;
	struct ucall uc;
	u64 cmd;
	int r;

	/* Stay out of KVM_RUN while irq_vcpu_kick_dump() sets immediate_exit. */
	while ((r = __vcpu_run(vcpu)) && errno == EINTR)
		while (READ_ONCE(vcpu->run->immediate_exit))
			usleep(1000);
	TEST_ASSERT(!r, KVM_IOCTL_ERROR(KVM_RUN, r));
	cmd = get_ucall(vcpu, &uc);
	if (cmd == UCALL_ABORT)
		REPORT_GUEST_ASSERT(uc);
	if (cmd != UCALL_DONE)
		irq_vcpu_dump(vcpu);
	TEST_ASSERT(cmd == UCALL_DONE, "vCPU %u: exit reason %s, ucall %lu", vcpu->id,
		    exit_reason_str(vcpu->run->exit_reason), cmd);
	return NULL;
}

/* Why no irq_vm can be created here, or NULL. */
const char *irq_vm_unsupported(void)
{
	if (!kvm_has_cap(KVM_CAP_X2APIC_API))
		return "no KVM_CAP_X2APIC_API";
	if (!kvm_has_in_kernel_ioapic())
		return "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)";
	return NULL;
}

/* IOAPIC pin N: vector IRQ_IOAPIC_VEC + N to vCPU 0, level-triggered if in @level_pins. */
void irq_vm_set_ioapic(struct irq_vm *g, u32 level_pins)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	int i;

	vm_ioctl(g->vm, KVM_GET_IRQCHIP, &chip);
	for (i = 0; i < KVM_IOAPIC_NUM_PINS; i++) {
		chip.chip.ioapic.redirtbl[i].bits = 0;
		chip.chip.ioapic.redirtbl[i].fields.vector = IRQ_IOAPIC_VEC + i;
		chip.chip.ioapic.redirtbl[i].fields.trig_mode = !!(level_pins & BIT(i));
	}
	vm_ioctl(g->vm, KVM_SET_IRQCHIP, &chip);
}

/* 32-bit x2APIC IDs, a handler for NMI and every vector from IRQ_FENCE_VEC up. */
void irq_vm_create(struct irq_vm *g, u32 level_pins)
{
	struct kvm_irqchip pic = { .chip_id = KVM_IRQCHIP_PIC_MASTER };
	int i;

	g->vm = vm_create_with_vcpus(IRQ_NR_VCPUS, irq_guest_code, g->vcpus);
	vm_enable_cap(g->vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS |
		      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	vm_install_exception_handler(g->vm, NMI_VECTOR, guest_handler);
	for (i = IRQ_FENCE_VEC; i < 256; i++)
		vm_install_exception_handler(g->vm, i, guest_handler);
	g->count = addr_gva2hva(g->vm, (gva_t)&irq_count[0][0]);
	irq_vm_set_ioapic(g, level_pins);
	vm_ioctl(g->vm, KVM_GET_IRQCHIP, &pic);
	pic.chip.pic.imr = 0xff;
	vm_ioctl(g->vm, KVM_SET_IRQCHIP, &pic);
}

void irq_vm_start(struct irq_vm *g)
{
	int i;

	if (g->running)
		return;
	for (i = 0; i < IRQ_NR_VCPUS; i++)
		kvm_pthread_create(&g->threads[i], NULL, vcpu_thread, g->vcpus[i]);
	for (i = 0; i < IRQ_NR_VCPUS; i++)
		TEST_ASSERT(IRQ_WAIT_FOR(SYNC_FROM_GUEST_AND_READ(g->vm, guest_ready[i])),
			    "vCPU %d never became ready", i);
	g->running = true;
}

/* SIGUSR1 only has to interrupt KVM_RUN. */
static void irq_kick(int sig)
{
}

/* Kick vCPU @i out of KVM_RUN, print its state and let it run again. */
void irq_vcpu_kick_dump(struct irq_vm *g, int i)
{
	struct kvm_vcpu *vcpu = g->vcpus[i];

	signal(SIGUSR1, irq_kick);
	WRITE_ONCE(vcpu->run->immediate_exit, 1);
	pthread_kill(g->threads[i], SIGUSR1);
	irq_vcpu_dump(vcpu);
	WRITE_ONCE(vcpu->run->immediate_exit, 0);
}

/*
 * vCPU @i did not take its fence: to tell a starved vCPU from a lost fence,
 * print its state, then see whether the fence comes once it runs again.
 */
static void irq_fence_lost(struct irq_vm *g, int i, u32 *c, u32 want)
{
	fprintf(stderr, "vCPU %d: no fence in %d s\n", i, IRQ_TIMEOUT_MS / 1000);
	irq_vcpu_kick_dump(g, i);
	TEST_FAIL("vCPU %d: fence %s", i, IRQ_WAIT_FOR(READ_ONCE(*c) >= want) ?
		  "late (taken after the kick)" : "lost (not taken after the kick either)");
}

/*
 * Wait until each vCPU took every interrupt pending for it: the fence is in the
 * lowest priority class, below NMI and every vector the tests route (>= 0x30).
 */
void irq_vm_fence(struct irq_vm *g)
{
	int i;

	irq_vm_start(g);
	for (i = 0; i < IRQ_NR_VCPUS; i++) {
		u32 *c = &g->count[i * 256 + IRQ_FENCE_VEC], want = READ_ONCE(*c) + 1;

		TEST_ASSERT_EQ(irq_msi(g->vm, i, IRQ_FENCE_VEC), 1);
		if (!IRQ_WAIT_FOR(READ_ONCE(*c) >= want))
			irq_fence_lost(g, i, c, want);
	}
}

void irq_vm_free(struct irq_vm *g)
{
	int i;

	if (g->running) {
		WRITE_AND_SYNC_TO_GUEST(g->vm, guest_done, true);
		for (i = 0; i < IRQ_NR_VCPUS; i++) {
			TEST_ASSERT_EQ(irq_msi(g->vm, i, IRQ_FENCE_VEC), 1);
			kvm_pthread_join(g->threads[i], NULL);
		}
	}
	kvm_vm_free(g->vm);
	memset(g, 0, sizeof(*g));
}

/*
 * What the vCPUs took on vectors [@lo, @hi], fences aside, since @snap (a copy
 * of @count; NULL: since the start).  In *@last if not NULL: the index in
 * @count of the last vector taken.
 */
u64 irq_taken(const u32 *count, const u32 *snap, u32 lo, u32 hi, u32 *last)
{
	u64 sum = 0, d;
	u32 i;

	for (i = 0; i < IRQ_NR_VCPUS * 256; i++) {
		d = READ_ONCE(count[i]) - (snap ? snap[i] : 0);
		if (d && i % 256 >= lo && i % 256 <= hi && i % 256 != IRQ_FENCE_VEC) {
			sum += d;
			if (last)
				*last = i;
		}
	}
	return sum;
}

/* An irqfd on @gsi with a resampler. */
struct kvm_irqfd irq_resampler(struct kvm_vm *vm, u32 gsi)
{
	struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				   .gsi = gsi, .flags = KVM_IRQFD_FLAG_RESAMPLE };

	vm_ioctl(vm, KVM_IRQFD, &irqfd);
	return irqfd;
}

/* How many resamples @irqfd signalled, waiting up to @timeout_ms for one. */
eventfd_t irq_resamples(struct kvm_irqfd *irqfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = irqfd->resamplefd, .events = POLLIN };
	eventfd_t cnt = 0;

	if (poll(&pfd, 1, timeout_ms) == 1)
		TEST_ASSERT(!eventfd_read(pfd.fd, &cnt), "eventfd_read() failed");
	return cnt;
}
