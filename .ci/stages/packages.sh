# SPDX-License-Identifier: GPL-2.0
# packages: apt-get every package CI uses, download busybox-static:arm64, start a fresh $WORK
# Needs: root, network (Debian's mirrors)

stage_packages() {
	section "Packages"
	apt-get update -q
	# rsync: lib.mk's install; perl: the runner's prefix.pl (and ksft-check);
	# iproute2: run_kselftest.sh -n; qemu-system-x86, qemu-system-arm: the VM
	# checks; gcc-aarch64-linux-gnu: the selftests' CROSS_COMPILE for arm64;
	# gcc to patch: building a kernel from defconfig + config.
	# frr, iputils-ping: netlink_mcast_frr's real clients; python3-requests,
	# python3-argcomplete, udev, file, busybox-static: virtme-ng
	# (../shared/tools/README.md); python3-psutil (and python3-requests): NIPA.
	pkgs=(make rsync perl iproute2 coreutils tar xz-utils qemu-system-x86 qemu-system-arm gcc-aarch64-linux-gnu
		frr iputils-ping python3-requests python3-argcomplete udev file busybox-static python3-psutil
		gcc bc flex bison libelf-dev libssl-dev patch) # the last line: the kernel build
	for v in "${VERSIONS[@]}"; do
		policy=$(apt-cache policy "linux-source-$v")
		grep -q 'Candidate: [0-9]' <<<"$policy" ||
			fail "linux-source-$v is not available from the configured APT sources"
		pkgs+=("linux-source-$v")
	done
	apt-get install -y -q --no-install-recommends "${pkgs[@]}"
	rm -rf "$WORK"; mkdir -p "$WORK/logs"
	# The arm64 guest runs the kernel's run_kselftest.sh, a shell script: a
	# static arm64 busybox is its shell and tools. Downloaded, not installed
	# (this machine is x86-64); arm64 is added for these two commands only.
	t=$SECONDS
	mkdir -p "$WORK/busybox-arm64"
	arm64apt=(-o APT::Architectures::=amd64 -o APT::Architectures::=arm64)
	apt-get "${arm64apt[@]}" update -q
	(cd "$WORK/busybox-arm64" && apt-get "${arm64apt[@]}" download busybox-static:arm64 &&
		dpkg-deb -x busybox-static_*_arm64.deb .)
	BUSYBOX_ARM64=$WORK/busybox-arm64/bin/busybox
	file "$BUSYBOX_ARM64" | grep -q 'ARM aarch64.*statically linked' || fail "no static arm64 busybox"
	note "busybox-static:arm64 download: $((SECONDS - t)) s"
	go version
	echo "running kernel: $(uname -r)"
	# netlink_mcast_switch skips (exit 4) where the kernel lacks the switch.
	if [ -e /proc/sys/net/core/netlink_route_mc_index ]; then SW_EXPECT=pass; else SW_EXPECT=skip; fi
	echo "net.core.netlink_route_mc_index: $([ $SW_EXPECT = pass ] && echo present || echo 'absent: expecting netlink_mcast_switch to SKIP')"
	mkdir -p "$WORK/logs"
	L=$WORK/logs
}
