--[[
  recipes/models/bert_normalizer.lua — BERT's text normalisation and pre-tokenisation, as the
  `tokenizers` package runs them for an uncased BERT (tokenizer.json: BertNormalizer with
  clean_text, handle_chinese_chars, lowercase and strip_accents left null (so on), then
  BertPreTokenizer):
    1. UTF-8 decoded; text that is not valid UTF-8 is refused, naming the first bad byte's
       position (Python cannot even make such bytes a str: "can't decode byte 0xff in
       position 2"; see utf8_error);
    2. per code point: control, format, unassigned and private-use characters removed;
       whitespace to a space; CJK ideographs padded with spaces; accents stripped (NFD, then
       nonspacing marks dropped; Hangul syllables decompose into their jamo); lowercase;
    3. words split at spaces, each punctuation character a word of its own.
  Step 2's tables cover every Unicode code point: recipes/models/bert_unicode_gen.lua, generated
  by tools/gen_bert_unicode.py from the reference tokenizer itself (see its header).

  Usage:  local bn = require "recipes.models.bert_normalizer"
          bn.words("Héllo, WORLD!")  --> { {"h","e","l","l","o"}, {","}, {"w","o","r","l","d"}, {"!"} }
          (each word a list of its UTF-8 characters: WordPiece matches whole characters)
]]
local T = require "recipes.models.bert_unicode_gen"

local M = {}

local byte, char, floor = string.byte, string.char, math.floor

-- code point -> UTF-8 string
local function utf8(cp)
  if cp < 0x80 then return char(cp) end
  if cp < 0x800 then return char(0xC0 + floor(cp / 64), 0x80 + cp % 64) end
  if cp < 0x10000 then
    return char(0xE0 + floor(cp / 4096), 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
  end
  return char(0xF0 + floor(cp / 262144), 0x80 + floor(cp / 4096) % 64, 0x80 + floor(cp / 64) % 64, 0x80 + cp % 64)
end
M.utf8 = utf8

-- Is cp inside one of the inclusive ranges {first, last, first, last, ...}? (binary search)
local function in_ranges(r, cp)
  local lo, hi = 1, #r / 2
  while lo <= hi do
    local mid = floor((lo + hi) / 2)
    if cp < r[2 * mid - 1] then hi = mid - 1 elseif cp > r[2 * mid] then lo = mid + 1 else return true end
  end
  return false
end

-- The generated map's strings as arrays of code points (decoded once).
local function decode(s)
  local out, i, n = {}, 1, #s
  while i <= n do
    local c = byte(s, i)
    local len = c < 0x80 and 1 or c < 0xE0 and 2 or c < 0xF0 and 3 or 4
    local cp = len == 1 and c or c % (len == 2 and 32 or len == 3 and 16 or 8)
    for k = 1, len - 1 do cp = cp * 64 + byte(s, i + k) % 64 end
    out[#out + 1] = cp
    i = i + len
  end
  return out
end

local MAP = {}
for cp, s in pairs(T.map) do MAP[cp] = decode(s) end

local PUNCT = {}   -- a cache over T.punctuation: cp -> true / false
local function is_punct(cp)
  local p = PUNCT[cp]
  if p == nil then p = in_ranges(T.punctuation, cp); PUNCT[cp] = p end
  return p
end

-- Next code point of s at byte i -> cp, next i. Malformed or overlong sequences, surrogates
-- and values past U+10FFFF read as U+FFFD, one byte at a time.
local function next_cp(s, i)
  local c = byte(s, i)
  if c < 0x80 then return c, i + 1 end
  local len, cp, min
  if c >= 0xC2 and c < 0xE0 then len, cp, min = 2, c - 0xC0, 0x80
  elseif c >= 0xE0 and c < 0xF0 then len, cp, min = 3, c - 0xE0, 0x800
  elseif c >= 0xF0 and c < 0xF5 then len, cp, min = 4, c - 0xF0, 0x10000
  else return 0xFFFD, i + 1 end
  for k = 1, len - 1 do
    local b = byte(s, i + k)
    if not b or b < 0x80 or b > 0xBF then return 0xFFFD, i + 1 end
    cp = cp * 64 + b - 0x80
  end
  if cp < min or cp > 0x10FFFF or (cp >= 0xD800 and cp < 0xE000) then return 0xFFFD, i + 1 end
  return cp, i + len
end

-- utf8_error(text) -> nil when text is valid UTF-8 (Python's strict decoder: no overlong forms,
-- no surrogates, nothing past U+10FFFF); else a message naming the first bad byte, its 1-based
-- position and why, in Python's words.
function M.utf8_error(text)
  local i = 1
  while true do
    i = text:find("[\128-\255]", i)
    if not i then return nil end
    local c, lo, hi = byte(text, i), 0x80, 0xBF
    local len
    if c >= 0xC2 and c <= 0xDF then len = 2
    elseif c >= 0xE0 and c <= 0xEF then len = 3; if c == 0xE0 then lo = 0xA0 elseif c == 0xED then hi = 0x9F end
    elseif c >= 0xF0 and c <= 0xF4 then len = 4; if c == 0xF0 then lo = 0x90 elseif c == 0xF4 then hi = 0x8F end
    end
    local why = not len and "invalid start byte" or nil
    for k = 1, (len or 1) - 1 do
      local b = byte(text, i + k)
      if not b then why = "unexpected end of data"; break end
      if b < (k == 1 and lo or 0x80) or b > (k == 1 and hi or 0xBF) then why = "invalid continuation byte"; break end
    end
    if why then
      return ("text is not valid UTF-8: byte 0x%02x at position %d (%s)"):format(c, i, why)
    end
    i = i + len
  end
end

-- One input code point -> array of its normalized code points (step 2), memoized.
local SPACE = 0x20
local NONE = {}
local CACHE = {}
local function normalize_cp(cp)
  local m = MAP[cp] or CACHE[cp]
  if m then return m end
  if cp >= 0xAC00 and cp <= 0xD7A3 then
    local s = cp - 0xAC00   -- Hangul syllable -> L V [T] jamo (Unicode 15, section 3.12)
    m = { 0x1100 + floor(s / 588), 0x1161 + floor((s % 588) / 28) }
    if s % 28 ~= 0 then m[3] = 0x11A7 + s % 28 end
  elseif in_ranges(T.padded, cp) then
    m = { SPACE, cp, SPACE }
  elseif in_ranges(T.deleted, cp) then
    m = NONE
  else
    m = { cp }
  end
  CACHE[cp] = m
  return m
end

-- normalize(text) -> array of code points (steps 1-2).
function M.normalize(text)
  if type(text) ~= "string" then error(("bad argument #1 to 'normalize' (string expected, got %s)"):format(type(text)), 2) end
  local bad = M.utf8_error(text)
  if bad then error("normalize: " .. bad, 2) end
  local out, i, n = {}, 1, #text
  while i <= n do
    local cp
    cp, i = next_cp(text, i)
    local m = normalize_cp(cp)
    for k = 1, #m do out[#out + 1] = m[k] end
  end
  return out
end

-- words(text) -> array of words, each an array of UTF-8 characters (steps 1-3).
function M.words(text)
  local cps, words, word = M.normalize(text), {}, nil
  for k = 1, #cps do
    local cp = cps[k]
    if cp == SPACE then
      word = nil
    elseif is_punct(cp) then
      words[#words + 1] = { utf8(cp) }
      word = nil
    else
      if not word then word = {}; words[#words + 1] = word end
      word[#word + 1] = utf8(cp)
    end
  end
  return words
end

return M
