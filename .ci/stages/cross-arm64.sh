# SPDX-License-Identifier: GPL-2.0
# cross-arm64: kselftest 6.1 cross-built for arm64 (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-), without and with O=
# Needs: Go, gcc-aarch64-linux-gnu, the stage extract

# A cross build for arm64 in the 6.1 tree, as a kernel developer makes one
# for an arm64 board: all and install give arm64 programs, without and
# with O=; the O= copy is booted in the arm64 guest below (vm_arm64).
stage_cross_arm64() {
	require "$WORK/linux-6.1/tools/testing/selftests/lib.mk" extract
	KS=$WORK/linux-6.1/tools/testing/selftests
	section "kselftest 6.1: cross-build for arm64 (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-), without and with O="
	t=$SECONDS
	place_project "$KS/$COLL"
	cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	run "$L/6.1-arm64-install.log" make -C "$KS" TARGETS=$COLL "${cross[@]}" all install
	run "$L/6.1-arm64-O-install.log" make -C "$KS" TARGETS=$COLL "${cross[@]}" O="$WORK/out-arm64" all install
	KSFT_ARM64=$WORK/out-arm64/kselftest/kselftest_install
	for inst in "$KS/kselftest_install" "$KSFT_ARM64"; do
		expect_files "$inst" run_kselftest.sh kselftest/runner.sh $COLL/config $COLL/settings
		for p in $SEM $SW $ST $BE; do
			file "$inst/$COLL/$p" | grep -q 'ARM aarch64.*statically linked' ||
				fail "$inst/$COLL/$p is not a static arm64 program: $(file "$inst/$COLL/$p")"
		done
		printf '%s\n' "$COLL:$SEM" "$COLL:$SW" | diff - "$inst/kselftest-list.txt" ||
			fail "$inst/kselftest-list.txt is not the two expected lines"
	done
	make -C "$KS" TARGETS=$COLL "${cross[@]}" clean
	expect_no_files "$KS/$COLL" $SEM $SW
	note "arm64 cross-build and install, without and with O=: $((SECONDS - t)) s"
}
