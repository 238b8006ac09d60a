# SPDX-License-Identifier: GPL-2.0
# reliability: the programs as fake root, without CAP_NET_BROADCAST, on /dev/full or a closed pipe, with bad flags
# Needs: root, Go, unshare, setpriv

stage_reliability() {
	section "Reliability: fake root, no CAP_NET_BROADCAST, stdout on /dev/full, bad flags"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/rel-sem" ./semantics)
	# Root of a child user namespace: every case runs or SKIPs saying what it
	# lacks (SO_RCVBUFFORCE needs CAP_NET_ADMIN in the initial one; uevents
	# reach only namespaces the initial user namespace owns); none fails.
	run "$L/fakeroot.log" unshare -Urn "$WORK/rel-sem" || true
	grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$L/fakeroot.log" || fail "fake root: a case failed"
	! grep '^ok .* # SKIP' "$L/fakeroot.log" | grep -v 'needs CAP_\|needs the initial user namespace' || fail "fake root: a SKIP without the capability"
	# Without CAP_NET_BROADCAST the LISTEN_ALL_NSID cases SKIP naming it.
	run "$L/nobroadcast.log" setpriv --bounding-set -net_broadcast "$WORK/rel-sem" || true
	grep -q '^# Totals: pass:[1-9][0-9]* fail:0 ' "$L/nobroadcast.log" || fail "no CAP_NET_BROADCAST: a case failed"
	grep -q '# SKIP .*needs CAP_NET_BROADCAST' "$L/nobroadcast.log" || fail "no CAP_NET_BROADCAST: no SKIP names it"
	# A TAP stream that cannot be written is a failure, and so are bad flags.
	rc=0; "$WORK/rel-sem" >/dev/full 2>"$L/devfull.err" || rc=$?
	[ $rc = 1 ] && grep -q 'writing TAP to stdout' "$L/devfull.err" || fail "stdout on /dev/full: exit $rc"
	rc=0; "$WORK/rel-sem" -l -t nosuch >/dev/null 2>&1 || rc=$?
	[ $rc = 1 ] || fail "-l -t nosuch: exit $rc"
	note "reliability: fake root $(grep '^# Totals' "$L/fakeroot.log"); no CAP_NET_BROADCAST $(grep '^# Totals' "$L/nobroadcast.log")"
	# The other programs share the frame: every one prints the same shared
	# flags in -h, a missing privilege is a whole-program SKIP (exit 4), a
	# TAP stream that cannot be written or a closed pipe is exit 1.
	for p in switchtest:$SW stress:$ST bench:$BE frr:$FRR; do
		(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/rel-${p#*:}" "./${p%%:*}")
	done
	cp "$WORK/rel-sem" "$WORK/rel-$SEM"
	for p in $SEM $SW $ST $BE $FRR; do
		bin=$WORK/rel-$p
		# -h is the output asked for: stdout, exit 0, nothing on stderr.
		"$bin" -h >"$L/$p-help.txt" 2>"$L/$p-help.err" || fail "$p -h: exit $?"
		[ ! -s "$L/$p-help.err" ] || fail "$p -h wrote to stderr: $(head -1 "$L/$p-help.err")"
		for f in -l -t -v -deadline -j; do
			grep -qE "^  $f( |$)" "$L/$p-help.txt" || fail "$p -h does not list the shared flag $f"
		done
		rc=0; "$bin" -nosuch >/dev/null 2>"$L/$p-badflag.err" || rc=$?
		[ $rc = 1 ] && grep -q "^$p: unknown flag" "$L/$p-badflag.err" || fail "$p -nosuch: exit $rc, $(head -1 "$L/$p-badflag.err")"
	done
	for p in $ST $BE; do
		rc=0; unshare -Urn "$WORK/rel-$p" >"$L/$p-fakeroot.log" 2>&1 || rc=$?
		[ $rc = 4 ] && grep -q '^1\.\.0 # SKIP needs CAP_NET_ADMIN in the initial user namespace' "$L/$p-fakeroot.log" ||
			fail "$p under unshare -Urn: exit $rc: $(cat "$L/$p-fakeroot.log")"
	done
	rc=0; "$WORK/rel-$ST" -t fixed0 -duration 1s -min-batches 1 >/dev/full 2>"$L/$ST-devfull.err" || rc=$?
	[ $rc = 1 ] && grep -q 'writing TAP to stdout' "$L/$ST-devfull.err" || fail "$ST on /dev/full: exit $rc"
	rc=0; "$WORK/rel-$ST" -t fixed0 -duration 5s -min-batches 1 2>"$L/$ST-pipe.err" | head -1 >/dev/null || true
	grep -q 'writing TAP to stdout: .*broken pipe' "$L/$ST-pipe.err" || fail "$ST into a closed pipe: $(cat "$L/$ST-pipe.err")"
}
