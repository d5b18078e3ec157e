# A kernel module for the guest kernel (KDIR, scripts/vm/guest-abi.mk), built
# by kbuild in a directory of its own per kernel release, KMOD_ROOT/KREL,
# so that modules for several kernels coexist (a mixed pair boots a 7.3
# and a 6.1 guest at once).  Included after guest-abi.mk, with:
#   KMOD        the module's name (KMOD.ko)
#   KMOD_ROOT   where the per-release directories go
#   KMOD_FILES  its sources and Kbuild (absolute paths): linked into the
#               directory, since kbuild builds in the directory it is given
#   KMOD_LINKS  more NAME=TARGET links in it (e.g. the include/ it needs)
#   KMOD_DEPS   more files it is built from (headers under those links)
# It defines KREL, KMOD_OUT and the rule for $(KMOD_OUT)/$(KMOD).ko, which
# the Makefile's own target depends on.  kbuild takes seconds to find
# nothing to do (modpost and the final link run every time), and every VM
# test builds its modules first: so kbuild runs only when a file, the
# kernel tree (its Module.symvers) or the arguments (KDIR, W) changed.
# The including Makefile sets .DEFAULT_GOAL: the rules here come first.

# The release KDIR was configured for: its UTS_RELEASE, what uname -r says
# and vermagic starts with; the ABI for Debian's headers.
KREL := $(shell sed -n 's/.*UTS_RELEASE "\(.*\)".*/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
KMOD_OUT := $(KMOD_ROOT)/$(KREL)

.PHONY: kmod-check FORCE

kmod-check:
	@test -n "$(GUEST_ABI)$(filter-out /lib/modules//build,$(KDIR))" || \
	 { echo "error: cannot tell the guest kernel ABI; set GUEST_ABI (e.g. 6.1.0-57-amd64) or KDIR" >&2; exit 1; }
	@test -f $(KDIR)/Makefile || \
	 { echo "error: no kernel build tree at $(KDIR): install linux-headers-$(GUEST_ABI) (make deps) or set KDIR" >&2; exit 1; }
	@test -n "$(KREL)" || \
	 { echo "error: $(KDIR) has no include/generated/utsrelease.h: it is not a configured kernel tree (install linux-headers-$(GUEST_ABI), or run 'make modules_prepare' in it)" >&2; exit 1; }

# What kbuild was last run with; rewritten only when it changes.
$(KMOD_OUT)/.kmod-args: FORCE | kmod-check
	@mkdir -p $(KMOD_OUT)
	@echo 'KDIR=$(KDIR) W=$(W) KCFLAGS=$(KCFLAGS)' | cmp -s - $@ || \
	 echo 'KDIR=$(KDIR) W=$(W) KCFLAGS=$(KCFLAGS)' > $@

$(KMOD_OUT)/$(KMOD).ko: $(KMOD_FILES) $(KMOD_DEPS) $(KMOD_OUT)/.kmod-args $(wildcard $(KDIR)/Module.symvers)
	@# Links to sources that were removed or renamed would still be built.
	@find $(KMOD_OUT) -maxdepth 1 -type l ! -exec test -e {} \; -delete
	@for f in $(KMOD_FILES); do ln -sfn $$f $(KMOD_OUT)/$$(basename $$f); done
	@for l in $(KMOD_LINKS); do ln -sfn $${l#*=} $(KMOD_OUT)/$${l%%=*}; done
	$(MAKE) -C $(KDIR) M=$(KMOD_OUT) modules
	@touch $@
	@echo "built $@ (Linux $(KREL))"
