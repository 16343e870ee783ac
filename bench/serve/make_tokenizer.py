"""Trains the tokenizer of bench-serve's run (j) with the tokenizers
library: a byte-level BPE shaped like Qwen2's tokenizer.json (NFC, Qwen2's
split, ChatML special tokens and think tags), with a vocabulary of up to
--vocab tokens, on the TicToc v1 trajectories and the seed papers' texts of
the shared data.

    python bench/serve/make_tokenizer.py --shared ../shared --out tokenizer.json

Prints one line describing it. Exits 3 when the tokenizers library is not
installed, so run.sh can fall back to a test tokenizer and say so.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--vocab", type=int, default=32000)
    args = ap.parse_args()
    try:
        from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
    except ImportError:
        print("make_tokenizer.py: the tokenizers library is not installed", file=sys.stderr)
        return 3
    sys.path.insert(0, str(ROOT / "tokenizer" / "testdata"))
    from make import QWEN2  # the split pattern of the Go tests' Qwen-shaped tokenizer

    paths = sorted((args.shared / "data" / "tictoc-v1").glob("*.json")) + sorted((args.shared / "seeds").glob("*.txt"))
    if not paths:
        print(f"make_tokenizer.py: no text under {args.shared}/data/tictoc-v1 or {args.shared}/seeds", file=sys.stderr)
        return 1
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(QWEN2), behavior="isolated"),
                                                 pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=args.vocab, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    tok.add_tokens([AddedToken("<think>", normalized=False, special=False), AddedToken("</think>", normalized=False, special=False)])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(args.out))
    mb = sum(len(t.encode()) for t in texts) / 1e6
    print(f"a Qwen2-shaped byte-level BPE of {tok.get_vocab_size():,} tokens trained on {len(paths)} files ({mb:.1f} MB) "
          f"with tokenizers {__import__('tokenizers').__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
