--[[
  spec/recipes/lora_finetune_spec.lua — recipes/lora_finetune.lua end to end at CI size
  (60 pretraining steps on the King James Bible, 30 LoRA steps on Hamlet act I): the LoRA
  model starts exactly at the pretrained loss (B = 0), fine-tuning lowers the Hamlet
  validation loss, only the adapters train; a missing corpus is one line naming the file, its
  Debian package and the fetch command, and exit 2.
  The end-to-end case needs the corpora in $LTORCH_DATA_CACHE (bash recipes/fetch_lm_data.sh);
  without them it is pending, and its name says what is missing and what to run. The
  missing-corpus cases point LTORCH_DATA_CACHE at an empty folder, so they run the same on
  every machine.

  Run: build/ltorch /usr/bin/busted spec/recipes/lora_finetune_spec.lua   (~25 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local cache = os.getenv("LTORCH_DATA_CACHE") or ((os.getenv("HOME") or "/tmp") .. "/.cache/ltorch/datasets")
local corpora = { cache .. "/bible-kjv/kjv.txt", cache .. "/hamlet/hamlet-act-1.txt" }

local function missing(paths)
  local out = {}
  for _, path in ipairs(paths) do
    local f = io.open(path, "rb")
    if f then f:close() else out[#out + 1] = path end
  end
  return out
end

-- Runs the recipe with `args`, `env` ("NAME=value ..." or ""); returns its output and exit status.
local function run(env, args)
  local p = io.popen(env .. " " .. bin .. " recipes/lora_finetune.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local function tmpname()
  local path = os.tmpname()
  os.remove(path)
  return path
end

describe("recipes/lora_finetune.lua", function()
  local out_dir, empty = tmpname(), tmpname()
  os.execute("mkdir -p '" .. empty .. "'")
  teardown(function() os.execute("rm -rf '" .. out_dir .. "' '" .. empty .. "'") end)

  local absent = missing(corpora)
  local name = "pretrains, then LoRA lowers the Hamlet loss with the base frozen"
  if #absent > 0 then
    pending(name .. " — needs " .. table.concat(absent, ", ") .. ": run bash recipes/fetch_lm_data.sh")
  else
    it(name, function()
      local out, code = run("", "--pretrain-steps 60 --finetune-steps 30 --eval-batches 4 --out " .. out_dir)
      assert.are.equal(0, code, out)
      local init = tonumber(out:match("loss at init ([%d%.]+)"))
      assert.is_true(init ~= nil and math.abs(init - math.log(256)) < 0.5, out)
      local start, pre = out:match("LoRA start check: Hamlet val ([%d%.]+) %(equal to the pretrained ([%d%.]+)")
      assert.are.equal(pre, start, out)
      local before, after = out:match("hamlet_val_before ([%d%.]+)  hamlet_val_after ([%d%.]+)")
      assert.is_true(tonumber(after) < tonumber(before), out)
      local trainable, total = out:match("(%d+) trainable of (%d+) parameters")
      assert.is_true(tonumber(trainable) < 0.2 * tonumber(total), out)
      assert.truthy(io.open(out_dir .. "/lora.pt", "rb"), out)
    end)
  end

  it("names a missing Bible in one line, with its package and the fetch command, and exits 2", function()
    local out, code = run("LTORCH_DATA_CACHE=" .. empty, "")
    assert.are.equal(2, code, out)
    assert.truthy(out:find(("lora_finetune: King James Bible not found: %s/bible-kjv/kjv.txt "
      .. "(Debian bible-kjv-text; run bash recipes/fetch_lm_data.sh)\n"):format(empty), 1, true), out)
  end)

  it("names a missing Hamlet in one line and exits 2", function()
    local bible = empty .. "/tiny-bible.txt"
    local f = assert(io.open(bible, "wb"))
    f:write(("In the beginning God created the heaven and the earth.\n"):rep(20))
    f:close()
    local out, code = run("LTORCH_DATA_CACHE=" .. empty, "--bible " .. bible)
    os.remove(bible)
    assert.are.equal(2, code, out)
    assert.truthy(out:find(("lora_finetune: Hamlet act I not found: %s/hamlet/hamlet-act-1.txt "
      .. "(Debian golang-github-golang-leveldb-dev; run bash recipes/fetch_lm_data.sh)\n"):format(empty), 1, true), out)
  end)
end)
