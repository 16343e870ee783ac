"""Makes this directory's tokenizers and the counts the Go tests hold the
tokenizer package to: each tokenizer is trained here with Hugging Face's
tokenizers (pinned in python/tests/trainers/requirements.txt) on a seeded
corpus, shaped like a family of real tokenizer.json files, and every text
of texts.jsonl is encoded by it. The counts come from tokenizers alone,
never from the Go code they check.

    python tokenizer/testdata/make.py            # train and count again: rewrite the files
    python tokenizer/testdata/make.py --check    # count again with the files here, compare

The trainers tier runs --check, so a change in the pinned tokenizers'
counting shows as a failing test rather than as stale counts; it trains
nothing, so it does not depend on training being the same everywhere.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from tokenizers import AddedToken, Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers

HERE = Path(__file__).resolve().parent

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
          r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
         r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
O200K = (r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"""
         r"""|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
DEEPSEEK_CJK = r"""[一-龥぀-ゟ゠-ヿ]+"""
DEEPSEEK = (r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
            r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

WORDS = ["time", "deadline", "minutes", "hours", "seconds", "budget", "the", "a", "of", "to", "and", "in", "is", "it", "that", "was", "for", "on", "are", "with", "as", "answer", "think", "puzzle", "calendar", "Monday", "Tuesday", "January", "March", "year", "week", "day", "clock", "late", "early", "soon", "don't", "it's", "we're", "they've", "I'm", "you'll", "she'd", "IT'S", "DON'T", "Time", "TIME", "tImE"]
UNICODE = ["é", "e\u0301", "Å", "A\u030a", "ß", "İ", "ﬁ", "①", "²", "½", "٣", "７", "日本語", "時間", "ひらがな",
           "カタカナ", "한국어", "中文字", "Привет", "γειά", "עברית", "مرحبا", "हिन्दी", "🙂", "👩\u200d💻", "🇯🇵",
           "\u00a0", "\u3000", "\u2028", "\u200b", "\ufeff", "\u2003", "\u0085", "™", "€", "→", "…", "“quoted”"]
PUNCT = list(".,;:!?()[]{}<>/\\|@#$%^&*-_=+~`'\"")
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n", "\n ", "    \n", "\t\t", " \t "]


def corpus_line(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(3, 30)):
        r = rng.random()
        if r < 0.55:
            parts.append(rng.choice(WORDS))
        elif r < 0.7:
            parts.append(str(rng.randint(0, 10 ** rng.randint(1, 7))))
        elif r < 0.85:
            parts.append(rng.choice(UNICODE))
        else:
            parts.append(rng.choice(PUNCT))
        parts.append(rng.choice([" "] * 6 + SPACES))
    return "".join(parts)


def train(tok: Tokenizer, rng: random.Random, vocab: int, special: list[str], alphabet: bool) -> None:
    lines = [corpus_line(rng) for _ in range(3000)]
    lines += ["<think>\nThe deadline is in 3 hours.\n</think>\n<answer>42</answer>"] * 50
    kw = {"initial_alphabet": pre_tokenizers.ByteLevel.alphabet()} if alphabet else {}
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, special_tokens=special, show_progress=False, **kw)
    tok.train_from_iterator(lines, trainer=trainer)


def byte_level(name: str, rng: random.Random, pre, normalizer=None, ignore_merges=False, special=(), added=()) -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=ignore_merges))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    train(tok, rng, 700, list(special), alphabet=True)
    for a in added:
        tok.add_tokens([a])
    return tok


def with_byte_fallback(tok: Tokenizer) -> Tokenizer:
    """tok with the 256 byte tokens <0x00>…<0xFF> in its vocabulary (not as
    added tokens), as SentencePiece conversions ship them."""
    d = json.loads(tok.to_str())
    vocab = d["model"]["vocab"]
    nxt = max(vocab.values()) + 1
    nxt = max([nxt] + [t["id"] + 1 for t in d["added_tokens"]])
    for b in range(256):
        key = f"<0x{b:02X}>"
        if key not in vocab:
            vocab[key] = nxt
            nxt += 1
    d["model"]["byte_fallback"] = True
    return Tokenizer.from_str(json.dumps(d))


def sentencepiece_like(rng: random.Random, normalizer, pre, unk: bool, fuse: bool) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>" if unk else None, fuse_unk=fuse))
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre is not None:
        tok.pre_tokenizer = pre
    train(tok, rng, 600, ["<unk>", "<s>", "</s>"], alphabet=False)
    return tok


def string_merges(d: dict) -> dict:
    """d, a tokenizer.json, with its merges in the older "a b" form, which
    tokenizers still reads (and writes back as pairs)."""
    d["model"]["merges"] = [" ".join(m) for m in d["model"]["merges"]]
    return d


def tokenizers() -> dict[str, Tokenizer]:
    rng = random.Random(20261128)
    think = [AddedToken("<think>", normalized=False, special=False), AddedToken("</think>", normalized=False, special=False)]
    out = {}
    out["gpt2"] = (byte_level("gpt2", rng, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
                                           special=["<|endoftext|>"]))
    out["llama3"] = byte_level("llama3", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        ignore_merges=True, special=["<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>", "<|end_header_id|>"])
    out["qwen2"] = byte_level("qwen2", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        normalizer=normalizers.NFC(), special=["<|endoftext|>", "<|im_start|>", "<|im_end|>"], added=think)
    out["o200k"] = byte_level("o200k", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(O200K), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        special=["<|endoftext|>", "<|return|>"])
    out["deepseek"] = byte_level("deepseek", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{N}{1,3}"), behavior="isolated", invert=False),
        pre_tokenizers.Split(Regex(DEEPSEEK_CJK), behavior="isolated", invert=False),
        pre_tokenizers.Split(Regex(DEEPSEEK), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        special=["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"],
        added=[AddedToken("<think>", normalized=True, special=False), AddedToken("</think>", normalized=True, special=False)])
    out["roberta"] = byte_level("roberta", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=True)]),
        normalizer=normalizers.Sequence([normalizers.Strip(left=True, right=False), normalizers.Lowercase(), normalizers.NFKC()]),
        special=["<s>", "</s>", "<pad>"],
        added=[AddedToken("<mask>", lstrip=True, rstrip=False, normalized=False, special=True),
               AddedToken("<sep>", lstrip=False, rstrip=True, normalized=True, special=False),
               AddedToken("time", single_word=True, normalized=False, special=False)])
    out["splitbehaviours"] = byte_level("splitbehaviours", rng, pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"[.,;:!?]"), behavior="merged_with_previous"),
        pre_tokenizers.Split(Regex(r"\d"), behavior="contiguous"),
        pre_tokenizers.Split(Regex(r"\n"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"\p{L}+"), behavior="isolated", invert=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]),
        normalizer=normalizers.Sequence([normalizers.Replace(Regex(r"\s{3,}"), "  "), normalizers.NFD(),
                                         normalizers.Strip(left=False, right=True)]),
        special=["<eos>"])
    out["llama2"] = with_byte_fallback(sentencepiece_like(
        rng, normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]), None, unk=True, fuse=True))
    out["metaspace"] = with_byte_fallback(sentencepiece_like(
        rng, None, pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False), unk=True, fuse=True))
    out["metaspace_split"] = sentencepiece_like(
        rng, normalizers.NFKD(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True),
        unk=True, fuse=False)
    out["no_unk"] = sentencepiece_like(
        rng, None, pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="never", split=True), unk=False, fuse=False)
    return out


EDGE = [
    "", " ", "  ", "\n", "\n\n\n", " \n ", "\t", "a", "A", "hello world", "Hello  world", "hello   world   ",
    "it's IT'S it'S we'LL", "don't", "'s'", "''", "123", "1234567", "12345678901234567890", "3.14159", "1,000,000",
    "x=1+2", "<think>", "</think>", "<think>\nsome thinking\n</think>\n<answer>42</answer>", "<thin", "<think",
    "</think></think><think>", "a<think>b</think>c", "<|im_end|>", "<|im_start|>user\nhi<|im_end|>\n",
    "<|endoftext|>", "<|eot_id|>", "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "<s>", "</s>", "<s> hello</s>", "<unk>", "<mask>", "a <mask> b", "a<mask>b", " <sep> x", "<sep>   x",
    "time", "timeline", "the time is", "overtime", "time_x", "_time", "TIME", "<eos>", "x<eos>y",
    "<｜end▁of▁sentence｜>", "▁", "▁▁a", "a▁b", "<0x41>", "<0x0A>",
    "é", "e\u0301", "café", "cafe\u0301", "Å", "ﬁle", "①②③", "x²", "½", "٣٤٥", "７８９", "İstanbul", "ß",
    "日本語のテキスト", "漢字とひらがな", "한국어 텍스트", "Привет мир", "مرحبا بالعالم", "हिन्दी",
    "🙂", "🙂🙂🙂", "👩\u200d💻", "🇯🇵🇫🇷", "a\u00a0b", "a\u3000b", "a\u2028b", "a\u200bb", "\ufeffhello", "a\u0085b",
    "    indented code\n        more\n", "def f(x):\n    return x * 2\n", "\r\n\r\n", "a\r\nb", "a \r\n b",
    "!!!???...", "...", "—", "\"quoted\"", "“curly”", "→←↑", "\x00", "\x1f", "\x7f", "\ud7ff", "\ue000",
    "The deadline is in 3 hours. <answer>7</answer>",
    "\U0001f600" * 20, "a" * 300, " " * 200, "ab" * 150, "\n" * 50, "1" * 100, "é" * 100, "日" * 80,
]


def random_text(rng: random.Random) -> str:
    pool = WORDS + UNICODE + PUNCT + SPACES + ["<think>", "</think>", "<|im_end|>", "<|eot_id|>", "<s>", "</s>",
                                               "<mask>", "<sep>", "<eos>", "time", "<|endoftext|>", "'s", "'LL", "▁"]
    parts = []
    for _ in range(rng.randint(1, 40)):
        r = rng.random()
        if r < 0.6:
            parts.append(rng.choice(pool))
        elif r < 0.7:
            parts.append(str(rng.randint(0, 10 ** 9)))
        elif r < 0.85:
            parts.append(rng.choice(SPACES))
        else:
            parts.append(chr(rng.choice([rng.randint(0x20, 0x7e), rng.randint(0xa0, 0x2fff), rng.randint(0x3000, 0x9fff),
                                          rng.randint(0x1f300, 0x1faff), rng.randint(0x0300, 0x036f)])))
    return "".join(parts)


def texts() -> list[str]:
    rng = random.Random(7)
    return EDGE + [random_text(rng) for _ in range(700)]


def count_rows(toks: dict[str, Tokenizer], texts_: list[str]) -> str:
    """texts.jsonl: each text with the count each tokenizer makes of it."""
    rows = []
    for text in texts_:
        counts = {name: len(tok.encode(text, add_special_tokens=False).ids) for name, tok in toks.items()}
        rows.append(json.dumps({"text": text, "counts": counts}, ensure_ascii=False, sort_keys=True))
    return "\n".join(rows) + "\n"


def check() -> int:
    """Count the texts of texts.jsonl again with the tokenizer files here,
    as the installed tokenizers reads them, and compare with the counts the
    file holds. Nothing is trained, so only a change in how tokenizers
    counts can fail it."""
    toks = {p.stem: Tokenizer.from_file(str(p)) for p in sorted(HERE.glob("*.json"))}
    # split at newlines alone: the texts hold U+2028 and U+0085, where
    # str.splitlines would cut too
    lines = [line for line in (HERE / "texts.jsonl").read_text(encoding="utf-8").split("\n") if line]
    held = [json.loads(line) for line in lines]
    bad = []
    for i, row in enumerate(held):
        if set(row["counts"]) != set(toks):
            bad.append(f"line {i + 1}: counts for {sorted(row['counts'])}, tokenizers here {sorted(toks)}")
            continue
        for name, tok in toks.items():
            n = len(tok.encode(row["text"], add_special_tokens=False).ids)
            if n != row["counts"][name]:
                bad.append(f"line {i + 1} ({name}): {row['counts'][name]} held, tokenizers counts {n}")
    if bad:
        print(f"{HERE}/texts.jsonl: {len(bad)} counts differ from what tokenizers "
              f"{__import__('tokenizers').__version__} makes of the texts, first: {'; '.join(bad[:5])}; "
              f"run python {Path(__file__).relative_to(HERE.parent.parent)} to remake the files", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true",
                    help="count texts.jsonl's texts again with the tokenizers here and compare; change nothing")
    args = ap.parse_args()
    if args.check:
        return check()
    toks = {}
    for name, tok in tokenizers().items():
        d = json.loads(tok.to_str())
        if name == "gpt2":
            d = string_merges(d)
        body = json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n"
        (HERE / f"{name}.json").write_text(body, encoding="utf-8")
        # the counts come from the file as written, read back
        toks[name] = Tokenizer.from_str(body)
    (HERE / "texts.jsonl").write_text(count_rows(toks, texts()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
