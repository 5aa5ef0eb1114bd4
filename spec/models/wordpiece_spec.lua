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
  it("drops controls, maps whitespace to spaces", function()
    assert.are.same({ "a", "bcd" }, words("a\tb\0\7cd"))   -- removed, not split
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
  it("refuses invalid UTF-8, naming the first bad byte as Python's decoder does", function()
    -- Python: b"ab\xffcd".decode() -> "can't decode byte 0xff in position 2: invalid start byte"
    local cases = {
      { "ab\xffcd", "byte 0xff at position 3 %(invalid start byte%)" },
      { "a\xc0\xafb", "byte 0xc0 at position 2 %(invalid start byte%)" },          -- overlong '/'
      { "a\xe0\x80\x80", "byte 0xe0 at position 2 %(invalid continuation byte%)" }, -- overlong NUL
      { "a\xed\xa0\x80", "byte 0xed at position 2 %(invalid continuation byte%)" }, -- a surrogate
      { "a\xf4\x90\x80\x80", "byte 0xf4 at position 2 %(invalid continuation byte%)" }, -- > U+10FFFF
      { "caf\xc3", "byte 0xc3 at position 4 %(unexpected end of data%)" },
      { "\xe2\x82x", "byte 0xe2 at position 1 %(invalid continuation byte%)" },
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(bn.normalize, c[1])
      assert.is_false(ok, c[1])
      assert.matches("text is not valid UTF%-8: " .. c[2], err)
    end
    assert.is_nil(bn.utf8_error("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf"))
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
  it("refuses invalid UTF-8 at the caller's line, naming the byte", function()
    local tok = toy()
    for _, call in ipairs({
      { "encode", function() local r = tok:encode("hello \xff"); return r end },
      { "tokenize", function() local r = tok:tokenize("hello \xff"); return r end },
      { "ids", function() local r = tok:ids("hello \xff"); return r end },
    }) do
      local ok, err = pcall(call[2])
      assert.is_false(ok)
      assert.matches("wordpiece_spec.lua:%d+: " .. call[1] .. ": text is not valid UTF%-8: byte 0xff at position 7", err)
    end
    local ok, err = pcall(function() local r = tok:batch({ "a", "[SEP] \xc3" }); return r end)
    assert.is_false(ok)
    assert.matches("wordpiece_spec.lua:%d+: batch: text 2: text is not valid UTF%-8: byte 0xc3 at position 7 %(unexpected end of data%)", err)
  end)
  it("is linear in the text for any mix of special tokens", function()
    local tok = toy()
    local t0 = os.clock()
    local ids = tok:encode(("[SEP] "):rep(40000), 100000)
    local dt = os.clock() - t0
    assert.equal(40002, #ids)
    assert.is_true(dt < 2, ("40,000 [SEP] took %.2f s"):format(dt))
    -- specials of every kind, adjacent and apart, with words between: same ids as one at a time
    local piece = "[CLS]hello [MASK][SEP] runn [PAD][UNK],"
    t0 = os.clock()
    ids = tok:ids(piece:rep(20000))
    dt = os.clock() - t0
    assert.is_true(dt < 2, ("20,000 mixed pieces took %.2f s"):format(dt))
    local one = tok:ids(piece)
    assert.same({ 2, 11, 4, 3, 8, 0, 1, 12 }, one)
    assert.equal(#one * 20000, #ids)
    for k = 1, #ids do assert(ids[k] == one[(k - 1) % #one + 1], k) end
  end)
  it("blames the caller for bad arguments", function()
    local tok = toy()
    assert.has_error(function() tok:batch({}) end, "bad argument #1 to 'batch' (non-empty array of strings expected)")
    assert.has_error(function() tok:batch({ "a", 2 }) end, "bad argument #1 to 'batch' (text 2 is a number, not a string)")
    assert.has_error(function() wordpiece.new({ a = 1 }) end, "new: the vocabulary has no unk token '[UNK]'")
  end)
end)
