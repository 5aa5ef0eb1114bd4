--[[
  torch.data.tokenizer — character- or word-level tokenizers: vocabulary, encode/decode, padding.

  Tokenizer({level = "char"|"word", lower = false, min_freq = 1, max_size = nil,
             specials = {"<pad>", "<unk>", "<bos>", "<eos>"}})
    tok:build(texts)               counts tokens (chars are UTF-8 code points; words split on
                                   whitespace, punctuation kept as its own token), keeps those
                                   with count >= min_freq, most frequent first (ties by token),
                                   specials first: <pad> = 0, <unk> = 1, <bos> = 2, <eos> = 3
    tok:encode(text, {bos =, eos =}) -> Lua array of ids (unknown -> <unk>)
    tok:decode(ids)                -> string (specials dropped; words joined by spaces)
    tok:pad(list_of_id_arrays, {max_len =, side = "right"})
                                   -> ids int64 (B, L) filled with <pad>, mask bool (B, L)
                                      (true on real tokens); longer sequences are cut to max_len
    tok:batch(texts, opts)         encode + pad
    #tok.itos, tok.stoi[token]
  Use:
    local tok = data.tokenizer.Tokenizer({level = "char"}):build(ds.texts)
    local ids, mask = tok:batch({"hello", "hi"})        -- (2, 5) int64, (2, 5) bool
]]
local M = {}

local Tokenizer = {}
Tokenizer.__index = Tokenizer
M.Tokenizer = setmetatable(Tokenizer, { __call = function(_, ...) return Tokenizer.new(...) end })

function Tokenizer.new(opts)
  opts = opts or {}
  local self = setmetatable({ level = opts.level or "char", lower = opts.lower or false,
    min_freq = opts.min_freq or 1, max_size = opts.max_size,
    specials = opts.specials or { "<pad>", "<unk>", "<bos>", "<eos>" } }, Tokenizer)
  if self.level ~= "char" and self.level ~= "word" then
    error("Tokenizer: level must be \"char\" or \"word\", got " .. tostring(self.level), 2)
  end
  self:_reset()
  return self
end

function Tokenizer:_reset()
  self.itos, self.stoi = {}, {}
  for _, s in ipairs(self.specials) do self:_add(s) end
  self.pad_id, self.unk_id = self.stoi["<pad>"] or 0, self.stoi["<unk>"]
  self.bos_id, self.eos_id = self.stoi["<bos>"], self.stoi["<eos>"]
end

function Tokenizer:_add(tok)
  if self.stoi[tok] == nil then
    self.itos[#self.itos + 1] = tok
    self.stoi[tok] = #self.itos - 1
  end
end

function Tokenizer:tokens(text)
  if self.lower then text = text:lower() end
  local out = {}
  if self.level == "char" then
    for ch in text:gmatch("[%z\1-\127\194-\244][\128-\191]*") do out[#out + 1] = ch end
  else
    for w in text:gmatch("%S+") do
      for part, punct in w:gmatch("([^%p]*)(%p*)") do
        if part ~= "" then out[#out + 1] = part end
        for p in punct:gmatch(".") do out[#out + 1] = p end
      end
    end
  end
  return out
end

function Tokenizer:build(texts)
  self:_reset()
  local count = {}
  for _, t in ipairs(texts) do
    for _, tok in ipairs(self:tokens(t)) do count[tok] = (count[tok] or 0) + 1 end
  end
  local list = {}
  for tok, c in pairs(count) do if c >= self.min_freq and self.stoi[tok] == nil then list[#list + 1] = tok end end
  table.sort(list, function(a, b) if count[a] ~= count[b] then return count[a] > count[b] end return a < b end)
  for i, tok in ipairs(list) do
    if self.max_size and #self.itos >= self.max_size then break end
    self:_add(tok)
    list[i] = nil
  end
  return self
end

function Tokenizer:encode(text, opts)
  opts = opts or {}
  local ids = {}
  if opts.bos and self.bos_id then ids[1] = self.bos_id end
  for _, tok in ipairs(self:tokens(text)) do
    local id = self.stoi[tok]
    if id == nil then
      if not self.unk_id then error("Tokenizer.encode: unknown token '" .. tok .. "' and no <unk>", 2) end
      id = self.unk_id
    end
    ids[#ids + 1] = id
  end
  if opts.eos and self.eos_id then ids[#ids + 1] = self.eos_id end
  return ids
end

function Tokenizer:decode(ids)
  if type(ids) ~= "table" then ids = ids:tolist() end
  local special = {}
  for _, s in ipairs(self.specials) do special[self.stoi[s]] = true end
  local out = {}
  for _, id in ipairs(ids) do
    if not special[id] then out[#out + 1] = self.itos[id + 1] or "" end
  end
  return table.concat(out, self.level == "word" and " " or "")
end

function Tokenizer:pad(seqs, opts)
  opts = opts or {}
  local torch = require "torch"
  local L = 0
  for _, s in ipairs(seqs) do if #s > L then L = #s end end
  if opts.max_len then L = math.min(L, opts.max_len) end
  L = math.max(L, 1)
  local ids, mask = {}, {}
  for b, s in ipairs(seqs) do
    local row, m = {}, {}
    local n = math.min(#s, L)
    local off = opts.side == "left" and (L - n) or 0
    for j = 1, L do row[j] = self.pad_id; m[j] = false end
    for j = 1, n do row[off + j] = s[j]; m[off + j] = true end
    ids[b], mask[b] = row, m
  end
  return torch.tensor(ids, { dtype = torch.int64 }), torch.tensor(mask, { dtype = torch.bool })
end

function Tokenizer:batch(texts, opts)
  local seqs = {}
  for i, t in ipairs(texts) do seqs[i] = self:encode(t, opts) end
  return self:pad(seqs, opts)
end

return M
