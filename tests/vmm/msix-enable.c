// SPDX-License-Identifier: GPL-2.0
/*
 * msix-enable: run in the L2 guest of scripts/vmm-bench.sh.  Drives
 * virtio-blk-pci devices (modern, QEMU's) from userspace as a guest driver
 * does at boot, and enables their MSI-X vectors one at a time, so that the
 * VMM (QEMU with an iothread, irqfds) updates one MSI route and commits its
 * routing table once per vector:
 *
 *  1. each device, bound to vfio-pci in no-IOMMU mode, is opened through
 *     /dev/vfio/noiommu-N; VFIO_DEVICE_SET_IRQS enables MSI-X with one
 *     vector (0, the config vector), which Linux programs and unmasks;
 *  2. virtio setup through the BARs (sysfs resourceN mmap): reset,
 *     VERSION_1, one 16-entry split ring per queue in a page whose
 *     physical address comes from /proc/self/pagemap (no IOMMU: DMA
 *     address = physical address), queue_msix_vector = queue + 1;
 *  3. DRIVER_OK (timed): QEMU starts the iothread and takes an MSI route
 *     and an irqfd for every queue vector;
 *  4. the queue vectors, one at a time (timed as a whole): MSI-X table
 *     entry i gets vector 0's message (so that all of them land on the
 *     one Linux interrupt vfio-pci gave us, whatever the number of
 *     vectors: one L2 CPU has about 200 vectors to give), then is
 *     unmasked: the message changed, so QEMU updates the route and
 *     commits;
 *  5. every vector delivers: one read request on each queue in turn,
 *     waiting for vector 0's eventfd and for the used ring (TAP lines).
 *
 * Usage: msix-enable [-n] BDF...   (-n: skip step 5)
 * Prints "msix-enable: ..." summary lines; exit 0 when every vector
 * delivered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define QSIZE 16
#define MAXDEV 16
#define MAXFAILS 8

#define die(...) do { fprintf(stderr, "msix-enable: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

struct dev {
	char bdf[32];
	int cfgfd, vfio, efd;
	volatile uint8_t *bar[6];
	uint64_t barlen[6];
	volatile uint8_t *common, *notify, *table;
	uint32_t notify_mult;
	unsigned int nq, nvec, msix_cap;
	uint8_t *rings;		/* one page per queue */
	uint64_t *ring_pa;
	uint16_t *notify_off, *avail_idx, *used_seen;
};

static struct dev devs[MAXDEV];
static int ndev;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static uint32_t cfg_read(struct dev *d, unsigned int off, int size)
{
	uint32_t v = 0;

	if (pread(d->cfgfd, &v, size, off) != size)
		die("%s: config read at 0x%x: %m", d->bdf, off);
	return v;
}

static void cfg_write(struct dev *d, unsigned int off, uint32_t v, int size)
{
	if (pwrite(d->cfgfd, &v, size, off) != size)
		die("%s: config write at 0x%x: %m", d->bdf, off);
}

static void map_bar(struct dev *d, int bar)
{
	char path[4096];
	int fd;
	off_t len;

	if (d->bar[bar])
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d", d->bdf, bar);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0)
		die("%s: %m", path);
	len = lseek(fd, 0, SEEK_END);
	d->bar[bar] = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (d->bar[bar] == MAP_FAILED)
		die("mmap %s: %m", path);
	d->barlen[bar] = len;
	close(fd);
}

#define W8(p, o, v)  (*(volatile uint8_t *)((p) + (o)) = (v))
#define W16(p, o, v) (*(volatile uint16_t *)((p) + (o)) = (v))
#define W32(p, o, v) (*(volatile uint32_t *)((p) + (o)) = (v))
#define R8(p, o)  (*(volatile uint8_t *)((p) + (o)))
#define R16(p, o) (*(volatile uint16_t *)((p) + (o)))
#define R32(p, o) (*(volatile uint32_t *)((p) + (o)))

static uint64_t phys(void *va)
{
	static int fd = -1;
	uint64_t e;

	if (fd < 0 && (fd = open("/proc/self/pagemap", O_RDONLY)) < 0)
		die("pagemap: %m");
	if (pread(fd, &e, 8, ((uintptr_t)va >> 12) * 8) != 8)
		die("pagemap read: %m");
	if (!(e & (1ull << 63)) || !(e & ((1ull << 55) - 1)))
		die("no PFN for %p (pagemap 0x%llx)", va, (unsigned long long)e);
	return ((e & ((1ull << 55) - 1)) << 12) | ((uintptr_t)va & 0xfff);
}

static void open_vfio(struct dev *d)
{
	char path[4096], link[256];
	ssize_t n;
	int container, group;
	struct vfio_group_status st = { .argsz = sizeof(st) };

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", d->bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		die("%s: %m (is the device bound to vfio-pci?)", path);
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/noiommu-%s", strrchr(link, '/') + 1);
	container = open("/dev/vfio/vfio", O_RDWR);
	if (container < 0)
		die("/dev/vfio/vfio: %m");
	group = open(path, O_RDWR);
	if (group < 0)
		die("%s: %m", path);
	if (ioctl(group, VFIO_GROUP_GET_STATUS, &st) || !(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		die("%s: group not viable", path);
	if (ioctl(group, VFIO_GROUP_SET_CONTAINER, &container))
		die("%s: VFIO_GROUP_SET_CONTAINER: %m", path);
	if (ioctl(container, VFIO_SET_IOMMU, VFIO_NOIOMMU_IOMMU))
		die("VFIO_SET_IOMMU(NOIOMMU): %m");
	d->vfio = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, d->bdf);
	if (d->vfio < 0)
		die("%s: VFIO_GROUP_GET_DEVICE_FD: %m", d->bdf);
}

static void set_irq(struct dev *d, unsigned int vec, int fd)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int)];
	struct vfio_irq_set *s = (void *)buf;

	s->argsz = sizeof(buf);
	s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = VFIO_PCI_MSIX_IRQ_INDEX;
	s->start = vec;
	s->count = 1;
	memcpy(s->data, &fd, sizeof(int));
	if (ioctl(d->vfio, VFIO_DEVICE_SET_IRQS, s))
		die("%s: VFIO_DEVICE_SET_IRQS vector %u: %m", d->bdf, vec);
}

static void setup(struct dev *d)
{
	unsigned int cap, q;
	uint8_t st;
	uint32_t tbl;

	char path[4096];

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", d->bdf);
	d->cfgfd = open(path, O_RDWR);
	if (d->cfgfd < 0)
		die("%s: %m", path);
	open_vfio(d);
	if (cfg_read(d, 0, 2) != 0x1af4)
		die("%s: not a virtio device", d->bdf);

	/* Capabilities: MSI-X, virtio common and notify. */
	for (cap = cfg_read(d, 0x34, 1) & ~3u; cap; cap = cfg_read(d, cap + 1, 1) & ~3u) {
		unsigned int id = cfg_read(d, cap, 1);

		if (id == 0x11) {
			d->msix_cap = cap;
			d->nvec = (cfg_read(d, cap + 2, 2) & 0x7ff) + 1;
			tbl = cfg_read(d, cap + 4, 4);
			map_bar(d, tbl & 7);
			d->table = d->bar[tbl & 7] + (tbl & ~7u);
		} else if (id == 0x09) {
			unsigned int type = cfg_read(d, cap + 3, 1), bar = cfg_read(d, cap + 4, 1);
			uint32_t off = cfg_read(d, cap + 8, 4);

			if (type == 1 || type == 2) {
				map_bar(d, bar);
				if (type == 1)
					d->common = d->bar[bar] + off;
				else {
					d->notify = d->bar[bar] + off;
					d->notify_mult = cfg_read(d, cap + 16, 4);
				}
			}
		}
	}
	if (!d->table || !d->common || !d->notify)
		die("%s: MSI-X or virtio capabilities not found", d->bdf);
	/* Memory space and bus master (for the rings). */
	cfg_write(d, 4, cfg_read(d, 4, 2) | 6, 2);

	/* Reset, VERSION_1, FEATURES_OK. */
	W8(d->common, 0x14, 0);
	while (R8(d->common, 0x14))
		;
	W8(d->common, 0x14, 1);
	W8(d->common, 0x14, 3);
	W32(d->common, 0x08, 1);
	W32(d->common, 0x0c, 1);		/* VIRTIO_F_VERSION_1 (bit 32) */
	W32(d->common, 0x08, 0);
	W32(d->common, 0x0c, 0);
	W8(d->common, 0x14, 0xb);
	if (!(R8(d->common, 0x14) & 8))
		die("%s: FEATURES_OK refused", d->bdf);

	d->nq = R16(d->common, 0x12);
	if (d->nq + 1 > d->nvec)
		die("%s: %u queues but %u MSI-X vectors", d->bdf, d->nq, d->nvec);
	d->rings = mmap(NULL, (size_t)d->nq * 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
	if (d->rings == MAP_FAILED)
		die("ring memory: %m");
	memset(d->rings, 0, (size_t)d->nq * 4096);
	d->ring_pa = calloc(d->nq, sizeof(*d->ring_pa));
	d->notify_off = calloc(d->nq, sizeof(uint16_t));
	d->avail_idx = calloc(d->nq, sizeof(uint16_t));
	d->used_seen = calloc(d->nq, sizeof(uint16_t));

	/*
	 * MSI-X on with vector 0 through vfio-pci (Linux programs and unmasks
	 * entry 0; the others stay masked, as Linux's MSI-X setup leaves them).
	 */
	d->efd = eventfd(0, EFD_NONBLOCK);
	set_irq(d, 0, d->efd);

	W16(d->common, 0x10, 0);		/* config vector 0 */
	if (R16(d->common, 0x10) != 0)
		die("%s: config vector refused", d->bdf);
	for (q = 0; q < d->nq; q++) {
		uint8_t *page = d->rings + (size_t)q * 4096;
		uint64_t pa = phys(page);

		d->ring_pa[q] = pa;
		W16(d->common, 0x16, q);
		W16(d->common, 0x18, QSIZE);
		W16(d->common, 0x1a, q + 1);
		if (R16(d->common, 0x1a) != q + 1)
			die("%s: queue %u: vector %u refused", d->bdf, q, q + 1);
		W32(d->common, 0x20, (uint32_t)pa);		/* desc at 0 */
		W32(d->common, 0x24, pa >> 32);
		W32(d->common, 0x28, (uint32_t)(pa + 512));	/* avail at 512 */
		W32(d->common, 0x2c, (pa + 512) >> 32);
		W32(d->common, 0x30, (uint32_t)(pa + 1024));	/* used at 1024 */
		W32(d->common, 0x34, (pa + 1024) >> 32);
		d->notify_off[q] = R16(d->common, 0x1e);
		W16(d->common, 0x1c, 1);
	}
	st = R8(d->common, 0x14);
	(void)st;
}

static void driver_ok(struct dev *d)
{
	W8(d->common, 0x14, 0xf);
	if (R8(d->common, 0x14) != 0xf)
		die("%s: DRIVER_OK not taken (status 0x%x)", d->bdf, R8(d->common, 0x14));
}

/* Table entry i gets entry 0's message, then is unmasked. */
static void unmask(struct dev *d, unsigned int i)
{
	volatile uint8_t *e = d->table + 16 * i, *e0 = d->table;

	W32(e, 0, R32(e0, 0));
	W32(e, 4, R32(e0, 4));
	W32(e, 8, R32(e0, 8));
	W32(e, 12, 0);
}

/* One read of sector 0 on queue q; wait for the interrupt and the used ring. */
static int roundtrip(struct dev *d, unsigned int q)
{
	uint8_t *page = d->rings + (size_t)q * 4096;
	uint64_t pa = d->ring_pa[q], cnt;
	volatile uint8_t *desc = page, *avail = page + 512, *used = page + 1024;
	volatile uint8_t *hdr = page + 2048, *status = page + 2064;
	uint16_t slot = d->avail_idx[q] % QSIZE;
	struct pollfd p = { .fd = d->efd, .events = POLLIN };
	int i;

	while (read(d->efd, &cnt, 8) == 8)
		;
	*(volatile uint32_t *)hdr = 0;			/* VIRTIO_BLK_T_IN */
	*(volatile uint32_t *)(hdr + 4) = 0;
	*(volatile uint64_t *)(hdr + 8) = 0;		/* sector 0 */
	*status = 0xff;
	/* desc 0: header (read), 1: 512 bytes of data (write), 2: status (write) */
	*(volatile uint64_t *)(desc + 0) = pa + 2048;
	*(volatile uint32_t *)(desc + 8) = 16;
	*(volatile uint16_t *)(desc + 12) = 1;		/* NEXT */
	*(volatile uint16_t *)(desc + 14) = 1;
	*(volatile uint64_t *)(desc + 16) = pa + 3072;
	*(volatile uint32_t *)(desc + 24) = 512;
	*(volatile uint16_t *)(desc + 28) = 1 | 2;	/* NEXT | WRITE */
	*(volatile uint16_t *)(desc + 30) = 2;
	*(volatile uint64_t *)(desc + 32) = pa + 2064;
	*(volatile uint32_t *)(desc + 40) = 1;
	*(volatile uint16_t *)(desc + 44) = 2;		/* WRITE */
	*(volatile uint16_t *)(desc + 46) = 0;
	*(volatile uint16_t *)(avail + 4 + 2 * slot) = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	d->avail_idx[q]++;
	*(volatile uint16_t *)(avail + 2) = d->avail_idx[q];
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	W16(d->notify, (uint32_t)d->notify_off[q] * d->notify_mult, q);

	for (i = 0; i < 50; i++) {
		if (poll(&p, 1, 100) == 1 && read(d->efd, &cnt, 8) == 8 &&
		    *(volatile uint16_t *)(used + 2) == d->avail_idx[q])
			return *status == 0 ? 0 : -2;
	}
	fprintf(stderr, "msix-enable: %s queue %u: no interrupt (used idx %u, want %u, status 0x%x)\n",
		d->bdf, q, *(volatile uint16_t *)(used + 2), d->avail_idx[q], *status);
	return -1;
}

int main(int argc, char **argv)
{
	int io = 1, i, k, fails = 0, n = 0;
	unsigned int q, total = 0;
	double t0, t_ok, t_unmask, t_io;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n")) {
			io = 0;
			continue;
		}
		if (ndev == MAXDEV)
			die("too many devices");
		snprintf(devs[ndev++].bdf, sizeof(devs[0].bdf), "%s", argv[i]);
	}
	if (!ndev)
		die("usage: msix-enable [-n] BDF...");

	for (k = 0; k < ndev; k++) {
		setup(&devs[k]);
		total += devs[k].nq;
		printf("msix-enable: %s: %u queues, %u MSI-X vectors, notify multiplier %u\n",
		       devs[k].bdf, devs[k].nq, devs[k].nvec, devs[k].notify_mult);
	}

	t0 = now_us();
	for (k = 0; k < ndev; k++)
		driver_ok(&devs[k]);
	t_ok = now_us() - t0;

	t0 = now_us();
	for (k = 0; k < ndev; k++)
		for (q = 0; q < devs[k].nq; q++)
			unmask(&devs[k], q + 1);
	/* a read back: every write above has been handled */
	(void)R32(devs[ndev - 1].table, 12);
	t_unmask = now_us() - t0;
	printf("msix-enable: devices=%d vectors=%u driver_ok_us=%.0f unmask_us=%.0f unmask_us_per_vector=%.1f\n",
	       ndev, total, t_ok, t_unmask, t_unmask / total);

	if (!io)
		return 0;
	t0 = now_us();
	for (k = 0; k < ndev; k++)
		for (q = 0; q < devs[k].nq; q++) {
			/*
			 * Each vector that does not deliver costs 5 s: after
			 * MAXFAILS of them, the rest count as failed untried.
			 */
			int rc = fails < MAXFAILS ? roundtrip(&devs[k], q) : -3;

			n++;
			if (rc) {
				fails++;
				printf("not ok %d %s queue %u vector %u%s\n", n, devs[k].bdf, q, q + 1,
				       rc == -2 ? " (bad status)" : rc == -3 ? " (not tried)" : "");
			}
		}
	t_io = now_us() - t0;
	printf("msix-enable: delivered=%d/%u io_s=%.2f\n", n - fails, total, t_io / 1e6);
	return fails ? 1 : 0;
}
