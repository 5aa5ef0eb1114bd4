--[[
  spec/recipes/train_transformer_spec.lua — recipes/train_transformer.lua end to end at CI size
  (300 fortunes per language, 1 epoch): it trains, starts near ln(6), beats the majority
  baseline, prints the per-language report, writes metrics and checkpoints; a bad flag exits 2.
  Device and mixed precision, on a tiny model (en + de, 40 texts each): --amp trains in bfloat16
  on the CPU (the loss goes down, checkpoints are written); --amp --amp-dtype float16 trains
  with a GradScaler whose state is in the checkpoint; --device cuda on a machine without CUDA, a
  bad --amp-dtype and float16 without --amp are usage errors.
  Needs the fortunes packages (scripts/fetch_datasets.sh; pl and br: fortunes-pl fortunes-br).

  Run: build/ltorch /usr/bin/busted spec/recipes/train_transformer_spec.lua   (~15 s on 2 cores)
]]
local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
-- pl and pt come from fortunes-pl / fortunes-br (bash recipes/fetch_lm_data.sh installs them)
local have = io.open("/usr/share/games/fortunes/brasil", "rb") and io.open("/usr/share/games/fortunes/pl", "rb")

local function run(args)
  local p = io.popen(bin .. " recipes/train_transformer.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("recipes/train_transformer.lua", function()
  local dir = os.tmpname()
  os.remove(dir)

  local it_data = have and it or pending
  it_data("trains a language-ID transformer and reports per language", function()
    local out, code = run("--epochs 1 --per-language 300 --out " .. dir)
    assert.are.equal(0, code, out)
    local init = tonumber(out:match("loss at init ([%d%.]+)"))
    assert.is_true(init ~= nil and math.abs(init - math.log(6)) < 0.3, out)
    local acc, base = out:match("test accuracy ([%d%.]+) %% %(majority%-class baseline ([%d%.]+) %%%)")
    assert.is_true(acc ~= nil and tonumber(acc) > tonumber(base), out)
    for _, l in ipairs({ "en", "de", "es", "it", "pl", "pt" }) do
      assert.truthy(out:match("\n" .. l .. " +[%d%.]+ +[%d%.]+"), l)
    end
    assert.truthy(io.open(dir .. "/metrics.jsonl", "rb"))
    assert.truthy(io.open(dir .. "/checkpoints/checkpoints.json", "rb"))
  end)

  it("rejects a bad flag with one line and exit 2", function()
    local out, code = run("--layers two")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("train_transformer: flag 'layers' expects a number", 1, true), out)
  end)

  local TINY = "--device cpu --languages en,de --per-language 40 --max-len 32 --d-model 16 --heads 2 --layers 1 --ff 32 "
    .. "--batch-size 16 --out " .. dir .. "-amp "
  local it_en_de = (io.open("/usr/share/games/fortunes/de", "rb") and io.open("/usr/share/games/fortunes/fortunes", "rb"))
    and it or pending

  it_en_de("--amp trains in bfloat16 on the CPU", function()
    local out, code = run(TINY .. "--epochs 2 --amp")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local l1 = tonumber(out:match("epoch 1  train loss ([%d%.]+)"))
    local l2 = tonumber(out:match("epoch 2  train loss ([%d%.]+)"))
    assert.is_true(l1 ~= nil and l2 ~= nil and l2 < l1, out)
    assert.truthy(io.open(dir .. "-amp/checkpoints/checkpoint-00000002.pt", "rb"))
  end)

  it_en_de("--amp --amp-dtype float16 trains with a GradScaler, its state in the checkpoint", function()
    local out, code = run(TINY .. "--epochs 1 --amp --amp-dtype float16")
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("epoch 1  train loss [%d%.]+ .- loss scale %d+, skipped steps %d+"), out)
    local st = require("torch").load(dir .. "-amp/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(4, st.scaler._growth_tracker)   -- 64 training texts / batch 16: one update() per step
  end)

  it("rejects --device cuda without CUDA, a bad --amp-dtype and float16 without --amp (exit 2)", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
    }
    if not require("torch").cuda.is_available() then
      cases[#cases + 1] = { "--device cuda", "--device cuda is not available" }
    end
    for _, case in ipairs(cases) do
      local out, code = run(case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train_transformer: " .. case[2], 1, true), out)
      assert.truthy(out:find("usage: ltorch recipes/train_transformer.lua", 1, true), out)
    end
  end)
end)
