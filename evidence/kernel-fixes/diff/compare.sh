#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# compare.sh: normalises the raw -v runs beside it (normalise.sh) into
# norm/ and diffs them across kernel versions into diffs/.
set -e
cd "$(dirname "$0")"
mkdir -p norm diffs
./normalise.sh netlink_mcast_semantics < host-6.18.raw > norm/host-6.18.semantics.txt
./normalise.sh netlink_mcast_semantics < P-6.1-shared.raw > norm/P-6.1.semantics.txt
./normalise.sh netlink_mcast_switch < P-6.1-shared.raw > norm/P-6.1.switch.txt
./normalise.sh netlink_mcast_semantics < P-6.12-shared.raw > norm/P-6.12.semantics.txt
# P-6.12-shared.raw's switch run hit vmtest's 300 s program limit: P-6.12-switch.raw is the rerun
./normalise.sh netlink_mcast_switch < P-6.12-switch.raw > norm/P-6.12.switch.txt
./normalise.sh netlink_mcast_semantics < U-6.12-fixes.raw > norm/U-6.12-fixes.semantics.txt
d() { diff -u --label "$1" --label "$2" "norm/$1.txt" "norm/$2.txt" > "diffs/$3.diff" || true; }
d P-6.1.semantics P-6.12.semantics 6.1-vs-6.12.semantics
d P-6.12.semantics host-6.18.semantics 6.12-vs-6.18.semantics
d P-6.1.switch P-6.12.switch 6.1-vs-6.12.switch
d P-6.12.semantics U-6.12-fixes.semantics 6.12-vs-6.12-with-fixes.semantics
wc -l diffs/*.diff
