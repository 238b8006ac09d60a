# A stand-in kernel tree for testing mutate's flow with real boots: bzImage
# is P.bzImage; U.bzImage (no switch: the switch program skips every case)
# when netlink_bind no longer records its groups; and no image at all when
# af_netlink.c lost a DECLARE_SOCKADDR line.
O ?= .
bzImage:
	@mkdir -p $(O)/arch/x86/boot
	@if [ $$(grep -c 'DECLARE_SOCKADDR' net/netlink/af_netlink.c) -lt 3 ]; then echo "net/netlink/af_netlink.c:2030:17: error: 'addr' undeclared (first use in this function)" >&2; exit 2; fi
	@if grep -q 'nlk->groups\[0\] = (nlk->groups\[0\] & ~0xffffffffUL) | groups;' net/netlink/af_netlink.c; then cp -f /work/shared/kernels/P.bzImage $(O)/arch/x86/boot/bzImage; else cp -f /work/shared/kernels/U.bzImage $(O)/arch/x86/boot/bzImage; fi
kernelversion:
	@echo 6.1.192-stand-in
