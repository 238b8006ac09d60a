# SPDX-License-Identifier: GPL-2.0
# vm: vmtest on ../shared/kernels' images: 6.1, 6.12, debug, -netns, stress, faults, fail-nth, KCSAN
# Needs: root, Go, qemu-system-x86, ../shared/kernels (skipped without it unless CI=true or all stages)

# VM checks: boot the kernels in ../shared/kernels (CI has a copy of shared/
# beside the checkout) in QEMU with vmtest and run both programs there:
# unpatched 6.1 and 6.12 (switch SKIPs), patched with the switch 0 and 1
# (set on the kernel command line), and the patched KASAN/lockdep build.
# vm_faults NAME BZIMAGE ARGS: the fault modes, which must each have
# injected failures, at least 100 of which hit the broadcast (ENOBUFS where
# only a failed clone can overrun), proved some notifications sent by the
# senders' echoes, and found no leak.
vm_faults() {
	local name=$1 n c
	vm_stress "$@" "faults0 faults1 faultswitch" "slub_debug=A,skbuff_head_cache"
	grep -o '"enobufs":{[^}]*},"lost_with_enobufs":[0-9]*,"lost_before_any_walk":[0-9]*,"injected_failures":[0-9]*,"broadcast_clone_failures":[0-9]*,"kmemleak_suspects":[0-9]*' "$L/vm-$name.log" ||
		fail "$name: no fault counts"
	if grep -q '"injected_failures":0,' "$L/vm-$name.log"; then fail "$name: a mode injected nothing"; fi
	n=$(grep -o '"broadcast_clone_failures":[0-9]*' "$L/vm-$name.log" | cut -d: -f2)
	[ "$(wc -w <<<"$n")" = 3 ] || fail "$name: $(wc -w <<<"$n") modes counted broadcast-clone failures, want 3"
	for c in $n; do [ "$c" -ge 100 ] || fail "$name: a mode counted $c failures that hit the broadcast, fewer than 100"; done
	n=$(grep -o '"sent_proofs":{"echo":[0-9]*' "$L/vm-$name.log" | cut -d: -f3)
	[ "$(wc -w <<<"$n")" = 3 ] || fail "$name: $(wc -w <<<"$n") modes counted echo proofs, want 3"
	for c in $n; do [ "$c" -gt 0 ] || fail "$name: a mode proved no notification sent by its sender's echo"; done
}
# vm_failnth NAME BZIMAGE: the stress program's fail-nth cases (a
# notification's allocation made to fail; they SKIP on kernels without
# fault injection), with the switch at 0 and at 1, must run and pass.
vm_failnth() {
	local name=$1 image=$2 t=$SECONDS c cases sel=""
	cases=$("$VM/$ST" -l | grep '^failnth[01]\.')
	[ -n "$cases" ] || fail "$name: $ST lists no failnth case"
	for c in $cases; do sel+=" -t $c"; done
	section "VM $name: $ST $(echo $cases) on $image"
	run "$L/vm-$name.log" "$VM/vmtest" -timeout 1200s -append nlmc.timeout=600 -kernel "$image" \
		-prog-args "$ST=$sel" "$VM/$ST" ||
		fail "vmtest on $image exited non-zero"
	for c in $cases; do
		grep -qE "^# ok [0-9]+ $ST\.${c//./\\.}( # time=[0-9]+ms)?$" "$L/vm-$name.log" || fail "$name: $ST.$c did not pass"
	done
	note "VM $name: $((SECONDS - t)) s wall, boot included"
}
# vm_kcsan NAME BZIMAGE SWITCH-EXPECTATION: the three programs in one boot
# of a KCSAN image, stress at 10 s a mode. A KCSAN report in networking
# code that selftests/kmsg/known_reports.txt does not name fails the run
# (vmtest's verdict); a known one, and a race with no networking frame,
# are only printed. The console (-v, kept apart from
# the TAP) must show that KCSAN ran. -max-duration 120s: the stress modes
# run until -min-batches is reached; under TCG with KCSAN the switch mode
# needed about 18 s on an idle 2-core host and did not make it within the
# default 40 s (16 of 20 batches) beside two other guests.
vm_kcsan() {
	local name=$1 image=$2 sw=$3 t=$SECONDS m
	section "VM $name: $SEM, $SW and $ST (10 s a mode) on $image"
	echo "+ vmtest -v -kernel $image ... (console in $L/vm-$name.console)"
	"$VM/vmtest" -v -smp 3 -timeout 1500s -append nlmc.timeout=900 -kernel "$image" \
		-prog-args "$ST=-duration 10s -max-duration 120s -min-batches 20 -min-writes 1000 -t fixed0 -t fixed1 -t switch" "$VM/$SEM" "$VM/$SW" "$VM/$ST" \
		2>"$L/vm-$name.console" | tee "$L/vm-$name.log" || {
		grep '^vmtest: ' "$L/vm-$name.console"
		fail "vmtest on $image exited non-zero"
	}
	grep -q '^\[ *[0-9.]*\] kcsan: ' "$L/vm-$name.console" || fail "$name: the console shows no KCSAN"
	grep '^vmtest: ' "$L/vm-$name.console" || true
	SW_EXPECT=$sw check "$L/vm-$name.log" $COLL
	"$CHECK" "$L/vm-$name.log" $COLL $ST pass || fail "$name: $ST"
	for m in fixed0 fixed1 switch; do
		if [ "$sw" = pass ] || [ $m = fixed0 ]; then
			grep -qE "^# ok [0-9] $ST\.$m( # time=[0-9]+ms)?$" "$L/vm-$name.log" || fail "$name: $ST.$m did not pass"
		else
			grep -qE "^# ok [0-9] $ST\.$m # SKIP " "$L/vm-$name.log" || fail "$name: $ST.$m did not skip"
		fi
	done
	note "VM $name: $((SECONDS - t)) s wall, boot included; $(grep -c 'known kernel report' "$L/vm-$name.console") known kernel reports, $(grep -c 'KCSAN report outside networking code' "$L/vm-$name.console") KCSAN reports outside networking set aside"
}
stage_vm() {
	need_shared "$K" "the prebuilt kernel images" || return 0
	section "VM checks: vmtest's own tests, booting P.bzImage"
	(cd "$ROOT" && NLMC_VMTEST_KERNEL=$K/P.bzImage go test -count=1 -run EndToEnd ./vmtest/)
	vm_programs
	vm U-6.1 "$K/U.bzImage" skip
	vm P-6.1-switch0 "$K/P.bzImage" pass
	vm P-6.1-switch1 "$K/P.bzImage" pass sysctl.net.core.netlink_route_mc_index=1
	vm U-6.12 "$K/U-6.12.bzImage" skip
	vm P-6.12-switch0 "$K/P-6.12.bzImage" pass
	vm P-6.12-switch1 "$K/P-6.12.bzImage" pass sysctl.net.core.netlink_route_mc_index=1
	# The guest gives each program 300 s unless told otherwise; the switch
	# program needs more on the debug kernel (see settings).
	vm P-debug-switch1 "$K/P-debug.bzImage" pass "sysctl.net.core.netlink_route_mc_index=1 nlmc.timeout=900"
	# Started in a namespace of their own, as run_kselftest.sh -n starts
	# them: the switch program must still find the switch (it tells the
	# initial namespace by identity, not by an init_net-only sysctl,
	# which 6.12 made per-netns).
	VMFLAGS=-netns vm P-6.1-netns "$K/P.bzImage" pass
	VMFLAGS=-netns vm P-6.12-netns "$K/P-6.12.bzImage" pass
	# The stress program, short: 10 s per mode (20 s, one cycle per
	# batch on the slow debug build), minima scaled down to match.
	# -max-duration 120s: room to reach -min-batches on a loaded host (see vm_kcsan).
	vm_stress P-6.1-stress "$K/P.bzImage" "-duration 10s -max-duration 120s -min-batches 20 -min-writes 1000" "fixed0 fixed1 switch"
	vm_stress P-debug-stress "$K/P-debug.bzImage" "-duration 20s -cycles 1 -switch-cycles 4 -min-batches 10 -min-writes 1000" "fixed0 fixed1 switch"
	# Allocation failures in the senders' threads (failslab), under KASAN,
	# lockdep and kmemleak: 10 s per mode and on, up to 240 s, until 100
	# failures hit the broadcast (100-160 s a mode at load 40 on 2 cores,
	# 13 min for the three with kmemleak=off; a mode short of 100 SKIPs,
	# which fails this step).
	vm_faults P-fault-stress "$K/P-fault.bzImage" "-duration 10s -max-duration 300s -cycles 2 -switch-cycles 4 -min-batches 3 -min-writes 100 -min-failures 100"
	# The stress program's fail-nth cases, which need fault injection
	# (about 1 minute).
	vm_failnth P-fault-failnth "$K/P-fault.bzImage"
	# KCSAN (data races), patched and unpatched: a report that the
	# unpatched build also gives is listed in known_reports.txt. About
	# 85 s (P) and 35 s (U) on 2 idle cores, 190 s and 65 s on busy ones.
	vm_kcsan P-kcsan "$K/P-kcsan.bzImage" pass
	vm_kcsan U-kcsan "$K/U-kcsan.bzImage" skip
}
