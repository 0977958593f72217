#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Drive qemu-system-x86_64 under fakekvm.so through qtest: a virtio-blk-pci
device with an iothread and Q queues, set up as a guest driver would, then
its MSI-X vectors unmasked one at a time, some retargeted, then the device
reset.  Every route change goes through kvm_irqchip_commit_routes(), whose
KVM_SET_GSI_ROUTING calls fakekvm.so logs.

  msix-routes.py QEMU FAKEKVM_SO LOG [QUEUES] [-- EXTRA_ACCEL_PROPS]
"""
import os, socket, subprocess, sys, tempfile

qemu, so, log = sys.argv[1:4]
queues = int(sys.argv[4]) if len(sys.argv) > 4 else 16
accel_extra = sys.argv[5] if len(sys.argv) > 5 else ""

tmp = tempfile.mkdtemp(prefix="msix-routes.")
dev = os.path.join(tmp, "kvm")
open(dev, "w").close()
disk = os.path.join(tmp, "disk")
with open(disk, "wb") as f:
    f.truncate(1 << 20)
sock_path = os.path.join(tmp, "qtest.sock")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
srv.listen(1)

env = dict(os.environ, LD_PRELOAD=so, FAKEKVM_DEV=dev, FAKEKVM_LOG=log)
args = [qemu, "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
        "-M", "q35", "-accel", "kvm,device=" + dev + accel_extra,
        "-S", "-nodefaults", "-nographic", "-vga", "none", "-m", "256",
        "-monitor", "none", "-serial", "none",
        "-qtest", "unix:" + sock_path,
        "-object", "iothread,id=io0",
        "-drive", "if=none,id=d0,format=raw,file=" + disk,
        "-device", "virtio-blk-pci,drive=d0,iothread=io0,addr=03.0,"
                   "disable-legacy=on,num-queues=%d" % queues]
proc = subprocess.Popen(args, env=env)
srv.settimeout(60)
conn, _ = srv.accept()
rf = conn.makefile("r")


def cmd(line):
    conn.sendall((line + "\n").encode())
    while True:
        r = rf.readline()
        if not r:
            sys.exit("qtest: QEMU went away after: " + line)
        if r.startswith("IRQ"):
            continue
        if not r.startswith("OK"):
            sys.exit("qtest: %s -> %s" % (line, r.strip()))
        parts = r.split()
        return int(parts[1], 16) if len(parts) > 1 else None


BDF = 3 << 11


def cfg_addr(reg):
    return 0x80000000 | BDF | (reg & 0xfc)


def cfg_read(reg, size=4):
    cmd("outl 0xcf8 0x%x" % cfg_addr(reg))
    v = cmd("inl 0xcfc")
    sh = (reg & 3) * 8
    return (v >> sh) & ((1 << (8 * size)) - 1)


def cfg_write32(reg, val):
    cmd("outl 0xcf8 0x%x" % cfg_addr(reg))
    cmd("outl 0xcfc 0x%x" % val)


def cfg_write16(reg, val):
    cmd("outl 0xcf8 0x%x" % cfg_addr(reg))
    cmd("outw 0x%x 0x%x" % (0xcfc + (reg & 2), val))


assert cfg_read(0, 2) == 0x1af4, "no virtio device at 00:03.0"
# Capabilities: MSI-X and the virtio common configuration.
msix = common = None
cap = cfg_read(0x34, 1)
while cap:
    cid = cfg_read(cap, 1)
    if cid == 0x11:
        msix = cap
    elif cid == 0x09 and cfg_read(cap + 3, 1) == 1:
        common = (cfg_read(cap + 4, 1), cfg_read(cap + 8))
    cap = cfg_read(cap + 1, 1)
assert msix and common, "capabilities not found"
table = cfg_read(msix + 4)
tbir, toff = table & 7, table & ~7
nvec = (cfg_read(msix + 2, 2) & 0x7ff) + 1

# BARs: the MSI-X one and the virtio one (64-bit).
bars = {}
base = 0xe0000000
for bir in sorted({tbir, common[0]}):
    bars[bir] = base
    cfg_write32(0x10 + 4 * bir, base)
    if cfg_read(0x10 + 4 * bir) & 4:
        cfg_write32(0x14 + 4 * bir, 0)
    base += 0x1000000
cfg_write16(4, cfg_read(4, 2) | 6)          # memory, bus master
cfg_write16(msix + 2, 0x8000)                # MSI-X on, every vector masked

cc = bars[common[0]] + common[1]
tbl = bars[tbir] + toff


def w(size, off, val):
    cmd("write%s 0x%x 0x%x" % (size, cc + off, val))


w("b", 0x14, 0)                      # reset
w("b", 0x14, 1)
w("b", 0x14, 3)                      # ACKNOWLEDGE | DRIVER
w("l", 0x08, 1)
w("l", 0x0c, 1)                      # VIRTIO_F_VERSION_1
w("l", 0x08, 0)
w("l", 0x0c, 0)
w("b", 0x14, 0xb)                    # | FEATURES_OK
w("w", 0x10, 0)                      # config vector 0
nq = cmd("readw 0x%x" % (cc + 0x12))
for q in range(nq):
    w("w", 0x16, q)
    w("w", 0x1a, q + 1)
    ring = 0x100000 + q * 0x10000
    w("q", 0x20, ring)
    w("q", 0x28, ring + 0x4000)
    w("q", 0x30, ring + 0x8000)
    w("w", 0x1c, 1)
print("msix-routes: %d queues, %d vectors" % (nq, nvec), flush=True)
w("b", 0x14, 0xf)                    # | DRIVER_OK: iothread, irqfds


def vec(i, dest, vector, masked):
    e = tbl + 16 * i
    cmd("writel 0x%x 0x%x" % (e, 0xfee00000 | (dest << 12)))
    cmd("writel 0x%x 0x0" % (e + 4))
    cmd("writel 0x%x 0x%x" % (e + 8, vector))
    cmd("writel 0x%x 0x%x" % (e + 12, 1 if masked else 0))


# Unmask the vectors one by one, as a guest enabling them does.
for i in range(nq + 1):
    vec(i, 0, 0x30 + i, False)
# Retarget every other vector: mask, rewrite, unmask.
for i in range(1, nq + 1, 2):
    vec(i, 0, 0x30 + i, True)
    vec(i, 1, 0x80 + i, True)
    vec(i, 1, 0x80 + i, False)
w("b", 0x14, 0)                      # reset: the routes are released


def setup(vector_of):
    w("b", 0x14, 1)
    w("b", 0x14, 3)
    w("l", 0x08, 1)
    w("l", 0x0c, 1)
    w("l", 0x08, 0)
    w("l", 0x0c, 0)
    w("b", 0x14, 0xb)
    w("w", 0x10, 0)
    for q in range(nq):
        w("w", 0x16, q)
        w("w", 0x1a, vector_of(q))
        ring = 0x100000 + q * 0x10000
        w("q", 0x20, ring)
        w("q", 0x28, ring + 0x4000)
        w("q", 0x30, ring + 0x8000)
        w("w", 0x1c, 1)
    w("b", 0x14, 0xf)


# Again with every queue on vector 1: fewer routes than before, so the
# commits after it release GSIs (KVM_IRQ_ROUTING_NONE in a partial one).
setup(lambda q: 1)
vec(1, 0, 0x41, True)
vec(1, 0, 0x41, False)
w("b", 0x14, 0)
# And once more with a vector per queue, retargeted once.
setup(lambda q: q + 1)
for i in range(1, nq + 1):
    vec(i, 1, 0x50 + i, True)
    vec(i, 1, 0x50 + i, False)
w("b", 0x14, 0)
cmd("readb 0x%x" % (cc + 0x14))
conn.close()
proc.terminate()
proc.wait(30)
print("msix-routes: done", flush=True)
