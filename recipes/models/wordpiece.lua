--[[
  recipes/models/wordpiece.lua — BERT's WordPiece tokenizer: the vocabulary of a Hugging Face
  tokenizer.json (or a vocab.txt), recipes/models/bert_normalizer.lua's words, greedy
  longest-match-first subwords (continuations prefixed `##`; a word with an unmatched rest, or
  longer than 100 characters, is one [UNK]), [CLS] ... [SEP], truncation and padding.
  Matches the `tokenizers` package's BertNormalizer + BertPreTokenizer + WordPiece +
  TemplateProcessing, special tokens written in the text ([MASK], [SEP], ...) included: they
  are matched verbatim before normalisation, as tokenizer.json's added tokens are (in time
  linear in the text, however many there are). Text must be valid UTF-8: anything else is
  refused, naming the first bad byte (Python cannot make such bytes a str at all).

  Shapes: B sentences, T the longest encoded length in the batch (<= max_length).
    tok:encode(text [, max_length])  -> Lua array of ids: [CLS] pieces... [SEP], at most
                                        max_length long (default tok.max_length)
    tok:batch(texts [, max_length])  -> {input_ids = (B, T) int64, attention_mask = (B, T) int64
                                        (1 = token, 0 = padding), token_type_ids = (B, T) zeros}
                                        padded on the right with [PAD] to the longest
    tok:pad(rows)                    -> the same from rows of encode()
    tok:tokenize(text)               -> the pieces as strings, no special tokens

  Usage:  local wordpiece = require "recipes.models.wordpiece"
          local tok = wordpiece.load("tokenizer.json", {max_length = 256})
          local b = tok:batch({"A sentence.", "Another, longer sentence."})
]]
local torch = require "torch"
local json = require "torch.serialization.json"
local bn = require "recipes.models.bert_normalizer"

local M = {}

local concat = table.concat

local Tokenizer = {}
Tokenizer.__index = Tokenizer
M.Tokenizer = Tokenizer

local function read(path, who)
  local f, err = io.open(path, "rb")
  if not f then error(("%s: cannot read %s (%s)"):format(who, path, tostring(err)), 3) end
  local s = f:read("*a")
  f:close()
  return s
end

-- new(vocab, opts): vocab maps piece -> id; opts: unk, cls, sep, pad (token strings, BERT's
-- defaults), max_length (default 512), max_chars_per_word (default 100), specials (the token
-- strings matched verbatim in the text; default the five above).
function M.new(vocab, opts)
  if type(vocab) ~= "table" then error(("bad argument #1 to 'new' (vocab table expected, got %s)"):format(type(vocab)), 2) end
  opts = opts or {}
  local self = setmetatable({ vocab = vocab, max_length = opts.max_length or 512,
    max_chars_per_word = opts.max_chars_per_word or 100, specials = {} }, Tokenizer)
  for _, key in ipairs({ "unk", "cls", "sep", "pad", "mask" }) do
    local token = opts[key] or ("[" .. key:upper() .. "]")
    local id = vocab[token]
    if not id then error(("new: the vocabulary has no %s token '%s'"):format(key, token), 2) end
    self[key .. "_id"] = id
    self.specials[#self.specials + 1] = token
  end
  if opts.specials then self.specials = opts.specials end
  if self.max_length < 2 then error(("bad argument #2 to 'new' (max_length must be >= 2, got %s)"):format(self.max_length), 2) end
  return self
end

-- from_vocab_txt(path, opts): one piece a line, ids from 0 in file order.
function M.from_vocab_txt(path, opts)
  local vocab, id = {}, 0
  for line in read(path, "from_vocab_txt"):gmatch("([^\n]*)\n?") do
    if line ~= "" then vocab[line:gsub("\r$", "")] = id; id = id + 1 end
  end
  return M.new(vocab, opts)
end

-- load(path, opts): a Hugging Face tokenizer.json holding an uncased BERT WordPiece tokenizer
-- (anything else is refused, naming what differs).
function M.load(path, opts)
  local ok, spec = pcall(json.decode, read(path, "wordpiece.load"))
  if not ok then error(("wordpiece.load: %s: %s"):format(path, tostring(spec)), 2) end
  local n, m = spec.normalizer, spec.model
  local function need(cond, what)
    if not cond then error(("wordpiece.load: %s is not an uncased BERT WordPiece tokenizer (%s)"):format(path, what), 3) end
  end
  need(type(m) == "table" and m.type == "WordPiece", "model.type must be WordPiece")
  need(type(n) == "table" and n.type == "BertNormalizer" and n.lowercase == true and n.clean_text == true
    and n.handle_chinese_chars == true and (n.strip_accents == json.null or n.strip_accents == true),
    "normalizer must be BertNormalizer with lowercase, clean_text, handle_chinese_chars, accents stripped")
  need(type(spec.pre_tokenizer) == "table" and spec.pre_tokenizer.type == "BertPreTokenizer", "pre_tokenizer must be BertPreTokenizer")
  need(m.continuing_subword_prefix == "##", "continuing_subword_prefix must be ##")
  local o = {}
  for k, v in pairs(opts or {}) do o[k] = v end
  o.unk = m.unk_token
  o.max_chars_per_word = m.max_input_chars_per_word
  o.specials = {}
  for _, t in ipairs(spec.added_tokens or {}) do
    need(t.normalized == false and t.lstrip == false and t.rstrip == false and t.single_word == false,
      "added token " .. tostring(t.content) .. " has options this reader does not implement")
    o.specials[#o.specials + 1] = t.content
  end
  return M.new(m.vocab, o)
end

-- Appends the WordPiece ids of one word (an array of characters) to out.
function Tokenizer:_word(chars, out)
  local n = #chars
  if n > self.max_chars_per_word then out[#out + 1] = self.unk_id; return end
  local first, start = #out + 1, 1
  while start <= n do
    local stop, id = n, nil
    while stop >= start do
      local piece = concat(chars, "", start, stop)
      id = self.vocab[start > 1 and "##" .. piece or piece]
      if id then break end
      stop = stop - 1
    end
    if not id then
      for k = #out, first, -1 do out[k] = nil end
      out[first] = self.unk_id
      return
    end
    out[#out + 1] = id
    start = stop + 1
  end
end

-- The earliest special token in text at or after byte i -> start, stop, id (or nil); the
-- longest one where several start there. found[token] remembers each token's next occurrence
-- (false: none left), so a token is searched again only once i has passed it: over one text
-- each token's searches cover disjoint stretches, and the whole scan is linear in the text.
function Tokenizer:_next_special(text, i, found)
  local best_s, best_e, best_id
  for _, token in ipairs(self.specials) do
    local s = found[token]
    if s ~= false and (s == nil or s < i) then
      s = text:find(token, i, true) or false
      found[token] = s
    end
    if s then
      local e = s + #token - 1
      if not best_s or s < best_s or (s == best_s and e > best_e) then best_s, best_e, best_id = s, e, self.vocab[token] end
    end
  end
  return best_s, best_e, best_id
end

-- The text argument of the public methods: a string of valid UTF-8 (error at the caller's
-- caller, level 3, naming the method).
local function check_text(text, name)
  if type(text) ~= "string" then error(("bad argument #1 to '%s' (string expected, got %s)"):format(name, type(text)), 3) end
  local bad = bn.utf8_error(text)
  if bad then error(("%s: %s"):format(name, bad), 3) end
end

-- The ids of valid text without [CLS]/[SEP], untruncated.
function Tokenizer:_ids(text)
  local out, i, found = {}, 1, {}
  while i <= #text do
    local s, e, id = self:_next_special(text, i, found)
    if s ~= i then
      for _, word in ipairs(bn.words(text:sub(i, (s or #text + 1) - 1))) do self:_word(word, out) end
    end
    if not s then break end
    out[#out + 1] = id
    i = e + 1
  end
  return out
end

-- ids(text) -> the ids of text without [CLS]/[SEP], untruncated.
function Tokenizer:ids(text)
  check_text(text, "ids")
  return self:_ids(text)
end

function Tokenizer:tokenize(text)
  local inv = self._inverse
  if not inv then
    inv = {}
    for piece, id in pairs(self.vocab) do inv[id] = piece end
    self._inverse = inv
  end
  check_text(text, "tokenize")
  local out = {}
  for k, id in ipairs(self:_ids(text)) do out[k] = inv[id] end
  return out
end

function Tokenizer:encode(text, max_length)
  check_text(text, "encode")
  max_length = max_length or self.max_length
  local body = self:_ids(text)
  local out = { self.cls_id }
  for k = 1, math.min(#body, max_length - 2) do out[k + 1] = body[k] end
  out[#out + 1] = self.sep_id
  return out
end

function Tokenizer:batch(texts, max_length)
  if type(texts) ~= "table" or #texts == 0 then
    error("bad argument #1 to 'batch' (non-empty array of strings expected)", 2)
  end
  local rows = {}
  for b, text in ipairs(texts) do
    if type(text) ~= "string" then error(("bad argument #1 to 'batch' (text %d is a %s, not a string)"):format(b, type(text)), 2) end
    local bad = bn.utf8_error(text)
    if bad then error(("batch: text %d: %s"):format(b, bad), 2) end
    rows[b] = self:encode(text, max_length)
  end
  return self:pad(rows)
end

-- pad(rows) -> batch's table, from encode()d rows (left untouched), padded to the longest.
function Tokenizer:pad(rows)
  local ids, mask, T = {}, {}, 0
  for _, row in ipairs(rows) do T = math.max(T, #row) end
  for b, row in ipairs(rows) do
    local r, m = {}, {}
    for t = 1, T do
      r[t], m[t] = row[t] or self.pad_id, row[t] and 1 or 0
    end
    ids[b], mask[b] = r, m
  end
  ids = torch.tensor(ids, { dtype = torch.int64 })
  return { input_ids = ids, attention_mask = torch.tensor(mask, { dtype = torch.int64 }),
    token_type_ids = torch.zeros_like(ids) }
end

return M
