--[[
  spec/torch/lazy_namespace_spec.lua — torch._lazy_namespace and the namespaces built on it
  (torch.nn, torch.nn.functional, torch.nn.utils, torch.optim, torch.optim.functional): each
  index names exactly what its files define, a part loads at the first read of one of its names
  and not before, a name the user set is kept, and the walkers (names, materialize, load_all)
  see what they should.

  Run: build/ltorch /usr/bin/busted spec/torch/lazy_namespace_spec.lua
]]
local torch = require "torch"
local lazy = require "torch._lazy_namespace"

-- The sorted keys of t that keep(k, v) accepts.
local function keys(t, keep)
  local out = {}
  for k, v in pairs(t) do if not keep or keep(k, v) then out[#out + 1] = k end end
  table.sort(out)
  return out
end

local function sorted(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = v end
  table.sort(out)
  return out
end

-- Runs a Lua chunk in a fresh ltorch process; returns its output.
local function fresh(script)
  local bin = (arg and arg[-1]) or "build/ltorch"
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(script)
  f:close()
  local p = assert(io.popen(("%s %s 2>&1"):format(bin, path)))
  local out = p:read("*a")
  p:close()
  os.remove(path)
  return out
end

-- A namespace over two fake parts, served by package.preload; loads[m] counts their loads.
local loads = {}
local function fake_namespace(extra)
  local t = {}
  for _, m in ipairs({ "lazy_ns_spec.a", "lazy_ns_spec.b" }) do
    package.loaded[m] = nil
    loads[m] = 0
  end
  package.preload["lazy_ns_spec.a"] = function()
    loads["lazy_ns_spec.a"] = loads["lazy_ns_spec.a"] + 1
    return { Alpha = "alpha", Beta = "beta", hidden = "not indexed" }
  end
  package.preload["lazy_ns_spec.b"] = function()
    loads["lazy_ns_spec.b"] = loads["lazy_ns_spec.b"] + 1
    return { Gamma = "gamma" }
  end
  local spec = { name = "spec.ns", parts = { { "lazy_ns_spec.a", { "Alpha", "Beta" } }, { "lazy_ns_spec.b", { "Gamma" } } },
    fields = { sub = "lazy_ns_spec.b" } }
  for k, v in pairs(extra or {}) do spec[k] = v end
  return lazy.install(t, spec)
end

describe("torch._lazy_namespace", function()
  it("loads a part at the first read of one of its names, once, and sets all its indexed names", function()
    local t = fake_namespace()
    assert.equals(0, loads["lazy_ns_spec.a"])
    assert.equals("beta", t.Beta)
    assert.equals(1, loads["lazy_ns_spec.a"])
    assert.equals("alpha", rawget(t, "Alpha"))
    assert.is_nil(rawget(t, "hidden"))
    assert.is_nil(t.hidden)
    assert.equals(0, loads["lazy_ns_spec.b"])
    assert.equals("alpha", t.Alpha)
    assert.equals(1, loads["lazy_ns_spec.a"])
  end)

  it("gives a field the whole module, and nil (or `otherwise`) for a name outside the index", function()
    local t = fake_namespace()
    assert.equals("gamma", t.sub.Gamma)
    assert.is_nil(t.Nope)
    local asked = {}
    local u = fake_namespace({ otherwise = function(_, k) asked[#asked + 1] = k; return k == "made" and 7 or nil end })
    assert.equals(7, u.made)
    assert.is_nil(u.other)
    assert.equals("alpha", u.Alpha)
    assert.same({ "made", "other" }, asked)
  end)

  it("never overwrites a name the user set before its part loaded", function()
    local t = fake_namespace()
    t.Alpha = "mine"
    assert.equals("beta", t.Beta)
    assert.equals("mine", t.Alpha)
  end)

  it("lists every name, copies only what is loaded, and loads everything on request", function()
    local t = fake_namespace()
    assert.same({ "Alpha", "Beta", "Gamma", "sub" }, lazy.names(t))
    assert.is_nil(lazy.names({}))
    lazy.materialize(t)
    assert.same({}, keys(t))
    require "lazy_ns_spec.b"
    lazy.materialize(t)
    assert.same({ "Gamma", "sub" }, keys(t))
    assert.equals(0, loads["lazy_ns_spec.a"])
    lazy.load_all(t)
    assert.same({ "Alpha", "Beta", "Gamma", "sub" }, keys(t))
  end)

  it("refuses an index that names a name twice, or a name its part does not define", function()
    assert.matches("spec.dup: lazy_ns_spec.a and lazy_ns_spec.b both define Alpha", select(2, pcall(lazy.install, {},
      { name = "spec.dup", parts = { { "lazy_ns_spec.a", { "Alpha" } }, { "lazy_ns_spec.b", { "Alpha" } } } })))
    package.loaded["lazy_ns_spec.a"] = nil
    local t = lazy.install({}, { name = "spec.bad", parts = { { "lazy_ns_spec.a", { "Alpha", "Delta" } } } })
    assert.matches("spec.bad: lazy_ns_spec.a does not define Delta, which its index names",
      select(2, pcall(function() return t.Delta end)))
    assert.matches("materialize: not a lazy namespace", select(2, pcall(lazy.materialize, {})))
  end)
end)

describe("the library's lazy namespaces", function()
  local nn, F, optim = torch.nn, torch.nn.functional, torch.optim

  -- each part's index against what the file defines
  local function check_index(t, wanted)
    local parts, fields = lazy.parts(t)
    assert.is_true(#parts > 0)
    for _, p in ipairs(parts) do
      assert.same(keys(require(p[1]), function(k, v) return wanted(p[1], k, v) end), sorted(p[2]), p[1])
    end
    return fields
  end

  it("index exactly the names each file defines (torch.nn's families, nn.functional's files)", function()
    local fields = check_index(nn, function() return true end)
    assert.same({ "functional", "init", "parallel", "utils" }, keys(fields))
    check_index(F, function() return true end)
    check_index(nn.utils, function(_, k) return k:sub(1, 1) ~= "_" end)
  end)

  it("index the optimizer classes and PyTorch's functional updates", function()
    check_index(optim, function(_, k) return k:match("^%u") ~= nil end)
    local fns = {}
    for _, p in ipairs(lazy.parts(optim.functional)) do
      assert.equals(1, #p[2])
      assert.equals("function", type(require(p[1])[p[2][1]]))
      fns[#fns + 1] = p[2][1]
    end
    assert.same({ "adadelta", "adafactor", "adagrad", "adam", "adamax", "asgd", "lbfgs", "muon", "nadam", "radam",
      "rmsprop", "rprop", "sgd", "sparse_adam" }, sorted(fns))
  end)

  it("give the same values through the index as the files do", function()
    assert.equals(require("torch.nn.linear").Linear, nn.Linear)
    assert.equals(require("torch.nn.deprecated").NLLLoss2d, nn.NLLLoss2d)
    assert.equals(require("torch.nn.functional_loss").cross_entropy, F.cross_entropy)
    assert.equals(require("torch.nn.functional_mha")._forward, F._forward)
    assert.equals(require("torch.nn.utils_fusion").fuse_conv_bn_eval, nn.utils.fuse_conv_bn_eval)
    assert.equals(require("torch.nn.utils_rnn"), nn.utils.rnn)
    assert.equals(require("torch.optim.adam").AdamW, optim.AdamW)
    assert.equals(require("torch.optim.adam").adam, optim.functional.adam)
    assert.equals(require("torch.optim.lr_scheduler"), optim.lr_scheduler)
    assert.is_nil(nn.NoSuchLayer)
    assert.is_nil(optim.NoSuchOptimizer)
    -- a name outside nn.functional's index is the generated op
    assert.equals("function", type(F.conv2d))
  end)

  it("load a family at its first use, not with `require` (a script's heap holds what it uses)", function()
    local out = fresh([[
      local torch = require "torch"
      local nn, optim, F = torch.nn, torch.optim, torch.nn.functional
      local function loaded(m) return package.loaded[m] ~= nil and "y" or "n" end
      local function row() return table.concat({ loaded("torch.nn.linear"), loaded("torch.nn.conv"),
        loaded("torch.nn.functional_loss"), loaded("torch.nn.functional_layers"), loaded("torch.nn.utils"),
        loaded("torch.optim.adam"), loaded("torch.optim.lbfgs") }) end
      local r1 = row()
      local m = nn.Linear(2, 3)
      local r2 = row()
      local loss = F.mse_loss(m(torch.zeros(1, 2)), torch.zeros(1, 3))
      local opt = optim.AdamW(m:parameters())
      print(r1, r2, row(), rawget(nn, "Identity") == require("torch.nn.linear").Identity)
    ]])
    assert.equals("nnnnnnn\tynnnnnn\tynynnyn\ttrue\n", out)
  end)

  it("keep a layer's own class the user put in torch.nn before its family loaded", function()
    local out = fresh([[
      local nn = require "torch.nn"
      local Mine = nn.Module:extend("Linear")
      function Mine:__init(a) self.a = a end
      function Mine:forward(x, scale) return x * (scale or 1) end
      nn.Linear = Mine
      local id = nn.Identity    -- loads torch.nn.linear
      local m = nn.Linear(5)
      -- keywords bind Mine's own Lua names, not PyTorch's Linear(input)
      print(nn.Linear == Mine, m.a, id ~= nil, m({ x = 2, scale = 3 }))
    ]])
    assert.equals("true\t5\ttrue\t6\n", out)
  end)

  it("offer the names of families not loaded yet to REPL completion", function()
    local out = fresh([[
      local torch = require "torch"
      local c = require("torch.repl.complete").candidates("torch.nn.Conv", "torch.nn.Conv", 1, { torch = torch })
      local before = package.loaded["torch.nn.conv"] ~= nil
      table.sort(c)
      print(before, table.concat(c, " "))
    ]])
    assert.equals("false\ttorch.nn.Conv1d torch.nn.Conv2d torch.nn.Conv3d torch.nn.ConvTranspose1d "
      .. "torch.nn.ConvTranspose2d torch.nn.ConvTranspose3d\n", out)
  end)
end)
