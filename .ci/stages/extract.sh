# SPDX-License-Identifier: GPL-2.0
# extract: the kselftest framework of linux-source-6.1 and -6.12 into $WORK/linux-VERSION
# Needs: the packages linux-source-6.1 and linux-source-6.12 (the stage packages)

# Only what the framework needs: the selftests Makefile and lib.mk, the
# runner, the headers lib.mk names, scripts/subarch.include (the selftests
# Makefile includes it), and the small script-only "sysctl" target for the
# build-without-Go check. tar still has to decompress the whole archive.
extract() {
	local v=$1 p=linux-source-$1 s=linux-source-$1/tools/testing/selftests
	mkdir -p "$WORK/linux-$v"
	tar -xJf "/usr/src/linux-source-$v.tar.xz" -C "$WORK/linux-$v" --strip-components=1 \
		--wildcards "$p/scripts/subarch.include" "$s/Makefile" "$s/lib.mk" \
		"$s/run_kselftest.sh" "$s/kselftest/*" "$s/kselftest.h" "$s/kselftest_harness.h" \
		"$s/sysctl/*"
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
}
