# SPDX-License-Identifier: GPL-2.0
# extract: the kselftest framework of linux-source-6.1 and -6.12 into $WORK/linux-VERSION
# Needs: the packages linux-source-6.1 and linux-source-6.12 (the stage packages)

# Only what the framework needs: the selftests Makefile and lib.mk, the
# runner, the headers lib.mk names, scripts/subarch.include (the selftests
# Makefile includes it), and the small script-only "sysctl" target for the
# build-without-Go check; and the netlink sources kmsg's table of
# netlink's functions is made from, to check the committed table against
# them. tar still has to decompress the whole archive.
extract() {
	local v=$1 p=linux-source-$1 s=linux-source-$1/tools/testing/selftests
	mkdir -p "$WORK/linux-$v"
	tar -xJf "/usr/src/linux-source-$v.tar.xz" -C "$WORK/linux-$v" --strip-components=1 \
		--wildcards "$p/scripts/subarch.include" "$s/Makefile" "$s/lib.mk" \
		"$s/run_kselftest.sh" "$s/kselftest/*" "$s/kselftest.h" "$s/kselftest_harness.h" \
		"$s/sysctl/*"
	# Apart, so that the framework's tree has no top-level Makefile.
	mkdir -p "$WORK/netlink-src-$v"
	tar -xJf "/usr/src/linux-source-$v.tar.xz" -C "$WORK/netlink-src-$v" --strip-components=1 \
		--wildcards "$p/Makefile" "$p/net/netlink/*" "$p/net/core/rtnetlink.c" "$p/net/core/net_namespace.c" \
		"$p/include/linux/netlink.h" "$p/include/net/netlink.h" "$p/include/net/genetlink.h" \
		"$p/include/linux/rtnetlink.h" "$p/include/net/rtnetlink.h" "$p/include/net/net_namespace.h"
}

stage_extract() {
	for v in "${VERSIONS[@]}"; do require "/usr/src/linux-source-$v.tar.xz" packages; done
	section "Extract the kselftest framework from /usr/src/linux-source-{${VERSIONS[*]// /,}}.tar.xz"
	t=$SECONDS
	pids=()
	for v in "${VERSIONS[@]}"; do extract "$v" & pids+=($!); done
	for pid in "${pids[@]}"; do wait "$pid" || fail "extracting the selftests"; done
	note "extracting both frameworks took $((SECONDS - t)) s"
	echo "extracted in $((SECONDS - t)) s:"
	for v in "${VERSIONS[@]}"; do
		echo "  $v: $(find "$WORK/linux-$v" -type f | wc -l) files"
	done
	if [ -d "$ROOT/../shared/kernels" ]; then
		section "kmsg's table of netlink's functions against the 6.1 and 6.12 sources, with the series"
		(cd "$ROOT" && NLMC_KSRC_6_1=$WORK/netlink-src-6.1 NLMC_KSRC_6_12=$WORK/netlink-src-6.12 \
			go test -count=1 -v -run TestCommittedTableIsGenerated ./selftests/kmsg/internal/netlinkfuncs/) |
			tee "$L/netlinkfuncs.log" || fail "selftests/kmsg/netlink_functions.txt is not what the sources make"
		! grep -q -- '--- SKIP' "$L/netlinkfuncs.log" || fail "the table check skipped"
	fi
}
