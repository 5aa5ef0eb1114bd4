"""bench/minilm_embed.py — the reference side of bench/minilm_embed.lua: all-MiniLM-L6-v2 sentence
embeddings with transformers (AutoTokenizer: the Rust tokenizer; BertModel; mean pooling + L2
norm, as sentence-transformers), batched by length as sentence-transformers' encode does.

Run:  .venv/bin/python bench/minilm_embed.py SENTENCES.json BATCH THREADS [MODEL_DIR]
Prints one line: "transformers SECONDS" (process CPU time of tokenising and embedding everything
once, after one warm-up batch; model loading excluded).
"""
import json
import os
import sys
import time

import torch
import transformers
from transformers import AutoModel, AutoTokenizer


def main():
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    sentences = json.load(open(sys.argv[1], encoding="utf-8"))
    batch, threads = int(sys.argv[2]), int(sys.argv[3])
    d = sys.argv[4] if len(sys.argv) > 4 else os.path.join(
        os.environ.get("LTORCH_MODEL_CACHE") or os.path.expanduser("~/.cache/ltorch/models"), "all-MiniLM-L6-v2")
    torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModel.from_pretrained(d).eval()

    def embed(texts):
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = [None] * len(texts)
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            b = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=256, return_tensors="pt")
            h = model(**b).last_hidden_state
            m = b["attention_mask"].unsqueeze(-1).to(h.dtype)
            e = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1e-9), p=2, dim=1)
            for k, i in enumerate(idx):
                out[i] = e[k]
        return torch.stack(out)

    with torch.inference_mode():
        embed(sentences[:batch])
        t0 = time.process_time()
        embed(sentences)
        print("transformers %.4f" % (time.process_time() - t0))


if __name__ == "__main__":
    main()
