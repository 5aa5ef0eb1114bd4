--[[
  spec/parity/parity_spec.lua — the PyTorch parity suite: ltorch vs PyTorch, op by op.

  Why: ltorch promises PyTorch's semantics for the whole op surface. This suite computes a broad
  sample of ops (pointwise, binary, reductions, linear algebra, shape/indexing, nn functional,
  losses) in ltorch and in Debian's python3-torch on identical inputs, forward and backward.

  What: the cases are data (spec/parity/cases_*.lua, gathered and named by cases.lua); the
  runner (runner.lua) runs them all in ltorch, then once in PyTorch (reference.py, one process).
  A case marked `known = "reason"` documents a library bug: it is reported pending while it
  fails, and fails once the bug is fixed (so the mark gets removed).
  One `it` per case checks, against PyTorch: no error on either side (or an error on both
  when the case says `expect_error`), the outputs' structure, dtype, shape and values, which
  outputs require grad, and the gradient of every float input.
  Tolerance: a case is compared bitwise unless it states `tol` (both sides run the same
  libtorch, so most ops agree to the bit): then |a - b| <= atol + rtol * |b| (F32: rtol 1e-5,
  atol 1e-6; LIN: rtol 1e-4, atol 1e-5; F64: rtol 1e-10, atol 1e-12). NaN equals NaN;
  infinities, signed zeros (bitwise mode), dtypes and shapes must match exactly.
  Prints `parity: N ops, M cases` and, at the end, how many cases matched bitwise and the time.

  Run:  build/ltorch /usr/bin/busted spec/parity      (or bash scripts/test.sh spec/parity)
]]
local pytorch = require "spec.support.pytorch"
local parity = require "spec.parity.cases"
local runner = require "spec.parity.runner"

local NULL = runner.NULL
local cases = parity.cases

local function is_tensor_enc(v) return type(v) == "table" and v.dtype ~= nil and v.v ~= nil end

local function same_number(a, b, tol, exact)
  if a ~= a and b ~= b then return true end
  if exact then return a == b and (a ~= 0 or 1 / a == 1 / b) end
  if a == b then return true end
  if b - b ~= 0 or a - a ~= 0 then return false end   -- inf vs finite, or NaN vs number
  return math.abs(a - b) <= tol.atol + tol.rtol * math.abs(b)
end

--[[ nil when `lua` matches `py`, else a message naming the first difference. Sets
     stats.inexact when numbers differ but within tolerance. ]]
local function diff(py, lua, tol, path, stats)
  if is_tensor_enc(py) then
    if not is_tensor_enc(lua) then return path .. ": expected a tensor, got " .. tostring(lua) end
    if py.dtype ~= lua.dtype then return ("%s: dtype %s, PyTorch %s"):format(path, lua.dtype, py.dtype) end
    local ps, ls = table.concat(py.shape, ","), table.concat(lua.shape, ",")
    if ps ~= ls then return ("%s: shape [%s], PyTorch [%s]"):format(path, ls, ps) end
    for i = 1, #py.v do
      local a, b = lua.v[i], py.v[i]
      if type(b) == "number" and type(a) == "number" then
        if not same_number(a, b, tol, tol == nil) then
          return ("%s: element %d (flat) is %.9g, PyTorch %.9g%s"):format(path, i - 1, a, b,
            tol and (" (rtol %g, atol %g)"):format(tol.rtol, tol.atol) or " (bitwise)")
        end
        if a ~= b and a == a then stats.inexact = true end
      elseif a ~= b then
        return ("%s: element %d (flat) is %s, PyTorch %s"):format(path, i - 1, tostring(a), tostring(b))
      end
    end
    return nil
  end
  if type(py) == "table" and py ~= NULL then
    if type(lua) ~= "table" or lua == NULL or is_tensor_enc(lua) then
      return ("%s: expected a list of %d, got %s"):format(path, #py, tostring(lua))
    end
    if #py ~= #lua then return ("%s: %d values, PyTorch %d"):format(path, #lua, #py) end
    for i = 1, #py do
      local m = diff(py[i], lua[i], tol, path .. "[" .. i .. "]", stats)
      if m then return m end
    end
    return nil
  end
  if type(py) == "number" and type(lua) == "number" then
    if same_number(lua, py, tol, tol == nil) then return nil end
  elseif py == lua then
    return nil
  end
  return ("%s: %s, PyTorch %s"):format(path, tostring(lua), tostring(py))
end

local function check(r, stats)
  local c, lua, py = r.case, r.lua, r.py
  if lua.err or py.err then
    if lua.err and py.err and c.expect_error then return end
    error(("ltorch error: %s\nPyTorch error: %s"):format(tostring(lua.err or "none"), tostring(py.err or "none")), 0)
  end
  if c.expect_error then error("expected both sides to fail, but both succeeded", 0) end
  local m = diff(py.out, lua.out, c.tol or nil, "output", stats)
  if m then error(m, 0) end
  local function flags(list)
    local parts = {}
    for i, v in ipairs(list or {}) do parts[i] = tostring(v) end
    return table.concat(parts, ",")
  end
  local rl, rp = flags(lua.rg), flags(py.rg)
  if rl ~= rp then error(("outputs requiring grad: ltorch {%s}, PyTorch {%s}"):format(rl, rp), 0) end
  if lua.gerr or py.gerr then
    error(("backward: ltorch error: %s\nPyTorch error: %s"):format(tostring(lua.gerr or "none"),
      tostring(py.gerr or "none")), 0)
  end
  if py.grads ~= nil or lua.grads ~= nil then
    m = diff(py.grads or {}, lua.grads or {}, c.gtol or c.tol or nil, "grad", stats)
    if m then error(m, 0) end
  end
end

io.write(("parity: %d ops, %d cases\n"):format(parity.nops, #cases))

describe("PyTorch parity", function()
  local results, bitwise, checked, graded = nil, 0, 0, 0
  local wall = os.time()

  setup(function()
    if pytorch.available() then results = runner.run(cases) end
  end)

  teardown(function()
    io.write(("\nparity: %d ops, %d cases; %d passed cases (%d with input gradients), %d of them bitwise equal; ~%d s\n")
      :format(parity.nops, #cases, checked, graded, bitwise, os.time() - wall))
  end)

  for i, c in ipairs(cases) do
    it(("[%s] %s"):format(c.file, c.name), function()
      if not results then
        pending("PyTorch (python3-torch) is not installed")
        return
      end
      local stats = {}
      local ok, err = pcall(check, results[i], stats)
      if c.known then
        -- A known library bug: reported as pending until fixed, then this case must lose `known`.
        if ok then error("passes now: remove `known` (" .. c.known .. ") from the case", 0) end
        pending("known ltorch bug: " .. c.known .. "\n" .. tostring(err))
        return
      end
      if not ok then error(err, 0) end
      checked = checked + 1
      if results[i].lua.grads and #results[i].lua.grads > 0 then graded = graded + 1 end
      if not stats.inexact then bitwise = bitwise + 1 end
    end)
  end
end)
