#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Writes a kernel WARNING splat, in 6.1's WARN() format, to /dev/kmsg at
# KERN_WARNING, so that it reaches the console (NIPA's VM stdout) as a
# real one would, then passes: NIPA must mark the program failed by its
# crash detector alone, with the fingerprint of the five functions below
# (do_one_broadcast:netlink_broadcast:nlmsg_notify:rtnl_notify:rtmsg_ifinfo).
# Each line is its own open of /dev/kmsg: one descriptor may log only 10
# lines per 5 s. Run it only in a VM.
set -e
splat=(
	'------------[ cut here ]------------'
	'WARNING: CPU: 0 PID: '$$' at net/netlink/af_netlink.c:1500 do_one_broadcast+0x2f/0x3d0'
	'Modules linked in:'
	'CPU: 0 PID: '$$' Comm: planted_warning Not tainted '"$(uname -r)"' #1'
	'Hardware name: nlmc planted WARNING (written to /dev/kmsg by planted_warning.sh)'
	'RIP: 0010:do_one_broadcast+0x2f/0x3d0'
	'Call Trace:'
	' <TASK>'
	' netlink_broadcast+0x1e8/0x4b0'
	' nlmsg_notify+0x45/0xb0'
	' rtnl_notify+0x32/0x40'
	' rtmsg_ifinfo+0x81/0xa0'
	' </TASK>'
	'---[ end trace 0000000000000000 ]---'
)
echo "TAP version 13"
echo "1..1"
for line in "${splat[@]}"; do
	printf '<4>%s\n' "$line" >/dev/kmsg
done
echo "ok 1 planted_warning"
