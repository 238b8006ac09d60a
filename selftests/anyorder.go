package selftests

import (
	"time"

	"nlmcast/selftests/nlsock"
)

// ExpectEventuallyInAnyOrder is ExpectEventually for asynchronous events
// whose relative order the kernel does not fix, such as the deaths of
// several namespaces released together (cleanup_net() takes them in
// batches, each in reverse order of the last reference going). The
// transcript must hold exactly the messages want, each once, in any order,
// and nothing else.
func (e *Env) ExpectEventuallyInAnyOrder(s *Sock, deadline time.Duration, want ...Msg) {
	e.t.Helper()
	got, err := s.transcript(e.await(s, deadline, len(want)))
	e.compare(s, want, inOrderOf(s.Socket, want, got), err)
}

// inOrderOf reorders got after want: row i holds the first unused line of
// got that matches want[i], or, if none does, the next line that matches
// nothing; the lines left over follow. So the result equals want row by
// row exactly when got is a permutation of want (the wanted lines must be
// distinguishable, which they are when each has its own Detail), and a
// mismatch shows in the diff next to the row it failed.
func inOrderOf(s *nlsock.Socket, want []Msg, got []Line) []Line {
	used := make([]bool, len(got))
	match := make([]int, len(want))
	for i, m := range want {
		match[i] = -1
		wl := m.line(s)
		for j, l := range got {
			if !used[j] && l.matches(wl) {
				match[i], used[j] = j, true
				break
			}
		}
	}
	var rest []Line
	for j, l := range got {
		if !used[j] {
			rest = append(rest, l)
		}
	}
	out := make([]Line, 0, len(got))
	for _, j := range match {
		switch {
		case j >= 0:
			out = append(out, got[j])
		case len(rest) > 0:
			out, rest = append(out, rest[0]), rest[1:]
		}
	}
	return append(out, rest...)
}
