# SPDX-License-Identifier: GPL-2.0
# config: 6.1 built from defconfig + vng's fragment + config, unpatched and patched: NIPA, vmtest, mutation smoke
# Needs: root, Go, the kernel build packages, ../shared/kernels and ../shared/tools (skipped without them unless CI=true or all stages); NLMC_CI_KERNEL_BUILD=0 leaves it out of a run of all stages

# mutation_smoke SRC BUILD CONFIG [FLAG...]: the mutation tool (go run ./mutate) on a
# built 6.1 tree with the series applied (SRC, its build dir BUILD, the
# configuration fragment CONFIG it was made with): a baseline boot of the
# unmutated tree, then three fixed mutants, each of which must be classified
# as expected: netlink_bind+77:del-assign:1 (the bind never records its
# groups) killed, netlink_bind+44:lt-le:1 equivalent (its argument is in
# mutate/equivalent.txt), netlink_recvmsg+53:del-call:1 (deletes the
# declaration DECLARE_SOCKADDR makes) a build failure. The source must be
# byte for byte the same afterwards. FLAGs go to the tool (e.g. -icount on
# a loaded host). Not called by the main flow: the caller gives it a tree
# CI builds anyway.
mutation_smoke() {
	local src=$1 build=$2 config=$3 out=$WORK/mutation-smoke t=$SECONDS sum
	shift 3
	section "mutation: smoke campaign of three mutants on $src"
	sum=$(sha256sum "$src/net/netlink/af_netlink.c")
	rm -rf "$out"
	(cd "$ROOT" && run "$L/mutation-smoke.log" go run ./mutate run -src "$src" -build "$build" \
		-config "$config" -out "$out" -tiers base -j "$(nproc)" \
		-ids netlink_bind+77:del-assign:1,netlink_bind+44:lt-le:1,netlink_recvmsg+53:del-call:1 \
		-expect killed,equivalent,build-failure "$@") || fail "mutation smoke: see $L/mutation-smoke.log"
	[ "$sum" = "$(sha256sum "$src/net/netlink/af_netlink.c")" ] ||
		fail "mutation smoke: $src/net/netlink/af_netlink.c differs from before the run"
	expect_files "$out" campaign.json table.md records/netlink_bind+77_del-assign_1.json \
		records/netlink_bind+44_lt-le_1.json records/netlink_recvmsg+53_del-call_1.json
	note "mutation smoke: $((SECONDS - t)) s wall"
}
# nipa_check NAME SWITCH-EXPECTATION: NIPA's kselftest executor, unmodified
# (../shared/tools/nipa, driven by .ci/nipa/nipa-run: its fetcher and its
# own kernel build left out), with .ci/nipa/vmksft-p.config, on the kernel
# tree config_kernel_check built; results JSON checked by
# .ci/nipa/check-results. On U the CI-only target nlmc_nipa_planted runs
# last, in the same VM: a WARNING splat NIPA must fingerprint as a crash
# (and again on its retry, in a new VM). See doc/nipa.md.
NIPA_PLANTED=do_one_broadcast:netlink_broadcast:nlmsg_notify:rtnl_notify:rtmsg_ifinfo
nipa_check() {
	local name=$1 sw=$2 src=$WORK/kernel-6.1 t=$SECONDS extra=() planted=() n res
	local KS=$WORK/kernel-6.1/tools/testing/selftests out=$WORK/nipa-$1
	section "NIPA: vmksft-p.py on the $name kernel (nested_tests=on)"
	place_project "$KS/$COLL"
	if [ "$name" = U ]; then
		rm -rf "$KS/nlmc_nipa_planted"; cp -r "$ROOT/.ci/nipa/nlmc_nipa_planted" "$KS/"
		printf '[ksft]\ntarget=%s nlmc_nipa_planted\n' $COLL >"$WORK/nipa-planted.config"
		extra=(--config "$WORK/nipa-planted.config"); planted=(--planted "$NIPA_PLANTED")
	fi
	env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		/usr/bin/python3 -u "$ROOT/.ci/nipa/nipa-run" --nipa "$ROOT/../shared/tools/nipa" --vng "$VNG" \
		--tree "$src" --work "$out" --name "$name" "${extra[@]}" </dev/null 2>&1 | tee "$L/nipa-$name.log" ||
		fail "nipa-run on $name"
	cp "$out/json/results-$name.json" "$L/nipa-$name.json"
	# The number of results NIPA must have parsed: the programs' -l lists.
	mkdir -p "$WORK/nipa-lists"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/nipa-lists/$SEM" ./semantics &&
		CGO_ENABLED=0 go build -trimpath -o "$WORK/nipa-lists/$SW" ./switchtest)
	res=$("$ROOT/.ci/nipa/check-results" "$L/nipa-$name.json" "$sw" --programs "$WORK/nipa-lists" "${planted[@]}") ||
		{ echo "$res"; cat "$L/nipa-$name.json"; fail "NIPA's results on $name"; }
	echo "$res"
	while read -r n; do note "NIPA $name: $n"; done <<<"$res"
	# The kernel console (hvc0) is vng's stderr, the shell's (ttyS0) its
	# stdout, which alone NIPA parses for results: show what the console
	# printed while each program ran.
	echo "kernel console lines while the programs ran (NIPA's stderr logs):"
	grep -H '^\[ *[0-9]*\.[0-9]*\] ' "$out/results/$name"/[0-9]*/stderr || echo "  (none)"
	if grep -lE '^\[ *[0-9]+\.[0-9]+\] ' "$out/results/$name"/[0-9]*/stdout; then
		fail "NIPA $name: kernel console lines in the shell's output"
	fi
	rm -rf "$KS/nlmc_nipa_planted"
	note "NIPA $name: $((SECONDS - t)) s wall, boots included"
}

# `config` is complete: a 6.1 kernel built from x86_64_defconfig plus config
# runs every semantics case without a SKIP; with the series applied
# (incremental rebuild), every switch case too. Configured as NIPA's
# `vng -v -b -f config` configures (virtme-configkernel --defconfig --custom
# config: x86_64_defconfig, virtme-ng's fragment, config), without DWARF
# debug info (build time), and built in-tree: NIPA's executor wants
# arch/x86/boot/bzImage and vmlinux in its tree. It runs there on the
# unpatched and the patched kernel (nipa_check). The longest step of CI
# (about 13-26 minutes on 2 cores); NLMC_CI_KERNEL_BUILD=0 leaves it out of a
# local run.
stage_config() {
	local src=$WORK/kernel-6.1 t=$SECONDS
	need_shared "$K" "the prebuilt kernel images and the series" || return 0
	need_shared "$VNG" "virtme-ng" || return 0
	need_shared "$ROOT/../shared/tools/nipa" "NIPA" || return 0
	require /usr/src/linux-source-6.1.tar.xz packages
	[ -x "$VM/vmtest" ] || vm_programs
	section "config: build 6.1 in-tree from x86_64_defconfig + virtme-ng's fragment + config"
	rm -rf "$src"; mkdir -p "$src"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src" --strip-components=1
	# `make kernel` (the README's way to a test image) refuses, naming it,
	# an option of its fragments that olddefconfig cannot keep. Run on the
	# tree while it is still clean (an O= build needs that); the tiny build
	# itself is left out of CI for time (it is the shared kernels' recipe).
	local rc=0
	printf 'CONFIG_NLMC_NO_SUCH_OPTION=y\n' >"$WORK/nosuch.config"
	make -C "$ROOT" kernel KSRC="$src" KOUT="$WORK/ktiny-bad" FRAGMENTS="$WORK/nosuch.config" \
		>"$L/make-kernel-bad.log" 2>&1 || rc=$?
	[ $rc != 0 ] && grep -q '^  CONFIG_NLMC_NO_SUCH_OPTION=y$' "$L/make-kernel-bad.log" ||
		fail "make kernel with an impossible option: exit $rc, option not named: $(tail -5 "$L/make-kernel-bad.log")"
	rm -rf "$WORK/ktiny-bad"
	(cd "$src" && env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/usr/bin/python3 "$(dirname "$VNG")/virtme-configkernel" --defconfig --custom "$ROOT/config")
	"$src/scripts/config" --file "$src/.config" -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -e DEBUG_INFO_NONE
	make -s -C "$src" olddefconfig
	local opt
	for opt in $(grep '^CONFIG_' "$ROOT/config"); do
		grep -qx "$opt" "$src/.config" || fail "config: $opt did not survive olddefconfig"
	done
	local t0=$SECONDS
	make -s -C "$src" -j"$(nproc)" bzImage LOCALVERSION=
	note "defconfig+vng+config 6.1 bzImage: $((SECONDS - t0)) s on $(nproc) CPUs"
	# NIPA's run is the check that no semantics case skips on this kernel
	# (its results JSON must have every case pass): vmtest's run of the same
	# programs on the same kernel would add nothing but minutes.
	nipa_check U skip

	section "config: the same tree with the series applied (incremental rebuild)"
	patch -d "$src" -p1 <"$K/0001-netlink-per-netns-route-mc-index.patch"
	t0=$SECONDS
	make -s -C "$src" -j"$(nproc)" bzImage LOCALVERSION=
	note "incremental rebuild with the series: $((SECONDS - t0)) s"
	vm defconfig-6.1-patched-switch1 "$src/arch/x86/boot/bzImage" pass \
		sysctl.net.core.netlink_route_mc_index=1
	nipa_check P pass
	mutation_smoke "$src" "$src" "$src/.config"
	note "config check: $((SECONDS - t)) s"
}
