"""A tiny model for trying the GRPO recipe on a CPU: a byte-level BPE
tokenizer trained on the prompts of your synth rows, with ChatML special
tokens and a chat template that offers tools (what TRL's qwen3 response
schema and VeRL's hermes tool parser read), and a two-layer Llama with
32-wide hidden states, initialised at random with a fixed seed. It learns
nothing worth keeping; it runs every step of train.py in seconds, with no
download and no GPU.

    python examples/trl-grpo/tiny_model.py --rows out/puzzles.parquet --out out/tiny-model

The project's CPU test tiers use the same model (python/tests/localstack.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# The chat template of the tiny model: ChatML turns, tools listed in the
# system turn, tool calls as <tool_call>{"name": ..., "arguments": ...}</tool_call>
# (what VeRL's hermes tool parser and TRL's qwen3 schema read), tool results as
# user turns.
CHAT_TEMPLATE = (
    "{%- set sys = messages[0].content if messages and messages[0].role == 'system' else none -%}"
    "{%- if tools or sys is not none -%}<|im_start|>system\n"
    "{%- if sys is not none %}{{ sys }}\n{% endif -%}"
    "{%- if tools -%}Tools you may call, one JSON object each:\n<tools>\n"
    "{%- for tool in tools %}{{ tool | tojson }}\n{% endfor -%}"
    "</tools>\nTo call one, answer with <tool_call>{\"name\": NAME, \"arguments\": {...}}</tool_call>.\n"
    "{%- endif -%}<|im_end|>\n{%- endif -%}"
    "{%- for m in messages -%}"
    "{%- if m.role == 'system' and loop.first -%}"
    "{%- elif m.role == 'assistant' -%}<|im_start|>assistant\n{{ m.content or '' }}"
    "{%- for call in (m.tool_calls or []) -%}"
    "{%- set args = call.function.arguments -%}"
    "<tool_call>{\"name\": \"{{ call.function.name }}\", \"arguments\": "
    "{{ args if args is string else (args | tojson) }}}</tool_call>"
    "{%- endfor -%}<|im_end|>\n"
    "{%- elif m.role == 'tool' -%}<|im_start|>user\n<tool_response>{{ m.content or '' }}</tool_response><|im_end|>\n"
    "{%- else -%}<|im_start|>{{ m.role }}\n{{ m.content or '' }}<|im_end|>\n"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_start|>assistant\n{%- endif -%}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"]


def train_tokenizer(texts: Iterable[str], out: Path, vocab_size: int = 2048) -> Path:
    """A byte-level BPE tokenizer trained on ``texts``, with ChatML special
    tokens and CHAT_TEMPLATE, saved to ``out``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=SPECIAL_TOKENS[1:2],
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return out


#: The tiny Llama: two layers, 32-wide hidden states.
TINY = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
        "num_key_value_heads": 2}


def random_llama(tokenizer: Any, out: Path, seed: int = 0, **shape: Any) -> Path:
    """A Llama of the given shape (default TINY) initialised at random with a
    fixed seed, saved with the tokenizer to ``out``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        max_position_embeddings=16384,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        **(shape or TINY),
    )
    LlamaForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out



def prompts(paths: Iterable[Path]) -> Iterator[str]:
    """The text of every prompt message of the rows (Parquet or JSON Lines,
    as the synth commands write them)."""
    for path in paths:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows: Iterable[Any] = pq.read_table(path, columns=["prompt"]).column("prompt").to_pylist()
        else:
            rows = (json.loads(line)["prompt"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        for prompt in rows:
            for m in prompt:
                yield m["content"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", nargs="+", required=True, type=Path, help="synth outputs whose prompts train the tokenizer")
    p.add_argument("--out", required=True, type=Path, help="the model directory to write")
    p.add_argument("--vocab-size", type=int, default=2048)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    from transformers import AutoTokenizer

    train_tokenizer(prompts(args.rows), args.out, args.vocab_size)
    random_llama(AutoTokenizer.from_pretrained(args.out), args.out, seed=args.seed)
    print(f"tiny_model.py: a {TINY['num_hidden_layers']}-layer Llama with a {args.vocab_size}-token tokenizer written to {args.out}")


if __name__ == "__main__":
    main()
