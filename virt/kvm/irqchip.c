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

#ifdef CONFIG_PROVE_RCU
/*
 * Reusing a table that an SRCU reader can still see is a use-after-free
 * that userspace can rarely observe.  With CONFIG_PROVE_RCU, a table records
 * the grace period after which no reader can see it, and putting it in the
 * cache or taking it from there before that grace period has completed
 * WARNs, even with a single updater.
 */
static void irq_routing_retire(struct kvm *kvm,
			       struct kvm_irq_routing_table *rt)
{
	rt->retired = get_state_synchronize_srcu(&kvm->irq_srcu);
}

/* A table that was never published can be reused at once. */
static void irq_routing_retire_unpublished(struct kvm_irq_routing_table *rt)
{
	rt->retired = get_completed_synchronize_srcu();
}

static void irq_routing_check_retired(struct kvm *kvm,
				      struct kvm_irq_routing_table *rt)
{
	WARN_ON_ONCE(!poll_state_synchronize_srcu(&kvm->irq_srcu, rt->retired));
}
#else
static void irq_routing_retire(struct kvm *kvm,
			       struct kvm_irq_routing_table *rt)
{
}

static void irq_routing_retire_unpublished(struct kvm_irq_routing_table *rt)
{
}

static void irq_routing_check_retired(struct kvm *kvm,
				      struct kvm_irq_routing_table *rt)
{
}
#endif

/*
 * A table's arrays are kept for later updates, so they are sized by what the
 * allocation really provides, and all of it is used.  Up to
 * KMALLOC_MAX_CACHE_SIZE, that is kmalloc()'s bucket.  Above, kmalloc()
 * rounds up to a power-of-two number of pages, up to twice the size asked for
 * (KVM_MAX_IRQ_ROUTES entries, 320 KiB on x86-64, would take 512 KiB), so
 * larger arrays come from vmalloc(), in whole pages.  Returns the size that
 * irq_routing_alloc() allocates for a request of @size bytes.
 */
static size_t irq_routing_alloc_size(size_t size)
{
	if (size <= KMALLOC_MAX_CACHE_SIZE)
		return kmalloc_size_roundup(size);

	return PAGE_ALIGN(size);
}

/* @size is a size returned by irq_routing_alloc_size(). */
static void *irq_routing_alloc(size_t size)
{
	if (size <= KMALLOC_MAX_CACHE_SIZE)
		return kmalloc(size, GFP_KERNEL_ACCOUNT);

	return __vmalloc(size, GFP_KERNEL_ACCOUNT);
}

/*
 * New arrays get a quarter more room than asked for, and at least
 * IRQ_ROUTING_HEADROOM elements more, so that a table that grows by one entry
 * per update, as QEMU's does while VFIO enables MSI-X vectors one at a time,
 * is rebuilt in the cached table on most updates, small tables included: a
 * table that starts empty, as with a split irqchip, would otherwise be
 * reallocated on each of its first updates.
 */
#define IRQ_ROUTING_HEADROOM	4

static u32 irq_routing_want(u32 n)
{
	return min_t(u32, n + max(n / 4, IRQ_ROUTING_HEADROOM),
		     KVM_MAX_IRQ_ROUTES);
}

/* The size of a table (header and GSI map) with room for @room GSIs. */
static size_t irq_routing_map_bytes(u32 room)
{
	struct kvm_irq_routing_table *rt;

	return irq_routing_alloc_size(struct_size(rt, map, room));
}

/* The size of an entries array with room for @room entries. */
static size_t irq_routing_entries_bytes(u32 room)
{
	struct kvm_irq_routing_table *rt;

	return irq_routing_alloc_size(array_size(room, sizeof(rt->entries[0])));
}

/*
 * The size of a new table for GSIs below @nr_rt_entries, and in *@room the
 * number of GSIs its map has room for.
 */
static size_t irq_routing_map_size(u32 nr_rt_entries, u32 *room)
{
	struct kvm_irq_routing_table *rt;
	size_t size;

	size = irq_routing_map_bytes(irq_routing_want(nr_rt_entries));
	*room = min_t(size_t, KVM_MAX_IRQ_ROUTES,
		      (size - sizeof(*rt)) / sizeof(rt->map[0]));
	return size;
}

/*
 * The size of a new entries array for @nr entries, and in *@room the number
 * of entries it has room for.
 */
static size_t irq_routing_entries_size(u32 nr, u32 *room)
{
	struct kvm_irq_routing_table *rt;
	size_t size;

	size = irq_routing_entries_bytes(irq_routing_want(nr));
	*room = min_t(size_t, KVM_MAX_IRQ_ROUTES, size / sizeof(rt->entries[0]));
	return size;
}

/*
 * Whether an array with room for @max elements, of @size bytes, may hold @n
 * of them, where a new array for @n would take @fresh bytes: it must be
 * large enough, and at most twice the size of the new one, so that a VM
 * whose table shrinks does not keep much more memory than it needs.  Sizes
 * are compared in bytes, which kmalloc()'s buckets and whole pages round by
 * at most a factor of two: a new array always fits the update it was
 * allocated for, and so does one for a neighbouring size across a bucket
 * boundary, where the room for elements more than doubles once a table's
 * header is taken off (and where the two sizes can be exactly a factor of
 * two apart, hence "at most").  Arrays with room for up to twice
 * IRQ_ROUTING_SMALL elements are never too large.
 */
#define IRQ_ROUTING_SMALL	64

static bool irq_routing_fits(u32 max, u32 n, size_t size, size_t fresh)
{
	return n <= max && (max <= 2 * IRQ_ROUTING_SMALL || size <= 2 * fresh);
}

static bool irq_routing_map_fits(struct kvm_irq_routing_table *rt,
				 u32 nr_rt_entries)
{
	u32 room;

	return irq_routing_fits(rt->max_rt_entries, nr_rt_entries,
				irq_routing_map_bytes(rt->max_rt_entries),
				irq_routing_map_size(nr_rt_entries, &room));
}

static bool irq_routing_entries_fit(struct kvm_irq_routing_table *rt, u32 nr)
{
	u32 room;

	return irq_routing_fits(rt->max_entries, nr,
				irq_routing_entries_bytes(rt->max_entries),
				irq_routing_entries_size(nr, &room));
}

static bool irq_routing_table_fits(struct kvm_irq_routing_table *rt,
				   u32 nr_rt_entries, u32 nr)
{
	return irq_routing_map_fits(rt, nr_rt_entries) &&
	       irq_routing_entries_fit(rt, nr);
}

/*
 * Put @rt, a table that no SRCU reader can see, in the cache.  At most one
 * table is kept per VM; the one it replaces is freed.
 */
static void irq_routing_cache_put(struct kvm *kvm,
				  struct kvm_irq_routing_table *rt)
{
	/*
	 * Only a table that no SRCU reader can see goes to the cache: checked
	 * here, where a table cached too early is, and again when it is taken.
	 */
	irq_routing_check_retired(kvm, rt);
	free_irq_routing_table(xchg(&kvm->irq_routing_cache, rt));
}

/* A new table with a map for GSIs below @nr_rt_entries, and no entries. */
static struct kvm_irq_routing_table *irq_routing_alloc_map(u32 nr_rt_entries)
{
	struct kvm_irq_routing_table *rt;
	size_t size;
	u32 room;

	size = irq_routing_map_size(nr_rt_entries, &room);
	rt = irq_routing_alloc(size);
	if (!rt)
		return NULL;

	rt->max_rt_entries = room;
	rt->max_entries = 0;
	rt->entries = NULL;
	irq_routing_retire_unpublished(rt);
	return rt;
}

/*
 * Return the cached table if its entries fit an update of @nr routes (see
 * irq_routing_fits()), else NULL, with the cached table freed.
 */
static struct kvm_irq_routing_table *
irq_routing_take_cached(struct kvm *kvm, u32 nr)
{
	struct kvm_irq_routing_table *rt;

	/* xchg() hands the cached table to one updater at most. */
	rt = xchg(&kvm->irq_routing_cache, NULL);
	if (rt && !irq_routing_entries_fit(rt, nr)) {
		free_irq_routing_table(rt);
		return NULL;
	}

	/*
	 * A cached table must have been out of every SRCU reader's sight
	 * since before a grace period that has completed.
	 */
	if (rt)
		irq_routing_check_retired(kvm, rt);

	return rt;
}

/*
 * Return a new array for @nr entries, and its capacity in *@max_entries.
 * The entries, like those of a cached table, are not initialized:
 * setup_routing_entry() and kvm_set_routing_entry() fill every field that
 * is used for the entry's type.
 */
static struct kvm_kernel_irq_routing_entry *
irq_routing_alloc_entries(u32 nr, u32 *max_entries)
{
	return irq_routing_alloc(irq_routing_entries_size(nr, max_entries));
}

/*
 * Return a table for @entries, an array with room for @max_entries, with a
 * map for GSIs below @nr_rt_entries, no routes and every irqchip pin
 * unmapped: @rt, the cached table that @entries belong to, if there is one
 * and its map fits, else a new table, to which @entries move from @rt.
 * Returns NULL if the new table cannot be allocated, leaving @rt and
 * @entries to the caller.
 */
static struct kvm_irq_routing_table *
irq_routing_fit_map(struct kvm_irq_routing_table *rt,
		    struct kvm_kernel_irq_routing_entry *entries,
		    u32 max_entries, u32 nr_rt_entries)
{
	struct kvm_irq_routing_table *new;

	if (!rt || !irq_routing_map_fits(rt, nr_rt_entries)) {
		new = irq_routing_alloc_map(nr_rt_entries);
		if (!new)
			return NULL;
		new->entries = entries;
		new->max_entries = max_entries;
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
 * was replaced and followed by a grace period.
 */
static void release_irq_routing_table(struct kvm *kvm,
				      struct kvm_irq_routing_table *rt,
				      u32 nr_rt_entries, u32 nr)
{
	if (!rt)
		return;

	if (irq_routing_table_fits(rt, nr_rt_entries, nr))
		irq_routing_cache_put(kvm, rt);
	else
		free_irq_routing_table(rt);
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

/*
 * Where KVM_SET_GSI_ROUTING copies the @nr entries of the user's array: the
 * end of @entries, an array with room for @max_entries kernel entries, so
 * that there is no other copy to allocate.  As a kernel entry is at least as
 * large as a user's, and the copy starts at least @nr times the difference
 * into the array, kernel entry i ends before user entry i + 1 starts: kernel
 * entries built in order, each from a copy on the stack where it overlaps its
 * own user entry, never overwrite a user entry that is still to be read.
 */
static struct kvm_irq_routing_entry *
irq_routing_user_copy(struct kvm_kernel_irq_routing_entry *entries,
		      u32 max_entries, u32 nr)
{
	BUILD_BUG_ON(sizeof(*entries) < sizeof(struct kvm_irq_routing_entry));
	BUILD_BUG_ON(__alignof__(*entries) <
		     __alignof__(struct kvm_irq_routing_entry));

	return (void *)&entries[max_entries] -
	       nr * sizeof(struct kvm_irq_routing_entry);
}

/*
 * Install the @nr entries at @routes, a kernel array, or at @uentries, a
 * user array that is first copied into the new table's entries.
 */
static int __kvm_set_irq_routing(struct kvm *kvm,
				 const struct kvm_irq_routing_entry *routes,
				 const struct kvm_irq_routing_entry __user *uentries,
				 u32 nr, u32 flags)
{
	struct kvm_irq_routing_table *cached, *new, *old;
	struct kvm_kernel_irq_routing_entry *entries = NULL, *e;
	const struct kvm_irq_routing_entry *u;
	struct kvm_irq_routing_entry *copy, entry;
	u32 i, nr_direct, max_entries = 0, nr_rt_entries = 0;
	int r;

	/*
	 * A table's arrays have room for at most KVM_MAX_IRQ_ROUTES entries.
	 * The ioctl refuses more; an in-kernel caller passing more is a bug.
	 */
	if (WARN_ON_ONCE(nr > KVM_MAX_IRQ_ROUTES))
		return -EINVAL;

	/*
	 * Until the GSIs are known and checked, take only the entries: the
	 * cached table's, or a new array.  The user's entries are copied
	 * there, so the copy needs that memory anyway; the map is allocated
	 * only for GSIs that passed the check.
	 */
	cached = irq_routing_take_cached(kvm, nr);
	if (cached) {
		entries = cached->entries;
		max_entries = cached->max_entries;
	} else {
		/* Even with no routes, so that an update adding one fits. */
		entries = irq_routing_alloc_entries(nr, &max_entries);
		if (!entries)
			return -ENOMEM;
	}

	if (uentries && nr) {
		copy = irq_routing_user_copy(entries, max_entries, nr);
		r = -EFAULT;
		if (copy_from_user(copy, uentries, nr * sizeof(*copy)))
			goto out_entries;
		routes = copy;
	}

	r = -EINVAL;
	for (i = 0; i < nr; ++i) {
		if (routes[i].gsi >= KVM_MAX_IRQ_ROUTES)
			goto out_entries;
		nr_rt_entries = max(nr_rt_entries, routes[i].gsi);
	}

	nr_rt_entries += 1;

	r = -ENOMEM;
	new = irq_routing_fit_map(cached, entries, max_entries, nr_rt_entries);
	if (!new)
		goto out_entries;

	/*
	 * From entry @nr_direct on, building an entry can overwrite the
	 * user's entry it is built from, where KVM_SET_GSI_ROUTING copied it
	 * (but no later one, see irq_routing_user_copy()): those entries, at
	 * most the last few of an array with no room to spare, are built from
	 * a copy on the stack.
	 */
	nr_direct = nr;
	while (uentries && nr_direct &&
	       (void *)&new->entries[nr_direct] > (void *)&routes[nr_direct - 1])
		nr_direct--;

	for (i = 0, e = new->entries, u = routes; i < nr; i++, e++, u++) {
		const struct kvm_irq_routing_entry *src = u;

		if (i >= nr_direct) {
			entry = *u;
			src = &entry;
		}

		r = -EINVAL;
		switch (src->type) {
		case KVM_IRQ_ROUTING_MSI:
			if (src->flags & ~KVM_MSI_VALID_DEVID)
				goto out;
			break;
		default:
			if (src->flags)
				goto out;
			break;
		}
		r = setup_routing_entry(kvm, new, e, src);
		if (r)
			goto out;
	}

	mutex_lock(&kvm->irq_lock);
	old = rcu_dereference_protected(kvm->irq_routing, 1);
	rcu_assign_pointer(kvm->irq_routing, new);
	irq_routing_retire(kvm, old);
	kvm_irq_routing_update(kvm);
	kvm_arch_irq_routing_update(kvm);
	mutex_unlock(&kvm->irq_lock);

	synchronize_srcu_expedited(&kvm->irq_srcu);

	release_irq_routing_table(kvm, old, nr_rt_entries, nr);
	return 0;

out:
	/*
	 * A table that failed validation was never published.  The cached
	 * table goes back to the cache, where it was before this update.  A
	 * new table is freed, with its entries even if they were the cached
	 * table's: its map was sized for the refused table, and keeping it
	 * could pin a large table in a VM whose installed one is small.  (A
	 * new table is allocated before the cached header is freed, so it is
	 * never at the same address.)
	 */
	if (new == cached)
		irq_routing_cache_put(kvm, new);
	else
		free_irq_routing_table(new);
	return r;

out_entries:
	if (cached)
		irq_routing_cache_put(kvm, cached);
	else
		kvfree(entries);
	return r;
}

int kvm_set_irq_routing(struct kvm *kvm,
			const struct kvm_irq_routing_entry *routes,
			unsigned int nr, unsigned int flags)
{
	return __kvm_set_irq_routing(kvm, routes, NULL, nr, flags);
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
	struct kvm_kernel_irq_routing_entry *entries;
	struct kvm_irq_routing_table *new;
	u32 max_entries;

	/* No routes, but entries, so that a later update may reuse it. */
	entries = irq_routing_alloc_entries(0, &max_entries);
	if (!entries)
		return -ENOMEM;

	new = irq_routing_fit_map(NULL, entries, max_entries, 1);
	if (!new) {
		kvfree(entries);
		return -ENOMEM;
	}

	RCU_INIT_POINTER(kvm->irq_routing, new);

	return 0;
}
