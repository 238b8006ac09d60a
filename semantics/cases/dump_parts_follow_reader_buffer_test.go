// SPDX-License-Identifier: GPL-2.0

package cases

import (
	"reflect"
	"testing"
)

// Excerpts of a 6.18 machine's /proc/zoneinfo and /proc/buddyinfo.
const (
	zoneinfoSample = `Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 1234
  pages free     3840
        boost    0
        min      13
        low      21
        high     29
        protection: (0, 3018, 14410, 14410, 14410)
Node 0, zone   Normal
  pages free     1991831
        low      16677
        protection: (0, 0, 0, 0, 0)
`
	buddyinfoSample = `Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 
Node 0, zone   Normal  17079  11983   3996   1784   2103    701    216     86     44      1   1785 
`
)

func TestParseZoneinfo(t *testing.T) {
	want := map[string]zone{
		"0/DMA":    {free: 3840, low: 21, reserve: 14410},
		"0/Normal": {free: 1991831, low: 16677},
	}
	if got := parseZoneinfo(zoneinfoSample); !reflect.DeepEqual(got, want) {
		t.Errorf("parseZoneinfo = %+v, want %+v", got, want)
	}
}

func TestParseBuddyinfo(t *testing.T) {
	want := []buddyZone{
		{"0", "DMA", []int{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3}},
		{"0", "Normal", []int{17079, 11983, 3996, 1784, 2103, 701, 216, 86, 44, 1, 1785}},
	}
	if got := parseBuddyinfo(buddyinfoSample); !reflect.DeepEqual(got, want) {
		t.Errorf("parseBuddyinfo = %+v, want %+v", got, want)
	}
}
