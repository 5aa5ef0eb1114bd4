"""tools/bert_random_texts.py — seeded random texts and their token ids from all-MiniLM-L6-v2's own
tokenizer (the Rust `tokenizers` package on its tokenizer.json, no truncation), for the parity
spec of recipes/models/wordpiece.lua beyond the held sentences: words and runs of characters
drawn from ASCII, Latin-1 and Latin Extended, IPA, Greek, Cyrillic, Hebrew, Arabic, Indic and
Thai scripts, Latin Extended Additional, general punctuation, CJK symbols and ideographs, Hangul
syllables, half/full-width forms, emoji, control and private-use characters, and bare combining
marks, joined by spaces, tabs, commas or nothing; some words are special tokens ([MASK], [SEP]).

Run:  .venv/bin/python tools/bert_random_texts.py N SEED [MODEL_DIR] > texts.json
Prints one JSON object: {"texts": [...], "input_ids": [[...], ...]} ([CLS] ... [SEP] included).
"""
import json
import os
import random
import sys

from tokenizers import Tokenizer

POOLS = [(0x20, 0x7F), (0xA0, 0x250), (0x250, 0x2B0), (0x370, 0x530), (0x590, 0x700), (0x900, 0xE80),
         (0x1E00, 0x1F00), (0x2000, 0x2070), (0x3000, 0x3100), (0x4E00, 0x4F00), (0xAC00, 0xAC80),
         (0xFF00, 0xFFF0), (0x1F300, 0x1F650), (0x0, 0x20), (0xE000, 0xE010), (0x300, 0x370)]
WORDS = ["the", "running", "unaffable", "naïve", "Straße", "[MASK]", "[SEP]", "##ing", "hello", "Ǆ", "ﬁ", "İ"]
JOINS = [" ", "", "\t", ",", "  "]


def main():
    n, seed = int(sys.argv[1]), int(sys.argv[2])
    d = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.environ.get("LTORCH_MODEL_CACHE") or os.path.expanduser("~/.cache/ltorch/models"), "all-MiniLM-L6-v2")
    tk = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tk.no_truncation()
    tk.no_padding()
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 12)):
            if rng.random() < 0.3:
                parts.append(rng.choice(WORDS))
            else:
                lo, hi = rng.choice(POOLS)
                parts.append("".join(chr(rng.randrange(lo, hi)) for _ in range(rng.randint(1, 8))))
            parts.append(rng.choice(JOINS))
        texts.append("".join(parts))
    json.dump({"texts": texts, "input_ids": [e.ids for e in tk.encode_batch(texts)]}, sys.stdout)


if __name__ == "__main__":
    main()
