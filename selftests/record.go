package selftests

// Transcript reads what s has received since the last check and returns it
// without judging it, for a case that compares two runs or works out part
// of its expectation from what arrived (how much of a burst an overrun
// socket kept). It reads the queue empty first, like ExpectQueued, so it
// also works on a congested socket or one whose tiny buffer is full; then
// a sentinel proves, like Expect, that nothing else was on its way.
func Transcript(s *Sock) ([]Line, error) {
	got, err := s.queued()
	if err != nil {
		return got, err
	}
	return s.transcript(got)
}

// ExpectLines judges a transcript returned by Transcript as Expect does:
// exactly want, in order, shown side by side on a mismatch. A read error
// (err) fails the case too.
func (e *Env) ExpectLines(s *Sock, got []Line, err error, want ...Msg) {
	e.t.Helper()
	e.compare(s, want, got, err)
}

// DiffLines compares two transcripts returned by Transcript line by line,
// a as the reference, with the rule Expect uses (every field must be
// equal; a Detail that a leaves empty is not compared, and Describe leaves
// it empty only for types it does not know, on both sides). It renders
// them side by side with '!' on each row that differs, or returns "" when
// they are equal.
func DiffLines(a, b []Line) string { return diff(a, b) }
