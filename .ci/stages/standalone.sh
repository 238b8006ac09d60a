# SPDX-License-Identifier: GPL-2.0
# standalone: standalone mode: make, make run_tests (with KSELFTEST_*_ARGS), make install, make clean
# Needs: root, Go

stage_standalone() {
	section "Standalone: make, make run_tests, make install, make clean"
	make -C "$ROOT" clean
	make -C "$ROOT"
	expect_files "$ROOT" $SEM $SW
	run "$L/standalone-run_tests.log" make -s -C "$ROOT" run_tests
	check "$L/standalone-run_tests.log" $COLL
	# Per-program arguments, named as the kernel's runner names them.
	run "$L/standalone-args.log" env KSELFTEST_NETLINK_MCAST_SEMANTICS_ARGS="-t local_subscriber_delivery -v" \
		KSELFTEST_NETLINK_MCAST_SWITCH_ARGS=-l make -s -C "$ROOT" run_tests
	grep -qx '# 1\.\.1' "$L/standalone-args.log" && grep -q '^# # local_subscriber_delivery: .*as expected:' "$L/standalone-args.log" &&
		grep -qx '# switch_default_off' "$L/standalone-args.log" || fail "standalone run_tests ignored KSELFTEST_*_ARGS"
	make -C "$ROOT" install INSTALL_PATH="$WORK/standalone-install"
	expect_files "$WORK/standalone-install" $SEM $SW $ST $BE $FRR config settings
	make -C "$ROOT" clean
	expect_no_files "$ROOT" $SEM $SW
}
