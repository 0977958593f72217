# SPDX-License-Identifier: GPL-2.0
# kvm-irqroute: a Linux 7.3.4 series that makes KVM_SET_GSI_ROUTING cheap,
# and the harness that builds, boots and measures it.  See README.md.

SHELL := /bin/bash
S := scripts

.PHONY: help base apply export check-overlay kernels selftests boot \
	host-test check check-full static bench bench-series deb host-bench \
	host-compare mutants export-rfc bench-rfc mutants-rfc clean distclean

help:
	@echo "make check        the test command: apply, build, boot, judge (CI runs this)"
	@echo "BASE=6.12         with check, bench, export: the 6.12 LTS backport (backports/6.12/)"
	@echo "make check-full   the same with the long forms (all cross builds)"
	@echo "make bench        A/B benchmark, base vs patched, QEMU TCG -icount"
	@echo "make bench-series [PREFIXES=\"4 5\"]  per-patch numbers: the perf matrix after each patch N"
	@echo "make boot         build and boot the patched kernel running all tests"
	@echo "make export       regenerate patches/ and the overlay from build/linux (branch dev)"
	@echo "make deb          Debian packages of the patched kernel (UNPATCHED=1: the base; KCONFIG=FILE,"
	@echo "                  default /boot/config-\$$(uname -r)), to install on a real x86 host"
	@echo "make host-bench   the bench matrix on this host's /dev/kvm (running kernel, wall clock):"
	@echo "                  results/host-\$$(uname -r).{json,md}"
	@echo "make host-compare A=base.json B=patched.json   base vs patched table and plot of two host-bench runs"
	@echo "make mutants      plant each bug of tests/mutants/ in the patched kernel, boot the tests,"
	@echo "                  record caught/survived: results/mutants.md (not part of make check)"
	@echo "make export-rfc   regenerate rfc/large-tables/ from build/linux (branch rfc, on dev)"
	@echo "make bench-rfc    the RFC on patches/ against patches/ alone, QEMU TCG -icount"
	@echo "make mutants-rfc  make mutants for the RFC (rfc/large-tables/mutants/)"
	@echo "make kcsan        KCSAN kernels of patches/ and of the RFC on top, each booted running"
	@echo "                  irq_routing_concurrency_test: data races in results/kcsan.md"
	@echo "make base|apply|kernels|selftests|host-test|static|check-overlay"

base:
	$(S)/fetch-base.sh

apply: base
	$(S)/apply.sh

export:
	$(S)/export.sh

check-overlay: apply
	$(S)/check-overlay.sh

kernels: apply
	$(S)/build-kernel.sh build/src-base build/obj-base configs/kvm.config
	$(S)/build-kernel.sh build/src-patched build/obj-patched configs/kvm.config

selftests: apply
	$(S)/build-selftests.sh build/src-patched build/st-patched

boot: kernels selftests
	$(S)/boot-tests.sh

host-test: selftests
	$(S)/host-tests.sh build/st-patched

static: apply
	$(S)/check-static.sh

check:
	$(S)/check.sh

check-full:
	$(S)/check.sh --full

bench:
	$(S)/bench.sh

bench-series:
	$(S)/bench-series.sh $(PREFIXES)

# KCONFIG=FILE and UNPATCHED=1 reach scripts/deb.sh through the environment.
deb: apply
	$(S)/deb.sh

# Exit status 4 is "skipped" (no /dev/kvm): said once, not an error.
host-bench:
	@$(S)/host-bench.sh || [ $$? -eq 4 ]

host-compare:
	@[ -n "$(A)" ] && [ -n "$(B)" ] || { echo "usage: make host-compare A=base.json B=patched.json" >&2; exit 2; }
	$(S)/host-compare.py "$(A)" "$(B)"

mutants:
	$(S)/mutants.sh $(MUTANTS)

export-rfc:
	RFC=large-tables $(S)/export.sh

bench-rfc:
	$(S)/bench-rfc.sh

mutants-rfc:
	RFC=large-tables $(S)/mutants.sh $(MUTANTS)

clean:
	rm -rf build/obj-* build/st-* build/logs build/*.cpio.gz build/deb-* build/host-bench*

distclean:
	rm -rf build

# KCSAN kernels (configs/kvm-kcsan.config) of build/src-patched and
# build/src-rfc, one boot each of tests/kcsan.list: results/kcsan.md.
.PHONY: kcsan
kcsan:
	$(S)/kcsan.sh

.PHONY: qemu export-qemu

# qemu-system-x86_64 from Debian 13's qemu source, stock and with vmm/qemu/
# applied: build/qemu/{stock,patched}/obj.
qemu:
	$(S)/qemu.sh

export-qemu:
	$(S)/export-qemu.sh

# End-to-end, nested: L1 kernels under QEMU TCG run the built QEMU (stock,
# patched) with an L2 enabling N MSI-X vectors.  Needs "make qemu" and the
# kvm.config kernels (build/obj-{base,patched,rfc}) first.  Three tables:
# results/vmm-bench.md, -icount with one L1 CPU (the matrix);
# results/vmm-bench-smp2.md, -icount with two L1 CPUs, for the cells of
# 2048 and 5120 vectors, in which L1 with one CPU stopped under -icount
# (stock QEMU: on 7.3.4 at 2048 twice, on v4 at 5120 once, on the RFC
# kernel at 5120 once of two); and
# results/vmm-bench-tcg.md, without -icount (wall clock), the same cells
# (VMM_CELLS_LONG).
VMM_CELLS ?= rfc:stock:64 rfc:patched:64 rfc:stock:512 rfc:patched:512 \
	rfc:stock:2048 rfc:patched:2048 rfc:patched:5120:8192 \
	patched:stock:64 patched:patched:64 patched:stock:512 patched:patched:512 \
	patched:stock:2048 \
	base:stock:64 base:patched:64 base:stock:512 base:patched:512
VMM_CELLS_LONG ?= base:stock:2048 patched:stock:2048 rfc:patched:2048 \
	base:stock:5120 patched:stock:5120 rfc:stock:5120 rfc:patched:5120:8192
.PHONY: vmm-bench check-vmm
vmm-bench:
	ICOUNT=1 QEMU_SMP=1 VMM_REPS=$${VMM_REPS-1} \
		VMM_NOTE="See also results/vmm-bench-smp2.md (2048 and 5120 vectors with two L1 CPUs: with one, L1 under -icount stopped in cells of stock QEMU: on 7.3.4 at 2048 vectors, twice, and at 5120 on v4 and on the RFC kernel) and results/vmm-bench-tcg.md (wall clock, without -icount)." \
		$(S)/vmm-bench.sh $(VMM_CELLS)
	ICOUNT=1 QEMU_SMP=2 VMM_REPS=$${VMM_REPS-1} VMM_DIR=$(CURDIR)/build/vmm-smp2 \
		VMM_OUT=$(CURDIR)/results/vmm-bench-smp2.md VMM_CONSOLE=smp2 \
		VMM_NOTE="The 2048- and 5120-vector cells with two L1 CPUs under -icount; the matrix, with one, is results/vmm-bench.md." \
		$(S)/vmm-bench.sh $(VMM_CELLS_LONG)
	ICOUNT=0 QEMU_SMP=1 VMM_REPS=$${VMM_REPS-1} VMM_DIR=$(CURDIR)/build/vmm-tcg \
		VMM_OUT=$(CURDIR)/results/vmm-bench-tcg.md VMM_CONSOLE=tcg \
		VMM_NOTE="Without -icount: wall clock of a nested guest on a shared 2-core machine.  TCG does not spend the same time on every instruction, which -icount counts, so the ratios differ from those of results/vmm-bench.md; neither is hardware time." \
		$(S)/vmm-bench.sh $(VMM_CELLS_LONG)

# The QEMU series end to end, one short case (the lean patched QEMU, the
# RFC kernel, 256 vectors); make check runs it on the RFC debug kernel.
check-vmm:
	$(S)/check-vmm.sh

# The QEMU series' mutants (vmm/qemu/mutants/) against fakekvm-test and
# check-vmm: results/mutants-qemu.md.
.PHONY: mutants-qemu
mutants-qemu:
	$(S)/mutants-qemu.sh
