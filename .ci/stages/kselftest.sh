# SPDX-License-Identifier: GPL-2.0
# kselftest: the real kselftest framework (6.1, 6.12): run_tests, install, run_kselftest.sh -t/-n, gen_tar, clean, O=, read-only tree
# Needs: root, Go, the stage extract

stage_kselftest() {
	require "$WORK/linux-6.1/tools/testing/selftests/lib.mk" extract
	require "$WORK/linux-6.12/tools/testing/selftests/lib.mk" extract
	for v in "${VERSIONS[@]}"; do
		KS=$WORK/linux-$v/tools/testing/selftests
		place_project "$KS/$COLL"

		section "kselftest $v: make -C tools/testing/selftests TARGETS=$COLL run_tests"
		run "$L/$v-run_tests.log" make -C "$KS" TARGETS=$COLL run_tests
		check "$L/$v-run_tests.log" $COLL
		expect_files "$KS/$COLL" $SEM $SW
		if [ "$v" != 6.1 ]; then # 6.1's runner does not print the timeout
			grep -qx "# timeout set to $(sed -n 's/^timeout=//p' "$ROOT/settings")" "$L/$v-run_tests.log" ||
				fail "the runner did not take the timeout from settings"
		fi

		if [ "$v" != 6.1 ]; then
			section "kselftest $v: run_tests again on a read-only tree with a fresh /tmp (as in vng)"
			# vng shows the guest the host's files read-only, with a writable
			# /tmp: built on the host, the programs must run there, and make
			# must not need to write (the tree is bind-mounted read-only on
			# /mnt in a private mount namespace; the host is not affected).
			run "$L/$v-ro-run_tests.log" unshare -m --propagation private sh -c '
				mount --bind "$1" /mnt && mount -o remount,bind,ro /mnt &&
				mount -o remount,bind,ro / && mount -t tmpfs nlmc-tmp /tmp &&
				exec make -C /mnt/tools/testing/selftests TARGETS="$2" run_tests' \
				sh "$WORK/linux-$v" $COLL
			check "$L/$v-ro-run_tests.log" $COLL
		fi

		section "kselftest $v: install, run_kselftest.sh -l / -t"
		make -C "$KS" TARGETS=$COLL install
		INST=$KS/kselftest_install
		expect_files "$INST" run_kselftest.sh kselftest/runner.sh $COLL/$SEM $COLL/$SW $COLL/$ST $COLL/$BE $COLL/config $COLL/settings
		printf '%s\n' "$COLL:$SEM" "$COLL:$SW" | diff - "$INST/kselftest-list.txt" ||
			fail "kselftest-list.txt is not the two expected lines"
		"$INST/run_kselftest.sh" -l
		run "$L/$v-run_kselftest-t.log" "$INST/run_kselftest.sh" -t $COLL:$SEM -t $COLL:$SW
		check "$L/$v-run_kselftest-t.log" $COLL

		if [ "$v" != 6.1 ]; then
			section "kselftest $v: run_kselftest.sh -n (each program in a fresh netns, in parallel)"
			# With bash: 6.12's run_kselftest.sh is "#!/bin/sh", but its
			# run_in_netns() uses bash's "&>"; under dash (Debian's /bin/sh)
			# "in_netns $netns &> $tmplog" runs the test in the background and
			# deletes its netns at once ("setting the network namespace ...
			# failed: Invalid argument"), whatever the test is. Newer runners
			# are bash scripts.
			# The runner's -n mode also overwrites the head of each program's
			# log with its own lines (explained in .ci/ksft-check).
			run "$L/$v-run_kselftest-n.log" bash "$INST/run_kselftest.sh" -n
			check "$L/$v-run_kselftest-n.log" $COLL --head-lost
		fi

		section "kselftest $v: gen_tar, clean"
		make -C "$KS" TARGETS=$COLL gen_tar
		tar -tzf "$INST/kselftest-packages/kselftest.tar.gz" >"$WORK/tar.list"
		grep -qx "./$COLL/$SEM" "$WORK/tar.list" ||
			fail "gen_tar: $COLL/$SEM not in the tarball"
		make -C "$KS" TARGETS=$COLL clean
		expect_no_files "$KS/$COLL" $SEM $SW

		section "kselftest $v: the same with O="
		O=$WORK/out-$v
		run "$L/$v-O-run_tests.log" make -C "$KS" TARGETS=$COLL O="$O" run_tests
		check "$L/$v-O-run_tests.log" $COLL
		expect_files "$O/kselftest/$COLL" $SEM $SW
		expect_no_files "$KS/$COLL" $SEM $SW
		make -C "$KS" TARGETS=$COLL O="$O" install
		INST=$O/kselftest/kselftest_install
		expect_files "$INST" $COLL/$SEM $COLL/$SW $COLL/$ST $COLL/$BE $COLL/config $COLL/settings
		printf '%s\n' "$COLL:$SEM" "$COLL:$SW" | diff - "$INST/kselftest-list.txt"
		run "$L/$v-O-run_kselftest-t.log" "$INST/run_kselftest.sh" -t $COLL:$SEM -t $COLL:$SW
		check "$L/$v-O-run_kselftest-t.log" $COLL
		make -C "$KS" TARGETS=$COLL O="$O" gen_tar
		expect_files "$INST" kselftest-packages/kselftest.tar.gz
		make -C "$KS" TARGETS=$COLL O="$O" clean
		expect_no_files "$O/kselftest/$COLL" $SEM $SW
		expect_no_files "$KS/$COLL" $SEM $SW
	done
}
