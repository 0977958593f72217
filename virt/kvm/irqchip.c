// SPDX-License-Identifier: GPL-2.0-only
/*
 * irqchip.c: Common API for in kernel interrupt controllers
 * Copyright (c) 2007, Intel Corporation.
 * Copyright 2010 Red Hat, Inc. and/or its affiliates.
 * Copyright (c) 2013, Alexander Graf <agraf@suse.de>
 *
 * This file is derived from virt/kvm/irq_comm.c.
 *
 * Authors:
 *   Yaozu (Eddie) Dong <Eddie.dong@intel.com>
 *   Alexander Graf <agraf@suse.de>
 */

#include <linux/kvm_host.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/export.h>
#include <trace/events/kvm.h>

int kvm_irq_map_gsi(struct kvm *kvm,
		    struct kvm_kernel_irq_routing_entry *entries, int gsi)
{
	struct kvm_irq_routing_table *irq_rt;
	struct kvm_kernel_irq_routing_entry *e;
	int n = 0;

	irq_rt = srcu_dereference_check(kvm->irq_routing, &kvm->irq_srcu,
					lockdep_is_held(&kvm->irq_lock));
	if (irq_rt && gsi < irq_rt->nr_rt_entries) {
		hlist_for_each_entry(e, &irq_rt->map[gsi], link) {
			entries[n] = *e;
			++n;
		}
	}

	return n;
}

int kvm_irq_map_chip_pin(struct kvm *kvm, unsigned irqchip, unsigned pin)
{
	struct kvm_irq_routing_table *irq_rt;

	irq_rt = srcu_dereference(kvm->irq_routing, &kvm->irq_srcu);
	return irq_rt->chip[irqchip][pin];
}

int kvm_send_userspace_msi(struct kvm *kvm, struct kvm_msi *msi)
{
	struct kvm_kernel_irq_routing_entry route;

	if (!kvm_arch_irqchip_in_kernel(kvm) || (msi->flags & ~KVM_MSI_VALID_DEVID))
		return -EINVAL;

	route.msi.address_lo = msi->address_lo;
	route.msi.address_hi = msi->address_hi;
	route.msi.data = msi->data;
	route.msi.flags = msi->flags;
	route.msi.devid = msi->devid;

	return kvm_set_msi(&route, kvm, KVM_USERSPACE_IRQ_SOURCE_ID, 1, false);
}

/*
 * Return value:
 *  < 0   Interrupt was ignored (masked or not delivered for other reasons)
 *  = 0   Interrupt was coalesced (previous irq is still pending)
 *  > 0   Number of CPUs interrupt was delivered to
 */
int kvm_set_irq(struct kvm *kvm, int irq_source_id, u32 irq, int level,
		bool line_status)
{
	struct kvm_kernel_irq_routing_entry irq_set[KVM_NR_IRQCHIPS];
	int ret = -1, i, idx;

	trace_kvm_set_irq(irq, level, irq_source_id);

	/* Not possible to detect if the guest uses the PIC or the
	 * IOAPIC.  So set the bit in both. The guest will ignore
	 * writes to the unused one.
	 */
	idx = srcu_read_lock(&kvm->irq_srcu);
	i = kvm_irq_map_gsi(kvm, irq_set, irq);
	srcu_read_unlock(&kvm->irq_srcu, idx);

	while (i--) {
		int r;
		r = irq_set[i].set(&irq_set[i], kvm, irq_source_id, level,
				   line_status);
		if (r < 0)
			continue;

		ret = r + ((ret < 0) ? 0 : ret);
	}

	return ret;
}

static void free_irq_routing_table(struct kvm_irq_routing_table *rt)
{
	if (!rt)
		return;

	kvfree(rt->entries);
	kvfree(rt);
}

/*
 * Round capacities up to a power of two, so that a table which grows by one
 * entry per update (QEMU adds MSI-X vectors one at a time while VFIO enables
 * them) fits in the table freed by the previous update most of the time.
 */
static u32 irq_routing_capacity(u32 n)
{
	return n ? roundup_pow_of_two(n) : 0;
}

/*
 * Return a table with room for @nr entries and GSIs below @nr_rt_entries,
 * with no routes and every irqchip pin unmapped.  The entries themselves are
 * not initialized: setup_routing_entry() and kvm_set_routing_entry() fill
 * every field that is used for the entry's type.
 */
static struct kvm_irq_routing_table *
alloc_irq_routing_table(struct kvm *kvm, u32 nr_rt_entries, u32 nr)
{
	struct kvm_irq_routing_table *rt;
	u32 max_rt_entries;

	/* xchg() hands the cached table to one updater at most. */
	rt = xchg(&kvm->irq_routing_cache, NULL);
	if (rt && (rt->max_rt_entries < nr_rt_entries || rt->max_entries < nr)) {
		free_irq_routing_table(rt);
		rt = NULL;
	}

	if (!rt) {
		max_rt_entries = irq_routing_capacity(nr_rt_entries);
		rt = kvmalloc_flex(*rt, map, max_rt_entries, GFP_KERNEL_ACCOUNT);
		if (!rt)
			return NULL;

		rt->max_rt_entries = max_rt_entries;
		rt->max_entries = irq_routing_capacity(nr);
		rt->entries = NULL;
		if (rt->max_entries) {
			rt->entries = kvmalloc_objs(*rt->entries, rt->max_entries,
						    GFP_KERNEL_ACCOUNT);
			if (!rt->entries) {
				kvfree(rt);
				return NULL;
			}
		}
	}

	rt->nr_rt_entries = nr_rt_entries;
	memset(rt->map, 0, nr_rt_entries * sizeof(rt->map[0]));
	memset(rt->chip, -1, sizeof(rt->chip));

	return rt;
}

/*
 * Keep @rt for the next update.  No SRCU reader may be able to see @rt: it
 * was either never published, or replaced and followed by a grace period.
 * At most one table is kept per VM; the one it replaces is freed.
 */
static void release_irq_routing_table(struct kvm *kvm,
				      struct kvm_irq_routing_table *rt)
{
	if (rt)
		free_irq_routing_table(xchg(&kvm->irq_routing_cache, rt));
}

void kvm_free_irq_routing(struct kvm *kvm)
{
	/* Called only during vm destruction. Nobody can use the pointer
	   at this stage */
	struct kvm_irq_routing_table *rt = rcu_access_pointer(kvm->irq_routing);
	free_irq_routing_table(rt);
	free_irq_routing_table(kvm->irq_routing_cache);
	kvm->irq_routing_cache = NULL;
	kvfree(kvm->irq_routing_copy_cache);
	kvm->irq_routing_copy_cache = NULL;
}

static int setup_routing_entry(struct kvm *kvm,
			       struct kvm_irq_routing_table *rt,
			       struct kvm_kernel_irq_routing_entry *e,
			       const struct kvm_irq_routing_entry *ue)
{
	struct kvm_kernel_irq_routing_entry *ei;
	int r;
	u32 gsi = array_index_nospec(ue->gsi, KVM_MAX_IRQ_ROUTES);

	/*
	 * Do not allow GSI to be mapped to the same irqchip more than once.
	 * Allow only one to one mapping between GSI and non-irqchip routing.
	 */
	hlist_for_each_entry(ei, &rt->map[gsi], link)
		if (ei->type != KVM_IRQ_ROUTING_IRQCHIP ||
		    ue->type != KVM_IRQ_ROUTING_IRQCHIP ||
		    ue->u.irqchip.irqchip == ei->irqchip.irqchip)
			return -EINVAL;

	e->gsi = gsi;
	e->type = ue->type;
	r = kvm_set_routing_entry(kvm, e, ue);
	if (r)
		return r;
	if (e->type == KVM_IRQ_ROUTING_IRQCHIP) {
		u32 irqchip = e->irqchip.irqchip;
		u32 pin = e->irqchip.pin;

		/*
		 * The arch code validates irqchip and pin against its own
		 * limits, but rt->chip[][] is sized by the generic ones.  An
		 * index out of those is an arch bug, and writing with it a
		 * heap overflow controlled by userspace: refuse it.
		 */
		if (WARN_ON_ONCE(irqchip >= KVM_NR_IRQCHIPS ||
				 pin >= KVM_IRQCHIP_NUM_PINS))
			return -EINVAL;

		irqchip = array_index_nospec(irqchip, KVM_NR_IRQCHIPS);
		pin = array_index_nospec(pin, KVM_IRQCHIP_NUM_PINS);
		rt->chip[irqchip][pin] = e->gsi;
	}

	hlist_add_head(&e->link, &rt->map[e->gsi]);

	return 0;
}

void __attribute__((weak)) kvm_arch_irq_routing_update(struct kvm *kvm)
{
}

bool __weak kvm_arch_can_set_irq_routing(struct kvm *kvm)
{
	return true;
}

int kvm_set_irq_routing(struct kvm *kvm,
			const struct kvm_irq_routing_entry *ue,
			unsigned nr,
			unsigned flags)
{
	struct kvm_irq_routing_table *new, *old;
	struct kvm_kernel_irq_routing_entry *e;
	u32 i, nr_rt_entries = 0;
	int r;

	for (i = 0; i < nr; ++i) {
		if (ue[i].gsi >= KVM_MAX_IRQ_ROUTES)
			return -EINVAL;
		nr_rt_entries = max(nr_rt_entries, ue[i].gsi);
	}

	nr_rt_entries += 1;

	new = alloc_irq_routing_table(kvm, nr_rt_entries, nr);
	if (!new)
		return -ENOMEM;

	for (i = 0; i < nr; ++i) {
		e = &new->entries[i];

		r = -EINVAL;
		switch (ue->type) {
		case KVM_IRQ_ROUTING_MSI:
			if (ue->flags & ~KVM_MSI_VALID_DEVID)
				goto out;
			break;
		default:
			if (ue->flags)
				goto out;
			break;
		}
		r = setup_routing_entry(kvm, new, e, ue);
		if (r)
			goto out;
		++ue;
	}

	mutex_lock(&kvm->irq_lock);
	old = rcu_dereference_protected(kvm->irq_routing, 1);
	rcu_assign_pointer(kvm->irq_routing, new);
	kvm_irq_routing_update(kvm);
	kvm_arch_irq_routing_update(kvm);
	mutex_unlock(&kvm->irq_lock);

	synchronize_srcu_expedited(&kvm->irq_srcu);

	new = old;
	r = 0;
out:
	release_irq_routing_table(kvm, new);

	return r;
}

/* KVM_SET_GSI_ROUTING's copy of the entries passed by userspace. */
struct kvm_irq_routing_copy {
	u32 max_entries;
	struct kvm_irq_routing_entry entries[] __counted_by(max_entries);
};

int kvm_vm_ioctl_set_gsi_routing(struct kvm *kvm,
				 struct kvm_irq_routing __user *urouting)
{
	struct kvm_irq_routing_copy *copy = NULL;
	struct kvm_irq_routing routing;
	u32 max_entries;
	int r;

	if (copy_from_user(&routing, urouting, sizeof(routing)))
		return -EFAULT;
	if (!kvm_arch_can_set_irq_routing(kvm))
		return -EINVAL;
	if (routing.nr > KVM_MAX_IRQ_ROUTES)
		return -EINVAL;
	if (routing.flags)
		return -EINVAL;

	if (routing.nr) {
		/*
		 * Copy the entries into the buffer that the previous call
		 * used, if it is large enough, rather than allocating up to
		 * KVM_MAX_IRQ_ROUTES * 48 bytes on every call.  xchg() hands
		 * the buffer to one caller at most.
		 */
		copy = xchg(&kvm->irq_routing_copy_cache, NULL);
		if (copy && copy->max_entries < routing.nr) {
			kvfree(copy);
			copy = NULL;
		}
		if (!copy) {
			max_entries = irq_routing_capacity(routing.nr);
			copy = kvmalloc_flex(*copy, entries, max_entries,
					     GFP_KERNEL_ACCOUNT);
			if (!copy)
				return -ENOMEM;
			/* Not every compiler has __counted_by(). */
			copy->max_entries = max_entries;
		}

		if (copy_from_user(copy->entries, urouting->entries,
				   routing.nr * sizeof(copy->entries[0]))) {
			r = -EFAULT;
			goto out;
		}
	}

	r = kvm_set_irq_routing(kvm, copy ? copy->entries : NULL, routing.nr,
				routing.flags);
out:
	if (copy)
		kvfree(xchg(&kvm->irq_routing_copy_cache, copy));
	return r;
}

/*
 * Allocate empty IRQ routing by default so that additional setup isn't needed
 * when userspace-driven IRQ routing is activated, and so that kvm->irq_routing
 * is guaranteed to be non-NULL.
 */
int kvm_init_irq_routing(struct kvm *kvm)
{
	struct kvm_irq_routing_table *new;

	new = alloc_irq_routing_table(kvm, 1, 0);
	if (!new)
		return -ENOMEM;

	RCU_INIT_POINTER(kvm->irq_routing, new);

	return 0;
}
