--[[
  spec/recipes/amp_spec.lua — templates/_common/amp.lua, the device and mixed-precision step
  every recipe and template uses:
    - config checking: the defaults, auto -> cpu on a machine without CUDA, and one-line
      messages for a bad device, an unavailable CUDA device, a bad amp_dtype, float16 without amp;
    - bfloat16: the forward runs in bfloat16, no GradScaler, the step is the plain one;
    - float16 (on the CPU; the GradScaler's scale lives on the loss's device): the loss is scaled,
      the gradients are unscaled BEFORE clipping (an update of norm lr * clip, not clip / scale),
      a step with inf gradients is skipped and the scale backs off, and the scaler's state goes
      through a training-state checkpoint;
    - inference = true leaves the scaler out.

  Run: build/ltorch /usr/bin/busted spec/recipes/amp_spec.lua   (~1 s)
]]
local torch = require "torch"
local amp = require "templates._common.amp"

local no_cuda = not torch.cuda.is_available()

local function linear()
  torch.manual_seed(0)
  return torch.nn.Linear(4, 3)
end

describe("templates/_common/amp.lua", function()
  it("defaults to float32 on the best device, without a scaler", function()
    local mp = assert(amp.new({}))
    assert.are.equal(no_cuda and "cpu" or "cuda", mp.device)
    assert.is_false(mp.enabled)
    assert.is_nil(mp.scaler)
    assert.are.equal(5, mp:autocast(function() return 5 end))
    assert.are.equal("", mp:scale_note())
  end)

  it("names the bad key in one line", function()
    local cases = {
      { { device = "gpu" }, "--device must be auto, cpu, cuda or cuda:N, got 'gpu'" },
      { { device = "cuda:x" }, "--device must be auto, cpu, cuda or cuda:N, got 'cuda:x'" },
      { { amp = true, amp_dtype = "int8" }, "--amp-dtype must be bfloat16 or float16, got 'int8'" },
      { { amp_dtype = "float16" }, "--amp-dtype float16 needs --amp (mixed precision is off)" },
    }
    if no_cuda then
      cases[#cases + 1] = { { device = "cuda" }, "--device cuda is not available (no CUDA device, or a CPU-only libtorch)" }
      cases[#cases + 1] = { { device = "cuda:1", amp = true }, "--device cuda:1 is not available" }
    end
    for _, case in ipairs(cases) do
      local mp, err = amp.new(case[1])
      assert.is_nil(mp)
      assert.truthy(err:find(case[2], 1, true), err)
      assert.falsy(err:find("\n", 1, true), err)
    end
  end)

  it("bfloat16: the forward in bfloat16, no scaler, a plain step", function()
    local mp = assert(amp.new({ device = "cpu", amp = true }))
    assert.are.equal(torch.bfloat16, mp.dtype)
    assert.is_nil(mp.scaler)
    assert.are.equal("cpu, amp bfloat16", mp:describe())
    local m, x = linear(), torch.randn(8, 4)
    local y = mp:autocast(function() return m(x) end)
    assert.are.equal(torch.bfloat16, y.dtype)
    local opt = torch.optim.SGD(m:parameters(), { lr = 0.1 })
    local w = m.weight:clone()
    local loss = y:float():pow(2):mean()
    assert.are.equal(loss, mp:scale(loss))
    loss:backward()
    assert.is_true(mp:step(opt, m:parameters(), 1.0))
    assert.is_false(torch.equal(w, m.weight))
  end)

  it("float16 on the CPU: scaled loss, unscale_ before clipping, inf steps skipped", function()
    local mp = assert(amp.new({ device = "cpu", amp = true, amp_dtype = "float16" }))
    assert.are.equal("cpu, amp float16 + GradScaler", mp:describe())
    local m, x = linear(), torch.randn(8, 4)
    local opt = torch.optim.SGD(m:parameters(), { lr = 1.0 })
    local loss = mp:autocast(function() return m(x) end):float():pow(2):mean()
    local scaled = mp:scale(loss)
    assert.near(loss:item() * 65536, scaled:item(), 1e-3 * loss:item() * 65536)
    scaled:backward()
    local w, b = m.weight:clone(), m.bias:clone()
    -- clip to 1e-3: after unscale_ the update's norm is lr * 1e-3; clipping the scaled
    -- gradients instead would give 1e-3 / 65536
    assert.is_true(mp:step(opt, m:parameters(), 1e-3))
    local moved = torch.cat({ (m.weight - w):view(-1), m.bias - b }):norm():item()
    assert.near(1e-3, moved, 1e-5)
    assert.are.equal(65536, mp.scaler:get_scale())
    assert.are.equal(1, mp.scaler:_get_growth_tracker())

    -- d(sum)/d(out) = 1, times 65536, overflows float16 (max 65504) in the backward
    opt:zero_grad()
    w = m.weight:clone()
    mp:scale(mp:autocast(function() return m(x) end):float():sum()):backward()
    assert.is_false(mp:step(opt, m:parameters(), 1.0))
    assert.is_true(torch.equal(w, m.weight))
    assert.are.equal(32768, mp.scaler:get_scale())
    assert.are.equal(1, mp.skipped)
    assert.are.equal("  loss scale 32768, skipped steps 1", mp:scale_note())
  end)

  it("float16: the scaler's state goes through a checkpoint", function()
    local mp = assert(amp.new({ device = "cpu", amp = true, amp_dtype = "float16" }))
    local m = linear()
    local opt = torch.optim.SGD(m:parameters(), { lr = 0.1 })
    mp:scale(mp:autocast(function() return m(torch.randn(2, 4)) end):float():sum()):backward()
    mp:step(opt, m:parameters(), 0)
    local path = os.tmpname()
    torch.training_state.save_training_state(path, { model = m, optimizer = opt, scaler = mp.scaler })
    local back = assert(amp.new({ device = "cpu", amp = true, amp_dtype = "float16" }))
    torch.training_state.load_training_state(path, { model = m, optimizer = opt, scaler = back.scaler })
    os.remove(path)
    assert.are.equal(32768, back.scaler:get_scale())
  end)

  it("inference = true: float16 autocast without a scaler", function()
    local mp = assert(amp.new({ device = "cpu", amp = true, amp_dtype = "float16" }, { inference = true }))
    assert.is_nil(mp.scaler)
    assert.are.equal(torch.float16, mp:autocast(function() return linear()(torch.randn(2, 4)) end).dtype)
  end)
end)
