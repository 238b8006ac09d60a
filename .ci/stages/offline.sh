# SPDX-License-Identifier: GPL-2.0
# offline: make vendor; then make, make install and gen_tar with no network, GOPROXY=off, empty Go caches
# Needs: root, Go, network (for make vendor), the stage extract

# Offline: a kernel build farm often has Go but no network. `make vendor`
# (with network) in a copy of the tree; then, in a network namespace with
# no network (unshare -n: only lo, down), with GOPROXY=off and empty module
# and build caches: make, make install, and gen_tar in a copy of the 6.1
# framework with the project placed as in the checks below. The same
# without vendor/ must fail: the step really has neither network nor cache.
# offline CACHEDIR CMD...: CMD with no network and Go caches in CACHEDIR.
offline() {
	local c=$1; shift
	unshare -n env -u GOFLAGS GOPROXY=off GOTOOLCHAIN=local GOMODCACHE="$c/mod" GOPATH="$c/path" GOCACHE="$c/cache" "$@"
}

stage_offline() {
	local d=$WORK/offline t=$SECONDS rc=0 ks
	require "$WORK/linux-6.1/tools/testing/selftests/lib.mk" extract
	section "Offline: make vendor; then make, make install and gen_tar with no network, GOPROXY=off, empty Go caches"
	rm -rf "$d"; mkdir -p "$d"
	rsync -a --exclude=/.git --exclude=/vendor --exclude=/$SEM --exclude=/$SW "$ROOT/" "$d/novendor/"
	rsync -a "$d/novendor/" "$d/src/"
	make -C "$d/src" vendor
	[ -f "$d/src/vendor/modules.txt" ] || fail "make vendor made no vendor/modules.txt"
	[ "$(offline "$d/go" ip -o link show | grep -cv ': lo:')" = 0 ] || fail "unshare -n left a network device"
	offline "$d/go-novendor" make -C "$d/novendor" >"$L/offline-novendor.log" 2>&1 || rc=$?
	[ $rc != 0 ] && grep -q 'module lookup disabled by GOPROXY=off' "$L/offline-novendor.log" ||
		fail "without vendor/ the offline build did not fail for want of modules (exit $rc): $(tail -5 "$L/offline-novendor.log")"
	grep -q "run 'make vendor' once where there is network" "$L/offline-novendor.log" ||
		fail "without vendor/ the offline build did not suggest make vendor: $(tail -5 "$L/offline-novendor.log")"
	run "$L/offline-make.log" offline "$d/go" make -C "$d/src"
	expect_files "$d/src" $SEM $SW $ST $BE $FRR
	run "$L/offline-install.log" offline "$d/go" make -C "$d/src" install INSTALL_PATH="$d/install"
	expect_files "$d/install" $SEM $SW $ST $BE $FRR config settings
	cp -a "$WORK/linux-6.1" "$d/linux"
	ks=$d/linux/tools/testing/selftests
	rsync -a --exclude=/$SEM --exclude=/$SW --exclude=/$ST --exclude=/$BE --exclude=/$FRR "$d/src/" "$ks/$COLL/"
	run "$L/offline-gen_tar.log" offline "$d/go" make -C "$ks" TARGETS=$COLL gen_tar
	tar -tzf "$ks/kselftest_install/kselftest-packages/kselftest.tar.gz" >"$d/tar.list"
	grep -qx "./$COLL/$SEM" "$d/tar.list" || fail "offline gen_tar: $COLL/$SEM not in the tarball"
	note "offline build (make, install, gen_tar from vendor/): $((SECONDS - t)) s"
	rm -rf "$d"
}
