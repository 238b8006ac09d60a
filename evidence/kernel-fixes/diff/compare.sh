#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# compare.sh: normalises the raw -v runs beside it (normalise.sh) into
# norm/ and diffs them across kernel versions into diffs/.
set -e
cd "$(dirname "$0")"
mkdir -p norm diffs
./normalise.sh netlink_mcast_semantics < host-6.18.raw > norm/host-6.18.semantics.txt
for k in P-6.1 P-6.12; do
	for p in semantics switch; do
		./normalise.sh netlink_mcast_$p < $k-shared.raw > norm/$k.$p.txt
	done
done
d() { diff -u --label "$1" --label "$2" "norm/$1.txt" "norm/$2.txt" > "diffs/$3.diff" || true; }
d P-6.1.semantics P-6.12.semantics 6.1-vs-6.12.semantics
d P-6.12.semantics host-6.18.semantics 6.12-vs-6.18.semantics
d P-6.1.switch P-6.12.switch 6.1-vs-6.12.switch
wc -l diffs/*.diff
