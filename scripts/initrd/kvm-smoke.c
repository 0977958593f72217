// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-smoke: trivial boot test for the kvm-irqroute harness.
 *
 * Opens /dev/kvm, creates a VM with an in-kernel irqchip, installs a GSI
 * routing table with a few MSI entries (plus the irqchip pins KVM expects),
 * attaches an irqfd to one MSI GSI, fires it, replaces the table again and
 * exits 0.  Exit 4 (KSFT_SKIP) only when KVM is not built in at all.
 *
 * Build: gcc -static -O2 -Wall -o kvm-smoke kvm-smoke.c
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

#define KSFT_SKIP	4
#define NR_MSI		8
#define MSI_GSI_BASE	24

#define die(...) do {							\
	fprintf(stderr, "kvm-smoke: " __VA_ARGS__);			\
	fprintf(stderr, ": %s\n", strerror(errno));			\
	exit(1);							\
} while (0)

static struct kvm_irq_routing *alloc_routing(int nr)
{
	struct kvm_irq_routing *r;

	r = calloc(1, sizeof(*r) + nr * sizeof(r->entries[0]));
	if (!r)
		die("calloc");
	return r;
}

/* IOAPIC pins 0..23 (as KVM's default table) and NR_MSI MSI entries. */
static struct kvm_irq_routing *build_table(uint32_t data_base)
{
	struct kvm_irq_routing *r = alloc_routing(24 + NR_MSI);
	int i, n = 0;

	for (i = 0; i < 24; i++, n++) {
		r->entries[n].gsi = i;
		r->entries[n].type = KVM_IRQ_ROUTING_IRQCHIP;
		r->entries[n].u.irqchip.irqchip = KVM_IRQCHIP_IOAPIC;
		r->entries[n].u.irqchip.pin = i;
	}
	for (i = 0; i < NR_MSI; i++, n++) {
		r->entries[n].gsi = MSI_GSI_BASE + i;
		r->entries[n].type = KVM_IRQ_ROUTING_MSI;
		r->entries[n].u.msi.address_lo = 0xfee00000;	/* dest APIC 0 */
		r->entries[n].u.msi.address_hi = 0;
		r->entries[n].u.msi.data = data_base + i;	/* vector */
	}
	r->nr = n;
	return r;
}

int main(void)
{
	struct kvm_irq_routing *r;
	struct kvm_irqfd irqfd;
	int kvm, vm, efd, ret;
	uint64_t one = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);

	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		if (errno == ENOENT) {
			printf("kvm-smoke: /dev/kvm missing, KVM not available\n");
			return KSFT_SKIP;
		}
		die("open /dev/kvm");
	}
	ret = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (ret != KVM_API_VERSION)
		die("KVM_GET_API_VERSION returned %d", ret);
	ret = ioctl(kvm, KVM_CHECK_EXTENSION, KVM_CAP_IRQ_ROUTING);
	printf("kvm-smoke: API %d, KVM_CAP_IRQ_ROUTING (max GSI routes) = %d\n",
	       KVM_API_VERSION, ret);
	if (ret <= 0)
		die("KVM_CAP_IRQ_ROUTING not supported");

	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		die("KVM_CREATE_VM");
	if (ioctl(vm, KVM_CREATE_IRQCHIP, 0))
		die("KVM_CREATE_IRQCHIP");

	r = build_table(0x40);
	if (ioctl(vm, KVM_SET_GSI_ROUTING, r))
		die("KVM_SET_GSI_ROUTING (%u entries)", r->nr);
	printf("kvm-smoke: KVM_SET_GSI_ROUTING with %u entries (%d MSI) ok\n",
	       r->nr, NR_MSI);
	free(r);

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		die("eventfd");
	memset(&irqfd, 0, sizeof(irqfd));
	irqfd.fd = efd;
	irqfd.gsi = MSI_GSI_BASE;
	if (ioctl(vm, KVM_IRQFD, &irqfd))
		die("KVM_IRQFD assign gsi %u", irqfd.gsi);
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");

	/* Replace the table while the irqfd is attached. */
	r = build_table(0x50);
	if (ioctl(vm, KVM_SET_GSI_ROUTING, r))
		die("KVM_SET_GSI_ROUTING (update)");
	free(r);
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");

	irqfd.flags = KVM_IRQFD_FLAG_DEASSIGN;
	if (ioctl(vm, KVM_IRQFD, &irqfd))
		die("KVM_IRQFD deassign");

	/* An empty table is legal too. */
	r = alloc_routing(0);
	if (ioctl(vm, KVM_SET_GSI_ROUTING, r))
		die("KVM_SET_GSI_ROUTING (empty)");
	free(r);

	close(efd);
	close(vm);
	close(kvm);
	printf("kvm-smoke: irqfd on MSI GSI %d, table update, empty table ok\n",
	       MSI_GSI_BASE);
	return 0;
}
