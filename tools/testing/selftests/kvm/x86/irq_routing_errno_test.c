// SPDX-License-Identifier: GPL-2.0-only
/*
 * The errno of KVM_SET_GSI_ROUTING for each kind of table, and after a refused
 * table the previous one still in force.
 */
#include <sys/mman.h>

#include "kvm_util.h"
#include "processor.h"
#include "apic.h"
#include "kselftest_harness.h"

#define MSI_ADDR	X86_MSI_ADDR_BASE
#define GSI		30
#define PREFILL_GSI	1	/* master PIC pin 1 in the prefilled table */
#define IOAPIC		KVM_IRQCHIP_IOAPIC

#define MSI_X(g, t, f, hi, id)	{ .gsi = g, .type = t, .flags = f, .u.msi = {		\
				  .address_lo = MSI_ADDR, .address_hi = hi,		\
				  .data = 0x40, .devid = id } }
#define MSI_E(g)		MSI_X(g, KVM_IRQ_ROUTING_MSI, 0, 0, 0)
#define CHIP_X(g, c, p, f)	{ .gsi = g, .type = KVM_IRQ_ROUTING_IRQCHIP, .flags = f,	\
				  .u.irqchip = { .irqchip = c, .pin = p } }
#define CHIP_E(g, c, p)		CHIP_X(g, c, p, 0)

FIXTURE(routing) {
	struct kvm_vm *vm;
	struct kvm_irq_routing *r;
};

FIXTURE_VARIANT(routing) {
	u32 fill;	/* MSI routes on GSIs 0..fill-1 before e[] */
	struct kvm_irq_routing_entry e[2];	/* those with a type */
	u32 nr_override, flags;
	int err;
	bool split;
	/* KVM_CAP_X2APIC_API's 32-bit IDs: before the table, or after setting it once */
	bool x2apic_ids, x2apic_ids_after_set;
	bool efault;	/* e[1] is in a page that is not mapped */
};

/* KVM_IRQ_LINE_STATUS: < 0 without a route that delivered, else >= 0. */
static int probe_status(struct kvm_vm *vm, u32 gsi)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = 1 };
	int s = __vm_ioctl(vm, KVM_IRQ_LINE_STATUS, &irq) ? -errno : irq.status;

	irq = (struct kvm_irq_level){ .irq = gsi, .level = 0 };
	__vm_ioctl(vm, KVM_IRQ_LINE_STATUS, &irq);
	return s;
}

/* Two 65-route tables, the first replaced for reuse; the second routes PREFILL_GSI to the PIC. */
static void prefill(struct kvm_vm *vm)
{
	struct kvm_irq_routing *r = kvm_gsi_routing_create();
	int i, k;

	for (k = 0; k < 2; k++) {
		for (r->nr = 0, i = 0; i < 64; i++)
			kvm_gsi_routing_msi_add(r, 100 + i, MSI_ADDR, 0, 0x40 + i + k);
		kvm_gsi_routing_irqchip_add(r, PREFILL_GSI, KVM_IRQCHIP_PIC_MASTER, k);
		kvm_gsi_routing_set(vm, r);
	}
	free(r);
}

FIXTURE_SETUP(routing)
{
	if (variant->split && !kvm_has_cap(KVM_CAP_SPLIT_IRQCHIP))
		SKIP(return, "no KVM_CAP_SPLIT_IRQCHIP");
	if (!variant->split && !kvm_has_in_kernel_ioapic())
		SKIP(return, "no in-kernel IOAPIC (CONFIG_KVM_IOAPIC=n)");
	if ((variant->x2apic_ids || variant->x2apic_ids_after_set) &&
	    !kvm_has_cap(KVM_CAP_X2APIC_API))
		SKIP(return, "no KVM_CAP_X2APIC_API");
	self->vm = vm_create_barebones();
	if (variant->split)
		vm_enable_cap(self->vm, KVM_CAP_SPLIT_IRQCHIP, KVM_SPLIT_IRQCHIP_PINS);
	else
		TEST_ASSERT_EQ(__vm_ioctl(self->vm, KVM_CREATE_IRQCHIP, NULL), 0);
	self->r = kvm_gsi_routing_create();
}

FIXTURE_TEARDOWN(routing)
{
	free(self->r);
	kvm_vm_free(self->vm);
}

TEST_F(routing, set_gsi_routing)
{
	struct kvm_irq_routing *r = self->r;
	size_t psz = getpagesize();
	int i, err;
	char *p = NULL;

	while (r->nr < variant->fill)
		kvm_gsi_routing_msi_add(r, r->nr, MSI_ADDR, 0, 0x40);
	for (i = 0; i < ARRAY_SIZE(variant->e) && variant->e[i].type; i++)
		r->entries[r->nr++] = variant->e[i];
	r->flags = variant->flags;
	if (variant->nr_override)
		r->nr = variant->nr_override;
	if (variant->efault) {
		p = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		TEST_ASSERT(p != MAP_FAILED && !munmap(p + psz, psz), "mmap()");
		r = (void *)(p + psz - sizeof(*r) - sizeof(r->entries[0]));
		memcpy(r, self->r, sizeof(*r) + sizeof(r->entries[0]));
	}
	if (!variant->split)
		prefill(self->vm);
	if (variant->x2apic_ids_after_set) {
		/* Accepted before the capability, with PREFILL_GSI routed too. */
		kvm_gsi_routing_irqchip_add(r, PREFILL_GSI, KVM_IRQCHIP_PIC_MASTER, 1);
		kvm_gsi_routing_set(self->vm, r);
		r->nr--;
	}
	if (variant->x2apic_ids || variant->x2apic_ids_after_set)
		vm_enable_cap(self->vm, KVM_CAP_X2APIC_API, KVM_X2APIC_API_USE_32BIT_IDS);

	TEST_ASSERT(variant->split || probe_status(self->vm, PREFILL_GSI) >= 0, "not prefilled");
	err = __kvm_gsi_routing_set(self->vm, r) ? errno : 0;
	TEST_ASSERT(err == variant->err, "KVM_SET_GSI_ROUTING: errno %d (%s), expected %d",
		    err, strerror(err), variant->err);
	if (p)
		munmap(p, psz);
	/* Refused: the table installed before stays; accepted: the new one is in force. */
	TEST_ASSERT(variant->split || (probe_status(self->vm, PREFILL_GSI) >= 0) == !!err,
		    "PREFILL_GSI %s routed after the %s table", err ? "no longer" : "still",
		    err ? "refused" : "accepted");
}

#define CASE(name)	FIXTURE_VARIANT_ADD(routing, name)

CASE(empty) {};
CASE(max_routes) { .fill = KVM_MAX_IRQ_ROUTES };
CASE(too_many_routes) { .nr_override = KVM_MAX_IRQ_ROUTES + 1, .err = EINVAL };
CASE(table_flags) { .e = { MSI_E(GSI) }, .flags = 1, .err = EINVAL };
CASE(gsi_too_large) { .e = { MSI_E(KVM_MAX_IRQ_ROUTES) }, .err = EINVAL };
CASE(unknown_type) { .e = { MSI_X(GSI, 0xff, 0, 0, 0) }, .err = EINVAL };
CASE(irqchip_too_large) { .e = { CHIP_E(GSI, KVM_NR_IRQCHIPS, 0) }, .err = EINVAL };
CASE(pic_pin_too_large) { .e = { CHIP_E(GSI, KVM_IRQCHIP_PIC_SLAVE, 8) }, .err = EINVAL };
CASE(ioapic_pin_too_large) { .e = { CHIP_E(GSI, IOAPIC, KVM_IOAPIC_NUM_PINS) }, .err = EINVAL };
CASE(pic_and_ioapic) { .e = { CHIP_E(GSI, KVM_IRQCHIP_PIC_MASTER, 3), CHIP_E(GSI, IOAPIC, 3) } };
CASE(same_irqchip_twice) {
	.e = { CHIP_E(GSI, IOAPIC, 3), CHIP_E(GSI, IOAPIC, 4) }, .err = EINVAL };
CASE(msi_twice) { .e = { MSI_E(GSI), MSI_E(GSI) }, .err = EINVAL };
CASE(irqchip_and_msi) { .e = { CHIP_E(GSI, IOAPIC, 3), MSI_E(GSI) }, .err = EINVAL };
CASE(irqchip_flags) { .e = { CHIP_X(GSI, IOAPIC, 3, 1) }, .err = EINVAL };
CASE(msi_flags) { .e = { MSI_X(GSI, KVM_IRQ_ROUTING_MSI, 2, 0, 0) }, .err = EINVAL };
CASE(msi_devid) { .e = { MSI_X(GSI, KVM_IRQ_ROUTING_MSI, KVM_MSI_VALID_DEVID, 0, 5) } };
/* GSIs 0..4094 valid, an unknown type on GSI 4095. */
CASE(bad_last_of_4096) {
	.fill = KVM_MAX_IRQ_ROUTES - 1, .e = { MSI_X(KVM_MAX_IRQ_ROUTES - 1, 0xff, 0, 0, 0) },
	.err = EINVAL };
CASE(split_irqchip_route) { .e = { CHIP_E(GSI, IOAPIC, 3) }, .err = EINVAL, .split = true };
CASE(split_msi_route) { .e = { MSI_E(GSI) }, .split = true };
CASE(x2apic_ids_address_hi_low_bits) {
	.e = { MSI_X(GSI, KVM_IRQ_ROUTING_MSI, 0, 1, 0) }, .err = EINVAL, .x2apic_ids = true };
/* Accepted before KVM_CAP_X2APIC_API, the same entry is invalid after it. */
CASE(x2apic_ids_same_table) {
	.e = { MSI_X(GSI, KVM_IRQ_ROUTING_MSI, 0, 1, 0) }, .err = EINVAL,
	.x2apic_ids_after_set = true };
CASE(efault) { .e = { MSI_E(GSI), MSI_E(GSI + 1) }, .err = EFAULT, .efault = true };

int main(int argc, char **argv)
{
	TEST_REQUIRE(kvm_has_cap(KVM_CAP_IRQ_ROUTING));	/* skip here, not in each test */
	return test_harness_run(argc, argv);
}
