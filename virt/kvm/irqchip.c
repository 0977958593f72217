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
#include <linux/vmalloc.h>
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
 * A table's arrays are kept for later updates, so they are sized by what the
 * allocation really provides, and all of it is used.  Up to
 * KMALLOC_MAX_CACHE_SIZE, that is kmalloc()'s bucket.  Above, kmalloc()
 * rounds up to a power-of-two number of pages, up to twice the size asked for
 * (KVM_MAX_IRQ_ROUTES entries, 320 KiB on x86-64, would take 512 KiB), so
 * larger arrays come from vmalloc(), in whole pages.
 */
static void *irq_routing_alloc(size_t *size)
{
	if (*size <= KMALLOC_MAX_CACHE_SIZE) {
		*size = kmalloc_size_roundup(*size);
		return kmalloc(*size, GFP_KERNEL_ACCOUNT);
	}

	*size = PAGE_ALIGN(*size);
	return __vmalloc(*size, GFP_KERNEL_ACCOUNT);
}

/*
 * New arrays get a quarter more room than asked for, so that a table that
 * grows by one entry per update, as QEMU's does while VFIO enables MSI-X
 * vectors one at a time, is rebuilt in the cached table on most updates.
 */
static u32 irq_routing_want(u32 n)
{
	return min_t(u32, n + n / 4, KVM_MAX_IRQ_ROUTES);
}

/*
 * Whether an array with room for @max elements may hold @n of them: it must
 * be large enough, and at most twice what is needed, so that a VM whose table
 * shrinks does not keep the memory of its largest table.  Arrays with room
 * for up to twice IRQ_ROUTING_SMALL elements are never too large.
 */
#define IRQ_ROUTING_SMALL	64

static bool irq_routing_fits(u32 max, u32 n)
{
	return n <= max && max / 2 <= max_t(u32, n, IRQ_ROUTING_SMALL);
}

static bool irq_routing_table_fits(struct kvm_irq_routing_table *rt,
				   u32 nr_rt_entries, u32 nr)
{
	return irq_routing_fits(rt->max_rt_entries, nr_rt_entries) &&
	       irq_routing_fits(rt->max_entries, nr);
}

/* A new table with a map for GSIs below @nr_rt_entries, and no entries. */
static struct kvm_irq_routing_table *irq_routing_alloc_map(u32 nr_rt_entries)
{
	struct kvm_irq_routing_table *rt;
	size_t size;

	size = struct_size(rt, map, irq_routing_want(nr_rt_entries));
	rt = irq_routing_alloc(&size);
	if (!rt)
		return NULL;

	rt->max_rt_entries = min_t(size_t, KVM_MAX_IRQ_ROUTES,
				   (size - sizeof(*rt)) / sizeof(rt->map[0]));
	rt->max_entries = 0;
	rt->entries = NULL;
	/* Never published. */
	rt->retired = get_completed_synchronize_srcu();
	return rt;
}

/*
 * Return a table with room for @nr entries, whose map irq_routing_fit_map()
 * sizes once the GSIs are known: the cached table if its entries fit (see
 * irq_routing_fits()), else a new one.  The entries are not initialized:
 * setup_routing_entry() and kvm_set_routing_entry() fill every field that
 * is used for the entry's type.
 */
static struct kvm_irq_routing_table *
alloc_irq_routing_table(struct kvm *kvm, u32 nr)
{
	struct kvm_irq_routing_table *rt;
	size_t size;

	/* xchg() hands the cached table to one updater at most. */
	rt = xchg(&kvm->irq_routing_cache, NULL);
	if (rt && !irq_routing_fits(rt->max_entries, nr)) {
		free_irq_routing_table(rt);
		rt = NULL;
	}

	if (rt) {
		/*
		 * A cached table must have been out of every SRCU reader's
		 * sight since before a grace period that has completed.
		 */
		if (IS_ENABLED(CONFIG_PROVE_RCU))
			WARN_ON_ONCE(!poll_state_synchronize_srcu(&kvm->irq_srcu,
								  rt->retired));
		return rt;
	}

	/* Most tables use GSIs 0 to @nr - 1, or a few more. */
	rt = irq_routing_alloc_map(nr + 1);
	if (!rt || !nr)
		return rt;

	size = array_size(irq_routing_want(nr), sizeof(rt->entries[0]));
	rt->entries = irq_routing_alloc(&size);
	if (!rt->entries) {
		kvfree(rt);
		return NULL;
	}
	rt->max_entries = min_t(size_t, KVM_MAX_IRQ_ROUTES,
				size / sizeof(rt->entries[0]));
	return rt;
}

/*
 * Give @rt a map for GSIs below @nr_rt_entries, with no routes and every
 * irqchip pin unmapped.  If its map does not fit, its entries move to a new
 * table.  Returns NULL, with @rt freed, if that cannot be allocated.
 */
static struct kvm_irq_routing_table *
irq_routing_fit_map(struct kvm_irq_routing_table *rt, u32 nr_rt_entries)
{
	struct kvm_irq_routing_table *new;

	if (!irq_routing_fits(rt->max_rt_entries, nr_rt_entries)) {
		new = irq_routing_alloc_map(nr_rt_entries);
		if (!new) {
			free_irq_routing_table(rt);
			return NULL;
		}
		new->entries = rt->entries;
		new->max_entries = rt->max_entries;
		kvfree(rt);
		rt = new;
	}

	rt->nr_rt_entries = nr_rt_entries;
	memset(rt->map, 0, nr_rt_entries * sizeof(rt->map[0]));
	memset(rt->chip, -1, sizeof(rt->chip));

	return rt;
}

/*
 * Keep @rt, a retired table, for the next update if it fits a table of @nr
 * entries and GSIs below @nr_rt_entries, the size of the table just
 * installed; free it otherwise.  No SRCU reader may be able to see @rt: it
 * was replaced and followed by a grace period.  At most one table is kept
 * per VM; the one it replaces is freed.
 */
static void release_irq_routing_table(struct kvm *kvm,
				      struct kvm_irq_routing_table *rt,
				      u32 nr_rt_entries, u32 nr)
{
	if (rt && !irq_routing_table_fits(rt, nr_rt_entries, nr)) {
		free_irq_routing_table(rt);
		return;
	}
	if (!rt)
		return;

	/*
	 * Only a table that no SRCU reader can see goes to the cache: checked
	 * here, where a table cached too early is, and again when it is taken.
	 */
	if (IS_ENABLED(CONFIG_PROVE_RCU))
		WARN_ON_ONCE(!poll_state_synchronize_srcu(&kvm->irq_srcu,
							  rt->retired));
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
}

static __always_inline int
setup_routing_entry(struct kvm *kvm, struct kvm_irq_routing_table *rt,
		    struct kvm_kernel_irq_routing_entry *e,
		    const struct kvm_irq_routing_entry *uentry)
{
	struct kvm_kernel_irq_routing_entry *ei;
	int r;
	u32 gsi = array_index_nospec(uentry->gsi, KVM_MAX_IRQ_ROUTES);

	switch (uentry->type) {
	case KVM_IRQ_ROUTING_MSI:
		if (uentry->flags & ~KVM_MSI_VALID_DEVID)
			return -EINVAL;
		break;
	default:
		if (uentry->flags)
			return -EINVAL;
		break;
	}

	/*
	 * Do not allow GSI to be mapped to the same irqchip more than once.
	 * Allow only one to one mapping between GSI and non-irqchip routing.
	 */
	hlist_for_each_entry(ei, &rt->map[gsi], link)
		if (ei->type != KVM_IRQ_ROUTING_IRQCHIP ||
		    uentry->type != KVM_IRQ_ROUTING_IRQCHIP ||
		    uentry->u.irqchip.irqchip == ei->irqchip.irqchip)
			return -EINVAL;

	e->gsi = gsi;
	e->type = uentry->type;
	r = kvm_set_routing_entry(kvm, e, uentry);
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

/*
 * Where KVM_SET_GSI_ROUTING copies the @nr entries of the user's array: the
 * end of @rt's entries, which has room for both arrays, so that there is no
 * other copy to allocate.  The user's entries are turned into kernel entries
 * in place, in order.  As a kernel entry is at least as large as a user's,
 * and the copy starts at least @nr times the difference into the array,
 * kernel entry i ends before user entry i + 1 starts: writing it can only
 * overwrite user entry i itself, which __kvm_set_irq_routing() then reads
 * from a copy on the stack.  That happens only for the last few entries,
 * if any: the overlap grows with i.
 */
static struct kvm_irq_routing_entry *
irq_routing_user_copy(struct kvm_irq_routing_table *rt, u32 nr)
{
	BUILD_BUG_ON(sizeof(rt->entries[0]) < sizeof(struct kvm_irq_routing_entry));
	BUILD_BUG_ON(__alignof__(rt->entries[0]) <
		     __alignof__(struct kvm_irq_routing_entry));

	return (void *)&rt->entries[rt->max_entries] -
	       nr * sizeof(struct kvm_irq_routing_entry);
}

/*
 * Install the @nr entries at @entries, a kernel array, or at @uentries, a
 * user array that is first copied into the new table.
 */
static int __kvm_set_irq_routing(struct kvm *kvm,
				 const struct kvm_irq_routing_entry *entries,
				 const struct kvm_irq_routing_entry __user *uentries,
				 u32 nr, u32 flags)
{
	struct kvm_irq_routing_table *new, *old;
	const struct kvm_irq_routing_entry *u;
	struct kvm_kernel_irq_routing_entry *e;
	struct kvm_irq_routing_entry *copy, tmp;
	u32 i, nr_direct, nr_rt_entries = 0;
	int r;

	new = alloc_irq_routing_table(kvm, nr);
	if (!new)
		return -ENOMEM;

	if (uentries && nr) {
		copy = irq_routing_user_copy(new, nr);
		r = -EFAULT;
		if (copy_from_user(copy, uentries, nr * sizeof(*copy)))
			goto out;
		entries = copy;
	}

	r = -EINVAL;
	for (i = 0; i < nr; ++i) {
		if (entries[i].gsi >= KVM_MAX_IRQ_ROUTES)
			goto out;
		nr_rt_entries = max(nr_rt_entries, entries[i].gsi);
	}

	nr_rt_entries += 1;

	new = irq_routing_fit_map(new, nr_rt_entries);
	if (!new)
		return -ENOMEM;

	/*
	 * From @nr_direct on, a user entry in the table may overlap the
	 * kernel entry built from it: see irq_routing_user_copy().
	 */
	nr_direct = nr;
	while (uentries && nr_direct &&
	       (void *)&new->entries[nr_direct] > (void *)&entries[nr_direct - 1])
		nr_direct--;

	e = new->entries;
	for (u = entries; u < entries + nr_direct; u++, e++) {
		r = setup_routing_entry(kvm, new, e, u);
		if (r)
			goto out;
	}
	for (; u < entries + nr; u++, e++) {
		tmp = *u;
		r = setup_routing_entry(kvm, new, e, &tmp);
		if (r)
			goto out;
	}

	mutex_lock(&kvm->irq_lock);
	old = rcu_dereference_protected(kvm->irq_routing, 1);
	rcu_assign_pointer(kvm->irq_routing, new);
	if (IS_ENABLED(CONFIG_PROVE_RCU))
		old->retired = get_state_synchronize_srcu(&kvm->irq_srcu);
	kvm_irq_routing_update(kvm);
	kvm_arch_irq_routing_update(kvm);
	mutex_unlock(&kvm->irq_lock);

	synchronize_srcu_expedited(&kvm->irq_srcu);

	release_irq_routing_table(kvm, old, nr_rt_entries, nr);
	return 0;

out:
	/*
	 * A table that failed validation was never published, but it is not
	 * kept: it was sized for the refused table, and keeping it could pin
	 * a large table in a VM whose installed one is small.
	 */
	free_irq_routing_table(new);
	return r;
}

int kvm_set_irq_routing(struct kvm *kvm,
			const struct kvm_irq_routing_entry *entries,
			unsigned int nr, unsigned int flags)
{
	return __kvm_set_irq_routing(kvm, entries, NULL, nr, flags);
}

int kvm_set_irq_routing_user(struct kvm *kvm,
			     const struct kvm_irq_routing_entry __user *entries,
			     u32 nr, u32 flags)
{
	return __kvm_set_irq_routing(kvm, NULL, entries, nr, flags);
}

/*
 * Allocate empty IRQ routing by default so that additional setup isn't needed
 * when userspace-driven IRQ routing is activated, and so that kvm->irq_routing
 * is guaranteed to be non-NULL.
 */
int kvm_init_irq_routing(struct kvm *kvm)
{
	struct kvm_irq_routing_table *new;

	new = alloc_irq_routing_table(kvm, 0);
	if (new)
		new = irq_routing_fit_map(new, 1);
	if (!new)
		return -ENOMEM;

	RCU_INIT_POINTER(kvm->irq_routing, new);

	return 0;
}
