#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Routing checks of the QEMU series that need no /dev/kvm: QEMU under
# fakekvm.so (a model of the RFC's KVM_SET_GSI_ROUTING), driven through
# qtest by msix-routes.py, stock and patched, with and without
# KVM_GSI_ROUTING_PARTIAL and KVM_CAP_MAX_IRQ_ROUTES.  No vCPU runs; what is
# checked is the sequence of routing tables KVM would hold.
#
#   tests/qemu/fakekvm-test.sh [STOCK_QEMU [PATCHED_QEMU]]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
stock=${1:-$top/build/qemu/stock/obj/qemu-system-x86_64}
patched=${2:-$top/build/qemu/patched/obj/qemu-system-x86_64}
out=$top/build/qemu/fakekvm
mkdir -p "$out"
gcc -O2 -Wall -Werror -shared -fPIC -I "$top/build/qemu/patched/src/linux-headers" \
	-o "$out/fakekvm.so" "$top/tests/qemu/fakekvm.c" -ldl || exit 1
Q=${QUEUES:-16}
n=0 failed=0
result() {	# result OK|FAIL NAME [DETAIL]
	n=$((n + 1))
	if [ "$1" = OK ]; then echo "ok $n - $2"; else echo "not ok $n - $2 ${3:-}"; failed=$((failed + 1)); fi
}
run() {	# run NAME QEMU [ENV=VALUE...] [-- ACCEL_PROPS]
	local name=$1 q=$2 props=""
	shift 2
	local envs=()
	while [ $# -gt 0 ]; do
		if [ "$1" = -- ]; then props=$2; break; fi
		envs+=("$1"); shift
	done
	env "${envs[@]}" timeout 300 python3 "$top/tests/qemu/msix-routes.py" "$q" "$out/fakekvm.so" \
		"$out/$name.log" "$Q" "$props" >"$out/$name.out" 2>&1
}
# after MARK PATTERN FILE: a line matching PATTERN follows one matching MARK.
after() { awk -v m="$1" -v p="$2" '$0 ~ m { f = 1 } f && $0 ~ p { x = 1 } END { exit !x }' "$3"; }
states() { grep '^state ' "$1" | cut -d' ' -f2 | uniq; }
calls() { grep -c '^SET_GSI_ROUTING' "$1"; }

run stock "$stock"
run stock-partial "$stock" FAKEKVM_PARTIAL=1 FAKEKVM_MAX=65536
run patched-old "$patched"
run patched "$patched" FAKEKVM_PARTIAL=1 FAKEKVM_MAX=65536
run patched-ebusy "$patched" FAKEKVM_PARTIAL=1 FAKEKVM_EBUSY=3
run patched-einval "$patched" FAKEKVM_PARTIAL=1 FAKEKVM_EBUSY=3 FAKEKVM_ERRNO=22
run patched-raise "$patched" FAKEKVM_PARTIAL=1 FAKEKVM_MAX=65536 -- ,max-irq-routes=8192
run stock-split "$stock" FAKEKVM_PARTIAL=1 -- ,kernel-irqchip=split
run patched-split "$patched" FAKEKVM_PARTIAL=1 -- ,kernel-irqchip=split

for r in stock stock-partial patched-old patched patched-ebusy patched-einval patched-raise \
	stock-split patched-split; do
	if grep -q '^msix-routes: done' "$out/$r.out"; then result OK "$r: QEMU ran the sequence"
	else result FAIL "$r: QEMU ran the sequence" "($out/$r.out)"; fi
done
cmp -s <(grep '^SET_GSI\|^state' "$out/stock.log") <(grep '^SET_GSI\|^state' "$out/stock-partial.log") &&
	result OK "stock QEMU ignores the new capabilities" || result FAIL "stock QEMU ignores the new capabilities"
cmp -s <(grep '^SET_GSI\|^state\|^ENABLE' "$out/stock.log") <(grep '^SET_GSI\|^state\|^ENABLE' "$out/patched-old.log") &&
	result OK "patched QEMU, kernel without the RFC: the same calls as stock" ||
	result FAIL "patched QEMU, kernel without the RFC: the same calls as stock"
for r in patched patched-ebusy patched-einval patched-raise; do
	cmp -s <(states "$out/stock.log") <(states "$out/$r.log") &&
		result OK "$r: the same sequence of tables as stock ($(calls "$out/stock.log") calls -> $(calls "$out/$r.log"))" ||
		result FAIL "$r: the same sequence of tables as stock" "(diff $out/stock.log $out/$r.log)"
	cmp -s <(sed -n '/^final/,$p' "$out/stock.log" | sed 1d) <(sed -n '/^final/,$p' "$out/$r.log" | sed 1d) &&
		result OK "$r: the same final table as stock" || result FAIL "$r: the same final table as stock"
done
cmp -s <(grep '^SET_GSI\|^state' "$out/stock-split.log") <(grep '^SET_GSI\|^state' "$out/patched-split.log") &&
	grep -q '^SET_GSI_ROUTING flags 0' "$out/patched-split.log" &&
	result OK "kernel-irqchip=split: patched QEMU makes stock QEMU's calls" ||
	result FAIL "kernel-irqchip=split: patched QEMU makes stock QEMU's calls"
p=$(grep -c '^SET_GSI_ROUTING flags 1' "$out/patched.log")
[ "$p" -gt 0 ] && result OK "patched: $p partial updates, $(grep -c '^SET_GSI_ROUTING flags 0' "$out/patched.log") whole tables" ||
	result FAIL "patched: no partial update"
grep -q '^SET_GSI_ROUTING flags 1 nr [0-9]* none [1-9]' "$out/patched.log" &&
	result OK "patched: released GSIs sent as KVM_IRQ_ROUTING_NONE" ||
	result FAIL "patched: released GSIs sent as KVM_IRQ_ROUTING_NONE"
grep -q '^SET_GSI_ROUTING flags 1 nr 0 ' "$out/patched.log" &&
	result FAIL "patched: an empty partial update" || result OK "patched: no empty partial update"
grep -A1 '^injected EBUSY' "$out/patched-ebusy.log" | grep -q '^SET_GSI_ROUTING flags 0' &&
	result OK "patched-ebusy: a refused partial update falls back to the whole table" ||
	result FAIL "patched-ebusy: a refused partial update falls back to the whole table"
grep -A1 '^injected EBUSY' "$out/patched-ebusy.log" | grep -q '^SET_GSI_ROUTING flags 0' &&
	after '^injected EBUSY' '^SET_GSI_ROUTING flags 1' "$out/patched-ebusy.log" &&
	result OK "patched-ebusy: partial updates go on after the fallback" ||
	result FAIL "patched-ebusy: partial updates go on after the fallback"
grep -A1 '^injected errno 22' "$out/patched-einval.log" | grep -q '^SET_GSI_ROUTING flags 0' &&
	! after '^injected errno 22' '^SET_GSI_ROUTING flags 1' "$out/patched-einval.log" &&
	grep -q 'KVM refused a partial GSI routing update' "$out/patched-einval.out" &&
	result OK "patched-einval: EINVAL falls back, warns once, and ends partial updates" ||
	result FAIL "patched-einval: EINVAL falls back, warns once, and ends partial updates"
grep -q '^ENABLE_CAP 252 8192$' "$out/patched-raise.log" &&
	result OK "patched-raise: KVM_ENABLE_CAP(KVM_CAP_MAX_IRQ_ROUTES, 8192)" ||
	result FAIL "patched-raise: KVM_ENABLE_CAP(KVM_CAP_MAX_IRQ_ROUTES, 8192)"
! grep -q '^ENABLE_CAP 252' "$out/patched.log" &&
	result OK "patched: no KVM_ENABLE_CAP(KVM_CAP_MAX_IRQ_ROUTES) without the property" ||
	result FAIL "patched: no KVM_ENABLE_CAP(KVM_CAP_MAX_IRQ_ROUTES) without the property"

# max-irq-routes beyond what the kernel allows, or without the in-kernel
# irqchip: a clean error at startup.
touch "$out/dev"
for c in "8192 0 on" "70000 65536 on" "4096 0 on" "8192 65536 off"; do
	set -- $c
	FAKEKVM_DEV=$out/dev FAKEKVM_MAX=$2 LD_PRELOAD=$out/fakekvm.so timeout 60 "$patched" \
		-L /usr/share/seabios -L /usr/share/qemu -M q35 \
		-accel kvm,device="$out/dev",max-irq-routes=$1,kernel-irqchip=$3 \
		-nodefaults -nographic -vga none -S -monitor none -serial none \
		</dev/null >"$out/limit-$1.out" 2>&1 &
	pid=$!
	sleep 5
	if kill -0 $pid 2>/dev/null; then kill $pid; wait $pid; rc=running; else wait $pid; rc=$?; fi
	if [ "$3" = off ]; then
		grep -q "max-irq-routes needs the in-kernel irqchip" "$out/limit-$1.out" && [ "$rc" = 1 ] &&
			result OK "max-irq-routes=$1, kernel-irqchip=off: error at startup" ||
			result FAIL "max-irq-routes=$1, kernel-irqchip=off: error at startup" "(rc $rc, $out/limit-$1.out)"
	elif [ "$1" = 4096 ]; then
		[ "$rc" = running ] && result OK "max-irq-routes=4096, no capability: starts" ||
			result FAIL "max-irq-routes=4096, no capability: starts" "($rc)"
	else
		if [ "$2" = 0 ]; then msg="max-irq-routes=$1 needs KVM_CAP_MAX_IRQ_ROUTES"
		else msg="max-irq-routes=$1 is above the kernel's limit"; fi
		grep -q "$msg" "$out/limit-$1.out" && [ "$rc" = 1 ] &&
			result OK "max-irq-routes=$1, ceiling ${2/#0/none}: error at startup" ||
			result FAIL "max-irq-routes=$1, ceiling $2: error at startup" "(rc $rc, $out/limit-$1.out)"
	fi
done
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed -eq 0 ]
