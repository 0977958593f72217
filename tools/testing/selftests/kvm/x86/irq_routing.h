/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the irq_routing tests: a guest whose vCPUs halt with interrupts
 * enabled and count every vector they take, and the host side of it.
 */
#ifndef SELFTEST_KVM_IRQ_ROUTING_H
#define SELFTEST_KVM_IRQ_ROUTING_H

#include <poll.h>
#include <sched.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"

#ifndef IRQ_MAX_VCPUS
#define IRQ_MAX_VCPUS	2		/* APIC IDs the guest counts for */
#endif
#define FENCE_VEC	0x20		/* the lowest priority class */
#define TIMEOUT_MS	10000
#define FENCE_MS	60000		/* a debug kernel under TCG can be that slow */

/* Poll @cond for up to TIMEOUT_MS; true if it became true. */
#define WAIT_FOR(cond)								\
({										\
	struct timespec __start;						\
	bool __ok;								\
										\
	clock_gettime(CLOCK_MONOTONIC, &__start);				\
	while (!(__ok = (cond)) &&						\
	       timespec_to_ns(timespec_elapsed(__start)) < TIMEOUT_MS * 1000000ll) \
		sched_yield();							\
	__ok;									\
})

static u32 irq_count[IRQ_MAX_VCPUS][256] __aligned(4096);
static bool guest_ready[IRQ_MAX_VCPUS];
static bool guest_done;

static void guest_handler(struct ex_regs *regs)
{
	u32 id = x2apic_read_reg(APIC_ID);

	GUEST_ASSERT(id < IRQ_MAX_VCPUS);
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

/* @vcpu, out of KVM_RUN: its state, and the vectors its guest took. */
static void irq_vcpu_dump(struct kvm_vcpu *vcpu)
{
	u32 *count = addr_gva2hva(vcpu->vm, (gva_t)irq_count[vcpu->id]), v, off;
	struct kvm_lapic_state apic;
	struct kvm_vcpu_events ev;
	struct kvm_mp_state mp;
	struct kvm_regs regs;

	vcpu_dump(stderr, vcpu, 2);
	vcpu_regs_get(vcpu, &regs);
	vcpu_events_get(vcpu, &ev);
	vcpu_mp_state_get(vcpu, &mp);
	vcpu_ioctl(vcpu, KVM_GET_LAPIC, &apic);
	fprintf(stderr, "vCPU %u: mp_state %u, IF %u, shadow %u, irq injected %u (0x%x),",
		vcpu->id, mp.mp_state, !!(regs.rflags & X86_EFLAGS_IF), ev.interrupt.shadow,
		ev.interrupt.injected, ev.interrupt.nr);
	fprintf(stderr, " NMI injected %u pending %u masked %u, exception injected %u pending %u",
		ev.nmi.injected, ev.nmi.pending, ev.nmi.masked, ev.exception.injected,
		ev.exception.pending);
	fprintf(stderr, " (%u), PPR 0x%x:", ev.exception.nr, *(u32 *)&apic.regs[APIC_PROCPRI]);
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

	/* Stay out of KVM_RUN while irq_fence_lost() sets immediate_exit. */
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

/* 32-bit x2APIC IDs, a handler for every vector; the host view of the counts. */
static inline u32 *irq_guest_setup(struct kvm_vm *vm)
{
	int i;

	vm_enable_cap(vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS |
		      KVM_X2APIC_API_DISABLE_BROADCAST_QUIRK);
	vm_install_exception_handler(vm, NMI_VECTOR, guest_handler);
	for (i = FENCE_VEC; i < 256; i++)
		vm_install_exception_handler(vm, i, guest_handler);
	return addr_gva2hva(vm, (gva_t)&irq_count[0][0]);
}

/*
 * What vCPUs [0, @nr_vcpus) took on vectors [@lo, @hi], fences aside, since
 * @snap (a copy of @count; NULL: since the start).  In *@last if not NULL: the
 * index in @count of the last vector taken.
 */
static inline u64 irq_taken(const u32 *count, const u32 *snap, u32 nr_vcpus, u32 lo, u32 hi,
			    u32 *last)
{
	u64 sum = 0, d;
	u32 i;

	for (i = 0; i < nr_vcpus * 256; i++) {
		d = READ_ONCE(count[i]) - (snap ? snap[i] : 0);
		if (d && i % 256 >= lo && i % 256 <= hi && i % 256 != FENCE_VEC) {
			sum += d;
			if (last)
				*last = i;
		}
	}
	return sum;
}

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

static inline void irq_vcpus_start(struct kvm_vm *vm, struct kvm_vcpu **vcpus,
				   pthread_t *threads, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		kvm_pthread_create(&threads[i], NULL, vcpu_thread, vcpus[i]);
	for (i = 0; i < n; i++)
		TEST_ASSERT(WAIT_FOR(SYNC_FROM_GUEST_AND_READ(vm, guest_ready[vcpus[i]->id])),
			    "vCPU %u never became ready", vcpus[i]->id);
}

static inline void irq_vcpus_stop(struct kvm_vm *vm, struct kvm_vcpu **vcpus,
				  pthread_t *threads, u32 n)
{
	u32 i;

	WRITE_AND_SYNC_TO_GUEST(vm, guest_done, true);
	for (i = 0; i < n; i++) {
		TEST_ASSERT_EQ(irq_msi(vm, vcpus[i]->id, FENCE_VEC), 1);
		kvm_pthread_join(threads[i], NULL);
	}
}

/* A VM of NR_VCPUS vCPUs with a full in-kernel irqchip, the PIC masked. */
#define NR_VCPUS	2
#define IOAPIC_VEC	0xe0		/* + pin */

struct irq_vm {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpus[NR_VCPUS];
	pthread_t threads[NR_VCPUS];
	u32 *count;		/* irq_count[][], host view */
	bool running;
};

/* Why no irq_vm can be created here, or NULL. */
static inline const char *irq_vm_unsupported(void)
{
	if (!kvm_has_cap(KVM_CAP_X2APIC_API))
		return "no KVM_CAP_X2APIC_API";
	if (!kvm_has_in_kernel_ioapic())
		return "no in-kernel IOAPIC and PIC (CONFIG_KVM_IOAPIC=n)";
	return NULL;
}

/* IOAPIC pin N: vector IOAPIC_VEC + N to vCPU 0, level-triggered if in @level. */
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

static inline void irq_vm_create(struct irq_vm *g, u32 level_pins)
{
	struct kvm_irqchip pic = { .chip_id = KVM_IRQCHIP_PIC_MASTER };

	g->vm = vm_create_with_vcpus(NR_VCPUS, guest_code, g->vcpus);
	g->count = irq_guest_setup(g->vm);
	irq_vm_set_ioapic(g, level_pins);
	vm_ioctl(g->vm, KVM_GET_IRQCHIP, &pic);
	pic.chip.pic.imr = 0xff;
	vm_ioctl(g->vm, KVM_SET_IRQCHIP, &pic);
}

static inline void irq_vm_start(struct irq_vm *g)
{
	if (!g->running)
		irq_vcpus_start(g->vm, g->vcpus, g->threads, NR_VCPUS);
	g->running = true;
}

/*
 * Wait up to FENCE_MS for *@c to reach @want, sleeping to leave the CPUs to the
 * vCPUs; in *@gap, the longest time between two polls.
 */
static inline bool irq_wait_count(u32 *c, u32 want, s64 *gap)
{
	struct timespec start, prev, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (prev = start; READ_ONCE(*c) < want; prev = now) {
		usleep(1000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		*gap = max(*gap, timespec_to_ns(timespec_sub(now, prev)));
		if (timespec_to_ns(timespec_sub(now, start)) > FENCE_MS * 1000000ll)
			return READ_ONCE(*c) >= want;
	}
	return true;
}

/* SIGUSR1 only has to interrupt KVM_RUN. */
static void irq_kick(int sig)
{
}

/*
 * vCPU @i did not take its fence: to tell a starved vCPU from a lost fence,
 * print its stats and CPU time, kick it out of KVM_RUN to print its state,
 * then see whether the fence comes once it runs again.
 */
static inline void irq_fence_lost(struct irq_vm *g, int i, u32 *c, u32 want, s64 gap)
{
	struct kvm_vcpu *vcpu = g->vcpus[i];
	struct kvm_binary_stats *s = &vcpu->stats;
	struct timespec cpu[2] = {};
	struct kvm_stats_desc *d;
	clockid_t clk;
	u64 v;
	u32 k;

	if (!pthread_getcpuclockid(g->threads[i], &clk)) {
		clock_gettime(clk, &cpu[0]);
		sleep(1);
		clock_gettime(clk, &cpu[1]);
	}
	fprintf(stderr, "vCPU %d: no fence in %d s, max poll gap %ld ms, thread CPU time %ld ms",
		i, FENCE_MS / 1000, gap / 1000000, timespec_to_ns(cpu[1]) / 1000000);
	fprintf(stderr, " (%ld ms in the last second), non-zero stats:",
		timespec_to_ns(timespec_sub(cpu[1], cpu[0])) / 1000000);
	if (s->fd >= 0 && !s->desc) {
		read_stats_header(s->fd, &s->header);
		s->desc = read_stats_descriptors(s->fd, &s->header);
	}
	for (k = 0; s->desc && k < s->header.num_desc; k++) {
		d = get_stats_descriptor(s->desc, k, &s->header);
		read_stat_data(s->fd, &s->header, d, &v, 1);
		if (v && d->size == 1)
			fprintf(stderr, " %s %lu", d->name, v);
	}
	fputc('\n', stderr);

	signal(SIGUSR1, irq_kick);
	WRITE_ONCE(vcpu->run->immediate_exit, 1);
	pthread_kill(g->threads[i], SIGUSR1);
	irq_vcpu_dump(vcpu);
	WRITE_ONCE(vcpu->run->immediate_exit, 0);
	TEST_FAIL("vCPU %d: fence %s", i, irq_wait_count(c, want, &gap) ?
		  "late (taken after the kick)" : "lost (not taken after the kick either)");
}

/*
 * Wait until each vCPU took every interrupt pending for it: the fence is in the
 * lowest priority class, below NMI and every vector the tests route (>= 0x30).
 */
static inline void irq_vm_fence(struct irq_vm *g)
{
	int i;

	irq_vm_start(g);
	for (i = 0; i < NR_VCPUS; i++) {
		u32 *c = &g->count[i * 256 + FENCE_VEC], want = READ_ONCE(*c) + 1;
		s64 gap = 0;

		TEST_ASSERT_EQ(irq_msi(g->vm, i, FENCE_VEC), 1);
		if (!irq_wait_count(c, want, &gap))
			irq_fence_lost(g, i, c, want, gap);
	}
}

/* An irqfd on @gsi with a resampler. */
static inline struct kvm_irqfd irq_resampler(struct kvm_vm *vm, u32 gsi)
{
	struct kvm_irqfd irqfd = { .fd = kvm_new_eventfd(), .resamplefd = kvm_new_eventfd(),
				   .gsi = gsi, .flags = KVM_IRQFD_FLAG_RESAMPLE };

	vm_ioctl(vm, KVM_IRQFD, &irqfd);
	return irqfd;
}

/* How many resamples @irqfd signalled, waiting up to @timeout_ms for one. */
static inline eventfd_t irq_resamples(struct kvm_irqfd *irqfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = irqfd->resamplefd, .events = POLLIN };
	eventfd_t cnt = 0;

	if (poll(&pfd, 1, timeout_ms) == 1)
		TEST_ASSERT(!eventfd_read(pfd.fd, &cnt), "eventfd_read() failed");
	return cnt;
}

static inline void irq_vm_free(struct irq_vm *g)
{
	if (g->running)
		irq_vcpus_stop(g->vm, g->vcpus, g->threads, NR_VCPUS);
	kvm_vm_free(g->vm);
	memset(g, 0, sizeof(*g));
}

#endif /* SELFTEST_KVM_IRQ_ROUTING_H */
