package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
)

// tokenFields are the extra_info fields a length reward reads of a
// reply's token counts, as the rewards' contract names them. A nil count
// is sent as null, which leaves out whatever the row held.
type tokenFields struct {
	ResponseTokens int  `json:"response_tokens"`
	ThinkTokens    *int `json:"think_tokens"`
	AnswerTokens   *int `json:"answer_tokens"`
}

// tokenCounts is what a length row's item is given of a reply: the text
// the reward reads and the extra_info fields of its token counts, all from
// the server (eval never counts tokens itself).
//
// The response's length is usage.completion_tokens, which a reply without
// it cannot have: that is an error. When the server split the reasoning
// out (a reasoning parser), the text is the reasoning within the think
// tags open and close followed by the content, and, when the server also
// gave usage.completion_tokens_details.reasoning_tokens, the thinking is
// that many tokens and the answer the rest. Otherwise the thinking and the
// answer are not counted apart, which need (tokensSplit) refuses.
func tokenCounts(reply chat.Reply, text string, need int, open, close string) (string, tokenFields, error) {
	if reply.CompletionTokens == nil {
		if reply.Cached {
			return "", tokenFields{}, errors.New("the cached reply has no usage.completion_tokens: the cache entry predates token counts (or the server reported none); rerun with --no-cache, and eval does not count tokens itself")
		}
		return "", tokenFields{}, errors.New("the reply has no usage.completion_tokens: the server reported no token count, and eval does not count tokens itself")
	}
	f := tokenFields{ResponseTokens: *reply.CompletionTokens}
	if reply.Reasoning != "" {
		text = open + reply.Reasoning + close + text
		if rt := reply.ReasoningTokens; rt != nil {
			if *rt > f.ResponseTokens {
				return "", tokenFields{}, fmt.Errorf("the reply's usage.completion_tokens_details.reasoning_tokens %d exceeds its usage.completion_tokens %d", *rt, f.ResponseTokens)
			}
			answer := f.ResponseTokens - *rt
			f.ThinkTokens, f.AnswerTokens = rt, &answer
		}
	}
	if need == tokensSplit && f.ThinkTokens == nil {
		missing := "usage.completion_tokens_details.reasoning_tokens"
		if reply.Reasoning == "" {
			missing = "reasoning apart from its content (reasoning_content or reasoning, as a server with a reasoning parser returns it)"
		}
		return "", tokenFields{}, fmt.Errorf("the thinking and the answer must be counted apart, and the reply has no %s", missing)
	}
	return text, f, nil
}

// apply sets the counts in ei, by their JSON names: the fields the
// rewards read, whatever Go types they have there.
func (f tokenFields) apply(ei *rewards.ExtraInfo) error {
	raw, err := json.Marshal(f)
	if err == nil {
		err = json.Unmarshal(raw, ei)
	}
	if err != nil {
		return fmt.Errorf("extra_info: token counts: %w", err)
	}
	return nil
}

// formatBudget renders a budget as a label: 4000, not 4e+03.
func formatBudget(b float64) string { return strconv.FormatFloat(b, 'f', -1, 64) }
