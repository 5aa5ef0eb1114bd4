--[[
  bench/minilm_embed.lua — sentence-embedding throughput of all-MiniLM-L6-v2 (recipes/models/
  minilm.lua) beside the reference stack (bench/minilm_embed.py: transformers 5.23 with its Rust
  tokenizer, on the same libtorch), on the same sentences, batch size and thread count: the first
  N fortune records of /usr/share/games/fortunes (Debian's fortunes-min/fortunes), in file order,
  each record joined into one line. Both sides tokenise and embed everything once after a warm-up
  batch, sentences batched by length (longest first, as sentence-transformers), truncated at 256
  tokens; model loading is not timed. Figures are process CPU time (CLOCK_PROCESS_CPUTIME_ID,
  Python's time.process_time), steadier than wall time on a shared machine; with the default
  single thread they are the wall time of an idle machine.

  Run:  build/ltorch bench/minilm_embed.lua [n=256] [batch=32] [threads=1]
  Prints the workload line, then one row per side: sentences per CPU second and CPU seconds, and
  ltorch's tokenisation share. Needs the model (bash scripts/setup.sh); the Python row also needs .venv.
]]
local torch = require "torch"
local ffi = require "ffi"
local cjson = require "cjson"
local minilm = require "recipes.models.minilm"

pcall(ffi.cdef, "typedef struct { long tv_sec; long tv_nsec; } bench_me_timespec;"
  .. " int bench_me_clock_gettime(int, bench_me_timespec *) __asm__(\"clock_gettime\");")
local ts = ffi.new("bench_me_timespec")
local function now()
  ffi.C.bench_me_clock_gettime(2, ts)   -- CLOCK_PROCESS_CPUTIME_ID
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

local n, batch, threads = tonumber(arg[1] or 256), tonumber(arg[2] or 32), tonumber(arg[3] or 1)
local root = (arg[0] or ""):match("^(.*)/bench/[^/]*$") or "."
local why = minilm.missing()
if why then io.stderr:write("minilm_embed: " .. why .. "\n"); os.exit(1) end

-- The first n records of the fortune files, each on one line.
local sentences = {}
for _, name in ipairs({ "science", "computers", "fortunes", "literature", "wisdom" }) do
  local f = io.open("/usr/share/games/fortunes/" .. name, "rb")
  if f then
    for record in (f:read("*a") .. "\n%\n"):gmatch("(.-)\n%%\n") do
      local one = record:gsub("%s+", " "):match("^%s*(.-)%s*$")
      if one ~= "" and #sentences < n then sentences[#sentences + 1] = one end
    end
    f:close()
  end
end
if #sentences == 0 then io.stderr:write("minilm_embed: no fortunes in /usr/share/games/fortunes\n"); os.exit(1) end

torch.set_num_threads(threads)
local model = minilm.load()
local tokens = 0
for _, s in ipairs(sentences) do tokens = tokens + #model.tokenizer:encode(s) end
print(("minilm_embed: %d sentences (%d tokens after truncation at 256), batch %d, %d thread%s")
  :format(#sentences, tokens, batch, threads, threads == 1 and "" or "s"))

torch.inference_mode(function() model:embed({ unpack(sentences, 1, math.min(batch, #sentences)) }, { batch_size = batch }) end)
local t0 = now()
for _, s in ipairs(sentences) do model.tokenizer:encode(s) end
local t_tok = now() - t0
t0 = now()
model:embed(sentences, { batch_size = batch })
local t_lua = now() - t0
print(("ltorch        %8.1f sentences/s  %7.3f s CPU  (tokenising alone %.3f s)"):format(#sentences / t_lua, t_lua, t_tok))

local path = os.tmpname()
local f = assert(io.open(path, "wb"))
f:write(cjson.encode(sentences))
f:close()
local python = os.getenv("BENCH_PYTHON") or (root .. "/.venv/bin/python")
local p = io.popen(("'%s' '%s/bench/minilm_embed.py' '%s' %d %d 2>&1"):format(python, root, path, batch, threads))
local out = p:read("*a")
p:close()
os.remove(path)
local t_py = tonumber(out:match("transformers ([%d%.]+)"))
if t_py then
  print(("transformers  %8.1f sentences/s  %7.3f s CPU"):format(#sentences / t_py, t_py))
else
  print("transformers  (not run: " .. out:gsub("%s+$", ""):sub(-300) .. ")")
end
