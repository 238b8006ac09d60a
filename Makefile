# SPDX-License-Identifier: GPL-2.0
#
# netlink_mcast: two Go kselftest programs, netlink_mcast_semantics and
# netlink_mcast_switch, the stress program netlink_mcast_stress, the
# benchmark netlink_mcast_bench and the real-clients program
# netlink_mcast_frr (these three built and installed, not run by
# run_tests; `make stress`, `make bench`). See README.md.
#
# Two modes, chosen automatically:
#
# * kselftest mode, when this directory sits inside tools/testing/selftests/
#   (up to three levels down, e.g. selftests/netlink_mcast or
#   selftests/net/netlink_mcast): the selftests' lib.mk provides all,
#   run_tests, install, emit_tests and clean, with and without O=; the
#   selftests Makefile adds gen_tar.
# * standalone mode, anywhere else (or with STANDALONE=1): all, run_tests,
#   install INSTALL_PATH=..., clean, implemented below.
#
# Both modes also have `test` (the project's own Go tests),
# `vmtest KERNEL=IMAGE [APPEND=...] [PROGS=...] [VMTEST_FLAGS=...]` (boot an
# x86 bzImage or an arm64 Image in QEMU and run the programs there, built
# for the image's architecture), `vng KERNEL=... [APPEND=...]
# [VNG_PROG=...]` (the same under virtme-ng), `kernel KSRC=DIR [KOUT=...]
# [PATCH=...] [FRAGMENTS=...]` (a small x86-64 test image for vmtest, built
# from a kernel source tree) and `vendor` (the module dependencies into
# vendor/, after which every build works without network).
#
# Without a Go toolchain, kselftest mode runs binaries that are already built
# and otherwise builds and runs nothing here, saying why: the rest of a
# selftests build is not affected.

NLMC_DIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
NLMC_PROGS := netlink_mcast_semantics netlink_mcast_switch
NLMC_COLLECTION := netlink_mcast
nlmc_pkg_netlink_mcast_semantics := ./semantics
nlmc_pkg_netlink_mcast_switch := ./switchtest
# Built and installed, but not run by run_tests: stress and bench run for
# minutes; frr needs Debian's frr (and iproute2, iputils-ping) installed.
NLMC_EXTENDED := netlink_mcast_stress netlink_mcast_bench netlink_mcast_frr
nlmc_pkg_netlink_mcast_stress := ./stress
nlmc_pkg_netlink_mcast_bench := ./bench
nlmc_pkg_netlink_mcast_frr := ./frr
NLMC_STRESS_BIN = $(OUTPUT)/netlink_mcast_stress

# --- Go toolchain ------------------------------------------------------------
# sudo's secure_path usually drops /usr/local/go/bin, so look there too.
GO ?= $(or $(shell command -v go 2>/dev/null),$(wildcard /usr/local/go/bin/go))
NLMC_GO := $(if $(GO),$(shell command -v $(GO) 2>/dev/null))
ifeq ($(NLMC_GO),)
ifneq ($(filter command line environment,$(origin GO)),)
nlmc_no_go := no Go toolchain: GO=$(GO) is not an executable
else
nlmc_no_go := no Go toolchain found (not in PATH, not /usr/local/go/bin/go); \
install Go >= 1.26.8 from https://go.dev/dl/ or pass GO=/path/to/go
endif
endif

# Cross builds follow the kernel's ARCH (when given) unless GOARCH is set.
nlmc_goarch_x86_64 := amd64
nlmc_goarch_i386 := 386
nlmc_goarch_arm64 := arm64
nlmc_goarch_arm := arm
nlmc_goarch_riscv := riscv64
nlmc_goarch_s390 := s390x
nlmc_goarch_powerpc := ppc64le
nlmc_goarch_loongarch := loong64
ifneq ($(filter environment command line,$(origin ARCH)),)
ifeq ($(GOARCH)$(filter x86 um,$(ARCH)),)
NLMC_GOARCH := $(nlmc_goarch_$(ARCH))
ifeq ($(NLMC_GOARCH),)
nlmc_no_go := ARCH=$(ARCH) has no GOARCH mapping here; pass GOARCH=...
endif
endif
endif

# Static binaries. No VCS stamping: inside a kernel tree this directory
# belongs to the kernel's git repository, and `git status` there can fail
# (no git, "dubious ownership" as root), which would fail the build.
# kselftest builds sometimes run without HOME: then the Go build and module
# caches live under /tmp.
NLMC_GOENV := CGO_ENABLED=0 $(if $(NLMC_GOARCH),GOARCH=$(NLMC_GOARCH))
ifeq ($(HOME),)
NLMC_GOENV += $(if $(GOCACHE)$(XDG_CACHE_HOME),,GOCACHE=/tmp/nlmcast-go/cache) \
	$(if $(GOPATH)$(GOMODCACHE),,GOPATH=/tmp/nlmcast-go/path)
endif
NLMC_GOBUILD_FLAGS ?= -trimpath -buildvcs=false

# A binary is rebuilt when any Go file, a file Go embeds (selftests/kmsg's
# tables), go.mod or go.sum is newer; an
# up-to-date tree runs no go command at all (so `make run_tests` works on a
# read-only tree, e.g. in vng, after building on the host).
NLMC_SRCS := $(shell find $(NLMC_DIR) -name '*.go' ! -name '*_test.go' 2>/dev/null) \
	$(wildcard $(NLMC_DIR)/selftests/kmsg/*.txt) $(NLMC_DIR)/go.mod $(NLMC_DIR)/go.sum

NLMC_Q := $(if $(filter 1,$(V)),,@)
# nlmc_go_build builds $@ with NLMC_GOENV; nlmc_go_build_for(GOARCH) for
# another architecture than that.
define nlmc_go_build
	@echo "  GO      $(notdir $@)"
	$(NLMC_Q)cd $(NLMC_DIR) && { $(NLMC_GOENV) $(NLMC_GO) build $(NLMC_GOBUILD_FLAGS) \
		-o $(abspath $@) $(nlmc_pkg_$(notdir $@)) || $(nlmc_vendor_hint); }
endef
define nlmc_go_build_for
	@echo "  GO      $(notdir $@) (GOARCH=$(1))"
	$(NLMC_Q)cd $(NLMC_DIR) && { $(filter-out GOARCH=%,$(NLMC_GOENV)) GOARCH=$(1) $(NLMC_GO) build \
		$(NLMC_GOBUILD_FLAGS) -o $(abspath $@) $(nlmc_pkg_$(notdir $@)) || $(nlmc_vendor_hint); }
endef
# After a failed build (shell code; exits with the build's status): when
# there is no vendor/ and the module dependencies can be neither found in
# the module cache nor downloaded (no network, GOPROXY=off), Go's own
# message names a module, not the remedy: say it.
nlmc_vendor_hint = { rc=$$?; if [ ! -d vendor ] && \
	! $(NLMC_GOENV) $(NLMC_GO) list -deps ./... >/dev/null 2>&1; then \
	echo "netlink_mcast: the module dependencies are neither in vendor/ nor in the module cache, and cannot be downloaded (GOPROXY=$$($(NLMC_GO) env GOPROXY)): run 'make vendor' once where there is network, then build again (see README.md, Offline builds)" >&2; \
	fi; exit $$rc; }

# --- which mode --------------------------------------------------------------
# The selftests directory is the one with lib.mk and kselftest/runner.sh.
nlmc_is_ksft = $(and $(wildcard $(1)/lib.mk),$(wildcard $(1)/kselftest/runner.sh))
ifeq ($(origin KSFT_DIR),undefined)
KSFT_DIR := $(firstword $(foreach d,.. ../.. ../../..,\
	$(if $(call nlmc_is_ksft,$(NLMC_DIR)/$(d)),$(abspath $(NLMC_DIR)/$(d)))))
endif
ifneq ($(STANDALONE),)
KSFT_DIR :=
endif

ifneq ($(KSFT_DIR),)
# ============================ kselftest mode =================================
# lib.mk sets OUTPUT only when it is empty; it is $(CURDIR) then.
nlmc_prebuilt := $(if $(nlmc_no_go),$(strip $(foreach p,$(NLMC_PROGS),\
	$(wildcard $(or $(OUTPUT),$(CURDIR))/$(p)))))
ifeq ($(nlmc_no_go),)
TEST_GEN_PROGS := $(NLMC_PROGS)
TEST_GEN_PROGS_EXTENDED := $(NLMC_EXTENDED)
else ifeq ($(words $(nlmc_prebuilt)),$(words $(NLMC_PROGS)))
TEST_GEN_PROGS := $(NLMC_PROGS)
else
TEST_GEN_PROGS :=
endif
# config and settings are installed by lib.mk (its `wildcard config settings`).

EXTRA_CLEAN += $(addprefix $(or $(OUTPUT),$(CURDIR))/vm-,amd64 arm64)
include $(KSFT_DIR)/lib.mk

NLMC_BINS = $(addprefix $(OUTPUT)/,$(NLMC_PROGS))
NLMC_EXT_BINS = $(addprefix $(OUTPUT)/,$(NLMC_EXTENDED))
ifeq ($(nlmc_no_go),)
# Also the bare names, for `TEST_GEN_PROGS=netlink_mcast_semantics` on the
# command line (lib.mk then does not prefix $(OUTPUT)).
$(sort $(NLMC_PROGS) $(NLMC_BINS) $(NLMC_EXTENDED) $(NLMC_EXT_BINS)): $(NLMC_SRCS)
	$(nlmc_go_build)
else ifeq ($(TEST_GEN_PROGS),)
all: nlmc-skip-msg
endif

else
# ============================ standalone mode ================================
OUTPUT := $(NLMC_DIR)
NLMC_BINS = $(addprefix $(OUTPUT)/,$(NLMC_PROGS))
NLMC_EXT_BINS = $(addprefix $(OUTPUT)/,$(NLMC_EXTENDED))
INSTALL_PATH ?=

all: nlmc-need-go $(NLMC_BINS) $(NLMC_EXT_BINS)

$(NLMC_BINS) $(NLMC_EXT_BINS): $(NLMC_SRCS) | nlmc-need-go
	$(nlmc_go_build)

# Like kselftest/runner.sh: a TAP header, "# " before every line a program
# prints (stderr included), one result line per program, the settings
# timeout (or $kselftest_override_timeout), and each program's arguments
# from KSELFTEST_<NAME>_ARGS, NAME being the program's name upper-cased
# with every character but [A-Za-z0-9] turned into _ (split into words,
# unquoted, as the runner does). Fails if any program failed.
run_tests: all
	@cd $(NLMC_DIR); \
	t=$$(sed -n 's/^timeout=\([0-9][0-9]*\).*/\1/p' settings); \
	t=$${kselftest_override_timeout:-$${t:-45}}; \
	how=$${kselftest_override_timeout:+overriding timeout to}; \
	echo "TAP version 13"; echo "1..$(words $(NLMC_BINS))"; \
	n=0; fail=0; exec 4>&1; \
	for p in $(NLMC_BINS); do \
		n=$$((n + 1)); b=$${p##*/}; \
		v=KSELFTEST_$$(printf %s "$$b" | tr -c '[:alnum:]' _ | tr '[:lower:]' '[:upper:]')_ARGS; \
		eval "args=\$${$$v:-}"; \
		echo "# $${how:-timeout set to} $$t"; \
		echo "# selftests: $(NLMC_COLLECTION): $$b"; \
		rc=$$( { (cd "$${p%/*}" && timeout --foreground $$t timeout $$t ./$$b $$args 2>&1; \
			echo $$? >&3) | sed 's/^/# /' >&4; } 3>&1 ); \
		case $$rc in \
		0) echo "ok $$n selftests: $(NLMC_COLLECTION): $$b";; \
		4) echo "ok $$n selftests: $(NLMC_COLLECTION): $$b # SKIP";; \
		124) echo "#"; fail=1; \
		     echo "not ok $$n selftests: $(NLMC_COLLECTION): $$b # TIMEOUT $$t seconds";; \
		*) fail=1; echo "not ok $$n selftests: $(NLMC_COLLECTION): $$b # exit=$$rc";; \
		esac; \
	done; exit $$fail

install: all
	@test -n "$(INSTALL_PATH)" || { echo "Error: set INSTALL_PATH to use install" >&2; exit 2; }
	mkdir -p $(INSTALL_PATH)
	install -m 0755 $(NLMC_BINS) $(NLMC_EXT_BINS) $(INSTALL_PATH)/
	install -m 0644 $(NLMC_DIR)/config $(NLMC_DIR)/settings $(INSTALL_PATH)/

clean:
	rm -f $(NLMC_BINS) $(NLMC_EXT_BINS)
	rm -rf $(addprefix $(OUTPUT)/vm-,amd64 arm64)

.PHONY: all run_tests install clean
endif

# ============================ both modes =====================================
# The project's own tests (unit tests, and the suites' cases under go test;
# run as root). The frr program's tests run with the race detector, which
# needs cgo and a C compiler: without gcc they run without it. go test -json
# read by internal/testsummary: go test's usual output, then every skipped
# test with its reason.
NLMC_RACE = $(if $(shell command -v gcc 2>/dev/null),-race)
test: nlmc-need-go
	cd $(NLMC_DIR) && $(filter-out GOARCH=%,$(NLMC_GOENV)) $(NLMC_GO) run ./internal/testsummary \
		-- env $(NLMC_GOENV) $(NLMC_GO) test -count=1 -json $$($(NLMC_GO) list ./... | grep -vx nlmcast/frr) \
		-- env $(filter-out CGO_ENABLED=%,$(NLMC_GOENV)) CGO_ENABLED=$(if $(NLMC_RACE),1,0) \
		$(NLMC_GO) test -count=1 $(NLMC_RACE) -json ./frr/

# Boot KERNEL in QEMU (software emulation) and run the programs in it.
# PROGS: which programs (default: all), by name or without the
# netlink_mcast_ prefix, e.g. PROGS=switch.
# VMTEST_FLAGS: more vmtest flags, e.g. -netns -icount -timeout 600s -v
# -prog-args 'netlink_mcast_switch=-t switch_default_off' (see go doc ./vmtest).
KERNEL ?=
APPEND ?=
VMTEST_FLAGS ?=
PROGS ?=
# The programs for a VM are built for KERNEL's architecture, read from the
# image's boot header as vmtest reads it: an arm64 Image (also gzip'd) has
# "ARM\x64" at offset 0x38, anything else is taken for an x86 bzImage
# (vmtest checks it, and names an image or program of the wrong kind).
# When that is the architecture of the programs in $(OUTPUT) (the host's,
# or ARCH='s), those are used; otherwise copies for it are built in
# $(OUTPUT)/vm-GOARCH.
# KERNEL unset or not a file: no programs are wanted, and vmtest's first
# prerequisite, nlmc-need-kernel, says what is wrong.
nlmc_goarch_aarch64 := arm64
nlmc_image_goarch = $(if $(filter 41524d64,$(shell gzip -dcf '$(1)' 2>/dev/null | \
	od -An -tx1 -j56 -N4 2>/dev/null | tr -d ' \n')),arm64,amd64)
nlmc_kernel_file = $(if $(KERNEL),$(shell test -f '$(KERNEL)' && echo yes))
NLMC_VM_GOARCH = $(if $(nlmc_kernel_file),$(call nlmc_image_goarch,$(KERNEL)))
NLMC_BIN_GOARCH = $(or $(NLMC_GOARCH),$(GOARCH),$(nlmc_goarch_$(shell uname -m)))
NLMC_VM_OUT = $(if $(filter $(NLMC_BIN_GOARCH),$(NLMC_VM_GOARCH)),$(OUTPUT),$(OUTPUT)/vm-$(NLMC_VM_GOARCH))
ifneq ($(nlmc_kernel_file),)
ifneq ($(NLMC_VM_OUT),$(OUTPUT))
$(NLMC_VM_OUT)/%: $(NLMC_SRCS) | nlmc-need-go
	@mkdir -p $(@D)
	$(call nlmc_go_build_for,$(NLMC_VM_GOARCH))
endif
endif
nlmc_vmtest_bins = $(if $(nlmc_kernel_file),$(addprefix $(NLMC_VM_OUT)/,$(if $(PROGS),$(foreach p,$(PROGS),\
	$(if $(filter netlink_mcast_%,$(p)),$(p),netlink_mcast_$(p))),$(NLMC_PROGS))))
vmtest: nlmc-need-go nlmc-need-kernel $(nlmc_vmtest_bins)
	cd $(NLMC_DIR) && $(filter-out GOARCH=%,$(NLMC_GOENV)) $(NLMC_GO) run ./vmtest \
		-kernel $(abspath $(KERNEL)) -append "$(APPEND)" $(VMTEST_FLAGS) $(nlmc_vmtest_bins)

# The stress program on the running kernel, or booted with KERNEL in QEMU
# (vmtest-stress). STRESS_ARGS: its flags, e.g. -duration 10s -mode switch;
# the default runs each of its three modes for 60 s (longer, up to 4 times,
# until every sender has 100 batches). STRESS_TIMEOUT, in seconds, bounds
# the program in the guest (nlmc.timeout) and the VM run: leave room for
# three times -max-duration plus setup.
STRESS_ARGS ?=
STRESS_TIMEOUT ?= 1200
stress: nlmc-need-go $(NLMC_STRESS_BIN)
	$(NLMC_STRESS_BIN) $(STRESS_ARGS)

vmtest-stress: nlmc-need-go nlmc-need-kernel $(if $(nlmc_kernel_file),$(NLMC_VM_OUT)/netlink_mcast_stress)
	cd $(NLMC_DIR) && $(filter-out GOARCH=%,$(NLMC_GOENV)) $(NLMC_GO) run ./vmtest \
		-kernel $(abspath $(KERNEL)) -append "nlmc.timeout=$(STRESS_TIMEOUT) $(APPEND)" \
		-timeout $$(($(STRESS_TIMEOUT) + 120))s \
		-args "$(STRESS_ARGS)" $(VMTEST_FLAGS) $(NLMC_VM_OUT)/netlink_mcast_stress

# Run netlink_mcast_bench's design in QEMU: boot pairs of KERNEL_U
# (state U) and KERNEL_P (P0 and P1 alternating; two x86 bzImages or two
# arm64 Images, the bench built for them by vmbench), collect the samples and
# write the results directory BENCH_OUT. BENCH_ARGS go to the bench in the
# guest (e.g. -scene T1-n900-d0 -routes 660); BENCH_FLAGS to the
# orchestrator (e.g. -icount -jobs 2 -boots 1 -rounds 2 -samples 3).
KERNEL_U ?=
KERNEL_P ?=
BENCH_ARGS ?=
BENCH_FLAGS ?=
BENCH_OUT ?= /tmp/nlmc-bench
bench: nlmc-need-go
	@test -n "$(KERNEL_U)$(KERNEL_P)" || { echo "Error: set KERNEL_U=... and/or KERNEL_P=..." >&2; exit 2; }
	cd $(NLMC_DIR) && $(filter-out GOARCH=%,$(NLMC_GOENV)) $(NLMC_GO) run ./bench/vmbench \
		$(if $(KERNEL_U),-kernel-u $(abspath $(KERNEL_U))) $(if $(KERNEL_P),-kernel-p $(abspath $(KERNEL_P))) \
		-out $(abspath $(BENCH_OUT)) $(BENCH_FLAGS) -args "$(BENCH_ARGS)"

# Run the suite under virtme-ng (vng) on KERNEL (a bzImage or a kernel
# build tree): the programs are built here on the host, and the guest,
# which sees the host's files read-only, runs `make run_tests` in this
# same mode (kselftest: through the selftests Makefile, TARGETS=this
# directory; standalone: here), or with VNG_PROG=netlink_mcast_frr (or any
# program) only that program. APPEND: more kernel command line, e.g.
# sysctl.net.core.netlink_route_mc_index=1. VNG: the vng command;
# VNG_FLAGS: more vng flags (e.g. --disable-kvm --force-9p where KVM does
# not work). vng's exit code is the guest command's.
VNG ?= vng
VNG_FLAGS ?=
VNG_PROG ?=
nlmc_vng_target = $(patsubst $(KSFT_DIR)/%,%,$(NLMC_DIR))
# vng points the guest's /dev/stdout at a port of its own, and the runner
# writes the programs' output there by name: point it back at fd 1, a pipe
# (a virtio port can be opened only once), so that the output is in order.
nlmc_vng_make = $(if $(KSFT_DIR),$(MAKE) -C $(KSFT_DIR) TARGETS=$(nlmc_vng_target) run_tests,$(MAKE) -C $(NLMC_DIR) run_tests)
nlmc_vng_cmd = $(if $(VNG_PROG),$(OUTPUT)/$(VNG_PROG),bash -c 'set -o pipefail; ln -sf /proc/self/fd/1 /dev/stdout && $(nlmc_vng_make) | cat')
vng: all
	@test -n "$(KERNEL)" || { echo "Error: set KERNEL=path/to/bzImage (or a kernel build tree)" >&2; exit 2; }
	$(VNG) $(VNG_FLAGS) --run $(abspath $(KERNEL)) --user root $(if $(APPEND),--append "$(APPEND)") \
		-- $(nlmc_vng_cmd) </dev/null

# Copy the module dependencies into vendor/ (not committed), once, with
# network access: from then on the go commands of every target (make, make
# install, the kselftest targets, gen_tar, which copy this directory with
# vendor/ in it) build from vendor/ and need no network and no module
# cache (go.mod's go line is above 1.14: vendor/ is used when present).
vendor: nlmc-need-go
	cd $(NLMC_DIR) && $(filter-out GOARCH=%,$(NLMC_GOENV)) $(NLMC_GO) mod vendor
	@echo "vendor: $(NLMC_DIR)/vendor; the build no longer needs the network"

# Build a small x86-64 test image for vmtest from the kernel source tree
# KSRC: tinyconfig, vmtest/tiny.config (what vmtest's boot needs), the
# suite's `config` and FRAGMENTS (more Kconfig fragments, e.g. a debug one),
# olddefconfig, bzImage, in the build directory KOUT (never in KSRC, whose
# own .config is left alone). PATCH: a patch applied to KSRC first (skipped
# when KSRC already has it). Fails, naming them, when options of the
# fragments did not survive olddefconfig (a dependency missing in that
# kernel version). About 10 minutes on 2 CPUs; incremental after that.
KSRC ?=
KOUT ?= /tmp/nlmc-kernel
PATCH ?=
FRAGMENTS ?=
nlmc_kfrags = $(NLMC_DIR)/vmtest/tiny.config $(NLMC_DIR)/config $(abspath $(FRAGMENTS))
kernel:
	@test -n "$(KSRC)" || { echo "Error: set KSRC=path/to/linux (a kernel source tree)" >&2; exit 2; }
	@test -x "$(KSRC)/scripts/kconfig/merge_config.sh" || { echo "Error: KSRC=$(KSRC) is not a kernel source tree (no scripts/kconfig/merge_config.sh)" >&2; exit 2; }
	$(if $(PATCH),@if patch -d "$(KSRC)" -p1 -R -s -f --dry-run <"$(abspath $(PATCH))" >/dev/null 2>&1; then \
		echo "kernel: $(PATCH) is already applied to $(KSRC)"; \
	else echo "kernel: applying $(PATCH) to $(KSRC)"; patch -d "$(KSRC)" -p1 -N <"$(abspath $(PATCH))"; fi)
	mkdir -p "$(KOUT)"
	$(MAKE) -s -C "$(KSRC)" O="$(abspath $(KOUT))" ARCH=x86_64 tinyconfig
	"$(KSRC)/scripts/kconfig/merge_config.sh" -m -O "$(abspath $(KOUT))" "$(abspath $(KOUT))/.config" $(nlmc_kfrags) >"$(abspath $(KOUT))/merge_config.log"
	$(MAKE) -s -C "$(KSRC)" O="$(abspath $(KOUT))" ARCH=x86_64 olddefconfig
	@lost=$$(grep -h '^CONFIG_[A-Z0-9_]*=' $(nlmc_kfrags) | sort -u | grep -vxF -f "$(abspath $(KOUT))/.config"); \
	if [ -n "$$lost" ]; then \
		echo "Error: these options of $(notdir $(nlmc_kfrags)) are not in $(KOUT)/.config after olddefconfig" \
			"(a dependency this kernel lacks, or a name it does not know):" >&2; \
		echo "$$lost" | sed 's/^/  /' >&2; exit 1; \
	fi
	$(MAKE) -s -C "$(KSRC)" O="$(abspath $(KOUT))" ARCH=x86_64 -j$$(nproc) bzImage
	@echo "kernel: $(abspath $(KOUT))/arch/x86/boot/bzImage; test it with:"
	@echo "  make vmtest KERNEL=$(abspath $(KOUT))/arch/x86/boot/bzImage"

nlmc-need-go:
	@$(if $(nlmc_no_go),echo "netlink_mcast: $(nlmc_no_go)" >&2; exit 2,:)

nlmc-need-kernel:
	@test -n "$(KERNEL)" || { echo "Error: set KERNEL=path/to/bzImage or Image" >&2; exit 2; }
	@test -n "$(nlmc_kernel_file)" || { echo "Error: KERNEL=$(KERNEL) is not a file (a bzImage or Image)" >&2; exit 2; }

nlmc-skip-msg:
	@echo "netlink_mcast: SKIP building $(NLMC_PROGS): $(nlmc_no_go)" >&2

.PHONY: test vmtest stress vmtest-stress bench vng kernel vendor nlmc-need-go nlmc-need-kernel nlmc-skip-msg
