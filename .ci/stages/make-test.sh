# SPDX-License-Identifier: GPL-2.0
# make-test: make test in a clone with nothing beside it (no ../shared)
# Needs: root, Go, network or a module cache

# In a clone with nothing beside it: every test must pass or SKIP naming
# what it needs from outside the tree (a kernel image: NLMC_VMTEST_KERNEL).
# The tests that boot ../shared/kernels run in the VM checks below.
stage_make_test() {
	section "Project tests: make test in a clone with nothing beside it"
	t=$SECONDS
	rm -rf "$WORK/clone"; mkdir -p "$WORK/clone"
	git clone -q "$ROOT" "$WORK/clone/nlmc"
	[ ! -e "$WORK/clone/shared" ] || fail "$WORK/clone/shared exists"
	make -C "$WORK/clone/nlmc" test 2>&1 | tee "$L/make-test.log"
	# It ends listing the skipped tests with their reasons (the README says so).
	grep -q '^  nlmcast/vmtest Test.*: needs a kernel image: set NLMC_VMTEST_KERNEL' "$L/make-test.log" ||
		fail "make test did not list vmtest's end-to-end tests as skipped, naming NLMC_VMTEST_KERNEL"
	(cd "$WORK/clone/nlmc" && go test -count=1 -v -run EndToEnd ./vmtest/) >"$L/e2e-skip.log" 2>&1
	grep -q '^--- SKIP: TestBootEndToEnd' "$L/e2e-skip.log" && grep -q 'needs a kernel image: set NLMC_VMTEST_KERNEL' "$L/e2e-skip.log" ||
		fail "vmtest's end-to-end tests without an image: no SKIP naming NLMC_VMTEST_KERNEL: $(cat "$L/e2e-skip.log")"
	note "make test in a bare clone: $((SECONDS - t)) s"
}
