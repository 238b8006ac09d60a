# SPDX-License-Identifier: GPL-2.0
# frr: netlink_mcast_frr natively: FRR's zebra and bgpd, ip monitor, ping
# Needs: root, Go, Debian's frr, iproute2, iputils-ping (the stage packages)

# Real clients: netlink_mcast_frr (FRR's zebra and bgpd, ip monitor, ping),
# natively and under the real virtme-ng.
#
stage_frr() {
	local t=$SECONDS
	require /usr/lib/frr/zebra packages
	section "Real clients natively: $FRR (FRR $(dpkg-query -W -f '${Version}' frr), $(ip -V))"
	(cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$WORK/$FRR" ./frr)
	local before
	before=$(lab_dirs)
	[ -z "$before" ] || echo "lab directories in /tmp before the run, not this run's: $before"
	run "$L/frr-native.log" "$WORK/$FRR" || fail "$FRR natively"
	frr_check "$L/frr-native.log" "$SW_EXPECT" "$before"
	grep -o 'frr-json: .*' "$L/frr-native.log" || true
	note "frr native: $((SECONDS - t)) s"
}
