#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# normalise.sh PROG < raw > normalised
# Takes one program's -v TAP out of a host run or a vmtest run (whose
# program output is nested one "# " deeper) and replaces what varies from
# run to run: portids, sequence numbers, sender pids, inode numbers,
# timings, SCM_CREDENTIALS pids, address timestamps (cacheinfo), the
# page allocator's free counts, the walk-cost timings.
prog=$1
awk -v prog="$prog" '
	{ line[NR] = $0 }
	/^# selftests: netlink_mcast: / { vm = 1 }
	END {
		for (i = 1; i <= NR; i++) {
			l = line[i]
			if (!vm) { print l; continue }
			if (l ~ /^# selftests: netlink_mcast: /) { split(l, f, " "); cur = f[4]; continue }
			if (l ~ /^(not )?ok [0-9]+ selftests: netlink_mcast: /) { cur = ""; continue }
			if (cur == prog) { sub(/^# /, "", l); print l }
		}
	}
' | sed -E -e '/^  GO  /d' \
	-e 's/ time=[0-9.]+m?s//' \
	-e 's/portid [0-9]+/portid P/g' \
	-e 's/portid=[1-9][0-9]*/portid=P/g' \
	-e 's/pid=[1-9][0-9]*/pid=P/g' \
	-e 's/pid [1-9][0-9]*/pid P/g' \
	-e 's/seq=[1-9][0-9]*/seq=S/g' \
	-e 's/seq [1-9][0-9]*/seq S/g' \
	-e 's/from=[1-9][0-9]*\//from=P\//g' \
	-e 's/ino [0-9]+/ino I/g' \
	-e 's/inodes \[[0-9 ]*\]/inodes [I]/g' \
	-e 's/creds=[0-9]+\//creds=PID\//g' \
	-e 's/cacheinfo=[0-9a-f]+/cacheinfo=C/g' \
	-e 's/ratio [0-9.]+ over ([0-9]+) pairs \(.*\)$/ratio R over \1 pairs (timings)/' \
	-e 's/order-3 blocks before .*$/order-3 blocks before (the allocator'"'"'s state)/' \
	-e 's/^(ok|not ok) [0-9]+ /\1 N /'
