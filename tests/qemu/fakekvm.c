// SPDX-License-Identifier: GPL-2.0
/*
 * fakekvm.so: an LD_PRELOAD stand-in for /dev/kvm, enough for
 * qemu-system-x86_64 -accel kvm,device=$FAKEKVM_DEV -S to start, with a
 * model of KVM_SET_GSI_ROUTING as the RFC's v2 defines it (whole tables, and
 * with KVM_GSI_ROUTING_PARTIAL the routes of the GSIs listed; EINVAL,
 * EBUSY, ENOSPC; nothing changes on error).  It lets the routing code of
 * accel/kvm run on a machine without /dev/kvm: no vCPU ever runs.
 *
 * Environment:
 *   FAKEKVM_DEV      the file QEMU is told is /dev/kvm (required)
 *   FAKEKVM_LOG      where each KVM_SET_GSI_ROUTING and KVM_ENABLE_CAP is
 *                    logged, and the final table dumped at exit
 *   FAKEKVM_PARTIAL  1: report KVM_GSI_ROUTING_PARTIAL and accept it
 *   FAKEKVM_MAX      report KVM_CAP_MAX_IRQ_ROUTES with this ceiling
 *   FAKEKVM_EBUSY    fail the Nth partial update with EBUSY
 *   FAKEKVM_ERRNO    ... with this errno instead (a number)
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef KVM_CAP_MAX_IRQ_ROUTES
#define KVM_CAP_MAX_IRQ_ROUTES 252
#define KVM_CAP_GSI_ROUTING_PARTIAL 253
#define KVM_IRQ_ROUTING_NONE 6
#define KVM_GSI_ROUTING_PARTIAL (1U << 0)
#endif

#define MAXGSI 65536
#define MAXFD 4096

static int (*real_ioctl)(int, unsigned long, ...);
static ino_t dev_ino;
static dev_t dev_dev;
static char fdkind[MAXFD];	/* 'v': VM, 'c': vCPU */
static FILE *logf;
static int partial, ebusy_at, inject_errno, npartial, ncalls;
static unsigned int limit = 4096, ceiling;

/* The routing table: the routes of each GSI (at most 2, irqchip pins). */
static struct kvm_irq_routing_entry routes[MAXGSI][2];
static unsigned char nroutes[MAXGSI];
static unsigned int total;

/* FNV-1a of the table: one line per successful update, to compare runs. */
static void log_state(void)
{
	unsigned long long h = 1469598103934665603ull;
	unsigned int g, i;

	if (!logf)
		return;
	for (g = 0; g < MAXGSI; g++)
		for (i = 0; i < nroutes[g]; i++) {
			const unsigned char *p = (const void *)&routes[g][i];
			size_t k;

			for (k = 0; k < sizeof(routes[g][i]); k++)
				h = (h ^ p[k]) * 1099511628211ull;
		}
	fprintf(logf, "state %016llx routes %u\n", h, total);
}

static void dump(void)
{
	unsigned int g, i;

	if (!logf)
		return;
	fprintf(logf, "final: %u routes, %d calls\n", total, ncalls);
	for (g = 0; g < MAXGSI; g++)
		for (i = 0; i < nroutes[g]; i++) {
			struct kvm_irq_routing_entry *e = &routes[g][i];

			fprintf(logf, "route %u type %u flags %u %08x %08x %08x %08x\n",
				g, e->type, e->flags, e->u.pad[0], e->u.pad[1],
				e->u.pad[2], e->u.pad[3]);
		}
	fflush(logf);
}

__attribute__((constructor)) static void init(void)
{
	const char *p = getenv("FAKEKVM_DEV");
	struct stat st;

	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
	if (!p || stat(p, &st))
		return;
	dev_ino = st.st_ino;
	dev_dev = st.st_dev;
	p = getenv("FAKEKVM_LOG");
	logf = p ? fopen(p, "w") : NULL;
	if (logf)
		setvbuf(logf, NULL, _IOLBF, 0);
	partial = getenv("FAKEKVM_PARTIAL") && atoi(getenv("FAKEKVM_PARTIAL"));
	ceiling = getenv("FAKEKVM_MAX") ? atoi(getenv("FAKEKVM_MAX")) : 0;
	ebusy_at = getenv("FAKEKVM_EBUSY") ? atoi(getenv("FAKEKVM_EBUSY")) : 0;
	inject_errno = getenv("FAKEKVM_ERRNO") ? atoi(getenv("FAKEKVM_ERRNO")) : EBUSY;
	atexit(dump);
}

static int fail(int e)
{
	errno = e;
	return -1;
}

static int check_extension(long cap, int vm)
{
	switch (cap) {
	case KVM_CAP_USER_MEMORY: case KVM_CAP_DESTROY_MEMORY_REGION_WORKS:
	case KVM_CAP_JOIN_MEMORY_REGIONS_WORKS: case KVM_CAP_INTERNAL_ERROR_DATA:
	case KVM_CAP_IOEVENTFD: case KVM_CAP_IOEVENTFD_ANY_LENGTH:
	case KVM_CAP_IRQFD: case KVM_CAP_IRQCHIP: case KVM_CAP_SIGNAL_MSI:
	case KVM_CAP_SET_TSS_ADDR: case KVM_CAP_EXT_CPUID: case KVM_CAP_MP_STATE:
	case KVM_CAP_SET_IDENTITY_MAP_ADDR: case KVM_CAP_PIT2:
	case KVM_CAP_PIT_STATE2: case KVM_CAP_READONLY_MEM:
	case KVM_CAP_ADJUST_CLOCK: case KVM_CAP_VCPU_EVENTS:
	case KVM_CAP_DEBUGREGS: case KVM_CAP_XSAVE: case KVM_CAP_XCRS:
	case KVM_CAP_SYNC_MMU: case KVM_CAP_USER_NMI: case KVM_CAP_SET_BOOT_CPU_ID:
	case KVM_CAP_IMMEDIATE_EXIT: case KVM_CAP_CHECK_EXTENSION_VM:
	case KVM_CAP_SPLIT_IRQCHIP:
	case KVM_CAP_X86_ROBUST_SINGLESTEP: case KVM_CAP_GET_TSC_KHZ:
		return 1;
	case KVM_CAP_NR_VCPUS: case KVM_CAP_MAX_VCPUS:
		return 8;
	case KVM_CAP_MCE:
		return 10;
	case KVM_CAP_NR_MEMSLOTS:
		return 32;
	case KVM_CAP_IRQ_ROUTING:
		return vm ? limit : 4096;
	case KVM_CAP_MAX_IRQ_ROUTES:
		return ceiling;
	case KVM_CAP_GSI_ROUTING_PARTIAL:
		return partial ? KVM_GSI_ROUTING_PARTIAL : 0;
	}
	return 0;
}

static int set_gsi_routing(struct kvm_irq_routing *r)
{
	unsigned int i, n = r->nr, newtotal;
	struct kvm_irq_routing_entry *e = r->entries;

	ncalls++;
	if (logf) {
		unsigned int none = 0;

		for (i = 0; i < n; i++)
			none += e[i].type == KVM_IRQ_ROUTING_NONE;
		fprintf(logf, "SET_GSI_ROUTING flags %u nr %u none %u\n", r->flags, n, none);
	}
	if (r->flags & ~(partial ? KVM_GSI_ROUTING_PARTIAL : 0))
		return fail(EINVAL);
	if (n > limit)
		return fail(EINVAL);
	if (!r->flags) {
		static unsigned char cnt[MAXGSI];

		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++) {
			if (e[i].gsi >= limit || e[i].type == KVM_IRQ_ROUTING_NONE ||
			    cnt[e[i].gsi] == 2)
				return fail(EINVAL);
			cnt[e[i].gsi]++;
		}
		memset(nroutes, 0, sizeof(nroutes));
		for (i = 0; i < n; i++)
			routes[e[i].gsi][nroutes[e[i].gsi]++] = e[i];
		total = n;
		log_state();
		return 0;
	}
	newtotal = total;
	for (i = 0; i < n; i++) {
		if (e[i].gsi >= limit || (i && e[i].gsi <= e[i - 1].gsi))
			return fail(EINVAL);
		if (e[i].type == KVM_IRQ_ROUTING_NONE) {
			if (e[i].flags || e[i].pad || e[i].u.pad[0] || e[i].u.pad[1] ||
			    e[i].u.pad[2] || e[i].u.pad[3])
				return fail(EINVAL);
		} else if (e[i].type != KVM_IRQ_ROUTING_MSI) {
			return fail(EINVAL);
		}
	}
	for (i = 0; i < n; i++) {
		unsigned int g = e[i].gsi;

		if (nroutes[g] > 1 || (nroutes[g] && routes[g][0].type != KVM_IRQ_ROUTING_MSI))
			return fail(EBUSY);
		newtotal += (e[i].type != KVM_IRQ_ROUTING_NONE) - nroutes[g];
	}
	if (newtotal > limit)
		return fail(ENOSPC);
	if (++npartial == ebusy_at) {
		if (logf && inject_errno == EBUSY)
			fprintf(logf, "injected EBUSY\n");
		else if (logf)
			fprintf(logf, "injected errno %d\n", inject_errno);
		return fail(inject_errno);
	}
	for (i = 0; i < n; i++) {
		unsigned int g = e[i].gsi;

		nroutes[g] = e[i].type != KVM_IRQ_ROUTING_NONE;
		routes[g][0] = e[i];
	}
	total = newtotal;
	log_state();
	return 0;
}

static void host_cpuid(struct kvm_cpuid2 *c)
{
	static const unsigned int bases[] = { 0, 0x80000000u };
	unsigned int base, max, l, sub, a, b, cc, d, n = 0, k;

	for (k = 0; k < 2; k++) {
		base = bases[k];
		__cpuid(base, max, b, cc, d);
		for (l = base; l <= max && n < c->nent; l++) {
			for (sub = 0; sub < ((l == 4 || l == 7 || l == 0xb || l == 0xd) ? 4 : 1) &&
			     n < c->nent; sub++) {
				__cpuid_count(l, sub, a, b, cc, d);
				c->entries[n].function = l;
				c->entries[n].index = sub;
				c->entries[n].flags = (l == 4 || l == 7 || l == 0xb || l == 0xd) ?
					KVM_CPUID_FLAG_SIGNIFCANT_INDEX : 0;
				c->entries[n].eax = a;
				c->entries[n].ebx = b;
				c->entries[n].ecx = cc & ~(1u << 31);	/* no hypervisor bit games */
				c->entries[n].edx = d;
				n++;
			}
		}
	}
	c->nent = n;
}

static int fake(int fd, unsigned long req, void *arg, char kind)
{
	if (logf && getenv("FAKEKVM_TRACE"))
		fprintf(logf, "ioctl %c %#lx\n", kind, req);
	switch (req) {
	case KVM_GET_API_VERSION:
		return KVM_API_VERSION;
	case KVM_CHECK_EXTENSION:
		return check_extension((long)arg, kind == 'v');
	case KVM_CREATE_VM: {
		int vfd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (vfd >= 0 && vfd < MAXFD)
			fdkind[vfd] = 'v';
		return vfd;
	}
	case KVM_GET_VCPU_MMAP_SIZE:
		return 3 * 4096;
	case KVM_CREATE_VCPU: {
		int cfd = memfd_create("fakekvm-vcpu", MFD_CLOEXEC);

		if (cfd < 0 || ftruncate(cfd, 3 * 4096))
			return -1;
		if (cfd < MAXFD)
			fdkind[cfd] = 'c';
		return cfd;
	}
	case KVM_GET_SUPPORTED_CPUID:
		host_cpuid(arg);
		return 0;
	case KVM_GET_MSR_INDEX_LIST: case KVM_GET_MSR_FEATURE_INDEX_LIST:
		((struct kvm_msr_list *)arg)->nmsrs = 0;
		return 0;
	case KVM_GET_MSRS: case KVM_SET_MSRS:
		return ((struct kvm_msrs *)arg)->nmsrs;
	case KVM_ENABLE_CAP: {
		struct kvm_enable_cap *c = arg;

		if (logf)
			fprintf(logf, "ENABLE_CAP %u %llu\n", c->cap,
				(unsigned long long)c->args[0]);
		if (c->cap == KVM_CAP_MAX_IRQ_ROUTES) {
			if (!ceiling || c->flags || c->args[0] < limit || c->args[0] > ceiling)
				return fail(EINVAL);
			limit = c->args[0];
			return 0;
		}
		if (c->cap == KVM_CAP_SPLIT_IRQCHIP)
			return 0;
		return fail(EINVAL);
	}
	case KVM_SET_GSI_ROUTING:
		return set_gsi_routing(arg);
	case KVM_RUN:
		return fail(EINTR);
	case KVM_SET_TSS_ADDR: case KVM_SET_IDENTITY_MAP_ADDR:
	case KVM_CREATE_IRQCHIP: case KVM_CREATE_PIT2:
	case KVM_SET_USER_MEMORY_REGION: case KVM_SET_USER_MEMORY_REGION2:
	case KVM_IRQFD: case KVM_IOEVENTFD: case KVM_SET_CLOCK: case KVM_GET_CLOCK:
	case KVM_SET_CPUID2: case KVM_SET_SIGNAL_MASK: case KVM_IRQ_LINE_STATUS:
	case KVM_IRQ_LINE: case KVM_SET_BOOT_CPU_ID:
		return 0;
	case KVM_SIGNAL_MSI:
		return 1;
	}
	/* Anything else (vCPU state, PIT, irqchip state): zeros, success */
	if (logf && kind == 's')
		fprintf(logf, "system ioctl %#lx: 0\n", req);
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	struct stat st;
	va_list ap;
	void *arg;
	char kind = 0;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd < MAXFD && fdkind[fd])
		kind = fdkind[fd];
	else if (dev_ino && !fstat(fd, &st) && st.st_ino == dev_ino && st.st_dev == dev_dev)
		kind = 's';
	if (!kind || (_IOC_TYPE(req) != KVMIO))
		return real_ioctl(fd, req, arg);
	return fake(fd, req, arg, kind);
}
