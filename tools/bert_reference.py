"""tools/bert_reference.py — the reference outputs of all-MiniLM-L6-v2 for recipes/models/:
token ids from the model's own tokenizer (transformers' AutoTokenizer on its tokenizer.json, the
Rust `tokenizers` package) and sentence embeddings as sentence-transformers computes them for
this model (modules.json: Transformer -> Pooling(mean) -> Normalize), written out here with
transformers' BertModel so that sentence-transformers (and its scipy / scikit-learn) need not be
installed:
    hidden = BertModel(input_ids, attention_mask).last_hidden_state
    mean   = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    embedding = torch.nn.functional.normalize(mean, p=2, dim=1)
Tokenised with truncation at max_seq_length (sentence_bert_config.json: 256); one sentence at a
time (no padding, so nothing but the sentence itself enters its numbers), float32 on the CPU.

Run:  .venv/bin/python tools/bert_reference.py SENTENCES.json [MODEL_DIR] > reference.json
      SENTENCES.json: a JSON array of strings (spec/models/fixtures/sentences.json);
      MODEL_DIR default: $LTORCH_MODEL_CACHE/all-MiniLM-L6-v2 or ~/.cache/ltorch/models/...
Prints one JSON object: {"versions": {...}, "max_length": 256, "input_ids": [[...], ...]
(each unpadded), "embeddings": [[384 floats], ...]}.
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoModel, AutoTokenizer


def model_dir():
    if len(sys.argv) > 2:
        return sys.argv[2]
    cache = os.environ.get("LTORCH_MODEL_CACHE") or os.path.expanduser("~/.cache/ltorch/models")
    return os.path.join(cache, "all-MiniLM-L6-v2")


def main():
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    with open(sys.argv[1], encoding="utf-8") as f:
        sentences = json.load(f)
    d = model_dir()
    with open(os.path.join(d, "sentence_bert_config.json")) as f:
        max_length = json.load(f)["max_seq_length"]
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModel.from_pretrained(d, torch_dtype=torch.float32).eval()
    ids, emb = [], []
    with torch.inference_mode():
        for s in sentences:
            batch = tok([s], truncation=True, max_length=max_length, return_tensors="pt")
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb.append(torch.nn.functional.normalize(mean, p=2, dim=1)[0])
            ids.append(batch["input_ids"][0].tolist())
    emb = torch.stack(emb)
    json.dump({"versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                            "tokenizers": __import__("tokenizers").__version__},
               "max_length": max_length, "input_ids": ids, "embeddings": emb.tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
