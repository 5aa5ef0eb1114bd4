--[[
  spec/recipes/ddp_train_spec.lua — recipes/ddp_train.lua's device and mixed-precision flags on
  a world of one (the 2-rank training run is spec/distributed/ddp_train_spec.lua):
    - --amp trains in bfloat16 on the CPU (the epoch's train loss below 2.0, where a fresh
      model starts near ln(10) = 2.30; a checkpoint written);
    - --amp --amp-dtype float16 trains with a GradScaler whose state is in the checkpoint;
    - --device cuda without CUDA, a bad --amp-dtype, float16 without --amp and an unknown flag:
      one line, the usage, exit 2.
  Skipped when the Fashion-MNIST files are absent.

  Run: build/ltorch /usr/bin/busted spec/recipes/ddp_train_spec.lua   (~10 s on 2 cores)
]]
local torch = require "torch"
local fmnist = require "torch.data.fashion_mnist_files"

local bin = os.getenv("LTORCH_BIN") or "build/ltorch"
local have_data = io.open(fmnist.paths().train_images) ~= nil
local tmp = os.tmpname()
os.remove(tmp)
local TINY = " --device cpu --epochs 1 --limit-train 1024 --limit-test 500"

local function run(args)
  local p = io.popen(bin .. " recipes/ddp_train.lua " .. args .. " 2>&1; echo \"exit=$?\"")
  local out = p:read("*a")
  p:close()
  return out, tonumber(out:match("exit=(%d+)%s*$"))
end

describe("recipes/ddp_train.lua --device / --amp", function()
  local it_data = have_data and it or pending

  it_data("--amp trains in bfloat16 on the CPU", function()
    local out, code = run("--amp --out " .. tmp .. "/bf16" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("world_size 1 (gloo)", 1, true), out)
    assert.truthy(out:find("1 epochs on cpu, amp bfloat16\n", 1, true), out)
    local loss = tonumber(out:match("epoch 1  train loss ([%d%.]+)"))
    assert.is_true(loss ~= nil and loss < 2.0, out)   -- ln(10) = 2.30 at init
    assert.is_nil(torch.load(tmp .. "/bf16/checkpoints/last.pt").scaler)
  end)

  it_data("--amp --amp-dtype float16 trains with a GradScaler, its state in the checkpoint", function()
    local out, code = run("--amp --amp-dtype float16 --out " .. tmp .. "/fp16" .. TINY)
    assert.are.equal(0, code, out)
    assert.truthy(out:find("on cpu, amp float16 + GradScaler\n", 1, true), out)
    assert.truthy(out:match("test acc [%d%.]+  loss scale %d+, skipped steps %d+"), out)
    local st = torch.load(tmp .. "/fp16/checkpoints/last.pt")
    assert.are.equal(65536, st.scaler.scale)
    assert.are.equal(8, st.scaler._growth_tracker)   -- 1024 images, batch 128: one update() per step
    os.execute("rm -rf '" .. tmp .. "'")
  end)

  it("rejects bad flags with one line, the usage and exit 2", function()
    local cases = {
      { "--amp --amp-dtype int8", "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { "--amp-dtype float16", "--amp-dtype float16 needs --amp" },
      { "--bogus 1", "unknown flag 'bogus'" },
      { "--epochs many", "flag 'epochs' expects a number, got 'many'" },
    }
    if not torch.cuda.is_available() then cases[#cases + 1] = { "--device cuda", "--device cuda is not available" } end
    for _, case in ipairs(cases) do
      local out, code = run(case[1])
      assert.are.equal(2, code, out)
      assert.truthy(out:find("ddp_train: " .. case[2], 1, true) == 1, out)
      assert.truthy(out:find("usage: ltorch [tools/run.lua --nproc-per-node N] recipes/ddp_train.lua", 1, true), out)
    end
  end)
end)
