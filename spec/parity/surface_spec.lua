--[[
  spec/parity/surface_spec.lua — the generated op surface as a whole (lua/torch/_gen/ops.lua,
  bound by lua/torch/_dispatch.lua and lua/torch/_ops_lookup.lua).

  Why: the parity cases (parity_spec.lua) sample ops; this spec checks the surface itself: that
  it is large, reachable by name, explains misuse, and is what the generator produces.

  What:
    1. #torch._ops (overloads found in the loaded libtorch) is at least 2000; printed.
    2. Of the public names in _gen/ops.lua (no leading underscore; names whose every overload
       is an out= variant left out), at least 95 % are reachable as torch.X or x:X (a
       function); the percentage and the unreachable names are printed.
    3. A wrong argument type raises an error naming the op, the argument and the accepted
       signatures (function, method and namespace forms).
    4. docs/ops_skipped.md lists every skipped schema entry with its reason, and running
       tools/gen_ops.lua (in a temporary directory, so the checkout is not touched) reproduces
       the checked-in _gen/ops.lua and docs/ops_skipped.md byte for byte.

  Run:  build/ltorch /usr/bin/busted spec/parity/surface_spec.lua
]]
local torch = require "torch"
local gen = require "torch._gen.ops"
local dispatch = require "torch._dispatch"
local schema = require "torch._schema"

local pytorch = require "spec.support.pytorch"
local YAML = pytorch.native_functions_yaml() or "(no PyTorch in .venv)"

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  return s
end

-- Public schema names -> true when every overload of the name is an out= variant.
local function public_names()
  local names = {}
  for func in dispatch.each_entry() do
    local name = func:match("^([%w_]+)")
    if name:sub(1, 1) ~= "_" then
      local out_variant = false
      for _, a in ipairs(schema.parse(func).args) do
        if a.kwarg_only and a.writes then out_variant = true end
      end
      if names[name] == nil then names[name] = true end
      if not out_variant then names[name] = false end
    end
  end
  return names
end

describe("the generated op surface", function()
  it("binds at least 2000 ATen overloads", function()
    local n = #torch._ops
    io.write(("\nsurface: %d ATen overloads bound (of %d schema entries)\n"):format(n, gen.schema_entries))
    assert.is_true(n >= 2000, "only " .. n .. " overloads bound")
  end)

  it("reaches at least 95 % of the public names as torch.X or x:X", function()
    local x = torch.zeros(1)
    local total, reached, missing = 0, 0, {}
    for name, only_out in pairs(public_names()) do
      if not only_out then
        total = total + 1
        local f = torch[name]                       -- the lazy lookup, then its type
        local ok, m = pcall(function() return x[name] end)
        if type(f) == "function" or (ok and type(m) == "function") then
          reached = reached + 1
        else
          missing[#missing + 1] = name
        end
      end
    end
    table.sort(missing)
    local pct = 100 * reached / total
    io.write(("\nsurface: %d of %d public names reachable (%.2f %%); not reachable as functions: %s\n")
      :format(reached, total, pct, #missing > 0 and table.concat(missing, ", ") or "none"))
    assert.is_true(pct >= 95, ("%.2f %% reachable"):format(pct))
  end)

  describe("a wrong argument type", function()
    local function message(f, ...)
      local ok, err = pcall(f, ...)
      assert.is_false(ok, "expected an error")
      return tostring(err)
    end

    it("names the function, the argument and the accepted signatures", function()
      local a = torch.randn(2, 3)
      local m = message(torch.logaddexp, a, "x")
      assert.matches("torch.logaddexp", m, 1, true)
      assert.matches("argument 'other'", m, 1, true)
      assert.matches("accepted signatures:", m, 1, true)
      assert.matches("torch.logaddexp(Tensor self, Tensor other)", m, 1, true)
    end)

    it("names the method and its parameter", function()
      local a = torch.randn(2, 3)
      local m = message(function() return a:addcmul(a, "x") end)
      assert.matches("Tensor.addcmul", m, 1, true)
      assert.matches("argument 'tensor2'", m, 1, true)
      assert.matches("Tensor.addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1)", m, 1, true)
    end)

    it("names a namespaced op (torch.linalg) and a bad keyword", function()
      local m = message(torch.linalg.vector_norm, torch.randn(3), { ord = "two" })
      assert.matches("torch.linalg.vector_norm", m, 1, true)
      assert.matches("argument 'ord'", m, 1, true)
      assert.matches("accepted signatures:", m, 1, true)
      m = message(torch.logaddexp, torch.randn(2), torch.randn(2), { bogus = 1 })
      assert.matches("unexpected keyword 'bogus'", m, 1, true)
    end)
  end)

  describe("docs/ops_skipped.md", function()
    it("lists every skipped entry with its reason", function()
      local doc = assert(slurp("docs/ops_skipped.md"), "docs/ops_skipped.md is missing")
      local total, bound, skipped = doc:match("(%d+) schema entries; (%d+) bound, (%d+) skipped")
      assert.is_not_nil(total, "the summary line is missing")
      assert.are.equal(gen.schema_entries, tonumber(total))
      local n = 0
      for _ in dispatch.each_entry() do n = n + 1 end
      assert.are.equal(gen.bound_entries, n)
      assert.are.equal(n, tonumber(bound))
      local rows = 0
      for entry, reason in doc:gmatch("\n| `([^\n]-)` | ([^\n]-) |") do
        rows = rows + 1
        assert.is_true(#reason > 0, "no reason for " .. entry)
        assert.matches("%->", entry)   -- a whole schema line
      end
      assert.are.equal(tonumber(skipped), rows)
      assert.are.equal(tonumber(total), tonumber(bound) + tonumber(skipped))
    end)

    it("and lua/torch/_gen/ops.lua are what tools/gen_ops.lua generates", function()
      if not io.open(YAML, "rb") then
        pending("no native_functions.yaml at " .. YAML .. " (PyTorch in .venv: bash scripts/setup.sh)")
        return
      end
      local root = io.popen("pwd"):read("*l")
      local tmp = os.tmpname()
      os.remove(tmp)
      local cmd = ("mkdir -p %s/lua/torch/_gen %s/docs && cp %s/lua/torch/_schema.lua %s/lua/torch/ && "
        .. "cd %s && %s/build/ltorch %s/tools/gen_ops.lua 2>&1"):format(tmp, tmp, root, tmp, tmp, root, root)
      local p = io.popen(cmd)
      local log = p:read("*a")
      p:close()
      local ops, skipped = slurp(tmp .. "/lua/torch/_gen/ops.lua"), slurp(tmp .. "/docs/ops_skipped.md")
      os.execute("rm -rf " .. tmp)
      assert.is_not_nil(ops, "the generator wrote no ops.lua:\n" .. log)
      assert.is_true(ops == slurp("lua/torch/_gen/ops.lua"),
        "lua/torch/_gen/ops.lua differs from the generator's output: run build/ltorch tools/gen_ops.lua")
      assert.is_true(skipped == slurp("docs/ops_skipped.md"),
        "docs/ops_skipped.md differs from the generator's output: run build/ltorch tools/gen_ops.lua")
    end)
  end)
end)
