--[[
  spec/serialization/load_options_spec.lua — torch.load's keywords, torch.save of a whole module
  and torch.serialization.safe_globals (lua/torch/serialization/init.lua) against PyTorch 2.11.

  torch.load takes PyTorch's keywords (map_location, weights_only, mmap, pickle's encoding /
  fix_imports / errors) and raises PyTorch's TypeError text for any other one; pickle_module is
  Python's, an error. torch.save(model) of a whole nn.Module or Optimizer is an error that says
  to save model:state_dict() (and writes nothing). add_safe_globals / safe_globals have no Lua
  form: errors that say what to do; get_safe_globals() lists none.

  Run:  build/ltorch /usr/bin/busted spec/serialization/load_options_spec.lua
]]
local torch = require "torch"
local nn = torch.nn
local pytorch = require "spec.support.pytorch"

local function err(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return tostring(e)
end

describe("torch.load keywords", function()
  local path
  setup(function()
    path = os.tmpname() .. ".pt"
    torch.save({ w = torch.arange(4):float() }, path)
  end)
  teardown(function() os.remove(path) end)

  it("an unknown keyword is PyTorch's TypeError, at the caller's line", function()
    local ref = pytorch.run(([[
try:
    torch.load(%q, bogus=1); print(json.dumps("loaded"))
except TypeError as e:
    print(json.dumps(str(e)))]]):format(path))
    assert.matches("unexpected keyword argument 'bogus'", ref)
    assert.matches("load_options_spec.lua:%d+: load%(%) got an unexpected keyword argument 'bogus'",
      err(function() local v = torch.load(path, { bogus = 1 }); return v end))
    assert.matches("pickle_module is Python's", err(torch.load, path, { pickle_module = "pickle" }))
  end)

  it("PyTorch's own keywords load the same values", function()
    for _, opts in ipairs({ { weights_only = true }, { weights_only = false }, { mmap = true },
      { encoding = "latin1" }, { map_location = "cpu", fix_imports = true, errors = "strict" } }) do
      assert.same({ 0, 1, 2, 3 }, torch.load(path, opts).w:tolist())
    end
  end)
end)

describe("torch.save of a whole module", function()
  it("is an error that says to save model:state_dict(), and writes nothing", function()
    local path = os.tmpname() .. ".pt"
    local model = nn.Linear(2, 3)
    assert.matches("load_options_spec.lua:%d+: save: cannot save a whole Linear .*torch.save%(x:state_dict%(%), path%)",
      err(function() torch.save(model, path) end))
    assert.is_nil(io.open(path))
    local opt = torch.optim.SGD(model:parameters(), { lr = 0.1 })
    assert.matches("save: cannot save a whole .*state_dict", err(torch.save, opt, path))
    torch.save(model:state_dict(), path)
    assert.same(model.weight:tolist(), torch.load(path).weight:tolist())
    os.remove(path)
  end)
end)

describe("torch.serialization.safe_globals", function()
  it("add_safe_globals and safe_globals say what to write; get_safe_globals lists none", function()
    local s = torch.serialization
    assert.matches("load_options_spec.lua:%d+: add_safe_globals: allow%-listing Python classes has no Lua form",
      err(function() s.add_safe_globals({ "MyClass" }) end))
    assert.matches("safe_globals: .*torch.save%(model.state_dict%(%), path%)", err(s.safe_globals, { "MyClass" }))
    assert.same({}, s.get_safe_globals())
  end)
end)
