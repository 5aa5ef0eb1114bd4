--[[
  spec/torch/random_spec.lua — torch.random (fork_rng, the seeding aliases) and torch.cuda's
  generator states (get_rng_state, set_rng_state and their _all forms, initial_seed, seed,
  seed_all), against PyTorch 2.11's behaviour on the same machine.

  On a machine without a GPU (CI) PyTorch raises "Found no NVIDIA driver ..." from
  get_rng_state / set_rng_state / initial_seed, returns [] from get_rng_state_all, and does
  nothing for set_rng_state_all([]), seed and seed_all: ltorch must do the same. With a GPU the
  states round-trip and fork_rng restores the device's generator (run by bench/gpu/check.sh).

  Run:  bash scripts/test.sh spec/torch/random_spec.lua
]]
local torch = require "torch"
local pytorch = require "spec.support.pytorch"

local has_gpu = torch.cuda.is_available()

describe("torch.random.fork_rng", function()
  it("restores the CPU generator after the function, returning its results", function()
    torch.manual_seed(3)
    local inside, extra = torch.random.fork_rng(function() return torch.rand(3), "x" end)
    local after = torch.rand(3)
    assert.are.same(inside:tolist(), after:tolist())
    assert.are.equal("x", extra)
  end)

  it("restores it when the function raises, and re-raises", function()
    torch.manual_seed(4)
    local ok, err = pcall(torch.random.fork_rng, { devices = {} }, function()
      torch.rand(10)
      error("boom", 0)
    end)
    assert.is_false(ok)
    assert.are.equal("boom", err)
    local a = torch.rand(2)
    torch.manual_seed(4)
    assert.are.same(torch.rand(2):tolist(), a:tolist())
  end)

  it("does not fork with enabled = false or device_type = 'meta'", function()
    torch.manual_seed(5)
    torch.random.fork_rng({ enabled = false }, function() torch.rand(1) end)
    local a = torch.rand(1):item()
    torch.manual_seed(5)
    torch.rand(1)
    assert.are.equal(torch.rand(1):item(), a)
    torch.manual_seed(5)
    torch.random.fork_rng({ device_type = "meta" }, function() torch.rand(1) end)
    assert.are.equal(a, torch.rand(1):item())
  end)

  it("refuses unknown options and a missing function", function()
    assert.has_error(function() torch.random.fork_rng({ bogus = 1 }, print) end,
      "fork_rng() got an unexpected keyword argument 'bogus'")
    assert.has_error(function() torch.random.fork_rng({}) end)
    assert.has_error(function() torch.random.fork_rng({ devices = 0 }, print) end)
  end)

  it("matches PyTorch's stream: the draws after a fork equal PyTorch's", function()
    if not pytorch.available() then pending("the reference PyTorch is not installed") return end
    local ref = pytorch.run [[
torch.manual_seed(7)
with torch.random.fork_rng(devices=[]):
    torch.rand(5)
print(json.dumps(torch.rand(3).tolist()))
]]
    torch.manual_seed(7)
    torch.random.fork_rng({ devices = {} }, function() torch.rand(5) end)
    local got = torch.rand(3):tolist()
    for i = 1, 3 do assert.is_true(math.abs(got[i] - ref[i]) < 1e-7) end
  end)
end)

describe("torch.cuda generator states", function()
  it("behave as PyTorch's on this machine", function()
    if has_gpu then
      local s = torch.cuda.get_rng_state()
      assert.are.equal(torch.uint8, s.dtype)
      local a = torch.rand(4, { device = "cuda" })
      torch.cuda.set_rng_state(s)
      assert.are.same(a:cpu():tolist(), torch.rand(4, { device = "cuda" }):cpu():tolist())
      assert.are.equal(torch.cuda.device_count(), #torch.cuda.get_rng_state_all())
      return
    end
    local no_driver = "Found no NVIDIA driver on your system"
    local ok, err = pcall(torch.cuda.get_rng_state)
    assert.is_false(ok)
    assert.matches("cuda.get_rng_state: " .. no_driver, err, 1, true)
    ok, err = pcall(torch.cuda.set_rng_state, torch.get_rng_state())
    assert.is_false(ok)
    assert.matches(no_driver, err, 1, true)
    ok, err = pcall(torch.cuda.initial_seed)
    assert.is_false(ok)
    assert.matches(no_driver, err, 1, true)
    assert.are.same({}, torch.cuda.get_rng_state_all())
    torch.cuda.set_rng_state_all({})
    torch.cuda.seed()
    torch.cuda.seed_all()
  end)

  it("check their arguments", function()
    assert.has_error(function() torch.cuda.set_rng_state(5) end,
      "bad argument #1 to 'cuda.set_rng_state' (Tensor expected, got number)")
    assert.has_error(function() torch.cuda.set_rng_state_all(5) end)
    assert.has_error(function() torch.cuda.get_rng_state("cpu") end, "cuda.get_rng_state: expected a CUDA device, got 'cpu'")
  end)

  it("are what PyTorch's are on this machine (the reference run)", function()
    if not pytorch.available() then pending("the reference PyTorch is not installed") return end
    local ref = pytorch.run [[
out = {"all": len(torch.cuda.get_rng_state_all())}
try:
    torch.cuda.get_rng_state(); out["get"] = "ok"
except RuntimeError as e:
    out["get"] = str(e)
print(json.dumps(out))
]]
    assert.are.equal(ref.all, #torch.cuda.get_rng_state_all())
    local ok, err = pcall(torch.cuda.get_rng_state)
    if ref.get == "ok" then assert.is_true(ok) else assert.matches(ref.get, err, 1, true) end
  end)
end)

describe("torch.training_state keeps the generators", function()
  it("saves the CPU state (and CUDA's where there is a GPU) and restores it on load", function()
    local path = os.tmpname()
    local m = torch.nn.Linear(2, 2)
    torch.manual_seed(11)
    torch.training_state.save_training_state(path, { model = m, epoch = 1 })
    local expected = torch.rand(3):tolist()
    torch.rand(100)
    local st = torch.training_state.load_training_state(path, { model = m })
    assert.are.same(expected, torch.rand(3):tolist())
    assert.is_true(torch.is_tensor(st.rng.cpu))
    assert.are.equal(has_gpu, st.rng.cuda ~= nil)
    os.remove(path)
  end)
end)
