# SPDX-License-Identifier: GPL-2.0
# vng: doc/kselftest.md's vng commands under the real virtme-ng on the 6.1 vng images
# Needs: root, Go, ../shared/tools/virtme-ng, ../shared/kernels (skipped without them unless CI=true or all stages), the stage extract

# vng_run LOG IMAGE APPEND CMD...: the guest command under virtme-ng
# (../shared/tools/README.md: TCG, 9p, its bash init), from the 6.1
# kselftest tree; stdout in LOG, the boot log in LOG.boot.
vng_run() {
	local log=$1 image=$2 append=$3; shift 3
	echo "+ vng --run $image ${append:+--append $append }--user root -- $*"
	(cd "$WORK/linux-6.1" && env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/usr/bin/python3 "$VNG" --disable-kvm --force-9p --run "$image" --user root \
		${append:+--append "$append"} -- "$@" </dev/null 2>"$log.boot" | tee "$log")
}
# doc/kselftest.md's command: /dev/stdout back to fd 1, a pipe (vng points it at
# a port of its own, which scrambles the runner's output; a port opens only
# once), then run_tests.
VNG_RUN_TESTS='set -o pipefail; ln -sf /proc/self/fd/1 /dev/stdout && make -C tools/testing/selftests TARGETS=netlink_mcast run_tests | cat'
stage_vng() {
	local KS=$WORK/linux-6.1/tools/testing/selftests t before
	need_shared "$K" "the prebuilt kernel images" || return 0
	need_shared "$VNG" "virtme-ng" || return 0
	require "$WORK/linux-6.1/tools/testing/selftests/lib.mk" extract
	section "vng: build on the host in the 6.1 kselftest tree"
	place_project "$KS/$COLL"
	make -C "$KS" TARGETS=$COLL
	for img in U-vng P-vng; do
		case $img in U-vng) sw=skip;; *) sw=pass;; esac
		for append in "" sysctl.net.core.netlink_route_mc_index=1; do
			[ $img = U-vng ] && [ -n "$append" ] && continue
			t=$SECONDS
			name=vng-$img${append:+-switch1}
			section "vng $img${append:+ with $append}: make run_tests, then $FRR"
			vng_run "$L/$name.log" "$K/$img.bzImage" "$append" bash -c "$VNG_RUN_TESTS" ||
				fail "run_tests under vng on $img${append:+ with $append}"
			SW_EXPECT=$sw check "$L/$name.log" $COLL
			note "vng $img${append:+ switch1} run_tests: $((SECONDS - t)) s wall, boot included"
			if [ -z "$append" ]; then
				t=$SECONDS
				before=$(lab_dirs)
				vng_run "$L/$name-frr.log" "$K/$img.bzImage" "" "tools/testing/selftests/$COLL/$FRR" ||
					fail "$FRR under vng on $img"
				frr_check "$L/$name-frr.log" $sw "$before"
				note "vng $img $FRR: $((SECONDS - t)) s wall, boot included"
			fi
		done
	done
	section "vng P-vng with the switch at 1: the installed copy, run_kselftest.sh"
	make -C "$KS" TARGETS=$COLL install
	t=$SECONDS
	(cd "$KS/kselftest_install" && env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/usr/bin/python3 "$VNG" --disable-kvm --force-9p --run "$K/P-vng.bzImage" --user root \
		--append sysctl.net.core.netlink_route_mc_index=1 \
		-- bash -c 'set -o pipefail; ln -sf /proc/self/fd/1 /dev/stdout && ./run_kselftest.sh | cat' \
		</dev/null 2>"$L/vng-installed.log.boot" | tee "$L/vng-installed.log") ||
		fail "run_kselftest.sh under vng"
	SW_EXPECT=pass check "$L/vng-installed.log" $COLL
	note "vng P-vng installed run_kselftest.sh: $((SECONDS - t)) s wall, boot included"
	make -C "$KS" TARGETS=$COLL clean
}
