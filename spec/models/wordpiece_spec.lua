--[[
  spec/models/wordpiece_spec.lua — recipes/models/wordpiece.lua and bert_normalizer.lua on a
  toy vocabulary (no model files needed): normalisation (lowercase, accents, CJK, controls,
  whitespace, invalid UTF-8), punctuation splitting, greedy longest-match-first with `##`,
  [UNK] for unmatched and over-long words, special tokens in the text, truncation, padding and
  the attention mask, argument errors. Token-id parity with the real tokenizer on the held
  sentences is in spec/models/minilm_spec.lua.

  Run: build/ltorch /usr/bin/busted spec/models/wordpiece_spec.lua   (< 1 s)
]]
local torch = require "torch"
local bn = require "recipes.models.bert_normalizer"
local wordpiece = require "recipes.models.wordpiece"

local VOCAB = { "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "runn", "##ing", "run",
  "hello", ",", "!", "cafe", "東", "京", "a", "##a" }

local function toy(opts)
  local v = {}
  for i, p in ipairs(VOCAB) do v[p] = i - 1 end
  return wordpiece.new(v, opts)
end

local function words(text)
  local out = {}
  for i, w in ipairs(bn.words(text)) do out[i] = table.concat(w) end
  return out
end

describe("bert_normalizer", function()
  it("lowercases, strips accents, splits punctuation and pads CJK", function()
    assert.are.same({ "hello", ",", "cafe", "naive", "東", "京", "!" }, words("HéLLo,Café  NAÏVE東京!"))
  end)
  it("drops controls, maps whitespace to spaces, reads invalid UTF-8 as nothing", function()
    assert.are.same({ "a", "bcd" }, words("a\tb\0\7c\xff\xc0d"))   -- removed, not split
    assert.are.same({ "ab" }, words("a\u{200B}b"))   -- a format character (Cf): removed, no split
    assert.are.same({}, words("  \n\r\t "))
  end)
  it("decomposes Hangul syllables into jamo and keeps final sigma as σ", function()
    assert.are.same({ "\u{1112}\u{1161}\u{11AB}" }, words("한"))
    assert.are.same({ "οδοσ" }, words("ΟΔΟΣ"))
  end)
  it("refuses a non-string", function()
    assert.has_error(function() bn.normalize(3) end, "bad argument #1 to 'normalize' (string expected, got number)")
  end)
end)

describe("wordpiece", function()
  it("matches greedily longest-first with ## continuations", function()
    local tok = toy()
    assert.are.same({ "un", "##aff", "##able", "runn", "##ing", ",", "run" }, tok:tokenize("unaffable running, run"))
  end)
  it("turns a word with an unmatched rest, or over max_chars_per_word, into one [UNK]", function()
    local tok = toy({ max_chars_per_word = 5 })
    assert.are.same({ "[UNK]", "hello", "[UNK]" }, tok:tokenize("unx hello aaaaaa"))
    assert.are.same({ "a", "##a", "##a", "##a", "##a" }, tok:tokenize("aaaaa"))
  end)
  it("keeps special tokens written in the text", function()
    assert.are.same({ 2, 11, 4, 13, 3, 3 }, toy():encode("hello [MASK]![SEP]"))
  end)
  it("adds [CLS]/[SEP], truncates to max_length and pads with a mask", function()
    local tok = toy({ max_length = 4 })
    assert.are.same({ 2, 11, 11, 3 }, tok:encode("hello hello hello"))
    local b = tok:batch({ "hello", "hello hello hello" })
    assert.are.same({ { 2, 11, 3, 0 }, { 2, 11, 11, 3 } }, b.input_ids:tolist())
    assert.are.same({ { 1, 1, 1, 0 }, { 1, 1, 1, 1 } }, b.attention_mask:tolist())
    assert.are.same({ { 0, 0, 0, 0 }, { 0, 0, 0, 0 } }, b.token_type_ids:tolist())
    assert.are.equal(torch.int64, b.input_ids.dtype)
  end)
  it("reads a vocab.txt", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "wb"))
    f:write(table.concat(VOCAB, "\n"), "\n")
    f:close()
    local tok = wordpiece.from_vocab_txt(path)
    os.remove(path)
    assert.are.same({ 2, 14, 15, 16, 3 }, tok:encode("Café東京"))
  end)
  it("blames the caller for bad arguments", function()
    local tok = toy()
    assert.has_error(function() tok:batch({}) end, "bad argument #1 to 'batch' (non-empty array of strings expected)")
    assert.has_error(function() tok:batch({ "a", 2 }) end, "bad argument #1 to 'batch' (text 2 is a number, not a string)")
    assert.has_error(function() wordpiece.new({ a = 1 }) end, "new: the vocabulary has no unk token '[UNK]'")
  end)
end)
