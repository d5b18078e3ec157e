# GUEST_ABI and KDIR of a kernel module built for the VM tests' guest
# kernel: included by guest-driver/, tests/vm/progs/ and tutorial/'s
# Makefiles, after they set REPO.
#
# GUEST_ABI: the ABI the VM tests boot (scripts/vm/vm abi: GUEST_ABI from the
# environment, or the newest of the default generation's kernel series,
# configs/generations); a
# series given on the command line or in the environment (GUEST_ABI=6.12)
# becomes the newest ABI of it.  KDIR: that kernel's build tree, unless set:
# its installed headers (/lib/modules/ABI/build), else the tree
# scripts/guest-kernel.sh prepares from Debian's archive in build/kernel/ABI
# (Linux 7.x: its headers, and the compiler it was built with).
# Both are looked up once (":="): each lookup runs apt-cache, and they are
# used many times.
ifeq ($(origin GUEST_ABI),undefined)
GUEST_ABI := $(shell $(REPO)/scripts/vm/vm abi)
endif
ifneq ($(filter command line environment,$(origin GUEST_ABI)),)
ifneq ($(shell echo '$(GUEST_ABI)' | grep -Ex '[0-9]+\.[0-9]+'),)
override GUEST_ABI := $(shell GUEST_ABI='$(GUEST_ABI)' $(REPO)/scripts/vm/vm abi)
endif
endif
ifeq ($(origin KDIR),undefined)
KDIR := $(if $(wildcard /lib/modules/$(GUEST_ABI)/build/Makefile),/lib/modules/$(GUEST_ABI)/build,$(shell $(REPO)/scripts/guest-kernel.sh kdir '$(GUEST_ABI)'))
endif
