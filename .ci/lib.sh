# SPDX-License-Identifier: GPL-2.0
# What every stage of .ci/run shares: the names, the work directory, the
# logging and checking helpers, and the helpers of more than one stage.
# Sourced by .ci/run; defines, runs nothing.
# shellcheck disable=SC2034 # the names are the stages'

export PATH=/usr/local/go/bin:$PATH
export DEBIAN_FRONTEND=noninteractive
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CHECK=$ROOT/.ci/ksft-check
WORK=${NLMC_CI_WORK:-/tmp/nlmc-ci}
COLL=netlink_mcast
SEM=netlink_mcast_semantics
SW=netlink_mcast_switch
ST=netlink_mcast_stress
BE=netlink_mcast_bench # ST, BE and FRR: TEST_GEN_PROGS_EXTENDED, installed but not run
FRR=netlink_mcast_frr
VERSIONS=(6.1 6.12)

T0=$SECONDS
SUMMARY=()
section() { printf '\n======== %s  [+%ds]\n' "$*" $((SECONDS - T0)); }
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { SUMMARY+=("$*"); }
# run LOG CMD...: show the command and its output, keep the output in LOG.
run() {
	local log=$1; shift
	echo "+ $*"
	"$@" 2>&1 | tee "$log"
}
# check LOG COLLECTION [--head-lost]: both programs' runner lines and TAP in
# LOG (--head-lost: see .ci/ksft-check).
check() {
	local log=$1 coll=$2 out
	for p in "$SEM:pass" "$SW:$SW_EXPECT"; do
		out=$("$CHECK" ${3:-} "$log" "$coll" "${p%%:*}" "${p#*:}") || { echo "$out"; fail "$log"; }
		echo "$out"
		note "$(printf '%-28s %-60s |%s' "$(basename "$log")" "$(head -n1 <<<"$out")" "$(sed -n 2p <<<"$out")")"
	done
	if grep -E '^not ok [0-9]+ selftests: ' "$log"; then fail "$log: a program failed"; fi
}
# expect_files DIR FILE...: every FILE exists in DIR.
expect_files() {
	local d=$1; shift
	for f in "$@"; do [ -e "$d/$f" ] || fail "$d/$f missing"; done
}
expect_no_files() {
	local d=$1; shift
	for f in "$@"; do [ ! -e "$d/$f" ] || fail "$d/$f still there"; done
}
# place_project DIR: copy the project to DIR (no .git, no binaries).
place_project() {
	rm -rf "$1"; mkdir -p "$1"
	rsync -a --exclude=/.git --exclude=/$SEM --exclude=/$SW "$ROOT/" "$1/"
}

# What the stages make for each other (a stage run alone without them
# says which stage to run first), and what is outside the repository.
L=$WORK/logs
BUSYBOX_ARM64=$WORK/busybox-arm64/bin/busybox            # the stage packages
KSFT_ARM64=$WORK/out-arm64/kselftest/kselftest_install   # the stage cross-arm64
VM=$WORK/vm                                              # the stage vm (or vm_programs)
K=$ROOT/../shared/kernels                                # CI's ../shared, beside the checkout
VNG=$ROOT/../shared/tools/virtme-ng/vng
# netlink_mcast_switch skips (exit 4) where the kernel lacks the switch.
if [ -e /proc/sys/net/core/netlink_route_mc_index ]; then SW_EXPECT=pass; else SW_EXPECT=skip; fi

# FULL=1: every stage, or CI=true: what is missing fails. STAGE: the stage
# running; SKIPPED: the stages skipped for want of ../shared.
FULL=0
STAGE=
SKIPPED=()
# need_shared PATH WHAT: PATH, outside the repository (CI has ../shared
# beside its checkout), exists. Without it a run of every stage (or with
# CI=true) fails; a stage run alone is skipped, saying so (status 1: the
# stage returns).
need_shared() {
	[ -e "$1" ] && return 0
	[ "$FULL" = 1 ] && fail "no ${1#"$ROOT/"} beside the checkout"
	echo "SKIP stage $STAGE: needs $2: no ${1#"$ROOT/"} beside the checkout"
	note "stage $STAGE: SKIP, no ${1#"$ROOT/"} ($2)"
	SKIPPED+=("$STAGE")
	return 1
}
# require PATH STAGE: PATH, which the stage STAGE makes (or installs), exists.
require() {
	[ -e "$1" ] || fail "stage $STAGE needs $1, which the stage $2 makes: run .ci/run $2 $STAGE"
}
# vm_programs: the x86-64 programs and vmtest in $VM (the stage vm builds
# them first; a later stage run alone builds them itself).
vm_programs() {
	mkdir -p "$VM"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$VM/$SEM" ./semantics &&
		CGO_ENABLED=0 go build -trimpath -o "$VM/$SW" ./switchtest &&
		CGO_ENABLED=0 go build -trimpath -o "$VM/$ST" ./stress &&
		go build -o "$VM/vmtest" ./vmtest)
}

# vm NAME BZIMAGE SWITCH-EXPECTATION [KERNEL-COMMAND-LINE]: both programs'
# runner lines and TAP as on the host; semantics must not skip a case
# (but diag_lists_unbound_subscribers on an image no_netlink_diag names).
# VMFLAGS: more vmtest flags (e.g. -netns: every program in a fresh netns
# of its own, as run_kselftest.sh -n starts them). Where the switch exists,
# the switch program must also have run every semantics case at 1 and at 0
# (netlink_mcast_switch.mode1.<case>, .mode0.<case>), and passed them.
# VMBIN: where the programs are (default $VM; $VM/arm64 for the arm64
# images).
# no_netlink_diag IMAGE: IMAGE is one of ../shared/kernels', whose configs
# (*.config there) leave out CONFIG_NETLINK_DIAG, which `config` asks for:
# there, and only there, diag_lists_unbound_subscribers SKIPs, saying so.
no_netlink_diag() {
	case $1 in "$K"/*) ! grep -qx 'CONFIG_NETLINK_DIAG=y' "$K"/*.config ;; *) false ;; esac
}
vm() {
	local name=$1 image=$2 sw=$3 append=${4:-} t=$SECONDS ncases mode bin=${VMBIN:-$VM}
	section "VM $name: $image${append:+ with $append}${VMFLAGS:+ ($VMFLAGS)}"
	run "$L/vm-$name.log" "$VM/vmtest" -timeout 2400s ${VMFLAGS:-} -kernel "$image" \
		${append:+-append "$append"} "$bin/$SEM" "$bin/$SW" ||
		fail "vmtest on $image exited non-zero"
	SW_EXPECT=$sw check "$L/vm-$name.log" $COLL
	local skips
	skips=$(grep -E "^# ok [0-9]+ $SEM\..* # SKIP" "$L/vm-$name.log" || true)
	if no_netlink_diag "$image"; then
		skips=$(grep -vxE "# ok [0-9]+ $SEM\.diag_lists_unbound_subscribers # SKIP the kernel has no netlink socket monitoring \(CONFIG_NETLINK_DIAG\): SOCK_DIAG_BY_FAMILY for AF_NETLINK is ENOENT( time=[0-9]+ms)?" <<<"$skips" || true)
	fi
	if [ -n "$skips" ]; then
		echo "$skips"
		fail "$name: a semantics case skipped"
	fi
	if [ "$sw" = pass ]; then
		# The cases that ran (a case SKIPs as mode1.<case> and
		# mode0.<case> where it SKIPs alone).
		ncases=$(grep -cE "^# (not )?ok [0-9]+ $SEM\.[a-z0-9_]+( # time=[0-9]+ms)?$" "$L/vm-$name.log")
		for mode in mode1 mode0; do
			[ "$(grep -cE "^# ok [0-9]+ $SW\.$mode\.[a-z0-9_]+( # time=[0-9]+ms)?$" "$L/vm-$name.log")" = "$ncases" ] ||
				fail "$name: $SW did not pass all $ncases semantics cases as $mode.<case>"
		done
	fi
	note "VM $name: $((SECONDS - t)) s wall, boot included"
}
# vm_stress NAME BZIMAGE ARGS MODES [APPEND]: a short stress run of MODES
# (space-separated) on three guest CPUs (the switch writer needs a CPU no
# sender uses); every mode must pass, in that order.
vm_stress() {
	local name=$1 image=$2 args=$3 modes=$4 append=${5:-} t=$SECONDS m n=0 sel=""
	for m in $modes; do sel+=" -t $m"; done
	section "VM $name: $ST $args$sel on $image${append:+ with $append}"
	run "$L/vm-$name.log" "$VM/vmtest" -smp 3 -timeout 1320s -append "nlmc.timeout=1200 $append" -kernel "$image" \
		-args "$args$sel" "${VMBIN:-$VM}/$ST" || fail "vmtest $ST on $image exited non-zero"
	for m in $modes; do
		n=$((n + 1))
		grep -qE "^# ok $n $ST\.$m( # time=[0-9]+ms)?$" "$L/vm-$name.log" || fail "$name: $ST.$m did not pass"
	done
	grep -qE "^ok 1 selftests: $COLL: $ST$" "$L/vm-$name.log" || fail "$name: no runner ok line for $ST"
	note "VM $name: $((SECONDS - t)) s wall, boot included"
}

# frr_check LOG SWITCH BEFORE: the program's own TAP in LOG (run directly,
# not by the runner). Every case ok; with SWITCH=skip (a kernel without the
# switch) the mode0 sequence and ipmonitor.mode0 pass and every other case
# SKIPs saying so. No daemon and no lab directory may be left afterwards:
# BEFORE lists the lab directories that were there before the run (one
# left by a copy killed with SIGKILL, which no program can clean up, is
# not this run's), and any other is this run's leak, listed in the log.
lab_dirs() { compgen -G "/tmp/$FRR-*" || true; }
frr_check() {
	local log=$1 sw=$2 before=$3 want_pass=23 n d left=
	grep -qx 'TAP version 13' "$log" && grep -qx '1\.\.23' "$log" || fail "$log: no $FRR TAP header"
	! grep -E "^not ok [0-9]+ $FRR\." "$log" || fail "$log: a $FRR case failed"
	if [ "$sw" = skip ]; then
		want_pass=8
		n=$(grep -cE "^ok [0-9]+ $FRR\.(mode1|flipping|ipmonitor\.mode1)[a-z_.]* # SKIP net.core.netlink_route_mc_index not supported" "$log")
		[ "$n" = 15 ] || fail "$log: $n of 15 switch cases SKIP for the missing switch"
	fi
	n=$(grep -cE "^ok [0-9]+ $FRR\.[a-z0-9_.]+( # time=[0-9]+ms)?$" "$log")
	[ "$n" = $want_pass ] || fail "$log: $n cases passed, want $want_pass"
	grep -q "^# Totals: pass:$want_pass fail:0 " "$log" || fail "$log: Totals"
	if pgrep -x zebra || pgrep -x bgpd; then fail "$log: an FRR daemon is still running"; fi
	for d in $(lab_dirs); do
		grep -qxF "$d" <<<"$before" || left="$left $d"
	done
	if [ -n "$left" ]; then
		ls -laR $left | head -50
		fail "$log: lab directories left in /tmp:$left"
	fi
	note "$(printf '%-28s %s' "$(basename "$log")" "$(grep '^# Totals' "$log")")"
}
