--[[
  spec/porting/conformance_spec.lua — ltorch against PyTorch's public Python API (issue #24).

  For each entry of spec/porting/api_manifest.lua (generated from PyTorch 2.11 by
  tools/gen_api_manifest.py) the name must exist in ltorch (torch.nn.X, torch.nn.functional.X,
  torch.optim.X, torch.optim.lr_scheduler.X, torch.utils.data.X, torch.X, a tensor's method) and,
  where ltorch binds its arguments with torch._pysig (module, optimizer and scheduler
  constructors, nn.functional), take PyTorch's parameters: names, order, keyword-only ones and
  defaults (rules in spec/porting/conformance.lua). A missing or different entry fails unless
  spec/porting/compat_exceptions.lua lists it with a reason. docs/COMPATIBILITY.md reports the
  same results (build/ltorch tools/gen_compatibility.lua). With the .venv's PyTorch, the manifest is
  also regenerated and must equal the checked-in one.
  Run:  build/ltorch /usr/bin/busted spec/porting/conformance_spec.lua
]]
local P = require "torch._pysig"
local pytorch = require "spec.support.pytorch"

local DIR = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
local C = dofile(DIR .. "conformance.lua")

local results = C.check()
local summary = C.summary(results)

describe("API conformance with PyTorch " .. C.manifest.version, function()
  it("the manifest is what tools/gen_api_manifest.py gives for the .venv's PyTorch", function()
    if not pytorch.available() then
      pending("no PyTorch at " .. pytorch.python .. " (bash scripts/setup.sh)")
      return
    end
    local p = assert(io.popen(("'%s' '%s/../../tools/gen_api_manifest.py' 2>/dev/null")
      :format(pytorch.python, (DIR:gsub("/$", "")))))
    local fresh = p:read("*a")
    p:close()
    local f = assert(io.open(DIR .. "api_manifest.lua", "rb"))
    local stored = f:read("*a")
    f:close()
    assert.is_true(fresh == stored, "spec/porting/api_manifest.lua is stale: regenerate it with "
      .. ".venv/bin/python tools/gen_api_manifest.py > spec/porting/api_manifest.lua")
  end)

  it("the manifest covers every namespace", function()
    for _, s in ipairs(summary) do
      assert.is_true(s.total > 0, "no manifest entries for " .. s.namespace)
    end
    assert.equals(#C.manifest.entries, #results)
  end)

  for _, s in ipairs(summary) do
    it(("%s: every entry present with PyTorch's signature, or a listed exception (%d/%d present)")
      :format(s.namespace, s.present, s.total), function()
      local bad = {}
      for _, r in ipairs(s.results) do
        -- a name listed as missing that now exists with a different signature fails too: its
        -- deviation needs a reason of its own (compat_exceptions.lua's differs)
        if (r.status == "missing" or r.status == "differs") and not r.exception then
          bad[#bad + 1] = r.key .. ": " .. r.status .. (r.detail and (" — " .. r.detail) or "")
        end
      end
      assert.equals(0, #bad, "not in spec/porting/compat_exceptions.lua:\n  " .. table.concat(bad, "\n  "))
    end)
  end

  it("every exception names a manifest entry and gives a reason", function()
    local known = {}
    for _, e in ipairs(C.manifest.entries) do known[e.qualified] = true end
    for _, part in ipairs({ "missing", "differs" }) do
      for name, why in pairs(C.exceptions[part]) do
        assert.is_true(known[name] == true, "compat_exceptions.lua: " .. name .. " is not in the manifest")
        assert.is_true(type(why) == "string" and #why > 0, "compat_exceptions.lua: no reason for " .. name)
      end
    end
  end)

  it("checks signatures where the binder has them", function()
    -- The comparison itself: a known-good constructor, F function and optimizer are exact.
    local by = {}
    for _, r in ipairs(results) do by[r.key] = r end
    for _, key in ipairs({ "torch.nn.Linear", "torch.nn.functional.dropout", "torch.optim.SGD",
      "torch.optim.lr_scheduler.StepLR" }) do
      assert.equals("exact", by[key].status, key .. ": " .. tostring(by[key].detail))
    end
  end)

  it("the comparison catches a different signature", function()
    local e = { qualified = "x", params = {
      { name = "input", kind = "pk" }, { name = "p", kind = "pk", default = 0.5 },
      { name = "inplace", kind = "ko", default = false } } }
    assert.is_nil(C.compare(e, P.signature("x", "input, p=0.5, *, inplace=False")))
    assert.truthy(C.compare(e, P.signature("x", "input, p=0.5, inplace=False")):find("keyword-only", 1, true))
    assert.truthy(C.compare(e, P.signature("x", "input, p=0.25, *, inplace=False")):find("default of p", 1, true))
    assert.truthy(C.compare(e, P.signature("x", "input, q=0.5, *, inplace=False")):find("parameters differ", 1, true))
    assert.truthy(C.compare(e, P.signature("x", "input, p, *, inplace=False")):find("default of p: required", 1, true))
  end)

  it("pysig.signature_of finds a class's and a function's signature", function()
    local torch = require "torch"
    local s = P.signature_of(torch.nn.Linear)
    assert.same({ "in_features", "out_features", "bias", "device", "dtype" }, s.names)
    assert.equals("dropout", P.signature_of(torch.nn.functional.dropout).name)
    assert.equals("relu", P.signature_of(torch.nn.functional.relu).name)   -- through its fast-path wrapper
    assert.is_nil(P.signature_of(print))
    assert.is_nil(P.signature_of({}))
  end)
end)
