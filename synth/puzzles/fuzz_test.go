package puzzles

import (
	"context"
	"strings"
	"testing"
)

func FuzzParseKB(f *testing.F) {
	f.Add("event,start,end\nthe Moon landing,1969-07-20,\n")
	f.Add("start,event\n1990,\"quoted, event\"\n")
	f.Add("event,start,end\nx,1970-05-01,1970-04\n")
	f.Add("event,start\n\"x,1969\n")
	f.Add(defaultKB)
	u, err := newUniverse(1, 2000)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		kb, err := ParseKB(strings.NewReader(text), "kb.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "kb.csv: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(kb) == 0 {
			t.Fatal("no events and no error")
		}
		for _, e := range kb {
			if e.Event == "" {
				t.Fatal("empty event accepted")
			}
			rel := e.relations()
			if len(rel) == 0 {
				t.Fatalf("event %+v has no relation", e)
			}
			for _, r := range rel {
				if err := u.checkFact(&r); err != nil {
					t.Fatalf("accepted event %+v gives a bad fact %+v: %v", e, r, err)
				}
			}
		}
	})
}

func FuzzParseYears(f *testing.F) {
	for _, s := range []string{"1900-2030", "1969", "0-5", "2030-1900", " 1 - 2000 ", "-", "9999-9999", "1-2001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		from, to, err := ParseYears(s)
		if err != nil {
			return
		}
		if from < MinYear || to > MaxYear || from > to || to-from+1 > MaxYears {
			t.Fatalf("%q accepted as %d-%d", s, from, to)
		}
		if to-from < 20 {
			if _, err := newUniverse(from, to); err != nil {
				t.Fatalf("%q accepted but the universe fails: %v", s, err)
			}
		}
	})
}

func FuzzParseYearSets(f *testing.F) {
	f.Add(defaultYearSets)
	f.Add("set,event,first,every,through\nx,the X,1,1,3\n")
	f.Add("set,event,first,every,through,moved\nx,the X,2000,4,2008,2004>2005 2008>2001\n")
	f.Fuzz(func(t *testing.T, text string) {
		sets, err := ParseYearSets(strings.NewReader(text), "sets.csv")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "sets.csv: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, s := range sets {
			f := s.fact()
			if err := checkYearSet(&f); err != nil {
				t.Fatalf("set %s parsed but is not a valid fact: %v", s.Name, err)
			}
		}
	})
}

func FuzzImportPublished(f *testing.F) {
	f.Add(`[{"constraints_meta": [{"type": "explicit_year", "value": 2000}, {"type": "weekday_in_month", "direction": "backward", "weekday": "Friday", "n": 2}], "solutions": [], "year_range": [1990, 2010]}]`)
	f.Add(`{"constraints_meta": [{"type": "lunar_month", "value": 4}, {"type": "explicit_year", "value": 2020}], "solutions": ["2020-05-01"], "year_range": [2019, 2021]}`)
	f.Add(`{"data": [{"constraints_meta": [{"type": "event", "name": "world_cup"}], "solutions": [], "year_range": [1990, 1992]}]}`)
	f.Add(`{"identifier": "x", "constraints_meta": [{"type": "lunar_month", "value": 13}, {"type": "month", "value": "May"}], "solutions": ["2020-05-01"], "year_range": [2019, 2021]}` + "\n" +
		`{"identifier": 3, "constraints_meta": [{"type": "chinese_zodiac", "value": "Ox"}, {"type": "lunar_month", "value": 12}, {"type": "month", "value": 2}], "solutions": [], "year_range": [1889, 1890]}`)
	solver := NewSolver()
	f.Fuzz(func(t *testing.T, text string) {
		n := 0
		sum, err := ImportPublished(context.Background(), strings.NewReader(text), "p.json", ImportOptions{Solver: solver}, func(im *Imported) error {
			n++
			if im.Verdict == "" || im.ID == "" {
				t.Fatalf("record %d has no verdict or no name: %+v", im.Record, im)
			}
			if im.Verdict != VerdictNotConverted && im.Puzzle == nil {
				t.Fatalf("record %d: verdict %s without a puzzle", im.Record, im.Verdict)
			}
			if im.Decided() && (im.Verdict == VerdictUndecidable || len(im.Puzzle.Solutions) != len(im.Solved)) {
				t.Fatalf("record %d: decided, verdict %s, solutions %v, solved %v", im.Record, im.Verdict, im.Puzzle.Solutions, im.Solved)
			}
			return nil
		})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "p.json: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if n != sum.Records {
			t.Fatalf("%d records emitted, %d counted", n, sum.Records)
		}
	})
}
