# SPDX-License-Identifier: GPL-2.0
# kvm-irqroute: the devices of the lean QEMU build (scripts/qemu.sh with
# QEMU_LEAN=1, configure --without-default-devices) that make check runs:
# a q35 machine, its serial port, virtio-blk-pci.  Installed into the tree
# as configs/devices/x86_64-softmmu/irqroute-check.mak.
CONFIG_Q35=y
CONFIG_SERIAL_ISA=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
