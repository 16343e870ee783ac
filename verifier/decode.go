package verifier

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/timeaware/timeaware/rewards"
)

// decodeBatchFast parses a batch body {"items": [...]} of well-formed
// items without reflection. It handles the shape trainers send; on
// anything else (a syntax error, a wrong type, invalid UTF-8, a number
// that is not plain JSON) it returns ok=false and the caller decodes with
// the general decoder, which also words the error. FuzzDecodeBatchFast
// checks that whenever it succeeds it agrees with the general decoder.
//
// Every string and raw value is copied into one arena per batch, so the
// items do not refer to body (a pooled buffer) and cost one allocation
// instead of one per string.
//
// It stops as soon as the body passes a limit: limitErr is then the 4xx to
// answer (too many items; a string or nesting past its bound makes ok false,
// and checkJSON words it).
func decodeBatchFast(body []byte, lim limits) (items []rewards.Item, ok bool, limitErr error) {
	d := fastDecoder{b: body, arena: make([]byte, 0, len(body)), maxDepth: lim.maxDepth, maxStr: lim.maxString}
	seen := false
	ok = d.members(func(key string) bool {
		if key != "items" {
			return !foldsTo(key, "items") && d.skip(1)
		}
		d.ws()
		if !d.eat('[') {
			return false
		}
		items, seen = []rewards.Item{}, true
		d.ws()
		if d.eat(']') {
			return true
		}
		for {
			if len(items) == lim.maxItems {
				limitErr = tooManyItems("items", lim.maxItems)
				return false
			}
			items = append(items, rewards.Item{})
			if !d.item(&items[len(items)-1]) {
				return false
			}
			d.ws()
			if d.eat(']') {
				return true
			}
			if !d.eat(',') {
				return false
			}
		}
	})
	d.ws()
	if limitErr != nil {
		return nil, false, limitErr
	}
	if !ok || d.i != len(d.b) || !seen {
		return nil, false, nil
	}
	return items, true, nil
}

type fastDecoder struct {
	b     []byte
	i     int
	arena []byte
	nums  []float64 // slab for the extra_info numbers, one allocation per 128
	// maxDepth and maxStr bound nesting and a string's decoded bytes (0:
	// defaults); tooDeep and tooLong record which one stopped the decoder.
	maxDepth, maxStr int
	tooDeep, tooLong bool
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// key reads `"name":` and returns the name (not copied to the arena).
func (d *fastDecoder) key() (string, bool) {
	d.ws()
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	for d.i < len(d.b) && d.b[d.i] != '"' {
		if d.b[d.i] == '\\' || d.b[d.i] < 0x20 {
			return "", false // escaped keys: let the general decoder match them
		}
		d.i++
	}
	if d.i >= len(d.b) {
		return "", false
	}
	k := unsafe.String(unsafe.SliceData(d.b[start:]), d.i-start)
	d.i++
	d.ws()
	return k, d.eat(':')
}

// str reads a JSON string into the arena and returns it.
func (d *fastDecoder) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := len(d.arena)
	maxStr := d.maxStr
	if maxStr <= 0 {
		maxStr = defaultMaxString
	}
	for {
		run := d.i
		d.i += plainRun(d.b[d.i:])
		d.arena = append(d.arena, d.b[run:d.i]...)
		if len(d.arena)-start > maxStr {
			d.tooLong = true
			return "", false
		}
		if d.i >= len(d.b) {
			return "", false
		}
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			s := d.arena[start:]
			return unsafe.String(unsafe.SliceData(s), len(s)), true
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n <= 1 {
				return "", false
			}
			d.arena = append(d.arena, d.b[d.i:d.i+n]...)
			d.i += n
		default: // backslash
			if d.i+1 >= len(d.b) {
				return "", false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				d.arena = append(d.arena, e)
			case 'b':
				d.arena = append(d.arena, '\b')
			case 'f':
				d.arena = append(d.arena, '\f')
			case 'n':
				d.arena = append(d.arena, '\n')
			case 'r':
				d.arena = append(d.arena, '\r')
			case 't':
				d.arena = append(d.arena, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", false
				}
				if utf16Surrogate(r) {
					// A pair \uD83D\uDE00 makes one rune; anything else is
					// left to the general decoder's replacement rules.
					if r >= 0xDC00 || d.i+6 > len(d.b) || d.b[d.i] != '\\' || d.b[d.i+1] != 'u' {
						return "", false
					}
					d.i += 2
					r2, ok := d.hex4()
					if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
						return "", false
					}
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				}
				d.arena = utf8.AppendRune(d.arena, r)
			default:
				return "", false
			}
		}
	}
}

// plainRun returns the length of b's prefix that needs no decoding: no
// quote, backslash, control byte or non-ASCII byte. It tests eight bytes at
// a time (the has-zero-byte trick on 64-bit words), as model responses are
// long runs of plain text between escapes.
func plainRun(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ (ones * '"')
		bs := w ^ (ones * '\\')
		special := (q - ones) &^ q
		special |= (bs - ones) &^ bs
		special |= w - ones*0x20 // a byte below 0x20 borrows into its high bit
		special |= w
		if special &= highs; special != 0 {
			// The lowest flagged byte is a true special byte: borrows only
			// carry upwards, into bytes after it.
			return i + bits.TrailingZeros64(special)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return i
}

func utf16Surrogate(r rune) bool { return r >= 0xD800 && r <= 0xDFFF }

func (d *fastDecoder) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// null consumes a JSON null.
func (d *fastDecoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// number reads a JSON number (strict grammar) as a float64.
func (d *fastDecoder) number() (float64, bool) {
	start := d.i
	d.eat('-')
	switch {
	case d.eat('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return 0, false
	}
	if d.eat('.') && !d.digits() {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if !d.eat('+') {
			d.eat('-')
		}
		if !d.digits() {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(d.b[start:]), d.i-start), 64)
	return f, err == nil
}

func (d *fastDecoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// optNumber reads a number or null into *dst (nil for null).
func (d *fastDecoder) optNumber(dst **float64) bool {
	d.ws()
	if d.null() {
		*dst = nil
		return true
	}
	f, ok := d.number()
	if !ok {
		return false
	}
	if len(d.nums) == cap(d.nums) {
		d.nums = make([]float64, 0, 128)
	}
	d.nums = append(d.nums, f)
	*dst = &d.nums[len(d.nums)-1]
	return true
}

// skip consumes any JSON value, checking its grammar.
func (d *fastDecoder) skip(depth int) bool {
	maxDepth := d.maxDepth
	if maxDepth <= 0 {
		maxDepth = defaultMaxDepth
	}
	if depth > maxDepth {
		d.tooDeep = true
		return false
	}
	d.ws()
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		mark := len(d.arena)
		_, ok := d.str()
		d.arena = d.arena[:mark]
		return ok
	case c == '{':
		d.i++
		d.ws()
		if d.eat('}') {
			return true
		}
		for {
			d.ws()
			mark := len(d.arena)
			if _, ok := d.str(); !ok {
				return false
			}
			d.arena = d.arena[:mark]
			d.ws()
			if !d.eat(':') || !d.skip(depth+1) {
				return false
			}
			d.ws()
			if d.eat('}') {
				return true
			}
			if !d.eat(',') {
				return false
			}
		}
	case c == '[':
		d.i++
		d.ws()
		if d.eat(']') {
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			d.ws()
			if d.eat(']') {
				return true
			}
			if !d.eat(',') {
				return false
			}
		}
	case c == 't':
		return d.lit("true")
	case c == 'f':
		return d.lit("false")
	case c == 'n':
		return d.null()
	default:
		_, ok := d.number()
		return ok
	}
}

func (d *fastDecoder) lit(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// optString reads a string, or null as "".
func (d *fastDecoder) optString(dst *string) bool {
	d.ws()
	if d.null() {
		return true // encoding/json leaves a string unchanged on null
	}
	s, ok := d.str()
	*dst = s
	return ok
}

func (d *fastDecoder) item(it *rewards.Item) bool {
	return d.members(func(key string) bool {
		switch key {
		case "data_source":
			return d.optString(&it.DataSource)
		case "solution_str":
			return d.optString(&it.SolutionStr)
		case "ground_truth":
			d.ws()
			start := d.i
			if !d.skip(3) { // body, items, item
				return false
			}
			mark := len(d.arena)
			d.arena = append(d.arena, d.b[start:d.i]...)
			it.GroundTruth = d.arena[mark:len(d.arena):len(d.arena)]
			return true
		case "extra_info":
			return d.extraInfo(&it.ExtraInfo)
		}
		return !foldsTo(key, itemKeys...) && d.skip(3)
	})
}

// members reads a JSON object, calling member after each key's colon;
// member consumes the value and reports whether it was well formed.
func (d *fastDecoder) members(member func(key string) bool) bool {
	d.ws()
	if !d.eat('{') {
		return false
	}
	d.ws()
	if d.eat('}') {
		return true
	}
	for {
		key, ok := d.key()
		if !ok || !member(key) {
			return false
		}
		d.ws()
		if d.eat('}') {
			return true
		}
		if !d.eat(',') {
			return false
		}
	}
}

// The general decoder matches keys case-insensitively; a key that differs
// from a known one only in case goes to it.
var (
	itemKeys      = []string{"data_source", "solution_str", "ground_truth", "extra_info"}
	extraInfoKeys = []string{"time_limit_s", "elapsed_s", "score", "max_score", "accuracy", "timer"}
)

func foldsTo(key string, known ...string) bool {
	for _, k := range known {
		if len(k) == len(key) && strings.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func (d *fastDecoder) extraInfo(ei *rewards.ExtraInfo) bool {
	d.ws()
	if d.null() {
		return true
	}
	return d.members(func(key string) bool {
		switch key {
		case "time_limit_s":
			return d.optNumber(&ei.TimeLimitS)
		case "elapsed_s":
			return d.optNumber(&ei.ElapsedS)
		case "score":
			return d.optNumber(&ei.Score)
		case "max_score":
			return d.optNumber(&ei.MaxScore)
		case "accuracy":
			return d.optNumber(&ei.Accuracy)
		case "timer":
			d.ws()
			if d.i < len(d.b) && d.b[d.i] == '{' {
				ei.Timer = "" // timer settings, not a token
				return d.skip(4)
			}
			var tok string
			ok := d.optString(&tok)
			if tok != "" {
				ei.Timer = rewards.TimerToken(tok)
			}
			return ok
		}
		return !foldsTo(key, extraInfoKeys...) && d.skip(4)
	})
}

// Default decoder limits (Options.MaxJSONDepth, Options.MaxStringBytes).
const (
	defaultMaxDepth  = 64
	defaultMaxString = 8 << 20
)

// limits bound what a body can make the decoders do: the elements of its
// list members (items, query, ...), its nesting and the decoded length of
// any one string.
type limits struct {
	maxItems, maxDepth, maxString int
}

// checkJSON walks a body once, without building anything, and returns a 4xx
// naming the field when the body passes a limit: a list member in lists
// with more than maxItems elements, nesting deeper than maxDepth, or a
// string longer than maxString. It runs before the general decoder, which
// has no such bounds; it stops at the first element past a limit, so a
// hostile body costs one partial pass. A body that is merely malformed is
// left to the general decoder to word (everything before the syntax error
// is within the limits, which bounds what that decoder does).
func checkJSON(body []byte, lim limits, lists ...string) error {
	d := fastDecoder{b: body, maxDepth: lim.maxDepth, maxStr: lim.maxString}
	field := "body"
	over := func() error {
		switch {
		case d.tooDeep:
			return badRequest("json_too_deep", field, fmt.Sprintf("%s: JSON nested deeper than %d levels (byte %d)", field, max(lim.maxDepth, 1), d.i))
		case d.tooLong:
			return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "string_too_long", Field: field,
				Message: fmt.Sprintf("%s: a string longer than %d bytes (byte %d)", field, lim.maxString, d.i)}
		}
		return nil
	}
	d.ws()
	if !d.eat('{') {
		d.skip(0)
		return over()
	}
	for first := true; ; first = false {
		d.ws()
		if d.eat('}') {
			return nil
		}
		if !first && !d.eat(',') {
			return over()
		}
		d.ws()
		// Keys may be escaped ("it\u0065ms" is items to the general
		// decoder), so read them as strings.
		d.arena = d.arena[:0]
		key, ok := d.str()
		d.ws()
		if !ok || !d.eat(':') {
			return over()
		}
		field = strings.Clone(key)
		d.ws()
		isList := false
		for _, l := range lists {
			isList = isList || foldsTo(field, l)
		}
		if !isList || d.i >= len(d.b) || d.b[d.i] != '[' {
			if !d.skip(1) {
				return over()
			}
			continue
		}
		d.i++
		name := field
		for n := 0; ; n++ {
			d.ws()
			if n == 0 && d.eat(']') {
				break
			}
			if n == lim.maxItems {
				return tooManyItems(name, lim.maxItems)
			}
			field = name + "[" + strconv.Itoa(n) + "]"
			if !d.skip(2) {
				return over()
			}
			d.ws()
			if d.eat(']') {
				break
			}
			if !d.eat(',') {
				return over()
			}
		}
	}
}
