--[[
  spec/recipes/minilm_classify_spec.lua — recipes/minilm_classify.lua end to end at CI size (two
  fortune classes, 10 records each, one epoch, 24 tokens): the probe / LoRA / full table with its
  trainable counts (LoRA r=8 on query and value of 6 layers: 73,728 adapter weights plus the
  770-weight head), accuracies in [0, 100], the adapters saved alone and merged back into a
  fresh model with the same test accuracy, results.json; bad flags (one line, usage, exit 2).
  Pending without the model files or Debian's fortunes.

  Run: build/ltorch /usr/bin/busted spec/recipes/minilm_classify_spec.lua   (~25 s on 2 cores)
]]
local torch = require "torch"
local cjson = require "cjson"
local minilm = require "recipes.models.minilm"

local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local tmp = os.tmpname()
os.remove(tmp)

local function run(args)
  local p = io.popen(bin .. " recipes/minilm_classify.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

local CI = "--classes computers,politics --per-class 10 --epochs 1 --max-length 24 --probe-steps 20 --out " .. tmp

describe("recipes/minilm_classify.lua", function()
  local missing = minilm.missing() or (not io.open("/usr/share/games/fortunes/politics") and "no Debian fortunes") or nil

  it("compares a linear probe, LoRA and full fine-tuning, and merges the saved adapters back", function()
    if missing then return pending(missing) end
    local out, code = run(CI)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("2 classes (computers, politics): 14 train / 2 val / 4 test fortunes, at most 24 tokens; majority baseline 50.00 %", 1, true), out)
    local probe = { out:match("\nprobe%s+(%d+) / (%d+)%s+([%d%.]+) %%%s+([%d%.]+) %%%s+([%d%.]+)") }
    local lora = { out:match("\nlora%s+(%d+) / (%d+)%s+([%d%.]+) %%%s+([%d%.]+) %%%s+([%d%.]+)") }
    local full = { out:match("\nfull%s+(%d+) / (%d+)%s+([%d%.]+) %%%s+([%d%.]+) %%%s+([%d%.]+)") }
    assert.are.same({ "770", "22713986" }, { probe[1], probe[2] }, out)
    assert.are.same({ "74498", "22787714" }, { lora[1], lora[2] }, out)
    assert.are.same({ "22713986", "22713986" }, { full[1], full[2] }, out)
    for _, r in ipairs({ probe, lora, full }) do
      assert.is_true(tonumber(r[4]) >= 0 and tonumber(r[4]) <= 100, out)
    end
    local merged, before, diff = out:match("merged: test accuracy ([%d%.]+) %% %(before ([%d%.]+) %%%), max logit difference ([%d%.e%-+]+)")
    assert.are.equal(before, merged, out)
    assert.is_true(tonumber(diff) < 1e-4, out)
    local adapters = torch.load(tmp .. "/adapters.safetensors")
    assert.are.same({ 8, 384 }, adapters["encoder.layer.0.attention.self.query.lora_A"]:size())
    assert.are.same({ 384, 8 }, adapters["encoder.layer.5.attention.self.value.lora_B"]:size())
    assert.are.same({ 2, 384 }, adapters["head.weight"]:size())
    local f = assert(io.open(tmp .. "/results.json", "rb"))
    local results = cjson.decode(f:read("*a"))
    f:close()
    assert.are.same({ "probe", "lora", "full" }, { results[1].method, results[2].method, results[3].method })
  end)

  it("rejects bad flags with one line and the usage", function()
    for _, case in ipairs({
      { "--methods probe,svm", "minilm_classify: unknown method 'svm' (probe, lora, full)" },
      { "--classes computers", "minilm_classify: --classes needs two classes at least" },
      { "--per-class 3", "minilm_classify: --per-class must be >= 7, --epochs and --batch-size >= 1, --max-length >= 3" },
      { "--rank x", "minilm_classify: flag 'rank' expects a number, got 'x'" },
    }) do
      local out, code = run(case[1])
      assert.are.equal(2, code, out)
      assert.are.equal(case[2], out:match("^[^\n]*"), out)
      assert.truthy(out:find("usage: ltorch recipes/minilm_classify.lua", 1, true), out)
    end
  end)
end)
