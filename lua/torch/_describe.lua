--[[
  torch._describe — x:describe(): a tensor's summary as a string, for the REPL (help(x),
  ?x, :p x in the debugger) and for scripts (print(x:describe())); describe.stats(x) gives
  the numbers alone (the debugger's one-line summaries use it).

      > torch.tensor({{1, 0/0}, {1/0, 4}}):describe()
      Tensor shape=[2, 2] dtype=torch.float32 device=cpu
        min=1 max=4 mean=2.5 std=2.121 (over 2 finite values)
        nan=1 inf=1 requires_grad=false grad_fn=None

  Statistics are computed without autograd on a float64 copy of the finite values (so NaN
  and Inf are counted, not propagated); std is the sample standard deviation (PyTorch's
  default, unbiased). Bool and integer tensors get the same statistics; complex tensors and
  empty tensors report only shape/dtype/device/grad. Loaded by torch/init.lua, which
  registers it as Tensor.describe; it lives in the core beside torch._tensor_str (the REPL's
  torch.repl.summary builds on it), so the core needs nothing from the REPL.
]]
local T = require "torch._tensor"

local M = {}

-- A number as the summaries print it: integers whole, others with 4 significant digits.
function M.num(v)
  if v ~= v then return "nan" end
  if v == math.floor(v) and math.abs(v) < 1e15 then return ("%d"):format(v) end
  return ("%.4g"):format(v)
end
local num = M.num

local function compute(x, torch)
  local d = x:detach():to(torch.float64)
  local st = { nan = d:isnan():sum():item(), inf = d:isinf():sum():item(), numel = d:numel() }
  local finite = d:masked_select(d:isfinite())
  st.n = finite:numel()
  if st.n > 0 then
    st.min, st.max, st.mean = finite:min():item(), finite:max():item(), finite:mean():item()
    st.std = st.n > 1 and finite:std():item() or 0 / 0
  end
  return st
end

-- {min, max, mean, std (over the n finite values), n, nan, inf, numel}; nil for empty and
-- complex tensors (nothing to order).
function M.stats(x)
  if x:numel() == 0 or x.dtype.is_complex then return nil end
  local torch = require "torch"
  return torch.no_grad(function() return compute(x, torch) end)
end

function M.shape(x)
  return tostring(x:size()):match("%[.*%]") or "[]"
end

function M.describe(x)
  if not T.is_tensor(x) then error("bad argument #1 to 'describe' (Tensor expected, got " .. type(x) .. ")", 2) end
  local dtype = x.dtype
  local lines = { ("Tensor shape=%s dtype=%s device=%s"):format(M.shape(x), tostring(dtype), tostring(x.device)) }
  local ok, st = pcall(M.stats, x)
  if not ok then  -- e.g. a sparse tensor: libtorch has no isfinite for it
    lines[#lines + 1] = "  (no statistics: " .. tostring(st):match("^[^\n]*"):sub(1, 100) .. ")"
    st = nil
  elseif st and st.n == 0 then
    lines[#lines + 1] = "  (no finite values)"
  elseif st then
    local line = ("  min=%s max=%s mean=%s std=%s"):format(num(st.min), num(st.max), num(st.mean), num(st.std))
    if st.n ~= st.numel then line = line .. (" (over %d finite values)"):format(st.n) end
    lines[#lines + 1] = line
  elseif ok and x:numel() == 0 then
    lines[#lines + 1] = "  (empty)"
  end
  local grad_fn = x.grad_fn
  lines[#lines + 1] = ("  nan=%d inf=%d requires_grad=%s grad_fn=%s"):format(st and st.nan or 0, st and st.inf or 0,
    tostring(x.requires_grad), grad_fn ~= nil and tostring(grad_fn) or "None")
  return table.concat(lines, "\n")
end

T.Tensor.describe = M.describe

return M
