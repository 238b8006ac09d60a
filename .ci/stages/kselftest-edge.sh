# SPDX-License-Identifier: GPL-2.0
# kselftest-edge: kselftest 6.12: the project as net/netlink_mcast, no Go toolchain, no HOME
# Needs: root, Go, the stage extract

stage_kselftest_edge() {
	require "$WORK/linux-6.12/tools/testing/selftests/lib.mk" extract
	KS=$WORK/linux-6.12/tools/testing/selftests
	section "kselftest 6.12: the project as net/$COLL (TARGETS=net/$COLL)"
	place_project "$KS/net/$COLL"
	run "$L/net-run_tests.log" make -C "$KS" TARGETS=net/$COLL run_tests
	check "$L/net-run_tests.log" net/$COLL
	make -C "$KS" TARGETS=net/$COLL install INSTALL_PATH="$WORK/net-install" >/dev/null
	printf '%s\n' "net/$COLL:$SEM" "net/$COLL:$SW" | diff - "$WORK/net-install/kselftest-list.txt"
	make -C "$KS" TARGETS=net/$COLL clean
	rm -rf "$KS/net"

	# The project as the stage kselftest left it in the 6.12 tree (placed
	# here when this stage runs alone).
	[ -f "$KS/$COLL/Makefile" ] || place_project "$KS/$COLL"
	section "kselftest 6.12: no Go toolchain (GO=/nonexistent/go) must not break other targets"
	rm -rf "$WORK/nogo-install"
	make -C "$KS" TARGETS="sysctl $COLL" GO=/nonexistent/go install \
		INSTALL_PATH="$WORK/nogo-install" 2>&1 | tee "$L/nogo-install.log"
	grep -q "^$COLL: SKIP building $SEM $SW: no Go toolchain" "$L/nogo-install.log" ||
		fail "no message saying why the Go programs were not built"
	printf '%s\n' "sysctl:sysctl.sh" | diff - "$WORK/nogo-install/kselftest-list.txt" ||
		fail "kselftest-list.txt without Go should list only the other target"
	expect_files "$WORK/nogo-install" sysctl/sysctl.sh
	expect_no_files "$WORK/nogo-install" $COLL/$SEM $COLL/$SW
	run "$L/nogo-run_tests.log" make -C "$KS" TARGETS=$COLL GO=/nonexistent/go run_tests
	grep -qx '1\.\.0' "$L/nogo-run_tests.log" || fail "run_tests without Go should run nothing"
	expect_no_files "$KS/$COLL" $SEM $SW

	section "kselftest 6.12: no Go toolchain, programs built before: they still run"
	make -C "$KS" TARGETS=$COLL
	run "$L/nogo-prebuilt-run_tests.log" make -C "$KS" TARGETS=$COLL GO=/nonexistent/go run_tests
	check "$L/nogo-prebuilt-run_tests.log" $COLL
	make -C "$KS" TARGETS=$COLL clean

	section "kselftest 6.12: build with HOME, GOCACHE and GOPATH unset"
	rm -rf /tmp/nlmcast-go
	env -u HOME -u GOCACHE -u GOPATH -u GOMODCACHE -u XDG_CACHE_HOME \
		make -C "$KS" TARGETS=$COLL
	expect_files "$KS/$COLL" $SEM $SW
	expect_files /tmp/nlmcast-go cache path/pkg/mod
	make -C "$KS" TARGETS=$COLL clean
}
