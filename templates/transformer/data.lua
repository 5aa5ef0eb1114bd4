--[[
  data.lua — the fortunes language-identification corpus (Debian's fortunes files) as
  DataLoaders of {ids (B, T) int64, mask (B, T) bool, y (B) int64}.
  loaders(config, vocab) -> train, val, test loaders, the tokenizer, the class names.
  Texts are split 80/10/10 (seeded); a character tokenizer is built on the train split (or
  from `vocab`, the saved list of tokens, when rebuilding a trained model).
  Replace this file to train on your own texts: keep the same return values.
]]
local torch = require "torch"
local data = torch.utils.data

local M = {}

local function languages(config)
  local out = {}
  for l in config.languages:gmatch("[^,%s]+") do out[#out + 1] = l end
  return out
end

-- A tokenizer whose vocabulary is `vocab` (ids are positions - 1), without counting texts.
function M.tokenizer(config, texts, vocab)
  local tok = data.tokenizer.Tokenizer({ level = "char", min_freq = config.min_freq })
  if not vocab then return tok:build(texts) end
  tok.itos, tok.stoi = vocab, {}
  for i, s in ipairs(vocab) do tok.stoi[s] = i - 1 end
  return tok
end

function M.loaders(config, vocab)
  local langs = languages(config)
  local ds = data.datasets.Fortunes({ languages = langs, max_per_language = config.per_language, min_chars = 20 })
  torch.manual_seed(config.seed)
  local n = #ds.texts
  local perm = torch.randperm(n):tolist()
  local n_eval = math.floor(n * 0.1)
  local bounds = { train = { 1, n - 2 * n_eval }, val = { n - 2 * n_eval + 1, n - n_eval }, test = { n - n_eval + 1, n } }
  local splits = {}
  for name, b in pairs(bounds) do
    local texts, labels = {}, {}
    for i = b[1], b[2] do
      texts[#texts + 1] = ds.texts[perm[i] + 1]:sub(1, config.max_len * 4)   -- bytes; UTF-8 chars cut later
      labels[#labels + 1] = ds.labels[perm[i] + 1]
    end
    splits[name] = { texts = texts, labels = labels }
  end
  local tok = M.tokenizer(config, splits.train.texts, vocab)
  local function loader(name, shuffle)
    local s = splits[name]
    local ids, mask = tok:batch(s.texts, { max_len = config.max_len })
    local y = torch.tensor(s.labels, { dtype = torch.int64 })
    return data.DataLoader(data.TensorDataset(ids, mask, y),
      { batch_size = config.batch_size, shuffle = shuffle, generator = config.seed })
  end
  return loader("train", true), loader("val", false), loader("test", false), tok, langs
end

return M
