// SPDX-License-Identifier: GPL-2.0

package nlmcast_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciCopy copies .ci/ into a fresh directory, with nothing beside it (no
// ../shared), and returns its .ci/run.
func ciCopy(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "nlmc")
	err := filepath.WalkDir(".ci", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, p), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, p), b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ".ci", "run")
}

// A stage named alone says what it lacks: without ../shared it is skipped
// (and the run does not claim that all checks passed), unless CI=true,
// where it fails as a run of every stage does; without an earlier stage's
// output it fails naming that stage; an unknown stage is refused.
func TestCIStagesAloneSayWhatTheyNeed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: .ci/run refuses to start without it")
	}
	run := ciCopy(t)
	work := t.TempDir()
	for _, tc := range []struct {
		env  []string
		args []string
		ok   bool
		want []string
	}{
		{nil, []string{"vm", "bench"}, true, []string{
			"SKIP stage vm: needs the prebuilt kernel images: no ../shared/kernels beside the checkout",
			"skipped for want of ../shared: vm bench"}},
		{[]string{"CI=true"}, []string{"vm"}, false, []string{"FAIL: no ../shared/kernels beside the checkout"}},
		{nil, []string{"offline"}, false, []string{"FAIL: stage offline needs " + work + "/linux-6.1/tools/testing/selftests/lib.mk, which the stage extract makes: run .ci/run extract offline"}},
		{nil, []string{"nosuch"}, false, []string{"FAIL: no stage nosuch: .ci/run -l lists them"}},
	} {
		cmd := exec.Command("bash", append([]string{run}, tc.args...)...)
		cmd.Env = append(os.Environ(), "CI=", "NLMC_CI_WORK="+work)
		cmd.Env = append(cmd.Env, tc.env...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("%v .ci/run %v: %v, want success %v:\n%s", tc.env, tc.args, err, tc.ok, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%v .ci/run %v does not say %q:\n%s", tc.env, tc.args, w, out)
			}
		}
		if strings.Contains(string(out), "all checks passed") {
			t.Errorf("%v .ci/run %v claims all checks passed:\n%s", tc.env, tc.args, out)
		}
	}
}
