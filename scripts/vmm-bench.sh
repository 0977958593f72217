#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# KVM_SET_GSI_ROUTING as a real VMM uses it, nested (vmm/qemu/PLAN-l2.md):
# L1 is one of our kernels booted under QEMU TCG by scripts/boot.sh
# (-M q35 -cpu EPYC,+svm); inside it, the QEMU we build (stock or with
# vmm/qemu/) runs an L2 Linux with -accel kvm on L1's nested SVM.  L2's
# tests/vmm/msix-enable drives virtio-blk-pci devices (an iothread, so every
# queue vector is an irqfd with its own MSI route) and enables their MSI-X
# vectors one at a time; tests/vmm/routeshim.so, LD_PRELOADed into QEMU,
# counts the KVM_SET_GSI_ROUTING calls and the time inside them.
#
# Usage: scripts/vmm-bench.sh [CELL...]
#   CELL = KERNEL:QEMU:N[:MAXROUTES]
#     KERNEL     rfc (build/obj-rfc: v4 + RFC), patched (build/obj-patched: v4)
#                or base (build/obj-base: 7.3.4), all configs/kvm.config
#     QEMU       stock or patched (build/qemu/{stock,patched}/obj)
#     N          queue vectors in L2: virtio-blk-pci devices of at most 1024
#                queues (num-queues=Q, vectors=Q+1), one iothread
#     MAXROUTES  -accel kvm,max-irq-routes=MAXROUTES (patched QEMU only)
#   Default cells: rfc:stock:64 rfc:patched:64 rfc:stock:512 rfc:patched:512
#     rfc:stock:2048 rfc:patched:2048 patched:stock:64 patched:stock:512
#     patched:stock:2048.  One L1 boot per kernel runs that kernel's cells
#     in order.
#
# Builds what it needs: the L2 kernel (configs/l2.config into
# build/vmm/obj-l2, with scripts/build-kernel.sh on build/src-base), the
# shim and msix-enable, the L2 and L1 initramfs.  The L1 kernels and the
# QEMU binaries are copied into build/vmm/ first (other jobs rebuild their
# objdirs); a copy already there is used as it is unless VMM_REFRESH=1.
# Writes results/vmm-bench.md; consoles in build/vmm/console-KERNEL.log.
# Only the kernels and QEMUs the cells name are needed.  VMM_DIR (default
# build/vmm) holds the copies, the initramfs and the consoles: make check
# and make mutants-qemu use their own, so that they never replace what
# make vmm-bench measures; VMM_OBJ_KERNEL (VMM_OBJ_rfc, ...) names another
# objdir for that kernel (make check: the RFC debug kernel).
#
# Environment: VMM_REPORT_ONLY=1 (no boots: the report of the consoles there),
# VMM_REPS (iterations: each kernel's cell list runs that many
# times in one L1 boot, interleaved; the report gives medians, default 3),
# VMM_OUT (default results/vmm-bench.md), VMM_TIMEOUT (L1 boot
# limit, seconds, default 3600), VMM_L2_MEM (default 256), QEMU_MEM (L1,
# default 3G), VMM_IO=0 (skip the delivery check), ICOUNT=1 and QEMU_SMP
# (as boot.sh), VMM_CONSOLE (consoles' name prefix, default console),
# VMM_QEMU_PATCHED (the "patched" QEMU binary to copy in, with
# VMM_REFRESH=1), VMM_CELL_TIMEOUT (seconds of L1 time before L2's QEMU is killed, default
# 300), VMM_TRIES (attempts of a cell whose QEMU was killed, default 2;
# each attempt is reported), VMM_NOTE (a paragraph for the report's
# introduction).
set -euo pipefail
. "$(dirname "$0")/common.sh"

V=${VMM_DIR:-$BUILD73/vmm}
OUT=${VMM_OUT:-$TOP/results/vmm-bench.md}
L1_TMO=${VMM_TIMEOUT:-3600}
L2_MEM=${VMM_L2_MEM:-256}
export QEMU_MEM=${QEMU_MEM:-3G}
cells=("$@")
[ ${#cells[@]} -gt 0 ] || cells=(rfc:stock:64 rfc:patched:64 rfc:stock:512 rfc:patched:512
	rfc:stock:2048 rfc:patched:2048 patched:stock:64 patched:stock:512 patched:stock:2048)

need busybox busybox-static
need cpio cpio
need gcc gcc
mkdir -p "$V/bin" "$V/kernels" "$V/qemu" "$(dirname "$OUT")"

# --- inputs: copies of the L1 kernels and the QEMU binaries -----------------
copy_in() {	# SRC DST
	if [ ! -f "$2" ] || [ "${VMM_REFRESH:-0}" = 1 ]; then
		[ -f "$1" ] || die "$1 not found (make kernels / make qemu, or the RFC build)"
		cp "$1" "$2.tmp" && mv "$2.tmp" "$2"
	fi
}
for k in $(printf '%s\n' "${cells[@]}" | cut -d: -f1 | sort -u); do
	case $k in base|rfc|patched) ;; *) die "kernel $k: must be base, rfc or patched" ;; esac
	ovar=VMM_OBJ_$k
	obj=${!ovar:-$BUILD73/obj-$k}
	copy_in "$obj/arch/x86/boot/bzImage" "$V/kernels/bzImage-$k"
	copy_in "$obj/.config" "$V/kernels/config-$k"
done
for q in $(printf '%s\n' "${cells[@]}" | cut -d: -f2 | sort -u); do
	case $q in stock|patched) ;; *) die "QEMU $q: must be stock or patched" ;; esac
	src=$BUILD73/qemu/$q/obj/qemu-system-x86_64
	[ "$q" = patched ] && src=${VMM_QEMU_PATCHED:-$src}
	copy_in "$src" "$V/qemu/qemu-$q"
done

# --- L2 kernel ---------------------------------------------------------------
# One L2 kernel for every VMM_DIR.
l2obj=$BUILD73/vmm/obj-l2
l2bz=$l2obj/arch/x86/boot/bzImage
if [ ! -f "$l2bz" ] || [ "${VMM_REBUILD_L2:-0}" = 1 ]; then
	"$TOP/scripts/build-kernel.sh" "$SRC_BASE" "$l2obj" "$TOP/configs/l2.config" >/dev/null
fi

# --- userspace ---------------------------------------------------------------
gcc -O2 -Wall -Wextra -static -o "$V/bin/msix-enable" "$TOP/tests/vmm/msix-enable.c"
gcc -O2 -Wall -Wextra -shared -fPIC -o "$V/bin/routeshim.so" "$TOP/tests/vmm/routeshim.c" -ldl

cpio_out() {	# STAGE OUT
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet --reproducible -o -H newc -R 0:0) | gzip -6 -n >"$2.tmp"
	mv "$2.tmp" "$2"
}
busybox_stage() {	# STAGE
	mkdir -p "$1"/{bin,sbin,dev,proc,sys,tmp,etc}
	cp /bin/busybox "$1/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -sf busybox "$1/bin/$a"
	done
	mknod -m 600 "$1/dev/console" c 5 1
}

# --- L2 initramfs: bind the virtio devices to vfio-pci, run msix-enable -----
stage=$(mktemp -d "$V/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT
busybox_stage "$stage"
cp "$V/bin/msix-enable" "$stage/bin/msix-enable"
cat >"$stage/init" <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
read up idle </proc/uptime
echo "l2-init: up ${up}s"
io=
grep -q 'vmm.io=0' /proc/cmdline && io=-n
devs=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor)" = 0x1af4 ] || continue
	b=${d##*/}
	echo vfio-pci >$d/driver_override
	echo $b >/sys/bus/pci/drivers_probe
	devs="$devs $b"
done
echo "l2-init: devices$devs"
/bin/msix-enable $io $devs
echo "l2-init: msix-enable exit status $?"
reboot -f
EOF
chmod +x "$stage/init"
cpio_out "$stage" "$V/l2-initrd.gz"
rm -rf "$stage"

# --- L1 initramfs: QEMU, its libraries and firmware, L2, the cell runner ----
stage=$(mktemp -d "$V/stage.XXXXXX")
busybox_stage "$stage"
mkdir -p "$stage/vmm/share" "$stage/root"
qemus=()
for q in stock patched; do
	[ -f "$V/qemu/qemu-$q" ] && qemus+=("$V/qemu/qemu-$q")
done
cp "${qemus[@]}" "$V/bin/routeshim.so" "$stage/vmm/"
cp "$l2bz" "$stage/vmm/l2-bzImage"
cp "$V/l2-initrd.gz" "$stage/vmm/l2-initrd.gz"
for f in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin \
	 /usr/share/qemu/kvmvapic.bin; do
	[ -f "$f" ] || die "$f not found (Debian packages seabios, qemu-system-x86)"
	cp "$f" "$stage/vmm/share/"
done
for lib in $(ldd "${qemus[@]}" "$V/bin/routeshim.so" |
	     awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $1 !~ /:$/ { print $1 }' | sort -u); do
	mkdir -p "$stage$(dirname "$lib")"
	cp -L "$lib" "$stage$lib"
done
cat >"$stage/init" <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t cgroup2 cgroup2 /sys/fs/cgroup
# A non-root cgroup with memory accounting, as the other benches (a VMM
# under systemd).
mkdir /sys/fs/cgroup/vmm && echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
	echo $$ >/sys/fs/cgroup/vmm/cgroup.procs
echo "# vmm: kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs, /dev/kvm $([ -c /dev/kvm ] && echo present || echo missing), kvm_amd nested=$(cat /sys/module/kvm_amd/parameters/nested 2>/dev/null), kvm.max_irq_routes=$(cat /sys/module/kvm/parameters/max_irq_routes 2>/dev/null || echo none)"
ulimit -n 65536
cells= io=1 l2mem=256 l2cpu= celltmo=300 tries=2
for arg in $(cat /proc/cmdline); do
	case $arg in
	vmm.celltmo=*) celltmo=${arg#vmm.celltmo=} ;;
	vmm.tries=*) tries=${arg#vmm.tries=} ;;
	vmm.cells=*) cells=$(echo ${arg#vmm.cells=} | tr , ' ') ;;
	vmm.io=*) io=${arg#vmm.io=} ;;
	vmm.l2mem=*) l2mem=${arg#vmm.l2mem=} ;;
	vmm.l2cpu=*) l2cpu=${arg#vmm.l2cpu=} ;;
	esac
done
# A heartbeat, to tell a hung L1 from a hung L2 in the console.
( while sleep 20; do read t idle </proc/uptime; echo "# vmm: L1 alive at $t"; done ) &
k=0
for cell in $cells; do
    try=0
    while :; do
	k=$((k + 1)) try=$((try + 1))
	mode=${cell%%:*}; rest=${cell#*:}
	n=${rest%%:*}; maxr=
	[ "$rest" != "$n" ] && maxr=${rest#*:}
	accel=kvm
	[ -n "$maxr" ] && accel="kvm,max-irq-routes=$maxr"
	devargs= left=$n d=0
	while [ $left -gt 0 ]; do
		q=$left; [ $q -gt 1024 ] && q=1024
		truncate -s 1M /tmp/disk$d
		devargs="$devargs -drive if=none,id=d$d,file=/tmp/disk$d,format=raw"
		devargs="$devargs -device virtio-blk-pci,drive=d$d,iothread=io0,disable-legacy=on,num-queues=$q,vectors=$((q + 1)),addr=$((d + 3))"
		left=$((left - q)); d=$((d + 1))
	done
	echo "# vmm: cell $k: qemu=$mode vectors=$n devices=$d accel=$accel"
	rm -f /tmp/shim.txt /tmp/shim.trace
	read t0 idle </proc/uptime
	echo "# vmm: cell $k: L1 uptime $t0 at QEMU start"
	( ROUTESHIM_OUT=/tmp/shim.txt ROUTESHIM_TRACE=/tmp/shim.trace LD_PRELOAD=/vmm/routeshim.so \
	  timeout -s KILL $celltmo /vmm/qemu-$mode -L /vmm/share -accel $accel -M q35 ${l2cpu:+-cpu $l2cpu} -smp 1 -m $l2mem \
		-nographic -nodefaults -no-reboot -serial stdio \
		-object iothread,id=io0 $devargs \
		-kernel /vmm/l2-bzImage -initrd /vmm/l2-initrd.gz \
		-append "console=ttyS0 panic=-1 reboot=t vfio.enable_unsafe_noiommu_mode=1 vmm.io=$io" \
		</dev/null 2>&1; echo "qemu exit status $?" ) |
	while IFS= read -r line; do
		read t idle </proc/uptime
		echo "# l2 $t: $line" | tr -d '\r'
	done
	read t1 idle </proc/uptime
	echo "# vmm: cell $k: L1 uptime $t1 at QEMU exit"
	[ -f /tmp/shim.txt ] && sed "s/^/# vmm: cell $k: /" /tmp/shim.txt
	# The calls by phase: a vCPU exit with 8 or more calls is a DRIVER_OK
	# (the routes added one by one), a vCPU exit with fewer is a vector
	# being unmasked; calls outside vCPU threads (run_seq 0) are other.
	[ -f /tmp/shim.trace ] && awk -v k=$k '
		/^#/ { next }
		{ key = $8 ":" $9; cnt[key]++; us[key] += $3 / 1000; ent[key] += $4; run[key] = $9;
		  if ($5 == 1) part[key]++ }
		END {
			for (g in cnt) {
				ph = run[g] == 0 ? "other" : (cnt[g] >= 8 ? "driver_ok" : "unmask")
				C[ph] += cnt[g]; U[ph] += us[g]; E[ph] += ent[g]; P[ph] += part[g]; X[ph]++
			}
			for (ph in C)
				printf "# vmm: cell %d: phase %s exits=%d calls=%d partial=%d us=%.1f entries=%d\n",
					k, ph, X[ph], C[ph], P[ph], U[ph], E[ph]
		}' /tmp/shim.trace
	rm -f /tmp/disk*
	# L2 sometimes stops in its early boot under nested TCG (L1 alive):
	# that attempt is reported as a cell that did not finish, and the
	# cell runs again, at most vmm.tries times in all.
	if awk -v a=$t0 -v b=$t1 -v m=$celltmo 'BEGIN { exit !(b - a < m) }'; then
		break
	fi
	echo "# vmm: cell $k: killed after ${celltmo}s of L1 time (attempt $try of $tries)"
	[ $try -lt $tries ] || break
    done
done
echo "irqroute-tests: done"
sync
reboot -f
sleep 10
EOF
chmod +x "$stage/init"
cpio_out "$stage" "$V/l1-initrd.gz"
rm -rf "$stage"
trap - EXIT
log "initramfs: $V/l1-initrd.gz ($(du -k "$V/l1-initrd.gz" | cut -f1) KiB), L2 $V/l2-initrd.gz"
[ "${VMM_BUILD_ONLY:-0}" = 1 ] && exit 0

# --- boot each kernel with its cells ----------------------------------------
declare -A kcells=()
korder=()
for c in "${cells[@]}"; do
	IFS=: read -r kern mode n maxr <<<"$c"
	case $kern in base|rfc|patched) ;; *) die "cell $c: kernel must be base, rfc or patched" ;; esac
	case $mode in stock|patched) ;; *) die "cell $c: QEMU must be stock or patched" ;; esac
	[[ $n =~ ^[0-9]+$ ]] || die "cell $c: N must be a number"
	[ -z "${kcells[$kern]:-}" ] && korder+=("$kern")
	kcells[$kern]="${kcells[$kern]:+${kcells[$kern]},}$mode:$n${maxr:+:$maxr}"
done
REPS=${VMM_REPS:-3}
[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "VMM_REPS must be a positive number"
for kern in "${korder[@]}"; do
	one=${kcells[$kern]} all=$one
	for ((r = 1; r < REPS; r++)); do all=$all,$one; done
	kcells[$kern]=$all
done
for kern in "${korder[@]}"; do
	con=$V/${VMM_CONSOLE:-console}-$kern.log
	[ "${VMM_REPORT_ONLY:-0}" = 1 ] && continue
	log "L1 $kern: cells ${kcells[$kern]} (console: $con)"
	APPEND="vmm.cells=${kcells[$kern]} vmm.io=${VMM_IO:-1} vmm.l2mem=$L2_MEM vmm.celltmo=${VMM_CELL_TIMEOUT:-300} vmm.tries=${VMM_TRIES:-2}${VMM_L2_CPU:+ vmm.l2cpu=$VMM_L2_CPU}" \
		"$TOP/scripts/boot.sh" "$V/kernels/bzImage-$kern" "$V/l1-initrd.gz" "$con" "$L1_TMO" ||
		log "L1 $kern: boot.sh failed; the report takes what the console has"
	"$TOP/scripts/console-badness.sh" "$con" >/dev/null 2>&1 ||
		log "L1 $kern: console-badness.sh flags $con"
done

# --- report ----------------------------------------------------------------
L2_MEM=$L2_MEM CON=${VMM_CONSOLE:-console} python3 - "$OUT" "$V" "${korder[@]}" <<'EOF'
import re, sys, os, hashlib
out, v, kernels = sys.argv[1], sys.argv[2], sys.argv[3:]
desc = {"base": "7.3.4 (build/obj-base)", "rfc": "7.3.4 + patches/ (v4) + rfc/large-tables (build/obj-rfc)",
        "patched": "7.3.4 + patches/ (v4) (build/obj-patched)"}
rows = []
notes = []
for kern in kernels:
    con = os.path.join(v, "%s-%s.log" % (os.environ["CON"], kern))
    if not os.path.exists(con):
        continue
    text = open(con, errors="replace").read().replace("\r", "")
    m = re.search(r"# vmm: kernel (\S+), (\d+) CPUs, /dev/kvm (\w+), kvm_amd nested=(\S*), kvm.max_irq_routes=(\S+)", text)
    if m:
        notes.append("- L1 `%s`: %s, uname -r `%s`, %s CPUs, /dev/kvm %s, kvm_amd nested=%s, kvm.max_irq_routes=%s"
                     % (kern, desc.get(kern, kern), m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)))
    cells = {}
    for m in re.finditer(r"# vmm: cell (\d+): (.*)", text):
        c = cells.setdefault(int(m.group(1)), {"kernel": kern})
        s = m.group(2)
        mm = re.match(r"qemu=(\S+) vectors=(\d+) devices=(\d+) accel=(\S+)", s)
        if mm:
            c.update(qemu=mm.group(1), n=int(mm.group(2)), devs=int(mm.group(3)), accel=mm.group(4))
        mm = re.match(r"L1 uptime (\S+) at QEMU (start|exit)", s)
        if mm:
            c["t_" + mm.group(2)] = float(mm.group(1))
        mm = re.match(r"routeshim: exit .*calls=(\d+).* failed=(\d+) total_us=(\S+) max_us=(\S+) entries=(\d+) max_nr=(\d+) full=(\d+) .*partial=(\d+) ", s)
        if mm:
            c.update(calls=int(mm.group(1)), failed=int(mm.group(2)), total_us=float(mm.group(3)),
                     entries=int(mm.group(5)), max_nr=int(mm.group(6)), full=int(mm.group(7)),
                     partial=int(mm.group(8)))
        mm = re.match(r"phase (\S+) exits=(\d+) calls=(\d+) partial=(\d+) us=(\S+) entries=(\d+)", s)
        if mm:
            c["ph_" + mm.group(1)] = (int(mm.group(3)), float(mm.group(5)), int(mm.group(6)))
    # L2 lines belong to the cell printed before them.
    cur = None
    for line in text.splitlines():
        mm = re.match(r"# vmm: cell (\d+):", line)
        if mm:
            cur = cells.get(int(mm.group(1)))
            continue
        if cur is None or not line.startswith("# l2 "):
            continue
        mm = re.match(r"# l2 (\S+): (.*)", line)
        t, s = float(mm.group(1)), mm.group(2)
        if "l2-init: up" in s and "t_init" not in cur:
            cur["t_init"] = t
            cur["l2_up"] = s.split()[-1]
        mm = re.search(r"driver_ok_us=(\d+) unmask_us=(\d+)", s)
        if mm:
            cur["driver_ok_us"], cur["unmask_us"] = int(mm.group(1)), int(mm.group(2))
        mm = re.search(r"delivered=(\d+)/(\d+)", s)
        if mm:
            cur["delivered"] = "%s/%s" % mm.groups()
        mm = re.match(r"qemu exit status (\d+)", s)
        if mm:
            cur["qemu_rc"] = int(mm.group(1))
        mm = re.match(r"l2-init: msix-enable exit status (\d+)", s)
        if mm:
            cur["l2_rc"] = int(mm.group(1))
        if "qemu-system-x86_64:" in s or "qemu-stock:" in s or "qemu-patched:" in s:
            cur.setdefault("errors", []).append(s.strip())
    for k in sorted(cells):
        rows.append(cells[k])

def f(x, fmt="%.1f"):
    return "-" if x is None else (fmt % x if isinstance(x, float) else str(x))

def med(vals):
    vals = sorted(v for v in vals if v is not None)
    if not vals:
        return None
    m = len(vals) // 2
    return float(vals[m]) if len(vals) % 2 else (vals[m - 1] + vals[m]) / 2.0

for c in rows:
    c["boot"] = c["t_init"] - c["t_start"] if "t_init" in c and "t_start" in c else None
    c["per"] = c["unmask_us"] / c["n"] if "unmask_us" in c and c.get("n") else None
    c["dok_calls"], c["dok_us"] = (c["ph_driver_ok"][0], c["ph_driver_ok"][1]) if "ph_driver_ok" in c else (None, None)
    c["um_calls"], c["um_us"] = (c["ph_unmask"][0], c["ph_unmask"][1]) if "ph_unmask" in c else (None, None)
    c["um_us_call"] = c["um_us"] / c["um_calls"] if c["um_calls"] else None
groups = {}
for c in rows:
    key = (c["kernel"], c.get("qemu", "?"), c.get("accel", "?"), c.get("n", 0), c.get("devs", 0))
    groups.setdefault(key, []).append(c)

with open(out, "w") as o:
    o.write("# KVM_SET_GSI_ROUTING from a real VMM, nested (scripts/vmm-bench.sh)\n\n")
    o.write("L1 booted by scripts/boot.sh under QEMU TCG (host's qemu-system-x86_64, -M q35 -cpu EPYC,+svm, "
            "-smp %s, -m %s, %s); inside it QEMU 10.0.13 (stock, or patched "
            "with vmm/qemu/) runs L2 with `-accel kvm -M q35 -smp 1 -m %s` (CPU model: %s) on L1's nested SVM; "
            "L2 = configs/l2.config (build/vmm/obj-l2), its tests/vmm/msix-enable drives the virtio-blk-pci "
            "devices (iothread, disable-legacy=on, num-queues=Q, vectors=Q+1, at most 1024 queues a device) "
            "through vfio-pci no-IOMMU.  Each cell ran `iterations` times in one L1 boot per kernel, the cells "
            "interleaved; the table gives medians.  Times are wall clock of L1 (the shim) and L2 (msix-enable) "
            "under nested TCG, on a shared 2-core machine: not hardware time, and noisy.\n\n" % (
                os.environ.get("QEMU_SMP", "2"), os.environ.get("QEMU_MEM", "3G"),
                "-icount shift=0,sleep=off" if os.environ.get("ICOUNT") == "1" else "no -icount",
                os.environ.get("L2_MEM", "256"), os.environ.get("VMM_L2_CPU") or "QEMU's default, qemu64"))
    if os.environ.get("VMM_NOTE"):
        o.write(os.environ["VMM_NOTE"] + "\n\n")
    o.write("\n".join(notes) + "\n\n")
    o.write("Columns: calls = KVM_SET_GSI_ROUTING calls made by QEMU (whole tables/partial), us in calls = the "
            "CLOCK_MONOTONIC time inside them, entries = the routes they sent, all from tests/vmm/routeshim.so; "
            "DRIVER_OK = the calls made in the vCPU exit of the DRIVER_OK write (QEMU adds a route per queue "
            "vector, one commit each); unmask = the calls made in the exits of MSI-X table writes (one commit per "
            "vector unmasked), and their mean; L2 = msix-enable's own times for the DRIVER_OK write and for "
            "unmasking all vectors one at a time (four MSI-X table writes, so four nested exits, per vector); "
            "delivered = vectors whose read request interrupted L2, over all iterations; L2 boot = L1 time from "
            "QEMU start to L2's /init.\n\n")
    o.write("| L1 kernel | QEMU | accel | vectors | devices | iterations | calls (full/partial) | us in calls | "
            "entries sent | DRIVER_OK calls, us | unmask calls, us | unmask us/call | L2 DRIVER_OK us | "
            "L2 unmask us | L2 us/vector | delivered | L2 boot s |\n")
    o.write("|---|---|---|---:|---:|---:|---|---:|---:|---|---|---:|---:|---:|---:|---|---:|\n")
    for key, cs in groups.items():
        M = lambda k: med([c.get(k) for c in cs])
        calls = M("calls")
        dl = [c.get("delivered") for c in cs]
        if all(dl):
            ok = sum(int(d.split("/")[0]) for d in dl)
            tot = sum(int(d.split("/")[1]) for d in dl)
            deliv = "%d/%d" % (ok, tot)
        else:
            deliv = "%d of %d runs did not finish" % (sum(1 for d in dl if not d), len(dl))
        o.write("| %s | %s | `%s` | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" % (
            key[0], key[1], key[2], key[3], key[4], len(cs),
            "%d (%d/%d)" % (calls, M("full"), M("partial")) if calls is not None else "-",
            f(M("total_us"), "%.0f"), f(M("entries"), "%.0f"),
            "%s, %s" % (f(M("dok_calls"), "%.0f"), f(M("dok_us"), "%.0f")),
            "%s, %s" % (f(M("um_calls"), "%.0f"), f(M("um_us"), "%.0f")),
            f(M("um_us_call")), f(M("driver_ok_us"), "%.0f"), f(M("unmask_us"), "%.0f"), f(M("per")),
            deliv, f(M("boot"))))
    o.write("\nEach iteration (us in calls; DRIVER_OK us; unmask us; L2 unmask us):\n\n")
    for key, cs in groups.items():
        o.write("- %s/%s/%s/%s: %s\n" % (key[0], key[1], key[2], key[3], "; ".join(
            "%s %s %s %s" % (f(c.get("total_us"), "%.0f"), f(c.get("dok_us"), "%.0f"),
                             f(c.get("um_us"), "%.0f"), f(c.get("unmask_us"), "%.0f")) for c in cs)))
    bad = [c for c in rows if c.get("qemu_rc", 1) != 0 or c.get("l2_rc", 1) != 0]
    if bad:
        o.write("\nRuns that failed (QEMU's exit status, msix-enable's; - when it never printed one):\n\n")
        for c in bad:
            o.write("- %s/%s/%s/`%s`: QEMU %s, msix-enable %s\n" % (c["kernel"], c.get("qemu"), c.get("n"),
                    c.get("accel"), c.get("qemu_rc", "-"), c.get("l2_rc", "-")))
    errs = [(c, e) for c in rows for e in c.get("errors", [])]
    if errs:
        o.write("\nQEMU's messages:\n\n")
        seen = set()
        for c, e in errs:
            k = (c["kernel"], c.get("qemu"), c.get("n"), c.get("accel"), e)
            if k in seen:
                continue
            seen.add(k)
            o.write("- %s/%s/%s/`%s`: `%s`\n" % (c["kernel"], c.get("qemu"), c.get("n"), c.get("accel"), e))
print(out)
EOF
log "results: $OUT"
