package prefpairs

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/conversation"
)

// DefaultDirectInstruction is the guidance DirectGenerator gives the model
// unless GeneratorOptions.Instruction overrides it.
const DefaultDirectInstruction = "For this turn, reply to the user's most recent message using only " +
	"what is already in this conversation, including earlier tool results. Do not call any tool and " +
	"do not say that you will look something up. If the information you have may be out of date, " +
	"you may say so briefly, but still give your best answer. Keep the reply short and to the point."

// GeneratorOptions configures DirectGenerator. URL, Model, APIKey,
// Concurrency, MaxRetries, Backoff, Timeout, CacheDir and HTTPClient are
// the chat client's options, with the same meanings and defaults (see
// chat.Options).
type GeneratorOptions struct {
	URL, Model, APIKey string
	// Instruction is the system guidance asking for a direct reply; "" means
	// DefaultDirectInstruction. It is added at the end of the conversation's
	// first system message (see DirectGenerator).
	Instruction string
	// Temperature is the sampling temperature (default 0, greedy).
	Temperature float64
	// MaxTokens caps the reply length; 0 omits max_tokens from the request.
	MaxTokens               int
	Concurrency, MaxRetries int
	Backoff, Timeout        time.Duration
	CacheDir                string
	HTTPClient              *http.Client
}

// DirectRequest asks for a direct reply to the final user message of
// Messages. Key names the sample in errors; Tools, if any, are sent so the
// chat template renders the same prompt the agent saw, with tool_choice
// "none".
type DirectRequest struct {
	Key      SampleKey
	Messages []conversation.Message
	Tools    []conversation.Tool
}

// GeneratorStats counts what a DirectGenerator did: the counters of its
// chat client (see chat.Stats), a reply without text counting as a failure.
type GeneratorStats = chat.Stats

// DirectGenerator produces direct replies — answers to the user's latest
// question that call no tool — through an OpenAI-compatible chat-completions
// endpoint (vLLM, SGLang, OpenAI), with the chat package's client: bounded
// concurrency, retries, and the on-disk cache keyed by request when
// CacheDir is set. It is safe for concurrent use.
//
// The instruction is merged into the conversation's first system message,
// after its text and separated by a blank line, so that it is the last
// system guidance the model reads; when the conversation has no system
// message one holding the instruction is inserted first. It is not sent as
// a trailing system message because many chat templates reject a system
// message anywhere but first.
type DirectGenerator struct {
	client      *chat.Client
	instruction string
	temperature float64
	maxTokens   int
}

// NewDirectGenerator validates opt and returns a generator.
func NewDirectGenerator(opt GeneratorOptions) (*DirectGenerator, error) {
	switch {
	case opt.MaxTokens < 0:
		return nil, fmt.Errorf("generate-direct: max-tokens must not be negative, got %d", opt.MaxTokens)
	case opt.Temperature < 0:
		return nil, fmt.Errorf("generate-direct: temperature must not be negative, got %g", opt.Temperature)
	}
	client, err := chat.New(chat.Options{
		Name: "generate-direct", URL: opt.URL, Model: opt.Model, APIKey: opt.APIKey,
		Concurrency: opt.Concurrency, MaxRetries: opt.MaxRetries, Backoff: opt.Backoff,
		Timeout: opt.Timeout, CacheDir: opt.CacheDir, HTTPClient: opt.HTTPClient,
	})
	if err != nil {
		return nil, err
	}
	g := &DirectGenerator{client: client, instruction: opt.Instruction, temperature: opt.Temperature, maxTokens: opt.MaxTokens}
	if strings.TrimSpace(g.instruction) == "" {
		g.instruction = DefaultDirectInstruction
	}
	return g, nil
}

// Endpoint returns the chat-completions URL requests are sent to.
func (g *DirectGenerator) Endpoint() string { return g.client.Endpoint() }

// Concurrency returns the most requests the generator has in flight at once
// (GeneratorOptions.Concurrency, or the chat client's default). It makes
// DirectGenerator a BoundedSource.
func (g *DirectGenerator) Concurrency() int { return g.client.Concurrency() }

// Stats returns a snapshot of the generator's counters.
func (g *DirectGenerator) Stats() GeneratorStats { return g.client.Stats() }

// Generate returns the model's direct reply for req, from the cache when
// possible. It never returns placeholder text: a reply that is empty or
// calls tools is an error, and is not cached.
func (g *DirectGenerator) Generate(ctx context.Context, req DirectRequest) (string, error) {
	r, err := g.client.Complete(ctx, g.request(req))
	if err != nil {
		return "", fmt.Errorf("generate-direct: sample %s (elapse %d): %w", req.Key.ID, req.Key.Elapse, err)
	}
	return r.Content, nil
}

// checkDirect rejects a reply that is not a direct answer.
func checkDirect(r chat.Reply) error {
	if len(r.ToolCalls) > 0 || r.Content == "" {
		return fmt.Errorf("model returned no text (finish_reason %q)", r.FinishReason)
	}
	return nil
}

// request is the chat request for req: its messages with the instruction
// merged into the first system message, and its tools with tool_choice
// "none".
func (g *DirectGenerator) request(req DirectRequest) chat.Request {
	msgs := make([]conversation.Message, 0, len(req.Messages)+1)
	merged := false
	for _, m := range req.Messages {
		w := chatMessage(m)
		if m.Role == conversation.RoleSystem && !merged {
			merged = true
			text := g.instruction
			if base := strings.TrimRight(m.Text(), " \t\r\n"); base != "" {
				text = base + "\n\n" + g.instruction
			}
			w.Content = &text
		}
		msgs = append(msgs, w)
	}
	if len(req.Messages) > 0 && !merged {
		text := g.instruction
		msgs = append([]conversation.Message{{Role: conversation.RoleSystem, Content: &text}}, msgs...)
	}
	r := chat.Request{
		Messages: msgs, Temperature: g.temperature, MaxTokens: g.maxTokens, Check: checkDirect,
	}
	if len(req.Tools) > 0 {
		r.Tools, r.ToolChoice = req.Tools, "none"
	}
	return r
}

// chatMessage converts a conversation message to the wire form: tool calls
// with type "function" and "{}" for empty arguments, and null content only
// for an assistant turn that calls tools.
func chatMessage(m conversation.Message) conversation.Message {
	w := conversation.Message{Role: m.Role, ToolCallID: m.ToolCallID, Name: m.Name}
	for _, tc := range m.ToolCalls {
		typ := tc.Type
		if typ == "" {
			typ = "function"
		}
		args := string(tc.Function.Arguments)
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		w.ToolCalls = append(w.ToolCalls, conversation.ToolCall{
			ID: tc.ID, Type: typ, Function: conversation.FunctionCall{Name: tc.Function.Name, Arguments: conversation.Arguments(args)},
		})
	}
	if m.Content != nil || m.Role != conversation.RoleAssistant || len(w.ToolCalls) == 0 {
		text := m.Text()
		w.Content = &text
	}
	return w
}
