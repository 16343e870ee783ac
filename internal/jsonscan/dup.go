package jsonscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DuplicateKeyError is the error of an object that holds two members of
// one name, from a scanner that refuses them (Scanner.RefuseDuplicates).
// Names are compared as a decoder that matches struct fields sees them:
// after their escapes are decoded, and ignoring case by Unicode's simple
// folding, as encoding/json matches fields, so "timer", "Timer" and
// "tim\u0065r" are one name.
type DuplicateKeyError struct {
	// Key is the second member's name and First the first's, decoded; they
	// differ at most in case.
	Key, First string
	// Offset and FirstOffset are the 1-based numbers of the bytes that open
	// the two names' strings, as the scanner's syntax errors number bytes.
	Offset, FirstOffset int

	// path holds where the object lies, innermost first: ".name" for the
	// value of a member, "[i]" for an element of an array.
	path []string
}

func (e *DuplicateKeyError) Error() string {
	if e.Key == e.First {
		return "duplicate key " + strconv.Quote(e.Key) + " at byte " + strconv.Itoa(e.Offset) +
			" (first at byte " + strconv.Itoa(e.FirstOffset) + ")"
	}
	return "duplicate key " + strconv.Quote(e.Key) + " at byte " + strconv.Itoa(e.Offset) +
		" (the same as " + strconv.Quote(e.First) + " at byte " + strconv.Itoa(e.FirstOffset) + ", ignoring case)"
}

// Field names the second member by its path from the value the scanner was
// given: member names joined by dots, array indexes in brackets,
// "items[3].extra_info.timer". A non-empty prefix names that value itself
// and starts the path.
func (e *DuplicateKeyError) Field(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	b.WriteByte('.')
	b.WriteString(e.Key)
	if prefix == "" {
		return strings.TrimPrefix(b.String(), ".")
	}
	return b.String()
}

// InMember records, when err is a *DuplicateKeyError, that its object lies
// in the value of the member whose name starts at offset keyStart (a Pos
// before the name was read), and returns err. SkipValue does this itself;
// a caller that reads an object member by member does it for the values it
// reads.
func (s *Scanner) InMember(err error, keyStart int) error {
	if e, ok := err.(*DuplicateKeyError); ok {
		e.path = append(e.path, "."+s.stringAt(keyStart))
	}
	return err
}

// InElement records, when err is a *DuplicateKeyError, that its object lies
// in element i (from 0) of an array, and returns err.
func (s *Scanner) InElement(err error, i int) error {
	if e, ok := err.(*DuplicateKeyError); ok {
		e.path = append(e.path, "["+strconv.Itoa(i)+"]")
	}
	return err
}

// smallObject is the number of names an object's check compares one by
// one; past it, they go into a hash table (keyTable).
const smallObject = 16

// keyRef is a name read in an object being checked: a hash of its folded
// form and the offset of its opening quote, from which it is read again
// when the hashes of two names match.
type keyRef struct {
	hash  uint64
	start int
}

// keyTable holds the names of a large object (obj is its BeginObject
// mark) in an open-addressing table of eight-byte slots, at most three
// quarters full: 11 to 22 bytes a name rather than a string and a map
// entry each. A slot holds the top tagBits bits of the name's hash, seeded
// at random per process so that no text can make names collide, and the
// offset of its opening quote plus one (0: empty; offsets stay below
// 2^offsetBits). A table of up to 2^tagBits slots is indexed by the hash's
// top bits, which the tags keep, so it grows without reading the names
// again.
type keyTable struct {
	obj   int
	slots []uint64
	n     int
}

const (
	tagBits    = 24
	offsetBits = 64 - tagBits
	offsetMask = 1<<offsetBits - 1
)

var tableSeed = maphash.MakeSeed()

// tagIndexed is the size up to which a table is indexed by its tags alone
// (a variable so that tests can take the other way at a small size).
var tagIndexed = 1 << tagBits

// BeginObject starts the duplicate check of an object that the caller reads
// member by member, after its '{', and returns the mark that ReadKey and
// EndObject take. Without RefuseDuplicates, the check does nothing.
func (s *Scanner) BeginObject() int { return len(s.keys) }

// ReadKey reads a member name (the string at the current position) of the
// object begun at obj. With RefuseDuplicates, a name the object already
// holds is a *DuplicateKeyError.
func (s *Scanner) ReadKey(obj int) ([]byte, error) {
	start := s.pos
	key, err := s.ReadString()
	if err != nil || !s.RefuseDuplicates {
		return key, err
	}
	return key, s.addKey(obj, key, start)
}

// EndObject ends the check of the object begun at obj, and of any object
// begun inside it and not ended (after an error).
func (s *Scanner) EndObject(obj int) {
	if obj < len(s.keys) {
		s.dropKeys(obj)
	}
}

func (s *Scanner) dropKeys(obj int) {
	s.keys = s.keys[:obj]
	n := len(s.tables)
	for n > 0 && s.tables[n-1].obj >= obj {
		n--
		s.tables[n] = keyTable{}
	}
	s.tables = s.tables[:n]
}

// addKey checks key, whose string started at offset start, against the
// names the object begun at obj holds, and adds it.
func (s *Scanner) addKey(obj int, key []byte, start int) error {
	if n := len(s.keys) - obj; n < smallObject {
		h := foldHash(key)
		for _, k := range s.keys[obj:] {
			if k.hash != h {
				continue
			}
			if first := s.stringAt(k.start); equalFold(key, first) {
				return s.duplicate(key, start, first, k.start)
			}
		}
		if s.MaxMembers > 0 && n >= s.MaxMembers {
			return ErrTooManyMembers
		}
		if s.keys == nil {
			// Room for the names of a few nested objects: one allocation
			// for a typical document instead of one per doubling.
			s.keys = make([]keyRef, 0, 2*smallObject)
		}
		s.keys = append(s.keys, keyRef{hash: h, start: start})
		return nil
	}
	t := s.largeObject(obj)
	s.fold = appendFolded(s.fold[:0], key)
	h := maphash.Bytes(tableSeed, s.fold)
	if first, dup := t.find(s, h); dup {
		return s.duplicate(key, start, s.stringAt(first), first)
	}
	if s.MaxMembers > 0 && t.n >= s.MaxMembers {
		return ErrTooManyMembers
	}
	t.insert(s, h, start)
	return nil
}

// largeObject returns the table of the names of the object begun at obj,
// making it from the names compared one by one so far.
func (s *Scanner) largeObject(obj int) *keyTable {
	if n := len(s.tables); n > 0 && s.tables[n-1].obj == obj {
		return &s.tables[n-1]
	}
	s.tables = append(s.tables, keyTable{obj: obj, slots: make([]uint64, 4*smallObject)})
	t := &s.tables[len(s.tables)-1]
	for _, k := range s.keys[obj:] {
		t.insert(s, s.hashAt(k.start), k.start)
	}
	return t
}

// hashAt is the table hash of the name whose string starts at offset start.
func (s *Scanner) hashAt(start int) uint64 {
	s.fold2 = appendFolded(s.fold2[:0], s.bytesAt(start))
	return maphash.Bytes(tableSeed, s.fold2)
}

// find looks for the name s.fold holds, folded, whose hash is h, and
// returns the offset of its string's opening quote if the table has it.
func (t *keyTable) find(s *Scanner, h uint64) (first int, found bool) {
	tag, mask := h&^offsetMask, uint64(len(t.slots)-1)
	for i := t.index(h); t.slots[i] != 0; i = (i + 1) & mask {
		if v := t.slots[i]; v&^offsetMask == tag {
			at := int(v&offsetMask) - 1
			if s.fold2 = appendFolded(s.fold2[:0], s.bytesAt(at)); bytes.Equal(s.fold, s.fold2) {
				return at, true
			}
		}
	}
	return 0, false
}

// insert adds the name whose string starts at offset start and whose hash
// is h, growing the table first when it is three quarters full.
func (t *keyTable) insert(s *Scanner, h uint64, start int) {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow(s)
	}
	mask := uint64(len(t.slots) - 1)
	i := t.index(h)
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = h&^offsetMask | uint64(start+1)
	t.n++
}

// index is the slot where a name of hash h starts looking: the hash's top
// bits.
func (t *keyTable) index(h uint64) uint64 {
	return h >> (64 - bits.Len(uint(len(t.slots)-1)))
}

// grow doubles the table. Up to 2^tagBits slots, a slot's index comes
// from its tag; past that, from its name's hash, computed again.
func (t *keyTable) grow(s *Scanner) {
	old := t.slots
	t.slots, t.n = make([]uint64, 2*len(old)), 0
	for _, v := range old {
		if v == 0 {
			continue
		}
		h := v &^ offsetMask
		if len(t.slots) > tagIndexed {
			h = s.hashAt(int(v&offsetMask) - 1)
		}
		t.insert(s, h, int(v&offsetMask)-1)
	}
}

func (s *Scanner) duplicate(key []byte, start int, first string, firstStart int) error {
	return &DuplicateKeyError{Key: string(key), First: first, Offset: start + 1, FirstOffset: firstStart + 1}
}

// stringAt decodes the string that starts at offset start again, for a
// name the scanner has read before (so it is well formed).
func (s *Scanner) stringAt(start int) string { return string(s.bytesAt(start)) }

// bytesAt is stringAt without the copy: the decoded string is valid until
// the next call.
func (s *Scanner) bytesAt(start int) []byte {
	t := Scanner{b: s.b, pos: start, str: s.again}
	v, _ := t.ReadString()
	s.again = t.str
	return v
}

// foldHash hashes a name so that names equal under simple case folding
// hash alike. An ASCII name is hashed eight bytes at a time with the 0x20
// bit of every byte set, which lowers letters; any other name is first
// folded (appendFolded: every character the smallest of its orbit, which is
// ASCII when the orbit holds an ASCII letter, as the Kelvin sign's does)
// and hashed the same way.
func foldHash(key []byte) uint64 {
	h, ascii := hashLowered(key)
	if ascii {
		return h
	}
	var buf [64]byte
	h, _ = hashLowered(appendFolded(buf[:0], key))
	return h
}

// hashLowered hashes b with the 0x20 bit of every byte set, and reports
// whether b is ASCII. It reads b in words of eight bytes, the last one
// overlapping the one before it, and a name shorter than eight bytes in
// two overlapping halves, so that equal-length names whose bytes agree
// but for that bit hash alike.
func hashLowered(b []byte) (uint64, bool) {
	const (
		lower = 0x2020202020202020
		highs = 0x8080808080808080
		mul   = 0x9e3779b97f4a7c15
	)
	n := len(b)
	h := uint64(n)
	var seen, w uint64
	switch {
	case n >= 8:
		for i := 0; i < n-8; i += 8 {
			w = binary.LittleEndian.Uint64(b[i:])
			seen |= w
			h = (h ^ (w | lower)) * mul
		}
		w = binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		w = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
	case n > 0:
		w = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
	}
	seen |= w
	h = (h ^ (w | lower)) * mul
	return h ^ h>>29, seen&highs == 0
}

// appendFolded appends key with each character replaced by the smallest
// of its folding orbit: two names are equal ignoring case exactly when
// their folded forms are equal.
func appendFolded(dst, key []byte) []byte {
	for i := 0; i < len(key); {
		if c := key[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(key[i:])
		dst = utf8.AppendRune(dst, foldRune(r))
		i += size
	}
	return dst
}

// foldRune returns the smallest character of r's simple folding orbit.
// SimpleFold steps through the orbit in increasing order and wraps to its
// smallest member, so the first step that does not increase lands on it.
func foldRune(r rune) rune {
	for {
		next := unicode.SimpleFold(r)
		if next <= r {
			return next
		}
		r = next
	}
}

// Unique reports the first member that a JSON text names twice in one of
// its objects, compared as RefuseDuplicates compares them, as a
// *DuplicateKeyError; it returns nil for a text that names none, and for
// one that is malformed (a decoder words that). Offline readers call it
// before decoding a record, so that they refuse what the service refuses.
func Unique(b []byte) error {
	s := Scanner{RefuseDuplicates: true}
	s.Reset(b)
	var de *DuplicateKeyError
	if err := s.SkipValue(0); errors.As(err, &de) {
		return de
	}
	return nil
}
