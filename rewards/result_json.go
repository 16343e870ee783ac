package rewards

import (
	"strconv"
	"unicode/utf8"
)

// AppendJSON appends the result as the JSON object trainers receive:
//
//	{"score": x, "<key>": v, ..., "error": "..."}
//
// keys are the reward's Keys (nil when the data source is unknown, leaving
// only score and error). err, when non-nil, is written as "error"; pass
// res.Err, or a decoding error for an item that never reached a reward.
// Hand-written because batch responses encode many results per request.
func (res Result) AppendJSON(buf []byte, keys []string, err error) []byte {
	buf = append(buf, `{"score":`...)
	buf = appendFloat(buf, res.Score)
	for i, k := range keys {
		buf = append(buf, ',', '"')
		buf = append(buf, k...)
		buf = append(buf, '"', ':')
		v := 0.0
		if i < len(res.Details) {
			v = res.Details[i]
		}
		buf = appendFloat(buf, v)
	}
	if err != nil {
		buf = append(buf, `,"error":`...)
		buf = appendJSONString(buf, err.Error())
	}
	return append(buf, '}')
}

func appendFloat(buf []byte, f float64) []byte {
	if !finite(f) {
		return append(buf, '0')
	}
	if f == float64(int64(f)) && f > -1e15 && f < 1e15 {
		return strconv.AppendInt(buf, int64(f), 10)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string, replacing invalid UTF-8.
func appendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '"' || c == '\\' {
				buf = append(buf, '\\', c)
			} else if c < 0x20 {
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				buf = append(buf, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, `\ufffd`...)
		} else {
			buf = append(buf, s[i:i+size]...)
		}
		i += size
	}
	return append(buf, '"')
}
