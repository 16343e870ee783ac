package verifier

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
)

// Every route reads its body by one grammar, whichever decoder it takes:
// JSON text (RFC 8259) holding one value and nothing after it but white
// space, in which no object names a member twice. The general decoder
// keeps one of two values of a name, and matches names ignoring case, so
// which value a route saw would be an accident of the decoder: names are
// compared after their escapes are decoded and ignoring case by simple
// folding, at every level (inside ground truths and members no route
// reads too, so the batch fast path and the general one always agree),
// and a duplicate is a 400 duplicate_key naming where it is. checkJSON,
// which every route runs before the general decoder, and the fast path
// both refuse duplicates with the scanner's check
// (jsonscan.Scanner.RefuseDuplicates); an OpenRLHF label that is JSON text
// in a string is checked as it is read (labelItem).

// decodeBatchFast parses a batch body {"items": [...]} of well-formed
// items without reflection, on the project's JSON scanner
// (internal/jsonscan). It handles the shape trainers send; on anything else
// (a syntax error, a wrong type, invalid UTF-8, a lone surrogate, a key
// that matches a known one only when case is ignored) it returns ok=false
// and the caller decodes with the general decoder, which also words the
// error. FuzzDecodeBatchFast checks that whenever it succeeds it agrees
// with the general decoder.
//
// Every string and raw value is copied into one arena per batch, so the
// items do not refer to body (a pooled buffer) and cost one allocation
// instead of one per string.
//
// It stops as soon as the body passes a limit or names a member twice:
// refused is then the 4xx to answer (too many items, a duplicate key; a
// string or nesting past its bound makes ok false, and checkJSON words it).
func decodeBatchFast(body []byte, lim limits) (items []rewards.Item, ok bool, refused error) {
	var d fastDecoder
	d.init(body, lim)
	d.arena = make([]byte, 0, len(body))
	seen := false
	var limitErr error
	ok = d.members(batchKeys, func(int) bool {
		if !d.open('[') {
			return false
		}
		items, seen = []rewards.Item{}, true
		if d.close(']') {
			return true
		}
		for {
			if len(items) == lim.maxItems {
				limitErr = tooManyItems("items", lim.maxItems)
				return false
			}
			items = append(items, rewards.Item{})
			if !d.item(&items[len(items)-1]) {
				d.in(func(err error) { d.s.InElement(err, len(items)-1) })
				return false
			}
			more, err := d.s.More(']', "")
			if err != nil {
				return false
			}
			if !more {
				return true
			}
		}
	})
	if limitErr != nil {
		return nil, false, limitErr
	}
	if d.dup != nil {
		return nil, false, duplicateKey(d.dup, "", "")
	}
	if !ok || d.s.Peek() != jsonscan.End || !seen {
		return nil, false, nil
	}
	return items, true, nil
}

// fastDecoder reads the batch layout with the shared scanner.
type fastDecoder struct {
	s     jsonscan.Scanner
	arena []byte
	nums  []float64 // slab for the extra_info numbers, one allocation per 128
	// dup is the duplicate member that stopped the decoder, if one did.
	dup *jsonscan.DuplicateKeyError
}

// init sets d to read body within the limits (0: the defaults), strictly:
// what the general decoder would repair (invalid UTF-8, lone surrogates)
// is left to it. It refuses duplicate members. (A decoder is a local
// variable that init sets, not a pointer a constructor returns, so that
// it stays on the stack.)
func (d *fastDecoder) init(body []byte, lim limits) {
	d.s.RefuseDuplicates, d.s.MaxMembers = true, maxObjectMembers
	d.s.MaxDepth, d.s.MaxString = lim.maxDepth, lim.maxString
	if d.s.MaxDepth <= 0 {
		d.s.MaxDepth = defaultMaxDepth
	}
	if d.s.MaxString <= 0 {
		d.s.MaxString = defaultMaxString
	}
	d.s.StrictUTF8, d.s.StrictSurrogates = true, true
	d.s.Reset(body)
}

// open and close consume c after white space, reporting whether it was
// there.
func (d *fastDecoder) open(c byte) bool {
	if d.s.Peek() == int(c) {
		d.s.Skip(1)
		return true
	}
	return false
}

func (d *fastDecoder) close(c byte) bool { return d.open(c) }

// str reads a JSON string into the arena and returns it.
func (d *fastDecoder) str() (string, bool) {
	if d.s.Peek() != '"' {
		return "", false
	}
	start := len(d.arena)
	var err error
	if d.arena, err = d.s.AppendString(d.arena); err != nil {
		return "", false
	}
	s := d.arena[start:]
	return unsafe.String(unsafe.SliceData(s), len(s)), true
}

// null consumes a JSON null, reporting whether there was one.
func (d *fastDecoder) null() bool {
	return d.s.Peek() == 'n' && d.s.Literal("null") == nil
}

// optNumber reads a number or null into *dst (nil for null).
func (d *fastDecoder) optNumber(dst **float64) bool {
	if d.null() {
		*dst = nil
		return true
	}
	if !jsonscan.IsNumberStart(d.s.Peek()) {
		return false
	}
	n, err := d.s.ReadNumber()
	if err != nil {
		return false
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(n), len(n)), 64)
	if err != nil {
		return false
	}
	if len(d.nums) == cap(d.nums) {
		d.nums = make([]float64, 0, 128)
	}
	d.nums = append(d.nums, f)
	*dst = &d.nums[len(d.nums)-1]
	return true
}

// optInt reads a whole number or null (0) into *dst; anything else, a
// fraction or an exponent included, is the general decoder's to explain.
func (d *fastDecoder) optInt(dst *int) bool {
	if d.null() {
		return true // encoding/json leaves a number unchanged on null
	}
	if !jsonscan.IsNumberStart(d.s.Peek()) {
		return false
	}
	n, err := d.s.ReadNumber()
	if err != nil {
		return false
	}
	v, err := strconv.Atoi(unsafe.String(unsafe.SliceData(n), len(n)))
	*dst = v
	return err == nil
}

// skip consumes any JSON value, checking its grammar.
func (d *fastDecoder) skip(depth int) bool {
	if d.s.Peek() == jsonscan.End {
		return false
	}
	err := d.s.SkipValue(depth)
	d.note(err)
	return err == nil
}

// note keeps err when it is a duplicate member, which the decoder answers
// itself; other errors leave the body to the general decoder.
func (d *fastDecoder) note(err error) {
	if dup, ok := err.(*jsonscan.DuplicateKeyError); ok {
		d.dup = dup
	}
}

// in records, on the way out of a failed value, where the duplicate that
// failed it lies.
func (d *fastDecoder) in(where func(error)) {
	if d.dup != nil {
		where(d.dup)
	}
}

// optString reads a string, or null as "".
func (d *fastDecoder) optString(dst *string) bool {
	if d.null() {
		return true // encoding/json leaves a string unchanged on null
	}
	s, ok := d.str()
	*dst = s
	return ok
}

// raw copies the next value, at nesting depth, into the arena as it is
// written (a json.RawMessage decodes to the same bytes); nil when it is
// not well formed.
func (d *fastDecoder) raw(depth int) json.RawMessage {
	d.s.Peek()
	start := d.s.Pos()
	if !d.skip(depth) {
		return nil
	}
	mark := len(d.arena)
	d.arena = append(d.arena, d.s.Bytes(start, d.s.Pos())...)
	return d.arena[mark:len(d.arena):len(d.arena)]
}

func (d *fastDecoder) item(it *rewards.Item) bool {
	return d.members(itemKeys, func(idx int) bool {
		switch itemKeys[idx] {
		case "data_source":
			return d.optString(&it.DataSource)
		case "solution_str":
			return d.optString(&it.SolutionStr)
		case "ground_truth":
			it.GroundTruth = d.raw(3) // body, items, item
			return it.GroundTruth != nil
		case "group":
			return d.optString(&it.Group)
		case "group_size":
			return d.optInt(&it.GroupSize)
		}
		return d.extraInfo(&it.ExtraInfo)
	})
}

// members reads a JSON object, calling member with the index of each known
// key after its colon; member consumes the value and reports whether it was
// well formed. Unknown keys are skipped; a key that matches a known one only
// when case is ignored makes it fail (the general decoder matches it), and
// so does a key the object already holds (d.dup then says where).
func (d *fastDecoder) members(known jsonscan.Keys, member func(idx int) bool) bool {
	if !d.open('{') {
		return false
	}
	if d.close('}') {
		return true
	}
	obj := d.s.BeginObject()
	for {
		if d.s.Peek() != '"' {
			return false
		}
		start := d.s.Pos()
		key, err := d.s.ReadKey(obj)
		if err != nil {
			d.note(err)
			return false
		}
		idx, folded := known.Index(key)
		if folded || !d.open(':') {
			return false
		}
		if idx >= 0 && !member(idx) || idx < 0 && !d.skip(1) {
			d.in(func(err error) { d.s.InMember(err, start) })
			return false
		}
		more, err := d.s.More('}', "")
		if err != nil {
			return false
		}
		if !more {
			d.s.EndObject(obj)
			return true
		}
	}
}

// The general decoder matches keys case-insensitively; a key that differs
// from a known one only in case goes to it.
var (
	batchKeys     = jsonscan.Keys{"items"}
	itemKeys      = jsonscan.Keys{"data_source", "solution_str", "ground_truth", "extra_info", "group", "group_size"}
	extraInfoKeys = jsonscan.Keys{"time_limit_s", "elapsed_s", "score", "max_score", "accuracy", "timer",
		"response_tokens", "think_tokens", "answer_tokens", "token_budget", "think_budget", "answer_budget", "answer_check", "anytime"}
)

func (d *fastDecoder) extraInfo(ei *rewards.ExtraInfo) bool {
	if d.null() {
		return true
	}
	return d.members(extraInfoKeys, func(idx int) bool {
		switch extraInfoKeys[idx] {
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
		case "response_tokens":
			return d.optNumber(&ei.ResponseTokens)
		case "think_tokens":
			return d.optNumber(&ei.ThinkTokens)
		case "answer_tokens":
			return d.optNumber(&ei.AnswerTokens)
		case "token_budget":
			return d.optNumber(&ei.TokenBudget)
		case "think_budget":
			return d.optNumber(&ei.ThinkBudget)
		case "answer_budget":
			return d.optNumber(&ei.AnswerBudget)
		case "answer_check":
			return d.optString(&ei.AnswerCheck)
		case "anytime":
			ei.Anytime = d.raw(4) // body, items, item, extra_info
			return ei.Anytime != nil
		}
		// timer
		if d.s.Peek() == '{' {
			ei.Timer = "" // timer settings, not a token
			return d.skip(4)
		}
		var tok string
		ok := d.optString(&tok)
		if tok != "" {
			ei.Timer = rewards.TimerToken(tok)
		}
		return ok
	})
}

// maxObjectMembers bounds the members of any one object in a body, whose
// names the duplicate check keeps (8 to 16 bytes each): far past what a
// request needs, it keeps the check of a body that is one huge object to
// a table of about a megabyte, which stays in cache.
const maxObjectMembers = 1 << 16

// Default decoder limits (Options.MaxJSONDepth, Options.MaxStringBytes).
const (
	defaultMaxDepth  = 64
	defaultMaxString = 8 << 20
)

// limits bound what a body can make the decoders do: the elements of its
// list members (items, query, ...), its nesting and the decoded length of
// any one string. (The members of one object are bounded by
// maxObjectMembers.)
type limits struct {
	maxItems, maxDepth, maxString int
}

// checkJSON walks a body once, without building anything, and returns a 4xx
// naming the field when the body passes a limit: a list member in lists
// with more than maxItems elements, nesting deeper than maxDepth, or a
// string longer than maxString; or when an object in it names a member
// twice, or the body goes on after its value. It runs before the general
// decoder, which has no such bounds, keeps one of the two values, and, as
// a stream decoder, reads no further than the value; it stops at the first
// element past a limit, so a hostile body costs one partial pass. A body
// that is otherwise malformed is left to the general decoder to word
// (everything before the syntax error is within the limits, which bounds
// what that decoder does).
func checkJSON(body []byte, lim limits, lists ...string) error {
	var d fastDecoder
	d.init(body, lim)
	field := "body"
	over := func(err error) error {
		if dup, ok := err.(*jsonscan.DuplicateKeyError); ok {
			return duplicateKey(dup, "", "")
		}
		switch {
		case errors.Is(err, jsonscan.ErrTooDeep):
			return badRequest("json_too_deep", field, fmt.Sprintf("%s: JSON nested deeper than %d levels (byte %d)", field, max(lim.maxDepth, 1), d.s.Pos()))
		case errors.Is(err, jsonscan.ErrTooLong):
			return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "string_too_long", Field: field,
				Message: fmt.Sprintf("%s: a string longer than %d bytes (byte %d)", field, lim.maxString, d.s.Pos())}
		case errors.Is(err, jsonscan.ErrTooManyMembers):
			return tooManyMembers(field, fmt.Sprintf("byte %d", d.s.Pos()))
		}
		return nil
	}
	// The general decoder replaces invalid UTF-8; here it only has to be
	// walked.
	d.s.StrictUTF8, d.s.StrictSurrogates = false, false
	if !d.open('{') {
		if d.s.Peek() == jsonscan.End {
			return nil
		}
		if err := d.s.SkipValue(0); err != nil {
			return over(err)
		}
		return trailingData(body, d.s.Pos())
	}
	obj := d.s.BeginObject()
	for first := true; ; first = false {
		if d.close('}') {
			return trailingData(body, d.s.Pos())
		}
		if !first && !d.open(',') {
			return nil
		}
		// Keys may be escaped ("it\u0065ms" is items to the general
		// decoder), so read them as strings.
		if d.s.Peek() != '"' {
			return nil
		}
		start := d.s.Pos()
		key, err := d.s.ReadKey(obj)
		if err != nil {
			return over(err)
		}
		if !d.open(':') {
			return nil
		}
		field = string(key)
		isList := false
		for _, l := range lists {
			_, folded := jsonscan.Keys{l}.Index(key)
			isList = isList || field == l || folded
		}
		if !isList || d.s.Peek() != '[' {
			if err := d.s.SkipValue(1); err != nil {
				return over(d.s.InMember(err, start))
			}
			continue
		}
		d.s.Skip(1)
		name := field
		for n := 0; ; n++ {
			if n == 0 && d.close(']') {
				break
			}
			if n == lim.maxItems {
				return tooManyItems(name, lim.maxItems)
			}
			field = name + "[" + strconv.Itoa(n) + "]"
			if err := d.s.SkipValue(2); err != nil {
				return over(d.s.InMember(d.s.InElement(err, n), start))
			}
			more, err := d.s.More(']', "")
			if err != nil {
				return nil
			}
			if !more {
				break
			}
		}
	}
}

// tooManyMembers is the 413 for an object past maxObjectMembers, found in
// field where the message says ("byte 120").
func tooManyMembers(field, where string) error {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "too_many_members", Field: field,
		Message: fmt.Sprintf("%s: an object with more than %d members (%s), the limit per object", field, maxObjectMembers, where)}
}

// duplicateKey is the 400 for a member named twice: field names the second
// from the body (prefix is where the text the scanner read lies in it), and
// the message gives both names and their bytes, counted in that text (of
// says which, when it is not the body).
func duplicateKey(dup *jsonscan.DuplicateKeyError, prefix, of string) *apiError {
	field := dup.Field(prefix)
	return badRequest("duplicate_key", field, fmt.Sprintf("%s: %s%v; send each key once", field, of, dup))
}

// trailingData refuses anything but white space in body after offset end,
// where its value ends, as the general decoder words it (save that it
// quotes the character there, not its first byte).
func trailingData(body []byte, end int) error {
	var s jsonscan.Scanner
	s.Reset(body)
	s.Skip(end)
	if s.Peek() == jsonscan.End {
		return nil
	}
	r, _ := utf8.DecodeRune(body[s.Pos():])
	return badRequest("malformed_json", "", fmt.Sprintf("malformed JSON at byte %d: invalid character %s after top-level value",
		s.Pos()+1, strconv.QuoteRune(r)))
}
