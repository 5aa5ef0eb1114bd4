--[[
  spec/smoke_spec.lua — LoRALinear's contract (starts as the base layer, only adapters train,
  merge / unmerge keep the output, adapters save alone) and one short run of train.lua; mixed
  precision on the CPU with a tiny model: --amp (bfloat16) fine-tunes, --amp --amp-dtype
  float16 fine-tunes with a GradScaler whose state is in the checkpoint; bad device / precision
  flags exit 2. Run from the project folder: ltorch /usr/bin/busted spec    (~25 s)
]]
local torch = require "torch"
local lora = require "lora"
local bin = os.getenv("LTORCH_BIN") or (arg and arg[-1]) or "ltorch"

local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("lora.lua", function()
  local function model()
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
  end

  it("starts as the base model and trains only the adapters", function()
    local m, x = model(), torch.randn(5, 6)
    local before = m(x)
    local params = lora.apply(m, { rank = 2, alpha = 4, targets = { "0", "2" } })
    assert.are.equal(4, #params)                        -- A and B of two layers
    assert.are.equal(2 * 6 + 8 * 2 + 2 * 8 + 3 * 2, m:num_parameters(true))
    assert.is_true(torch.allclose(before, m(x)))
  end)

  it("merge and unmerge keep the output", function()
    local m, x = model(), torch.randn(5, 6)
    lora.apply(m, { rank = 2, alpha = 4, targets = { "0", "2" } })
    torch.no_grad(function() for _, p in ipairs(m:parameters()) do if p.requires_grad then p:normal_() end end end)
    local y = m(x)
    local w = m:children()[1].base.weight:clone()
    lora.merge(m)
    assert.is_true(torch.allclose(y, m(x), { rtol = 1e-4, atol = 1e-5 }))
    lora.unmerge(m)
    assert.is_true(torch.allclose(w, m:children()[1].base.weight, { rtol = 1e-5, atol = 1e-6 }))
    assert.is_true(torch.allclose(y, m(x), { rtol = 1e-4, atol = 1e-5 }))
  end)

  it("saves and loads the adapters alone", function()
    local m = model()
    lora.apply(m, { rank = 2, alpha = 4, targets = { "2" } })
    local sd = lora.adapters(m):state_dict()
    local keys = {}
    for k in pairs(sd) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.are.same({ "2.lora_A", "2.lora_B" }, keys)
    assert.has_error(function() lora.apply(model(), { rank = 2, alpha = 4, targets = { "nope" } }) end)
  end)
end)

describe("train.lua", function()
  it("pretrains, fine-tunes the adapters and saves them", function()
    local out, code = sh(bin .. " train.lua --epochs 1 --limit-steps 20 --out runs/smoke")
    assert.are.equal(0, code, out)
    assert.truthy(out:match("loss at init [%d%.]+ %(uniform"), out)
    assert.truthy(out:match("%d+ trainable of %d+ parameters"), out)
    local before, after = out:match("val loss ([%d%.]+) %-> ([%d%.]+) after LoRA")
    assert.is_true(tonumber(after) < tonumber(before), out)
    assert.truthy(io.open("runs/smoke/adapters.pt", "rb"), "adapters.pt")
  end)

  local TINY = " --device cpu --epochs 1 --limit-steps 4 --batch-size 4 --context 16 --d-model 16 --heads 2 --layers 1"
    .. " --eval-batches 2"

  it("pretrains and fine-tunes with --amp in bfloat16 on the CPU", function()
    local out, code = sh(bin .. " train.lua --amp --out runs/amp" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp bfloat16\n", 1, true), out)
    local before, after = out:match("val loss ([%d%.]+) %-> ([%d%.]+) after LoRA")
    assert.is_true(tonumber(after) ~= nil and tonumber(after) < tonumber(before), out)
    assert.truthy(io.open("runs/amp/adapters.pt", "rb"), "adapters.pt")
  end)

  it("fine-tunes with --amp --amp-dtype float16 and a GradScaler, its state in the checkpoint", function()
    local out, code = sh(bin .. " train.lua --amp --amp-dtype float16 --out runs/fp16" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("parameters on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("loss scale %d+, skipped steps %d+"), out)
    local st = torch.load("runs/fp16/checkpoints/checkpoint-00000001.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(8, st.scaler._growth_tracker)   -- 4 pretraining + 4 fine-tuning steps, one update() each
  end)

  it("rejects a bad device or precision with exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
    }
    if not torch.cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local out, code = sh(bin .. " train.lua " .. case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("train.lua: " .. case[2], 1, true) == 1, out)
    end
  end)

  it("rejects a bad flag with exit 2", function()
    local out, code = sh(bin .. " train.lua --rank two")
    assert.are.equal(2, code, out)
    assert.truthy(out:find("expects a number", 1, true), out)
  end)
end)
