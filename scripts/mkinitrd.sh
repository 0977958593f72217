#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the test initramfs: Debian's static busybox, the test binaries and an
# /init that runs them, prints KTAP results on the console and reboots.
#
# Usage: scripts/mkinitrd.sh OUT.cpio.gz TESTLIST BINDIR
#
# TESTLIST: one test per line, "NAME [@OPTION...] COMMAND [ARGS...]"; COMMAND
# is a file in BINDIR (it may be in a subdirectory: x86/NAME), copied to
# /tests.  Blank lines and lines starting with # are ignored.  NAME must be
# unique and contain no blanks.  Options:
#   @failslab   around this test only, let failslab and fail_page_alloc fail
#               GFP_KERNEL allocations (ignore-gfp-wait=N) without printing
#               (verbose=0), with probability 0: only the test's own
#               /proc/thread-self/fail-nth makes an allocation fail.  The
#               knobs are restored after the test.
#
# Kernel command line knobs read by /init:
#   testtimeout=SECONDS     per-test timeout (default 600)
#   irqroute.only=A[,B...]  run only the named tests
#   irqroute.KEY=VALUE      exported to the tests as IRQROUTE_KEY=VALUE
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -eq 3 ] || die "usage: $0 OUT.cpio.gz TESTLIST BINDIR"
out=$1 list=$2 bindir=$3
[ -r "$list" ] || die "test list not found: $list"
[ -d "$bindir" ] || die "test binary directory not found: $bindir"

need busybox busybox-static
need cpio cpio
need gzip gzip
bb=/bin/busybox
file -L "$bb" 2>/dev/null | grep -q 'statically linked' ||
	{ ldd "$bb" 2>&1 | grep -q 'not a dynamic executable'; } ||
	die "$bb is not static: install Debian package busybox-static"

stage=$(mktemp -d "$BUILD/initrd.XXXXXX")
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,sbin,dev,proc,sys,tmp,tests,root,etc}
cp "$bb" "$stage/bin/busybox"
for applet in $("$bb" --list); do
	[ "$applet" = busybox ] || ln -sf busybox "$stage/bin/$applet"
done
# The kernel opens /dev/console for /init before devtmpfs is mounted.
mknod -m 600 "$stage/dev/console" c 5 1 ||
	die "cannot create /dev/console (mkinitrd.sh needs root)"

# Test list: validate, copy binaries.
declare -A seen=()
ntests=0
while read -r name cmd rest; do
	case $name in ''|'#'*) continue ;; esac
	while case ${cmd:-} in @*) true ;; *) false ;; esac; do
		[ "$cmd" = @failslab ] || die "$list: test '$name': unknown option '$cmd'"
		read -r cmd rest <<<"${rest:-}"
	done
	[ -n "${cmd:-}" ] || die "$list: test '$name' has no command"
	[ -z "${seen[$name]:-}" ] || die "$list: duplicate test name '$name'"
	seen[$name]=1
	[ -f "$bindir/$cmd" ] || die "$list: test '$name': $bindir/$cmd not found"
	mkdir -p "$(dirname "$stage/tests/$cmd")"
	cp "$bindir/$cmd" "$stage/tests/$cmd"
	chmod +x "$stage/tests/$cmd"
	ntests=$((ntests + 1))
done <"$list"
grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$list" >"$stage/tests/list" || true

cat >"$stage/init" <<'EOF'
#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# kvm-irqroute test init: run /tests/list, print KTAP, reboot.
export PATH=/bin:/sbin HOME=/root

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug
mount -t cgroup2 cgroup2 /sys/fs/cgroup

# Run like a VMM under systemd: in a non-root cgroup with memory
# accounting, so GFP_KERNEL_ACCOUNT allocations are charged.
if mkdir /sys/fs/cgroup/test &&
   echo +memory >/sys/fs/cgroup/cgroup.subtree_control &&
   echo $$ >/sys/fs/cgroup/test/cgroup.procs; then
	echo "# cgroup: $(cat /proc/self/cgroup), controllers: $(cat /sys/fs/cgroup/test/cgroup.controllers)"
else
	echo "# cgroup: could not set up /sys/fs/cgroup/test with +memory"
fi

# KVM is built in: the vendor module is the one matching the CPU flag.
vendor=none
grep -qw svm /proc/cpuinfo && [ -d /sys/module/kvm_amd ] && vendor=kvm_amd
grep -qw vmx /proc/cpuinfo && [ -d /sys/module/kvm_intel ] && vendor=kvm_intel
echo "# kvm: vendor $vendor, /dev/kvm $([ -c /dev/kvm ] && echo present || echo missing), $(grep -c ^processor /proc/cpuinfo) CPUs"

testtimeout=600
only=
for arg in $(cat /proc/cmdline); do
	case $arg in
	testtimeout=*) testtimeout=${arg#testtimeout=} ;;
	irqroute.only=*) only=,${arg#irqroute.only=}, ;;
	irqroute.*=*)
		kv=${arg#irqroute.}
		key=$(echo "${kv%%=*}" | tr 'a-z.-' 'A-Z__')
		export "IRQROUTE_$key=${kv#*=}"
		;;
	esac
done

selected() {
	[ -z "$only" ] && return 0
	case $only in *,"$1",*) return 0 ;; esac
	return 1
}

kml=/sys/kernel/debug/kmemleak
if [ -e $kml ]; then
	# Forget what boot left behind; report only what the tests leak.
	echo scan >$kml
	echo clear >$kml
fi

n=0
while read -r name cmd args; do
	selected "$name" && n=$((n + 1))
done </tests/list

echo "TAP version 13"
echo "1..$n"

# @failslab: failslab and fail_page_alloc fail GFP_KERNEL allocations too,
# silently, when the test asks for it through /proc/thread-self/fail-nth.
fi_knobs="failslab/ignore-gfp-wait fail_page_alloc/ignore-gfp-wait failslab/verbose fail_page_alloc/verbose"
fi_saved=
fault_injection() {	# on|off
	d=/sys/kernel/debug
	if [ "$1" = on ]; then
		fi_saved=
		for kn in $fi_knobs; do
			[ -e $d/$kn ] || continue
			fi_saved="$fi_saved $kn=$(cat $d/$kn)"
			case $kn in *ignore-gfp-wait) echo N ;; *) echo 0 ;; esac >$d/$kn
		done
		echo "# irqroute: fault injection on:${fi_saved:- not available}"
	else
		for kv in $fi_saved; do echo "${kv#*=}" >"$d/${kv%%=*}"; done
	fi
}

k=0 pass=0 fail=0 skip=0
while read -r name cmd args; do
	selected "$name" || continue
	k=$((k + 1))
	opts=
	while case $cmd in @*) true ;; *) false ;; esac; do
		opts="$opts $cmd"
		set -- $args
		cmd=$1
		shift
		args=$*
	done
	case $opts in *@failslab*) fault_injection on ;; esac
	echo "# irqroute: running $name: $cmd${args:+ $args} (timeout ${testtimeout}s)"
	start=$(date +%s)
	# Test output goes to the console prefixed with "# ".
	rm -f /tmp/.rc /tmp/.timedout
	# The test runs in its own session; on timeout the whole process
	# group gets SIGTERM, then SIGKILL 5s later.
	( cd /tmp
	  setsid /tests/$cmd $args </dev/null 2>&1 &
	  pid=$!
	  ( sleep "$testtimeout"; : >/tmp/.timedout
	    kill -TERM -- -$pid; sleep 5; kill -KILL -- -$pid ) >/dev/null 2>&1 &
	  wdog=$!
	  wait $pid
	  echo $? >/tmp/.rc
	  kill $wdog 2>/dev/null
	) 2>&1 | while IFS= read -r line; do echo "# $line"; done
	rc=$(cat /tmp/.rc 2>/dev/null || echo 255)
	case $opts in *@failslab*) fault_injection off ;; esac
	secs=$(( $(date +%s) - start ))
	echo "# irqroute: $name took ${secs}s"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1))
		echo "ok $k $name"
	elif [ "$rc" = 4 ]; then
		skip=$((skip + 1))
		echo "ok $k $name # SKIP"
	else
		fail=$((fail + 1))
		if [ -e /tmp/.timedout ]; then
			echo "# irqroute: $name timed out after ${secs}s"
		else
			echo "# irqroute: $name exit status $rc after ${secs}s"
		fi
		echo "not ok $k $name"
	fi
done </tests/list

if [ -e $kml ]; then
	echo scan >$kml
	sleep 6
	echo scan >$kml
	cat $kml >/tmp/kmemleak
	cat /tmp/kmemleak
	echo "kmemleak: $(grep -c 'unreferenced object' /tmp/kmemleak) leaks"
fi

echo "irqroute-tests: done pass=$pass fail=$fail skip=$skip"
sync
reboot -f
sleep 10
EOF
chmod +x "$stage/init"

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet --reproducible -o -H newc -R 0:0) | gzip -9 -n >"$out.tmp" ||
	die "cpio failed for $out"
mv "$out.tmp" "$out"
log "initramfs $out: $ntests tests, $(du -k "$out" | cut -f1) KiB"
echo "$out"
