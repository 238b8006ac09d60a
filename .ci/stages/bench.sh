# SPDX-License-Identifier: GPL-2.0
# bench: netlink_mcast_bench smoke runs: natively, make bench on x86-64 and arm64; -analyze reprints the tables
# Needs: root, Go, qemu, ../shared/kernels (skipped without it unless CI=true or all stages)

# netlink_mcast_bench smoke run: natively (state U here), then `make bench`
# with one boot per image (icount, both at once), one round, two samples
# and small scenes (n=50,
# 264 routes): every scene must pass (PAR-n900 SKIPs in the one-CPU icount
# boots), the results directory must be complete with each boot's TAP, and
# -analyze must print the run's table byte for byte and change nothing.
bench_analyze_check() {
	local dir=$1 before tables
	tables=("$dir/table.txt")
	[ -e "$dir/memory.txt" ] && tables+=("$dir/memory.txt") # the memory scenes' table follows
	before=$(cd "$dir" && ls -l --time-style=full-iso && sha256sum -- *)
	"$WORK/netlink_mcast_bench" -analyze "$dir" | cmp - <(cat "${tables[@]}") ||
		fail "-analyze $dir does not print the run's tables"
	[ "$before" = "$(cd "$dir" && ls -l --time-style=full-iso && sha256sum -- *)" ] ||
		fail "-analyze $dir changed the directory"
}
stage_bench() {
	local out=$WORK/bench-smoke t=$SECONDS
	need_shared "$K" "the prebuilt kernel images" || return 0
	section "bench: native smoke run"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/netlink_mcast_bench" ./bench)
	rm -rf "$WORK/bench-native"
	run "$L/bench-native.log" "$WORK/netlink_mcast_bench" -rounds 1 -samples 1 -n 50 -routes 264 \
		-out "$WORK/bench-native" || fail "netlink_mcast_bench natively"
	bench_analyze_check "$WORK/bench-native"
	section "bench: make bench smoke run (U.bzImage, P.bzImage)"
	rm -rf "$out"
	run "$L/bench-smoke.log" make -C "$ROOT" bench KERNEL_U="$K/U.bzImage" KERNEL_P="$K/P.bzImage" \
		BENCH_OUT="$out" BENCH_FLAGS="-icount -jobs 2 -boots 1 -rounds 1 -samples 2" \
		BENCH_ARGS="-scene T1-n900-d0,T3-monitor1,C4-all900,C7-option-route,PAR-n900 -n 50 -routes 264" ||
		fail "make bench smoke run"
	expect_files "$out" samples.jsonl table.txt changes.svg bench-U.txt bench-P0.txt bench-P1.txt boot0-U.tap boot0-P.tap
	grep -q '^# ok 5 netlink_mcast_bench.PAR-n900\[n=50,d=0,routes=264\] # SKIP two senders at once need two CPUs' "$out/boot0-P.tap" ||
		fail "PAR-n900 did not SKIP in the one-CPU icount boot"
	bench_analyze_check "$out"
	note "bench smoke: $((SECONDS - t)) s wall"

	# arm64, with the socket memory scene; slub_debug=F makes the slab
	# counts exact, and netlink_sock's bucket must be found in each state.
	t=$SECONDS out=$WORK/bench-smoke-arm64
	section "bench: make bench smoke run (U-arm64.Image, P-arm64.Image), M1-route-socket too"
	rm -rf "$out"
	run "$L/bench-smoke-arm64.log" make -C "$ROOT" bench KERNEL_U="$K/U-arm64.Image" KERNEL_P="$K/P-arm64.Image" \
		BENCH_OUT="$out" BENCH_FLAGS="-icount -jobs 2 -boots 1 -rounds 1 -samples 2 -append slub_debug=F" \
		BENCH_ARGS="-scene T1-n900-d0,T3-monitor1,C4-all900,C7-option-route,PAR-n900,M1-route-socket -n 50 -routes 264" ||
		fail "make bench smoke run on arm64"
	expect_files "$out" samples.jsonl table.txt changes.svg bench-U.txt bench-P0.txt bench-P1.txt memory.jsonl memory.txt \
		boot0-U.tap boot0-P.tap
	grep -qx 'goarch: arm64' "$out/bench-U.txt" || fail "$out/bench-U.txt does not say goarch: arm64"
	for st in U P0 P1; do
		grep -q "^    aarch64: .*$st kmalloc-2k (2048 B objects)" "$out/memory.txt" ||
			fail "$out/memory.txt: no netlink_sock bucket for $st: $(cat "$out/memory.txt")"
	done
	bench_analyze_check "$out"
	note "bench smoke arm64: $((SECONDS - t)) s wall"
}
