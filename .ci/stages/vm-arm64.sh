# SPDX-License-Identifier: GPL-2.0
# vm-arm64: arm64: GOARCH=arm64 programs on U-arm64 and P-arm64; the cross-built install under run_kselftest.sh
# Needs: root, Go, qemu-system-arm, ../shared/kernels (skipped without it unless CI=true or all stages), the stages cross-arm64 and packages (busybox)

# arm64 (the letter's platform): the programs built with GOARCH=arm64 on
# the U-arm64 and P-arm64 images (QEMU's virt machine: vmtest reads the
# architecture from the image), as the x86 lines above; and the kselftest
# install cross-built above, run by its own run_kselftest.sh in the guest.
stage_vm_arm64() {
	local A=$VM/arm64 t=$SECONDS t0 rc=0
	need_shared "$K" "the prebuilt kernel images" || return 0
	require "$BUSYBOX_ARM64" packages
	require "$KSFT_ARM64" cross-arm64
	[ -x "$VM/vmtest" ] || vm_programs
	section "VM arm64: GOARCH=arm64 programs; an x86-64 program is refused; vmtest's boot test on P-arm64.Image"
	mkdir -p "$A"
	(cd "$ROOT" && for p in semantics:$SEM switchtest:$SW stress:$ST; do
		CGO_ENABLED=0 GOARCH=arm64 go build -trimpath -o "$A/${p#*:}" "./${p%%:*}" || exit 1
	done) || fail "building the arm64 programs"
	"$VM/vmtest" -kernel "$K/P-arm64.Image" "$VM/$SEM" 2>"$L/vm-arm64-refused.err" || rc=$?
	[ $rc = 1 ] && grep -q "$VM/$SEM is an x86-64 ELF, the kernel P-arm64.Image is arm64" "$L/vm-arm64-refused.err" ||
		fail "vmtest did not refuse an x86-64 program for an arm64 image (exit $rc): $(cat "$L/vm-arm64-refused.err")"
	t0=$SECONDS
	(cd "$ROOT" && NLMC_VMTEST_KERNEL=$K/P-arm64.Image go test -count=1 -run 'TestBootEndToEnd' ./vmtest/)
	note "vmtest TestBootEndToEnd on P-arm64: $((SECONDS - t0)) s"
	VMBIN=$A vm U-arm64 "$K/U-arm64.Image" skip
	VMBIN=$A vm P-arm64-switch0 "$K/P-arm64.Image" pass
	VMBIN=$A vm P-arm64-switch1 "$K/P-arm64.Image" pass sysctl.net.core.netlink_route_mc_index=1
	VMBIN=$A vm_stress P-arm64-stress "$K/P-arm64.Image" "-duration 10s -max-duration 120s -min-batches 20 -min-writes 1000" "fixed0 fixed1 switch"

	section "VM arm64: the cross-built kselftest install under its run_kselftest.sh, in the P-arm64 guest"
	t0=$SECONDS
	run "$L/vm-arm64-run_kselftest.log" "$VM/vmtest" -timeout 1800s -prog-timeout 1500s -kernel "$K/P-arm64.Image" \
		-kselftest "$KSFT_ARM64" -busybox "$BUSYBOX_ARM64" -args "-t $COLL:$SEM -t $COLL:$SW" ||
		fail "vmtest -kselftest on P-arm64.Image exited non-zero"
	# The runner's own TAP is the guest program's output, one "# " deeper.
	sed -n 's/^# //p' "$L/vm-arm64-run_kselftest.log" >"$L/vm-arm64-run_kselftest.runner.log"
	SW_EXPECT=pass check "$L/vm-arm64-run_kselftest.runner.log" $COLL
	note "VM arm64 installed copy under run_kselftest.sh: $((SECONDS - t0)) s wall, boot included"
	note "VM arm64, all: $((SECONDS - t)) s"
}
